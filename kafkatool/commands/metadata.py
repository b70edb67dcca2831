"""``kafkatool metadata``: the KRaft metadata log loaded as Kafka loads it, replayed into the cluster image."""

from __future__ import annotations

from typing import Annotated

import typer

from kafkatool.analysis.metadata import broker_cross_check, load, local_partitions
from kafkatool.commands.common import INT32_MAX, FollowLinks, OutputFormat, run_guarded
from kafkatool.errors import ExitCode, UsageError
from kafkatool.reading.logdir import segment_bytes
from kafkatool.reading.metadata_log import find_metadata_partition, read_metadata_files
from kafkatool.render.metadata_report import render_metadata
from kafkatool.render.scan_report import byte_progress, wants_progress


def _listed(names: list[str], what: str, most: int = 20) -> str:
    """``what: a, b, c`` (the first ``most``, and how many more), or that there are none."""
    if not names:
        return f"no {what}"
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return f"{what}: {', '.join(names[:most])}{more}"


def parse_partition(value: str) -> tuple[str, int]:
    """``TOPIC-N`` split at its last dash."""
    topic, _, number = value.rpartition("-")
    if not topic or not number.isdigit():
        raise UsageError(f"--history takes TOPIC-N (e.g. orders-0), not {value!r}")
    if int(number) > INT32_MAX:
        raise UsageError(f"--history {value}: partition numbers are 0 to {INT32_MAX}")
    return topic, int(number)


def command(
    log_dir: Annotated[str, typer.Argument(help="A KRaft log dir holding __cluster_metadata-0, or that directory.",
                                           metavar="LOG_DIR", show_default=False)],
    history_of: Annotated[str | None, typer.Option(
        "--history", metavar="TOPIC-N",
        help="List every change of this partition's leader and ISR, with its offset and time.")] = None,
    check_broker: Annotated[list[str] | None, typer.Option(
        "--check-broker", metavar="BROKER_LOG_DIR",
        help="Compare this broker log dir's partitions with the image (topic ids, replicas, strays); repeatable.")]
    = None,
    broker_id: Annotated[int | None, typer.Option(
        "--broker-id", min=0, max=INT32_MAX, metavar="ID",
        help="With --check-broker: the broker's id (default: meta.properties node.id).")]
    = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f", help="table, json or jsonl.")]
    = OutputFormat.table,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar on stderr.")] = False,
    follow_links: FollowLinks = False,
) -> None:
    """Load a KRaft metadata log as Kafka does and print the cluster's metadata image."""

    def body() -> int:
        which = parse_partition(history_of) if history_of is not None else None
        directory = find_metadata_partition(log_dir)
        own = segment_bytes([directory])
        total = 2 * own + segment_bytes(check_broker or [])  # the metadata log is read, then its kept part again
        with byte_progress(total, "reading", enabled=wants_progress(total, quiet=quiet)) as advance:
            files = read_metadata_files(directory)
            advance(own)
            doc, image = load(files, history_of=which, advance=advance)
            if check_broker:
                parts, found_id, bad, dir_ids = local_partitions(check_broker, advance)
        failing = bool(doc["defects"])
        if which is not None and not doc["history"]:
            there = sorted(f"{t.name}-{n}" for t in image.topics.values() for n in t.partitions)
            raise UsageError(f"--history {history_of}: no PartitionRecord or change of this partition in the loaded "
                             f"metadata log ({_listed(there, 'partitions in the image')})")
        if check_broker:
            node = broker_id if broker_id is not None else found_id
            failing = broker_cross_check(doc, image, node, parts, dir_ids, bad) or failing
        render_metadata(doc, fmt.value)
        return int(ExitCode.DEFECTS if failing else ExitCode.CLEAN)

    run_guarded(body, follow_links=follow_links)

