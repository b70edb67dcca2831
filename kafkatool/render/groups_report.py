"""Rendering ``kafkatool groups``: groups of the four types, their members and assignments, committed offsets (and
share partitions' start offsets) with lag, share partitions' state, offsets outside the log (table/json/jsonl)."""

from __future__ import annotations

import sys
from typing import Any, TextIO

import orjson
from rich.console import Console
from rich.table import Table
from rich.text import Text

from kafkatool.render.safe import for_people, human_console, json_bytes

Row = dict[str, Any]
LEFT = {"group", "topic", "protocol", "assignor", "members", "problem", "member_id", "client_id", "client_host",
        "assigned", "target", "in_flight"}


def _partitions(items: list[Row] | None) -> str | None:
    """``orders:0,1 invoices:3`` from ``[{"topic", "topic_id", "partitions"}]``."""
    if items is None:
        return None
    return " ".join(f"{i['topic'] or i['topic_id']}:{','.join(map(str, i['partitions']))}" for i in items)


def _tasks(tasks: dict[str, list[Row]] | None) -> str | None:
    """A streams member's tasks: ``active 0_0,0_1 standby 1_0``."""
    if not tasks:
        return None
    parts = []
    for kind, items in tasks.items():
        ids = [f"{t['subtopology']}_{p}" for t in items for p in t["partitions"]]
        if ids:
            parts.append(f"{kind.removesuffix('Tasks')} {','.join(ids)}")
    return " ".join(parts) or "none"


def member_table_rows(members: list[Row]) -> list[Row]:
    """The members with their assignments as short text, for the table."""
    return [{**m, "assigned": _tasks(m["tasks"]) if m["protocol"] == "streams" else _partitions(m["assigned"]),
             "target": _tasks(m["target_tasks"]) if m["protocol"] == "streams" else _partitions(m["target"])}
            for m in members]


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
        out.write(json_bytes(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    if fmt == "jsonl":
        for g in doc["groups"]:
            out.write(json_bytes({"type": "group", **g}).decode() + "\n")
        for o in doc["offsets"]:
            out.write(json_bytes({"type": "offset", **o}).decode() + "\n")
        for m in doc["members"]:
            out.write(json_bytes({"type": "member", **m}).decode() + "\n")
        for s in doc["share_state"]:
            out.write(json_bytes({"type": "share_state", **s}).decode() + "\n")
        for d in doc["defects"]:
            out.write(json_bytes({"type": "defect", **d}).decode() + "\n")
        out.write(json_bytes({"type": "summary", "log_dirs": doc["log_dirs"],
                                "coordinator_partitions": doc["coordinator_partitions"],
                                "offsets_records": doc["offsets_records"], "groups": len(doc["groups"]),
                                "offsets": len(doc["offsets"]), "problems": len(doc["problems"]),
                                "defects": len(doc["defects"]), "members": len(doc["members"]),
                                "share_coordinator_partitions": doc["share_coordinator_partitions"],
                                "share_state_records": doc["share_state_records"],
                                "share_partitions": len(doc["share_state"])}).decode() + "\n")
        return
    doc = for_people(doc)
    console = human_console(out, piped_width=200)
    coordinators = ", ".join(doc["coordinator_partitions"]) or "none given"
    console.print(Text.assemble(("offsets topic: ", "bold"), f"{coordinators} ({doc['offsets_records']} records)"))
    if doc["share_coordinator_partitions"]:
        console.print(Text.assemble(("share group state topic: ", "bold"),
                                    f"{', '.join(doc['share_coordinator_partitions'])} "
                                    f"({doc['share_state_records']} records)"))
    if doc["groups"]:
        _table(console, [("group", "group"), ("protocol", "protocol"), ("generation", "generation/epoch"),
                         ("assignor", "assignor"), ("members", "members"), ("deleted", "deleted"),
                         ("committed_partitions", "partitions"), ("total_lag", "lag"),
                         ("pending_transactional_offsets", "pending txn")], doc["groups"])
    if doc["members"]:
        _table(console, [("group", "group"), ("member_id", "member"), ("client_id", "client"),
                         ("client_host", "host"), ("member_epoch", "epoch"), ("assigned", "assigned"),
                         ("target", "target")], member_table_rows(doc["members"]))
    if doc["share_state"]:
        _table(console, [("group", "share group"), ("topic", "topic"), ("partition", "partition"),
                         ("start_offset", "start offset"), ("state_epoch", "state epoch"),
                         ("leader_epoch", "leader epoch"), ("in_flight", "in flight"),
                         ("updates_since_snapshot", "updates")],
               [{**s, "topic": s["topic"] or s["topic_id"],
                 "in_flight": " ".join(f"{k}:{v}" for k, v in sorted(s["in_flight_offsets"].items())) or None}
                for s in doc["share_state"]])
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
