"""Whole-file scans remembered for the length of one command that reads the same files several times.

``salvage`` reads every segment for Kafka's view of the restart (``entry_columns.read_clean_segment``), then for
its own scan, its plan, the rebuilt indexes and the export (``salvage_sources.scan_windows``). Inside
:func:`remembering`, a file scanned whole with its CRCs (magic 2 only) is kept as columns when they are small
(:data:`BUDGET` in all, the files scanned last), and each later pass over its batches is answered from them: the
file's bytes are read once. Files are known by device, inode, size and change times, so a file that changed is
read again (all but a rewrite of the same size within one tick of the file system's clock: the inputs are
evidence, not written under a run); outside :func:`remembering` nothing is kept (no other command holds more
memory for it).
"""

from __future__ import annotations

import dataclasses
import os
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from kafkatool.reading.columns import SegmentColumns, join_columns

BUDGET = 16 << 20
"""Column bytes kept in all: a 1 GiB segment of 16 KiB batches takes 4.8 MB; one of one-record batches would take
430 MB and is read again by each pass."""
CRC_MISMATCH = "crc-mismatch"
"""The walker's defect for a CRC that fails: a scan that checks no CRC finds none."""

Identity = tuple[int, ...]


@dataclass
class _Scanned:
    columns: SegmentColumns
    size: int


_memo: OrderedDict[Identity, _Scanned] = OrderedDict()
_on = [False]


@contextmanager
def remembering() -> Iterator[None]:
    """Keep whole-file scans while the block runs (see the module docstring); all are let go when it ends."""
    was = _on[0]
    _on[0] = True
    try:
        yield
    finally:
        _on[0] = was
        if not was:
            _memo.clear()


def identity(path: str) -> Identity | None:
    """What tells this file from any other, and from itself once changed; ``None`` if it cannot be looked at."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _held(cols: SegmentColumns) -> int:
    return int(cols.positions.nbytes + cols.headers.nbytes + (0 if cols.crc_valid is None else cols.crc_valid.nbytes))


class Collector:
    """The windows of one whole-file scan with CRCs, gathered while they fit (:meth:`add`), remembered at the end
    (:meth:`finish`) if the scan reached the file's end, the file is magic 2 only and did not change meanwhile."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.identity = identity(path) if _on[0] else None
        self.parts: list[SegmentColumns] | None = [] if self.identity is not None else None
        self.held = 0

    def add(self, cols: SegmentColumns) -> None:
        """The next window, in file order."""
        if self.parts is None:
            return
        self.held += _held(cols)
        if self.held <= BUDGET and not len(cols.legacy):
            self.parts.append(cols)
        else:
            self.parts = None

    def finish(self) -> None:
        """The scan is over, having read the whole file."""
        parts, key = self.parts, self.identity
        self.parts = None
        if not parts or key is None or not _on[0] or identity(self.path) != key:
            return
        _memo.pop(key, None)
        _memo[key] = _Scanned(join_columns(parts), self.held)
        while sum(s.size for s in _memo.values()) > BUDGET:
            _memo.popitem(last=False)


def recall(path: str, start: int, end: int | None, *, verify_crc: bool, label: str) -> SegmentColumns | None:
    """The batches of ``path`` starting in ``[start, end)`` from its remembered scan, as one window (defects
    named ``label``; no CRC verdicts or CRC defects without ``verify_crc``), if the file was scanned whole, has
    not changed since, and ``start`` is one of its batches (the walk from there is the whole walk's from there);
    ``None`` otherwise."""
    if not _memo:
        return None
    key = identity(path)
    hit = _memo.get(key) if key is not None else None
    if hit is None:
        return None
    c = hit.columns
    pos = c.positions
    i = int(np.searchsorted(pos, start))
    if i >= len(pos) or int(pos[i]) != start:
        return None
    j = len(pos) if end is None else int(np.searchsorted(pos, end))
    valid = None if not verify_crc or c.crc_valid is None else c.crc_valid[i:j]
    stop = c.size if end is None else end
    whole = start == 0 and end is None
    defects = [d if d.file == label else dataclasses.replace(d, file=label) for d in c.defects
               if (whole if d.position is None else start <= d.position < stop)
               and (verify_crc or d.code != CRC_MISMATCH)]
    return SegmentColumns(pos[i:j], c.headers[i:j], valid, defects=defects, landing=c.size, size=c.size)
