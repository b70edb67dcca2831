"""``LogSegment.recover`` and ``LogSegment.truncateTo`` as the log loader runs them, over decoded entries.

Recovery re-reads a segment batch by batch: it stops at the first entry that is not contiguous or fails its CRC
(the segment is truncated there), rebuilds the offset and time indexes every ``index.interval.bytes`` (an
out-of-order entry throws ``InvalidOffsetException``; an offset that cannot be made relative to the base
throws ``LogSegmentOffsetOverflowException``), assigns leader epochs to the ``LeaderEpochFileCache`` and feeds
magic 2 batches to the producer state. Pure: the segment view is changed in place, nothing is read or written.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from kafkatool.engine.producer_state import entry_columns, replay_columns
from kafkatool.engine.restart_producers import ProducerStateFiles
from kafkatool.engine.restart_segments import INT32_MAX, LoadedSegment
from kafkatool.model import NO_TIMESTAMP, LogEntry, PartitionData, RecordBatch, SegmentData, entry_spans
from kafkatool.schema import native
from kafkatool.storage import LeaderEpochCache

__all__ = ["DEFAULT_INDEX_INTERVAL_BYTES", "ColumnCache", "InvalidOffset", "SegmentOverflow", "column_windows",
           "entry_columns",
           "infer_index_interval", "recover_segment", "truncate_to_base", "truncation_reason"]

DEFAULT_INDEX_INTERVAL_BYTES = 4096  # index.interval.bytes


class InvalidOffset(Exception):
    """``InvalidOffsetException``: a rebuilt index entry would not be above the previous one."""

    def __init__(self, seg: LoadedSegment, offset: int, last: int, index: str) -> None:
        super().__init__(f"Attempt to append an offset {offset} to the {index} no larger than the last offset "
                         f"appended ({last}) to {seg.file}")
        self.seg = seg


class SegmentOverflow(Exception):
    """``LogSegmentOffsetOverflowException``: a batch offset cannot be made relative to the segment base."""

    def __init__(self, seg: LoadedSegment, offset: int) -> None:
        super().__init__(offset)
        self.seg = seg
        self.offset = offset


class ColumnCache:
    """:func:`entry_columns` of each entries object asked for, computed once (the object is held with them)."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[Sequence[LogEntry], dict[str, np.ndarray] | None]] = {}

    def get(self, entries: Sequence[LogEntry]) -> dict[str, np.ndarray] | None:
        """The columns of ``entries`` (``None``: the object path)."""
        known = self._known.get(id(entries))
        if known is None or known[0] is not entries:
            known = self._known[id(entries)] = (entries, entry_columns(entries))
        return known[1]


def recover_segment(seg: LoadedSegment, psm: ProducerStateFiles, epochs: LeaderEpochCache, interval: int,
                    columns: ColumnCache | None = None) -> int:
    """``LogSegment.recover``: keep the valid prefix of ``seg`` (its entries and size), and return the bytes
    truncated after it. Raises :class:`SegmentOverflow` or :class:`InvalidOffset` as Kafka throws. ``columns``
    keeps the header columns of entries already asked for."""
    cols = columns.get(seg.entries) if columns is not None else entry_columns(seg.entries)
    if cols is not None:
        return _recover_columns(seg, psm, epochs, interval, cols)
    windowed = _recover_windows(seg, psm, epochs)
    if windowed is not None:
        return windowed
    valid = kept = 0
    last_index_entry, idx_last, ts_last = 0, None, (NO_TIMESTAMP, seg.base)
    max_ts = (NO_TIMESTAMP, -1)
    ts_entries = False
    for e in seg.entries:
        if e.position != valid or e.crc_valid is False:
            break
        if not 0 <= e.last_offset - seg.base <= INT32_MAX:
            seg.index = None  # LogSegment.recover reset the index before it threw
            raise SegmentOverflow(seg, e.last_offset)
        if e.max_timestamp > max_ts[0]:
            max_ts = (e.max_timestamp, e.last_offset)
        if valid - last_index_entry > interval:
            if idx_last is not None and e.last_offset <= idx_last:
                raise InvalidOffset(seg, e.last_offset, idx_last, "offset index")
            idx_last = e.last_offset
            if ts_entries and max_ts[1] < ts_last[1]:
                raise InvalidOffset(seg, max_ts[1], ts_last[1], "time index")
            if max_ts[0] > ts_last[0]:
                ts_last, ts_entries = max_ts, True
            last_index_entry = valid
        if isinstance(e, RecordBatch):
            if e.partition_leader_epoch >= 0 and (epochs.latest_epoch() is None
                                                  or e.partition_leader_epoch > epochs.latest_epoch()):  # type: ignore[operator]
                epochs.assign(e.partition_leader_epoch, e.base_offset)
            psm.state.append(e)
            psm.map_end = e.last_offset + 1  # legacy entries do not move the map end (magic 2 only)
        kept += 1
        valid += e.size_in_bytes
    truncated = seg.size - valid
    seg.entries, seg.size, seg.recovered = seg.entries[:kept], valid, True
    return truncated


def _recover_columns(seg: LoadedSegment, psm: ProducerStateFiles, epochs: LeaderEpochCache, interval: int,
                     cols: dict[str, np.ndarray]) -> int:
    """:func:`recover_segment` over header columns (all magic 2): the native core's pass finds the valid prefix
    and the index checks' verdict, the leader epochs are assigned where the loop would, and the producer state
    replays the rows kept; the same exceptions, after the same state changes."""
    core = native.core()
    assert core is not None
    last_offset = cols["last_offset"]
    kept, valid, end, a, b = core.recover_segment_scan(cols["position"], cols["size"], cols["crc_invalid"],
                                                       last_offset, cols["max_timestamp"], seg.base, interval)
    latest = epochs.latest_epoch()
    ple = cols["partition_leader_epoch"][:kept].astype(np.int64)
    floor = -1 if latest is None else max(latest, -1)
    before = np.maximum.accumulate(np.concatenate([np.asarray([floor], dtype=np.int64), ple]))[:-1]
    base_offset = cols["base_offset"]
    for row in np.flatnonzero(ple > before).tolist():
        epochs.assign(int(ple[row]), int(base_offset[row]))
    if kept:
        replay_columns(psm.state, cols, 0, kept)
        psm.map_end = int(last_offset[kept - 1]) + 1
    if end == 1:
        seg.index = None  # LogSegment.recover reset the index before it threw
        raise SegmentOverflow(seg, int(last_offset[kept]))
    if end in (2, 3):
        raise InvalidOffset(seg, a, b, "offset index" if end == 2 else "time index")
    truncated = seg.size - valid
    seg.entries, seg.size, seg.recovered = seg.entries[:kept], valid, True
    return truncated


RECOVERY_WINDOW_ROWS = 1 << 16
"""The batches whose header columns :func:`_recover_windows` holds at a time."""


def _windows(entries: Sequence[LogEntry], stop: int) -> Iterator[dict[str, np.ndarray] | None]:
    """The header columns of ``entries[:stop]``, :data:`RECOVERY_WINDOW_ROWS` at a time (``None``: objects)."""
    for lo in range(0, stop, RECOVERY_WINDOW_ROWS):
        yield entry_columns(entries[lo:min(stop, lo + RECOVERY_WINDOW_ROWS)])


def column_windows(entries: Sequence[LogEntry]) -> Iterator[tuple[Sequence[LogEntry], dict[str, np.ndarray] | None]]:
    """``entries`` in parts of at most :data:`RECOVERY_WINDOW_ROWS`, each with its header columns or ``None``
    (that part's objects); a list or a deep read is one part of objects."""
    if getattr(entries, "_deep", True) or not hasattr(entries, "header_columns") or native.core() is None:
        yield entries, None
        return
    for lo in range(0, len(entries), RECOVERY_WINDOW_ROWS):
        part = entries[lo:lo + RECOVERY_WINDOW_ROWS]
        yield part, entry_columns(part)


def _recover_windows(seg: LoadedSegment, psm: ProducerStateFiles, epochs: LeaderEpochCache) -> int | None:
    """:func:`recover_segment` of a segment too large for one set of header columns, a window at a time, when its
    offsets rise batch after batch up to where recovery stops (``None`` otherwise: the object path). Rising
    offsets are what lets the windows go without the per-batch loop: an index entry's ordering checks
    (``InvalidOffsetException``) compare a batch's last offset with an earlier one's, so they cannot fail; what
    is left is the valid prefix (contiguous, CRC not failed) and the offset overflow, found by the first pass,
    before the second changes any state (leader epochs, producer state) as the loop would."""
    entries = seg.entries
    if getattr(entries, "_deep", True) or not hasattr(entries, "header_columns") or native.core() is None:
        return None
    valid = kept = 0
    previous: int | None = None
    overflow: int | None = None
    for cols in _windows(entries, len(entries)):
        if cols is None:
            return None
        size, last = cols["size"], cols["last_offset"]
        expected = valid + np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(size)[:-1]])
        stops = (cols["position"] != expected) | cols["crc_invalid"]
        over = (last < seg.base) | (last - seg.base > INT32_MAX)  # a wrapped difference is below the base anyway
        n = len(size)
        first_stop = int(np.argmax(stops)) if stops.any() else n
        first_over = int(np.argmax(over)) if over.any() else n
        m = min(first_stop, first_over)
        if m and ((previous is not None and int(last[0]) <= previous) or not bool((np.diff(last[:m]) > 0).all())):
            return None  # offsets that do not rise: the index checks need the loop
        kept += m
        valid += int(size[:m].sum())
        if m < n:
            if first_over < first_stop:
                overflow = int(last[m])
            break
        previous = int(last[m - 1]) if m else previous
    latest = epochs.latest_epoch()
    floor = -1 if latest is None else max(latest, -1)
    for cols in _windows(entries, kept):
        if cols is None:
            return None  # not reached: the first pass read the same windows
        ple = cols["partition_leader_epoch"].astype(np.int64)
        before = np.maximum.accumulate(np.concatenate([np.asarray([floor], dtype=np.int64), ple]))[:-1]
        base_offset = cols["base_offset"]
        for row in np.flatnonzero(ple > before).tolist():
            epochs.assign(int(ple[row]), int(base_offset[row]))
        floor = max(floor, int(ple.max())) if len(ple) else floor
        replay_columns(psm.state, cols)
        if len(ple):
            psm.map_end = int(cols["last_offset"][-1]) + 1
    if overflow is not None:
        seg.index = None  # LogSegment.recover reset the index before it threw
        raise SegmentOverflow(seg, overflow)
    truncated = seg.size - valid
    seg.entries, seg.size, seg.recovered = seg.entries[:kept], valid, True
    return truncated


def truncate_to_base(seg: LoadedSegment) -> int:
    """``LogSegment.truncateTo(baseOffset)`` (after an ``InvalidOffsetException`` during recovery): empty the
    segment from its first batch on; returns the bytes truncated."""
    first = seg.translate(seg.base)
    pos = first.position if first is not None else seg.size
    truncated = seg.size - pos
    chain = seg.chain()
    seg.entries = chain[:sum(1 for at, _ in entry_spans(chain) if at < pos)]
    seg.size, seg.recovered = pos, True
    return truncated


def truncation_reason(before: Sequence[LogEntry], data: SegmentData | None, pos: int) -> str:
    """Why recovery stopped at byte ``pos``, from the segment's entries before the load and its decoding
    defects (``data``, the segment as read)."""
    at = next((i for i, (start, _) in enumerate(entry_spans(before)) if start == pos), None)
    if at is not None and before[at].crc_valid is False:
        return f"the entry there (offsets up to {before[at].last_offset}) fails its CRC check"
    defects = [] if data is None else [d for d in data.defects if d.position is not None and d.position >= pos]
    if defects:
        d = min(defects, key=lambda d: d.position or 0)
        torn = data.torn if data is not None and d.code == "torn-tail" else None
        if torn is not None and torn.position == d.position:
            return (f"a partial batch (torn write) whose header says it held offsets {torn.base_offset} to "
                    f"{torn.last_offset} ({torn.records_count} record(s))")
        return {"torn-tail": "a partial batch (torn write)",
                "trailing-zeros": "zero bytes: Kafka reads a record size of 0, smaller than the minimum record "
                                  "overhead (14)"}.get(d.code, d.reason)
    return "an invalid batch"


def _index_bounds(positions: list[int], indexed: list[int]) -> tuple[int | None, int] | None:
    """:func:`infer_index_interval`'s loop over one segment's index entries, vectorised: the bounds it takes
    from them ((``None``, 0) when none), or ``None`` when the positions are not strictly ascending (the loop
    then runs as written)."""
    pos = np.asarray(positions, dtype=np.int64)
    if len(pos) == 0 or (len(pos) > 1 and not bool((np.diff(pos) > 0).all())):
        return None
    ip = np.asarray(indexed, dtype=np.int64)
    i = np.searchsorted(pos, ip)
    found = (i < len(pos)) & (pos[np.minimum(i, len(pos) - 1)] == ip)
    prev = np.concatenate([np.zeros(1, dtype=np.int64), ip[:-1]])
    before = pos[np.maximum(i - 1, 0)] - prev
    ok = found & (i > 0) & (before >= 0)
    cut = len(ok) if bool(ok.all()) else int(np.argmin(ok))
    if cut == 0:
        return None, 0
    return int(before[:cut].max()), int((ip - prev)[:cut].min()) - 1


def infer_index_interval(part: PartitionData) -> int:
    """``index.interval.bytes`` as the partition's offset indexes imply it (Kafka's default when they cannot).

    An entry is added at a batch when the bytes since the previous entry exceed the interval, so each
    entry bounds it: at least the bytes before the previous batch, less than the bytes before this one.
    """
    lo, hi = 0, 1 << 31
    seen = False
    for seg in part.segments:
        idx = seg.index
        if idx is None or not idx.entries or idx.zero_tail:
            continue
        # Positions from the entries' spans: a lazily held segment answers from its arrays, with no re-read.
        positions = [at for at, _ in entry_spans(seg.entries)]
        bounds = _index_bounds(positions, [e.position for e in idx.entries])  # type: ignore[union-attr]
        if bounds is not None:
            if bounds[0] is not None:
                lo, hi, seen = max(lo, bounds[0]), min(hi, bounds[1]), True
            continue
        at = {p: i for i, p in enumerate(positions)}
        prev = 0
        for entry in idx.entries:
            i = at.get(entry.position)  # type: ignore[union-attr]
            if i is None or i == 0:
                break
            since = entry.position - prev  # type: ignore[union-attr]
            before = positions[i - 1] - prev
            if before < 0:
                break
            lo, hi = max(lo, before), min(hi, since - 1)
            seen = True
            prev = entry.position  # type: ignore[union-attr]
    if not seen or lo > hi:
        return DEFAULT_INDEX_INTERVAL_BYTES
    for candidate in (DEFAULT_INDEX_INTERVAL_BYTES, 1024):
        if lo <= candidate <= hi:
            return candidate
    return lo

