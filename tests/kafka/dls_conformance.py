"""Per-version DumpLogSegments conformance without a broker (issue 31, item 2).

Every file of the saved broker data (``fixtures/oracle``, ``fixtures/kafka-4x``) and of the shared corpus
(``../shared/corpus``) is dumped by each release's own DumpLogSegments (the Scala ``kafka.tools`` class of 3.9 to
4.2, the Java ``org.apache.kafka.tools`` one of 4.3 on, whichever the jar has) and by ``kafkatool dump-segment -f
kafka --kafka-version V``, in every mode of :data:`MODES`, several files per run (every file of a case that the mode
takes, in one run, so the end-of-run summaries list several files in the tool's hash-map order). stdout, stderr
and the exit status must be equal byte for byte.

One JVM per version runs all of that version's runs (``tests/kafka/dls/DlsBatch.java``, compiled here with
javac against the version's classpath). A run that ends in an uncaught exception is reported by the JVM as
``Exception in thread "main" <class>: <message>`` and a stack trace; kafkatool prints the message, which is what
is compared there (the stack trace names Kafka's own source lines).

    python -m tests.kafka.dls_conformance [VERSION ...]      # print each disagreeing run, exit 1 if any
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.kafka import versions

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DRIVER = HERE / "dls" / "DlsBatch.java"
SHARED = Path(os.environ.get("KAFKATOOL_SHARED", REPO.parent / "shared"))
ROOTS: tuple[Path, ...] = (REPO / "fixtures" / "oracle", REPO / "fixtures" / "kafka-4x", SHARED / "corpus")

LOGS = (".log", ".checkpoint")
INDEXES = (".index", ".timeindex")


@dataclass(frozen=True)
class Mode:
    """One way of running DumpLogSegments: its flags, kafkatool's, and which files of a case it takes."""

    name: str
    kafka: tuple[str, ...]
    kafkatool: tuple[str, ...]
    partition_prefix: str = ""  #: only partitions whose name starts so (an internal topic's decoder)
    suffixes: tuple[str, ...] | None = None  #: only files with these suffixes (``None``: every file with a dot)
    since: tuple[int, int] = (3, 9)  #: the first release line whose tool has the flags


MODES: tuple[Mode, ...] = (
    Mode("plain", (), ("--decoder", "none")),
    Mode("deep", ("--deep-iteration",), ("--deep", "--decoder", "none"), suffixes=LOGS),
    Mode("print-data", ("--deep-iteration", "--print-data-log"), ("--print-data", "--decoder", "none"),
         suffixes=LOGS),
    Mode("skip-record-metadata", ("--print-data-log", "--skip-record-metadata"),
         ("--print-data", "--decoder", "none", "--skip-record-metadata"), suffixes=LOGS),
    Mode("offsets-decoder", ("--offsets-decoder",), ("--decoder", "group-coordinator"),
         partition_prefix="__consumer_offsets-", suffixes=LOGS),
    Mode("transaction-log-decoder", ("--transaction-log-decoder",), ("--decoder", "transaction-log"),
         partition_prefix="__transaction_state-", suffixes=LOGS),
    Mode("cluster-metadata-decoder", ("--cluster-metadata-decoder",), ("--decoder", "cluster-metadata"),
         partition_prefix="__cluster_metadata-", suffixes=LOGS),
    Mode("share-group-state-decoder", ("--share-group-state-decoder",), ("--decoder", "share-group-state"),
         partition_prefix="__share_group_state-", suffixes=LOGS, since=(4, 0)),
    Mode("remote-log-metadata-decoder", ("--remote-log-metadata-decoder",), ("--decoder", "remote-log-metadata"),
         partition_prefix="__remote_log_metadata-", suffixes=LOGS),
    Mode("index-sanity-check", ("--index-sanity-check",), ("--index-sanity-check",), suffixes=INDEXES),
    Mode("verify-index-only", ("--verify-index-only",), ("--verify-index-only",), suffixes=INDEXES),
)


#: (release line, case, mode) runs kafkatool does not reproduce yet, and why; each is checked to still differ.
#: (Empty: every run agrees. An older release's tool on a newer release's records reads them with that release's
#: own classes, kafkatool.schema.releases; the Scala tool's time-index check stops at the first matching batch.)
NOT_REPRODUCED: dict[tuple[str, str, str], str] = {}


@dataclass(frozen=True)
class Run:
    """One DumpLogSegments run: a case, a mode and the files given to ``--files``."""

    case: str
    mode: Mode
    files: tuple[str, ...]


@dataclass(frozen=True)
class Result:
    """What one run printed: stdout, stderr, and the exit status (0, 1...)."""

    out: bytes
    err: bytes
    status: int


def line_of(version: str) -> tuple[int, int]:
    """``3.9.2`` -> ``(3, 9)``."""
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def cases() -> list[Path]:
    """Every case directory with an ``input/`` (the shared corpus only when present)."""
    return sorted(c for root in ROOTS if root.is_dir() for c in root.iterdir() if (c / "input").is_dir())


def case_id(case: Path) -> str:
    """``oracle/crash-3.9.2-4101-swap``, ``corpus/txn-clean``: the root's last part and the case's name."""
    return f"{case.parent.name}/{case.name}"


def _files(case: Path) -> list[Path]:
    """The case's regular files, the log dir's own first, then per partition in name order."""
    root = case / "input"
    return sorted((p for p in root.rglob("*") if p.is_file() and not p.is_symlink()),
                  key=lambda p: (len(p.relative_to(root).parts), str(p.relative_to(root))))


def runs_of(case: Path, version: str) -> list[Run]:
    """The runs of ``case`` for ``version``: one per mode that has files, and one that ends on a name without a
    dot (DumpLogSegments throws there)."""
    files = _files(case)
    out: list[Run] = []
    for mode in MODES:
        if line_of(version) < mode.since:
            continue
        chosen = [f for f in files if "." in f.name
                  and (mode.suffixes is None or f.suffix in mode.suffixes)
                  and (not mode.partition_prefix or f.parent.name.startswith(mode.partition_prefix))]
        if chosen:
            out.append(Run(case_id(case), mode, tuple(map(str, chosen))))
    dotless = [f for f in files if "." not in f.name]
    if dotless:
        first_log = [f for f in files if f.suffix == ".log"][:1]
        out.append(Run(case_id(case), MODES[0], tuple(map(str, [*first_log, dotless[0]]))))
    return out


@cache
def _compiled(version: str, work: str) -> str:
    """The version's classpath with the batch driver compiled in front."""
    cp = versions.classpath(version)
    javac = shutil.which("javac")
    if javac is None:
        raise versions.JarsMissing("no javac on PATH to compile tests/kafka/dls/DlsBatch.java")
    classes = Path(work) / f"dls-batch-{version}"
    classes.mkdir(parents=True, exist_ok=True)
    subprocess.run([javac, "-d", str(classes), "-cp", cp, str(DRIVER)], check=True, capture_output=True)
    return f"{classes}{os.pathsep}{cp}"


def kafka_results(version: str, runs: list[Run], work: Path) -> list[Result]:
    """Every run through ``version``'s own DumpLogSegments, in one JVM."""
    plan = work / f"plan-{version}.txt"
    plan.write_text("".join("\t".join([*r.mode.kafka, "--files", ",".join(r.files)]) + "\n" for r in runs))
    out_dir = work / f"out-{version}"
    out_dir.mkdir(parents=True, exist_ok=True)
    cmd = [versions.java_binary(), *versions.JVM_OPTS, "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
           "-cp", _compiled(version, str(work)), "DlsBatch", versions.main_class(version, "DumpLogSegments"),
           str(plan), str(out_dir)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=1800, start_new_session=True, cwd=work)
    results = []
    for n in range(len(runs)):
        err = (out_dir / f"{n}.err").read_bytes()
        status = (out_dir / f"{n}.status").read_text()
        if status.startswith("uncaught\n"):
            _, _cls, message = status.split("\n", 2)
            results.append(Result((out_dir / f"{n}.out").read_bytes(), err + message.encode() + b"\n", 1))
        else:
            results.append(Result((out_dir / f"{n}.out").read_bytes(), err, int(status)))
    return results


WORK_DIRS: dict[str, Path] = {}
"""Each version's work dir, where its runs' relative file names start."""


def kafkatool_result(version: str, run: Run) -> Result:
    """The same run through ``kafkatool dump-segment -f kafka --kafka-version V`` (in process, in the version's
    work dir)."""
    from typer.testing import CliRunner

    from kafkatool.cli import app

    major_minor = ".".join(version.split(".")[:2])
    here = os.getcwd()
    os.chdir(WORK_DIRS[version])
    try:
        res = CliRunner().invoke(app, ["dump-segment", "-f", "kafka", "--kafka-version", major_minor,
                                       *run.mode.kafkatool, *run.files])
    finally:
        os.chdir(here)
    return Result(res.stdout_bytes, res.stderr_bytes, res.exit_code)


def first_difference(kafka: bytes, ours: bytes) -> str:
    """Where two texts first differ, as two short lines."""
    a, b = kafka.decode(errors="replace").splitlines(), ours.decode(errors="replace").splitlines()
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else "<end>"
        y = b[i] if i < len(b) else "<end>"
        if x != y:
            return f"line {i + 1}:\n      kafka:     {x[:300]!r}\n      kafkatool: {y[:300]!r}"
    return "equal lines, different bytes (a final newline?)"


def compare(version: str, run: Run, kafka: Result, ours: Result) -> list[str]:
    """Each way ``ours`` differs from ``kafka`` (stdout, stderr, exit status)."""
    problems = []
    if kafka.out != ours.out:
        problems.append(f"stdout {first_difference(kafka.out, ours.out)}")
    if kafka.err != ours.err:
        problems.append(f"stderr {first_difference(kafka.err, ours.err)}")
    if kafka.status != ours.status:
        problems.append(f"exit status: kafka {kafka.status}, kafkatool {ours.status}")
    return problems


def _copy_runs(work: Path, plan: list[tuple[Path, Run]]) -> None:
    """A fresh copy of each run's case at the run's own place under ``work`` (``r<N>/<root>/<case>``)."""
    for n, (case, _) in enumerate(plan):
        target = work / f"r{n}" / case.parent.name / case.name / "input"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(case / "input", target, symlinks=True)


@cache
def version_results(version: str) -> dict[str, list[tuple[Run, Result]]]:
    """Every case's runs and Kafka's results for ``version`` (one JVM, cached for the test session).

    Each run reads its own copy of its case, never the saved data itself: DumpLogSegments creates a missing offset
    index before it fails on it, which a later run (or the corpus) must not see. The copies are made afresh after
    Kafka's runs, so kafkatool reads what Kafka read, at the same paths (the summaries' order depends on them);
    they are removed when the process exits.
    """
    work = Path(tempfile.mkdtemp(prefix=f"kafkatool-dls-{version}-"))
    atexit.register(shutil.rmtree, work, True)
    planned = [(case, r) for case in cases() for r in runs_of(case, version)]
    runs = []
    for n, (case, run) in enumerate(planned):
        # every other run names its files relative to the work dir (both tools run there): Kafka prints the
        # names as given but keys its summaries by the absolute path
        here = str((work if n % 2 == 0 else Path()) / f"r{n}" / case.parent.name / case.name / "input")
        runs.append(Run(run.case, run.mode, tuple(here + f.removeprefix(str(case / "input")) for f in run.files)))
    _copy_runs(work, planned)
    results = kafka_results(version, runs, work)
    _copy_runs(work, planned)
    by_case: dict[str, list[tuple[Run, Result]]] = {}
    for run, result in zip(runs, results, strict=True):
        by_case.setdefault(run.case, []).append((run, result))
    WORK_DIRS[version] = work
    return by_case


def disagreements(version: str, case: str) -> tuple[list[str], int]:
    """Every run of ``case`` on ``version`` whose kafkatool output differs, with where (a run listed in
    :data:`NOT_REPRODUCED` that now agrees is one too), and how many runs were compared."""
    out = []
    runs = version_results(version).get(case, [])
    for run, kafka in runs:
        problems = compare(version, run, kafka, kafkatool_result(version, run))
        known = NOT_REPRODUCED.get((".".join(version.split(".")[:2]), case, run.mode.name))
        if known is not None:
            problems = [] if problems else [f"now reproduced: drop it from NOT_REPRODUCED ({known})"]
        if problems:
            out.append(f"{case} {run.mode.name} ({len(run.files)} files): " + "\n    ".join(problems))
    return out, len(runs)


def main(argv: list[str]) -> int:
    """Run the conformance for the given versions (default all) and print every disagreement."""
    chosen = tuple(argv) or versions.VERSIONS
    bad = 0
    for version in chosen:
        total = 0
        for case in cases():
            problems, compared = disagreements(version, case_id(case))
            total += compared
            bad += len(problems)
            for p in problems:
                print(f"[{version}] {p}")
        print(f"Kafka {version}: {total} runs compared", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
