"""The leader's side of one partition: ``kafka.cluster.Partition`` as the leader holds it.

Follows ``Partition.scala`` (trunk at 1eb76443, KRaft mode, cited as P:line): the leader epoch and the
epoch's start offset, the committed ISR and any AlterPartition in flight (``PendingExpandIsr`` /
``PendingShrinkIsr``), one ``Replica`` per follower, and the rules over them: the high watermark
(``maybeIncrementLeaderHW``), ISR shrink and expand, ISR eligibility, and what a Fetch from a follower finds
(``fetchRecords``' diverging-epoch and range checks). The log is the leader's ``LocalReplica``.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkatool.engine.replication.log import LocalReplica
from kafkatool.engine.replication.replica import Replica
from kafkatool.storage import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET


@dataclass
class Partition:
    """What the leader's Partition object holds."""

    leader: int
    leader_epoch: int
    isr: list[int]
    epoch_start_offset: int
    followers: dict[int, Replica]
    pending: tuple[str, list[int]] | None = None

    @classmethod
    def make_leader(cls, leader: LocalReplica, leader_epoch: int, isr: list[int], replica_ids: list[int],
                    previous: dict[int, Replica] | None, now: int) -> Partition:
        """Partition.makeLeader (P:778-808): the new epoch starts at the leader's LEO; every follower's state
        is reset (Replica.resetReplicaState). ``previous``: the followers when this leader already led."""
        start = leader.leo
        followers: dict[int, Replica] = {}
        for other in replica_ids:
            if other == leader.rid:
                continue
            prev = previous.get(other) if previous is not None else None
            followers[other] = Replica.reset(prev, in_sync=other in isr, now=now, leader_leo=start)
        return cls(leader.rid, leader_epoch, list(isr), start, followers)

    @property
    def maximal_isr(self) -> list[int]:
        """PendingExpandIsr counts the new member, PendingShrinkIsr keeps the old ISR (P:224-253)."""
        if self.pending and self.pending[0] == "expand":
            return sorted(set(self.isr) | set(self.pending[1]))
        return list(self.isr)

    def is_under_min_isr(self, min_isr: int) -> bool:
        """Partition.isUnderMinIsr: the committed ISR is smaller than the effective min ISR."""
        return len(self.isr) < min_isr

    def is_replica_isr_eligible(self, rid: int, local: LocalReplica) -> bool:
        """Partition.isReplicaIsrEligible (KRaft): not fenced and the fetch's broker epoch is current."""
        view = self.followers[rid]
        return local.alive and view.broker_epoch is not None and view.broker_epoch == local.broker_epoch

    def maybe_increment_leader_hw(self, leader: LocalReplica, replicas: dict[int, LocalReplica], now: int,
                                  lag_ms: int, min_isr: int) -> bool:
        """Partition.maybeIncrementLeaderHW (P:1174-1201) and UnifiedLog.maybeIncrementHighWatermark (UL:311).

        HW = leader LEO lowered to the LEO of every maximal-ISR member and every caught-up, ISR-eligible
        replica; it only moves up, and not at all while under min ISR. True when it moved.
        """
        if self.is_under_min_isr(min_isr):
            return False
        new_hw = leader.leo
        maximal = self.maximal_isr
        for rid, view in self.followers.items():
            waits = view.is_caught_up(leader.leo, now, lag_ms) and self.is_replica_isr_eligible(rid, replicas[rid])
            if view.leo < new_hw and (rid in maximal or waits):
                new_hw = view.leo
        if new_hw > leader.hw:
            leader.hw = new_hw
            return True
        return False

    def out_of_sync_replicas(self, leader_leo: int, now: int, lag_ms: int) -> list[int]:
        """Partition.getOutOfSyncReplicas, for maybeShrinkIsr (P:1253-1330): ISR members not caught up."""
        return [r for r in self.isr if r != self.leader
                and not self.followers[r].is_caught_up(leader_leo, now, lag_ms)]

    def expansion_for(self, rid: int, leader: LocalReplica, local: LocalReplica) -> list[int] | None:
        """Partition.maybeExpandIsr / isFollowerInSync (P:1030-1100): the ISR with ``rid`` added, when the
        follower reached both the HW and the epoch's start offset and no ISR change is in flight."""
        if self.pending is not None or rid in self.isr or not self.is_replica_isr_eligible(rid, local):
            return None
        view = self.followers[rid]
        if view.leo >= leader.hw and view.leo >= self.epoch_start_offset:
            return [*self.isr, rid]
        return None


def check_fetch(leader: LocalReplica, offset: int, last_fetched_epoch: int | None) -> tuple[str | None,
                                                                                         tuple[int, int] | None]:
    """What a follower's Fetch finds before any read (P:1538-1550): (out-of-range reason, diverging epoch).

    ``last_fetched_epoch`` is the epoch the Fetch carries (None when it carries none). An unknown last fetched
    epoch, or an offset outside the log, is OFFSET_OUT_OF_RANGE; with an epoch, the divergence check (the
    leader's ``endOffsetFor`` that epoch ends below the offset or answers a lower epoch) comes before the
    read's range check. At most one of the two is set.
    """
    epoch_sent = last_fetched_epoch is not None
    d_epoch, d_end = UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    if last_fetched_epoch is not None:
        d_epoch, d_end = leader.cache.end_offset_for(last_fetched_epoch, leader.leo)
    unknown_epoch = epoch_sent and (d_epoch == UNDEFINED_EPOCH or d_end == UNDEFINED_EPOCH_OFFSET)
    diverging = epoch_sent and not unknown_epoch and offset >= 0 and (
        d_epoch < (last_fetched_epoch or 0) or d_end < offset)
    if unknown_epoch:
        return (f"the leader has no epoch {last_fetched_epoch} (the follower's last fetched epoch) in its cache",
                None)
    if diverging:
        return None, (d_epoch, d_end)
    if offset > leader.leo:
        return (f"offset {offset} is past the leader's log end {leader.leo} (a fetch at the log end is empty, "
                "not out of range)"), None
    if offset < 0:
        return f"offset {offset} is negative", None
    return None, None


def read_records(leader: LocalReplica, offset: int, max_records: int | None) -> list[tuple[int, str]]:
    """The records a Fetch at ``offset`` returns: up to the leader's LEO, at most ``max_records``."""
    end = leader.leo if max_records is None else min(leader.leo, offset + max_records)
    return list(leader.log[offset:end])
