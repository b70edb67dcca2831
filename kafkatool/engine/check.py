"""``kafkatool check``: cross-file consistency of a broker's log dirs, with what each finding means.

Pure: works on :class:`~kafkatool.model.LogDirData` read by ``reading.logdir``. The rules follow what
Kafka itself relies on and does at start-up (``LogManager.loadLogs``, ``LogLoader``, ``LogSegment.recover``,
``ProducerStateManager``, ``LeaderEpochFileCache``, ``OffsetIndex``/``TimeIndex.sanityCheck``): each finding
says what the broker will do with the damage, not only that the bytes are odd.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import astuple, dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from kafkatool.engine.swaps import SwapPlan, log_after_swaps
from kafkatool.engine.verify import (
    LogChecker,
    abort_marker_candidates,
    batch_leader_epoch_windows,
    batch_leader_epochs,
    check_offset_index,
    check_time_index,
    tiered_findings,
)
from kafkatool.model import (
    ControlType,
    Defect,
    IndexFile,
    LeaderEpochEntry,
    LogDirData,
    PartitionData,
    RecordBatch,
    SegmentData,
    Severity,
    SnapshotData,
    TopicPartition,
)
from kafkatool.schema.filenames import (
    CLEAN_SHUTDOWN,
    CLEANED_SUFFIX,
    CLUSTER_METADATA_TOPIC,
    DELETED_SUFFIX,
    LEADER_EPOCH_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    META_PROPERTIES,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    SWAP_SUFFIX,
    offset_from_name,
)
from kafkatool.schema.time_index import INT64_MAX, INT64_MIN
from kafkatool.schema.txn_index import key_positions
from kafkatool.storage.tiered import DELETE_SEGMENT_STARTED, RemoteLog, outside_lineage

# Reading defects and the severity they carry in a data directory.
READ_SEVERITY: dict[str, Severity] = {
    "torn-tail": "error",
    "trailing-zeros": "error",
    "corrupt-entry": "error",
    "unreadable-bytes": "error",
    "crc-mismatch": "error",
    "record-decode": "error",
}


@dataclass(frozen=True)
class PartitionOffsets:
    """The checkpointed offsets of one partition (``None`` where the checkpoint has no entry)."""

    recovery_point: int | None
    high_watermark: int | None
    log_start_offset: int | None


def _d(code: str, file: str, reason: str, severity: Severity = "error", position: int | None = None,
       field: str = "file") -> Defect:
    return Defect(code, file, position, field, reason, severity)


def _offsets(data: LogDirData, tp: TopicPartition | None) -> PartitionOffsets:
    return PartitionOffsets(data.checkpoint(RECOVERY_POINT_CHECKPOINT, tp),
                            data.checkpoint(REPLICATION_OFFSET_CHECKPOINT, tp),
                            data.checkpoint(LOG_START_OFFSET_CHECKPOINT, tp))


def _managed(part: PartitionData) -> bool:
    """Partitions ``LogManager`` loads and checkpoints (the KRaft metadata log is the raft layer's own)."""
    return part.topic_partition is not None and part.topic_partition.topic != CLUSTER_METADATA_TOPIC


def check_log_dir(data: LogDirData, swaps: dict[str, dict[int, SegmentData]] | None = None,
                  remote: Mapping[tuple[str, int], RemoteLog] | None = None,
                  remote_enabled: Mapping[str, bool] | None = None) -> list[Defect]:
    """Findings for one log dir (or a lone partition directory); ``swaps``: each partition's ``.swap`` segments
    (see :func:`partition_findings`); ``remote``: each partition's remote log (``reading.tiered``);
    ``remote_enabled``: each topic's ``remote.storage.enable`` where the metadata image says it."""
    out = dir_findings(data)
    for part in data.partitions:
        out += partition_findings(data, part, (swaps or {}).get(part.directory), remote, remote_enabled)
    return out + dir_tail_findings(data)


def _has_dir_files(data: LogDirData) -> bool:
    return bool(data.checkpoints) or data.clean_shutdown is not None or (
        data.meta_properties is not None and any(_managed(p) for p in data.partitions))


def dir_findings(data: LogDirData) -> list[Defect]:
    """The log-dir-level findings that come before the partitions' own.

    Only light partition facts are used (topic-partition, state), so a parallel scan can pass partitions
    stripped of their segments.
    """
    out: list[Defect] = list(data.defects)
    if _has_dir_files(data):
        out += _check_dir_files(data)
    return out


def partition_findings(data: LogDirData, part: PartitionData, swaps: dict[int, SegmentData] | None = None,
                       remote: Mapping[tuple[str, int], RemoteLog] | None = None,
                       remote_enabled: Mapping[str, bool] | None = None) -> list[Defect]:
    """One partition's findings in the context of its log dir (checkpoints, clean-shutdown marker).

    With the partition's ``.swap`` segments (``swaps``), an interrupted cleaner swap is checked as Kafka's load
    completes it (``engine.swaps``, as simulate-restart and replay-producers do): the swap segments in place of
    the segments they replace, which are only noted (Kafka deletes them; their records are in the swap)."""
    has_dir_files = _has_dir_files(data)
    managed = _managed(part) and has_dir_files
    loaded, plan = log_after_swaps(part, swaps) if swaps else (part, None)
    out = check_partition(loaded, _offsets(data, part.topic_partition),
                          clean_shutdown=(data.clean_shutdown is not None) if managed else None,
                          checkpoints_known=RECOVERY_POINT_CHECKPOINT in data.checkpoints)
    tp = part.topic_partition
    enabled = (remote_enabled or {}).get(tp.topic) if tp is not None else None
    if (remote or enabled is not None) and tp is not None and loaded.segments:
        # Tiered storage: the range below the local log is remote; remote segments against the local epochs.
        log = (remote or {}).get((tp.topic, tp.partition))
        out = tiered_findings(out, part.directory, _offsets(data, tp).log_start_offset,
                              loaded.segments[0].base_offset, log, enabled)
        out += remote_epoch_findings(loaded, log, enabled)
    return out if swaps is None else _swap_notes(part, swaps, plan, out)


def remote_epoch_findings(part: PartitionData, remote: RemoteLog | None, enabled: bool | None = None) -> list[Defect]:
    """Remote segments of ``__remote_log_metadata`` that ``RemoteLogManager.isRemoteSegmentWithinLeaderEpochs``
    would not count as this replica's log, against the partition's ``leader-epoch-checkpoint`` and log end
    (a diverged leader's copy, or a damaged local cache): the remote log manager skips them when it looks up
    offsets by timestamp and in retention. Segments being deleted are left out; with the topic's
    ``remote.storage.enable`` false (metadata image) the metadata is only noted."""
    if remote is None or not remote.segments:
        return []
    file = f"{part.directory}/{LEADER_EPOCH_CHECKPOINT}"
    if enabled is False:
        return [_d("remote-storage-disabled", part.directory,
                   f"__remote_log_metadata holds {len(remote.segments)} segment(s) of {part.directory} but the "
                   "topic's remote.storage.enable is false in the metadata image: Kafka loads the log as a local "
                   "one (its log start raised to the first local segment)", "info", field="remote.storage.enable")]
    epochs = [(e.epoch, e.start_offset) for e in part.leader_epochs or []]
    out = []
    for seg in sorted(remote.segments.values(), key=lambda s: (s.start_offset, s.segment_id)):
        if seg.state >= DELETE_SEGMENT_STARTED:
            continue
        why = outside_lineage(seg.leader_epochs, seg.end_offset, part.log_end_offset, epochs)
        if why is not None:
            local = ", ".join(f"{e}@{o}" for e, o in epochs) or "none"
            theirs = ", ".join(f"{e}@{o}" for e, o in sorted(seg.leader_epochs.items()))
            out.append(_d("remote-epoch-lineage", file,
                          f"remote segment {seg.segment_id} (offsets {seg.start_offset}..{seg.end_offset}, leader "
                          f"epochs {theirs}) is not within the local leader epoch lineage ({local}; log end "
                          f"{part.log_end_offset}): {why}. RemoteLogManager skips it (isRemoteSegmentWithinLeader"
                          "Epochs is false): written under a leadership this replica's log does not share (an "
                          "unclean election), or the local checkpoint is damaged", "warning",
                          field="segmentLeaderEpochs"))
    return out


def _swap_notes(part: PartitionData, swaps: dict[int, SegmentData], plan: SwapPlan | None,
                found: list[Defect]) -> list[Defect]:
    """``found`` with each ``.swap`` leftover said as the load treats it, and a note per replaced segment."""
    kept = set(plan.swapped_in) if plan is not None else set()
    out = []
    for d in found:
        base = offset_from_name(d.file.rsplit("/", 1)[-1])
        if d.code == "leftover-swap" and base not in kept:
            d = _d("leftover-swap", d.file, "a .swap at or above the lowest .cleaned file (an interrupted split): "
                   "Kafka deletes it at load and keeps the segments it would have replaced", "warning")
        out.append(d)
    for seg in part.segments:
        if plan is not None and seg.base_offset in plan.replaced and seg.log_file:
            out.append(_d("swap-replaced", seg.log_file, f"replaced by the interrupted cleaner swap of offsets "
                          f"[{plan.low}, {plan.high}): Kafka deletes it at load, its records are in the .swap "
                          "segment (nothing is lost)", "info"))
    return out


def dir_tail_findings(data: LogDirData) -> list[Defect]:
    """The log-dir-level findings that come after the partitions' own (topic ids, unknown files)."""
    out = _check_topic_ids(data.partitions)
    for name in data.unknown_files:
        out.append(_d("unknown-file", name, "not a file Kafka writes in a log dir", "info"))
    return out


def _check_dir_files(data: LogDirData) -> list[Defect]:
    out: list[Defect] = []
    if data.meta_properties is None and not any(d.file == META_PROPERTIES for d in data.defects):
        out.append(_d("missing-meta-properties", META_PROPERTIES,
                      "meta.properties is missing: the broker refuses to use this log dir until it is formatted",
                      "error"))
    managed = [p for p in data.partitions if _managed(p)]
    if data.clean_shutdown is None and managed:
        out.append(_d("unclean-shutdown", CLEAN_SHUTDOWN,
                      "no clean-shutdown marker: at start-up Kafka recovers every partition from its recovery "
                      "point (re-reading those segments, rebuilding their indexes and producer state)", "warning"))
    elif data.clean_shutdown is not None and data.clean_shutdown.problem:
        out.append(_d("clean-shutdown-content", CLEAN_SHUTDOWN, data.clean_shutdown.problem, "warning"))
    for name in (RECOVERY_POINT_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT):
        if name not in data.checkpoints and not any(d.file == name for d in data.defects) and managed:
            out.append(_d("missing-checkpoint", name, f"{name} is missing: Kafka starts every partition as if "
                          "it were 0 (a full recovery on an unclean start)", "warning"))
    present = {p.topic_partition for p in managed if not p.state}
    for name, cp in data.checkpoints.items():
        if cp is None:
            continue
        for tp in cp:
            if tp not in present:
                out.append(_d("checkpoint-orphan", name, f"{tp} is listed but has no partition directory here",
                              "warning", field=str(tp)))
    rp = data.checkpoints.get(RECOVERY_POINT_CHECKPOINT)
    if rp is not None:
        for tp in sorted(present - set(rp), key=str):
            out.append(_d("checkpoint-missing-partition", RECOVERY_POINT_CHECKPOINT,
                          f"{tp} has no recovery point: Kafka takes 0 and, on an unclean start, re-reads all of it",
                          "warning", field=str(tp)))
    return out


def check_partition(part: PartitionData, offsets: PartitionOffsets, *, clean_shutdown: bool | None,
                    checkpoints_known: bool) -> list[Defect]:
    """Findings for one partition directory."""
    out: list[Defect] = list(part.defects)
    d = part.directory
    if part.state:
        out.append(_d("partition-" + part.state, d, {
            "delete": "partition directory renamed for deletion: Kafka deletes it asynchronously",
            "future": "future replica (being moved between log dirs): Kafka resumes the move at start-up",
            "stray": "stray partition (not assigned to this broker): Kafka deletes it"}.get(part.state, part.state),
            "info"))
    leo = part.log_end_offset
    rp = offsets.recovery_point
    out += _check_segments(part, rp, clean_shutdown is False)
    out += _check_offsets(part, offsets, leo, clean_shutdown, checkpoints_known)
    out += _check_snapshots(part, leo, rp, clean_shutdown)
    out += _check_epochs(part, leo)
    out += _check_leftovers(part)
    return out


def _check_segments(part: PartitionData, recovery_point: int | None, unclean: bool) -> list[Defect]:
    out: list[Defect] = []
    previous: SegmentData | None = None
    last = part.segments[-1] if part.segments else None
    for seg in part.segments:
        if not seg.log_file:
            for f in (seg.index_file, seg.time_index_file, seg.txn_index_file):
                if f:
                    out.append(_d("orphan-index", f, "index without its .log segment: Kafka deletes it at load",
                                  "warning"))
            continue
        where = "below" if recovery_point is not None and seg.next_offset <= recovery_point else "at or above"
        for defect in seg.defects:
            out.append(_explain_read_defect(defect, seg, seg is last, where, recovery_point))
        checker = LogChecker(seg.log_file, seg.base_offset)
        controls: list[RecordBatch] = []  # the ABORT marker candidates, from the same pass over the segment
        checker.feed_all(seg.entries, controls)
        out += checker.defects
        if previous is not None and previous.entries and seg.entries and \
                seg.entries[0].base_offset < previous.next_offset:
            out.append(_d("segment-overlap", seg.log_file,
                          f"starts at offset {seg.entries[0].base_offset}, inside the previous segment (which ends "
                          f"at {previous.next_offset - 1})", "error", 0, "base_offset"))
        if seg.entries or seg.log_size:
            previous = seg
        recovered = unclean and (recovery_point is None or seg.next_offset > recovery_point)
        out += _check_indexes(seg, recovered)
        out += _check_txn_index(seg, controls)
    return out


def _explain_read_defect(defect: Defect, seg: SegmentData, is_last: bool, where: str,
                         recovery_point: int | None) -> Defect:
    """Give a reading defect its meaning for the broker."""
    severity = READ_SEVERITY.get(defect.code, defect.severity)
    reason = defect.reason
    if defect.code in ("torn-tail", "trailing-zeros"):
        reason += ("; on an unclean start Kafka truncates the segment here" if is_last else
                   "; this is not the active segment: Kafka truncates here and deletes every later segment")
    elif defect.code in ("crc-mismatch", "corrupt-entry", "unreadable-bytes"):
        if where == "below" and recovery_point is not None:
            reason += (f"; the segment lies below the recovery point {recovery_point}: Kafka will NOT detect this "
                       "at load and serves the corrupt batch")
        else:
            reason += ("; an unclean start truncates the log at this batch and deletes every later segment "
                       "(data loss)")
    return Defect(defect.code, defect.file or seg.log_file, defect.position, defect.field, reason, severity)


def _live_entries(index: IndexFile | None, zero_slot: tuple[int, int]) -> list[Any]:
    """Live entries, with a lone all-zero first slot of a preallocated index counted as none: Kafka never
    indexes position 0 (the first append is never past ``index.interval.bytes``)."""
    if index is None:
        return []
    entries = index.entries
    if len(entries) == 1 and index.zero_tail and astuple(entries[0]) == zero_slot:
        return []
    return entries


def _check_indexes(seg: SegmentData, recovered: bool) -> list[Defect]:
    return [_soften(d, recovered) for d in _index_findings(seg)]


def _soften(d: Defect, recovered: bool) -> Defect:
    """Index damage in a segment Kafka will recover is rebuilt at start-up: a warning, not an error."""
    if not recovered or d.severity != "error":
        return d
    return Defect(d.code, d.file, d.position, d.field, d.reason + "; Kafka rebuilds this index when it recovers "
                  "the segment at start-up", "warning")


def _index_findings(seg: SegmentData) -> list[Defect]:
    out: list[Defect] = []
    if seg.index_file is None:
        out.append(_d("missing-index", seg.log_file, f"{seg.log_file.rsplit('/', 1)[-1]} has no .index: Kafka logs "
                      "an error at load and recovers (re-reads) the segment to rebuild it", "warning"))
    elif seg.index is not None:
        out += check_offset_index(seg.index_file, _live_entries(seg.index, (seg.base_offset, 0)), seg.base_offset,
                                  seg.entries, seg.valid_bytes, seg.index_size - 8 * seg.index.zero_tail)
        if seg.index.zero_tail:
            out.append(_d("index-preallocated", seg.index_file,
                          f"{seg.index.zero_tail} zero-filled slots after the last entry: never trimmed (the active "
                          "segment at a crash); Kafka resizes it at load", "info", 8 * len(seg.index.entries),
                          "entries"))
    if seg.time_index_file is None and seg.index_file is not None:
        out.append(_d("missing-time-index", seg.log_file, "no .timeindex: Kafka rebuilds it at load", "warning"))
    elif seg.time_index is not None and seg.time_index_file is not None:
        out += check_time_index(seg.time_index_file, _live_entries(seg.time_index, (0, seg.base_offset)),
                                seg.base_offset, seg.entries, seg.time_index_size - 12 * seg.time_index.zero_tail)
    return out


def _abort_markers(candidates: Iterable[RecordBatch]) -> dict[tuple[int, int], RecordBatch]:
    """(producer id, marker offset) -> batch of every ABORT marker among a segment's ``candidates``
    (``verify.abort_marker_candidates``)."""
    found = {}
    for e in candidates:
        if e.records:
            ctrl = e.records[0].control
            if ctrl is not None and ctrl.type == ControlType.ABORT.value:
                found[(e.producer_id, e.base_offset)] = e
    return found


def _check_txn_index(seg: SegmentData, candidates: Iterable[RecordBatch] | None = None) -> list[Defect]:
    out: list[Defect] = []
    markers = _abort_markers(abort_marker_candidates(seg.entries) if candidates is None else candidates)
    entries = key_positions(seg.txn_index or [])
    for (pid, offset), batch in sorted(markers.items(), key=lambda kv: kv[0][1]):
        if (pid, offset) in entries:
            continue
        if batch.has_delete_horizon:
            # The cleaner removed the transaction's data and put the marker on its way out (KIP-534).
            out.append(_d("txnindex-missing-abort", seg.txn_index_file or seg.log_file,
                          f"ABORT marker of producer {pid} at offset {offset} has no .txnindex entry; its batch "
                          "carries a delete horizon: the cleaner already removed that transaction's data (normal)",
                          "info", batch.position, "abort_marker"))
        else:
            out.append(_d("txnindex-missing-abort", seg.txn_index_file or seg.log_file,
                          f"ABORT marker of producer {pid} at offset {offset} has no .txnindex entry: read_committed "
                          "consumers of this segment would receive the aborted records", "warning", batch.position,
                          "abort_marker"))
    for (pid, offset), i in sorted(entries.items(), key=lambda kv: kv[1]):
        if (pid, offset) not in markers:
            out.append(_d("txnindex-without-marker", seg.txn_index_file or seg.log_file,
                          f"entry for producer {pid} ending at offset {offset} matches no ABORT marker in the "
                          "segment", "warning", i * 34, "last_offset"))
    return out


def _check_offsets(part: PartitionData, o: PartitionOffsets, leo: int, clean: bool | None,
                   checkpoints_known: bool) -> list[Defect]:
    out: list[Defect] = []
    d = part.directory
    first_base = part.segments[0].base_offset if part.segments else 0
    if o.recovery_point is not None:
        if o.recovery_point > leo:
            out.append(_d("recovery-point-beyond-leo", RECOVERY_POINT_CHECKPOINT,
                          f"{d}: recovery point {o.recovery_point} is beyond the log end {leo}: Kafka clamps it "
                          "(data the broker believed flushed is missing)", "warning", field=d))
        elif o.recovery_point < leo and clean is False:
            rescan = sum(s.log_size for s in part.segments if s.next_offset > o.recovery_point)
            out.append(_d("recovery-point-behind", RECOVERY_POINT_CHECKPOINT,
                          f"{d}: recovery point {o.recovery_point} is behind the log end {leo} and there is no "
                          f"clean-shutdown marker: Kafka re-reads {rescan} bytes from offset {o.recovery_point} at "
                          "start-up", "warning", field=d))
    if o.high_watermark is not None and o.high_watermark > leo:
        out.append(_d("high-watermark-beyond-leo", REPLICATION_OFFSET_CHECKPOINT,
                      f"{d}: high watermark {o.high_watermark} is beyond the log end {leo}: committed records are "
                      "missing from this replica; Kafka clamps the high watermark to the log end", "error", field=d))
    if o.log_start_offset is not None:
        if o.log_start_offset > leo:
            out.append(_d("log-start-beyond-leo", LOG_START_OFFSET_CHECKPOINT,
                          f"{d}: log start offset {o.log_start_offset} is beyond the log end {leo}", "error", field=d))
        elif o.log_start_offset < first_base:
            out.append(_d("log-start-below-segments", LOG_START_OFFSET_CHECKPOINT,
                          f"{d}: log start offset {o.log_start_offset} is below the first segment {first_base}: "
                          "Kafka raises it to the first segment's base", "info", field=d))
    return out


def _own_metadata_snapshot(part: PartitionData, snap: SnapshotData) -> bool:
    """Whether ``snap`` is one of the empty producer snapshots Kafka's own ``UnifiedLog`` writes in the KRaft
    metadata log: ``KafkaMetadataLog`` runs on a ``UnifiedLog``, whose ``roll`` and ``close`` (every clean
    shutdown) call ``ProducerStateManager.takeSnapshot`` although raft batches carry no producer id, and whose
    next load (``KafkaMetadataLog`` never has a clean shutdown: every segment is recovered) deletes and rewrites
    them. A snapshot left at an earlier shutdown's log end is that lifecycle, not a stray worth a note."""
    tp = part.topic_partition
    return (tp is not None and tp.topic == CLUSTER_METADATA_TOPIC and snap.snapshot is not None
            and snap.snapshot.crc_valid and not snap.snapshot.entries)


def _check_snapshots(part: PartitionData, leo: int, rp: int | None, clean: bool | None) -> list[Defect]:
    out: list[Defect] = []
    bases = {s.base_offset for s in part.segments if s.log_file}
    have = {s.offset for s in part.snapshots}
    for snap in part.snapshots:
        if snap.snapshot is not None and not snap.snapshot.crc_valid:
            out.append(_d("snapshot-crc", snap.file, f"stored CRC {snap.snapshot.crc} does not match the entries: "
                          "Kafka rejects this snapshot and rebuilds producer state from an older one and the log",
                          "warning", 2, "crc"))
        if snap.offset > leo:
            out.append(_d("snapshot-beyond-leo", snap.file, f"snapshot at offset {snap.offset} is beyond the log end "
                          f"{leo}: Kafka deletes it at load", "warning", field="offset"))
        elif snap.offset not in bases and snap.offset != leo and snap.offset != rp and not _own_metadata_snapshot(
                part, snap):
            out.append(_d("snapshot-stray", snap.file, f"snapshot at {snap.offset} matches no segment base nor the "
                          "log end: Kafka deletes it at load", "info", field="offset"))
    if not part.segments or not any(s.entries for s in part.segments):
        return out
    expected = {s.base_offset for s in part.segments[1:] if s.log_file}
    if clean:
        expected.add(leo)
    if rp is not None and part.segments and rp > part.segments[-1].base_offset and rp <= leo:
        expected.add(rp)
    missing = sorted(expected - have)
    if missing and not have:
        out.append(_d("snapshots-missing", part.directory, "no producer snapshot at all: Kafka rebuilds producer "
                      "state by reading the whole log at load (idempotent and transactional state included)",
                      "warning"))
    elif missing:
        latest = max(o for o in have if o <= missing[-1]) if any(o <= missing[-1] for o in have) else None
        start = "the log start" if latest is None else f"the snapshot at {latest}"
        out.append(_d("snapshot-missing", part.directory,
                      f"no producer snapshot at offset {missing[-1]}"
                      f"{'' if len(missing) == 1 else f' (nor at {missing[:-1]})'}: Kafka rebuilds producer state "
                      f"from {start} by re-reading the log", "warning", field="snapshots"))
    return out


def _check_epochs(part: PartitionData, leo: int) -> list[Defect]:
    out: list[Defect] = []
    name = f"{part.directory}/{LEADER_EPOCH_CHECKPOINT}"
    epochs = part.leader_epochs

    def batch_epochs() -> Iterator[tuple[int, int]]:
        """(base offset, leader epoch) of every batch that carries one, streamed from the segments."""
        for s in part.segments:
            yield from batch_leader_epochs(s.entries)

    if epochs is None:
        if not any(d.file == name for d in part.defects) and next(batch_epochs(), None) is not None:
            out.append(_d("missing-leader-epoch-checkpoint", name, "batches carry leader epochs but there is no "
                          "leader-epoch-checkpoint: Kafka rebuilds the cache only for segments it recovers; "
                          "follower truncation by epoch (KIP-101) may fall back to the high watermark", "warning"))
        return out
    for i in range(1, len(epochs)):
        if epochs[i].epoch <= epochs[i - 1].epoch or epochs[i].start_offset < epochs[i - 1].start_offset:
            out.append(_d("leader-epoch-order", name, f"entry {epochs[i].epoch} {epochs[i].start_offset} does not "
                          f"follow {epochs[i - 1].epoch} {epochs[i - 1].start_offset}: epochs and start offsets must "
                          "increase", "error", field=f"line {i + 3}"))
    for e in epochs:
        if e.start_offset > leo:
            out.append(_d("leader-epoch-beyond-leo", name, f"epoch {e.epoch} starts at {e.start_offset}, beyond the "
                          f"log end {leo}: Kafka truncates the cache at load", "warning", field=f"epoch {e.epoch}"))
    reported: set[int] = set()
    known = {e.epoch for e in epochs}
    starts = [e.start_offset for e in epochs]
    ordered = all(a <= b for a, b in pairwise(starts)) and all(INT64_MIN <= a <= INT64_MAX for a in starts)

    def mismatch(offset: int, epoch: int, cover: LeaderEpochEntry) -> None:
        reported.add(epoch)
        what = "is not in the checkpoint" if epoch not in known else f"but the checkpoint says epoch " \
            f"{cover.epoch} from offset {cover.start_offset}"
        out.append(_d("leader-epoch-mismatch", name, f"batch at offset {offset} was written in epoch {epoch} "
                      f"{what}: divergence checks (KIP-101/279) would use wrong boundaries", "warning",
                      field=f"epoch {epoch}"))

    if not ordered:
        for offset, epoch in batch_epochs():
            if epoch in reported:
                continue
            cover = next((e for e in reversed(epochs) if e.start_offset <= offset), None)
            if cover is not None and cover.epoch != epoch:  # None: below the first entry (cache truncated)
                mismatch(offset, epoch, cover)
        return out
    # ordered (the usual case): the covering entry of every batch at once, bisect_right as searchsorted
    start_arr = np.asarray(starts, dtype=np.int64)
    epoch_arr = np.asarray([e.epoch for e in epochs], dtype=np.int64)
    for s in part.segments:
        for offsets, batch_epochs_ in batch_leader_epoch_windows(s.entries):
            k = np.searchsorted(start_arr, offsets, side="right")
            wrong = np.flatnonzero((k > 0) & (epoch_arr[np.maximum(k - 1, 0)] != batch_epochs_))
            if not len(wrong):
                continue
            _, first = np.unique(batch_epochs_[wrong], return_index=True)
            for i in sorted(wrong[first].tolist()):  # each epoch's first wrong batch, in file order
                epoch = int(batch_epochs_[i])
                if epoch not in reported:
                    mismatch(int(offsets[i]), epoch, epochs[int(k[i]) - 1])
    return out


def _check_leftovers(part: PartitionData) -> list[Defect]:
    meaning = {
        DELETED_SUFFIX: "a segment file renamed for asynchronous deletion: Kafka deletes it at load",
        CLEANED_SUFFIX: "output of an interrupted cleaner pass: Kafka deletes it at load",
        SWAP_SUFFIX: "a cleaned segment swapped in but not yet renamed: Kafka completes the swap at load, deleting "
                     "the segment files it replaces",
    }
    out = []
    for name in part.leftovers:
        suffix = "." + name.rsplit(".", 1)[-1]
        out.append(_d("leftover-" + suffix[1:], name, meaning.get(suffix, "in-flight file"), "warning"))
    for name in part.unknown_files:
        out.append(_d("unknown-file", name, "not a file Kafka writes in a partition directory", "info"))
    return out


def _check_topic_ids(parts: Iterable[PartitionData]) -> list[Defect]:
    by_topic: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for p in parts:
        if p.topic_partition and p.partition_metadata and not p.state:
            by_topic[p.topic_partition.topic][p.partition_metadata.topic_id].append(p.directory)
    out = []
    for topic, ids in by_topic.items():
        if len(ids) > 1:
            detail = "; ".join(f"{tid}: {', '.join(sorted(dirs))}" for tid, dirs in sorted(ids.items()))
            out.append(_d("topic-id-mismatch", topic, f"partitions of topic {topic} carry different topic ids "
                          f"({detail}): Kafka refuses to load a partition whose topic id differs from the "
                          "controller's (one of them is from a deleted and re-created topic)", "error"))
    return out


def check_broker_identity(dirs: list[LogDirData]) -> list[Defect]:
    metas = [(d.path, d.meta_properties) for d in dirs if d.meta_properties is not None]
    out: list[Defect] = []
    if len(metas) < 2:
        return out
    for field_name, label in (("cluster_id", "cluster.id"), ("node_id", "node.id")):
        values = {getattr(m, field_name) for _, m in metas}
        if len(values) > 1:
            detail = ", ".join(f"{p}: {getattr(m, field_name)}" for p, m in metas)
            out.append(_d("meta-properties-mismatch", META_PROPERTIES, f"{label} differs between the log dirs "
                          f"({detail}): the broker refuses to start", "error", field=label))
    ids = [m.directory_id for _, m in metas if m.directory_id]
    if len(ids) != len(set(ids)):
        out.append(_d("directory-id-duplicate", META_PROPERTIES, "two log dirs share a directory.id: the broker "
                      "refuses to start (a copied log dir?)", "error", field="directory.id"))
    return out

