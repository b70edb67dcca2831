"""No control character from data reaches a person's terminal raw (issue 20, item 9).

Whoever produces to a topic chooses record keys, values and headers; whoever can create a directory chooses the
names kafkatool prints. A hostile partition (escape sequences, BEL, CR, a C1 CSI and a bidi override in its
record data and in its directory name) goes through every human output; the corpus documents of ``groups``,
``transactions`` and ``metadata`` go through their renderers with every string poisoned the same way. The
output holds those characters only escaped, and ``-f json`` still carries the data exactly.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.render.groups_report import render_groups
from kafkatool.render.metadata_report import render_metadata
from kafkatool.render.output import TableOutput
from kafkatool.render.safe import printable, printable_tree
from kafkatool.render.transactions_report import render_transactions
from kafkatool.schema.record_batch import Header
from kafkatool.writing.fixture_writer import PartitionWriter
from tests.conftest import shared_dir
from tests.pty_support import drain

runner = CliRunner()
HOSTILE = "\x1b]0;pwned\x07\x1b[2J\r\u202e\x9b1m"
# Everything a terminal may act on, except the newlines kafkatool's own layout uses.
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
SGR = re.compile("\x1b\\[[0-9;]*m")


def assert_safe(text: str, what: str) -> None:
    found = UNSAFE.search(text)
    if found:
        context = text[max(0, found.start() - 40):][:80]
        pytest.fail(f"{what}: raw {found.group()!r} at {found.start()}: {context!r}")


def test_printable_escapes_every_control_and_leaves_text_alone() -> None:
    assert printable("orders-0 ✓ naïve") == "orders-0 ✓ naïve"
    assert printable(HOSTILE) == "\\x1b]0;pwned\\x07\\x1b[2J\\x0d\\u202e\\x9b1m"
    assert printable("a\nb\x1b", keep_newlines=True) == "a\nb\\x1b"
    assert printable("a\nb") == "a\\x0ab"
    assert printable_tree({"k\x1b": ["v\x07", 3, None]}) == {"k\\x1b": ["v\\x07", 3, None]}


@pytest.fixture(scope="module")
def hostile_log_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One partition whose directory name and record key, value, header key and header value are hostile."""
    root = tmp_path_factory.mktemp("hostile")
    w = PartitionWriter(f"evil{HOSTILE}", 0)
    data = HOSTILE.encode()
    w.append([b"value " + data], keys=[b"key " + data], headers=[(Header(key=data, value=data),)], leader_epoch=0)
    w.append([b"second " + data], keys=[None], leader_epoch=0)
    w.close()
    for name, content in w.files().items():
        path = root / w.directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return root


def _partition(root: Path) -> Path:
    (part,) = [p for p in root.iterdir() if p.is_dir()]
    return part


COMMANDS = {
    "dump-segment": ["dump-segment", "--deep", "--print-data", "{part}"],
    "dump-segment-log-dir": ["dump-segment", "{root}"],
    "check": ["check", "{root}"],
    "replay-producers": ["replay-producers", "{part}"],
    "simulate-restart": ["simulate-restart", "--now", "1700003600000", "{root}"],
    "transactions": ["transactions", "--now", "1700003600000", "{root}"],
    "scan": ["scan", "--no-progress", "--jobs", "1", "--fail-on", "never", "--out", "{out}", "{root}"],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_hostile_data_reaches_no_terminal_raw(name: str, hostile_log_dir: Path, tmp_path: Path) -> None:
    part = _partition(hostile_log_dir)
    argv = [a.format(part=part, root=hostile_log_dir, out=tmp_path / "out") for a in COMMANDS[name]]
    result = runner.invoke(app, argv)
    assert result.exit_code in (0, 1), (result.exit_code, result.stderr)
    assert_safe(result.stdout, f"{name} stdout")
    assert_safe(result.stderr, f"{name} stderr")


def test_the_table_shows_the_data_escaped_and_json_keeps_it_exact(hostile_log_dir: Path) -> None:
    part = _partition(hostile_log_dir)
    table = runner.invoke(app, ["dump-segment", "--deep", "--print-data", str(part / "00000000000000000000.log")])
    assert "\\x1b]0;pwned\\x07" in table.stdout
    doc = json.loads(runner.invoke(app, ["dump-segment", "--deep", "--print-data", "-f", "json",
                                         str(part / "00000000000000000000.log")]).stdout)
    (first, _) = doc["files"][0]["items"]
    assert HOSTILE in first["records"][0]["value"]


def test_a_coloured_terminal_gets_only_kafkatools_own_escapes(hostile_log_dir: Path) -> None:
    out = io.StringIO()
    table = TableOutput(out, io.StringIO(), color=True)
    table.begin_file(str(_partition(hostile_log_dir)), "log", {"note": HOSTILE})
    table.row({"type": "record", "offset": 0, "key": HOSTILE, "value": HOSTILE, "header_keys": [HOSTILE]})
    table.end_file({"entries": 1})
    coloured = out.getvalue()
    assert SGR.search(coloured), "the console was meant to be a coloured terminal"
    assert_safe(SGR.sub("", coloured), "coloured table")


def poison(value: Any) -> Any:
    """Every string of a document with the hostile text appended."""
    if isinstance(value, str):
        return value + HOSTILE
    if isinstance(value, dict):
        return {k: poison(v) for k, v in value.items()}
    if isinstance(value, list):
        return [poison(v) for v in value]
    return value


RENDERERS = {
    "groups": (render_groups, "internal-topics-hanging-txn-clean"),
    "transactions": (render_transactions, "internal-topics-hanging-txn-clean"),
    "metadata": (render_metadata, "kraft-controller-metadata-clean"),
}


@pytest.mark.parametrize("name", sorted(RENDERERS))
def test_poisoned_documents_render_escaped(name: str) -> None:
    render, case = RENDERERS[name]
    root = shared_dir("corpus") / case / "input"
    result = runner.invoke(app, [name, "-f", "json", str(root)])
    assert result.exit_code in (0, 1), result.stderr
    doc = poison(json.loads(result.stdout))
    out = io.StringIO()
    render(doc, "table", out)
    assert HOSTILE[:1] not in out.getvalue() and "\\x1b" in out.getvalue()
    assert_safe(out.getvalue(), name)


def _run_kafka_format(segment: Path, *, tty: bool) -> bytes:
    """``dump-segment -f kafka --deep --print-data`` in a child process whose stdout is a terminal (a pty) or
    a pipe; everything it wrote there."""
    import os
    import pty
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "kafkatool", "dump-segment", "-f", "kafka", "--deep", "--print-data", str(segment)]
    if not tty:
        return subprocess.run(cmd, capture_output=True, timeout=60, check=False).stdout
    leader, follower = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=follower, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    os.close(follower)
    output = drain(leader)
    proc.wait(timeout=60)
    return output.replace(b"\r\n", b"\n")  # the terminal's own newline translation


def test_kafka_format_is_escaped_on_a_terminal_and_exact_through_a_pipe(hostile_log_dir: Path) -> None:
    segment = _partition(hostile_log_dir) / "00000000000000000000.log"
    piped = _run_kafka_format(segment, tty=False).decode()
    assert HOSTILE in piped, "through a pipe -f kafka must stay DumpLogSegments' exact text"
    shown = _run_kafka_format(segment, tty=True).decode()
    assert "\\x1b]0;pwned\\x07" in shown
    assert_safe(shown, "-f kafka on a terminal")
    assert shown.count("\n") == piped.count("\n")
