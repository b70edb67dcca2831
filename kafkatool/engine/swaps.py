"""The log as Kafka's ``LogLoader`` assembles it from an interrupted cleaner swap: pure, shared by the commands
that replay a partition's log.

``LogLoader.removeTempFilesAndCollectSwapFiles`` keeps a ``.log.swap`` file unless its offset is at or above the
lowest ``.cleaned`` file's (an incomplete split); ``LogLoader.load`` then deletes every segment whose base offset
lies in ``[lowest swap base, highest swap next offset)`` (compacted into the swap but not yet deleted) and renames
the swap files into place. A segment the cleaner already renamed ``.deleted`` is gone either way.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kafkatool.model import PartitionData, SegmentData
from kafkatool.schema.filenames import CLEANED_SUFFIX, offset_from_name


@dataclass(frozen=True, slots=True)
class SwapPlan:
    """Which swap segments Kafka renames in and which segments they replace."""

    swapped_in: tuple[int, ...]
    replaced: tuple[int, ...]
    low: int
    high: int


def _next_offset(seg: SegmentData) -> int:
    """``LogSegment.readNextOffset`` of a swap segment: one past its last complete entry, else its base."""
    return seg.entries[-1].last_offset + 1 if seg.entries else seg.base_offset


def plan_swaps(part: PartitionData, swaps: dict[int, SegmentData]) -> SwapPlan | None:
    """What the load does with ``part``'s ``.swap`` segments (``None`` when there is none to rename in)."""
    cleaned = [offset_from_name(n.split("/")[-1]) for n in part.leftovers if n.endswith(CLEANED_SUFFIX)]
    lowest_cleaned = min((c for c in cleaned if c is not None), default=None)
    valid = {base: seg for base, seg in swaps.items() if seg.log_file
             and (lowest_cleaned is None or base < lowest_cleaned)}
    if not valid:
        return None
    low = min(valid)
    high = max(_next_offset(seg) for seg in valid.values())
    replaced = tuple(s.base_offset for s in part.segments if low <= s.base_offset < high)
    return SwapPlan(tuple(sorted(valid)), replaced, low, high)


def log_after_swaps(part: PartitionData, swaps: dict[int, SegmentData]) -> tuple[PartitionData, SwapPlan | None]:
    """``part`` with its segments as Kafka will load them: the swap segments in place of those they replace."""
    plan = plan_swaps(part, swaps)
    if plan is None:
        return part, None
    kept = [s for s in part.segments if s.base_offset not in plan.replaced]
    segments = sorted(kept + [swaps[b] for b in plan.swapped_in], key=lambda s: s.base_offset)
    return replace(part, segments=segments), plan
