"""What Kafka's log loader does with a partition's in-flight files: ``.deleted``, ``.cleaned`` and ``.swap``.

Models ``LogLoader.removeTempFilesAndCollectSwapFiles`` (storage module, Java; ``Log.loadSegments`` before 3.0):
a ``.deleted`` file (an asynchronous segment deletion still pending) is deleted; a ``.cleaned`` file (output of
an interrupted cleaner pass) is deleted; a ``.swap`` file at or above the lowest ``.cleaned`` offset is the
debris of an incomplete split and is deleted, every other ``.swap`` is kept. ``LogLoader.load`` then completes
the kept swaps: every file whose offset lies in ``[lowest swap base, highest swap next offset)`` (segments and
producer snapshots compacted into the swap but not yet deleted) is deleted, and the ``.swap`` files are renamed
into place. Pure: file names and offsets in, decisions out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kafkatool.schema.filenames import (
    CLEANED_SUFFIX,
    DELETED_SUFFIX,
    KRAFT_DELETED_SUFFIX,
    LOG_SUFFIX,
    SWAP_SUFFIX,
    offset_from_name,
)

SWAP_LOG_SUFFIX = LOG_SUFFIX + SWAP_SUFFIX
"""``.log.swap``: the swap files that carry a segment's data (the ones the swapped range is measured from)."""


def is_deleted_file(name: str) -> bool:
    """A segment file renamed ``.deleted`` (not a KRaft snapshot's ``.checkpoint.deleted``, which the
    metadata log handles itself)."""
    return name.endswith(DELETED_SUFFIX) and not name.endswith(KRAFT_DELETED_SUFFIX)


def is_cleaned_file(name: str) -> bool:
    """A cleaner output never swapped in."""
    return name.endswith(CLEANED_SUFFIX)


def is_swap_file(name: str) -> bool:
    """A cleaned (or split) segment file swapped in but not yet renamed."""
    return name.endswith(SWAP_SUFFIX)


def is_incomplete_split(offset: int, min_cleaned: int | None) -> bool:
    """A ``.swap`` at or above the lowest ``.cleaned`` offset: a split that did not finish, deleted at load."""
    return min_cleaned is not None and offset >= min_cleaned


@dataclass(frozen=True, slots=True)
class TempFiles:
    """``removeTempFilesAndCollectSwapFiles``' verdict on a partition's in-flight files (bare names, in the
    order given)."""

    deleted: tuple[str, ...]  # ``.deleted`` files: deleted
    incomplete_swaps: tuple[str, ...]  # ``.swap`` files of an incomplete split: deleted
    cleaned: tuple[str, ...]  # ``.cleaned`` files: deleted
    swaps: tuple[str, ...]  # the ``.swap`` files the load completes
    min_cleaned: int | None  # the lowest ``.cleaned`` offset

    def swap_log_offsets(self) -> list[int]:
        """The base offsets of the kept ``.log.swap`` files, ascending."""
        return sorted(offset_from_name(n) or 0 for n in self.swaps if n.endswith(SWAP_LOG_SUFFIX))


def sort_temp_files(names: Iterable[str]) -> TempFiles:
    """Which of ``names`` (bare file names of one partition directory) the load deletes and which swaps it
    keeps."""
    names = list(names)
    cleaned = [n for n in names if is_cleaned_file(n)]
    min_cleaned = min_cleaned_offset(cleaned)
    swaps, incomplete = [], []
    for n in names:
        if not is_swap_file(n):
            continue
        off = offset_from_name(n)
        (incomplete if off is not None and is_incomplete_split(off, min_cleaned) else swaps).append(n)
    return TempFiles(tuple(n for n in names if is_deleted_file(n)), tuple(incomplete), tuple(cleaned),
                     tuple(swaps), min_cleaned)


def min_cleaned_offset(names: Iterable[str]) -> int | None:
    """The lowest offset among the ``.cleaned`` files of ``names`` (bare names), ``None`` when there is none."""
    return min((offset_from_name(n) or 0 for n in names if is_cleaned_file(n)), default=None)


def swap_range(next_offsets: Mapping[int, int]) -> tuple[int, int] | None:
    """``[lowest swap base, highest swap next offset)`` for the completed swaps (base offset -> next offset,
    as ``LogSegment.readNextOffset`` gives it); ``None`` when there is none."""
    if not next_offsets:
        return None
    return min(next_offsets), max(next_offsets.values())


def in_swap_range(offset: int, swapped: tuple[int, int]) -> bool:
    """Whether a (non-swap) file named after ``offset`` was compacted into the swap: the load deletes it."""
    low, high = swapped
    return low <= offset < high
