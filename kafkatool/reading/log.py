"""Reading ``.log`` segments (and KRaft ``.checkpoint`` snapshots, which share the layout) from disk."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kafkatool.errors import UnreadableInputError
from kafkatool.model import Defect, LogEntry
from kafkatool.reading.context import resolve
from kafkatool.reading.files import mapped
from kafkatool.schema.codecs import ReadLimits
from kafkatool.schema.log_segment import FastEntries, WalkItem, not_a_segment, walk_log


@contextmanager
def open_log(path: str | Path, *, deep: bool = False, verify_crc: bool = True, max_bytes: int | None = None,
             label: str | None = None, limits: ReadLimits | None = None,
             fast: FastEntries | None = None) -> Iterator[Iterator[WalkItem]]:
    """Map a segment read-only and walk it: entries in order, with defects where the bytes are bad.

    ``label`` is the name used in defects (defaults to the path as given). A file that is not a segment at all
    (:func:`not_a_segment`) is unreadable input, not a damaged segment. ``limits``: the decompression cap of a
    ``deep`` walk (the current limits when ``None``, see :mod:`kafkatool.reading.context`). ``fast``: a caller's
    own handling of runs of entries (``schema.log_segment.FastEntries``).
    """
    name = label if label is not None else str(path)
    cap = resolve(limits).max_decompressed_bytes
    with mapped(path) as buf:
        reason = not_a_segment(buf, max_bytes)
        if reason is not None:
            raise UnreadableInputError(name, reason)
        yield walk_log(buf, name, deep=deep, verify_crc=verify_crc, end=max_bytes, max_output=cap, fast=fast)


def read_log(path: str | Path, **kwargs: object) -> tuple[list[LogEntry], list[Defect]]:
    """Every entry and defect of a segment, collected (for small files and tests)."""
    entries: list[LogEntry] = []
    defects: list[Defect] = []
    with open_log(path, **kwargs) as items:  # type: ignore[arg-type]
        for item in items:
            (defects if isinstance(item, Defect) else entries).append(item)
    return entries, defects
