"""Where a follower truncates, given the leader's OffsetsForLeaderEpoch answer.

Follows ``kafka.server.AbstractFetcherThread.getOffsetTruncationState`` (trunk at 1eb76443, AFT:583-628),
with the follower's side of the exchange answered by its ``LeaderEpochFileCache.endOffsetFor`` through
``UnifiedLog.endOffsetForEpoch`` (no answer when the end offset is undefined). The same rule answers a
diverging epoch in a Fetch response (KIP-320's truncation on fetch), which carries the same pair. Pure: the
replication model and the divergence analysis of real replicas both use it.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkatool.storage.epoch import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, LeaderEpochCache


@dataclass(frozen=True, slots=True)
class OffsetTruncationState:
    """``OffsetTruncationState``: the offset to truncate to, and whether truncation is then complete.

    ``follower_epoch`` is the epoch the follower's own cache answered for the leader's epoch
    (``UNDEFINED_EPOCH`` when it was not asked or knew none); when it differs from the leader's epoch the
    truncation is not complete (KIP-279) and another round follows.
    """

    offset: int
    truncation_completed: bool
    follower_epoch: int = UNDEFINED_EPOCH


def offset_truncation_state(leader_epoch: int, leader_end_offset: int, follower_epochs: LeaderEpochCache,
                            follower_log_end_offset: int, initial_fetch_offset: int) -> OffsetTruncationState:
    """``getOffsetTruncationState`` (AFT:583-628) for the leader's answer ``(leader_epoch, leader_end_offset)``.

    - the leader knows no end offset: the initial fetch offset (the follower's HW), complete;
    - the leader answered without an epoch (OffsetsForLeaderEpoch v0): min(leader end, follower LEO), complete;
    - the follower's cache has no end offset for the leader's epoch: min(leader end, follower LEO), complete;
    - the follower's cache answers another (lower) epoch: min(its end, follower LEO), not complete (KIP-279);
    - otherwise min(leader end, follower end, follower LEO), complete.
    """
    if leader_end_offset == UNDEFINED_EPOCH_OFFSET:
        return OffsetTruncationState(initial_fetch_offset, True)
    if leader_epoch == UNDEFINED_EPOCH:
        return OffsetTruncationState(min(leader_end_offset, follower_log_end_offset), True)
    f_epoch, f_end = follower_epochs.end_offset_for(leader_epoch, follower_log_end_offset)
    if f_end == UNDEFINED_EPOCH_OFFSET:
        return OffsetTruncationState(min(leader_end_offset, follower_log_end_offset), True)
    if f_epoch != leader_epoch:
        return OffsetTruncationState(min(f_end, follower_log_end_offset), False, f_epoch)
    return OffsetTruncationState(min(leader_end_offset, f_end, follower_log_end_offset), True, f_epoch)
