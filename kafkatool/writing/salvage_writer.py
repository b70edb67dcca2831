"""Writing ``salvage``'s output: the repaired log dir, streamed into a staging directory beside ``--out`` and
renamed into place whole (as :func:`kafkatool.writing.atomic.replace_tree`), and the record export (JSON lines or
Parquet), written to a temporary name and renamed. Batch bytes come from the caller's ``fetch`` (the reading
layer), one batch at a time, so memory stays bounded whatever the log's size."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Protocol

import orjson

from kafkatool.shell import json_safe
from kafkatool.writing.atomic import _inside, _umask, leftover_staging, replacing, write_atomic

Fetch = Callable[[], bytes]


class Copied(Protocol):
    """A piece of an output file copied from an input by the reading layer (``reading.salvage_sources.ByteRange``):
    into the descriptor given, from its byte given, each chunk reported to ``landed`` once written."""

    def copy_into(self, out: int, at: int, landed: Callable[[int, int], None] | None = None) -> int: ...


WRITEBACK_BYTES = 8 << 20
"""Bytes of a streamed file handed to the disk at a time (``reading.salvage_sources.COPY_CHUNK``'s figures)."""


def _write_back(fd: int, at: int, size: int) -> None:
    """Start writing ``[at, at + size)`` of ``fd`` to the disk now, without waiting (Linux starts the write-back of
    a range's dirty pages on ``POSIX_FADV_DONTNEED``, and later drops them from the page cache once clean): the
    final ``fsync`` then overlaps the copy instead of following it. Nothing where the call is missing or fails."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is not None:
        with suppress(OSError):
            advise(fd, at, size, os.POSIX_FADV_DONTNEED)


class StagedDir:
    """A directory being written: files go into ``staging``; :meth:`commit` renames it to ``out``."""

    def __init__(self, out: Path) -> None:
        self.out = out
        out.parent.mkdir(parents=True, exist_ok=True)
        self.removed = leftover_staging(out)
        for stale in self.removed:
            shutil.rmtree(stale, ignore_errors=True)
        self.staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
        os.chmod(self.staging, 0o777 & ~_umask())

    def write(self, name: str, data: bytes) -> None:
        """One small file."""
        write_atomic(_inside(self.staging, name), data)

    def stream(self, name: str, pieces: Iterable[bytes | Copied]) -> int:
        """One file from ``pieces`` written in order (bytes, or ranges the kernel copies: :class:`Copied`), then
        synced; the bytes written. Each :data:`WRITEBACK_BYTES` written are handed to the disk at once
        (:func:`_write_back`), so the sync at the end waits for little more than the last of them."""
        dest = _inside(self.staging, name)
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        try:
            total = 0
            pending = 0
            for piece in pieces:
                if isinstance(piece, bytes | bytearray | memoryview):
                    view = memoryview(piece)
                    while view:
                        n = os.pwrite(fd, view, total)
                        view, total = view[n:], total + n
                    if total - pending >= WRITEBACK_BYTES:
                        _write_back(fd, pending, total - pending)
                        pending = total
                else:
                    if total > pending:
                        _write_back(fd, pending, total - pending)
                    total += piece.copy_into(fd, total, lambda at, n: _write_back(fd, at, n))
                    pending = total
            if total > pending:
                _write_back(fd, pending, total - pending)
            os.fsync(fd)
        finally:
            os.close(fd)
        return total

    def commit(self) -> None:
        """Rename the staging directory to ``out`` (an existing ``out`` is replaced whole)."""
        old = None
        if self.out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.", suffix=".old", dir=self.out.parent))
            os.rename(self.out, old / "previous")
        os.rename(self.staging, self.out)
        if old is not None:
            shutil.rmtree(old)

    def abort(self) -> None:
        """Remove the staging directory."""
        shutil.rmtree(self.staging, ignore_errors=True)


@contextmanager
def staged_dir(out: Path) -> Iterator[StagedDir]:
    """A :class:`StagedDir` committed when the block ends normally, removed otherwise."""
    staged = StagedDir(out)
    try:
        yield staged
    except BaseException:
        staged.abort()
        raise
    staged.commit()


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    """Rows as JSON lines, atomically; the rows written. Every string is escaped as all of kafkatool's JSON
    (:func:`kafkatool.shell.json_safe`): a topic name, header key or file name holding a C1 control, a bidi
    override or a line separator is written ``\\uXXXX``, never raw."""
    n = 0
    with replacing(path) as fh:
        for row in rows:
            fh.write(json_safe(orjson.dumps(row)))
            fh.write(b"\n")
            n += 1
    return n


PARQUET_ROWS = 50_000
"""Rows per Parquet row group at most (bounds the rows held at once)."""
PARQUET_BYTES = 8 << 20
"""Key, value and header bytes per Parquet row group at most: a block of rows is held twice (the rows, then the
Arrow table); by rows alone, 1 GiB of 1 KiB records exported at 377 MB peak (199 MB with this cap), and a block of
1 MiB records would have been 50 GB."""


def _row_bytes(row: dict[str, Any]) -> int:
    size = 64
    for k in ("key", "value"):
        if row[k] is not None:
            size += len(row[k])
    for h in row["headers"]:
        size += len(h["key"]) + (len(h["value"]) if h["value"] is not None else 0)
    return size


def write_parquet(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    """Rows as Parquet (keys, values and header values as binary columns), atomically; the rows written, a row
    group at a time (:data:`PARQUET_ROWS`, :data:`PARQUET_BYTES`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    header = pa.struct([("key", pa.string()), ("value", pa.binary())])
    schema = pa.schema([
        ("topic", pa.string()), ("partition", pa.int32()), ("offset", pa.int64()), ("timestamp", pa.int64()),
        ("timestamp_type", pa.string()), ("key", pa.binary()), ("value", pa.binary()),
        ("headers", pa.list_(header)), ("producer_id", pa.int64()), ("producer_epoch", pa.int16()),
        ("sequence", pa.int32()), ("transaction_state", pa.string()), ("leader_epoch", pa.int32()),
        ("file", pa.string()), ("position", pa.int64()), ("replica", pa.int32()), ("source_kind", pa.string())])
    names = schema.names
    n = 0
    with replacing(path) as fh:
        writer = pq.ParquetWriter(fh, schema)
        # a block is held as columns of values, not as row dicts (a dict of 17 fields costs about 1 KiB a row: the
        # export of 383,479 one-record rows peaked at 264 MB with 50,000 dicts a block, 234 MB with columns;
        # measured 2026-11-28, before Arrow's C allocator and the refused pandas import took it to 159 MB)
        block: dict[str, list[Any]] = {k: [] for k in names}
        count = held = 0
        for row in rows:
            for k in names:
                block[k].append(row[k])
            count += 1
            held += _row_bytes(row)
            if count >= PARQUET_ROWS or held >= PARQUET_BYTES:
                writer.write_table(pa.Table.from_pydict(block, schema))
                n += count
                block, count, held = {k: [] for k in names}, 0, 0
        if count or n == 0:
            writer.write_table(pa.Table.from_pydict(block, schema))
            n += count
        writer.close()
    return n
