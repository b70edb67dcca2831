"""A segment's entries held as their file positions and re-read on use: memory bounded by the batch count.

Kafka keeps nothing per batch when it loads or recovers a log: it walks the file. Holding every batch header as a
Python object costs about 450 bytes a batch, 2.8 GB for 1 GiB of one-record batches. :class:`SegmentEntries`
keeps 4 bytes a batch, its position (an entry's size is the distance to the next one; only the sizes of entries
not followed by the next, after damage, and of the last are kept, and the walk's CRC verdicts only once they
differ) and re-reads a header from the file when an entry is asked for; slices are views over the same arrays, so
an engine can keep "the entries up to here" without a copy. Iteration maps the file once and lets the pages behind
it go, as the walk does.

An entry comes back exactly as the read made it (:func:`complete_entry` is the one place that finishes a walked
entry, on the first read and on every re-read): control batches' records decoded, a legacy wrapper's inner offsets.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

from kafkatool.errors import DecodeError, UnreadableInputError
from kafkatool.model import Compression, LegacyBatch, LogEntry, RecordBatch
from kafkatool.reading.context import resolve
from kafkatool.reading.files import mapped
from kafkatool.schema import legacy
from kafkatool.schema import record_batch as rb
from kafkatool.schema.codecs import ReadLimits
from kafkatool.schema.log_segment import RELEASE_EVERY, read_entry_at, release_pages

_CRC_UNCHECKED, _CRC_VALID, _CRC_INVALID = 0, 1, 2
_MAGIC_AT = rb.FIELD_OFFSETS["magic"]  # the same byte in a legacy entry (offset, size, crc, magic)
LARGE_ENTRY = 1 << 20
"""An entry at least this large has its mapped pages let go as soon as the iteration moves past it."""


def complete_entry(item: LogEntry, buf: bytes | memoryview, *, deep: bool = False,
                   limits: ReadLimits | None = None) -> DecodeError | None:
    """Finish a walked entry as a partition read keeps it: a control batch's records decoded (to match abort
    markers with ``.txnindex``), a legacy wrapper's inner messages (Kafka's ``baseOffset()`` of a wrapper is its
    first inner offset, so offset continuity needs them), within ``limits`` (the current ones when ``None``).
    Returns the decoding failure, if any."""
    try:
        if isinstance(item, RecordBatch) and item.records is None and (item.is_control or deep):
            item.records = rb.decode_records(item, rb.records_payload(buf, item),
                                             max_output=resolve(limits).max_decompressed_bytes)
        elif isinstance(item, LegacyBatch) and item.records is None and (
                deep or item.attributes & legacy.CODEC_MASK != Compression.NONE.value):  # unknown ids: a defect
            item.records = legacy.inner_records(item, max_output=resolve(limits).max_decompressed_bytes)
    except DecodeError as err:
        return err
    return None


class SegmentEntries(Sequence[LogEntry]):
    """The entries one walk of ``path`` found, in file order; see the module docstring. Re-reads decode within
    the ``limits`` of the read that made them (the current ones when ``None``), whenever they happen."""

    __slots__ = ("_crc", "_crc_fill", "_deep", "_gaps", "_hi", "_last_size", "_limits", "_lo", "_max_ts", "_path",
                 "_pos")

    def __init__(self, path: str | Path, *, deep: bool = False, file_size: int = 1 << 63,
                 limits: ReadLimits | None = None) -> None:
        self._path = str(path)
        self._deep = deep
        self._limits = resolve(limits)
        # Kafka's segments are under 2 GiB: 4-byte positions, unless the file is larger than that can hold.
        self._pos = array("I" if file_size < 1 << 32 else "q")
        self._gaps: dict[int, int] = {}  # entry -> size, for entries the next does not follow at once
        self._last_size = 0  # the size of the last entry appended
        self._crc: bytearray | None = None  # the verdicts, once they differ; until then all are _crc_fill
        self._crc_fill = _CRC_UNCHECKED
        self._lo = 0
        self._hi = 0
        self._max_ts: int | None = -1

    def append(self, entry: LogEntry) -> None:
        """Record a walked entry (only while the segment is being read, before any view is taken)."""
        n = len(self._pos)
        if n and self._pos[n - 1] + self._last_size != entry.position:
            self._gaps[n - 1] = self._last_size
        self._pos.append(entry.position)
        self._last_size = entry.size_in_bytes
        self._add_flags(_CRC_UNCHECKED if entry.crc_valid is None else _CRC_VALID if entry.crc_valid
                        else _CRC_INVALID, 1)
        self._hi += 1
        if entry.max_timestamp > self._max_ts:  # type: ignore[operator]
            self._max_ts = entry.max_timestamp

    def extend_columns(self, positions: Any, sizes: Any, flag: Any) -> None:
        """Record walked entries given as position and size arrays in file order, with the CRC verdict ``flag``
        (one for all, or a uint8 array of one per entry) while the segment is being read; ``max_timestamp`` is the
        caller's."""
        count = len(positions)
        if not count:
            return
        import numpy as np

        n = len(self._pos)
        pos = np.asarray(positions, dtype=np.int64)
        ends = pos + np.asarray(sizes, dtype=np.int64)
        if n and self._pos[n - 1] + self._last_size != int(pos[0]):
            self._gaps[n - 1] = self._last_size
        for k in np.flatnonzero(ends[:-1] != pos[1:]).tolist():
            self._gaps[n + k] = int(ends[k] - pos[k])
        self._pos.extend(pos.tolist())
        self._last_size = int(ends[-1] - pos[-1])
        self._add_flags(flag, count)
        self._hi += count

    def _add_flags(self, flag: Any, count: int) -> None:
        if not isinstance(flag, int):  # one verdict per entry
            import numpy as np

            flags = np.asarray(flag, dtype=np.uint8)
            if count and bool((flags == flags[0]).all()):
                flag = int(flags[0])
            else:
                n = len(self._pos) - count
                if self._crc is None:
                    self._crc = bytearray([self._crc_fill]) * n
                self._crc.extend(flags.tobytes())
                return
        n = len(self._pos) - count  # entries before these
        if self._crc is not None:
            self._crc.extend(bytes([flag]) * count)
        elif n == 0:
            self._crc_fill = flag
        elif flag != self._crc_fill:
            self._crc = bytearray([self._crc_fill]) * n + bytes([flag]) * count

    def _size_at(self, k: int) -> int:
        """The size of entry ``k`` (of the whole segment's)."""
        if k == len(self._pos) - 1:
            return self._last_size
        known = self._gaps.get(k)
        return self._pos[k + 1] - self._pos[k] if known is None else known

    def _flag_at(self, k: int) -> int:
        return self._crc_fill if self._crc is None else self._crc[k]

    def size_array(self) -> Any:
        """These entries' sizes as an int64 NumPy array."""
        import numpy as np

        lo, hi = self._lo, self._hi
        if hi <= lo:
            return np.zeros(0, dtype=np.int64)
        pos = np.asarray(self._pos[lo:min(hi + 1, len(self._pos))], dtype=np.int64)
        out = np.empty(hi - lo, dtype=np.int64)
        out[:len(pos) - 1] = np.diff(pos)
        if hi == len(self._pos):
            out[-1] = self._last_size
        for k, size in self._gaps.items():
            if lo <= k < hi:
                out[k - lo] = size
        return out

    def _view(self, lo: int, hi: int) -> SegmentEntries:
        out = SegmentEntries.__new__(SegmentEntries)
        for name in SegmentEntries.__slots__:
            setattr(out, name, getattr(self, name))
        out._lo, out._hi = lo, max(lo, hi)
        out._max_ts = self._max_ts if (out._lo, out._hi) == (0, len(self._pos)) else None
        return out

    @property
    def max_timestamp(self) -> int:
        """The newest ``max_timestamp`` of these entries (kept from the walk for a whole segment)."""
        if self._max_ts is None:
            self._max_ts = max((e.max_timestamp for e in self), default=-1)
        return self._max_ts

    def __len__(self) -> int:
        return self._hi - self._lo

    def __bool__(self) -> bool:
        return self._hi > self._lo

    @overload
    def __getitem__(self, index: int) -> LogEntry: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[LogEntry]: ...

    def __getitem__(self, index: int | slice) -> LogEntry | Sequence[LogEntry]:
        n = self._hi - self._lo
        if isinstance(index, slice):
            start, stop, step = index.indices(n)
            if step != 1:
                return list(self)[index]
            return self._view(self._lo + start, self._lo + stop)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("segment entry index out of range")
        with mapped(self._path) as buf:
            return self._make(buf, self._lo + index)

    def __iter__(self) -> Iterator[LogEntry]:
        if self._hi <= self._lo:
            return
        with mapped(self._path) as buf:
            released = previous = self._pos[self._lo]
            for k in range(self._lo, self._hi):
                pos = self._pos[k]
                # every RELEASE_EVERY bytes, and behind each entry of a MiB or more (a big legacy wrapper)
                if pos - released >= RELEASE_EVERY or pos - previous >= LARGE_ENTRY:
                    release_pages(buf, released, pos)
                    released = pos
                previous = pos
                yield self._make(buf, k)

    def magic2_entries(self) -> Iterator[LogEntry]:
        """The magic 2 batches in order, as iteration makes them; a legacy entry is skipped by its magic byte, never
        read (its wrapper is not inflated, its pages not touched beyond that byte)."""
        if self._hi <= self._lo:
            return
        with mapped(self._path) as buf:
            released = self._pos[self._lo]
            for k in range(self._lo, self._hi):
                pos = self._pos[k]
                if pos - released >= RELEASE_EVERY:
                    release_pages(buf, released, pos)
                    released = pos
                if pos + _MAGIC_AT < len(buf) and buf[pos + _MAGIC_AT] != 2:
                    continue
                yield self._make(buf, k)

    def spans(self) -> Iterator[tuple[int, int]]:
        """``(position, end)`` of each entry, from the arrays alone (see :func:`kafkatool.model.entry_spans`)."""
        pos = self._pos
        for k in range(self._lo, self._hi):
            p = pos[k]
            yield p, p + self._size_at(k)

    def crc_flags(self) -> Any:
        """The walk's CRC verdicts as a uint8 NumPy array (0: not checked, 1: valid, 2: invalid)."""
        import numpy as np

        if self._crc is None:
            return np.full(max(0, self._hi - self._lo), self._crc_fill, dtype=np.uint8)
        return np.frombuffer(bytes(self._crc[self._lo:self._hi]), dtype=np.uint8)

    def header_columns(self) -> dict[str, Any] | None:
        """The entries' magic 2 header columns, or None for the object path (reading.entry_columns)."""
        from kafkatool.reading.entry_columns import header_columns  # entry_columns imports this module

        return header_columns(self)

    def span_arrays(self) -> tuple[Any, Any]:
        """spans() as two int64 NumPy arrays (positions, ends)."""
        from kafkatool.reading.entry_columns import span_arrays

        return span_arrays(self)

    def _make(self, buf: bytes | memoryview, k: int) -> LogEntry:
        pos = self._pos[k]
        if pos + self._size_at(k) > len(buf):
            raise UnreadableInputError(self._path, f"the file changed while it was read: the entry at byte {pos} "
                                                   "is no longer there")
        entry = read_entry_at(buf, pos, deep=self._deep, max_output=self._limits.max_decompressed_bytes)
        flag = self._flag_at(k)
        entry.crc_valid = None if flag == _CRC_UNCHECKED else flag == _CRC_VALID
        complete_entry(entry, buf, deep=self._deep, limits=self._limits)
        return entry

    def __repr__(self) -> str:
        return f"SegmentEntries({self._path!r}, {len(self)} entries)"
