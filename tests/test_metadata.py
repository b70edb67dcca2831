"""KRaft metadata: every record and control record against Kafka's decoding, the replayed image against Kafka's
MetadataImage, the load rules on damaged copies (torn tail, missing snapshot, snapshot beyond the log, partial
snapshot), and the broker cross-check against Kafka's verdicts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.engine import metadata_image as mi
from kafkatool.reading.log import read_log
from kafkatool.schema.control import parse_control_record, parse_raft_control_message, raft_message_class
from kafkatool.schema.metadata_records import MetaBatch, MetadataRecord, MetaRecord, parse_metadata_record
from kafkatool.schema.topic_records import decoder_for_topic
from tests.conftest import SHARED, corpus_cases, load_expected, shared_dir

runner = CliRunner()
CASES = ("kraft-controller-metadata-clean", "kraft-broker-topic-id-crosscheck")
CONTROLLER = CASES[0]
BROKER = CASES[1]
META = "__cluster_metadata-0"


def _kraft_cases() -> list[str]:
    """Every corpus case holding a KRaft metadata partition (the two named ones, and any added later)."""
    return [c for c in corpus_cases() if (SHARED / "corpus" / c / "input" / META).is_dir()] or list(CASES)


KRAFT_CASES = _kraft_cases()


def _case_input(case: str) -> Path:
    return shared_dir("corpus") / case / "input"


def _metadata_section(exp: dict[str, Any]) -> dict[str, Any]:
    before = exp["before"]
    return before.get("bootstrapAndMetadata", before)


def _files(case: str) -> list[tuple[Path, list[dict[str, Any]]]]:
    """Every raft-format file of the case with Kafka's batch list: segments, KRaft snapshots, bootstrap."""
    exp = load_expected(case)
    sec = _metadata_section(exp)
    root = _case_input(case)
    mp = sec["metadataPartition"]
    out = [(root / META / lf["file"], lf["batches"]) for lf in mp.get("logFiles") or []]
    out += [(root / META / s["file"], s["batches"]) for s in mp.get("kraftSnapshots") or []]
    if sec.get("bootstrapCheckpoint"):
        out.append((root / "bootstrap.checkpoint", sec["bootstrapCheckpoint"]["batches"]))
    return [(path, batches) for path, batches in out if path.is_file()]


def _pairs(case: str, *, control: bool) -> list[tuple[Path, Any, dict[str, Any]]]:
    """(file, our record, Kafka's decoding) for every record Kafka decoded, matched by batch position and offset
    (damaged files included: only the batches both sides read are compared)."""
    out = []
    for path, batches in _files(case):
        entries, _ = read_log(path, deep=True)
        by_position = {b["position"]: b for b in batches}
        for entry in entries:
            want = by_position.get(entry.position)
            if want is None or not getattr(entry, "records", None) or entry.is_control != control:
                continue
            by_offset = {r["offset"]: r for r in want.get("records") or []}
            for rec in entry.records:
                w = by_offset.get(rec.offset)
                if w is not None and w.get("decoded"):
                    out.append((path, rec, w["decoded"]))
    return out


@pytest.mark.parametrize("case", KRAFT_CASES)
def test_every_metadata_record_decodes_as_kafka_does(case: str) -> None:
    decoder = decoder_for_topic("__cluster_metadata")
    assert decoder is not None and decoder.name == "cluster-metadata"
    pairs = _pairs(case, control=False)
    assert pairs
    for path, rec, d in pairs:
        got = parse_metadata_record(rec.value)
        assert (got.frame_version, got.api_key, got.record_type, got.record_class, got.version) == \
            (d["frameVersion"], d["apiKey"], d["recordType"], d["recordClass"], d["version"]), (path.name, rec.offset)
        assert got.fields == d["fields"], (path.name, rec.offset)
        via_registry = decoder.decode(rec.key, rec.value)
        assert via_registry.kind == d["recordClass"] and via_registry.value["fields"] == d["fields"]


@pytest.mark.parametrize("case", KRAFT_CASES)
def test_every_raft_control_record_decodes_as_kafka_does(case: str) -> None:
    pairs = _pairs(case, control=True)
    assert pairs
    for path, rec, d in pairs:
        ctl = parse_control_record(rec.key, rec.value)
        fields = parse_raft_control_message(ctl.type, rec.value)
        assert (ctl.type_name, ctl.version, ctl.type, raft_message_class(ctl.type)) == \
            (d["controlType"], d["controlKeyVersion"], d["controlTypeId"], d["messageClass"]), (path.name, rec.offset)
        assert fields["version"] == d["valueVersion"]
        assert fields == d["fields"]


@pytest.mark.parametrize("case", KRAFT_CASES)
def test_dumping_the_log_dir_reads_every_raft_file_at_kafkas_batch_positions(case: str) -> None:
    """``dump-segment LOG_DIR`` takes the log dir's bootstrap.checkpoint as well as the metadata partition's
    segments and snapshots, and finds each file's batches where Kafka read them."""
    res = runner.invoke(app, ["dump-segment", "-f", "jsonl", str(_case_input(case))])
    assert res.exit_code in (0, 1), res.output
    positions: dict[str, list[int]] = {}
    for line in res.stdout.splitlines():
        row = json.loads(line)
        if row.get("type") == "batch":
            positions.setdefault(str(Path(row["file"]).resolve()), []).append(row["position"])
    want = {str(path.resolve()): [b["position"] for b in batches] for path, batches in _files(case)}
    assert any(name.endswith("bootstrap.checkpoint") for name in want)
    assert {name: positions.get(name) for name in want} == want


def test_a_bad_frame_version_and_garbage_are_reported_as_kafka_words_them() -> None:
    from kafkatool.errors import DecodeError

    with pytest.raises(DecodeError, match="frame version 0"):
        parse_metadata_record(bytes([0, 20, 0, 0]))
    with pytest.raises(DecodeError, match="garbage after 20"):
        parse_metadata_record(bytes([1, 20, 0, 0, 7]))
    unknown = parse_metadata_record(bytes([1, 99, 0, 0xAB]))
    assert unknown.record_class is None and unknown.api_key == 99 and unknown.raw == b"\xab"


def _run(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["metadata", "-f", "json", *args])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def _kafka_image(image: dict[str, Any]) -> dict[str, Any]:
    """Kafka's image (expected.json) in this tool's JSON shape."""
    topics = []
    for name in sorted(image["topics"]):
        t = image["topics"][name]
        parts = []
        for n in sorted(t["partitions"], key=int):
            p = t["partitions"][n]
            parts.append({"partition": int(n), "replicas": p["replicas"], "isr": p["isr"], "leader": p["leader"],
                          "leader_epoch": p["leaderEpoch"], "partition_epoch": p["partitionEpoch"],
                          "leader_recovery_state": p["leaderRecoveryState"],
                          "removing_replicas": p["removingReplicas"], "adding_replicas": p["addingReplicas"],
                          "eligible_leader_replicas": p["eligibleLeaderReplicas"],
                          "last_known_elr": p["lastKnownElr"], "directories": p["directories"]})
        topics.append({"name": name, "topic_id": t["topicId"], "partitions": parts})
    brokers = [{"broker_id": b["brokerId"], "broker_epoch": b["brokerEpoch"], "incarnation_id": b["incarnationId"],
                "fenced": b["fenced"], "in_controlled_shutdown": b["inControlledShutdown"], "rack": b["rack"],
                "listeners": [{"name": x["name"], "host": x["host"], "port": x["port"],
                               "security_protocol": x["securityProtocol"]} for x in b["listeners"]],
                "log_dirs": b["logDirs"]}
               for b in sorted(image["brokers"].values(), key=lambda b: b["brokerId"])]
    configs = []
    for key in sorted(image["configs"]):
        rtype, _, rname = key.partition(":")
        configs.append((rtype, rname, image["configs"][key]))
    prov = image["provenance"]
    return {
        "provenance": {"last_contained_offset": prov["lastContainedOffset"],
                       "last_contained_epoch": prov["lastContainedEpoch"],
                       "last_contained_log_time_ms": prov["lastContainedLogTimeMs"]},
        "features": {"metadata_version": image["features"]["metadataVersion"],
                     "finalized_levels": image["features"]["finalizedLevels"],
                     "zk_migration_state": image["features"]["zkMigrationState"]},
        "brokers": brokers,
        "controllers": [{"controller_id": c["controllerId"], "incarnation_id": c["incarnationId"],
                         "zk_migration_ready": c["zkMigrationReady"]}
                        for c in sorted(image["controllers"].values(), key=lambda c: c["controllerId"])],
        "topics": topics,
        "producer_ids": {"next_producer_id": image["producerIds"]["nextProducerId"]},
        "configs": sorted(configs),
    }


def _ours(image: dict[str, Any]) -> dict[str, Any]:
    """Our image restricted to what Kafka's expected image holds."""
    out = {k: image[k] for k in ("provenance", "features", "brokers", "topics", "producer_ids")}
    out["controllers"] = [{k: c[k] for k in ("controller_id", "incarnation_id", "zk_migration_ready")}
                          for c in image["controllers"]]
    out["configs"] = sorted((c["resource_type"], c["resource_name"], c["configs"]) for c in image["configs"])
    return out


@pytest.mark.parametrize("case", KRAFT_CASES)
def test_the_load_and_the_image_equal_kafkas(case: str) -> None:
    exp = load_expected(case)
    after = exp["afterLoad"]["metadataPartition"]
    code, doc = _run(str(_case_input(case)))
    assert _ours(doc["image"]) == _kafka_image(after["metadataImageAfterLoad"]["image"])
    if not exp.get("mutations"):
        assert code == 0 and doc["defects"] == []
        assert _ours(doc["image"]) == _kafka_image(exp["writer"]["finalMetadataImage"])
    if "logRecordsReplayed" in after["metadataImageAfterLoad"]:
        assert doc["replay"]["log_records_replayed"] == after["metadataImageAfterLoad"]["logRecordsReplayed"]
    assert doc["log"]["log_end_offset"] == after["logEndOffset"]
    assert doc["log"]["log_start_offset"] == after["logStartOffset"]
    assert doc["log"]["leader_epochs"] == after["leaderEpochEntries[epoch,startOffset]"]
    assert doc["snapshots"]["retained"] == after["snapshotsRetained"]
    startup_deleted = [d["file"] for d in doc["snapshots"]["deleted"] if not d["reason"].startswith("forgotten")]
    assert sorted(startup_deleted) == sorted(after["snapshotsDeleted"])
    assert doc["snapshots"]["truncate_to_latest_snapshot"].startswith("no truncation") == \
        after["truncateToLatestSnapshot"].startswith("no truncation")
    latest, want_latest = doc["snapshots"]["latest"], after.get("latestSnapshotId")
    assert (None if latest is None else (latest["end_offset"], latest["epoch"])) == \
        (None if not want_latest else (want_latest["endOffset"], want_latest["epoch"]))
    sec = _metadata_section(exp)
    if sec.get("bootstrapCheckpoint"):
        boot = sec["bootstrapCheckpoint"]["readByBootstrapDirectory"]
        assert doc["bootstrap"]["metadata_version"] == boot["metadataVersion"]
        assert [(r["record_type"], r["version"], r["fields"]) for r in doc["bootstrap"]["records"]] == \
            [(r["recordType"], r["version"], r["fields"]) for r in boot["records"]]
    if sec["metadataPartition"].get("quorumState"):
        q = sec["metadataPartition"]["quorumState"]["readByFileQuorumStateStore"]
        state = doc["quorum_state"]
        assert (state["epoch"], state["leader_id"]) == (q["epoch"], q["leaderId"])
        assert (state["voted_id"] is None) == (q["votedKey"] is None)
        if q["votedKey"] is not None:  # Kafka prints a ReplicaKey; its id is ours
            assert str(state["voted_id"]) in str(q["votedKey"])


def _copy(case: str, tmp_path: Path) -> Path:
    dest = tmp_path / "logdir"
    shutil.copytree(_case_input(case), dest)
    return dest


def _batches(case: str, name: str) -> list[dict[str, Any]]:
    mp = _metadata_section(load_expected(case))["metadataPartition"]
    return next(lf["batches"] for lf in mp["logFiles"] if lf["file"] == name)


def test_a_torn_last_batch_is_cut_and_the_rest_is_kafkas_image(tmp_path: Path) -> None:
    # The last batch holds a NoOpRecord: without it the image is Kafka's final image, one batch earlier.
    root = _copy(CONTROLLER, tmp_path)
    batches = _batches(CONTROLLER, "00000000000000000041.log")
    last, before = batches[-1], batches[-2]
    seg = root / META / "00000000000000000041.log"
    seg.write_bytes(seg.read_bytes()[:last["position"] + last["sizeInBytes"] - 7])
    code, doc = _run(str(root))
    assert code == 1 and doc["defects"]
    assert doc["log"]["log_end_offset"] == last["baseOffset"]
    assert doc["log"]["bytes_truncated"] == last["sizeInBytes"] - 7
    want = _kafka_image(load_expected(CONTROLLER)["writer"]["finalMetadataImage"])
    want["provenance"] = {"last_contained_offset": before["lastOffset"],
                          "last_contained_epoch": before["partitionLeaderEpoch"],
                          "last_contained_log_time_ms": before["maxTimestamp"]}
    assert _ours(doc["image"]) == want


def test_without_the_newest_snapshot_the_whole_log_gives_kafkas_image(tmp_path: Path) -> None:
    root = _copy(CONTROLLER, tmp_path)
    (root / META / "00000000000000000045-0000000003.checkpoint").unlink()
    code, doc = _run(str(root))
    assert code == 0
    assert doc["snapshots"]["latest"]["file"] == "00000000000000000000-0000000000.checkpoint"
    assert _ours(doc["image"]) == _kafka_image(load_expected(CONTROLLER)["writer"]["finalMetadataImage"])


def test_a_snapshot_beyond_a_cut_log_truncates_the_log_to_it(tmp_path: Path) -> None:
    # Tearing the second segment's first batch leaves the log ending at 41 < 45 in the snapshot's epoch 3:
    # truncateToLatestSnapshot empties the log and the image is the snapshot's, Kafka's image at the snapshot.
    root = _copy(CONTROLLER, tmp_path)
    seg = root / META / "00000000000000000041.log"
    seg.write_bytes(seg.read_bytes()[:30])
    code, doc = _run(str(root))
    assert code == 1
    assert doc["snapshots"]["truncate_to_latest_snapshot"].startswith("latest snapshot")
    assert (doc["log"]["log_start_offset"], doc["log"]["log_end_offset"]) == (45, 45)
    assert doc["snapshots"]["retained"] == ["00000000000000000045-0000000003.checkpoint"]
    assert doc["replay"]["log_batches"] == 0
    assert _ours(doc["image"]) == _kafka_image(load_expected(CONTROLLER)["writer"]["metadataImageAtSnapshot"])


def test_a_partial_snapshot_is_deleted_and_ignored(tmp_path: Path) -> None:
    root = _copy(CONTROLLER, tmp_path)
    part = root / META / "00000000000000000070-0000000009-123456.checkpoint.part"
    shutil.copy(root / META / "00000000000000000045-0000000003.checkpoint", part)
    code, doc = _run(str(root))
    assert code == 0
    assert [d["file"] for d in doc["snapshots"]["deleted"]] == [part.name]
    assert doc["snapshots"]["latest"]["file"] == "00000000000000000045-0000000003.checkpoint"
    assert _ours(doc["image"]) == _kafka_image(load_expected(CONTROLLER)["writer"]["finalMetadataImage"])


def test_history_lists_every_leader_and_isr_change_of_the_partition() -> None:
    _, with_snapshot = _run(str(_case_input(CONTROLLER)))
    assert with_snapshot["replay"]["source"].startswith("snapshot 00000000000000000045")
    _, full = _run(str(_case_input(CONTROLLER)), "--history", "payments-1")
    history = full["history"]
    # payments-1's own records in the log: its creation and each change of leader or ISR, in offset order.
    records = [r for lf in _metadata_section(load_expected(CONTROLLER))["metadataPartition"]["logFiles"]
               for b in lf["batches"] if not b["isControl"] for r in b["records"]
               if r["decoded"]["recordClass"] in ("PartitionRecord", "PartitionChangeRecord")
               and r["decoded"]["fields"]["topicId"] == "rje7iD-Zl_0r9ko9TQU1Xw"
               and r["decoded"]["fields"]["partitionId"] == 1
               and (r["decoded"]["recordClass"] == "PartitionRecord" or "leader" in r["decoded"]["fields"]
                    or "isr" in r["decoded"]["fields"])]
    assert [h["offset"] for h in history] == [r["offset"] for r in records]
    fenced = next(h for h in history if h["leader"] == -1)
    assert fenced["isr"] == [3]  # the fenced last ISR member stays in the ISR, with no leader
    assert history[-1]["leader"] == with_snapshot["image"]["topics"][2]["partitions"][1]["leader"]


def _record(name: str, fields: dict[str, Any]) -> MetadataRecord:
    return MetadataRecord(1, 0, 0, name, fields)


def test_transaction_records_never_enter_the_image_and_an_abort_drops_its_records() -> None:
    def batch(offset: int, *recs: MetadataRecord) -> MetaBatch:
        return MetaBatch(offset, offset + len(recs) - 1, 1, 0, False,
                         tuple(MetaRecord(offset + i, r) for i, r in enumerate(recs)), "t", 0)

    r = mi.Replayer()
    r.replay_batches([
        batch(0, _record("BeginTransactionRecord", {"name": "x"}),
              _record("TopicRecord", {"name": "a", "topicId": "A"}), _record("EndTransactionRecord", {})),
        batch(3, _record("BeginTransactionRecord", {}), _record("TopicRecord", {"name": "b", "topicId": "B"}),
              _record("AbortTransactionRecord", {})),
        batch(6, _record("BeginTransactionRecord", {}), _record("TopicRecord", {"name": "c", "topicId": "C"})),
    ])
    assert sorted(t.name for t in r.published().topics.values()) == ["a"]
    assert r.defects == []
    r.replay_batch(batch(8, _record("EndTransactionRecord", {})))
    assert sorted(t.name for t in r.published().topics.values()) == ["a", "c"]
    r.replay_batch(batch(9, _record("EndTransactionRecord", {})))
    assert [d.code for d in r.defects] == ["metadata-replay"]


def test_the_cross_check_flags_exactly_the_stray_partition_of_the_recreated_topic() -> None:
    exp = load_expected(BROKER)
    root = _case_input(BROKER)
    code, doc = _run(str(root), "--check-broker", str(root))
    assert code == 1
    assert doc["broker_id"] == 1
    got = {c["partition_dir"]: c for c in doc["topic_id_check"]}
    assert sorted(got) == sorted(c["partitionDir"] for c in exp["topicIdCrossCheck"])
    for want in exp["topicIdCrossCheck"]:
        c = got[want["partitionDir"]]
        assert (c["topic_id_on_disk"], c["topic_id_in_image"], c["match"], c["broker_is_replica"]) == \
            (want["topicIdInPartitionMetadata"], want["topicIdInMetadataImage"], want["match"],
             want["brokerIsReplica"])
        assert (c["verdict"] == "ok") == (want["verdict"] == "ok")
        assert c["stray"] == (want["verdict"] != "ok")
    # meta.properties directory.id is the log dir broker 1 registered, and its replicas are assigned to it.
    dir_id = next(line.split("=", 1)[1] for line in exp["before"]["metaProperties"].splitlines()
                  if line.startswith("directory.id="))
    assert doc["log_dir_check"] == [{"log_dir": str(root), "directory_id": dir_id, "registered": True}]
    assert {c["assigned_directory"] for c in doc["topic_id_check"]} == {dir_id}


def test_dump_segment_decodes_quorum_state_as_the_store_reads_it() -> None:
    exp = load_expected(CONTROLLER)
    q = exp["before"]["metadataPartition"]["quorumState"]["readByFileQuorumStateStore"]
    result = runner.invoke(app, ["dump-segment", "-f", "json", str(_case_input(CONTROLLER) / META / "quorum-state")])
    assert result.exit_code == 0, result.output
    items = {i["key"]: i["value"] for i in json.loads(result.stdout)["files"][0]["items"]}
    assert (items["epoch"], items["leader_id"], items["voted_id"]) == (q["epoch"], q["leaderId"], q["votedKey"])


def test_usage_and_unreadable_input(tmp_path: Path) -> None:
    assert runner.invoke(app, ["metadata", str(tmp_path)]).exit_code == 3
    (tmp_path / META).mkdir()  # a metadata partition with nothing in it yet: an empty image, no defect
    code, doc = _run(str(tmp_path))
    assert code == 0 and doc["image"]["topics"] == [] and doc["log"]["log_end_offset"] == 0
    assert runner.invoke(app, ["metadata", str(tmp_path), "--history", "nodash"]).exit_code == 2


def test_a_snapshot_name_kafka_cannot_parse_stops_the_node(tmp_path: Path) -> None:
    root = _copy(CONTROLLER, tmp_path)
    (root / META / "latest.checkpoint").write_bytes(b"")
    code, doc = _run(str(root))
    assert code == 1
    assert [d["code"] for d in doc["defects"]] == ["kraft-snapshot-name"]
    assert _ours(doc["image"]) == _kafka_image(load_expected(CONTROLLER)["writer"]["finalMetadataImage"])


def test_removing_a_topic_deletes_only_the_configs_the_image_held_before_the_batch() -> None:
    def batch(offset: int, *recs: MetadataRecord) -> MetaBatch:
        return MetaBatch(offset, offset + len(recs) - 1, 1, 0, False,
                         tuple(MetaRecord(offset + i, r) for i, r in enumerate(recs)), "t", 0)

    def config(topic: str) -> MetadataRecord:
        return _record("ConfigRecord", {"resourceType": 2, "resourceName": topic, "name": "retention.ms",
                                        "value": "1"})

    r = mi.Replayer()
    r.replay_batches([
        batch(0, _record("TopicRecord", {"name": "a", "topicId": "A"}), config("a")),
        batch(2, _record("RemoveTopicRecord", {"topicId": "A"})),
        batch(3, _record("TopicRecord", {"name": "b", "topicId": "B"}), config("b"),
              _record("RemoveTopicRecord", {"topicId": "B"})),
    ])
    assert r.defects == []
    assert r.image.topics == {}
    assert list(r.image.configs) == [(2, "b")]  # created in the same delta as the removal: Kafka keeps it


def test_a_partition_change_keeps_what_it_leaves_null_and_bumps_epochs() -> None:
    def batch(offset: int, *recs: MetadataRecord) -> MetaBatch:
        return MetaBatch(offset, offset + len(recs) - 1, 1, 0, False,
                         tuple(MetaRecord(offset + i, r) for i, r in enumerate(recs)), "t", 0)

    r = mi.Replayer()
    r.replay_batches([batch(0, _record("TopicRecord", {"name": "a", "topicId": "A"}), _record("PartitionRecord", {
        "partitionId": 0, "topicId": "A", "replicas": [1, 2], "isr": [1, 2], "removingReplicas": [],
        "addingReplicas": [], "leader": 1, "leaderEpoch": 4, "partitionEpoch": 7}))])
    r.replay_batch(batch(2, _record("PartitionChangeRecord", {"partitionId": 0, "topicId": "A", "isr": [1]})))
    p = r.image.topics["A"].partitions[0]
    assert (p.leader, p.isr, p.leader_epoch, p.partition_epoch) == (1, [1], 4, 8)
    r.replay_batch(batch(3, _record("PartitionChangeRecord", {"partitionId": 0, "topicId": "A", "leader": -1})))
    p = r.image.topics["A"].partitions[0]
    assert (p.leader, p.isr, p.leader_epoch, p.partition_epoch) == (-1, [1], 5, 9)
    assert p.directories == [mi.MIGRATING_DIR, mi.MIGRATING_DIR]
    r.replay_batch(batch(4, _record("PartitionChangeRecord", {"partitionId": 9, "topicId": "A", "leader": 2})))
    assert [d.code for d in r.defects] == ["metadata-replay"]


@pytest.mark.parametrize("case", CASES)
def test_dump_segment_shows_every_record_decoded_as_kafka_does(case: str) -> None:
    for path, batches in _files(case):
        result = runner.invoke(app, ["dump-segment", "--print-data", "-f", "jsonl", str(path)])
        assert result.exit_code == 0, result.output
        rows = [json.loads(line) for line in result.stdout.splitlines()]
        got = [r for row in rows if row["type"] == "batch" for r in row["records"]]
        want = [r for b in batches for r in b["records"]]
        assert [r["offset"] for r in got] == [r["offset"] for r in want]
        for g, w in zip(got, want, strict=True):
            d = w["decoded"]
            if "controlType" in d:
                assert g["control"]["type_name"] == d["controlType"]
                assert g["control"]["message"] == {"class": d["messageClass"], "fields": d["fields"]}
            else:
                value = g["decoded"]["value"]
                assert (value["api_key"], value["record_class"], value["version"], value["fields"]) == \
                    (d["apiKey"], d["recordClass"], d["version"], d["fields"])


def test_a_log_whose_first_segment_is_gone_starts_at_its_first_segment(tmp_path: Path) -> None:
    # Log start 41: the bootstrap snapshot 0-0 is below it and deleted; snapshot 45 plus the log is Kafka's image.
    root = _copy(CONTROLLER, tmp_path)
    for suffix in (".log", ".index", ".timeindex"):
        (root / META / f"00000000000000000000{suffix}").unlink()
    code, doc = _run(str(root), "--history", "payments-1")
    assert code == 0
    assert doc["log"]["log_start_offset"] == 41
    # The history starts from the snapshot's state (no offset there), then the log's changes after it.
    assert doc["history"][0]["source"] == "snapshot" and doc["history"][0]["offset"] is None
    _, full = _run(str(_case_input(CONTROLLER)), "--history", "payments-1")
    assert doc["history"][1:] == [h for h in full["history"] if h["offset"] >= 45]
    assert [d["file"] for d in doc["snapshots"]["deleted"]] == ["00000000000000000000-0000000000.checkpoint"]
    assert _ours(doc["image"]) == _kafka_image(load_expected(CONTROLLER)["writer"]["finalMetadataImage"])


def test_damage_in_an_older_epoch_truncates_the_log_to_the_newer_snapshot(tmp_path: Path) -> None:
    # A CRC error in an epoch-1 batch cuts the log there (the later segment goes too); the snapshot's epoch 3 is
    # above the log's latest epoch 1, so the log is truncated fully and the image is the snapshot's.
    root = _copy(CONTROLLER, tmp_path)
    victim = next(b for b in _batches(CONTROLLER, "00000000000000000000.log") if b["baseOffset"] >= 20)
    assert victim["partitionLeaderEpoch"] == 1
    seg = root / META / "00000000000000000000.log"
    data = bytearray(seg.read_bytes())
    data[victim["position"] + 30] ^= 0xFF
    seg.write_bytes(bytes(data))
    code, doc = _run(str(root))
    assert code == 1 and any(d["code"] == "crc-mismatch" for d in doc["defects"])
    assert (doc["log"]["log_start_offset"], doc["log"]["log_end_offset"], doc["log"]["leader_epochs"]) == (45, 45, [])
    assert "latest epoch 1" in doc["snapshots"]["truncate_to_latest_snapshot"]
    assert _ours(doc["image"]) == _kafka_image(load_expected(CONTROLLER)["writer"]["metadataImageAtSnapshot"])


def test_kafka_format_cluster_metadata_decoder_prints_dumplogsegments_json() -> None:
    from kafkatool.engine.dls_decoders import cluster_metadata_parser, java_double
    from kafkatool.model import Record

    count = 0
    for path, batches in _files(CONTROLLER):
        entries, _ = read_log(path, deep=True)
        for entry, batch in zip(entries, batches, strict=True):
            if entry.is_control:
                continue
            for rec, want in zip(entry.records, batch["records"], strict=True):
                key, payload = cluster_metadata_parser(rec)
                d = want["decoded"]
                assert key is None
                assert payload is not None and " " not in payload.replace("Bootstrap records", "")
                assert json.loads(payload) == {"type": d["recordType"], "version": d["version"], "data": d["fields"]}
                count += 1
    assert count > 0
    assert cluster_metadata_parser(Record(7, 0, None, bytes([1, 99, 0])))[1] == (
        "Error at 7, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 99")
    assert cluster_metadata_parser(Record(8, 0, None, bytes([1, 2, 0, 0])))[1] == (
        "Error at 8, skipping. Failed to deserialize record with type 2")
    assert (java_double(1e7), java_double(0.5), java_double(1.5e-5)) == ("1.0E7", "0.5", "1.5E-5")


def test_an_older_quorum_state_is_a_warning(tmp_path: Path) -> None:
    root = _copy(CONTROLLER, tmp_path)
    (root / META / "quorum-state").write_text('{"leaderId":3000,"leaderEpoch":1,"votedId":-1,'
                                              '"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}')
    code, doc = _run(str(root))
    assert code == 1
    assert [(d["code"], d["severity"]) for d in doc["defects"]] == [("quorum-state-epoch", "warning")]
    (root / META / "quorum-state").write_text('{"leaderId":3000}')
    code, doc = _run(str(root))
    assert [d["code"] for d in doc["defects"]] == ["quorum-state-decode"] and doc["quorum_state"] is None


@pytest.mark.parametrize("case", CASES)
def test_dump_segment_verify_accepts_the_metadata_partition(case: str) -> None:
    # KRaft snapshots number their records from 0 although their name carries the end offset.
    result = runner.invoke(app, ["dump-segment", "--verify", "-f", "json", str(_case_input(case) / META)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("text", [
    "", "[1]", '{"leaderId":1}', '{"data_version":2,"leaderId":1,"leaderEpoch":2,"votedId":-1}',
    '{"data_version":1,"leaderEpoch":2,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"}',
    '{"data_version":0,"clusterId":"","leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOffset":0,'
    '"currentVoters":[{"voterId":"x"}]}',
])
def test_a_quorum_state_kafka_cannot_read_is_a_decode_error(text: str) -> None:
    from kafkatool.errors import DecodeError
    from kafkatool.schema.quorum_state import parse_quorum_state

    with pytest.raises(DecodeError):
        parse_quorum_state(text.encode())
