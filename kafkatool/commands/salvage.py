"""``kafkatool salvage``: every trustworthy batch of every copy of each partition, the repaired log dir Kafka
loads without truncating any of it, the records exported, and the account against Kafka's own recovery."""

from __future__ import annotations

import os
import time
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import orjson
import typer

from kafkatool.commands.common import FollowLinks, OutputFormat, run_guarded
from kafkatool.errors import ExitCode, UsageError
from kafkatool.reading.byte_ranges import first_segments
from kafkatool.reading.files import read_bytes, read_text
from kafkatool.reading.inventory import looks_like_partition_dir
from kafkatool.reading.objects import input_path
from kafkatool.schema.filenames import parse_partition_dir
from kafkatool.writing.atomic import prepare_output_dir, prepare_output_file, write_atomic
from kafkatool.writing.salvage_writer import StagedDir, write_jsonl, write_parquet

if TYPE_CHECKING:
    from kafkatool.analysis.salvage import SalvageResult

# The analysis, its numpy and the renderers are imported where a run first needs them: with --out, the first
# repaired segment of each partition starts copying before they load (a tenth of a second of the command).

PARTITIONING = ("keep", "key")


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
        out[int(broker)] = input_path(path)
    return out


def split_partition_options(values: list[str]) -> tuple[str | None, str]:
    """``--partition`` values: ``keep``/``key`` (re-produce partitioning) and at most one ``TOPIC-N`` filter."""
    modes = [v for v in values if v in PARTITIONING]
    names = [v for v in values if v not in PARTITIONING]
    if len(set(modes)) > 1 or len(set(names)) > 1:
        raise UsageError("--partition takes one of keep|key and one TOPIC-N at most")
    return (names[0] if names else None), (modes[0] if modes else "keep")


def produce_to(result: SalvageResult, bootstrap: str, inputs: list[Path], *, topic_map: list[str],
               partitioning: str, include_aborted: bool, rate: str | None, dry_run: bool, producer_config: str | None,
               progress_file: str | None, quiet: bool) -> dict:
    """Re-produce the salvaged records into the cluster at ``bootstrap``; the summary document."""
    from kafkatool.analysis.reproduce import Options, reproduce
    from kafkatool.analysis.salvage import data_records
    from kafkatool.engine.reproduce import (
        load_progress,
        parse_properties,
        parse_rate,
        parse_topic_map,
        producer_settings,
    )
    from kafkatool.render.salvage_report import count_progress, wants_bar
    from kafkatool.writing.kafka_sink import KafkaTarget

    opts = Options(bootstrap, parse_topic_map(topic_map), partitioning, include_aborted, parse_rate(rate), dry_run)
    user = parse_properties(read_text(producer_config)) if producer_config is not None else {}
    earlier = None
    if progress_file is not None:
        path = Path(progress_file)
        prepare_output_file(path, inputs, force=True)
        if path.exists():
            try:
                earlier = orjson.loads(read_bytes(path))
            except orjson.JSONDecodeError:
                raise UsageError(f"--progress {progress_file}: not a kafkatool salvage progress file") from None
    progress = load_progress(earlier, opts.target_doc())
    target = KafkaTarget(producer_settings(bootstrap, user))

    def save(doc: dict) -> None:
        write_atomic(Path(progress_file or ""), orjson.dumps(doc, option=orjson.OPT_INDENT_2))

    total = data_records(result)
    try:
        with count_progress(total, f"re-producing to {bootstrap}", enabled=wants_bar(quiet=quiet)) as advance:
            summary = reproduce(result, target, progress, opts, save=save if progress_file is not None else None,
                                advance=advance)
    finally:
        target.close()
    return summary.document(opts)


def _lean_arrow() -> None:
    """Arrow as the Parquet export needs it, set up as the scan's local engine sets it (``fleet.tables.lean_arrow``):
    the C allocator's buffers, the default pool chosen before pyarrow is first imported (a user's own choice
    stands), and no pandas imported by pyarrow's first conversion. Measured 2026-11-28 on 383,479 one-record rows:
    264 MB peak before, 159 MB after."""
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    from kafkatool.fleet.tables import lean_arrow

    lean_arrow()


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
    partition: Annotated[list[str] | None, typer.Option(
        "--partition", "-p", metavar="TOPIC-N|keep|key",
        help="TOPIC-N: only this partition. keep (default) or key: with --produce-to, each record to the same "
             "partition number of its target topic, or to the partition its key hashes to (Kafka's murmur2).")]
    = None,
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
    produce: Annotated[str | None, typer.Option(
        "--produce-to", metavar="HOST:PORT", help="Re-produce the salvaged records into this live cluster "
                                                 "(idempotent producer; the target topics must exist).")] = None,
    topic_map: Annotated[list[str] | None, typer.Option(
        "--topic-map", metavar="SRC=DST", help="With --produce-to: send topic SRC's records to topic DST "
                                              "(repeatable; default: the same name).")] = None,
    include_aborted: Annotated[bool, typer.Option(
        "--include-aborted", help="With --produce-to: also send records of aborted and never-ended transactions.")]
    = False,
    rate: Annotated[str | None, typer.Option(
        "--rate", metavar="RECORDS/S", help="With --produce-to: send at most this many records a second.")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="With --produce-to: check the target and count what would be sent; send nothing.")]
    = False,
    producer_config: Annotated[str | None, typer.Option(
        "--producer-config", metavar="FILE", help="With --produce-to: the client's properties (TLS, SASL, "
                                                  "tuning; librdkafka names).")] = None,
    progress_file: Annotated[str | None, typer.Option(
        "--progress", metavar="FILE", help="With --produce-to: record what the cluster acknowledged here, and "
                                           "resume from it (a rerun sends nothing twice).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar on stderr.")] = False,
    follow_links: FollowLinks = False,
) -> None:
    """Recover every trustworthy batch of a damaged broker's partitions, beyond what Kafka's recovery keeps:
    a repaired log dir, an export of the records, and the account."""

    def body() -> int:
        if not paths and not replica:
            raise UsageError("give at least one PATH or --replica BROKER_ID=DIR")
        only, partitioning = split_partition_options(partition or [])
        if produce is None:
            used = [name for name, given in (("--topic-map", topic_map), ("--include-aborted", include_aborted),
                                              ("--rate", rate), ("--dry-run", dry_run),
                                              ("--producer-config", producer_config), ("--progress", progress_file),
                                              ("--partition keep|key", set(partition or []) & set(PARTITIONING)))
                    if given]
            if used:
                raise UsageError(f"{', '.join(used)} only go with --produce-to HOST:PORT")
        inputs = [input_path(p) for p in paths or []]
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
            if kind is ExportKind.parquet:
                _lean_arrow()
            prepare_output_file(Path(export), every, force=force)
            if out is not None and Path(out).resolve() in Path(export).resolve().parents:
                raise UsageError(f"--export {export} is inside --out {out}")
        options = {"leader": leader, "partition": only, "now": now if now is not None else int(time.time() * 1000),
                   "segment_bytes": segment_bytes, "index_interval_bytes": index_interval_bytes}
        staged = StagedDir(Path(out)) if out is not None else None
        try:
            if staged is not None and not replicas:
                # the first segments most likely kept whole start copying now, while the rest loads and the
                # inputs are scanned; salvage hands over what it finds as soon as it knows
                staged.ahead(first_segments(inputs, segment_bytes, only))
            from kafkatool.reading.scan_memo import remembering

            with remembering():  # each small segment is read once for Kafka's view, the scan, the plan and the copy
                return finish(staged, inputs, replicas, every, options, kind, partitioning)
        except BaseException:
            if staged is not None:
                staged.abort()  # nothing once committed
            raise

    def finish(staged: StagedDir | None, inputs: list[Path], replicas: dict[int, Path], every: list[Path],
               options: dict, kind: ExportKind | None, partitioning: str) -> int:
        from kafkatool.analysis.salvage import repaired_layout, salvage, salvage_document
        from kafkatool.render.output import Diagnostics
        from kafkatool.render.salvage_report import render_salvage

        result = salvage(inputs, replicas, ahead=None if staged is None else staged.ahead, **options)
        if staged is not None:
            for name, content in repaired_layout(result):
                if isinstance(content, bytes):
                    staged.write(name, content)
                else:
                    staged.stream(name, content)
            staged.commit()
            for stale in staged.removed:
                Diagnostics().warning(f"removed {stale}: the staging directory of an earlier run that was interrupted")
        if kind is not None:
            from kafkatool.analysis.salvage import export_rows

            writer = write_parquet if kind is ExportKind.parquet else write_jsonl
            rows = writer(Path(export or ""), export_rows(result, binary=kind is ExportKind.parquet))
            Diagnostics().note(f"exported {rows} record(s) to {export}")
        doc = salvage_document(result)
        failed = False
        if produce is not None:
            doc["reproduce"] = produce_to(result, produce, every, topic_map=topic_map or [], partitioning=partitioning,
                                          include_aborted=include_aborted, rate=rate, dry_run=dry_run,
                                          producer_config=producer_config, progress_file=progress_file, quiet=quiet)
            failed = bool(doc["reproduce"]["refused"] or doc["reproduce"]["stopped"])
        render_salvage(doc, fmt.value)
        damaged = bool(doc["not_read"]) or any(p["lost"] or p["conflicts"] or p["defects"] or p["rejected"]
                                               for p in doc["partitions"])
        return int(ExitCode.DEFECTS if damaged or failed else ExitCode.CLEAN)

    run_guarded(body, follow_links=follow_links)
