"""``kafkatool simulate-restart``: what Kafka will do with this log dir when the broker starts."""

from __future__ import annotations

import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from kafkatool.analysis.metadata import topic_remote_storage
from kafkatool.analysis.restart import partitions_there, recovered_tree, restart_document
from kafkatool.commands.common import INT32_MAX, INT64_MAX, FollowLinks, report_not_read, run_guarded
from kafkatool.engine.restart import RestartOptions, simulate_restart
from kafkatool.errors import ExitCode, UsageError
from kafkatool.reading.files import not_read
from kafkatool.reading.inventory import looks_like_partition_dir
from kafkatool.reading.logdir import segment_bytes
from kafkatool.reading.objects import input_path
from kafkatool.reading.restart_inputs import read_restart_inputs
from kafkatool.render.output import Diagnostics
from kafkatool.render.restart_report import render_restart
from kafkatool.render.scan_report import byte_progress, wants_progress
from kafkatool.schema.filenames import parse_partition_dir
from kafkatool.writing.atomic import prepare_output_dir, replace_tree


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


def command(
    log_dir: Annotated[str, typer.Argument(help="A broker log dir (or one partition directory).", metavar="LOG_DIR",
                                           show_default=False)],
    partition: Annotated[str | None, typer.Option("--partition", "-p", metavar="TOPIC-N",
                                                  help="Only this partition.")] = None,
    now: Annotated[int | None, typer.Option("--now", min=0, max=INT64_MAX, metavar="MS",
                                            help="The broker's clock at start-up, for producer expiration "
                                                 "(default: the current time).")] = None,
    assume: Annotated[AssumeShutdown | None, typer.Option(
        "--assume", help="Treat the last shutdown as clean or unclean, whatever the marker says.")] = None,
    recovery_point: Annotated[int | None, typer.Option(
        "--recovery-point", metavar="OFFSET", min=0, max=INT64_MAX,
        help="Use this recovery point instead of the recovery-point-offset-checkpoint entry.")] = None,
    index_interval_bytes: Annotated[int | None, typer.Option(
        "--index-interval-bytes", metavar="BYTES", min=1, max=INT32_MAX,
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
    follow_links: FollowLinks = False,
) -> None:
    """Simulate a broker start on a log dir: recovery, truncation, producer state, and what is lost."""

    def body() -> int:
        path = input_path(log_dir)
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
            there = partitions_there([p.directory for p in inputs.log_dir.partitions])
            raise UsageError(f"--partition {partition}: no such partition directory in {log_dir} ({there})")
        clock = now if now is not None else int(time.time() * 1000)
        options = RestartOptions(now=clock, assume=None if assume is None else assume.value,  # type: ignore[arg-type]
                                 recovery_point=recovery_point, index_interval_bytes=index_interval_bytes,
                                 plan_output=apply_to is not None)
        result = simulate_restart(inputs.log_dir, inputs.swaps, options, label, inputs.tiered.remote,
                                  topic_remote_storage(path))
        if apply_to is not None:
            source = path.parent if inputs.single_partition else path
            prepare_output_dir(Path(apply_to), [path, source], force=force)
            for stale in replace_tree(recovered_tree(result, inputs.log_dir, source), Path(apply_to)):
                Diagnostics().warning(f"removed {stale}: the staging directory of an earlier --apply-to run that "
                                      "was interrupted")
        doc = restart_document(result)
        doc["not_read"] = [{"code": d.code, "severity": d.severity, "file": d.file, "reason": d.reason}
                           for d in not_read([inputs.log_dir], inputs.log_dir.partitions)]
        render_restart(doc, fmt.value)
        if report_not_read(doc["not_read"]) or any(p["outcome"] == "failed" for p in doc["partitions"]):
            return int(ExitCode.DEFECTS)
        lossy = any(p["loss"]["bytes"] or p["loss"]["records"] or p["loss"]["acknowledged"]
                    for p in doc["partitions"])
        return int(ExitCode.DEFECTS if lossy else ExitCode.CLEAN)

    run_guarded(body, follow_links=follow_links)
