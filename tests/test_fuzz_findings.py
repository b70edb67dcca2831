"""Every input the native-core fuzzer found (``tests/fuzz/findings/<entry point>-<n>.bin``), replayed: the native
entry point and its Python reference agree on it now (issue 23). The lz4 ones made the native lz4 decoder hand
every payload back to the Python path (liblz4, as Kafka's lz4-java refuses what liblz4 refuses)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkatool.schema import native
from tests.fuzz.native import NATIVE, check

FINDINGS = sorted((Path(__file__).resolve().parent / "fuzz" / "findings").glob("*.bin"))


def test_there_are_findings_to_replay() -> None:
    assert FINDINGS


@pytest.mark.parametrize("path", FINDINGS, ids=[p.stem for p in FINDINGS])
def test_the_finding_agrees_now(path: Path) -> None:
    core = native.core()
    if core is None:
        pytest.skip(native.why_not())
    entry = path.stem.rsplit("-", 1)[0]
    check(core, NATIVE[entry], path.read_bytes())  # raises Finding on a disagreement, a crash or a hang
