"""The log as Kafka's ``LogLoader`` assembles it from an interrupted cleaner swap: pure, shared by the commands
that replay a partition's log (``check``, ``replay-producers``, the fleet scan).

The rules (which swaps survive, the swapped range, what it replaces) are :mod:`kafkatool.storage.swaps`; this
module applies them to decoded segments. A segment the cleaner already renamed ``.deleted`` is gone either way.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kafkatool.model import PartitionData, SegmentData
from kafkatool.storage.swaps import in_swap_range, is_incomplete_split, min_cleaned_offset, swap_range


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
    lowest_cleaned = min_cleaned_offset(n.split("/")[-1] for n in part.leftovers)
    valid = {base: seg for base, seg in swaps.items() if seg.log_file
             and not is_incomplete_split(base, lowest_cleaned)}
    swapped = swap_range({base: _next_offset(seg) for base, seg in valid.items()})
    if swapped is None:
        return None
    replaced = tuple(s.base_offset for s in part.segments if in_swap_range(s.base_offset, swapped))
    return SwapPlan(tuple(sorted(valid)), replaced, *swapped)


def log_after_swaps(part: PartitionData, swaps: dict[int, SegmentData]) -> tuple[PartitionData, SwapPlan | None]:
    """``part`` with its segments as Kafka will load them: the swap segments in place of those they replace."""
    plan = plan_swaps(part, swaps)
    if plan is None:
        return part, None
    kept = [s for s in part.segments if s.base_offset not in plan.replaced]
    segments = sorted(kept + [swaps[b] for b in plan.swapped_in], key=lambda s: s.base_offset)
    return replace(part, segments=segments), plan
