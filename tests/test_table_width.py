"""dump-segment's default table reads on an 80-column terminal: columns are chosen to fit, the file's summary names
the ones left out, and ``--wide`` shows them all (issue 20). Run in a pseudo-terminal of 80 columns, on a
Kafka-made segment of the demo fixture (shallow and deep) and on every internal layout the demo holds."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from tests.pty_support import drain

DEMO = Path(__file__).resolve().parents[1] / "fixtures" / "demo" / "demo-0"
ANSI = __import__("re").compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def on_terminal(args: list[str], columns: int = 80) -> str:
    """Run ``kafkatool ARGS`` with stdout on a pseudo-terminal ``columns`` wide; what it printed, plain."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["TERM"] = "xterm"
    proc = subprocess.Popen([sys.executable, "-m", "kafkatool", *args], stdout=follower,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env)
    os.close(follower)
    output = drain(leader)
    proc.wait(timeout=60)
    return ANSI.sub("", output.decode().replace("\r\n", "\n"))


@pytest.mark.parametrize("extra", [[], ["--deep"], ["--print-data"]], ids=["shallow", "deep", "print-data"])
def test_the_default_table_fits_80_columns(extra: list[str]) -> None:
    text = on_terminal(["dump-segment", *extra, str(DEMO / "00000000000000000000.log")])
    lines = text.splitlines()
    assert len(lines) > 5
    assert max(len(line) for line in lines) <= 80, max(lines, key=len)
    assert "…" not in text, "a column was cut instead of left out"
    assert "--wide shows" in text


def test_wide_shows_every_column() -> None:
    text = on_terminal(["dump-segment", "--wide", str(DEMO / "00000000000000000000.log")], columns=200)
    header = next(line for line in text.splitlines() if " base " in f" {line} ")
    for name in ("pos", "base", "last", "count", "size", "magic", "codec", "epoch", "pid", "pepoch", "seq",
                 "flags", "ts type", "max ts", "crc"):
        assert name in header
    assert "--wide shows" not in text


def test_rows_are_laid_out_without_a_rich_table_per_chunk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The default table's rows cost about what JSON lines cost: no rich Table is built for rows that fit (a rich
    Table cost ~1 ms a row, 85-137x jsonl). A segment of one-record batches, shallow and deep, through the CLI."""
    from typer.testing import CliRunner

    from kafkatool.cli import app
    from kafkatool.render import output
    from tests.benchmarks.inputs import write_segment

    part = tmp_path / "t-0"
    part.mkdir()
    write_segment(part / "00000000000000000000.log", 600 * 175, 1, 100)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a rich Table was built for rows")

    monkeypatch.setattr(output, "Table", refuse)
    for extra in ([], ["--deep"]):
        result = CliRunner().invoke(app, ["dump-segment", *extra, str(part / "00000000000000000000.log")])
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        assert sum(1 for line in lines if line.split()[:1] == ["pos"]) == (2 if not extra else 600)
        assert "entries: 600" in result.stdout


def test_a_value_too_wide_wraps_in_its_column() -> None:
    """A record value wider than the terminal wraps inside its column, whole (nothing cut with an ellipsis)."""
    import io

    from kafkatool.render.output import TableOutput

    out = io.StringIO()
    table = TableOutput(out, io.StringIO())
    table.width = 80
    value = "v" * 150
    table.row({"type": "record", "offset": 7, "timestamp": 1700000000016, "key": "k", "value": value})
    table.end_file({"entries": 1})
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "".join(line.split()[-1] for line in lines[1:-2] if line.strip()).endswith(value)
    assert "2023-11-14T22:13:20.016Z" in lines[1]


def piped(args: list[str], columns: str | None) -> str:
    """Run ``kafkatool ARGS`` with stdout a pipe, ``COLUMNS`` set to ``columns`` (or unset)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if columns is not None:
        env["COLUMNS"] = columns
    return subprocess.run([sys.executable, "-m", "kafkatool", *args], capture_output=True, text=True, env=env,
                          timeout=60, check=False).stdout


@pytest.mark.parametrize("args", [
    ["dump-segment", str(DEMO / "00000000000000000000.log")],
    ["dump-segment", "--print-data", str(DEMO / "00000000000000000000.log")],
    ["replay-producers", str(DEMO)],
    ["transactions", str(DEMO.parents[1] / "txn-commit-abort-hanging")],
    ["salvage", str(DEMO.parent)],
], ids=["shallow", "print-data", "replay-producers", "transactions", "salvage"])
def test_a_pipe_honours_columns(args: list[str]) -> None:
    """``COLUMNS=80 kafkatool ... | less``: the tables fit 80 columns, as on an 80-column terminal; without COLUMNS a
    pipe gets the wide layout (those same tables are wider than 80 then, so the test can tell the two apart)."""
    narrow = piped(args, "80").splitlines()
    assert len(narrow) > 3
    assert max(map(len, narrow)) <= 80, max(narrow, key=len)
    assert max(map(len, piped(args, None).splitlines())) > 80
    assert max(map(len, piped(args, "junk").splitlines())) > 80  # not a number: as if unset
