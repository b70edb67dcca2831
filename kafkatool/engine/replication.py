"""A deterministic step model of one partition's replicas: leader HW, ISR, fetch, truncation, election.

Every rule cites the Kafka source it follows (trunk at 1eb76443, KRaft mode). Offsets are Kafka's:
the HW and LEO are exclusive, the log starts at offset 0. The engine is pure: it takes a validated
scenario document (``kafkatool.reading.scenario``) and returns plain dictionaries in the
``expected.steps`` shape of ``kafkatool.replication-scenario/1``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from kafkatool.storage import LeaderEpochCache

MODES = ("fetch_diverging_epoch", "offsets_for_leader_epoch", "offsets_for_leader_epoch_v0", "high_watermark")
UNDEFINED = -1


class ScenarioError(ValueError):
    """An event the model cannot apply (for example a clean election of a replica outside the ISR)."""

    event_index: int | None = None


# --------------------------------------------------------------------------- epoch cache


def cache_assign(cache: list[list[int]], epoch: int, start: int) -> None:
    """``LeaderEpochCache.assign`` on a cache in the scenario's ``[[epoch, start_offset], ...]`` form, in place."""
    model = LeaderEpochCache.from_pairs(cache)
    model.assign(epoch, start)
    cache[:] = map(list, model.pairs())


def cache_end_offset_for(cache: list[list[int]], epoch: int, leo: int) -> tuple[int, int]:
    """``LeaderEpochCache.end_offset_for`` on a cache in the scenario's ``[[epoch, start_offset], ...]`` form."""
    return LeaderEpochCache.from_pairs(cache).end_offset_for(epoch, leo)


# --------------------------------------------------------------------------- state


@dataclass
class FetchState:
    """A follower fetcher's partition state (AbstractFetcherThread PartitionFetchState)."""

    offset: int
    truncating: bool
    last_fetched_epoch: int | None


@dataclass
class Replica:
    """One broker's copy of the partition. A crashed broker keeps only its flushed log (``log``)."""

    rid: int
    log: list[tuple[int, str]]
    hw: int
    cache: LeaderEpochCache
    alive: bool = True
    role: str = "none"
    fetch: FetchState | None = None
    broker_epoch: int = 0
    hw_checkpoint: int = 0

    @property
    def leo(self) -> int:
        """Log end offset."""
        return len(self.log)

    def truncate_to(self, offset: int) -> None:
        """UnifiedLog.truncateTo (UL:1827-1862): drop records from ``offset``, cut the cache, lower the HW."""
        target = min(offset, self.leo)
        del self.log[target:]
        self.cache.drop_entries_from(target)
        self.hw = min(self.hw, self.leo)

    def append(self, records: list[tuple[int, str]]) -> None:
        """Append records; the cache takes each batch's epoch (UnifiedLog.append, UL:859-863)."""
        for epoch, rid in records:
            self.cache.assign(epoch, self.leo)
            self.log.append((epoch, rid))

    def latest_epoch(self) -> int | None:
        """The latest epoch in the cache, or None."""
        return self.cache.latest_epoch()


@dataclass
class FollowerView:
    """The leader's record of one follower (Replica.scala ReplicaState)."""

    leo: int = -1
    last_caught_up_ms: int = 0
    last_fetch_ms: int = 0
    last_fetch_leader_leo: int = -1
    broker_epoch: int | None = None

    def is_caught_up(self, leader_leo: int, now: int, lag_ms: int) -> bool:
        """Replica.isCaughtUp (R:67-73): LEO equals the leader's, or caught up within the lag (inclusive)."""
        return leader_leo == self.leo or now - self.last_caught_up_ms <= lag_ms


@dataclass
class LeaderState:
    """What the leader's Partition object holds."""

    leader: int
    leader_epoch: int
    isr: list[int]
    epoch_start_offset: int
    followers: dict[int, FollowerView]
    pending: tuple[str, list[int]] | None = None

    @property
    def maximal_isr(self) -> list[int]:
        """PendingExpandIsr counts the new member, PendingShrinkIsr keeps the old ISR (P:224-253)."""
        if self.pending and self.pending[0] == "expand":
            return sorted(set(self.isr) | set(self.pending[1]))
        return list(self.isr)


@dataclass
class Request:
    """One produce request."""

    ids: list[str]
    first_offset: int | None
    last_offset: int | None
    acks: int
    status: str
    leader: int | None = None
    epoch: int | None = None


@dataclass
class Violation:
    """An invariant broken after a step."""

    step: int | str
    rule: str
    message: str


@dataclass
class Simulation:
    """The whole model: settings, replicas, controller, leader state and produce requests."""

    replicas_ids: list[int]
    min_isr: int
    lag_ms: int
    unclean_allowed: bool
    mode: str
    auto_commit: bool
    now: int
    replicas: dict[int, Replica]
    c_leader: int | None
    c_leader_epoch: int
    c_partition_epoch: int
    c_isr: list[int]
    lstate: LeaderState | None = None
    requests: list[Request] = field(default_factory=list)
    ack_position: dict[str, tuple[int, int]] = field(default_factory=dict)
    committed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    next_id: int = 1
    unclean_happened: bool = False

    # ---------------------------------------------------------------- helpers

    @property
    def effective_min_isr(self) -> int:
        """Partition.effectiveMinIsr: min(min.insync.replicas, replication factor)."""
        return min(self.min_isr, len(self.replicas_ids))

    def leader_replica(self) -> Replica | None:
        """The live leader, if any."""
        if self.lstate is None:
            return None
        return self.replicas[self.lstate.leader]

    def under_min_isr(self) -> bool:
        """Partition.isUnderMinIsr: the committed ISR is smaller than the effective min ISR."""
        return self.lstate is not None and len(self.lstate.isr) < self.effective_min_isr

    def isr_eligible(self, rid: int) -> bool:
        """Partition.isReplicaIsrEligible (KRaft): not fenced and the fetch's broker epoch is current."""
        assert self.lstate is not None
        rep = self.replicas[rid]
        view = self.lstate.followers[rid]
        return rep.alive and view.broker_epoch is not None and view.broker_epoch == rep.broker_epoch

    def _record_committed(self, leader: Replica) -> None:
        for _, rid in leader.log[:leader.hw]:
            if rid not in self.committed:
                self.committed.append(rid)

    def maybe_increment_leader_hw(self) -> bool:
        """Partition.maybeIncrementLeaderHW (P:1174-1201) and UnifiedLog.maybeIncrementHighWatermark (UL:311).

        HW = leader LEO lowered to the LEO of every maximal-ISR member and every caught-up, ISR-eligible
        replica; it only moves up, and not at all while under min ISR.
        """
        ls = self.lstate
        leader = self.leader_replica()
        if ls is None or leader is None or self.under_min_isr():
            return False
        new_hw = leader.leo
        maximal = ls.maximal_isr
        for rid, view in ls.followers.items():
            waits = view.is_caught_up(leader.leo, self.now, self.lag_ms) and self.isr_eligible(rid)
            if view.leo < new_hw and (rid in maximal or waits):
                new_hw = view.leo
        if new_hw > leader.hw:
            leader.hw = new_hw
            self._record_committed(leader)
            self.complete_delayed_produce()
            return True
        return False

    def complete_delayed_produce(self) -> None:
        """Partition.checkEnoughReplicasReachOffset (P:1111-1147) for every waiting acks=-1 request."""
        ls = self.lstate
        leader = self.leader_replica()
        if ls is None or leader is None:
            return
        for req in self.requests:
            if req.status == "pending" and req.last_offset is not None and leader.hw >= req.last_offset + 1:
                if len(ls.maximal_isr) >= self.effective_min_isr:
                    self._ack(req)
                else:
                    req.status = "error:NOT_ENOUGH_REPLICAS_AFTER_APPEND"

    @property
    def acknowledged(self) -> list[str]:
        """Every record acknowledged so far, in offset order: by the leader epoch it was appended in, then offset."""
        return sorted(self.ack_position, key=self.ack_position.__getitem__)

    def _ack(self, req: Request) -> None:
        req.status = "acked"
        assert req.epoch is not None and req.first_offset is not None
        for k, rid in enumerate(req.ids):
            self.ack_position.setdefault(rid, (req.epoch, req.first_offset + k))

    def fail_pending(self, error: str) -> None:
        """Waiting acks=-1 requests end with ``error`` (leader crash or leadership loss)."""
        for req in self.requests:
            if req.status == "pending":
                req.status = f"error:{error}"

    def commit_isr(self, new_isr: list[int]) -> None:
        """The controller accepts an AlterPartition: Partition.handleAlterPartitionUpdate (P:1960-1995)."""
        assert self.lstate is not None
        self.lstate.isr = sorted(new_isr)
        self.lstate.pending = None
        self.c_isr = sorted(new_isr)
        self.c_partition_epoch += 1
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

    def initial_fetch_state(self, rep: Replica) -> FetchState:
        """ReplicaManager.makeFollowers initial state (RM:2581-2586, AFT:487-503)."""
        if self.mode == "fetch_diverging_epoch" and rep.cache.entries:
            return FetchState(rep.leo, False, rep.latest_epoch())
        return FetchState(rep.hw, True, None)

    def make_follower(self, rep: Replica) -> None:
        """Partition.makeFollower plus the fetcher's initial state; the log is not truncated."""
        rep.role = "follower"
        rep.fetch = self.initial_fetch_state(rep)

    def make_leader(self, rid: int, was_leader: bool) -> None:
        """Partition.makeLeader (P:778-808) and Replica.resetReplicaState (R:150-190)."""
        rep = self.replicas[rid]
        rep.role = "leader"
        rep.fetch = None
        rep.cache.assign(self.c_leader_epoch, rep.leo)
        start = rep.leo
        old = self.lstate.followers if (self.lstate is not None and was_leader) else {}
        followers: dict[int, FollowerView] = {}
        for other in self.replicas_ids:
            if other == rid:
                continue
            in_sync = other in self.c_isr
            caught = self.now if in_sync else 0
            if was_leader and other in old:
                prev = old[other]
                followers[other] = FollowerView(prev.leo, caught, self.now if in_sync else 0, start,
                                                prev.broker_epoch)
            else:
                followers[other] = FollowerView(-1, caught, 0, -1, None)
        self.lstate = LeaderState(rid, self.c_leader_epoch, list(self.c_isr), start, followers)
        self._record_committed(rep)
        self.maybe_increment_leader_hw()

    # ---------------------------------------------------------------- events

    def produce(self, event: dict[str, Any]) -> None:
        """Partition.appendRecordsToLeader (P:1380-1400) and ReplicaManager acks handling."""
        n = int(event["records"])
        acks = int(event["acks"])
        ids = list(event.get("ids") or [])
        if not ids:
            ids = [f"m{self.next_id + i}" for i in range(n)]
        self.next_id += n
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
            self._ack(req)
        self.maybe_increment_leader_hw()
        self.complete_delayed_produce()

    def tick(self) -> None:
        """Partition.maybeShrinkIsr (P:1253-1330): drop ISR members that are not caught up."""
        ls = self.lstate
        leader = self.leader_replica()
        if ls is None or leader is None or ls.pending is not None:
            return
        out = [r for r in ls.isr if r != ls.leader
               and not ls.followers[r].is_caught_up(leader.leo, self.now, self.lag_ms)]
        if out:
            self.propose_isr("shrink", [r for r in ls.isr if r not in out])

    def crash(self, event: dict[str, Any]) -> None:
        """The broker stops; only its flushed log survives; a leader leaves the partition leaderless."""
        rep = self.replicas[int(event["replica"])]
        if not rep.alive:
            return
        flushed = event.get("flushed_offset")
        checkpoint = event.get("hw_checkpoint")
        rep.hw_checkpoint = rep.hw if checkpoint is None else int(checkpoint)
        keep = rep.leo if flushed is None else max(0, min(int(flushed), rep.leo))
        del rep.log[keep:]
        rep.alive = False
        rep.fetch = None
        if self.lstate is not None and self.lstate.leader == rep.rid:
            self.fail_pending("REQUEST_TIMED_OUT")
            self.lstate = None
            self.c_leader = None
        rep.role = "none"

    def restart(self, event: dict[str, Any]) -> None:
        """Log recovery to the flushed end (LL:218), HW from the checkpoint (P:488-495, UL:288)."""
        rep = self.replicas[int(event["replica"])]
        if rep.alive:
            return
        rep.alive = True
        rep.cache.truncate_from_end(rep.leo)
        rep.hw = max(0, min(rep.hw_checkpoint, rep.leo))
        rep.broker_epoch += 1
        rep.role = "none"
        if self.lstate is not None:
            self.make_follower(rep)

    def elect(self, event: dict[str, Any]) -> None:
        """The controller elects a leader; epochs go up; leader and followers apply the change."""
        rid = int(event["leader"])
        clean = bool(event.get("clean", True))
        rep = self.replicas[rid]
        if not rep.alive:
            raise ScenarioError(f"replica {rid} is not alive and cannot be elected")
        if clean:
            if rid not in self.c_isr:
                raise ScenarioError(f"clean election of {rid}, which is not in the ISR {self.c_isr}")
            new_isr = sorted(r for r in self.c_isr if self.replicas[r].alive)
        else:
            if not self.unclean_allowed:
                raise ScenarioError("unclean election while unclean_leader_election is false")
            new_isr = [rid]
            self.unclean_happened = True
        was_leader = self.lstate is not None and self.lstate.leader == rid
        if self.lstate is not None and not was_leader:
            self.fail_pending("NOT_LEADER_OR_FOLLOWER")
        self.c_leader = rid
        self.c_leader_epoch += 1
        self.c_partition_epoch += 1
        self.c_isr = new_isr
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

    def _truncate(self, rep: Replica, offset: int) -> None:
        before = rep.leo
        rep.truncate_to(offset)
        self.notes.append(f"replica {rep.rid} truncated to {offset} (LEO {before} -> {rep.leo})")

    def _epoch_truncation(self, rep: Replica, l_epoch: int, l_end: int) -> bool:
        """AbstractFetcherThread.getOffsetTruncationState (AFT:583-628); True when the truncation is final."""
        assert rep.fetch is not None
        if l_end == UNDEFINED:
            # The leader knows no end offset: truncate to the initial fetch offset (the HW).
            self._truncate(rep, rep.fetch.offset)
            return True
        if l_epoch == UNDEFINED:
            self._truncate(rep, min(l_end, rep.leo))
            return True
        f_epoch, f_end = rep.cache.end_offset_for(l_epoch, rep.leo)
        if f_end == UNDEFINED:
            self._truncate(rep, min(l_end, rep.leo))
            return True
        if f_epoch != l_epoch:
            # KIP-279: the follower does not know the leader's epoch; another round follows.
            self.notes.append(f"replica {rep.rid} has no epoch {l_epoch}: it truncates to the end of its epoch "
                              f"{f_epoch}, and that truncation is not final")
            self._truncate(rep, min(f_end, rep.leo))
            return False
        self._truncate(rep, min(l_end, f_end, rep.leo))
        return True

    def _after_truncation(self, rep: Replica, final: bool) -> None:
        """AbstractFetcherThread.updateFetchOffsetAndMaybeMarkTruncationComplete: the new fetch state.

        The fetch offset is the truncation offset and ``lastFetchedEpoch`` the log's latest epoch. With
        truncation on fetch (``isTruncationOnFetchSupported``) the partition goes back to fetching even when
        the truncation is not final: the next Fetch carries the new ``lastFetchedEpoch`` and the leader answers
        with the next diverging epoch, one round per fetch. Only the OffsetsForLeaderEpoch protocol stays in
        the truncating state for another exchange.
        """
        assert rep.fetch is not None
        rep.fetch.offset = rep.leo
        rep.fetch.truncating = not final and self.mode != "fetch_diverging_epoch"
        rep.fetch.last_fetched_epoch = None if self.mode == "high_watermark" else rep.latest_epoch()

    def fetch(self, event: dict[str, Any]) -> None:
        """One pass of a follower's fetcher thread: truncation when truncating, then one Fetch round trip."""
        rep = self.replicas[int(event["replica"])]
        ls = self.lstate
        leader = self.leader_replica()
        if not rep.alive or rep.role != "follower" or rep.fetch is None or ls is None or leader is None:
            return
        outcome = event.get("outcome", "complete")
        if rep.fetch.truncating:
            if self.mode == "high_watermark" or not rep.cache.entries:
                # AFT:235-251: truncate to the own HW without asking the leader.
                self._truncate(rep, rep.hw)
                self._after_truncation(rep, True)
            else:
                if outcome == "request_lost":
                    return  # the OffsetsForLeaderEpoch request is the first request: nothing changes
                asked = rep.latest_epoch()
                assert asked is not None
                l_epoch, l_end = leader.cache.end_offset_for(asked, leader.leo)
                if self.mode == "offsets_for_leader_epoch_v0":
                    l_epoch = UNDEFINED
                self.notes.append(f"OffsetsForLeaderEpoch(epoch={asked}) from {rep.rid} -> "
                                  f"(epoch={l_epoch}, end_offset={l_end})")
                final = self._epoch_truncation(rep, l_epoch, l_end)
                self._after_truncation(rep, final)
                if not final:
                    return
        if outcome == "request_lost":
            return
        limit = event.get("max_records")  # absent: no limit; 0: an empty fetch (it still carries the HW)
        self._fetch_round_trip(rep, ls, leader, None if limit is None else int(limit),
                               deliver=outcome == "complete")

    def _fetch_round_trip(self, rep: Replica, ls: LeaderState, leader: Replica, max_records: int | None,
                          *, deliver: bool) -> None:
        """Partition.fetchRecords / updateFollowerFetchState (P:920-966, P:1463-1565) and the follower side."""
        assert rep.fetch is not None
        offset = rep.fetch.offset
        hw_before = leader.hw
        leo_before = leader.leo
        epoch_sent = self.mode == "fetch_diverging_epoch" and rep.fetch.last_fetched_epoch is not None
        d_epoch, d_end = UNDEFINED, UNDEFINED
        if epoch_sent:
            assert rep.fetch.last_fetched_epoch is not None
            d_epoch, d_end = leader.cache.end_offset_for(rep.fetch.last_fetched_epoch, leader.leo)
        # P:1538-1550: an unknown last fetched epoch, or an offset outside the log, is OFFSET_OUT_OF_RANGE;
        # with an epoch, the divergence check comes before the read's range check.
        unknown_epoch = epoch_sent and (d_epoch == UNDEFINED or d_end == UNDEFINED)
        diverging = epoch_sent and not unknown_epoch and offset >= 0 and (
            d_epoch < (rep.fetch.last_fetched_epoch or 0) or d_end < offset)
        if unknown_epoch or (not diverging and (offset > leader.leo or offset < 0)):
            # AFT:637-700 fetchOffsetAndTruncate: the follower resets its position.
            if unknown_epoch:
                why = (f"the leader has no epoch {rep.fetch.last_fetched_epoch} (the follower's last fetched "
                       "epoch) in its cache")
            elif offset > leader.leo:
                why = (f"offset {offset} is past the leader's log end {leader.leo} (a fetch at the log end is "
                       "empty, not out of range)")
            else:
                why = f"offset {offset} is negative"
            self.notes.append(f"fetch from {rep.rid} at {offset}: OFFSET_OUT_OF_RANGE: {why}")
            if not deliver:
                return
            if leader.leo < rep.leo:
                self._truncate(rep, leader.leo)
            rep.fetch.offset = rep.leo
            rep.fetch.truncating = False
            rep.fetch.last_fetched_epoch = None if self.mode == "high_watermark" else rep.latest_epoch()
            return
        if diverging:
            # P:1538-1565: diverging epoch; the follower's state is not updated (KAFKA-13141).
            self.notes.append(f"fetch from {rep.rid} at {offset}: diverging epoch "
                              f"(epoch={d_epoch}, end_offset={d_end})")
            if deliver:
                final = self._epoch_truncation(rep, d_epoch, d_end)
                self._after_truncation(rep, final)
            return
        end = leader.leo if max_records is None else min(leader.leo, offset + max_records)
        records = list(leader.log[offset:end])
        self._update_follower_fetch_state(rep.rid, offset, leo_before)
        response_hw = hw_before if records else leader.hw
        if not deliver:
            return
        rep.append(records)
        # RFT:132, UL:288-299: follower HW = min(response HW, own LEO); it can go down.
        rep.hw = min(response_hw, rep.leo)
        rep.fetch.offset = rep.leo
        rep.fetch.truncating = False
        if records and self.mode != "high_watermark":
            rep.fetch.last_fetched_epoch = records[-1][0]

    def _update_follower_fetch_state(self, rid: int, offset: int, leader_leo: int) -> None:
        """Partition.updateFollowerFetchState (P:920-966) with Replica.updateFetchStateOrThrow (R:112-145)."""
        ls = self.lstate
        assert ls is not None
        view = ls.followers[rid]
        prev_leo = view.leo
        if offset >= leader_leo:
            view.last_caught_up_ms = max(view.last_caught_up_ms, self.now)
        elif offset >= view.last_fetch_leader_leo:
            view.last_caught_up_ms = max(view.last_caught_up_ms, view.last_fetch_ms)
        view.leo = offset
        view.last_fetch_leader_leo = max(leader_leo, view.last_fetch_leader_leo)
        view.last_fetch_ms = self.now
        view.broker_epoch = self.replicas[rid].broker_epoch
        self._maybe_expand_isr(rid)
        if prev_leo != view.leo:
            self.maybe_increment_leader_hw()

    def _maybe_expand_isr(self, rid: int) -> None:
        """Partition.maybeExpandIsr / isFollowerInSync (P:1030-1100)."""
        ls = self.lstate
        leader = self.leader_replica()
        assert ls is not None and leader is not None
        if ls.pending is not None or rid in ls.isr or not self.isr_eligible(rid):
            return
        view = ls.followers[rid]
        if view.leo >= leader.hw and view.leo >= ls.epoch_start_offset:
            self.propose_isr("expand", [*ls.isr, rid])

    # ---------------------------------------------------------------- output

    def snapshot(self, after: int | str) -> dict[str, Any]:
        """The state in the ``expected.steps`` shape."""
        reps: dict[str, Any] = {}
        for rid in self.replicas_ids:
            rep = self.replicas[rid]
            if not rep.alive:
                reps[str(rid)] = {"alive": False, "disk_leo": rep.leo}
                continue
            out: dict[str, Any] = {"alive": True, "role": rep.role, "leo": rep.leo, "hw": rep.hw,
                                   "epoch_cache": [list(e) for e in rep.cache.pairs()],
                                   "log": [f"{e}:{i}" for e, i in rep.log]}
            if rep.role == "follower" and rep.fetch is not None:
                out["fetch_state"] = {"fetch_offset": rep.fetch.offset,
                                      "state": "truncating" if rep.fetch.truncating else "fetching",
                                      "last_fetched_epoch": rep.fetch.last_fetched_epoch}
            reps[str(rid)] = out
        ls = self.lstate
        view = None
        if ls is not None:
            pending = None if ls.pending is None else {"type": ls.pending[0], "isr": list(ls.pending[1])}
            view = {"leader": ls.leader, "leader_epoch": ls.leader_epoch, "isr": list(ls.isr),
                    "maximal_isr": ls.maximal_isr, "pending_isr_change": pending,
                    "under_min_isr": self.under_min_isr(),
                    "followers": {str(r): {"leo": v.leo, "last_caught_up_ms": v.last_caught_up_ms,
                                           "last_fetch_ms": v.last_fetch_ms,
                                           "last_fetch_leader_leo": v.last_fetch_leader_leo}
                                  for r, v in sorted(ls.followers.items())}}
        step: dict[str, Any] = {
            "after": after, "replicas": reps,
            "controller": {"leader": self.c_leader, "leader_epoch": self.c_leader_epoch,
                           "partition_epoch": self.c_partition_epoch, "isr": list(self.c_isr)},
            "leader_view": view,
            "requests": [{"request": n, "ids": list(r.ids), "first_offset": r.first_offset,
                          "last_offset": r.last_offset, "acks": r.acks, "status": r.status}
                         for n, r in enumerate(self.requests)],
            "acknowledged": list(self.acknowledged),
        }
        if self.notes:
            step["notes"] = list(self.notes)
        return step

    def final(self) -> dict[str, Any]:
        """The ``expected.final`` summary: losses and divergence against the final leader's log."""
        leader = self.leader_replica()
        ids = {i for _, i in leader.log} if leader is not None else set()
        diverged: dict[str, bool] = {}
        if leader is not None:
            for rid in self.replicas_ids:
                rep = self.replicas[rid]
                if rid != leader.rid and rep.alive:
                    n = min(rep.leo, leader.leo)
                    diverged[str(rid)] = rep.log[:n] != leader.log[:n]
        return {"leader": self.c_leader,
                "acknowledged_lost": [i for i in self.acknowledged if i not in ids],
                "committed_lost": [i for i in self.committed if i not in ids],
                "diverged_from_leader": diverged}


# --------------------------------------------------------------------------- building and running


def _build_log(spec: list[dict[str, Any]]) -> list[tuple[int, str]]:
    log: list[tuple[int, str]] = []
    for item in spec:
        if "count" in item:
            ids = item.get("ids")
            for k in range(int(item["count"])):
                off = len(log)
                log.append((int(item["epoch"]), ids[k] if ids else f"e{item['epoch']}o{off}"))
        else:
            off = int(item["offset"])
            if off != len(log):
                raise ScenarioError(f"log record at offset {off} does not follow offset {len(log) - 1}")
            log.append((int(item["epoch"]), item.get("id") or f"e{item['epoch']}o{off}"))
    return log


def _rebuild_cache(log: list[tuple[int, str]]) -> LeaderEpochCache:
    cache = LeaderEpochCache()
    for off, (epoch, _) in enumerate(log):
        cache.assign(epoch, off)
    return cache


def start(scenario: dict[str, Any]) -> Simulation:
    """Start-up: build the replicas and apply one LeaderAndIsr (makeLeader / makeFollower)."""
    s = scenario["settings"]
    init = scenario["initial"]
    ids = [int(r) for r in s["replicas"]]
    reps: dict[int, Replica] = {}
    for rid in ids:
        spec = init["replicas"].get(str(rid), {"log": [], "hw": 0})
        log = _build_log(spec.get("log", []))
        cache = LeaderEpochCache.from_pairs(spec["epoch_cache"]) if spec.get("epoch_cache") is not None \
            else _rebuild_cache(log)
        hw = max(0, min(int(spec.get("hw", 0)), len(log)))
        reps[rid] = Replica(rid, log, hw, cache)
    leader = init.get("leader")
    sim = Simulation(ids, int(s.get("min_insync_replicas", 1)), int(s.get("replica_lag_time_max_ms", 30000)),
                     bool(s.get("unclean_leader_election", False)), s.get("truncation", MODES[0]),
                     bool(s.get("alter_partition_auto_commit", True)), int(init.get("t_ms", 0)), reps,
                     None if leader is None else int(leader), int(init.get("leader_epoch", 0)),
                     int(init.get("partition_epoch", 0)), sorted(int(r) for r in init.get("isr", ids)))
    if sim.c_leader is not None:
        sim.make_leader(sim.c_leader, False)
        for rid in ids:
            if rid != sim.c_leader:
                sim.make_follower(reps[rid])
    return sim


HANDLERS = {"produce": Simulation.produce, "fetch": Simulation.fetch, "crash": Simulation.crash,
            "restart": Simulation.restart, "elect": Simulation.elect,
            "alter_partition_response": Simulation.alter_partition_response}


def apply(sim: Simulation, event: dict[str, Any]) -> None:
    """Apply one event at its time."""
    sim.now = max(sim.now, int(event.get("t_ms", sim.now)))
    sim.notes = []
    kind = event["type"]
    if kind == "tick":
        sim.tick()
    elif kind in HANDLERS:
        HANDLERS[kind](sim, event)
    else:
        raise ScenarioError(f"unknown event type {kind!r}")


@dataclass
class RunResult:
    """Every step, the final summary and the invariant violations."""

    steps: list[dict[str, Any]]
    final: dict[str, Any]
    violations: list[Violation]


def check_invariants(sim: Simulation, prev: dict[str, Any] | None, after: int | str,
                     acked_all: set[str], reported: set[str]) -> list[Violation]:
    """Invariants after a step: leader HW monotonic; HW <= maximal-ISR LEOs; acks=all kept; follower HW <= LEO.

    The acks=all rule holds only while every election was clean; a lost record is reported once.
    """
    out: list[Violation] = []
    ls = sim.lstate
    leader = sim.leader_replica()
    if ls is not None and leader is not None:
        if prev and prev["leader_view"] and prev["leader_view"]["leader"] == ls.leader \
                and prev["leader_view"]["leader_epoch"] == ls.leader_epoch:
            old = prev["replicas"][str(ls.leader)].get("hw", 0)
            if leader.hw < old:
                out.append(Violation(after, "leader-hw-decreased",
                                     f"leader {ls.leader} HW went down from {old} to {leader.hw}"))
        for rid in ls.maximal_isr:
            rep = sim.replicas[rid]
            if rid != ls.leader and rep.alive and rep.role == "follower" and leader.hw > rep.leo:
                out.append(Violation(after, "hw-above-isr-leo",
                                     f"leader HW {leader.hw} is above the LEO {rep.leo} of ISR member {rid}"))
        if not sim.unclean_happened:
            have = {i for _, i in leader.log}
            lost = [i for i in sim.acknowledged if i in acked_all and i not in have and i not in reported]
            reported.update(lost)
            if lost:
                out.append(Violation(after, "acked-record-lost",
                                     f"acks=all records acknowledged but missing from leader {ls.leader}: "
                                     + ", ".join(lost)))
    for rid in sim.replicas_ids:
        rep = sim.replicas[rid]
        if rep.alive and rep.hw > rep.leo:
            out.append(Violation(after, "hw-above-leo", f"replica {rid} HW {rep.hw} is above its LEO {rep.leo}"))
    return out


def run(scenario: dict[str, Any]) -> RunResult:
    """Run a scenario: the start-up step, then one step per event, with invariant checks."""
    sim = start(scenario)
    steps = [sim.snapshot("initial")]
    reported: set[str] = set()
    violations = check_invariants(sim, None, "initial", set(), reported)
    for n, event in enumerate(scenario["events"]):
        try:
            apply(sim, event)
        except ScenarioError as err:
            err.event_index = n
            raise
        step = sim.snapshot(n)
        acked_all = {i for r in sim.requests if r.acks == -1 and r.status == "acked" for i in r.ids}
        violations += check_invariants(sim, steps[-1], n, acked_all, reported)
        steps.append(step)
    return RunResult(steps, sim.final(), violations)


def compare_steps(actual: list[dict[str, Any]], expected: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Differences between steps, by JSON path (``notes`` are informative and not compared)."""
    diffs: list[dict[str, Any]] = []

    def walk(a: Any, e: Any, path: str, step: Any) -> None:
        if isinstance(a, dict) and isinstance(e, dict):
            for key in sorted(set(a) | set(e), key=str):
                if key == "notes" and path.count(".") == 0:
                    continue
                walk(a.get(key, "<absent>"), e.get(key, "<absent>"), f"{path}.{key}" if path else str(key), step)
        elif a != e:
            diffs.append({"step": step, "path": path, "expected": copy.deepcopy(e), "actual": copy.deepcopy(a)})

    for n in range(max(len(actual), len(expected))):
        a = actual[n] if n < len(actual) else {}
        e = expected[n] if n < len(expected) else {}
        walk(a, e, "", e.get("after", a.get("after")))
    return diffs
