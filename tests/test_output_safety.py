"""Outputs never endanger evidence (issue 9): ``--write-snapshot``, ``--apply-to``, ``--plot``, ``scan --out`` and
``report --out`` refuse the input tree (also through a symbolic link), an existing output unless ``--force``, and a
symbolic link as the output; files are written atomically and never through a link out of the output directory.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.errors import UsageError
from kafkatool.writing.atomic import prepare_output_dir, prepare_output_file, replace_tree, write_atomic, write_tree
from tests.test_evidence_safety import FIXTURES, snapshot

runner = CliRunner()
LOG_DIR = FIXTURES / "torn-write"
PARTITION = LOG_DIR / "payments-0"
NOW = "1700003600000"


def invoke(*argv: str) -> tuple[int, str]:
    result = runner.invoke(app, list(argv))
    return result.exit_code, result.stderr


# Each output option: argv building it at ``{out}`` from the torn-write fixture, and whether it is a directory.
OUTPUTS = {
    "write-snapshot": (["replay-producers", "--write-snapshot", "{out}", str(PARTITION)], False),
    "apply-to": (["simulate-restart", "--now", NOW, "--apply-to", "{out}", str(LOG_DIR)], True),
    "scan": (["scan", "--out", "{out}", "--jobs", "1", "--no-progress", str(LOG_DIR)], True),
    "report": (["report", "--out", "{out}", "--now", NOW, str(LOG_DIR)], False),
}


def _run(name: str, out: Path, *extra: str) -> tuple[int, str]:
    argv, _ = OUTPUTS[name]
    return invoke(*argv[:1], *extra, *(a.replace("{out}", str(out)) for a in argv[1:]))


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_output_inside_the_input_is_refused_even_through_a_link(name: str, tmp_path: Path) -> None:
    before = snapshot(LOG_DIR)
    code, err = _run(name, PARTITION / "out-here")
    assert code == 2 and "inside the input" in err
    link = tmp_path / "sneaky"
    link.symlink_to(PARTITION)
    code, err = _run(name, link / "out-here", "--force")
    assert code == 2 and "inside the input" in err
    assert snapshot(LOG_DIR) == before


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_existing_output_needs_force(name: str, tmp_path: Path) -> None:
    _, is_dir = OUTPUTS[name]
    out = tmp_path / "existing"
    if is_dir:
        out.mkdir()
        (out / "keep-me").write_text("old")
    else:
        out.write_text("old")
    code, err = _run(name, out)
    assert code == 2 and "--force" in err
    assert (out / "keep-me" if is_dir else out).read_text() == "old"
    code, err = _run(name, out, "--force")
    assert code in (0, 1), err
    if is_dir:
        assert out.is_dir() and not (out / "keep-me").exists()  # replaced whole, not merged
    else:
        assert out.read_bytes() != b"old"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "a staging or temp file was left behind"


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_a_symbolic_link_as_output_is_refused(name: str, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "link"
    link.symlink_to(elsewhere / "target")
    code, err = _run(name, link, "--force")
    assert code == 2 and "symbolic link" in err
    assert list(elsewhere.iterdir()) == []


def test_plot_refuses_an_existing_file_and_the_scenario(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    scenario = tmp_path / "s.json"
    scenario.write_bytes(b"{}")
    code, err = invoke("simulate-replication", "--plot", str(scenario), str(scenario))
    assert code == 2 and "scenario file" in err and scenario.read_bytes() == b"{}"
    existing = tmp_path / "p.svg"
    existing.write_text("old")
    code, err = invoke("simulate-replication", "--plot", str(existing), str(scenario))
    assert code == 2 and "--force" in err and existing.read_text() == "old"


# --- the writing layer itself -----------------------------------------------------------------------


def test_write_tree_never_leaves_the_output_directory(tmp_path: Path) -> None:
    out = tmp_path / "out"
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("../escape", "/abs", "a/../../escape", "", "a//b"):
        with pytest.raises(UsageError):
            write_tree({name: b"x"}, out)
    out.mkdir()
    (out / "sub").symlink_to(outside)
    with pytest.raises(UsageError, match="symbolic link"):
        write_tree({"sub/file": b"x"}, out)
    (out / "file").symlink_to(outside / "victim")
    with pytest.raises(UsageError, match="symbolic link"):
        write_tree({"file": b"x"}, out)
    assert list(outside.iterdir()) == []


def test_replace_tree_swaps_the_whole_directory(tmp_path: Path) -> None:
    out = tmp_path / "out"
    replace_tree({"a/b": b"1", "c": b"2"}, out)
    assert (out / "a" / "b").read_bytes() == b"1"
    replace_tree({"d": b"3"}, out)
    assert sorted(p.name for p in out.iterdir()) == ["d"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    with pytest.raises(UsageError):
        replace_tree({"../x": b""}, out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"] and (out / "d").read_bytes() == b"3"


def test_write_atomic_leaves_no_temporary_file_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "f"
    target.write_bytes(b"old")

    def boom(*_: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(UsageError, match=r"cannot write .*disk full"):  # named, exit 2: never an internal error
        write_atomic(target, b"new")
    assert target.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["f"]


def test_prepare_checks(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="inside the input"):
        prepare_output_file(src / "x", [src], force=True)
    with pytest.raises(UsageError, match="directory"):
        prepare_output_file(src, [], force=True)
    with pytest.raises(UsageError, match="not a directory"):
        prepare_output_dir(tmp_path / "file", [], force=True)
    prepare_output_file(tmp_path / "file", [src], force=True)
    prepare_output_dir(tmp_path / "new", [src], force=False)
