"""Salvage cases saved by the live oracle (``fixtures/oracle/salvage-*``, see :mod:`tests.kafka.salvage`),
replayed without a broker.

Each case holds the damaged partitions of a real broker's log dir (with the log dir's checkpoints) and what real
brokers of that version did: where the broker started on the unrepaired copy ended each partition (Kafka's own
recovery), and the offsets the broker started on the salvaged copy served, read_uncommitted and read_committed,
with its last stable offset. ``kafkatool salvage`` on the same input must account Kafka's recovery as the broker
did, export exactly the records the broker served (those read_committed hid: aborted or open ones, and every one
from the last stable offset on), and write a repaired dir on which ``simulate-restart`` predicts no loss and that
last stable offset.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.kafka.experiments import load_case, materialize, saved_cases
from tests.kafka.salvage import restart_view

CASES = saved_cases("salvage")


def test_salvage_cases_are_saved() -> None:
    assert CASES, "no salvage case under fixtures/oracle"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_salvage_keeps_what_the_broker_served(case: Path, tmp_path: Path) -> None:
    expected = load_case(case)
    log_dir = materialize(case, tmp_path / "input")
    out, export = tmp_path / "repaired", tmp_path / "export.jsonl"
    proc = subprocess.run([sys.executable, "-m", "kafkatool", "salvage", "-f", "json", "--out", str(out),
                           "--export", str(export), str(log_dir)], capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 1, proc.stderr  # damage was found, and the output written
    parts = {p["partition"]: p for p in json.loads(proc.stdout)["partitions"]}
    lost, lso = restart_view(out)
    rows = [json.loads(line) for line in export.read_text().splitlines()]
    for name in expected["damaged"]:
        assert parts[name]["kafka"]["log_end_offset"] == expected["kafka_log_end"][name], name
        mine = [r for r in rows if f"{r['topic']}-{r['partition']}" == name]
        assert [r["offset"] for r in mine] == expected["served"][name], name
        hidden = set(expected["served"][name]) - set(expected["served_committed"][name])
        stable = expected.get("last_stable_offset", {}).get(name)
        if stable is not None:
            assert lso[name] == stable, name
        assert {r["offset"] for r in mine if r["transaction_state"] in ("aborted", "open")
                or (stable is not None and r["offset"] >= stable)} == hidden, name
    assert lost == {}


REPLICA_CASES = saved_cases("salvage-replicas")


def test_replica_cases_are_saved() -> None:
    assert REPLICA_CASES, "no salvage-replicas case under fixtures/oracle"


@pytest.mark.parametrize("case", REPLICA_CASES, ids=lambda c: c.name)
def test_salvage_of_diverged_replicas_keeps_the_new_leaders_lineage(case: Path, tmp_path: Path) -> None:
    """Diverged replicas after an unclean election (the new leader's copy the input, the old leader's a
    ``--replica``): the repaired log ends where the healed cluster's new leader ended, its epochs rise as the new
    leader's epoch cache says (a log where they fall left the broker with an empty epoch cache), and the old
    leader's older-epoch suffix is named, not written."""
    expected = load_case(case)
    inputs = materialize(case, tmp_path / "input")
    new, old, name = expected["new_leader"], expected["old_leader"], expected["partition"]
    out = tmp_path / "repaired"
    proc = subprocess.run([sys.executable, "-m", "kafkatool", "salvage", "-f", "json", "-p", name, "--out", str(out),
                           str(inputs / f"broker{new}"), "--replica", f"{old}={inputs / f'broker{old}'}"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 1, proc.stderr  # conflicts were found, and the output written
    (part,) = json.loads(proc.stdout)["partitions"]
    assert part["salvage"]["log_end_offset"] == expected["kafka_log_end"]
    assert part["conflicts"] and any("below epoch" in r["reason"] for r in part["rejected"])
    epochs = [list(map(int, line.split())) for line in (out / name / "leader-epoch-checkpoint").read_text()
              .splitlines()[2:]]
    assert epochs == expected["new_leader_epochs"]
    lost, _lso = restart_view(out)
    assert lost == {}
