"""The partition's brokers together: what each broker's ``ReplicaManager`` does with the events.

Ties the parts together as Kafka's ``ReplicaManager`` (trunk at 1eb76443) and the KRaft
controller do: a produce appends on the leader's ``Partition`` and waits in ``DelayedProduce``; a fetch runs
the follower's fetcher against the leader's ``Partition``; a crash, a restart and an election change the
brokers, the controller's record and who leads (``makeLeader`` / ``makeFollower``). Each rule lives in the
module of the Kafka class that has it (``partition``, ``replica``, ``fetcher``, ``log``, ``produce``,
``controller``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kafkatool.engine.replication import fetcher, steps
from kafkatool.engine.replication.controller import Controller
from kafkatool.engine.replication.log import LocalReplica
from kafkatool.engine.replication.partition import Partition, check_fetch, read_records
from kafkatool.engine.replication.produce import Produces, Request


@dataclass
class Simulation:
    """The whole model: settings, replicas, controller, leader state and produce requests."""

    replicas_ids: list[int]
    min_isr: int
    lag_ms: int
    mode: str
    auto_commit: bool
    now: int
    replicas: dict[int, LocalReplica]
    controller: Controller
    lstate: Partition | None = None
    produces: Produces = field(default_factory=Produces)
    notes: list[str] = field(default_factory=list)
    unclean_happened: bool = False

    # ---------------------------------------------------------------- views

    @property
    def c_isr(self) -> list[int]:
        """The ISR the controller holds."""
        return self.controller.isr

    @property
    def requests(self) -> list[Request]:
        """Every produce request so far."""
        return self.produces.requests

    @property
    def acknowledged(self) -> list[str]:
        """Every record acknowledged so far, in offset order."""
        return self.produces.acknowledged

    @property
    def committed(self) -> list[str]:
        """Every record that was below a leader's HW, in the order first seen."""
        return self.produces.committed

    @property
    def effective_min_isr(self) -> int:
        """Partition.effectiveMinIsr: min(min.insync.replicas, replication factor)."""
        return min(self.min_isr, len(self.replicas_ids))

    def leader_replica(self) -> LocalReplica | None:
        """The live leader, if any."""
        if self.lstate is None:
            return None
        return self.replicas[self.lstate.leader]

    def under_min_isr(self) -> bool:
        """Partition.isUnderMinIsr: the committed ISR is smaller than the effective min ISR."""
        return self.lstate is not None and self.lstate.is_under_min_isr(self.effective_min_isr)

    # ---------------------------------------------------------------- leader side

    def maybe_increment_leader_hw(self) -> bool:
        """Partition.maybeIncrementLeaderHW; when the HW moved, the delayed produces it completes."""
        ls = self.lstate
        leader = self.leader_replica()
        if ls is None or leader is None:
            return False
        if not ls.maybe_increment_leader_hw(leader, self.replicas, self.now, self.lag_ms, self.effective_min_isr):
            return False
        self.produces.record_committed(leader.log[:leader.hw])
        self.complete_delayed_produce()
        return True

    def complete_delayed_produce(self) -> None:
        """Partition.checkEnoughReplicasReachOffset (P:1111-1147) for every waiting acks=-1 request."""
        ls = self.lstate
        leader = self.leader_replica()
        if ls is None or leader is None:
            return
        self.produces.complete_delayed(leader.hw, len(ls.maximal_isr) >= self.effective_min_isr)

    def commit_isr(self, new_isr: list[int]) -> None:
        """The controller accepts an AlterPartition: Partition.handleAlterPartitionUpdate (P:1960-1995)."""
        assert self.lstate is not None
        self.lstate.isr = sorted(new_isr)
        self.lstate.pending = None
        self.controller.alter_partition(new_isr)
        # "we may need to increment high watermark since ISR could be down to 1" (P:1994)
        self.maybe_increment_leader_hw()

    def propose_isr(self, kind: str, new_isr: list[int]) -> None:
        """Partition.prepareIsrExpand / prepareIsrShrink and submitAlterPartition (P:1779-1829).

        The change is pending (PendingExpandIsr / PendingShrinkIsr) until the controller answers, or committed
        within the event when auto-commit is on; while pending, the HW counts the maximal ISR.
        """
        assert self.lstate is not None
        self.lstate.pending = (kind, sorted(new_isr))
        if self.auto_commit:
            self.commit_isr(new_isr)

    def make_follower(self, rep: LocalReplica) -> None:
        """Partition.makeFollower plus the fetcher's initial state; the log is not truncated."""
        rep.role = "follower"
        rep.fetch = fetcher.initial_fetch_state(rep, self.mode)

    def make_leader(self, rid: int, was_leader: bool) -> None:
        """Partition.makeLeader (P:778-808): the leader's cache takes the new epoch at its LEO."""
        rep = self.replicas[rid]
        rep.role = "leader"
        rep.fetch = None
        rep.cache.assign(self.controller.leader_epoch, rep.leo)
        previous = self.lstate.followers if (self.lstate is not None and was_leader) else None
        self.lstate = Partition.make_leader(rep, self.controller.leader_epoch, self.controller.isr,
                                            self.replicas_ids, previous, self.now)
        self.produces.record_committed(rep.log[:rep.hw])
        self.maybe_increment_leader_hw()

    def update_follower_fetch_state(self, rid: int, offset: int, leader_leo: int) -> None:
        """Partition.updateFollowerFetchState (P:920-966): the follower's record, ISR expansion, the HW."""
        ls = self.lstate
        leader = self.leader_replica()
        assert ls is not None and leader is not None
        moved = ls.followers[rid].update_fetch_state(offset, leader_leo, self.now, self.replicas[rid].broker_epoch)
        expanded = ls.expansion_for(rid, leader, self.replicas[rid])
        if expanded is not None:
            self.propose_isr("expand", expanded)
        if moved:
            self.maybe_increment_leader_hw()

    # ---------------------------------------------------------------- events

    def produce(self, event: dict[str, Any]) -> None:
        """Partition.appendRecordsToLeader (P:1380-1400) and ReplicaManager acks handling."""
        n = int(event["records"])
        acks = int(event["acks"])
        ids = self.produces.new_ids(n, list(event.get("ids") or []))
        leader = self.leader_replica()
        ls = self.lstate
        if leader is None or ls is None:
            self.requests.append(Request(ids, None, None, acks, "error:NOT_LEADER_OR_FOLLOWER"))
            return
        if acks == -1 and len(ls.isr) < self.effective_min_isr:
            # P:1384: rejected before the append.
            self.requests.append(Request(ids, None, None, acks, "error:NOT_ENOUGH_REPLICAS"))
            return
        first = leader.leo
        leader.append([(ls.leader_epoch, i) for i in ids])
        status = {1: "acked", 0: "sent"}.get(acks, "pending")
        req = Request(ids, first, leader.leo - 1, acks, status, ls.leader, ls.leader_epoch)
        self.requests.append(req)
        if acks == 1:
            self.produces.ack(req)
        self.maybe_increment_leader_hw()
        self.complete_delayed_produce()

    def tick(self) -> None:
        """Partition.maybeShrinkIsr (P:1253-1330): drop ISR members that are not caught up."""
        ls = self.lstate
        leader = self.leader_replica()
        if ls is None or leader is None or ls.pending is not None:
            return
        out = ls.out_of_sync_replicas(leader.leo, self.now, self.lag_ms)
        if out:
            self.propose_isr("shrink", [r for r in ls.isr if r not in out])

    def crash(self, event: dict[str, Any]) -> None:
        """The broker stops; only its flushed log survives; a leader leaves the partition leaderless."""
        rep = self.replicas[int(event["replica"])]
        if not rep.alive:
            return
        rep.crash(event.get("flushed_offset"), event.get("hw_checkpoint"))
        if self.lstate is not None and self.lstate.leader == rep.rid:
            self.produces.fail_pending("REQUEST_TIMED_OUT")
            self.lstate = None
            self.controller.leader = None
        rep.role = "none"

    def restart(self, event: dict[str, Any]) -> None:
        """Log recovery to the flushed end, HW from the checkpoint; a follower again if there is a leader."""
        rep = self.replicas[int(event["replica"])]
        if rep.alive:
            return
        rep.recover()
        if self.lstate is not None:
            self.make_follower(rep)

    def elect(self, event: dict[str, Any]) -> None:
        """The controller elects a leader; epochs go up; leader and followers apply the change."""
        rid = int(event["leader"])
        clean = bool(event.get("clean", True))
        self.controller.elect(rid, clean=clean, alive={r: rep.alive for r, rep in self.replicas.items()})
        if not clean:
            self.unclean_happened = True
        was_leader = self.lstate is not None and self.lstate.leader == rid
        if self.lstate is not None and not was_leader:
            self.produces.fail_pending("NOT_LEADER_OR_FOLLOWER")
        self.make_leader(rid, was_leader)
        for other in self.replicas_ids:
            if other != rid and self.replicas[other].alive:
                self.make_follower(self.replicas[other])

    def alter_partition_response(self, event: dict[str, Any]) -> None:
        """The controller answers a pending ISR change (Partition.handleAlterPartitionUpdate)."""
        ls = self.lstate
        if ls is None or ls.pending is None:
            return
        if event.get("accept", True):
            self.commit_isr(ls.pending[1])
        else:
            ls.pending = None

    def fetch(self, event: dict[str, Any]) -> None:
        """One pass of a follower's fetcher thread: truncation when truncating, then one Fetch round trip."""
        rep = self.replicas[int(event["replica"])]
        leader = self.leader_replica()
        if not rep.alive or rep.role != "follower" or rep.fetch is None or self.lstate is None or leader is None:
            return
        outcome = event.get("outcome", "complete")
        if not fetcher.maybe_truncate(rep, leader, self.mode, request_lost=outcome == "request_lost",
                                      notes=self.notes):
            return
        if outcome == "request_lost":
            return
        limit = event.get("max_records")  # absent: no limit; 0: an empty fetch (it still carries the HW)
        self.fetch_round_trip(rep, leader, None if limit is None else int(limit), deliver=outcome == "complete")

    def fetch_round_trip(self, rep: LocalReplica, leader: LocalReplica, max_records: int | None, *,
                         deliver: bool) -> None:
        """Partition.fetchRecords / updateFollowerFetchState (P:920-966, P:1463-1565) and the follower side.

        ``deliver`` False: the leader handled the Fetch but its response was lost.
        """
        assert rep.fetch is not None
        offset = rep.fetch.offset
        hw_before = leader.hw
        leo_before = leader.leo
        out_of_range, diverging = check_fetch(leader, offset, fetcher.sent_last_fetched_epoch(rep, self.mode))
        if out_of_range is not None:
            self.notes.append(f"fetch from {rep.rid} at {offset}: OFFSET_OUT_OF_RANGE: {out_of_range}")
            if deliver:
                fetcher.handle_out_of_range(rep, leader.leo, self.mode, self.notes)
            return
        if diverging is not None:
            # P:1538-1565: diverging epoch; the follower's state is not updated (KAFKA-13141).
            d_epoch, d_end = diverging
            self.notes.append(f"fetch from {rep.rid} at {offset}: diverging epoch "
                              f"(epoch={d_epoch}, end_offset={d_end})")
            if deliver:
                final = fetcher.truncate_on_epoch(rep, d_epoch, d_end, self.notes)
                fetcher.after_truncation(rep, final, self.mode)
            return
        records = read_records(leader, offset, max_records)
        self.update_follower_fetch_state(rep.rid, offset, leo_before)
        response_hw = hw_before if records else leader.hw
        if deliver:
            fetcher.process_partition_data(rep, records, response_hw, self.mode)

    # ---------------------------------------------------------------- output

    def snapshot(self, after: int | str) -> dict[str, Any]:
        """The state in the ``expected.steps`` shape."""
        return steps.snapshot(self, after)

    def final(self) -> dict[str, Any]:
        """The ``expected.final`` summary: losses and divergence against the final leader's log."""
        return steps.final(self)
