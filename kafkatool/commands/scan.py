"""``kafkatool scan``: a fleet of broker data directories into four Parquet tables (batches, partitions,
producers, findings), on this machine's cores or on Apache Spark, with a short report of the worst findings."""

from __future__ import annotations

import os
import sys
import time
from enum import StrEnum
from typing import Annotated, Any

import typer

from kafkatool.analysis.findings import at_or_above
from kafkatool.commands.common import INT32_MAX, FailOn, FollowLinks, OutputFormat, run_guarded
from kafkatool.errors import ExitCode, KafkatoolError, UnreadableInputError, UsageError
from kafkatool.fleet.plan import make_plan
from kafkatool.fleet.summary import summarise
from kafkatool.reading.objects import filesystem, input_path, is_remote
from kafkatool.render.output import Diagnostics
from kafkatool.render.scan_report import byte_progress, render_scan, stage_progress
from kafkatool.writing.process_log import process_log_path, stderr_to
from kafkatool.writing.tables import ObjectTableOutput, TableOutput


class Engine(StrEnum):
    """Where the data pipeline runs."""

    local = "local"
    spark = "spark"


class _Rows:
    """What the scan keeps of the rows it writes: the partition and finding rows (for the summary), the batch count
    and each segment's last batch position (for ``--since``). :meth:`sink` writes a batch and keeps its part, for
    the rows scanned and the rows reused alike."""

    def __init__(self, output: TableOutput | ObjectTableOutput, part_rows: list[dict[str, Any]] | None = None,
                 finding_rows: list[dict[str, Any]] | None = None, batch_rows: int = 0) -> None:
        from kafkatool.fleet import incremental as inc

        self.output = output
        self.part_rows = part_rows if part_rows is not None else []
        self.finding_rows = finding_rows if finding_rows is not None else []
        self.batch_rows = batch_rows
        self.last = inc.LastPositions()

    def sink(self, table: str, batch: Any) -> None:
        self.output.append(table, batch)
        if table == "batches":
            self.batch_rows += batch.num_rows
            self.last.add(batch)
        elif table == "partitions":
            self.part_rows.extend(batch.to_pylist())
        elif table == "findings":
            self.finding_rows.extend(batch.to_pylist())


def _local(paths: list[str], output: TableOutput | ObjectTableOutput, *, jobs: int, chunk_bytes: int,
           show_progress: bool, since: str | None,
           incremental: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int, int, int]:
    # Arrow's buffers from the C allocator, chosen before pyarrow is first imported (its compute kernels take the
    # pool chosen then): Arrow's default, mimalloc, kept 26 MB more resident writing 1 GiB of one-record batches
    # (fleet.tables.lean_arrow). A user's own choice stands.
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    from kafkatool.fleet import incremental as inc
    from kafkatool.fleet.local import run_local
    from kafkatool.fleet.tables import TABLES

    plan = make_plan(paths, chunk_bytes=chunk_bytes)
    inputs = inc.fingerprint(plan)
    reuse = inc.plan_since(plan, inputs, since) if since is not None else None
    rows = _Rows(output)

    scanned = reuse.plan if reuse is not None else plan
    with byte_progress(scanned.work_bytes, "scanning", enabled=show_progress) as advance:
        run_local(scanned, rows.sink, jobs=jobs, progress=advance)
    if reuse is not None:
        for table, batch in inc.reused_rows(reuse, TABLES):
            rows.sink(table, batch)
        incremental.update({"since": since, "rescanned_partitions": reuse.rescanned,
                            "reused_partitions": len(reuse.directories)})
    output.append(inc.MANIFEST, inc.manifest(inputs, rows.last.by_file(plan)))
    return rows.part_rows, rows.finding_rows, rows.batch_rows, len(plan.log_dirs), plan.segments


def _spark(paths: list[str], output: TableOutput | ObjectTableOutput, *, master: str, chunk_bytes: int,
           show_progress: bool, since: str | None,
           incremental: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int, int, int]:
    try:
        from kafkatool.fleet import spark as fleet_spark
    except ImportError as err:
        raise UsageError(f"--engine spark needs pyspark ({err.name} is not installed): "
                         "pip install 'kafkatool[spark]'") from None
    from kafkatool.fleet import incremental as inc
    from kafkatool.fleet.tables import TABLES

    plan = make_plan(paths, chunk_bytes=chunk_bytes)  # also validates the paths before the JVM starts
    inputs = inc.fingerprint(plan)
    reuse = inc.plan_since(plan, inputs, since) if since is not None else None
    log = process_log_path("spark")
    try:
        with stderr_to(log):  # the JVM keeps this as its stderr: log4j and JVM warnings go to the file
            spark, started = fleet_spark.session(master)
    except Exception as err:  # no Java, a bad master URL: the engine cannot run here
        raise UsageError(f"--engine spark could not start Spark on {master}: {_first_line(err)} "
                         f"(Spark's log: {log})") from None
    if started:
        Diagnostics().note(f"Spark's own log (log4j, JVM warnings): {log}")
    else:  # an active session was reused: no JVM started, nothing was logged
        log.unlink(missing_ok=True)
    try:
        with stage_progress(lambda: fleet_spark.stage_progress(spark), enabled=show_progress):
            part_rows, finding_rows, batch_rows = fleet_spark.run_spark(
                spark, paths, output, chunk_bytes=chunk_bytes,
                only=None if reuse is None else [p.directory for p in reuse.plan.partitions])
    except KafkatoolError:
        raise
    except Exception as err:
        raise KafkatoolError(f"the Spark job failed: {_first_line(err)}") from None
    finally:
        if started:
            spark.stop()
    rows = _Rows(output, part_rows, finding_rows, batch_rows)
    for batch in output.staged_batches("batches", ["log_dir", "topic", "partition", "segment", "position"]):
        rows.last.add(batch)
    if reuse is not None:
        for table, batch in inc.reused_rows(reuse, TABLES):
            rows.sink(table, batch)
        incremental.update({"since": since, "rescanned_partitions": reuse.rescanned,
                            "reused_partitions": len(reuse.directories)})
    output.append(inc.MANIFEST, inc.manifest(inputs, rows.last.by_file(plan)))
    return rows.part_rows, rows.finding_rows, rows.batch_rows, len(plan.log_dirs), plan.segments


def _output(out: str, paths: list[str], force: bool) -> TableOutput | ObjectTableOutput:
    """The scan's output: a local directory, or a prefix in an object store (``--out s3://...``)."""
    target = input_path(out)
    if is_remote(target):
        fs, key = filesystem(target)  # type: ignore[arg-type]
        return ObjectTableOutput(str(target), fs, key, [str(input_path(p)) for p in paths], force=force)
    return TableOutput(target, [input_path(p) for p in paths if not is_remote(p)], force=force)


def _first_line(err: BaseException) -> str:
    """The most telling line of a Spark or Py4J error (they carry whole JVM and Python tracebacks)."""
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    for ln in reversed(lines):
        if "Error:" in ln or "Exception:" in ln:
            return ln[:400]
    return (lines[0] if lines else type(err).__name__)[:400]


def run(paths: list[str], out: str, *, engine: Engine, master: str, jobs: int, chunk_mib: int, force: bool,
        fmt: OutputFormat, fail_on: FailOn, show_progress: bool, since: str | None = None) -> int:
    """Scan, write the tables, report, and choose the exit code."""
    incremental: dict[str, Any] = {}
    for p in paths:
        if not input_path(p).exists():
            raise UnreadableInputError(p, "no such file or directory")
        if not input_path(p).is_dir():
            raise UnreadableInputError(p, "not a directory (give log dirs, partition directories or folders "
                                          "holding them)")
    started = time.monotonic()
    chunk_bytes = chunk_mib << 20
    with _output(out, paths, force) as output:
        if engine is Engine.local:
            parts, findings, batches, log_dirs, segments = _local(paths, output, jobs=jobs, chunk_bytes=chunk_bytes,
                                                                  show_progress=show_progress, since=since,
                                                                  incremental=incremental)
        else:
            parts, findings, batches, log_dirs, segments = _spark(paths, output, master=master,
                                                                  chunk_bytes=chunk_bytes, show_progress=show_progress,
                                                                  since=since, incremental=incremental)
        output.commit()
    summary = summarise(parts, findings, log_dirs=log_dirs, segments=segments,
                        scanned_bytes=sum(p["size_bytes"] for p in parts), batch_rows=batches)
    summary = {"out": out, "engine": engine.value if engine is Engine.local else f"spark {master}",
               "seconds": round(time.monotonic() - started, 3), **summary}
    if incremental:
        summary["incremental"] = incremental
    render_scan(summary, fmt.value)
    if fail_on is FailOn.never:
        return int(ExitCode.CLEAN)
    return int(ExitCode.DEFECTS if at_or_above(findings, fail_on.value) else ExitCode.CLEAN)


def command(
    paths: Annotated[list[str], typer.Argument(help="Broker log dirs, partition directories, or folders holding "
                                               "them (searched recursively).", show_default=False, metavar="PATH")],
    out: Annotated[str, typer.Option("--out", "-o", metavar="DIR", help="Output directory for the Parquet tables "
                                     "(must not exist, and not inside an input).", show_default=False)],
    engine: Annotated[Engine, typer.Option("--engine", help="local: this machine's cores (no JVM); spark: "
                                           "Apache Spark through PySpark.")] = Engine.local,
    master: Annotated[str, typer.Option("--master", metavar="URL", help="Spark master URL for --engine spark.")]
    = "local[*]",
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=0, max=1024, metavar="N",
                                      help="Worker processes for the local engine (0: one per CPU).")] = 0,
    chunk_mib: Annotated[int, typer.Option("--chunk-mib", min=1, max=INT32_MAX, metavar="MIB",
                                           help="Cut segments larger than this into byte ranges scanned in "
                                                "parallel.")] = 64,
    force: Annotated[bool, typer.Option("--force", help="Replace DIR if it already exists.")] = False,
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f", help="Report format: table, json or jsonl.")]
    = OutputFormat.table,
    fail_on: Annotated[FailOn, typer.Option("--fail-on", help="Exit 1 when a finding reaches this severity.")]
    = FailOn.error,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", "--no-progress",
                                        help="No progress bar on stderr (--no-progress: the old name).")] = False,
    since: Annotated[str | None, typer.Option("--since", metavar="PREVIOUS_OUT",
                                              help="Read again only the partitions whose files changed since the "
                                                   "scan written to PREVIOUS_OUT (size, time, first and last "
                                                   "batch); the tables are still complete.", show_default=False)]
    = None,
    follow_links: FollowLinks = False,
) -> None:
    """Scan a fleet's log dirs into Parquet tables: batches, partitions, producers, findings."""

    def body() -> int:
        n_jobs = jobs or len(os.sched_getaffinity(0))
        return run(paths, out, engine=engine, master=master, jobs=n_jobs, chunk_mib=chunk_mib, force=force,
                   fmt=fmt, fail_on=fail_on, show_progress=not quiet and sys.stderr.isatty(), since=since)

    run_guarded(body, follow_links=follow_links)
