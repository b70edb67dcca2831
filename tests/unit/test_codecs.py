"""Codecs: every codec vector from independent implementations, bounds, and Kafka's LZ4 quirk."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkatool.errors import CodecError
from kafkatool.model import Compression
from kafkatool.schema import codecs
from tests.conftest import SHARED, shared_dir


def codec_vectors() -> list[str]:
    root = SHARED / "vectors"
    if not root.is_dir():
        return []
    return sorted(str(p.relative_to(root).with_suffix("")) for p in root.glob("*/*.json")
                  if json.loads(p.read_text())["kind"] == "codec_payload")


@pytest.mark.parametrize("name", codec_vectors())
def test_codec_vector(name: str) -> None:
    root = shared_dir("vectors")
    meta = json.loads((root / f"{name}.json").read_text())
    data = (root / f"{name}.bin").read_bytes()
    codec = Compression[meta["expected"]["codec"].upper()]
    if meta["expect_error"]:
        with pytest.raises(CodecError):
            codecs.decompress(codec, data)
        return
    assert codecs.decompress(codec, data).hex() == meta["expected"]["decompressed_hex"]


@given(st.binary(max_size=200_000), st.sampled_from(list(Compression)), st.sampled_from([0, 1, 2]))
def test_round_trip(data: bytes, codec: Compression, magic: int) -> None:
    assert codecs.decompress(codec, codecs.compress(codec, data, magic=magic), magic=magic) == data


@pytest.mark.parametrize("codec", [c for c in Compression if c is not Compression.NONE])
def test_output_bound(codec: Compression) -> None:
    payload = codecs.compress(codec, b"\0" * 1_000_000)
    with pytest.raises(CodecError):
        codecs.decompress(codec, payload, max_output=10_000)


def test_lz4_broken_header_checksum_is_magic_0_only() -> None:
    """KAFKA-3160: magic 0 writers hashed the magic bytes too; Kafka skips the check for magic 0 only."""
    broken = codecs.compress(Compression.LZ4, b"hello kafka" * 50, magic=0)
    proper = codecs.compress(Compression.LZ4, b"hello kafka" * 50, magic=1)
    assert broken[6] != proper[6] and broken[:6] == proper[:6]
    assert codecs.decompress(Compression.LZ4, broken, magic=0) == b"hello kafka" * 50
    assert codecs.decompress(Compression.LZ4, proper, magic=0) == b"hello kafka" * 50
    with pytest.raises(CodecError, match="checksum"):
        codecs.decompress(Compression.LZ4, broken, magic=1)


def test_lz4_frames_from_the_lz4_library_decode() -> None:
    """python-lz4 (the reference C library) writes frames; we read them, checksums and all."""
    import lz4.frame

    data = bytes(range(256)) * 2000
    for checksums in (False, True):
        frame = lz4.frame.compress(data, block_checksum=checksums, content_checksum=checksums,
                                   store_size=checksums, block_size=lz4.frame.BLOCKSIZE_MAX64KB,
                                   block_linked=False)
        assert codecs.decompress(Compression.LZ4, frame) == data
    assert lz4.frame.decompress(codecs.compress(Compression.LZ4, data)) == data


def test_garbage_is_a_codec_error() -> None:
    for codec in (Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD):
        with pytest.raises(CodecError):
            codecs.decompress(codec, b"\x01\x02\x03\x04 not compressed at all")
