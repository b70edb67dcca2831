"""The scan's four tables as Arrow: one schema per table, built from the column lists of the modules that
make the rows (``reading.batch_scan`` for batches, ``fleet.analyse`` for the rest), and the DDL strings the
Spark Data Sources declare. One declaration, three uses (local Parquet, Spark schema, tests).
"""

from __future__ import annotations

import importlib.abc
import sys
from typing import Any

import pyarrow as pa

from kafkatool.fleet.analyse import FINDING_COLUMNS, PARTITION_COLUMNS, PRODUCER_COLUMNS, Analysis
from kafkatool.reading.batch_scan import BATCH_COLUMNS, SORT_KEY, BatchColumns, Coded

_ARROW = {"string": pa.string(), "int8": pa.int8(), "int16": pa.int16(), "int32": pa.int32(),
          "int64": pa.int64(), "bool": pa.bool_()}
_DDL = {"string": "STRING", "int8": "TINYINT", "int16": "SMALLINT", "int32": "INT", "int64": "BIGINT",
        "bool": "BOOLEAN"}

COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "batches": BATCH_COLUMNS, "partitions": PARTITION_COLUMNS, "producers": PRODUCER_COLUMNS,
    "findings": FINDING_COLUMNS,
}
TABLES = tuple(COLUMNS)
# The order rows are compared and summarised in (the engines may write them in any order).
SORT_KEYS: dict[str, tuple[str, ...]] = {
    "batches": SORT_KEY,
    "partitions": ("log_dir", "directory"),
    "producers": ("log_dir", "topic", "partition", "producer_id"),
    "findings": ("log_dir", "topic", "partition", "source", "file", "position", "code", "field", "reason"),
}


class _NoPandas(importlib.abc.MetaPathFinder):
    """Refuses ``pandas`` while :func:`arrow_without_pandas` settles pyarrow's pandas shim."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
        if fullname.partition(".")[0] == "pandas":
            raise ImportError("not imported by the local engine")


def lean_arrow() -> None:
    """Arrow for a process of the local engine: its buffers from the C allocator, and pyarrow's pandas lookups
    settled without importing pandas (:func:`arrow_without_pandas`).

    Arrow's default pool (mimalloc) keeps the pages of freed buffers: writing 1 GiB of one-record batch rows left
    40 MB resident for a pool holding 15 MB at most. glibc gives a large buffer back when it is freed. This sets
    pyarrow's own pool; compute kernels take the one chosen when pyarrow was loaded (``ARROW_DEFAULT_MEMORY_POOL``,
    which ``kafkatool scan`` sets first)."""
    pa.set_memory_pool(pa.system_memory_pool())
    arrow_without_pandas()


def arrow_without_pandas() -> None:
    """Settle pyarrow's pandas lookups without importing pandas, when it is not imported yet.

    The first ``pa.array`` asks whether pandas is there (the Python shim, and the C++ converter once for its
    static symbols), which imports it when installed: about 50 MB of resident memory in each process (the parent
    and every worker), for a library the local engine never uses. Asked here with the import refused, both settle
    on "no pandas"; pyarrow still imports pandas when a pandas conversion itself is asked for (``to_pandas``: the
    shim retries the import then)."""
    if "pandas" in sys.modules:
        return
    blocker = _NoPandas()
    sys.meta_path.insert(0, blocker)
    try:
        pa.lib._pandas_api.have_pandas  # noqa: B018 - the property settles the shim
        pa.array([None, "x"])  # the converter's own one-time lookup
    finally:
        sys.meta_path.remove(blocker)


def columns_schema(columns: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> pa.Schema:
    """An Arrow schema from ``(name, kind)`` pairs."""
    return pa.schema([(name, _ARROW[kind]) for name, kind in columns])


def columns_ddl(columns: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> str:
    """A Spark DDL string from ``(name, kind)`` pairs."""
    return ", ".join(f"`{name}` {_DDL[kind]}" for name, kind in columns)


def schema(table: str) -> pa.Schema:
    """The Arrow schema of ``table``."""
    return columns_schema(COLUMNS[table])


def ddl(table: str) -> str:
    """The Spark DDL of ``table``."""
    return columns_ddl(COLUMNS[table])


def batches_arrow(cols: BatchColumns) -> pa.RecordBatch:
    """A range's batch rows as one Arrow record batch (array columns converted whole, with their null masks)."""
    sch = schema("batches")
    return pa.RecordBatch.from_arrays([_arrow(cols.columns[f.name], f.type, cols.nulls.get(f.name))
                                       for f in sch], schema=sch)


def _arrow(values: Any, kind: pa.DataType, nulls: Any) -> pa.Array:
    """One batch column as Arrow: a :class:`Coded` string column by a ``take`` of its labels, arrays whole."""
    if isinstance(values, Coded):
        return pa.array(values.labels, kind).take(pa.array(values.codes))
    return pa.array(values, kind, mask=nulls)


def rows_arrow(table: str, rows: list[dict[str, Any]]) -> pa.RecordBatch:
    """Dict rows of ``table`` as one Arrow record batch."""
    sch = schema(table)
    return pa.RecordBatch.from_arrays([pa.array([r[f.name] for r in rows], f.type) for f in sch], schema=sch)


def analysis_arrow(results: list[Analysis]) -> dict[str, pa.RecordBatch]:
    """The rows of several analyses, one record batch per table (``batches`` only if they carry batch rows)."""
    out = {
        "partitions": rows_arrow("partitions", [r.partition for r in results if r.partition is not None]),
        "producers": rows_arrow("producers", [p for r in results for p in r.producers]),
        "findings": rows_arrow("findings", [f for r in results for f in r.findings]),
    }
    for r in results:
        if r.batches is not None and len(r.batches):
            out.setdefault("batches_parts", []).append(batches_arrow(r.batches))  # type: ignore[arg-type]
    parts = out.pop("batches_parts", None)
    if parts:
        out["batches"] = pa.Table.from_batches(parts).combine_chunks().to_batches()[0]  # type: ignore[arg-type]
    return out


def sorted_rows(table: pa.Table, name: str) -> list[dict[str, Any]]:
    """A table's rows as dicts in :data:`SORT_KEYS` order (nulls first), for comparison and summaries."""
    return sort_rows(table.to_pylist(), name)


def sort_rows(rows: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """Rows of table ``name`` (dicts) sorted in place in :data:`SORT_KEYS` order (nulls first); returned."""
    keys = SORT_KEYS[name]
    rows.sort(key=lambda r: tuple((r[k] is not None, r[k] if r[k] is not None else 0) for k in keys))
    return rows
