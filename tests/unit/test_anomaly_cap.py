"""A log that breaks a producer rule at every batch lists the first anomalies of each kind and counts the rest,
so the replay's memory does not grow with the log (issue: memory that grows with the input)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.engine.producer_state import LISTED_PER_CODE
from kafkatool.engine.producer_state import CheckedProducerState as ProducerStateManager
from kafkatool.model import Record, RecordBatch
from kafkatool.schema.record_batch import build_records_batch, parse_batch_header

GAPPY = LISTED_PER_CODE + 250


def _gappy_batches() -> list[bytes]:
    """One producer, epoch 0, whose every batch skips a sequence number (a sequence-gap each time)."""
    out = []
    for i in range(GAPPY + 1):
        out.append(build_records_batch([Record(offset=0, timestamp=0, key=None, value=b"x")], base_offset=i,
                                       base_timestamp=1_700_000_000_000, partition_leader_epoch=0,
                                       producer_id=42, producer_epoch=0, base_sequence=2 * i))
    return out


def test_the_manager_lists_the_first_of_each_code_and_counts_the_rest() -> None:
    manager = ProducerStateManager()
    for data in _gappy_batches():
        batch = parse_batch_header(data)
        assert isinstance(batch, RecordBatch)
        manager.append(batch)
    gaps = [a for a in manager.anomalies if a.code == "sequence-gap"]
    assert len(gaps) == LISTED_PER_CODE
    assert manager.unlisted == {"sequence-gap": GAPPY - LISTED_PER_CODE}
    assert manager.producers[42].last_seq == 2 * GAPPY  # the state itself is complete


def test_replay_producers_reports_the_unlisted_count(tmp_path: Path) -> None:
    part = tmp_path / "gappy-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(b"".join(_gappy_batches()))
    result = CliRunner().invoke(app, ["replay-producers", "-f", "json", str(part)])
    doc = json.loads(result.stdout)
    assert doc["anomalies_unlisted"] == [{"code": "sequence-gap", "severity": "warning",
                                          "count": GAPPY - LISTED_PER_CODE}]
    assert sum(1 for a in doc["anomalies"] if a["code"] == "sequence-gap") == LISTED_PER_CODE
    assert doc["anomaly_counts"]["warning"] >= GAPPY
    table = CliRunner().invoke(app, ["replay-producers", str(part)])
    assert f"{GAPPY - LISTED_PER_CODE} more sequence-gap anomalies" in table.stdout
