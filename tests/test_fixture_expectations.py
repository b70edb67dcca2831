"""CI on fixture dirs: every committed fixture declares what `kafkatool check` must find, and does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from tests.conftest import REPO

# fixtures/oracle and fixtures/kafka-4x hold saved cases of real brokers (what Kafka did), tested by
# tests/test_oracle_*.py and the 4.x tests.
FIXTURES = sorted(p for p in (REPO / "fixtures").iterdir() if p.is_dir() and p.name not in ("oracle", "kafka-4x"))


@pytest.mark.parametrize("fixture", FIXTURES, ids=[p.name for p in FIXTURES])
def test_check_matches_the_declared_findings(fixture: Path) -> None:
    expect = fixture / "expect.json"
    assert expect.is_file(), f"{fixture.name} has no expect.json"
    doc = json.loads(expect.read_text())
    # A fixture of several brokers names its log dirs: each is one broker's, checked on its own.
    for target in [fixture / d for d in doc.get("log_dirs", [])] or [fixture]:
        result = CliRunner().invoke(app, ["check", "--expect", str(expect), str(target)])
        assert result.exit_code == 0, result.stderr
    declared = doc["findings"]
    damaged = "clean" not in fixture.name and fixture.name not in (
        "demo", "follower", "idempotent-epoch-bump", "leader-epochs", "multi-partition", "txn-commit-abort-hanging",
        "replica-set")
    assert bool(declared) == damaged, "damaged fixtures declare their damage; healthy ones declare none"


def test_a_changed_fixture_breaks_its_expectation(tmp_path: Path) -> None:
    import shutil

    target = tmp_path / "torn"
    shutil.copytree(REPO / "fixtures" / "torn-write", target)
    (target / "payments-0" / "00000000000000000150.snapshot").unlink()
    result = CliRunner().invoke(app, ["check", "--expect", str(target / "expect.json"), str(target)])
    assert result.exit_code == 1
    assert "expected but not found: snapshot-beyond-leo" in result.stderr
