"""simulate-restart against Kafka's own load of every corpus case: afterLoad, field by field."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from tests.conftest import SHARED, corpus_cases, load_expected, shared_dir

runner = CliRunner()
PRODUCER_FIELDS = {"producerEpoch": "producer_epoch", "coordinatorEpoch": "coordinator_epoch",
                   "lastTimestamp": "last_timestamp", "firstSequence": "first_sequence",
                   "lastSequence": "last_sequence", "firstDataOffset": "first_data_offset",
                   "lastDataOffset": "last_data_offset", "lastOffsetDelta": "last_offset_delta",
                   "currentTxnFirstOffset": "current_txn_first_offset"}


def partitions() -> list[tuple[str, str]]:
    """Every (case, partition) Kafka loaded as a regular log, with its afterLoad."""
    out = []
    for case in corpus_cases():
        exp = json.loads((SHARED / "corpus" / case / "expected.json").read_text())
        out += [(case, name) for name in exp["afterLoad"].get("partitions", {})]
    return out


_CACHE: dict[str, dict[str, Any]] = {}


def simulate(case: str) -> dict[str, Any]:
    """The JSON document for a whole case (cached: one run per case)."""
    if case not in _CACHE:
        clock = load_expected(case)["afterLoad"].get("loadTimeMs", 1700003600000)
        result = runner.invoke(app, ["simulate-restart", "--format", "json", "--now", str(clock),
                                     str(shared_dir("corpus") / case / "input")])
        assert result.exit_code in (0, 1), result.stdout + result.stderr
        _CACHE[case] = json.loads(result.stdout)
    return _CACHE[case]


def _producers(doc: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for p in doc["producers"]:
        row = {k: p[v] for k, v in PRODUCER_FIELDS.items()}
        row["coordinatorEpoch"] = -1 if row["coordinatorEpoch"] is None else row["coordinatorEpoch"]
        row["cachedBatches"] = [{"firstSeq": b["first_sequence"], "lastSeq": b["last_sequence"],
                                 "firstOffset": b["first_offset"], "lastOffset": b["last_offset"],
                                 "offsetDelta": b["offset_delta"], "timestamp": b["timestamp"]}
                                for b in p["cached_batches"]]
        out[str(p["producer_id"])] = row
    return out


@pytest.mark.parametrize(("case", "name"), partitions())
def test_after_load_matches_kafka(case: str, name: str) -> None:
    after = load_expected(case)["afterLoad"]["partitions"][name]
    [got] = [p for p in simulate(case)["partitions"] if p["directory"] == name]
    if after.get("loadError"):
        assert got["outcome"] == "failed"
        message = got["error"].split(": ", 1)[1].split(", and the problem path")[0]
        assert message in json.dumps(after["loadError"])
        return
    assert got["outcome"] == "loaded", got["error"]
    assert (got["log_start_offset"], got["log_end_offset"], got["recovery_point"], got["high_watermark"]) == \
        (after["logStartOffset"], after["logEndOffset"], after["recoveryPoint"], after["highWatermark"])
    assert got["first_unstable_offset"] == after["firstUnstableOffset"]
    assert got["last_stable_offset"] == after["lastStableOffset"]
    assert [(s["base_offset"], s["size_bytes"], s["next_offset"]) for s in got["segments"]] == \
        [(s["baseOffset"], s["sizeInBytes"], s["nextOffset"]) for s in after["segments"]]
    assert got["bytes_truncated"] == after["totalBytesDropped"]
    assert [[e["epoch"], e["start_offset"]] for e in got["leader_epochs"]] == \
        after["leaderEpochEntries[epoch,startOffset]"]
    want = {pid: {k: v[k] for k in (*PRODUCER_FIELDS, "cachedBatches")} for pid, v in after["producers"].items()}
    assert _producers(got) == want
    assert got["snapshot_files_after"] == [int(f.split(".")[0]) for f in after["snapshotFilesAfterLoad"]]


def test_kraft_metadata_log_loads_as_kafka_metadata_log_does() -> None:
    """``__cluster_metadata-0`` is loaded unclean from offset 0 on every start (KafkaMetadataLog.apply)."""
    after = load_expected("kraft-controller-metadata-clean")["afterLoad"]["metadataPartition"]
    [got] = [p for p in simulate("kraft-controller-metadata-clean")["partitions"]
             if p["directory"] == "__cluster_metadata-0"]
    assert (got["log_start_offset"], got["log_end_offset"], got["recovery_point"]) == \
        (after["logStartOffset"], after["logEndOffset"], after["recoveryPoint"])
    assert [(s["base_offset"], s["size_bytes"], s["next_offset"]) for s in got["segments"]] == \
        [(s["baseOffset"], s["sizeInBytes"], s["nextOffset"]) for s in after["segments"]]
    assert [[e["epoch"], e["start_offset"]] for e in got["leader_epochs"]] == \
        after["leaderEpochEntries[epoch,startOffset]"]
    snaps = sorted(int(f["name"].split(".")[0]) for f in after["filesAfterLoad"] if f["name"].endswith(".snapshot"))
    assert got["snapshot_files_after"] == snaps


def _tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _copy_case(case: str, tmp_path: Path) -> Path:
    target = tmp_path / case
    shutil.copytree(shared_dir("corpus") / case / "input", target)
    return target


def run_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["simulate-restart", "--format", "json", *args])
    assert result.exit_code in (0, 1), result.stdout + result.stderr
    return result.exit_code, json.loads(result.stdout)


def test_input_is_never_modified() -> None:
    root = shared_dir("corpus") / "idem-torn-write" / "input"
    before = _tree_digest(root)
    runner.invoke(app, ["simulate-restart", str(root)])
    assert _tree_digest(root) == before


def test_torn_active_segment_under_a_clean_marker(tmp_path: Path) -> None:
    """No recovery: the file stays as it is, but the log end falls back to the active segment's base (the
    offset index points past the cut) and the snapshot at the old log end is deleted."""
    root = _copy_case("idem-torn-write", tmp_path)
    (root / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":1}')
    _code, doc = run_json(str(root))
    [p] = doc["partitions"]
    assert p["clean_shutdown"] and p["log_end_offset"] == p["recovery_point"] == p["high_watermark"] == 389
    assert p["segments"][-1] == {"base_offset": 389, "size_bytes": 1919, "next_offset": 389,
                                 "file": "payments-0/00000000000000000389.log"}
    assert p["bytes_truncated"] == 0 and 412 not in p["snapshot_files_after"]
    assert p["loss"]["acknowledged"] == {"from": 389, "to": 412}


def test_assume_and_recovery_point_override_the_files() -> None:
    root = str(shared_dir("corpus") / "idem-torn-write" / "input")
    _code, clean = run_json("--assume", "clean", root)
    assert clean["clean_shutdown"] and not clean["clean_shutdown_marker"]
    assert clean["partitions"][0]["log_end_offset"] == 389
    _code, deep = run_json("--recovery-point", "0", "--partition", "payments-0", root)
    p = deep["partitions"][0]
    assert p["inputs"]["recovery_point_checkpoint"] == 0
    assert sum(1 for s in p["steps"] if s["action"] == "recover-segment") == 4
    assert p["log_end_offset"] == 404 and p["recovery_point"] == 0 and p["bytes_truncated"] == 30


def test_misnamed_segment_fails_only_when_recovered(tmp_path: Path) -> None:
    root = _copy_case("idem-clean", tmp_path)
    part = root / "payments-0"
    for suffix in (".log", ".index", ".timeindex"):
        (part / f"00000000000000000258{suffix}").rename(part / f"00000000000000000300{suffix}")
    code, doc = run_json(str(root))
    assert code == 0 and doc["partitions"][0]["outcome"] == "loaded"
    code, doc = run_json("--assume", "unclean", "--recovery-point", "200", str(root))
    [p] = doc["partitions"]
    assert code == 1 and p["outcome"] == "failed"
    assert "Split operation is only permitted for segments with overflow" in p["error"]


def test_text_report_says_where_and_why(tmp_path: Path) -> None:
    result = runner.invoke(app, ["simulate-restart", str(shared_dir("corpus") / "idem-torn-write" / "input")])
    assert result.exit_code == 1
    assert "truncate payments-0/00000000000000000389.log at byte 1889: a partial batch (torn write)" in result.stdout
    assert "offsets 404 to 411 had been replicated" in result.stdout


def test_usage_errors() -> None:
    root = str(shared_dir("corpus") / "idem-clean" / "input")
    assert runner.invoke(app, ["simulate-restart", "--partition", "nope-0", root]).exit_code == 2
    assert runner.invoke(app, ["simulate-restart", "--assume", "maybe", root]).exit_code == 2
    assert runner.invoke(app, ["simulate-restart", "/nonexistent/dir"]).exit_code == 3


def _snapshot_events(messages: list[str]) -> list[tuple[str, int]]:
    """Kafka's own log lines about producer snapshots, in order."""
    out = []
    for m in messages:
        if r := re.search(r"Deleted producer state snapshot .*?(\d{20})\.snapshot", m):
            out.append(("delete", int(r.group(1))))
        elif r := re.search(r"Loading producer state from snapshot file 'SnapshotFile\(offset=(\d+)", m):
            out.append(("load", int(r.group(1))))
        elif r := re.search(r"Wrote producer snapshot at offset (\d+)", m):
            out.append(("write", int(r.group(1))))
    return out


@pytest.mark.parametrize(("case", "name"), partitions())
def test_snapshot_steps_follow_kafkas_log(case: str, name: str) -> None:
    """Every snapshot Kafka deleted, loaded and wrote during the load, in Kafka's order."""
    after = load_expected(case)["afterLoad"]["partitions"][name]
    [got] = [p for p in simulate(case)["partitions"] if p["directory"] == name]
    steps = [(s["action"].removeprefix("snapshot-"), s["offset"]) for s in got["steps"]
             if s["action"] in ("snapshot-delete", "snapshot-load", "snapshot-write")]
    assert steps == _snapshot_events(after["kafkaLogMessages"])


@pytest.mark.parametrize(("case", "name"), partitions())
def test_recovered_segments_follow_kafkas_log(case: str, name: str) -> None:
    """The segments re-scanned from the recovery point, and where corruption was found."""
    after = load_expected(case)["afterLoad"]["partitions"][name]
    [got] = [p for p in simulate(case)["partitions"] if p["directory"] == name]
    want = [int(r.group(1)) for m in after["kafkaLogMessages"]
            if (r := re.search(r"Recovering unflushed segment (\d+)\.", m))]
    assert [s["offset"] for s in got["steps"] if s["action"] == "recover-segment"
            and "recovery point" in s["detail"]] == want
    corrupt = [int(r.group(1)) for m in after["kafkaLogMessages"]
               if (r := re.search(r"Corruption found in segment (\d+)", m))]
    assert [s["offset"] for s in got["steps"] if s["action"] == "truncate"] == corrupt


def test_one_format_vocabulary() -> None:
    """Issue 20: -f table|json|jsonl as everywhere (text still accepted); jsonl holds the json document's parts."""
    from pathlib import Path

    from typer.testing import CliRunner

    from kafkatool.cli import app

    runner = CliRunner()
    demo = str(Path(__file__).resolve().parents[1] / "fixtures" / "demo")
    base = ["simulate-restart", "--now", "1700003600000"]
    doc = json.loads(runner.invoke(app, [*base, "-f", "json", demo]).stdout)
    lines = [json.loads(x) for x in runner.invoke(app, [*base, "-f", "jsonl", demo]).stdout.splitlines()]
    assert lines[0] == {"type": "log_dir", **{k: v for k, v in doc.items() if k != "partitions"}}
    assert [{k: v for k, v in x.items() if k != "type"} for x in lines[1:]] == doc["partitions"]
    assert runner.invoke(app, [*base, "-f", "table", demo]).stdout == runner.invoke(app, [*base, "-f", "text",
                                                                                          demo]).stdout


@pytest.mark.parametrize("case", [c for c in corpus_cases() if c.startswith("swap-")])
def test_a_completed_swap_is_compaction_not_a_loss(case: str) -> None:
    """Kafka's LogLoader completes an interrupted cleaner swap and loses nothing: the replaced segments shrink by
    what compaction removed. ``bytes_truncated`` stays Kafka's own file-size count; the loss is empty, exit 0."""
    expected = load_expected(case)["afterLoad"]
    result = runner.invoke(app, ["simulate-restart", "-f", "json", "--now", str(expected.get("loadTimeMs")),
                                 str(shared_dir("corpus") / case / "input")])
    assert result.exit_code == 0, result.stdout + result.stderr
    for p in json.loads(result.stdout)["partitions"]:
        want = expected["partitions"][p["directory"]]
        assert p["bytes_truncated"] == want.get("totalBytesDropped", 0)
        assert p["loss"]["bytes"] == 0 and p["loss"]["records"] == 0
        assert p["loss"]["compacted_bytes"] == p["bytes_truncated"]


def test_a_torn_swap_segment_is_still_a_loss(tmp_path: Path) -> None:
    src = shared_dir("corpus") / "swap-interrupted-unclean" / "input"
    copy = tmp_path / "input"
    shutil.copytree(src, copy)
    swap = copy / "accounts-0" / "00000000000000000000.log.swap"
    data = swap.read_bytes()
    swap.write_bytes(data[:-30])
    result = runner.invoke(app, ["simulate-restart", "-f", "json", "--now", "1700003600000", "--assume", "unclean",
                                 "--recovery-point", "0", str(copy)])
    assert result.exit_code == 1, result.stdout + result.stderr
    part = json.loads(result.stdout)["partitions"][0]
    loss = part["loss"]
    first = next(s for s in part["segments"] if s["base_offset"] == 0)
    cut = len(data) - 30 - first["size_bytes"]  # what recovery cut from the renamed-in swap segment
    assert cut > 0 and loss["bytes"] >= cut  # counted as lost, beside the compaction
    assert loss["records"] > 0 and loss["compacted_bytes"] > 0


def test_a_swap_larger_than_the_segment_it_renames_over_counts_the_net_shrink(tmp_path: Path) -> None:
    """``bytes_truncated`` is the net shrink of the log's files, as the corpus' ``totalBytesDropped`` (Kafka's
    before/after comparison): ``swap-interrupted-unclean`` with the replaced segment split in two at a batch
    boundary, so the 420-byte ``.swap`` is larger than the 220-byte segment of its base. Kafka's LogLoader deletes
    both halves (both lie in the swap's range) and renames the swap in: the files after the load are those of the
    corpus case, and so is the sum of the sizes before, hence its ``totalBytesDropped``."""
    case = "swap-interrupted-unclean"
    expected = load_expected(case)["afterLoad"]
    root = _copy_case(case, tmp_path)
    part = root / "accounts-0"
    part.chmod(0o755)
    log = part / "00000000000000000000.log"
    log.chmod(0o644)
    data = log.read_bytes()
    cut = 220  # the batch at byte 220 starts at offset 194, below the next segment 497
    assert int.from_bytes(data[cut:cut + 8], "big") == 194
    (part / "00000000000000000194.log").write_bytes(data[cut:])
    log.write_bytes(data[:cut])
    swap_size = (part / "00000000000000000000.log.swap").stat().st_size
    assert swap_size > cut
    code, doc = run_json("--now", str(expected["loadTimeMs"]), str(root))
    [p] = doc["partitions"]
    assert code == 0
    want = expected["partitions"]["accounts-0"]
    assert p["bytes_truncated"] == want["totalBytesDropped"] > 0
    assert [[s["base_offset"], s["size_bytes"]] for s in p["segments"]] == [
        [int(s["file"].split(".")[0]), s["sizeAfter"]] for s in want["segmentComparison"]]
    assert p["loss"]["bytes"] == 0 and p["loss"]["records"] == 0
    assert p["loss"]["compacted_bytes"] == want["totalBytesDropped"]
