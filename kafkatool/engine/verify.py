"""Consistency checks over decoded files: what ``dump-segment --verify`` reports.

Pure functions over model objects. They cover what Kafka's DumpLogSegments checks (batch CRCs,
non-consecutive offsets, index entries against the log, time index order) and what Kafka's own
``OffsetIndex.sanityCheck`` / ``TimeIndex.sanityCheck`` decide at broker start-up, reported as
defects instead of exceptions. A segment whose entries give header columns (a lazily held segment read by the
native column walk, see ``engine.producer_state.entry_columns``) is checked over the columns with numpy: only
the rows a check flags, and control batches (whose decoded records are counted), become objects, so the findings
are those of the per-entry loop, in the same order and words. :func:`tiered_findings` says which offsets below
the local log are remote (``UnifiedLog``'s local log start offset, KIP-405), with the rule in
:mod:`kafkatool.storage.tiered`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kafkatool.engine.producer_state import entry_columns
from kafkatool.model import (
    Defect,
    LegacyBatch,
    LogEntry,
    OffsetIndexEntry,
    RecordBatch,
    TimeIndexEntry,
)
from kafkatool.schema.record_batch import CONTROL_FLAG
from kafkatool.schema.time_index import INT64_MAX, INT64_MIN
from kafkatool.storage.producer_state import COMMIT_MARKER
from kafkatool.storage.tiered import RemoteLog, local_start_view

WINDOW_ROWS = 1 << 16
"""The entries whose header columns a check holds at a time (about 13 MB, and the mapped pages they come from):
a segment is checked window by window, never with columns of all its batches."""
_last: list[Any] = [None, None]  # the window whose columns were asked last (its key), and its columns


def _window_key(part: Any) -> tuple[Any, ...]:
    return (id(getattr(part, "_pos", None)), getattr(part, "_path", None), getattr(part, "_lo", 0),
            getattr(part, "_hi", 0))


def log_windows(log: Sequence[LogEntry]) -> Iterator[tuple[Sequence[LogEntry], dict[str, np.ndarray] | None]]:
    """``log`` in consecutive parts of at most :data:`WINDOW_ROWS` entries (views of a lazily held segment), each
    with its header columns (``entry_columns``, with ``last_offset``) or ``None``: that part's objects.

    Deep entries carry every batch's records (counted by :meth:`LogChecker.feed`), so they take the objects. The
    last window's columns are kept (a segment's checks ask for them one after the other)."""
    if getattr(log, "_deep", True) or not hasattr(log, "header_columns"):
        yield log, None
        return
    n = len(log)
    for lo in range(0, n, WINDOW_ROWS):
        part = log if n <= WINDOW_ROWS else log[lo:lo + WINDOW_ROWS]
        key = _window_key(part)
        if _last[0] != key:
            _last[:] = [None, None]  # the previous window's columns go before the next are made
            _last[:] = [key, entry_columns(part)]
        yield part, _last[1]


def forget_windows() -> None:
    """Drop the window whose columns :func:`log_windows` kept (its entries go with it)."""
    _last[:] = [None, None]


def log_columns(log: Iterable[LogEntry]) -> dict[str, np.ndarray] | None:
    """A shallow segment's header columns when it is one window (:func:`log_windows`), else ``None``."""
    if getattr(log, "_deep", True) or not hasattr(log, "header_columns") or len(log) > WINDOW_ROWS:  # type: ignore
        return None
    return next(log_windows(log), (log, None))[1]  # type: ignore[arg-type]


def _int64(values: Iterable[int]) -> np.ndarray:
    """``values`` that an int64 column can hold (others match no row)."""
    return np.asarray([v for v in values if INT64_MIN <= v <= INT64_MAX], dtype=np.int64)


@dataclass
class LogChecker:
    """Streaming offset-order checks for one segment (feed entries in file order).

    Overlapping or backwards offsets are errors (Kafka's offset lookups assume increasing offsets);
    gaps are informational, since compaction and transaction markers make them normal.
    """

    file: str
    base_offset: int | None
    defects: list[Defect] = field(default_factory=list)
    first_offset: int | None = None
    last_offset: int | None = None
    entries: int = 0
    records: int = 0

    def feed(self, e: LogEntry) -> None:
        """Check one entry against the one before it."""
        base = e.base_offset
        if self.entries == 0:
            self.first_offset = base
            if self.base_offset is not None and base < self.base_offset:
                self.defects.append(Defect(
                    "segment-name-mismatch", self.file, e.position, "base_offset",
                    f"first batch starts at offset {base}, below the segment's name offset {self.base_offset}: "
                    "the file is misnamed (Kafka refuses to recover such a segment)"))
        else:
            prev_last = self.last_offset
            assert prev_last is not None
            if base <= prev_last:
                self.defects.append(Defect(
                    "offset-order", self.file, e.position, "base_offset",
                    f"offset {base} does not follow the previous entry's last offset {prev_last}"))
            elif base > prev_last + 1:
                self.defects.append(Defect(
                    "offset-gap", self.file, e.position, "base_offset",
                    f"offsets {prev_last + 1}..{base - 1} are absent (normal after compaction or fencing)",
                    "info"))
        if isinstance(e, RecordBatch):
            if e.records_count > e.last_offset_delta + 1:
                self.defects.append(Defect(
                    "record-count", self.file, e.position, "records_count",
                    f"{e.records_count} records cannot fit in {e.last_offset_delta + 1} offsets"))
            if e.records is not None and len(e.records) != e.records_count:
                self.defects.append(Defect(
                    "record-count", self.file, e.position, "records_count",
                    f"batch declares {e.records_count} records, {len(e.records)} decoded"))
            self.records += e.records_count
        elif isinstance(e, LegacyBatch):
            self.records += len(e.records) if e.records is not None else 1
        self.last_offset = e.last_offset
        self.entries += 1

    def feed_all(self, log: Sequence[LogEntry], controls: list[RecordBatch] | None = None) -> None:
        """:meth:`feed` every entry of ``log`` in order: over its header columns when it gives them (the same
        defects, in the same order), else entry by entry; with ``controls``, :func:`abort_marker_candidates` of
        ``log`` are appended to it from the same pass.

        Over the columns no batch is decoded: a shallow read decodes only control batches' records, and
        ``record_batch.decode_records`` gives exactly ``records_count`` records or fails (``DefaultRecordBatch``'s
        iterator check), so the "declared vs decoded" count cannot differ there."""
        for part, cols in log_windows(log):
            if cols is None:
                for e in part:
                    self.feed(e)
            else:
                self.feed_columns(cols["position"], cols["base_offset"], cols["last_offset"], cols["records_count"],
                                  cols["last_offset_delta"])
            if controls is not None:
                controls.extend(_window_candidates(part, cols))

    def feed_columns(self, position: np.ndarray, base: np.ndarray, last: np.ndarray, count: np.ndarray,
                     last_delta: np.ndarray) -> None:
        """:meth:`feed` of magic 2 batches given as header columns (their records decoded to exactly their count,
        or not decoded), after the entries fed so far: the same defects, in the same order."""
        n = len(base)
        if n == 0:
            return
        count = count.astype(np.int64)
        before = self.last_offset if self.entries else None
        order = np.zeros(n, dtype=bool)
        gap = np.zeros(n, dtype=bool)
        order[1:] = base[1:] <= last[:-1]
        gap[1:] = (base[1:] > last[:-1]) & (base[1:] - 1 != last[:-1])  # base > prev + 1, without overflow
        b0 = int(base[0])
        if before is not None:
            order[0], gap[0] = b0 <= before, b0 > before + 1
        over = count > last_delta.astype(np.int64) + 1
        flagged = order | gap | over
        flagged[0] = True
        for k in np.flatnonzero(flagged).tolist():
            at, b = int(position[k]), int(base[k])
            prev_last = before if k == 0 else int(last[k - 1])
            if prev_last is None:
                if self.base_offset is not None and b < self.base_offset:
                    self.defects.append(Defect(
                        "segment-name-mismatch", self.file, at, "base_offset",
                        f"first batch starts at offset {b}, below the segment's name offset {self.base_offset}: "
                        "the file is misnamed (Kafka refuses to recover such a segment)"))
            elif order[k]:
                self.defects.append(Defect(
                    "offset-order", self.file, at, "base_offset",
                    f"offset {b} does not follow the previous entry's last offset {prev_last}"))
            elif gap[k]:
                self.defects.append(Defect(
                    "offset-gap", self.file, at, "base_offset",
                    f"offsets {prev_last + 1}..{b - 1} are absent (normal after compaction or fencing)", "info"))
            declared = int(count[k])
            if over[k]:
                self.defects.append(Defect(
                    "record-count", self.file, at, "records_count",
                    f"{declared} records cannot fit in {int(last_delta[k]) + 1} offsets"))
        if before is None:
            self.first_offset = b0
        self.records += int(count.sum())
        self.last_offset = int(last[-1])
        self.entries += n


def abort_marker_candidates(log: Sequence[LogEntry]) -> Iterator[RecordBatch]:
    """The control batches of ``log`` in file order, less those its header columns show hold a COMMIT marker
    (their ``marker`` column: a first control record of type COMMIT with its coordinator epoch): the batches that
    can be ABORT markers, the only ones re-read. Without columns: every control batch."""
    for part, cols in log_windows(log):
        yield from _window_candidates(part, cols)


def _window_candidates(part: Sequence[LogEntry], cols: dict[str, np.ndarray] | None) -> Iterator[RecordBatch]:
    if cols is None:
        yield from (e for e in part if isinstance(e, RecordBatch) and e.is_control)
        return
    maybe = ((cols["attributes"].astype(np.int64) & CONTROL_FLAG) != 0) & (cols["marker"] != COMMIT_MARKER)
    for k in np.flatnonzero(maybe).tolist():
        e = part[k]
        if isinstance(e, RecordBatch):
            yield e


def batch_leader_epochs(log: Sequence[LogEntry]) -> Iterator[tuple[int, int]]:
    """``(base offset, partition leader epoch)`` of every magic 2 batch of ``log`` that carries an epoch (>= 0), in
    file order (from the header columns when ``log`` gives them)."""
    for offsets, epochs in batch_leader_epoch_windows(log):
        yield from zip(offsets.tolist(), epochs.tolist(), strict=True)


def batch_leader_epoch_windows(log: Sequence[LogEntry]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """:func:`batch_leader_epochs` as pairs of int64 arrays (base offsets, epochs), a window of ``log`` at a time
    (:func:`log_windows`)."""
    for part, cols in log_windows(log):
        if cols is not None:
            yield _carried_epochs(cols)
            continue
        pairs = [(e.base_offset, e.partition_leader_epoch) for e in part
                 if isinstance(e, RecordBatch) and e.partition_leader_epoch >= 0]
        # base offsets are int64 fields: every one fits
        yield (np.asarray([o for o, _ in pairs], dtype=np.int64), np.asarray([e for _, e in pairs], dtype=np.int64))


def batch_leader_epoch_arrays(log: Sequence[LogEntry]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`batch_leader_epochs` as two int64 arrays (base offsets, epochs) for the whole of ``log``."""
    parts = list(batch_leader_epoch_windows(log))
    if len(parts) == 1:
        return parts[0]
    return (np.concatenate([o for o, _ in parts] or [np.zeros(0, np.int64)]),
            np.concatenate([e for _, e in parts] or [np.zeros(0, np.int64)]))


def _carried_epochs(cols: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The base offsets and leader epochs of the rows whose epoch is set (>= 0), as int64."""
    epoch = cols["partition_leader_epoch"]
    carried = epoch >= 0
    return cols["base_offset"][carried].astype(np.int64), epoch[carried].astype(np.int64)


def at_positions(log: Iterable[LogEntry], wanted: set[int]) -> dict[int, tuple[LogEntry, int | None]]:
    """For each wanted byte position that starts an entry: the entry and the last offset of the entry before it
    (in file order). One pass over ``log``; only the wanted entries are kept (an index names one every few KiB)."""
    found: dict[int, tuple[LogEntry, int | None]] = {}
    prev_last: int | None = None
    for e in log:
        if e.position in wanted:
            found[e.position] = (e, prev_last)
        prev_last = e.last_offset
    return found


def _boundaries(log: Sequence[LogEntry], wanted: set[int]) -> dict[int, tuple[int, int | None]]:
    """:func:`at_positions` as ``position -> (the entry's last offset, the previous entry's last offset)``, from
    the header columns when ``log`` gives them (a window at a time)."""
    found: dict[int, tuple[int, int | None]] = {}
    prev_last: int | None = None
    targets = _int64(wanted)
    for part, cols in log_windows(log):
        if cols is None:
            for e in part:
                if e.position in wanted:
                    found[e.position] = (e.last_offset, prev_last)
                prev_last = e.last_offset
            continue
        position, last = cols["position"], cols["last_offset"]
        for k in np.flatnonzero(np.isin(position, targets)).tolist():
            found[int(position[k])] = (int(last[k]), int(last[k - 1]) if k else prev_last)
        if len(last):
            prev_last = int(last[-1])
    return found


def _ending_at(log: Sequence[LogEntry], wanted: set[int]) -> dict[int, int]:
    """``last offset -> max timestamp`` of the last entry ending at each wanted offset (in file order), from the
    header columns when ``log`` gives them (a window at a time)."""
    found: dict[int, int] = {}
    targets = _int64(wanted)
    for part, cols in log_windows(log):
        if cols is None:
            found.update((e.last_offset, e.max_timestamp) for e in part if e.last_offset in wanted)
            continue
        last, stamp = cols["last_offset"], cols["max_timestamp"]
        found.update((int(last[k]), int(stamp[k])) for k in np.flatnonzero(np.isin(last, targets)).tolist())
    return found


def _sorted_lookup(keys: np.ndarray, wanted: np.ndarray) -> np.ndarray | None:
    """The row of strictly increasing ``keys`` holding each of ``wanted``, or ``None`` when a key is not increasing
    or a wanted value is missing (the caller then takes the per-entry loop)."""
    n = len(keys)
    if n == 0 or (n > 1 and not bool((keys[1:] > keys[:-1]).all())):
        return None
    rows = np.searchsorted(keys, wanted)
    if bool((rows >= n).any()) or not bool((keys[rows] == wanted).all()):
        return None
    return rows


def _index_arrays(entries: Sequence[Any], first: str, second: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Two fields of the index entries as int64 arrays (``None``: a value past 64 bits, hostile input)."""
    try:
        return (np.fromiter((getattr(e, first) for e in entries), np.int64, len(entries)),
                np.fromiter((getattr(e, second) for e in entries), np.int64, len(entries)))
    except OverflowError:
        return None


def offset_index_clean(entries: Sequence[OffsetIndexEntry], log: Sequence[LogEntry], log_size: int) -> bool:
    """Whether :func:`check_offset_index`'s per-entry rules all pass, decided over columns: entries in order,
    within the log, each at a batch start whose last offset is the entry's and whose previous batch ends before
    it. ``False`` also when the columns cannot tell (no single window of columns, values past 64 bits): the
    per-entry loop then decides, and names every defect. The same answer as the loop, in one pass of NumPy."""
    cols = log_columns(log) if entries else None
    got = _index_arrays(entries, "offset", "position") if cols is not None else None
    if cols is None or got is None:
        return not entries
    off, pos = got
    if len(off) > 1 and not (bool((off[1:] > off[:-1]).all()) and bool((pos[1:] > pos[:-1]).all())):
        return False
    if bool((pos >= log_size).any()):
        return False
    rows = _sorted_lookup(cols["position"], pos)
    if rows is None:
        return False
    last = cols["last_offset"]
    if not bool((last[rows] == off).all()):
        return False
    later = rows > 0
    return not bool((last[rows[later] - 1] >= off[later]).any())


def time_index_clean(entries: Sequence[TimeIndexEntry], log: Sequence[LogEntry]) -> bool:
    """Whether :func:`check_time_index`'s per-entry rules all pass, decided over columns (timestamps in order,
    each entry's offset the last offset of a batch whose max timestamp it records), as :func:`offset_index_clean`.
    """
    cols = log_columns(log) if entries else None
    got = _index_arrays(entries, "timestamp", "offset") if cols is not None else None
    if cols is None or got is None:
        return not entries
    ts, off = got
    if len(ts) > 1 and not bool((ts[1:] >= ts[:-1]).all()):
        return False
    rows = _sorted_lookup(cols["last_offset"], off)
    return rows is not None and bool((cols["max_timestamp"][rows] == ts).all())


def check_offset_index(file: str, entries: Sequence[OffsetIndexEntry], base_offset: int, log: Sequence[LogEntry],
                       log_size: int, raw_size: int, entry_size: int = 8) -> list[Defect]:
    """Every index entry must point at a batch boundary from which a lookup finds its offset.

    ``entries`` are the live entries (the zero-filled preallocated tail already cut off).
    """
    out: list[Defect] = []
    if raw_size % entry_size:
        out.append(Defect("index-size", file, raw_size - raw_size % entry_size, "entries",
                          f"{raw_size} bytes is not a multiple of the {entry_size}-byte entry: Kafka's sanity check "
                          "fails and the index is rebuilt at start-up"))
    if entries and entries[-1].offset < base_offset:
        out.append(Defect("index-sanity", file, (len(entries) - 1) * entry_size, "offset",
                          f"last offset {entries[-1].offset} is below the base offset {base_offset}: Kafka's "
                          "sanity check fails and the index is rebuilt at start-up"))
    if offset_index_clean(entries, log, log_size):
        return out
    by_pos = _boundaries(log, {ent.position for ent in entries})
    prev: OffsetIndexEntry | None = None
    for i, ent in enumerate(entries):
        where = i * entry_size
        if prev is not None and (ent.offset <= prev.offset or ent.position <= prev.position):
            out.append(Defect("index-order", file, where, "offset",
                              f"entry ({ent.offset}, {ent.position}) does not follow ({prev.offset}, "
                              f"{prev.position})"))
        prev = ent
        if ent.position >= log_size:
            out.append(Defect("index-beyond-log", file, where, "position",
                              f"position {ent.position} is beyond the end of the log ({log_size} bytes)"))
            continue
        hit = by_pos.get(ent.position)
        if hit is None:
            out.append(Defect("index-not-boundary", file, where, "position",
                              f"position {ent.position} is not the start of a batch"))
            continue
        batch_last, before = hit
        if before is not None and before >= ent.offset:
            out.append(Defect("index-offset-behind", file, where, "offset",
                              f"offset {ent.offset} lies in an earlier batch than position {ent.position}: "
                              "lookups would start too late"))
        elif batch_last != ent.offset:
            out.append(Defect("index-offset-mismatch", file, where, "offset",
                              f"index offset {ent.offset}, batch at {ent.position} ends at {batch_last} "
                              "(DumpLogSegments reports this as a mismatch)", "info"))
    return out


def check_time_index(file: str, entries: Sequence[TimeIndexEntry], base_offset: int, log: Sequence[LogEntry],
                     raw_size: int, entry_size: int = 12) -> list[Defect]:
    """Time index entries must be ordered and name a batch whose max timestamp they record."""
    out: list[Defect] = []
    if raw_size % entry_size:
        out.append(Defect("index-size", file, raw_size - raw_size % entry_size, "entries",
                          f"{raw_size} bytes is not a multiple of the {entry_size}-byte entry"))
    if entries and entries[-1].offset < base_offset:
        out.append(Defect("index-sanity", file, (len(entries) - 1) * entry_size, "offset",
                          f"last offset {entries[-1].offset} is below the base offset {base_offset}"))
    if entries and entries[-1].timestamp < entries[0].timestamp:
        out.append(Defect("index-sanity", file, (len(entries) - 1) * entry_size, "timestamp",
                          f"last timestamp {entries[-1].timestamp} is below the first {entries[0].timestamp}: "
                          "Kafka's sanity check fails and the index is rebuilt"))
    if time_index_clean(entries, log):
        return out
    wanted = {ent.offset for ent in entries}
    by_last = _ending_at(log, wanted)  # the last entry ending there, as a lookup
    prev: TimeIndexEntry | None = None
    for i, ent in enumerate(entries):
        where = i * entry_size
        if prev is not None and ent.timestamp < prev.timestamp:
            out.append(Defect("time-index-order", file, where, "timestamp",
                              f"timestamp {ent.timestamp} is below the previous entry's {prev.timestamp}"))
        prev = ent
        max_timestamp = by_last.get(ent.offset)
        if max_timestamp is None:
            out.append(Defect("time-index-offset", file, where, "offset",
                              f"no batch of the log ends at offset {ent.offset}"))
        elif max_timestamp != ent.timestamp:
            out.append(Defect("time-index-timestamp", file, where, "timestamp",
                              f"index timestamp {ent.timestamp}, batch max timestamp {max_timestamp}"))
    return out


def tiered_findings(found: list[Defect], directory: str, log_start_checkpoint: int | None, first_local_base: int,
                    remote: RemoteLog | None, remote_enabled: bool | None = None,
                    checkpoint_file: str = "log-start-offset-checkpoint") -> list[Defect]:
    """``found`` (a partition's ``check`` findings) with the local log start understood as tiered storage has it
    (``UnifiedLog.localLogStartOffset``, ``LogLoader.load`` keeping the checkpointed log start when remote storage
    is enabled): the offsets below the first local segment are said to be remote, never a gap, and the
    ``log-start-below-segments`` note (which says Kafka raises the start) is replaced. Offsets there that no
    ``COPY_SEGMENT_FINISHED`` remote segment holds are a warning. Without tiered evidence ``found`` is returned
    unchanged."""
    view = local_start_view(log_start_checkpoint, first_local_base, remote, remote_enabled)
    if view.remote is None and (remote is None or not remote.problems):
        return found
    out = [d for d in found if view.remote is None or d.code != "log-start-below-segments"]
    if view.remote is not None:
        lo, hi = view.remote
        held = view.covered_by
        source = (f"{len(held)} remote segment(s) COPY_SEGMENT_FINISHED in __remote_log_metadata"
                  if view.evidence == "remote-log-metadata" else "remote.storage.enable in the topic's config")
        out.append(Defect("remote-log-range", checkpoint_file, None, directory,
                          f"{directory}: offsets {lo}..{hi - 1} are in remote storage ({source}); the local log "
                          f"starts at {view.local_log_start_offset} (local log start offset) and the log start "
                          f"offset stays {view.log_start_offset}: not a gap, nothing lost", "info"))
        for a, b in view.uncovered:
            out.append(Defect("remote-log-uncovered", checkpoint_file, None, directory,
                              f"{directory}: offsets {a}..{b - 1} are below the local log start "
                              f"{view.local_log_start_offset} and no finished remote segment holds them: a fetch "
                              "there finds no data (remote copy incomplete, or metadata missing from this log dir)",
                              "warning"))
    if remote is not None:
        for problem in remote.problems:
            out.append(Defect("remote-metadata-refused", "__remote_log_metadata", None, directory,
                              f"{directory}: {problem}", "info"))
    return out
