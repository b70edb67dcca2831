"""Kafka's zigzag varints (``ByteUtils.readVarint`` / ``readVarlong``), as a construct type and fast.

Kafka bounds a varint to 5 bytes (int32) and a varlong to 10 bytes (int64) and rejects longer
encodings; construct's own ``ZigZag`` is unbounded, so this module declares a bounded one. The fast
functions are the hot-loop twins of the declaration; tests check both agree.
"""

from __future__ import annotations

from typing import Any

from construct import Construct, SizeofError, stream_read, stream_write

from kafkatool.errors import DecodeError

VARINT_MAX_BYTES = 5
VARLONG_MAX_BYTES = 10


def zigzag_encode(value: int, bits: int) -> int:
    """Map a signed value to the unsigned zigzag form."""
    return ((value << 1) ^ (value >> (bits - 1))) & ((1 << bits) - 1)


def zigzag_decode(raw: int) -> int:
    """Map the unsigned zigzag form back to a signed value."""
    return (raw >> 1) ^ -(raw & 1)


def encode_varint(value: int, max_bytes: int = VARINT_MAX_BYTES) -> bytes:
    """Zigzag varint bytes of ``value`` (``max_bytes`` 5 for int32, 10 for int64)."""
    raw = zigzag_encode(value, 32 if max_bytes == VARINT_MAX_BYTES else 64)
    out = bytearray()
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def read_varint(buf: bytes | memoryview, pos: int, max_bytes: int = VARINT_MAX_BYTES) -> tuple[int, int]:
    """Decode one zigzag varint at ``pos``; return ``(value, next_pos)``.

    Raises :class:`DecodeError` for a varint longer than ``max_bytes`` or one cut by the buffer end.
    """
    raw = 0
    shift = 0
    start = pos
    end = len(buf)
    for _ in range(max_bytes):
        if pos >= end:
            raise DecodeError("varint", "buffer ends inside a varint", start)
        b = buf[pos]
        pos += 1
        raw |= (b & 0x7F) << shift
        if b < 0x80:
            value = (raw >> 1) ^ -(raw & 1)
            return value, pos
        shift += 7
    kind = "varint" if max_bytes == VARINT_MAX_BYTES else "varlong"
    raise DecodeError(kind, f"{kind} longer than {max_bytes} bytes (most significant bit set in the last byte)",
                      start)


def read_unsigned_varint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """Decode one unsigned varint (``ByteUtils.readUnsignedVarint``, flexible protocol versions)."""
    raw = 0
    shift = 0
    start = pos
    for _ in range(VARINT_MAX_BYTES):
        if pos >= len(buf):
            raise DecodeError("varint", "buffer ends inside a varint", start)
        b = buf[pos]
        pos += 1
        raw |= (b & 0x7F) << shift
        if b < 0x80:
            # Java returns an int: values above Int32 max come back negative.
            return raw - (1 << 32) if raw & 0x80000000 else raw, pos
        shift += 7
    raise DecodeError("varint", f"unsigned varint longer than {VARINT_MAX_BYTES} bytes", start)


def encode_unsigned_varint(value: int) -> bytes:
    """Unsigned varint bytes of an int32 (negative values as their unsigned 32-bit pattern)."""
    value &= 0xFFFFFFFF
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


class KafkaVarInt(Construct):
    """Construct type for a bounded zigzag varint (5 bytes) or varlong (10 bytes)."""

    def __init__(self, max_bytes: int = VARINT_MAX_BYTES) -> None:
        super().__init__()
        self.max_bytes = max_bytes
        self.bits = 32 if max_bytes == VARINT_MAX_BYTES else 64

    def _parse(self, stream: Any, context: Any, path: str) -> int:
        raw = 0
        shift = 0
        for _ in range(self.max_bytes):
            b = stream_read(stream, 1, path)[0]
            raw |= (b & 0x7F) << shift
            if b < 0x80:
                return zigzag_decode(raw)
            shift += 7
        raise DecodeError("varint", f"longer than {self.max_bytes} bytes")

    def _build(self, obj: int, stream: Any, context: Any, path: str) -> int:
        data = encode_varint(obj, self.max_bytes)
        stream_write(stream, data, len(data), path)
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("varints have no fixed size", path=path)


VarInt = KafkaVarInt(VARINT_MAX_BYTES)
VarLong = KafkaVarInt(VARLONG_MAX_BYTES)
