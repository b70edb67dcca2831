"""Every decoder under random and mutated input (issue 9): a result or a typed defect with a byte position.

Bounded for CI (a few dozen examples per decoder and strategy, no deadline); the long runs go through
``python -m tests.fuzz``. Seeds are the committed fixtures plus, when present, the Kafka-made corpus.
"""

from __future__ import annotations

import random
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkatool.errors import CodecError, DecodeError
from kafkatool.model import Compression, Defect, RecordBatch
from kafkatool.schema import codecs, legacy
from kafkatool.schema import record_batch as rb
from kafkatool.schema.log_segment import walk_log
from tests.fuzz.targets import FUZZ_MAX_OUTPUT, TARGETS, Finding, Target, check, fix_crc, mutate, seeds

FAST = settings(max_examples=100, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
NAMES = sorted(TARGETS)


@pytest.mark.parametrize("name", NAMES)
@FAST
@given(data=st.binary(max_size=2048))
def test_random_bytes(name: str, data: bytes) -> None:
    check(TARGETS[name], data)


@pytest.mark.parametrize("name", NAMES)
@FAST
@given(seed=st.integers(min_value=0, max_value=2**32), restamp=st.booleans())
def test_mutated_seeds(name: str, seed: int, restamp: bool) -> None:
    pool = seeds(name)
    rnd = random.Random(seed)
    data = mutate(rnd.choice(pool), rnd, pool)
    check(TARGETS[name], fix_crc(data) if restamp else data)


@pytest.mark.parametrize("name", NAMES)
def test_every_seed_decodes_within_the_contract(name: str) -> None:
    """The seeds themselves (valid Kafka files) pass, and there is more than a placeholder for each decoder."""
    pool = seeds(name)
    assert pool and (len(pool) > 1 or pool[0]), f"no seeds for {name}"
    for data in pool[:50]:
        check(TARGETS[name], data)


def test_the_checker_reports_a_broken_decoder() -> None:
    """The contract check is not vacuous: an uncaught error and a position-less decode error are both findings."""
    def crashes(data: bytes) -> object:
        return data[10 ** 6]

    def unlocated(data: bytes) -> object:
        raise DecodeError("field", "no position")

    with pytest.raises(Finding, match="IndexError"):
        check(Target("crash", crashes, ()), b"x")
    with pytest.raises(Finding, match="without a byte position"):
        check(Target("unlocated", unlocated, ()), b"x")


def _first_batch(name: str = "batch") -> bytes:
    for data in seeds(name):
        if len(data) >= rb.HEADER_SIZE and data[rb.MAGIC_OFFSET] == rb.MAGIC:
            (length,) = struct.unpack_from(">i", data, 8)
            return data[:rb.LOG_OVERHEAD + length]
    raise AssertionError("no magic 2 batch among the seeds")


@pytest.mark.parametrize("value", [0, -1, -(1 << 31), (1 << 31) - 1, 13])
@pytest.mark.parametrize("offset", [8, 57])  # batch_length, records_count
def test_length_fields_at_their_extremes(value: int, offset: int) -> None:
    """A batch length or record count of 0, negative or 2^31-1: a located defect, and the walk goes on."""
    batch = bytearray(_first_batch())
    struct.pack_into(">i", batch, offset, value)
    data = bytes(fix_crc(bytes(batch))) + _first_batch()
    check(TARGETS["batch"], bytes(batch))
    items = list(walk_log(data, "f", deep=True, max_output=FUZZ_MAX_OUTPUT))
    defects = [i for i in items if isinstance(i, Defect)]
    assert defects and all(d.position is not None and 0 <= d.position < len(data) for d in defects)


def test_huge_batch_length_in_a_small_buffer_is_a_torn_tail() -> None:
    data = bytearray(1024)
    struct.pack_into(">qi", data, 0, 0, (1 << 31) - 1)
    data[rb.MAGIC_OFFSET] = rb.MAGIC
    items = list(walk_log(bytes(data), "f", deep=True))
    assert [(i.code, i.position) for i in items if isinstance(i, Defect)] == [("torn-tail", 0)]


@pytest.mark.parametrize("codec", [c for c in Compression if c is not Compression.NONE], ids=lambda c: c.label)
def test_decompression_bombs_are_refused_with_a_defect(codec: Compression) -> None:
    """A payload inflating past the cap ends in a CodecError, through the batch decoder as through the codec."""
    cap = 1 << 16
    bomb = codecs.compress(codec, bytes(cap * 4))
    with pytest.raises(CodecError, match="more than 65536 bytes"):
        codecs.decompress(codec, bomb, max_output=cap)
    assert codecs.decompress(codec, codecs.compress(codec, bytes(cap)), max_output=cap) == bytes(cap)
    batch = rb.build_batch(base_offset=0, partition_leader_epoch=0, attributes=codec.value, last_offset_delta=0,
                           base_timestamp=0, max_timestamp=0, producer_id=-1, producer_epoch=-1, base_sequence=-1,
                           records_count=1, payload=bomb)
    items = list(walk_log(batch, "f", deep=True, max_output=cap))
    defects = [i for i in items if isinstance(i, Defect)]
    assert isinstance(items[0], RecordBatch)
    assert [d.code for d in defects] == ["record-decode"]
    assert "decompresses to more than" in defects[0].reason and defects[0].position is not None


def test_zstd_frame_claiming_8_gib_is_refused_before_inflating() -> None:
    frame = bytearray(codecs.compress(Compression.ZSTD, b"x" * 100))
    assert frame[4] >> 6 == 0 or codecs.zstd_declared_size(bytes(frame)) == 100
    claim = b"\x28\xb5\x2f\xfd" + bytes([0xE0]) + (8 << 30).to_bytes(8, "little") + bytes(16)
    assert codecs.zstd_declared_size(claim) == 8 << 30
    with pytest.raises(CodecError, match="decompresses to more than") as err:
        codecs.decompress(Compression.ZSTD, claim, max_output=1 << 20)
    assert err.value.position == 0


def test_nested_legacy_wrappers_are_refused_not_recursed() -> None:
    """A compressed wrapper holding another compressed wrapper (Kafka forbids it) is a defect, never recursion."""
    message = legacy.build_message(magic=1, attributes=0, key=None, value=b"v", timestamp=0)
    entry = b""
    for depth in range(50):
        inner = legacy.build_wrapper(magic=1, codec=Compression.GZIP, offsets=[0],
                                     messages=[message], last_offset=depth)
        message = inner[rb.LOG_OVERHEAD:]
        entry = inner
    parsed = legacy.parse_legacy_entry(entry, 0)
    with pytest.raises(DecodeError, match="inner messages must not be compressed") as err:
        legacy.inner_records(parsed)
    assert err.value.position is not None


@pytest.mark.parametrize("codec", [Compression.GZIP, Compression.ZSTD], ids=lambda c: c.label)
def test_record_amplification_bombs_are_refused(codec: Compression) -> None:
    """A small payload inflating to many tiny records counts their memory against the cap, not only the bytes."""
    minimal = bytes([12, 0, 0, 0, 1, 1, 0])  # a 7-byte record: null key and value, no headers

    def batch(n: int) -> bytes:
        return rb.build_batch(base_offset=0, partition_leader_epoch=0, attributes=codec.value,
                              last_offset_delta=n - 1, base_timestamp=0, max_timestamp=0, producer_id=-1,
                              producer_epoch=-1, base_sequence=-1, records_count=n,
                              payload=codecs.compress(codec, minimal * n))

    assert len(rb.parse_batch(batch(1000), max_output=1 << 20).records or []) == 1000
    with pytest.raises(CodecError, match="would take more than 1048576 bytes") as err:
        rb.parse_batch(batch(10_000), max_output=1 << 20)
    assert err.value.position == rb.HEADER_SIZE
    message = legacy.build_message(magic=1, attributes=0, key=None, value=None, timestamp=0)
    wrapper = legacy.build_wrapper(magic=1, codec=codec, offsets=range(20_000), messages=[message] * 20_000,
                                   last_offset=19_999)
    with pytest.raises(CodecError, match="would take more than"):
        legacy.inner_records(legacy.parse_legacy_entry(wrapper, 0), max_output=1 << 20)
