"""Kafka's ``LogLoader.load`` for one partition, offline: the load sequence over decoded files.

Models storage's ``LogLoader`` (Java; ``Log.loadSegments`` before 3.0): stray and swap files
(``removeTempFilesAndCollectSwapFiles`` and the swap completion, rules in :mod:`kafkatool.storage.swaps`),
``loadSegmentFiles`` (a missing offset index or a corrupt transaction index means recovery), ``recoverLog``
(clean vs unclean start: re-scan from the recovery point, truncate at the first invalid batch, delete every later
segment; a log end below the log start offset deletes the whole log), the ``LeaderEpochFileCache`` truncations,
``ProducerStateManager.removeStraySnapshots`` and ``UnifiedLog.rebuildProducerState``. Segment recovery is
:mod:`~kafkatool.engine.segment_recovery`; producer state with its snapshot files
:mod:`~kafkatool.engine.restart_producers`. Pure: every action is a :class:`Step`.
"""

from __future__ import annotations

from collections.abc import Sequence

from kafkatool.engine.restart_producers import ProducerStateFiles, SnapshotFiles, rebuild_producer_state
from kafkatool.engine.restart_segments import LoadedSegment, segments_between
from kafkatool.engine.restart_steps import Step
from kafkatool.engine.segment_recovery import (
    ColumnCache,
    InvalidOffset,
    infer_index_interval,
    recover_segment,
    truncate_to_base,
    truncation_reason,
)
from kafkatool.model import LogEntry, PartitionData, SegmentData
from kafkatool.schema.filenames import SWAP_SUFFIX, segment_file_name
from kafkatool.storage import LeaderEpochCache
from kafkatool.storage.swaps import in_swap_range, sort_temp_files, swap_range
from kafkatool.storage.tiered import log_start_offsets


class LogLoader:
    """``LogLoader.load`` for one partition."""

    def __init__(self, part: PartitionData, swaps: dict[int, SegmentData], steps: list[Step], clean: bool,
                 log_start_cp: int, recovery_cp: int, now: int, expiration_ms: int,
                 index_interval: int | None = None) -> None:
        self.part = part
        self.swaps = swaps
        self.steps = steps
        self.bytes_read = 0  # what recovery and the producer-state rebuild read
        self.clean = clean
        self.log_start_cp = log_start_cp
        self.remote_enabled = False  # isRemoteLogEnabled: the checkpointed log start stays (engine.restart sets it)
        self.recovery_cp = recovery_cp
        self.now = now
        self.expiration_ms = expiration_ms
        self.disk = SnapshotFiles(part, self.steps)
        self.index_interval = index_interval if index_interval is not None else infer_index_interval(part)
        self.epochs = LeaderEpochCache.from_checkpoint(part.leader_epochs)
        self.segments: list[LoadedSegment] = []
        self.sizes_before: dict[int, tuple[str, int]] = {}
        self.swap_replaced: set[int] = set()  # bases of the segments a completed swap replaced
        self.swap_sizes: dict[int, int] = {}  # base -> bytes of the .swap segment renamed in
        self.entries_before: dict[int, Sequence[LogEntry]] = {}
        self.columns = ColumnCache()  # the header columns of the entries, where they can give them
        self.final_psm: ProducerStateFiles | None = None  # the producer state the load ends with

    def step(self, action: str, detail: str, **kw: int | str | None) -> None:
        """Record one thing Kafka does."""
        self.steps.append(Step(action, detail, **kw))  # type: ignore[arg-type]

    def psm(self, role: str) -> ProducerStateFiles:
        """A fresh producer-state manager over the partition's snapshot files (``role`` names it in steps)."""
        return ProducerStateFiles(self.disk, self.now, self.expiration_ms, role)

    # -- first passes: stray and swap files

    def _stray_and_swaps(self, segs: dict[int, LoadedSegment]) -> None:
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
            nxt = next_offsets[off] = LoadedSegment.of(data).read_next_offset()
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
            seg = LoadedSegment.of(data)
            seg.file = f"{d}/{segment_file_name(off, '.log')}"
            # The first pass read the swap's next offset through its offset index, which creates the
            # ``.index.swap`` file when there was none: after the rename the segment has an index (empty).
            seg.has_index = True
            segs[off] = seg
            self.swap_sizes[off] = seg.size
            self.step("swap-rename", f"rename the .swap files of segment {off} to regular segment files",
                      file=seg.file, offset=off)

    # -- segment recovery

    def _recover(self, seg: LoadedSegment, loaded: list[LoadedSegment], why: str) -> int:
        """``LogLoader.recoverSegment``: producer state rebuilt up to the segment, ``LogSegment.recover``, then a
        snapshot; returns the bytes truncated."""
        temp = self.psm(f"recovery of segment {seg.base}")
        self.bytes_read += rebuild_producer_state(temp, loaded, self.log_start_cp, seg.base, False)
        self.bytes_read += seg.size
        truncated = recover_segment(seg, temp, self.epochs, self.index_interval, self.columns)
        kept, valid = len(seg.entries), seg.size
        self.step("recover-segment", f"re-scan segment {seg.base} ({why}): {kept} valid entries, "
                  f"{valid} bytes", file=seg.file, offset=seg.base)
        if truncated > 0:
            data = next((s for s in self.part.segments if s.base_offset == seg.base), None)
            reason = truncation_reason(self.entries_before.get(seg.base, []), data, valid)
            self.step("truncate", f"truncate {seg.file} at byte {valid}: {reason}; {truncated} bytes dropped",
                      file=seg.file, offset=seg.base, position=valid, bytes=truncated)
        temp.take_snapshot()
        return truncated

    def _truncate_to_base(self, seg: LoadedSegment, why: str) -> int:
        """``LogSegment.truncateTo(baseOffset)`` after an ``InvalidOffsetException`` during recovery."""
        truncated = truncate_to_base(seg)
        pos = seg.size
        self.step("invalid-offset", f"recovery of segment {seg.base} hit out-of-order offsets ({why}): Kafka empties "
                  f"the segment from byte {pos}", file=seg.file, offset=seg.base, position=pos, bytes=truncated)
        return truncated

    def _delete_segments(self, doomed: list[LoadedSegment], why: str) -> None:
        """``deleteSegmentFiles``: the segments and their producer snapshots go."""
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
        segs: dict[int, LoadedSegment] = {}
        for data in self.part.segments:
            if not data.log_file:
                for f in (data.index_file, data.time_index_file, data.txn_index_file):
                    if f:
                        self.step("delete-orphan-index", f"delete {f}: an index file with no log file", file=f)
                continue
            segs[data.base_offset] = LoadedSegment.of(data)
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
            unflushed = segments_between(self.segments, self.recovery_cp, 1 << 63)
            self.step("recovery", f"unclean shutdown: re-scan the {len(unflushed)} segment(s) from the recovery point "
                      f"{self.recovery_cp}" + (f" ({', '.join(str(s.base) for s in unflushed)})" if unflushed else ""))
            for i, seg in enumerate(unflushed):
                try:
                    truncated = self._recover(seg, self.segments, "at or above the recovery point")
                except InvalidOffset as err:
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
            self.segments.append(LoadedSegment(self.log_start_cp, f"{d}/{segment_file_name(self.log_start_cp, '.log')}",
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
        new_log_start = log_start_offsets(self.log_start_cp, self.segments[0].base, self.remote_enabled)[0]
        removed = self.epochs.truncate_from_start(self.log_start_cp)
        if removed and (len(removed) > 1 or removed[0].start_offset != self.log_start_cp):
            self.step("epoch-truncate", f"leader epoch cache truncated to the log start {self.log_start_cp}")
        self.disk.remove_stray_snapshots(s.base for s in self.segments)
        real = self.psm("load")
        real.snapshots = set(self.disk.files)
        self.bytes_read += rebuild_producer_state(real, self.segments, new_log_start, next_offset,
                                                 self.clean)
        self.final_psm = real
        return new_log_start, recovery_point, next_offset

