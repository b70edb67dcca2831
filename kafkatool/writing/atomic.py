"""Atomic file creation: the only way kafkatool writes anything.

A file is written to a temporary name in its destination directory, flushed and fsynced, then renamed
over the target, so a reader never sees half a file. Writing inside an input directory is refused.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from kafkatool.errors import UsageError


def ensure_outside(target: Path, inputs: Iterable[Path]) -> None:
    """Refuse an output path inside any input directory: evidence is never modified."""
    resolved = target.resolve()
    for src in inputs:
        base = src.resolve()
        root = base if base.is_dir() else base.parent
        if resolved == root or root in resolved.parents:
            raise UsageError(f"refusing to write {target}: it is inside the input {src}")


def _umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: Path, data: bytes) -> None:
    """Create or replace ``path`` with ``data`` atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600 files; outputs get the user's usual mode
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_tree(tree: Mapping[str, bytes], out: Path) -> None:
    """Write every file of ``tree`` (relative ``/`` paths) under ``out``, in sorted order, each atomically."""
    for name in sorted(tree):
        write_atomic(out.joinpath(*name.split("/")), tree[name])
