"""The magic 2 declarations: fast path == construct, build(parse) == bytes, and kafka-python as oracle."""

from __future__ import annotations

import struct

from hypothesis import given
from hypothesis import strategies as st

from kafkatool.model import Compression, Header, Record
from kafkatool.schema import record_batch as rb
from kafkatool.schema.varint import VarInt, VarLong, encode_varint, read_varint

int8 = st.integers(-(2**7), 2**7 - 1)
int16 = st.integers(-(2**15), 2**15 - 1)
int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
uint32 = st.integers(0, 2**32 - 1)


@given(st.tuples(int64, int32, int32, st.just(2), uint32, int16, int32, int64, int64, int64, int16, int32, int32))
def test_fast_header_matches_construct(fields: tuple) -> None:
    data = rb.HEADER_STRUCT.pack(*fields)
    parsed = rb.BATCH_HEADER.parse(data)
    assert tuple(parsed[name] for name in rb.FIELD_NAMES) == fields
    assert rb.BATCH_HEADER.build(dict(zip(rb.FIELD_NAMES, fields, strict=True))) == data
    fast = rb.parse_batch_header(data)
    assert tuple(getattr(fast, name) for name in rb.FIELD_NAMES) == fields


def test_header_layout_constants() -> None:
    assert rb.HEADER_SIZE == 61
    assert rb.BATCH_OVERHEAD == 49
    assert rb.MAGIC_OFFSET == 16
    assert rb.FIELD_OFFSETS["attributes"] == 21
    assert rb.FIELD_OFFSETS["records_count"] == 57


@given(st.integers(-(2**31), 2**31 - 1))
def test_varint_fast_matches_construct(value: int) -> None:
    data = VarInt.build(value)
    assert data == encode_varint(value)
    assert VarInt.parse(data) == value
    assert read_varint(data, 0) == (value, len(data))


@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_fast_matches_construct(value: int) -> None:
    data = VarLong.build(value)
    assert VarLong.parse(data) == value
    assert read_varint(data, 0, 10) == (value, len(data))


headers = st.lists(st.builds(Header, st.binary(max_size=8), st.none() | st.binary(max_size=8)), max_size=3)
records = st.lists(
    st.tuples(st.none() | st.binary(max_size=20), st.none() | st.binary(max_size=40), headers,
              st.integers(0, 10_000)),
    min_size=0, max_size=6)


@given(records, st.sampled_from(list(Compression)), st.booleans())
def test_built_batches_parse_back(recs: list, codec: Compression, transactional: bool) -> None:
    built = [Record(offset=i, timestamp=0, key=k, value=v, headers=tuple(h), offset_delta=i, timestamp_delta=t)
             for i, (k, v, h, t) in enumerate(recs)]
    data = rb.build_records_batch(built, base_offset=100, base_timestamp=1_700_000_000_000, compression=codec,
                                  attributes=0x10 if transactional else 0, producer_id=7, producer_epoch=1,
                                  base_sequence=5)
    batch = rb.parse_batch(data)
    assert batch.crc_valid
    assert batch.compression is codec
    assert batch.is_transactional is transactional
    assert batch.records is not None
    assert [(r.key, r.value, r.headers, r.offset, r.sequence) for r in batch.records] == [
        (k, v, tuple(h), 100 + i, 5 + i) for i, (k, v, h, _) in enumerate(recs)]
    assert rb.rebuild_batch(data, batch) == data
    # Each uncompressed record re-encodes through the construct declaration byte for byte.
    if codec is Compression.NONE and batch.records:
        payload = bytes(rb.records_payload(data, batch))
        assert rb.encode_records(batch.records) == payload
        first = rb.RECORD.parse(payload)
        assert first.key == batch.records[0].key


def test_kafka_python_batch_decodes() -> None:
    """kafka-python (independent implementation) builds; we decode."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    for codec_id in (0, 1, 2, 3, 4):
        builder = DefaultRecordBatchBuilder(magic=2, compression_type=codec_id, is_transactional=False,
                                            producer_id=42, producer_epoch=3, base_sequence=10, batch_size=1 << 20)
        for i in range(5):
            builder.append(i, timestamp=1_700_000_000_000 + i, key=f"k{i}".encode() if i % 2 else None,
                           value=b"value-" * (i * 40), headers=[("h", b"x")] if i == 3 else [])
        data = bytes(builder.build())
        batch = rb.parse_batch(data)
        assert batch.crc_valid and batch.compression.value == codec_id
        assert batch.producer_id == 42 and batch.producer_epoch == 3 and batch.base_sequence == 10
        assert batch.records is not None
        assert [r.key for r in batch.records] == [None, b"k1", None, b"k3", None]
        assert [r.value for r in batch.records] == [b"value-" * (i * 40) for i in range(5)]
        assert batch.records[3].headers == (Header(b"h", b"x"),)
        assert [r.timestamp for r in batch.records] == [1_700_000_000_000 + i for i in range(5)]


def test_our_batch_decodes_in_kafka_python() -> None:
    """We build; kafka-python (independent implementation) decodes and validates the CRC."""
    from kafka.record.memory_records import MemoryRecords

    for codec in Compression:
        recs = [Record(offset=i, timestamp=0, key=b"key" if i else None, value=f"value-{i}".encode() * 30,
                       headers=(Header(b"trace", b"1"),) if i == 2 else (), offset_delta=i, timestamp_delta=i * 10)
                for i in range(4)]
        data = rb.build_records_batch(recs, base_offset=500, base_timestamp=1_600_000_000_000, compression=codec,
                                      producer_id=9, producer_epoch=0, base_sequence=0, partition_leader_epoch=4)
        mr = MemoryRecords(data)
        batch = mr.next_batch()
        assert batch.validate_crc()
        got = list(batch)
        assert [r.offset for r in got] == [500, 501, 502, 503]
        assert [r.value for r in got] == [f"value-{i}".encode() * 30 for i in range(4)]
        assert [r.key for r in got] == [None, b"key", b"key", b"key"]
        assert [r.timestamp for r in got] == [1_600_000_000_000 + i * 10 for i in range(4)]
        assert list(got[2].headers) == [("trace", b"1")]


def test_truncated_header_is_located() -> None:
    data = rb.build_records_batch([], base_offset=0, base_timestamp=0)
    try:
        rb.parse_batch_header(data[:40], 0)
    except Exception as err:
        assert "needs 61 bytes" in str(err)
    else:
        raise AssertionError("expected a DecodeError")
    assert struct.calcsize(">qllbLhlqqqhll") == rb.HEADER_SIZE
