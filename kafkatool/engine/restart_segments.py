"""A segment as Kafka's log loader sees it: ``LogSegment``'s reads (``FileLogInputStream``, ``translateOffset``,
``readNextOffset``, ``hasOverflow``) and ``LogSegments.values``, over decoded entries. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kafkatool.model import IndexFile, LogEntry, OffsetIndexEntry, SegmentData, entry_spans
from kafkatool.schema.txn_index import distinct

INT32_MAX = 0x7FFFFFFF


@dataclass
class LoadedSegment:
    """A segment as the loader sees it (``LogSegment``): its complete entries, size and offset index."""

    base: int
    file: str
    size: int
    entries: Sequence[LogEntry]
    index: IndexFile | None
    has_index: bool
    txn_corrupt: bool
    recovered: bool = False
    origin: SegmentData | None = None  # the files it was read from (a ``.swap`` segment's keep their suffix)

    @classmethod
    def of(cls, data: SegmentData) -> LoadedSegment:
        txn_bad = any(a.last_offset < data.base_offset for a in distinct(data.txn_index or []))
        return cls(data.base_offset, data.log_file, data.log_size, data.entries, data.index,
                   data.index_file is not None, txn_bad, origin=data)

    def chain(self, start_pos: int = 0, end_pos: int | None = None) -> Sequence[LogEntry]:
        """Entries ``FileLogInputStream`` returns from ``start_pos``: contiguous, complete, up to ``end_pos``
        (a view of :attr:`entries`, found from positions alone)."""
        end = self.size if end_pos is None else end_pos
        found = _chain_from_arrays(self.entries, start_pos, end)
        if found is not None:
            return self.entries[found[0]:found[0] + found[1]]
        first = count = 0
        pos = start_pos
        for i, (at, after) in enumerate(entry_spans(self.entries)):
            if at < pos:
                first = i + 1
                continue
            if at != pos or after > end:
                break
            count += 1
            pos = after
        return self.entries[first:first + count]

    def translate(self, offset: int, start_pos: int = 0) -> LogEntry | None:
        """``translateOffset``: the first entry at or after ``start_pos`` whose last offset is >= ``offset``."""
        return next((e for e in self.chain(start_pos) if e.last_offset >= offset), None)

    def index_last(self) -> tuple[int, int]:
        """``offsetIndex().lastOffset()`` and the position ``lookup`` gives for it."""
        if self.recovered or self.index is None:
            return (self.entries_last_index() if self.recovered else (self.base, 0))
        idx = self.index
        if idx.zero_tail or not idx.entries:
            return self.base, 0
        last = idx.entries[-1]
        assert isinstance(last, OffsetIndexEntry)
        return last.offset, last.position

    def entries_last_index(self) -> tuple[int, int]:
        """The last entry's last offset and position: the rebuilt index's last entry, after recovery."""
        return (self.entries[-1].last_offset, self.entries[-1].position) if self.entries else (self.base, 0)

    def read_next_offset(self) -> int:
        """``LogSegment.readNextOffset``: from the index's last entry, the last complete batch, else the base."""
        target, pos = self.index_last()
        first = self.translate(target, pos if pos <= self.size else self.size + 1)
        if first is None:
            return self.base
        tail = self.chain(first.position)
        return tail[-1].last_offset + 1 if tail else self.base

    def has_overflow(self) -> bool:
        """``LogSegment.hasOverflow``."""
        nxt = self.read_next_offset()
        return nxt > self.base and not 0 <= nxt - 1 - self.base <= INT32_MAX


def _chain_from_arrays(entries: Sequence[LogEntry], start_pos: int, end: int) -> tuple[int, int] | None:
    """:meth:`LoadedSegment.chain`'s walk over the spans, vectorised where the entries give them as arrays
    (``span_arrays``) and do not overlap: (first, count); ``None``: the walk as written."""
    if getattr(entries, "span_arrays", None) is None:
        return None
    n = len(entries)
    first: int | None = None
    count, expect, done = 0, start_pos, False
    previous: int | None = None
    # a window of spans at a time (two int64 arrays of a 1 GiB segment of one-record batches are 98 MB)
    for lo in range(0, max(n, 1), CHAIN_WINDOW_ROWS):
        part = entries if n <= CHAIN_WINDOW_ROWS else entries[lo:lo + CHAIN_WINDOW_ROWS]
        pos, ends = part.span_arrays()  # type: ignore[attr-defined]
        if (len(pos) > 1 and not bool((pos[1:] >= ends[:-1]).all())) or (
                previous is not None and len(pos) and int(pos[0]) < previous):
            return None  # overlapping entries: the walk as written
        if len(pos):
            previous = int(ends[-1])
        if done:
            continue
        k = 0
        if first is None:
            k = int(np.searchsorted(pos, start_pos, side="left"))
            if k == len(pos) and lo + len(pos) < n:
                continue
            first = lo + k
        wanted = np.concatenate([np.asarray([expect], dtype=np.int64), ends[k:-1]])
        ok = (pos[k:] == wanted) & (ends[k:] <= end)
        if bool(ok.all()):
            count += len(ok)
            expect = int(ends[-1]) if len(ends) else expect
        else:
            count += int(np.argmin(ok))
            done = True
    return (n if first is None else first), count


CHAIN_WINDOW_ROWS = 1 << 18
"""The entries whose spans :func:`_chain_from_arrays` holds as arrays at a time."""


def segments_between(segs: list[LoadedSegment], start: int, end: int) -> list[LoadedSegment]:
    """``LogSegments.values(from, to)``: from the segment holding ``from`` up to (excluding) ``to``."""
    if start == end:
        return []
    floor = max((s.base for s in segs if s.base <= start), default=None)
    lo = floor if floor is not None else -1
    return [s for s in segs if lo <= s.base < end]

