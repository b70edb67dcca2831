"""Producer-state ``.snapshot`` files (Kafka's ``ProducerStateManager.readSnapshot``/``writeSnapshot``, whose
layout is the generated ``ProducerSnapshot`` message of ``ProducerSnapshot.json``, version 1).

int16 version (1), uint32 CRC-32C of everything after the CRC field (the count, the entries and
anything after them), int32 entry count, then 46-byte entries: producer id, epoch, last sequence, last
offset, offset delta, timestamp, coordinator epoch and the first offset of the ongoing transaction (-1
if none). A snapshot with no producers is 10 bytes; Kafka writes one at every roll.

Kafka's reader fails (``CorruptSnapshotException``) on an unknown version, a negative count, a count
larger than the bytes left, an entry array that runs past the end, and a CRC mismatch. The first four
raise :class:`DecodeError` here; the CRC is reported in ``crc_valid`` so a damaged snapshot can still be
read. Bytes after the declared entries are ignored by Kafka but covered by the CRC.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

from construct import GreedyBytes, Int16sb, Int32sb, Int32ub, Int64sb, PrefixedArray, Struct

from kafkatool.errors import DecodeError
from kafkatool.model import ProducerSnapshot, ProducerSnapshotEntry
from kafkatool.schema.checksum import crc32c
from kafkatool.schema.fixed import derive_struct, field_offsets
from kafkatool.schema.kafka_message import NEVER, Field, Message

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
"""One ``ProducerEntry``; field order is ``ProducerSnapshot.json``'s, names are the model's."""
PRODUCER_SNAPSHOT = Message("ProducerSnapshot", "1", flexible=NEVER, fields=(
    Field("Crc", "uint32", "1"),
    Field("ProducerEntries", "[]ProducerEntry", "1", fields=(
        Field("ProducerId", "int64", "1"), Field("Epoch", "int16", "1"), Field("LastSequence", "int32", "1"),
        Field("LastOffset", "int64", "1"), Field("OffsetDelta", "int32", "1"), Field("Timestamp", "int64", "1"),
        Field("CoordinatorEpoch", "int32", "1"), Field("CurrentTxnFirstOffset", "int64", "1"))),
))
"""The generated message after the int16 version (``ProducerSnapshot.json``); :data:`ENTRY` must lay its entries
out the same way (checked by the unit tests)."""
FILE = Struct("version" / Int16sb, "crc" / Int32ub, "entries" / PrefixedArray(Int32sb, ENTRY),
              "trailing" / GreedyBytes)
"""A whole file (the CRC is not checked by this declaration; see :func:`parse_producer_snapshot`)."""
HEADER_STRUCT = derive_struct(HEADER)
VERSION_STRUCT = derive_struct(Struct(HEADER.subcons[0]))
"""The version alone, to check it before the rest of the header (Kafka reads it first)."""
ENTRY_STRUCT = derive_struct(ENTRY)
HEADER_SIZE = HEADER_STRUCT.size
ENTRY_SIZE = ENTRY.sizeof()
CRC_OFFSET = field_offsets(HEADER)["crc"]
COUNT_OFFSET = field_offsets(HEADER)["count"]
ENTRIES_OFFSET = COUNT_OFFSET
"""Kafka's ``PRODUCER_ENTRIES_OFFSET``: the CRC covers from here to the end of the file."""
SUPPORTED_VERSIONS = (1,)
CURRENT_VERSION = 1
_FIELDS = tuple(sc.name for sc in ENTRY.subcons)


def compute_crc(data: bytes | memoryview) -> int:
    """CRC-32C of everything after the CRC field, as ``readSnapshot`` computes it."""
    return crc32c(bytes(data[ENTRIES_OFFSET:]))


def parse_producer_snapshot(data: bytes | memoryview) -> ProducerSnapshot:
    """Decode a snapshot; the CRC is checked (``crc_valid``), never trusted blindly.

    Raises :class:`DecodeError` (with the field and byte position) where Kafka's reader fails its schema
    validation: a short header, an unknown version, a bad count, or entries cut short.
    """
    size = len(data)
    if size < CRC_OFFSET:
        raise DecodeError("version", f"the file is {size} bytes long, too short for its version", 0)
    version = VERSION_STRUCT.unpack_from(data, 0)[0]
    if version not in SUPPORTED_VERSIONS:
        raise DecodeError("version", f"unknown snapshot version {version} (supported: "
                          f"{', '.join(map(str, SUPPORTED_VERSIONS))})", 0)
    if size < HEADER_SIZE:
        field = "crc" if size < COUNT_OFFSET else "count"
        raise DecodeError(field, f"the file ends after {size} bytes, inside the {HEADER_SIZE}-byte header",
                          CRC_OFFSET if field == "crc" else COUNT_OFFSET)
    version, crc, count = HEADER_STRUCT.unpack_from(data, 0)
    remaining = size - HEADER_SIZE
    if count < 0:
        raise DecodeError("count", f"negative entry count {count} (Kafka reads a null array and rejects it)",
                          COUNT_OFFSET)
    if count > remaining:
        raise DecodeError("count", f"{count} entries claimed but only {remaining} bytes follow", COUNT_OFFSET)
    if count * ENTRY_SIZE > remaining:
        whole = remaining // ENTRY_SIZE
        have = remaining - whole * ENTRY_SIZE
        raise DecodeError("count", f"{count} entries of {ENTRY_SIZE} bytes claimed, the file ends inside entry "
                          f"{whole} ({have} of {ENTRY_SIZE} bytes)", HEADER_SIZE + whole * ENTRY_SIZE)
    end = HEADER_SIZE + count * ENTRY_SIZE
    entries = [ProducerSnapshotEntry(*f) for f in ENTRY_STRUCT.iter_unpack(data[HEADER_SIZE:end])]
    return ProducerSnapshot(version, crc, compute_crc(data) == crc, entries)


def snapshot_corruption(data: bytes | memoryview) -> str | None:
    """The ``CorruptSnapshotException`` message ``ProducerStateManager.readSnapshot`` throws for ``data``, or
    ``None`` when Kafka reads it.

    Models its checks in order: the version (inside the schema-validation wrapper), the generated reader's array
    checks and buffer underflows (null messages), then the CRC-32C over everything after the CRC field.
    """
    wrap = "Snapshot failed schema validation: "
    if len(data) < CRC_OFFSET:
        return wrap + "null"
    version = VERSION_STRUCT.unpack_from(data, 0)[0]
    if version not in SUPPORTED_VERSIONS:
        return wrap + f"Snapshot contained an unknown file version {version}"
    if len(data) < HEADER_SIZE:
        return wrap + "null"
    _, crc, count = HEADER_STRUCT.unpack_from(data, 0)
    remaining = len(data) - HEADER_SIZE
    if count < 0:
        return wrap + "non-nullable field producerEntries was serialized as null"
    if count > remaining:
        return wrap + (f"Tried to allocate a collection of size {count}, but there are only {remaining} "
                       "bytes remaining.")
    if remaining < count * ENTRY_SIZE:
        return wrap + "null"
    computed = compute_crc(data)
    if computed != crc:
        return f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {crc}. Computed crc: {computed}"
    return None


def trailing_bytes(data: bytes | memoryview) -> int:
    """Bytes after the declared entries (Kafka ignores them; they still count in the CRC)."""
    if len(data) < HEADER_SIZE:
        return 0
    count = HEADER_STRUCT.unpack_from(data, 0)[2]
    return max(0, len(data) - HEADER_SIZE - max(count, 0) * ENTRY_SIZE)


def build_producer_snapshot(entries: Iterable[ProducerSnapshotEntry], version: int = CURRENT_VERSION) -> bytes:
    """Snapshot bytes with the CRC computed, as ``writeSnapshot`` lays them out.

    Raises ``ValueError`` when a field does not fit its width.
    """
    items = list(entries)
    try:
        count = HEADER_STRUCT.pack(version, 0, len(items))[COUNT_OFFSET:]
        body = count + b"".join(ENTRY_STRUCT.pack(*(getattr(e, name) for name in _FIELDS)) for e in items)
        head = HEADER_STRUCT.pack(version, crc32c(body), len(items))[:ENTRIES_OFFSET]
    except struct.error as err:
        raise ValueError(f"cannot build a producer snapshot: {err}") from None
    return head + body
