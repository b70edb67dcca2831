"""``.timeindex`` files: sparse timestamp -> offset entries (Kafka's ``TimeIndex``).

Each 12-byte entry is an int64 timestamp (the largest seen so far) and an int32 offset relative to the
segment's base offset: the last offset of the batch holding that timestamp. Preallocated and
zero-filled like the offset index.
"""

from __future__ import annotations

from collections.abc import Iterable

from construct import Int32sb, Int64sb, Struct

from kafkatool.model import IndexFile, TimeIndexEntry
from kafkatool.schema.fixed import derive_struct
from kafkatool.schema.offset_index import live_count

ENTRY = Struct("timestamp" / Int64sb, "relative_offset" / Int32sb)
ENTRY_STRUCT = derive_struct(ENTRY)
ENTRY_SIZE = ENTRY.sizeof()


def parse_time_index_slots(data: bytes | memoryview, base_offset: int) -> list[TimeIndexEntry]:
    """Every whole 12-byte slot, zero fill included, with absolute offsets."""
    whole = len(data) - len(data) % ENTRY_SIZE
    return [TimeIndexEntry(ts, base_offset + rel) for ts, rel in ENTRY_STRUCT.iter_unpack(data[:whole])]


def parse_time_index(data: bytes | memoryview, base_offset: int) -> IndexFile:
    """The live entries of a ``.timeindex`` plus how much zero fill and partial data follows them."""
    slots = parse_time_index_slots(data, base_offset)
    live = live_count([e.offset for e in slots], base_offset)
    return IndexFile(slots[:live], len(slots), len(slots) - live, len(data) % ENTRY_SIZE)


def build_time_index(entries: Iterable[TimeIndexEntry], base_offset: int, preallocate: int = 0) -> bytes:
    """Time index bytes for ``entries``, zero-padded to ``preallocate`` bytes when given."""
    out = b"".join(ENTRY.build({"timestamp": e.timestamp, "relative_offset": e.offset - base_offset})
                   for e in entries)
    return out + b"\0" * max(0, preallocate - len(out))
