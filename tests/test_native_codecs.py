"""The native codecs (kafkatool/_core/src/codecs.rs) against the Python reference (kafkatool.schema.codecs).

Both paths run through :func:`kafkatool.schema.codecs.decompress`, once with the native core and once with
``KAFKATOOL_NATIVE=0``: the results (bytes, or the CodecError's field, reason and position) must be identical on
every compressed batch and legacy wrapper of ../shared (corpus, vectors) and fixtures/, on generated payloads,
and on truncated and mutated ones.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkatool.errors import DecodeError
from kafkatool.model import Compression
from kafkatool.schema import codecs, native
from tests.conftest import REPO, SHARED
from tests.fuzz.lz4_blocks import frame, random_block
from tests.fuzz.native import python_path

pytestmark = pytest.mark.skipif(native.core() is None, reason=f"native core unusable: {native.why_not()}")

CODECS = [Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD]
Payload = tuple[Compression, bytes, int]


def outcome(fn: Callable[[], bytes]) -> tuple:
    """The result of ``fn`` as comparable data: the bytes, or the error's type, field, reason, position."""
    try:
        return ("ok", fn())
    except DecodeError as err:
        return ("error", type(err).__name__, err.field, err.reason, err.position)


def both(codec: Compression, data: bytes, magic: int, max_output: int | None = None) -> tuple:
    """Decompress with both paths, assert they agree, and return the outcome."""
    def run() -> bytes:
        return codecs.decompress(codec, data, magic=magic, max_output=max_output)

    fast = outcome(run)
    with python_path():
        slow = outcome(run)
    assert fast == slow, (codec, magic, max_output, data[:64].hex())
    return fast


# --- the reference material ---------------------------------------------------------------------------


def _legacy_payloads(msg: bytes, magic: int) -> Iterator[Payload]:
    attributes = msg[5]
    pos = 6 + (8 if magic == 1 else 0)
    (klen,) = struct.unpack_from(">i", msg, pos)
    pos += 4 + max(klen, 0)
    (vlen,) = struct.unpack_from(">i", msg, pos)
    pos += 4
    if attributes & 0x07 and 0 <= vlen <= len(msg) - pos:
        yield Compression(attributes & 0x07), msg[pos:pos + vlen], magic


def framed_payloads(buf: bytes) -> Iterator[Payload]:
    """Every compressed batch payload and legacy wrapper value in log-framed ``buf`` (stops at damage)."""
    pos = 0
    while len(buf) - pos >= 17:
        (size,) = struct.unpack_from(">i", buf, pos + 8)
        magic = buf[pos + 16]
        end = pos + 12 + size
        if size < 14 or end > len(buf):
            return
        try:
            if magic == 2 and size >= 49:
                codec = struct.unpack_from(">h", buf, pos + 21)[0] & 0x07
                if 0 < codec <= 4:
                    yield Compression(codec), buf[pos + 61:end], 2
            elif magic in (0, 1):
                yield from _legacy_payloads(buf[pos + 12:end], magic)
        except (struct.error, ValueError, IndexError):
            pass
        pos = end


def reference_payloads() -> list[tuple[str, Payload]]:
    """(name, payload) of every compressed payload in ../shared and fixtures/."""
    found: list[tuple[str, Payload]] = []
    logs = sorted((SHARED / "corpus").rglob("*.log")) + sorted((REPO / "fixtures").rglob("*.log"))
    for path in logs:
        found += [(f"{path}#{i}", p) for i, p in enumerate(framed_payloads(path.read_bytes()))]
    import json

    for side in sorted((SHARED / "vectors").glob("*/*.json")):
        meta = json.loads(side.read_text())
        data = side.with_suffix(".bin").read_bytes() if side.with_suffix(".bin").is_file() else b""
        name = str(side.with_suffix(""))
        if meta["kind"] == "codec_payload":
            label = (meta.get("expected") or {}).get("codec") or next(
                c.removeprefix("codec_").split("_")[0] for c in meta["category"] if c.startswith("codec_"))
            codec = Compression[label.upper()]
            found += [(f"{name}@{m}", (codec, data, m)) for m in (0, 1, 2)]
        elif meta["kind"] == "legacy_message" and len(data) > 14 and data[4] in (0, 1):
            with suppress(struct.error, ValueError):
                found += [(name, p) for p in _legacy_payloads(data, data[4])]
        elif meta["kind"] in ("record_batch", "message_set", "log_segment"):
            found += [(f"{name}#{i}", p) for i, p in enumerate(framed_payloads(data))]
    return found


REFERENCE = reference_payloads()


def test_reference_material_has_every_codec() -> None:
    """The reference material exercises each codec (else the differential tests below prove little)."""
    if not REFERENCE:
        pytest.skip("no reference material")
    assert {p[0] for _, p in REFERENCE} == set(CODECS)


@pytest.mark.parametrize("name,payload", REFERENCE, ids=[n for n, _ in REFERENCE])
def test_reference_payload(name: str, payload: Payload) -> None:
    """Same bytes or same error on each reference payload, whole, capped below its size, and truncated."""
    codec, data, magic = payload
    result = both(codec, data, magic)
    if result[0] == "ok":
        core = native.core()
        assert core is not None
        # Handed back by design: zstd frames without a content checksum.
        checksummed_zstd = codec is not Compression.ZSTD or (len(data) > 4 and data[4] & 0x04)
        if checksummed_zstd:
            assert core.decompress(codec.value, data, magic, codecs.DEFAULT_MAX_OUTPUT) == result[1], name
        if result[1]:
            both(codec, data, magic, max_output=max(1, len(result[1]) - 1))
    for cut in sorted({0, 1, len(data) // 2, len(data) - 4, len(data) - 1} - {len(data)}):
        if 0 <= cut < len(data):
            both(codec, data[:cut], magic)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(CODECS), st.sampled_from([0, 1, 2]), st.binary(max_size=3000), st.integers(1, 40))
def test_generated(codec: Compression, magic: int, chunk: bytes, repeat: int) -> None:
    """Payloads compressed as Kafka's producer does decode the same, and under a cap below their size."""
    raw = chunk * repeat
    data = codecs.compress(codec, raw, magic=magic)
    assert both(codec, data, magic) == ("ok", raw)
    if raw:
        both(codec, data, magic, max_output=max(1, len(raw) // 2))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(CODECS), st.sampled_from([0, 2]), st.binary(min_size=1, max_size=600), st.integers(1, 30),
       st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(1, 255)), min_size=1, max_size=3),
       st.integers(0, 1 << 20))
def test_mutated(codec: Compression, magic: int, chunk: bytes, repeat: int, flips: list[tuple[int, int]],
                 cut: int) -> None:
    """Flipped bytes and truncations give the same bytes or the same error on both paths."""
    data = bytearray(codecs.compress(codec, chunk * repeat, magic=magic))
    for at, xor in flips:
        data[at % len(data)] ^= xor
    both(codec, bytes(data), magic)
    both(codec, bytes(data[:cut % (len(data) + 1)]), magic)


def test_concatenated_and_trailing() -> None:
    """Concatenated gzip members and zstd frames, xerial streams, and bytes after the end."""
    raw = bytes(range(256)) * 50
    for codec in CODECS:
        one = codecs.compress(codec, raw)
        for data in (one + one, one + b"\x00" * 7, one + b"\x1f\x8b\x08\x00", one + one[:10]):
            both(codec, data, 2)
    zstd_skippable = struct.pack("<II", 0x184D2A53, 3) + b"abc"
    both(Compression.ZSTD, zstd_skippable + codecs.compress(Compression.ZSTD, raw), 2)
    both(Compression.ZSTD, zstd_skippable, 2)


def test_bombs_are_refused_the_same_way() -> None:
    """A payload inflating past the cap fails identically (the native path hands it back)."""
    raw = b"\x00" * (2 << 20)
    for codec in CODECS:
        assert both(codec, codecs.compress(codec, raw), 2, max_output=1 << 20)[0] == "error"


def test_fixture_paths_exist() -> None:
    """The fixtures folder this module reads is where it is expected."""
    assert isinstance(REPO / "fixtures", Path)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000), st.integers(1, 40), st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(1, 255)),
                                                               max_size=2))
def test_zstd_with_checksum(chunk: bytes, repeat: int, flips: list[tuple[int, int]]) -> None:
    """zstd frames with a content checksum (the ones the native path decodes itself), intact and damaged."""
    import zstandard

    data = bytearray(zstandard.ZstdCompressor(level=3, write_checksum=True).compress(chunk * repeat))
    if not flips:
        core = native.core()
        assert core is not None
        assert core.decompress(Compression.ZSTD.value, bytes(data), 2, 1 << 20) == chunk * repeat
    for at, xor in flips:
        data[at % len(data)] ^= xor
    both(Compression.ZSTD, bytes(data), 2)


def test_lz4_block_end_rules() -> None:
    """liblz4's end-of-block rules (last literals, MFLIMIT, the capacity) on random sequence layouts: the native
    path decodes a block only where liblz4 (the Python path) does, to the same bytes."""
    rng = random.Random(23)
    head = codecs.compress(Compression.LZ4, b"")[:7]
    decoded = 0
    for _ in range(1500):
        block = random_block(rng, rng.choice([200, 5000, 65536 - rng.randrange(0, 40), 65536]))
        frame = head + struct.pack("<I", len(block)) + block + struct.pack("<I", 0)
        decoded += both(Compression.LZ4, frame, 2)[0] == "ok"
    assert decoded > 100


def test_lz4_block_starting_like_a_size_prefix() -> None:
    """A block whose first 4 bytes read as a little-endian size at most the frame's block size: cramjam alone would
    take them for a size prefix and decode from the fifth byte; Kafka (lz4-java) decodes the whole block, and so
    do both paths (checked against lz4-java by tests/kafka/test_lz4.py)."""
    block = bytes.fromhex("11600100509b6ba11a28")  # "`", a match of 5 at offset 1, then 5 literals
    assert both(Compression.LZ4, frame(block, 256 << 10), 2) == ("ok", b"`" * 6 + bytes.fromhex("9b6ba11a28"))
