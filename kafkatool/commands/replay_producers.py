"""``kafkatool replay-producers``: Kafka's producer state replayed from the log, every anomaly explained."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kafkatool.analysis.replay import (
    DEFAULT_TXN_TIMEOUT_MS,
    check_kafka_version,
    replay_document,
    replay_partition_dir,
)
from kafkatool.commands.common import INT32_MAX, INT64_MAX, FollowLinks, OutputFormat, offset_value, run_guarded
from kafkatool.errors import ExitCode, UnreadableInputError, UsageError
from kafkatool.reading.inventory import looks_like_partition_dir
from kafkatool.reading.logdir import segment_bytes
from kafkatool.reading.objects import input_path
from kafkatool.render.replay_report import render_replay
from kafkatool.render.scan_report import phase_progress, wants_progress
from kafkatool.schema.filenames import parse_partition_dir
from kafkatool.schema.producer_snapshot import build_producer_snapshot
from kafkatool.writing.atomic import prepare_output_file, write_atomic


def parse_from(value: str | None) -> str | int | None:
    """``latest``, an offset, or nothing (replay from the log start)."""
    if value is None or value == "latest":
        return value
    if not value.lstrip("-").isdigit():
        raise UsageError(f"--from-snapshot takes 'latest' or an offset, not {value!r}")
    return offset_value("--from-snapshot", value)


def command(
    partition_dir: Annotated[str, typer.Argument(help="A partition directory (topic-N).", metavar="PARTITION_DIR",
                                                 show_default=False)],
    from_snapshot: Annotated[str | None, typer.Option(
        "--from-snapshot", metavar="latest|OFFSET",
        help="Start from a snapshot file, as Kafka does on restart, instead of the log start.")] = None,
    until: Annotated[int | None, typer.Option("--until", min=0, max=INT64_MAX, metavar="OFFSET",
                                              help="Stop before the first batch at or after OFFSET.")] = None,
    read_past_damage: Annotated[bool, typer.Option(
        "--read-past-damage",
        help="Replay on past a batch that fails its CRC or follows unreadable bytes (Kafka's recovery "
             "truncates there; by default the replay stops there too).")] = False,
    transaction_timeout_ms: Annotated[int, typer.Option(
        "--transaction-timeout-ms", metavar="MS", min=1, max=INT32_MAX,
        help="An open transaction older than this is reported as hanging.")] = DEFAULT_TXN_TIMEOUT_MS,
    now: Annotated[int | None, typer.Option("--now", min=0, max=INT64_MAX, metavar="MS",
                                            help="The clock for hanging transactions (default: the partition's "
                                                 "last timestamp).")] = None,
    write_snapshot: Annotated[str | None, typer.Option(
        "--write-snapshot", metavar="OUT_FILE",
        help="Write the producer snapshot Kafka would write at the end of the replay (or --at).")] = None,
    at: Annotated[int | None, typer.Option("--at", min=0, max=INT64_MAX, metavar="OFFSET",
                                           help="With --write-snapshot: the snapshot's offset.")] = None,
    force: Annotated[bool, typer.Option("--force", help="With --write-snapshot: replace an existing OUT_FILE.")]
    = False,
    kafka_version: Annotated[str | None, typer.Option(
        "--kafka-version", metavar="VERSION",
        help="The broker's Kafka release, for the transaction version when neither the log dir's metadata log "
             "nor the batches tell (3.x: markers at the producer's epoch; 4.x: an epoch bump at each transaction "
             "end). Default: infer.")] = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f", help="table, json or jsonl.")] = OutputFormat.table,
    show_info: Annotated[bool, typer.Option("--show-info", help="List informational notes in the table too.")]
    = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress spinner on stderr.")] = False,
    follow_links: FollowLinks = False,
) -> None:
    """Replay a partition's idempotent and transactional producer state from its log."""

    def body() -> int:
        check_kafka_version(kafka_version)
        if at is not None and write_snapshot is None:
            raise UsageError("--at goes with --write-snapshot")
        if at is not None and until is not None:
            raise UsageError("--at and --until both set where the replay stops: give one")
        path = input_path(partition_dir)
        if not path.is_dir():
            raise UnreadableInputError(partition_dir, "not a partition directory")
        if parse_partition_dir(path.name) is None and not looks_like_partition_dir(path):
            raise UnreadableInputError(partition_dir, "not a partition directory (no TOPIC-N name, no segment files)")
        if write_snapshot is not None:
            prepare_output_file(Path(write_snapshot), [path], force=force)
        total = segment_bytes([path])
        with phase_progress(f"reading {path.name}", enabled=wants_progress(total, quiet=quiet)) as phase:
            part, hw, result = replay_partition_dir(path, from_snapshot=parse_from(from_snapshot),
                                                    until=at if at is not None else until,
                                                    read_past_damage=read_past_damage, phase=phase,
                                                    kafka_version=kafka_version)
        if until is not None and until <= result.start_offset:
            raise UsageError(f"--until {until}: nothing to replay, the replay starts at offset {result.start_offset}")
        # The log ends at the last batch, or at the newest segment's base offset (an empty active segment).
        log_end = max([result.end_offset, *(s.base_offset for s in part.segments)])
        if at is not None and at > log_end:
            raise UsageError(f"--at {at} is past the end of the log (offset {log_end}): no producer state was ever "
                             "at that offset")
        if write_snapshot is not None:
            write_atomic(Path(write_snapshot), build_producer_snapshot(result.manager.snapshot_entries()))
        clock = now if now is not None else result.manager.last_timestamp
        tp = part.topic_partition
        doc = replay_document(result, directory=part.directory, topic=tp.topic if tp else part.directory,
                              partition=tp.partition if tp else None, high_watermark=hw, now=clock,
                              timeout_ms=transaction_timeout_ms)
        render_replay(doc, fmt.value, show_info=show_info)
        serious = doc["anomaly_counts"]["error"] + doc["anomaly_counts"]["warning"]
        return int(ExitCode.DEFECTS if serious else ExitCode.CLEAN)

    run_guarded(body, follow_links=follow_links)
