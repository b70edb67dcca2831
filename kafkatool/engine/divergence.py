"""Replica divergence on real data: where each follower would truncate under each candidate leader, and
what each election would lose.

Models the OffsetsForLeaderEpoch exchange of ``AbstractFetcherThread`` (``getOffsetTruncationState``,
``storage.truncation``'s rule as in the replication model, repeated until truncation completes) over
``LeaderEpochFileCache.endOffsetFor`` on both sides, with ``UnifiedLog.truncateTo`` cutting the follower's
log and epoch cache between rounds. Current Kafka's
diverging-epoch fetch reaches the same offsets. A candidate that is not the current leader first adds
the entry (next leader epoch, its log end offset), as ``Partition.makeLeader`` does. Pure: it works on
the replicas' loaded state.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from kafkatool.storage import UNDEFINED_EPOCH, LeaderEpochCache
from kafkatool.storage.truncation import offset_truncation_state


@dataclass(frozen=True, slots=True)
class Batch:
    """A batch as replication compares it: offsets, leader epoch, CRC and record count."""

    base_offset: int
    last_offset: int
    epoch: int
    crc: int
    records: int


@dataclass
class Replica:
    """One broker's loaded copy of the partition."""

    broker: int
    log_end_offset: int
    high_watermark: int
    epochs: list[tuple[int, int]]
    batches: Iterable[Batch]  # in offset order; re-iterable (real data streams them from the segments)


@dataclass
class Round:
    """One OffsetsForLeaderEpoch round trip."""

    request_epoch: int
    response_epoch: int
    response_end_offset: int
    follower_log_end_offset_before: int
    truncate_to: int
    completed: bool
    follower_epochs_after: list[tuple[int, int]]


@dataclass
class Pair:
    """What happens to ``follower`` if ``leader`` leads."""

    leader: int
    follower: int
    divergence_by_epoch: int | None
    divergence_by_crc: int | None
    relation: str
    truncation_offset: int
    rounds: list[Round] = field(default_factory=list)
    lost_batches: list[Batch] = field(default_factory=list)
    same_on_leader: list[bool] = field(default_factory=list)

    @property
    def divergence_offset(self) -> int | None:
        known = [x for x in (self.divergence_by_epoch, self.divergence_by_crc) if x is not None]
        return min(known) if known else None


@dataclass
class Election:
    """What electing ``candidate`` would do."""

    candidate: int
    clean: bool
    lost_acknowledged: list[Batch] = field(default_factory=list)
    lost_unacknowledged: list[Batch] = field(default_factory=list)


def divergence(leader: Replica, follower: Replica) -> tuple[int | None, int | None, str]:
    """(by epoch, by batch CRC, relation): the first offset below both log ends where the logs differ.

    One merge walk over both logs in offset order: for each follower batch, the leader batch holding its base
    offset (for the epoch) and the leader batch starting there (for the CRC)."""
    common = min(leader.log_end_offset, follower.log_end_offset)
    by_epoch = by_crc = None
    lead = iter(leader.batches)
    cur = next(lead, None)
    for b in follower.batches:
        if b.base_offset >= common:
            break
        while cur is not None and cur.last_offset < b.base_offset:
            cur = next(lead, None)
        covering = cur if cur is not None and cur.base_offset <= b.base_offset else None
        if by_epoch is None and (covering is None or covering.epoch != b.epoch):
            by_epoch = b.base_offset
        same = covering if covering is not None and covering.base_offset == b.base_offset else None
        if by_crc is None and (same is None or (same.last_offset, same.crc) != (b.last_offset, b.crc)):
            by_crc = b.base_offset
        if by_epoch is not None and by_crc is not None:
            break
    longer = follower.log_end_offset > leader.log_end_offset
    if by_epoch is None and longer:
        by_epoch = leader.log_end_offset
    if by_crc is None and longer:
        by_crc = leader.log_end_offset
    if by_epoch is None and by_crc is None:
        relation = "identical" if follower.log_end_offset == leader.log_end_offset else \
            "follower log is a prefix of the leader log"
    else:
        relation = "diverged"
    return by_epoch, by_crc, relation


def as_leader(replica: Replica, next_epoch: int | None) -> list[tuple[int, int]]:
    """The candidate's epoch cache once elected (``makeLeader`` adds the new epoch at its LEO)."""
    cache = LeaderEpochCache.from_pairs(replica.epochs)
    latest = cache.latest_epoch()
    if next_epoch is not None and (latest is None or latest < next_epoch):
        cache.assign(next_epoch, replica.log_end_offset)
    return cache.pairs()


def truncate(leader: Replica, follower: Replica, leader_epochs: list[tuple[int, int]]) -> tuple[int, list[Round]]:
    """The OffsetsForLeaderEpoch rounds until truncation completes; returns the follower's final LEO."""
    epochs = LeaderEpochCache.from_pairs(follower.epochs)
    on_leader = LeaderEpochCache.from_pairs(leader_epochs)
    leo = follower.log_end_offset
    rounds: list[Round] = []
    for _ in range(64):
        latest = epochs.latest_epoch()
        request = UNDEFINED_EPOCH if latest is None else latest
        resp_epoch, resp_end = on_leader.end_offset_for(request, leader.log_end_offset)
        before = leo
        # The initial fetch offset is the HW, which a loaded log never holds above its end (UnifiedLog).
        state = offset_truncation_state(resp_epoch, resp_end, epochs, leo, min(follower.high_watermark, leo))
        target, done = state.offset, state.truncation_completed
        leo = min(leo, target)
        epochs.truncate_from_end(leo)
        rounds.append(Round(request, resp_epoch, resp_end, before, target, done, epochs.pairs()))
        if done:
            break
    return leo, rounds


def analyse_pair(leader: Replica, follower: Replica, *, is_current_leader: bool, next_epoch: int | None) -> Pair:
    """Divergence, truncation rounds and lost batches for one (candidate leader, follower) pair."""
    by_epoch, by_crc, relation = divergence(leader, follower)
    leader_epochs = as_leader(leader, None if is_current_leader else next_epoch)
    offset, rounds = truncate(leader, follower, leader_epochs)
    lost = [b for b in follower.batches if b.last_offset >= offset]
    first = min((b.base_offset for b in lost), default=None)
    on_leader = set() if first is None else {(b.base_offset, b.last_offset, b.crc) for b in leader.batches
                                             if b.base_offset >= first}  # only where a lost batch could match
    return Pair(leader.broker, follower.broker, by_epoch, by_crc, relation, offset, rounds, lost,
                [(b.base_offset, b.last_offset, b.crc) in on_leader for b in lost])


def analyse_election(old_leader: Replica, candidate: Replica, *, isr: list[int], old_hw: int) -> Election:
    """Which of the old leader's batches the candidate lacks, below and above the old high watermark."""
    missing = _absent(old_leader.batches, candidate.batches)
    return Election(candidate.broker, candidate.broker in isr,
                    [b for b in missing if b.last_offset < old_hw], [b for b in missing if b.last_offset >= old_hw])


def _absent(batches: Iterable[Batch], other: Iterable[Batch]) -> list[Batch]:
    """The batches of ``batches`` that ``other`` does not hold (same offsets and CRC), by one merge walk over
    both in offset order: only the batches of one base offset are held at a time."""
    out: list[Batch] = []
    theirs = iter(other)
    cur = next(theirs, None)
    window_base: int | None = None
    window: set[tuple[int, int]] = set()
    for b in batches:
        if b.base_offset != window_base:
            while cur is not None and cur.base_offset < b.base_offset:
                cur = next(theirs, None)
            window_base, window = b.base_offset, set()
            while cur is not None and cur.base_offset == b.base_offset:
                window.add((cur.last_offset, cur.crc))
                cur = next(theirs, None)
        if (b.last_offset, b.crc) not in window:
            out.append(b)
    return out
