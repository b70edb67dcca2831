"""simulate-replication on real replica log dirs: every pair's divergence and truncation and every
election's losses equal what Kafka's own code answered (../shared/replica-sets)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from tests.conftest import SHARED, shared_dir

runner = CliRunner()


def cases() -> list[str]:
    root = SHARED / "replica-sets"
    return sorted(p.name for p in root.iterdir() if (p / "expected.json").is_file()) if root.is_dir() else []


def run_case(case: str) -> tuple[dict, dict]:
    root = shared_dir("replica-sets") / case
    exp = json.loads((root / "expected.json").read_text())
    ctl = exp["controllerAtCapture"]
    args = ["simulate-replication", "-f", "json", "--partition", exp["partitionDir"], "--leader", str(ctl["leader"]),
            "--isr", ",".join(str(b) for b in ctl["isr"]), "--leader-epoch", str(ctl["leaderEpoch"]),
            "--now", "1700003600000"]
    for broker in exp["brokerIds"]:
        args += ["--replica", f"{broker}={root / 'brokers' / str(broker)}"]
    result = runner.invoke(app, args)
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(result.stdout), exp


@pytest.mark.parametrize("case", cases())
def test_pairs_match_kafka(case: str) -> None:
    doc, exp = run_case(case)
    got = {(p["leader"], p["follower"]): p for p in doc["pairs"]}
    assert len(got) == len(exp["pairs"])
    for want in exp["pairs"]:
        p = got[(want["leader"], want["follower"])]
        assert p["divergence_by_epoch"] == want["divergence"]["byEpoch"]
        assert p["divergence_by_batch_crc"] == want["divergence"]["byBatchCrc"]
        assert p["divergence_offset"] == want["divergence"]["firstDifference"]
        assert p["relation"] == want["divergence"]["relation"]
        assert p["truncation_offset"] == want["truncationOffset"]
        assert p["lost_batches"] == [b["baseOffset"] for b in want["lostBatches"]]
        assert p["lost_record_count"] == want["lostRecordCount"]
        assert [b["same_batch_on_leader"] for b in p["lost_batches_detail"]] == \
            [b["sameBatchOnLeader"] for b in want["lostBatches"]]
        rounds = want["offsetsForLeaderEpoch"]["rounds"]
        assert [(r["request_epoch"], r["response_epoch"], r["response_end_offset"], r["truncate_to"], r["completed"])
                for r in p["rounds"]] == [(r["requestEpoch"], r["responseEpoch"], r["responseEndOffset"],
                                           r["truncateTo"], r["completed"]) for r in rounds]


@pytest.mark.parametrize("case", cases())
def test_elections_match_kafka(case: str) -> None:
    doc, exp = run_case(case)
    got = {e["candidate"]: e for e in doc["elections"]}
    for want in exp["elections"]["candidates"]:
        e = got[want["candidate"]]
        assert e["clean"] == want["clean"]
        assert e["lost_acknowledged_batches"] == [b["baseOffset"] for b in want["lostAcknowledgedBatches"]]
        assert e["lost_acknowledged_record_count"] == want["lostAcknowledgedRecordCount"]
        assert e["lost_unacknowledged_batches"] == \
            [b["baseOffset"] for b in want["lostUnacknowledgedBatchesOfOldLeader"]]


def test_replica_mode_usage_errors(tmp_path) -> None:
    assert runner.invoke(app, ["simulate-replication", "--replica", "x"]).exit_code == 2
    assert runner.invoke(app, ["simulate-replication", "--replica", f"1={tmp_path}", "--replica", f"2={tmp_path}"]
                         ).exit_code == 2
    assert runner.invoke(app, ["simulate-replication"]).exit_code == 2
