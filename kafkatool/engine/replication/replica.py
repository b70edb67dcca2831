"""The leader's record of one follower: ``kafka.cluster.Replica`` and its ``ReplicaState``.

Follows ``Replica.scala`` (trunk at 1eb76443, cited as R:line): the follower's LEO as its last fetch
showed it, when it was last caught up, when it last fetched and the leader's LEO at that fetch, and the
broker epoch the fetch carried (KRaft's ISR eligibility).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Replica:
    """One follower as the leader sees it (``ReplicaState``)."""

    leo: int = -1
    last_caught_up_ms: int = 0
    last_fetch_ms: int = 0
    last_fetch_leader_leo: int = -1
    broker_epoch: int | None = None

    def is_caught_up(self, leader_leo: int, now: int, lag_ms: int) -> bool:
        """Replica.isCaughtUp (R:67-73): LEO equals the leader's, or caught up within the lag (inclusive)."""
        return leader_leo == self.leo or now - self.last_caught_up_ms <= lag_ms

    def update_fetch_state(self, offset: int, leader_leo: int, now: int, broker_epoch: int) -> bool:
        """Replica.updateFetchStateOrThrow (R:112-145) for a fetch at ``offset``; True when the LEO changed.

        A fetch at the leader's LEO catches up now; one at or past the leader's LEO of the previous fetch
        catches up as of that fetch.
        """
        prev_leo = self.leo
        if offset >= leader_leo:
            self.last_caught_up_ms = max(self.last_caught_up_ms, now)
        elif offset >= self.last_fetch_leader_leo:
            self.last_caught_up_ms = max(self.last_caught_up_ms, self.last_fetch_ms)
        self.leo = offset
        self.last_fetch_leader_leo = max(leader_leo, self.last_fetch_leader_leo)
        self.last_fetch_ms = now
        self.broker_epoch = broker_epoch
        return prev_leo != self.leo

    @classmethod
    def reset(cls, previous: Replica | None, *, in_sync: bool, now: int, leader_leo: int) -> Replica:
        """Replica.resetReplicaState (R:150-190) when a leader takes over (``previous`` when it already led).

        An ISR member counts as caught up now. A new leader knows nothing else of the follower; a leader that
        stays keeps its LEO and broker epoch and dates the last fetch of an ISR member now, at its own LEO.
        """
        caught = now if in_sync else 0
        if previous is None:
            return cls(-1, caught, 0, -1, None)
        return cls(previous.leo, caught, now if in_sync else 0, leader_leo, previous.broker_epoch)
