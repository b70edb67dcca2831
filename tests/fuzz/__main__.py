"""Long fuzz runs, one command: ``python -m tests.fuzz --target batch --runs 1000000`` (``--target all`` for every one).

Two engines share the targets of :mod:`tests.fuzz.targets`:

- ``random`` (default): a seeded mutation driver (bit flips, truncations, splices, int32/varint edge values such as
  0, -1 and 2^31-1 in length fields, inserted and duplicated chunks, random bytes) over seeds from ``fixtures/`` and
  the shared corpus. Deterministic for a given ``--seed``; needs nothing beyond the test dependencies.
- ``atheris``: coverage-guided libFuzzer through atheris (``pip install atheris``), same targets and contract.

``--native`` fuzzes the entry points of the Rust core (``kafkatool._native``) instead, each against its Python
reference where it has one (:mod:`tests.fuzz.native`; ``python -m tests.fuzz --native --engine atheris --runs
10000000 --json figures.json`` is the long run, one atheris process per entry point).

A finding (an uncaught exception, or a decode error without a byte position) is written to ``--artifacts`` and
the run exits 1. Not collected by pytest; the bounded in-suite version is ``tests/test_fuzz_decoders.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import time
import traceback
from pathlib import Path

from tests.fuzz.targets import TARGETS, Finding, check, generate, seeds


def _save(artifacts: Path, name: str, data: bytes) -> Path:
    artifacts.mkdir(parents=True, exist_ok=True)
    path = artifacts / f"fuzz-{name}-{hashlib.sha1(data).hexdigest()[:12]}.bin"
    path.write_bytes(data)
    return path


def run_random(name: str, runs: int, seed: int, artifacts: Path,
               time_limit: float | None) -> tuple[int, int, float]:
    """``runs`` generated inputs for ``name``: the number run, the number of findings and the slowest input's
    seconds (a hang would show there, or never end)."""
    rnd = random.Random(f"{seed}:{name}")
    target = TARGETS[name]
    findings = 0
    start = time.monotonic()
    done = 0
    slowest = 0.0
    for done in range(1, runs + 1):
        data = generate(name, rnd)
        began = time.perf_counter()
        try:
            check(target, data)
        except Finding as err:
            findings += 1
            where = _save(artifacts, name, data)
            print(f"FINDING {name}: {err} (input saved to {where})", file=sys.stderr)
            traceback.print_exception(err.__cause__ or err, file=sys.stderr)
            if findings >= 10:
                break
        slowest = max(slowest, time.perf_counter() - began)
        if done % 50000 == 0:
            rate = done / (time.monotonic() - start)
            print(f"  {name}: {done} inputs, {rate:.0f}/s", file=sys.stderr, flush=True)
        if time_limit is not None and time.monotonic() - start > time_limit:
            break
    return done, findings, slowest


def run_atheris(name: str, runs: int, artifacts: Path) -> None:
    """Coverage-guided run through atheris; libFuzzer stops at the first finding."""
    import atheris  # type: ignore[import-not-found]

    target = TARGETS[name]
    corpus_dir = artifacts / f"atheris-{name}"
    corpus_dir.mkdir(parents=True, exist_ok=True)
    for i, data in enumerate(seeds(name)):
        (corpus_dir / f"seed-{i}").write_bytes(data)

    def one(data: bytes) -> None:
        check(target, data)

    argv = [sys.argv[0], f"-runs={runs}", f"-artifact_prefix={artifacts}/", "-max_len=65536", str(corpus_dir)]
    atheris.instrument_all()  # coverage feedback from kafkatool's Python code (already imported)
    atheris.Setup(argv, one)
    atheris.Fuzz()


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="all", help=f"one of: all, {', '.join(TARGETS)}")
    parser.add_argument("--runs", type=int, default=100000, help="inputs per target")
    parser.add_argument("--seed", type=int, default=0, help="random engine seed")
    parser.add_argument("--engine", choices=("random", "atheris", "cargo"), default="random",
                        help="cargo: with --native, each entry point's cargo-fuzz target")
    parser.add_argument("--time-limit", type=float, default=None, help="seconds per target (random engine)")
    parser.add_argument("--artifacts", type=Path, default=Path("fuzz-artifacts"), help="where findings are saved")
    parser.add_argument("--native", action="store_true", help="the native core's entry points (tests.fuzz.native)")
    parser.add_argument("--json", type=Path, help="with --native: write the figures here")
    args = parser.parse_args()
    if args.engine == "cargo" and not args.native:
        parser.error("--engine cargo fuzzes the native core: add --native")
    if args.native:
        from tests.fuzz import native

        return native.main(["--target", args.target, "--runs", str(args.runs), "--engine", args.engine,
                            "--seed", str(args.seed), "--artifacts", str(args.artifacts / "native"),
                            *(["--json", str(args.json)] if args.json else [])])
    names = list(TARGETS) if args.target == "all" else args.target.split(",")
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        parser.error(f"unknown target(s) {', '.join(unknown)}; known: {', '.join(TARGETS)}")
    if args.engine == "atheris":
        if len(names) != 1:
            parser.error("--engine atheris fuzzes one --target per process")
        run_atheris(names[0], args.runs, args.artifacts)
        return 0
    total = 0
    for name in names:
        start = time.monotonic()
        done, findings, slowest = run_random(name, args.runs, args.seed, args.artifacts, args.time_limit)
        elapsed = time.monotonic() - start
        print(f"{name}: {done} inputs in {elapsed:.0f} s, {findings} finding(s), {len(seeds(name))} seeds, "
              f"slowest input {slowest * 1000:.1f} ms", flush=True)
        total += findings
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
