"""The speed suite's JSON as ``tests/benchmarks/README.md``'s Markdown tables: ``python -m tests.benchmarks.markdown
[RESULTS.json]``.

So the published figures are copied from a run, never typed: the scan, deep-decode, command, whole-process and
peak-RSS tables and the targets, in the order ``tests/benchmarks/README.md`` shows them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

DEFAULT = Path(__file__).resolve().parent / "results" / "latest.json"
LABELS = {
    "crc32c_one_buffer": "crc32c, one call over the whole mapping",
    "crc32c_fresh_mapping": "crc32c, one call over a mapping made for it (page-in included)",
    "crc32c_per_batch_loop": "crc32c per batch from a Python loop (nothing else)",
    "kafkatool_shallow": "kafkatool shallow (columns)",
    "kafkatool_crc": "kafkatool CRC scan (columns, default: one thread)",
    "kafkatool_crc_two_threads": "kafkatool CRC scan, 2 GIL-free CRC threads",
    "kafkatool_walker_shallow": "kafkatool walker, shallow (objects)",
    "kafkatool_walker_crc": "kafkatool walker, CRC (objects)",
    "kafkatool_crc_process_pool": "kafkatool CRC scan, process pool (2)",
    "kafka-python_shallow": "kafka-python shallow",
    "kafka-python_crc": "kafka-python CRC",
    "aiokafka_shallow": "aiokafka (C) shallow",
    "aiokafka_crc": "aiokafka (C) CRC",
}


def _span(run: dict[str, Any], digits: int = 3) -> str:
    return f"{run['s']:.{digits}f} ({run['min_s']:.2f}–{run['max_s']:.2f})"


def headline(res: dict[str, Any]) -> list[str]:
    """Issue 23's table: each target as measured against Kafka's own tools in the same run, with the machine."""
    if "headline" not in res:
        return []
    out = [f"Measured {res['date']} on {res['machine']}; "
           + ", ".join(f"{k} {v}" for k, v in res.get("versions", {}).items())
           + (f", Kafka {res['java']['version']}" if res.get("java") else "") + ".", "",
           "| target | measured | goal | | how |", "| --- | --- | --- | --- | --- |"]
    for t in res["headline"]:
        value = "not run" if t["value"] is None else f"{t['value']:.3g} {t['unit']}".rstrip()
        mark = "" if t["met"] is None else "met" if t["met"] else "missed"
        out.append(f"| {t['target']} | {value} | {t['direction']} {t['goal']:g} | {mark} | {t['how']} |")
    java = res.get("java")
    if java:
        out += ["", f"Kafka {java['version']}'s own tools in that run (whole processes, the JVM options of Kafka's "
                "scripts, output to /dev/null; recovery: the broker's own `Loaded N logs in Xms`):", "",
                "| run | median s (min–max) | peak RSS MB |", "| --- | --- | --- |"]
        out += [f"| DumpLogSegments, {k} | {_span(r, 2)} | {r['max_rss_mb']:.0f} |" for k, r in java["dls"].items()]
        out += [f"| broker recovery, {k} ({r['bytes'] / 1e6:.0f} MB, {r['recovered_segments']} segments recovered) "
                f"| {_span(r, 2)} | |" for k, r in java.get("recovery", {}).items()]
    fleet = res.get("fleet")
    if fleet:
        out += ["", f"Fleet scan ({fleet['bytes'] / 1e6:.0f} MB, {fleet['partitions']} partitions, {fleet['cpus']} "
                "cores, all four Parquet tables):", "", "| engine | median s (min–max) | GB/s | speed-up vs single |",
                "| --- | --- | --- | --- |"]
        out += [f"| {k} | {fleet[k]['median_s']:.2f} ({fleet[k]['min_s']:.2f}–{fleet[k]['max_s']:.2f}) | "
                f"{fleet[k]['gb_per_s']:.2f} | {fleet[k]['speedup_vs_single']:.2f}x |"
                for k in ("single", "local", "spark") if k in fleet]
        floors = [f"{k} {fleet[k + '_floor_s']:.2f} s" for k in ("local", "spark") if k + "_floor_s" in fleet]
        if floors:
            out += ["", "The same scans of an empty log dir (each engine's floor): " + ", ".join(floors) + "."]
    return out


def tables(res: dict[str, Any]) -> list[str]:
    """``tests/benchmarks/README.md``'s tables for one results file, as lines."""
    out: list[str] = headline(res)
    for name, scan in res["scan"].items():
        out += ["", f"`{name}` segment ({scan['bytes'] / 1e6:.0f} MB, {scan['batches']} batches):", "",
                "| contender | median s (min–max) | GB/s | M batches/s |", "| --- | --- | --- | --- |"]
        out += [f"| {LABELS.get(k, k)} | {_span(r)} | {r['gb_per_s']:.2f} | {r['m_batches_per_s']:.3f} |"
                for k, r in scan["runs"].items()]
    out += ["", "Deep decode (every record's offset, timestamp, key, value, headers):", "",
            "| input | records | kafkatool M rec/s | kafka-python | aiokafka (C) | kafkatool / kafka-python | "
            "kafkatool / aiokafka |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, deep in res["deep"].items():
        runs = deep["runs"]
        own = runs["kafkatool_deep"]["m_records_per_s"]
        kp = runs.get("kafka-python_deep", {}).get("m_records_per_s")
        ai = runs.get("aiokafka_deep", {}).get("m_records_per_s")
        out.append(f"| {name} | {deep['records']} | {own:.3f} | {kp or 0:.3f} | {ai or 0:.3f} | "
                   f"{own / kp if kp else 0:.2f}x | {own / ai if ai else 0:.2f}x |")
    cmds = res["commands"]
    base = cmds["runs"]["plain_crc_scan"]["s"]
    out += ["", f"Commands on the partition ({cmds['bytes'] / 1e6:.0f} MB in {cmds['segments']} segments), in "
            "process:", "", "| run | median s (min–max) | GB/s | time / plain CRC scan |", "| --- | --- | --- | --- |"]
    out += [f"| {k} | {_span(r)} | {r['gb_per_s']:.2f} | {r['s'] / base:.2f}x |" for k, r in cmds["runs"].items()]
    out += ["", "Whole processes (interpreter start and imports included, output to /dev/null):", "",
            "| command | median s (min–max) | peak RSS MB |", "| --- | --- | --- |"]
    out += [f"| `kafkatool {k}` | {_span(r, 2)} | {r['max_rss_mb']:.0f} |" for k, r in res.get("cli", {}).items()]
    rss = ", ".join(f"{k} {r['max_rss_mb']:.0f} MB" for k, r in res.get("rss", {}).items())
    out += ["", f"Peak RSS on the 1 GiB segment (fresh process per mode): {rss}.", "",
            "Secondary targets (the Python peers and memory), as measured in that run:", "",
            "| target | measured | goal | |",
            "| --- | --- | --- | --- |"]
    for t in res["targets"]:
        unit = f" {t['unit']}" if t["unit"] else ""
        out.append(f"| {t['target']} | {t['value']:.3g}{unit} | {t['direction']} {t['goal']:g} | "
                   f"{'met' if t['met'] else 'missed'} |")
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    res = json.loads(Path(args[0] if args else DEFAULT).read_text())
    print(f"Medians of {res['repeat']} (whole processes: of {res.get('cli_runs', max(3, res['repeat'] // 2))}).")
    print("\n".join(tables(res)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
