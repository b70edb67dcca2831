"""Opening input files: read-only, memory-mapped, never modified.

This is the only module that opens evidence. Files are opened ``O_RDONLY`` and mapped with
``ACCESS_READ`` (Kafka's own DumpLogSegments once opened indexes read-write, KAFKA-5104: we never do).
Every OS failure becomes an :class:`~kafkatool.errors.UnreadableInputError` naming the path.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from kafkatool.errors import UnreadableInputError


def _reason(err: OSError) -> str:
    """A short human reason for an OS error."""
    if isinstance(err, FileNotFoundError):
        return "no such file or directory"
    if isinstance(err, IsADirectoryError):
        return "is a directory"
    if isinstance(err, PermissionError):
        return "permission denied"
    return err.strerror or str(err)


@contextmanager
def mapped(path: str | Path) -> Iterator[bytes | mmap.mmap]:
    """The whole file as a read-only buffer (an ``mmap``; ``b""`` for an empty file)."""
    name = str(path)
    try:
        fd = os.open(name, os.O_RDONLY)
    except OSError as err:
        raise UnreadableInputError(name, _reason(err)) from None
    try:
        try:
            size = os.fstat(fd).st_size
            if size == 0:
                yield b""
                return
            mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as err:
            reason = _reason(err) if isinstance(err, OSError) else str(err)
            raise UnreadableInputError(name, reason) from None
        try:
            yield mm
        finally:
            # Views handed out may still be alive; the mapping is then released when they go.
            with suppress(BufferError):
                mm.close()
    finally:
        os.close(fd)


def explain_missing(err: UnreadableInputError) -> UnreadableInputError:
    """``err`` with a precise reason when its path does not exist: a broken symbolic link names its target.

    Commands word a missing input in their own terms ("not a partition directory"); this says why.
    """
    path = err.path
    try:
        if os.path.exists(path):
            return err
        if os.path.islink(path):
            return UnreadableInputError(path, f"broken symbolic link (to {os.readlink(path)}, which does not exist)")
    except (OSError, ValueError):
        return err
    if err.reason.startswith("no such file"):
        return err
    return UnreadableInputError(path, f"no such file or directory ({err.reason})")


def read_bytes(path: str | Path, limit: int | None = None) -> bytes:
    """The file's bytes (at most ``limit``), for small files: indexes, snapshots, checkpoints."""
    name = str(path)
    try:
        with open(name, "rb") as fh:
            return fh.read() if limit is None else fh.read(limit)
    except OSError as err:
        raise UnreadableInputError(name, _reason(err)) from None


class _Pread:
    """A file's bytes sliced by ``os.pread`` (nothing mapped, nothing kept)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __getitem__(self, span: slice) -> bytes:
        return os.pread(self.fd, span.stop - span.start, span.start)


def read_txn_index(path: str | Path) -> Any:
    """A ``.txnindex``'s entries (``schema.txn_index``): a zero-filled tail is found reading backwards a MiB at a
    time and only counted, so a file of zeros costs no memory whatever its size."""
    from kafkatool.schema import txn_index

    name = str(path)
    try:
        fd = os.open(name, os.O_RDONLY)
    except OSError as err:
        raise UnreadableInputError(name, _reason(err)) from None
    try:
        size = os.fstat(fd).st_size
        whole = size - size % txn_index.ENTRY_SIZE
        src = _Pread(fd)
        start = txn_index.zero_run_start(src, whole)
        return txn_index.parse_txn_index_tail(src[0:start], whole // txn_index.ENTRY_SIZE)
    except OSError as err:
        raise UnreadableInputError(name, _reason(err)) from None
    finally:
        os.close(fd)


def read_text(path: str | Path) -> str:
    """A small text file decoded as UTF-8 (undecodable bytes replaced so they can still be reported)."""
    return read_bytes(path).decode("utf-8", errors="replace")


def file_size(path: str | Path) -> int:
    """Size in bytes, or :class:`UnreadableInputError`."""
    try:
        return os.stat(str(path)).st_size
    except OSError as err:
        raise UnreadableInputError(str(path), _reason(err)) from None


def list_dir(path: str | Path) -> list[Path]:
    """Entries of a directory, sorted by name."""
    try:
        return sorted(Path(path).iterdir(), key=lambda p: p.name)
    except OSError as err:
        raise UnreadableInputError(str(path), _reason(err)) from None
