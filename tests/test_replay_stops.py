"""A read defect that stops the producer-state replay is said, in every format, with exit 1 (issue 31, item 4.4):
where the replay stopped (file, byte) and that Kafka truncates there, and each ``.snapshot`` that does not decode.

Kafka's answer for where the log ends is the restarted 4.4.0 broker's (``fixtures/oracle/crash-4.4.0-3100-cut-in-
batch``) and, for the other inputs, ``simulate-restart``'s load, which the corpus and the live oracle check.
"""

from __future__ import annotations

import json
import random
import shutil
import struct
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from tests.conftest import shared_dir
from tests.kafka.experiments import CASES, load_case, materialize

runner = CliRunner()
INT32_MAX = 2**31 - 1
ZEROS = 256 << 20


def _unreadable_partition(root: Path) -> Path:
    """A log dir with one partition whose first batch claims 2^31-1 bytes (followed by 256 MiB of zeros, a sparse
    file) and a ``.snapshot`` of random bytes."""
    part = root / "t-0"
    part.mkdir(parents=True)
    with open(part / "00000000000000000000.log", "wb") as f:
        f.write(struct.pack(">qi", 0, INT32_MAX))
        f.truncate(12 + ZEROS)
    (part / "00000000000000000000.snapshot").write_bytes(random.Random(31).randbytes(64))
    return part


def _anomalies(fmt: str, stdout: str) -> list[dict]:
    if fmt == "json":
        return json.loads(stdout)["anomalies"]
    return [r for r in map(json.loads, stdout.splitlines()) if r.get("type") == "anomaly"]


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_an_unreadable_first_batch_stops_the_replay_and_says_where(tmp_path: Path, fmt: str) -> None:
    part = _unreadable_partition(tmp_path / "logs")
    result = runner.invoke(app, ["replay-producers", "-q", "-f", fmt, str(part)])
    assert result.exit_code == 1, result.output
    found = {a["code"]: a for a in _anomalies(fmt, result.stdout)}
    stop = found["replay-stopped"]
    assert stop["severity"] == "error" and stop["position"] == 0 and stop["offset"] == 0
    assert "t-0/00000000000000000000.log byte 0" in stop["message"]
    assert "Kafka's recovery truncates the log here" in stop["message"]
    snap = found["snapshot-unreadable"]
    assert snap["severity"] == "warning" and "t-0/00000000000000000000.snapshot" in snap["message"]
    assert "CorruptSnapshotException" in snap["message"]


def test_the_table_says_it_too(tmp_path: Path) -> None:
    part = _unreadable_partition(tmp_path / "logs")
    result = runner.invoke(app, ["replay-producers", "-q", str(part)])
    assert result.exit_code == 1, result.output
    text = " ".join(result.stdout.split())
    assert "replay-stopped" in text and "snapshot-unreadable" in text
    assert "1 error(s), 1 warning(s)" in text


def test_transactions_says_where_the_replay_stopped(tmp_path: Path) -> None:
    _unreadable_partition(tmp_path / "logs")
    result = runner.invoke(app, ["transactions", "-f", "json", str(tmp_path / "logs")])
    assert result.exit_code == 1, result.output
    reasons = [d["reason"] for d in json.loads(result.stdout)["defects"]]
    assert any("Kafka's recovery truncates the log here" in r and "--read-past-damage" not in r for r in reasons)


def test_the_replay_ends_where_the_restarted_broker_ended_the_log(tmp_path: Path) -> None:
    """A real 4.4.0 broker restarted on a log whose last batch was cut: the replay stops where its log ended."""
    case = CASES / "crash-4.4.0-3100-cut-in-batch"
    [(name, kafka)] = load_case(case)["partitions"].items()
    root = materialize(case, tmp_path / "input")
    result = runner.invoke(app, ["replay-producers", "-q", "-f", "json", str(root / name)])
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["end_offset"] == kafka["log_end_offset"]
    [stop] = [a for a in doc["anomalies"] if a["code"] == "replay-stopped"]
    assert stop["offset"] == kafka["log_end_offset"]


def test_a_torn_middle_segment_stops_the_replay_before_the_later_ones(tmp_path: Path) -> None:
    """Kafka's recovery truncates a segment at its torn tail and deletes every later one: the replay does not read
    them either, and ends where ``simulate-restart`` (checked against Kafka's load) ends the log."""
    root = tmp_path / "idem-clean"
    shutil.copytree(shared_dir("corpus") / "idem-clean" / "input", root)
    part = root / "payments-0"
    part.chmod(0o755)
    segs = sorted(part.glob("*.log"))
    assert len(segs) >= 3
    middle = segs[1]
    middle.chmod(0o644)
    data = middle.read_bytes()
    middle.write_bytes(data[:-30])
    (root / ".kafka_cleanshutdown").unlink(missing_ok=True)
    for f in (root / "recovery-point-offset-checkpoint",):
        f.chmod(0o644)
        f.write_text("0\n1\npayments 0 0\n")
    restart = runner.invoke(app, ["simulate-restart", "-f", "json", str(root)])
    [p] = json.loads(restart.stdout)["partitions"]
    result = runner.invoke(app, ["replay-producers", "-q", "-f", "json", str(part)])
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    [stop] = [a for a in doc["anomalies"] if a["code"] == "replay-stopped"]
    assert doc["end_offset"] == stop["offset"] == p["log_end_offset"] < int(segs[2].stem)
    assert f"payments-0/{middle.name} byte" in stop["message"] and "deletes every later segment" in stop["message"]


def test_groups_says_where_the_replay_of_a_committed_partition_stopped(tmp_path: Path) -> None:
    """``groups`` replays each committed partition for its last stable offset: a torn tail there is said too."""
    root = tmp_path / "logs"
    shutil.copytree(shared_dir("corpus") / "internal-topics-hanging-txn-clean" / "input", root)
    part = root / "invoices-0"
    part.chmod(0o755)
    log = part / "00000000000000000000.log"
    log.chmod(0o644)
    log.write_bytes(log.read_bytes()[:-30])
    result = runner.invoke(app, ["groups", "-f", "json", str(root)])
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert any(o["topic"] == "invoices" for o in doc["offsets"])
    stops = [d for d in doc["defects"] if d["file"] == "invoices-0"]
    assert stops and "Kafka's recovery truncates the log here" in stops[0]["reason"]
