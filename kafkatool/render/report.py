"""Rendering a findings report (``kafkatool check``): an all-clear line, or a table an operator reads
without the source; JSON / JSON lines for machines."""

from __future__ import annotations

import sys
from typing import Any, TextIO

import orjson
from rich.table import Table
from rich.text import Text

from kafkatool.render.output import SEVERITY_STYLE
from kafkatool.render.safe import for_people, human_console

Row = dict[str, Any]


def render_report(findings: list[Row], summary: Row, fmt: str, out: TextIO | None = None) -> None:
    """Write ``findings`` (rows with severity, code, log_dir, file, position, field, reason) and ``summary``."""
    out = out or sys.stdout
    if fmt == "json":
        out.write(orjson.dumps({"summary": summary, "findings": findings}, option=orjson.OPT_INDENT_2).decode())
        out.write("\n")
        return
    if fmt == "jsonl":
        for row in findings:
            out.write(orjson.dumps({"type": "finding", **row}).decode() + "\n")
        out.write(orjson.dumps({"type": "summary", **summary}).decode() + "\n")
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
    table = Table(box=None, show_edge=False, header_style="bold", pad_edge=False)
    multi = summary["log_dirs"] > 1
    table.add_column("severity")
    table.add_column("code")
    if multi:
        table.add_column("log dir")
    table.add_column("file", overflow="fold")
    table.add_column("byte", justify="right")
    table.add_column("what it means", overflow="fold", ratio=1)
    for f in shown:
        cells = [Text(f["severity"], style=SEVERITY_STYLE.get(f["severity"], "")), Text(f["code"])]
        if multi:
            cells.append(Text(f["log_dir"]))
        cells += [Text(f["file"]), Text("" if f["position"] is None else str(f["position"])), Text(f["reason"])]
        table.add_row(*cells)
    console.print(table)
    verdict = "✗" if counts["error"] else "!"
    style = "red bold" if counts["error"] else "yellow bold"
    console.print(Text.assemble((f"{verdict} {counts['error']} error(s), {counts['warning']} warning(s)", style),
                                f", {counts['info']} note(s)  {scope}"))


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
