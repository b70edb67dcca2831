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

from array import array
from bisect import bisect_right, insort
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from kafkatool.engine.producer_state import replay_columns
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

    @classmethod
    def of(cls, source: int, position: int, size: int, base_offset: int, last_offset_delta: int, epoch: int,
           crc: int, records: int, attributes: int, producer_id: int, producer_epoch: int,
           base_sequence: int, max_timestamp: int) -> Candidate:
        """A batch from its header fields: its last offset and last sequence (``-1`` without a sequence) derived."""
        last_seq = -1 if base_sequence < 0 else (base_sequence + last_offset_delta) % (1 << 31)
        return cls(source, position, size, base_offset, base_offset + last_offset_delta, epoch, crc, records,
                   attributes, producer_id, producer_epoch, base_sequence, last_seq, max_timestamp)

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
    """A batch of another copy that overlaps chosen batches (and is not the very batch chosen)."""

    candidate: Candidate
    chosen: tuple[Candidate, ...]


@dataclass(slots=True)
class Run:
    """Consecutive trusted batches of one file: contiguous bytes ``[position, end)``, rising offsets, one leader
    epoch and one lineage verdict, so one rank: they are chosen together unless another copy overlaps them. A
    partition of millions of batches is a handful of runs (memory stays bounded)."""

    source: int
    position: int
    end: int
    base_offset: int
    last_offset: int
    epoch: int
    batches: int
    records: int
    lineage: bool = False

    @classmethod
    def starting(cls, c: Candidate, lineage: bool) -> Run:
        """The run of ``c`` alone (:meth:`extend` adds the next batches)."""
        return cls(c.source, c.position, c.position + c.size, c.base_offset, c.last_offset, c.epoch, 1, c.records,
                   lineage)

    def extend(self, c: Candidate) -> None:
        """Add the batch that follows the run in its file."""
        self.end, self.last_offset, self.batches, self.records = c.position + c.size, c.last_offset, \
            self.batches + 1, self.records + c.records


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """What the engine needs to know of a source file to rank its batches."""

    replica: int | None
    kind: str
    base_offset: int


@dataclass
class Selection:
    """The runs chosen (in offset order), the overlaps between copies (not the duplicates: those are counted), and
    the runs left out because their leader epoch falls below an earlier chosen one's (:func:`rising_epochs`)."""

    chosen: list[Run]
    overlaps: list[Overlap]
    duplicates: int
    lineage: str
    rejected: list[Rejected] = field(default_factory=list)


@dataclass
class FileOrder:
    """Where :func:`consistent_in_file` stands in one file: the last kept batch's last offset, and whether any
    batch was kept yet (a window of the file is decided at a time)."""

    file_base: int
    prev_last: int
    kept_any: bool = False


def consistent_in_file(source: int, batches: Sequence[tuple[int, int, int]], state: FileOrder,
                       decide: int | None = None) -> tuple[list[int], list[Rejected]]:
    """Of one file's CRC-valid batches (position, base offset, last offset; in file order), the first ``decide``
    (all by default; the others are only the next batches they are checked against): the indexes of those whose
    offsets rise without overlap, and the others. ``state`` carries the file's order from one call to the next.

    A batch that overlaps the next one while the next follows the previous kept one is the odd one out (its own
    base offset field is damaged); otherwise the later batch is left out."""
    kept: list[int] = []
    rejected: list[Rejected] = []
    prev_last = state.prev_last
    for i in range(len(batches) if decide is None else decide):
        pos, base, last = batches[i]
        nxt = batches[i + 1][1] if i + 1 < len(batches) else None
        if base <= prev_last:
            rejected.append(Rejected(source, pos, base, last,
                                     f"base offset {base} is not above the previous batch's last offset "
                                     f"{prev_last}" if state.kept_any else
                                     f"base offset {base} is below the file's base offset {state.file_base}"))
            continue
        if nxt is not None and last >= nxt > prev_last:
            rejected.append(Rejected(source, pos, base, last,
                                     f"last offset {last} is not below the next batch's base offset {nxt} "
                                     "(the offset fields are outside the CRC)"))
            continue
        kept.append(i)
        prev_last = last
        state.kept_any = True
    state.prev_last = prev_last
    return kept, rejected


def on_lineage(cache: list[LeaderEpochEntry], epoch: int, base: int, last: int) -> bool:
    """Whether ``cache`` (the final leader's epoch cache) gives the batch's offsets to the batch's epoch."""
    for k, e in enumerate(cache):
        if e.epoch == epoch:
            end = cache[k + 1].start_offset if k + 1 < len(cache) else None
            return e.start_offset <= base and (end is None or last < end)
    return False


def _hits(starts: list[int], by_start: dict[int, Run], base: int, last: int) -> list[Run]:
    """The chosen runs whose offset range meets ``[base, last]``, in offset order (chosen ranges never meet)."""
    i = bisect_right(starts, last) - 1
    hit: list[Run] = []
    while i >= 0 and by_start[starts[i]].last_offset >= base:
        hit.append(by_start[starts[i]])
        i -= 1
    return hit[::-1]


Expand = Callable[["Run"], Iterable[Candidate]]


def _compete(r: Run, hits: list[Run], expand: Expand) -> tuple[list[Run], dict[int, list[int]], int, list[Overlap]]:
    """``r``'s batches against the batches of the chosen runs it meets (``hits``), both walked in offset order
    side by side: the runs of ``r``'s batches that meet no chosen batch (cut wherever a chosen batch lies between
    two of them), where each hit run must be cut so that no such run falls inside it (byte positions by run
    ``id``), the duplicates (the very batch chosen) and the other overlaps."""
    chosen = ((h, c) for h in hits for c in expand(h))
    nxt = next(chosen, None)
    pending: deque[tuple[Run, Candidate]] = deque()  # chosen batches not wholly before the current one
    prev: tuple[Run, Candidate] | None = None  # the last chosen batch wholly before it
    free: list[Run] = []
    cuts: dict[int, list[int]] = {}
    cur: Run | None = None
    duplicates = 0
    overlaps: list[Overlap] = []
    for c in expand(r):
        passed = False
        while pending and pending[0][1].last_offset < c.base_offset:
            prev, passed = pending.popleft(), True
        while nxt is not None and nxt[1].base_offset <= c.last_offset:
            if nxt[1].last_offset < c.base_offset:
                prev, passed = nxt, True
            else:
                pending.append(nxt)
            nxt = next(chosen, None)
        if pending:  # every one meets c: it ends at or after c's base and starts at or before c's last
            hit = tuple(ch for _, ch in pending)
            if len(hit) == 1 and (hit[0].base_offset, hit[0].last_offset, hit[0].crc) == \
                    (c.base_offset, c.last_offset, c.crc):
                duplicates += 1
            else:
                overlaps.append(Overlap(c, hit))
            cur = None
            continue
        if cur is not None and not passed and cur.end == c.position:
            cur.extend(c)
            continue
        cur = Run.starting(c, r.lineage)
        free.append(cur)
        after = nxt  # the chosen batch after c (none pending)
        if prev is not None and after is not None and prev[0] is after[0]:
            cuts.setdefault(id(after[0]), []).append(after[1].position)
    return free, cuts, duplicates, overlaps


def _cut(h: Run, at: list[int], expand: Expand) -> list[Run]:
    """``h`` cut into runs before each batch at a byte position of ``at``."""
    out: list[Run] = []
    points = set(at)
    for c in expand(h):
        if out and c.position not in points:
            out[-1].extend(c)
        else:
            out.append(Run.starting(c, h.lineage))
    return out


def select(runs: list[Run], sources: list[SourceInfo], cache: list[LeaderEpochEntry] | None,
           preferred_replica: int | None, expand: Expand) -> Selection:
    """Choose, offset by offset, one batch among the copies (see the module docstring for the order).

    Runs are taken best first; a run that meets no chosen run is chosen whole. One that meets some is walked
    batch by batch (``expand`` reads a run's batches, in offset order) beside the batches of the runs it meets
    (:func:`_compete`): the outcome is that of ranking every batch on its own (a run's batches share their rank
    and follow each other in it), and what is held is runs, never a batch per batch, even for whole copies that
    duplicate each other."""
    def rank(r: Run) -> tuple[int, int, int, int, int, int]:
        info = sources[r.source]
        return (0 if r.lineage else 1, -r.epoch, KIND_RANK.get(info.kind, 9),
                0 if info.replica == preferred_replica else 1, r.source, r.position)

    starts: list[int] = []
    by_start: dict[int, Run] = {}
    overlaps: list[Overlap] = []
    duplicates = 0

    def put(r: Run) -> None:
        insort(starts, r.base_offset)
        by_start[r.base_offset] = r

    for r in sorted(runs, key=rank):
        hits = _hits(starts, by_start, r.base_offset, r.last_offset)
        if not hits:
            put(r)
            continue
        free, cuts, dup, found = _compete(r, hits, expand)
        duplicates += dup
        overlaps += found
        for h in hits:
            if id(h) in cuts:
                starts.pop(bisect_right(starts, h.base_offset) - 1)
                del by_start[h.base_offset]
                for piece in _cut(h, cuts[id(h)], expand):
                    put(piece)
        for f in free:
            put(f)
    how = "final leader's epoch cache" if cache else "highest leader epoch (no epoch cache)"
    chosen, off_lineage = rising_epochs([by_start[s] for s in starts])
    return Selection(chosen, overlaps, duplicates, how, off_lineage)


def rising_epochs(chosen: list[Run]) -> tuple[list[Run], list[Rejected]]:
    """The chosen runs (in offset order) whose leader epoch never falls below an earlier one's, and the others.

    A Kafka log's epochs only rise along its offsets: ``LeaderEpochFileCache.assign`` of a lower epoch at a later
    offset truncates the later entries, and a broker loading such a log is left with an epoch cache that no longer
    describes it (its consumers' offset validation stalls; seen live after an unclean election, the old leader's
    epoch-0 suffix placed after the new leader's epoch-2 batches). A copy's batches past the final leader's log
    with an older epoch are the diverged suffix a follower would truncate: left out, and named (a run shares one
    epoch, so a run is kept or left out whole)."""
    kept: list[Run] = []
    left: list[Rejected] = []
    top, top_at = -1, -1
    for r in chosen:
        if 0 <= r.epoch < top:
            left.append(Rejected(r.source, r.position, r.base_offset, r.last_offset,
                                 f"leader epoch {r.epoch} below epoch {top} of the batch at offset {top_at} before "
                                 f"it: off the final leader's lineage (a log's epochs only rise)"))
            continue
        if r.epoch > top:
            top, top_at = r.epoch, r.base_offset
        kept.append(r)
    return kept, left


class TransactionStates:
    """Each chosen batch's transaction state, fed in offset order: ``committed``, ``aborted``, ``open`` (``None``
    outside a transaction), from the markers, as ``ProducerStateManager`` pairs them. A batch's state is known
    only once its transaction ends, so each is kept as a one-byte code (:data:`STATES`) until :meth:`finish`."""

    def __init__(self, psm: ProducerStateManager | None = None) -> None:
        self.own = psm is None  # else the planner's manager, which has already taken each batch
        self.psm = psm or ProducerStateManager(keep_committed=False, refuse_invalid_txn=False)
        self.codes = bytearray()
        self.txns: list[Transaction] = []
        self._index: dict[int, int] = {}
        self.pending = array("q")  # (batch number, transaction number) pairs, flattened
        self.records = array("q")  # data records of each transaction

    def add(self, c: Candidate) -> None:
        """The next chosen batch."""
        psm = self.psm
        code = 0
        if c.producer_id >= 0:
            if c.control:
                if c.marker != NO_MARKER and self.own:
                    psm.append_end_txn_marker(c.producer_id, c.producer_epoch, c.coordinator_epoch,
                                              c.marker == ABORT_MARKER, c.base_offset, c.max_timestamp)
            else:
                if self.own:
                    psm.append_data(c.producer_id, c.producer_epoch, c.last_sequence, c.base_offset,
                                    c.last_offset, c.max_timestamp, c.transactional)
                if c.transactional:
                    first = psm.producers[c.producer_id].current_txn_first_offset
                    txn = psm.ongoing.get(first) if first is not None else None
                    if txn is not None:
                        k = self._index.get(id(txn))
                        if k is None:
                            k = self._index[id(txn)] = len(self.txns)
                            self.txns.append(txn)
                            self.records.append(0)
                        self.pending.extend((len(self.codes), k))
                        self.records[k] += c.records
                        code = 2
        if c.control:
            code = 1 if c.marker != NO_MARKER else 0
        if self.own:
            psm.map_end_offset = c.last_offset + 1
        self.codes.append(code)

    def add_plain(self, count: int) -> None:
        """The next ``count`` chosen batches, neither control nor transactional (their producers are the
        planner's manager's: nothing to pair, no state)."""
        assert not self.own
        self.codes.extend(bytes(count))

    def finish(self) -> tuple[bytearray, dict[str, int]]:
        """The codes of every batch fed (:data:`STATES`), and the data records by state of the transactions."""
        final = bytes(2 if t.aborted is None else 3 if t.aborted else 4 for t in self.txns)
        for i in range(0, len(self.pending), 2):
            self.codes[self.pending[i]] = final[self.pending[i + 1]]
        counts = {"committed": 0, "aborted": 0, "open": 0}
        for code, n in zip(final, self.records, strict=True):
            counts[STATES[code] or "none"] += n
        self.pending = array("q")
        self._index.clear()
        return self.codes, counts


#: A batch's transaction state by code (``TransactionStates``): none, a marker, then the three outcomes.
STATES: tuple[str | None, ...] = (None, "marker", "open", "aborted", "committed")


class IndexState:
    """One segment's offset and time indexes as ``LogSegment.append`` builds them (an offset index entry every
    ``index.interval.bytes``, a time index entry with it, ``TimeIndex.maybeAppend`` only for a rising
    timestamp). The planner counts the entries (a full index rolls the segment); the writer keeps them, as
    int64 arrays (16 bytes an entry: a 1 GiB segment of small batches has some 250,000)."""

    __slots__ = ("index", "index_count", "interval", "keep", "last_time", "max_ts", "max_ts_offset", "since_index",
                 "size", "time_count", "times")

    def __init__(self, interval: int, keep: bool) -> None:
        self.interval = interval
        self.keep = keep
        self.index = array("q")  # offset, position, offset, position, ...
        self.times = array("q")  # timestamp, offset, ...
        self.index_count = self.time_count = self.since_index = self.size = 0
        self.last_time = self.max_ts = self.max_ts_offset = -1

    def time_entry(self) -> None:
        """``TimeIndex.maybeAppend``: only a timestamp above the last entry's."""
        if self.max_ts > self.last_time and self.max_ts >= 0:
            self.last_time = self.max_ts
            self.time_count += 1
            if self.keep:
                self.times.extend((self.max_ts, self.max_ts_offset))

    def add(self, size: int, last_offset: int, max_timestamp: int) -> None:
        """The next batch of the segment."""
        if max_timestamp > self.max_ts:
            self.max_ts, self.max_ts_offset = max_timestamp, last_offset
        if self.since_index > self.interval:
            self.index_count += 1
            if self.keep:
                self.index.extend((last_offset, self.size))
            self.time_entry()
            self.since_index = 0
        self.since_index += size
        self.size += size

    def index_entries(self) -> Iterator[OffsetIndexEntry]:
        """The offset index entries kept."""
        ix = self.index
        return (OffsetIndexEntry(ix[i], ix[i + 1]) for i in range(0, len(ix), 2))

    def time_entries(self) -> Iterator[TimeIndexEntry]:
        """The time index entries kept."""
        tx = self.times
        return (TimeIndexEntry(tx[i], tx[i + 1]) for i in range(0, len(tx), 2))


@dataclass
class SegmentPlan:
    """One output segment: its offsets, its bytes as pieces of source files (``[source, start, end]``, each a
    byte range of whole batches) and its aborted transactions; its indexes are rebuilt as it is written."""

    base_offset: int
    last_offset: int = -1
    batches: int = 0
    pieces: list[list[int]] = field(default_factory=list)
    aborted: list[AbortedTxn] = field(default_factory=list)
    indexes: IndexState | None = None

    @property
    def size(self) -> int:
        """The segment's bytes."""
        return sum(e - s for _, s, e in self.pieces)


def segment_indexes(batches: Iterable[tuple[int, int, int]], interval: int) -> IndexState:
    """A written segment's indexes from its batches' (size, last offset, max timestamp), as the planner counted
    them (the same :class:`IndexState`)."""
    state = IndexState(interval, keep=True)
    for size, last, ts in batches:
        state.add(size, last, ts)
    state.time_entry()
    return state


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
    gaps: list[tuple[int, int]]
    invalid_txn_total: int = 0
    gaps_total: int = 0
    gap_offsets: int = 0


KEPT_GAPS = 10_000
"""The offset gaps a plan lists (the first ones); past them only their count and their offsets are kept: a
compacted partition can have a gap between every two batches."""
KEPT_INVALID = 1_000
"""The offsets of batches Kafka would refuse (a data batch inside its producer's open transaction) a plan lists;
past them only their count is kept: 1 GiB of them listed was 48 MB."""


PLAIN_MIN_ROWS = 64
"""The fewest batches :meth:`LogPlanner.add_plain` plans by columns (a stretch between transactional batches
shorter than this goes batch by batch: the producer replay by columns hands the whole producer state over and
back once per call)."""


class LogPlanner:
    """Lay the chosen batches out as ``UnifiedLog.append`` would (see the module docstring), fed in offset order:
    what is kept per batch is a few counters, so a log of any size plans in bounded memory."""

    def __init__(self, *, segment_bytes: int = DEFAULT_SEGMENT_BYTES,
                 index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
                 segment_index_bytes: int = DEFAULT_SEGMENT_INDEX_BYTES, empty_base: int = 0) -> None:
        self.segment_bytes = segment_bytes
        self.interval = index_interval_bytes
        self.max_entries = segment_index_bytes // 12  # the time index fills first (12-byte entries)
        self.empty_base = empty_base
        self.psm = ProducerStateManager(keep_committed=False, refuse_invalid_txn=False)
        self.epochs = LeaderEpochCache()
        self.segments: list[SegmentPlan] = []
        self.snapshots: dict[int, list[ProducerSnapshotEntry]] = {}
        self.invalid: list[int] = []
        self.invalid_total = 0
        self.gaps: list[tuple[int, int]] = []
        self.gaps_total = self.gap_offsets = 0
        self.seg: SegmentPlan | None = None
        self.first = -1
        self.last = -1

    def add(self, c: Candidate) -> None:
        """The next chosen batch."""
        seg, psm = self.seg, self.psm
        if seg is None or (seg.batches and (seg.indexes.size > self.segment_bytes - c.size  # type: ignore[union-attr]
                                            or c.last_offset - seg.base_offset > INT_MAX
                                            or seg.indexes.time_count >= self.max_entries  # type: ignore[union-attr]
                                            or seg.indexes.index_count >= self.max_entries)):  # type: ignore[union-attr]
            if seg is not None:
                seg.indexes.time_entry()  # type: ignore[union-attr]
                psm.map_end_offset = c.base_offset
                taken = psm.take_snapshot()
                if taken is not None:
                    self.snapshots[c.base_offset] = taken
            seg = self.seg = SegmentPlan(c.base_offset, indexes=IndexState(self.interval, keep=False))
            self.segments.append(seg)
        if self.last >= 0 and c.base_offset > self.last + 1:
            self._gap(self.last + 1, c.base_offset - 1)
        if self.first < 0:
            self.first = c.base_offset
        self.last = c.last_offset
        if c.epoch >= 0:
            self.epochs.assign(c.epoch, c.base_offset)
        seg.indexes.add(c.size, c.last_offset, c.max_timestamp)  # type: ignore[union-attr]
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
                    self._invalid([c.base_offset])
                psm.append_data(c.producer_id, c.producer_epoch, c.last_sequence, c.base_offset, c.last_offset,
                                c.max_timestamp, c.transactional)
        psm.map_end_offset = c.last_offset + 1
        seg.batches += 1
        seg.last_offset = c.last_offset
        piece = seg.pieces[-1] if seg.pieces else None
        if piece is not None and piece[0] == c.source and piece[2] == c.position:
            piece[2] = c.position + c.size
        else:
            seg.pieces.append([c.source, c.position, c.position + c.size])

    def add_plain(self, k: int, cols: dict[str, np.ndarray]) -> None:
        """Consecutive chosen batches of source ``k`` that are neither control nor transactional, as int64 columns
        (``position``, ``size``, ``base_offset``, ``last_offset``, ``epoch``, ``max_timestamp``, ``producer_id``,
        ``producer_epoch``, ``base_sequence``, ``last_offset_delta``, ``attributes``) in offset order: the plan
        :meth:`add` of each would make, with no Python object per batch. Between two segment rolls the index
        state advances an index entry at a time (``index.interval.bytes`` apart), the producer rows are replayed
        by columns (``engine.producer_state.replay_columns``: what ``append_data`` does to a data batch's producer)
        and the leader epochs are assigned where they change (``assign`` of the epoch already latest, from a later
        offset, changes nothing). A stretch that could fill an index (a roll by entry count) goes batch by batch."""
        n = len(cols["base_offset"])
        if not n:
            return
        ix = self.seg.indexes if self.seg is not None else None
        if n < PLAIN_MIN_ROWS or n >= self.max_entries or (
                ix is not None and max(ix.index_count, ix.time_count) + n >= self.max_entries):
            self._add_rows(k, cols, 0, n)
            return
        size, base, last = cols["size"], cols["base_offset"], cols["last_offset"]
        ends = np.cumsum(size)  # bytes of the stretch up to and including each row
        i = 0
        while i < n:
            seg = self.seg
            c_size, c_base, c_last = int(size[i]), int(base[i]), int(last[i])
            ix = seg.indexes if seg is not None else None
            if seg is None or ix is None or (seg.batches and (ix.size > self.segment_bytes - c_size
                                                              or c_last - seg.base_offset > INT_MAX
                                                              or ix.time_count >= self.max_entries
                                                              or ix.index_count >= self.max_entries)):
                self._roll(c_base)
                seg = self.seg
                ix = seg.indexes  # type: ignore[union-attr]
            assert seg is not None and ix is not None
            # the rows after i that go into this segment: none may roll it (bytes, or an offset past 32 bits)
            before = int(ends[i - 1]) if i else 0
            full = int(np.searchsorted(ends, before + self.segment_bytes - ix.size, side="right"))
            far = last[i + 1:] - seg.base_offset > INT_MAX
            j = min(full, (i + 1 + int(np.argmax(far))) if far.any() else n, n)
            j = max(j, i + 1)
            self._stretch(k, cols, i, j)
            i = j

    def _gap(self, first: int, last: int) -> None:
        """Offsets ``[first, last]`` no chosen batch holds (listed up to :data:`KEPT_GAPS`, all counted)."""
        self.gaps_total += 1
        self.gap_offsets += last - first + 1
        if len(self.gaps) < KEPT_GAPS:
            self.gaps.append((first, last))

    def _invalid(self, offsets: Sequence[int] | np.ndarray) -> None:
        """Base offsets of batches Kafka would refuse (listed up to :data:`KEPT_INVALID`, all counted)."""
        self.invalid_total += len(offsets)
        room = KEPT_INVALID - len(self.invalid)
        if room > 0:
            self.invalid += [int(o) for o in offsets[:room]]

    def _roll(self, base_offset: int) -> None:
        """A new segment from ``base_offset`` (the snapshot of the state before it, as :meth:`add` rolls)."""
        seg, psm = self.seg, self.psm
        if seg is not None:
            seg.indexes.time_entry()  # type: ignore[union-attr]
            psm.map_end_offset = base_offset
            taken = psm.take_snapshot()
            if taken is not None:
                self.snapshots[base_offset] = taken
        self.seg = SegmentPlan(base_offset, indexes=IndexState(self.interval, keep=False))
        self.segments.append(self.seg)

    def _add_rows(self, k: int, cols: dict[str, np.ndarray], lo: int, hi: int) -> None:
        """Rows ``[lo, hi)`` batch by batch (:meth:`add`)."""
        names = ("position", "size", "base_offset", "last_offset_delta", "epoch", "attributes", "producer_id",
                 "producer_epoch", "base_sequence", "max_timestamp")
        for pos, sz, b, delta, ep, attrs, pid, pep, seq, ts in zip(
                *(cols[name][lo:hi].tolist() for name in names), strict=True):
            self.add(Candidate.of(k, pos, sz, b, delta, ep, 0, 0, attrs, pid, pep, seq, ts))

    def _stretch(self, k: int, cols: dict[str, np.ndarray], i: int, j: int) -> None:
        """Rows ``[i, j)`` into the current segment, which none of them rolls."""
        seg, psm = self.seg, self.psm
        assert seg is not None and seg.indexes is not None
        ix = seg.indexes
        size, base, last = cols["size"][i:j], cols["base_offset"][i:j], cols["last_offset"][i:j]
        pos, ts = cols["position"][i:j], cols["max_timestamp"][i:j]
        # gaps, first and last offsets
        if self.last >= 0 and int(base[0]) > self.last + 1:
            self._gap(self.last + 1, int(base[0]) - 1)
        holes = np.flatnonzero(base[1:] > last[:-1] + 1)
        if len(holes):
            self.gaps_total += len(holes)
            self.gap_offsets += int((base[holes + 1] - last[holes] - 1).sum())
            room = max(0, KEPT_GAPS - len(self.gaps))
            self.gaps += [(int(last[h]) + 1, int(base[h + 1]) - 1) for h in holes[:room].tolist()]
        if self.first < 0:
            self.first = int(base[0])
        self.last = int(last[-1])
        # leader epochs, where they change
        epoch = cols["epoch"][i:j]
        known = epoch >= 0
        if known.any():
            e, b = epoch[known], base[known]
            change = np.concatenate([np.ones(1, dtype=bool), e[1:] != e[:-1]])
            for ep, off in zip(e[change].tolist(), b[change].tolist(), strict=True):
                self.epochs.assign(ep, off)
        # the indexes: an entry at each row before which more than index.interval.bytes were added since the last
        prefix = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(size)])  # bytes before each row
        running = np.maximum.accumulate(np.maximum(ts, ix.max_ts))
        since, at = ix.since_index, 0
        total = len(size)
        # big[q]: every row from q on is bigger than the interval (then each of them is an entry: 16 KiB batches)
        big = np.logical_and.accumulate((size > self.interval)[::-1])[::-1]
        while True:
            q = int(np.searchsorted(prefix, prefix[at] + self.interval - since, side="right"))
            if q >= total:
                break
            ix.index_count += 1
            top = int(running[q])
            if top > ix.last_time and top >= 0:  # TimeIndex.maybeAppend (the planner keeps counts only)
                ix.last_time = top
                ix.time_count += 1
            since, at = 0, q
            if big[q] and q + 1 < total:
                at = self._each_an_entry(ix, running[q + 1:total]) + q
        ix.since_index = since + int(prefix[total] - prefix[at])
        ix.size += int(prefix[total])
        top = int(ts.max())
        if top > ix.max_ts:
            ix.max_ts, ix.max_ts_offset = top, int(last[int(np.argmax(ts))])
        # producers: a data batch of a producer inside its open transaction is named (as add does)
        pid = cols["producer_id"][i:j]
        mine = pid >= 0
        if mine.any():
            open_txn = [t.producer_id for t in psm.ongoing.values()]  # the producers inside a transaction
            if open_txn:
                self._invalid(base[mine & np.isin(pid, open_txn)])
            rows = {"position": pos[mine], "base_offset": base[mine],
                    "last_offset_delta": cols["last_offset_delta"][i:j][mine], "producer_id": pid[mine],
                    "producer_epoch": cols["producer_epoch"][i:j][mine],
                    "base_sequence": cols["base_sequence"][i:j][mine],
                    "attributes": cols["attributes"][i:j][mine], "max_timestamp": ts[mine]}
            rows["marker"] = np.full(len(rows["position"]), NO_MARKER, dtype=np.int64)
            rows["coordinator_epoch"] = np.zeros(len(rows["position"]), dtype=np.int64)
            replay_columns(psm, rows)
        psm.map_end_offset = self.last + 1
        seg.batches += total
        seg.last_offset = self.last
        # the pieces: byte ranges of whole batches, one more wherever the bytes stop following each other
        cuts = np.flatnonzero(pos[1:] != pos[:-1] + size[:-1]) + 1
        starts = [0, *cuts.tolist()]
        stops = [*cuts.tolist(), total]
        for a, b in zip(starts, stops, strict=True):
            first_pos, end_pos = int(pos[a]), int(pos[b - 1] + size[b - 1])
            piece = seg.pieces[-1] if seg.pieces else None
            if piece is not None and piece[0] == k and piece[2] == first_pos:
                piece[2] = end_pos
            else:
                seg.pieces.append([k, first_pos, end_pos])

    @staticmethod
    def _each_an_entry(ix: IndexState, running: np.ndarray) -> int:
        """The loop of :meth:`_stretch` over rows that are each an index entry (each bigger than the interval), at
        once: ``running`` is their running maximum timestamp; a time entry wherever it rises above the last entry's
        (``TimeIndex.maybeAppend``). The rows taken."""
        n = len(running)
        ix.index_count += n
        before = np.maximum(np.concatenate([np.full(1, ix.last_time, dtype=np.int64), running[:-1]]), ix.last_time)
        ix.time_count += int(((running > before) & (running >= 0)).sum())
        if int(running[-1]) > ix.last_time and int(running[-1]) >= 0:
            ix.last_time = int(running[-1])
        return n

    def finish(self) -> LogPlan:
        """The plan, once every chosen batch was fed."""
        psm = self.psm
        if self.seg is None:
            self.segments.append(SegmentPlan(self.empty_base))
            end = self.empty_base
        else:
            self.seg.indexes.time_entry()  # type: ignore[union-attr]
            end = self.last + 1
            psm.map_end_offset = end
            taken = psm.take_snapshot()
            if taken is not None:
                self.snapshots[end] = taken
        for seg in self.segments:
            seg.indexes = None
        start = self.first if self.first >= 0 else self.empty_base
        return LogPlan(self.segments, self.snapshots, list(self.epochs.entries), start, end,
                       sorted(psm.ongoing.values(), key=lambda t: t.first_offset), self.invalid, self.gaps,
                       self.invalid_total, self.gaps_total, self.gap_offsets)
