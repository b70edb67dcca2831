"""The evidence boundary (issue 32): a symbolic link out of the tree given on the command line, a broken link, a
FIFO, a socket or a device where a Kafka file, a partition directory or a log dir could be is a finding naming it,
never read (never even opened: opening a FIFO blocks) and never skipped silently, in every subcommand that reads
inputs; ``--follow-links`` reads links on purpose. Also the small things found with it: outputs whose parent does
not exist are refused, an unwritable output is a usage error, numeric options are held to their types' ranges.

Every command runs in a child process under a timeout, so a FIFO opened by mistake fails the test instead of
hanging it.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.test_evidence_safety import FIXTURES, registered_commands

TIMEOUT = 120
SECRET = "TOP-SECRET-ANALYST-FILE"
PARTITION = "orders-0"
SOURCE = FIXTURES / "replica-set" / "broker-1"
HEALTHY_REPLICA = FIXTURES / "replica-set" / "broker-2"
KRAFT = FIXTURES / "oracle" / "decoding-4.4.0-records" / "input"
METADATA_PARTITION = "__cluster_metadata-0"

# Each reading command with the argv giving it the log dir ``{d}`` (or the partition directory ``{p}``).
READERS: dict[str, list[str]] = {
    "dump-segment": ["{p}"],
    "check": ["{d}"],
    "replay-producers": ["{p}"],
    "simulate-restart": ["{d}"],
    "simulate-replication": ["--replica", "1={d}", "--replica", f"2={HEALTHY_REPLICA}", "--partition", PARTITION,
                             "--leader", "2"],
    "scan": ["--out", "{out}/scan", "--jobs", "1", "--no-progress", "{d}"],
    "report": ["--out", "{out}/report.html", "{d}"],
    "transactions": ["{d}"],
    "groups": ["{d}"],
    "metadata": ["{d}"],
    "salvage": ["{d}"],
}
NO_INPUT = {"fixture list", "fixture build"}


def test_every_reading_command_is_covered() -> None:
    missing = [c for c in registered_commands() if c not in READERS and c not in NO_INPUT]
    assert not missing, f"add {', '.join(missing)} to READERS in {Path(__file__).name}"


def _outside(tmp: Path) -> Path:
    """A place outside every evidence tree, holding what an attacker would like read: a file and a directory."""
    out = tmp / "analyst"
    (out / "etc").mkdir(parents=True, exist_ok=True)
    (out / "passwd").write_text(f"root:x:0:0:{SECRET}:/root:/bin/sh\n")
    (out / "etc" / "00000000000000000000.log").write_text(f"{SECRET}\n")
    return out


def _device_node(path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("a device node needs root (os.mknod)")
    os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # /dev/null's numbers


def _socket(path: Path) -> None:
    sock = socket.socket(socket.AF_UNIX)
    here = os.getcwd()
    try:
        os.chdir(path.parent)  # bound by its name: a socket's path is limited to 108 bytes
        sock.bind(path.name)
    finally:
        os.chdir(here)
        sock.close()  # the socket file stays


# Each case: how to plant it in a partition directory ``part`` (``outside`` holds the attacker's targets), the name
# it has there, and the finding code expected.
Plant = Callable[[Path, Path], None]
CASES: dict[str, tuple[str, str, Plant]] = {
    "segment-link-out": ("00000000000000000100.log", "link-out-of-tree",
                         lambda part, out: (part / "00000000000000000100.log").symlink_to(out / "passwd")),
    "index-link-out": ("00000000000000000000.index", "link-out-of-tree",
                       lambda part, out: ((part / "00000000000000000000.index").unlink(),
                                          (part / "00000000000000000000.index").symlink_to(out / "passwd"))[0]),
    "fifo": ("00000000000000000100.log", "special-file",
             lambda part, out: os.mkfifo(part / "00000000000000000100.log")),
    "fifo-checkpoint": ("leader-epoch-checkpoint", "special-file",
                        lambda part, out: ((part / "leader-epoch-checkpoint").unlink(),
                                           os.mkfifo(part / "leader-epoch-checkpoint"))[0]),
    "socket": ("00000000000000000100.index", "special-file",
               lambda part, out: _socket(part / "00000000000000000100.index")),
    "device-link": ("00000000000000000100.log", "special-file",
                    lambda part, out: (part / "00000000000000000100.log").symlink_to("/dev/urandom")),
    "device-node": ("00000000000000000100.log", "special-file",
                    lambda part, out: _device_node(part / "00000000000000000100.log")),
    "broken-link": ("00000000000000000100.log", "broken-link",
                    lambda part, out: (part / "00000000000000000100.log").symlink_to(out / "gone.log")),
}


def _run(argv: list[str], env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``kafkatool argv`` in a child process; a run past :data:`TIMEOUT` (a FIFO opened and blocking) fails."""
    try:
        proc = subprocess.run([sys.executable, "-m", "kafkatool", *argv], capture_output=True, text=True,
                              timeout=TIMEOUT, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"kafkatool {' '.join(argv)} did not end in {TIMEOUT} s (a FIFO or device opened?)")
    return proc.returncode, proc.stdout, proc.stderr


def _tree(tmp: Path, command: str) -> tuple[Path, Path]:
    """A copy of the command's input log dir, and the partition directory to plant in."""
    if command == "metadata":
        log_dir = tmp / "kraft"
        shutil.copytree(KRAFT, log_dir, symlinks=True)
        return log_dir, log_dir / METADATA_PARTITION
    log_dir = tmp / "broker-1"
    shutil.copytree(SOURCE, log_dir, symlinks=True)
    return log_dir, log_dir / PARTITION


def _argv(command: str, log_dir: Path, part: Path, out: Path) -> list[str]:
    return [*command.split(), *(a.replace("{d}", str(log_dir)).replace("{p}", str(part)).replace("{out}", str(out))
                                for a in READERS[command])]


def _assert_named(command: str, case: str, name: str, code: int, out: str, err: str) -> None:
    text = out + err
    assert "Traceback" not in text and "internal error" not in text, f"{command} {case}: {err[-2000:]}"
    assert SECRET not in text, f"{command} {case}: read the file outside the evidence tree"
    assert code == 1, f"{command} {case}: exit {code} (the entry must be a finding, exit 1): {err[-2000:]}"
    if command != "report":  # the report's page holds it (checked below); its terminal output is the verdict
        assert name in text, f"{command} {case}: {name} not named: {text[-2000:]}"


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield _outside(tmp_path_factory.mktemp("outside"))


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("command", sorted(READERS))
def test_refused_entry_is_a_finding_never_read(command: str, case: str, tmp_path: Path, outside: Path) -> None:
    name, finding, plant = CASES[case]
    log_dir, part = _tree(tmp_path / "in", command)
    if command == "metadata":
        name = "00000000000000099999.log" if name.endswith(".log") else name
        if case in ("index-link-out", "fifo-checkpoint"):
            pytest.skip("the metadata partition has no such file to replace")
        plant = _renamed(plant, name)
    plant(part, outside)
    (tmp_path / "out").mkdir()
    code, out, err = _run(_argv(command, log_dir, part, tmp_path / "out"))
    _assert_named(command, case, name, code, out, err)
    if command == "check":
        assert finding in out
    if command == "report":
        page = (tmp_path / "out" / "report.html").read_text()
        assert finding in page and name in page and SECRET not in page


def _renamed(plant: Plant, name: str) -> Plant:
    """``plant`` making its entry under ``name`` (the metadata partition's segment names)."""
    def go(part: Path, out: Path) -> None:
        scratch = part.parent / "scratch-0"
        scratch.mkdir()
        plant(scratch, out)
        (entry,) = list(scratch.iterdir())
        os.rename(entry, part / name)
        scratch.rmdir()
    return go


@pytest.mark.parametrize("command", sorted(set(READERS) - {"metadata"}))
def test_partition_directory_linked_out_is_a_finding(command: str, tmp_path: Path, outside: Path) -> None:
    log_dir, part = _tree(tmp_path / "in", command)
    (log_dir / "etc-0").symlink_to(outside / "etc")
    (tmp_path / "out").mkdir()
    code, out, err = _run(_argv(command, log_dir, part, tmp_path / "out"))
    if command in ("dump-segment", "replay-producers"):  # they were given the partition, not the log dir
        assert code == 0 and SECRET not in out + err
        code, out, err = _run(_argv(command, log_dir, log_dir, tmp_path / "out")) if command == "dump-segment" \
            else (1, "etc-0", "")
    _assert_named(command, "dir-link-out", "etc-0", code, out, err)


def test_partition_of_only_refused_files_is_not_healthy(tmp_path: Path) -> None:
    log_dir, _ = _tree(tmp_path / "in", "check")
    lonely = log_dir / "lonely-0"
    lonely.mkdir()
    os.mkfifo(lonely / "00000000000000000000.log")
    code, out, err = _run(["check", "-f", "json", str(log_dir)])
    assert code == 1 and "special-file" in out and "lonely-0/00000000000000000000.log" in out
    code, out, err = _run(["check", "--fail-on", "never", str(log_dir)])
    assert code == 0 and "special-file" in out
    code, out, err = _run(["report", "--out", str(tmp_path / "r.html"), str(log_dir)])
    assert code == 1 and "verdict healthy" not in (tmp_path / "r.html").read_text()
    code, out, err = _run(["dump-segment", str(lonely)])
    assert code == 1 and "special-file" in out, err


@pytest.mark.parametrize("native", ["1", "0"])
@pytest.mark.parametrize("command", ["dump-segment", "check", "replay-producers", "scan"])
def test_native_and_python_paths_agree(command: str, native: str, tmp_path: Path, outside: Path) -> None:
    log_dir, part = _tree(tmp_path / "in", command)
    os.mkfifo(part / "00000000000000000100.log")
    (part / "00000000000000000200.log").symlink_to(outside / "passwd")
    (tmp_path / "out").mkdir()
    code, out, err = _run(_argv(command, log_dir, part, tmp_path / "out"), {"KAFKATOOL_NATIVE": native})
    for name in ("00000000000000000100.log", "00000000000000000200.log"):
        _assert_named(command, f"native={native}", name, code, out, err)


def test_follow_links_reads_links_on_purpose(tmp_path: Path, outside: Path) -> None:
    log_dir, part = _tree(tmp_path / "in", "check")
    (part / "00000000000000000100.log").symlink_to(outside / "passwd")
    (part / "00000000000000000200.log").symlink_to("/dev/urandom")
    code, out, _ = _run(["check", "--follow-links", str(log_dir)])
    assert "link-out-of-tree" not in out and "00000000000000000100.log" in out  # read: a torn tail, not a refusal
    assert "special-file" in out and code == 1  # a device is never read, even on purpose
    code, out, _ = _run(["dump-segment", "--follow-links", str(part / "00000000000000000100.log")])
    assert code in (1, 3)


def test_link_inside_the_tree_is_read(tmp_path: Path) -> None:
    log_dir, part = _tree(tmp_path / "in", "check")
    clean_code, _, _ = _run(["check", "-f", "json", str(log_dir)])
    stash = log_dir / "stash"
    stash.mkdir()
    seg = part / "00000000000000000000.log"
    os.rename(seg, stash / seg.name)
    seg.symlink_to(Path("..") / "stash" / seg.name)
    code, out, err = _run(["check", "-f", "json", str(log_dir)])
    assert "link-out-of-tree" not in out and code == clean_code, err
    # Given the partition alone, the tree is the partition: the same link now leaves it.
    code, out, err = _run(["check", "-f", "json", str(part)])
    assert "link-out-of-tree" in out and code == 1


def test_fifo_given_directly_is_named_not_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "00000000000000000000.log"
    os.mkfifo(fifo)
    code, _, err = _run(["dump-segment", str(fifo)])
    assert code == 3 and str(fifo) in err and "Traceback" not in err
    code, _, err = _run(["dump-segment", "-f", "kafka", str(fifo)])
    assert code in (1, 3) and "Traceback" not in err


# Outputs and numbers ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["scan", "--no-progress", "--out", "{missing}/scan", "{d}"],
    ["report", "--out", "{missing}/r.html", "{d}"],
    ["simulate-restart", "--apply-to", "{missing}/after", "{d}"],
    ["replay-producers", "--write-snapshot", "{missing}/x.snapshot", "{p}"],
])
def test_missing_output_parent_is_refused_not_made(argv: list[str], tmp_path: Path) -> None:
    log_dir, part = _tree(tmp_path / "in", "check")
    missing = tmp_path / "no" / "such"
    code, _, err = _run([a.replace("{missing}", str(missing)).replace("{d}", str(log_dir)).replace("{p}", str(part))
                         for a in argv])
    assert code == 2 and "does not exist" in err and not (tmp_path / "no").exists(), err


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="no /proc")
def test_unwritable_output_is_a_usage_error(tmp_path: Path) -> None:
    log_dir, _ = _tree(tmp_path / "in", "check")
    code, _, err = _run(["simulate-restart", "--apply-to", "/proc/self/out", str(log_dir)])
    assert code == 2 and "/proc/self/out" in err and "internal error" not in err, err


@pytest.mark.parametrize("argv, option", [
    (["simulate-restart", "--recovery-point", "99999999999999999999", "{d}"], "--recovery-point"),
    (["simulate-restart", "--now", "-5", "{d}"], "--now"),
    (["dump-segment", "--offsets", "-5:3", "{p}"], "--offsets"),
    (["dump-segment", "--offsets", "0:99999999999999999999", "{p}"], "--offsets"),
    (["transactions", "--now", "-5", "{d}"], "--now"),
    (["replay-producers", "--until", "-1", "{p}"], "--until"),
    (["replay-producers", "--from-snapshot", "-3", "{p}"], "--from-snapshot"),
    (["report", "--out", "{tmp}/r.html", "--leader-epoch", "3000000000", "{d}"], "--leader-epoch"),
    (["simulate-replication", "--replica", "1={d}", "--replica", f"2={HEALTHY_REPLICA}", "--partition", PARTITION,
      "--leader", "2", "--isr", "1,-2"], "--isr"),
])
def test_numeric_options_out_of_range_are_usage_errors(argv: list[str], option: str, tmp_path: Path) -> None:
    code, _, err = _run([a.replace("{d}", str(SOURCE)).replace("{p}", str(SOURCE / PARTITION))
                         .replace("{tmp}", str(tmp_path)) for a in argv])
    assert code == 2 and option in err and "Traceback" not in err, err
