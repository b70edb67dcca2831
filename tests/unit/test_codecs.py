"""Codecs: every codec vector from independent implementations, kafka-python's codecs as an oracle both
ways, Kafka's framings, the output bound, Kafka's LZ4 descriptor-checksum rule (KAFKA-3160), and
failures that are always a CodecError."""

from __future__ import annotations

import gzip
import json
import struct

import pytest
import xxhash
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkatool.errors import CodecError
from kafkatool.model import Compression
from kafkatool.schema import codecs
from tests.conftest import SHARED, shared_dir

COMPRESSED = [c for c in Compression if c is not Compression.NONE]


def codec_vectors() -> list[str]:
    root = SHARED / "vectors"
    if not root.is_dir():
        return []
    return sorted(str(p.relative_to(root).with_suffix("")) for p in root.glob("*/*.json")
                  if json.loads(p.read_text())["kind"] == "codec_payload")


def load(name: str) -> tuple[dict, bytes]:
    root = shared_dir("vectors")
    return json.loads((root / f"{name}.json").read_text()), (root / f"{name}.bin").read_bytes()


# --- vectors --------------------------------------------------------------------------------------


@pytest.mark.corpus
@pytest.mark.parametrize("name", codec_vectors())
def test_codec_vector(name: str) -> None:
    meta, data = load(name)
    codec = Compression[meta["expected"]["codec"].upper()]
    if meta["expect_error"]:
        with pytest.raises(CodecError) as info:
            codecs.decompress(codec, data)
        assert info.value.field == "records"
        return
    assert codecs.decompress(codec, data).hex() == meta["expected"]["decompressed_hex"]
    framing = meta["expected"].get("framing")
    if framing is not None:
        assert data.startswith(codecs.SNAPPY_MAGIC) == (framing == "xerial")


def test_codec_vectors_present() -> None:
    shared_dir("vectors")
    names = codec_vectors()
    assert len(names) >= 10
    assert "franz-go/codec_zstd_frame_claims_8GiB" in names


@pytest.mark.corpus
def test_zstd_frame_claiming_8_gib_is_refused_before_inflating() -> None:
    """franz-go's vector: a frame header declaring 8 GiB and no data; refused from the header alone."""
    _meta, data = load("franz-go/codec_zstd_frame_claims_8GiB")
    assert codecs.zstd_declared_size(data) == 8 << 30
    with pytest.raises(CodecError, match="more than") as info:
        codecs.decompress(Compression.ZSTD, data)
    assert info.value.position == 0
    with pytest.raises(CodecError):  # a bound above the claim: the frame is then simply truncated
        codecs.decompress(Compression.ZSTD, data, max_output=16 << 30)


# --- round trips and oracles ----------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.binary(max_size=5_000), st.binary(max_size=300).map(lambda b: b * 700)),
       st.sampled_from(list(Compression)), st.sampled_from([0, 1, 2]))
def test_round_trip(data: bytes, codec: Compression, magic: int) -> None:
    """Includes inputs over one snappy chunk (32 KiB) and one LZ4 block (64 KiB)."""
    assert codecs.decompress(codec, codecs.compress(codec, data, magic=magic), magic=magic) == data


@pytest.mark.parametrize("size", [0, 1, 32 * 1024, 32 * 1024 + 1, 64 * 1024, 64 * 1024 + 1, 300_000])
@pytest.mark.parametrize("codec", list(Compression))
def test_round_trip_at_block_boundaries(codec: Compression, size: int) -> None:
    data = bytes((i * 7 + i // 1000) & 0xFF for i in range(size))
    assert codecs.decompress(codec, codecs.compress(codec, data)) == data


@pytest.mark.parametrize("codec", COMPRESSED)
def test_kafka_python_codecs_both_ways(codec: Compression) -> None:
    """kafka-python's codec helpers (python-snappy, python-lz4, zstandard, gzip) as independent oracle."""
    from kafka import codec as kc

    data = b"kafka forensic " * 5000 + bytes(range(256)) * 40
    encode, decode = {
        Compression.GZIP: (kc.gzip_encode, kc.gzip_decode),
        Compression.SNAPPY: (lambda d: kc.snappy_encode(d, xerial_compatible=True, xerial_blocksize=32 * 1024),
                             kc.snappy_decode),
        Compression.LZ4: (kc.lz4_encode, kc.lz4_decode),
        Compression.ZSTD: (kc.zstd_encode, kc.zstd_decode),
    }[codec]
    assert codecs.decompress(codec, encode(data)) == data
    assert decode(codecs.compress(codec, data)) == data


def test_kafka_python_old_kafka_lz4_decodes_as_magic_0_only() -> None:
    """kafka-python's encoder for 0.8/0.9 brokers writes the broken checksum independently of us."""
    from kafka import codec as kc

    data = b"old kafka lz4 " * 3000
    frame = kc.lz4_encode_old_kafka(data)
    assert codecs.decompress(Compression.LZ4, frame, magic=0) == data
    with pytest.raises(CodecError, match="checksum"):
        codecs.decompress(Compression.LZ4, frame, magic=1)
    assert kc.lz4_decode_old_kafka(codecs.compress(Compression.LZ4, data, magic=0)) == data


def test_lz4_frames_from_the_lz4_library_decode() -> None:
    """python-lz4 (the reference C library): every frame option Kafka's reader accepts."""
    import lz4.frame

    data = bytes(range(256)) * 2000
    for checksums in (False, True):
        for block_size in (lz4.frame.BLOCKSIZE_MAX64KB, lz4.frame.BLOCKSIZE_MAX256KB, lz4.frame.BLOCKSIZE_MAX4MB):
            frame = lz4.frame.compress(data, block_checksum=checksums, content_checksum=checksums,
                                       store_size=checksums, block_size=block_size, block_linked=False)
            assert codecs.decompress(Compression.LZ4, frame) == data
    assert lz4.frame.decompress(codecs.compress(Compression.LZ4, data)) == data


def test_lz4_dependent_blocks_are_refused() -> None:
    import lz4.frame

    frame = lz4.frame.compress(b"x" * 200_000, block_linked=True)
    with pytest.raises(CodecError, match="dependent") as info:
        codecs.decompress(Compression.LZ4, frame)
    assert info.value.position == 4


# --- Kafka's framings -----------------------------------------------------------------------------


def test_snappy_framing_is_snappy_java_output_stream() -> None:
    data = bytes(range(256)) * 300  # 76800 bytes: chunks of 32768, 32768, 11264
    out = codecs.compress(Compression.SNAPPY, data)
    assert out[:16] == b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    pos, sizes = 16, []
    import cramjam

    while pos < len(out):
        (n,) = struct.unpack_from(">i", out, pos)
        sizes.append(len(bytes(cramjam.snappy.decompress_raw(out[pos + 4:pos + 4 + n]))))
        pos += 4 + n
    assert sizes == [32768, 32768, 11264]
    assert codecs.compress(Compression.SNAPPY, b"") == out[:16]


def test_lz4_framing_is_lz4_block_output_stream() -> None:
    data = b"kafka" * 30_000  # 150000 bytes: 3 blocks of at most 64 KiB
    out = codecs.compress(Compression.LZ4, data)
    assert out[:6] == struct.pack("<I", 0x184D2204) + bytes((0x60, 0x40))  # v1, independent; 64 KiB blocks
    assert out[6] == (xxhash.xxh32_intdigest(out[4:6]) >> 8) & 0xFF
    assert out[-4:] == b"\0\0\0\0"  # end mark, no content checksum
    incompressible = bytes(xxhash.xxh64_digest(i.to_bytes(4, "little"))[0] for i in range(1000))
    stored = codecs.compress(Compression.LZ4, incompressible)
    assert struct.unpack_from("<I", stored, 7)[0] == 0x80000000 | 1000
    assert stored[11:1011] == incompressible


def test_lz4_broken_header_checksum_is_magic_0_only() -> None:
    """KAFKA-3160: magic 0 writers hashed the magic bytes too. Lz4BlockInputStream ignores the byte for
    magic 0 and enforces the correct one for magic 1 and 2."""
    data = b"hello kafka" * 50
    broken = codecs.compress(Compression.LZ4, data, magic=0)
    proper = codecs.compress(Compression.LZ4, data, magic=2)
    assert broken[:6] == proper[:6] and broken[7:] == proper[7:]
    assert broken[6] == (xxhash.xxh32_intdigest(broken[:6]) >> 8) & 0xFF != proper[6]
    assert codecs.compress(Compression.LZ4, data, magic=1) == proper
    assert codecs.decompress(Compression.LZ4, broken, magic=0) == data
    assert codecs.decompress(Compression.LZ4, proper, magic=0) == data
    for magic in (1, 2):
        assert codecs.decompress(Compression.LZ4, proper, magic=magic) == data
        with pytest.raises(CodecError, match="checksum") as info:
            codecs.decompress(Compression.LZ4, broken, magic=magic)
        assert info.value.position == 6
    garbage = proper[:6] + bytes((proper[6] ^ 0x5A,)) + proper[7:]
    assert codecs.decompress(Compression.LZ4, garbage, magic=0) == data  # any byte, as Kafka skips it
    with pytest.raises(CodecError):
        codecs.decompress(Compression.LZ4, garbage)


def test_lz4_block_checksum_is_verified_content_checksum_only_read() -> None:
    import lz4.frame

    data = b"checksummed " * 10_000
    frame = bytearray(lz4.frame.compress(data, block_checksum=True, content_checksum=True, block_linked=False,
                                         block_size=lz4.frame.BLOCKSIZE_MAX64KB, store_size=False))
    bad_content = bytes(frame[:-1]) + bytes((frame[-1] ^ 1,))
    assert codecs.decompress(Compression.LZ4, bad_content) == data  # Kafka: "TODO: verify this content checksum"
    with pytest.raises(CodecError, match="content checksum is truncated"):
        codecs.decompress(Compression.LZ4, bytes(frame[:-2]))
    (first,) = struct.unpack_from("<I", frame, 7)
    checksum_at = 11 + (first & 0x7FFFFFFF)
    frame[checksum_at] ^= 0xFF
    with pytest.raises(CodecError, match="block checksum mismatch") as info:
        codecs.decompress(Compression.LZ4, bytes(frame))
    assert info.value.position == checksum_at


def test_gzip_concatenated_members_and_trailing_bytes_as_gzip_input_stream() -> None:
    two = gzip.compress(b"first ") + gzip.compress(b"second")
    assert codecs.decompress(Compression.GZIP, two) == b"first second"
    assert codecs.decompress(Compression.GZIP, two + b"\0" * 40) == b"first second"  # not a header: ignored
    with pytest.raises(CodecError):  # a second member that starts but does not end
        codecs.decompress(Compression.GZIP, two + gzip.compress(b"third")[:-6])


def test_snappy_concatenated_xerial_streams_and_header_version() -> None:
    a, b = codecs.compress(Compression.SNAPPY, b"a" * 40_000), codecs.compress(Compression.SNAPPY, b"b" * 10)
    assert codecs.decompress(Compression.SNAPPY, a + b) == b"a" * 40_000 + b"b" * 10
    version_0 = a[:8] + struct.pack(">ii", 0, 0) + a[16:]
    with pytest.raises(CodecError, match="version") as info:
        codecs.decompress(Compression.SNAPPY, version_0)
    assert info.value.position == 8


def test_zstd_frames_and_skippable_frames() -> None:
    cctx = zstandard.ZstdCompressor(level=3, write_content_size=False)
    one, two = cctx.compress(b"one " * 1000), cctx.compress(b"two")
    skippable = struct.pack("<II", 0x184D2A50, 5) + b"12345"
    assert codecs.decompress(Compression.ZSTD, one + skippable + two) == b"one " * 1000 + b"two"
    with pytest.raises(CodecError) as info:
        codecs.decompress(Compression.ZSTD, one + b"trailing garbage")
    assert info.value.position == len(one)


# --- the output bound -----------------------------------------------------------------------------


@pytest.mark.parametrize("codec", list(Compression))
def test_output_bound(codec: Compression) -> None:
    payload = codecs.compress(codec, b"\0" * 1_000_000)
    with pytest.raises(CodecError, match="more than 10000 bytes"):
        codecs.decompress(codec, payload, max_output=10_000)
    assert len(codecs.decompress(codec, payload, max_output=1_000_000)) == 1_000_000
    with pytest.raises(CodecError):
        codecs.decompress(codec, payload, max_output=999_999)


def test_bombs_fail_fast_without_inflating() -> None:
    """1 GiB of zeros without a declared size (zstd) and 100 MiB (gzip), bounded at 1 MiB."""
    zbomb = zstandard.ZstdCompressor(level=3, write_content_size=False).compress(b"\0" * (1 << 30))
    assert codecs.zstd_declared_size(zbomb) is None
    with pytest.raises(CodecError, match="more than"):
        codecs.decompress(Compression.ZSTD, zbomb, max_output=1 << 20)
    gbomb = gzip.compress(b"\0" * (100 << 20), compresslevel=1)
    with pytest.raises(CodecError, match="more than"):
        codecs.decompress(Compression.GZIP, gbomb, max_output=1 << 20)


def test_snappy_raw_length_is_checked_before_inflating() -> None:
    import cramjam

    raw = bytes(cramjam.snappy.compress_raw(b"\0" * 500_000))
    with pytest.raises(CodecError, match="more than"):
        codecs.decompress(Compression.SNAPPY, raw, max_output=1000)


# --- failures -------------------------------------------------------------------------------------


def test_garbage_empty_and_truncated_are_codec_errors() -> None:
    for codec in COMPRESSED:
        with pytest.raises(CodecError):
            codecs.decompress(codec, b"\x01\x02\x03\x04 not compressed at all")
        with pytest.raises(CodecError):
            codecs.decompress(codec, b"")
        good = codecs.compress(codec, b"some payload bytes " * 100)
        with pytest.raises(CodecError):
            codecs.decompress(codec, good[:-3])


def test_unknown_codec_is_a_codec_error() -> None:
    with pytest.raises(CodecError):
        codecs.decompress(7, b"x")  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(COMPRESSED), st.binary(max_size=2000), st.data())
def test_mutated_payloads_never_escape_as_library_errors(codec: Compression, data: bytes, draw: st.DataObject) -> None:
    payload = bytearray(codecs.compress(codec, data))
    for _ in range(draw.draw(st.integers(1, 4))):
        i = draw.draw(st.integers(0, len(payload) - 1))
        payload[i] = draw.draw(st.integers(0, 255))
    cut = draw.draw(st.integers(0, len(payload)))
    try:
        out = codecs.decompress(codec, bytes(payload[:cut]), max_output=1 << 20)
    except CodecError as err:
        assert err.field == "records"
        assert err.position is None or 0 <= err.position <= cut
    else:
        assert len(out) <= 1 << 20


def test_a_gzip_body_whose_trailer_is_wrong_is_read_as_javas_stream_hands_it_over() -> None:
    """``GZIPInputStream`` gives its reader every inflated byte and checks the trailer only on the read after
    the deflate stream ends: the body comes back whole (DumpLogSegments 4.4.0 on
    ``fixtures/oracle/salvage-4.4.0-3298-flip-above`` met a record error in it first); past the cap, nothing."""
    from kafkatool.schema.codecs import Compression, decompress, gzip_body_before_trailer

    body = bytes(range(256)) * 40
    good = gzip.compress(body)
    bad_crc = good[:-8] + bytes([good[-8] ^ 0xFF]) + good[-7:]
    with pytest.raises(CodecError, match="incorrect data check"):
        decompress(Compression.GZIP, bad_crc)
    assert gzip_body_before_trailer(bad_crc, 1 << 20) == body
    assert gzip_body_before_trailer(bad_crc, len(body) - 1) is None
    assert gzip_body_before_trailer(good[:20], 1 << 20) is None  # the body does not reach its end
    assert gzip_body_before_trailer(good, 1 << 20) is None  # the trailer is right: the failure is elsewhere
