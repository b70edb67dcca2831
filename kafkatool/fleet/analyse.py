"""Per-partition and per-log-dir analysis for the fleet scan: the ``partitions``, ``producers`` and ``findings``
rows, as plain dicts (the engines turn them into Arrow).

Findings are exactly ``kafkatool check``'s for each log dir (same engine functions, ``engine.check``), plus
the replay anomalies of ``replay-producers`` (``source`` = ``replay``), made rows by ``analysis.findings`` as
check's and the report's are. Producer rows are the state after a
full replay of the partition, as ``replay-producers`` computes it (``engine.replay``, Kafka's
``ProducerStateManager``).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kafkatool.analysis.findings import ALL_LOG_DIRS, located_finding_row, replay_defects
from kafkatool.analysis.metadata import topic_remote_storage
from kafkatool.engine.check import (
    check_broker_identity,
    dir_findings,
    dir_tail_findings,
    partition_findings,
)
from kafkatool.engine.replay import ReplayError, replay
from kafkatool.engine.verify import log_windows
from kafkatool.errors import KafkatoolError, UnreadableInputError
from kafkatool.model import Defect, LogDirData, PartitionData, RecordBatch
from kafkatool.reading.batch_scan import BatchColumns, entry_columns
from kafkatool.reading.logdir import read_log_dir_shell, read_partition
from kafkatool.reading.objects import input_path
from kafkatool.reading.restart_inputs import read_swap_segments
from kafkatool.reading.tiered import read_tiered
from kafkatool.schema.filenames import (
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    parse_partition_dir,
)
from kafkatool.storage.swaps import is_swap_file
from kafkatool.storage.tiered import RemoteLog

PARTITION_COLUMNS: tuple[tuple[str, str], ...] = (
    ("log_dir", "string"), ("directory", "string"), ("topic", "string"), ("partition", "int32"),
    ("state", "string"), ("topic_id", "string"), ("segments", "int32"), ("size_bytes", "int64"),
    ("first_offset", "int64"), ("log_end_offset", "int64"), ("recovery_point", "int64"),
    ("high_watermark", "int64"), ("log_start_offset_checkpoint", "int64"), ("latest_leader_epoch", "int32"),
    ("latest_epoch_start_offset", "int64"), ("snapshots", "int32"), ("latest_snapshot_offset", "int64"),
    ("batches", "int64"), ("records", "int64"), ("invalid_crc_batches", "int64"), ("producers", "int32"),
    ("open_transactions", "int32"), ("first_unstable_offset", "int64"), ("errors", "int32"),
    ("warnings", "int32"), ("infos", "int32"),
)
PRODUCER_COLUMNS: tuple[tuple[str, str], ...] = (
    ("log_dir", "string"), ("topic", "string"), ("partition", "int32"), ("producer_id", "int64"),
    ("producer_epoch", "int16"), ("first_sequence", "int32"), ("last_sequence", "int32"),
    ("last_offset", "int64"), ("last_timestamp", "int64"), ("coordinator_epoch", "int32"),
    ("current_txn_first_offset", "int64"),
)
FINDING_COLUMNS: tuple[tuple[str, str], ...] = (
    ("log_dir", "string"), ("topic", "string"), ("partition", "int32"), ("source", "string"),
    ("severity", "string"), ("code", "string"), ("file", "string"), ("position", "int64"), ("field", "string"),
    ("reason", "string"),
)


@dataclass
class Analysis:
    """What one unit of analysis produced: at most one partition row, producer rows, finding rows."""

    partition: dict[str, Any] | None = None
    producers: list[dict[str, Any]] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)
    batches: BatchColumns | None = None


def _nonneg(value: int) -> int | None:
    return None if value < 0 else value


@functools.lru_cache(maxsize=32)
def _shell(log_dir: str) -> LogDirData:
    """A log dir's own files and light partitions, read once per worker process (a log dir holds thousands of
    partitions; re-reading its ``partition.metadata`` files for each one would be quadratic)."""
    data, _ = read_log_dir_shell(log_dir)
    return data


@functools.lru_cache(maxsize=32)
def _remote(log_dir: str) -> Mapping[tuple[str, int], RemoteLog]:
    """A log dir's remote segments (tiered storage, from ``__remote_log_metadata``), read once per worker
    process, as ``check`` reads them."""
    return read_tiered(log_dir).remote


@functools.lru_cache(maxsize=32)
def _remote_enabled(log_dir: str) -> Mapping[str, bool] | None:
    """Each topic's ``remote.storage.enable`` from the log dir's metadata image, read once per worker process, as
    ``check`` reads it (``None``: no readable metadata log)."""
    return topic_remote_storage(log_dir)


def analyse_partition(log_dir: str, partition_dir: str, split: tuple[str, ...] | None = None) -> Analysis:
    """Read one partition in full (its log dir's own files for context) and build its rows.

    A file that cannot be read at all (permission denied, vanished since the plan) becomes an
    ``unreadable-input`` finding for the partition: the rest of the fleet is still scanned. With ``split``
    (segment file names scanned elsewhere, by byte ranges) the batch rows of the other segments come too,
    from the same walk; ``None`` means no batch rows.
    """
    try:
        return _analyse_partition(log_dir, partition_dir, split)
    except UnreadableInputError as err:
        directory = input_path(partition_dir)
        part = PartitionData(directory.name, *(parse_partition_dir(directory.name) or (None, "")))
        return Analysis(findings=[located_finding_row(log_dir, part, Defect(
            "unreadable-input", err.path, None, "file", f"{err.reason}: this partition was not scanned"))])


def _analyse_partition(log_dir: str, partition_dir: str, split: tuple[str, ...] | None) -> Analysis:
    data = _shell(log_dir)
    directory = input_path(partition_dir)
    part = read_partition(directory, directory.name)
    tp = part.topic_partition
    out = Analysis()
    if split is not None and tp is not None:
        out.batches = entry_columns(log_dir, tp.topic, tp.partition, [
            (Path(seg.log_file).name, seg.entries) for seg in part.segments
            if seg.log_file and Path(seg.log_file).name not in split])
    # An interrupted cleaner swap is checked as Kafka's load completes it, as ``check`` does.
    swaps = read_swap_segments(directory, directory.name) \
        if any(is_swap_file(name) for name in part.leftovers) else None
    defects = partition_findings(data, part, swaps, _remote(log_dir), _remote_enabled(log_dir))
    out.findings = [located_finding_row(log_dir, part, d) for d in defects]
    producers: list[dict[str, Any]] = []
    open_txns, first_unstable = 0, None
    try:
        result = replay(part)
    except ReplayError:
        result = None
    if result is not None:
        manager = result.manager
        for e in manager.snapshot_entries():
            producers.append({
                "log_dir": log_dir, "topic": tp.topic if tp else None, "partition": tp.partition if tp else None,
                "producer_id": e.producer_id, "producer_epoch": e.producer_epoch,
                "first_sequence": _nonneg(e.first_sequence) if e.last_sequence >= 0 else None,
                "last_sequence": _nonneg(e.last_sequence), "last_offset": _nonneg(e.last_offset),
                "last_timestamp": _nonneg(e.timestamp), "coordinator_epoch": _nonneg(e.coordinator_epoch),
                "current_txn_first_offset": _nonneg(e.current_txn_first_offset)})
        open_txns = len(manager.ongoing)
        first_unstable = manager.first_unstable_offset()
        out.findings += [located_finding_row(log_dir, part, d, "replay")
                         for d in replay_defects(result, part.directory)]
    out.producers = producers
    batches = records = invalid_crc = 0
    for seg in part.segments:  # streamed: a window's columns or entries at a time, never a whole segment's
        for window, cols in log_windows(seg.entries):
            if cols is not None:  # all magic 2: the same sums from the header columns
                batches += len(cols["position"])
                records += int(cols["records_count"].astype(np.int64).sum())
                invalid_crc += int(cols["crc_invalid"].sum())
                continue
            for e in window:
                batches += 1
                records += e.records_count if isinstance(e, RecordBatch) else e.last_offset - e.base_offset + 1
                invalid_crc += e.crc_valid is False
    epochs = part.leader_epochs or []
    snaps = [s for s in part.snapshots if s.snapshot is not None]
    counts = defaultdict(int)
    for d in defects:
        counts[d.severity] += 1
    out.partition = {
        "log_dir": log_dir, "directory": part.directory, "topic": tp.topic if tp else None,
        "partition": tp.partition if tp else None, "state": part.state or None,
        "topic_id": part.partition_metadata.topic_id if part.partition_metadata else None,
        "segments": len(part.segments), "size_bytes": sum(seg.log_size for seg in part.segments),
        "first_offset": part.segments[0].base_offset if part.segments else None,
        "log_end_offset": part.log_end_offset,
        "recovery_point": data.checkpoint(RECOVERY_POINT_CHECKPOINT, part.topic_partition),
        "high_watermark": data.checkpoint(REPLICATION_OFFSET_CHECKPOINT, part.topic_partition),
        "log_start_offset_checkpoint": data.checkpoint(LOG_START_OFFSET_CHECKPOINT, part.topic_partition),
        "latest_leader_epoch": epochs[-1].epoch if epochs else None,
        "latest_epoch_start_offset": epochs[-1].start_offset if epochs else None,
        "snapshots": len(part.snapshots), "latest_snapshot_offset": snaps[-1].offset if snaps else None,
        "batches": batches, "records": records, "invalid_crc_batches": invalid_crc,
        "producers": len(producers), "open_transactions": open_txns, "first_unstable_offset": first_unstable,
        "errors": counts["error"], "warnings": counts["warning"], "infos": counts["info"],
    }
    return out


def analyse_log_dir(log_dir: str) -> Analysis:
    """The log-dir-level findings of ``check`` (those before and after the partitions' own)."""
    data, _ = read_log_dir_shell(log_dir)
    return Analysis(findings=[located_finding_row(log_dir, None, d)
                              for d in dir_findings(data) + dir_tail_findings(data)])


def broker_findings(log_dirs: list[str]) -> list[dict[str, Any]]:
    """Cross-log-dir findings within each broker (log dirs grouped by cluster id and node id)."""
    groups: dict[tuple[str, int], list[LogDirData]] = defaultdict(list)
    for path in log_dirs:
        try:
            data, _ = read_log_dir_shell(path)
        except KafkatoolError:
            continue
        if data.meta_properties is not None and data.meta_properties.node_id is not None:
            groups[(data.meta_properties.cluster_id or "", data.meta_properties.node_id)].append(data)
    out = []
    for (_, node), dirs in sorted(groups.items()):
        for d in check_broker_identity(dirs):
            row = located_finding_row(ALL_LOG_DIRS, None, d)
            row["reason"] += f" [node.id {node}: {', '.join(x.path for x in dirs)}]"
            out.append(row)
    return out
