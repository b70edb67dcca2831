"""Atomic file creation: the only way kafkatool writes anything.

A file is written to a temporary name in its destination directory, flushed and fsynced, then renamed
over the target, so a reader never sees half a file; a directory tree is written into a staging directory
beside its destination and renamed into place whole. Writing inside an input directory is refused, so is
replacing an existing output without ``--force``, writing through a symbolic link, any file whose path
would leave the output directory, and an output whose parent directory does not exist (it is not created: a
mistyped path would otherwise become a tree of new directories). A failure to write is a usage error naming
the output, never an internal error.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from kafkatool.errors import UsageError


def ensure_outside(target: Path, inputs: Iterable[Path]) -> None:
    """Refuse an output path inside any input directory: evidence is never modified."""
    resolved = target.resolve()
    for src in inputs:
        base = src.resolve()
        root = base if base.is_dir() else base.parent
        if resolved == root or root in resolved.parents:
            raise UsageError(f"refusing to write {target}: it is inside the input {src}")


def require_parent(target: Path) -> None:
    """Refuse an output whose parent directory does not exist (or is no directory): it is not made silently."""
    parent = target.absolute().parent
    if not parent.is_dir():
        what = "is not a directory" if parent.exists() else "does not exist"
        raise UsageError(f"refusing to write {target}: its parent directory {parent} {what} (create it first)")


@contextmanager
def output_errors(target: Path) -> Iterator[None]:
    """Turn an OS failure while writing ``target`` (a read-only or special file system, no space, no permission)
    into a usage error naming it."""
    try:
        yield
    except OSError as err:
        raise UsageError(f"cannot write {target}: {err.strerror or err}") from None


def _refuse_link_or_dir(target: Path) -> None:
    if target.is_symlink():
        raise UsageError(f"refusing to write {target}: it is a symbolic link")


def prepare_output_file(target: Path, inputs: Iterable[Path], *, force: bool) -> None:
    """Check an output file before any work is written: outside the inputs, not a symbolic link, not a
    directory, and not an existing file unless ``force``."""
    ensure_outside(target, inputs)
    _refuse_link_or_dir(target)
    require_parent(target)
    if target.is_dir():
        raise UsageError(f"refusing to write {target}: it is a directory")
    if target.exists() and not force:
        raise UsageError(f"refusing to write {target}: it already exists (use --force to replace it)")


def prepare_output_dir(target: Path, inputs: Iterable[Path], *, force: bool) -> None:
    """Check an output directory: outside the inputs, not a symbolic link or a file, and new or empty unless
    ``force`` (which replaces it whole, see :func:`replace_tree`)."""
    ensure_outside(target, inputs)
    _refuse_link_or_dir(target)
    require_parent(target)
    if target.exists() and not target.is_dir():
        raise UsageError(f"refusing to write {target}: it exists and is not a directory")
    if target.is_dir() and any(target.iterdir()) and not force:
        raise UsageError(f"refusing to write {target}: it is not an empty directory (use --force to replace it)")


def _inside(out: Path, name: str) -> Path:
    """``out``/``name``, refused if ``name`` is absolute, climbs with ``..`` or goes through a symbolic link."""
    parts = name.split("/")
    if not name or name.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise UsageError(f"refusing to write {name!r}: not a plain relative path")
    dest = out.joinpath(*parts)
    probe = out
    for part in parts:
        probe = probe / part
        if probe.is_symlink():
            raise UsageError(f"refusing to write {dest}: {probe} is a symbolic link")
    return dest


def _umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: Path, data: bytes) -> None:
    """Create or replace ``path`` with ``data`` atomically (the directories of a tree being written are made;
    a command's own output was checked with :func:`prepare_output_file`)."""
    with output_errors(path):
        _write_atomic(path, data)


def _write_atomic(path: Path, data: bytes) -> None:
    with replacing(path) as fh:
        fh.write(data)


@contextmanager
def replacing(path: Path) -> Iterator[BinaryIO]:
    """A file written beside ``path`` (its directories made) that replaces ``path`` atomically, synced, when the
    block ends without an exception; removed otherwise."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600 files; outputs get the user's usual mode
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_tree(tree: Mapping[str, bytes], out: Path) -> None:
    """Write every file of ``tree`` (relative ``/`` paths) under ``out``, in sorted order, each atomically;
    no file is written through a symbolic link or outside ``out``."""
    for name in sorted(tree):
        write_atomic(_inside(out, name), tree[name])


def leftover_staging(out: Path) -> list[Path]:
    """Staging directories a killed earlier run of :func:`replace_tree` left beside ``out``
    (``.<name>.*.partial``, ``.<name>.*.old``)."""
    if not out.parent.is_dir():
        return []
    return sorted(p for p in out.parent.glob(f".{out.name}.*") if p.is_dir() and not p.is_symlink()
                  and p.suffix in (".partial", ".old"))


def replace_tree(tree: Mapping[str, bytes], out: Path) -> list[Path]:
    """Make ``out`` hold exactly ``tree``: written into a staging directory beside it, then renamed into place,
    so ``out`` is never seen half written (an existing ``out`` is replaced: check with :func:`prepare_output_dir`).
    Staging directories an interrupted earlier run left beside ``out`` are removed; they are returned, so the
    command can say so."""
    with output_errors(out):
        return _replace_tree(tree, out)


def _replace_tree(tree: Mapping[str, bytes], out: Path) -> list[Path]:
    out.parent.mkdir(parents=True, exist_ok=True)
    removed = leftover_staging(out)
    for stale in removed:
        shutil.rmtree(stale, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
    try:
        os.chmod(staging, 0o777 & ~_umask())
        write_tree(tree, staging)
        old = None
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
            os.rename(out, old / "previous")
        os.rename(staging, out)
        if old is not None:
            shutil.rmtree(old)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return removed
