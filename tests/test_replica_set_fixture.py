"""simulate-replication --replica on replica dirs built by the fixture builder: the answers the builder
knows by construction (which batches each broker got, in which epoch)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.writing.atomic import write_tree
from kafkatool.writing.fixture_recipes import build_tree, replica_set_story


def test_replica_set_fixture_answers(tmp_path: Path) -> None:
    write_tree(build_tree("replica-set"), tmp_path)
    _, groups = replica_set_story()
    bases = {g: [a.base_offset for a in batches] for g, batches in groups.items()}
    common_end = groups["common"][-1].last_offset + 1
    lag_end = groups["lagging"][-1].last_offset + 1
    new_end = groups["new"][-1].last_offset + 1
    args = ["simulate-replication", "-f", "json", "--partition", "orders-0", "--leader", "2", "--isr", "2,3",
            "--leader-epoch", "1", "--now", "1700003600000"]
    for b in (1, 2, 3):
        args += ["--replica", f"{b}={tmp_path / f'broker-{b}'}"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code in (0, 1), result.stderr
    doc = json.loads(result.stdout)
    pairs = {(p["leader"], p["follower"]): p for p in doc["pairs"]}
    expected = {
        (2, 1): (lag_end, lag_end, bases["orphan"]),
        (2, 3): (None, common_end, []),
        (1, 2): (lag_end, lag_end, bases["new"]),
        (1, 3): (None, common_end, []),
        (3, 1): (common_end, common_end, bases["lagging"] + bases["orphan"]),
        (3, 2): (common_end, common_end, bases["lagging"] + bases["new"]),
    }
    for key, (divergence, truncation, lost) in expected.items():
        p = pairs[key]
        got = (p["divergence_offset"], p["truncation_offset"], p["lost_batches"])
        assert got == (divergence, truncation, lost), key
    elections = {e["candidate"]: e for e in doc["elections"]}
    assert elections[2]["clean"] and elections[2]["lost_acknowledged_batches"] == []
    assert not elections[1]["clean"] and elections[1]["lost_acknowledged_batches"] == bases["new"]
    assert elections[3]["clean"] and elections[3]["lost_acknowledged_batches"] == bases["lagging"] + bases["new"]
    assert {r["broker"]: r["log_end_offset"] for r in doc["replicas"]} == {
        1: groups["orphan"][-1].last_offset + 1, 2: new_end, 3: common_end}


def test_every_broker_dir_is_healthy_and_readable_by_kafka_python() -> None:
    from kafka.record.memory_records import MemoryRecords

    from tests.conftest import REPO

    for broker in (1, 2, 3):
        root = REPO / "fixtures" / "replica-set" / f"broker-{broker}"
        result = CliRunner().invoke(app, ["dump-segment", "--verify", "-f", "json", str(root)])
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout)["summary"]["defects"] == 0
        for log in sorted(root.glob("*/*.log")):
            mr = MemoryRecords(log.read_bytes())
            while mr.has_next():
                assert mr.next_batch().validate_crc()
        meta = (root / "meta.properties").read_text()
        assert f"node.id={broker}\n" in meta
