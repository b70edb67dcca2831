"""kafkatool's speed suite: ``python -m tests.benchmarks [--quick] [--out FILE] [--work DIR] [--repeat N]``.

Generates its inputs (see :mod:`tests.benchmarks.inputs`; kept in ``--work`` between runs), measures kafkatool's
shallow scan, CRC scan (one thread, GIL-free CRC threads, a process pool), deep decode, ``replay-producers``,
``simulate-restart`` (unclean, from recovery point 0) and ``check`` against kafka-python, aiokafka's C reader
and crc32c's own rate over the same bytes, in the same run, plus peak RSS and whole-command times in fresh
processes. Prints a table of figures and of the issue's targets as same-run ratios, and writes everything as
JSON (default ``tests/benchmarks/results/latest.json``, ignored by git). Not collected by pytest.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.benchmarks import suite
from tests.benchmarks.inputs import CODECS, Sizes, generate

HERE = Path(__file__).resolve().parent
DLS_SHALLOW_1GIB_S = 1.41  # ../shared/research/java-peers.md: DumpLogSegments, 1 GiB of 16 KiB batches, shallow
DLS_TINY_BATCHES_PER_S = 170e3  # the same, 64 MiB of one-record batches
LOGLOADER_GB_PER_S = 0.82  # LogLoader.load, unclean, recovery point 0, 1.07 GB partition


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


MEMORY_GOAL_MB = 200  # every subcommand's peak RSS on 1 GiB of one-record batches


def command_rss(logdir: str, work: Path) -> dict[str, Any]:
    """Each subcommand once, in a fresh process, over the log dir of one-record batches: wall time and peak RSS
    (the scan's pool workers included)."""
    part = str(Path(logdir) / "tiny-0")
    out = str(work / "rss-out")
    runs = {
        "check": ["check", "-f", "json", logdir],
        "simulate-restart": ["simulate-restart", "-f", "json", "--assume", "unclean", "--recovery-point", "0",
                             logdir],
        "replay-producers": ["replay-producers", "-f", "json", part],
        "transactions": ["transactions", "-f", "json", logdir],
        "groups": ["groups", "-f", "json", logdir],
        "report": ["report", "--force", "--out", out + ".html", logdir],
        "scan": ["scan", "--force", "--out", out, "-f", "json", logdir],
        "simulate-replication (two replicas)": ["simulate-replication", "-f", "json", "--replica", f"1={logdir}",
                                                "--replica", f"2={logdir}", "--partition", "tiny-0", "--leader", "1",
                                                "--isr", "1,2"],
        "dump-segment --verify": ["dump-segment", "--verify", "-f", "jsonl", part],
        "dump-segment (table)": ["dump-segment", part],
        "dump-segment -f kafka": ["dump-segment", "-f", "kafka", part],
    }
    return {name: suite.cli(args, 1) for name, args in runs.items()}


def targets(res: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue's targets, each as measured in this run."""
    out: list[dict[str, Any]] = []

    def add(name: str, value: float | None, goal: float, unit: str, higher_is_better: bool = True) -> None:
        if value is None:
            return
        ok = value >= goal if higher_is_better else value <= goal
        out.append({"target": name, "value": value, "goal": goal, "unit": unit,
                    "met": bool(ok), "direction": ">=" if higher_is_better else "<="})

    big = res["scan"]["big"]["runs"]
    crc = big["crc32c_one_buffer"]["s"]
    add("16 KiB batches, CRC scan, one process / crc32c one buffer", _ratio(crc, big["kafkatool_crc"]["s"]), 0.5, "x")
    if "kafkatool_crc_process_pool" in big:
        add("16 KiB batches, CRC scan, process pool / crc32c one buffer",
            _ratio(crc, big["kafkatool_crc_process_pool"]["s"]), 0.8, "x")
    tiny = res["scan"]["tiny"]["runs"]
    add("one-record batches, CRC scan", tiny["kafkatool_crc"]["m_batches_per_s"], 1.5, "M batches/s")
    for name, deep in res["deep"].items():
        runs = deep["runs"]
        if "kafka-python_deep" in runs:
            add(f"deep decode {name} / kafka-python", _ratio(runs["kafka-python_deep"]["s"],
                                                             runs["kafkatool_deep"]["s"]), 3.0, "x")
        if "aiokafka_deep" in runs:
            add(f"deep decode {name} / aiokafka (C)", _ratio(runs["aiokafka_deep"]["s"], runs["kafkatool_deep"]["s"]),
                0.7, "x")
    cmd = res["commands"]["runs"]
    add("simulate-restart from recovery point 0 / plain CRC scan (time)",
        _ratio(cmd["simulate-restart"]["s"], cmd["plain_crc_scan"]["s"]), 1.3, "x", higher_is_better=False)
    for name, info in res.get("rss_commands", {}).items():
        add(f"peak RSS, 1 GiB of one-record batches: {name}", info["max_rss_mb"], MEMORY_GOAL_MB, "MB",
            higher_is_better=False)
    for mode, info in res.get("rss", {}).items():
        add(f"peak RSS on the big segment: {mode}", info["max_rss_mb"], 150, "MB", higher_is_better=False)
    cli = res.get("cli", {})
    if "dump-segment -f kafka big" in cli:
        add("dump-segment --format kafka, shallow, big segment (whole process)", cli["dump-segment -f kafka big"]["s"],
            0.45, "s", higher_is_better=False)
    if "dump-segment -f kafka tiny" in cli:
        add("dump-segment --format kafka, one-record batches (whole process)",
            res["scan"]["tiny"]["batches"] / cli["dump-segment -f kafka tiny"]["s"] / 1e3, 350, "k batches/s")
    if "simulate-restart partition" in cli:
        add("simulate-restart from recovery point 0 (whole process)",
            res["commands"]["bytes"] / cli["simulate-restart partition"]["s"] / 1e9, 1.6, "GB/s")
    add("simulate-restart from recovery point 0 (in process)", cmd["simulate-restart"]["gb_per_s"], 1.6, "GB/s")
    return out


def print_report(res: dict[str, Any]) -> None:
    """The figures and the targets as plain text tables."""
    print(f"\nkafkatool benchmark {res['date']} on {res['machine']}  (inputs: {res['sizes']})")
    for name, group in res["scan"].items():
        runs = group["runs"]
        base = runs["crc32c_one_buffer"]["s"]
        print(f"\n[scan] {name}: {group['bytes'] / 1e6:.1f} MB, {group['batches']} batches")
        print(f"  {'contender':32s} {'median s':>9s} {'min-max':>15s} {'GB/s':>7s} {'M batch/s':>10s} "
              f"{'vs crc32c':>9s}")
        for k, r in runs.items():
            print(f"  {k:32s} {r['s']:9.4f} {r['min_s']:7.3f}-{r['max_s']:<7.3f} {r['gb_per_s']:7.2f} "
                  f"{r['m_batches_per_s']:10.3f} {base / r['s']:9.2f}")
    for name, group in res["deep"].items():
        runs = group["runs"]
        ours = runs["kafkatool_deep"]["s"]
        print(f"\n[deep] {name}: {group['bytes'] / 1e6:.1f} MB, {group['records']} records")
        for k, r in runs.items():
            print(f"  {k:32s} {r['s']:9.4f} {r['min_s']:7.3f}-{r['max_s']:<7.3f} {r['m_records_per_s']:7.3f} M rec/s"
                  f"   kafkatool is {r['s'] / ours:5.2f}x its speed")
    cmd = res["commands"]
    print(f"\n[commands, in process] partition: {cmd['bytes'] / 1e6:.1f} MB in {cmd['segments']} segments")
    for k, r in cmd["runs"].items():
        print(f"  {k:32s} {r['s']:9.4f} {r['min_s']:7.3f}-{r['max_s']:<7.3f} {r['gb_per_s']:7.2f} GB/s   "
              f"{r['s'] / cmd['runs']['plain_crc_scan']['s']:5.2f}x the plain CRC scan")
    if res.get("cli"):
        print("\n[commands, whole process: interpreter start, imports, output to /dev/null]")
        for k, r in res["cli"].items():
            print(f"  {k:40s} {r['s']:8.3f} s ({r['min_s']:.3f}-{r['max_s']:.3f})  peak RSS {r['max_rss_mb']:.0f} MB")
    if res.get("rss_commands"):
        print("\n[peak RSS of every subcommand on 1 GiB of one-record batches, fresh process each]")
        for k, r in res["rss_commands"].items():
            print(f"  {k:32s} {r['max_rss_mb']:8.1f} MB  ({r['s']:.1f} s)")
    if res.get("rss"):
        print("\n[peak RSS on the big segment, fresh process per mode]")
        for k, r in res["rss"].items():
            print(f"  {k:32s} {r['max_rss_mb']:8.1f} MB  ({r['s']:.3f} s)")
    print("\n[targets]")
    for t in res["targets"]:
        mark = "met " if t["met"] else "MISS"
        print(f"  {mark} {t['target']:72s} {t['value']:9.3f} {t['unit']:12s} (goal {t['direction']} {t['goal']})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small inputs (64 MiB big segment) for a fast check")
    parser.add_argument("--work", type=Path, help="where inputs are generated and kept (default: a temp dir)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "latest.json", help="JSON results file")
    parser.add_argument("--repeat", type=int, default=None, help="runs per in-process figure (default 5, quick 3)")
    parser.add_argument("--no-cli", action="store_true", help="skip the fresh-process command and RSS figures")
    args = parser.parse_args(argv)
    sizes = Sizes.quick() if args.quick else Sizes()
    repeat = args.repeat or (3 if args.quick else 5)
    work = args.work or Path(tempfile.gettempdir()) / f"kafkatool-bench-{'quick' if args.quick else 'full'}"
    started = time.perf_counter()
    inputs = generate(work, sizes)
    print(f"inputs in {work} ({time.perf_counter() - started:.1f} s)", file=sys.stderr)
    peers = suite.peers_available()
    res: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()}",
        "sizes": {k: v["bytes"] for k, v in inputs.items()}, "repeat": repeat, "peers": peers,
        "scan": {}, "deep": {},
    }
    for name in ("big", "tiny"):
        print(f"scan {name} ...", file=sys.stderr)
        res["scan"][name] = suite.segment_scan(str(inputs[name]["path"]), repeat, peers, parallel=name == "big")
    deep_limit = (16 << 20) if args.quick else (128 << 20)
    print("deep ...", file=sys.stderr)
    res["deep"]["big (first whole batches)"] = suite.deep_decode(str(inputs["big"]["path"]), deep_limit, repeat, peers)
    res["deep"]["tiny"] = suite.deep_decode(str(inputs["tiny"]["path"]), None, repeat, peers)
    for codec in CODECS:
        res["deep"][codec.label] = suite.deep_decode(str(inputs[f"codec-{codec.label}"]["path"]), None, repeat, peers)
    print("commands ...", file=sys.stderr)
    res["commands"] = suite.commands_in_process(str(inputs["partition"]["path"]), repeat)
    if not args.no_cli:
        big, tiny, logdir = (str(inputs[k]["path"]) for k in ("big", "tiny", "partition"))
        runs = max(3, repeat // 2)
        res["cli"] = {
            "dump-segment -f kafka big": suite.cli(["dump-segment", "-f", "kafka", big], runs),
            "dump-segment -f kafka tiny": suite.cli(["dump-segment", "-f", "kafka", tiny], runs),
            "dump-segment --verify big": suite.cli(["dump-segment", "--verify", "-f", "jsonl", big], runs),
            "simulate-restart partition": suite.cli(["simulate-restart", "--assume", "unclean", "--recovery-point",
                                                     "0", "-f", "json", logdir], runs),
            "check partition": suite.cli(["check", "-f", "json", logdir], runs),
            "replay-producers partition": suite.cli(
                ["replay-producers", "-f", "json", str(next(p for p in Path(logdir).iterdir() if p.is_dir()))], runs),
        }
        print("peak RSS ...", file=sys.stderr)
        res["rss"] = {mode: suite.peak_rss(mode, big) for mode in (
            "columns-shallow", "columns-crc", "columns-crc-pool", "walker-shallow", "walker-crc", "walker-deep")}
        res["rss"]["dump-segment -f kafka (CLI)"] = res["cli"]["dump-segment -f kafka big"] | {
            "s": res["cli"]["dump-segment -f kafka big"]["s"]}
        print("peak RSS of every subcommand on the one-record-batch log dir ...", file=sys.stderr)
        res["rss_commands"] = command_rss(str(inputs["tiny-logdir"]["path"]), work)
    res["java_reference"] = {"DumpLogSegments_shallow_1GiB_s": DLS_SHALLOW_1GIB_S,
                             "DumpLogSegments_tiny_batches_per_s": DLS_TINY_BATCHES_PER_S,
                             "LogLoader_unclean_rp0_GB_per_s": LOGLOADER_GB_PER_S}
    res["targets"] = targets(res)
    print_report(res)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1))
    print(f"\nwrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
