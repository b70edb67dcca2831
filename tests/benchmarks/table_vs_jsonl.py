"""dump-segment's default table against native jsonl, whole processes: ``python -m tests.benchmarks.table_vs_jsonl
[--work DIR] [--repeat N]``.

Writes the two segments of ``tests/benchmarks/README.md``'s figures with ``inputs.write_segment`` (64 MiB of
one-record batches with 100-byte values, 256 MiB of 15-record batches with 1000-byte values; kept in ``--work``
between runs), then runs ``kafkatool dump-segment SEG`` and ``kafkatool dump-segment -f jsonl SEG`` in turn,
``--repeat`` times each, output to a file, and prints for each the best wall-clock and the best CPU time (user +
system of the child) and the table's ratio to jsonl in both. On a shared, loaded machine the CPU ratio is the
steadier one. Not collected by pytest.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.benchmarks.inputs import write_segment

SEGMENTS = {"one-record batches, 64 MiB": (64 << 20, 1, 100), "15-record batches, 256 MiB": (256 << 20, 15, 1000)}


def _once(args: list[str], out: Path) -> tuple[float, float]:
    """One whole process: wall-clock and CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(out, "wb") as fh:
        subprocess.run([sys.executable, "-m", "kafkatool", "dump-segment", *args], stdout=fh,
                       stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    """Generate the inputs if needed, time both formats, print the ratios."""
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.table_vs_jsonl", description=__doc__)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "kafkatool-table-bench")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    for name, (size, records, value) in SEGMENTS.items():
        seg = args.work / f"{size >> 20}-{records}" / "00000000000000000000.log"
        if not seg.exists():
            seg.parent.mkdir(parents=True, exist_ok=True)
            write_segment(seg, size, records, value)
        times: dict[str, list[tuple[float, float]]] = {"table": [], "jsonl": []}
        for _ in range(args.repeat):
            times["table"].append(_once([str(seg)], args.work / "out"))
            times["jsonl"].append(_once(["-f", "jsonl", str(seg)], args.work / "out"))
        (tw, tc), (jw, jc) = ((min(w for w, _ in times[k]), min(c for _, c in times[k])) for k in ("table", "jsonl"))
        print(f"{name}: table {tw:.2f} s wall, {tc:.2f} s CPU; jsonl {jw:.2f} s wall, {jc:.2f} s CPU; "
              f"table/jsonl {tw / jw:.2f}x wall, {tc / jc:.2f}x CPU (load average {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
