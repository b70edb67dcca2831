"""The schema pieces the DumpLogSegments formatter reads through (issue 21): framing reads, Kafka's lenient record
walk with Java's messages, KRaft control values, marker keys, coordinator version prefixes, snapshot corruption.

The messages are those of Kafka's ``DefaultRecord.readFrom`` / ``DefaultRecordBatch.RecordIterator`` /
``ByteUtils`` / the generated readers / ``ProducerStateManager.readSnapshot``; the corpus comparisons in
``test_dls_format.py`` check them against real ``kafka-dump-log.sh`` runs, these tests pin each one down.
"""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

from kafkatool.model import Compression, Header, Record, RecordBatch
from kafkatool.schema import file_records
from kafkatool.schema import record_batch as rb
from kafkatool.schema.control import build_control_key, is_transaction_marker_key
from kafkatool.schema.java import JavaException, java_utf8
from kafkatool.schema.kafka_message import version_prefix
from kafkatool.schema.kraft_control import read_kraft_control
from kafkatool.schema.producer_snapshot import build_producer_snapshot, snapshot_corruption
from kafkatool.schema.record_walk import walk_records
from kafkatool.schema.varint import encode_varint

BASE_TS = 1_700_000_000_000


def _records(n: int) -> list[Record]:
    return [Record(offset=i, timestamp=BASE_TS + i, key=f"k{i}".encode(), value=f"v{i}".encode(),
                   headers=(Header(b"h", b"x"),), offset_delta=i, timestamp_delta=i) for i in range(n)]


def _batch(n: int = 3, compression: Compression = Compression.NONE) -> bytes:
    return rb.build_records_batch(_records(n), base_offset=100, base_timestamp=BASE_TS, compression=compression,
                                  producer_id=7, producer_epoch=0, base_sequence=5)


def _header(count: int, attributes: int = 0) -> RecordBatch:
    header = rb.parse_batch_header(_batch(1))
    return RecordBatch(0, header.base_offset, header.batch_length, header.partition_leader_epoch, 2, header.crc,
                       attributes, count - 1, BASE_TS, BASE_TS, -1, -1, -1, count)


def _record(body: bytes, size: int | None = None) -> bytes:
    return encode_varint(len(body) if size is None else size) + body


MINIMAL = b"\x00" + encode_varint(0, 10) + encode_varint(0) + encode_varint(-1) + encode_varint(-1)


def _walk_error(header: RecordBatch, data: bytes) -> tuple[list[Record], str | None]:
    seen: list[Record] = []
    with pytest.raises(JavaException) as caught:
        seen.extend(walk_records(header, data))
    return seen, caught.value.message


def test_the_walk_reads_a_sound_batch_as_the_strict_decoder_does() -> None:
    data = _batch(3)
    header = rb.parse_batch_header(data)
    strict = rb.decode_records(header, rb.records_payload(data, header))
    walked = list(walk_records(header, bytes(rb.records_payload(data, header))))
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers, r.sequence) for r in walked] == \
        [(r.offset, r.timestamp, r.key, r.value, r.headers, r.sequence) for r in strict]
    assert [r.sequence for r in walked] == [5, 6, 7]


def test_the_walk_stops_where_kafka_throws_with_its_message() -> None:
    good = _record(MINIMAL + encode_varint(0))
    cases = {
        "Found invalid number of record headers -1": (1, _record(MINIMAL + encode_varint(-1))),
        "Found invalid number of record headers. 9 is larger than the remaining size of the buffer":
            (1, _record(MINIMAL + encode_varint(9))),
        "Invalid record size: expected 40 bytes in record payload, but instead the buffer has only 6 remaining "
        "bytes.": (1, _record(MINIMAL + encode_varint(0), 40)),
        "Invalid record size: expected to read 5 bytes in record payload, but instead read 6":
            (1, _record(MINIMAL + encode_varint(0), 5)),
        "Incorrect declared batch size, records still remaining in file": (1, good + b"\x00"),
        "Incorrect declared batch size, premature EOF reached": (2, good),
        "Varint is too long, the most significant bit in the 5th byte is set, converted value: ffffffff":
            (1, b"\xff" * 5),
        "Invalid negative header key size -2": (1, _record(MINIMAL + encode_varint(1) + encode_varint(-2))),
        "Found invalid record structure": (1, _record(b"\x00" + b"\xff" * 10)),
    }
    for message, (count, data) in cases.items():
        seen, found = _walk_error(_header(count), data)
        assert found == message, (message, found)
        if message.endswith("premature EOF reached"):
            assert [r.offset for r in seen] == [100]  # the records before the damage come first


def test_batch_records_falls_back_to_the_walk_or_carries_the_codec_reason() -> None:
    data = bytearray(_batch(2))
    header = rb.parse_batch_header(bytes(data))
    assert [r.offset for r in file_records.batch_records(header, bytes(data), 0, header.size_in_bytes)] == [100, 101]
    more = dataclasses.replace(header, records_count=3)  # the strict decoder rejects it; Kafka's walk reads two
    walked: list[int] = []
    with pytest.raises(JavaException) as caught:
        walked.extend(r.offset for r in file_records.batch_records(more, bytes(data), 0, header.size_in_bytes))
    assert walked == [100, 101] and caught.value.message == "Incorrect declared batch size, premature EOF reached"
    packed = bytearray(_batch(3, Compression.GZIP))
    packed[rb.HEADER_SIZE + 12:] = b"\x00" * (len(packed) - rb.HEADER_SIZE - 12)
    gz = rb.parse_batch_header(bytes(packed))
    with pytest.raises(JavaException) as caught:
        list(file_records.batch_records(gz, bytes(packed), 0, gz.size_in_bytes))
    assert caught.value.message is not None and caught.value.message.startswith("gzip")


def test_the_framing_reads() -> None:
    data = _batch(2)
    assert file_records.ENTRY_HEAD_SIZE == 17
    assert file_records.read_entry_head(data, 0) == (100, len(data) - 12, 2)
    header = file_records.read_batch_header(data, 0)
    assert header is not None and header.records_count == 2 and header.position == 0
    assert file_records.read_batch_header(data[:60], 0) is None


def test_kraft_control_values_as_the_generated_readers_read_them() -> None:
    header = b"\x00\x00" + (BASE_TS).to_bytes(8, "big") + b"\x00"
    assert read_kraft_control(3, header) == {"version": 0, "lastContainedLogTimestamp": BASE_TS}
    assert read_kraft_control(4, b"\x00\x00\x00") == {"version": 0}
    leader_v1 = b"\x00\x01" + (3).to_bytes(4, "big") + b"\x02" + (3).to_bytes(4, "big") + b"\x00" + b"\x01" + b"\x00"
    assert read_kraft_control(2, leader_v1) == {
        "version": 1, "leaderId": 3, "voters": [{"voterId": 3, "voterDirectoryId": "AAAAAAAAAAAAAAAAAAAAAA"}],
        "grantingVoters": []}
    null_voters = b"\x00\x00" + (3).to_bytes(4, "big") + b"\x00"
    for ctype, value, message in ((3, header[:5], None), (3, None, None),
                                  (2, null_voters, "non-nullable field voters was serialized as null")):
        with pytest.raises(JavaException) as caught:
            read_kraft_control(ctype, value)
        assert caught.value.message == message
    with pytest.raises(KeyError):
        read_kraft_control(0, b"")


def test_marker_keys_and_version_prefixes() -> None:
    assert is_transaction_marker_key(build_control_key(0)) and is_transaction_marker_key(build_control_key(1))
    assert is_transaction_marker_key(build_control_key(1, version=3))
    assert not is_transaction_marker_key(build_control_key(2))
    assert not is_transaction_marker_key(b"\xff\xff\x00\x00") and not is_transaction_marker_key(b"\x00\x00\x00")
    assert version_prefix(None) is None and version_prefix(b"\x00") is None
    assert version_prefix(b"\x00\x05rest") == 5 and version_prefix(b"\xff\xff") == -1


def test_snapshot_corruption_messages() -> None:
    good = build_producer_snapshot([])
    assert snapshot_corruption(good) is None
    wrap = "Snapshot failed schema validation: "
    assert snapshot_corruption(b"\x00") == wrap + "null"
    assert snapshot_corruption(b"\x00\x02" + good[2:]) == wrap + "Snapshot contained an unknown file version 2"
    assert snapshot_corruption(good[:6] + (-1).to_bytes(4, "big", signed=True)) == \
        wrap + "non-nullable field producerEntries was serialized as null"
    assert snapshot_corruption(good[:6] + (5).to_bytes(4, "big")) == \
        wrap + "Tried to allocate a collection of size 5, but there are only 0 bytes remaining."
    bad_crc = good[:2] + bytes(4) + good[6:]
    corrupt = snapshot_corruption(bad_crc) or ""
    assert corrupt.startswith("Snapshot is corrupt (CRC is no longer valid). Stored crc: 0. Computed crc: ")


def test_java_exceptions_carry_null_and_java_utf8_replaces_as_the_jdk() -> None:
    err = JavaException(None)
    assert err.message is None and err.reason == "null"
    assert JavaException("boom", "f", 3).located("file", 10).message == "boom"  # type: ignore[attr-defined]
    assert java_utf8(b"\xed\xa0\x80") == "\ufffd"  # an encoded surrogate: one replacement, as Java
    assert java_utf8("héllo".encode()) == "héllo"


def test_the_runs_decompression_cap_reaches_the_kafka_format(tmp_path: Path) -> None:
    """``kafkatool --max-decompressed-bytes N dump-segment -f kafka``: a batch inflating past N ends the dump
    with the cap's message (the limits are handed down, no module state), and the default cap lets it through."""
    from kafkatool.reading.context import using_limits
    from kafkatool.render.kafka_text import run_kafka_format
    from kafkatool.schema.codecs import ReadLimits

    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(_batch(20, Compression.GZIP))

    def run(limits: ReadLimits | None = None) -> tuple[int, str]:
        out, err = io.StringIO(), io.StringIO()
        code = run_kafka_format([str(log)], deep=True, print_data=False, verify_index_only=False,
                                index_sanity_check=False, max_message_size=5 << 20, max_bytes=None,
                                skip_record_metadata=False, out=out, err=err, limits=limits)
        return code, err.getvalue()

    assert run()[0] == 0  # (its stderr: the summary of offsets not starting at 0)
    assert run(ReadLimits(100)) == (1, "gzip payload decompresses to more than 100 bytes (refused)\n")
    with using_limits(ReadLimits(100)):
        assert run()[0] == 1
