"""Each release's own DumpLogSegments against ``kafkatool dump-segment -f kafka --kafka-version V`` on every saved
broker file and corpus case, every mode, stdout, stderr and exit status byte for byte (no broker is started: see
:mod:`tests.kafka.dls_conformance`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkatool.engine.dls import LAYOUTS
from tests.conftest import shared_dir
from tests.kafka import dls_conformance as conformance
from tests.kafka.versions import VERSIONS

CASES = conformance.cases()


@pytest.mark.parametrize("case", CASES, ids=[conformance.case_id(c) for c in CASES])
def test_dump_is_what_that_releases_dumplogsegments_prints(kafka_version: str, case: Path) -> None:
    if case.is_relative_to(conformance.SHARED):
        shared_dir("corpus")
    problems, compared = conformance.disagreements(kafka_version, conformance.case_id(case))
    assert compared, "no run of this case was compared"
    assert not problems, "\n".join(problems[:10])


def test_every_release_line_is_compared() -> None:
    """The conformance covers every release line of the live oracle and reads the shared corpus."""
    shared_dir("corpus")
    roots = {c.parent.name for c in CASES}
    assert roots == {"oracle", "kafka-4x", "corpus"}, roots
    assert sorted(LAYOUTS) == sorted({".".join(v.split(".")[:2]) for v in VERSIONS})
