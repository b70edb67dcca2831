"""Writing ``salvage``'s output: the repaired log dir, streamed into a staging directory beside ``--out`` and
renamed into place whole (as :func:`kafkatool.writing.atomic.replace_tree`), and the record export (JSON lines or
Parquet), written to a temporary name and renamed. Batch bytes come from the caller's ``fetch`` (the reading
layer), one batch at a time, so memory stays bounded whatever the log's size."""

from __future__ import annotations

import collections
import itertools
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Protocol

import orjson

from kafkatool.shell import json_safe
from kafkatool.writing.atomic import _inside, _umask, leftover_staging, replacing, write_atomic

Fetch = Callable[[], bytes]


class Copied(Protocol):
    """A piece of an output file copied from an input by the reading layer (``reading.salvage_sources.ByteRange``):
    the bytes ``[start, end)`` of the input ``path``, copied into the descriptor given from its byte given, each
    chunk reported to ``landed`` once written (``False`` from it stops the copy)."""

    path: str
    start: int
    end: int

    def copy_into(self, out: int, at: int, landed: Callable[[int, int], bool | None] | None = None) -> int: ...

    def after(self, n: int) -> Copied: ...


SWITCH_INTERVAL = 0.0005
"""The interpreter's switch interval while files are copied ahead (:meth:`StagedDir.ahead`): the copying thread
waits for the GIL after each chunk the kernel copied, and with the default 5 ms, against a main thread scanning in
Python, a 1 GiB copy of 8 MiB chunks lost up to 0.6 s that way (``salvage --out`` of a damaged 1 GiB segment of
16 KiB batches, median of 7: 0.81 s at 5 ms, 0.76 s at 0.5 ms; 2026-11-28)."""

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


def _agreeing(a: list[Copied], b: list[Copied]) -> int:
    """How many bytes from the start two piece lists write alike: the same input bytes at the same output place."""
    i = j = 0
    at = 0  # output position reached in both
    ia = ja = 0  # bytes of a[i] and b[j] already behind ``at``
    while i < len(a) and j < len(b):
        x, y = a[i], b[j]
        if x.path != y.path or x.start + ia != y.start + ja:
            return at
        step = min(x.end - x.start - ia, y.end - y.start - ja)
        at += step
        ia += step
        ja += step
        if ia == x.end - x.start:
            i, ia = i + 1, 0
        if ja == y.end - y.start:
            j, ja = j + 1, 0
    return at


def _beyond(pieces: list[Copied], n: int) -> Iterator[Copied]:
    """What ``pieces`` lay out after their first ``n`` bytes."""
    for piece in pieces:
        size = piece.end - piece.start
        if n < size:
            yield piece.after(n)
        n = max(0, n - size)


class _Ahead:
    """A staged file copied ahead, in the background, from pieces of the inputs (:meth:`StagedDir.ahead`): how far
    the copy got, where it must stop, and the job it continues (the worker thread and the writer share it under
    ``StagedDir._lock``)."""

    def __init__(self, dest: Path, pieces: list[Copied]) -> None:
        self.dest = dest
        self.pieces = pieces
        self.size = sum(p.end - p.start for p in pieces)
        self.before: _Ahead | None = None  # the copy of the same file this one goes on from
        self.fd = -1
        self.done = 0
        self.limit = self.size
        self.started = self.failed = False
        self.finished = threading.Event()


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
        self._jobs: dict[str, _Ahead] = {}  # the latest job of each file copied ahead and not yet streamed
        self._queue: collections.deque[_Ahead] = collections.deque()
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None
        self._switch: float | None = None  # the interpreter's switch interval while copies ahead run

    def write(self, name: str, data: bytes) -> None:
        """One small file."""
        write_atomic(_inside(self.staging, name), data)

    def ahead(self, files: Iterable[tuple[str, Sequence[Copied]]], complete: Iterable[str] = ()) -> None:
        """Copy these files in a background thread, one after another, while the caller is still working out what
        they hold (salvage's guesses before its scan, then its plan): the disk writes them meanwhile. A file given
        again replaces its earlier pieces, and what the copy already wrote of them is kept as far as the two agree.
        :meth:`stream` keeps what matches its own pieces and copies the rest; a file never streamed is removed
        before :meth:`commit`. ``complete`` names directories whose files ``files`` are all of: any other file of
        theirs handed earlier is stopped. A copy's errors are only its own failure: :meth:`stream` then copies the
        file itself and meets (and reports) them there."""
        files = list(files)
        given = {name for name, _ in files}
        for d in complete:
            files += [(name, []) for name, job in sorted(self._jobs.items())
                      if name.startswith(d + "/") and name not in given and job.size]
        with self._lock:
            for name, pieces in files:
                job = _Ahead(_inside(self.staging, name), list(pieces))
                old = self._jobs.get(name)
                self._jobs[name] = job
                queued = False
                if old is not None and not old.started:  # the new pieces take the old ones' turn
                    if old in self._queue:
                        self._queue[self._queue.index(old)] = job
                        queued = True
                    old = old.before  # the copy still writing the file, if any
                if old is None:
                    if job.size and not queued:
                        self._queue.append(job)
                    continue
                old.limit = min(old.limit, _agreeing(old.pieces, job.pieces))
                job.before = old  # it goes on from where the old copy stops
                if not queued:
                    self._queue.appendleft(job)
            if self._queue and self._worker is None:
                if self._switch is None:
                    self._switch = sys.getswitchinterval()
                    sys.setswitchinterval(min(self._switch, SWITCH_INTERVAL))
                self._worker = threading.Thread(target=self._copy_ahead, name="kafkatool-copy-ahead", daemon=True)
                self._worker.start()

    def _copy_ahead(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    self._worker = None
                    return
                job = self._queue.popleft()
                job.started = True
            try:
                self._run(job)
            except Exception:  # the copy ahead is lost, not the run: stream() copies the file itself
                job.failed = True
            finally:
                job.finished.set()

    def _run(self, job: _Ahead) -> None:
        kept = 0
        if job.before is not None:
            old = job.before
            old.finished.wait()
            job.fd, old.fd = old.fd, -1
            kept = 0 if old.failed else min(old.limit, old.done)
        if job.fd < 0:
            job.dest.parent.mkdir(parents=True, exist_ok=True)
            job.fd = os.open(job.dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        job.done = kept

        def landed(at: int, n: int) -> bool:
            _write_back(job.fd, at, n)
            job.done = at + n
            return job.done < job.limit

        at = kept
        for piece in _beyond(job.pieces, kept):
            n = piece.copy_into(job.fd, at, landed)
            at += n
            if job.done >= job.limit or n < piece.end - piece.start:
                return
        job.done = at

    def _claim(self, name: str, pieces: list[Copied]) -> tuple[int, int]:
        """The descriptor and the bytes of ``name``'s copy ahead that ``pieces`` keep (``(-1, 0)`` without one): a
        copy not started is dropped; one started is stopped where it parts from ``pieces``, and waited for."""
        with self._lock:
            job = self._jobs.pop(name, None)
            if job is None:
                return -1, 0
            if not job.started:
                if job in self._queue:
                    self._queue.remove(job)
                job = job.before  # a copy it was to continue is still writing the file: that one is claimed
                if job is None:
                    return -1, 0
            job.limit = min(job.limit, _agreeing(job.pieces, pieces))
        job.finished.wait()
        if job.failed:
            if job.fd >= 0:
                os.close(job.fd)
            return -1, 0
        return job.fd, min(job.limit, job.done)

    def stream(self, name: str, pieces: Iterable[bytes | Copied]) -> int:
        """One file from ``pieces`` written in order (bytes, or ranges the kernel copies: :class:`Copied`), then
        synced; the bytes written. Each :data:`WRITEBACK_BYTES` written are handed to the disk at once
        (:func:`_write_back`), so the sync at the end waits for little more than the last of them. Of a file copied
        :meth:`ahead`, what the copy wrote as these pieces would is kept."""
        it: Iterator[bytes | Copied] = iter(pieces)
        ranges: list[Copied] = []
        fd, kept = -1, 0
        if name in self._jobs:
            for piece in it:  # the leading ranges (a segment is ranges only)
                if isinstance(piece, bytes | bytearray | memoryview):
                    it = itertools.chain((piece,), it)
                    break
                ranges.append(piece)
            fd, kept = self._claim(name, ranges)
        dest = _inside(self.staging, name)
        if fd < 0:
            dest.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        rest: list[bytes | Copied] = list(_beyond(ranges, kept))
        try:
            total = kept
            pending = kept
            for piece in itertools.chain(rest, it):
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
            os.ftruncate(fd, total)  # a copy ahead that went past where these pieces end
            os.fsync(fd)
        finally:
            os.close(fd)
        return total

    def _drop_ahead(self) -> None:
        """Stop the copies ahead and remove the files no :meth:`stream` claimed."""
        with self._lock:
            self._queue.clear()
            left = list(self._jobs.values())
            self._jobs.clear()
            for job in left:
                job.limit = 0
            worker = self._worker
        if worker is not None:
            worker.join()
        if self._switch is not None:
            sys.setswitchinterval(self._switch)
            self._switch = None
        for job in left:
            while job is not None:
                if job.fd >= 0:
                    os.close(job.fd)
                    job.fd = -1
                if job.started:
                    job.dest.unlink(missing_ok=True)
                job = job.before

    def commit(self) -> None:
        """Rename the staging directory to ``out`` (an existing ``out`` is replaced whole)."""
        self._drop_ahead()
        old = None
        if self.out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.", suffix=".old", dir=self.out.parent))
            os.rename(self.out, old / "previous")
        os.rename(self.staging, self.out)
        if old is not None:
            shutil.rmtree(old)

    def abort(self) -> None:
        """Remove the staging directory."""
        self._drop_ahead()
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
