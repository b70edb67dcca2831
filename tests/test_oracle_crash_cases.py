"""Crash-and-restart cases saved by the live oracle (``fixtures/oracle/crash-*``), replayed without a broker.

Each case holds a killed broker's log dir after one mutation (only the partitions that mattered, with the log
dir's checkpoints and marker) and what a real broker of that version did when it started on it: log start and end
offsets, LSO, DescribeProducers, and its files (segments, index entries, snapshots, leader epochs). kafkatool's
``simulate-restart -f json --apply-to`` on the same input must say and write the same (compared as
:func:`tests.kafka.crash.compare_partition` compares a live run).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kafka.crash import compare_partition, kafkatool_restart
from tests.kafka.experiments import Outcome, load_case, materialize, saved_cases

CASES = saved_cases("crash")


def test_crash_cases_are_saved() -> None:
    assert CASES, "no crash case under fixtures/oracle"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_restart_matches_what_the_broker_did(case: Path, tmp_path: Path) -> None:
    expected = load_case(case)
    log_dir = materialize(case, tmp_path / "input")
    predicted = kafkatool_restart(log_dir, tmp_path / "out", expected["now"])
    ours = {p["directory"]: p for p in predicted["partitions"]}
    outcome = Outcome(expected["kafkaVersion"], "crash", expected["seed"])
    for name, view in expected["partitions"].items():
        compare_partition(outcome, name, view, ours.get(name), tmp_path / "out")
    assert outcome.fields, "nothing was compared"
    assert outcome.agree, f"{expected['mutation']}\n" + "\n".join(outcome.disagreements[:20])
