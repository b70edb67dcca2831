"""Producer state across a broker start: Kafka's ``ProducerStateManager`` with its snapshot files, and
``UnifiedLog.rebuildProducerState``.

Models the file side of ``ProducerStateManager`` (``truncateAndReload``, ``loadFromSnapshot`` with expired
producers dropped, ``removeAndDeleteSnapshot``, writing what ``takeSnapshot`` gives) around storage's
:class:`~kafkatool.storage.producer_state.ProducerStateManager` (the state, its append rules, the map end and
the last snapshot offset), and ``UnifiedLog.rebuildProducerState`` (which snapshots to take, which segments to
re-read from the map end). The snapshot files are the partition's as the load creates and deletes them, each
change a :class:`Step`. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kafkatool.engine.producer_state import entry_columns, replay_columns
from kafkatool.engine.restart_segments import LoadedSegment, segments_between
from kafkatool.engine.restart_steps import Step
from kafkatool.model import LogEntry, PartitionData, ProducerSnapshotEntry, RecordBatch, entry_spans, magic2_entries
from kafkatool.schema.filenames import segment_file_name
from kafkatool.storage.producer_state import ProducerStateEntry, ProducerStateManager


class SnapshotFiles:
    """The partition's producer snapshot files as the load creates and deletes them."""

    def __init__(self, part: PartitionData, steps: list[Step]) -> None:
        self.steps = steps
        self.dir = part.directory
        self.files: dict[int, list[ProducerSnapshotEntry] | None] = {}
        for s in part.snapshots:
            ok = s.snapshot is not None and s.snapshot.crc_valid
            self.files[s.offset] = list(s.snapshot.entries) if ok and s.snapshot else None

    def name(self, offset: int) -> str:
        """The snapshot file's path."""
        return f"{self.dir}/{segment_file_name(offset, '.snapshot')}"

    def delete(self, offset: int, why: str, action: str = "snapshot-delete") -> None:
        """``snapshot-delete``: the producer-state manager deletes it; ``snapshot-remove``: it goes with its
        segment or a swapped range."""
        if offset in self.files:
            del self.files[offset]
            self.steps.append(Step(action, f"delete producer snapshot {offset}: {why}", self.name(offset), offset))

    def write(self, offset: int, entries: list[ProducerSnapshotEntry], why: str) -> None:
        """``writeSnapshot``: a snapshot file at ``offset``."""
        self.files[offset] = entries
        self.steps.append(Step("snapshot-write", f"write producer snapshot at offset {offset} with {len(entries)} "
                                                 f"producer(s) ({why})", self.name(offset), offset))

    def remove_stray_snapshots(self, segment_bases: Iterable[int]) -> None:
        """``ProducerStateManager.removeStraySnapshots``: keep the snapshots at segment bases and the latest stray
        one, unless that lies below the last segment."""
        bases = set(segment_bases)
        max_base = max(bases) if bases else None
        latest_stray: int | None = None
        for off in sorted(self.files):
            if off in bases:
                continue
            if latest_stray is not None:
                self.delete(latest_stray, "a stray snapshot (no segment starts there)")
            latest_stray = off
        if latest_stray is not None and max_base is not None and latest_stray < max_base:
            self.delete(latest_stray, "a stray snapshot below the last segment")


class ProducerStateFiles:
    """Kafka's ``ProducerStateManager`` as the load drives it: storage's producer state (map end, last snapshot
    offset) with the snapshot files it has on disk."""

    def __init__(self, disk: SnapshotFiles, now: int, expiration_ms: int, role: str) -> None:
        self.disk = disk
        self.now = now
        self.expiration_ms = expiration_ms
        self.role = role
        self.snapshots: set[int] = set(disk.files)
        self.state = ProducerStateManager(0, keep_committed=False)

    @property
    def map_end(self) -> int:
        """``mapEndOffset``: the offset up to which the state is built."""
        return self.state.map_end_offset

    @map_end.setter
    def map_end(self, value: int) -> None:
        self.state.map_end_offset = value

    def take_snapshot(self) -> None:
        """``takeSnapshot``: written only when the map end moved past the last snapshot."""
        entries = self.state.take_snapshot()
        if entries is not None:
            self.disk.write(self.map_end, entries, self.role)
            self.snapshots.add(self.map_end)

    def remove_and_delete(self, offset: int, why: str) -> None:
        """``removeAndDeleteSnapshot``."""
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
            self.state = ProducerStateManager(0, keep_committed=False)
            self.load_from_snapshot(log_start)
        else:
            if self.map_end < log_start:
                self.map_end = log_start
            self.state.last_snap_offset = max(self.snapshots) if self.snapshots else log_start

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
            live = [e for e in entries
                    if not ProducerStateEntry.from_snapshot(e).is_expired(self.now, self.expiration_ms)]
            expired = len(entries) - len(live)
            self.disk.steps.append(Step("snapshot-load", f"load producer snapshot {off} ({len(live)} producer(s)"
                                        + (f", {expired} expired and dropped" if expired else "") + f") [{self.role}]",
                                        self.disk.name(off), off))
            self.state.load_snapshot(live, off)
            self.state.last_snap_offset = off
            return
        self.state.last_snap_offset = log_start
        self.map_end = log_start

    def apply(self, entries: Sequence[LogEntry]) -> None:
        """``loadProducersFromRecords``: producer batches only; the map end is not moved."""
        keep = self.map_end
        cols = entry_columns(entries)
        if cols is not None:  # all magic 2: the producer batches' rows, natively
            mine = cols["producer_id"] >= 0
            replay_columns(self.state, {name: col[mine] for name, col in cols.items()})
        else:  # legacy entries carry no producer: skipped unread (a wrapper is not inflated for nothing)
            for e in magic2_entries(entries):
                if isinstance(e, RecordBatch) and e.producer_id >= 0:
                    self.state.append(e)
        self.map_end = keep



def rebuild_producer_state(psm: ProducerStateFiles, segs: list[LoadedSegment], log_start: int, last_offset: int,
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
        for seg in segments_between(segs, psm.map_end, last_offset):
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
            read += sum(end - at for at, end in entry_spans(entries))  # sizes alone: no entry is decoded
            psm.apply(entries)
    psm.map_end = last_offset
    psm.take_snapshot()
    return read

