"""The small file kinds (indexes, producer snapshots, checkpoints, partition.metadata, meta.properties, the
clean-shutdown marker) and Kafka's file names: every corpus file decodes as Kafka decoded it (``before``
in expected.json) and rebuilds byte for byte; property round trips; errors name their field and byte."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import crc32c
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkatool.errors import DecodeError
from kafkatool.model import (
    AbortedTxn,
    LeaderEpochEntry,
    OffsetIndexEntry,
    ProducerSnapshotEntry,
    TimeIndexEntry,
    TopicPartition,
)
from kafkatool.schema import (
    checkpoint,
    clean_shutdown,
    meta_properties,
    offset_index,
    partition_metadata,
    producer_snapshot,
    time_index,
    txn_index,
)
from kafkatool.schema.filenames import (
    DirState,
    FileKind,
    classify,
    in_flight_suffix,
    kafka_offset_from_file_name,
    kraft_snapshot_file_name,
    offset_from_name,
    parse_kraft_snapshot_name,
    parse_partition_dir,
    partition_dir_name,
    segment_file_name,
)
from kafkatool.storage.producer_state import ProducerStateEntry
from tests.conftest import corpus_cases, load_expected, shared_dir

CASES = corpus_cases()
METADATA_DIR = "__cluster_metadata-0"
LOG_DIR_CHECKPOINTS = (("recoveryPointOffsetCheckpoint", "recovery-point-offset-checkpoint"),
                       ("logStartOffsetCheckpoint", "log-start-offset-checkpoint"),
                       ("replicationOffsetCheckpoint", "replication-offset-checkpoint"),
                       ("cleanerOffsetCheckpoint", "cleaner-offset-checkpoint"))


def input_dir(case: str) -> Path:
    return shared_dir("corpus") / case / "input"


def partition_expectations(case: str) -> list[tuple[Path, dict[str, Any]]]:
    """Every partition directory Kafka's decoding covers, data and metadata partitions alike."""
    before = load_expected(case)["before"]
    root = input_dir(case)
    out = [(root / name, part) for name, part in before.get("partitions", {}).items()]
    for holder in (before, before.get("bootstrapAndMetadata") or {}):
        if holder.get("metadataPartition"):
            out.append((root / METADATA_DIR, holder["metadataPartition"]))
    return out


def small_files(case: str) -> list[Path]:
    """Every file under input/ that one of the schema modules decodes."""
    kinds = {FileKind.OFFSET_INDEX, FileKind.TIME_INDEX, FileKind.TXN_INDEX, FileKind.PRODUCER_SNAPSHOT,
             FileKind.LEADER_EPOCH_CHECKPOINT, FileKind.RECOVERY_POINT_CHECKPOINT,
             FileKind.REPLICATION_OFFSET_CHECKPOINT, FileKind.LOG_START_OFFSET_CHECKPOINT,
             FileKind.CLEANER_OFFSET_CHECKPOINT, FileKind.PARTITION_METADATA, FileKind.META_PROPERTIES,
             FileKind.CLEAN_SHUTDOWN}
    return sorted(p for p in input_dir(case).rglob("*") if p.is_file() and classify(p.name) in kinds)


# --- corpus: indexes ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_offset_indexes_match_kafka(case: str) -> None:
    for pdir, part in partition_expectations(case):
        for want in part["offsetIndexes"]:
            data = (pdir / want["file"]).read_bytes()
            base = offset_from_name(want["file"])
            assert base is not None and len(data) == want["sizeInBytes"]
            parsed = offset_index.parse_offset_index(data, base)
            assert [[e.offset, e.position] for e in parsed.entries] == want["entries[offset,position]"]
            assert parsed.trailing_bytes == want["trailingBytesNotMultipleOfEntry"]
            slots = offset_index.parse_offset_index_slots(data, base)
            assert parsed.slots == len(slots) == offset_index.kafka_entry_count(len(data))
            assert parsed.zero_tail == len(slots) - len(parsed.entries)
            assert all(e == OffsetIndexEntry(base, 0) for e in slots[len(parsed.entries):])
            assert offset_index.build_offset_index(slots, base) + data[len(data) - parsed.trailing_bytes:] == data
            assert offset_index.build_offset_index(parsed.entries, base, preallocate=len(data)) == data
            offset_index.sanity_check(data, base)


@pytest.mark.parametrize("case", CASES)
def test_time_indexes_match_kafka(case: str) -> None:
    for pdir, part in partition_expectations(case):
        for want in part["timeIndexes"]:
            data = (pdir / want["file"]).read_bytes()
            base = offset_from_name(want["file"])
            assert base is not None and len(data) == want["sizeInBytes"]
            parsed = time_index.parse_time_index(data, base)
            assert [[e.timestamp, e.offset] for e in parsed.entries] == want["entries[timestamp,offset]"]
            assert parsed.trailing_bytes == want["trailingBytesNotMultipleOfEntry"]
            slots = time_index.parse_time_index_slots(data, base)
            assert parsed.slots == len(slots) == time_index.kafka_entry_count(len(data))
            assert all(e == TimeIndexEntry(0, base) for e in slots[len(parsed.entries):])
            assert time_index.build_time_index(slots, base) == data
            assert time_index.build_time_index(parsed.entries, base, preallocate=len(data)) == data
            if slots and slots[-1].timestamp < slots[0].timestamp:  # untrimmed: Kafka's sanity check fails
                with pytest.raises(DecodeError) as err:
                    time_index.sanity_check(data, base)
                assert err.value.field == "timestamp" and err.value.position == len(data) - time_index.ENTRY_SIZE
            else:
                time_index.sanity_check(data, base)


@pytest.mark.parametrize("case", CASES)
def test_txn_indexes_match_kafka(case: str) -> None:
    for pdir, part in partition_expectations(case):
        for want in part["txnIndexes"]:
            data = (pdir / want["file"]).read_bytes()
            assert len(data) == want["sizeInBytes"]
            got = txn_index.parse_txn_index(data)
            assert [{"version": txn_index.kafka_version(e), "producerId": e.producer_id,
                     "firstOffset": e.first_offset, "lastOffset": e.last_offset,
                     "lastStableOffset": e.last_stable_offset} for e in got] == want["abortedTxns"]
            assert txn_index.trailing_bytes(data) == 0
            txn_index.sanity_check(got, offset_from_name(want["file"]) or 0)
            assert txn_index.build_txn_index(got) == data


# --- corpus: producer snapshots --------------------------------------------------------------------------


def kafka_view(entry: ProducerSnapshotEntry) -> dict[str, Any]:
    """A snapshot entry in the shape expected.json records ``ProducerStateEntry``."""
    s = ProducerStateEntry.from_snapshot(entry)
    batches = [{"firstSeq": s.first_seq, "lastSeq": s.last_seq, "firstOffset": s.first_data_offset,
                "lastOffset": s.last_data_offset, "offsetDelta": s.last_offset_delta,
                "timestamp": s.last_timestamp}] if s.batches else []
    return {"producerId": s.producer_id, "producerEpoch": s.producer_epoch, "coordinatorEpoch": s.coordinator_epoch,
            "lastTimestamp": s.last_timestamp, "firstSequence": s.first_seq, "lastSequence": s.last_seq,
            "firstDataOffset": s.first_data_offset, "lastDataOffset": s.last_data_offset,
            "lastOffsetDelta": s.last_offset_delta, "currentTxnFirstOffset": s.current_txn_first_offset,
            "cachedBatches": batches}


@pytest.mark.parametrize("case", CASES)
def test_producer_snapshots_match_kafka(case: str) -> None:
    for pdir, part in partition_expectations(case):
        for want in part["producerSnapshots"]:
            data = (pdir / want["file"]).read_bytes()
            assert offset_from_name(want["file"]) == want["offset"]
            assert len(data) == want["sizeInBytes"]
            snap = producer_snapshot.parse_producer_snapshot(data)
            assert snap.version == 1 and snap.crc_valid
            assert snap.crc == producer_snapshot.compute_crc(data)
            assert sorted((kafka_view(e) for e in snap.entries), key=lambda p: p["producerId"]) == \
                sorted(want["producers"], key=lambda p: p["producerId"])
            for e in snap.entries:  # the derived fields, straight from the model
                assert e.first_offset == e.last_offset - e.offset_delta
            if not want["producers"]:
                assert len(data) == producer_snapshot.HEADER_SIZE == 10
            assert producer_snapshot.trailing_bytes(data) == 0
            assert producer_snapshot.build_producer_snapshot(snap.entries) == data


# --- corpus: checkpoints and metadata files --------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_partition_checkpoints_and_metadata_match_kafka(case: str) -> None:
    for pdir, part in partition_expectations(case):
        epochs = pdir / "leader-epoch-checkpoint"
        if part.get("leaderEpochCheckpoint") is not None:
            data = epochs.read_bytes()
            got = checkpoint.parse_leader_epoch_checkpoint(data)
            assert [[e.epoch, e.start_offset] for e in got] == part["leaderEpochCheckpoint"]
            assert checkpoint.build_leader_epoch_checkpoint(got) == data
        meta = pdir / "partition.metadata"
        if part.get("partitionMetadata") is not None:
            data = meta.read_bytes()
            assert data.decode() == part["partitionMetadata"]
            got_meta = partition_metadata.parse_partition_metadata(data)
            assert got_meta.version == 0
            assert part["partitionMetadata"].endswith(f"topic_id: {got_meta.topic_id}")
            assert len(got_meta.topic_id_bytes) == 16 and got_meta.topic_id_bytes.hex() == got_meta.topic_id_hex
            assert partition_metadata.encode_kafka_uuid(got_meta.topic_id_bytes) == got_meta.topic_id
            assert partition_metadata.build_partition_metadata(got_meta.topic_id, got_meta.version) == data
        else:
            assert not meta.exists()


@pytest.mark.parametrize("case", CASES)
def test_log_dir_files_match_kafka(case: str) -> None:
    before = load_expected(case)["before"]
    root = input_dir(case)
    for key, name in LOG_DIR_CHECKPOINTS:
        if before.get(key) is None:
            assert not (root / name).exists()
            continue
        data = (root / name).read_bytes()
        assert data.decode() == before[key]["raw"]
        got = checkpoint.parse_offset_checkpoint(data)
        assert {str(tp): off for tp, off in got.items()} == before[key]["parsed"]
        assert checkpoint.build_offset_checkpoint(got) == data
        assert checkpoint.build_offset_checkpoint(checkpoint.parse_offset_checkpoint_entries(data)) == data
    marker = root / ".kafka_cleanshutdown"
    if before.get("cleanShutdownFile") is not None:
        data = marker.read_bytes()
        assert data.decode() == before["cleanShutdownFile"]["content"]
        got_marker = clean_shutdown.parse_clean_shutdown(data)
        assert got_marker.broker_epoch == before["cleanShutdownFile"]["brokerEpochReadByKafka"]
        assert got_marker.format == clean_shutdown.FORMAT_JSON and got_marker.problem is None
        assert clean_shutdown.kafka_broker_epoch(data) == got_marker.broker_epoch
        assert clean_shutdown.build_clean_shutdown(got_marker.broker_epoch, got_marker.version or 0) == data
    else:
        assert not marker.exists()
    data = (root / "meta.properties").read_bytes()
    assert data.decode() == before["metaProperties"]
    props = meta_properties.parse_meta_properties(data)
    assert props.version == 1 and props.node_id is not None and props.cluster_id
    assert props.properties[meta_properties.NODE_ID_PROP] == str(props.node_id)
    assert props.directory_id == props.properties.get(meta_properties.DIRECTORY_ID_PROP)
    assert props.comments[0] == "#" and props.comments[1].startswith("#")  # store("") then the date line
    assert meta_properties.build_meta_properties(props.properties, props.comments) == data


@pytest.mark.parametrize("case", CASES)
def test_every_small_file_decodes_and_rebuilds(case: str) -> None:
    """Including the files Kafka's own decoding leaves out: .swap/.cleaned/.deleted leftovers."""
    for path in small_files(case):
        data = path.read_bytes()
        kind = classify(path.name)
        base = offset_from_name(path.name)
        if kind is FileKind.OFFSET_INDEX:
            assert base is not None
            assert offset_index.build_offset_index(offset_index.parse_offset_index_slots(data, base), base) == data
        elif kind is FileKind.TIME_INDEX:
            assert base is not None
            assert time_index.build_time_index(time_index.parse_time_index_slots(data, base), base) == data
        elif kind is FileKind.TXN_INDEX:
            assert txn_index.build_txn_index(txn_index.parse_txn_index(data)) == data
        elif kind is FileKind.PRODUCER_SNAPSHOT:
            snap = producer_snapshot.parse_producer_snapshot(data)
            assert snap.crc_valid
            assert producer_snapshot.build_producer_snapshot(snap.entries) == data
        elif kind is FileKind.LEADER_EPOCH_CHECKPOINT:
            assert checkpoint.build_leader_epoch_checkpoint(checkpoint.parse_leader_epoch_checkpoint(data)) == data
        elif kind is FileKind.PARTITION_METADATA:
            assert partition_metadata.build_partition_metadata(
                partition_metadata.parse_partition_metadata(data).topic_id) == data
        elif kind is FileKind.META_PROPERTIES:
            props = meta_properties.parse_meta_properties(data)
            assert meta_properties.build_meta_properties(props.properties, props.comments) == data
        elif kind is FileKind.CLEAN_SHUTDOWN:
            assert clean_shutdown.build_clean_shutdown(clean_shutdown.parse_clean_shutdown(data).broker_epoch) == data
        else:
            assert checkpoint.build_offset_checkpoint(checkpoint.parse_offset_checkpoint_entries(data)) == data


# --- corpus: file names ------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_every_corpus_file_name_is_classified(case: str) -> None:
    root = input_dir(case)
    expected = load_expected(case)["before"]
    for path in (p for p in root.rglob("*") if p.is_file()):
        kind = classify(path.name)
        assert kind is not FileKind.UNKNOWN, path
        offset = offset_from_name(path.name)
        if kind in (FileKind.LOG, FileKind.OFFSET_INDEX, FileKind.TIME_INDEX, FileKind.TXN_INDEX,
                    FileKind.PRODUCER_SNAPSHOT):
            assert offset is not None and path.name.startswith(segment_file_name(offset, ""))
            assert kafka_offset_from_file_name(path.name) == offset
            assert in_flight_suffix(path.name) in (None, ".deleted", ".cleaned", ".swap")
        if kind is FileKind.KRAFT_SNAPSHOT and path.name != "bootstrap.checkpoint":
            parsed = parse_kraft_snapshot_name(path.name)
            assert parsed is not None and kraft_snapshot_file_name(parsed[0], parsed[1]) == path.name
    for pdir, part in partition_expectations(case):
        got = parse_partition_dir(pdir.name)
        assert got is not None and got[1] is DirState.LIVE and partition_dir_name(got[0]) == pdir.name
        for key, kind in (("offsetIndexes", FileKind.OFFSET_INDEX), ("timeIndexes", FileKind.TIME_INDEX),
                          ("txnIndexes", FileKind.TXN_INDEX), ("producerSnapshots", FileKind.PRODUCER_SNAPSHOT)):
            assert all(classify(w["file"]) is kind for w in part[key])
    for entry in expected.get("logDirFiles", []):
        assert classify(entry["name"]) is not FileKind.UNKNOWN


# --- hypothesis round trips ----------------------------------------------------------------------------------

int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
offsets = st.integers(0, 2**62)


@given(offsets, st.lists(st.tuples(st.integers(0, 2**31 - 1), int32), max_size=40), st.integers(0, 600))
def test_offset_index_round_trip(base: int, pairs: list[tuple[int, int]], pad: int) -> None:
    entries = [OffsetIndexEntry(base + rel, pos) for rel, pos in pairs]
    data = offset_index.build_offset_index(entries, base, preallocate=len(entries) * 8 + pad // 8 * 8)
    assert offset_index.parse_offset_index_slots(data, base)[:len(entries)] == entries
    construct_view = offset_index.FILE.parse(data)
    assert [(c.relative_offset, c.position) for c in construct_view.entries] == \
        [(e.offset - base, e.position) for e in offset_index.parse_offset_index_slots(data, base)]
    assert offset_index.FILE.build({"entries": [{"relative_offset": e.offset - base, "position": e.position}
                                                for e in entries], "trailing": b""}) == data[:len(entries) * 8]


@given(st.binary(max_size=200), offsets)
def test_index_fast_paths_agree_with_declarations_on_any_bytes(data: bytes, base: int) -> None:
    for module, slots in ((offset_index, offset_index.parse_offset_index_slots(data, base)),
                          (time_index, time_index.parse_time_index_slots(data, base))):
        view = module.FILE.parse(data)
        assert len(view.entries) == len(slots) and len(view.trailing) == len(data) % module.ENTRY_SIZE
    view = txn_index.FILE.parse(data)
    assert [AbortedTxn(**{k: v for k, v in c.items() if not k.startswith("_")}) for c in view.entries] == \
        txn_index.parse_txn_index(data)
    parsed = offset_index.parse_offset_index(data, base)
    assert parsed.slots == len(data) // 8 and parsed.trailing_bytes == len(data) % 8
    assert len(parsed.entries) + parsed.zero_tail == parsed.slots


@given(offsets, st.lists(st.tuples(int64, st.integers(0, 2**31 - 1)), max_size=40))
def test_time_index_round_trip(base: int, pairs: list[tuple[int, int]]) -> None:
    entries = [TimeIndexEntry(ts, base + rel) for ts, rel in pairs]
    data = time_index.build_time_index(entries, base)
    assert len(data) == 12 * len(entries)
    assert time_index.parse_time_index_slots(data, base) == entries
    assert time_index.FILE.build({"entries": [{"timestamp": e.timestamp, "relative_offset": e.offset - base}
                                              for e in entries], "trailing": b""}) == data


aborted = st.builds(AbortedTxn, st.integers(-(2**15), 2**15 - 1), int64, int64, int64, int64)


@given(st.lists(aborted, max_size=20), st.binary(max_size=33))
def test_txn_index_round_trip(entries: list[AbortedTxn], tail: bytes) -> None:
    data = txn_index.build_txn_index(entries)
    assert txn_index.parse_txn_index(data + tail) == entries
    assert txn_index.trailing_bytes(data + tail) == len(tail)
    assert txn_index.FILE.build({"entries": [{"version": e.version, "producer_id": e.producer_id,
                                              "first_offset": e.first_offset, "last_offset": e.last_offset,
                                              "last_stable_offset": e.last_stable_offset} for e in entries],
                                 "trailing": b""}) == data


snapshot_entry = st.builds(ProducerSnapshotEntry, int64, st.integers(-(2**15), 2**15 - 1), int32, int64, int32, int64,
                           int32, int64)


@given(st.lists(snapshot_entry, max_size=15))
def test_producer_snapshot_round_trip(entries: list[ProducerSnapshotEntry]) -> None:
    data = producer_snapshot.build_producer_snapshot(entries)
    assert len(data) == 10 + 46 * len(entries)
    snap = producer_snapshot.parse_producer_snapshot(data)
    assert snap.entries == entries and snap.crc_valid and snap.version == 1
    assert snap.crc == crc32c.crc32c(data[6:])
    view = producer_snapshot.FILE.parse(data)
    assert view.crc == snap.crc and len(view.entries) == len(entries) and view.trailing == b""


topics = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", min_size=1,
                 max_size=249)


@given(st.dictionaries(st.builds(TopicPartition, topics, st.integers(0, 2**31 - 1)), st.integers(-1, 2**63 - 1),
                       max_size=10))
def test_offset_checkpoint_round_trip(entries: dict[TopicPartition, int]) -> None:
    data = checkpoint.build_offset_checkpoint(entries)
    assert data.startswith(f"0\n{len(entries)}\n".encode())
    assert checkpoint.parse_offset_checkpoint(data) == entries
    assert list(checkpoint.parse_offset_checkpoint(data)) == list(entries)


@given(st.lists(st.builds(LeaderEpochEntry, st.integers(0, 2**31 - 1), st.integers(0, 2**63 - 1)), max_size=10))
def test_leader_epoch_checkpoint_round_trip(entries: list[LeaderEpochEntry]) -> None:
    data = checkpoint.build_leader_epoch_checkpoint(entries)
    assert checkpoint.parse_leader_epoch_checkpoint(data) == entries


@given(st.binary(min_size=16, max_size=16).filter(lambda b: any(b)), st.integers(0, 5))
def test_partition_metadata_round_trip(raw: bytes, version: int) -> None:
    text = partition_metadata.encode_kafka_uuid(raw)
    assert len(text) == 22 and partition_metadata.decode_kafka_uuid(text) == raw
    got = partition_metadata.parse_partition_metadata(partition_metadata.build_partition_metadata(text, version))
    assert (got.version, got.topic_id, got.topic_id_bytes) == (version, text, raw)
    assert got.topic_uuid.bytes == raw


prop_text = st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=0x2FF, exclude_categories=("Cs",)),
                    max_size=12)


@given(st.dictionaries(prop_text.filter(bool), prop_text, max_size=8))
def test_properties_round_trip(props: dict[str, str]) -> None:
    data = meta_properties.build_meta_properties(props, ("#", "#a date"))
    got, comments, _ = meta_properties.parse_properties(data)
    assert got == props and comments == ("#", "#a date")


@given(int64, st.integers(-(2**31), 2**31 - 1))
def test_clean_shutdown_round_trip(epoch: int, version: int) -> None:
    data = clean_shutdown.build_clean_shutdown(epoch, version)
    got = clean_shutdown.parse_clean_shutdown(data)
    assert (got.broker_epoch, got.version, got.format) == (epoch, version, "json")
    assert (got.problem is None) == (version == 0)


# --- producer snapshot errors ------------------------------------------------------------------------------

ONE = producer_snapshot.build_producer_snapshot([ProducerSnapshotEntry(1000, 0, 32, 127, 4, 1_700_000_001_926, -1,
                                                                       -1)])


@pytest.mark.parametrize(("size", "field", "position"), [
    (0, "version", 0), (1, "version", 0), (2, "crc", 2), (5, "crc", 2), (6, "count", 6), (9, "count", 6),
    (10, "count", 6), (11, "count", 10), (55, "count", 10)])
def test_truncated_snapshot_names_field_and_position(size: int, field: str, position: int) -> None:
    with pytest.raises(DecodeError) as err:
        producer_snapshot.parse_producer_snapshot(ONE[:size])
    assert (err.value.field, err.value.position) == (field, position)


def test_snapshot_entries_cut_inside_the_second_entry() -> None:
    entry = ProducerSnapshotEntry(7, 1, 5, 10, 0, 1, 2, -1)
    two = producer_snapshot.build_producer_snapshot([entry, entry])
    with pytest.raises(DecodeError) as err:
        producer_snapshot.parse_producer_snapshot(two[:-1])
    assert err.value.field == "count" and err.value.position == 10 + 46
    assert "inside entry 1 (45 of 46 bytes)" in err.value.reason


def test_snapshot_version_and_count_errors() -> None:
    for version in (0, 2, -1):
        with pytest.raises(DecodeError) as err:
            producer_snapshot.parse_producer_snapshot(struct.pack(">h", version) + ONE[2:])
        assert (err.value.field, err.value.position) == ("version", 0)
    negative = ONE[:6] + struct.pack(">i", -1) + ONE[10:]
    with pytest.raises(DecodeError) as err:
        producer_snapshot.parse_producer_snapshot(negative)
    assert (err.value.field, err.value.position) == ("count", 6) and "negative" in err.value.reason
    huge = ONE[:6] + struct.pack(">i", 47) + ONE[10:]  # more entries than bytes: Kafka's allocation check
    with pytest.raises(DecodeError) as err:
        producer_snapshot.parse_producer_snapshot(huge)
    assert (err.value.field, err.value.position) == ("count", 6) and "only 46 bytes" in err.value.reason


def test_snapshot_bad_crc_still_decodes() -> None:
    flipped = bytearray(ONE)
    flipped[20] ^= 0x01
    snap = producer_snapshot.parse_producer_snapshot(bytes(flipped))
    assert not snap.crc_valid and snap.crc == struct.unpack(">I", ONE[2:6])[0]
    assert snap.entries[0].last_sequence == 32 + (1 << 24)  # byte 20 is last_sequence's high byte
    stored = bytearray(ONE)
    stored[3] ^= 0xFF
    assert not producer_snapshot.parse_producer_snapshot(bytes(stored)).crc_valid


def test_snapshot_trailing_bytes_are_covered_by_the_crc() -> None:
    body = ONE + b"xx"
    assert producer_snapshot.trailing_bytes(body) == 2
    assert not producer_snapshot.parse_producer_snapshot(body).crc_valid
    fixed = body[:2] + struct.pack(">I", crc32c.crc32c(body[6:])) + body[6:]
    snap = producer_snapshot.parse_producer_snapshot(fixed)
    assert snap.crc_valid and len(snap.entries) == 1


def test_empty_snapshot_is_ten_bytes() -> None:
    empty = producer_snapshot.build_producer_snapshot([])
    assert empty == b"\x00\x01" + crc32c.crc32c(b"\0\0\0\0").to_bytes(4, "big") + b"\0\0\0\0"
    snap = producer_snapshot.parse_producer_snapshot(empty)
    assert snap.entries == [] and snap.crc_valid


def test_producer_state_without_batch_is_kafkas_empty_entry() -> None:
    entry = ProducerSnapshotEntry(5, 2, 9, -1, 3, 1000, 4, -1)
    state = ProducerStateEntry.from_snapshot(entry)
    assert not state.batches
    assert (state.first_seq, state.last_seq, state.first_data_offset, state.last_data_offset,
            state.last_offset_delta, state.current_txn_first_offset) == (-1, -1, -1, -1, 0, None)
    wrapped = ProducerStateEntry.from_snapshot(ProducerSnapshotEntry(6, 0, 1, 100, 9, 1, -1, 92))
    assert wrapped.first_seq == 2**31 - 1 - 7 and wrapped.first_data_offset == 91
    assert wrapped.current_txn_first_offset == 92


# --- index errors and quirks ---------------------------------------------------------------------------------


def test_index_sanity_checks() -> None:
    base = 100
    good = offset_index.build_offset_index([OffsetIndexEntry(110, 0), OffsetIndexEntry(120, 4000)], base)
    offset_index.sanity_check(good + bytes(32), base)  # zero fill ends at the base offset: passes
    with pytest.raises(DecodeError) as err:
        offset_index.sanity_check(good + b"\0\0\0", base)
    assert (err.value.field, err.value.position) == ("entries", 16)
    with pytest.raises(DecodeError) as err:
        offset_index.sanity_check(good + struct.pack(">ii", -5, 0), base)
    assert (err.value.field, err.value.position) == ("relative_offset", 16)
    times = time_index.build_time_index([TimeIndexEntry(1000, 110), TimeIndexEntry(2000, 120)], base)
    time_index.sanity_check(times, base)
    with pytest.raises(DecodeError) as err:
        time_index.sanity_check(times + bytes(12), base)
    assert (err.value.field, err.value.position) == ("timestamp", 24)
    with pytest.raises(DecodeError) as err:
        time_index.sanity_check(times + struct.pack(">qi", 3000, -1), base)
    assert (err.value.field, err.value.position) == ("relative_offset", 32)
    with pytest.raises(DecodeError) as err:
        time_index.sanity_check(times[:-1], base)
    assert (err.value.field, err.value.position) == ("entries", 12)


def test_live_entries_stop_at_the_zero_fill() -> None:
    base = 50
    data = offset_index.build_offset_index([OffsetIndexEntry(50, 0), OffsetIndexEntry(60, 1000)], base,
                                           preallocate=64)
    parsed = offset_index.parse_offset_index(data, base)
    assert parsed.entries == [OffsetIndexEntry(50, 0), OffsetIndexEntry(60, 1000)]  # slot 0 may be the base
    assert (parsed.slots, parsed.zero_tail, parsed.trailing_bytes) == (8, 6, 0)
    assert offset_index.parse_offset_index(data + b"\1\2", base).trailing_bytes == 2
    assert offset_index.parse_offset_index(b"", base).entries == []


def test_build_rejects_what_a_slot_cannot_hold() -> None:
    with pytest.raises(ValueError):
        offset_index.build_offset_index([OffsetIndexEntry(2**31 + 10, 0)], 0)
    with pytest.raises(ValueError):
        time_index.build_time_index([TimeIndexEntry(0, -(2**31) - 1)], 0)
    with pytest.raises(ValueError):
        txn_index.build_txn_index([AbortedTxn(2**15, 1, 2, 3, 4)])
    with pytest.raises(ValueError):
        producer_snapshot.build_producer_snapshot([ProducerSnapshotEntry(1, 2**15, 0, 0, 0, 0, 0, 0)])


def test_txn_index_version_is_read_as_one_byte() -> None:
    def entry(version_bytes: bytes) -> bytes:
        return version_bytes + struct.pack(">qqqq", 7, 10, 20, 11)

    lenient = txn_index.parse_txn_index(entry(b"\x00\x05"))
    assert lenient[0].version == 5 and txn_index.kafka_version(lenient[0]) == 0
    txn_index.check_versions(lenient)  # Kafka reads version 0 and goes on
    assert txn_index.kafka_version(txn_index.parse_txn_index(entry(b"\xff\x00"))[0]) == -1
    newer = txn_index.parse_txn_index(entry(b"\x00\x00") + entry(b"\x01\x00"))
    with pytest.raises(DecodeError) as err:
        txn_index.check_versions(newer)
    assert (err.value.field, err.value.position) == ("version", 34) and "version 1" in err.value.reason
    with pytest.raises(DecodeError) as err:
        txn_index.sanity_check(txn_index.parse_txn_index(entry(b"\x00\x00")), 21)
    assert (err.value.field, err.value.position) == ("last_offset", 18)
    assert txn_index.parse_txn_index(entry(b"\0\0")[:-1]) == []


# --- checkpoint errors -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("data", "field", "position"), [
    (b"1\n0\n", "version", 0),
    (b"x\n0\n", "version", 0),
    (b" 0\n0\n", "version", 0),
    (b"0\n2\nt 0 5\n", "count", 2),
    (b"0\n0\nt 0 5\n", "count", 2),
    (b"0\n-1\n", "count", 2),
    (b"0\n1 \nt 0 5\n", "count", 2),
    (b"0\n1\nt 0\n", "entry", 4),
    (b"0\n1\n t 0 5\n", "entry", 4),
    (b"0\n2\nt 0 5\n\n", "entry", 10),
    (b"0\n1\nt 0 5 6\n", "entry", 4),
    (b"0\n1\nt x 5\n", "partition", 4),
    (b"0\n1\nt 2147483648 5\n", "partition", 4),
    (b"0\n1\nt 0 9223372036854775808\n", "offset", 4),
    (b"0\r\n1\r\nt 0 \xff\n", "encoding", 10),
])
def test_offset_checkpoint_errors(data: bytes, field: str, position: int) -> None:
    with pytest.raises(DecodeError) as err:
        checkpoint.parse_offset_checkpoint(data)
    assert (err.value.field, err.value.position) == (field, position)
    if field != "encoding":
        assert "line " in err.value.reason


def test_offset_checkpoint_leniencies_match_kafka() -> None:
    tp = TopicPartition("my.topic-x_y", 3)
    assert checkpoint.parse_offset_checkpoint(b"") == {}
    assert checkpoint.parse_offset_checkpoint(b"0\n") == {}
    assert checkpoint.parse_offset_checkpoint(b"0") == {}
    assert checkpoint.parse_offset_checkpoint(b"0\n1\nmy.topic-x_y 3 42") == {tp: 42}
    assert checkpoint.parse_offset_checkpoint(b"0\r\n1\r\nmy.topic-x_y\t3  42 \t\n") == {tp: 42}
    assert checkpoint.parse_offset_checkpoint(b"+0\n+1\nmy.topic-x_y +3 -1\n") == {tp: -1}
    dup = b"0\n2\nt 0 5\nt 0 9\n"
    assert checkpoint.parse_offset_checkpoint(dup) == {TopicPartition("t", 0): 9}
    assert checkpoint.parse_offset_checkpoint_entries(dup) == [(TopicPartition("t", 0), 5), (TopicPartition("t", 0), 9)]
    assert checkpoint.build_offset_checkpoint({TopicPartition("payments", 0): 412}) == b"0\n1\npayments 0 412\n"


def test_leader_epoch_checkpoint_errors() -> None:
    assert checkpoint.build_leader_epoch_checkpoint([LeaderEpochEntry(0, 0), LeaderEpochEntry(1, 211)]) == \
        b"0\n2\n0 0\n1 211\n"
    for data, field, position in ((b"0\n1\n0 0 0\n", "entry", 4), (b"0\n1\nx 0\n", "epoch", 4),
                                  (b"0\n1\n0 y\n", "start_offset", 4), (b"0\n2\n0 0\n", "count", 2),
                                  (b"2\n0\n", "version", 0)):
        with pytest.raises(DecodeError) as err:
            checkpoint.parse_leader_epoch_checkpoint(data)
        assert (err.value.field, err.value.position) == (field, position), data


def test_checkpoint_build_refuses_unreadable_entries() -> None:
    for bad in (TopicPartition("has space", 0), TopicPartition("", 0), TopicPartition("t", 2**31)):
        with pytest.raises(ValueError):
            checkpoint.build_offset_checkpoint([(bad, 1)])
    with pytest.raises(ValueError):
        checkpoint.build_leader_epoch_checkpoint([LeaderEpochEntry(2**31, 0)])


# --- partition.metadata, meta.properties, clean shutdown ---------------------------------------------------

TOPIC_ID = "rje7iD-Zl_0r9ko9TQU1Xw"


def test_partition_metadata_reader_rules() -> None:
    got = partition_metadata.parse_partition_metadata(f"version: 0\ntopic_id: {TOPIC_ID}".encode())
    assert got.topic_id == TOPIC_ID and str(got.topic_uuid) == "ae37bb88-3f99-97fd-2bf6-4a3d4d05355f"
    # Kafka's reader: any key text, several spaces, a newer version, trailing lines, padded base64.
    loose = partition_metadata.parse_partition_metadata(f"v:   3\nid:\t{TOPIC_ID}==\nmore\n".encode())
    assert (loose.version, loose.topic_id_bytes) == (3, got.topic_id_bytes)


@pytest.mark.parametrize(("data", "field", "position"), [
    (b"", "version", 0),
    (b"version:0\ntopic_id: x", "version", 0),
    (b"version: -1\ntopic_id: x", "version", 0),
    (b"version: zero\ntopic_id: x", "version", 0),
    (b"version: 0 \ntopic_id: x", "version", 0),
    (b"version: 0", "topic_id", 10),
    (b"version: 0\ntopic_id:x", "topic_id", 11),
    (b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", "topic_id", 11),
    (b"version: 0\ntopic_id: rje7iD+Zl_0r9ko9TQU1Xw", "topic_id", 11),
    (b"version: 0\ntopic_id: rje7iD-Zl_0r9ko9TQU1X", "topic_id", 11),
    (b"version: 0\ntopic_id: rje7iD-Zl_0r9ko9TQU1Xw=", "topic_id", 11),
    (b"version: 0\ntopic_id: rje7iD-Zl_0r9ko9TQU1XwAAAA", "topic_id", 11),
])
def test_partition_metadata_errors(data: bytes, field: str, position: int) -> None:
    with pytest.raises(DecodeError) as err:
        partition_metadata.parse_partition_metadata(data)
    assert (err.value.field, err.value.position) == (field, position)


def test_meta_properties_syntax_follows_java_properties() -> None:
    text = (b"# comment\n  ! other\n\nversion = 0\nbroker.id:7\ncluster.id  abc\\\n    def\n"
            b"key\\ with\\=odd\\:chars=\\u00e9t\\u00E9\\n\r\n\tindented=v\nempty\n")
    props, comments, where = meta_properties.parse_properties(text)
    assert comments == ("# comment", "  ! other")
    assert props == {"version": "0", "broker.id": "7", "cluster.id": "abcdef", "key with=odd:chars": "\u00e9t\u00e9\n",
                     "indented": "v", "empty": ""}
    assert where["broker.id"] == text.index(b"broker.id")
    meta = meta_properties.parse_meta_properties(text)
    assert (meta.version, meta.node_id, meta.broker_id, meta.cluster_id) == (0, 7, 7, "abcdef")
    # UTF-8 bytes read as ISO-8859-1, as Properties.load(InputStream) does, and written back unchanged.
    raw = "cluster.id=caf\u00e9\n".encode()
    meta = meta_properties.parse_meta_properties(raw)
    assert meta.cluster_id == "caf\u00c3\u00a9"
    assert meta_properties.build_meta_properties(meta.properties, meta.comments) == raw
    assert meta_properties.parse_meta_properties(b"").version == 0


@pytest.mark.parametrize(("data", "field", "position"), [
    (b"#\nversion=2\nnode.id=1\ncluster.id=c\n", "version", 2),
    (b"version=x\n", "version", 0),
    (b"version=1\ncluster.id=c\n", "node.id", 0),
    (b"version=1\nnode.id=1 \ncluster.id=c\n", "node.id", 10),
    (b"version=1\nnode.id=1\n", "cluster.id", 0),
    (b"broker.id=one\n", "broker.id", 0),
    (b"version=1\nnode.id=1\ncluster.id=c\ndirectory.id=nope\n", "directory.id", 33),
    (b"a=\\u12\n", "properties", 0),
])
def test_meta_properties_errors(data: bytes, field: str, position: int) -> None:
    with pytest.raises(DecodeError) as err:
        meta_properties.parse_meta_properties(data)
    assert (err.value.field, err.value.position) == (field, position)


def test_meta_properties_version_rules() -> None:
    v1 = meta_properties.parse_meta_properties(b"version= 1 \nnode.id=3\nbroker.id=x\ncluster.id=c\n")
    assert (v1.version, v1.node_id, v1.broker_id) == (1, 3, None)  # Kafka ignores broker.id in version 1
    v0 = meta_properties.parse_meta_properties(b"node.id=3\ncluster.id=c\n")
    assert (v0.version, v0.node_id) == (0, None)  # and node.id in version 0
    escaped = meta_properties.build_meta_properties({" k:=#!": " v=\t\u4e2d"})
    assert escaped == b"\\ k\\:\\=\\#\\!=\\ v\\=\\t\\u4E2D\n"
    assert meta_properties.parse_properties(escaped)[0] == {" k:=#!": " v=\t\u4e2d"}


def test_clean_shutdown_formats() -> None:
    old = clean_shutdown.parse_clean_shutdown(b"")
    assert (old.format, old.broker_epoch, old.problem) == ("empty", None, None)
    assert clean_shutdown.build_clean_shutdown(None) == b""
    assert clean_shutdown.kafka_broker_epoch(b"") is None
    canonical = b'{"version":0,"brokerEpoch":21}'
    assert clean_shutdown.build_clean_shutdown(21) == canonical
    assert clean_shutdown.parse_clean_shutdown(canonical).problem is None
    # Content Jackson reads an epoch from, though Kafka never writes it.
    for data, epoch, note in (
            (b' {"brokerEpoch": 5, "version": 0}\n', 5, "laid out differently"),
            (b'{"version":0,"brokerEpoch":"5"}', 5, "JSON string"),
            (b'{"version":0,"brokerEpoch":5.9}', 5, "truncated"),
            (b'{"brokerEpoch":5}', 5, "laid out differently"),
            (b'{"version":3,"brokerEpoch":5}', 5, "version 3"),
            (b'{"version":0,"brokerEpoch":5,"x":[1]}', 5, "unknown fields"),
            (b'{"version":0,"brokerEpoch":5}}garbage', 5, "after the JSON object")):
        got = clean_shutdown.parse_clean_shutdown(data)
        assert got.broker_epoch == epoch and got.problem and note in got.problem, data
        assert clean_shutdown.kafka_broker_epoch(data) == epoch


@pytest.mark.parametrize(("data", "field", "position"), [
    (b" \n", "content", 0),
    (b"garbage", "content", 0),
    (b'{"version":0,"brokerEpoch":}', "content", 27),
    (b"null", "content", 0),
    (b"[1]", "content", 0),
    (b'{"version":0}', "brokerEpoch", 0),
    (b'{"version":0,"brokerEpoch":null}', "brokerEpoch", 0),
    (b'{"version":0,"brokerEpoch":true}', "brokerEpoch", 0),
    (b'{"version":0,"brokerEpoch":"x"}', "brokerEpoch", 0),
    (b'{"version":0,"brokerEpoch":9223372036854775808}', "brokerEpoch", 0),
    (b'{"version":0,"brokerEpoch":NaN}', "content", 27),
    (b'{"version":"v","brokerEpoch":1}', "version", 0),
    (b'{"version":2147483648,"brokerEpoch":1}', "version", 0),
])
def test_clean_shutdown_errors(data: bytes, field: str, position: int) -> None:
    with pytest.raises(DecodeError) as err:
        clean_shutdown.parse_clean_shutdown(data)
    assert (err.value.field, err.value.position) == (field, position)
    assert clean_shutdown.kafka_broker_epoch(data) is None


# --- file names ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "kind", "offset", "flight"), [
    ("00000000000000000042.log", FileKind.LOG, 42, None),
    ("00000000000000000042.index.deleted", FileKind.OFFSET_INDEX, 42, ".deleted"),
    ("00000000000000000000.log.cleaned", FileKind.LOG, 0, ".cleaned"),
    ("00000000000000000100.timeindex.swap", FileKind.TIME_INDEX, 100, ".swap"),
    ("00000000000000000100.txnindex.cleaned", FileKind.TXN_INDEX, 100, ".cleaned"),
    ("00000000000000000100.snapshot.deleted", FileKind.PRODUCER_SNAPSHOT, 100, ".deleted"),
    ("00000000000000000045-0000000003.checkpoint", FileKind.KRAFT_SNAPSHOT, 45, None),
    ("00000000000000000045-0000000003.checkpoint.deleted", FileKind.KRAFT_SNAPSHOT, 45, ".checkpoint.deleted"),
    ("00000000000000000045-0000000003-8812345.checkpoint.part", FileKind.KRAFT_SNAPSHOT, 45, ".checkpoint.part"),
    ("bootstrap.checkpoint", FileKind.KRAFT_SNAPSHOT, None, None),
    ("recovery-point-offset-checkpoint", FileKind.RECOVERY_POINT_CHECKPOINT, None, None),
    ("replication-offset-checkpoint.tmp", FileKind.REPLICATION_OFFSET_CHECKPOINT, None, ".tmp"),
    ("leader-epoch-checkpoint.tmp", FileKind.LEADER_EPOCH_CHECKPOINT, None, ".tmp"),
    ("meta.properties", FileKind.META_PROPERTIES, None, None),
    (".kafka_cleanshutdown", FileKind.CLEAN_SHUTDOWN, None, None),
    (".lock", FileKind.LOCK, None, None),
    ("quorum-state", FileKind.QUORUM_STATE, None, None),
    ("42.log", FileKind.UNKNOWN, None, None),
    ("00000000000000000042.log.deleted.swap", FileKind.UNKNOWN, None, None),
    ("00000000000000000042.LOG", FileKind.UNKNOWN, None, None),
    ("0000000000000000004a.log", FileKind.UNKNOWN, None, None),
    ("passwd.tmp", FileKind.UNKNOWN, None, None),
])
def test_classify(name: str, kind: FileKind, offset: int | None, flight: str | None) -> None:
    assert classify(name) is kind
    assert offset_from_name(name) == offset
    assert in_flight_suffix(name) == flight


def test_offsets_in_names() -> None:
    assert segment_file_name(0, ".index") == "00000000000000000000.index"
    assert segment_file_name(2**63 - 1, ".log") == "09223372036854775807.log"
    assert offset_from_name(segment_file_name(2**63 - 1, ".log")) == 2**63 - 1
    assert kafka_offset_from_file_name("42.log") == 42  # Kafka loads unpadded names too
    assert kafka_offset_from_file_name("x.log") is None and kafka_offset_from_file_name("log") is None
    assert kraft_snapshot_file_name(45, 3) == "00000000000000000045-0000000003.checkpoint"
    assert parse_kraft_snapshot_name("00000000000000000045-0000000003.checkpoint") == (45, 3, ".checkpoint")
    assert parse_kraft_snapshot_name("00000000000000000045.checkpoint") is None


UID = "0123456789abcdef0123456789abcdef"


@pytest.mark.parametrize(("name", "expected"), [
    ("orders-0", (TopicPartition("orders", 0), DirState.LIVE)),
    ("my-topic-12", (TopicPartition("my-topic", 12), DirState.LIVE)),
    ("__cluster_metadata-0", (TopicPartition("__cluster_metadata", 0), DirState.LIVE)),
    ("a.b_c-3", (TopicPartition("a.b_c", 3), DirState.LIVE)),
    (f"orders-3.{UID}-delete", (TopicPartition("orders", 3), DirState.DELETE)),
    (f"my.topic-3.{UID}-future", (TopicPartition("my.topic", 3), DirState.FUTURE)),
    (f"orders-3.{UID}-stray", (TopicPartition("orders", 3), DirState.STRAY)),
    ("orders-+5", (TopicPartition("orders", 5), DirState.LIVE)),  # Integer.parseInt accepts a sign
    ("orders", None),
    ("orders-", None),
    ("-3", None),
    ("orders-x", None),
    ("orders-2147483648", None),
    ("remote-log-index-cache", None),
    ("orders-3-delete", None),
    (f"orders 1-3.{UID}-delete", None),
])
def test_partition_dirs(name: str, expected: tuple[TopicPartition, DirState] | None) -> None:
    assert parse_partition_dir(name) == expected


def test_partition_dir_names_round_trip() -> None:
    tp = TopicPartition("orders", 7)
    for state in DirState:
        name = partition_dir_name(tp, state, UID)
        assert parse_partition_dir(name) == (tp, state)
    long_tp = TopicPartition("t" * 249, 1)
    deleted = partition_dir_name(long_tp, DirState.DELETE, UID)
    kept = 255 - len(f"-1.{UID}-delete")
    assert len(deleted) == 255 and parse_partition_dir(deleted) == (TopicPartition("t" * kept, 1), DirState.DELETE)
    assert len(partition_dir_name(long_tp, DirState.FUTURE, UID)) > 255  # future names are not capped
    assert parse_partition_dir(partition_dir_name(tp, DirState.DELETE))[1] == "delete"
