"""Producer-state ``.snapshot`` files (Kafka's ``ProducerStateManager`` snapshot, ``ProducerSnapshot.json``).

int16 version (1), uint32 CRC-32C of everything after the CRC field, then an int32 count and 46-byte
entries: producer id, epoch, last sequence, last offset, offset delta, timestamp, coordinator epoch and
the first offset of the ongoing transaction (-1 if none). An empty snapshot is 10 bytes.
"""

from __future__ import annotations

from collections.abc import Iterable

import crc32c
from construct import Int16sb, Int32sb, Int32ub, Int64sb, Struct

from kafkatool.errors import DecodeError
from kafkatool.model import ProducerSnapshot, ProducerSnapshotEntry
from kafkatool.schema.fixed import derive_struct, field_offsets

HEADER = Struct("version" / Int16sb, "crc" / Int32ub, "count" / Int32sb)
ENTRY = Struct(
    "producer_id" / Int64sb,
    "producer_epoch" / Int16sb,
    "last_sequence" / Int32sb,
    "last_offset" / Int64sb,
    "offset_delta" / Int32sb,
    "timestamp" / Int64sb,
    "coordinator_epoch" / Int32sb,
    "current_txn_first_offset" / Int64sb,
)
HEADER_STRUCT = derive_struct(HEADER)
ENTRY_STRUCT = derive_struct(ENTRY)
ENTRY_SIZE = ENTRY.sizeof()
CRC_OFFSET = field_offsets(HEADER)["crc"]
ENTRIES_OFFSET = field_offsets(HEADER)["count"]  # the CRC covers from here to the end
SUPPORTED_VERSIONS = (1,)


def parse_producer_snapshot(data: bytes | memoryview) -> ProducerSnapshot:
    """Decode a snapshot; the CRC is checked (``crc_valid``), never trusted blindly.

    Raises :class:`DecodeError` for an unknown version or an entry array that does not fit the file,
    the cases where Kafka's reader fails schema validation.
    """
    if len(data) < HEADER_STRUCT.size:
        raise DecodeError("header", f"snapshot of {len(data)} bytes is shorter than its {HEADER_STRUCT.size}-byte "
                          "header", 0)
    version, crc, count = HEADER_STRUCT.unpack_from(data, 0)
    if version not in SUPPORTED_VERSIONS:
        raise DecodeError("version", f"unknown snapshot version {version}", 0)
    if count < 0 or HEADER_STRUCT.size + count * ENTRY_SIZE > len(data):
        raise DecodeError("count", f"{count} entries do not fit in {len(data) - HEADER_STRUCT.size} bytes",
                          ENTRIES_OFFSET)
    computed = crc32c.crc32c(bytes(data[ENTRIES_OFFSET:]))
    end = HEADER_STRUCT.size + count * ENTRY_SIZE
    entries = [ProducerSnapshotEntry(*f) for f in ENTRY_STRUCT.iter_unpack(data[HEADER_STRUCT.size:end])]
    return ProducerSnapshot(version, crc, computed == crc, entries)


def trailing_bytes(data: bytes | memoryview) -> int:
    """Bytes after the declared entries (Kafka ignores them; they still count in the CRC)."""
    if len(data) < HEADER_STRUCT.size:
        return 0
    count = HEADER_STRUCT.unpack_from(data, 0)[2]
    return max(0, len(data) - HEADER_STRUCT.size - max(count, 0) * ENTRY_SIZE)


def build_producer_snapshot(entries: Iterable[ProducerSnapshotEntry], version: int = 1) -> bytes:
    """Snapshot bytes with a computed CRC."""
    items = list(entries)
    body = Int32sb.build(len(items)) + b"".join(
        ENTRY.build({name: getattr(e, name) for name in (sc.name for sc in ENTRY.subcons)}) for e in items)
    return HEADER.build({"version": version, "crc": crc32c.crc32c(body), "count": len(items)})[:ENTRIES_OFFSET] + body
