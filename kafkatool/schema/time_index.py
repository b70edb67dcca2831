"""``.timeindex`` files: sparse timestamp -> offset entries (Kafka's ``TimeIndex`` / ``AbstractIndex``).

Each 12-byte entry is an int64 timestamp (the largest seen so far in the segment) and an int32 offset
relative to the segment's base offset: the last offset of the batch holding that timestamp. It is
preallocated and zero-filled like the offset index (``segment.index.bytes`` rounded down to whole
entries: 4092 for the default 4096), and Kafka keeps the last slot free for the entry written at roll.

As for the offset index, :func:`parse_time_index_slots` decodes every whole slot (what ``TimeIndex``
sees) and :func:`parse_time_index` keeps the live ones (``DumpLogSegments``' rule, shared with
:func:`kafkatool.schema.offset_index.live_count`).
"""

from __future__ import annotations

from collections.abc import Iterable

from construct import GreedyBytes, GreedyRange, Int32sb, Int64sb, Struct

from kafkatool.errors import DecodeError
from kafkatool.model import IndexFile, TimeIndexEntry
from kafkatool.schema.fixed import derive_struct
from kafkatool.schema.offset_index import live_rows

ENTRY = Struct("timestamp" / Int64sb, "relative_offset" / Int32sb)
"""One slot, as ``TimeIndex.maybeAppend`` writes it."""
FILE = Struct("entries" / GreedyRange(ENTRY), "trailing" / GreedyBytes)
"""A whole file: whole slots, then any bytes short of a slot."""
ENTRY_STRUCT = derive_struct(ENTRY)
ENTRY_SIZE = ENTRY.sizeof()
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def kafka_entry_count(size: int) -> int:
    """``entries()`` of a ``TimeIndex`` opened on an existing file of ``size`` bytes (zero fill included)."""
    return size // ENTRY_SIZE


def trailing_bytes(data: bytes | memoryview) -> int:
    """Bytes after the last whole slot."""
    return len(data) % ENTRY_SIZE


def parse_time_index_slots(data: bytes | memoryview, base_offset: int) -> list[TimeIndexEntry]:
    """Every whole 12-byte slot, zero fill included, with absolute offsets (``TimeIndex.parseEntry``)."""
    whole = len(data) - len(data) % ENTRY_SIZE
    return [TimeIndexEntry(ts, base_offset + rel) for ts, rel in ENTRY_STRUCT.iter_unpack(data[:whole])]


def parse_time_index(data: bytes | memoryview, base_offset: int) -> IndexFile:
    """The live entries of a ``.timeindex`` plus how many slots follow them and the partial tail."""
    rows, count = live_rows(data, ENTRY_STRUCT, 1)
    entries = [TimeIndexEntry(ts, base_offset + rel) for ts, rel in rows]
    return IndexFile(entries, count, count - len(entries), len(data) % ENTRY_SIZE)


def sanity_check(data: bytes | memoryview, base_offset: int) -> None:
    """``TimeIndex.sanityCheck`` on a file as Kafka opens it; raises :class:`DecodeError` where Kafka
    throws ``CorruptIndexException``.

    Kafka's last entry is the last whole slot, so an untrimmed (zero-filled) time index fails: its
    last timestamp, 0, is below the first one.
    """
    count = kafka_entry_count(len(data))
    if count:
        last = (count - 1) * ENTRY_SIZE
        first_ts, _ = ENTRY_STRUCT.unpack_from(data, 0)
        last_ts, last_rel = ENTRY_STRUCT.unpack_from(data, last)
        if last_ts < first_ts:
            raise DecodeError("timestamp", f"the last timestamp is {last_ts} which is less than the first timestamp "
                              f"{first_ts}", last)
        if last_rel < 0:
            raise DecodeError("relative_offset", f"the last offset is {base_offset + last_rel} which is less than the "
                              f"first offset {base_offset}", last + 8)
    if len(data) % ENTRY_SIZE:
        raise DecodeError("entries", f"found {len(data)} bytes which is not a multiple of {ENTRY_SIZE}",
                          count * ENTRY_SIZE)


def build_time_index(entries: Iterable[TimeIndexEntry], base_offset: int, preallocate: int = 0) -> bytes:
    """Time index bytes for ``entries``, zero-padded to ``preallocate`` bytes when given.

    Raises ``ValueError`` when a timestamp or a relative offset does not fit its field.
    """
    pack = ENTRY_STRUCT.pack
    parts = []
    for e in entries:
        rel = e.offset - base_offset
        if not (INT32_MIN <= rel <= INT32_MAX and INT64_MIN <= e.timestamp <= INT64_MAX):
            raise ValueError(f"entry {e} does not fit a time index slot relative to base offset {base_offset}")
        parts.append(pack(e.timestamp, rel))
    out = b"".join(parts)
    return out + b"\0" * max(0, preallocate - len(out))
