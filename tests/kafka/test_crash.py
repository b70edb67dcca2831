"""The crash-and-restart differential against each Kafka version (issue 19, item 4b): one broker SIGKILLed under
load, then mutations of :data:`tests.kafka.crash.MUTATIONS` on copies of its log dir, each predicted by
``kafkatool simulate-restart`` and compared with the real broker started on it (see :mod:`tests.kafka.crash`).

Every version runs in every CI run; which mutations and which seed each version gets rotates
(:func:`rotation`), so that the six release lines fit the CI time while every mutation still runs on at least two
lines per run and on every line within a few days. ``KAFKATOOL_ROTATION=N`` replays one rotation; ``all`` runs
every mutation on every version.
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path

from tests.kafka import versions
from tests.kafka.crash import MUTATIONS, run_many

SEED = 1900
PER_VERSION = 5
"""Mutations per version and CI run (6 versions x 5 >= 2 x 13 mutations)."""


def rotation() -> int | None:
    """This run's rotation number: ``KAFKATOOL_ROTATION``, else the UTC day number; ``None`` for ``all``."""
    chosen = os.environ.get("KAFKATOOL_ROTATION", "").strip()
    if chosen == "all":
        return None
    return int(chosen) if chosen else datetime.datetime.now(datetime.UTC).date().toordinal()


def mutations_for(version: str, turn: int | None) -> tuple[str, ...]:
    """The mutations ``version`` runs in rotation ``turn`` (all of them for ``None``): consecutive ones from an
    offset that moves with the turn and differs between versions."""
    if turn is None:
        return MUTATIONS
    start = turn * PER_VERSION + versions.VERSIONS.index(version) * PER_VERSION
    return tuple(MUTATIONS[(start + i) % len(MUTATIONS)] for i in range(PER_VERSION))


def test_every_mutation_runs_somewhere_each_rotation() -> None:
    for turn in (0, 1, 739_000):
        covered = [m for v in versions.VERSIONS for m in mutations_for(v, turn)]
        assert all(covered.count(m) >= 2 for m in MUTATIONS), turn


def test_restart_after_a_crash_is_what_the_broker_does(kafka_version: str, tmp_path: Path) -> None:
    turn = rotation()
    chosen = mutations_for(kafka_version, turn)
    seed = SEED if turn is None else SEED + turn % 1000
    outcomes = run_many(kafka_version, seed, tmp_path, len(chosen), chosen)
    assert len(outcomes) == len(chosen)
    for o in outcomes:
        assert o.fields.get("segments") is not None, f"{o.detail['mutation']}: nothing compared"
    failed = [f"{o.detail['mutation']} (seed {seed}, rotation {turn})\n    " + "\n    ".join(o.disagreements[:8])
              for o in outcomes if not o.agree]
    assert not failed, f"{len(failed)}/{len(outcomes)} experiments disagree:\n" + "\n".join(failed)
