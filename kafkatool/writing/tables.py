"""The scan's output directory: Parquet tables written into a staging directory beside the target and renamed
into place at the end, so a reader never sees a half-written scan and a failed scan leaves nothing behind.

``OUT/<table>/part-*.parquet`` for each table: a directory per table, as Spark writes them, so both engines
produce the same layout and any Parquet reader (pyarrow, Spark, DuckDB) loads a table by its directory.

An output in an object store (:class:`ObjectTableOutput`, ``--out s3://bucket/scans/x``) is staged under a hidden
prefix beside it and its objects moved into place at the end (an object store has no directory rename: each part
file is copied server-side, then the staging prefix deleted). Spark executors write their part files there
themselves (:func:`write_arrow_partition`), named by their partition, so a retried task replaces its own file.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from kafkatool.errors import UsageError
from kafkatool.writing.atomic import ensure_outside, output_errors, require_parent

ROW_GROUP_ROWS = 1 << 15
"""Rows gathered before a local part file gets a row group (a few MB of Arrow held: bounded whatever the scan)."""


class _RowGroups:
    """Arrow record batches appended to one Parquet part per table, written a row group at a time: batches are held
    until :data:`ROW_GROUP_ROWS` rows have come (a row group per small batch, a partition's few rows, makes the file
    large and slow to write and to read). Subclasses open the part (:meth:`_part_writer`)."""

    _writers: dict[str, Any]
    _pending: dict[str, list[Any]]
    _pending_rows: dict[str, int]

    def _part_writer(self, table: str, schema: Any) -> Any:
        raise NotImplementedError

    def append(self, table: str, batch: Any) -> None:
        """Append an Arrow record batch to ``table``'s part."""
        if table not in self._writers:
            self._writers[table] = self._part_writer(table, batch.schema)
            self._pending[table] = []
        if batch.num_rows:
            self._pending[table].append(batch)
            self._pending_rows[table] = self._pending_rows.get(table, 0) + batch.num_rows
            if self._pending_rows[table] >= ROW_GROUP_ROWS:
                self._flush(table)

    def _flush(self, table: str) -> None:
        import pyarrow as pa

        pending = self._pending[table]
        if pending:
            self._writers[table].write_table(pa.Table.from_batches(pending), row_group_size=2 * ROW_GROUP_ROWS)
            pending.clear()
            self._pending_rows[table] = 0


class TableOutput(_RowGroups):
    """A scan output directory being written; use as a context manager, then :meth:`commit`."""

    def __init__(self, out: Path, inputs: Iterable[Path], *, force: bool = False) -> None:
        self.out = Path(out)
        ensure_outside(self.out, list(inputs))
        if self.out.is_symlink():
            raise UsageError(f"refusing to write {self.out}: it is a symbolic link")
        if self.out.exists() and not force:
            raise UsageError(f"refusing to write {self.out}: it already exists (use --force to replace it)")
        if self.out.exists() and not self.out.is_dir():
            raise UsageError(f"refusing to write {self.out}: it exists and is not a directory")
        require_parent(self.out)  # as every output: a missing parent is refused, not made
        with output_errors(self.out):
            self.staging = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.", suffix=".partial",
                                                 dir=self.out.parent))
        mask = os.umask(0o022)
        os.umask(mask)
        os.chmod(self.staging, 0o777 & ~mask)  # mkdtemp makes 0700; the scan gets the user's usual mode
        self._writers: dict[str, Any] = {}
        self._pending: dict[str, list[Any]] = {}
        self._pending_rows: dict[str, int] = {}  # rows held in _pending (summing them per append is quadratic)
        self._committed = False

    def table_dir(self, table: str) -> Path:
        """The staging directory of ``table`` (created), for engines that write their own part files."""
        path = self.staging / table
        path.mkdir(exist_ok=True)
        return path

    def _part_writer(self, table: str, schema: Any) -> Any:
        """``table``'s single local part file."""
        import pyarrow.parquet as pq

        return pq.ParquetWriter(str(self.table_dir(table) / "part-00000.parquet"), schema)

    def write_spark(self, table: str, frame: Any) -> None:
        """Have Spark write DataFrame ``frame`` as ``table``'s part files (into the staging directory)."""
        frame.write.mode("overwrite").parquet(str(self.staging / table))

    def staged_rows(self, table: str) -> list[dict[str, Any]]:
        """The rows written so far to ``table`` (a small table: the scan's summary reads them back)."""
        import pyarrow.parquet as pq

        return pq.read_table(str(self.table_dir(table))).to_pylist()

    def staged_batches(self, table: str, columns: list[str]) -> Iterator[Any]:
        """The record batches of the part files Spark wrote to ``table`` so far (``columns`` only)."""
        import pyarrow.dataset as ds

        yield from ds.dataset(str(self.table_dir(table)), format="parquet").to_batches(columns=columns)

    def staged_count(self, table: str) -> int:
        """How many rows ``table`` holds, from the part files' footers (no data read)."""
        import pyarrow.dataset as ds

        return ds.dataset(str(self.table_dir(table)), format="parquet").count_rows()

    def commit(self) -> None:
        """Close the part files and move the finished scan into place (replacing an old one with --force)."""
        for table, writer in self._writers.items():
            self._flush(table)
            writer.close()
        self._writers.clear()
        for leftover in self.staging.rglob("*"):
            if (leftover.name.startswith(".") and leftover.name.endswith(".crc")) or leftover.name == "_SUCCESS":
                leftover.unlink()  # Spark's checksum sidecars and marker: not part of the tables
        old = None
        if self.out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.", suffix=".old", dir=self.out.parent))
            os.rename(self.out, old / "previous")
        os.rename(self.staging, self.out)
        self._committed = True
        if old is not None:
            shutil.rmtree(old)

    def __enter__(self) -> TableOutput:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if not self._committed:
            for writer in self._writers.values():
                with contextlib.suppress(Exception):  # cleaning up after a failure already being raised
                    writer.close()
            shutil.rmtree(self.staging, ignore_errors=True)


class ObjectTableOutput(_RowGroups):
    """:class:`TableOutput` for an object store: ``fs`` (a :mod:`pyarrow.fs` file system) and ``key`` (the
    output's path in it), ``url`` its name for messages; ``inputs`` are the inputs' URLs."""

    def __init__(self, url: str, fs: Any, key: str, inputs: Iterable[str], *, force: bool = False) -> None:
        import pyarrow.fs as pafs

        self.out, self.fs, self.key = url, fs, key.rstrip("/")
        for src in inputs:
            root = str(src).rstrip("/")
            if url.rstrip("/") == root or url.startswith(root + "/"):
                raise UsageError(f"refusing to write {url}: it is inside the input {src}")
        try:
            found = fs.get_file_info(self.key).type
            parent = self.key.rsplit("/", 1)[0] if "/" in self.key else self.key
            bucket = self.key.split("/", 1)[0]  # prefixes need not exist in an object store; the bucket must
            parent_type = fs.get_file_info(bucket).type
        except Exception as err:  # the store refused or could not be reached
            raise UsageError(f"cannot write {url}: {_first(err)}") from None
        if found == pafs.FileType.File:
            raise UsageError(f"refusing to write {url}: it exists and is not a directory (a prefix)")
        if found == pafs.FileType.Directory and not force:
            raise UsageError(f"refusing to write {url}: it already exists (use --force to replace it)")
        if parent_type == pafs.FileType.NotFound:
            raise UsageError(f"refusing to write {url}: its bucket {bucket} does not exist (create it first)")
        name = self.key.rsplit("/", 1)[-1]
        self.staging = f"{parent}/.{name}.{uuid.uuid4().hex}.partial" if "/" in self.key else \
            f"{self.key}/.{uuid.uuid4().hex}.partial"
        self._writers: dict[str, Any] = {}
        self._pending: dict[str, list[Any]] = {}
        self._pending_rows: dict[str, int] = {}
        self._committed = False

    def table_key(self, table: str) -> str:
        """The staging prefix of ``table``."""
        return f"{self.staging}/{table}"

    def _part_writer(self, table: str, schema: Any) -> Any:
        """``table``'s single part object (a multipart upload, bounded memory)."""
        import pyarrow.parquet as pq

        return pq.ParquetWriter(f"{self.table_key(table)}/part-00000.parquet", schema, filesystem=self.fs)

    def write_spark(self, table: str, frame: Any) -> None:
        """Have Spark's executors write ``frame`` as ``table``'s part objects, one per partition of the frame."""
        from pyspark.sql.pandas.types import to_arrow_schema

        schema = to_arrow_schema(frame.schema)
        self.fs.delete_dir_contents(self.table_key(table), missing_dir_ok=True)  # a redone write starts afresh
        write = functools.partial(write_arrow_partition, self.fs, self.table_key(table), schema)
        frame.mapInArrow(write, "rows LONG").collect()

    def staged_rows(self, table: str) -> list[dict[str, Any]]:
        """As :meth:`TableOutput.staged_rows`."""
        import pyarrow.parquet as pq

        return pq.read_table(self.table_key(table), filesystem=self.fs).to_pylist()

    def staged_batches(self, table: str, columns: list[str]) -> Iterator[Any]:
        """As :meth:`TableOutput.staged_batches`."""
        import pyarrow.dataset as ds

        yield from ds.dataset(self.table_key(table), filesystem=self.fs, format="parquet").to_batches(
            columns=columns)

    def staged_count(self, table: str) -> int:
        """As :meth:`TableOutput.staged_count`."""
        import pyarrow.dataset as ds

        return ds.dataset(self.table_key(table), filesystem=self.fs, format="parquet").count_rows()

    def commit(self) -> None:
        """Close the part objects and move them into place (after deleting an old output, with --force)."""
        import pyarrow.fs as pafs

        for table, writer in self._writers.items():
            self._flush(table)
            writer.close()
        self._writers.clear()
        try:
            if self.fs.get_file_info(self.key).type == pafs.FileType.Directory:
                self.fs.delete_dir(self.key)
            staged = self.fs.get_file_info(pafs.FileSelector(self.staging, recursive=True))
            for entry in sorted(staged, key=lambda e: e.path):
                if entry.type == pafs.FileType.File:
                    self.fs.move(entry.path, self.key + entry.path[len(self.staging):])
            self.fs.delete_dir(self.staging)
        except Exception as err:
            raise UsageError(f"cannot write {self.out}: {_first(err)}") from None
        self._committed = True

    def __enter__(self) -> ObjectTableOutput:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if not self._committed:
            for writer in self._writers.values():
                with contextlib.suppress(Exception):  # cleaning up after a failure already being raised
                    writer.close()
            with contextlib.suppress(Exception):
                self.fs.delete_dir(self.staging)


def write_arrow_partition(fs: Any, prefix: str, schema: Any, batches: Iterator[Any]) -> Iterator[Any]:
    """In a Spark task: write this partition's Arrow batches as ``prefix/part-NNNNN.parquet`` (named by the
    partition, so a retried task replaces its own file) and yield one row with the count."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark import TaskContext

    context = TaskContext.get()
    number = context.partitionId() if context is not None else 0
    rows = 0
    with pq.ParquetWriter(f"{prefix}/part-{number:05d}-spark.parquet", schema, filesystem=fs) as writer:
        for batch in batches:
            if batch.num_rows:
                writer.write_batch(batch.cast(schema) if batch.schema != schema else batch)
                rows += batch.num_rows
    yield pa.RecordBatch.from_pydict({"rows": [rows]})


def _first(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:300] if text else type(err).__name__
