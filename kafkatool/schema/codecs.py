"""The four record codecs, as Kafka writes and reads them (Kafka's ``CompressionType`` and its
``Compression`` implementations in ``org.apache.kafka.common.compress``).

- gzip (``GzipCompression``): an RFC 1952 stream read as ``java.util.zip.GZIPInputStream`` reads it:
  concatenated members are decoded one after the other, and bytes after a member that do not start a
  valid gzip header are ignored.
- snappy (``SnappyCompression``): snappy-java's ``SnappyOutputStream`` framing, the "xerial" header
  (magic, version 1, compatible version 1) then big-endian length-prefixed raw blocks of at most 32 KiB
  of input each. Like ``SnappyInputStream``, input without that header is read as one raw snappy block,
  a header repeated mid-stream (concatenated streams) is skipped, and a header version below 1 is refused.
- lz4 (``Lz4Compression``): the LZ4 frame format as ``Lz4BlockInputStream``/``Lz4BlockOutputStream``
  handle it: independent blocks only, block checksums verified when flagged, the content size skipped
  and the content checksum read but not verified. For magic 0 Kafka's writers hashed the frame magic
  too when computing the descriptor checksum (KAFKA-3160): Kafka ignores that byte for magic 0 and
  enforces the correct checksum for magic 1 and 2; so do we.
- zstd (``ZstdCompression``): one or more zstd frames (skippable frames allowed), as zstd-jni's
  ``ZstdInputStream`` reads them.

Decompression is bounded by ``max_output``: no codec inflates more than a bounded overshoot past it
before failing, so a hostile payload cannot exhaust memory. Kafka itself has no such bound (a batch is as
large as ``message.max.bytes`` allows compressed); the default, ``DEFAULT_MAX_OUTPUT`` (64 MiB), is far above
what a real batch inflates to. The cap is always a parameter, never a process-wide setting: a read carries
its :class:`ReadLimits` (the command line's ``kafkatool --max-decompressed-bytes N`` builds one, see
:mod:`kafkatool.reading.context`) down to the decoders, which take its ``max_decompressed_bytes`` as their
``max_output`` (``None``: the default). Every failure is a
:class:`~kafkatool.errors.CodecError` on field ``records``, positioned in the compressed payload when
the position is known; no library exception escapes.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import cramjam
import xxhash
import zstandard

from kafkatool.errors import CapExceeded, CodecError
from kafkatool.model import Compression

DEFAULT_MAX_OUTPUT = 64 << 20
FIELD = "records"

GZIP_WBITS = 16 + zlib.MAX_WBITS
GZIP_MAGIC = b"\x1f\x8b"
GZIP_DEFLATE = 8
GZIP_FIXED_HEADER = 10
GZIP_FEXTRA, GZIP_FNAME, GZIP_FCOMMENT, GZIP_FHCRC = 0x04, 0x08, 0x10, 0x02
GZIP_LEVEL = 6  # Deflater.DEFAULT_COMPRESSION, Kafka's default gzip level

SNAPPY_MAGIC = b"\x82SNAPPY\x00"
SNAPPY_HEADER = struct.Struct(">8sii")  # magic, version, compatible version
SNAPPY_VERSION = 1
SNAPPY_COMPATIBLE_VERSION = 1
SNAPPY_MIN_VERSION = 1  # SnappyCodec.MINIMUM_COMPATIBLE_VERSION
SNAPPY_BLOCK_SIZE = 32 * 1024  # SnappyOutputStream.DEFAULT_BLOCK_SIZE
SNAPPY_CHUNK_LENGTH = struct.Struct(">i")
SNAPPY_MAGIC_HEAD = SNAPPY_CHUNK_LENGTH.unpack(SNAPPY_MAGIC[:4])[0]  # a chunk length that is a new header

LZ4_MAGIC = 0x184D2204
LZ4_FRAME_INCOMPRESSIBLE_MASK = 0x80000000
LZ4_BLOCK_SIZES = {4: 64 << 10, 5: 256 << 10, 6: 1 << 20, 7: 4 << 20}  # BD block-size id -> bytes
LZ4_KAFKA_BD = 4 << 4  # 64 KiB blocks (Lz4BlockOutputStream.BLOCKSIZE_64KB)
LZ4_KAFKA_FLG = 1 << 6 | 1 << 5  # version 1, independent blocks, no checksums, no content size
LZ4_FLG_VERSION_SHIFT = 6
LZ4_FLG_INDEPENDENT = 0x20
LZ4_FLG_BLOCK_CHECKSUM = 0x10
LZ4_FLG_CONTENT_SIZE = 0x08
LZ4_FLG_CONTENT_CHECKSUM = 0x04
LZ4_FLG_RESERVED = 0x03
LZ4_BD_RESERVED = 0x8F
LZ4_U32 = struct.Struct("<I")
LZ4_MIN_HEADER = 6  # magic, FLG, BD: what Lz4BlockInputStream checks before reading

ZSTD_LEVEL = 3  # ZSTD_CLEVEL_DEFAULT, Kafka's default zstd level
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
ZSTD_MAX_RATIO = 1 << 15  # a 4-byte RLE block inflates to 128 KiB: output per input byte, at most
ZSTD_FEED_MIN = 64
ZSTD_FEED_MAX = 64 << 10

_ZSTD_DECOMPRESSOR = zstandard.ZstdDecompressor()

RECORD_COST = 256  # what one decoded record costs in memory, roughly, counted against the decompression cap


@dataclass(frozen=True, slots=True)
class ReadLimits:
    """The bounds of one read, passed explicitly from the command line (or a scan's plan) down to the decoders.

    ``max_decompressed_bytes`` caps what one compressed batch or legacy wrapper may inflate to, and with it the
    records one batch may decode into (each counted at :data:`RECORD_COST` bytes, see
    :func:`check_decoded_budget`). Kafka has no such bound; it is ours, against decompression bombs. A plain
    value (picklable): the fleet hands it to worker processes and Spark executors with each unit of work.

    ``follow_links`` (``--follow-links``) bounds which files are read at all: without it a symbolic link leading
    out of the evidence tree is named and not read (``reading.files.survey``); it travels with the cap so that
    every unit of a scan reads by the same rule.
    """

    max_decompressed_bytes: int = DEFAULT_MAX_OUTPUT
    follow_links: bool = False

    def __post_init__(self) -> None:
        if self.max_decompressed_bytes < 1:
            raise ValueError(f"the decompression cap must be positive, not {self.max_decompressed_bytes}")


DEFAULT_LIMITS = ReadLimits()


def gzip_within(data: bytes, max_output: int) -> None:
    """Raise what :func:`decompress` of a gzip payload would raise when it inflates past ``max_output``, having
    only counted the output (memory: one step); nothing when it stays within (or fails otherwise: the
    decompression says how)."""
    try:
        _gunzip(data, max_output, keep=False)
    except CapExceeded:
        raise
    except CodecError:
        return


GZIP_TRAILER_SIZE = 8
"""A gzip member's trailer: CRC-32 and ISIZE of the inflated data."""


def gzip_body_before_trailer(data: bytes | memoryview, max_output: int) -> bytes | None:
    """What a gzip payload inflates to before its trailer, for a payload whose trailer check failed: Java's
    ``GZIPInputStream`` hands every inflated byte to its reader and reads the trailer only on the read after the
    deflate stream ends, so Kafka's record iterator parses the whole (damaged) output before the trailer's
    ``ZipException``. ``None`` for any other payload: one whose body does not inflate to its end, inflates past
    ``max_output``, or whose trailer is right (the caller's failure is then elsewhere)."""
    raw = bytes(data)
    if len(raw) <= GZIP_TRAILER_SIZE:
        return None
    d = zlib.decompressobj(GZIP_WBITS)
    try:
        out = d.decompress(raw[:-GZIP_TRAILER_SIZE], max_output + 1)
    except zlib.error:
        return None
    if len(out) > max_output or d.unconsumed_tail or d.eof:
        return None
    try:  # the deflate stream ended right before the trailer: the trailer alone is what fails
        d.copy().decompress(raw[-GZIP_TRAILER_SIZE:])
    except zlib.error as err:
        return out if "incorrect data check" in str(err) or "incorrect length check" in str(err) else None
    return None


def decompress(codec: Compression, data: bytes | memoryview, *, magic: int = 2,
               max_output: int | None = None) -> bytes:
    """Decompress a batch (or legacy wrapper) payload as Kafka reads it; never more than ``max_output`` bytes
    (:data:`DEFAULT_MAX_OUTPUT` when ``None``; a read passes its :attr:`ReadLimits.max_decompressed_bytes`).

    ``magic`` matters for lz4 only (the magic 0 descriptor checksum is ignored, as Kafka does).
    """
    if max_output is None:
        max_output = DEFAULT_MAX_OUTPUT
    raw = bytes(data)
    try:
        if codec is Compression.NONE:
            if len(raw) > max_output:
                raise _too_big("uncompressed", max_output)
            return raw
        from kafkatool.schema.native import core as native_core  # here: native imports this module's users

        core = native_core()
        if core is not None and isinstance(codec, Compression):
            # The Rust twin (kafkatool/_core/src/codecs.rs) returns None for anything it does not decode exactly
            # as below (damage, the cap, an unusual layout): this path then produces the result or the error.
            fast = core.decompress(codec.value, raw, magic, max_output)
            if fast is not None:
                return fast
        if codec is Compression.GZIP:
            return _gunzip(raw, max_output)
        if codec is Compression.SNAPPY:
            return _unsnappy(raw, max_output)
        if codec is Compression.LZ4:
            return _unlz4(raw, magic, max_output)
        if codec is Compression.ZSTD:
            return _unzstd(raw, max_output)
    except CodecError:
        raise
    except Exception as err:  # a library failure we did not anticipate: still a codec error
        raise CodecError(FIELD, f"{_label(codec)}: {type(err).__name__}: {err}") from None
    raise CodecError(FIELD, f"unknown compression codec {codec!r}")


def check_decoded_budget(size: int, records: int, max_output: int | None, position: int) -> None:
    """Refuse decompressed data whose ``records`` decoded records would cost more memory than the cap.

    A few KiB of compressed payload can inflate to millions of 7-byte records, each a Python object of a few
    hundred bytes: the cap (``max_output``, :data:`DEFAULT_MAX_OUTPUT` when ``None``) bounds the decompressed
    bytes plus ``RECORD_COST`` per record they can hold.
    """
    cap = DEFAULT_MAX_OUTPUT if max_output is None else max_output
    if size + records * RECORD_COST > cap:
        raise CodecError(FIELD, f"{records} records in {size} decompressed bytes would take more than {cap} bytes "
                         "to decode (refused; see --max-decompressed-bytes)", position)


def compress(codec: Compression, data: bytes | memoryview, *, magic: int = 2) -> bytes:
    """Compress as Kafka's producer does (see the module notes for each codec's framing).

    ``magic`` 0 makes lz4 write the broken descriptor checksum old Kafka clients expect.
    """
    raw = bytes(data)
    if codec is Compression.NONE:
        return raw
    if codec is Compression.GZIP:
        co = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, GZIP_WBITS)
        return co.compress(raw) + co.flush()
    if codec is Compression.SNAPPY:
        return _snappy_frame(raw)
    if codec is Compression.LZ4:
        return _lz4_frame(raw, broken_checksum=magic == 0)
    if codec is Compression.ZSTD:
        return zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(raw)
    raise CodecError(FIELD, f"unknown compression codec {codec!r}")


def _label(codec: object) -> str:
    return codec.label if isinstance(codec, Compression) else str(codec)


def _too_big(codec: str, max_output: int, position: int | None = None) -> CodecError:
    return CapExceeded(FIELD, f"{codec} payload decompresses to more than {max_output} bytes (refused)", position)


# --- gzip -----------------------------------------------------------------------------------------


GUNZIP_STEP = 1 << 20
"""The most output one inflate call makes, and the most input handed to it: memory stays the output so far plus a
step, whatever the payload (a 16 MiB payload was held three times over by ``unconsumed_tail`` copies)."""
GZIP_HEADER_PEEK = 1 << 16


def _gunzip(raw: bytes, max_output: int, keep: bool = True) -> bytes:
    """Every gzip member in ``raw``, bounded: input and output go :data:`GUNZIP_STEP` bytes at a time
    (``decompressobj`` with ``max_length``), so nothing is inflated past the cap nor copied whole. Positions are
    those of the payload's consumed bytes, as if it had been handed over whole. Without ``keep`` the output is
    only counted (``b""`` comes back): the same errors, in the memory of one step."""
    if not raw:
        raise CodecError(FIELD, "gzip: empty payload (no gzip header)", 0)
    out = bytearray()
    total = 0
    view = memoryview(raw)
    size = len(raw)
    start = 0
    while True:
        d = zlib.decompressobj(GZIP_WBITS)
        fed = start  # the end of the input handed to ``d``
        tail: bytes | memoryview = b""  # handed to ``d``, not consumed yet
        left = 0  # the payload's bytes not consumed, after the last call that succeeded (0 before any)
        try:
            while True:
                if not tail and fed < size:
                    tail = view[fed:fed + GUNZIP_STEP]
                    fed += len(tail)
                want = min(GUNZIP_STEP, max_output + 1 - total)
                made = d.decompress(tail, want)
                total += len(made)
                if keep:
                    out += made
                tail = d.unconsumed_tail
                left = len(tail) + size - fed
                if total > max_output:
                    raise _too_big("gzip", max_output, size - left)
                if d.eof or (not tail and fed >= size and len(made) < want):
                    break
        except zlib.error as err:
            raise CodecError(FIELD, f"gzip: {err}", size - left) from None
        if not d.eof:
            raise CodecError(FIELD, "gzip: stream is truncated (no end of stream)", size)
        unused = d.unused_data
        rest_len = len(unused) + size - fed
        peek = unused[:GZIP_HEADER_PEEK] + bytes(view[fed:fed + max(0, GZIP_HEADER_PEEK - len(unused))])
        whole = len(peek) == rest_len
        if not _gzip_header_complete(peek) and (whole or peek[:2] != GZIP_MAGIC or not _gzip_header_complete(
                unused + bytes(view[fed:]))):
            # GZIPInputStream ignores what follows a member unless it is another member's header.
            return bytes(out)
        start = size - rest_len


def _gzip_header_complete(data: bytes) -> bool:
    """``data`` starts with a whole, well-formed gzip member header (``GZIPInputStream.readHeader``)."""
    if len(data) < GZIP_FIXED_HEADER or data[:2] != GZIP_MAGIC or data[2] != GZIP_DEFLATE:
        return False
    flags = data[3]
    pos = GZIP_FIXED_HEADER
    if flags & GZIP_FEXTRA:
        if len(data) < pos + 2:
            return False
        pos += 2 + int.from_bytes(data[pos:pos + 2], "little")
    for flag in (GZIP_FNAME, GZIP_FCOMMENT):
        if flags & flag:
            end = data.find(b"\0", pos)
            if end < 0:
                return False
            pos = end + 1
    if flags & GZIP_FHCRC:
        if len(data) < pos + 2:
            return False
        if int.from_bytes(data[pos:pos + 2], "little") != zlib.crc32(data[:pos]) & 0xFFFF:
            return False
        pos += 2
    return len(data) >= pos


# --- snappy ---------------------------------------------------------------------------------------


def _unsnappy(raw: bytes, max_output: int) -> bytes:
    """xerial-framed snappy (``SnappyInputStream``), or one raw snappy block when the header is absent."""
    if not raw:
        raise CodecError(FIELD, "snappy: cannot decompress an empty payload", 0)
    if not raw.startswith(SNAPPY_MAGIC):
        return _snappy_raw(raw, 0, max_output, max_output)
    out = bytearray()
    pos = _snappy_header(raw, 0)
    while pos < len(raw):
        if len(raw) - pos < SNAPPY_CHUNK_LENGTH.size:
            raise CodecError(FIELD, f"snappy (xerial): chunk length is truncated ({len(raw) - pos} bytes)", pos)
        (length,) = SNAPPY_CHUNK_LENGTH.unpack_from(raw, pos)
        if length == SNAPPY_MAGIC_HEAD and raw.startswith(SNAPPY_MAGIC, pos):
            pos = _snappy_header(raw, pos)  # a concatenated stream starts here
            continue
        pos += SNAPPY_CHUNK_LENGTH.size
        if length < 0 or length > len(raw) - pos:
            raise CodecError(FIELD, f"snappy (xerial): chunk of {length} bytes overruns the payload "
                             f"({len(raw) - pos} bytes left)", pos - SNAPPY_CHUNK_LENGTH.size)
        out += _snappy_raw(raw[pos:pos + length], pos, max_output - len(out), max_output)
        pos += length
    return bytes(out)


def _snappy_header(raw: bytes, pos: int) -> int:
    """Check the xerial header at ``pos`` (its magic already matched); the position after it."""
    if len(raw) - pos < SNAPPY_HEADER.size:
        raise CodecError(FIELD, "snappy (xerial): header is truncated", pos)
    _magic, version, _compatible = SNAPPY_HEADER.unpack_from(raw, pos)
    if version < SNAPPY_MIN_VERSION:
        raise CodecError(FIELD, f"snappy (xerial): incompatible stream version {version} "
                         f"(at least {SNAPPY_MIN_VERSION} is required)", pos + 8)
    return pos + SNAPPY_HEADER.size


def _snappy_raw(block: bytes, where: int, budget: int, max_output: int) -> bytes:
    """One raw snappy block; its declared length is checked against ``budget`` (what is left of
    ``max_output``) before inflating."""
    try:
        size = cramjam.snappy.decompress_raw_len(block)
    except Exception as err:  # cramjam.DecompressionError
        raise CodecError(FIELD, f"snappy: {err}", where) from None
    if size > budget:
        raise _too_big("snappy", max_output, where)
    try:
        return bytes(cramjam.snappy.decompress_raw(block))
    except Exception as err:
        raise CodecError(FIELD, f"snappy: {err}", where) from None


def _snappy_frame(raw: bytes) -> bytes:
    """``SnappyOutputStream``'s output: the header, then each 32 KiB of input as a length-prefixed block."""
    parts = [SNAPPY_HEADER.pack(SNAPPY_MAGIC, SNAPPY_VERSION, SNAPPY_COMPATIBLE_VERSION)]
    for start in range(0, len(raw), SNAPPY_BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(raw[start:start + SNAPPY_BLOCK_SIZE]))
        parts.append(SNAPPY_CHUNK_LENGTH.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


# --- lz4 ------------------------------------------------------------------------------------------


def lz4_header_checksum(descriptor: bytes) -> int:
    """The frame-descriptor checksum byte: second byte of xxHash32 (seed 0) over ``descriptor``."""
    return (xxhash.xxh32_intdigest(descriptor) >> 8) & 0xFF


def _unlz4(raw: bytes, magic: int, max_output: int) -> bytes:
    """An LZ4 frame read as ``Lz4BlockInputStream`` reads it (see the module notes)."""
    if len(raw) < LZ4_MIN_HEADER:
        raise CodecError(FIELD, "lz4: frame is shorter than its header (stream ended prematurely)", 0)
    if LZ4_U32.unpack_from(raw, 0)[0] != LZ4_MAGIC:
        raise CodecError(FIELD, "lz4: not an LZ4 frame (invalid magic bytes)", 0)
    flg, bd = raw[4], raw[5]
    version = flg >> LZ4_FLG_VERSION_SHIFT
    if version != 1:
        raise CodecError(FIELD, f"lz4: frame version {version} is not supported", 4)
    if flg & LZ4_FLG_RESERVED:
        raise CodecError(FIELD, "lz4: reserved FLG bits are set", 4)
    if not flg & LZ4_FLG_INDEPENDENT:
        raise CodecError(FIELD, "lz4: dependent block streams are not supported", 4)
    max_block = LZ4_BLOCK_SIZES.get((bd >> 4) & 0x07)
    if max_block is None or bd & LZ4_BD_RESERVED:
        raise CodecError(FIELD, f"lz4: invalid block descriptor 0x{bd:02x}", 5)
    block_checksum = bool(flg & LZ4_FLG_BLOCK_CHECKSUM)
    content_checksum = bool(flg & LZ4_FLG_CONTENT_CHECKSUM)
    pos = 6 + (8 if flg & LZ4_FLG_CONTENT_SIZE else 0)  # Kafka skips the content size
    if len(raw) <= pos:
        raise CodecError(FIELD, "lz4: frame descriptor is truncated", len(raw))
    # Magic 0 writers hashed the frame magic too (KAFKA-3160); Kafka does not check the byte for magic 0.
    if magic != 0 and raw[pos] != lz4_header_checksum(raw[4:pos]):
        raise CodecError(FIELD, f"lz4: frame descriptor checksum mismatch (stored 0x{raw[pos]:02x}, "
                         f"computed 0x{lz4_header_checksum(raw[4:pos]):02x})", pos)
    pos += 1
    out = bytearray()
    scratch = bytearray(max_block)
    while True:
        if len(raw) - pos < 4:
            raise CodecError(FIELD, "lz4: stream ends before the end mark", pos)
        (size,) = LZ4_U32.unpack_from(raw, pos)
        pos += 4
        if size == 0:
            # Kafka reads the content checksum without verifying it.
            if content_checksum and len(raw) - pos < 4:
                raise CodecError(FIELD, "lz4: content checksum is truncated", pos)
            return bytes(out)
        stored = bool(size & LZ4_FRAME_INCOMPRESSIBLE_MASK)
        size &= ~LZ4_FRAME_INCOMPRESSIBLE_MASK
        if size > max_block:
            raise CodecError(FIELD, f"lz4: block size {size} exceeds the maximum {max_block}", pos - 4)
        if len(raw) - pos < size:
            raise CodecError(FIELD, f"lz4: block of {size} bytes is truncated ({len(raw) - pos} left)", pos)
        block = raw[pos:pos + size]
        if stored:
            produced: bytes | memoryview = block
        else:
            produced = memoryview(scratch)[:_lz4_block(block, scratch, pos)]
        if len(out) + len(produced) > max_output:
            raise _too_big("lz4", max_output, pos)
        out += produced
        pos += size
        if block_checksum:
            if len(raw) - pos < 4:
                raise CodecError(FIELD, "lz4: block checksum is truncated", pos)
            if LZ4_U32.unpack_from(raw, pos)[0] != xxhash.xxh32_intdigest(block):
                raise CodecError(FIELD, "lz4: block checksum mismatch", pos)
            pos += 4


def _lz4_block(block: bytes, scratch: bytearray, pos: int) -> int:
    """Decode one lz4 block into ``scratch`` as lz4-java's ``safeDecompressor`` does in Kafka: liblz4's
    ``LZ4_decompress_safe`` with the frame's maximum block size (``len(scratch)``) as the capacity; the bytes
    decoded.

    cramjam's ``decompress_block_into`` reads the block's first 4 bytes as a size prefix whenever they are at
    most the buffer's length (``output_len`` does not change that), so a block starting with such bytes would
    be decoded from its fifth byte: the block is given a prefix of its own, the capacity. (When that decode
    fails cramjam retries without the prefix, which fails too: the prefix bytes read as a token without literals
    and an offset before the block.)
    """
    try:
        return cramjam.lz4.decompress_block_into(LZ4_U32.pack(len(scratch)) + block, scratch)
    except Exception as err:  # cramjam.DecompressionError
        raise CodecError(FIELD, f"lz4: {err}", pos) from None


def _lz4_frame(raw: bytes, *, broken_checksum: bool) -> bytes:
    """``Lz4BlockOutputStream``'s output: 64 KiB independent blocks, stored raw when incompressible."""
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


# --- zstd -----------------------------------------------------------------------------------------


def _unzstd(raw: bytes, max_output: int) -> bytes:
    """Every zstd frame in ``raw``, bounded.

    A frame declaring a content size above the bound is refused before any work. Otherwise the input is
    fed in slices small enough that one call cannot inflate far past the remaining budget (a zstd block
    inflates at most ``ZSTD_MAX_RATIO`` times), so a bomb fails instead of exhausting memory.
    """
    if not raw:
        raise CodecError(FIELD, "zstd: empty payload (no frame)", 0)
    out = bytearray()
    pos = 0
    while pos < len(raw):
        frame = pos
        declared = zstd_declared_size(raw, pos)
        if declared is not None and declared > max_output - len(out):
            raise _too_big("zstd", max_output, pos)
        d = _ZSTD_DECOMPRESSOR.decompressobj()
        while not d.eof:
            if pos >= len(raw):
                raise CodecError(FIELD, "zstd: frame is truncated", frame)
            feed = max(ZSTD_FEED_MIN, min(ZSTD_FEED_MAX, (max_output - len(out)) // ZSTD_MAX_RATIO))
            chunk = raw[pos:pos + feed]
            pos += len(chunk)
            try:
                out += d.decompress(chunk)
            except zstandard.ZstdError as err:
                raise CodecError(FIELD, f"zstd: {err}", frame) from None
            if len(out) > max_output:
                raise _too_big("zstd", max_output, frame)
        pos -= len(d.unused_data)
    return bytes(out)


def zstd_declared_size(raw: bytes, pos: int = 0) -> int | None:
    """The content size the zstd frame header at ``pos`` declares, if it declares one."""
    if len(raw) - pos < 6 or raw[pos:pos + 4] != ZSTD_MAGIC:
        return None
    fhd = raw[pos + 4]
    fcs_flag = fhd >> 6
    single_segment = (fhd >> 5) & 1
    dict_flag = fhd & 3
    start = pos + 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[dict_flag]
    size_len = (1 if single_segment else 0, 2, 4, 8)[fcs_flag]
    if size_len == 0 or len(raw) < start + size_len:
        return None
    value = int.from_bytes(raw[start:start + size_len], "little")
    return value + 256 if size_len == 2 else value
