"""Opening input files: read-only, memory-mapped, never modified.

This is the only module that opens evidence. Files are opened ``O_RDONLY`` and mapped with
``ACCESS_READ`` (Kafka's own DumpLogSegments once opened indexes read-write, KAFKA-5104: we never do).
Every OS failure becomes an :class:`~kafkatool.errors.UnreadableInputError` naming the path.

The evidence boundary is drawn here, once, for every command: a directory is listed through :func:`survey`, which
hands back what may be read and, named, what is not (:class:`Refusal`): a symbolic link leading out of the tree
the user gave (unless ``--follow-links``), a broken link, and any FIFO, socket or device, directly or through a
link. Those are never opened (opening a FIFO blocks; a device never ends). :func:`mapped` and :func:`read_bytes`
open regular files only, whatever a caller asks.

Every function here also takes an object in an object store (an URL string or a
:class:`~kafkatool.reading.objects.ObjectPath`, see :mod:`kafkatool.reading.objects`): it is read through
:mod:`pyarrow.fs` (ranged reads; a large object read whole is streamed to a spill file and mapped, never held
in memory), and an object store holds nothing to refuse.
"""

from __future__ import annotations

import mmap
import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafkatool.errors import UnreadableInputError
from kafkatool.model import Defect, LogDirData, PartitionData, Severity
from kafkatool.reading.context import current_limits, evidence_root
from kafkatool.reading.objects import (
    ObjectPath,
    input_path,
    is_remote,
    mapped_object,
    object_size,
    read_object,
    read_range,
)

#: The codes of the findings a refused entry becomes.
LINK_OUT_OF_TREE = "link-out-of-tree"
BROKEN_LINK = "broken-link"
SPECIAL_FILE = "special-file"
REFUSAL_CODES = frozenset({LINK_OUT_OF_TREE, BROKEN_LINK, SPECIAL_FILE})


def _remote(path: str | Path) -> ObjectPath:
    """``path`` (an object store's URL or path) as an :class:`ObjectPath`."""
    return path if isinstance(path, ObjectPath) else input_path(str(path))  # type: ignore[return-value]


def _reason(err: OSError) -> str:
    """A short human reason for an OS error."""
    if isinstance(err, FileNotFoundError):
        return "no such file or directory"
    if isinstance(err, IsADirectoryError):
        return "is a directory"
    if isinstance(err, PermissionError):
        return "permission denied"
    return err.strerror or str(err)


def file_type(mode: int) -> str:
    """What a non-regular file is, in words (``a FIFO``, ``a character device``...)."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def open_regular(name: str) -> int:
    """A read-only descriptor on ``name``, which must be a regular file: anything else is refused before it is
    opened (checked again on the descriptor, opened non-blocking, in case the entry changed in between)."""
    try:
        mode = os.stat(name).st_mode
        if not stat.S_ISREG(mode):
            raise UnreadableInputError(name, f"{file_type(mode)}, not a regular file: not read")
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as err:
        raise UnreadableInputError(name, _reason(err)) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UnreadableInputError(name, f"{file_type(mode)}, not a regular file: not read")
    return fd


@contextmanager
def mapped(path: str | Path) -> Iterator[bytes | mmap.mmap]:
    """The whole file as a read-only buffer (an ``mmap``; ``b""`` for an empty file)."""
    if is_remote(path):  # bytes of a small object, or a map of a larger one streamed to a spill file
        with mapped_object(_remote(path)) as buf:
            yield buf
        return
    name = str(path)
    fd = open_regular(name)
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
    if is_remote(path):
        return err
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
    if is_remote(path):
        return read_object(_remote(path), limit)
    name = str(path)
    fd = open_regular(name)
    try:
        with os.fdopen(fd, "rb") as fh:
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

    if is_remote(path):  # an object: its bytes, sliced alike
        data = read_bytes(path)
        whole = len(data) - len(data) % txn_index.ENTRY_SIZE
        return txn_index.parse_txn_index_tail(data[0:txn_index.zero_run_start(data, whole)],
                                              whole // txn_index.ENTRY_SIZE)
    name = str(path)
    fd = open_regular(name)
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


def read_span(path: str | Path, start: int, stop: int) -> bytes:
    """Bytes ``[start, stop)`` of a file (fewer at its end): a ``pread`` locally, one ranged read from a store."""
    if is_remote(path):
        return read_range(_remote(path), start, stop)
    name = str(path)
    fd = open_regular(name)
    try:
        return os.pread(fd, max(0, stop - start), start)
    except OSError as err:
        raise UnreadableInputError(name, _reason(err)) from None
    finally:
        os.close(fd)


def file_stamp(path: str | Path) -> tuple[int, int]:
    """Size and modification time (ns) of a file, or of an object (its listing's time: seconds)."""
    try:
        st = _remote(path).stat() if is_remote(path) else os.stat(str(path))
    except OSError as err:
        raise UnreadableInputError(str(path), _reason(err)) from None
    return st.st_size, st.st_mtime_ns


def read_text(path: str | Path) -> str:
    """A small text file decoded as UTF-8 (undecodable bytes replaced so they can still be reported)."""
    return read_bytes(path).decode("utf-8", errors="replace")


def file_size(path: str | Path) -> int:
    """Size in bytes, or :class:`UnreadableInputError`."""
    if is_remote(path):
        return object_size(_remote(path))
    try:
        return os.stat(str(path)).st_size
    except OSError as err:
        raise UnreadableInputError(str(path), _reason(err)) from None


@dataclass(frozen=True, slots=True)
class Refusal:
    """An entry of the evidence tree that is not read, and why: ``code`` is the finding's (:data:`LINK_OUT_OF_TREE`,
    :data:`BROKEN_LINK`, :data:`SPECIAL_FILE`), ``reason`` names what it is or points to."""

    path: Path
    code: str
    reason: str

    def defect(self, label: str, severity: Severity = "error") -> Defect:
        """The finding naming it as ``label`` (the file as the command's output names files)."""
        return Defect(self.code, label, None, "file type", self.reason, severity)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def refusal(entry: Path, root: str | None = None) -> Refusal | None:
    """Why ``entry`` (found in a directory of the evidence tree ``root``) is not read, or ``None`` when it may be:
    a regular file, a directory, or a symbolic link to one that resolves inside ``root`` (anywhere with
    ``--follow-links``). FIFOs, sockets and devices are never read, through a link or not."""
    if is_remote(entry):
        return None  # an object store has no links, FIFOs or devices
    name = str(entry)
    try:
        st = os.lstat(name)
    except OSError:
        return None  # gone since the listing: reading it says so
    if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
        return None
    if not stat.S_ISLNK(st.st_mode):
        return Refusal(entry, SPECIAL_FILE, f"{file_type(st.st_mode)}, not a regular file: never opened or read")
    try:
        target = os.readlink(name)
    except OSError:
        target = "?"
    try:
        mode = os.stat(name).st_mode
    except OSError:
        return Refusal(entry, BROKEN_LINK, f"a broken symbolic link (to {target}, which does not exist): not read")
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return Refusal(entry, SPECIAL_FILE, f"a symbolic link to {target}, {file_type(mode)}, not a regular file: "
                                            "never opened or read (not even with --follow-links)")
    if root is None or current_limits().follow_links:
        return None
    resolved = os.path.realpath(name)
    if _inside(resolved, os.path.realpath(root)):
        return None
    return Refusal(entry, LINK_OUT_OF_TREE, f"a symbolic link to {target}, outside the evidence tree {root}: not "
                                            "read (--follow-links reads it)")


def survey(path: str | Path) -> tuple[list[Path], list[Refusal]]:
    """A directory's entries, sorted by name, split into those that may be read and those refused (see
    :func:`refusal`; the tree is the one the directory lies in, see ``reading.context.evidence_root``). Every
    reader lists directories through here, so a refused entry is never read, and the readers that build findings
    name each one."""
    if is_remote(path):
        return sorted(_remote(path).iterdir(), key=lambda p: p.name), []  # type: ignore[arg-type]
    try:
        entries = sorted(Path(path).iterdir(), key=lambda p: p.name)
    except OSError as err:
        raise UnreadableInputError(str(path), _reason(err)) from None
    root = evidence_root(os.path.abspath(path))
    kept: list[Path] = []
    refused: list[Refusal] = []
    for entry in entries:
        why = refusal(entry, root)
        if why is None:
            kept.append(entry)
        else:
            refused.append(why)
    return kept, refused


def list_dir(path: str | Path) -> list[Path]:
    """Entries of a directory that may be read, sorted by name (:func:`survey` without the refused ones: for
    probes and sizes; a reader that reports findings takes :func:`survey`'s refusals too)."""
    return survey(path)[0]


def is_readable_file(path: str | Path) -> bool:
    """Whether a file named by its place (a parent log dir's checkpoint, ``partition.metadata``) exists and may be
    read: a regular file, or a link to one inside the tree its directory lies in (:func:`refusal`). What is not is
    left unread, like a file that is not there."""
    if is_remote(path):
        return _remote(path).is_file()
    entry = Path(path)
    return refusal(entry, evidence_root(os.path.abspath(entry.parent))) is None and entry.is_file()


def not_read(log_dirs: Iterable[LogDirData] = (), parts: Iterable[PartitionData] = ()) -> list[Defect]:
    """The entries of these log dirs and partitions that were named and not read (a link out of the evidence
    tree, a broken link, a FIFO, a socket, a device: ``reading.files.survey``), for the commands whose output has
    no other place for a file's defects."""
    return [d for holder in (*log_dirs, *parts) for d in holder.defects if d.code in REFUSAL_CODES]
