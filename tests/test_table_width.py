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
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=60)
    os.close(leader)
    return ANSI.sub("", b"".join(chunks).decode().replace("\r\n", "\n"))


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
