"""The local engine: the scan's plan run in this process, or over a process pool of ``jobs`` workers.

Units are segment byte ranges (the ``batches`` table) and partitions and log dirs (the other three). Results
come back in plan order whatever the pool does, so the output is deterministic. Workers return Arrow record
batches (cheap to pickle); the parent appends them to the Parquet writers as they arrive, so memory stays
bounded by the largest unit. Each job carries the plan's read limits, and runs within them wherever it runs.
"""

from __future__ import annotations

import itertools
import multiprocessing
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from kafkatool.fleet.analyse import Analysis, analyse_log_dir, analyse_partition, broker_findings
from kafkatool.fleet.plan import PartitionUnit, Plan
from kafkatool.fleet.tables import analysis_arrow, batches_arrow, lean_arrow, rows_arrow
from kafkatool.process import release_heap
from kafkatool.reading.batch_scan import SegmentRange, scan_range_or_nothing
from kafkatool.reading.context import using_limits
from kafkatool.reading.entry_columns import forget_columns
from kafkatool.reading.objects import using_fs_options
from kafkatool.schema.codecs import ReadLimits

Progress = Callable[[int], None]


@dataclass(frozen=True, slots=True)
class _Job:
    kind: str  # "range" | "partition" | "log_dir"
    unit: Any
    weight: int
    limits: ReadLimits  # the plan's: a worker process did not see the command line
    fs_options: dict[str, str]  # the plan's --fs-option pairs, likewise


TRIM_EVERY_BYTES = 32 << 20
"""The heap is given back after units that read this many bytes since it last was (a trim costs about 1 ms: after
each of a fleet's thousands of small partitions it was a tenth of the scan's time)."""
_since_trim = [0]


def _run(job: _Job) -> tuple[str, Any, int]:
    """One unit of work (in a worker): Arrow record batches for its tables, and its weight for progress."""
    try:
        with using_limits(job.limits), using_fs_options(job.fs_options):
            return _run_unit(job)
    finally:
        forget_columns()
        _since_trim[0] += job.weight
        if _since_trim[0] >= TRIM_EVERY_BYTES:
            _since_trim[0] = 0
            release_heap()  # the next unit of another kind would find the process as large as this one


def _run_unit(job: _Job) -> tuple[str, Any, int]:
    if job.kind == "range":
        cols = scan_range_or_nothing(job.unit, job.limits)
        return "batches", (job.unit, batches_arrow(cols), cols.landing), job.weight
    if job.kind == "partition":
        unit: PartitionUnit = job.unit
        return "analysis", _rows_of(analyse_partition(unit.log_dir, unit.directory, unit.split)), job.weight
    return "analysis", _rows_of(analyse_log_dir(job.unit)), job.weight


def _rows_of(result: Analysis) -> tuple[Analysis, pa.RecordBatch | None]:
    """A unit's analysis rows as they are (a few dicts: the parent makes Arrow of many units' at once, a column
    conversion per unit cost more than the rows) and its batch rows as Arrow (columns already)."""
    batches = batches_arrow(result.batches) if result.batches is not None and len(result.batches) else None
    result.batches = None
    return result, batches


ANALYSIS_ROWS = 4096
"""Partition, producer and finding rows the parent gathers before it makes them one Arrow record batch a table."""


class _AnalysisRows:
    """The analyses' rows gathered in plan order and handed on as one record batch per table every
    :data:`ANALYSIS_ROWS` rows (and at the end)."""

    def __init__(self, sink: Callable[[str, pa.RecordBatch], None]) -> None:
        self.sink = sink
        self.pending: list[Analysis] = []
        self.rows = 0

    def add(self, result: Analysis) -> None:
        self.pending.append(result)
        self.rows += 1 + len(result.producers) + len(result.findings)
        if self.rows >= ANALYSIS_ROWS:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            for table, batch in analysis_arrow(self.pending).items():
                self.sink(table, batch)
        self.pending, self.rows = [], 0


def _jobs(plan: Plan) -> list[_Job]:
    jobs = [_Job("range", r, r.size, plan.limits, plan.fs_options) for r in plan.ranges]
    jobs += [_Job("partition", p, p.size, plan.limits, plan.fs_options) for p in plan.partitions]
    jobs += [_Job("log_dir", d, 0, plan.limits, plan.fs_options) for d in plan.log_dirs]
    return jobs


def run_local(plan: Plan, sink: Callable[[str, pa.RecordBatch], None], *, jobs: int = 1,
              progress: Progress | None = None) -> None:
    """Run every unit of ``plan`` and hand each table's record batches to ``sink(table, batch)``.

    ``progress(bytes)`` is called as units finish, weighted by the bytes they read (``plan.work_bytes`` in all).
    Every unit, here or in a worker, reads within ``plan.limits``.
    """
    lean_arrow()  # before the first conversion, so forked workers inherit it too
    with using_limits(plan.limits), using_fs_options(plan.fs_options):  # what this process reads itself
        _run_plan(plan, sink, jobs, progress)


def _run_plan(plan: Plan, sink: Callable[[str, pa.RecordBatch], None], jobs: int,
              progress: Progress | None) -> None:
    work = _jobs(plan)
    results: Iterator[tuple[str, Any, int]]
    pool: ProcessPoolExecutor | None = None
    if jobs > 1 and len(work) > 1:
        # An object store's client (the AWS SDK's threads) does not survive a fork: workers then start afresh.
        context = multiprocessing.get_context("spawn" if plan.remote else "fork")
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context)
        results = _bounded_map(pool, work, jobs)
    else:
        results = map(_run, work)
    chain = _RangeChain(sink, plan.limits)
    analyses = _AnalysisRows(sink)
    try:
        for kind, payload, weight in results:
            if kind == "batches":
                chain.add(*payload)
                del payload
                release_heap()  # the parent too: a unit's rows, once written, give their pages back
            else:
                chain.close()
                result, batches = payload
                if batches is not None:
                    sink("batches", batches)
                analyses.add(result)
            if progress is not None:
                progress(weight)
        chain.close()
        analyses.flush()
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    sink("findings", rows_arrow("findings", broker_findings(plan.log_dirs)))


IN_FLIGHT_PER_WORKER = 1
"""Units submitted to the pool ahead of the one being written, per worker: each worker has its next unit.
``Executor.map`` submits them all at once, and the results of units done while the parent writes earlier ones
(a range of one-record batches: a few MB of Arrow) would pile up in the parent without bound."""


def _bounded_map(pool: ProcessPoolExecutor, work: list[_Job], jobs: int) -> Iterator[tuple[str, Any, int]]:
    """``pool.map(_run, work)`` in plan order, with at most ``IN_FLIGHT_PER_WORKER * jobs`` units submitted and
    not yet handed on."""
    pending: deque[Future[tuple[str, Any, int]]] = deque()
    todo = iter(work)
    for job in itertools.islice(todo, IN_FLIGHT_PER_WORKER * jobs):
        pending.append(pool.submit(_run, job))
    while pending:
        done = pending.popleft().result()
        for job in itertools.islice(todo, 1):
            pending.append(pool.submit(_run, job))
        yield done
        del done  # not kept alive while the next result is awaited


class _RangeChain:
    """Hands on a cut segment's range rows in order, holding at most one range back.

    A range's rows are right when its walk started at a true batch start (the segment's start, or where the
    previous range's walk landed) and landed on the next cut. When a walk does not land on the next cut (the cut
    was not a true batch start, e.g. a record value that holds whole batches), the segment is scanned again in
    one piece from that range's start, which is what a reader from the segment's start sees, and its later ranges
    are dropped. Memory stays bounded by one range, not by the segment.
    """

    def __init__(self, sink: Callable[[str, pa.RecordBatch], None], limits: ReadLimits) -> None:
        self.sink = sink
        self.limits = limits
        self.held: tuple[SegmentRange, pa.RecordBatch, int | None] | None = None
        self.rescanned: str | None = None  # the segment whose rest was scanned in one piece

    def add(self, rng: SegmentRange, batch: pa.RecordBatch, landing: int | None) -> None:
        if rng.path == self.rescanned:
            return
        if self.held is not None and self.held[0].path != rng.path:
            self.close()
        if self.held is None:
            self.held = (rng, batch, landing)
            return
        prev, prev_batch, prev_landing = self.held
        if prev_landing == rng.start:
            self.sink("batches", prev_batch)
            self.held = (rng, batch, landing)
            return
        self.held, self.rescanned = None, prev.path
        rest = SegmentRange(prev.log_dir, prev.topic, prev.partition, prev.path, prev.start, None, 0)
        self.sink("batches", batches_arrow(scan_range_or_nothing(rest, self.limits)))

    def close(self) -> None:
        """The held range is the last of its segment: its rows are right as they are."""
        if self.held is not None:
            self.sink("batches", self.held[1])
            self.held = None


def analyse_all(plan: Plan) -> list[Analysis]:
    """Every analysis of ``plan`` in this process (for tests and small inputs), within ``plan.limits``."""
    with using_limits(plan.limits):
        return [analyse_partition(p.log_dir, p.directory) for p in plan.partitions] + [
            analyse_log_dir(d) for d in plan.log_dirs]
