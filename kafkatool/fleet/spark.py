"""The Spark engine: PySpark Python Data Sources over broker log dirs, reusing the same reading code.

``kafka-segments`` is the batches table: its input partitions are segments and byte ranges of large segments
(cut at ``.index`` positions confirmed by a CRC-checked header test, :mod:`kafkatool.reading.batch_scan`),
grouped by size, and ``read`` yields Arrow record batches. ``kafka-partitions``, ``kafka-producers`` and
``kafka-findings`` are the other three tables, one task per partition and per log dir. Any Spark program can use
them once :func:`register` has run::

    spark.read.format("kafka-segments").load("/data/brokers").where("NOT crc_valid").show()

``kafkatool scan --engine spark`` writes ``kafka-segments`` straight to Parquet (batch rows come from the columnar
scanner, no object per batch, so a second pass over the bytes is cheaper than carrying them through the analysis)
and reads the three per-partition tables through one internal source (``kafka-analysis``, the three tables'
columns side by side with a ``table`` column), cached, so each partition is analysed once. Executors open the
files themselves: every executor must see the log dirs at the same path.

Executors are other Python processes: they never see the command line's ``--max-decompressed-bytes``. The cap
travels as the ``maxDecompressedBytes`` option (the default cap without it); each reader turns it into a
:class:`~kafkatool.schema.codecs.ReadLimits` when it is made, travels with it to the executors, and reads every
unit within it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from kafkatool.fleet.analyse import Analysis, analyse_log_dir, analyse_partition, broker_findings
from kafkatool.fleet.plan import DEFAULT_CHUNK_BYTES, Plan, balance, make_plan
from kafkatool.fleet.tables import COLUMNS, analysis_arrow, batches_arrow, columns_ddl, columns_schema, ddl
from kafkatool.reading.batch_scan import SegmentRange, scan_range_or_nothing
from kafkatool.reading.context import resolve, using_limits
from kafkatool.reading.objects import fs_options, input_path, using_fs_options
from kafkatool.schema.codecs import DEFAULT_LIMITS, ReadLimits

ANALYSIS_TABLES = ("partitions", "producers", "findings")


class SplitMismatchError(RuntimeError):
    """A range's batch chain did not land on the next range's start: a cut was not a true batch start."""


def _wide_columns() -> list[tuple[str, str]]:
    cols: dict[str, str] = {"table": "string"}
    for table in ANALYSIS_TABLES:
        for name, kind in COLUMNS[table]:
            if cols.setdefault(name, kind) != kind:
                raise TypeError(f"column {name} has two types across the analysis tables")
    return list(cols.items())


WIDE_COLUMNS = _wide_columns()
WIDE_SCHEMA = columns_schema(WIDE_COLUMNS)


def _opt(options: dict[str, str], name: str, default: str | None = None) -> str | None:
    """An option by name, whatever its case (Spark hands the options over lower-cased)."""
    for key, value in options.items():
        if key.lower() == name.lower():
            return value
    return default


def _paths(options: dict[str, str]) -> list[str]:
    paths = _opt(options, "paths")
    if paths is not None:
        return list(json.loads(paths))
    path = _opt(options, "path")
    if path is not None:
        return [path]
    raise ValueError("give the log dirs with .load(path) or .option('paths', json.dumps([...]))")


def _limits(options: dict[str, str]) -> ReadLimits:
    """The read limits the options give (``maxDecompressedBytes``), else the defaults."""
    cap = _opt(options, "maxDecompressedBytes")
    return DEFAULT_LIMITS if cap is None else ReadLimits(int(cap))


def _fs_options(options: dict[str, str]) -> dict[str, str]:
    """The object store options (``fsOptions``, JSON) the executors read with (``--fs-option``)."""
    return dict(json.loads(_opt(options, "fsOptions", "{}") or "{}"))


def _plan(options: dict[str, str], *, all_ranges: bool = False) -> Plan:
    chunk = int(_opt(options, "chunkBytes", str(DEFAULT_CHUNK_BYTES)))  # type: ignore[arg-type]
    with using_fs_options(_fs_options(options)):
        plan = make_plan(_paths(options), chunk_bytes=chunk, all_ranges=all_ranges, limits=_limits(options))
    only = _opt(options, "only")
    if only is not None:  # scan --since: the partition directories to read again
        keep = set(json.loads(only))
        plan.partitions = [p for p in plan.partitions if p.directory in keep]
        plan.ranges = [r for r in plan.ranges if str(input_path(r.path).parent) in keep]
    return plan


def _groups(sizes: list[int], options: dict[str, str], default: int) -> list[list[int]]:
    return balance(sizes, int(_opt(options, "numPartitions", str(default))))  # type: ignore[arg-type]


class _SegmentsReader(DataSourceReader):
    def __init__(self, options: dict[str, str]) -> None:
        self.options = dict(options)
        self.limits = _limits(self.options)  # pickled with the reader: what its executors read within
        self.fs_options = _fs_options(self.options)

    def partitions(self) -> Sequence[InputPartition]:
        plan = _plan(self.options, all_ranges=True)  # every segment: whole, or cut into byte ranges
        ranges = plan.ranges
        groups = _groups([r.size for r in ranges], self.options, max(1, len(ranges)))
        return [InputPartition([ranges[i] for i in group]) for group in groups]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        units: list[SegmentRange] = partition.value or []  # no partitions at all: Spark reads one empty one
        for unit in units:
            with using_fs_options(self.fs_options):
                cols = scan_range_or_nothing(unit, self.limits)
            if unit.stop is not None and cols.landing != unit.stop:
                raise SplitMismatchError(f"{unit.path}: the batches from byte {unit.start} end at {cols.landing}, "
                                         f"not at the next range's start {unit.stop}")
            yield batches_arrow(cols)


class SegmentsSource(DataSource):
    """``kafka-segments``: one row per batch of every segment under the given paths."""

    @classmethod
    def name(cls) -> str:
        return "kafka-segments"

    def schema(self) -> str:
        return ddl("batches")

    def reader(self, schema: Any) -> DataSourceReader:
        return _SegmentsReader(self.options)


def _analysis_units(plan: Plan) -> list[tuple[str, Any, int]]:
    units: list[tuple[str, Any, int]] = [("partition", p, p.size) for p in plan.partitions]
    units += [("log_dir", d, 0) for d in plan.log_dirs]
    units.append(("brokers", plan.log_dirs, 0))
    return units


def _analyse(unit: tuple[str, Any, int]) -> Analysis:
    kind, value, _ = unit
    if kind == "partition":
        return analyse_partition(value.log_dir, value.directory)  # no batch rows: kafka-segments has them
    if kind == "log_dir":
        return analyse_log_dir(value)
    return Analysis(findings=broker_findings(value))


class _AnalysisReader(DataSourceReader):
    def __init__(self, options: dict[str, str], table: str | None) -> None:
        self.options = dict(options)
        self.table = table
        self.limits = _limits(self.options)  # pickled with the reader: what its executors read within
        self.fs_options = _fs_options(self.options)

    def partitions(self) -> Sequence[InputPartition]:
        units = _analysis_units(_plan(self.options))
        groups = _groups([u[2] for u in units], self.options, max(1, len(units)))
        return [InputPartition([units[i] for i in group]) for group in groups]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        for unit in partition.value or []:
            with using_limits(self.limits), using_fs_options(self.fs_options):
                result = _analyse(unit)
            tables = analysis_arrow([result])
            if self.table is not None:
                yield tables[self.table]
                continue
            for table in ANALYSIS_TABLES:
                batch = tables[table]
                if batch.num_rows:
                    yield _widen(table, batch)


def _widen(table: str, batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` of ``table`` in the wide schema: its columns, nulls elsewhere, ``table`` set."""
    n = batch.num_rows
    arrays = []
    for f in WIDE_SCHEMA:
        if f.name == "table":
            arrays.append(pa.array([table] * n, pa.string()))
        elif f.name in batch.schema.names:
            arrays.append(batch.column(f.name))
        else:
            arrays.append(pa.nulls(n, f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=WIDE_SCHEMA)


def _table_source(table: str) -> type[DataSource]:
    class _Source(DataSource):
        @classmethod
        def name(cls) -> str:
            return f"kafka-{table}"

        def schema(self) -> str:
            return ddl(table)

        def reader(self, schema: Any) -> DataSourceReader:
            return _AnalysisReader(self.options, table)

    _Source.__name__ = _Source.__qualname__ = f"{table.capitalize()}Source"
    _Source.__doc__ = f"``kafka-{table}``: the scan's {table} table."
    return _Source


PartitionsSource = _table_source("partitions")
ProducersSource = _table_source("producers")
FindingsSource = _table_source("findings")


class AnalysisSource(DataSource):
    """``kafka-analysis``: the rows of the partitions, producers and findings tables side by side (``table``
    tells which), from one analysis of each partition."""

    @classmethod
    def name(cls) -> str:
        return "kafka-analysis"

    def schema(self) -> str:
        return columns_ddl(WIDE_COLUMNS)

    def reader(self, schema: Any) -> DataSourceReader:
        return _AnalysisReader(self.options, None)


SOURCES: tuple[type[DataSource], ...] = (SegmentsSource, PartitionsSource, ProducersSource, FindingsSource,
                                         AnalysisSource)


def register(spark: Any) -> None:
    """Make the ``kafka-*`` formats available in ``spark``."""
    for source in SOURCES:
        spark.dataSource.register(source)


def is_local_master(master: str) -> bool:
    """Whether ``master`` runs Spark inside this process's JVM (``local``, ``local[N]``, ``local[*]``...)."""
    return master == "local" or master.startswith("local[")


def session(master: str = "local[*]", app_name: str = "kafkatool-scan") -> tuple[Any, bool]:
    """A Spark session with the ``kafka-*`` sources registered, and whether this call started it (an active
    session, e.g. a notebook's, is reused and must not be stopped by us). Python workers run this interpreter.

    A local master binds to 127.0.0.1 only. The JVM starts inside this call and inherits file descriptor 2: a
    caller that wants its log4j output and JVM warnings off the terminal points fd 2 elsewhere around the call.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        register(active)
        return active, False

    builder = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true")
               .config("spark.sql.shuffle.partitions", "4"))
    if is_local_master(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = builder.config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark, True


def stage_progress(spark: Any) -> list[tuple[int, str, int, int]]:
    """The running stages: ``(stage id, name, completed tasks, tasks)`` from Spark's status tracker."""
    tracker = spark.sparkContext.statusTracker()
    out = []
    for stage_id in sorted(tracker.getActiveStageIds()):
        info = tracker.getStageInfo(stage_id)
        if info is not None:
            out.append((stage_id, str(info.name).split(" at ")[0], int(info.numCompletedTasks), int(info.numTasks)))
    return out


def load_tables(spark: Any, paths: list[str], *, chunk_bytes: int = DEFAULT_CHUNK_BYTES,
                partitions: int | None = None, limits: ReadLimits | None = None,
                only: list[str] | None = None) -> dict[str, Any]:
    """The four tables as DataFrames (the per-partition three from one cached analysis), read within ``limits``
    (the current ones, e.g. the command line's, when ``None``) with this process's ``--fs-option`` pairs;
    ``only``: the partition directories to read (``scan --since``), all when ``None``."""
    options = {"paths": json.dumps(paths), "chunkBytes": str(chunk_bytes),
               "maxDecompressedBytes": str(resolve(limits).max_decompressed_bytes),
               "fsOptions": json.dumps(fs_options())}
    if only is not None:
        options["only"] = json.dumps(sorted(only))
    if partitions is not None:
        options["numPartitions"] = str(partitions)
    out = {"batches": spark.read.format("kafka-segments").options(**options).load()}
    wide = spark.read.format("kafka-analysis").options(**options).load().cache()
    for table in ANALYSIS_TABLES:
        out[table] = wide.where(wide["table"] == table).select(*[name for name, _ in COLUMNS[table]])
    return out


def run_spark(spark: Any, paths: list[str], output: Any, *, chunk_bytes: int = DEFAULT_CHUNK_BYTES,
              partitions: int | None = None, limits: ReadLimits | None = None,
              only: list[str] | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """Write the four tables through ``output`` (a :class:`kafkatool.writing.tables.TableOutput`) with Spark.

    Returns the partitions and findings rows (small, for the summary) and the batch count. If a range's
    batches did not chain into the next range (a cut that was not a true batch start), the whole scan is
    redone with segments unsplit, which is what a reader from each segment's start sees. ``limits``: see
    :func:`load_tables` (and ``only``).
    """
    limits = resolve(limits)
    if partitions is None:
        partitions = max(2, spark.sparkContext.defaultParallelism * 2)
    try:
        tables = load_tables(spark, paths, chunk_bytes=chunk_bytes, partitions=partitions, limits=limits, only=only)
        output.write_spark("batches", tables["batches"])
    except Exception as err:
        if SplitMismatchError.__name__ not in str(err):
            raise
        tables = load_tables(spark, paths, chunk_bytes=1 << 62, partitions=partitions, limits=limits, only=only)
        output.write_spark("batches", tables["batches"])
    for table in ANALYSIS_TABLES:
        output.write_spark(table, tables[table])
    # The summary's inputs come back from the part files just written, not from more Spark jobs.
    return output.staged_rows("partitions"), output.staged_rows("findings"), output.staged_count("batches")
