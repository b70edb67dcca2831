"""Rendering a findings report (``kafkatool check``): an all-clear line, or a table an operator reads
without the source; JSON / JSON lines for machines."""

from __future__ import annotations

import sys
import textwrap
from typing import Any, TextIO

import orjson
from rich.text import Text

from kafkatool.render.output import SEVERITY_STYLE
from kafkatool.render.safe import for_people, human_console, json_bytes

Row = dict[str, Any]


def render_report(findings: list[Row], summary: Row, fmt: str, out: TextIO | None = None) -> None:
    """Write ``findings`` (rows with severity, code, log_dir, file, position, field, reason) and ``summary``."""
    out = out or sys.stdout
    if fmt == "json":
        out.write(json_bytes({"summary": summary, "findings": findings}, option=orjson.OPT_INDENT_2).decode())
        out.write("\n")
        return
    if fmt == "jsonl":
        for row in findings:
            out.write(json_bytes({"type": "finding", **row}).decode() + "\n")
        out.write(json_bytes({"type": "summary", **summary}).decode() + "\n")
        return
    findings, summary = for_people(findings), for_people(summary)
    console = human_console(out)
    counts = summary["counts"]
    scope = (f"{summary['log_dirs']} log dir{'s' if summary['log_dirs'] != 1 else ''}, "
             f"{summary['partitions']} partition{'s' if summary['partitions'] != 1 else ''}, "
             f"{summary['segments']} segment{'s' if summary['segments'] != 1 else ''}")
    shown = [f for f in findings if f["severity"] != "info" or summary.get("show_info")]
    if not shown:
        console.print(Text.assemble(("✓ healthy", "green bold"), f"  {scope}; "
                                    f"{counts['info']} informational note{'s' if counts['info'] != 1 else ''}"))
        return
    multi = summary["log_dirs"] > 1
    log_dir = None
    for f in shown:
        if multi and f["log_dir"] != log_dir:
            log_dir = f["log_dir"]
            console.print(Text("across log dirs:" if log_dir == "*" else f"{log_dir}:", style="bold"))
        console.print(_finding(f, console.width))
    verdict = "✗" if counts["error"] else "!"
    style = "red bold" if counts["error"] else "yellow bold"
    console.print(Text.assemble((f"{verdict} {counts['error']} error(s), {counts['warning']} warning(s)", style),
                                f", {counts['info']} note(s)  {scope}"))


def _finding(f: Row, width: int) -> Text:
    """One finding as a block that reads at 80 columns: ``severity code file @ byte N`` on one line (wrapped only
    between words, so a code or a file name is never split), then what it means, indented."""
    where = f["file"] if f["position"] is None else f"{f['file']} @ byte {f['position']}"
    reason = textwrap.fill(f["reason"], width=max(width, 40), initial_indent=" " * 9, subsequent_indent=" " * 9,
                           break_long_words=False, break_on_hyphens=False)
    return Text.assemble((f"{f['severity']:<8}", SEVERITY_STYLE.get(f["severity"], "")), " ", (f["code"], "bold"),
                         "  ", where, "\n", reason)


def render_expectation(missing: list[Row], unexpected: list[Row], out: TextIO | None = None) -> None:
    """The comparison with an ``expect.json``: what was declared but not found, and the reverse."""
    missing, unexpected = for_people(missing), for_people(unexpected)
    console = human_console(out or sys.stderr, piped_width=None, soft_wrap=True)
    if not missing and not unexpected:
        console.print(Text("✓ findings match the expectation", style="green bold"))
        return
    for row in missing:
        console.print(Text.assemble(("expected but not found: ", "red bold"), f"{row.get('code')} {row.get('file')}"))
    for row in unexpected:
        console.print(Text.assemble(("found but not expected: ", "red bold"),
                                    f"{row['severity']} {row['code']} {row['file']}"))
