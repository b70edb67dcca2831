"""Every input the native-core fuzzer found (``tests/fuzz/findings/<entry point>-<n>.bin``), replayed: the native
entry point and its Python reference agree on it now (issue 23). The lz4 ones (blocks lz4_flex decoded and liblz4
refuses, a magic-0 frame) made the native lz4 decoder hand every payload back until it modelled liblz4's
``LZ4_decompress_safe`` itself (codecs.rs ``lz4_block``); tests/kafka/test_lz4.py replays their blocks and frames
against lz4-java."""

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
