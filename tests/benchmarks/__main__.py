"""kafkatool's speed suite: ``python -m tests.benchmarks [--quick] [--fleet] [--out FILE] [--work DIR] [--repeat N]``.

The headline is issue 23's table: kafkatool against Kafka's own tools run in the same run on the same files
(:mod:`tests.benchmarks.java`: DumpLogSegments as a whole process, a real broker's log recovery timed by the
broker), each target as measured, its goal and met/missed, with the date and the machine; with ``--fleet``
the fleet scan's figures (:mod:`tests.benchmarks.bench_fleet`) join it. The rows below it are secondary.

Generates its inputs (see :mod:`tests.benchmarks.inputs`; kept in ``--work`` between runs), measures kafkatool's
shallow scan, CRC scan (one thread, GIL-free CRC threads, a process pool), deep decode, ``replay-producers``,
``simulate-restart`` (unclean, from recovery point 0) and ``check`` against kafka-python, aiokafka's C reader
and crc32c's own rate over the same bytes, in the same run, plus peak RSS and whole-command times in fresh
processes. Prints a table of figures and of the issue's targets as same-run ratios, and writes everything as
JSON (default ``tests/benchmarks/results/latest.json``, ignored by git). Not collected by pytest.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import kafkatool
from tests.benchmarks import bench_salvage, java, suite
from tests.benchmarks.inputs import CODECS, Sizes, generate, restart_log_dir

HERE = Path(__file__).resolve().parent
RESTART = ["simulate-restart", "--assume", "unclean", "--recovery-point", "0", "-f", "json"]


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


MEMORY_GOAL_MB = 150  # every subcommand's and format's peak RSS on each 1 GiB memory input, both paths
SALVAGE_GOAL_MB = 200  # salvage's (issue 33): it replays Kafka's recovery beside its own choice and writes a log


def memory_goal(name: str) -> int:
    """The peak RSS goal of an RSS row: salvage's own, else every other subcommand's."""
    return SALVAGE_GOAL_MB if name.startswith("salvage") else MEMORY_GOAL_MB


def _runs(logdir: str, part: str, out: str, segment_files: list[str]) -> dict[str, list[str]]:
    """Every subcommand over ``logdir`` (its one partition ``part``), and dump-segment in every format over
    ``segment_files``."""
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
                                                "--replica", f"2={logdir}", "--partition", Path(part).name,
                                                "--leader", "1", "--isr", "1,2"],
        "dump-segment --verify": ["dump-segment", "--verify", "-f", "jsonl", part],
        "salvage --out": ["salvage", "--force", "--out", out + "-salvage", "-f", "json", logdir],
        "salvage --export jsonl": ["salvage", "--force", "--export", out + "-salvage.jsonl", "-f", "json", logdir],
        "salvage --export parquet": ["salvage", "--force", "--export", out + "-salvage.parquet", "-f", "json",
                                     logdir],
    }
    for path in segment_files:
        kind = Path(path).suffix
        for fmt in ("table", "json", "jsonl", "kafka"):
            runs[f"dump-segment -f {fmt} {kind}"] = ["dump-segment", "-f", fmt, path]
    return runs


MEMORY_INPUTS = ("tiny-logdir", "zero-index-logdir", "legacy-capped-logdir")


def command_rss(inputs: dict[str, Any], work: Path, python_path: bool = True, native_path: bool = True,
                only: tuple[str, ...] = MEMORY_INPUTS, rows: str | None = None) -> dict[str, Any]:
    """Each subcommand and format once, in a fresh process, over each memory input (1 GiB of one-record batches;
    the same segment with 1 GiB zero-filled index files; 1 GiB of legacy gzip wrappers past the cap), natively and
    with ``KAFKATOOL_NATIVE=0``: wall time and peak RSS (the scan's pool workers included)."""
    out = str(work / f"rss-out-{os.getpid()}")  # shards of the table may run side by side
    found: dict[str, Any] = {}
    for label, key, part_name, suffixes in (
            ("one-record batches", "tiny-logdir", "tiny-0", (".log",)),
            ("zero-filled indexes", "zero-index-logdir", "tiny-0", (".index", ".timeindex", ".txnindex")),
            ("legacy wrappers past the cap", "legacy-capped-logdir", "capped-0", (".log",))):
        if key not in only:
            continue
        logdir = str(inputs[key]["path"])
        part = str(Path(logdir) / part_name)
        files = [str(Path(part) / f"00000000000000000000{s}") for s in suffixes]
        runs = _runs(logdir, part, out, files)
        if key == "zero-index-logdir":  # the log itself is the first input's: only what the indexes change
            runs = {k: v for k, v in runs.items() if not k.startswith(("simulate-replication", "salvage"))}
        for native in (n for n, wanted in ((True, native_path), (False, python_path)) if wanted):
            for name, args in runs.items():
                if rows is not None and not re.search(rows, name):
                    continue
                row = f"{name}, {label}{'' if native else ' (KAFKATOOL_NATIVE=0)'}"
                found[row] = suite.cli(args, 1, native=native)
                print(f"  {row}: {found[row]['max_rss_mb']:.1f} MB, {found[row]['s']:.1f} s, load "
                      f"{os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)  # as measured: a long run
    return found


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
        add(f"peak RSS, 1 GiB: {name}", info["max_rss_mb"], memory_goal(name), "MB",
            higher_is_better=False)
    for mode, info in res.get("rss", {}).items():
        add(f"peak RSS on the big segment: {mode}", info["max_rss_mb"], 150, "MB", higher_is_better=False)
    return out


def _size(res: dict[str, Any], key: str) -> str:
    """An input's size as the table names it (1 GiB in a full run, 64 MiB with --quick)."""
    size = res["sizes"][key]
    return f"{size / (1 << 30):.0f} GiB" if size >= 1 << 30 else f"{size / (1 << 20):.0f} MiB"


def headline(res: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 23's speed targets, each as measured in this run (ratios of figures taken in the same run)."""
    out: list[dict[str, Any]] = []

    def add(name: str, value: float | None, goal: float, unit: str, how: str, higher: bool = True) -> None:
        if value is None or value != value:  # not measured (no jars, no Spark) or undefined
            out.append({"target": name, "value": None, "goal": goal, "unit": unit, "how": how, "met": None,
                        "direction": ">=" if higher else "<="})
            return
        out.append({"target": name, "value": value, "goal": goal, "unit": unit, "how": how,
                    "met": bool(value >= goal if higher else value <= goal), "direction": ">=" if higher else "<="})

    big = res["scan"]["big"]["runs"]
    gib = _size(res, "big")
    add("CRC scan, 16 KiB batches, one process / crc32c one buffer", _ratio(big["crc32c_one_buffer"]["s"],
        big["kafkatool_crc"]["s"]), 0.8, "x", "in process, columns scan with CRC vs crc32c() over the mapping")
    if "crc32c_fresh_mapping" in big:
        add("CRC scan, 16 KiB batches, one process / crc32c over a fresh mapping", _ratio(
            big["crc32c_fresh_mapping"]["s"], big["kafkatool_crc"]["s"]), 0.8, "x",
            "the same, the baseline paying the file's page-in as every reader of it does (a bound, not a target)")
    tiny = res["scan"]["tiny"]
    add("one-record batches, CRC-verified scan", tiny["runs"]["kafkatool_crc"]["m_batches_per_s"], 5.0,
        "M batches/s", "in process, columns scan with CRC")
    cli, dls, rec = res.get("cli", {}), res.get("java", {}).get("dls", {}), res.get("java", {}).get("recovery", {})

    def ratio(java_key: str, ours_key: str, table: dict[str, Any]) -> float | None:
        if java_key in table and ours_key in cli:
            return _ratio(table[java_key]["s"], cli[ours_key]["s"])
        return None

    add("one-record batches: dump-segment -f kafka / DumpLogSegments (batches/s)",
        ratio("tiny shallow", "dump-segment -f kafka tiny", dls), 3.0, "x", "whole processes, output to /dev/null")
    add(f"dump-segment -f kafka, {gib} shallow, faster than DumpLogSegments",
        ratio("big shallow", "dump-segment -f kafka big", dls), 3.0, "x", "whole processes, output to /dev/null")
    add(f"dump-segment --deep --print-data, {gib}, faster than DumpLogSegments --deep-iteration --print-data-log",
        ratio("big deep print", "dump-segment -f kafka --print-data big", dls), 2.0, "x",
        "whole processes, output to /dev/null")
    jsonl = "dump-segment -f jsonl --print-data big"
    add(f"dump-segment -f jsonl --print-data, {gib}, native rows / KAFKATOOL_NATIVE=0 (time ratio)",
        _ratio(cli[f"{jsonl} (KAFKATOOL_NATIVE=0)"]["s"], cli[jsonl]["s"]) if f"{jsonl} (KAFKATOOL_NATIVE=0)" in cli
        else None, 2.0, "x", "whole processes, output to /dev/null")
    add(f"dump-segment -f jsonl --print-data, {gib}, faster than DumpLogSegments --deep-iteration --print-data-log",
        ratio("big deep print", jsonl, dls), 2.0, "x", "whole processes, output to /dev/null")
    pair = res.get("check_vs_jsonl")
    add("check / dump-segment -f jsonl, 1 GiB of one-record batches (time ratio)",
        _ratio(pair["check"]["s"], pair["jsonl"]["s"]) if pair else None, 3.0, "x",
        "whole processes, output to /dev/null, the same run", higher=False)
    restart = res.get("restart", {})
    if "big-logdir" in rec and "in_process" in restart:
        add(f"simulate-restart, recovery point 0, {gib}, faster than Kafka's recovery",
            _ratio(rec["big-logdir"]["s"], restart["in_process"]["s"]), 2.0, "x",
            "broker's own 'Loaded N logs in Xms' vs the restart engine in process")
    else:
        add(f"simulate-restart, recovery point 0, {gib}, faster than Kafka's recovery", None, 2.0, "x", "not run")
    if "big-logdir" in rec and "simulate-restart big-logdir" in cli:
        add(f"simulate-restart, recovery point 0, {gib}, whole process, faster than Kafka's recovery",
            _ratio(rec["big-logdir"]["s"], cli["simulate-restart big-logdir"]["s"]), 2.0, "x",
            "broker's own load time vs kafkatool as a whole process (its start included)")
    sal = res.get("java", {}).get("salvage")
    add(f"salvage --out, {gib} damaged segment, at least as fast as DumpLogSegments reads it",
        sal["dls_over_salvage"] if sal else None, 1.0, "x",
        "whole processes, interleaved, the same run (DLS time / salvage time)" if sal else "not run")
    fleet = res.get("fleet")
    add("fleet scan, local engine, GB/s per core", fleet["local_gb_per_s_per_core"] if fleet else None, 1.0,
        "GB/s", "bench_fleet: the scan's process pool writing the four Parquet tables" if fleet else "--fleet")
    add("fleet scan, Spark / local (time, same cores)", fleet.get("spark_over_local") if fleet else None, 1.3, "x",
        "bench_fleet: Spark local[2], session warmed" if fleet else "--fleet", higher=False)
    add("fleet scan, one process, GB per CPU second", fleet.get("single_gb_per_cpu_s") if fleet else None, 1.0,
        "GB/s", "bench_fleet: the per-core rate as CPU time gives it (the load of a shared machine left out)"
        if fleet else "--fleet")
    cluster = fleet.get("cluster") if fleet else None
    for n in (1, 2):
        add(f"fleet scan, standalone cluster of {n} one-core worker(s) / local engine on {n} core(s) (time)",
            cluster[f"cluster_{n}_over_local"] if cluster else None, 1.3, "x",
            "bench_fleet --cluster: separate driver, session warmed" if cluster else "--fleet --cluster",
            higher=False)
    add("fleet scan, standalone cluster, 2 workers' speed-up over 1", cluster["cluster_scaling_1_to_2"]
        if cluster else None, 1.6, "x", "bench_fleet --cluster" if cluster else "--fleet --cluster")
    for name, info in res.get("rss_1gib", {}).items():
        add(f"peak RSS, {gib} input: {name}", info["max_rss_mb"], memory_goal(name), "MB", "fresh process, VmHWM",
            higher=False)
    if "help" in res:
        add("kafkatool --help, whole process", res["help"]["s"], 0.15, "s",
            f"python -m kafkatool --help, fork to exit (CPU {res['help'].get('cpu_s', float('nan')):.3f} s)",
            higher=False)
    return out


def print_headline(res: dict[str, Any]) -> None:
    """The one table of issue 23's ratios, with date and machine."""
    print(f"\nkafkatool against Kafka's own tools, {res['date']}")
    print(f"machine: {res['machine']}")
    print(f"versions: {', '.join(f'{k} {v}' for k, v in res['versions'].items())}")
    for t in res["headline"]:
        mark = "----" if t["met"] is None else "met " if t["met"] else "MISS"
        value = "not run" if t["value"] is None else f"{t['value']:9.3f}"
        print(f"  {mark} {t['target'][:86]:86s} {value:>9s} {t['unit']:12s} (goal {t['direction']} {t['goal']})")


def machine() -> tuple[str, dict[str, str]]:
    """The machine line (cores, CPU model) and the versions of everything measured."""
    from importlib import metadata

    from kafkatool import __version__
    from kafkatool.schema import native

    model = "unknown CPU"
    with contextlib.suppress(OSError, StopIteration), open("/proc/cpuinfo") as fh:
        model = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    cores = len(os.sched_getaffinity(0))
    vers = {"kafkatool": __version__, "native core": "on" if native.core() is not None else
            f"off ({native.why_not()})", "Python": platform.python_version()}
    for dist in ("crc32c", "kafka-python", "aiokafka", "pyspark"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            vers[dist] = metadata.version(dist)
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        java_v = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30).stderr
        vers["Java"] = java_v.splitlines()[0].split('"')[1] if '"' in java_v else java_v.strip()[:40]
    load = os.getloadavg()[0]
    return (f"{cores} cores, {model}, {platform.machine()}, {os.cpu_count()} CPUs online, load average "
            f"{load:.1f} at start"), vers


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
        print("\n[peak RSS of every subcommand and format on the 1 GiB memory inputs, fresh process each]")
        for k, r in res["rss_commands"].items():
            print(f"  {k:72s} {r['max_rss_mb']:8.1f} MB  ({r['s']:.1f} s)")
    if res.get("rss"):
        print("\n[peak RSS on the big segment, fresh process per mode]")
        for k, r in res["rss"].items():
            print(f"  {k:32s} {r['max_rss_mb']:8.1f} MB  ({r['s']:.3f} s)")
    if res.get("java"):
        print(f"\n[Kafka {res['java']['version']}'s own tools, whole processes]")
        for k, r in res["java"].get("dls", {}).items():
            print(f"  DumpLogSegments {k:24s} {r['s']:8.3f} s ({r['min_s']:.3f}-{r['max_s']:.3f})  "
                  f"peak RSS {r['max_rss_mb']:.0f} MB")
        for k, r in res["java"].get("recovery", {}).items():
            print(f"  broker recovery {k:24s} {r['s']:8.3f} s ({r['min_s']:.3f}-{r['max_s']:.3f})  "
                  f"{r['gb_per_s']:.2f} GB/s, {r['recovered_segments']} segments recovered")
    print("\n[secondary targets: the Python peers]")
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
    parser.add_argument("--no-java", action="store_true", help="skip Kafka's own tools (DumpLogSegments, broker)")
    parser.add_argument("--kafka-version", default=None, help="the fetched Kafka to run (default: the newest)")
    parser.add_argument("--fleet", action="store_true", help="add the fleet scan (bench_fleet: local and Spark)")
    parser.add_argument("--no-spark", action="store_true", help="with --fleet: the local engine only")
    parser.add_argument("--cluster", action="store_true",
                        help="with --fleet: also a Spark standalone cluster of 1 and 2 one-core workers")
    parser.add_argument("--cli-runs", type=int, default=None,
                        help="runs per whole-process figure, kafkatool's and Kafka's (default max(3, repeat/2))")
    parser.add_argument("--no-rss-commands", action="store_true",
                        help="skip every subcommand's peak RSS on the one-record-batch log dir (the longest part)")
    parser.add_argument("--no-python-path", action="store_true",
                        help="skip the KAFKATOOL_NATIVE=0 rows (the Python path of the same commands)")
    parser.add_argument("--memory-input", action="append", choices=MEMORY_INPUTS,
                        help="with --memory-only: the RSS rows of this input only (repeatable; default all three)")
    parser.add_argument("--no-native-path", action="store_true",
                        help="with --memory-only: only the KAFKATOOL_NATIVE=0 rows (a shard run beside another)")
    parser.add_argument("--memory-rows", metavar="REGEX",
                        help="with --memory-only: only the rows whose name matches (re-measure after a fix)")
    parser.add_argument("--no-check-ratio", action="store_true",
                        help="with --memory-only: skip check against dump-segment -f jsonl (a shard of the table)")
    parser.add_argument("--memory-only", action="store_true",
                        help="only the memory inputs: check against dump-segment -f jsonl, and every subcommand's "
                             "and format's peak RSS (natively and, unless --no-python-path, KAFKATOOL_NATIVE=0)")
    args = parser.parse_args(argv)
    sizes = Sizes.quick() if args.quick else Sizes()
    repeat = args.repeat or (3 if args.quick else 5)
    work = args.work or Path(tempfile.gettempdir()) / f"kafkatool-bench-{'quick' if args.quick else 'full'}"
    started = time.perf_counter()
    inputs = generate(work, sizes)
    if not args.memory_only:
        inputs["restart"] = restart_log_dir(work, sizes.big)
    print(f"inputs in {work} ({time.perf_counter() - started:.1f} s)", file=sys.stderr)
    # Whole-process runs start from compiled bytecode, as an installed kafkatool does (pip compiles at install; an
    # editable checkout run with PYTHONDONTWRITEBYTECODE would compile every module on every run).
    compileall.compile_dir(str(Path(kafkatool.__file__).parent), quiet=1)
    peers = suite.peers_available()
    where, vers = machine()
    res: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": where, "versions": vers,
        "sizes": {k: v["bytes"] for k, v in inputs.items()}, "repeat": repeat, "peers": peers,
        "scan": {}, "deep": {},
    }
    runs = args.cli_runs or (max(3, repeat // 2) if not args.quick else 1)
    res["cli_runs"] = runs
    if args.memory_only:
        return _memory_only(res, inputs, work, runs, args)
    res["help"] = suite.help_time(max(5, repeat))
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
    print("simulate-restart on the 1 GiB log dir ...", file=sys.stderr)
    res["restart"] = {"bytes": inputs["restart"]["bytes"],
                      "in_process": suite.restart_in_process(str(inputs["restart"]["path"]), runs)}
    big, tiny, logdir, restart = (str(inputs[k]["path"]) for k in ("big", "tiny", "partition", "restart"))
    if not args.no_java:
        version = java.available(args.kafka_version)
        if version is None:
            print("no Kafka jars or no java: python -m tests.kafka.versions fetch (Kafka rows skipped)",
                  file=sys.stderr)
        else:
            print(f"Kafka {version}: DumpLogSegments and broker recovery ...", file=sys.stderr)
            res["java"] = {"version": version, "dls": {
                "big shallow": java.dump_log_segments(version, big, (), runs),
                "tiny shallow": java.dump_log_segments(version, tiny, (), runs),
                "big deep print": java.dump_log_segments(version, big, ("--deep-iteration", "--print-data-log"),
                                                         runs),
            }}
            print("salvage --out vs DumpLogSegments on a damaged 1 GiB segment ...", file=sys.stderr)
            damaged = bench_salvage.damaged_log_dir(work, "salvage-big", sizes.big, 15, 1024)
            res["java"]["salvage"] = bench_salvage.speed(version, damaged, work / "salvage-out", runs)
            jwork = work / "kafka-broker"
            res["java"]["recovery"] = {
                "big-logdir": java.broker_recovery(version, Path(inputs["restart"]["partition"]), jwork, runs),
                "partition": java.broker_recovery(version, Path(logdir) / "bench-0", jwork, runs),
            }
    if not args.no_cli:
        res["cli"] = {
            "dump-segment -f kafka big": suite.cli(["dump-segment", "-f", "kafka", big], runs),
            "dump-segment -f kafka tiny": suite.cli(["dump-segment", "-f", "kafka", tiny], runs),
            "dump-segment -f kafka --print-data big": suite.cli(["dump-segment", "-f", "kafka", "--print-data", big],
                                                                runs),
            "dump-segment -f jsonl --print-data big": suite.cli(["dump-segment", "-f", "jsonl", "--print-data", big],
                                                                runs),
            "dump-segment --verify big": suite.cli(["dump-segment", "--verify", "-f", "jsonl", big], runs),
            "simulate-restart big-logdir": suite.cli([*RESTART, restart], runs),
            "simulate-restart partition": suite.cli([*RESTART, logdir], runs),
            "check partition": suite.cli(["check", "-f", "json", logdir], runs),
            "replay-producers partition": suite.cli(
                ["replay-producers", "-f", "json", str(next(p for p in Path(logdir).iterdir() if p.is_dir()))], runs),
        }
        if not args.no_python_path:
            for key in ("dump-segment -f kafka big", "dump-segment -f kafka tiny",
                        "dump-segment -f kafka --print-data big", "dump-segment -f jsonl --print-data big",
                        "simulate-restart big-logdir"):
                res["cli"][f"{key} (KAFKATOOL_NATIVE=0)"] = suite.cli(res["cli"][key]["args"], runs, native=False)
        print("peak RSS ...", file=sys.stderr)
        res["rss"] = {mode: suite.peak_rss(mode, big) for mode in (
            "columns-shallow", "columns-crc", "columns-crc-pool", "walker-shallow", "walker-crc", "walker-deep")}
        res["rss"]["dump-segment -f kafka (CLI)"] = res["cli"]["dump-segment -f kafka big"] | {
            "s": res["cli"]["dump-segment -f kafka big"]["s"]}
        tiny_logdir = str(inputs["tiny-logdir"]["path"])
        res["check_vs_jsonl"] = {
            "check": suite.cli(["check", "-f", "json", tiny_logdir], runs),
            "jsonl": suite.cli(["dump-segment", "-f", "jsonl", str(Path(tiny_logdir) / "tiny-0")], runs)}
        if not args.no_rss_commands:
            print("peak RSS of every subcommand and format on the 1 GiB memory inputs ...", file=sys.stderr)
            res["rss_commands"] = command_rss(inputs, work, python_path=not args.no_python_path)
        res["rss_1gib"] = {f"{k} (16 KiB batches)": v for k, v in res["rss"].items() if "(CLI)" not in k}
        res["rss_1gib"].update({k: v for k, v in res["cli"].items() if "big" in k})
        res["rss_1gib"].update(res.get("rss_commands", {}))
    if args.fleet:
        from tests.benchmarks import bench_fleet

        print("fleet scan ...", file=sys.stderr)
        res["fleet"] = bench_fleet.measure(work / "fleet", max(3, repeat // 2), spark=not args.no_spark,
                                           cluster=args.cluster)
    res["headline"] = headline(res)
    res["targets"] = targets(res)
    print_report(res)
    print_headline(res)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1))
    print(f"\nwrote {args.out}", file=sys.stderr)
    return 0


def _memory_only(res: dict[str, Any], inputs: dict[str, Any], work: Path, runs: int, args: Any) -> int:
    """``--memory-only``: the check/jsonl time ratio and the peak RSS table, printed and written."""
    tiny_logdir = str(inputs["tiny-logdir"]["path"])
    if not args.no_check_ratio:
        print("check and dump-segment -f jsonl on 1 GiB of one-record batches ...", file=sys.stderr)
        res["check_vs_jsonl"] = {
            "check": suite.cli(["check", "-f", "json", tiny_logdir], runs),
            "jsonl": suite.cli(["dump-segment", "-f", "jsonl", str(Path(tiny_logdir) / "tiny-0")], runs)}
        pair = res["check_vs_jsonl"]
        print(f"  check {pair['check']['s']:.2f} s, jsonl {pair['jsonl']['s']:.2f} s: "
              f"{_ratio(pair['check']['s'], pair['jsonl']['s']):.2f}x", file=sys.stderr, flush=True)
    print("peak RSS of every subcommand and format on the 1 GiB memory inputs ...", file=sys.stderr)
    res["rss_commands"] = command_rss(inputs, work, python_path=not args.no_python_path,
                                      native_path=not args.no_native_path,
                                      only=tuple(args.memory_input or MEMORY_INPUTS), rows=args.memory_rows)
    res["rss_1gib"] = dict(res["rss_commands"])
    res["headline"] = [t for t in headline_memory(res)]
    print("\n[peak RSS of every subcommand and format on the 1 GiB memory inputs, fresh process each]")
    for k, r in res["rss_commands"].items():
        print(f"  {k:72s} {r['max_rss_mb']:8.1f} MB  ({r['s']:.1f} s)")
    print_headline(res)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1))
    return 0


def headline_memory(res: dict[str, Any]) -> list[dict[str, Any]]:
    """The memory targets of :func:`headline` alone (the check/jsonl ratio and the RSS rows)."""
    return [t for t in headline({**res, "scan": {"big": {"runs": {"crc32c_one_buffer": {"s": 0},
                                                                "kafkatool_crc": {"s": 0}}},
                                                 "tiny": {"runs": {"kafkatool_crc": {"m_batches_per_s": 0}}}},
                                 "sizes": {"big": 1 << 30}})
            if t["target"].startswith(("check /", "peak RSS"))]


if __name__ == "__main__":
    sys.exit(main())
