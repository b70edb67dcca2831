"""``.index`` files: sparse offset -> byte position entries (Kafka's ``OffsetIndex``).

Each 8-byte entry is an int32 offset relative to the segment's base offset and an int32 byte position
in the ``.log``. An active segment's index is preallocated (``segment.index.bytes``) and zero-filled,
and trimmed when the segment rolls or the log closes: after a hard crash the zeros remain.
"""

from __future__ import annotations

from collections.abc import Iterable

from construct import Int32sb, Struct

from kafkatool.model import IndexFile, OffsetIndexEntry
from kafkatool.schema.fixed import derive_struct

ENTRY = Struct("relative_offset" / Int32sb, "position" / Int32sb)
ENTRY_STRUCT = derive_struct(ENTRY)
ENTRY_SIZE = ENTRY.sizeof()


def parse_offset_index_slots(data: bytes | memoryview, base_offset: int) -> list[OffsetIndexEntry]:
    """Every whole 8-byte slot, zero fill included, with absolute offsets."""
    whole = len(data) - len(data) % ENTRY_SIZE
    return [OffsetIndexEntry(base_offset + rel, pos) for rel, pos in ENTRY_STRUCT.iter_unpack(data[:whole])]


def live_count(offsets: list[int], base_offset: int) -> int:
    """How many leading slots are real: up to the first slot after slot 0 whose offset is the base again."""
    for i in range(1, len(offsets)):
        if offsets[i] == base_offset:
            return i
    return len(offsets)


def parse_offset_index(data: bytes | memoryview, base_offset: int) -> IndexFile:
    """The live entries of an ``.index`` plus how much zero fill and partial data follows them."""
    slots = parse_offset_index_slots(data, base_offset)
    live = live_count([e.offset for e in slots], base_offset)
    return IndexFile(slots[:live], len(slots), len(slots) - live, len(data) % ENTRY_SIZE)


def build_offset_index(entries: Iterable[OffsetIndexEntry], base_offset: int, preallocate: int = 0) -> bytes:
    """Index bytes for ``entries``, zero-padded to ``preallocate`` bytes when given (an unclosed index)."""
    out = b"".join(ENTRY.build({"relative_offset": e.offset - base_offset, "position": e.position})
                   for e in entries)
    return out + b"\0" * max(0, preallocate - len(out))
