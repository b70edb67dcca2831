"""Produce requests and their acknowledgements: ``ReplicaManager.appendRecords`` and ``DelayedProduce``.

Follows ``ReplicaManager`` (trunk at 1eb76443) for the acks handling (acks=0 sent, acks=1 acknowledged on
the leader's append, acks=-1 waiting in ``DelayedProduce``) and ``Partition.checkEnoughReplicasReachOffset``
(P:1111-1147) for when a waiting request completes. Also keeps what the model reports: every acknowledged
id's position and every id that was ever below a leader's high watermark (committed).
"""

from __future__ import annotations

from dataclasses import dataclass, field


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
class Produces:
    """Every produce request so far, the acknowledged and committed ids, and the next generated id."""

    requests: list[Request] = field(default_factory=list)
    ack_position: dict[str, tuple[int, int]] = field(default_factory=dict)
    committed: list[str] = field(default_factory=list)
    next_id: int = 1

    def new_ids(self, count: int, given: list[str]) -> list[str]:
        """The request's record ids: ``given``, or generated ``m<n>``; generated numbers advance either way."""
        ids = list(given) or [f"m{self.next_id + i}" for i in range(count)]
        self.next_id += count
        return ids

    @property
    def acknowledged(self) -> list[str]:
        """Every record acknowledged so far, in offset order: by the leader epoch it was appended in, then offset."""
        return sorted(self.ack_position, key=self.ack_position.__getitem__)

    def ack(self, req: Request) -> None:
        """The request is acknowledged; each id keeps the first (epoch, offset) it was acknowledged at."""
        req.status = "acked"
        assert req.epoch is not None and req.first_offset is not None
        for k, rid in enumerate(req.ids):
            self.ack_position.setdefault(rid, (req.epoch, req.first_offset + k))

    def fail_pending(self, error: str) -> None:
        """Waiting acks=-1 requests end with ``error`` (leader crash or leadership loss)."""
        for req in self.requests:
            if req.status == "pending":
                req.status = f"error:{error}"

    def complete_delayed(self, leader_hw: int, enough_replicas: bool) -> None:
        """Partition.checkEnoughReplicasReachOffset (P:1111-1147) for every waiting acks=-1 request.

        A request whose last offset is below the HW completes: acknowledged when the maximal ISR is at least
        the min ISR (``enough_replicas``), NOT_ENOUGH_REPLICAS_AFTER_APPEND otherwise.
        """
        for req in self.requests:
            if req.status == "pending" and req.last_offset is not None and leader_hw >= req.last_offset + 1:
                if enough_replicas:
                    self.ack(req)
                else:
                    req.status = "error:NOT_ENOUGH_REPLICAS_AFTER_APPEND"

    def record_committed(self, below_hw: list[tuple[int, str]]) -> None:
        """Every id below a leader's HW counts as committed, in the order first seen."""
        for _, rid in below_hw:
            if rid not in self.committed:
                self.committed.append(rid)
