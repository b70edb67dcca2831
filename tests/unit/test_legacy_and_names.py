"""Legacy messages against kafka-python both ways, declaration/fast-path agreement, and file names."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkatool.model import Compression, TopicPartition
from kafkatool.schema import legacy, offset_index, producer_snapshot, time_index, txn_index
from kafkatool.schema.filenames import (
    FileKind,
    classify,
    in_flight_suffix,
    offset_from_name,
    parse_partition_dir,
    segment_file_name,
)
from kafkatool.schema.log_segment import walk_log

CODECS = {0: Compression.NONE, 1: Compression.GZIP, 2: Compression.SNAPPY, 3: Compression.LZ4}


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec_id", [0, 1, 2, 3])
def test_kafka_python_legacy_sets_decode(magic: int, codec_id: int) -> None:
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec_id, batch_size=1 << 20)
    for i in range(6):
        builder.append(i, timestamp=1_600_000_000_000 + i if magic else None, key=b"k%d" % i if i % 2 else None,
                       value=b"value-%d " % i * 20)
    data = bytes(builder.build())
    entries = list(walk_log(data, "kp", deep=True))
    records = [r for e in entries for r in e.records]
    assert [r.offset for r in records] == list(range(6))
    assert [r.value for r in records] == [b"value-%d " % i * 20 for i in range(6)]
    assert [r.key for r in records] == [None, b"k1", None, b"k3", None, b"k5"]
    assert all(e.crc_valid for e in entries) and all(r.crc_valid for r in records)
    if magic:
        assert [r.timestamp for r in records] == [1_600_000_000_000 + i for i in range(6)]


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec_id", [1, 2, 3])
def test_our_legacy_wrappers_decode_in_kafka_python(magic: int, codec_id: int) -> None:
    from kafka.record.legacy_records import LegacyRecordBatch

    messages = [legacy.build_message(magic=magic, attributes=0, key=None, value=b"v%d" % i,
                                     timestamp=1000 + i if magic else None) for i in range(3)]
    offsets = [0, 1, 2] if magic else [40, 41, 42]
    data = legacy.build_wrapper(magic=magic, codec=CODECS[codec_id], offsets=offsets, messages=messages,
                                last_offset=42, timestamp=1002 if magic else None)
    batch = LegacyRecordBatch(data, magic)
    assert batch.validate_crc()
    got = list(batch)
    assert [r.offset for r in got] == [40, 41, 42]
    assert [r.value for r in got] == [b"v0", b"v1", b"v2"]


@given(st.integers(0, 2**63 - 1), st.integers(0, 2**31 - 1), st.integers(0, 2**32 - 1),
       st.sampled_from([0, 1]), st.integers(-128, 127))
def test_legacy_head_fast_matches_construct(offset: int, size: int, crc: int, magic: int, attrs: int) -> None:
    data = legacy.ENTRY_HEAD.build({"offset": offset, "message_size": size, "crc": crc, "magic": magic,
                                    "attributes": attrs})
    assert legacy.ENTRY_HEAD_STRUCT.unpack(data) == (offset, size, crc, magic, attrs)


@given(st.lists(st.tuples(st.integers(-(2**31), 2**31 - 1), st.integers(-(2**31), 2**31 - 1)), max_size=20))
def test_index_fast_matches_construct(pairs: list[tuple[int, int]]) -> None:
    data = b"".join(offset_index.ENTRY.build({"relative_offset": a, "position": b}) for a, b in pairs)
    assert [(e.offset, e.position) for e in offset_index.parse_offset_index_slots(data, 0)] == pairs
    tdata = b"".join(time_index.ENTRY.build({"timestamp": b, "relative_offset": a}) for a, b in pairs)
    assert [(e.offset, e.timestamp) for e in time_index.parse_time_index_slots(tdata, 0)] == pairs


def test_fixed_sizes_come_from_the_declarations() -> None:
    assert offset_index.ENTRY_SIZE == 8
    assert time_index.ENTRY_SIZE == 12
    assert txn_index.ENTRY_SIZE == 34
    assert producer_snapshot.ENTRY_SIZE == 46
    assert producer_snapshot.HEADER_STRUCT.size == 10


@pytest.mark.parametrize(("name", "kind", "offset", "flight"), [
    ("00000000000000000042.log", FileKind.LOG, 42, None),
    ("00000000000000000042.index.deleted", FileKind.OFFSET_INDEX, 42, ".deleted"),
    ("00000000000000000000.log.cleaned", FileKind.LOG, 0, ".cleaned"),
    ("00000000000000000100.timeindex.swap", FileKind.TIME_INDEX, 100, ".swap"),
    ("00000000000000000100.txnindex", FileKind.TXN_INDEX, 100, None),
    ("00000000000000000100.snapshot", FileKind.PRODUCER_SNAPSHOT, 100, None),
    ("00000000000000000045-0000000003.checkpoint", FileKind.KRAFT_SNAPSHOT, 45, None),
    ("leader-epoch-checkpoint", FileKind.LEADER_EPOCH_CHECKPOINT, None, None),
    (".kafka_cleanshutdown", FileKind.CLEAN_SHUTDOWN, None, None),
    ("42.log", FileKind.UNKNOWN, None, None),
    ("passwd", FileKind.UNKNOWN, None, None),
])
def test_file_names(name: str, kind: FileKind, offset: int | None, flight: str | None) -> None:
    assert classify(name) is kind
    assert offset_from_name(name) == offset
    assert in_flight_suffix(name) == flight


def test_partition_dirs() -> None:
    assert parse_partition_dir("orders-0") == (TopicPartition("orders", 0), "")
    assert parse_partition_dir("my-topic-12") == (TopicPartition("my-topic", 12), "")
    uid = "0123456789abcdef0123456789abcdef"
    assert parse_partition_dir(f"orders-3.{uid}-delete") == (TopicPartition("orders", 3), "delete")
    assert parse_partition_dir(f"orders-3.{uid}-future") == (TopicPartition("orders", 3), "future")
    assert parse_partition_dir("orders") is None
    assert segment_file_name(7, ".log") == "00000000000000000007.log"
