"""Every message names the command that was run, never another one (issue 20, item 11: ``transactions`` on a
file told the user that ``check`` takes a log dir). Each subcommand that reads log dirs is given what is not
one: a missing path, a plain file, an empty directory, a partition whose segment is text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app

runner = CliRunner()
COMMANDS = ["dump-segment", "check", "replay-producers", "transactions", "groups", "simulate-restart", "metadata",
            "scan", "report", "simulate-replication"]


def other_command_named(text: str, run: str) -> str | None:
    """A mention of a subcommand other than ``run`` as a command (``kafkatool X``, ``X takes``, ``run X``)."""
    for name in COMMANDS:
        if name == run:
            continue
        plain = re.escape(name)
        pattern = (rf"\b{plain}\b" if "-" in name else
                   rf"(kafkatool {plain}\b|\b{plain} (takes|expects|needs|reads)\b|\b(run|use|try) `?{plain}\b)")
        if re.search(pattern, text):
            return name
    return None


def bad_inputs(tmp: Path) -> list[Path]:
    tmp.mkdir()
    (tmp / "a-file").write_text("not a log dir\n")
    (tmp / "empty").mkdir()
    part = tmp / "logdir" / "orders-0"
    part.mkdir(parents=True)
    (part / "00000000000000000000.log").write_text("a text file named like a segment\n" * 3)
    return [tmp / "missing", tmp / "a-file", tmp / "empty", tmp / "logdir", part]


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != "simulate-replication"])
def test_messages_name_only_the_command_run(command: str, tmp_path: Path) -> None:
    for path in bad_inputs(tmp_path / "in"):
        args = {"scan": ["--out", str(tmp_path / "out" / "scan"), "--force", "-j", "1"],
                "report": ["--out", str(tmp_path / "out" / "r.html"), "--force"]}.get(command, [])
        (tmp_path / "out").mkdir(exist_ok=True)
        result = runner.invoke(app, [command, *args, str(path)])
        said = result.stderr + result.stdout
        assert other_command_named(said, command) is None, (command, path.name, said)


def test_the_rule_catches_the_old_message() -> None:
    assert other_command_named("x: not a directory (check takes a log dir)", "transactions") == "check"
    assert other_command_named("no open transaction; checkpoint", "check") is None
