"""``kafkatool salvage`` against each Kafka version: a broker started on the repaired copy of a damaged log dir
serves every salvaged record at its original offset, unchanged, and hides the aborted ones from read_committed
(see :mod:`tests.kafka.salvage_live`)."""

from __future__ import annotations

from pathlib import Path

from tests.kafka.conftest import require_version
from tests.kafka.salvage_live import run, run_truncation


def test_a_broker_serves_every_salvaged_record(kafka_version: str, tmp_path: Path) -> None:
    res = run(kafka_version, tmp_path)
    assert res["records_exported"] > 0 and res["mismatch_count"] == 0, res["mismatches"]
    assert res["served_uncommitted"] == res["records_exported"]
    assert res["served_uncommitted"] - res["served_committed"] >= res["aborted"]


def test_salvage_serves_more_than_kafkas_truncation(tmp_path: Path) -> None:
    """Damage at the recovery point (one version: the rule is ``LogLoader``'s on every line): the node on the
    unrepaired copy truncates at the damaged batch, the node on the salvaged copy serves every salvaged record."""
    res = run_truncation(require_version("4.4.0"), tmp_path)
    print(res)
    assert res["kafka_logged_truncation"], "Kafka's recovery re-read the damaged segment and truncated it"
    # no clean-shutdown marker in the salvaged copy: Kafka re-validates its active segment, and truncates nothing
    assert res["salvaged_segments_rescanned"] >= 1 and not res["salvaged_logged_truncation"]
    assert res["served_unrepaired"] < res["served_salvaged"] == res["salvaged_rows"]
    assert res["mismatch_count"] == 0, res["mismatches"]
    assert res["served_total"]["salvaged"] == res["records_exported"]
    # kafkatool's account of Kafka's recovery is what the real broker did
    assert res["served_unrepaired_end"] == res["account_kafka"]["log_end_offset"]
