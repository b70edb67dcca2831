"""Legacy (magic 0 and 1) messages: the vectors, declaration/fast-path agreement, Kafka's deep-iteration
rules, errors, byte-exact rebuilds, and kafka-python as an independent oracle both ways."""

from __future__ import annotations

import struct
import zlib
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkatool.errors import CodecError, DecodeError
from kafkatool.model import Compression, LegacyBatch, TimestampType
from kafkatool.schema import codecs, legacy
from tests.conftest import hexs, load_vector, shared_dir, vector_names

LEGACY_CODECS = [Compression.GZIP, Compression.SNAPPY, Compression.LZ4]
RECORD_KINDS = ("records", "message_set", "log_segment")


vectors = vector_names
load = load_vector


def view(e: LegacyBatch, want: dict) -> dict:
    """The sidecar's LEGACY fields of a parsed message, restricted to the keys the sidecar has."""
    got = {"magic": e.magic, "offset": e.offset, "message_size": e.message_size, "crc": e.crc,
           "crc_valid": e.crc_valid, "attributes": e.attributes, "compression": e.compression.label,
           "key": hexs(e.key), "value": hexs(e.value)}
    if e.magic == 1:
        got["timestamp_type"] = e.timestamp_type.label
        got["timestamp"] = e.timestamp
    return {k: v for k, v in got.items() if k in want}


def expected_view(want: dict) -> dict:
    return {k: v for k, v in want.items() if k not in ("inner", "uncompressed_size", "relative_offset")}


def entry(offset: int, *, magic: int, key: bytes | None = None, value: bytes | None = b"v", timestamp: int = 5,
          attributes: int = 0) -> bytes:
    return legacy.build_legacy_entry(offset, magic=magic, attributes=attributes, key=key, value=value,
                                     timestamp=timestamp if magic else None)


# --- vectors: bare messages -----------------------------------------------------------------------


@pytest.mark.corpus
@pytest.mark.parametrize("name", vectors("legacy_message"))
def test_bare_message_vector(name: str) -> None:
    meta, data = load(name)
    want = meta["expected"]["message"]
    if meta["expect_error"]:
        with pytest.raises(DecodeError) as info:
            legacy.parse_bare_message(data)
        assert info.value.field == "magic" and info.value.position == 4
        return
    msg = legacy.parse_bare_message(data)
    assert view(msg, want) == {**expected_view(want), "offset": -1}
    assert legacy.build_message(magic=msg.magic, attributes=msg.attributes, key=msg.key, value=msg.value,
                                timestamp=msg.timestamp, crc=msg.crc) == data
    if "inner" not in want:
        assert legacy.inner_records(msg)[0].value == msg.value
        return
    raw = codecs.decompress(msg.compression, msg.value or b"", magic=msg.magic)
    assert len(raw) == want["uncompressed_size"]
    inner = legacy.inner_entries(raw)
    assert [view(i, w) for i, w in zip(inner, want["inner"], strict=True)] == [
        expected_view(w) for w in want["inner"]]
    # Deep iteration needs the log prefix: store the wrapper at offset 100.
    stored = legacy.parse_legacy_entry(legacy.build_entry(100, data))
    if not inner:
        with pytest.raises(DecodeError, match="no inner records"):
            legacy.inner_records(stored)
        return
    records = legacy.inner_records(stored)
    shift = 100 - inner[-1].offset if msg.magic == 1 else 0
    assert [r.offset for r in records] == [i.offset + shift for i in inner]
    assert [(r.key, r.value, r.crc, r.crc_valid, r.magic) for r in records] == [
        (i.key, i.value, i.crc, i.crc_valid, i.magic) for i in inner]


# --- vectors: legacy entries in record sequences --------------------------------------------------


@pytest.mark.corpus
@pytest.mark.parametrize("name", vectors(*RECORD_KINDS))
def test_legacy_entries_in_record_vectors(name: str) -> None:
    """Each magic 0/1 entry decodes standalone to its sidecar entry (magic 2 batches are skipped)."""
    meta, data = load(name)
    wants = meta["expected"].get("entries", [])
    pos = index = 0
    while len(data) - pos >= legacy.LOG_OVERHEAD:
        size = int.from_bytes(data[pos + 8:pos + 12], "big", signed=True)
        if size < legacy.RECORD_OVERHEAD_V0:
            assert meta["expect_error"], f"unexpected corrupt entry at {pos}"
            with pytest.raises(DecodeError) as info:
                legacy.parse_legacy_entry(data, pos)
            assert info.value.field == "message_size" and info.value.position == pos + 8
            return
        end = pos + legacy.LOG_OVERHEAD + size
        if end > len(data):
            break
        if data[pos + 16] in (0, 1):
            want = wants[index]
            e = legacy.parse_legacy_entry(data, pos)
            assert e.position == pos and e.size_in_bytes == end - pos
            assert view(e, want) == expected_view(want)
            assert legacy.rebuild_entry(data, e) == data[pos:end]
            records = legacy.inner_records(e)
            if "inner" in want:
                log_append = e.timestamp_type is TimestampType.LOG_APPEND_TIME
                for r, w in zip(records, want["inner"], strict=True):
                    assert (r.offset, r.magic, r.crc, r.crc_valid, r.attributes) == (
                        w["offset"], w["magic"], w["crc"], w["crc_valid"], w["attributes"])
                    assert (hexs(r.key), hexs(r.value)) == (w["key"], w["value"])
                    assert r.timestamp == (e.timestamp if log_append else w.get("timestamp", -1))
                    assert r.size_in_bytes == w["message_size"] + legacy.LOG_OVERHEAD
                relative = [i.offset for i in legacy.inner_entries(codecs.decompress(e.compression, e.value or b""))]
                assert relative == [w.get("relative_offset", w["offset"]) for w in want["inner"]]
            else:
                assert [(r.offset, r.timestamp, r.value) for r in records] == [(e.offset, e.max_timestamp, e.value)]
        pos, index = end, index + 1
    assert index == len(wants)
    assert len(data) - pos == meta["expected"].get("trailing_bytes", 0)


def test_vectors_with_legacy_entries_present() -> None:
    shared_dir("vectors")
    assert len(vectors("legacy_message")) >= 10
    assert "kafka-python/v0_live_message_set_4_messages" in vectors("message_set")


# --- declarations and the fast path ---------------------------------------------------------------


def test_derived_formats_and_kafka_constants() -> None:
    sample = bytes(range(250, 256)) + bytes(range(12))
    assert legacy.ENTRY_HEAD_STRUCT.unpack(sample) == struct.unpack(">qiIbb", sample)
    assert legacy.MESSAGE_PREFIX_STRUCT.unpack(sample[:6]) == struct.unpack(">Ibb", sample[:6])
    assert legacy.LOG_ENTRY_PREFIX_STRUCT.unpack(sample[:12]) == struct.unpack(">qi", sample[:12])
    assert legacy.LOG_OVERHEAD == 12
    assert (legacy.RECORD_OVERHEAD_V0, legacy.RECORD_OVERHEAD_V1) == (14, 22)  # LegacyRecord's constants
    assert legacy.ENTRY_HEAD_STRUCT.size == legacy.ENTRY_HEAD.sizeof() == 18


nullable = st.one_of(st.none(), st.binary(max_size=40))


@given(st.sampled_from([0, 1]), st.integers(-128, 127), st.integers(-(2**63), 2**63 - 1), nullable, nullable,
       st.integers(0, 2**32 - 1))
def test_construct_and_fast_path_agree(magic: int, attributes: int, timestamp: int, key: bytes | None,
                                       value: bytes | None, crc: int) -> None:
    fields = {"crc": crc, "magic": magic, "attributes": attributes, "key": key, "value": value}
    if magic == 1:
        fields["timestamp"] = timestamp
    data = legacy.MESSAGES[magic].build(fields)
    parsed = legacy.MESSAGES[magic].parse(data)
    fast = legacy.parse_bare_message(data)
    assert (fast.crc, fast.magic, fast.attributes, fast.key, fast.value) == (
        parsed.crc, parsed.magic, parsed.attributes, parsed.key, parsed.value)
    assert fast.timestamp == (parsed.timestamp if magic == 1 else None)
    assert fast.crc_valid == (zlib.crc32(data[4:]) == crc)
    assert legacy.build_message(magic=magic, attributes=attributes, key=key, value=value,
                                timestamp=timestamp if magic else None, crc=crc) == data


@given(st.integers(-(2**63), 2**63 - 1), st.integers(-(2**31), 2**31 - 1), st.integers(0, 2**32 - 1),
       st.integers(-128, 127), st.integers(-128, 127))
def test_entry_head_fast_matches_construct(offset: int, size: int, crc: int, magic: int, attrs: int) -> None:
    data = legacy.ENTRY_HEAD.build({"offset": offset, "message_size": size, "crc": crc, "magic": magic,
                                    "attributes": attrs})
    parsed = legacy.ENTRY_HEAD.parse(data)
    names = ("offset", "message_size", "crc", "magic", "attributes")
    assert legacy.ENTRY_HEAD_STRUCT.unpack(data) == tuple(parsed[n] for n in names)


@settings(deadline=None)
@given(st.binary(max_size=16), st.sampled_from([0, 1]), st.integers(-(2**63), 2**63 - 1), nullable, nullable,
       st.integers(-(2**40), 2**40), st.integers(0, 0x0F))
def test_entry_round_trip(junk: bytes, magic: int, offset: int, key: bytes | None, value: bytes | None,
                          timestamp: int, attributes: int) -> None:
    """Built entries parse back at any position, and rebuild byte for byte."""
    data = legacy.build_legacy_entry(offset, magic=magic, attributes=attributes, key=key, value=value,
                                     timestamp=timestamp if magic else None)
    e = legacy.parse_legacy_entry(junk + data + junk, len(junk))
    assert (e.position, e.offset, e.magic, e.attributes, e.key, e.value, e.crc_valid) == (
        len(junk), offset, magic, attributes, key, value, True)
    assert e.timestamp == (timestamp if magic else None)
    assert e.size_in_bytes == len(data)
    assert legacy.rebuild_entry(data, e) == data


# --- errors ---------------------------------------------------------------------------------------


def test_entry_errors_are_positioned_in_the_buffer() -> None:
    good = entry(7, magic=1, key=b"k", value=b"value")
    pad = b"\xee" * 5

    def fails(data: bytes, field: str, where: int) -> None:
        with pytest.raises(DecodeError) as info:
            legacy.parse_legacy_entry(pad + data, len(pad))
        assert (info.value.field, info.value.position) == (field, len(pad) + where), info.value

    fails(good[:11], "message", 0)  # log entry prefix cut short
    fails(good[:15], "message_size", 8)  # size beyond the buffer
    fails(good[:-1], "message_size", 8)  # size beyond the buffer
    fails(good[:8] + (13).to_bytes(4, "big") + good[12:25], "message_size", 8)  # below RECORD_OVERHEAD_V0
    fails(good[:8] + (-1).to_bytes(4, "big", signed=True) + good[12:], "message_size", 8)
    for magic in (2, -1, 3):
        fails(good[:16] + bytes((magic & 0xFF,)) + good[17:], "magic", 16)
    short_v1 = legacy.build_entry(0, legacy.build_message(magic=0, attributes=0, key=None, value=b"1234"))
    fails(short_v1[:16] + b"\x01" + short_v1[17:], "message_size", 8)  # 18 bytes: no room for a timestamp
    key_at = 12 + 4 + 1 + 1 + 8
    fails(good[:key_at] + (99).to_bytes(4, "big") + good[key_at + 4:], "key_length", key_at)
    fails(good[:key_at] + (-2).to_bytes(4, "big", signed=True) + good[key_at + 4:], "key_length", key_at)
    value_at = key_at + 4 + 1
    fails(good[:value_at] + (6).to_bytes(4, "big") + good[value_at + 4:], "value_length", value_at)
    grown = good[:8] + (len(good) - 12 + 2).to_bytes(4, "big") + good[12:] + b"\0\0"
    fails(grown, "message_size", len(good))  # bytes after the value


def test_bad_crc_decodes_and_is_flagged() -> None:
    good = bytearray(entry(3, magic=0, value=b"payload"))
    good[-1] ^= 0x01
    e = legacy.parse_legacy_entry(bytes(good))
    assert e.crc_valid is False and e.value == b"payloae"
    assert legacy.rebuild_entry(bytes(good), e) == bytes(good)


# --- deep iteration (Kafka's DeepRecordsIterator) -------------------------------------------------


def wrapper(magic: int, codec: Compression, offsets: list[int], last_offset: int, *, log_append: bool = False,
            inner_magic: int | None = None, timestamp: int = 9999) -> LegacyBatch:
    m = magic if inner_magic is None else inner_magic
    messages = [legacy.build_message(magic=m, attributes=0, key=b"k%d" % i, value=b"v%d" % i,
                                     timestamp=100 + i if m else None) for i in range(len(offsets))]
    data = legacy.build_wrapper(magic=magic, codec=codec, offsets=offsets, messages=messages,
                                last_offset=last_offset, timestamp=timestamp if magic else None,
                                log_append_time=log_append)
    return legacy.parse_legacy_entry(data)


@pytest.mark.parametrize("codec", [*LEGACY_CODECS, Compression.ZSTD])
def test_magic_1_relative_offsets(codec: Compression) -> None:
    records = legacy.inner_records(wrapper(1, codec, [0, 1, 2], 42))
    assert [r.offset for r in records] == [40, 41, 42]
    assert [r.timestamp for r in records] == [100, 101, 102]  # CreateTime: each message's own
    assert [r.value for r in records] == [b"v0", b"v1", b"v2"]
    assert all(r.crc_valid and r.magic == 1 and r.size_in_bytes == 12 + 22 + 4 for r in records)


def test_magic_1_wrapper_offset_0_keeps_relative_offsets() -> None:
    """Some librdkafka versions wrote 0 as the wrapper offset: Kafka then takes the offsets as they are."""
    assert [r.offset for r in legacy.inner_records(wrapper(1, Compression.GZIP, [0, 1, 2], 0))] == [0, 1, 2]


def test_magic_1_wrapper_offset_below_last_inner_is_an_error() -> None:
    with pytest.raises(DecodeError, match="wrapper offset 1 is less than the last inner message offset 2"):
        legacy.inner_records(wrapper(1, Compression.GZIP, [0, 1, 2], 1))


def test_magic_0_inner_offsets_are_absolute() -> None:
    records = legacy.inner_records(wrapper(0, Compression.SNAPPY, [40, 41, 45], 45))
    assert [r.offset for r in records] == [40, 41, 45]
    assert [r.timestamp for r in records] == [-1, -1, -1]


def test_log_append_time_wrapper_stamps_inner_messages() -> None:
    e = wrapper(1, Compression.LZ4, [0, 1], 11, log_append=True, timestamp=777)
    assert e.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert [r.timestamp for r in legacy.inner_records(e)] == [777, 777]


def test_magic_0_messages_inside_a_magic_1_wrapper() -> None:
    """sarama writes these: no timestamps, but the wrapper's magic makes the offsets relative."""
    records = legacy.inner_records(wrapper(1, Compression.GZIP, [0, 1], 9, inner_magic=0, log_append=True))
    assert [(r.offset, r.timestamp, r.magic) for r in records] == [(8, -1, 0), (9, -1, 0)]


def test_magic_0_lz4_wrapper_uses_the_broken_descriptor_checksum() -> None:
    e = wrapper(0, Compression.LZ4, [0, 1], 1)
    assert e.value is not None
    frame = e.value
    assert frame[6] == codecs.lz4_header_checksum(frame[:6])
    assert [r.value for r in legacy.inner_records(e)] == [b"v0", b"v1"]


def test_uncompressed_entry_is_its_own_record() -> None:
    e = legacy.parse_legacy_entry(b"\0" * 3 + entry(12, magic=0, key=b"k", value=b"v"), 3)
    (r,) = legacy.inner_records(e)
    assert (r.offset, r.timestamp, r.key, r.value, r.position, r.magic, r.crc, r.crc_valid) == (
        12, -1, b"k", b"v", 3, 0, e.crc, True)
    (r1,) = legacy.inner_records(legacy.parse_legacy_entry(entry(5, magic=1, timestamp=1234)))
    assert (r1.offset, r1.timestamp) == (5, 1234)


def test_partial_inner_tail_is_ignored_and_small_inner_size_is_corrupt() -> None:
    inner = entry(0, magic=1) + entry(1, magic=1)
    partial = legacy.build_legacy_entry(1, magic=1, attributes=1, timestamp=0,
                                        value=codecs.compress(Compression.GZIP, inner + entry(2, magic=1)[:-3]))
    assert [r.offset for r in legacy.inner_records(legacy.parse_legacy_entry(partial))] == [0, 1]
    tiny = inner + (2).to_bytes(8, "big") + (13).to_bytes(4, "big")
    bad = legacy.build_legacy_entry(2, magic=1, attributes=1, timestamp=0,
                                    value=codecs.compress(Compression.GZIP, tiny))
    e = legacy.parse_legacy_entry(bad)
    with pytest.raises(DecodeError, match="less than the minimum record overhead") as info:
        legacy.inner_records(e)
    assert info.value.position == legacy.value_position(e)


def test_wrapper_errors() -> None:
    null_value = legacy.parse_legacy_entry(legacy.build_legacy_entry(0, magic=1, attributes=2, timestamp=0,
                                                                    value=None))
    with pytest.raises(DecodeError, match="null value"):
        legacy.inner_records(null_value)
    for codec_id in (5, 6, 7):
        unknown = legacy.parse_legacy_entry(legacy.build_legacy_entry(0, magic=0, attributes=codec_id, value=b"x"))
        with pytest.raises(DecodeError, match=f"codec id {codec_id}") as info:
            legacy.inner_records(unknown)
        assert (info.value.field, info.value.position) == ("attributes", 17)
    nested_inner = entry(0, magic=1, attributes=1)
    nested = legacy.build_legacy_entry(0, magic=1, attributes=1, timestamp=0,
                                       value=codecs.compress(Compression.GZIP, nested_inner))
    with pytest.raises(DecodeError, match="must not be compressed"):
        legacy.inner_records(legacy.parse_legacy_entry(nested))
    empty = legacy.build_legacy_entry(0, magic=0, attributes=1, value=codecs.compress(Compression.GZIP, b""))
    with pytest.raises(DecodeError, match="no inner records"):
        legacy.inner_records(legacy.parse_legacy_entry(empty))


def test_codec_errors_keep_their_type_and_point_into_the_value() -> None:
    e = wrapper(1, Compression.LZ4, [0, 1], 1)
    assert e.value is not None
    bad = replace(e, value=e.value[:6] + bytes((e.value[6] ^ 0xFF,)) + e.value[7:])
    with pytest.raises(CodecError) as info:
        legacy.inner_records(bad)
    assert info.value.position == legacy.value_position(e) + 6
    zeros = legacy.build_message(magic=0, attributes=0, key=None, value=b"\0" * 1000)
    data = legacy.build_wrapper(magic=0, codec=Compression.ZSTD, offsets=range(50), messages=[zeros] * 50,
                                last_offset=49)
    with pytest.raises(CodecError, match="more than 4096 bytes"):
        legacy.inner_records(legacy.parse_legacy_entry(data), max_output=4096)


def test_value_position() -> None:
    data = b"\xaa" * 9 + entry(1, magic=1, key=b"abc", value=b"VALUE")
    e = legacy.parse_legacy_entry(data, 9)
    at = legacy.value_position(e)
    assert data[at:at + 5] == b"VALUE"


# --- kafka-python as an oracle --------------------------------------------------------------------


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [Compression.NONE, *LEGACY_CODECS])
def test_kafka_python_builds_we_decode(magic: int, codec: Compression) -> None:
    from kafka.record.legacy_records import LegacyRecordBatch, LegacyRecordBatchBuilder

    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec.value, batch_size=1 << 20)
    for i in range(7):
        builder.append(i, timestamp=1_600_000_000_000 + i if magic else None, key=b"k%d" % i if i % 2 else None,
                       value=None if i == 3 else b"value-%d " % i * 20)
    data = bytes(builder.build())
    theirs = []
    pos = 0
    ours = []
    while pos < len(data):
        e = legacy.parse_legacy_entry(data, pos)
        assert e.crc_valid and e.magic == magic and e.compression is codec
        assert legacy.rebuild_entry(data, e) == data[pos:pos + e.size_in_bytes]
        ours += legacy.inner_records(e)
        theirs += list(LegacyRecordBatch(data[pos:pos + e.size_in_bytes], magic))
        pos += e.size_in_bytes
    assert [(r.offset, r.timestamp, r.key, r.value, r.crc) for r in ours] == [
        (t.offset, t.timestamp if magic else -1, t.key, t.value, t.checksum) for t in theirs]
    assert [r.offset for r in ours] == list(range(7))


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS)
@pytest.mark.parametrize("log_append", [False, True])
def test_we_build_kafka_python_decodes(magic: int, codec: Compression, log_append: bool) -> None:
    from kafka.record.legacy_records import LegacyRecordBatch

    e = wrapper(magic, codec, [0, 1, 2] if magic else [40, 41, 42], 42, log_append=log_append, timestamp=5555)
    data = legacy.rebuild_entry(b"", e)
    batch = LegacyRecordBatch(data, magic)
    assert batch.validate_crc()
    theirs = list(batch)
    ours = legacy.inner_records(e)
    assert [(t.offset, t.key, t.value, t.checksum) for t in theirs] == [
        (r.offset, r.key, r.value, r.crc) for r in ours]
    if magic:
        assert [t.timestamp for t in theirs] == [r.timestamp for r in ours]
        assert [r.timestamp for r in ours] == ([5555] * 3 if log_append else [100, 101, 102])
    for r, raw in zip(ours, theirs, strict=True):
        assert raw.validate_crc() and r.crc_valid


@pytest.mark.parametrize("magic", [0, 1])
def test_kafka_python_reads_our_uncompressed_sets(magic: int) -> None:
    from kafka.record.memory_records import MemoryRecords

    data = b"".join(entry(o, magic=magic, key=None if o % 2 else b"key", value=b"x" * o, timestamp=o * 10)
                    for o in range(5))
    records = MemoryRecords(data)
    got = []
    while records.has_next():
        got += list(records.next_batch())
    assert [(r.offset, r.key, r.value) for r in got] == [
        (o, None if o % 2 else b"key", b"x" * o) for o in range(5)]
