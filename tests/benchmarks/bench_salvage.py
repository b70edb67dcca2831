"""``kafkatool salvage`` at scale (issue 33): peak RSS on 1 GiB damaged inputs, both paths, and the repaired dir's
write speed against Kafka's DumpLogSegments reading the same bytes, in the same run.

``python -m tests.benchmarks.bench_salvage [--quick] [--work DIR] [--out FILE] [--runs N] [--no-python-path]``

Inputs (made from the suite's generators, :mod:`tests.benchmarks.inputs`, kept in ``--work``):

- ``salvage-tiny``: a log dir whose one partition holds 1 GiB of one-record batches (``inputs.write_segment``,
  as ``tiny-logdir``) with one byte flipped in the middle (a batch's records: its CRC fails; Kafka's recovery
  cuts the segment there, salvage keeps every other batch): millions of batches, the memory case;
- ``salvage-big``: the same with 1 GiB of ~16 KiB batches (15 records of 1 KiB, as ``big``): the normal-size
  partition, and the speed case.

Each runs ``salvage --out`` (natively and with ``KAFKATOOL_NATIVE=0``), ``salvage --export x.jsonl`` and
``--export x.parquet`` in a fresh process (``suite.cli``: wall time, ``VmHWM``); goal 200 MB each. The speed rows:
``salvage --force --out DIR`` on ``salvage-big`` and on ``salvage-tiny`` each against ``kafka-dump-log.sh
--files`` of its damaged segment
(``java.dump_log_segments``, Kafka's own JVM options), both whole processes, the same run: DLS time / salvage
time, goal >= 1. Not collected by pytest.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import kafkatool
from tests.benchmarks import java, suite
from tests.benchmarks.inputs import GENERATOR_VERSION, write_segment

MEMORY_GOAL_MB = 200
SPEED_GOAL = 1.0


def damaged_log_dir(work: Path, name: str, size: int, records: int, value_size: int) -> dict[str, Any]:
    """A log dir ``work/name`` of one partition (``name-0``) of one segment of ``size`` bytes with one byte of a
    batch's records flipped in the middle of the file (made once; a marker names the sizes)."""
    root = work / name
    marker = work / f"{name}.json"
    key = f"{GENERATOR_VERSION} {size} {records} {value_size}"
    if marker.exists():
        known = json.loads(marker.read_text())
        if known.get("key") == key and Path(known["input"]["segment"]).exists():
            return dict(known["input"])
    shutil.rmtree(root, ignore_errors=True)
    seg = root / f"{name}-0" / "00000000000000000000.log"
    seg.parent.mkdir(parents=True)
    info = write_segment(seg, size, records, value_size, transactions=False)
    flip = size // 2
    # the flipped byte: well inside the batch that holds the middle byte (past its 61-byte header: a records byte,
    # so the framing holds and only that batch's CRC fails)
    from kafkatool.reading.columns import scan_segment

    cols = scan_segment(seg, verify_crc=False)
    pos = cols.positions
    k = int((pos <= flip).sum()) - 1
    at = int(pos[k]) + 61 + (int(cols.headers["batch_length"][k]) + 12 - 61) // 2
    with open(seg, "r+b") as fh:
        fh.seek(at)
        byte = fh.read(1)
        fh.seek(at)
        fh.write(bytes([byte[0] ^ 0xFF]))
    out = {"path": str(root), "segment": str(seg), "flipped_at": at, **info}
    marker.write_text(json.dumps({"key": key, "input": out}))
    return out


def _clear(*paths: Path) -> None:
    for p in paths:
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)


def speed(version: str, damaged: dict[str, Any], out_dir: Path, runs: int) -> dict[str, Any]:
    """``kafka-dump-log.sh --files SEGMENT`` and ``salvage --force --out DIR`` of the damaged log dir holding it,
    interleaved ``runs`` times, whole processes: the medians and DLS time / salvage time."""
    dls, ours, disk = [], [], []
    for _ in range(runs):
        dls.append(java.dump_log_segments(version, damaged["segment"], (), 1))
        ours.append(suite.cli(["salvage", "--force", "--out", str(out_dir), "-f", "json", damaged["path"]], 1))
        _clear(out_dir)
        for extra in Path(damaged["segment"]).parent.glob("*.index"):  # DLS makes a missing offset index
            extra.unlink()
        disk.append(synced_write(out_dir.parent / "disk-probe", damaged["bytes"]))
    d = statistics.median(r["s"] for r in dls)
    o = statistics.median(r["s"] for r in ours)
    return {"kafka_version": version, "bytes": damaged["bytes"], "batches": damaged["batches"], "dls_s": d,
            "salvage_out_s": o, "dls_over_salvage": d / o, "dls_runs": dls, "salvage_runs": ours,
            "synced_write_s": statistics.median(disk), "synced_write_runs": disk,
            "dls_over_synced_write": d / statistics.median(disk), "load": os.getloadavg()[0]}


def synced_write(path: Path, size: int) -> float:
    """Seconds to write ``size`` bytes to a new file beside the output and fsync it (as the repaired dir's
    segments are written): the disk's bound on any --out, in the same run."""
    block = bytes(1 << 20)
    started = time.perf_counter()
    with open(path, "wb") as fh:
        for _ in range(size >> 20):
            fh.write(block)
        fh.flush()
        os.fsync(fh.fileno())
    took = time.perf_counter() - started
    path.unlink()
    return took


def measure(work: Path, *, size: int = 1 << 30, runs: int = 1, python_path: bool = True,
            kafka_version: str | None = None, save: Any = lambda res: None,
            speed_only: bool = False) -> dict[str, Any]:
    """Every figure: inputs, peak RSS rows, the speed rows and the DLS peer."""
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    inputs = {"salvage-tiny": damaged_log_dir(work, "salvage-tiny", size, 1, 100),
              "salvage-big": damaged_log_dir(work, "salvage-big", size, 15, 1024)}
    print(f"inputs in {work} ({time.perf_counter() - started:.1f} s)", file=sys.stderr)
    out_dir, jsonl, parquet = work / "salvage-out", work / "salvage.jsonl", work / "salvage.parquet"
    res: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                           "load_at_start": os.getloadavg(), "inputs": inputs, "rss": {}, "speed": {}}
    version = java.available(kafka_version)
    if version is not None:  # first: the speed rows are the ratios, the rest are absolute peaks
        print("  salvage --out vs DumpLogSegments (16 KiB batches) ...", file=sys.stderr)
        res["speed"] = speed(version, inputs["salvage-big"], out_dir, runs)
        save(res)
        print("  salvage --out vs DumpLogSegments (one-record batches) ...", file=sys.stderr)
        res["speed_tiny"] = speed(version, inputs["salvage-tiny"], out_dir, runs)
        save(res)
    for key, label in () if speed_only else (("salvage-big", "16 KiB batches"), ("salvage-tiny", "one-record batches")):
        logdir = inputs[key]["path"]
        cases = {"salvage --out": ["salvage", "--force", "--out", str(out_dir), "-f", "json", logdir],
                 "salvage --export jsonl": ["salvage", "--force", "--export", str(jsonl), "-f", "json", logdir],
                 "salvage --export parquet": ["salvage", "--force", "--export", str(parquet), "-f", "json", logdir]}
        order = [("salvage --out", True), ("salvage --out", False), ("salvage --export jsonl", True),
                 ("salvage --export parquet", True), ("salvage --export jsonl", False),
                 ("salvage --export parquet", False)]
        for name, native in (o for o in order if o[1] or python_path):
            row = f"{name}, 1 GiB damaged, {label}{'' if native else ' (KAFKATOOL_NATIVE=0)'}"
            print(f"  {row} ...", file=sys.stderr)
            res["rss"][row] = suite.cli(cases[name], 1, native=native) | {"load": os.getloadavg()[0]}
            _clear(out_dir, jsonl, parquet)
            save(res)
    return res


def targets(res: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue's two targets, as measured."""
    out = [{"target": f"peak RSS: {k}", "value": v["max_rss_mb"], "goal": MEMORY_GOAL_MB, "unit": "MB",
            "direction": "<=", "met": v["max_rss_mb"] <= MEMORY_GOAL_MB} for k, v in res["rss"].items()]
    for key, label in (("speed", "16 KiB batches"), ("speed_tiny", "one-record batches")):
        sp = res.get(key)
        if sp:
            out.append({"target": f"salvage --out, 1 GiB damaged segment of {label}, vs DumpLogSegments over the "
                                  "same bytes", "value": sp["dls_over_salvage"], "goal": SPEED_GOAL, "unit": "x",
                        "direction": ">=", "met": sp["dls_over_salvage"] >= SPEED_GOAL})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.bench_salvage",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="64 MiB inputs")
    parser.add_argument("--work", type=Path, help="where inputs are generated and kept")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results" / "salvage.json")
    parser.add_argument("--runs", type=int, default=3, help="interleaved DLS/salvage runs for the speed row")
    parser.add_argument("--no-python-path", action="store_true", help="skip the KAFKATOOL_NATIVE=0 rows")
    parser.add_argument("--kafka-version", default=None)
    parser.add_argument("--speed-only", action="store_true", help="only the two speed rows (no RSS rows)")
    args = parser.parse_args(argv)
    # bytecode compiled as an install compiles it (an editable checkout under PYTHONDONTWRITEBYTECODE would compile
    # every module in every salvage process: a tenth of a second of each speed row)
    compileall.compile_dir(str(Path(kafkatool.__file__).parent), quiet=1)
    size = (64 << 20) if args.quick else (1 << 30)
    work = args.work or Path(tempfile.gettempdir()) / f"kafkatool-bench-salvage-{'quick' if args.quick else 'full'}"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    res = measure(work, size=size, runs=args.runs, python_path=not args.no_python_path,
                  kafka_version=args.kafka_version, save=lambda r: args.out.write_text(json.dumps(r, indent=1)),
                  speed_only=args.speed_only)
    res["targets"] = targets(res)
    for t in res["targets"]:
        mark = "met " if t["met"] else "MISS"
        print(f"  {mark} {t['target'][:90]:90s} {t['value']:9.2f} {t['unit']:3s} (goal {t['direction']} {t['goal']})")
    for k, v in res["rss"].items():
        print(f"  {k:80s} {v['s']:7.1f} s  load {v['load']:.1f}")
    for key in ("speed", "speed_tiny"):
        sp = res.get(key)
        if sp:
            print(f"  {key}: DumpLogSegments {sp['dls_s']:.2f} s, salvage --out {sp['salvage_out_s']:.2f} s, the "
                  f"same bytes written and fsynced {sp['synced_write_s']:.2f} s, load {sp['load']:.1f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
