"""One measurement in a fresh process: its wall time and peak resident set (``ru_maxrss``), printed as JSON.

``python -m tests.benchmarks.probe MODE PATH`` with MODE one of the scan modes below, or
``python -m tests.benchmarks.probe cli ARGS...`` to run ``kafkatool ARGS`` in this process (stdout discarded);
the wall time of a ``cli`` run is the parent's, from fork to exit (``suite.cli``), as a user's shell sees it.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time


def _peak_rss_kb() -> int:
    """This process's peak resident set (``VmHWM``): unlike ``ru_maxrss`` it is not inherited from the parent
    that forked it (Linux keeps ``ru_maxrss`` across fork and exec)."""
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))


def run_mode(mode: str, path: str) -> int:
    from kafkatool.model import Defect
    from kafkatool.reading import columns
    from kafkatool.reading.files import mapped
    from kafkatool.schema.log_segment import walk_log

    if mode == "columns-shallow":
        return len(columns.scan_segment(path, verify_crc=False))
    if mode == "columns-crc":
        return len(columns.scan_segment(path))
    if mode == "columns-crc-pool":
        return len(columns.scan_segment_parallel(path))
    with mapped(path) as buf:
        n = 0
        for item in walk_log(buf, path, deep=mode == "walker-deep", verify_crc=mode != "walker-shallow"):
            n += 0 if isinstance(item, Defect) else 1
        return n


def main(argv: list[str]) -> None:
    mode = argv[0]
    started = time.perf_counter()
    if mode == "cli":
        from kafkatool.cli import main as kafkatool_main

        sys.argv = ["kafkatool", *argv[1:]]
        real_stdout = sys.stdout
        saved = os.dup(1)
        devnull = open(os.devnull, "w")  # noqa: SIM115 - kept open until the command ends
        os.dup2(devnull.fileno(), 1)
        sys.stdout = devnull
        code = 0
        try:
            kafkatool_main()
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else 0
        sys.stdout.flush()
        sys.stdout = real_stdout
        out = os.fdopen(saved, "w")
        info = {"exit": code}
    else:
        items = run_mode(mode, argv[1])
        info = {"items": items, "s": time.perf_counter() - started}
        out = sys.stdout
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # pool workers, forked from this process
    info["max_rss_mb"] = max(_peak_rss_kb(), children) / 1024
    print(json.dumps(info), file=out, flush=True)  # flushed here: a frame kept by a cycle may never close it


if __name__ == "__main__":
    main(sys.argv[1:])
