"""A lazily held segment's magic 2 batch headers as NumPy columns, re-read from the file in one gather.

:class:`~kafkatool.reading.entries.SegmentEntries` keeps positions, sizes and the walk's CRC verdicts; the
engines that replay per batch (``LogSegment.recover``, the producer-state replay) need a dozen header fields of
every batch and, for a control batch, its transaction marker. :func:`header_columns` gives them as columns
without a Python object per batch: one vectorised header gather (``schema.batch_columns.gather_headers``) and,
for the control batches only, the entry as :meth:`SegmentEntries.__getitem__` makes it (so the marker is the
one the object path reads). It answers ``None`` where the object path must be taken: a legacy (magic 0/1)
entry, or a file that changed since the walk (the object path reports it).

The columns are those of ``engine.producer_state.REPLAY_COLUMNS`` plus ``size``, ``crc_invalid`` (the walk
found the CRC wrong), ``partition_leader_epoch``, ``magic``, ``records_count``, ``crc`` and ``base_timestamp``
(the fleet's batch rows): about 80 bytes a batch, so a
segment of more than :data:`MAX_COLUMN_ROWS` batches takes the object path (bounded memory, as the entries').

:func:`read_clean_segment` is the shallow read of a segment (``reading.logdir._read_segment``'s) by the column
scan (``reading.columns.scan_buffer``, the native walk), only when the native core is built: when the scan
finds the segment whole (magic 2 batches and legacy entries chained to the end, no defect but magic 2 batches
whose CRC fails) it gives the same entries and defects as the resilient walk, with the control batches' markers
kept (:class:`ColumnEntries`);
otherwise the walk reads it. Legacy entries come from the scan's legacy columns; their header columns are the
object path's, as above.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from kafkatool.errors import UnreadableInputError
from kafkatool.model import Defect, LogEntry, RecordBatch, SegmentData
from kafkatool.reading import scan_memo
from kafkatool.reading.columns import grown_window, release, scan_buffer
from kafkatool.reading.entries import _CRC_INVALID, _CRC_VALID, SegmentEntries, complete_entry
from kafkatool.reading.files import file_size, mapped
from kafkatool.schema import batch_columns as bc
from kafkatool.schema import legacy as lg
from kafkatool.schema import record_batch as rb
from kafkatool.schema.codecs import ReadLimits
from kafkatool.schema.log_segment import read_entry_at
from kafkatool.schema.native import core
from kafkatool.storage.producer_state import marker_of

_MAGIC_AT = rb.FIELD_OFFSETS["magic"]
MAX_COLUMN_ROWS = 1 << 18
"""The most batches a segment's header columns are built for; more: the object path. The restart engine holds a
segment's columns more than once while it recovers it: at 1 << 20 a damaged segment of 1,048,576 one-record
batches peaked at 381 MB in ``simulate_restart`` (and in ``salvage``, which runs it for Kafka's view), 88 MB at
1 << 18, for about 1.5 times the time on such a segment (measured 2026-11-28, load 19)."""
GATHER_SPAN = 32 << 20
"""Bytes of a segment whose batch headers :func:`header_columns` gathers before it lets their mapped pages go."""
HEADERS_BUDGET = 32 << 20
"""The most bytes of raw batch headers (61 a batch) the clean segments read keep for :func:`header_columns`, all
together; past it the headers are gathered from the file again when asked for (page faults of a fresh mapping
cost about as much as the rest of a restart's engine)."""


class ColumnEntries(SegmentEntries):
    """:class:`SegmentEntries` read by the column scan, with the control batches' transaction markers kept
    (position -> (marker, coordinator epoch)) so :func:`header_columns` does not decode them again."""

    __slots__ = ("_heads", "_markers")

    def _view(self, lo: int, hi: int) -> SegmentEntries:
        out = ColumnEntries.__new__(ColumnEntries)
        base = super()._view(lo, hi)
        for name in SegmentEntries.__slots__:
            setattr(out, name, getattr(base, name))
        out._markers, out._heads = self._markers, self._heads
        return out

    def header_columns(self) -> dict[str, np.ndarray] | None:
        """The entries' header columns (see :func:`header_columns`)."""
        return header_columns(self)

    def span_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`spans` as two int64 arrays (positions, ends)."""
        return span_arrays(self)


def span_arrays(entries: SegmentEntries) -> tuple[np.ndarray, np.ndarray]:
    """A lazily held segment's ``(position, end)`` spans as two int64 arrays, from its own arrays."""
    pos = np.asarray(entries._pos[entries._lo:entries._hi], dtype=np.int64)
    return pos, pos + entries.size_array()


READ_WINDOW = 16 << 20
"""The bytes of a segment the clean read scans at a time at first: its columns (about 80 bytes a batch) are those
of one window, never of the whole segment (a 1 GiB segment of one-record batches is 6.1 M batches)."""
READ_ROWS = 1 << 16
"""Batches a window aims at: after a window of big batches the next spans more bytes (:data:`MAX_READ_WINDOW` at
most), so a segment of 16 KiB batches is read in 4 calls, not 64 (a window of one-record batches stays
:data:`READ_WINDOW`)."""
MAX_READ_WINDOW = 256 << 20
MAX_MARKERS = 1 << 16
"""The most control batches whose markers the clean read keeps; past it they are read again when asked for."""


def read_clean_segment(seg: SegmentData, buf: Any, path: str, limits: ReadLimits) -> bool:
    """Read a segment shallow by the column scan when it is clean, as ``_read_segment``'s walk would (entries
    and ``record-decode`` defects of control batches and legacy wrappers); ``False`` (nothing set) when the walk
    must read it. The scan goes a window at a time (:data:`READ_WINDOW`, :data:`READ_ROWS`), keeping of each
    window its entries' positions and sizes (and, within :data:`HEADERS_BUDGET`, its raw headers). Legacy entries
    come from the scan's legacy columns, merged in file order; a wrapper whose inner messages were read (its span
    known) decodes without error, the others are completed as the walk does."""
    size = len(buf)
    if size == 0 or core() is None:
        return False  # without the native core: today's walk, unchanged
    entries = ColumnEntries(path, file_size=size, limits=limits)
    entries._markers = {}
    heads: list[np.ndarray] | None = []
    kept = 0
    newest = -1
    defects: list[Defect] = []
    at = 0
    window = READ_WINDOW
    # inside scan_memo.remembering: a whole scan salvage made first answers for the file, else this one is kept
    # for salvage's own passes
    kept_scan = scan_memo.recall(path, 0, None, verify_crc=True, label=seg.log_file)
    whole = scan_memo.Collector(path)
    while at < size:
        begin = at
        if kept_scan is not None:
            scan, kept_scan, window = kept_scan, None, size
        else:
            scan = scan_buffer(buf, seg.log_file, start=at, stop=min(size, at + window),
                               max_output=limits.max_decompressed_bytes, path=path)
            whole.add(scan)
        legacy = scan.legacy
        # a magic 2 batch whose CRC fails is read as the walk reads it (its defect, the entry marked invalid):
        # any other defect, a legacy CRC failure or a chain that stops early is the walk's to read
        bad = np.zeros(len(scan), dtype=bool) if scan.crc_valid is None else ~scan.crc_valid
        crc_at = set(scan.positions[bad].tolist()) if bad.any() else set()
        if any(d.code != "crc-mismatch" or d.position not in crc_at for d in scan.defects) or len(
                scan.defects) != len(crc_at) or scan.landing <= at or (
                scan.landing < size and scan.landing < at + window) or not bool(legacy["crc_valid"].all()):
            return False
        found: list[tuple[int, int, Defect]] = [(d.position or 0, 0, d) for d in scan.defects]
        at = scan.landing
        if len(scan):
            window = grown_window(at - begin, len(scan), READ_WINDOW, READ_ROWS, MAX_READ_WINDOW)
        # the kept headers are indexed by entry: only while every entry is a magic 2 batch
        if heads is not None and not len(legacy) and kept + scan.headers.nbytes <= HEADERS_BUDGET:
            heads.append(scan.headers)
            kept += scan.headers.nbytes
        else:
            heads = None
        pos = scan.positions
        sizes = scan.headers["batch_length"].astype(np.int64) + rb.LOG_OVERHEAD
        flags = np.where(bad, np.uint8(_CRC_INVALID), np.uint8(_CRC_VALID))
        if len(scan):
            newest = max(newest, int(scan.headers["max_timestamp"].max()))
        # control batches (their markers) and legacy wrappers whose inner read failed (their defects), in order
        to_read = pos[(scan.headers["attributes"].astype(np.int64) & rb.CONTROL_FLAG) != 0]
        if len(legacy):
            wrappers = ((legacy["attributes"].astype(np.int64) & lg.CODEC_MASK) != 0) & (legacy["inner_count"] <= 0)
            to_read = np.sort(np.concatenate([to_read, legacy["position"][wrappers]]))
            pos = np.concatenate([pos, legacy["position"]])
            sizes = np.concatenate([sizes, legacy["message_size"].astype(np.int64) + rb.LOG_OVERHEAD])
            flags = np.concatenate([flags, np.full(len(legacy), _CRC_VALID, dtype=np.uint8)])
            order = np.argsort(pos, kind="stable")
            pos, sizes, flags = pos[order], sizes[order], flags[order]
            newest = max(newest, int(legacy["timestamp"].max()))
        entries.extend_columns(pos, sizes, flags)
        for where in to_read.tolist():
            entry = read_entry_at(buf, where, max_output=limits.max_decompressed_bytes)
            entry.crc_valid = where not in crc_at
            err = complete_entry(entry, buf, limits=limits)
            if err is not None:
                found.append((where, 1, Defect("record-decode", seg.log_file, err.position, err.field, err.reason)))
            if isinstance(entry, RecordBatch) and len(entries._markers) < MAX_MARKERS:
                entries._markers[where] = marker_of(entry)
        found.sort(key=lambda item: item[:2])  # the walk's order: an entry's CRC defect, then its decoding's
        defects += [d for _, _, d in found]
        del scan, legacy, pos, sizes, to_read, flags, bad, found
        release(buf, begin, at)  # the pages the entries read again touched (a legacy wrapper's: megabytes)
    entries._heads = None if heads is None else _Budget.take(
        heads[0] if len(heads) == 1 else np.concatenate(heads) if heads else np.zeros(0, bc.native_header_dtype()),
        copy=len(heads) == 1)
    entries._max_ts = newest
    seg.defects.extend(defects)
    seg.entries = entries
    whole.finish()
    return True


COLUMNS_CACHE_BYTES = 16 << 20
"""The most bytes of header columns :func:`header_columns` keeps for the segments it answered last (a partition's
analysis asks for each segment's columns four times: its checks, the producer replay, its batch rows and sums).
At 64 MiB, ``check``, ``replay-producers`` and ``transactions`` on 1 GiB of one-record batches peaked at 162 MB and
``report`` at 187 MB (the cache full of windows of a segment too large to be answered from it); at 16 MiB 111, 112
and 131 MB, in the same time (measured 2026-11-28, idle machine)."""
_cache: OrderedDict[int, tuple[SegmentEntries, dict[str, np.ndarray], int]] = OrderedDict()
_cached_bytes = [0]


def header_columns(entries: Sequence[LogEntry]) -> dict[str, np.ndarray] | None:
    """The entries' header columns (see the module notes), or ``None`` for the object path.

    The columns of the last segments asked for (:data:`COLUMNS_CACHE_BYTES`) are kept, read-only, and handed out
    again (a new dict over the same arrays) while the same entries object is alive: the file is gathered once."""
    if not isinstance(entries, SegmentEntries):
        return None
    hit = _cache.get(id(entries))
    if hit is not None and hit[0] is entries:
        _cache.move_to_end(id(entries))
        return dict(hit[1])
    cols = _header_columns(entries)
    if cols is not None:
        size = sum(a.nbytes for a in cols.values())
        if size <= COLUMNS_CACHE_BYTES // 4:
            for a in cols.values():
                a.flags.writeable = False
            old = _cache.pop(id(entries), None)
            if old is not None:
                _cached_bytes[0] -= old[2]
            _cache[id(entries)] = (entries, cols, size)
            _cached_bytes[0] += size
            while _cached_bytes[0] > COLUMNS_CACHE_BYTES:
                _cached_bytes[0] -= _cache.popitem(last=False)[1][2]
            return dict(cols)
    return cols


def forget_columns() -> None:
    """Drop the kept header columns (a unit of work is done: its segments' entries can go)."""
    _cache.clear()
    _cached_bytes[0] = 0


def _header_columns(entries: SegmentEntries) -> dict[str, np.ndarray] | None:
    lo, hi = entries._lo, entries._hi
    if hi - lo > MAX_COLUMN_ROWS:
        return None
    markers = entries._markers if isinstance(entries, ColumnEntries) else None
    pos = np.asarray(entries._pos[lo:hi], dtype=np.int64)
    size = entries.size_array()
    crc = entries.crc_flags()
    n = len(pos)
    kept = entries._heads if isinstance(entries, ColumnEntries) else None
    if kept is not None and markers is not None and len(markers) < MAX_MARKERS:  # else: markers read again
        try:
            shrunk = n and int((pos + size).max()) > file_size(entries._path)
        except (OSError, UnreadableInputError):
            shrunk = True
        if shrunk:
            return None  # the file changed: the object path says so
        return _columns(kept[lo:hi], pos, size, crc, markers, None, lo, entries)
    with mapped(entries._path) as buf:
        if n and int((pos + size).max()) > len(buf):
            return None  # the file changed: the object path says so
        if n and int(pos[-1]) + rb.BATCH_OVERHEAD > len(buf):
            return None
        raw = np.frombuffer(buf, dtype=np.uint8) if n else np.zeros(0, dtype=np.uint8)
        # a window of the file at a time, its mapped pages let go after: touching one header a batch maps the
        # pages around it too (the kernel's fault-around), so one gather over 1 GiB of 16 KiB batches held the
        # whole file resident (1.1 GB peak in simulate-restart on a damaged segment)
        parts: list[np.ndarray] = []
        first = 0
        while first < n:
            last = max(first + 1, int(np.searchsorted(pos, int(pos[first]) + GATHER_SPAN)))
            window = pos[first:last]
            if not (raw[window + _MAGIC_AT] == 2).all():
                release(buf, 0, len(buf))
                return None  # legacy entries: the object path
            parts.append(bc.gather_headers(buf, window))
            release(buf, int(window[0]), int(window[-1]) + rb.BATCH_OVERHEAD)
            first = last
        heads = np.concatenate(parts) if len(parts) > 1 else parts[0] if parts else bc.gather_headers(buf, pos)
        cols = _columns(heads, pos, size, crc, markers, buf, lo, entries)
        del raw, heads
    return cols


def _columns(heads: np.ndarray, pos: np.ndarray, size: np.ndarray, crc: np.ndarray,
             markers: dict[int, tuple[int, int]] | None, buf: Any, lo: int,
             entries: SegmentEntries) -> dict[str, np.ndarray]:
    n = len(pos)
    cols: dict[str, Any] = {name: heads[name].astype(heads.dtype[name].newbyteorder("=")) for name in (
        "base_offset", "last_offset_delta", "partition_leader_epoch", "magic", "attributes", "max_timestamp",
        "producer_id", "producer_epoch", "base_sequence", "records_count", "crc", "base_timestamp")}
    marker = np.full(n, -1, dtype=np.int8)
    coordinator = np.zeros(n, dtype=np.int32)
    for k in np.flatnonzero(cols["attributes"] & rb.CONTROL_FLAG).tolist():
        known = markers.get(int(pos[k])) if markers is not None else None
        marker[k], coordinator[k] = known if known is not None else marker_of(entries._make(buf, lo + k))
    cols.update(position=pos, size=size, crc_invalid=crc == _CRC_INVALID, marker=marker,
                coordinator_epoch=coordinator)
    for name in ("base_offset", "max_timestamp", "producer_id"):
        cols[name] = cols[name].astype(np.int64)
    return cols


class _Budget:
    """Bytes of raw headers kept by :class:`ColumnEntries` now (given back when the arrays are freed)."""

    used = 0

    @classmethod
    def take(cls, heads: np.ndarray, copy: bool = True) -> np.ndarray | None:
        """An owned copy of ``heads`` (``heads`` itself when not ``copy``) when :data:`HEADERS_BUDGET` allows it,
        else ``None``."""
        if cls.used + heads.nbytes > HEADERS_BUDGET:
            return None
        kept = np.array(heads, copy=True) if copy else heads
        cls.used += kept.nbytes
        weakref.finalize(kept, cls.give_back, kept.nbytes)
        return kept

    @classmethod
    def give_back(cls, nbytes: int) -> None:
        cls.used -= nbytes
