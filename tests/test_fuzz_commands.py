"""Whole subcommands on damaged log dirs (issue 9): a copy of a fixture with some of its files mutated (segments,
indexes, snapshots, checkpoints, metadata files) must give a result or defects, never an internal error.

The decoders are fuzzed one by one in ``tests/test_fuzz_decoders.py``; this checks that the engines behind the
commands cope with whatever the decoders report. Bounded: a few examples per command.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kafkatool.cli import app
from tests.fuzz.targets import fix_crc, mutate
from tests.test_evidence_safety import FIXTURES

runner = CliRunner()
NOW = "1700003600000"
SOURCES = ["torn-write", "txn-commit-abort-hanging", "idempotent-epoch-bump", "leader-epochs"]
COMMANDS = {
    "dump-segment": ["dump-segment", "--verify", "--deep", "-f", "json", "{dir}"],
    "check": ["check", "-f", "json", "{dir}"],
    "replay-producers": ["replay-producers", "-f", "json", "{part}"],
    "simulate-restart": ["simulate-restart", "--now", NOW, "-f", "json", "{dir}"],
    "transactions": ["transactions", "--now", NOW, "-f", "json", "{dir}"],
}


def _damage(root: Path, rnd: random.Random) -> list[str]:
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.name != "expect.json")
    touched = []
    for path in rnd.sample(files, k=min(len(files), rnd.randint(1, 3))):
        data = path.read_bytes()
        new = mutate(data, rnd)
        if path.suffix == ".log" and rnd.random() < 0.5:
            new = fix_crc(new)
        path.write_bytes(new)
        touched.append(path.name)
    return touched


@pytest.mark.parametrize("command", sorted(COMMANDS))
@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(min_value=0, max_value=2**32), source=st.sampled_from(SOURCES))
def test_damaged_log_dirs_never_cause_an_internal_error(command: str, seed: int, source: str,
                                                        tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("damaged") / source
    shutil.copytree(FIXTURES / source, root)
    touched = _damage(root, random.Random(seed))
    part = next(p for p in sorted(root.iterdir()) if p.is_dir())
    argv = [a.replace("{dir}", str(root)).replace("{part}", str(part)) for a in COMMANDS[command]]
    result = runner.invoke(app, argv)
    assert "internal error" not in result.stderr, f"{touched}: {result.stderr}"
    assert result.exit_code in (0, 1, 3), f"{touched}: exit {result.exit_code}: {result.stderr}"
    if result.exit_code == 3:
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
