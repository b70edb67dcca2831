"""Every index, snapshot, checkpoint and metadata file of the corpus decodes as Kafka decoded it, and
rebuilds byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkatool.model import TopicPartition
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
from kafkatool.schema.filenames import FileKind, classify, offset_from_name
from tests.conftest import SHARED, corpus_cases, load_expected, shared_dir


def partitions() -> list[tuple[str, str]]:
    out = []
    for case in corpus_cases():
        exp = json.loads((SHARED / "corpus" / case / "expected.json").read_text())
        out += [(case, p) for p in exp["before"].get("partitions", {})]
    return out


def case_dirs() -> list[str]:
    return [c for c in corpus_cases()
            if "partitions" in json.loads((SHARED / "corpus" / c / "expected.json").read_text())["before"]]


def part_dir(case: str, part: str) -> Path:
    return shared_dir("corpus") / case / "input" / part


@pytest.mark.parametrize(("case", "part"), partitions())
def test_indexes(case: str, part: str) -> None:
    before = load_expected(case)["before"]["partitions"][part]
    for key, module, parse, build, field in (
            ("offsetIndexes", offset_index, offset_index.parse_offset_index, offset_index.build_offset_index,
             "entries[offset,position]"),
            ("timeIndexes", time_index, time_index.parse_time_index, time_index.build_time_index,
             "entries[timestamp,offset]")):
        for want in before[key]:
            path = part_dir(case, part) / want["file"]
            data = path.read_bytes()
            base = offset_from_name(path.name)
            assert len(data) == want["sizeInBytes"]
            slots = (module.parse_offset_index_slots(data, base) if module is offset_index
                     else module.parse_time_index_slots(data, base))
            parsed = parse(data, base)
            # Kafka's readers stop at the zero fill of a preallocated (never trimmed) index.
            got = [[e.offset, e.position] if module is offset_index else [e.timestamp, e.offset]
                   for e in parsed.entries]
            assert got == want[field]
            assert parsed.trailing_bytes == want["trailingBytesNotMultipleOfEntry"]
            assert build(slots, base) == data[:len(data) - parsed.trailing_bytes]


@pytest.mark.parametrize(("case", "part"), partitions())
def test_txn_indexes(case: str, part: str) -> None:
    for want in load_expected(case)["before"]["partitions"][part]["txnIndexes"]:
        data = (part_dir(case, part) / want["file"]).read_bytes()
        got = txn_index.parse_txn_index(data)
        assert [{"version": e.version, "producerId": e.producer_id, "firstOffset": e.first_offset,
                 "lastOffset": e.last_offset, "lastStableOffset": e.last_stable_offset} for e in got] == \
            want["abortedTxns"]
        assert txn_index.build_txn_index(got) == data


@pytest.mark.parametrize(("case", "part"), partitions())
def test_producer_snapshots(case: str, part: str) -> None:
    for want in load_expected(case)["before"]["partitions"][part]["producerSnapshots"]:
        path = part_dir(case, part) / want["file"]
        data = path.read_bytes()
        assert offset_from_name(path.name) == want["offset"]
        snap = producer_snapshot.parse_producer_snapshot(data)
        assert snap.crc_valid
        got = [{
            "producerId": e.producer_id, "producerEpoch": e.producer_epoch, "coordinatorEpoch": e.coordinator_epoch,
            "lastTimestamp": e.timestamp, "firstSequence": e.first_sequence, "lastSequence": e.last_sequence,
            "firstDataOffset": e.first_offset, "lastDataOffset": e.last_offset, "lastOffsetDelta": e.offset_delta,
            "currentTxnFirstOffset": None if e.current_txn_first_offset < 0 else e.current_txn_first_offset,
        } for e in snap.entries]
        assert got == [{k: p[k] for k in got[0]} for p in want["producers"]] if got else not want["producers"]
        assert producer_snapshot.build_producer_snapshot(snap.entries) == data


@pytest.mark.parametrize(("case", "part"), partitions())
def test_partition_metadata_and_epochs(case: str, part: str) -> None:
    before = load_expected(case)["before"]["partitions"][part]
    d = part_dir(case, part)
    epochs_path = d / "leader-epoch-checkpoint"
    if before.get("leaderEpochCheckpoint") is not None and epochs_path.exists():
        data = epochs_path.read_bytes()
        got = checkpoint.parse_leader_epoch_checkpoint(data)
        assert [[e.epoch, e.start_offset] for e in got] == before["leaderEpochCheckpoint"]
        assert checkpoint.build_leader_epoch_checkpoint(got) == data
    if before.get("partitionMetadata"):
        data = (d / "partition.metadata").read_bytes()
        assert data.decode() == before["partitionMetadata"]
        meta = partition_metadata.parse_partition_metadata(data)
        assert partition_metadata.build_partition_metadata(meta.topic_id) == data


@pytest.mark.parametrize("case", case_dirs())
def test_log_dir_files(case: str) -> None:
    before = load_expected(case)["before"]
    root = shared_dir("corpus") / case / "input"
    for key, name in (("recoveryPointOffsetCheckpoint", "recovery-point-offset-checkpoint"),
                      ("logStartOffsetCheckpoint", "log-start-offset-checkpoint"),
                      ("replicationOffsetCheckpoint", "replication-offset-checkpoint"),
                      ("cleanerOffsetCheckpoint", "cleaner-offset-checkpoint")):
        if key not in before:
            continue
        data = (root / name).read_bytes()
        assert data.decode() == before[key]["raw"]
        got = checkpoint.parse_offset_checkpoint(data)
        assert {str(tp): off for tp, off in got.items()} == before[key]["parsed"]
        assert checkpoint.build_offset_checkpoint(got.items()) == data
    marker = root / ".kafka_cleanshutdown"
    if before.get("cleanShutdownFile"):
        data = marker.read_bytes()
        assert data.decode() == before["cleanShutdownFile"]["content"]
        got = clean_shutdown.parse_clean_shutdown(data)
        assert got.broker_epoch == before["cleanShutdownFile"]["brokerEpochReadByKafka"]
        assert clean_shutdown.build_clean_shutdown(got.broker_epoch) == data
    else:
        assert not marker.exists()
    data = (root / "meta.properties").read_bytes()
    assert data.decode() == before["metaProperties"]
    meta = meta_properties.parse_meta_properties(data)
    assert meta.cluster_id and meta.node_id is not None
    assert meta_properties.build_meta_properties(meta.properties, meta.comments) == data


def test_every_corpus_file_name_is_classified() -> None:
    root = shared_dir("corpus")
    unknown = [p for p in root.glob("*/input/**/*") if p.is_file() and classify(p.name) is FileKind.UNKNOWN]
    assert not unknown


def test_checkpoint_errors_name_field_and_position() -> None:
    from kafkatool.errors import DecodeError

    with pytest.raises(DecodeError) as err:
        checkpoint.parse_offset_checkpoint(b"0\n2\ntopic 0 5\n")
    assert err.value.field == "count"
    with pytest.raises(DecodeError) as err:
        checkpoint.parse_offset_checkpoint(b"1\n0\n")
    assert err.value.field == "version" and err.value.position == 0
    with pytest.raises(DecodeError) as err:
        checkpoint.parse_offset_checkpoint(b"0\n1\ntopic 0\n")
    assert err.value.field == "entry" and err.value.position == 4
    assert checkpoint.parse_offset_checkpoint(b"") == {}
    assert checkpoint.parse_offset_checkpoint(b"0\n1\nmy.topic-x_y 3 42\n") == {TopicPartition("my.topic-x_y", 3): 42}


def test_snapshot_damage() -> None:
    from kafkatool.errors import DecodeError
    from kafkatool.model import ProducerSnapshotEntry

    data = producer_snapshot.build_producer_snapshot([ProducerSnapshotEntry(1, 0, 5, 10, 2, 1000, -1, -1)])
    assert len(data) == 56
    flipped = bytearray(data)
    flipped[20] ^= 1
    assert not producer_snapshot.parse_producer_snapshot(bytes(flipped)).crc_valid
    with pytest.raises(DecodeError) as err:
        producer_snapshot.parse_producer_snapshot(data[:40])
    assert err.value.field == "count"
    with pytest.raises(DecodeError) as err:
        producer_snapshot.parse_producer_snapshot(b"\x00\x02" + data[2:])
    assert err.value.field == "version"
    assert producer_snapshot.build_producer_snapshot([]) == b"\x00\x01" + bytes.fromhex("48674bc7") + b"\0\0\0\0"
