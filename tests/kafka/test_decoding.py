"""The decoding differential against each Kafka version (issue 19, item 4a): every file one broker wrote, dumped
by that version's DumpLogSegments and by ``kafkatool dump-segment -f kafka --kafka-version V``, in every mode,
equal byte for byte (see :mod:`tests.kafka.decoding`)."""

from __future__ import annotations

from pathlib import Path

from tests.kafka.decoding import run

SEED = 19


def test_every_file_dumps_as_that_version_dumps_it(kafka_version: str, tmp_path: Path) -> None:
    outcome = run(kafka_version, SEED, tmp_path)
    assert outcome.fields, "nothing was compared"
    for mode in ("dump:shallow", "dump:deep", "dump:print-data", "dump:offsets-decoder",
                 "dump:transaction-log-decoder", "dump:cluster-metadata-decoder", "dump:index", "dump:timeindex",
                 "dump:snapshot"):
        assert mode in outcome.fields, f"{mode} was not exercised ({outcome.detail.get('not_exercised')})"
    assert outcome.detail["rolled"], "no partition rolled a segment"
    assert outcome.agree, "\n".join(outcome.disagreements[:20])
