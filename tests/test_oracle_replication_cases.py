"""Replication cases saved by the live oracle (``fixtures/oracle/replication-*``), replayed without a broker.

Each case holds one partition's three replicas as a three-broker cluster left them in an incident (an unclean
election, or a failover), with what the cluster did once it healed: where each restarted follower truncated, how
many records below the old leader's high watermark the new leader lacked, whether the election was clean.
``kafkatool simulate-replication --replica ...`` on the same copies must predict the same (compared as
:func:`tests.kafka.replication.compare` compares a live run).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kafka.experiments import Outcome, load_case, saved_cases
from tests.kafka.replication import compare, simulate

CASES = saved_cases("replication")


def test_replication_cases_are_saved() -> None:
    assert CASES, "no replication case under fixtures/oracle"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_replication_matches_what_the_cluster_did(case: Path) -> None:
    facts = load_case(case)
    copies = {int(p.name.removeprefix("broker")): p for p in sorted((case / "input").iterdir())}
    prediction = simulate(copies, facts["partition"], facts["leader"], facts["isr"])
    outcome = Outcome(facts["kafkaVersion"], "replication", facts["seed"])
    compare(outcome, prediction, facts)
    assert {"truncation", "election", "lost_acknowledged", "clean"} <= set(outcome.fields)
    assert outcome.agree, "\n".join(outcome.disagreements)
