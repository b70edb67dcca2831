"""``.index`` files: sparse offset -> byte position entries (Kafka's ``OffsetIndex`` / ``AbstractIndex``).

Each 8-byte entry is an int32 offset relative to the segment's base offset (the number in the file
name) and an int32 byte position in the ``.log``. An active segment's index is preallocated to
``segment.index.bytes`` (rounded down to whole entries) and zero-filled; Kafka trims it when the
segment rolls or the log closes, so after a hard crash the zeros remain.

Two views of "how many entries" exist in Kafka, and both are offered here:

* ``OffsetIndex`` opened on an existing file counts every whole slot (file size // 8), zero fill
  included: that is what its ``sanityCheck`` and ``entries()`` see (:func:`kafka_entry_count`).
* ``DumpLogSegments`` stops at the first slot after slot 0 whose offset is the base offset again,
  the start of the zero fill (:func:`live_count`); :func:`parse_offset_index` returns those "live"
  entries.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

from construct import GreedyBytes, GreedyRange, Int32sb, Struct

from kafkatool.errors import DecodeError
from kafkatool.model import IndexFile, OffsetIndexEntry
from kafkatool.schema.fixed import derive_struct

ENTRY = Struct("relative_offset" / Int32sb, "position" / Int32sb)
"""One slot, as ``OffsetIndex.append`` writes it."""
FILE = Struct("entries" / GreedyRange(ENTRY), "trailing" / GreedyBytes)
"""A whole file: whole slots, then any bytes short of a slot (which Kafka's sanity check rejects)."""
ENTRY_STRUCT = derive_struct(ENTRY)
ENTRY_SIZE = ENTRY.sizeof()
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def kafka_entry_count(size: int) -> int:
    """``entries()`` of an ``OffsetIndex`` opened on an existing file of ``size`` bytes (zero fill included)."""
    return size // ENTRY_SIZE


def trailing_bytes(data: bytes | memoryview) -> int:
    """Bytes after the last whole slot."""
    return len(data) % ENTRY_SIZE


def parse_offset_index_slots(data: bytes | memoryview, base_offset: int) -> list[OffsetIndexEntry]:
    """Every whole 8-byte slot, zero fill included, with absolute offsets (``OffsetIndex.parseEntry``)."""
    whole = len(data) - len(data) % ENTRY_SIZE
    return [OffsetIndexEntry(base_offset + rel, pos) for rel, pos in ENTRY_STRUCT.iter_unpack(data[:whole])]


class SlotView(Sequence[tuple[int, int]]):
    """Every whole slot of an index buffer as ``(key, value)`` pairs, unpacked when asked for (a mapped file is
    read only where it is looked at): ``(absolute offset, position)`` of an offset index (``rel_field`` 0),
    ``(timestamp, absolute offset)`` of a time index (``rel_field`` 1)."""

    def __init__(self, data: Any, entry: struct.Struct, rel_field: int, base_offset: int) -> None:
        self.data, self.entry, self.rel, self.base = data, entry, rel_field, base_offset
        self.count = len(data) // entry.size

    def __len__(self) -> int:
        return self.count

    def _pair(self, row: tuple[int, ...]) -> tuple[int, int]:
        return (self.base + row[0], row[1]) if self.rel == 0 else (row[0], self.base + row[1])

    @overload
    def __getitem__(self, index: int) -> tuple[int, int]: ...

    @overload
    def __getitem__(self, index: slice) -> list[tuple[int, int]]: ...

    def __getitem__(self, index: int | slice) -> tuple[int, int] | list[tuple[int, int]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self.count))]
        if index < 0:
            index += self.count
        if not 0 <= index < self.count:
            raise IndexError("index slot out of range")
        return self._pair(self.entry.unpack_from(self.data, index * self.entry.size))

    def __iter__(self) -> Iterator[tuple[int, int]]:
        for row in self.entry.iter_unpack(memoryview(self.data)[:self.count * self.entry.size]):
            yield self._pair(row)


def live_count(offsets: list[int], base_offset: int) -> int:
    """How many leading slots are real: up to the first slot after slot 0 whose offset is the base again.

    This is ``DumpLogSegments``' rule for both index kinds ("since it is a sparse file, in the event of
    a crash there may be many zero entries, stop if we see one").
    """
    for i in range(1, len(offsets)):
        if offsets[i] == base_offset:
            return i
    return len(offsets)


def parse_offset_index(data: bytes | memoryview, base_offset: int) -> IndexFile:
    """The live entries of an ``.index`` plus how many slots follow them and the partial tail."""
    rows, count = live_rows(data, ENTRY_STRUCT, 0)
    entries = [OffsetIndexEntry(base_offset + rel, pos) for rel, pos in rows]
    return IndexFile(entries, count, count - len(entries), len(data) % ENTRY_SIZE)


def live_rows(data: bytes | memoryview, entry: struct.Struct, rel_field: int) -> tuple[list[tuple[int, ...]], int]:
    """The unpacked live slots (:func:`live_count`'s rule) and the number of whole slots.

    The walk stops at the first slot after slot 0 whose relative offset is 0, so a crashed segment's
    preallocated index (10 MiB of zero fill by default) costs nothing beyond its live entries.
    """
    size = entry.size
    count = len(data) // size
    rows: list[tuple[int, ...]] = []
    for i, row in enumerate(entry.iter_unpack(memoryview(data)[:count * size])):
        if i and row[rel_field] == 0:
            break
        rows.append(row)
    return rows, count


def sanity_check(data: bytes | memoryview, base_offset: int) -> None:
    """``OffsetIndex.sanityCheck`` on a file as Kafka opens it; raises :class:`DecodeError` where Kafka
    throws ``CorruptIndexException`` (and rebuilds the index at start-up).

    Kafka's last entry is the last whole slot: a zero-filled tail ends at the base offset and passes.
    """
    count = kafka_entry_count(len(data))
    if count:
        last = (count - 1) * ENTRY_SIZE
        rel, _ = ENTRY_STRUCT.unpack_from(data, last)
        if rel < 0:
            raise DecodeError("relative_offset", f"the last offset is {base_offset + rel}, which is less than the base "
                              f"offset {base_offset}", last)
    if len(data) % ENTRY_SIZE:
        raise DecodeError("entries", f"found {len(data)} bytes which is not a multiple of {ENTRY_SIZE}",
                          count * ENTRY_SIZE)


def build_offset_index(entries: Iterable[OffsetIndexEntry], base_offset: int, preallocate: int = 0) -> bytes:
    """Index bytes for ``entries``, zero-padded to ``preallocate`` bytes when given (an untrimmed index).

    Any entry the format can hold is written, so damaged slots round-trip; Kafka itself only writes
    relative offsets in ``[0, 2**31 - 1]`` (``AbstractIndex.toRelative``). Raises ``ValueError`` when a
    relative offset or a position does not fit an int32.
    """
    pack = ENTRY_STRUCT.pack
    parts = []
    for e in entries:
        rel = e.offset - base_offset
        if not (INT32_MIN <= rel <= INT32_MAX and INT32_MIN <= e.position <= INT32_MAX):
            raise ValueError(f"entry {e} does not fit an index slot relative to base offset {base_offset}")
        parts.append(pack(rel, e.position))
    out = b"".join(parts)
    return out + b"\0" * max(0, preallocate - len(out))
