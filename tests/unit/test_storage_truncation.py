"""``kafkatool.storage.truncation``: the follower's truncation offset from the leader's OffsetsForLeaderEpoch
answer, each branch of ``AbstractFetcherThread.getOffsetTruncationState`` (AFT:583-628) worked out by hand."""

from __future__ import annotations

from kafkatool.storage import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, LeaderEpochCache
from kafkatool.storage.truncation import OffsetTruncationState, offset_truncation_state


def cache(*pairs: tuple[int, int]) -> LeaderEpochCache:
    return LeaderEpochCache.from_pairs(pairs)


def test_no_end_offset_from_the_leader_truncates_to_the_initial_fetch_offset() -> None:
    # The leader knows no end offset for the epoch: the follower goes back to its HW, as given (AFT:590-598).
    got = offset_truncation_state(UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, cache((0, 0), (1, 4)), 9, 6)
    assert got == OffsetTruncationState(6, True)


def test_an_answer_without_epoch_truncates_to_the_leader_end_within_the_log() -> None:
    # OffsetsForLeaderEpoch v0 answers only an end offset (KIP-101).
    follower = cache((0, 0), (1, 4))
    assert offset_truncation_state(UNDEFINED_EPOCH, 5, follower, 9, 2) == OffsetTruncationState(5, True)
    assert offset_truncation_state(UNDEFINED_EPOCH, 12, follower, 9, 2) == OffsetTruncationState(9, True)


def test_a_follower_without_an_end_for_the_epoch_truncates_to_the_leader_end() -> None:
    # The follower's latest epoch is 1 and it has no higher entry: endOffsetFor(3) is undefined.
    got = offset_truncation_state(3, 7, cache((0, 0), (1, 4)), 9, 2)
    assert got == OffsetTruncationState(7, True)


def test_a_follower_that_lacks_the_leader_epoch_truncates_to_its_own_epoch_end_and_goes_on() -> None:
    # KIP-279: the leader answers epoch 1 (end 6); the follower never had epoch 1: its cache answers epoch 0,
    # which ends where its epoch 2 starts (5). Not complete: another round follows.
    got = offset_truncation_state(1, 6, cache((0, 0), (2, 5)), 9, 2)
    assert got == OffsetTruncationState(5, False, 0)
    assert not got.truncation_completed


def test_a_follower_with_the_leader_epoch_truncates_to_the_lower_end() -> None:
    follower = cache((0, 0), (1, 4), (2, 8))
    assert offset_truncation_state(1, 6, follower, 11, 2) == OffsetTruncationState(6, True, 1)  # leader's end
    assert offset_truncation_state(1, 9, follower, 11, 2) == OffsetTruncationState(8, True, 1)  # follower's end
    assert offset_truncation_state(2, 15, follower, 11, 2) == OffsetTruncationState(11, True, 2)  # its own LEO


def test_kip101_scenario_2_divergence_is_cut_at_the_new_leader_epoch_start() -> None:
    # KIP-101 scenario 2: B led epoch 1 from offset 1 after A's crash; A comes back with its own epoch 0 record
    # at offset 1. A asks for epoch 0; B answers (0, 1); A truncates its divergent offset 1 away.
    leader = cache((0, 0), (1, 1))
    l_epoch, l_end = leader.end_offset_for(0, 2)
    assert (l_epoch, l_end) == (0, 1)
    assert offset_truncation_state(l_epoch, l_end, cache((0, 0)), 2, 1) == OffsetTruncationState(1, True, 0)
