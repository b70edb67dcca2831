"""A follower's fetcher for one partition: ``ReplicaFetcherThread`` / ``AbstractFetcherThread``.

Follows ``AbstractFetcherThread.scala`` (trunk at 1eb76443, cited as AFT:line) and ``ReplicaFetcherThread``
(RFT:line): the partition's fetch state (``PartitionFetchState``: fetch offset, truncating or fetching, last
fetched epoch), truncation before fetching (to the HW, or by OffsetsForLeaderEpoch; KIP-101 / KIP-279),
truncation on a diverging epoch (KIP-320), the reset on OFFSET_OUT_OF_RANGE, and appending what a Fetch
returned with the HW it carried. Where to truncate is storage's rule (``storage.truncation``).
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkatool.engine.replication.log import LocalReplica
from kafkatool.storage import UNDEFINED_EPOCH
from kafkatool.storage.truncation import offset_truncation_state

FETCH_DIVERGING_EPOCH = "fetch_diverging_epoch"
OFFSETS_FOR_LEADER_EPOCH_V0 = "offsets_for_leader_epoch_v0"
HIGH_WATERMARK = "high_watermark"


@dataclass
class FetchState:
    """A follower fetcher's partition state (AbstractFetcherThread PartitionFetchState)."""

    offset: int
    truncating: bool
    last_fetched_epoch: int | None


def initial_fetch_state(rep: LocalReplica, mode: str) -> FetchState:
    """ReplicaManager.makeFollowers initial state (RM:2581-2586, AFT:487-503)."""
    if mode == FETCH_DIVERGING_EPOCH and rep.cache.entries:
        return FetchState(rep.leo, False, rep.latest_epoch())
    return FetchState(rep.hw, True, None)


def truncate(rep: LocalReplica, offset: int, notes: list[str]) -> None:
    """UnifiedLog.truncateTo on the follower, noted."""
    before = rep.leo
    rep.truncate_to(offset)
    notes.append(f"replica {rep.rid} truncated to {offset} (LEO {before} -> {rep.leo})")


def truncate_on_epoch(rep: LocalReplica, leader_epoch: int, leader_end: int, notes: list[str]) -> bool:
    """AbstractFetcherThread.getOffsetTruncationState (AFT:583-628) applied; True when the truncation is final.

    The leader's answer without an end offset truncates to the initial fetch offset (the HW).
    """
    assert rep.fetch is not None
    state = offset_truncation_state(leader_epoch, leader_end, rep.cache, rep.leo, rep.fetch.offset)
    if not state.truncation_completed:
        # KIP-279: the follower does not know the leader's epoch; another round follows.
        notes.append(f"replica {rep.rid} has no epoch {leader_epoch}: it truncates to the end of its epoch "
                     f"{state.follower_epoch}, and that truncation is not final")
    truncate(rep, state.offset, notes)
    return state.truncation_completed


def after_truncation(rep: LocalReplica, final: bool, mode: str) -> None:
    """AbstractFetcherThread.updateFetchOffsetAndMaybeMarkTruncationComplete: the new fetch state.

    The fetch offset is the truncation offset and ``lastFetchedEpoch`` the log's latest epoch. With
    truncation on fetch (``isTruncationOnFetchSupported``) the partition goes back to fetching even when
    the truncation is not final: the next Fetch carries the new ``lastFetchedEpoch`` and the leader answers
    with the next diverging epoch, one round per fetch. Only the OffsetsForLeaderEpoch protocol stays in
    the truncating state for another exchange.
    """
    assert rep.fetch is not None
    rep.fetch.offset = rep.leo
    rep.fetch.truncating = not final and mode != FETCH_DIVERGING_EPOCH
    rep.fetch.last_fetched_epoch = None if mode == HIGH_WATERMARK else rep.latest_epoch()


def maybe_truncate(rep: LocalReplica, leader: LocalReplica, mode: str, *, request_lost: bool,
                   notes: list[str]) -> bool:
    """AbstractFetcherThread.maybeTruncate for a truncating partition; True when a Fetch may follow.

    Without leader epochs (or with an empty cache) the follower truncates to its own HW without asking the
    leader (AFT:235-251); otherwise it sends OffsetsForLeaderEpoch for its latest epoch (the leader answers
    from its cache, without the epoch in v0) and truncates by the answer. A lost request changes nothing.
    """
    assert rep.fetch is not None
    if not rep.fetch.truncating:
        return True
    if mode == HIGH_WATERMARK or not rep.cache.entries:
        truncate(rep, rep.hw, notes)
        after_truncation(rep, True, mode)
        return True
    if request_lost:
        return False  # the OffsetsForLeaderEpoch request is the first request: nothing changes
    asked = rep.latest_epoch()
    assert asked is not None
    l_epoch, l_end = leader.cache.end_offset_for(asked, leader.leo)  # Partition.lastOffsetForLeaderEpoch
    if mode == OFFSETS_FOR_LEADER_EPOCH_V0:
        l_epoch = UNDEFINED_EPOCH
    notes.append(f"OffsetsForLeaderEpoch(epoch={asked}) from {rep.rid} -> (epoch={l_epoch}, end_offset={l_end})")
    final = truncate_on_epoch(rep, l_epoch, l_end, notes)
    after_truncation(rep, final, mode)
    return final


def sent_last_fetched_epoch(rep: LocalReplica, mode: str) -> int | None:
    """The last fetched epoch a Fetch carries: only with truncation on fetch (KIP-320), once known."""
    assert rep.fetch is not None
    return rep.fetch.last_fetched_epoch if mode == FETCH_DIVERGING_EPOCH else None


def handle_out_of_range(rep: LocalReplica, leader_leo: int, mode: str, notes: list[str]) -> None:
    """AbstractFetcherThread.fetchOffsetAndTruncate (AFT:637-700): the follower resets its position, cutting
    a log longer than the leader's."""
    assert rep.fetch is not None
    if leader_leo < rep.leo:
        truncate(rep, leader_leo, notes)
    rep.fetch.offset = rep.leo
    rep.fetch.truncating = False
    rep.fetch.last_fetched_epoch = None if mode == HIGH_WATERMARK else rep.latest_epoch()


def process_partition_data(rep: LocalReplica, records: list[tuple[int, str]], response_hw: int, mode: str) -> None:
    """ReplicaFetcherThread.processPartitionData: append, then follower HW = min(response HW, own LEO)
    (RFT:132, UL:288-299; it can go down); the next fetch starts at the new LEO."""
    assert rep.fetch is not None
    rep.append(records)
    rep.hw = min(response_hw, rep.leo)
    rep.fetch.offset = rep.leo
    rep.fetch.truncating = False
    if records and mode != HIGH_WATERMARK:
        rep.fetch.last_fetched_epoch = records[-1][0]
