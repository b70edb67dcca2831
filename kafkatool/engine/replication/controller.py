"""The controller's record of the partition and its elections (KRaft ``PartitionChangeBuilder``).

Follows the KRaft controller's partition registration (``ReplicationControlManager`` /
``PartitionChangeBuilder``, trunk at 1eb76443): leader, leader epoch, partition epoch and ISR. An election
bumps both epochs; a clean one keeps the live ISR members, an unclean one (``unclean.leader.election.enable``)
leaves the new leader alone in the ISR; an accepted AlterPartition bumps the partition epoch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kafkatool.engine.replication.scenario import ScenarioError


@dataclass
class Controller:
    """The partition as the controller holds it."""

    leader: int | None
    leader_epoch: int
    partition_epoch: int
    isr: list[int]
    unclean_allowed: bool

    def elect(self, rid: int, *, clean: bool, alive: Mapping[int, bool]) -> None:
        """Elect ``rid``; ScenarioError when it is not alive, or a clean election's candidate is outside the
        ISR, or an unclean election is not allowed. ``alive``: each replica's liveness."""
        if not alive[rid]:
            raise ScenarioError(f"replica {rid} is not alive and cannot be elected")
        if clean:
            if rid not in self.isr:
                raise ScenarioError(f"clean election of {rid}, which is not in the ISR {self.isr}")
            new_isr = sorted(r for r in self.isr if alive[r])
        else:
            if not self.unclean_allowed:
                raise ScenarioError("unclean election while unclean_leader_election is false")
            new_isr = [rid]
        self.leader = rid
        self.leader_epoch += 1
        self.partition_epoch += 1
        self.isr = new_isr

    def alter_partition(self, new_isr: list[int]) -> None:
        """An accepted AlterPartition: the new ISR, one partition epoch later."""
        self.isr = sorted(new_isr)
        self.partition_epoch += 1
