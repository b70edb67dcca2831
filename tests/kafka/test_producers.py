"""The producer-state differential against each Kafka version (issue 19, item 4c): ``replay-producers`` equals
DescribeProducers and the broker's read-committed end, and every producer snapshot the broker wrote is rebuilt
byte for byte (see :mod:`tests.kafka.producers`)."""

from __future__ import annotations

from pathlib import Path

from tests.kafka.producers import run

SEED = 1904


def test_producer_state_is_what_the_broker_holds(kafka_version: str, tmp_path: Path) -> None:
    outcome = run(kafka_version, SEED, tmp_path)
    assert outcome.detail["producers"] >= 10, "too few producers to compare"
    assert outcome.detail["snapshots"] >= 20, "too few snapshot files to compare"
    for name in ("producers", "last_stable_offset", "snapshot_bytes"):
        assert name in outcome.fields, f"{name} was not compared"
    assert outcome.agree, "\n".join(outcome.disagreements[:20])
