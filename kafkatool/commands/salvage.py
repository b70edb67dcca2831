"""``kafkatool salvage``: every trustworthy batch of every copy of each partition, the repaired log dir Kafka
loads without truncating any of it, the records exported, and the account against Kafka's own recovery."""

from __future__ import annotations

import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from kafkatool.analysis.salvage import export_rows, repaired_layout, salvage, salvage_document
from kafkatool.commands.common import FollowLinks, OutputFormat, run_guarded
from kafkatool.errors import ExitCode, UsageError
from kafkatool.reading.inventory import looks_like_partition_dir
from kafkatool.render.output import Diagnostics
from kafkatool.render.salvage_report import render_salvage
from kafkatool.schema.filenames import parse_partition_dir
from kafkatool.writing.atomic import prepare_output_dir, prepare_output_file
from kafkatool.writing.salvage_writer import staged_dir, write_jsonl, write_parquet


class ExportKind(StrEnum):
    """Export formats, from the file's suffix."""

    jsonl = "jsonl"
    parquet = "parquet"


def parse_replicas(specs: list[str]) -> dict[int, Path]:
    """``BROKER_ID=DIR`` options (as ``simulate-replication --replica`` takes them)."""
    out: dict[int, Path] = {}
    for spec in specs:
        broker, sep, path = spec.partition("=")
        if not sep or not broker.strip().isdigit() or not path:
            raise UsageError(f"--replica expects BROKER_ID=DIR, not {spec!r}")
        out[int(broker)] = Path(path)
    return out


def command(
    paths: Annotated[list[str] | None, typer.Argument(
        help="Log dirs or partition directories (leftover -delete, -stray and -future directories included).",
        metavar="PATH...", show_default=False)] = None,
    replica: Annotated[list[str] | None, typer.Option(
        "--replica", metavar="BROKER_ID=DIR", help="Another broker's copy of the same partitions (repeatable).")]
    = None,
    leader: Annotated[int | None, typer.Option(
        "--leader", metavar="BROKER_ID", help="The final leader, whose epoch cache decides between copies "
                                              "(default: the PATH inputs, else the replica with the newest epoch).")]
    = None,
    partition: Annotated[str | None, typer.Option("--partition", "-p", metavar="TOPIC-N",
                                                  help="Only this partition.")] = None,
    out: Annotated[str | None, typer.Option(
        "--out", metavar="DIR", help="Write the repaired log dir here (new or empty; never inside an input).")]
    = None,
    export: Annotated[str | None, typer.Option(
        "--export", metavar="FILE.jsonl|FILE.parquet", help="Write one row per salvaged record.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing --out DIR or --export FILE.")] = False,
    segment_bytes: Annotated[int, typer.Option(
        "--segment-bytes", metavar="BYTES", min=1, help="Roll output segments at this size (segment.bytes).")]
    = 1 << 30,
    index_interval_bytes: Annotated[int, typer.Option(
        "--index-interval-bytes", metavar="BYTES", min=1, help="Offset index interval of the output "
                                                               "(index.interval.bytes).")] = 4096,
    now: Annotated[int | None, typer.Option("--now", metavar="MS",
                                            help="The clock for Kafka's recovery (default: the current time).")]
    = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f", help="table, json or jsonl.")] = OutputFormat.table,
    follow_links: FollowLinks = False,
) -> None:
    """Recover every trustworthy batch of a damaged broker's partitions, beyond what Kafka's recovery keeps:
    a repaired log dir, an export of the records, and the account."""

    def body() -> int:
        if not paths and not replica:
            raise UsageError("give at least one PATH or --replica BROKER_ID=DIR")
        inputs = [Path(p) for p in paths or []]
        replicas = parse_replicas(replica or [])
        every = [*inputs, *replicas.values()]
        # a partition directory given alone: its log dir is input too (its checkpoints and meta.properties are read)
        every += [p.parent for p in every if parse_partition_dir(p.name) is not None and looks_like_partition_dir(p)]
        if out is not None:
            prepare_output_dir(Path(out), every, force=force)
        kind = None
        if export is not None:
            suffix = Path(export).suffix.lower().lstrip(".")
            if suffix not in ExportKind.__members__:
                raise UsageError(f"--export {export}: name a .jsonl or .parquet file")
            kind = ExportKind(suffix)
            prepare_output_file(Path(export), every, force=force)
            if out is not None and Path(out).resolve() in Path(export).resolve().parents:
                raise UsageError(f"--export {export} is inside --out {out}")
        result = salvage(inputs, replicas, leader=leader, partition=partition,
                         now=now if now is not None else int(time.time() * 1000),
                         segment_bytes=segment_bytes, index_interval_bytes=index_interval_bytes)
        if out is not None:
            with staged_dir(Path(out)) as staged:
                for name, content in repaired_layout(result):
                    if isinstance(content, bytes):
                        staged.write(name, content)
                    else:
                        staged.stream(name, content)
            for stale in staged.removed:
                Diagnostics().warning(f"removed {stale}: the staging directory of an earlier run that was interrupted")
        if kind is not None:
            writer = write_parquet if kind is ExportKind.parquet else write_jsonl
            rows = writer(Path(export or ""), export_rows(result, binary=kind is ExportKind.parquet))
            Diagnostics().note(f"exported {rows} record(s) to {export}")
        doc = salvage_document(result)
        render_salvage(doc, fmt.value)
        damaged = bool(doc["not_read"]) or any(p["lost"] or p["conflicts"] or p["defects"] or p["rejected"]
                                               for p in doc["partitions"])
        return int(ExitCode.DEFECTS if damaged else ExitCode.CLEAN)

    run_guarded(body, follow_links=follow_links)
