"""Legacy message sets: magic 0 and magic 1 messages (Kafka's ``LegacyRecord`` and
``AbstractLegacyRecordBatch``).

A log entry is an 8-byte offset and a 4-byte size, then the message: a CRC-32 (zlib's, over magic to
end), magic, attributes (codec in bits 0-2, timestamp type in bit 3 for magic 1), a timestamp (magic 1
only), and int32-length-prefixed key and value (-1 = null). A compressed message ("wrapper") holds a
whole inner message set in its value. For a magic 1 wrapper, inner offsets are relative and the
wrapper's offset is the last absolute offset; a magic 1 wrapper with LogAppendTime gives every inner
message its own timestamp and type.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable

from construct import Int8sb, Int32sb, Int32ub, Int64sb, Struct

from kafkatool.errors import DecodeError
from kafkatool.model import Compression, LegacyBatch, Record, TimestampType
from kafkatool.schema.codecs import DEFAULT_MAX_OUTPUT, compress, decompress
from kafkatool.schema.fixed import NullableBytes, derive_struct

LOG_ENTRY_PREFIX = Struct("offset" / Int64sb, "message_size" / Int32sb)
MESSAGE_PREFIX = Struct("crc" / Int32ub, "magic" / Int8sb, "attributes" / Int8sb)
TIMESTAMP = Struct("timestamp" / Int64sb)


NullableBytes32 = NullableBytes(Int32sb)


MESSAGE_V0 = Struct(*MESSAGE_PREFIX.subcons, "key" / NullableBytes32, "value" / NullableBytes32)
MESSAGE_V1 = Struct(*MESSAGE_PREFIX.subcons, *TIMESTAMP.subcons, "key" / NullableBytes32,
                    "value" / NullableBytes32)

ENTRY_HEAD = Struct(*LOG_ENTRY_PREFIX.subcons, *MESSAGE_PREFIX.subcons)
ENTRY_HEAD_STRUCT = derive_struct(ENTRY_HEAD)
TIMESTAMP_STRUCT = derive_struct(TIMESTAMP)
LENGTH = struct.Struct(">i")
LOG_OVERHEAD = LOG_ENTRY_PREFIX.sizeof()
CRC_SIZE = 4
RECORD_OVERHEAD_V0 = MESSAGE_PREFIX.sizeof() + 8  # crc, magic, attributes, key and value lengths
RECORD_OVERHEAD_V1 = RECORD_OVERHEAD_V0 + TIMESTAMP.sizeof()


def _message_fields(buf: bytes | memoryview, start: int, end: int) -> tuple[int, int, int, int | None,
                                                                            bytes | None, bytes | None]:
    """(crc, magic, attributes, timestamp, key, value) of the message in ``buf[start:end]``."""
    if end - start < RECORD_OVERHEAD_V0:
        raise DecodeError("message_size", f"message of {end - start} bytes is below the minimum "
                          f"{RECORD_OVERHEAD_V0}", start)
    crc = int.from_bytes(buf[start:start + 4], "big")
    magic = buf[start + 4] - 256 if buf[start + 4] > 127 else buf[start + 4]
    attributes = buf[start + 5] - 256 if buf[start + 5] > 127 else buf[start + 5]
    pos = start + 6
    if magic not in (0, 1):
        raise DecodeError("magic", f"unknown magic {magic} in a legacy message", start + 4)
    timestamp = None
    if magic == 1:
        if end - start < RECORD_OVERHEAD_V1:
            raise DecodeError("message_size", "magic 1 message is too short for its timestamp", start)
        (timestamp,) = TIMESTAMP_STRUCT.unpack_from(buf, pos)
        pos += 8
    key, pos = _nullable(buf, pos, end, "key")
    value, pos = _nullable(buf, pos, end, "value")
    if pos != end:
        raise DecodeError("message_size", f"{end - pos} bytes left after the value", pos)
    return crc, magic, attributes, timestamp, key, value


def _nullable(buf: bytes | memoryview, pos: int, end: int, name: str) -> tuple[bytes | None, int]:
    if end - pos < 4:
        raise DecodeError(f"{name}_length", "message ends inside a length field", pos)
    (length,) = LENGTH.unpack_from(buf, pos)
    pos += 4
    if length < 0:
        return None, pos
    if end - pos < length:
        raise DecodeError(name, f"{name} of {length} bytes overruns the message ({end - pos} left)", pos - 4)
    return bytes(buf[pos:pos + length]), pos + length


def parse_legacy_entry(buf: bytes | memoryview, pos: int = 0) -> LegacyBatch:
    """The shallow legacy entry at ``pos`` of a log buffer, with its CRC checked."""
    if len(buf) - pos < ENTRY_HEAD_STRUCT.size:
        raise DecodeError("message", "legacy entry header is truncated", pos)
    offset, size, _crc, _magic, _attrs = ENTRY_HEAD_STRUCT.unpack_from(buf, pos)
    start = pos + LOG_OVERHEAD
    end = start + size
    if size < 0 or end > len(buf):
        raise DecodeError("message_size", f"message size {size} overruns the buffer", pos + 8)
    crc, magic, attributes, timestamp, key, value = _message_fields(buf, start, end)
    valid = zlib.crc32(buf[start + CRC_SIZE:end]) == crc
    return LegacyBatch(pos, offset, size, crc, magic, attributes, timestamp, key, value, valid)


def parse_bare_message(buf: bytes | memoryview) -> LegacyBatch:
    """A message without the 12-byte offset/size prefix (offset reported as -1)."""
    crc, magic, attributes, timestamp, key, value = _message_fields(buf, 0, len(buf))
    valid = zlib.crc32(buf[CRC_SIZE:]) == crc
    return LegacyBatch(0, -1, len(buf), crc, magic, attributes, timestamp, key, value, valid)


def _as_record(e: LegacyBatch, offset: int, timestamp: int, position: int | None) -> Record:
    return Record(offset=offset, timestamp=timestamp, key=e.key, value=e.value, attributes=e.attributes,
                  size_in_bytes=e.size_in_bytes, position=position, magic=e.magic, crc=e.crc,
                  crc_valid=e.crc_valid)


def inner_entries(data: bytes | memoryview) -> list[LegacyBatch]:
    """Every complete entry of an (uncompressed) inner message set; a partial tail is ignored, as
    Kafka's ``DataLogInputStream`` does."""
    out = []
    pos = 0
    while len(data) - pos >= LOG_OVERHEAD:
        (size,) = LENGTH.unpack_from(data, pos + 8)
        if size < RECORD_OVERHEAD_V0:
            raise DecodeError("message_size", f"inner message size {size} below the minimum", pos + 8)
        if pos + LOG_OVERHEAD + size > len(data):
            break
        out.append(parse_legacy_entry(data, pos))
        pos += LOG_OVERHEAD + size
    return out


def inner_records(entry: LegacyBatch, *, max_output: int = DEFAULT_MAX_OUTPUT) -> list[Record]:
    """Records of a shallow entry: itself when uncompressed, else its decompressed inner messages with
    absolute offsets and timestamps as Kafka's ``DeepRecordsIterator`` gives them."""
    codec_id = entry.attributes & 0x07
    ts = -1 if entry.timestamp is None else entry.timestamp
    if codec_id == 0:
        return [_as_record(entry, entry.offset, ts, entry.position)]
    try:
        codec = Compression(codec_id)
    except ValueError:
        raise DecodeError("attributes", f"unknown compression codec id {codec_id}", entry.position + 17) from None
    if entry.value is None:
        raise DecodeError("value", "compressed message set with a null value", entry.position)
    try:
        data = decompress(codec, entry.value, magic=entry.magic, max_output=max_output)
    except DecodeError as err:
        raise DecodeError("value", err.reason, entry.position) from None
    inner = inner_entries(data)
    if not inner:
        raise DecodeError("value", "compressed message set with no inner messages", entry.position)
    base = 0
    if entry.magic == 1 and entry.offset != 0:
        last = inner[-1].offset
        if entry.offset < last:
            raise DecodeError("offset", f"wrapper offset {entry.offset} is below its last inner offset {last}",
                              entry.position)
        base = entry.offset - last
    log_append = entry.magic == 1 and entry.timestamp_type is TimestampType.LOG_APPEND_TIME
    records = []
    for e in inner:
        if e.attributes & 0x07:
            raise DecodeError("attributes", "inner messages must not be compressed", entry.position)
        offset = base + e.offset if entry.magic == 1 else e.offset
        if e.magic == 0:
            when = -1
        elif log_append:
            when = ts
        else:
            when = -1 if e.timestamp is None else e.timestamp
        records.append(_as_record(e, offset, when, None))
    return records


# --- build side -----------------------------------------------------------------------------------


def build_message(*, magic: int, attributes: int, key: bytes | None, value: bytes | None,
                  timestamp: int | None = None, crc: int | None = None) -> bytes:
    """One message (no offset/size prefix) through the declarations; the CRC is computed unless given."""
    decl = MESSAGE_V1 if magic == 1 else MESSAGE_V0
    fields = {"crc": 0, "magic": magic, "attributes": attributes, "key": key, "value": value}
    if magic == 1:
        fields["timestamp"] = -1 if timestamp is None else timestamp
    body = decl.build(fields)
    stored = zlib.crc32(body[CRC_SIZE:]) if crc is None else crc
    return stored.to_bytes(4, "big") + body[CRC_SIZE:]


def build_entry(offset: int, message: bytes) -> bytes:
    """A log entry: offset, size, message."""
    return LOG_ENTRY_PREFIX.build({"offset": offset, "message_size": len(message)}) + message


def rebuild_entry(buf: bytes | memoryview, entry: LegacyBatch) -> bytes:
    """Re-encode a parsed shallow entry (stored CRC kept), for round-trip checks."""
    return build_entry(entry.offset, build_message(magic=entry.magic, attributes=entry.attributes, key=entry.key,
                                                   value=entry.value, timestamp=entry.timestamp, crc=entry.crc))


def build_wrapper(*, magic: int, codec: Compression, offsets: Iterable[int], messages: Iterable[bytes],
                  last_offset: int, timestamp: int | None = None, log_append_time: bool = False) -> bytes:
    """A compressed wrapper entry around inner ``messages`` stored at inner ``offsets`` (relative for
    magic 1), the wrapper itself stored at ``last_offset``."""
    inner = b"".join(build_entry(o, m) for o, m in zip(offsets, messages, strict=True))
    attributes = codec.value | (0x08 if log_append_time else 0)
    value = compress(codec, inner, magic=magic)
    return build_entry(last_offset, build_message(magic=magic, attributes=attributes, key=None, value=value,
                                                  timestamp=timestamp))
