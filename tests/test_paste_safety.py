"""Safe to paste, safe to show (issue 32, item 3).

Topic names come from directory names, ids from the records: a partition directory ``d$(touch PWNED)x-0``
must not become a printed command that runs ``touch`` when pasted, and an ESC, a C1 CSI (U+009B), a bidi
override (U+202E) or a line separator (U+2028) must reach no JSON string, terminal or report raw. A copy of the
corpus case with a hanging transaction, its data partition copied under hostile names inside a log dir whose own
path is hostile, goes through ``transactions``, ``replay-producers`` (table, json, jsonl; native core and
``KAFKATOOL_NATIVE=0``) and ``report``; every printed command runs through ``bash -c`` in a temporary directory
with harmless stand-ins for ``kafka-transactions.sh`` and ``kafkatool`` on PATH, which must receive the exact
arguments and create nothing.
"""

from __future__ import annotations

import html
import io
import json
import os
import re
import shutil
import subprocess
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.engine.transactions import abort_command
from kafkatool.render import report_plots
from kafkatool.render.groups_report import render_groups
from kafkatool.render.safe import JsonSafeWriter, json_bytes, json_safe_text, printable
from kafkatool.render.transactions_report import render_transactions
from kafkatool.shell import UNSAFE, command, quote
from tests.conftest import load_expected, shared_dir
from tests.fuzz.native import python_path

runner = CliRunner()
CASE = "internal-topics-hanging-txn-clean"
#: Partition directories (``<topic>-0``) copied from the case's hanging ``invoices-0``.
TOPICS = ("d$(touch PWNED)x", "a'b", "e\x1bq", "c\x9bd", "r\u202eo", "l\u2028s", "b`touch PWNED`\\'\"$HOME")
ROOT_NAME = "root $(touch PWNED) \u202e"
# Every character no output may carry raw, except the newline kafkatool's own layout uses.
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
PATHS = ({"native": False}, {"native": True})


def assert_no_raw(text: str, what: str) -> None:
    found = RAW.search(text)
    assert found is None, f"{what}: raw {found.group()!r}: {text[max(0, found.start() - 60):found.start() + 20]!r}"


@contextmanager
def maybe_python(native: bool) -> Iterator[None]:
    if native:
        yield
    else:
        with python_path():
            yield


@pytest.fixture(scope="module")
def hostile_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The case's log dir, copied to a hostile path, its data partition copied under each hostile topic name."""
    source = shared_dir("corpus") / CASE / "input"
    root = tmp_path_factory.mktemp("hostile") / ROOT_NAME
    shutil.copytree(source, root)
    for topic in TOPICS:
        shutil.copytree(root / "invoices-0", root / f"{topic}-0")
    return root


@pytest.fixture(scope="module")
def clock() -> str:
    return str(load_expected(CASE)["afterLoad"]["loadTimeMs"])


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """A directory with ``bin/`` holding stand-ins for the commands kafkatool prints: each writes its arguments,
    NUL-terminated, to ``$ARGV_OUT`` and does nothing else."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("kafka-transactions.sh", "kafkatool"):
        script = bindir / name
        script.write_text("#!/bin/sh\nprintf '%s\\0' \"$@\" > \"$ARGV_OUT\"\n")
        script.chmod(0o755)
    (tmp_path / "cwd").mkdir()
    return tmp_path


def pasted(sandbox: Path, line: str) -> list[str]:
    """Run ``line`` as a user pasting it into bash would (C locale, the stand-ins first on PATH); the arguments
    the command received. Nothing else may happen: no file appears in the working directory."""
    assert_no_raw(line, "printed command")
    out = sandbox / "argv"
    out.unlink(missing_ok=True)
    env = {"PATH": f"{sandbox / 'bin'}:/usr/bin:/bin", "ARGV_OUT": str(out), "LC_ALL": "C", "HOME": str(sandbox)}
    cwd = sandbox / "cwd"
    subprocess.run(["bash", "-c", line], cwd=cwd, env=env, check=True, timeout=30)
    assert list(cwd.iterdir()) == [], f"pasting {line!r} created {list(cwd.iterdir())}"
    assert not (sandbox / "bin" / "PWNED").exists()
    return [os.fsdecode(a) for a in out.read_bytes().split(b"\0")[:-1]]


def expected_abort(topic: str, bootstrap: str | None) -> list[str]:
    head = ["--bootstrap-server", bootstrap] if bootstrap is not None else []
    return [*head, "abort", "--topic", topic, "--partition", "0", "--start-offset", "58"]


# --- the rule itself ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("arg", ["plain-word_1.2:3", "", "a b", "d$(touch PWNED)x", "a'b", "\\", "`id`", "x\ny",
                                 "e\x1b[2Jq", "\x9b1m", "r\u202eo", "l\u2028s", "\u061c\u200e\u2066\u2069",
                                 "naïve ✓ €", "'\x1b'\\\x07", "-x", "~root", "*", "$HOME"])
def test_quote_round_trips_through_bash(arg: str, sandbox: Path) -> None:
    """Every argument arrives exactly, runs nothing, and its quoted form holds no raw unsafe character."""
    line = command("kafkatool", arg, "tail")
    assert pasted(sandbox, line) == [arg, "tail"]
    assert not UNSAFE.search(quote(arg))


def test_plain_words_stay_plain() -> None:
    assert command("kafka-transactions.sh", "--bootstrap-server", "k1:9092", "abort", "--topic", "invoices",
                   "--partition", 0) == ("kafka-transactions.sh --bootstrap-server k1:9092 abort --topic invoices "
                                         "--partition 0")
    assert quote("a'b") == "'a'\"'\"'b'"
    assert quote("e\x1bq") == "$'e\\x1bq'" and quote("r\u202e'") == "$'r\\xe2\\x80\\xae\\''"


def test_abort_command_quotes_topic_and_bootstrap(sandbox: Path) -> None:
    line = abort_command("d$(touch PWNED)x", 3, 7, "k1:9092;touch PWNED")
    assert pasted(sandbox, line) == ["--bootstrap-server", "k1:9092;touch PWNED", "abort", "--topic",
                                     "d$(touch PWNED)x", "--partition", "3", "--start-offset", "7"]


def test_json_escapes_exactly_the_unsafe_set_beyond_what_json_escapes_itself() -> None:
    """``json_safe`` (bytes) and ``json_safe_text`` escape every character of ``kafkatool.shell.UNSAFE`` that
    orjson leaves raw, and nothing else, over the whole BMP; the result parses back to the same text."""
    chars = "".join(chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF)
    data = json_bytes(chars)
    assert orjson.loads(data) == chars
    assert json_safe_text(json.dumps(chars, ensure_ascii=False)) == data.decode()
    escaped = {int(h, 16) for h in re.findall(rb"\\u([0-9a-f]{4})", data)}
    assert escaped == {c for c in range(0x10000) if UNSAFE.match(chr(c))} - {8, 9, 10, 12, 13}
    assert not RAW.search(data.decode().replace("\n", ""))


def test_json_stream_writer_and_plain_text_untouched() -> None:
    out = io.StringIO()
    json.dump({"k\u202e": "v\x85"}, JsonSafeWriter(out), ensure_ascii=False)
    assert out.getvalue() == '{"k\\u202e": "v\\u0085"}'
    assert json_bytes("naïve € “q”") == "\"naïve € “q”\"".encode()


def test_figures_echo_nothing_to_stderr(capfd: pytest.CaptureFixture[str]) -> None:
    """A label holding raw control or bidi characters is drawn escaped, and matplotlib's warnings (a missing
    glyph, naming the character and matplotlib's source path) never reach stderr."""
    if not report_plots.available():
        pytest.skip("matplotlib is not installed")
    plt = report_plots._plt()
    fig, ax = plt.subplots()
    ax.set_title("t\x1b]0;x\x07\u202e\x9b")
    ax.text(0.5, 0.5, "e\x1bq")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning escaping quiet_save fails the test
        svg = report_plots._svg(fig)
    assert_no_raw(svg, "svg")
    assert "\\x1b]0;x\\x07\\u202e\\x9b" in svg
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""


# --- the commands on hostile data -----------------------------------------------------------------------------


@pytest.mark.parametrize("paths", PATHS, ids=["python", "native"])
@pytest.mark.parametrize("fmt", ["json", "jsonl", "table"])
def test_transactions_commands_paste_safely(fmt: str, paths: dict[str, bool], hostile_root: Path, clock: str,
                                            sandbox: Path) -> None:
    bootstrap = "k1:9092;touch PWNED"
    with maybe_python(paths["native"]):
        result = runner.invoke(app, ["transactions", "-f", fmt, "--now", clock, "--bootstrap-server", bootstrap,
                                     str(hostile_root)])
    assert result.exit_code == 1, result.stderr
    assert_no_raw(result.stdout, f"transactions -f {fmt}")
    assert_no_raw(result.stderr, "stderr")
    if fmt == "table":
        lines = [line.split("to end it: ", 1)[1] for line in result.stdout.splitlines() if "to end it: " in line]
    else:
        rows = ([json.loads(line) for line in result.stdout.splitlines()] if fmt == "jsonl"
                else json.loads(result.stdout)["open_transactions"])
        opened = [r for r in rows if r.get("type", "open_transaction") == "open_transaction"]
        assert {r["topic"] for r in opened} == {*TOPICS, "invoices"}  # parsed back to the exact names
        lines = [r["abort_command"] for r in opened]
    got = sorted((pasted(sandbox, line) for line in lines), key=lambda a: a[4])
    assert got == sorted((expected_abort(t, bootstrap) for t in (*TOPICS, "invoices")), key=lambda a: a[4])


@pytest.mark.parametrize("paths", PATHS, ids=["python", "native"])
@pytest.mark.parametrize("topic", TOPICS)
def test_replay_producers_command_and_json(topic: str, paths: dict[str, bool], hostile_root: Path, clock: str,
                                           sandbox: Path) -> None:
    part = str(hostile_root / f"{topic}-0")
    with maybe_python(paths["native"]):
        table = runner.invoke(app, ["replay-producers", "--now", clock, part])
        as_json = runner.invoke(app, ["replay-producers", "-f", "json", "--now", clock, part])
        as_jsonl = runner.invoke(app, ["replay-producers", "-f", "jsonl", "--now", clock, part])
    assert table.exit_code == 1, table.stderr
    assert_no_raw(table.stdout, "replay-producers table")
    lines = table.stdout.splitlines()
    (at,) = [i for i, line in enumerate(lines) if line.endswith("To end it:")]
    assert pasted(sandbox, lines[at + 1].strip()) == expected_abort(topic, None)
    for result in (as_json, as_jsonl):
        assert_no_raw(result.stdout, "replay-producers json")
    assert json.loads(as_json.stdout)["topic"] == topic
    summary = json.loads(as_jsonl.stdout.splitlines()[-1])
    assert summary["partition"] == f"{topic}-0"


def test_json_documents_keep_the_data_and_carry_no_raw_character(hostile_root: Path, clock: str) -> None:
    """Poisoned ``transactions`` and ``groups`` documents (every string, group and transactional ids included)
    written as json and jsonl: parsed back they are the same documents; the text holds no raw character."""
    hostile = "\x1b]0;t\x07\x9b1m\u202e\u2028\u2069\x7f\u061c"

    def poison(value: object) -> object:
        if isinstance(value, str):
            return value + hostile
        if isinstance(value, dict):
            return {k: poison(v) for k, v in value.items()}
        if isinstance(value, list):
            return [poison(v) for v in value]
        return value

    for name, render in (("transactions", render_transactions), ("groups", render_groups)):
        doc = poison(json.loads(runner.invoke(app, [name, "-f", "json", "--now", clock, str(hostile_root)]
                                              if name == "transactions" else [name, "-f", "json",
                                                                             str(hostile_root)]).stdout))
        for fmt in ("json", "jsonl", "table"):
            out = io.StringIO()
            render(doc, fmt, out)
            assert_no_raw(out.getvalue(), f"{name} -f {fmt}")
        out = io.StringIO()
        render(doc, "json", out)
        assert json.loads(out.getvalue()) == doc


def test_dump_segment_json_of_a_hostile_directory(hostile_root: Path) -> None:
    """The file name in ``dump-segment -f json``/``jsonl`` (both paths): exact once parsed, escaped in the text."""
    segment = hostile_root / "e\x1bq-0" / "00000000000000000000.log"
    for native in (True, False):
        with maybe_python(native):
            for fmt in ("json", "jsonl"):
                result = runner.invoke(app, ["dump-segment", "-f", fmt, "--deep", "--print-data", str(segment)])
                assert result.exit_code == 0, result.stderr
                assert_no_raw(result.stdout, f"dump-segment -f {fmt}")
                first = json.loads(result.stdout.splitlines()[0] if fmt == "jsonl" else result.stdout)
                assert (first["path"] if fmt == "jsonl" else first["files"][0]["path"]) == str(segment)


def test_report_shows_everything_escaped_and_its_commands_paste(hostile_root: Path, clock: str, sandbox: Path,
                                                                tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    result = runner.invoke(app, ["report", "-q", "--now", clock, "--title", "t\x1b]0;x\x07\u202e", "-o", str(out),
                                 str(hostile_root)])
    assert result.exit_code == 1, result.stderr
    assert_no_raw(result.stderr, "report stderr")
    assert "Glyph" not in result.stderr
    page = out.read_text(encoding="utf-8")
    assert_no_raw(page, "report")
    assert "\\x1b]0;x\\x07\\u202e" in page  # the title, shown escaped
    assert "r\\u202eo-0" in page and "e\\x1bq-0" in page and "c\\x9bd-0" in page  # headings, contents, tables
    commands = [html.unescape(c) for c in re.findall(r'<pre class="cmd">(.*?)</pre>', page, flags=re.S)]
    aborts = {html.unescape(c) for c in re.findall(r"<td>(kafka-transactions\.sh [^<]*)</td>", page)}
    assert len(aborts) == len(TOPICS) + 1
    for line in aborts:
        args = pasted(sandbox, line)
        assert args[4] in (*TOPICS, "invoices") and args == expected_abort(args[4], "localhost:9092")
    seen = set()
    for line in dict.fromkeys(commands):
        args = pasted(sandbox, line)
        assert str(hostile_root) in args or any(a.startswith(str(hostile_root) + "/") for a in args), (line, args)
        seen.update(a for a in args if a.startswith(str(hostile_root) + "/"))
    assert {str(hostile_root / f"{t}-0") for t in TOPICS} <= seen


def test_printable_is_the_one_rule() -> None:
    """The terminal escaping and the shell quoting use the same set of characters."""
    for c in range(0x3000):
        assert (printable(chr(c)) != chr(c)) == bool(UNSAFE.match(chr(c))), hex(c)
