"""Legacy message sets: magic 0 and magic 1 messages (Kafka's ``LegacyRecord`` and
``AbstractLegacyRecordBatch``, whose ``DeepRecordsIterator`` reads compressed wrappers).

A log entry is an 8-byte offset and a 4-byte size, then the message: a CRC-32 (zlib's, over magic to
end), magic, attributes (codec in bits 0-2, timestamp type in bit 3 for magic 1), a timestamp (magic 1
only), and int32-length-prefixed key and value (a negative length is null). A compressed message (a
"wrapper") holds a whole inner message set in its value.

Deep iteration follows ``DeepRecordsIterator``: the whole inner set is decompressed and read first
(a partial inner entry at the end is ignored, an inner size below 14 bytes is corruption); an empty
set, a null wrapper value and a compressed inner message are errors. A magic 1 wrapper stores its last
absolute offset and relative inner offsets, so absolute = wrapper offset - last relative + relative
(a wrapper offset of 0, as some librdkafka versions produced, means the relative offsets are taken
as they are). Inner magic 1 messages of a LogAppendTime wrapper take the wrapper's timestamp.

The construct declarations below are the single source of truth for the layout: parsing in the hot
loop uses ``struct`` formats derived from them at import time (construct's interpreted parse costs
about 20 us a message), and building goes through them.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterable

from construct import Int8sb, Int32sb, Int32ub, Int64sb, Struct

from kafkatool.errors import CapExceeded, CodecError, DecodeError
from kafkatool.model import NO_TIMESTAMP, Compression, LegacyBatch, Record, TimestampType
from kafkatool.schema.codecs import DEFAULT_MAX_OUTPUT, check_decoded_budget, compress, decompress, gzip_within
from kafkatool.schema.fixed import NullableBytes, derive_struct

# --- declarations ---------------------------------------------------------------------------------

LOG_ENTRY_PREFIX = Struct("offset" / Int64sb, "message_size" / Int32sb)
MESSAGE_PREFIX = Struct("crc" / Int32ub, "magic" / Int8sb, "attributes" / Int8sb)
TIMESTAMP = Struct("timestamp" / Int64sb)
LENGTH_FIELD = Struct("length" / Int32sb)

NullableBytes32 = NullableBytes(Int32sb)

MESSAGE_V0 = Struct(*MESSAGE_PREFIX.subcons, "key" / NullableBytes32, "value" / NullableBytes32)
MESSAGE_V1 = Struct(*MESSAGE_PREFIX.subcons, *TIMESTAMP.subcons, "key" / NullableBytes32,
                    "value" / NullableBytes32)
MESSAGES = {0: MESSAGE_V0, 1: MESSAGE_V1}

ENTRY_HEAD = Struct(*LOG_ENTRY_PREFIX.subcons, *MESSAGE_PREFIX.subcons)

# --- fast path, derived from the declarations -----------------------------------------------------

ENTRY_HEAD_STRUCT = derive_struct(ENTRY_HEAD)
LOG_ENTRY_PREFIX_STRUCT = derive_struct(LOG_ENTRY_PREFIX)
MESSAGE_PREFIX_STRUCT = derive_struct(MESSAGE_PREFIX)
TIMESTAMP_STRUCT = derive_struct(TIMESTAMP)
LENGTH = derive_struct(LENGTH_FIELD)

LOG_OVERHEAD = LOG_ENTRY_PREFIX.sizeof()  # 12
SIZE_OFFSET = LOG_OVERHEAD - LENGTH.size  # the message size field inside the log entry prefix
CRC_SIZE = Int32ub.sizeof()
MAGIC_OFFSET = CRC_SIZE  # inside the message
ATTRIBUTES_OFFSET = MAGIC_OFFSET + Int8sb.sizeof()
RECORD_OVERHEAD_V0 = MESSAGE_PREFIX.sizeof() + 2 * LENGTH.size  # 14: crc, magic, attributes, two lengths
RECORD_OVERHEAD_V1 = RECORD_OVERHEAD_V0 + TIMESTAMP.sizeof()  # 22
CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08

Fields = tuple[int, int, int, int | None, bytes | None, bytes | None]


# --- parsing --------------------------------------------------------------------------------------


def _message_fields(buf: bytes | memoryview, start: int, end: int, size_at: int) -> Fields:
    """(crc, magic, attributes, timestamp, key, value) of the message in ``buf[start:end]``.

    ``size_at`` is where the size that delimits the message is stored, for error positions.
    """
    if end - start < RECORD_OVERHEAD_V0:
        raise DecodeError("message_size", f"message of {end - start} bytes is below the minimum "
                          f"record overhead ({RECORD_OVERHEAD_V0})", size_at)
    crc, magic, attributes = MESSAGE_PREFIX_STRUCT.unpack_from(buf, start)
    if magic not in MESSAGES:
        raise DecodeError("magic", f"unknown magic {magic} in a legacy message (expected 0 or 1)",
                          start + MAGIC_OFFSET)
    pos = start + MESSAGE_PREFIX_STRUCT.size
    timestamp = None
    if magic == 1:
        if end - start < RECORD_OVERHEAD_V1:
            raise DecodeError("message_size", f"magic 1 message of {end - start} bytes is below the minimum "
                              f"record overhead ({RECORD_OVERHEAD_V1})", size_at)
        (timestamp,) = TIMESTAMP_STRUCT.unpack_from(buf, pos)
        pos += TIMESTAMP_STRUCT.size
    key, pos = _nullable(buf, pos, end, "key")
    value, pos = _nullable(buf, pos, end, "value")
    if pos != end:
        raise DecodeError("message_size", f"{end - pos} bytes left in the message after the value", pos)
    return crc, magic, attributes, timestamp, key, value


def _nullable(buf: bytes | memoryview, pos: int, end: int, name: str) -> tuple[bytes | None, int]:
    """An int32-length-prefixed byte string at ``pos`` (-1 = null); the position after it."""
    if end - pos < LENGTH.size:
        raise DecodeError(f"{name}_length", "message ends inside the length field", pos)
    (length,) = LENGTH.unpack_from(buf, pos)
    pos += LENGTH.size
    if length < -1:
        raise DecodeError(f"{name}_length", f"negative {name} length {length} (only -1, null, is allowed)",
                          pos - LENGTH.size)
    if length < 0:
        return None, pos
    if end - pos < length:
        raise DecodeError(f"{name}_length", f"{name} of {length} bytes overruns the message "
                          f"({end - pos} bytes left)", pos - LENGTH.size)
    return bytes(buf[pos:pos + length]), pos + length


def parse_legacy_entry(buf: bytes | memoryview, pos: int = 0) -> LegacyBatch:
    """The shallow legacy entry (offset, size, message) at ``pos`` of a log buffer, CRC checked.

    Raises :class:`DecodeError` positioned in ``buf`` when the entry does not decode.
    """
    if len(buf) - pos < LOG_OVERHEAD:
        raise DecodeError("message", f"legacy entry header needs {LOG_OVERHEAD} bytes, "
                          f"only {len(buf) - pos} remain", pos)
    offset, size = LOG_ENTRY_PREFIX_STRUCT.unpack_from(buf, pos)
    start = pos + LOG_OVERHEAD
    end = start + size
    if size < RECORD_OVERHEAD_V0:
        raise DecodeError("message_size", f"message size {size} is below the minimum record overhead "
                          f"({RECORD_OVERHEAD_V0})", pos + SIZE_OFFSET)
    if end > len(buf):
        raise DecodeError("message_size", f"message size {size} overruns the buffer "
                          f"({len(buf) - start} bytes left)", pos + SIZE_OFFSET)
    crc, magic, attributes, timestamp, key, value = _message_fields(buf, start, end, pos + SIZE_OFFSET)
    with memoryview(buf) as view:  # not a slice of the map: a 16 MiB wrapper would be copied for its CRC
        valid = zlib.crc32(view[start + CRC_SIZE:end]) == crc
    return LegacyBatch(pos, offset, size, crc, magic, attributes, timestamp, key, value, valid)


def parse_bare_message(buf: bytes | memoryview) -> LegacyBatch:
    """A whole buffer holding one message without the 12-byte offset/size prefix.

    The offset is reported as -1 and the position as 0; positions in errors are in ``buf``.
    """
    crc, magic, attributes, timestamp, key, value = _message_fields(buf, 0, len(buf), 0)
    valid = zlib.crc32(buf[CRC_SIZE:]) == crc
    return LegacyBatch(0, -1, len(buf), crc, magic, attributes, timestamp, key, value, valid)


def value_position(entry: LegacyBatch) -> int:
    """Where the value bytes of a parsed entry start in its log buffer.

    For a bare message (:func:`parse_bare_message`, no 12-byte prefix) subtract ``LOG_OVERHEAD``.
    """
    head = RECORD_OVERHEAD_V1 if entry.magic == 1 else RECORD_OVERHEAD_V0
    return entry.position + LOG_OVERHEAD + head + (len(entry.key) if entry.key is not None else 0)


def inner_entries(data: bytes | memoryview) -> list[LegacyBatch]:
    """Every complete entry of a decompressed inner message set (positions relative to ``data``).

    A partial entry at the end is ignored, as Kafka's ``DataLogInputStream`` ignores it; a size below
    the minimum record overhead is corruption.
    """
    out = []
    pos = 0
    while len(data) - pos >= LOG_OVERHEAD:
        (size,) = LENGTH.unpack_from(data, pos + SIZE_OFFSET)
        if size < RECORD_OVERHEAD_V0:
            raise DecodeError("message_size", f"record size {size} is less than the minimum record overhead "
                              f"({RECORD_OVERHEAD_V0})", pos + SIZE_OFFSET)
        if pos + LOG_OVERHEAD + size > len(data):
            break
        out.append(parse_legacy_entry(data, pos))
        pos += LOG_OVERHEAD + size
    return out


def _as_record(e: LegacyBatch, offset: int, timestamp: int, position: int | None) -> Record:
    return Record(offset=offset, timestamp=timestamp, key=e.key, value=e.value, attributes=e.attributes,
                  size_in_bytes=e.size_in_bytes, position=position, magic=e.magic, crc=e.crc,
                  crc_valid=e.crc_valid)


MAX_RATIO = {Compression.GZIP: 1100, Compression.SNAPPY: 64, Compression.LZ4: 300}
"""More than each codec's largest expansion (deflate 1032:1, snappy's 64-byte copies of 2 bytes, lz4's 255-byte
length bytes): a smaller payload cannot inflate past the cap. zstd has no such bound."""
_REFUSED: dict[tuple[int, int, int, bytes], tuple[str, str, int | None]] = {}
REFUSED_KEPT = 4096
"""The most wrappers remembered as past the cap (a digest each): a wrapper re-read (the walk, each engine's pass
over the segment) is refused without inflating it again, so each costs one inflation to the cap."""


def _inflate(codec: Compression, value: bytes, magic: int, cap: int) -> bytes:
    """``decompress`` of a wrapper's payload, a payload already found past the cap refused at once."""
    key = None
    if len(value) * MAX_RATIO.get(codec, cap) > cap:
        key = (codec.value, magic, cap, hashlib.blake2b(value, digest_size=16).digest())
        known = _REFUSED.get(key)
        if known is not None:
            raise CapExceeded(*known)
    try:
        if key is not None and codec is Compression.GZIP:
            gzip_within(value, cap)  # past the cap: refused having held one step of output, not the cap's worth
        return decompress(codec, value, magic=magic, max_output=cap)
    except CapExceeded as err:
        if key is not None:
            if len(_REFUSED) >= REFUSED_KEPT:
                _REFUSED.pop(next(iter(_REFUSED)))
            _REFUSED[key] = (err.field, err.reason, err.position)  # not the error: its frames hold the output
        raise


def inner_records(entry: LegacyBatch, *, max_output: int | None = None) -> list[Record]:
    """Records of a shallow entry, as Kafka iterates an ``AbstractLegacyRecordBatch``.

    An uncompressed entry is its own single record. A wrapper is decompressed (at most ``max_output``
    bytes, the read's :attr:`~kafkatool.schema.codecs.ReadLimits.max_decompressed_bytes`; the default cap
    when ``None``) and its inner messages returned with absolute offsets and Kafka's timestamps (see the module
    notes). Failures are :class:`DecodeError` (:class:`CodecError` for the codec) positioned in the
    entry's buffer: at the value for codec and inner-set failures. zstd wrappers, which Kafka refuses
    for magic < 2, are decoded.
    """
    codec_id = entry.attributes & CODEC_MASK
    wrapper_ts = NO_TIMESTAMP if entry.timestamp is None else entry.timestamp
    if codec_id == Compression.NONE.value:
        return [_as_record(entry, entry.offset, wrapper_ts, entry.position)]
    try:
        codec = Compression(codec_id)
    except ValueError:
        raise DecodeError("attributes", f"unknown compression codec id {codec_id}",
                          entry.position + LOG_OVERHEAD + ATTRIBUTES_OFFSET) from None
    at = value_position(entry)
    if entry.value is None:
        raise DecodeError("value", f"invalid compressed record set with null value (magic = {entry.magic})",
                          at - LENGTH.size)
    try:
        data = _inflate(codec, entry.value, entry.magic, DEFAULT_MAX_OUTPUT if max_output is None else max_output)
    except CapExceeded as err:
        # past the cap: the wrapper is refused as a whole, at its own position (not a byte of its payload)
        raise CapExceeded(err.field, err.reason, entry.position) from None
    except CodecError as err:
        raise err.located(base=at) from None
    check_decoded_budget(len(data), len(data) // (LOG_OVERHEAD + RECORD_OVERHEAD_V0), max_output, at)
    try:
        inner = inner_entries(data)
    except DecodeError as err:
        raise DecodeError("value", f"inner message set ({codec.label}), at byte {err.position} of "
                          f"{len(data)} decompressed: {err.field}: {err.reason}", at) from None
    if not inner:
        raise DecodeError("value", "invalid compressed record set with no inner records", at)
    base = 0
    if entry.magic == 1 and entry.offset != 0:
        last = inner[-1].offset
        if entry.offset < last:
            raise DecodeError("offset", f"invalid wrapper offset in compressed v1 message set: wrapper offset "
                              f"{entry.offset} is less than the last inner message offset {last}",
                              entry.position)
        base = entry.offset - last
    log_append = entry.magic == 1 and entry.timestamp_type is TimestampType.LOG_APPEND_TIME
    records = []
    for e in inner:
        if e.attributes & CODEC_MASK:
            raise DecodeError("value", f"inner messages must not be compressed (inner message at byte "
                              f"{e.position} of the decompressed set)", at)
        offset = base + e.offset if entry.magic == 1 else e.offset
        if e.magic == 0:
            when = NO_TIMESTAMP
        elif log_append:
            when = wrapper_ts
        else:
            when = NO_TIMESTAMP if e.timestamp is None else e.timestamp
        records.append(_as_record(e, offset, when, None))
    return records


# --- building -------------------------------------------------------------------------------------


def build_message(*, magic: int, attributes: int, key: bytes | None, value: bytes | None,
                  timestamp: int | None = None, crc: int | None = None) -> bytes:
    """One message (no offset/size prefix) through the declarations; the CRC is computed unless given."""
    if magic not in MESSAGES:
        raise ValueError(f"legacy messages have magic 0 or 1, not {magic}")
    fields: dict[str, object] = {"crc": 0, "magic": magic, "attributes": attributes, "key": key, "value": value}
    if magic == 1:
        fields["timestamp"] = NO_TIMESTAMP if timestamp is None else timestamp
    body = MESSAGES[magic].build(fields)
    stored = zlib.crc32(body[CRC_SIZE:]) if crc is None else crc
    return stored.to_bytes(CRC_SIZE, "big") + body[CRC_SIZE:]


def build_entry(offset: int, message: bytes) -> bytes:
    """A log entry around an already built message: offset, size, message."""
    return LOG_ENTRY_PREFIX.build({"offset": offset, "message_size": len(message)}) + message


def build_legacy_entry(offset: int, *, magic: int, attributes: int = 0, key: bytes | None = None,
                       value: bytes | None = None, timestamp: int | None = None, crc: int | None = None) -> bytes:
    """A whole log entry (offset, size, message); the CRC is computed unless given."""
    return build_entry(offset, build_message(magic=magic, attributes=attributes, key=key, value=value,
                                             timestamp=timestamp, crc=crc))


def rebuild_entry(buf: bytes | memoryview, entry: LegacyBatch) -> bytes:
    """Re-encode a parsed shallow entry, stored CRC kept: equal to the bytes it was parsed from."""
    del buf  # the entry carries every field; kept for symmetry with ``record_batch.rebuild_batch``
    return build_legacy_entry(entry.offset, magic=entry.magic, attributes=entry.attributes, key=entry.key,
                              value=entry.value, timestamp=entry.timestamp, crc=entry.crc)


def build_wrapper(*, magic: int, codec: Compression, offsets: Iterable[int], messages: Iterable[bytes],
                  last_offset: int, timestamp: int | None = None, log_append_time: bool = False,
                  key: bytes | None = None) -> bytes:
    """A compressed wrapper entry as Kafka's producer writes it.

    The inner ``messages`` (built with :func:`build_message`) are stored at ``offsets`` (relative,
    0-based, for magic 1; absolute for magic 0), compressed with ``codec`` and wrapped in a message
    stored at ``last_offset`` whose timestamp type is LogAppendTime when ``log_append_time``.
    """
    inner = b"".join(build_entry(o, m) for o, m in zip(offsets, messages, strict=True))
    attributes = codec.value | (TIMESTAMP_TYPE_MASK if log_append_time and magic == 1 else 0)
    return build_legacy_entry(last_offset, magic=magic, attributes=attributes, key=key,
                              value=compress(codec, inner, magic=magic), timestamp=timestamp)
