"""Filesystem trouble (issue 9): a missing path, a broken symbolic link, a non-Kafka directory, a file where a
directory is expected, a path through a file, permission denied. Every subcommand that reads a path answers each
with one line on stderr, nothing on stdout, and exit code 3.
"""

from __future__ import annotations

import builtins
import io
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from tests.test_evidence_safety import FIXTURES, registered_commands

runner = CliRunner()
HEALTHY_REPLICA = FIXTURES / "replica-set" / "broker-2"  # the other replica, when the broken one is a replica

# Each command with the argv that gives it ``{p}`` as its input path (outputs under ``{out}``).
READERS: dict[str, list[str]] = {
    "dump-segment": ["{p}"],
    "check": ["{p}"],
    "replay-producers": ["{p}"],
    "simulate-restart": ["{p}"],
    "simulate-replication": ["--replica", "1={p}", "--replica", f"2={HEALTHY_REPLICA}", "--partition", "orders-0",
                             "--leader", "2"],
    "scan": ["--out", "{out}/scan", "--jobs", "1", "--no-progress", "{p}"],
    "report": ["--out", "{out}/report.html", "{p}"],
    "transactions": ["{p}"],
    "metadata": ["{p}"],
    "groups": ["{p}"],
    "salvage": ["{p}"],
}
NO_INPUT = {"fixture list", "fixture build"}  # they read no evidence


def test_every_reading_command_is_covered() -> None:
    missing = [c for c in registered_commands() if c not in READERS and c not in NO_INPUT]
    assert not missing, f"add {', '.join(missing)} to READERS in {Path(__file__).name}"


def _make(case: str, tmp: Path) -> Path:
    """The troublesome path for ``case``."""
    if case == "missing":
        return tmp / "no-such-dir"
    if case == "broken-symlink":
        link = tmp / "dangling"
        link.symlink_to(tmp / "gone")
        return link
    if case == "not-kafka-dir":
        d = tmp / "holiday-photos"
        d.mkdir()
        (d / "beach.jpg").write_bytes(b"\xff\xd8\xff")
        (d / "notes.txt").write_text("nothing to see\n")
        return d
    if case == "file-for-dir":
        f = tmp / "notes.txt"
        f.write_text("not a directory\n")
        return f
    if case == "through-a-file":
        f = tmp / "plain.txt"
        f.write_text("x")
        return f / "orders-0"
    raise AssertionError(case)


CASES = ["missing", "broken-symlink", "not-kafka-dir", "file-for-dir", "through-a-file"]


def _invoke(command: str, path: Path, out: Path) -> tuple[int, str, str]:
    argv = [*command.split(), *(a.replace("{p}", str(path)).replace("{out}", str(out)) for a in READERS[command])]
    result = runner.invoke(app, argv)
    return result.exit_code, result.stdout, result.stderr


def _assert_one_line_exit_3(command: str, case: str, code: int, out: str, err: str) -> None:
    lines = err.strip().splitlines()
    assert code == 3, f"{command} on {case}: exit {code}, stderr {err!r}"
    assert len(lines) == 1 and lines[0].strip(), f"{command} on {case}: stderr is not one line: {err!r}"
    assert "Traceback" not in err and "internal error" not in err
    assert out == "", f"{command} on {case}: wrote to stdout: {out[:200]!r}"


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("command", sorted(READERS))
def test_filesystem_trouble_is_one_line_and_exit_3(command: str, case: str, tmp_path: Path) -> None:
    path = _make(case, tmp_path / "in" if case != "missing" else tmp_path)
    code, out, err = _invoke(command, path, tmp_path / "out")
    _assert_one_line_exit_3(command, case, code, out, err)
    if case == "broken-symlink":
        assert "symbolic link" in err
    if case == "missing":
        assert "no such file" in err


@pytest.fixture(autouse=True)
def _input_dir(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()  # outputs' parent: a missing one is refused (exit 2) before any input is read


def _damaged_permissions(tmp_path: Path) -> Path:
    """A partition directory whose segment cannot be read, and a log dir around it."""
    log_dir = tmp_path / "in" / "locked"
    part = log_dir / "t-0"
    part.mkdir(parents=True)
    seg = part / "00000000000000000000.log"
    seg.write_bytes(b"")
    seg.chmod(0)
    return log_dir


@pytest.fixture()
def unprivileged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Permission checks as the kernel makes them for a user other than root, when the tests run as root (as in
    CI containers): opening or listing a path whose mode grants nobody read access fails with EACCES."""
    if os.name != "posix" or os.geteuid() != 0:
        return

    def locked(path: Any) -> bool:
        try:
            return isinstance(path, (str, bytes, os.PathLike)) and stat.S_IMODE(os.stat(path).st_mode) & 0o444 == 0
        except OSError:
            return False

    def guard(real: Callable[..., Any]) -> Callable[..., Any]:
        def call(path: Any = ".", *args: Any, **kwargs: Any) -> Any:
            if locked(path):
                raise PermissionError(13, "Permission denied", os.fsdecode(path))
            return real(path, *args, **kwargs)
        return call

    for module, name in ((os, "open"), (os, "listdir"), (os, "scandir"), (builtins, "open"), (io, "open")):
        monkeypatch.setattr(module, name, guard(getattr(module, name)))


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
@pytest.mark.parametrize("command", ["dump-segment", "check", "simulate-restart", "replay-producers"])
def test_permission_denied_is_one_line_and_exit_3(command: str, tmp_path: Path, unprivileged: None) -> None:
    log_dir = _damaged_permissions(tmp_path)
    target = log_dir / "t-0" if command == "replay-producers" else log_dir
    code, out, err = _invoke(command, target, tmp_path / "out")
    _assert_one_line_exit_3(command, "permission-denied", code, out, err)
    assert "permission denied" in err


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
@pytest.mark.parametrize("command", sorted(READERS))
def test_unlistable_directory_is_one_line_and_exit_3(command: str, tmp_path: Path, unprivileged: None) -> None:
    locked = tmp_path / "in" / "t-0"
    locked.mkdir()
    locked.chmod(0)
    try:
        code, out, err = _invoke(command, locked, tmp_path / "out")
    finally:
        locked.chmod(0o755)
    _assert_one_line_exit_3(command, "unlistable", code, out, err)
