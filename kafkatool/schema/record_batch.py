"""Magic 2 record batches and their records (Kafka's ``DefaultRecordBatch`` and ``DefaultRecord``).

Layout of a batch: a 61-byte header, then ``records_count`` records, compressed as one block when the
codec attribute says so. The CRC-32C covers everything from ``attributes`` to the end of the batch.

The construct declarations below are the single source of truth. Because construct's interpreted
parse costs ~20 us per header, the per-batch hot loop uses :data:`HEADER_STRUCT`, a ``struct.Struct``
derived at import time from :data:`BATCH_HEADER`; tests check that both agree.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from construct import (
    Int8sb,
    Int16sb,
    Int32sb,
    Int32ub,
    Int64sb,
    Prefixed,
    PrefixedArray,
    Struct,
)

from kafkatool.errors import DecodeError
from kafkatool.model import (
    MAX_SEQUENCE,
    NO_SEQUENCE,
    Compression,
    Header,
    Record,
    RecordBatch,
    increment_sequence,
)
from kafkatool.schema.checksum import crc32c
from kafkatool.schema.control import parse_control_record
from kafkatool.schema.fixed import NullableBytes, derive_struct, field_offsets
from kafkatool.schema.varint import VarInt, VarLong, encode_varint, read_varint

MAGIC = 2

# The part before the CRC-covered region: offset, length, epoch, magic, crc.
BATCH_PREFIX = Struct(
    "base_offset" / Int64sb,
    "batch_length" / Int32sb,
    "partition_leader_epoch" / Int32sb,
    "magic" / Int8sb,
    "crc" / Int32ub,
)
# The CRC-covered fixed fields.
BATCH_BODY_HEADER = Struct(
    "attributes" / Int16sb,
    "last_offset_delta" / Int32sb,
    "base_timestamp" / Int64sb,
    "max_timestamp" / Int64sb,
    "producer_id" / Int64sb,
    "producer_epoch" / Int16sb,
    "base_sequence" / Int32sb,
    "records_count" / Int32sb,
)
BATCH_HEADER = Struct(*BATCH_PREFIX.subcons, *BATCH_BODY_HEADER.subcons)

# Log framing shared by every magic: offset (8) + length (4). Magic sits at byte 16 in all versions.
LOG_OVERHEAD = 12
MAGIC_OFFSET = 16
CRC_OFFSET = BATCH_PREFIX.sizeof() - 4
ATTRIBUTES_OFFSET = BATCH_PREFIX.sizeof()
HEADER_SIZE = BATCH_HEADER.sizeof()
# batch_length counts from partition_leader_epoch: the smallest batch is a header with no records.
BATCH_OVERHEAD = HEADER_SIZE - LOG_OVERHEAD

# The ``attributes`` bits (Kafka's ``DefaultRecordBatch``): codec id in bits 0-2, then one flag per bit.
CODEC_MASK = 0x07
TIMESTAMP_TYPE_FLAG = 0x08
TRANSACTIONAL_FLAG = 0x10
CONTROL_FLAG = 0x20
DELETE_HORIZON_FLAG = 0x40

FIELD_NAMES: tuple[str, ...] = tuple(sc.name for sc in BATCH_HEADER.subcons)
FIELD_OFFSETS: dict[str, int] = field_offsets(BATCH_HEADER)


HEADER_STRUCT = derive_struct(BATCH_HEADER)
assert HEADER_STRUCT.size == HEADER_SIZE


NullableVarBytes = NullableBytes(VarInt)


RECORD_HEADER = Struct("key" / NullableVarBytes, "value" / NullableVarBytes)
RECORD_BODY = Struct(
    "attributes" / Int8sb,
    "timestamp_delta" / VarLong,
    "offset_delta" / VarInt,
    "key" / NullableVarBytes,
    "value" / NullableVarBytes,
    "headers" / PrefixedArray(VarInt, RECORD_HEADER),
)
RECORD = Prefixed(VarInt, RECORD_BODY)


def header_from_tuple(position: int, fields: tuple[int, ...]) -> RecordBatch:
    """A :class:`RecordBatch` from the 13 unpacked header fields."""
    return RecordBatch(position, *fields)


def parse_batch_header(buf: bytes | memoryview, pos: int = 0) -> RecordBatch:
    """Unpack the 61-byte header at ``pos`` (no CRC check, no records).

    Raises :class:`DecodeError` when fewer than 61 bytes remain or the magic is not 2.
    """
    if len(buf) - pos < HEADER_SIZE:
        raise DecodeError("batch_header", f"needs {HEADER_SIZE} bytes, only {len(buf) - pos} remain", pos)
    fields = HEADER_STRUCT.unpack_from(buf, pos)
    if fields[3] != MAGIC:
        raise DecodeError("magic", f"expected magic 2, found {fields[3]}", pos + MAGIC_OFFSET)
    return RecordBatch(pos, *fields)


def compute_crc(buf: bytes | memoryview, pos: int, batch_length: int) -> int:
    """CRC-32C over ``attributes`` .. end of the batch at ``pos``."""
    start = pos + ATTRIBUTES_OFFSET
    end = pos + LOG_OVERHEAD + batch_length
    view = buf if isinstance(buf, memoryview) else memoryview(buf)
    return crc32c(view[start:end])


def batch_bytes(buf: bytes | memoryview | Any, position: int, size: int) -> bytes:
    """A copy of up to ``size`` bytes of ``buf`` from ``position`` (a run of batches handed to the native core)."""
    return bytes(buf[position:position + size])


def peek_entry(buf: bytes | memoryview | Any, position: int) -> tuple[int, int, int]:
    """The magic, size in bytes (the length field plus :data:`LOG_OVERHEAD`) and codec id of the entry at
    ``position``, whose first :data:`HEADER_SIZE` bytes must be in ``buf`` (the size and codec are a magic 2
    batch's reading of them)."""
    # the batch length is the prefix's last field: it ends where the batch proper starts
    length = buf[position + FIELD_OFFSETS["batch_length"]:position + LOG_OVERHEAD]
    size = LOG_OVERHEAD + int.from_bytes(length, "big", signed=True)
    return buf[position + MAGIC_OFFSET], size, buf[position + ATTRIBUTES_OFFSET + 1] & CODEC_MASK


def inflated_payload(buf: bytes | memoryview | Any, batch: RecordBatch, max_output: int | None) -> bytes | None:
    """The decompressed records of the compressed ``batch`` (as :func:`decode_records` decompresses them), or
    ``None`` when they do not decompress (the caller's decoder then reports it)."""
    from kafkatool.schema.codecs import decompress

    try:
        return decompress(Compression(batch.attributes & CODEC_MASK), bytes(records_payload(buf, batch)),
                          magic=MAGIC, max_output=max_output)
    except (DecodeError, ValueError):
        return None


def records_payload(buf: bytes | memoryview, batch: RecordBatch) -> memoryview:
    """The bytes after the header: the records, or their compressed block."""
    view = buf if isinstance(buf, memoryview) else memoryview(buf)
    start = batch.position + HEADER_SIZE
    return view[start:batch.position + batch.size_in_bytes]


def decode_records(batch: RecordBatch, payload: bytes | memoryview, *,
                   max_output: int | None = None) -> list[Record]:
    """Decode every record of ``batch`` from its payload (decompressing when needed).

    Mirrors ``DefaultRecordBatch``'s iterator and ``DefaultRecord.readFrom`` checks: each record's body
    must be exactly its declared size, the header count must not be negative, and the batch must hold
    exactly ``records_count`` records. Positions in errors are absolute when the batch position is.
    """
    codec_id = batch.attributes & 0x07
    if codec_id == 0:
        return _decode_record_list(batch, payload, batch.position + HEADER_SIZE)
    try:
        codec = Compression(codec_id)
    except ValueError:
        raise DecodeError("attributes.compression", f"unknown compression codec id {codec_id}",
                          batch.position + ATTRIBUTES_OFFSET + 1) from None
    compressed = codec is not Compression.NONE
    if compressed:
        from kafkatool.schema.codecs import decompress

        try:
            data: bytes | memoryview = decompress(codec, bytes(payload), magic=MAGIC, max_output=max_output)
        except DecodeError as err:
            raise err.located(base=batch.position + HEADER_SIZE) if err.position is not None else DecodeError(
                "records", f"{codec.label} payload: {err.reason}", batch.position + HEADER_SIZE) from None
        origin = None
        _check_decoded_budget(batch, len(data), max_output)
    else:
        data = payload
        origin = batch.position + HEADER_SIZE
    records = _decode_record_list(batch, data, origin)
    return records


MIN_RECORD_SIZE = 7  # the smallest DefaultRecord: length, attributes, two deltas, key and value -1, no headers


def _check_decoded_budget(batch: RecordBatch, size: int, max_output: int | None) -> None:
    """Refuse a compressed batch whose decoded records would cost more memory than the decompression cap."""
    from kafkatool.schema.codecs import check_decoded_budget

    possible = min(max(batch.records_count, 0), size // MIN_RECORD_SIZE)
    check_decoded_budget(size, possible, max_output, batch.position + HEADER_SIZE)


def _where(origin: int | None, pos: int, batch: RecordBatch) -> int:
    """Absolute position of ``pos`` in the payload, or the batch start for compressed data."""
    return origin + pos if origin is not None else batch.position


def _record_context(batch: RecordBatch) -> tuple[int, int, int, bool, bool, int]:
    """What every record of ``batch`` is read against: base offset, base timestamp, base sequence, whether the
    timestamps are LogAppendTime (the batch's max timestamp stands for all), whether they are control records,
    and the max timestamp (one place for both record loops, the Python one and the native columns')."""
    attributes = batch.attributes
    return (batch.base_offset, batch.base_timestamp, batch.base_sequence, bool(attributes & TIMESTAMP_TYPE_FLAG),
            bool(attributes & CONTROL_FLAG), batch.max_timestamp)


def _decode_record_list(batch: RecordBatch, data: bytes | memoryview, origin: int | None) -> list[Record]:
    """The record loop proper, over uncompressed record bytes."""
    base_offset, base_ts, base_seq, log_append, is_control, max_ts = _record_context(batch)
    if not isinstance(data, bytes):
        data = bytes(data)  # one copy per batch: indexing and slicing bytes is much cheaper than a memoryview
    end = len(data)
    pos = 0
    out: list[Record] = []
    append = out.append
    rec_type = Record
    seq_wrap = MAX_SEQUENCE - base_seq  # offset deltas above this wrap the sequence (increment_sequence)
    count = batch.records_count
    if count < 0:
        raise DecodeError("records_count", f"negative record count {count}",
                          batch.position + FIELD_OFFSETS["records_count"])
    from kafkatool.schema.native import core as native_core  # here: native imports this module

    core = native_core()
    if core is not None:
        # The Rust twin of the loop below (kafkatool/_core/src/records.rs) returns None where this loop raises.
        columns = core.decode_records(data, count)
        if columns is not None:
            return _records_from_columns(batch, data, origin, columns)
    for _ in range(count):
        if pos >= end:
            raise DecodeError("records", f"batch declares {count} records but its data ends after {len(out)}",
                              _where(origin, pos, batch))
        start = pos
        try:
            # Varints are inlined with a one-byte fast path: this loop is the deep-scan hot spot.
            b = data[pos]
            if b < 0x80:
                size = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos + 1 < end and data[pos + 1] < 0x80:  # two bytes: lengths up to 8 KiB
                b = (b & 0x7F) | (data[pos + 1] << 7)
                size = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                size, pos = read_varint(data, pos)
            body_start = pos
            if size < 0 or end - pos < size:
                raise DecodeError("record.length",
                                  f"record declares {size} bytes but only {end - pos} remain in the batch", start)
            attributes = data[pos]
            if attributes > 127:
                attributes -= 256
            pos += 1
            b = data[pos]
            if b < 0x80:
                ts_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos + 1 < end and data[pos + 1] < 0x80:  # two bytes: lengths up to 8 KiB
                b = (b & 0x7F) | (data[pos + 1] << 7)
                ts_delta = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                ts_delta, pos = read_varint(data, pos, 10)
            b = data[pos]
            if b < 0x80:
                off_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos + 1 < end and data[pos + 1] < 0x80:  # two bytes: lengths up to 8 KiB
                b = (b & 0x7F) | (data[pos + 1] << 7)
                off_delta = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                off_delta, pos = read_varint(data, pos)
            b = data[pos]
            if b < 0x80:
                klen = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos + 1 < end and data[pos + 1] < 0x80:  # two bytes: lengths up to 8 KiB
                b = (b & 0x7F) | (data[pos + 1] << 7)
                klen = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                klen, pos = read_varint(data, pos)
            if klen < 0:
                key = None
            else:
                key = data[pos:pos + klen]
                pos += klen
            b = data[pos]
            if b < 0x80:
                vlen = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos + 1 < end and data[pos + 1] < 0x80:  # two bytes: lengths up to 8 KiB
                b = (b & 0x7F) | (data[pos + 1] << 7)
                vlen = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                vlen, pos = read_varint(data, pos)
            if vlen < 0:
                value = None
            else:
                value = data[pos:pos + vlen]
                pos += vlen
            b = data[pos]
            if b < 0x80:
                nheaders = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos + 1 < end and data[pos + 1] < 0x80:  # two bytes: lengths up to 8 KiB
                b = (b & 0x7F) | (data[pos + 1] << 7)
                nheaders = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                nheaders, pos = read_varint(data, pos)
            if nheaders < 0:
                raise DecodeError("record.headers", f"negative header count {nheaders}", pos)
            headers: tuple[Header, ...] = ()
            if nheaders:
                hlist: list[Header] = []
                for _h in range(nheaders):
                    hklen, pos = read_varint(data, pos)
                    if hklen < 0:
                        raise DecodeError("record.header.key", f"negative header key size {hklen}", pos)
                    hkey = data[pos:pos + hklen]
                    pos += hklen
                    hvlen, pos = read_varint(data, pos)
                    if hvlen < 0:
                        hval = None
                    else:
                        hval = data[pos:pos + hvlen]
                        pos += hvlen
                    hlist.append(Header(hkey, hval))
                headers = tuple(hlist)
            if pos - body_start != size:
                raise DecodeError("record.length",
                                  f"record declares {size} bytes but its fields take {pos - body_start}", start)
        except IndexError:
            raise DecodeError("records", "record data ends inside a record", _where(origin, start, batch)) from None
        except DecodeError as err:
            if err.position is not None and origin is not None:
                raise err.located(base=origin) from None
            raise DecodeError(err.field, err.reason, batch.position) from None
        if base_seq == NO_SEQUENCE:
            seq = NO_SEQUENCE
        elif off_delta > seq_wrap:
            seq = increment_sequence(base_seq, off_delta)
        else:
            seq = base_seq + off_delta
        # Positional: offset, timestamp, key, value, headers, sequence, attributes, offset_delta,
        # timestamp_delta, size_in_bytes, position (the field order of Record).
        rec = rec_type(base_offset + off_delta, max_ts if log_append else base_ts + ts_delta, key, value, headers,
                       seq, attributes, off_delta, ts_delta, pos - start, None if origin is None else origin + start)
        if is_control:
            try:
                rec.control = parse_control_record(key, value)
            except DecodeError as err:
                raise DecodeError(err.field, err.reason, _where(origin, start, batch)) from None
        append(rec)
    if pos != end:
        raise DecodeError("records", f"{end - pos} bytes remain after the declared {count} records",
                          _where(origin, pos, batch))
    return out


def _records_from_columns(batch: RecordBatch, data: bytes, origin: int | None, columns: tuple) -> list[Record]:
    """The records of :func:`_decode_record_list` built from the native decoder's columns (same values)."""
    (attributes, ts_deltas, off_deltas, key_offsets, key_lengths, value_offsets, value_lengths, starts, sizes,
     header_counts, hk_offsets, hk_lengths, hv_offsets, hv_lengths) = (c.tolist() for c in columns)
    base_offset, base_ts, base_seq, log_append, is_control, max_ts = _record_context(batch)
    seq_wrap = MAX_SEQUENCE - base_seq
    out: list[Record] = []
    append = out.append
    rec_type = Record
    h = 0
    for i, off_delta in enumerate(off_deltas):
        ko, kl = key_offsets[i], key_lengths[i]
        vo, vl = value_offsets[i], value_lengths[i]
        nheaders = header_counts[i]
        headers: tuple[Header, ...] = ()
        if nheaders:
            hlist: list[Header] = []
            for j in range(h, h + nheaders):
                hvl = hv_lengths[j]
                hlist.append(Header(data[hk_offsets[j]:hk_offsets[j] + hk_lengths[j]],
                                    None if hvl < 0 else data[hv_offsets[j]:hv_offsets[j] + hvl]))
            headers = tuple(hlist)
            h += nheaders
        if base_seq == NO_SEQUENCE:
            seq = NO_SEQUENCE
        elif off_delta > seq_wrap:
            seq = increment_sequence(base_seq, off_delta)
        else:
            seq = base_seq + off_delta
        ts_delta = ts_deltas[i]
        start = starts[i]
        key = None if kl < 0 else data[ko:ko + kl]
        value = None if vl < 0 else data[vo:vo + vl]
        rec = rec_type(base_offset + off_delta, max_ts if log_append else base_ts + ts_delta, key, value, headers,
                       seq, attributes[i], off_delta, ts_delta, sizes[i], None if origin is None else origin + start)
        if is_control:
            try:
                rec.control = parse_control_record(key, value)
            except DecodeError as err:
                raise DecodeError(err.field, err.reason, _where(origin, start, batch)) from None
        append(rec)
    return out


def parse_batch(buf: bytes | memoryview, pos: int = 0, *, deep: bool = True,
                max_output: int | None = None) -> RecordBatch:
    """Header, CRC check and (with ``deep``) records of the batch at ``pos``."""
    batch = parse_batch_header(buf, pos)
    if batch.batch_length < BATCH_OVERHEAD or pos + batch.size_in_bytes > len(buf):
        raise DecodeError("batch_length", f"batch length {batch.batch_length} does not fit the "
                          f"{len(buf) - pos} bytes available", pos + 8)
    batch.crc_valid = compute_crc(buf, pos, batch.batch_length) == batch.crc
    if deep:
        batch.records = decode_records(batch, records_payload(buf, batch), max_output=max_output)
    return batch


# --- build side -----------------------------------------------------------------------------------


def build_record(offset_delta: int, timestamp_delta: int, key: bytes | None, value: bytes | None,
                 headers: Iterable[Header] = (), attributes: int = 0) -> bytes:
    """One record's bytes, length prefix included (through the :data:`RECORD` declaration)."""
    return RECORD.build({
        "attributes": attributes,
        "timestamp_delta": timestamp_delta,
        "offset_delta": offset_delta,
        "key": key,
        "value": value,
        "headers": [{"key": h.key, "value": h.value} for h in headers],
    })


def encode_records(records: Iterable[Record]) -> bytes:
    """Uncompressed record bytes, using each record's own deltas and attributes."""
    return b"".join(
        build_record(r.offset_delta, r.timestamp_delta, r.key, r.value, r.headers, r.attributes) for r in records)


def build_batch(*, base_offset: int, partition_leader_epoch: int, attributes: int, last_offset_delta: int,
                base_timestamp: int, max_timestamp: int, producer_id: int, producer_epoch: int,
                base_sequence: int, records_count: int, payload: bytes, crc: int | None = None) -> bytes:
    """A complete batch around an already encoded (and, if needed, compressed) ``payload``.

    The length and CRC are computed unless ``crc`` forces a stored value (to rebuild damaged bytes).
    """
    body = BATCH_BODY_HEADER.build({
        "attributes": attributes,
        "last_offset_delta": last_offset_delta,
        "base_timestamp": base_timestamp,
        "max_timestamp": max_timestamp,
        "producer_id": producer_id,
        "producer_epoch": producer_epoch,
        "base_sequence": base_sequence,
        "records_count": records_count,
    }) + payload
    prefix = BATCH_PREFIX.build({
        "base_offset": base_offset,
        "batch_length": len(body) + BATCH_PREFIX.sizeof() - LOG_OVERHEAD,
        "partition_leader_epoch": partition_leader_epoch,
        "magic": MAGIC,
        "crc": crc32c(body) if crc is None else crc,
    })
    return prefix + body


def rebuild_batch(buf: bytes | memoryview, batch: RecordBatch) -> bytes:
    """Re-encode a parsed batch through the declarations (stored CRC kept), for round-trip checks."""
    payload = bytes(records_payload(buf, batch))
    fields = {name: getattr(batch, name) for name in FIELD_NAMES if name not in ("batch_length", "magic")}
    return build_batch(payload=payload, **fields)


def build_records_batch(records: list[Record], *, base_offset: int, base_timestamp: int,
                        compression: Compression = Compression.NONE, attributes: int = 0,
                        partition_leader_epoch: int = -1, producer_id: int = -1, producer_epoch: int = -1,
                        base_sequence: int = -1, max_timestamp: int | None = None) -> bytes:
    """A batch from records (their deltas already relative to ``base_offset``/``base_timestamp``)."""
    raw = encode_records(records)
    if compression is not Compression.NONE:
        from kafkatool.schema.codecs import compress

        raw = compress(compression, raw, magic=MAGIC)
    last_delta = max((r.offset_delta for r in records), default=0)
    if max_timestamp is None:
        max_timestamp = max((base_timestamp + r.timestamp_delta for r in records), default=base_timestamp)
    return build_batch(
        base_offset=base_offset, partition_leader_epoch=partition_leader_epoch,
        attributes=(attributes & ~0x07) | compression.value, last_offset_delta=last_delta,
        base_timestamp=base_timestamp, max_timestamp=max_timestamp, producer_id=producer_id,
        producer_epoch=producer_epoch, base_sequence=base_sequence, records_count=len(records), payload=raw)


__all__ = [
    "BATCH_HEADER",
    "BATCH_OVERHEAD",
    "HEADER_SIZE",
    "HEADER_STRUCT",
    "LOG_OVERHEAD",
    "MAGIC_OFFSET",
    "RECORD",
    "build_batch",
    "build_record",
    "build_records_batch",
    "compute_crc",
    "decode_records",
    "encode_varint",
    "parse_batch",
    "parse_batch_header",
    "rebuild_batch",
    "records_payload",
]
