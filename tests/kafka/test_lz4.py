"""lz4 as Kafka decodes it, against lz4-java itself: blocks through ``LZ4Factory.fastestInstance().safeDecompressor()``
(JNI liblz4, what Kafka's ``Lz4BlockInputStream`` holds) and whole frames through ``Lz4BlockInputStream`` (magic 0
ignores the descriptor checksum), one JVM per Kafka version running ``tests/kafka/lz4/Lz4Oracle.java`` (compiled
here with javac). Each result must be what the Python path (cramjam's liblz4) and the native core
(``kafkatool/_core/src/codecs.rs``, which may hand a payload back, never decode it otherwise) give.

The blocks: random sequence layouts, blocks whose first 4 bytes read as a small size (cramjam's size-prefix guess),
hand-made edge cases around liblz4's switch from its fast loop to its safe loop (each with its own end rules), and
the lz4 blocks of the fuzz findings; the frames: Kafka-written frames for magic 0, 1 and 2, mutated and truncated.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import struct
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from kafkatool.errors import CodecError
from kafkatool.model import Compression
from kafkatool.schema import codecs, native
from tests.fuzz.lz4_blocks import edge_blocks, frame, hand_blocks, random_block
from tests.fuzz.native import python_path
from tests.kafka import versions
from tests.test_native_codecs import framed_payloads

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "lz4" / "Lz4Oracle.java"
FINDINGS = HERE.parent / "fuzz" / "findings"
BLOCK, FRAME = 0, 1
Case = tuple[int, int, bytes]  # kind, capacity (block) or magic (frame), bytes
Outcome = tuple[str, int, str] | tuple[str]


@cache
def _driver(version: str, work: Path) -> str:
    """The classpath of ``version`` with the compiled driver in front."""
    cp = versions.classpath(version)
    classes = work / f"lz4-oracle-{version}"
    classes.mkdir(parents=True, exist_ok=True)
    javac = shutil.which("javac")
    if javac is None:  # like the jars: a failure under CI, where the live oracle must run
        (pytest.fail if os.environ.get("CI") else pytest.skip)("no javac to compile tests/kafka/lz4/Lz4Oracle.java")
    subprocess.run([javac, "-d", str(classes), "-cp", cp, str(DRIVER)], check=True, capture_output=True)
    return f"{classes}:{cp}"


def kafka_outcomes(version: str, work: Path, cases: list[Case]) -> tuple[str, list[Outcome]]:
    """Run the driver on ``cases``: its first line and one outcome per case."""
    path = work / "cases.bin"
    path.write_bytes(b"".join(struct.pack(">Bii", k, a, len(d)) + d for k, a, d in cases))
    proc = subprocess.run([versions.java_binary(), *versions.JVM_OPTS, "-cp", _driver(version, work), "Lz4Oracle",
                           str(path)], check=True, capture_output=True, text=True, timeout=600)
    head, *lines = proc.stdout.splitlines()
    assert len(lines) == len(cases), proc.stderr[-2000:]
    return head, [("ok", int(w[1]), w[2]) if (w := line.split())[0] == "ok" else ("error",) for line in lines]


def _digest(data: bytes | None) -> Outcome:
    return ("error",) if data is None else ("ok", len(data), hashlib.sha256(data).hexdigest())


def python_block(block: bytes, capacity: int) -> Outcome:
    """The Python path's block decode (``codecs._lz4_block``)."""
    scratch = bytearray(capacity)
    try:
        return _digest(bytes(scratch[:codecs._lz4_block(block, scratch, 0)]))
    except CodecError:
        return ("error",)


def native_block(block: bytes, capacity: int) -> Outcome | None:
    """The native core's block decode (inside a frame), ``None`` when it hands the block back."""
    core = native.core()
    assert core is not None
    out = core.decompress(Compression.LZ4.value, frame(block, capacity), 2, 64 << 20)
    return None if out is None else _digest(bytes(out))


def frame_outcome(payload: bytes, magic: int) -> Outcome:
    """``codecs.decompress`` on ``payload`` (the native core first, unless in a ``python_path`` block)."""
    try:
        return _digest(codecs.decompress(Compression.LZ4, payload, magic=magic))
    except CodecError:
        return ("error",)


# --- the cases ---------------------------------------------------------------------------------------------


def random_blocks(rng: random.Random, count: int) -> Iterator[tuple[bytes, int]]:
    """Random sequence layouts (tests.fuzz.lz4_blocks) and blocks starting with a small little-endian size."""
    for _ in range(count):
        capacity = rng.choice([64 << 10, 64 << 10, 256 << 10])
        if rng.random() < 0.7:
            yield random_block(rng, rng.choice([20, 200, 5000, capacity - rng.randrange(0, 80), capacity])), capacity
        else:
            size = rng.randrange(0, capacity + 1)
            yield struct.pack("<I", size) + random_block(rng, rng.choice([20, 200, min(size, 5000) + 1])), capacity


def finding_blocks() -> Iterator[tuple[bytes, int]]:
    """The blocks of the lz4 frames in the fuzz findings."""
    for payload, _magic in finding_frames():
        if len(payload) < 7 or payload[:4] != struct.pack("<I", codecs.LZ4_MAGIC):
            continue
        capacity = codecs.LZ4_BLOCK_SIZES.get((payload[5] >> 4) & 7)
        flg = payload[4]
        pos = 7 + (8 if flg & codecs.LZ4_FLG_CONTENT_SIZE else 0)
        while capacity and len(payload) - pos >= 4:
            (size,) = struct.unpack_from("<I", payload, pos)
            pos += 4
            if size == 0 or size & codecs.LZ4_FRAME_INCOMPRESSIBLE_MASK or size > len(payload) - pos:
                break
            yield payload[pos:pos + size], capacity
            pos += size + (4 if flg & codecs.LZ4_FLG_BLOCK_CHECKSUM else 0)


def finding_frames() -> Iterator[tuple[bytes, int]]:
    """The lz4 payloads of the fuzz findings (decompress inputs, and the lz4 batches of the segment ones)."""
    for path in sorted(FINDINGS.glob("*.bin")):
        data = path.read_bytes()
        if path.stem.startswith("decompress-"):
            if len(data) >= 2 and 1 + data[0] % 4 == Compression.LZ4.value:
                yield data[2:], data[1] % 3
            continue
        for codec, payload, magic in framed_payloads(data[1:]):
            if codec is Compression.LZ4:
                yield payload, magic


def frames(rng: random.Random, count: int) -> Iterator[tuple[bytes, int]]:
    """Kafka-written frames (kafkatool's writer, as ``Lz4BlockOutputStream``) for magic 0, 1, 2, intact, mutated
    and truncated, and the findings' frames."""
    yield from finding_frames()
    for _ in range(count):
        magic = rng.choice([0, 1, 2])
        raw = rng.randbytes(rng.randrange(0, 300)) * rng.randrange(1, 400)
        data = bytearray(codecs.compress(Compression.LZ4, raw, magic=magic))
        roll = rng.random()
        if roll < 0.4:
            for _ in range(rng.randrange(1, 4)):
                data[rng.randrange(len(data))] ^= rng.randrange(1, 256)
        elif roll < 0.6:
            del data[rng.randrange(len(data)):]
        yield bytes(data), magic


# --- the tests ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("lz4")


def test_blocks_decode_as_lz4_java(kafka_version: str, work: Path) -> None:
    """Every block: lz4-java's result (bytes or LZ4Exception) is the Python path's, and the native core's unless
    it hands the block back (offset 0 only)."""
    if native.core() is None:
        pytest.skip(native.why_not())
    rng = random.Random(f"lz4-blocks-{kafka_version}")
    blocks = [*hand_blocks(), *finding_blocks(), *edge_blocks(rng), *random_blocks(rng, 4000)]
    head, kafka = kafka_outcomes(kafka_version, work, [(BLOCK, cap, block) for block, cap in blocks])
    assert "LZ4JNISafeDecompressor" in head, head  # JNI liblz4, as on the brokers
    decoded = handed_back = 0
    for (block, capacity), want in zip(blocks, kafka, strict=True):
        assert python_block(block, capacity) == want, (capacity, block[:80].hex())
        ours = native_block(block, capacity)
        if ours is None:
            handed_back += want[0] == "ok"
        else:
            assert ours == want, (capacity, block[:80].hex())
        decoded += want[0] == "ok"
    assert decoded > 1000 and handed_back < len(blocks) // 100, (decoded, handed_back)


def test_frames_read_as_kafka_reads_them(kafka_version: str, work: Path) -> None:
    """Whole frames through ``Lz4BlockInputStream`` (magic 0: the descriptor checksum ignored): the same bytes or
    an error, on both paths."""
    cases = list(frames(random.Random(f"lz4-frames-{kafka_version}"), 600))
    _head, kafka = kafka_outcomes(kafka_version, work, [(FRAME, magic, payload) for payload, magic in cases])
    for (payload, magic), want in zip(cases, kafka, strict=True):
        assert frame_outcome(payload, magic) == want, (magic, payload[:80].hex())
        with python_path():
            assert frame_outcome(payload, magic) == want, (magic, payload[:80].hex())
