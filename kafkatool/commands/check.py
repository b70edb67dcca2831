"""``kafkatool check``: is this broker data directory healthy, and does it still show the damage it was
kept for? One command and an exit code, for CI on kept incident directories and fixture dirs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from kafkatool.commands.common import FailOn, OutputFormat, run_guarded
from kafkatool.engine.check import check_broker_identity, check_log_dir
from kafkatool.errors import ExitCode, UnreadableInputError, UsageError
from kafkatool.model import Defect, LogDirData
from kafkatool.reading.files import read_text
from kafkatool.reading.logdir import read_log_dir, segment_bytes
from kafkatool.reading.restart_inputs import read_swaps
from kafkatool.render.report import render_expectation, render_report
from kafkatool.render.scan_report import byte_progress, wants_progress
from kafkatool.storage.severity import SEVERITY_RANK


def finding_row(d: Defect, log_dir: str) -> dict[str, Any]:
    """A finding as a stable row."""
    return {"severity": d.severity, "code": d.code, "log_dir": log_dir, "file": d.file, "position": d.position,
            "field": d.field, "reason": d.reason}


def load_expectation(path: str) -> tuple[list[dict[str, Any]], str]:
    """``expect.json``: ``{"findings": [{"code", "file", "severity"?}...], "min_severity": "warning"}``."""
    try:
        doc = json.loads(read_text(path))
    except ValueError as err:
        raise UsageError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("findings", []), list):
        raise UsageError(f"{path}: expected an object with a \"findings\" list")
    floor = doc.get("min_severity", "warning")
    if floor not in SEVERITY_RANK:
        raise UsageError(f"{path}: min_severity must be info, warning or error")
    for i, item in enumerate(doc.get("findings", [])):
        if not isinstance(item, dict) or "code" not in item:
            raise UsageError(f"{path}: findings[{i}] needs at least a \"code\"")
    return doc.get("findings", []), floor


def compare(rows: list[dict[str, Any]], expected: list[dict[str, Any]],
            floor: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(declared but not found, found at or above ``floor`` but not declared)."""

    def matches(row: dict[str, Any], exp: dict[str, Any]) -> bool:
        return all(row.get(k) == v for k, v in exp.items() if k in ("code", "file", "severity", "log_dir", "field"))

    missing = [e for e in expected if not any(matches(r, e) for r in rows)]
    unexpected = [r for r in rows if SEVERITY_RANK[r["severity"]] >= SEVERITY_RANK[floor]
                  and not any(matches(r, e) for e in expected)]
    return missing, unexpected


def run(dirs: list[str], *, fail_on: FailOn, expect: str | None, fmt: OutputFormat, show_info: bool,
        quiet: bool = False) -> int:
    """Read every log dir, check them together, render, and choose the exit code."""
    datas: list[LogDirData] = []
    total = segment_bytes(dirs)
    with byte_progress(total, "reading", enabled=wants_progress(total, quiet=quiet)) as advance:
        for d in dirs:
            datas.append(read_log_dir(d, advance))
    # An interrupted cleaner swap is checked as Kafka's load completes it (the .swap segments read too).
    findings = [finding_row(f, data.path) for data in datas for f in check_log_dir(data, read_swaps(data))]
    findings += [finding_row(f, "*") for f in check_broker_identity(datas)]
    findings.sort(key=lambda r: (-SEVERITY_RANK[r["severity"]], r["log_dir"], r["file"], r["position"] or 0))
    counts = {s: sum(1 for f in findings if f["severity"] == s) for s in ("error", "warning", "info")}
    summary = {"log_dirs": len(datas), "partitions": sum(len(d.partitions) for d in datas),
               "segments": sum(len(p.segments) for d in datas for p in d.partitions), "counts": counts,
               "show_info": show_info}
    render_report(findings, summary, fmt.value)
    if expect is not None:
        expected, floor = load_expectation(expect)
        missing, unexpected = compare(findings, expected, floor)
        render_expectation(missing, unexpected)
        return int(ExitCode.DEFECTS if missing or unexpected else ExitCode.CLEAN)
    if fail_on is FailOn.never:
        return int(ExitCode.CLEAN)
    failing = [f for f in findings if SEVERITY_RANK[f["severity"]] >= SEVERITY_RANK[fail_on.value]]
    return int(ExitCode.DEFECTS if failing else ExitCode.CLEAN)


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
) -> None:
    """Cross-check every file of a broker's log dirs and say what Kafka will do with what is wrong."""

    def body() -> int:
        for d in dirs:
            if not Path(d).exists():
                raise UnreadableInputError(d, "no such file or directory")
        return run(dirs, fail_on=fail_on, expect=expect, fmt=fmt, show_info=show_info, quiet=quiet)

    run_guarded(body)
