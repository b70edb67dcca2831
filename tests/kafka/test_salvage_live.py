"""``kafkatool salvage`` against each Kafka version: a broker started on the repaired copy of a damaged log dir
serves every salvaged record at its original offset, unchanged, and hides the aborted ones from read_committed
(see :mod:`tests.kafka.salvage_live`)."""

from __future__ import annotations

from pathlib import Path

from tests.kafka.salvage_live import run


def test_a_broker_serves_every_salvaged_record(kafka_version: str, tmp_path: Path) -> None:
    res = run(kafka_version, tmp_path)
    assert res["records_exported"] > 0 and res["mismatch_count"] == 0, res["mismatches"]
    assert res["served_uncommitted"] == res["records_exported"]
    assert res["served_uncommitted"] - res["served_committed"] >= res["aborted"]
