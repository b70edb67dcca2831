"""What Kafka does with a log dir at broker start-up, modelled offline and read-only.

Models ``LogManager.loadLogs`` / ``UnifiedLog.apply`` (core, Scala) around storage's ``LogLoader.load``:
stray and swap files, ``loadSegmentFiles`` (missing or corrupt indexes), ``recoverLog`` (re-scan from
the recovery point, truncate at the first invalid batch, delete every later segment), ``LogSegment.recover``
and ``readNextOffset``, ``UnifiedLog.rebuildProducerState`` with ``ProducerStateManager.truncateAndReload``,
``loadFromSnapshot``, ``takeSnapshot`` and ``removeStraySnapshots``, the ``LeaderEpochFileCache`` truncations,
then the constructor's clamps (log start offset, recovery point, first unstable offset) and the high
watermark as ``Partition`` applies it. Producer state itself is the replay engine's
:class:`~kafkatool.engine.producer_state.ProducerStateManager`. Pure: decoded files in, a result out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from kafkatool.engine.producer_state import ProducerEntry, ProducerStateManager
from kafkatool.engine.replay import COORDINATOR_TOPICS
from kafkatool.engine.restart_output import OutputFile, partition_plan
from kafkatool.model import (
    NO_TIMESTAMP,
    IndexFile,
    LeaderEpochEntry,
    LogDirData,
    LogEntry,
    OffsetIndexEntry,
    PartitionData,
    ProducerSnapshotEntry,
    RecordBatch,
    SegmentData,
    entries_max_timestamp,
    entry_spans,
)
from kafkatool.schema.filenames import (
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    SWAP_SUFFIX,
    segment_file_name,
)
from kafkatool.storage import LeaderEpochCache
from kafkatool.storage.swaps import in_swap_range, sort_temp_files, swap_range

INT32_MAX = 0x7FFFFFFF
DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000  # producer.id.expiration.ms
DEFAULT_INDEX_INTERVAL_BYTES = 4096  # index.interval.bytes
METADATA_PARTITION = "__cluster_metadata"
Assume = Literal["clean", "unclean"]


@dataclass(frozen=True, slots=True)
class RestartOptions:
    """What the broker would be told: the clock, and overrides of the marker and the recovery point."""

    now: int | None = None
    assume: Assume | None = None
    recovery_point: int | None = None
    producer_id_expiration_ms: int = DEFAULT_PRODUCER_ID_EXPIRATION_MS
    index_interval_bytes: int | None = None  # None: inferred from the offset indexes on disk
    plan_output: bool = True  # build each partition's ``output`` (the files after the load, for --apply-to)


@dataclass(frozen=True, slots=True)
class Step:
    """One thing Kafka does, in order: ``action`` is a stable code, ``detail`` says what and why."""

    action: str
    detail: str
    file: str | None = None
    offset: int | None = None
    position: int | None = None
    bytes: int | None = None


@dataclass(frozen=True, slots=True)
class SegmentAfter:
    """A segment after load."""

    base_offset: int
    size_bytes: int
    next_offset: int
    file: str


@dataclass
class Loss:
    """What the load threw away."""

    records: int = 0
    batches: int = 0
    bytes: int = 0
    offsets: tuple[int, int] | None = None  # [first, end) of the offsets removed
    producers: list[int] = field(default_factory=list)
    transactions: list[int] = field(default_factory=list)  # first offsets of transactions whose data was lost
    acknowledged: tuple[int, int] | None = None  # [new log end, high-watermark checkpoint): replicated, now gone
    compacted_bytes: int = 0  # fewer bytes after a completed cleaner swap: records compaction removed, not a loss


@dataclass
class PartitionRestart:
    """The outcome of loading one partition."""

    directory: str
    topic: str
    partition: int | None
    clean_shutdown: bool
    outcome: Literal["loaded", "failed", "skipped"] = "loaded"
    error: str | None = None
    log_start_offset: int | None = None
    log_end_offset: int | None = None
    recovery_point: int | None = None
    high_watermark: int | None = None
    first_unstable_offset: int | None = None
    last_stable_offset: int | None = None
    bytes_truncated: int = 0
    recovery_bytes_read: int = 0
    segments: list[SegmentAfter] = field(default_factory=list)
    leader_epochs: list[LeaderEpochEntry] = field(default_factory=list)
    producers: list[ProducerEntry] = field(default_factory=list)
    snapshot_files_after: list[int] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    loss: Loss = field(default_factory=Loss)
    inputs: dict[str, int | bool | None] = field(default_factory=dict)
    output: list[OutputFile] = field(default_factory=list)  # the directory as Kafka leaves it (--apply-to)


@dataclass
class RestartResult:
    """Every partition of the log dir."""

    path: str
    clean_shutdown: bool
    marker_present: bool
    now: int
    partitions: list[PartitionRestart] = field(default_factory=list)


class LoadFailure(Exception):
    """Kafka throws while loading the partition: the broker marks the log dir offline."""


class _InvalidOffset(Exception):
    """``InvalidOffsetException``: a rebuilt index entry would not be above the previous one."""

    def __init__(self, seg: _Seg, offset: int, last: int, index: str) -> None:
        super().__init__(f"Attempt to append an offset {offset} to the {index} no larger than the last offset "
                         f"appended ({last}) to {seg.file}")
        self.seg = seg


class _Overflow(Exception):
    """``LogSegmentOffsetOverflowException``: a batch offset cannot be made relative to the segment base."""

    def __init__(self, seg: _Seg, offset: int) -> None:
        super().__init__(offset)
        self.seg = seg
        self.offset = offset


# -- segments ---------------------------------------------------------------------------------------


@dataclass
class _Seg:
    """A segment as the loader sees it (``LogSegment``): its complete entries, size and offset index."""

    base: int
    file: str
    size: int
    entries: Sequence[LogEntry]
    index: IndexFile | None
    has_index: bool
    txn_corrupt: bool
    recovered: bool = False
    origin: SegmentData | None = None  # the files it was read from (a ``.swap`` segment's keep their suffix)

    @classmethod
    def of(cls, data: SegmentData) -> _Seg:
        txn_bad = any(a.last_offset < data.base_offset for a in data.txn_index or [])
        return cls(data.base_offset, data.log_file, data.log_size, data.entries, data.index,
                   data.index_file is not None, txn_bad, origin=data)

    def chain(self, start_pos: int = 0, end_pos: int | None = None) -> Sequence[LogEntry]:
        """Entries ``FileLogInputStream`` returns from ``start_pos``: contiguous, complete, up to ``end_pos``
        (a view of :attr:`entries`, found from positions alone)."""
        end = self.size if end_pos is None else end_pos
        first = count = 0
        pos = start_pos
        for i, (at, after) in enumerate(entry_spans(self.entries)):
            if at < pos:
                first = i + 1
                continue
            if at != pos or after > end:
                break
            count += 1
            pos = after
        return self.entries[first:first + count]

    def translate(self, offset: int, start_pos: int = 0) -> LogEntry | None:
        """``translateOffset``: the first entry at or after ``start_pos`` whose last offset is >= ``offset``."""
        return next((e for e in self.chain(start_pos) if e.last_offset >= offset), None)

    def index_last(self) -> tuple[int, int]:
        """``offsetIndex().lastOffset()`` and the position ``lookup`` gives for it."""
        if self.recovered or self.index is None:
            return (self.entries_last_index() if self.recovered else (self.base, 0))
        idx = self.index
        if idx.zero_tail or not idx.entries:
            return self.base, 0
        last = idx.entries[-1]
        assert isinstance(last, OffsetIndexEntry)
        return last.offset, last.position

    def entries_last_index(self) -> tuple[int, int]:
        return (self.entries[-1].last_offset, self.entries[-1].position) if self.entries else (self.base, 0)

    def read_next_offset(self) -> int:
        """``LogSegment.readNextOffset``: from the index's last entry, the last complete batch, else the base."""
        target, pos = self.index_last()
        first = self.translate(target, pos if pos <= self.size else self.size + 1)
        if first is None:
            return self.base
        tail = self.chain(first.position)
        return tail[-1].last_offset + 1 if tail else self.base

    def has_overflow(self) -> bool:
        """``LogSegment.hasOverflow``."""
        nxt = self.read_next_offset()
        return nxt > self.base and not 0 <= nxt - 1 - self.base <= INT32_MAX


def _values(segs: list[_Seg], start: int, end: int) -> list[_Seg]:
    """``LogSegments.values(from, to)``: from the segment holding ``from`` up to (excluding) ``to``."""
    if start == end:
        return []
    floor = max((s.base for s in segs if s.base <= start), default=None)
    lo = floor if floor is not None else -1
    return [s for s in segs if lo <= s.base < end]


# -- producer state with its snapshot files --------------------------------------------------------


class _Disk:
    """The partition's producer snapshot files as the load creates and deletes them."""

    def __init__(self, part: PartitionData, steps: list[Step]) -> None:
        self.steps = steps
        self.dir = part.directory
        self.files: dict[int, list[ProducerSnapshotEntry] | None] = {}
        for s in part.snapshots:
            ok = s.snapshot is not None and s.snapshot.crc_valid
            self.files[s.offset] = list(s.snapshot.entries) if ok and s.snapshot else None

    def name(self, offset: int) -> str:
        return f"{self.dir}/{segment_file_name(offset, '.snapshot')}"

    def delete(self, offset: int, why: str, action: str = "snapshot-delete") -> None:
        """``snapshot-delete``: the producer-state manager deletes it; ``snapshot-remove``: it goes with its
        segment or a swapped range."""
        if offset in self.files:
            del self.files[offset]
            self.steps.append(Step(action, f"delete producer snapshot {offset}: {why}", self.name(offset), offset))

    def write(self, offset: int, entries: list[ProducerSnapshotEntry], why: str) -> None:
        self.files[offset] = entries
        self.steps.append(Step("snapshot-write", f"write producer snapshot at offset {offset} with {len(entries)} "
                                                 f"producer(s) ({why})", self.name(offset), offset))


class _Psm:
    """Kafka's ``ProducerStateManager`` bookkeeping (map end, last snapshot, snapshot files) around the
    replay engine's producer state."""

    def __init__(self, disk: _Disk, topic: str, now: int, expiration_ms: int, role: str) -> None:
        self.disk = disk
        self.topic = topic
        self.now = now
        self.expiration_ms = expiration_ms
        self.role = role
        self.snapshots: set[int] = set(disk.files)
        self.state = self._fresh()
        self.last_snap = 0

    def _fresh(self) -> ProducerStateManager:
        return ProducerStateManager(0, client_checks=self.topic not in COORDINATOR_TOPICS, keep_committed=False)

    @property
    def map_end(self) -> int:
        return self.state.map_end_offset

    @map_end.setter
    def map_end(self, value: int) -> None:
        self.state.map_end_offset = value

    def take_snapshot(self) -> None:
        """``takeSnapshot``: only when the map end moved past the last snapshot."""
        if self.map_end > self.last_snap:
            self.disk.write(self.map_end, self.state.snapshot_entries(), self.role)
            self.snapshots.add(self.map_end)
            self.last_snap = self.map_end

    def remove_and_delete(self, offset: int, why: str) -> None:
        self.snapshots.discard(offset)
        self.disk.delete(offset, why)

    def truncate_and_reload(self, log_start: int, log_end: int) -> None:
        """``truncateAndReload``."""
        for off in sorted(self.snapshots):
            if off > log_end or off <= log_start:
                side = f"above {log_end}" if off > log_end else f"at or below {log_start}"
                self.remove_and_delete(off, f"{side}: outside the range the producer state is reloaded for, after "
                                            f"the log start {log_start} up to and including offset {log_end}")
        if log_end != self.map_end:
            self.state = self._fresh()
            self.load_from_snapshot(log_start)
        else:
            if self.map_end < log_start:
                self.map_end = log_start
            self.last_snap = max(self.snapshots) if self.snapshots else log_start

    def load_from_snapshot(self, log_start: int) -> None:
        """``loadFromSnapshot``: the latest readable snapshot, without expired producers."""
        while self.snapshots:
            off = max(self.snapshots)
            entries = self.disk.files.get(off)
            if entries is None:
                self.disk.steps.append(Step("snapshot-corrupt", f"producer snapshot {off} is corrupt: Kafka deletes it "
                                            "and tries the previous one", self.disk.name(off), off))
                self.remove_and_delete(off, "corrupt")
                continue
            live = [e for e in entries if e.current_txn_first_offset >= 0
                    or self.now - e.timestamp < self.expiration_ms]
            expired = len(entries) - len(live)
            self.disk.steps.append(Step("snapshot-load", f"load producer snapshot {off} ({len(live)} producer(s)"
                                        + (f", {expired} expired and dropped" if expired else "") + f") [{self.role}]",
                                        self.disk.name(off), off))
            self.state.load_snapshot(live, off)
            self.last_snap = off
            return
        self.last_snap = log_start
        self.map_end = log_start

    def apply(self, entries: list[LogEntry]) -> None:
        """``loadProducersFromRecords``: producer batches only; the map end is not moved."""
        keep = self.map_end
        for e in entries:
            if isinstance(e, RecordBatch) and e.producer_id >= 0:
                self.state.append(e)
        self.map_end = keep


def _rebuild_producer_state(psm: _Psm, segs: list[_Seg], log_start: int, last_offset: int,
                            clean: bool) -> int:
    """``UnifiedLog.rebuildProducerState``; returns the bytes it read."""
    to_snapshot: list[int] = []
    if segs:
        if len(segs) >= 2:
            to_snapshot.append(segs[-2].base)
        to_snapshot.append(segs[-1].base)
    to_snapshot.append(last_offset)
    read = 0
    if not psm.snapshots and clean:
        for off in to_snapshot:
            psm.map_end = off
            psm.take_snapshot()
        return read
    empty_before = not psm.state.producers and psm.map_end >= last_offset
    psm.truncate_and_reload(log_start, last_offset)
    if last_offset > psm.map_end and not empty_before:
        floor = max((s for s in segs if s.base <= last_offset), key=lambda s: s.base, default=None)
        for seg in _values(segs, psm.map_end, last_offset):
            start = max(seg.base, psm.map_end, log_start)
            psm.map_end = start
            if seg.base in to_snapshot:
                psm.take_snapshot()
            max_pos = seg.size
            if seg is floor:
                lop = seg.translate(last_offset)
                max_pos = lop.position if lop is not None else seg.size
            first = seg.translate(start)
            if first is None:
                continue
            entries = seg.chain(first.position, max_pos)
            read += sum(e.size_in_bytes for e in entries)
            psm.apply(entries)
    psm.map_end = last_offset
    psm.take_snapshot()
    return read


# -- the loader -------------------------------------------------------------------------------------


class _Loader:
    """``LogLoader.load`` for one partition."""

    def __init__(self, part: PartitionData, swaps: dict[int, SegmentData], res: PartitionRestart, clean: bool,
                 log_start_cp: int, recovery_cp: int, now: int, expiration_ms: int,
                 index_interval: int | None = None) -> None:
        self.part = part
        self.swaps = swaps
        self.res = res
        self.steps = res.steps
        self.clean = clean
        self.log_start_cp = log_start_cp
        self.recovery_cp = recovery_cp
        self.now = now
        self.expiration_ms = expiration_ms
        self.disk = _Disk(part, self.steps)
        self.index_interval = index_interval if index_interval is not None else infer_index_interval(part)
        self.epochs = LeaderEpochCache.from_checkpoint(part.leader_epochs)
        self.topic = part.topic_partition.topic if part.topic_partition else ""
        self.segments: list[_Seg] = []
        self.sizes_before: dict[int, tuple[str, int]] = {}
        self.swap_replaced: set[int] = set()  # bases of the segments a completed swap replaced
        self.swap_sizes: dict[int, int] = {}  # base -> bytes of the .swap segment renamed in
        self.entries_before: dict[int, Sequence[LogEntry]] = {}

    def step(self, action: str, detail: str, **kw: int | str | None) -> None:
        self.steps.append(Step(action, detail, **kw))  # type: ignore[arg-type]

    def psm(self, role: str) -> _Psm:
        return _Psm(self.disk, self.topic, self.now, self.expiration_ms, role)

    # -- first passes: stray and swap files

    def _stray_and_swaps(self, segs: dict[int, _Seg]) -> None:
        """``removeTempFilesAndCollectSwapFiles``, then the swap completion of ``LogLoader.load``."""
        d = self.part.directory
        temp = sort_temp_files(name.split("/")[-1] for name in self.part.leftovers)
        for n in temp.deleted:
            self.step("delete-stray", f"delete {n}: a file already marked for deletion", file=f"{d}/{n}")
        for n in temp.incomplete_swaps:
            self.step("delete-stray", f"delete {n}: a .swap at or above the lowest .cleaned offset "
                      f"{temp.min_cleaned} (an incomplete split)", file=f"{d}/{n}")
        for n in temp.cleaned:
            self.step("delete-stray", f"delete {n}: an unfinished cleaner output (.cleaned)", file=f"{d}/{n}")
        swap_logs = temp.swap_log_offsets()
        next_offsets: dict[int, int] = {}
        for off in swap_logs:
            data = self.swaps.get(off)
            if data is None:
                continue
            nxt = next_offsets[off] = _Seg.of(data).read_next_offset()
            self.step("swap-found", f"{segment_file_name(off, '.log')}{SWAP_SUFFIX} is an interrupted cleaner swap "
                      f"covering offsets [{off}, {nxt}): recoverable by renaming", file=data.log_file, offset=off)
        swapped = swap_range(next_offsets)
        if swapped is None:
            return
        lo, hi = swapped
        for base in sorted(segs):
            if in_swap_range(base, swapped):
                self.step("swap-delete-replaced", f"delete segment {base} ({segs[base].file} and its indexes): "
                          f"compacted into the swap [{lo}, {hi}) but not yet deleted", file=segs[base].file,
                          offset=base)
                del segs[base]
                self.swap_replaced.add(base)
        for off in sorted(self.disk.files):
            if in_swap_range(off, swapped):
                self.disk.delete(off, f"inside the swapped range [{lo}, {hi})", "snapshot-remove")
        for off in swap_logs:
            data = self.swaps.get(off)
            if data is None:
                continue
            seg = _Seg.of(data)
            seg.file = f"{d}/{segment_file_name(off, '.log')}"
            # The first pass read the swap's next offset through its offset index, which creates the
            # ``.index.swap`` file when there was none: after the rename the segment has an index (empty).
            seg.has_index = True
            segs[off] = seg
            self.swap_sizes[off] = seg.size
            self.step("swap-rename", f"rename the .swap files of segment {off} to regular segment files",
                      file=seg.file, offset=off)

    # -- segment recovery

    def _recover(self, seg: _Seg, loaded: list[_Seg], why: str) -> int:
        """``LogLoader.recoverSegment`` then ``LogSegment.recover``: returns the bytes truncated."""
        temp = self.psm(f"recovery of segment {seg.base}")
        self.res.recovery_bytes_read += _rebuild_producer_state(temp, loaded, self.log_start_cp, seg.base, False)
        self.res.recovery_bytes_read += seg.size
        valid = kept = 0
        last_index_entry, idx_last, ts_last = 0, None, (NO_TIMESTAMP, seg.base)
        max_ts = (NO_TIMESTAMP, -1)
        ts_entries = False
        for e in seg.entries:
            if e.position != valid or e.crc_valid is False:
                break
            if not 0 <= e.last_offset - seg.base <= INT32_MAX:
                seg.index = None  # LogSegment.recover reset the index before it threw
                raise _Overflow(seg, e.last_offset)
            if e.max_timestamp > max_ts[0]:
                max_ts = (e.max_timestamp, e.last_offset)
            if valid - last_index_entry > self.index_interval:
                if idx_last is not None and e.last_offset <= idx_last:
                    raise _InvalidOffset(seg, e.last_offset, idx_last, "offset index")
                idx_last = e.last_offset
                if ts_entries and max_ts[1] < ts_last[1]:
                    raise _InvalidOffset(seg, max_ts[1], ts_last[1], "time index")
                if max_ts[0] > ts_last[0]:
                    ts_last, ts_entries = max_ts, True
                last_index_entry = valid
            if isinstance(e, RecordBatch):
                if e.partition_leader_epoch >= 0 and (self.epochs.latest_epoch() is None
                                                      or e.partition_leader_epoch > self.epochs.latest_epoch()):  # type: ignore[operator]
                    self.epochs.assign(e.partition_leader_epoch, e.base_offset)
                temp.state.append(e)
                temp.map_end = e.last_offset + 1  # legacy entries do not move the map end (magic 2 only)
            kept += 1
            valid += e.size_in_bytes
        truncated = seg.size - valid
        seg.entries, seg.size, seg.recovered = seg.entries[:kept], valid, True
        self.step("recover-segment", f"re-scan segment {seg.base} ({why}): {kept} valid entries, "
                  f"{valid} bytes", file=seg.file, offset=seg.base)
        if truncated > 0:
            self.step("truncate", f"truncate {seg.file} at byte {valid}: {self._reason(seg, valid)}; "
                      f"{truncated} bytes dropped", file=seg.file, offset=seg.base, position=valid,
                      bytes=truncated)
        temp.take_snapshot()
        return truncated

    def _truncate_to_base(self, seg: _Seg, why: str) -> int:
        """``LogSegment.truncateTo(baseOffset)`` after an ``InvalidOffsetException`` during recovery."""
        first = seg.translate(seg.base)
        pos = first.position if first is not None else seg.size
        truncated = seg.size - pos
        chain = seg.chain()
        seg.entries = chain[:sum(1 for at, _ in entry_spans(chain) if at < pos)]
        seg.size, seg.recovered = pos, True
        self.step("invalid-offset", f"recovery of segment {seg.base} hit out-of-order offsets ({why}): Kafka empties "
                  f"the segment from byte {pos}", file=seg.file, offset=seg.base, position=pos, bytes=truncated)
        return truncated

    def _reason(self, seg: _Seg, pos: int) -> str:
        before = self.entries_before.get(seg.base, [])
        at = next((i for i, (start, _) in enumerate(entry_spans(before)) if start == pos), None)
        if at is not None and before[at].crc_valid is False:
            return f"the entry there (offsets up to {before[at].last_offset}) fails its CRC check"
        data = next((s for s in self.part.segments if s.base_offset == seg.base), None)
        defects = [] if data is None else [d for d in data.defects if d.position is not None and d.position >= pos]
        if defects:
            d = min(defects, key=lambda d: d.position or 0)
            return {"torn-tail": "a partial batch (torn write)",
                    "trailing-zeros": "zero bytes: Kafka reads a record size of 0, smaller than the minimum record "
                                      "overhead (14)"}.get(d.code, d.reason)
        return "an invalid batch"

    def _delete_segments(self, doomed: list[_Seg], why: str) -> None:
        for s in doomed:
            self.segments.remove(s)
            self.step("delete-segment", f"delete segment {s.base} ({s.file}, {s.size} bytes): {why}",
                      file=s.file, offset=s.base, bytes=s.size)
            s.size = 0
            self.disk.delete(s.base, f"its segment {s.base} was deleted", "snapshot-remove")

    # -- load

    def load(self) -> tuple[int, int, int]:
        """Returns the new log start offset, recovery point and next offset."""
        d = self.part.directory
        segs: dict[int, _Seg] = {}
        for data in self.part.segments:
            if not data.log_file:
                for f in (data.index_file, data.time_index_file, data.txn_index_file):
                    if f:
                        self.step("delete-orphan-index", f"delete {f}: an index file with no log file", file=f)
                continue
            segs[data.base_offset] = _Seg.of(data)
        for base, s in segs.items():
            self.sizes_before[base] = (s.file, s.size)
            self.entries_before[base] = s.entries  # a view: recovery replaces a segment's entries, never edits them
        self._stray_and_swaps(segs)
        for base in sorted(segs):
            seg = segs[base]
            if not seg.has_index:
                level = "error" if self.clean or base < self.recovery_cp else "info"
                index = f"{d}/{segment_file_name(base, '.index')}"
                self.step("missing-index", f"{index} is missing ({level}): Kafka recovers the segment and rebuilds "
                          "its indexes", file=index, offset=base)
                self._recover(seg, list(self.segments), "offset index missing")
            elif seg.txn_corrupt:
                self.step("corrupt-index", f"{segment_file_name(base, '.txnindex')} lists an aborted transaction "
                          "ending before the segment base: Kafka recovers the segment", offset=base)
                self._recover(seg, list(self.segments), "transaction index corrupt")
            self.segments.append(seg)
        if not self.clean:
            unflushed = _values(self.segments, self.recovery_cp, 1 << 63)
            self.step("recovery", f"unclean shutdown: re-scan the {len(unflushed)} segment(s) from the recovery point "
                      f"{self.recovery_cp}" + (f" ({', '.join(str(s.base) for s in unflushed)})" if unflushed else ""))
            for i, seg in enumerate(unflushed):
                try:
                    truncated = self._recover(seg, self.segments, "at or above the recovery point")
                except _InvalidOffset as err:
                    truncated = self._truncate_to_base(seg, str(err))
                if truncated > 0:
                    rest = unflushed[i + 1:]
                    if rest:
                        self._delete_segments(rest, f"recovery truncated segment {seg.base}, so every later "
                                                    "segment is deleted")
                    break
        else:
            self.step("no-recovery", "clean shutdown marker: no segment is re-scanned")
        log_end: int | None = None
        if self.segments:
            leo = self.segments[-1].read_next_offset()
            if leo >= self.log_start_cp:
                log_end = leo
            else:
                self._delete_segments(list(self.segments), f"the log end offset {leo} is below the log start "
                                                           f"offset {self.log_start_cp}")
                self.epochs.clear()
                for off in sorted(self.disk.files):
                    self.disk.delete(off, "the whole log was deleted")
        if not self.segments:
            self.step("create-segment", f"no segment left: create an empty one at {self.log_start_cp}")
            self.segments.append(_Seg(self.log_start_cp, f"{d}/{segment_file_name(self.log_start_cp, '.log')}",
                                      0, [], None, True, False, True))
        if self.clean and log_end is not None:
            recovery_point, next_offset = log_end, log_end
        else:
            leo = log_end if log_end is not None else self.segments[-1].read_next_offset()
            recovery_point, next_offset = min(self.recovery_cp, leo), leo
        removed = self.epochs.truncate_from_end(next_offset)
        if removed:
            self.step("epoch-truncate", f"leader epoch cache truncated to the log end {next_offset}: removed "
                      + ", ".join(f"epoch {e.epoch}@{e.start_offset}" for e in reversed(removed)))
        new_log_start = max(self.log_start_cp, self.segments[0].base)
        removed = self.epochs.truncate_from_start(self.log_start_cp)
        if removed and (len(removed) > 1 or removed[0].start_offset != self.log_start_cp):
            self.step("epoch-truncate", f"leader epoch cache truncated to the log start {self.log_start_cp}")
        self._remove_stray_snapshots()
        real = self.psm("load")
        real.snapshots = set(self.disk.files)
        self.res.recovery_bytes_read += _rebuild_producer_state(real, self.segments, new_log_start, next_offset,
                                                                self.clean)
        self.final_psm = real
        return new_log_start, recovery_point, next_offset

    def _remove_stray_snapshots(self) -> None:
        """``removeStraySnapshots``: keep snapshots at segment bases and the latest stray one above them."""
        bases = {s.base for s in self.segments}
        max_base = max(bases) if bases else None
        latest_stray: int | None = None
        for off in sorted(self.disk.files):
            if off in bases:
                continue
            if latest_stray is not None:
                self.disk.delete(latest_stray, "a stray snapshot (no segment starts there)")
            latest_stray = off
        if latest_stray is not None and max_base is not None and latest_stray < max_base:
            self.disk.delete(latest_stray, "a stray snapshot below the last segment")


def infer_index_interval(part: PartitionData) -> int:
    """``index.interval.bytes`` as the partition's offset indexes imply it (Kafka's default when they cannot).

    An entry is added at a batch when the bytes since the previous entry exceed the interval, so each
    entry bounds it: at least the bytes before the previous batch, less than the bytes before this one.
    """
    lo, hi = 0, 1 << 31
    seen = False
    for seg in part.segments:
        idx = seg.index
        if idx is None or not idx.entries or idx.zero_tail:
            continue
        chain = seg.entries
        at = {e.position: i for i, e in enumerate(chain)}
        prev = 0
        for entry in idx.entries:
            i = at.get(entry.position)  # type: ignore[union-attr]
            if i is None or i == 0:
                break
            since = entry.position - prev  # type: ignore[union-attr]
            before = chain[i - 1].position - prev
            if before < 0:
                break
            lo, hi = max(lo, before), min(hi, since - 1)
            seen = True
            prev = entry.position  # type: ignore[union-attr]
    if not seen or lo > hi:
        return DEFAULT_INDEX_INTERVAL_BYTES
    for candidate in (DEFAULT_INDEX_INTERVAL_BYTES, 1024):
        if lo <= candidate <= hi:
            return candidate
    return lo


def _checkpoint(data: LogDirData, name: str, part: PartitionData) -> int | None:
    entries = data.checkpoints.get(name)
    if not entries or part.topic_partition is None:
        return None
    return entries.get(part.topic_partition)


def _loss(res: PartitionRestart, loader: _Loader, next_offset: int) -> None:
    loss = res.loss
    batches = records = 0
    first, last = None, None
    producers: set[int] = set()
    transactions: list[int] = []
    for entries in loader.entries_before.values():
        for e in entries:
            if e.last_offset < next_offset:
                continue
            batches += 1
            records += e.records_count if isinstance(e, RecordBatch) else 1
            first = e.base_offset if first is None else min(first, e.base_offset)
            last = e.last_offset if last is None else max(last, e.last_offset)
            if isinstance(e, RecordBatch):
                if e.producer_id >= 0:
                    producers.add(e.producer_id)
                if e.is_transactional and not e.is_control:
                    transactions.append(e.base_offset)
    def size_after(base: int) -> int:
        seg = next((s for s in loader.segments if s.base == base), None)
        return seg.size if seg is not None else 0

    # Every file that shrank, as Kafka's own before/after comparison counts it; but the segments a completed
    # cleaner swap replaced shrink by what compaction removed (superseded records), which is no loss: only
    # what recovery then cut from the renamed-in .swap segments is.
    dropped = 0
    for base, (_file, size) in loader.sizes_before.items():
        after = size_after(base)
        if after < size:
            dropped += size - after
            if base not in loader.swap_replaced:
                loss.bytes += size - after
    for base, swap_size in loader.swap_sizes.items():
        loss.bytes += max(0, swap_size - size_after(base))
    replaced = sum(loader.sizes_before[b][1] for b in loader.swap_replaced if b in loader.sizes_before)
    loss.compacted_bytes = max(0, replaced - sum(loader.swap_sizes.values()))
    res.bytes_truncated = dropped
    hw_cp = res.inputs.get("high_watermark_checkpoint")
    if isinstance(hw_cp, int) and not isinstance(hw_cp, bool) and hw_cp > next_offset:
        loss.acknowledged = (next_offset, hw_cp)
    if batches and first is not None and last is not None:
        loss.batches, loss.records = batches, records
        loss.offsets = (first, last + 1)
        loss.producers = sorted(producers)
        loss.transactions = sorted(set(transactions))


def simulate_partition(data: LogDirData, part: PartitionData, swaps: dict[int, SegmentData], clean: bool,
                       options: RestartOptions, now: int) -> PartitionRestart:
    """Load one partition as ``UnifiedLog.apply`` and ``Partition`` do."""
    tp = part.topic_partition
    res = PartitionRestart(part.directory, tp.topic if tp else part.directory, tp.partition if tp else None, clean)
    metadata = tp is not None and tp.topic == METADATA_PARTITION
    if metadata:
        # KafkaMetadataLog.apply: log start 0, recovery point 0, never a clean shutdown.
        clean, log_start_cp, recovery_cp, hw_cp = False, 0, 0, None
        res.clean_shutdown = False
        res.steps.append(Step("metadata-log", "the KRaft metadata log is loaded by KafkaMetadataLog: every segment "
                                              "is recovered on every start"))
    else:
        log_start_cp = _checkpoint(data, LOG_START_OFFSET_CHECKPOINT, part) or 0
        recovery_cp = _checkpoint(data, RECOVERY_POINT_CHECKPOINT, part) or 0
        hw_cp = _checkpoint(data, REPLICATION_OFFSET_CHECKPOINT, part)
        if options.recovery_point is not None:
            recovery_cp = options.recovery_point
    res.inputs = {"recovery_point_checkpoint": recovery_cp, "log_start_offset_checkpoint": log_start_cp,
                  "high_watermark_checkpoint": hw_cp, "clean_shutdown": clean}
    loader = _Loader(part, swaps, res, clean, log_start_cp, recovery_cp, now, options.producer_id_expiration_ms,
                     options.index_interval_bytes)
    try:
        new_log_start, recovery_point, next_offset = loader.load()
    except _InvalidOffset as err:
        res.outcome = "failed"
        res.error = f"org.apache.kafka.common.errors.InvalidOffsetException: {err}"
        res.steps.append(Step("fail", f"rebuilding the indexes of segment {err.seg.base} failed: {res.error}",
                              err.seg.file, err.seg.base))
        return res
    except _Overflow as err:
        seg = err.seg
        if seg.has_overflow():
            res.error = (f"LogSegmentOffsetOverflowException: segment {seg.file} holds offset {err.offset}, which "
                         "cannot be made relative to its base; Kafka would split it (not modelled)")
        else:
            res.error = ("java.lang.IllegalArgumentException: Split operation is only permitted for segments with "
                         f"overflow, and the problem path is {seg.file}")
        res.outcome = "failed"
        res.steps.append(Step("fail", f"batch offset {err.offset} is outside segment {seg.base}'s range (the file "
                                      f"name does not match its content): {res.error}", seg.file, seg.base))
        return res
    psm = loader.final_psm
    log_start = new_log_start
    res.log_start_offset = log_start
    res.log_end_offset = next_offset
    res.recovery_point = max(recovery_point, log_start)
    if metadata:
        res.high_watermark = None
    else:
        hw = hw_cp if hw_cp is not None else 0
        res.high_watermark = min(max(hw, log_start), next_offset)
    fuo = psm.state.first_unstable_offset()
    res.first_unstable_offset = None if fuo is None else max(fuo, log_start)
    if res.high_watermark is not None:
        fu = res.first_unstable_offset
        res.last_stable_offset = fu if fu is not None and fu < res.high_watermark else res.high_watermark
    res.segments = [SegmentAfter(s.base, s.size, s.read_next_offset(), s.file) for s in loader.segments]
    res.leader_epochs = list(loader.epochs.entries)
    res.producers = [psm.state.producers[pid] for pid in psm.state.order.order() if pid in psm.state.producers]
    res.snapshot_files_after = sorted(loader.disk.files)
    _loss(res, loader, next_offset)
    if options.plan_output:
        res.output = partition_plan(part, loader.segments, dict(loader.disk.files), res.leader_epochs,
                                    loader.index_interval)
    return res


def simulate_restart(data: LogDirData, swaps: dict[str, dict[int, SegmentData]], options: RestartOptions,
                     partition: str | None = None) -> RestartResult:
    """Every partition of ``data`` (or only ``partition``), loaded as the broker would at start-up."""
    marker = data.clean_shutdown is not None
    clean = marker if options.assume is None else options.assume == "clean"
    now = options.now if options.now is not None else _latest_timestamp(data)
    result = RestartResult(data.path, clean, marker, now)
    for part in data.partitions:
        if partition is not None and part.directory != partition:
            continue
        if part.topic_partition is None or part.state not in ("", "live"):
            continue
        result.partitions.append(simulate_partition(data, part, swaps.get(part.directory, {}), clean, options, now))
    return result


def _latest_timestamp(data: LogDirData) -> int:
    """The default clock: the newest batch timestamp in the log dir (nothing expires relative to it)."""
    return max((entries_max_timestamp(seg.entries) for part in data.partitions for seg in part.segments), default=0)
