"""``kafkatool check``: is this broker data directory healthy, and does it still show the damage it was
kept for? One command and an exit code, for CI on kept incident directories and fixture dirs."""

from __future__ import annotations

from typing import Annotated

import typer

from kafkatool.analysis.findings import at_or_above, check_document, compare, load_expectation
from kafkatool.commands.common import FailOn, FollowLinks, OutputFormat, run_guarded
from kafkatool.errors import ExitCode, UnreadableInputError
from kafkatool.model import LogDirData
from kafkatool.reading.logdir import read_log_dir, segment_bytes
from kafkatool.reading.objects import input_path
from kafkatool.render.report import render_expectation, render_report
from kafkatool.render.scan_report import byte_progress, wants_progress


def run(dirs: list[str], *, fail_on: FailOn, expect: str | None, fmt: OutputFormat, show_info: bool,
        quiet: bool = False) -> int:
    """Read every log dir, check them together, render, and choose the exit code."""
    datas: list[LogDirData] = []
    total = segment_bytes(dirs)
    with byte_progress(total, "reading", enabled=wants_progress(total, quiet=quiet)) as advance:
        for d in dirs:
            datas.append(read_log_dir(d, advance))
    findings, summary = check_document(datas, show_info=show_info)
    render_report(findings, summary, fmt.value)
    if expect is not None:
        expected, floor = load_expectation(expect)
        missing, unexpected = compare(findings, expected, floor)
        render_expectation(missing, unexpected)
        return int(ExitCode.DEFECTS if missing or unexpected else ExitCode.CLEAN)
    if fail_on is FailOn.never:
        return int(ExitCode.CLEAN)
    return int(ExitCode.DEFECTS if at_or_above(findings, fail_on.value) else ExitCode.CLEAN)


def command(
    dirs: Annotated[list[str], typer.Argument(help="Log dirs of one broker, or partition directories.",
                                             show_default=False, metavar="DIR")],
    fail_on: Annotated[FailOn, typer.Option("--fail-on", help="Exit 1 when a finding reaches this severity.")]
    = FailOn.error,
    expect: Annotated[str | None, typer.Option("--expect", metavar="FILE",
                                               help="expect.json: exit 0 only if the findings match the declared "
                                                    "ones (for CI on kept incident dirs).")] = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f", help="table, json or jsonl.")] = OutputFormat.table,
    show_info: Annotated[bool, typer.Option("--show-info", help="List informational notes in the table too.")]
    = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar on stderr.")] = False,
    follow_links: FollowLinks = False,
) -> None:
    """Cross-check every file of a broker's log dirs and say what Kafka will do with what is wrong."""

    def body() -> int:
        for d in dirs:
            if not input_path(d).exists():
                raise UnreadableInputError(d, "no such file or directory")
        return run(dirs, fail_on=fail_on, expect=expect, fmt=fmt, show_info=show_info, quiet=quiet)

    run_guarded(body, follow_links=follow_links)
