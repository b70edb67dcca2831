"""The replication differential against each Kafka version (issue 19, item 4d): a three-broker cluster with a
dedicated controller, brokers killed and restarted (an unclean election on 3.9 and 4.4, a failover on 4.0), the
log dirs copied mid-incident, ``simulate-replication`` against what the cluster did when it healed (see
:mod:`tests.kafka.replication`)."""

from __future__ import annotations

from pathlib import Path

from tests.kafka import versions
from tests.kafka.replication import run

#: One seed per version: even seeds play an unclean election, odd ones a clean failover.
SEEDS = {v: 1906 + i for i, v in enumerate(versions.VERSIONS)}


def test_replication_is_what_the_cluster_does(kafka_version: str, tmp_path: Path) -> None:
    outcome = run(kafka_version, SEEDS[kafka_version], tmp_path)
    for name in ("truncation", "election", "lost_acknowledged", "clean", "healed"):
        assert name in outcome.fields, f"{name} was not compared"
    if outcome.detail["scenario"] == "unclean":
        assert outcome.detail["acknowledged_gone"] > 0, "the unclean election lost no acknowledged record"
    assert outcome.agree, "\n".join(outcome.disagreements[:20])
