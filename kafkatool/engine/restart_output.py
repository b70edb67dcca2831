"""What a partition directory holds after Kafka's start-up load: the file plan behind ``--apply-to``.

Pure: it lists, per file, either bytes to write or a prefix of an input file to copy. The rules follow
``LogSegment.recover`` (a recovered segment is truncated at its first invalid batch and gets rebuilt
offset, time and transaction indexes), ``LogLoader`` (deleted segments and snapshots disappear, snapshots
written during the load appear) and ``LeaderEpochFileCache`` (the truncated epoch checkpoint). Indexes of
segments Kafka did not touch are copied as they are; the active segment's indexes are written trimmed,
as a clean shutdown leaves them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kafkatool.engine.restart_segments import LoadedSegment
from kafkatool.model import (
    AbortedTxn,
    LeaderEpochEntry,
    LogEntry,
    OffsetIndexEntry,
    PartitionData,
    ProducerSnapshotEntry,
    RecordBatch,
    SegmentData,
    TimeIndexEntry,
    entry_spans,
)
from kafkatool.schema import checkpoint, offset_index, producer_snapshot, time_index, txn_index
from kafkatool.schema.filenames import (
    INDEX_SUFFIX,
    LEADER_EPOCH_CHECKPOINT,
    LOG_SUFFIX,
    PARTITION_METADATA,
    PRODUCER_SNAPSHOT_SUFFIX,
    TEMP_SUFFIX,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    segment_file_name,
)
from kafkatool.storage.producer_state import ProducerStateManager


@dataclass(frozen=True, slots=True)
class OutputFile:
    """One file of the recovered directory: ``data`` to write, or the first ``length`` bytes of the input
    file ``copy_from`` (a path relative to the input log dir)."""

    path: str
    data: bytes | None = None
    copy_from: str | None = None
    length: int | None = None


def rebuilt_indexes(entries: Sequence[LogEntry], interval: int) -> tuple[list[OffsetIndexEntry],
                                                                         list[TimeIndexEntry]]:
    """The offset and time index entries ``LogSegment.recover`` writes for these (valid) entries."""
    offsets: list[OffsetIndexEntry] = []
    times: list[TimeIndexEntry] = []
    valid = last_entry = 0
    max_ts, max_ts_offset = -1, -1

    def maybe_time(ts: int, off: int) -> None:
        if ts >= 0 and (not times or ts > times[-1].timestamp):
            times.append(TimeIndexEntry(ts, off))

    for e in entries:
        if e.max_timestamp > max_ts:
            max_ts, max_ts_offset = e.max_timestamp, e.last_offset
        if valid - last_entry > interval:
            offsets.append(OffsetIndexEntry(e.last_offset, valid))
            maybe_time(max_ts, max_ts_offset)
            last_entry = valid
        valid += e.size_in_bytes
    maybe_time(max_ts, max_ts_offset)
    return offsets, times


def aborted_by_segment(segments: Iterable[Sequence[LogEntry]]) -> list[list[AbortedTxn]]:
    """Every aborted transaction of the (recovered) log with the LSO Kafka records for it, per segment: in the
    segment whose bytes hold its marker, in marker order. ``LogSegment.recover`` (and the append path) index a
    completed transaction in the segment it is reading, whatever the marker's offset says: a marker whose base
    offset (outside the batch CRC) was damaged still lands in its own segment's ``.txnindex``."""
    manager = ProducerStateManager(keep_committed=False, refuse_invalid_txn=False)  # the load decided that
    out: list[list[AbortedTxn]] = []
    for entries in segments:
        seen = len(manager.transactions)
        for e in entries:
            if isinstance(e, RecordBatch):
                manager.append(e)
        out.append([AbortedTxn(0, t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset or 0)
                    for t in manager.transactions[seen:] if t.aborted and t.last_offset is not None])
    return out


def partition_plan(part: PartitionData, segments: Sequence[LoadedSegment],
                   snapshots: dict[int, list[ProducerSnapshotEntry] | None], epochs: Sequence[LeaderEpochEntry],
                   interval: int) -> list[OutputFile]:
    """Files of one partition directory after the load. ``segments`` are the loader's final segments;
    ``snapshots`` its snapshot files."""
    d = part.directory
    out: list[OutputFile] = []
    final: list[tuple[LoadedSegment, Sequence[LogEntry]]] = []
    for seg in segments:
        final.append((seg, seg.entries[:sum(1 for _, end in entry_spans(seg.entries) if end <= seg.size)]))
    aborted = aborted_by_segment(kept for _, kept in final)
    for (seg, kept), mine in zip(final, aborted, strict=True):
        base = seg.base
        data: SegmentData | None = seg.origin
        name = f"{d}/{segment_file_name(base, LOG_SUFFIX)}"
        if seg.size == 0 or data is None:
            # A segment the load created (nothing left to keep): Kafka opens a new, empty file.
            out.append(OutputFile(name, b""))
        else:
            # A ``.swap`` segment is copied from its ``.swap`` file (Kafka renames it).
            out.append(OutputFile(name, copy_from=data.log_file, length=seg.size))
        if not seg.recovered and data is not None:
            # Kafka keeps the index files of a segment it did not re-scan as they are (after compaction the
            # transaction index can differ from a replay). A time index it did not find is created empty
            # (``LogSegment.sanityCheck``); so is the offset index a ``.swap`` came without.
            for suffix, src in ((INDEX_SUFFIX, data.index_file), (TIME_INDEX_SUFFIX, data.time_index_file)):
                target = f"{d}/{segment_file_name(base, suffix)}"
                out.append(OutputFile(target, copy_from=src) if src else OutputFile(target, b""))
            if data.txn_index_file:
                out.append(OutputFile(f"{d}/{segment_file_name(base, TXN_INDEX_SUFFIX)}",
                                      copy_from=data.txn_index_file))
            continue
        offsets, times = rebuilt_indexes(kept, interval)
        out.append(OutputFile(f"{d}/{segment_file_name(base, INDEX_SUFFIX)}",
                              offset_index.build_offset_index(offsets, base)))
        out.append(OutputFile(f"{d}/{segment_file_name(base, TIME_INDEX_SUFFIX)}",
                              time_index.build_time_index(times, base)))
        if mine:
            out.append(OutputFile(f"{d}/{segment_file_name(base, TXN_INDEX_SUFFIX)}", txn_index.build_txn_index(mine)))
    for offset in sorted(snapshots):
        entries = snapshots[offset]
        name = f"{d}/{segment_file_name(offset, PRODUCER_SNAPSHOT_SUFFIX)}"
        if entries is None:
            src = next((s.file for s in part.snapshots if s.offset == offset), None)
            if src is not None:
                out.append(OutputFile(name, copy_from=src))
        else:
            out.append(OutputFile(name, producer_snapshot.build_producer_snapshot(entries)))
    out.append(OutputFile(f"{d}/{LEADER_EPOCH_CHECKPOINT}", checkpoint.build_leader_epoch_checkpoint(epochs)))
    if part.partition_metadata is not None:
        out.append(OutputFile(f"{d}/{PARTITION_METADATA}", copy_from=f"{d}/{PARTITION_METADATA}"))
    # Files the load never touches stay as they are: names Kafka does not know, and a half-written
    # ``leader-epoch-checkpoint.tmp`` unless the load writes the checkpoint (``CheckpointFile.write`` writes
    # the ``.tmp`` again and renames it), which it does only when the epochs change (seen on Kafka 3.9.2: a
    # SIGKILL during the asynchronous flush of ``LeaderEpochFileCache.truncateFromStart`` left one behind).
    unchanged = [(e.epoch, e.start_offset) for e in part.leader_epochs or []] == \
        [(e.epoch, e.start_offset) for e in epochs]
    for name in part.unknown_files:
        out.append(OutputFile(name, copy_from=name))
    for name in part.leftovers:
        if unchanged and name.split("/")[-1] == LEADER_EPOCH_CHECKPOINT + TEMP_SUFFIX:
            out.append(OutputFile(name, copy_from=name))
    return out
