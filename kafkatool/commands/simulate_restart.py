"""``kafkatool simulate-restart``: what Kafka will do with this log dir when the broker starts."""

from __future__ import annotations

import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from kafkatool.commands.common import run_guarded
from kafkatool.engine.restart import PartitionRestart, RestartOptions, RestartResult, simulate_restart
from kafkatool.errors import ExitCode, UsageError
from kafkatool.model import LogDirData, TopicPartition
from kafkatool.reading.files import read_bytes
from kafkatool.reading.inventory import looks_like_partition_dir
from kafkatool.reading.logdir import segment_bytes
from kafkatool.reading.restart_inputs import read_restart_inputs
from kafkatool.render.output import Diagnostics
from kafkatool.render.restart_report import render_restart
from kafkatool.render.scan_report import byte_progress, wants_progress
from kafkatool.schema import checkpoint
from kafkatool.schema.filenames import (
    LOG_START_OFFSET_CHECKPOINT,
    META_PROPERTIES,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    parse_partition_dir,
)
from kafkatool.writing.atomic import prepare_output_dir, replace_tree

SCHEMA_VERSION = 1


class RestartFormat(StrEnum):
    """Output formats (the vocabulary every subcommand uses; ``text`` is the old name of ``table``)."""

    table = "table"
    json = "json"
    jsonl = "jsonl"
    text = "text"


class AssumeShutdown(StrEnum):
    """Override of the clean-shutdown marker."""

    clean = "clean"
    unclean = "unclean"


def _opt(v: int) -> int | None:
    return None if v == -1 else v


def partition_document(p: PartitionRestart) -> dict[str, Any]:
    """One partition as the stable ``--format json`` schema has it."""
    return {
        "directory": p.directory, "topic": p.topic, "partition": p.partition, "clean_shutdown": p.clean_shutdown,
        "outcome": p.outcome, "error": p.error, "inputs": p.inputs,
        "log_start_offset": p.log_start_offset, "log_end_offset": p.log_end_offset,
        "recovery_point": p.recovery_point, "high_watermark": p.high_watermark,
        "first_unstable_offset": p.first_unstable_offset, "last_stable_offset": p.last_stable_offset,
        "bytes_truncated": p.bytes_truncated, "recovery_bytes_read": p.recovery_bytes_read,
        "segments": [{"base_offset": s.base_offset, "size_bytes": s.size_bytes, "next_offset": s.next_offset,
                      "file": s.file} for s in p.segments],
        "leader_epochs": [{"epoch": e.epoch, "start_offset": e.start_offset} for e in p.leader_epochs],
        "producers": [{
            "producer_id": e.producer_id, "producer_epoch": e.producer_epoch,
            "coordinator_epoch": _opt(e.coordinator_epoch), "first_sequence": _opt(e.first_seq),
            "last_sequence": _opt(e.last_seq), "first_data_offset": _opt(e.first_data_offset),
            "last_data_offset": _opt(e.last_data_offset), "last_offset_delta": e.last_offset_delta,
            "last_timestamp": _opt(e.last_timestamp), "current_txn_first_offset": e.current_txn_first_offset,
            "cached_batches": [{"first_sequence": b.first_seq, "last_sequence": b.last_seq,
                                "first_offset": b.first_offset, "last_offset": b.last_offset,
                                "offset_delta": b.offset_delta, "timestamp": b.timestamp} for b in e.batches],
        } for e in p.producers],
        "snapshot_files_after": p.snapshot_files_after,
        "loss": {"records": p.loss.records, "batches": p.loss.batches, "bytes": p.loss.bytes,
                 "offsets": None if p.loss.offsets is None else {"from": p.loss.offsets[0], "to": p.loss.offsets[1]},
                 "producers": p.loss.producers, "transactions": p.loss.transactions,
                 "compacted_bytes": p.loss.compacted_bytes,
                 "acknowledged": None if p.loss.acknowledged is None else {"from": p.loss.acknowledged[0],
                                                                           "to": p.loss.acknowledged[1]}},
        "steps": [{"action": s.action, "detail": s.detail, "file": s.file, "offset": s.offset,
                   "position": s.position, "bytes": s.bytes} for s in p.steps],
    }


def build_document(result: RestartResult) -> dict[str, Any]:
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
              and p.topic != "__cluster_metadata"]
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


def command(
    log_dir: Annotated[str, typer.Argument(help="A broker log dir (or one partition directory).", metavar="LOG_DIR",
                                           show_default=False)],
    partition: Annotated[str | None, typer.Option("--partition", "-p", metavar="TOPIC-N",
                                                  help="Only this partition.")] = None,
    now: Annotated[int | None, typer.Option("--now", metavar="MS",
                                            help="The broker's clock at start-up, for producer expiration "
                                                 "(default: the current time).")] = None,
    assume: Annotated[AssumeShutdown | None, typer.Option(
        "--assume", help="Treat the last shutdown as clean or unclean, whatever the marker says.")] = None,
    recovery_point: Annotated[int | None, typer.Option(
        "--recovery-point", metavar="OFFSET", min=0,
        help="Use this recovery point instead of the recovery-point-offset-checkpoint entry.")] = None,
    index_interval_bytes: Annotated[int | None, typer.Option(
        "--index-interval-bytes", metavar="BYTES", min=1,
        help="The topic's index.interval.bytes (default: inferred from the offset indexes, else 4096).")] = None,
    fmt: Annotated[RestartFormat, typer.Option(
        "--format", "-f", help="table, json or jsonl (text: the old name of table).")] = RestartFormat.table,
    apply_to: Annotated[str | None, typer.Option(
        "--apply-to", metavar="OUT_DIR",
        help="Write the log dir as Kafka leaves it after this load into OUT_DIR (new or empty; never the input).")]
    = None,
    force: Annotated[bool, typer.Option("--force", help="With --apply-to: replace a non-empty OUT_DIR whole.")]
    = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar on stderr.")] = False,
) -> None:
    """Simulate a broker start on a log dir: recovery, truncation, producer state, and what is lost."""

    def body() -> int:
        path = Path(log_dir)
        if apply_to is not None:  # refused before anything is read: a partition directory's log dir is input too
            parent = [path.parent] if parse_partition_dir(path.name) and looks_like_partition_dir(path) else []
            prepare_output_dir(Path(apply_to), [path, *parent], force=force)
        total = segment_bytes([path])
        with byte_progress(total, "reading", enabled=wants_progress(total, quiet=quiet)) as advance:
            inputs = read_restart_inputs(path, advance)
        label = partition
        if inputs.single_partition and partition is not None and partition != inputs.log_dir.partitions[0].directory:
            raise UsageError(f"{log_dir} is the partition {inputs.log_dir.partitions[0].directory}, not {partition}")
        if partition is not None and not any(p.directory == partition for p in inputs.log_dir.partitions):
            there = sorted(p.directory for p in inputs.log_dir.partitions)
            raise UsageError(f"--partition {partition}: no such partition directory in {log_dir} "
                             f"({'partitions there: ' + ', '.join(there[:20]) if there else 'it holds none'}"
                             f"{f' and {len(there) - 20} more' if len(there) > 20 else ''})")
        clock = now if now is not None else int(time.time() * 1000)
        options = RestartOptions(now=clock, assume=None if assume is None else assume.value,  # type: ignore[arg-type]
                                 recovery_point=recovery_point, index_interval_bytes=index_interval_bytes,
                                 plan_output=apply_to is not None)
        result = simulate_restart(inputs.log_dir, inputs.swaps, options, label)
        if apply_to is not None:
            source = path.parent if inputs.single_partition else path
            prepare_output_dir(Path(apply_to), [path, source], force=force)
            for stale in replace_tree(recovered_tree(result, inputs.log_dir, source), Path(apply_to)):
                Diagnostics().warning(f"removed {stale}: the staging directory of an earlier --apply-to run that "
                                      "was interrupted")
        doc = build_document(result)
        render_restart(doc, fmt.value)
        if any(p["outcome"] == "failed" for p in doc["partitions"]):
            return int(ExitCode.DEFECTS)
        lossy = any(p["loss"]["bytes"] or p["loss"]["records"] or p["loss"]["acknowledged"]
                    for p in doc["partitions"])
        return int(ExitCode.DEFECTS if lossy else ExitCode.CLEAN)

    run_guarded(body)
