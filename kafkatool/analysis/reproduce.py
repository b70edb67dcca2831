"""``salvage --produce-to``: the salvaged records re-produced into a live cluster, in origin offset order per
partition, with their keys, values, headers and CreateTime timestamps and a provenance header, resumable without
sending anything twice (``engine.reproduce`` explains how). The cluster and the progress file are handed in (they
live in ``writing``); this decides what to send and keeps the count."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from kafkatool.analysis.salvage import PartitionSalvage, SalvageResult, export_rows
from kafkatool.engine.reproduce import ORIGIN_HEADER, Pacer, Progress, origin_value, parse_origin
from kafkatool.errors import UsageError
from kafkatool.shell import command

#: How often the progress file is rewritten while records go out.
SAVE_EVERY_S = 0.5
#: How long the end of a run waits for the records in flight.
FLUSH_S = 60.0
#: Records handed to the producer and not yet acknowledged, at most (bounds what a rerun must look for).
MAX_IN_FLIGHT = 10_000


class Target(Protocol):
    """What re-produce needs of the cluster (``writing.kafka_sink.KafkaTarget``)."""

    errors: list[str]
    fatal: str | None

    def partitions(self, topic: str) -> int | None: ...
    def high_watermark(self, topic: str, partition: int) -> int: ...
    def header_values(self, topic: str, partition: int, start: int, end: int,
                      header: str) -> Iterator[bytes | None]: ...
    def produce(self, topic: str, partition: int | None, key: bytes | None, value: bytes | None,
                headers: list[tuple[str, bytes | None]], timestamp: int,
                on_delivery: Callable[[str | None, bool, str, int, int], None]) -> None: ...
    def poll(self, timeout: float = 0.0) -> None: ...
    def in_flight(self) -> int: ...
    def flush(self, timeout: float) -> int: ...


@dataclass
class Options:
    """The re-produce options."""

    bootstrap: str
    topic_map: dict[str, str]
    partitioning: str
    include_aborted: bool = False
    rate: float | None = None
    dry_run: bool = False

    def target_doc(self) -> dict[str, Any]:
        """What a progress file is bound to."""
        return {"bootstrap": self.bootstrap, "topic_map": dict(sorted(self.topic_map.items())),
                "partition": self.partitioning}


@dataclass
class Summary:
    """The final count."""

    records: int = 0
    sent: int = 0
    skipped: int = 0
    left_out: int = 0
    refused: int = 0
    unconfirmed: int = 0
    found_in_target: int = 0
    refusals: list[dict[str, Any]] = field(default_factory=list)
    stopped: str | None = None
    partitions: dict[str, dict[str, Any]] = field(default_factory=dict)

    def document(self, opts: Options) -> dict[str, Any]:
        """As ``--format json`` prints it (under ``reproduce``)."""
        return {"target": opts.bootstrap, "dry_run": opts.dry_run, "partitioning": opts.partitioning,
                "include_aborted": opts.include_aborted, "records": self.records,
                "sent" if not opts.dry_run else "would_send": self.sent, "skipped": self.skipped,
                "found_in_target": self.found_in_target, "left_out": self.left_out, "refused": self.refused,
                "unconfirmed": self.unconfirmed, "refusals": self.refusals[:20], "stopped": self.stopped,
                "partitions": self.partitions}


def target_topic(topic: str, opts: Options) -> str:
    """The topic a salvaged topic's records go to."""
    return opts.topic_map.get(topic, topic)


def check_targets(result: SalvageResult, target: Target, opts: Options) -> dict[str, int]:
    """Every target topic's partition count; refused (exit 2) when one is missing or, with ``--partition keep``,
    has fewer partitions than a salvaged partition's number."""
    unknown = sorted(set(opts.topic_map) - {p.topic for p in result.partitions})
    if unknown:
        raise UsageError(f"--topic-map names {', '.join(unknown)}: no salvaged partition of it")
    counts: dict[str, int] = {}
    for p in result.partitions:
        dst = target_topic(p.topic, opts)
        if dst not in counts:
            n = target.partitions(dst)
            if n is None:
                need = max(q.partition for q in result.partitions if q.topic == p.topic) + 1
                raise UsageError(f"topic {dst} does not exist on {opts.bootstrap}; create it first, e.g. "
                                 + command("kafka-topics.sh", "--bootstrap-server", opts.bootstrap, "--create",
                                           "--topic", dst, "--partitions", str(need)))
            counts[dst] = n
        if opts.partitioning == "keep" and p.partition >= counts[dst]:
            raise UsageError(f"--partition keep: {p.name} needs partition {p.partition} of {dst}, which has "
                             f"{counts[dst]} partition(s) (use --partition key, or add partitions)")
    return counts


def find_delivered(result: SalvageResult, target: Target, progress: Progress, counts: dict[str, int],
                   opts: Options) -> int:
    """Read each target partition above the offset the progress file last recorded for it, collect the origin
    offsets found in our provenance headers (records acknowledged after the last progress write) and mark
    them delivered; set every target partition's starting point. How many were found."""
    ours = {(p.topic, p.partition): p.name for p in result.partitions}
    found = 0
    for dst, n in sorted(counts.items()):
        for part in range(n):
            name = f"{dst}-{part}"
            end = target.high_watermark(dst, part)
            start = progress.seen.get(name)
            if start is not None:
                for value in target.header_values(dst, part, start + 1, end, ORIGIN_HEADER):
                    origin = parse_origin(value)
                    if origin is None or (origin[0], origin[1]) not in ours:
                        continue
                    entry = progress.origin(ours[(origin[0], origin[1])])
                    if not entry.skip(origin[2]):
                        entry.found.add(origin[2])
                        found += 1
            progress.seen[name] = max(end - 1, start if start is not None else -1)
    return found


def _wanted(row: dict[str, Any], opts: Options) -> bool:
    return opts.include_aborted or row["transaction_state"] not in ("aborted", "open")


def reproduce(result: SalvageResult, target: Target, progress: Progress, opts: Options, *,
              save: Callable[[dict[str, Any]], None] | None, advance: Callable[[int], None],
              clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> Summary:
    """Send every salvaged record not delivered before (see the module docstring); ``save`` writes the progress
    file (``None``: none kept), ``advance(n)`` moves the progress bar."""
    summary = Summary()
    counts = check_targets(result, target, opts)
    summary.found_in_target = find_delivered(result, target, progress, counts, opts)
    if save is not None and not opts.dry_run:
        save(progress.document())
    pacer = Pacer(opts.rate, clock())
    last_save = clock()
    by_name = {p.name: p for p in result.partitions}
    for row in export_rows(result, binary=True):
        name = f"{row['topic']}-{row['partition']}"
        stats = summary.partitions.setdefault(name, {"target": target_topic(row["topic"], opts), "records": 0,
                                                     "sent": 0, "skipped": 0, "left_out": 0, "refused": 0})
        summary.records += 1
        stats["records"] += 1
        entry = progress.origin(name)
        if not _wanted(row, opts):
            summary.left_out += 1
            stats["left_out"] += 1
            advance(1)
            continue
        if entry.skip(row["offset"]):
            summary.skipped += 1
            stats["skipped"] += 1
            advance(1)
            continue
        if opts.dry_run:
            summary.sent += 1
            stats["sent"] += 1
            advance(1)
            continue
        if target.fatal is not None:
            summary.stopped = f"the producer failed: {target.fatal}"
            break
        delay = pacer.wait(clock())
        while delay > 0:
            target.poll(min(delay, 0.1))
            delay = pacer.next - pacer.interval - clock()
        while target.in_flight() >= MAX_IN_FLIGHT:
            target.poll(0.1)
        _send(target, by_name[name], row, entry, progress, summary, stats, opts)
        advance(1)
        target.poll(0)
        if summary.stopped is not None:
            break
        if save is not None and clock() - last_save >= SAVE_EVERY_S:
            save(progress.document())
            last_save = clock()
    if not opts.dry_run:
        summary.unconfirmed = target.flush(FLUSH_S)
        if summary.unconfirmed and summary.stopped is None:
            summary.stopped = f"{summary.unconfirmed} record(s) not acknowledged within {FLUSH_S:.0f} s"
        if target.fatal is not None and summary.stopped is None:
            summary.stopped = f"the producer failed: {target.fatal}"
        if save is not None:
            save(progress.document())
    return summary


def _send(target: Target, p: PartitionSalvage, row: dict[str, Any], entry: Any, progress: Progress,
          summary: Summary, stats: dict[str, Any], opts: Options) -> None:
    offset = row["offset"]

    def delivered(error: str | None, refused: bool, topic: str, partition: int, at: int) -> None:
        if error is None:  # recorded before the target offset: an interrupt between leaves it to the tail read
            entry.finished(offset)
            progress.acknowledged(f"{topic}-{partition}", at)
            summary.sent += 1
            stats["sent"] += 1
        elif refused:
            entry.finished(offset)
            summary.refused += 1
            stats["refused"] += 1
            if len(summary.refusals) < 100:
                summary.refusals.append({"partition": p.name, "offset": offset, "error": error})
        elif summary.stopped is None:
            summary.stopped = f"{p.name} offset {offset}: {error}"

    headers: list[tuple[str, bytes | None]] = [(h["key"], h["value"]) for h in row["headers"]]
    headers.append((ORIGIN_HEADER, origin_value(p.topic, p.partition, offset)))
    entry.sent(offset)
    target.produce(target_topic(p.topic, opts), p.partition if opts.partitioning == "keep" else None, row["key"],
                   row["value"], headers, row["timestamp"], delivered)
