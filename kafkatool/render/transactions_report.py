"""Rendering ``kafkatool transactions``: coordinator states, open and hanging transactions (table / json / jsonl)."""

from __future__ import annotations

import sys
from typing import Any, TextIO

import orjson
from rich.console import Console
from rich.table import Table
from rich.text import Text

from kafkatool.render.safe import for_people, human_console, json_bytes

Row = dict[str, Any]


def _cell(value: Any) -> Text:
    if value is None:
        return Text("–", style="dim")
    if isinstance(value, list):
        return Text(",".join(str(v) for v in value))
    return Text(str(value))


def _table(console: Console, columns: list[tuple[str, str]], rows: list[Row]) -> None:
    table = Table(box=None, show_edge=False, header_style="bold dim")
    for _, header in columns:
        table.add_column(header, justify="left" if header in ("transactional id", "state", "partitions", "topic",
                                                              "coordinator state") else "right")
    for r in rows:
        table.add_row(*(_cell(r[k]) for k, _ in columns))
    console.print(table)


def render_transactions(doc: Row, fmt: str, out: TextIO | None = None) -> None:
    """Write the ``transactions`` document ``doc`` (its JSON shape is the ``--format json`` schema)."""
    out = out or sys.stdout
    if fmt == "json":
        out.write(json_bytes(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    if fmt == "jsonl":
        for t in doc["transactional_ids"]:
            out.write(json_bytes({"type": "transactional_id", **t}).decode() + "\n")
        for t in doc["open_transactions"]:
            out.write(json_bytes({"type": "open_transaction", **t}).decode() + "\n")
        for d in doc["defects"]:
            out.write(json_bytes({"type": "defect", **d}).decode() + "\n")
        summary = {k: v for k, v in doc.items() if k not in ("transactional_ids", "open_transactions", "hanging",
                                                              "defects")}
        summary.update(hanging=len(doc["hanging"]), defects=len(doc["defects"]))
        out.write(json_bytes({"type": "summary", **summary}).decode() + "\n")
        return
    doc = for_people(doc)
    console = human_console(out, piped_width=200)
    coordinators = ", ".join(doc["coordinator_partitions"]) or "none given"
    console.print(Text.assemble(("transaction log: ", "bold"), f"{coordinators} ({doc['transaction_log_records']} "
                                f"records); data partitions: {len(doc['data_partitions'])}; clock {doc['now']}"))
    if doc["transactional_ids"]:
        _table(console, [("transactional_id", "transactional id"), ("producer_id", "producer"),
                         ("producer_epoch", "epoch"), ("state", "state"), ("partitions", "partitions"),
                         ("timeout_ms", "timeout ms"), ("start_timestamp", "started"),
                         ("last_update_timestamp", "updated")], doc["transactional_ids"])
    if doc["open_transactions"]:
        _table(console, [("topic", "topic"), ("partition", "partition"), ("producer_id", "producer"),
                         ("producer_epoch", "epoch"), ("coordinator_epoch", "coord epoch"),
                         ("start_offset", "start offset"), ("last_timestamp", "last timestamp"),
                         ("duration_min", "duration min"), ("transactional_id", "transactional id"),
                         ("coordinator_state", "coordinator state"), ("last_stable_offset", "LSO")],
               doc["open_transactions"])
    else:
        console.print(Text("no open transaction in the data partitions", style="green"))
    for t in doc["open_transactions"]:
        if not t["hanging"]:
            console.print(Text(f"open, not hanging: {t['topic']}-{t['partition']} producer {t['producer_id']} since "
                               f"offset {t['start_offset']}: {t['reason']}", style="yellow"))
            continue
        opened = "" if t["open_ms"] is None else f", open {t['open_ms'] // 1000} s"
        console.print(Text.assemble(
            ("hanging transaction: ", "red bold"),
            f"{t['topic']}-{t['partition']} producer {t['producer_id']} epoch {t['producer_epoch']} from offset "
            f"{t['start_offset']}{opened}; it holds the last stable offset at {t['blocked_last_stable_offset']} "
            f"(high watermark {t['high_watermark']}). {t['reason']} [{t['reason_code']}]"))
        # On a line of its own and never wrapped: a line break inside would paste as two commands.
        console.print(Text.assemble("  to end it: ", (t["abort_command"], "bold")), soft_wrap=True)
    for d in doc["defects"]:
        where = d["file"] if d["position"] is None else f"{d['file']} @ byte {d['position']}"
        console.print(Text(f"defect: {where}: {d['field']}: {d['reason']}", style="red"))
    n = len(doc["hanging"])
    console.print(Text(f"{n} hanging transaction(s)", style="red bold" if n else "green"))
