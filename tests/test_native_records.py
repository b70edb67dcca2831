"""The native record decoder (kafkatool/_core/src/records.rs) against the Python loop (kafkatool.schema.record_batch).

:func:`kafkatool.schema.record_batch.decode_records` runs once with the native core and once with
``KAFKATOOL_NATIVE=0``: the records (every field, control records included) or the error (type, field, reason,
position) must be identical on every magic 2 batch of ../shared (corpus, vectors) and fixtures/, on generated
batches, and on mutated ones.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkatool.errors import DecodeError
from kafkatool.model import Compression, Header, Record
from kafkatool.schema import native, record_batch
from kafkatool.schema.varint import encode_varint
from tests.conftest import REPO, SHARED
from tests.test_native_codecs import python_path

pytestmark = pytest.mark.skipif(native.core() is None, reason=f"native core unusable: {native.why_not()}")


def outcome(buf: bytes, pos: int) -> tuple:
    """The records of the batch at ``pos`` as plain data, or its error."""
    try:
        batch = record_batch.parse_batch_header(buf, pos)
        records = record_batch.decode_records(batch, record_batch.records_payload(buf, batch))
        return ("ok", [dataclasses.astuple(r) for r in records])
    except DecodeError as err:
        return ("error", type(err).__name__, err.field, err.reason, err.position)


def both(buf: bytes, pos: int = 0) -> tuple:
    """Decode with both paths, assert they agree, return the outcome."""
    fast = outcome(buf, pos)
    with python_path():
        slow = outcome(buf, pos)
    assert fast == slow
    return fast


def v2_batches(buf: bytes) -> Iterator[int]:
    """Positions of the whole magic 2 batches in log-framed ``buf`` (stops at damage)."""
    pos = 0
    while len(buf) - pos >= record_batch.HEADER_SIZE:
        (size,) = struct.unpack_from(">i", buf, pos + 8)
        end = pos + 12 + size
        if size < 14 or end > len(buf):
            return
        if buf[pos + 16] == 2 and size >= record_batch.BATCH_OVERHEAD:
            yield pos
        pos = end


def reference_files() -> list[Path]:
    """Every .log of ../shared/corpus and fixtures/, and every framed vector of ../shared/vectors."""
    files = sorted((SHARED / "corpus").rglob("*.log")) + sorted((REPO / "fixtures").rglob("*.log"))
    return files + sorted((SHARED / "vectors").glob("*/*.bin"))


FILES = reference_files()


@pytest.mark.parametrize("path", FILES, ids=[str(p) for p in FILES])
def test_reference_file(path: Path) -> None:
    """Every batch of every reference file decodes to the same records (or error) on both paths."""
    buf = path.read_bytes()
    for pos in v2_batches(buf):
        both(buf, pos)


def test_native_path_is_taken() -> None:
    """A healthy batch goes through the native decoder (it returns columns, not None)."""
    recs = [Record(0, 0, b"k", b"v", (Header(b"h", None),), offset_delta=0)]
    buf = record_batch.build_records_batch(recs, base_offset=5, base_timestamp=1)
    core = native.core()
    assert core is not None
    assert core.decode_records(buf[record_batch.HEADER_SIZE:], 1) is not None
    assert both(buf)[0] == "ok"


headers_st = st.lists(st.builds(Header, st.binary(max_size=8), st.none() | st.binary(max_size=8)), max_size=3)
record_st = st.tuples(st.integers(-(1 << 40), 1 << 40), st.none() | st.binary(max_size=300),
                      st.none() | st.binary(max_size=300), headers_st, st.integers(-128, 127))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(record_st, max_size=12), st.sampled_from(list(Compression)), st.integers(0, 0x7F),
       st.integers(-1, (1 << 31) - 1), st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(1, 255)), max_size=3))
def test_generated(specs: list, codec: Compression, attributes: int, base_sequence: int,
                   flips: list[tuple[int, int]]) -> None:
    """Generated batches (every codec, transactional/control flags, wrapping sequences), intact and mutated."""
    recs = [Record(0, 0, key, value, tuple(hs), attributes=attr, offset_delta=i, timestamp_delta=ts)
            for i, (ts, key, value, hs, attr) in enumerate(specs)]
    buf = bytearray(record_batch.build_records_batch(recs, base_offset=100, base_timestamp=1_000, compression=codec,
                                                     attributes=attributes & 0x78, base_sequence=base_sequence,
                                                     producer_id=7, producer_epoch=0))
    both(bytes(buf))
    for at, xor in flips:
        buf[record_batch.HEADER_SIZE - 4 + at % (len(buf) - record_batch.HEADER_SIZE + 4)] ^= xor
    both(bytes(buf))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200), st.integers(-2, 20))
def test_arbitrary_record_bytes(payload: bytes, count: int) -> None:
    """Arbitrary bytes as the records of an uncompressed batch: same records or same error."""
    buf = record_batch.build_batch(base_offset=0, partition_leader_epoch=0, attributes=0, last_offset_delta=0,
                                   base_timestamp=0, max_timestamp=0, producer_id=-1, producer_epoch=-1,
                                   base_sequence=-1, records_count=count, payload=payload)
    both(buf)


def test_varint_edges() -> None:
    """Overlong and 64-bit-overflowing varints, 5-byte values above Int32, on both paths."""
    def one(body: bytes) -> bytes:
        rec = encode_varint(len(body)) + body
        return record_batch.build_batch(base_offset=0, partition_leader_epoch=0, attributes=0, last_offset_delta=0,
                                        base_timestamp=0, max_timestamp=0, producer_id=-1, producer_epoch=-1,
                                        base_sequence=-1, records_count=1, payload=rec)

    for ts in (b"\xff" * 9 + b"\x01", b"\xff" * 9 + b"\x02", b"\xff" * 9 + b"\x7f", b"\xff" * 10, b"\x00"):
        for off in (b"\x00", b"\xfe\xff\xff\xff\x7f", b"\xff\xff\xff\xff\x0f", b"\xff" * 5):
            both(one(b"\x00" + ts + off + b"\x01\x01\x00"))
