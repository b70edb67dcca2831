"""The four record codecs, as Kafka writes and reads them (Kafka's ``Compression`` implementations).

- gzip: an RFC 1952 stream (``GzipCompression``).
- snappy: snappy-java's ``SnappyOutputStream`` framing (the "xerial" header, then big-endian
  length-prefixed raw blocks); like ``SnappyInputStream``, input without that header is read as one raw
  snappy block.
- lz4: the LZ4 frame format as ``Lz4BlockOutputStream`` writes it (64 KiB independent blocks, no
  checksums). For magic 0 Kafka computed the header checksum over the magic bytes too (KAFKA-3160), and
  ``Lz4BlockInputStream`` skips the check for magic 0 and enforces it from magic 1 on.
- zstd: a zstd frame (``ZstdCompression``).

Decompression is bounded by ``max_output`` so a hostile payload cannot exhaust memory; every failure
is a :class:`~kafkatool.errors.CodecError`, never a library exception.
"""

from __future__ import annotations

import struct
import zlib

import cramjam
import xxhash
import zstandard

from kafkatool.errors import CodecError
from kafkatool.model import Compression

DEFAULT_MAX_OUTPUT = 1 << 31

SNAPPY_MAGIC = b"\x82SNAPPY\x00"
SNAPPY_HEADER = struct.Struct(">8sii")
SNAPPY_VERSION = 1
SNAPPY_COMPATIBLE_VERSION = 1
SNAPPY_BLOCK_SIZE = 32 * 1024
SNAPPY_CHUNK_LENGTH = struct.Struct(">i")

LZ4_MAGIC = 0x184D2204
LZ4_FRAME_INCOMPRESSIBLE_MASK = 0x80000000
LZ4_BLOCK_SIZES = {4: 64 << 10, 5: 256 << 10, 6: 1 << 20, 7: 4 << 20}
LZ4_KAFKA_BD = 4 << 4  # 64 KiB blocks
LZ4_KAFKA_FLG = 1 << 6 | 1 << 5  # version 1, independent blocks
LZ4_U32 = struct.Struct("<I")

GZIP_WBITS = 16 + zlib.MAX_WBITS


def decompress(codec: Compression, data: bytes | memoryview, *, magic: int = 2,
               max_output: int = DEFAULT_MAX_OUTPUT) -> bytes:
    """Decompress a batch (or legacy wrapper) payload; never more than ``max_output`` bytes."""
    raw = bytes(data)
    if codec is Compression.NONE:
        return raw
    if codec is Compression.GZIP:
        return _gunzip(raw, max_output)
    if codec is Compression.SNAPPY:
        return _unsnappy(raw, max_output)
    if codec is Compression.LZ4:
        return _unlz4(raw, magic, max_output)
    if codec is Compression.ZSTD:
        return _unzstd(raw, max_output)
    raise CodecError("compression", f"unknown codec {codec}")


def compress(codec: Compression, data: bytes | memoryview, *, magic: int = 2) -> bytes:
    """Compress as Kafka's producer does (see the module notes for each codec's framing)."""
    raw = bytes(data)
    if codec is Compression.NONE:
        return raw
    if codec is Compression.GZIP:
        co = zlib.compressobj(6, zlib.DEFLATED, GZIP_WBITS)
        return co.compress(raw) + co.flush()
    if codec is Compression.SNAPPY:
        return _snappy_frame(raw)
    if codec is Compression.LZ4:
        return _lz4_frame(raw, broken_checksum=magic == 0)
    if codec is Compression.ZSTD:
        return zstandard.ZstdCompressor(level=3).compress(raw)
    raise CodecError("compression", f"unknown codec {codec}")


def _too_big(codec: str, max_output: int) -> CodecError:
    return CodecError("records", f"{codec} payload decompresses to more than {max_output} bytes (refused)")


def _gunzip(raw: bytes, max_output: int) -> bytes:
    d = zlib.decompressobj(GZIP_WBITS)
    out = bytearray()
    chunk = raw
    try:
        while True:
            piece = d.decompress(chunk, max_output + 1 - len(out))
            out += piece
            if len(out) > max_output:
                raise _too_big("gzip", max_output)
            if d.eof or not d.unconsumed_tail:
                break
            chunk = d.unconsumed_tail
    except zlib.error as err:
        raise CodecError("records", f"gzip: {err}", len(raw) - len(d.unconsumed_tail)) from None
    if not d.eof:
        raise CodecError("records", "gzip stream is truncated (no end of stream)", len(raw))
    return bytes(out)


def _unsnappy(raw: bytes, max_output: int) -> bytes:
    if not raw.startswith(SNAPPY_MAGIC):
        return _snappy_raw(raw, 0, max_output)
    if len(raw) < SNAPPY_HEADER.size:
        raise CodecError("records", "snappy (xerial) header is truncated", 0)
    out = bytearray()
    pos = SNAPPY_HEADER.size
    while pos < len(raw):
        if len(raw) - pos < SNAPPY_CHUNK_LENGTH.size:
            raise CodecError("records", "snappy (xerial) chunk length is truncated", pos)
        (length,) = SNAPPY_CHUNK_LENGTH.unpack_from(raw, pos)
        pos += SNAPPY_CHUNK_LENGTH.size
        if length < 0 or pos + length > len(raw):
            raise CodecError("records", f"snappy (xerial) chunk of {length} bytes overruns the payload", pos - 4)
        out += _snappy_raw(raw[pos:pos + length], pos, max_output - len(out))
        pos += length
    return bytes(out)


def _snappy_raw(block: bytes, where: int, budget: int) -> bytes:
    try:
        size = cramjam.snappy.decompress_raw_len(block)
    except Exception as err:  # cramjam raises its own DecompressionError
        raise CodecError("records", f"snappy: {err}", where) from None
    if size > budget:
        raise _too_big("snappy", budget)
    try:
        return bytes(cramjam.snappy.decompress_raw(block))
    except Exception as err:
        raise CodecError("records", f"snappy: {err}", where) from None


def _snappy_frame(raw: bytes) -> bytes:
    parts = [SNAPPY_HEADER.pack(SNAPPY_MAGIC, SNAPPY_VERSION, SNAPPY_COMPATIBLE_VERSION)]
    for start in range(0, len(raw), SNAPPY_BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(raw[start:start + SNAPPY_BLOCK_SIZE]))
        parts.append(SNAPPY_CHUNK_LENGTH.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def lz4_header_checksum(descriptor: bytes) -> int:
    """The frame-descriptor checksum byte: second byte of xxHash32 over the given bytes."""
    return (xxhash.xxh32_intdigest(descriptor) >> 8) & 0xFF


def _unlz4(raw: bytes, magic: int, max_output: int) -> bytes:
    if len(raw) < 7:
        raise CodecError("records", "lz4 frame is shorter than its header", 0)
    if LZ4_U32.unpack_from(raw, 0)[0] != LZ4_MAGIC:
        raise CodecError("records", "lz4: not an LZ4 frame (bad magic)", 0)
    flg, bd = raw[4], raw[5]
    version = flg >> 6
    if version != 1:
        raise CodecError("records", f"lz4: frame version {version} is not supported", 4)
    if flg & 0x03:
        raise CodecError("records", "lz4: reserved FLG bits are set", 4)
    if not flg & 0x20:
        raise CodecError("records", "lz4: dependent block streams are not supported", 4)
    block_checksum = bool(flg & 0x10)
    content_size = bool(flg & 0x08)
    content_checksum = bool(flg & 0x04)
    max_block = LZ4_BLOCK_SIZES.get((bd >> 4) & 0x07)
    if max_block is None or bd & 0x8F:
        raise CodecError("records", f"lz4: invalid block descriptor 0x{bd:02x}", 5)
    pos = 6 + (8 if content_size else 0)
    if len(raw) <= pos:
        raise CodecError("records", "lz4 frame header is truncated", len(raw))
    # Kafka skips the check for magic 0, whose writers computed it wrongly.
    if magic != 0 and raw[pos] != lz4_header_checksum(raw[4:pos]):
        raise CodecError("records", "lz4: frame descriptor checksum mismatch", pos)
    pos += 1
    out = bytearray()
    scratch = bytearray(max_block)
    while True:
        if len(raw) - pos < 4:
            raise CodecError("records", "lz4: stream ends before the end mark", pos)
        (size,) = LZ4_U32.unpack_from(raw, pos)
        pos += 4
        if size == 0:
            if content_checksum:
                pos += 4
            break
        stored = bool(size & LZ4_FRAME_INCOMPRESSIBLE_MASK)
        size &= ~LZ4_FRAME_INCOMPRESSIBLE_MASK
        if size > max_block:
            raise CodecError("records", f"lz4: block size {size} exceeds the maximum {max_block}", pos - 4)
        if len(raw) - pos < size:
            raise CodecError("records", "lz4: block is truncated", pos)
        block = raw[pos:pos + size]
        if stored:
            out += block
        else:
            try:
                n = cramjam.lz4.decompress_block_into(block, scratch)
                out += memoryview(scratch)[:n]
            except Exception as err:
                raise CodecError("records", f"lz4: {err}", pos) from None
        pos += size
        if block_checksum:
            if len(raw) - pos < 4:
                raise CodecError("records", "lz4: block checksum is truncated", pos)
            if LZ4_U32.unpack_from(raw, pos)[0] != xxhash.xxh32_intdigest(block):
                raise CodecError("records", "lz4: block checksum mismatch", pos)
            pos += 4
        if len(out) > max_output:
            raise _too_big("lz4", max_output)
    return bytes(out)


def _lz4_frame(raw: bytes, *, broken_checksum: bool) -> bytes:
    header = LZ4_U32.pack(LZ4_MAGIC) + bytes((LZ4_KAFKA_FLG, LZ4_KAFKA_BD))
    checksum = lz4_header_checksum(header if broken_checksum else header[4:])
    parts = [header, bytes((checksum,))]
    block_size = LZ4_BLOCK_SIZES[LZ4_KAFKA_BD >> 4]
    for start in range(0, len(raw), block_size):
        chunk = raw[start:start + block_size]
        block = bytes(cramjam.lz4.compress_block(chunk, store_size=False))
        if len(block) >= len(chunk):
            parts += [LZ4_U32.pack(len(chunk) | LZ4_FRAME_INCOMPRESSIBLE_MASK), chunk]
        else:
            parts += [LZ4_U32.pack(len(block)), block]
    parts.append(LZ4_U32.pack(0))
    return b"".join(parts)


def _unzstd(raw: bytes, max_output: int) -> bytes:
    # A frame may declare its content size: refuse early when it exceeds the bound. Without one, the
    # decompressor's output buffer is capped at the bound, so a bomb fails instead of inflating.
    declared = _zstd_declared_size(raw)
    if declared is not None and declared > max_output:
        raise _too_big("zstd", max_output)
    try:
        return zstandard.ZstdDecompressor().decompress(raw, max_output_size=max_output)
    except zstandard.ZstdError as err:
        raise CodecError("records", f"zstd: {err}", 0) from None


def _zstd_declared_size(raw: bytes) -> int | None:
    """The frame content size a zstd frame header declares, if any."""
    if len(raw) < 6 or raw[:4] != b"\x28\xb5\x2f\xfd":
        return None
    fhd = raw[4]
    fcs_flag = fhd >> 6
    single_segment = (fhd >> 5) & 1
    dict_flag = fhd & 3
    pos = 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[dict_flag]
    size_len = (1 if single_segment else 0, 2, 4, 8)[fcs_flag]
    if size_len == 0 or len(raw) < pos + size_len:
        return None
    value = int.from_bytes(raw[pos:pos + size_len], "little")
    return value + 256 if size_len == 2 else value
