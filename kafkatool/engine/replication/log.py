"""One broker's copy of the partition: its log, high watermark and leader-epoch cache.

Models what ``UnifiedLog`` keeps for the replication model (trunk at 1eb76443, cited as UL:line): the
records (as ``(leader epoch, id)`` pairs, one per offset), the high watermark and the
``LeaderEpochFileCache`` (``kafkatool.storage.LeaderEpochCache``), with ``truncateTo`` and ``append``. Beside
the log it holds what the broker itself knows of the partition: alive or crashed, its role, its broker
epoch, the HW it last checkpointed and, as a follower, the fetcher's state for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafkatool.storage import LeaderEpochCache

if TYPE_CHECKING:
    from kafkatool.engine.replication.fetcher import FetchState


@dataclass
class LocalReplica:
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

    def crash(self, flushed_offset: int | None, hw_checkpoint: int | None) -> None:
        """The broker stops: the log keeps what was flushed, the HW checkpoint what was last written."""
        self.hw_checkpoint = self.hw if hw_checkpoint is None else int(hw_checkpoint)
        keep = self.leo if flushed_offset is None else max(0, min(int(flushed_offset), self.leo))
        del self.log[keep:]
        self.alive = False
        self.fetch = None

    def recover(self) -> None:
        """Restart: log recovery to the flushed end (LL:218), the cache cut there, the HW from the checkpoint
        (P:488-495, UL:288); a new broker epoch."""
        self.alive = True
        self.cache.truncate_from_end(self.leo)
        self.hw = max(0, min(self.hw_checkpoint, self.leo))
        self.broker_epoch += 1
        self.role = "none"
