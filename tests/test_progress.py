"""Progress on stderr (issue 20): a bar for a run that reads enough to take more than a second, on a terminal
only, and none with ``-q``/``--quiet`` or when stderr is a pipe. Every subcommand that reads log dirs is run with
stderr on a pseudo-terminal, on Kafka-made data, with the size threshold lowered to nothing in the child
process (the inputs are small: the bar's rule, not its threshold, is under test)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import shared_dir
from tests.pty_support import drain

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "fixtures" / "demo"
#: The child: kafkatool with the progress threshold at 0 bytes (as if every input were big).
CHILD = ("import sys; import kafkatool.render.scan_report as s; s.PROGRESS_MIN_BYTES = 0; "
         "from kafkatool.cli import main; sys.argv[0] = 'kafkatool'; main()")
HIDE_CURSOR = "\x1b[?25l"  # what a live progress display writes first on a terminal


def corpus(case: str) -> Path:
    return shared_dir("corpus") / case / "input"


def run(args: list[str], *, terminal: bool, tmp_path: Path) -> tuple[int, str]:
    """``kafkatool ARGS`` with stdout to a file and stderr on a pseudo-terminal (``terminal``) or a pipe; its
    exit code and what it wrote on stderr."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["TERM"] = "xterm"
    with open(tmp_path / "stdout", "wb") as stdout:
        if not terminal:
            proc = subprocess.run([sys.executable, "-c", CHILD, *args], stdout=stdout, stderr=subprocess.PIPE,
                                  stdin=subprocess.DEVNULL, env=env, timeout=300, check=False)
            return proc.returncode, proc.stderr.decode()
        leader, follower = pty.openpty()
        child = subprocess.Popen([sys.executable, "-c", CHILD, *args], stdout=stdout, stderr=follower,
                                 stdin=subprocess.DEVNULL, env=env)
        os.close(follower)
        output = drain(leader)
        code = child.wait(timeout=300)
        return code, output.decode(errors="replace")


def cases(tmp: Path) -> dict[str, tuple[list[str], str]]:
    """Each subcommand: its arguments and the words its bar shows."""
    return {
        "dump-segment": (["dump-segment", str(DEMO / "demo-0")], "reading"),
        "check": (["check", str(corpus("idem-torn-write"))], "reading"),
        "simulate-restart": (["simulate-restart", str(corpus("idem-torn-write"))], "reading"),
        "replay-producers": (["replay-producers", str(corpus("idem-clean") / "payments-0")], "payments-0"),
        "metadata": (["metadata", str(corpus("kraft-controller-metadata-clean"))], "reading"),
        "report": (["report", "--out", str(tmp / "report.html"), str(corpus("idem-clean"))], "analysing"),
        "scan": (["scan", "--out", str(tmp / "scan"), "--fail-on", "never", "-j", "1", str(DEMO)], "scanning"),
    }


@pytest.mark.parametrize("name", ["dump-segment", "check", "simulate-restart", "replay-producers", "metadata",
                                  "report", "scan"])
def test_a_bar_on_a_terminal_none_on_a_pipe_or_with_quiet(name: str, tmp_path: Path) -> None:
    args, words = cases(tmp_path)[name]
    code, err = run(args, terminal=True, tmp_path=tmp_path)
    assert code in (0, 1), err
    assert HIDE_CURSOR in err and words in err, err
    for quiet in ("-q", "--quiet"):
        for path in (tmp_path / "report.html", tmp_path / "scan"):
            subprocess.run(["rm", "-rf", str(path)], check=True)
        code, err = run([*args, quiet], terminal=True, tmp_path=tmp_path)
        assert code in (0, 1), err
        assert HIDE_CURSOR not in err and words not in err.replace(str(tmp_path), ""), err
    for path in (tmp_path / "report.html", tmp_path / "scan"):
        subprocess.run(["rm", "-rf", str(path)], check=True)
    code, err = run(args, terminal=False, tmp_path=tmp_path)
    assert code in (0, 1), err
    assert "\x1b" not in err and words not in err.replace(str(tmp_path), ""), err


def test_scan_still_takes_no_progress(tmp_path: Path) -> None:
    code, err = run(["scan", "--out", str(tmp_path / "scan"), "--fail-on", "never", "-j", "1", "--no-progress",
                     str(DEMO)], terminal=True, tmp_path=tmp_path)
    assert code == 0, err
    assert HIDE_CURSOR not in err


def test_dump_segment_to_a_terminal_shows_no_bar(tmp_path: Path) -> None:
    """The rows on a terminal are the progress: a bar would run through them."""
    leader, follower = pty.openpty()
    child = subprocess.Popen([sys.executable, "-c", CHILD, "dump-segment", str(DEMO / "demo-0")], stdout=follower,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    os.close(follower)
    while True:
        try:
            if not os.read(leader, 65536):
                break
        except OSError:
            break
    assert child.wait(timeout=60) == 0
    assert HIDE_CURSOR.encode() not in child.stderr.read()
    os.close(leader)
