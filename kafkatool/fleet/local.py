"""The local engine: the scan's plan run in this process, or over a process pool of ``jobs`` workers.

Units are segment byte ranges (the ``batches`` table) and partitions and log dirs (the other three). Results
come back in plan order whatever the pool does, so the output is deterministic. Workers return Arrow record
batches (cheap to pickle); the parent appends them to the Parquet writers as they arrive, so memory stays
bounded by the largest unit.
"""

from __future__ import annotations

import itertools
import multiprocessing
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from kafkatool.fleet.analyse import Analysis, analyse_log_dir, analyse_partition, broker_findings
from kafkatool.fleet.plan import PartitionUnit, Plan
from kafkatool.fleet.tables import analysis_arrow, batches_arrow, rows_arrow
from kafkatool.reading.batch_scan import SegmentRange, scan_range_or_nothing

Progress = Callable[[int], None]


@dataclass(frozen=True, slots=True)
class _Job:
    kind: str  # "range" | "partition" | "log_dir"
    unit: Any
    weight: int


def _run(job: _Job) -> tuple[str, Any, int]:
    """One unit of work (in a worker): Arrow record batches for its tables, and its weight for progress."""
    if job.kind == "range":
        cols = scan_range_or_nothing(job.unit)
        return "batches", (job.unit, batches_arrow(cols), cols.landing), job.weight
    if job.kind == "partition":
        unit: PartitionUnit = job.unit
        return "analysis", analysis_arrow([analyse_partition(unit.log_dir, unit.directory, unit.split)]), job.weight
    return "analysis", analysis_arrow([analyse_log_dir(job.unit)]), job.weight


def _jobs(plan: Plan) -> list[_Job]:
    jobs = [_Job("range", r, r.size) for r in plan.ranges]
    jobs += [_Job("partition", p, p.size) for p in plan.partitions]
    jobs += [_Job("log_dir", d, 0) for d in plan.log_dirs]
    return jobs


def run_local(plan: Plan, sink: Callable[[str, pa.RecordBatch], None], *, jobs: int = 1,
              progress: Progress | None = None) -> None:
    """Run every unit of ``plan`` and hand each table's record batches to ``sink(table, batch)``.

    ``progress(bytes)`` is called as units finish, weighted by the bytes they read (``plan.work_bytes`` in all).
    """
    work = _jobs(plan)
    results: Iterator[tuple[str, Any, int]]
    pool: ProcessPoolExecutor | None = None
    if jobs > 1 and len(work) > 1:
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"))
        results = pool.map(_run, work, chunksize=1)
    else:
        results = map(_run, work)
    pending: list[tuple[SegmentRange, pa.RecordBatch, int | None]] = []
    try:
        for kind, payload, weight in results:
            if kind == "batches":
                if pending and pending[-1][0].path != payload[0].path:
                    _flush_segment(pending, sink)
                pending.append(payload)
            else:
                if pending:
                    _flush_segment(pending, sink)
                for table, batch in payload.items():
                    sink(table, batch)
            if progress is not None:
                progress(weight)
        if pending:
            _flush_segment(pending, sink)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    sink("findings", rows_arrow("findings", broker_findings(plan.log_dirs)))


def _flush_segment(pending: list[tuple[SegmentRange, pa.RecordBatch, int | None]],
                   sink: Callable[[str, pa.RecordBatch], None]) -> None:
    """Hand on a segment's ranges if they chain (each range's walk lands on the next one's start); otherwise a
    cut was not a true batch start (e.g. a record value that holds whole batches) and the segment is scanned
    again in one piece, which is what a reader from the segment's start sees."""
    ranges = list(pending)
    pending.clear()
    chained = all(landing == nxt[0].start for (_, _, landing), nxt in itertools.pairwise(ranges))
    if chained:
        for _, batch, _ in ranges:
            sink("batches", batch)
        return
    first = ranges[0][0]
    whole = SegmentRange(first.log_dir, first.topic, first.partition, first.path, 0, None,
                         sum(r[0].size for r in ranges))
    sink("batches", batches_arrow(scan_range_or_nothing(whole)))


def analyse_all(plan: Plan) -> list[Analysis]:
    """Every analysis of ``plan`` in this process (for tests and small inputs)."""
    return [analyse_partition(p.log_dir, p.directory) for p in plan.partitions] + [
        analyse_log_dir(d) for d in plan.log_dirs]
