"""Kafka's lenient walk over an uncompressed magic 2 batch's records: where and how the Java reader gives up.

Models ``DefaultRecordBatch``'s uncompressed ``RecordIterator`` and ``DefaultRecord.readFrom``, with
``ByteUtils.readVarint``/``readVarlong``/``readUnsignedVarint`` and ``Utils.readBytes``: records are produced
one by one, and the first malformed one raises :class:`~kafkatool.schema.java.JavaException` carrying the
exact message Kafka's exception has (``InvalidRecordException``, ``IllegalArgumentException``...). The strict
decoder (:func:`kafkatool.schema.record_batch.decode_records`) rejects a damaged batch as a whole with
kafkatool's own wording; this walk is for callers that reproduce a Java tool's output (``DumpLogSegments``),
which prints the records before the damage and then the message.
"""

from __future__ import annotations

from collections.abc import Iterator

from kafkatool.model import NO_SEQUENCE, Header, Record, RecordBatch, increment_sequence
from kafkatool.schema.java import JavaException
from kafkatool.schema.record_batch import TIMESTAMP_TYPE_FLAG


class _Underflow(Exception):
    """``BufferUnderflowException``."""


class _IllegalArgument(Exception):
    """``IllegalArgumentException`` (a varint too long, a slice past the end)."""


def _j_uvarint(data: bytes, pos: int) -> tuple[int, int]:
    """``ByteUtils.readUnsignedVarint`` as a Java int (5 bytes at most)."""
    result = 0
    for i in range(5):
        if pos >= len(data):
            raise _Underflow
        b = data[pos]
        pos += 1
        if i == 4:
            signed = b - 256 if b & 0x80 else b
            result = (result | (signed << 28)) & 0xFFFFFFFF
            if signed < 0:
                raise _IllegalArgument("Varint is too long, the most significant bit in the 5th byte is set, "
                                       f"converted value: {result:x}")
            break
        result |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            break
    return (result - (1 << 32) if result & 0x80000000 else result), pos


def _j_varint(data: bytes, pos: int) -> tuple[int, int]:
    """``ByteUtils.readVarint``: zig-zag over a 32-bit int."""
    raw, pos = _j_uvarint(data, pos)
    raw &= 0xFFFFFFFF
    value = (raw >> 1) ^ -(raw & 1)
    return value, pos


def _j_varlong(data: bytes, pos: int) -> tuple[int, int]:
    """``ByteUtils.readVarlong``: zig-zag over a 64-bit long (10 bytes at most)."""
    value = 0
    shift = 0
    while True:
        if pos >= len(data):
            raise _Underflow
        b = data[pos]
        pos += 1
        if not b & 0x80:
            break
        value |= (b & 0x7F) << shift
        shift += 7
        if shift > 63:
            value &= 0xFFFFFFFFFFFFFFFF
            raise _IllegalArgument(f"Varlong is too long, most significant bit in the 10th byte is set, "
                                   f"converted value: {value:x}")
    value = (value | (b << shift)) & 0xFFFFFFFFFFFFFFFF
    return (value >> 1) ^ -(value & 1), pos


def _j_bytes(data: bytes, pos: int, length: int) -> tuple[bytes | None, int]:
    """``Utils.readBytes``: null for a negative length, a slice past the end is illegal."""
    if length < 0:
        return None, pos
    if length > len(data) - pos:
        raise _IllegalArgument
    return data[pos:pos + length], pos + length


def _long(value: int) -> int:
    """Java ``long`` overflow."""
    value &= 0xFFFFFFFFFFFFFFFF
    return value - (1 << 64) if value >> 63 else value


def walk_records(header: RecordBatch, data: bytes) -> Iterator[Record]:
    """The records of the uncompressed batch ``header`` whose record bytes are ``data``, as Kafka's iterator
    produces them; raises :class:`JavaException` with Kafka's message at the first malformed record (or when
    bytes remain after the last one)."""
    log_append = header.max_timestamp if header.attributes & TIMESTAMP_TYPE_FLAG else None
    pos = 0
    count = header.records_count
    for n in range(1, count + 1):
        try:
            size, pos = _j_varint(data, pos)
        except _Underflow:
            raise JavaException("Incorrect declared batch size, premature EOF reached") from None
        except _IllegalArgument as err:
            raise JavaException(str(err)) from None
        if len(data) - pos < size:
            raise JavaException(f"Invalid record size: expected {size} bytes in record payload, but instead the "
                                f"buffer has only {len(data) - pos} remaining bytes.")
        try:
            start = pos
            if pos >= len(data):
                raise _Underflow
            attributes = data[pos] - 256 if data[pos] & 0x80 else data[pos]
            pos += 1
            ts_delta, pos = _j_varlong(data, pos)
            off_delta, pos = _j_varint(data, pos)
            key_size, pos = _j_varint(data, pos)
            key, pos = _j_bytes(data, pos, key_size)
            value_size, pos = _j_varint(data, pos)
            value, pos = _j_bytes(data, pos, value_size)
            header_count, pos = _j_varint(data, pos)
            if header_count < 0:
                raise JavaException(f"Found invalid number of record headers {header_count}")
            if header_count > len(data) - pos:
                raise JavaException(f"Found invalid number of record headers. {header_count} is larger than the "
                                    "remaining size of the buffer")
            headers = []
            for _ in range(header_count):
                hk_size, pos = _j_varint(data, pos)
                if hk_size < 0:
                    raise JavaException(f"Invalid negative header key size {hk_size}")
                hkey, pos = _j_bytes(data, pos, hk_size)
                hv_size, pos = _j_varint(data, pos)
                hvalue, pos = _j_bytes(data, pos, hv_size)
                headers.append(Header(hkey or b"", hvalue))
            if pos - start != size:
                raise JavaException(f"Invalid record size: expected to read {size} bytes in record payload, but "
                                    f"instead read {pos - start}")
        except (_Underflow, _IllegalArgument):
            raise JavaException("Found invalid record structure") from None
        offset = header.base_offset + off_delta
        if n == count and pos != len(data):
            raise JavaException("Incorrect declared batch size, records still remaining in file")
        sequence = increment_sequence(header.base_sequence, off_delta) if header.base_sequence >= 0 else NO_SEQUENCE
        timestamp = log_append if log_append is not None else header.base_timestamp + ts_delta
        yield Record(offset=offset, timestamp=_long(timestamp), key=key, value=value, headers=tuple(headers),
                     sequence=sequence, attributes=attributes, offset_delta=off_delta, timestamp_delta=ts_delta)


__all__ = ["walk_records"]
