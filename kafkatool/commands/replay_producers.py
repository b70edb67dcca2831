"""``kafkatool replay-producers``: Kafka's producer state replayed from the log, every anomaly explained."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from kafkatool.commands.common import OutputFormat, run_guarded
from kafkatool.engine.producer_state import Anomaly
from kafkatool.engine.replay import ReplayError, ReplayResult, replay
from kafkatool.engine.swaps import log_after_swaps
from kafkatool.errors import ExitCode, UnreadableInputError, UsageError
from kafkatool.reading.inventory import looks_like_partition_dir
from kafkatool.reading.logdir import partition_with_high_watermark, segment_bytes
from kafkatool.reading.restart_inputs import read_swap_segments
from kafkatool.render.replay_report import render_replay
from kafkatool.render.scan_report import phase_progress, wants_progress
from kafkatool.schema.filenames import parse_partition_dir
from kafkatool.schema.producer_snapshot import build_producer_snapshot
from kafkatool.writing.atomic import prepare_output_file, write_atomic

DEFAULT_TXN_TIMEOUT_MS = 15 * 60 * 1000


def _opt(v: int) -> int | None:
    return None if v == -1 else v


def build_document(result: ReplayResult, *, directory: str, topic: str, partition: int | None,
                   high_watermark: int | None, now: int, timeout_ms: int) -> dict[str, Any]:
    """The replay as a stable JSON-ready document."""
    m = result.manager
    producers = []
    for pid in m.order.order():
        e = m.producers[pid]
        producers.append({
            "producer_id": pid, "producer_epoch": e.producer_epoch, "coordinator_epoch": _opt(e.coordinator_epoch),
            "first_sequence": _opt(e.first_seq), "last_sequence": _opt(e.last_seq),
            "first_offset": _opt(e.first_data_offset), "last_offset": _opt(e.last_data_offset),
            "last_offset_delta": e.last_offset_delta, "last_timestamp": _opt(e.last_timestamp),
            "current_txn_first_offset": e.current_txn_first_offset,
            "cached_batches": [{"first_sequence": b.first_seq, "last_sequence": b.last_seq,
                                "first_offset": b.first_offset, "last_offset": b.last_offset,
                                "offset_delta": b.offset_delta, "timestamp": b.timestamp} for b in e.batches],
        })
    items = []
    for t in sorted(m.transactions, key=lambda t: t.first_offset):
        state = "open" if t.aborted is None else "aborted" if t.aborted else "committed"
        items.append({"producer_id": t.producer_id, "producer_epoch": t.producer_epoch, "state": state,
                      "first_offset": t.first_offset, "last_offset": t.last_offset,
                      "offsets_spanned": None if t.last_offset is None else t.last_offset - t.first_offset + 1,
                      "last_stable_offset": t.last_stable_offset, "coordinator_epoch": t.coordinator_epoch,
                      "first_timestamp": t.first_timestamp,
                      "duration_ms": None if t.end_timestamp is None else t.end_timestamp - t.first_timestamp})
    hanging = [{"producer_id": t.producer_id, "producer_epoch": t.producer_epoch, "first_offset": t.first_offset,
                "first_timestamp": t.first_timestamp, "open_ms": now - t.first_timestamp}
               for t in m.hanging(now, timeout_ms)]
    anomalies = [{"code": a.code, "severity": a.severity, "offset": a.offset, "position": a.position,
                  "producer_id": None if a.producer_id < 0 else a.producer_id, "message": a.message}
                 for a in result.anomalies]
    anomalies += [{"code": "hanging-transaction", "severity": "error", "offset": h["first_offset"], "position": None,
                   "producer_id": h["producer_id"],
                   "message": f"transaction of producer {h['producer_id']} (epoch {h['producer_epoch']}) open since "
                              f"offset {h['first_offset']} for {h['open_ms'] // 60000} min, past the "
                              f"{timeout_ms // 60000} min timeout: read_committed consumers are stuck at that "
                              "offset and compaction cannot pass it"} for h in hanging]
    hanging_first = {h["first_offset"] for h in hanging}
    anomalies += [{"code": "open-transaction", "severity": "info", "offset": t["first_offset"], "position": None,
                   "producer_id": t["producer_id"],
                   "message": f"transaction of producer {t['producer_id']} (epoch {t['producer_epoch']}) is open since "
                              f"offset {t['first_offset']} ({(now - t['first_timestamp']) // 1000} s before the "
                              "clock): it holds the last stable offset there until its marker is written"}
                  for t in items if t["state"] == "open" and t["first_offset"] not in hanging_first]
    hw = result.end_offset if high_watermark is None else high_watermark
    unlisted = [{"code": code, "severity": m.unlisted_severity[code], "count": n}
                for code, n in sorted(m.unlisted.items())]
    counts = {s: sum(1 for a in anomalies if a["severity"] == s)
              + sum(u["count"] for u in unlisted if u["severity"] == s) for s in ("error", "warning", "info")}
    return {
        "partition": directory, "topic": topic, "partition_number": partition,
        "start": {"offset": result.start_offset, "snapshot": result.start_snapshot},
        "end_offset": result.end_offset, "high_watermark": high_watermark,
        "first_unstable_offset": m.first_unstable_offset(), "last_stable_offset": m.last_stable_offset(hw),
        "now": now, "snapshots_compared": result.snapshots_compared, "producers": producers,
        "transactions": {"committed": sum(1 for t in items if t["state"] == "committed"),
                         "aborted": sum(1 for t in items if t["state"] == "aborted"),
                         "open": sum(1 for t in items if t["state"] == "open"), "items": items},
        "hanging": hanging, "anomalies": anomalies, "anomalies_unlisted": unlisted, "anomaly_counts": counts,
    }


def parse_from(value: str | None) -> str | int | None:
    """``latest``, an offset, or nothing (replay from the log start)."""
    if value is None or value == "latest":
        return value
    try:
        return int(value)
    except ValueError:
        raise UsageError(f"--from-snapshot takes 'latest' or an offset, not {value!r}") from None


def command(
    partition_dir: Annotated[str, typer.Argument(help="A partition directory (topic-N).", metavar="PARTITION_DIR",
                                                 show_default=False)],
    from_snapshot: Annotated[str | None, typer.Option(
        "--from-snapshot", metavar="latest|OFFSET",
        help="Start from a snapshot file, as Kafka does on restart, instead of the log start.")] = None,
    until: Annotated[int | None, typer.Option("--until", metavar="OFFSET",
                                              help="Stop before the first batch at or after OFFSET.")] = None,
    read_past_damage: Annotated[bool, typer.Option(
        "--read-past-damage",
        help="Replay on past a batch that fails its CRC or follows unreadable bytes (Kafka's recovery "
             "truncates there; by default the replay stops there too).")] = False,
    transaction_timeout_ms: Annotated[int, typer.Option(
        "--transaction-timeout-ms", metavar="MS", min=1,
        help="An open transaction older than this is reported as hanging.")] = DEFAULT_TXN_TIMEOUT_MS,
    now: Annotated[int | None, typer.Option("--now", metavar="MS",
                                            help="The clock for hanging transactions (default: the partition's "
                                                 "last timestamp).")] = None,
    write_snapshot: Annotated[str | None, typer.Option(
        "--write-snapshot", metavar="OUT_FILE",
        help="Write the producer snapshot Kafka would write at the end of the replay (or --at).")] = None,
    at: Annotated[int | None, typer.Option("--at", metavar="OFFSET",
                                           help="With --write-snapshot: the snapshot's offset.")] = None,
    force: Annotated[bool, typer.Option("--force", help="With --write-snapshot: replace an existing OUT_FILE.")]
    = False,
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f", help="table, json or jsonl.")] = OutputFormat.table,
    show_info: Annotated[bool, typer.Option("--show-info", help="List informational notes in the table too.")]
    = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress spinner on stderr.")] = False,
) -> None:
    """Replay a partition's idempotent and transactional producer state from its log."""

    def body() -> int:
        if at is not None and write_snapshot is None:
            raise UsageError("--at goes with --write-snapshot")
        if at is not None and until is not None:
            raise UsageError("--at and --until both set where the replay stops: give one")
        path = Path(partition_dir)
        if not path.is_dir():
            raise UnreadableInputError(partition_dir, "not a partition directory")
        if parse_partition_dir(path.name) is None and not looks_like_partition_dir(path):
            raise UnreadableInputError(partition_dir, "not a partition directory (no TOPIC-N name, no segment files)")
        if write_snapshot is not None:
            prepare_output_file(Path(write_snapshot), [path], force=force)
        total = segment_bytes([path])
        with phase_progress(f"reading {path.name}", enabled=wants_progress(total, quiet=quiet)) as phase:
            part, hw = partition_with_high_watermark(path)
            # An interrupted cleaner swap: replay the log Kafka will load (the swap in place of what it replaces).
            part, swap = log_after_swaps(part, read_swap_segments(path, part.directory))
            phase(f"replaying {path.name}")
            try:
                result = replay(part, from_snapshot=parse_from(from_snapshot),
                                until=at if at is not None else until, read_past_damage=read_past_damage)
            except ReplayError as err:
                raise UsageError(str(err)) from None
        if until is not None and until <= result.start_offset:
            raise UsageError(f"--until {until}: nothing to replay, the replay starts at offset {result.start_offset}")
        # The log ends at the last batch, or at the newest segment's base offset (an empty active segment).
        log_end = max([result.end_offset, *(s.base_offset for s in part.segments)])
        if at is not None and at > log_end:
            raise UsageError(f"--at {at} is past the end of the log (offset {log_end}): no producer state was ever "
                             "at that offset")
        if swap is not None:
            replaced = ", ".join(str(b) for b in swap.replaced) or "none"
            result.anomalies.insert(0, Anomaly(
                "swap-completed", swap.low, None, -1,
                f"an interrupted cleaner swap: the log is replayed as Kafka's LogLoader will load it, the .swap "
                f"segment(s) {', '.join(map(str, swap.swapped_in))} in place of the segments they replace "
                f"(offsets [{swap.low}, {swap.high}); replaced segments still on disk: {replaced})", "info"))
        if write_snapshot is not None:
            write_atomic(Path(write_snapshot), build_producer_snapshot(result.manager.snapshot_entries()))
        clock = now if now is not None else result.manager.last_timestamp
        tp = part.topic_partition
        doc = build_document(result, directory=part.directory, topic=tp.topic if tp else part.directory,
                             partition=tp.partition if tp else None, high_watermark=hw, now=clock,
                             timeout_ms=transaction_timeout_ms)
        render_replay(doc, fmt.value, show_info=show_info)
        serious = doc["anomaly_counts"]["error"] + doc["anomaly_counts"]["warning"]
        return int(ExitCode.DEFECTS if serious else ExitCode.CLEAN)

    run_guarded(body)
