"""``simulate-restart``'s analysis: the load of a log dir as Kafka's ``LogManager`` / ``LogLoader`` would do it
(``engine.restart``), as the stable document that command prints and ``report`` embeds, and the files of the
log dir as the load leaves them (for ``--apply-to``; writing them is the command's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kafkatool.analysis.producers import entry_document
from kafkatool.engine.restart import PartitionRestart, RestartResult
from kafkatool.model import LogDirData, TopicPartition
from kafkatool.reading.files import read_bytes
from kafkatool.schema import checkpoint
from kafkatool.schema.filenames import (
    CLUSTER_METADATA_TOPIC,
    LOG_START_OFFSET_CHECKPOINT,
    META_PROPERTIES,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
)

SCHEMA_VERSION = 1


def partitions_there(names: list[str], most: int = 20) -> str:
    """The partition directories a log dir holds, for a message that names one it does not: the first ``most``
    sorted, and how many more."""
    there = sorted(names)
    more = f" and {len(there) - most} more" if len(there) > most else ""
    return f"{'partitions there: ' + ', '.join(there[:most]) if there else 'it holds none'}{more}"


def partition_document(p: PartitionRestart) -> dict[str, Any]:
    """One partition as the stable ``--format json`` schema has it."""
    return {
        "directory": p.directory, "topic": p.topic, "partition": p.partition, "clean_shutdown": p.clean_shutdown,
        "outcome": p.outcome, "error": p.error, "inputs": p.inputs,
        "log_start_offset": p.log_start_offset, "log_end_offset": p.log_end_offset,
        "local_log_start_offset": p.local_log_start_offset,
        "remote": None if p.remote_offsets is None else {
            "from": p.remote_offsets[0], "to": p.remote_offsets[1],
            "uncovered": [{"from": a, "to": b} for a, b in p.remote_uncovered]},
        "recovery_point": p.recovery_point, "high_watermark": p.high_watermark,
        "first_unstable_offset": p.first_unstable_offset, "last_stable_offset": p.last_stable_offset,
        "bytes_truncated": p.bytes_truncated, "recovery_bytes_read": p.recovery_bytes_read,
        "segments": [{"base_offset": s.base_offset, "size_bytes": s.size_bytes, "next_offset": s.next_offset,
                      "file": s.file} for s in p.segments],
        "leader_epochs": [{"epoch": e.epoch, "start_offset": e.start_offset} for e in p.leader_epochs],
        "producers": [entry_document(e.producer_id, e, offset_fields=("first_data_offset", "last_data_offset"))
                      for e in p.producers],
        "snapshot_files_after": p.snapshot_files_after,
        "loss": {"records": p.loss.records, "batches": p.loss.batches, "partial_batches": p.loss.partial_batches,
                 "bytes": p.loss.bytes,
                 "offsets": None if p.loss.offsets is None else {"from": p.loss.offsets[0], "to": p.loss.offsets[1]},
                 "producers": p.loss.producers, "transactions": p.loss.transactions,
                 "compacted_bytes": p.loss.compacted_bytes,
                 "acknowledged": None if p.loss.acknowledged is None else {"from": p.loss.acknowledged[0],
                                                                           "to": p.loss.acknowledged[1]}},
        "steps": [{"action": s.action, "detail": s.detail, "file": s.file, "offset": s.offset,
                   "position": s.position, "bytes": s.bytes} for s in p.steps],
    }


def restart_document(result: RestartResult) -> dict[str, Any]:
    """The whole simulation as a JSON-ready document."""
    return {"schema_version": SCHEMA_VERSION, "log_dir": result.path, "clean_shutdown": result.clean_shutdown,
            "clean_shutdown_marker": result.marker_present, "now": result.now,
            "partitions": [partition_document(p) for p in result.partitions]}


def recovered_tree(result: RestartResult, data: LogDirData, source: Path) -> dict[str, bytes]:
    """Every file of the log dir after the load: each partition's plan, then the log-dir files Kafka keeps.

    The clean-shutdown marker is gone (``LogManager`` deletes it at start-up); the checkpoints hold the
    offsets after load. A partition that fails to load is left out, as the broker would not start with it.
    """
    tree: dict[str, bytes] = {}
    for p in result.partitions:
        if p.outcome != "loaded":
            continue
        for f in p.output:
            if f.data is not None:
                tree[f.path] = f.data
            elif f.copy_from is not None:
                tree[f.path] = read_bytes(source / f.copy_from, f.length)
    loaded = [p for p in result.partitions if p.outcome == "loaded" and p.partition is not None
              and p.topic != CLUSTER_METADATA_TOPIC]
    if data.meta_properties is not None and (source / META_PROPERTIES).is_file():
        tree[META_PROPERTIES] = read_bytes(source / META_PROPERTIES)
    if loaded:
        def tp(p: PartitionRestart) -> TopicPartition:
            return TopicPartition(p.topic, p.partition or 0)

        tree[RECOVERY_POINT_CHECKPOINT] = checkpoint.build_offset_checkpoint(
            [(tp(p), p.recovery_point or 0) for p in loaded])
        tree[REPLICATION_OFFSET_CHECKPOINT] = checkpoint.build_offset_checkpoint(
            [(tp(p), p.high_watermark) for p in loaded if p.high_watermark is not None])
        tree[LOG_START_OFFSET_CHECKPOINT] = checkpoint.build_offset_checkpoint(
            [(tp(p), p.log_start_offset) for p in loaded
             if p.segments and p.log_start_offset is not None and p.log_start_offset > p.segments[0].base_offset])
    return tree
