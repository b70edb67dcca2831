"""Evidence is never modified (issue 9): every subcommand, on every corpus case and committed fixture, leaves
every input file byte-for-byte as it was, with no file added, removed, renamed or re-timed.

``PLANS`` maps each registered command to the command lines it is run with; a command registered in the CLI
without an entry fails :func:`test_every_registered_command_has_an_evidence_plan`, so a new subcommand cannot
ship without this check. Inputs are read where they are (``fixtures/`` and ``../shared``); outputs go to
``tmp_path``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from kafkatool.cli import app
from tests.conftest import REPO, SHARED, shared_dir

runner = CliRunner()
NOW = "1700003600000"
FIXTURES = REPO / "fixtures"

# Input kinds: a log dir, one partition directory of it, a KRaft metadata log dir, a replication scenario file,
# a set of brokers' log dirs holding replicas of one partition, or the committed fixtures tree (fixture build).
LOGDIR, PARTITION, KRAFT, SCENARIO, REPLICAS, FIXTURE_TREE = "logdir", "partition", "kraft", "scenario", "replicas", \
    "fixture-tree"

PLANS: dict[str, list[tuple[str, list[str]]]] = {
    "dump-segment": [
        (LOGDIR, ["{in}"]),
        (LOGDIR, ["--verify", "-f", "json", "{in}"]),
        (LOGDIR, ["--print-data", "-f", "jsonl", "{in}"]),
        (PARTITION, ["-f", "kafka", "--deep", "--index-sanity-check", "{in}"]),
    ],
    "check": [(LOGDIR, ["--show-info", "{in}"]), (PARTITION, ["-f", "json", "{in}"])],
    "replay-producers": [
        (PARTITION, ["{in}"]),
        (PARTITION, ["--from-snapshot", "latest", "-f", "json", "--write-snapshot", "{out}/x.snapshot", "{in}"]),
    ],
    "simulate-restart": [
        (LOGDIR, ["--now", NOW, "--apply-to", "{out}/recovered", "{in}"]),
        (PARTITION, ["--now", NOW, "--assume", "unclean", "--recovery-point", "0", "-f", "json", "{in}"]),
    ],
    "simulate-replication": [(SCENARIO, ["-f", "json", "--plot", "{out}/plot.svg", "{in}"]), (REPLICAS, ["{in}"])],
    "scan": [(LOGDIR, ["--out", "{out}/scan", "--jobs", "1", "--no-progress", "{in}"])],
    "report": [(LOGDIR, ["--out", "{out}/report.html", "--now", NOW, "{in}"])],
    "transactions": [(LOGDIR, ["--now", NOW, "{in}"])],
    "metadata": [(KRAFT, ["{in}"])],
    "groups": [(LOGDIR, ["-f", "json", "{in}"])],
    "salvage": [(LOGDIR, ["--now", NOW, "--out", "{out}/salvaged", "--export", "{out}/records.jsonl", "{in}"])],
    "fixture list": [(FIXTURE_TREE, [])],
    "fixture build": [(FIXTURE_TREE, ["torn-write", "{out}/built"]), (FIXTURE_TREE, ["demo", "{out}/built"])],
}
HEAVY = {"scan", "report"}  # run on a sample of log dirs only: they run every engine at once
HEAVY_SAMPLE = 6


def registered_commands() -> list[str]:
    """Every leaf command of the CLI, ``group sub`` for grouped ones."""
    root = typer.main.get_command(app)
    names = []
    for name, cmd in root.commands.items():  # type: ignore[attr-defined]
        if hasattr(cmd, "commands"):
            names += [f"{name} {sub}" for sub in cmd.commands]
        else:
            names.append(name)
    return sorted(names)


def test_every_registered_command_has_an_evidence_plan() -> None:
    missing = [name for name in registered_commands() if name not in PLANS]
    assert not missing, f"add an entry to PLANS in {Path(__file__).name} for: {', '.join(missing)}"


# --- inputs ---------------------------------------------------------------------------------------


def _is_partition_dir(path: Path) -> bool:
    return path.is_dir() and any(p.suffix == ".log" for p in path.iterdir())


def _log_dirs() -> list[Path]:
    found = []
    corpus = SHARED / "corpus"
    if corpus.is_dir():
        found += sorted(p / "input" for p in corpus.iterdir() if (p / "input").is_dir())
    fixtures = [p for p in FIXTURES.iterdir() if p.is_dir() and p.name not in ("oracle", "kafka-4x")]
    # the live oracle's saved cases: each case's input/ is a log dir (or one per broker)
    fixtures += [c / "input" for c in (FIXTURES / "oracle").glob("*") if (c / "input").is_dir()]
    fixtures += [c / d for c in (FIXTURES / "kafka-4x").glob("*") for d in ("input", "data") if (c / d).is_dir()]
    for fixture in sorted(fixtures):
        subs = [s for s in sorted(fixture.iterdir()) if s.is_dir()]
        if subs and all(not _is_partition_dir(s) and s.name.startswith("broker") for s in subs):
            found += subs  # a replica set: one log dir per broker
        else:
            found.append(fixture)
    return found


def _partitions(log_dir: Path) -> list[Path]:
    return [p for p in sorted(log_dir.iterdir()) if _is_partition_dir(p)]


def _label(path: Path) -> str:
    for base in (SHARED, REPO):
        if path.is_relative_to(base):
            return str(path.relative_to(base))
    return str(path)


@dataclass(frozen=True)
class Run:
    """One command line to run, the tree it must leave alone, and the argv (``{out}`` still unfilled)."""

    command: str
    tree: Path
    argv: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"{self.command}:{' '.join(a if a != str(self.tree) else '<in>' for a in self.argv)}:{_label(self.tree)}"


def _replica_runs() -> list[tuple[Path, list[str]]]:
    out = []
    root = SHARED / "replica-sets"
    if root.is_dir():
        for case in sorted(p for p in root.iterdir() if (p / "expected.json").is_file()):
            exp = json.loads((case / "expected.json").read_text())
            ctl = exp["controllerAtCapture"]
            argv = ["-f", "json", "--partition", exp["partitionDir"], "--leader", str(ctl["leader"]),
                    "--isr", ",".join(str(b) for b in ctl["isr"]), "--now", NOW]
            for broker in exp["brokerIds"]:
                argv += ["--replica", f"{broker}={case / 'brokers' / str(broker)}"]
            out.append((case / "brokers", argv))
    fixture = FIXTURES / "replica-set"
    brokers = sorted(p for p in fixture.glob("broker-*") if p.is_dir())
    if brokers:
        part = _partitions(brokers[0])[0].name
        argv = ["--partition", part, "--leader", brokers[0].name.split("-")[1]]
        for b in brokers:
            argv += ["--replica", f"{b.name.split('-')[1]}={b}"]
        out.append((fixture, argv))
    return out


def _runs() -> list[Run]:
    runs: list[Run] = []
    log_dirs = _log_dirs()
    kraft = [d for d in log_dirs if (d / "__cluster_metadata-0").is_dir()]
    scenarios = sorted((SHARED / "replication").glob("*.json"))[:4] if (SHARED / "replication").is_dir() else []
    for command, plans in PLANS.items():
        for kind, template in plans:
            sources: list[tuple[Path, Path]] = []  # (tree to hash, path given to the command)
            if kind == LOGDIR:
                dirs = log_dirs[::max(1, len(log_dirs) // HEAVY_SAMPLE)] if command in HEAVY else log_dirs
                sources = [(d, d) for d in dirs]
            elif kind == PARTITION:
                sources = [(d, p) for d in log_dirs for p in _partitions(d)[:1]]
            elif kind == KRAFT:
                sources = [(d, d) for d in kraft]
            elif kind == SCENARIO:
                sources = [(s, s) for s in scenarios]
            elif kind == FIXTURE_TREE:
                sources = [(FIXTURES, FIXTURES)]
            if kind == REPLICAS:
                runs += [Run(command, tree, (command, *argv)) for tree, argv in _replica_runs()]
                continue
            for tree, given in sources:
                argv = [a.replace("{in}", str(given)) for a in template]
                runs.append(Run(command, tree, (*command.split(), *argv)))
    return runs


RUNS = _runs()


def snapshot(tree: Path) -> dict[str, tuple[str, int, int, str]]:
    """Every entry under ``tree`` (``tree`` itself when a file): its type, mode, mtime and content hash."""
    paths = [tree] if not tree.is_dir() else [tree, *sorted(tree.rglob("*"))]
    state = {}
    for path in paths:
        st = os.lstat(path)
        if path.is_symlink():
            kind, digest = "link", os.readlink(path)
        elif path.is_dir():
            kind, digest = "dir", ""
        else:
            kind, digest = "file", hashlib.sha256(path.read_bytes()).hexdigest()
        state[str(path.relative_to(tree)) if path != tree else "."] = (kind, st.st_mode, st.st_mtime_ns, digest)
    return state


def test_the_plans_cover_the_corpus_and_the_fixtures() -> None:
    trees = {run.tree for run in RUNS}
    assert FIXTURES / "torn-write" in trees
    corpus = shared_dir("corpus")  # skips without ../shared, fails under CI
    cases = [p / "input" for p in corpus.iterdir() if (p / "input").is_dir()]
    assert cases and all(case in trees for case in cases)
    assert {run.command for run in RUNS} >= set(registered_commands()) & set(PLANS)


@pytest.mark.parametrize("run", RUNS, ids=lambda r: r.id)
def test_inputs_are_unchanged(run: Run, tmp_path: Path) -> None:
    before = snapshot(run.tree)
    argv = [a.replace("{out}", str(tmp_path)) for a in run.argv]
    result = runner.invoke(app, argv)
    assert result.exit_code in (0, 1), f"{' '.join(argv)} -> {result.exit_code}: {result.stderr}"
    assert "Traceback" not in result.stderr
    after = snapshot(run.tree)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"{' '.join(argv)} changed its input: {changed[:10]}"


def test_the_snapshot_sees_every_kind_of_change(tmp_path: Path) -> None:
    """The comparison is not vacuous: content, an added file and a re-timed file all show."""
    (tmp_path / "a").write_bytes(b"x")
    base = snapshot(tmp_path)
    (tmp_path / "a").write_bytes(b"y")
    assert snapshot(tmp_path)["a"] != base["a"]
    (tmp_path / "b").write_bytes(b"")
    assert "b" in snapshot(tmp_path)
    os.utime(tmp_path / "b", ns=(0, 0))
    assert snapshot(tmp_path)["b"][2] == 0


WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _one_run_per_plan() -> list[Run]:
    """For each command line of PLANS, its run on the torn-write fixture (or its only input)."""
    chosen: dict[tuple[str, tuple[str, ...]], Run] = {}
    for run in RUNS:
        key = (run.command, tuple(a.replace(str(run.tree), "") for a in run.argv))
        if key not in chosen or run.tree == FIXTURES / "torn-write":
            chosen[key] = run
    return list(chosen.values())


@pytest.mark.parametrize("run", _one_run_per_plan(), ids=lambda r: r.id)
def test_inputs_are_opened_read_only(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every open of a file under the input tree asks for reading only (os.open flags, open() modes, mmap access)."""
    import builtins
    import io
    import mmap

    tree = str(run.tree.resolve())
    bad: list[str] = []
    opened: list[str] = []

    def inside(path: object) -> bool:
        try:
            return isinstance(path, str | os.PathLike) and os.path.realpath(os.fspath(path)).startswith(tree)
        except (TypeError, ValueError):
            return False

    real_os_open, real_open, real_mmap = os.open, builtins.open, mmap.mmap

    def os_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if inside(path):
            opened.append(str(path))
            if flags & WRITE_FLAGS:
                bad.append(f"os.open({path}, {flags:#o})")
        return real_os_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    def open_(file: object, mode: str = "r", *args: object, **kwargs: object) -> object:
        if inside(file):
            opened.append(str(file))
            if any(c in mode for c in "wax+"):
                bad.append(f"open({file}, {mode!r})")
        return real_open(file, mode, *args, **kwargs)  # type: ignore[call-overload]

    class ReadOnlyMmap(real_mmap):  # type: ignore[misc, valid-type]
        def __new__(cls, fileno: int, length: int, *args: object, **kwargs: object) -> mmap.mmap:
            access = kwargs.get("access", mmap.ACCESS_DEFAULT)
            if access != mmap.ACCESS_READ and inside(os.readlink(f"/proc/self/fd/{fileno}")):
                bad.append(f"mmap of {os.readlink(f'/proc/self/fd/{fileno}')} with access {access}")
            return real_mmap.__new__(cls, fileno, length, *args, **kwargs)

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(builtins, "open", open_)
    monkeypatch.setattr(io, "open", open_)
    monkeypatch.setattr(mmap, "mmap", ReadOnlyMmap)
    argv = [a.replace("{out}", str(tmp_path)) for a in run.argv]
    result = runner.invoke(app, argv)
    assert result.exit_code in (0, 1), f"{' '.join(argv)} -> {result.exit_code}: {result.stderr}"
    assert not bad, f"{' '.join(argv)} opened inputs for writing: {bad[:5]}"
    if not run.command.startswith("fixture"):  # fixture list and build read no evidence
        assert opened, f"{' '.join(argv)}: no input open was seen (the check would be vacuous)"
