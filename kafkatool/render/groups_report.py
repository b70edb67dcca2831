"""Rendering ``kafkatool groups``: groups, committed offsets with lag, offsets outside the log (table/json/jsonl)."""

from __future__ import annotations

import sys
from typing import Any, TextIO

import orjson
from rich.console import Console
from rich.table import Table
from rich.text import Text

from kafkatool.render.safe import for_people, human_console

Row = dict[str, Any]
LEFT = {"group", "topic", "protocol", "assignor", "members", "problem"}


def _cell(value: Any, key: str) -> Text:
    if value is None:
        return Text("–", style="dim")
    if isinstance(value, list):
        return Text(str(len(value)) if key == "members" else ",".join(map(str, value)))
    if isinstance(value, bool):
        return Text("yes" if value else "")
    return Text(str(value), style="red bold" if key == "problem" else "")


def _table(console: Console, columns: list[tuple[str, str]], rows: list[Row]) -> None:
    table = Table(box=None, show_edge=False, header_style="bold dim")
    for key, header in columns:
        table.add_column(header, justify="left" if key in LEFT else "right")
    for r in rows:
        table.add_row(*(_cell(r[k], k) for k, _ in columns))
    console.print(table)


def render_groups(doc: Row, fmt: str, out: TextIO | None = None) -> None:
    """Write the ``groups`` document ``doc`` (its JSON shape is the ``--format json`` schema)."""
    out = out or sys.stdout
    if fmt == "json":
        out.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    if fmt == "jsonl":
        for g in doc["groups"]:
            out.write(orjson.dumps({"type": "group", **g}).decode() + "\n")
        for o in doc["offsets"]:
            out.write(orjson.dumps({"type": "offset", **o}).decode() + "\n")
        for d in doc["defects"]:
            out.write(orjson.dumps({"type": "defect", **d}).decode() + "\n")
        out.write(orjson.dumps({"type": "summary", "log_dirs": doc["log_dirs"],
                                "coordinator_partitions": doc["coordinator_partitions"],
                                "offsets_records": doc["offsets_records"], "groups": len(doc["groups"]),
                                "offsets": len(doc["offsets"]), "problems": len(doc["problems"]),
                                "defects": len(doc["defects"])}).decode() + "\n")
        return
    doc = for_people(doc)
    console = human_console(out, piped_width=200)
    coordinators = ", ".join(doc["coordinator_partitions"]) or "none given"
    console.print(Text.assemble(("offsets topic: ", "bold"), f"{coordinators} ({doc['offsets_records']} records)"))
    if doc["groups"]:
        _table(console, [("group", "group"), ("protocol", "protocol"), ("generation", "generation/epoch"),
                         ("assignor", "assignor"), ("members", "members"), ("deleted", "deleted"),
                         ("committed_partitions", "partitions"), ("total_lag", "lag"),
                         ("pending_transactional_offsets", "pending txn")], doc["groups"])
    if doc["offsets"]:
        _table(console, [("group", "group"), ("topic", "topic"), ("partition", "partition"),
                         ("committed_offset", "committed"), ("log_start_offset", "log start"),
                         ("log_end_offset", "log end"), ("high_watermark", "HW"), ("last_stable_offset", "LSO"),
                         ("lag", "lag"), ("commit_timestamp", "committed at"), ("problem", "problem")],
               doc["offsets"])
    else:
        console.print(Text("no committed offsets", style="dim"))
    for p in doc["problems"]:
        console.print(Text.assemble(("warning: ", "red bold"), f"{p['group']} {p['topic']}-{p['partition']}: "
                                    f"{p['message']}"))
    for d in doc["defects"]:
        where = d["file"] if d["position"] is None else f"{d['file']} @ byte {d['position']}"
        console.print(Text(f"defect: {where}: {d['field']}: {d['reason']}", style="red"))
    n = len(doc["problems"])
    console.print(Text(f"{n} committed offset(s) outside their partition's log", style="red bold" if n else "green"))
