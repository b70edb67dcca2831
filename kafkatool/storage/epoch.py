"""The leader-epoch cache: Kafka's ``LeaderEpochFileCache`` without its checkpoint file.

Follows storage's ``org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache`` (trunk at 1eb76443, cited
as LEFC:line). Kafka keys its entries by epoch in a ``TreeMap``; here they are a list in cache order, which is
the same thing for every cache Kafka can hold (epochs and start offsets both strictly increasing, as
``assign`` keeps them). The list form also answers for the hand-written caches of replication scenarios,
which need not be monotonic: "latest" is the last entry, and ``end_offset_for`` takes the first entry above
and the last entry at or below the requested epoch. Reading and writing the checkpoint file is
``schema.checkpoint``'s; this module is pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kafkatool.model import LeaderEpochEntry

UNDEFINED_EPOCH = -1
"""``OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH``."""
UNDEFINED_EPOCH_OFFSET = -1
"""``OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH_OFFSET``."""


class LeaderEpochCache:
    """Epoch -> first offset of that epoch, for one partition replica (``LeaderEpochFileCache``)."""

    __slots__ = ("entries",)

    def __init__(self, entries: Iterable[LeaderEpochEntry] = ()) -> None:
        """The entries exactly as given, like LEFC's private constructor from a list (LEFC:87-99)."""
        self.entries: list[LeaderEpochEntry] = list(entries)

    @classmethod
    def from_pairs(cls, pairs: Iterable[Sequence[int]]) -> LeaderEpochCache:
        """The entries of ``(epoch, start_offset)`` pairs, exactly as given."""
        return cls(LeaderEpochEntry(int(epoch), int(start)) for epoch, start in pairs)

    @classmethod
    def from_checkpoint(cls, entries: Iterable[LeaderEpochEntry] | None) -> LeaderEpochCache:
        """The cache a broker builds from its checkpoint: every entry through ``assign`` (LEFC:70-77).

        Kafka's ``assign`` throws ``IllegalArgumentException`` on a negative epoch or start offset
        (LEFC:127-129); a forensic reader leaves such an entry out instead and keeps going.
        """
        cache = cls()
        for entry in entries or ():
            if entry.epoch >= 0 and entry.start_offset >= 0:
                cache.assign(entry.epoch, entry.start_offset)
        return cache

    def __repr__(self) -> str:
        return f"LeaderEpochCache({self.pairs()!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LeaderEpochCache) and self.entries == other.entries

    __hash__ = None  # type: ignore[assignment]  # mutable

    def pairs(self) -> list[tuple[int, int]]:
        """The entries as ``(epoch, start_offset)`` tuples, in cache order."""
        return [(e.epoch, e.start_offset) for e in self.entries]

    def latest_entry(self) -> LeaderEpochEntry | None:
        """``latestEntry`` (LEFC:191-198): the last entry, or None when the cache is empty."""
        return self.entries[-1] if self.entries else None

    def latest_epoch(self) -> int | None:
        """``latestEpoch`` (LEFC:204-206): the last entry's epoch, or None when the cache is empty."""
        return self.entries[-1].epoch if self.entries else None

    def assign(self, epoch: int, start_offset: int) -> bool:
        """``assign`` (LEFC:105-164); True when the cache changed.

        Nothing changes when the latest entry has this epoch and starts at or before ``start_offset``
        (``isUpdateNeeded``). Otherwise entries are removed from the end while their epoch or their start
        offset is at least the new entry's (``maybeTruncateNonMonotonicEntries``), and the new entry is
        appended. Unlike Kafka no negative epoch or offset is rejected here: every caller leaves those out
        before it calls, as Kafka's own callers do.
        """
        last = self.latest_entry()
        if last is not None and last.epoch == epoch and start_offset >= last.start_offset:
            return False
        while self.entries and (self.entries[-1].epoch >= epoch or self.entries[-1].start_offset >= start_offset):
            self.entries.pop()
        self.entries.append(LeaderEpochEntry(epoch, start_offset))
        return True

    def truncate_from_end(self, end_offset: int) -> list[LeaderEpochEntry]:
        """``truncateFromEndAsyncFlush`` / ``truncateFromEnd`` (LEFC:337-357, 405-411).

        Removes every entry starting at or after ``end_offset``, from the end; a negative ``end_offset``
        removes nothing. Returns the removed entries, latest first.
        """
        if end_offset < 0:
            return []
        return self._pop_from_end(end_offset)

    def drop_entries_from(self, offset: int) -> list[LeaderEpochEntry]:
        """Removes entries from the end while they start at or after ``offset``, whatever its sign.

        ``truncate_from_end`` without its ``endOffset >= 0`` check (LEFC:407). The replication model's
        ``UnifiedLog.truncateTo`` cuts its cache with this: Kafka rejects a negative target before it
        reaches the cache (``UnifiedLog.truncateTo`` throws), and the model, which does not, has always
        cut scenario caches that way. Returns the removed entries, latest first.
        """
        return self._pop_from_end(offset)

    def _pop_from_end(self, offset: int) -> list[LeaderEpochEntry]:
        removed = []
        while self.entries and self.entries[-1].start_offset >= offset:
            removed.append(self.entries.pop())
        return removed

    def truncate_from_start(self, start_offset: int) -> list[LeaderEpochEntry]:
        """``truncateFromStartAsyncFlush`` / ``truncateFromStart`` (LEFC:369-403).

        Removes entries from the front while they start at or before ``start_offset``; if any went, the
        last of them comes back starting at ``start_offset`` (so an entry at exactly ``start_offset`` stays).
        Returns the removed entries, earliest first.
        """
        removed = []
        while self.entries and self.entries[0].start_offset <= start_offset:
            removed.append(self.entries.pop(0))
        if removed:
            self.entries.insert(0, LeaderEpochEntry(removed[-1].epoch, start_offset))
        return removed

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """``endOffsetFor`` (LEFC:286-330): the (epoch, end offset) an OffsetsForLeaderEpoch answer carries.

        - the undefined epoch (-1), or an empty cache: (-1, -1);
        - the latest epoch: (that epoch, ``log_end_offset``);
        - otherwise, with H the first entry of a higher epoch: none is (-1, -1); with F the last entry of an
          epoch at or below the requested one, (F's epoch, H's start), or (the requested epoch, H's start)
          when there is no F.
        """
        if requested_epoch == UNDEFINED_EPOCH or not self.entries:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if self.entries[-1].epoch == requested_epoch:
            return requested_epoch, log_end_offset
        higher = next((e for e in self.entries if e.epoch > requested_epoch), None)
        if higher is None:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        floor = [e for e in self.entries if e.epoch <= requested_epoch]
        return (floor[-1].epoch if floor else requested_epoch), higher.start_offset

    def clear(self) -> None:
        """``clear`` / ``clearAndFlush`` (LEFC:477-494): no entries left."""
        self.entries.clear()
