"""What Kafka does with a log dir at broker start-up, modelled offline and read-only: the public API and the
result.

Models ``LogManager.loadLogs`` / ``UnifiedLog.apply`` (core, Scala) around storage's ``LogLoader.load``, then
the constructor's clamps (log start offset, recovery point, first unstable offset) and the high watermark as
``Partition`` applies it, and what the load lost. The load itself is split like Kafka's classes:
:mod:`~kafkatool.engine.log_loader` (``LogLoader``: stray and swap files, clean vs unclean start, recovery
from the recovery point, epoch-cache truncations), :mod:`~kafkatool.engine.segment_recovery`
(``LogSegment.recover`` / ``truncateTo``), :mod:`~kafkatool.engine.restart_producers` (``ProducerStateManager``
with its snapshot files, ``UnifiedLog.rebuildProducerState``) over :mod:`~kafkatool.engine.restart_segments`
(``LogSegment``'s reads); :mod:`~kafkatool.engine.restart_output` plans the files Kafka leaves. Pure: decoded
files in, a result out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from kafkatool.engine.log_loader import LogLoader
from kafkatool.engine.restart_output import OutputFile, partition_plan
from kafkatool.engine.restart_steps import Step
from kafkatool.engine.segment_recovery import (
    DEFAULT_INDEX_INTERVAL_BYTES,
    InvalidOffset,
    SegmentOverflow,
    column_windows,
    infer_index_interval,
)
from kafkatool.model import (
    LeaderEpochEntry,
    LogDirData,
    PartitionData,
    RecordBatch,
    SegmentData,
    entries_max_timestamp,
)
from kafkatool.schema.filenames import (
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
)
from kafkatool.storage.producer_state import InvalidTxnState, ProducerStateEntry
from kafkatool.storage.tiered import DELETE_SEGMENT_STARTED, RemoteLog, local_start_view, outside_lineage

__all__ = ["DEFAULT_INDEX_INTERVAL_BYTES", "DEFAULT_PRODUCER_ID_EXPIRATION_MS", "METADATA_PARTITION",
           "Loss", "PartitionRestart", "RestartOptions", "RestartResult", "SegmentAfter", "Step",
           "infer_index_interval", "simulate_partition", "simulate_restart"]

DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000  # producer.id.expiration.ms
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
    partial_batches: int = 0  # of ``batches``: cut short by a torn write, counted from their whole headers
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
    local_log_start_offset: int | None = None  # UnifiedLog.localLogStartOffset (the first local offset)
    remote_offsets: tuple[int, int] | None = None  # [from, to): below the local log, in remote storage (KIP-405)
    remote_uncovered: list[tuple[int, int]] = field(default_factory=list)  # parts no finished remote segment holds
    log_end_offset: int | None = None
    recovery_point: int | None = None
    high_watermark: int | None = None
    first_unstable_offset: int | None = None
    last_stable_offset: int | None = None
    bytes_truncated: int = 0
    recovery_bytes_read: int = 0
    segments: list[SegmentAfter] = field(default_factory=list)
    leader_epochs: list[LeaderEpochEntry] = field(default_factory=list)
    producers: list[ProducerStateEntry] = field(default_factory=list)
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


def _loss(res: PartitionRestart, loader: LogLoader, next_offset: int) -> None:
    loss = res.loss
    batches = records = 0
    first, last = None, None
    producers: set[int] = set()
    transactions: list[int] = []
    for whole in loader.entries_before.values():
        known = loader.columns.get(whole)
        # a segment too large for one set of header columns goes window by window (column_windows)
        for entries, cols in [(whole, known)] if known is not None else column_windows(whole):
            if cols is not None:
                # the same sums over header columns (all magic 2 batches)
                keep = cols["last_offset"] >= next_offset
                if keep.any():
                    batches += int(keep.sum())
                    records += int(cols["records_count"][keep].astype(np.int64).sum())
                    lo, hi = int(cols["base_offset"][keep].min()), int(cols["last_offset"][keep].max())
                    first = lo if first is None else min(first, lo)
                    last = hi if last is None else max(last, hi)
                    pids = cols["producer_id"][keep]
                    producers.update(pids[pids >= 0].tolist())
                    attrs = cols["attributes"][keep]
                    transactions += cols["base_offset"][keep][(attrs & 0x30) == 0x10].tolist()
                continue
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

    # A batch cut short (torn write) is no entry, but its whole header says what it held: Kafka's recovery
    # (LogSegment.recover) drops it with the partial bytes, so its records and offsets are lost too.
    torn = [(s.base_offset, s.torn) for s in loader.part.segments
            if s.torn is not None and s.base_offset not in loader.swap_replaced]
    torn += [(base, s.torn) for base, s in loader.swaps.items() if s.torn is not None and base in loader.swap_sizes]
    for base, t in torn:
        if t.last_offset < next_offset or size_after(base) > t.position:
            continue
        batches += 1
        loss.partial_batches += 1
        records += t.records_count
        first = t.base_offset if first is None else min(first, t.base_offset)
        last = t.last_offset if last is None else max(last, t.last_offset)
        if t.producer_id >= 0:
            producers.add(t.producer_id)
        if t.is_transactional and not t.is_control:
            transactions.append(t.base_offset)

    # ``bytes_truncated`` is the net shrink of the log's .log files (the sum of their sizes before the load less
    # the sum after), as Kafka's own before/after comparison of the files counts it: a renamed-in .swap larger
    # than the same-base segment it replaces makes up for part of the segments deleted with it. But the
    # segments a completed cleaner swap replaced shrink by what compaction removed (superseded records), which
    # is no loss: only what recovery then cut from the renamed-in .swap segments is.
    before_total = sum(size for _file, size in loader.sizes_before.values())
    dropped = max(0, before_total - sum(s.size for s in loader.segments))
    for base, (_file, size) in loader.sizes_before.items():
        after = size_after(base)
        if after < size and base not in loader.swap_replaced:
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
                       options: RestartOptions, now: int, remote: RemoteLog | None = None,
                       remote_enabled: bool | None = None) -> PartitionRestart:
    """Load one partition as ``UnifiedLog.apply`` and ``Partition`` do. ``remote``: what
    ``__remote_log_metadata`` says of the partition; ``remote_enabled``: the topic's ``remote.storage.enable``
    where known (unknown: enabled when ``remote`` has segments), as ``LogLoader``'s ``isRemoteLogEnabled``."""
    tp = part.topic_partition
    res = PartitionRestart(part.directory, tp.topic if tp else part.directory, tp.partition if tp else None, clean)
    metadata = tp is not None and tp.topic == METADATA_PARTITION
    if metadata:
        # KafkaMetadataLog.apply: log start 0, recovery point 0, never a clean shutdown.
        clean, log_start_cp, recovery_cp, hw_cp = False, 0, 0, None
        log_start_entry: int | None = None
        res.clean_shutdown = False
        res.steps.append(Step("metadata-log", "the KRaft metadata log is loaded by KafkaMetadataLog: every segment "
                                              "is recovered on every start"))
    else:
        log_start_entry = data.checkpoint(LOG_START_OFFSET_CHECKPOINT, part.topic_partition)
        log_start_cp = log_start_entry or 0
        recovery_cp = data.checkpoint(RECOVERY_POINT_CHECKPOINT, part.topic_partition) or 0
        hw_cp = data.checkpoint(REPLICATION_OFFSET_CHECKPOINT, part.topic_partition)
        if options.recovery_point is not None:
            recovery_cp = options.recovery_point
    res.inputs = {"recovery_point_checkpoint": recovery_cp, "log_start_offset_checkpoint": log_start_cp,
                  "high_watermark_checkpoint": hw_cp, "clean_shutdown": clean}
    tiered = not metadata and (remote_enabled if remote_enabled is not None
                               else remote is not None and bool(remote.segments))
    loader = LogLoader(part, swaps, res.steps, clean, log_start_cp, recovery_cp, now,
                       options.producer_id_expiration_ms, options.index_interval_bytes)
    loader.remote_enabled = tiered  # type: ignore[attr-defined]  # LogLoader's isRemoteLogEnabled
    try:
        new_log_start, recovery_point, next_offset = loader.load()
    except InvalidOffset as err:
        res.outcome = "failed"
        res.error = f"org.apache.kafka.common.errors.InvalidOffsetException: {err}"
        res.steps.append(Step("fail", f"rebuilding the indexes of segment {err.seg.base} failed: {res.error}",
                              err.seg.file, err.seg.base))
        return res
    except SegmentOverflow as err:
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
    except InvalidTxnState as err:
        res.outcome = "failed"
        res.error = err.kafka_message(f"{tp.topic}-{tp.partition}" if tp else part.directory)
        files = [(s.base, s.file) for s in loader.segments] + [(s.base_offset, s.log_file) for s in part.segments]
        seg = max((f for f in files if f[0] <= err.offset), key=lambda f: f[0], default=None)
        res.steps.append(Step("fail", f"producer {err.producer_id} wrote a non-transactional batch at offset "
                                      f"{err.offset} inside its open transaction: rebuilding the producer state "
                                      f"throws {res.error}; LogManager fails ('Error starting LogManager') and the "
                                      "broker halts", seg[1] if seg else None, err.offset))
        return res
    finally:
        res.recovery_bytes_read = loader.bytes_read
    psm = loader.final_psm
    assert psm is not None  # set by a load that returned
    log_start = new_log_start
    if tiered:
        log_start = _tiered_start(res, log_start_entry, loader.segments[0].base, remote)
        _lineage_steps(res, remote, list(loader.epochs.entries), next_offset)
    elif remote_enabled is False and remote is not None and remote.segments:
        res.steps.append(Step("remote-storage-disabled", f"the topic's remote.storage.enable is false (metadata "
                              f"image): the log loads as a local one although __remote_log_metadata holds "
                              f"{len(remote.segments)} of its segments"))
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


def _tiered_start(res: PartitionRestart, log_start_entry: int | None, first_base: int,
                  remote: RemoteLog | None) -> int:
    """The log start offset with remote storage enabled (``LogLoader.load`` keeps the checkpoint's, not raised
    to the first local segment), the local log start offset, and the offsets in between, said as a step. With
    no checkpoint entry Kafka loads with 0 and the remote log manager then moves the start to the remote log
    start (what is reported here)."""
    view = local_start_view(log_start_entry, first_base, remote, True)
    if log_start_entry is None and view.remote is not None:
        res.steps.append(Step("remote-log-start", f"no log-start-offset-checkpoint entry: the log loads with start 0 "
                              f"and the remote log manager moves it to the remote log start {view.log_start_offset}",
                              offset=view.log_start_offset))
    res.local_log_start_offset = view.local_log_start_offset
    if view.remote is not None:
        res.remote_offsets = view.remote
        res.remote_uncovered = list(view.uncovered)
        lo, hi = view.remote
        held = (f"{len(view.covered_by)} finished remote segment(s) of __remote_log_metadata hold them"
                if view.evidence == "remote-log-metadata" else "the topic has remote.storage.enable")
        gaps = "".join(f"; offsets {a}..{b - 1} are in no finished remote segment" for a, b in view.uncovered)
        res.steps.append(Step("remote-log-start", f"remote storage enabled: the log start offset stays {lo} (the "
                              f"checkpoint's), the local log starts at {hi}; offsets {lo}..{hi - 1} are remote, "
                              f"not lost ({held}){gaps}", offset=lo))
    return view.log_start_offset


def _lineage_steps(res: PartitionRestart, remote: RemoteLog | None, epochs: list[LeaderEpochEntry],
                   log_end: int) -> None:
    """Each remote segment the remote log manager will not count as this log's once loaded
    (``isRemoteSegmentWithinLeaderEpochs`` against the loaded leader epoch cache and log end), said as a step."""
    if remote is None:
        return
    local = [(e.epoch, e.start_offset) for e in epochs]
    for seg in sorted(remote.segments.values(), key=lambda s: (s.start_offset, s.segment_id)):
        if seg.state >= DELETE_SEGMENT_STARTED:
            continue
        why = outside_lineage(seg.leader_epochs, seg.end_offset, log_end, local)
        if why is not None:
            res.steps.append(Step("remote-epoch-lineage", f"remote segment {seg.segment_id} (offsets "
                                  f"{seg.start_offset}..{seg.end_offset}) is outside the loaded leader epoch "
                                  f"lineage: {why}; the remote log manager skips it", offset=seg.start_offset))


def simulate_restart(data: LogDirData, swaps: dict[str, dict[int, SegmentData]], options: RestartOptions,
                     partition: str | None = None,
                     remote: Mapping[tuple[str, int], RemoteLog] | None = None,
                     remote_enabled: Mapping[str, bool] | None = None) -> RestartResult:
    """Every partition of ``data`` (or only ``partition``), loaded as the broker would at start-up; ``remote``:
    each (topic, partition)'s remote log from ``__remote_log_metadata`` (``reading.tiered``); ``remote_enabled``:
    each topic's ``remote.storage.enable`` where the metadata image says it."""
    marker = data.clean_shutdown is not None
    clean = marker if options.assume is None else options.assume == "clean"
    now = options.now if options.now is not None else _latest_timestamp(data)
    result = RestartResult(data.path, clean, marker, now)
    for part in data.partitions:
        if partition is not None and part.directory != partition:
            continue
        if part.topic_partition is None or part.state not in ("", "live"):
            continue
        tp = part.topic_partition
        result.partitions.append(simulate_partition(data, part, swaps.get(part.directory, {}), clean, options, now,
                                                    (remote or {}).get((tp.topic, tp.partition)),
                                                    (remote_enabled or {}).get(tp.topic)))
    return result


def _latest_timestamp(data: LogDirData) -> int:
    """The default clock: the newest batch timestamp in the log dir (nothing expires relative to it)."""
    return max((entries_max_timestamp(seg.entries) for part in data.partitions for seg in part.segments), default=0)
