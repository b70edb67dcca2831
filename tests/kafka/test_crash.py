"""The crash-and-restart differential against each Kafka version (issue 19, item 4b): one broker SIGKILLed under
load, then every mutation of :data:`tests.kafka.crash.MUTATIONS` on a copy of its log dir, each predicted by
``kafkatool simulate-restart`` and compared with the real broker started on it (see :mod:`tests.kafka.crash`)."""

from __future__ import annotations

from pathlib import Path

from tests.kafka.crash import MUTATIONS, run_many

SEED = 1900


def test_restart_after_a_crash_is_what_the_broker_does(kafka_version: str, tmp_path: Path) -> None:
    outcomes = run_many(kafka_version, SEED, tmp_path, len(MUTATIONS))
    assert len(outcomes) == len(MUTATIONS)
    for o in outcomes:
        assert o.fields.get("segments") is not None, f"{o.detail['mutation']}: nothing compared"
    failed = [f"{o.detail['mutation']}\n    " + "\n    ".join(o.disagreements[:8]) for o in outcomes if not o.agree]
    assert not failed, f"{len(failed)}/{len(outcomes)} experiments disagree:\n" + "\n".join(failed)
