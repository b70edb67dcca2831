"""Reading a file that may legitimately be absent: the sibling ``.log``/``.index`` of an index being dumped.

Kafka's DumpLogSegments opens the other files of a segment by name (``NNN.log`` and ``NNN.index`` beside
``NNN.timeindex``); a missing one is not an input error but part of what it reports. These helpers
return ``None`` for a file that does not exist and otherwise behave like :mod:`kafkatool.reading.files`
(read-only, never created, never modified).
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kafkatool.reading.files import mapped, read_bytes
from kafkatool.reading.objects import input_path, is_remote


def exists(path: str | Path) -> bool:
    """Whether ``path`` names an existing file system entry (no error for a missing one)."""
    if is_remote(path):
        return input_path(str(path)).exists()
    return os.path.lexists(str(path))


@contextmanager
def mapped_if_exists(path: str | Path) -> Iterator[bytes | mmap.mmap | None]:
    """The file mapped read-only, or ``None`` when there is no such file."""
    if not exists(path):
        yield None
        return
    with mapped(path) as buf:
        yield buf


def read_if_exists(path: str | Path) -> bytes | None:
    """The file's bytes, or ``None`` when there is no such file."""
    if not exists(path):
        return None
    return read_bytes(path)


def absolute_path(path: str | Path) -> str:
    """``java.io.File.getAbsolutePath()``: the path resolved against the working directory, not normalised."""
    name = str(path)
    if is_remote(name):
        return name
    return name if os.path.isabs(name) else os.path.join(os.getcwd(), name)
