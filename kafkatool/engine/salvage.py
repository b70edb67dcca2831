"""What can be saved of a partition: every trustworthy batch of every copy, chosen as Kafka would choose, and the
log Kafka would load without truncating any of it. Pure: the caller reads, this decides.

Kafka's recovery (``LogLoader.recoverLog`` / ``LogSegment.recover``) keeps nothing past the first invalid batch of
a segment and deletes every later segment. Salvage keeps every batch that can be trusted wherever it is:

* a batch is trusted when its CRC holds (``DefaultRecordBatch.ensureValid``) and its offsets agree with its
  neighbours in the same file (rising, not overlapping: the base offset, length and leader epoch are outside the
  CRC, so a flipped offset is caught only there);
* where copies hold the same offsets, the copy on the lineage of the final leader's epoch cache wins
  (``LeaderEpochFileCache``: the epoch that covers those offsets there), else the highest epoch
  (``Partition.makeLeader`` / fetcher truncation keeps the newer leader's log), then the live segment over a
  leftover; a batch overlapping a chosen one is a duplicate when it is the same batch, else an overlap whose
  records the caller compares (a conflict when some offset holds other content);
* the chosen batches are laid out as ``UnifiedLog.append`` / ``LogSegment.append`` would lay them out (roll on
  ``segment.bytes``, relative-offset overflow or full indexes; an offset index entry every
  ``index.interval.bytes``, a time index entry with it and at the roll), with the producer state
  (``ProducerStateManager``: snapshots at each segment base and the log end, ``AbortedTxn`` entries of every
  ABORT in the segment holding it) and the epoch cache (``LeaderEpochFileCache.assign``) replayed over them.
"""

from __future__ import annotations

import itertools
from bisect import bisect_right, insort
from dataclasses import dataclass, field

from kafkatool.model import AbortedTxn, LeaderEpochEntry, OffsetIndexEntry, ProducerSnapshotEntry, TimeIndexEntry
from kafkatool.storage import LeaderEpochCache
from kafkatool.storage.producer_state import ABORT_MARKER, NO_MARKER, ProducerStateManager, Transaction

INT_MAX = (1 << 31) - 1
DEFAULT_SEGMENT_BYTES = 1 << 30
DEFAULT_INDEX_INTERVAL_BYTES = 4096
DEFAULT_SEGMENT_INDEX_BYTES = 10 << 20
KIND_RANK = {"segment": 0, "swap": 1, "cleaned": 2, "deleted": 3, "future-dir": 4, "stray-dir": 5, "delete-dir": 6}


@dataclass(slots=True)
class Candidate:
    """One CRC-valid magic 2 batch of one source file (``source`` indexes the caller's list of files)."""

    source: int
    position: int
    size: int
    base_offset: int
    last_offset: int
    epoch: int
    crc: int
    records: int
    attributes: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    last_sequence: int
    max_timestamp: int
    marker: int = NO_MARKER
    coordinator_epoch: int = 0

    @property
    def transactional(self) -> bool:
        """Attribute bit 4."""
        return bool(self.attributes & 0x10)

    @property
    def control(self) -> bool:
        """Attribute bit 5."""
        return bool(self.attributes & 0x20)


@dataclass(frozen=True, slots=True)
class Rejected:
    """A CRC-valid batch left out: its offsets disagree with its neighbours in its file."""

    source: int
    position: int
    base_offset: int
    last_offset: int
    reason: str


@dataclass(frozen=True, slots=True)
class Overlap:
    """A batch of another copy that overlaps chosen batches: ``same`` when it is the very batch chosen."""

    candidate: Candidate
    chosen: tuple[Candidate, ...]
    same: bool


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """What the engine needs to know of a source file to rank its batches."""

    replica: int | None
    kind: str
    base_offset: int


@dataclass
class Selection:
    """The batches chosen (in offset order), those rejected, and the overlaps between copies."""

    chosen: list[Candidate]
    rejected: list[Rejected]
    overlaps: list[Overlap]
    lineage: str


def consistent_in_file(source: int, batches: list[Candidate], file_base: int) -> tuple[list[Candidate], list[Rejected]]:
    """The batches of one file (CRC-valid, in file order) whose offsets rise without overlap, and the others.

    A batch that overlaps the next one while the next follows the previous kept one is the odd one out (its own
    base offset field is damaged); otherwise the later batch is left out."""
    kept: list[Candidate] = []
    rejected: list[Rejected] = []
    prev_last = file_base - 1
    for i, b in enumerate(batches):
        nxt = batches[i + 1] if i + 1 < len(batches) else None
        if b.base_offset <= prev_last:
            rejected.append(Rejected(source, b.position, b.base_offset, b.last_offset,
                                     f"base offset {b.base_offset} is not above the previous batch's last offset "
                                     f"{prev_last}" if kept else
                                     f"base offset {b.base_offset} is below the file's base offset {file_base}"))
            continue
        if nxt is not None and b.last_offset >= nxt.base_offset > prev_last:
            rejected.append(Rejected(source, b.position, b.base_offset, b.last_offset,
                                     f"last offset {b.last_offset} is not below the next batch's base offset "
                                     f"{nxt.base_offset} (the offset fields are outside the CRC)"))
            continue
        kept.append(b)
        prev_last = b.last_offset
    return kept, rejected


def on_lineage(cache: list[LeaderEpochEntry], epoch: int, base: int, last: int) -> bool:
    """Whether ``cache`` (the final leader's epoch cache) gives the batch's offsets to the batch's epoch."""
    for k, e in enumerate(cache):
        if e.epoch == epoch:
            end = cache[k + 1].start_offset if k + 1 < len(cache) else None
            return e.start_offset <= base and (end is None or last < end)
    return False


def select(candidates: list[Candidate], sources: list[SourceInfo], cache: list[LeaderEpochEntry] | None,
           preferred_replica: int | None) -> Selection:
    """Choose, offset by offset, one batch among the copies (see the module docstring for the order)."""
    def rank(c: Candidate) -> tuple[int, int, int, int, int, int]:
        info = sources[c.source]
        lineage = 0 if cache and on_lineage(cache, c.epoch, c.base_offset, c.last_offset) else 1
        return (lineage, -c.epoch, KIND_RANK.get(info.kind, 9), 0 if info.replica == preferred_replica else 1,
                c.source, c.position)

    starts: list[int] = []
    by_start: dict[int, Candidate] = {}
    overlaps: list[Overlap] = []
    for c in sorted(candidates, key=rank):
        i = bisect_right(starts, c.last_offset) - 1
        hit: list[Candidate] = []
        while i >= 0 and by_start[starts[i]].last_offset >= c.base_offset:
            hit.append(by_start[starts[i]])
            i -= 1
        if hit:
            same = len(hit) == 1 and (hit[0].base_offset, hit[0].last_offset, hit[0].crc) == \
                (c.base_offset, c.last_offset, c.crc)
            overlaps.append(Overlap(c, tuple(reversed(hit)), same))
            continue
        insort(starts, c.base_offset)
        by_start[c.base_offset] = c
    how = "final leader's epoch cache" if cache else "highest leader epoch (no epoch cache)"
    chosen, off_lineage = rising_epochs([by_start[s] for s in starts])
    return Selection(chosen, off_lineage, overlaps, how)


def rising_epochs(chosen: list[Candidate]) -> tuple[list[Candidate], list[Rejected]]:
    """The chosen batches (in offset order) whose leader epoch never falls below an earlier one's, and the others.

    A Kafka log's epochs only rise along its offsets: ``LeaderEpochFileCache.assign`` of a lower epoch at a later
    offset truncates the later entries, and a broker loading such a log is left with an epoch cache that no longer
    describes it (its consumers' offset validation stalls; seen live after an unclean election, the old leader's
    epoch-0 suffix placed after the new leader's epoch-2 batches). A copy's batches past the final leader's log
    with an older epoch are the diverged suffix a follower would truncate: left out, and named."""
    kept: list[Candidate] = []
    left: list[Rejected] = []
    top, top_at = -1, -1
    for c in chosen:
        if 0 <= c.epoch < top:
            left.append(Rejected(c.source, c.position, c.base_offset, c.last_offset,
                                 f"leader epoch {c.epoch} below epoch {top} of the batch at offset {top_at} before "
                                 f"it: off the final leader's lineage (a log's epochs only rise)"))
            continue
        if c.epoch > top:
            top, top_at = c.epoch, c.base_offset
        kept.append(c)
    return kept, left


def transaction_states(chosen: list[Candidate]) -> tuple[list[str | None], ProducerStateManager]:
    """Each chosen batch's transaction state (``committed``, ``aborted``, ``open``; ``None`` outside a
    transaction), from the markers, as ``ProducerStateManager`` pairs them; and the manager after the replay."""
    psm = ProducerStateManager(keep_committed=True, refuse_invalid_txn=False)
    txn_of: list[Transaction | None] = []
    for c in chosen:
        txn = None
        if c.producer_id >= 0:
            if c.control:
                if c.marker != NO_MARKER:
                    psm.append_end_txn_marker(c.producer_id, c.producer_epoch, c.coordinator_epoch,
                                              c.marker == ABORT_MARKER, c.base_offset, c.max_timestamp)
            else:
                psm.append_data(c.producer_id, c.producer_epoch, c.last_sequence, c.base_offset, c.last_offset,
                                c.max_timestamp, c.transactional)
                if c.transactional:
                    first = psm.producers[c.producer_id].current_txn_first_offset
                    txn = psm.ongoing.get(first) if first is not None else None
        psm.map_end_offset = c.last_offset + 1
        txn_of.append(txn)
    states: list[str | None] = []
    for c, txn in zip(chosen, txn_of, strict=True):
        if c.control:
            states.append("marker" if c.marker != NO_MARKER else None)
        elif txn is None:
            states.append(None)
        else:
            states.append("open" if txn.aborted is None else "aborted" if txn.aborted else "committed")
    return states, psm


@dataclass
class SegmentPlan:
    """One output segment: its batches (indexes into the chosen list) and rebuilt indexes."""

    base_offset: int
    batches: list[int] = field(default_factory=list)
    size: int = 0
    index: list[OffsetIndexEntry] = field(default_factory=list)
    times: list[TimeIndexEntry] = field(default_factory=list)
    aborted: list[AbortedTxn] = field(default_factory=list)
    since_index: int = 0
    max_ts: int = -1
    max_ts_offset: int = -1

    def time_entry(self) -> None:
        """``TimeIndex.maybeAppend``: only a timestamp above the last entry's."""
        last = self.times[-1].timestamp if self.times else -1
        if self.max_ts > last and self.max_ts >= 0:
            self.times.append(TimeIndexEntry(self.max_ts, self.max_ts_offset))


@dataclass
class LogPlan:
    """The repaired partition: segments, producer snapshots by offset, epoch cache, offsets."""

    segments: list[SegmentPlan]
    snapshots: dict[int, list[ProducerSnapshotEntry]]
    epochs: list[LeaderEpochEntry]
    log_start_offset: int
    log_end_offset: int
    open_transactions: list[Transaction]
    invalid_txn: list[int]


def plan_log(chosen: list[Candidate], *, segment_bytes: int = DEFAULT_SEGMENT_BYTES,
             index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
             segment_index_bytes: int = DEFAULT_SEGMENT_INDEX_BYTES, empty_base: int = 0) -> LogPlan:
    """Lay the chosen batches out as ``UnifiedLog.append`` would (see the module docstring)."""
    max_entries = segment_index_bytes // 12  # the time index fills first (12-byte entries)
    psm = ProducerStateManager(keep_committed=False, refuse_invalid_txn=False)
    epochs = LeaderEpochCache()
    segments: list[SegmentPlan] = []
    snapshots: dict[int, list[ProducerSnapshotEntry]] = {}
    invalid: list[int] = []
    seg: SegmentPlan | None = None
    for k, c in enumerate(chosen):
        if seg is None or (seg.batches and (seg.size > segment_bytes - c.size
                                            or c.last_offset - seg.base_offset > INT_MAX
                                            or len(seg.times) >= max_entries or len(seg.index) >= max_entries)):
            if seg is not None:
                seg.time_entry()
                psm.map_end_offset = c.base_offset
                taken = psm.take_snapshot()
                if taken is not None:
                    snapshots[c.base_offset] = taken
            seg = SegmentPlan(c.base_offset)
            segments.append(seg)
        if c.epoch >= 0:
            epochs.assign(c.epoch, c.base_offset)
        if c.max_timestamp > seg.max_ts:
            seg.max_ts, seg.max_ts_offset = c.max_timestamp, c.last_offset
        if seg.since_index > index_interval_bytes:
            seg.index.append(OffsetIndexEntry(c.last_offset, seg.size))
            seg.time_entry()
            seg.since_index = 0
        seg.since_index += c.size
        if c.producer_id >= 0:
            if c.control:
                if c.marker != NO_MARKER:
                    txn = psm.append_end_txn_marker(c.producer_id, c.producer_epoch, c.coordinator_epoch,
                                                    c.marker == ABORT_MARKER, c.base_offset, c.max_timestamp)
                    if txn is not None and txn.aborted and txn.last_stable_offset is not None:
                        seg.aborted.append(AbortedTxn(0, c.producer_id, txn.first_offset, c.base_offset,
                                                      txn.last_stable_offset))
            else:
                entry = psm.producers.get(c.producer_id)
                if entry is not None and entry.current_txn_first_offset is not None and not c.transactional:
                    invalid.append(c.base_offset)
                psm.append_data(c.producer_id, c.producer_epoch, c.last_sequence, c.base_offset, c.last_offset,
                                c.max_timestamp, c.transactional)
        psm.map_end_offset = c.last_offset + 1
        seg.batches.append(k)
        seg.size += c.size
    if seg is None:
        segments.append(SegmentPlan(empty_base))
        end = empty_base
    else:
        seg.time_entry()
        end = chosen[-1].last_offset + 1
        psm.map_end_offset = end
        taken = psm.take_snapshot()
        if taken is not None:
            snapshots[end] = taken
    start = chosen[0].base_offset if chosen else empty_base
    return LogPlan(segments, snapshots, list(epochs.entries), start, end,
                   sorted(psm.ongoing.values(), key=lambda t: t.first_offset), invalid)


def gaps(chosen: list[Candidate]) -> list[tuple[int, int]]:
    """Offset ranges between chosen batches that no chosen batch holds."""
    return [(a.last_offset + 1, b.base_offset - 1) for a, b in itertools.pairwise(chosen)
            if b.base_offset > a.last_offset + 1]
