"""Rendering a producer-state replay: producers, transactions, anomalies (table / json / jsonl)."""

from __future__ import annotations

import sys
from typing import Any, TextIO

import orjson
from rich.table import Table
from rich.text import Text

from kafkatool.render.output import SEVERITY_STYLE
from kafkatool.render.safe import for_people, human_console, json_bytes
from kafkatool.shell import command

Row = dict[str, Any]


def _cell(value: Any) -> Text:
    return Text("–", style="dim") if value is None else Text(str(value))


def render_replay(doc: Row, fmt: str, out: TextIO | None = None, *, show_info: bool = False) -> None:
    """Write the replay document ``doc`` (its JSON shape is the ``--format json`` schema)."""
    out = out or sys.stdout
    if fmt == "json":
        out.write(json_bytes(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    if fmt == "jsonl":
        for p in doc["producers"]:
            out.write(json_bytes({"type": "producer", **p}).decode() + "\n")
        for t in doc["transactions"]["items"]:
            out.write(json_bytes({"type": "transaction", **t}).decode() + "\n")
        for a in doc["anomalies"]:
            out.write(json_bytes({"type": "anomaly", **a}).decode() + "\n")
        summary = {k: v for k, v in doc.items() if k not in ("producers", "anomalies")}
        summary["transactions"] = {k: v for k, v in doc["transactions"].items() if k != "items"}
        out.write(json_bytes({"type": "summary", **summary}).decode() + "\n")
        return
    # Built from the raw names, each argument quoted (a topic is a directory name anyone could have chosen).
    abort = {h["first_offset"]: command("kafka-transactions.sh", "abort", "--topic", doc["topic"], "--partition",
                                        doc["partition_number"], "--start-offset", h["first_offset"])
             for h in doc["hanging"]}
    doc = for_people(doc)
    console = human_console(out)
    start = doc["start"]
    origin = f"snapshot {start['snapshot']}" if start["snapshot"] else "the log start"
    console.print(Text.assemble((doc["partition"], "bold"), f"  replayed from {origin} (offset {start['offset']}) "
                                f"to offset {doc['end_offset']}; {doc['snapshots_compared']} snapshot file(s) "
                                "compared", style=""))
    if doc["producers"]:
        table = Table(box=None, show_edge=False, header_style="bold dim", title_justify="left")
        for col in ("producer", "epoch", "first seq", "last seq", "first offset", "last offset", "coord epoch",
                    "open txn from", "last timestamp", "cached"):
            table.add_column(col, justify="right")
        for p in doc["producers"]:
            table.add_row(*(_cell(p[k]) for k in ("producer_id", "producer_epoch", "first_sequence", "last_sequence",
                                                  "first_offset", "last_offset", "coordinator_epoch",
                                                  "current_txn_first_offset", "last_timestamp")),
                          Text(str(len(p["cached_batches"]))))
        console.print(table)
    else:
        console.print(Text("no idempotent or transactional producer in this range", style="dim"))
    txns = doc["transactions"]
    line = (f"transactions: {txns['committed']} committed, {txns['aborted']} aborted, {txns['open']} open; "
            f"last stable offset {doc['last_stable_offset']}")
    if doc["first_unstable_offset"] is not None:
        line += f" (held back by the transaction at {doc['first_unstable_offset']})"
    console.print(Text(line))
    for t in txns["items"]:
        if t["state"] == "open" and t["first_offset"] not in {h["first_offset"] for h in doc["hanging"]}:
            console.print(Text(f"open transaction: producer {t['producer_id']} epoch {t['producer_epoch']} since "
                               f"offset {t['first_offset']}", style="yellow"))
    for h in doc["hanging"]:
        console.print(Text.assemble(("hanging transaction: ", "red bold"),
                                    f"producer {h['producer_id']} epoch {h['producer_epoch']} open since offset "
                                    f"{h['first_offset']} ({h['open_ms'] // 60000} min): it blocks read_committed "
                                    f"consumers at offset {h['first_offset']}. To end it:"))
        # On a line of its own and never wrapped: a line break inside would paste as two commands.
        console.print(Text.assemble("  ", (abort[h["first_offset"]], "bold")), soft_wrap=True)
    anomalies = [a for a in doc["anomalies"] if show_info or a["severity"] != "info"]
    if anomalies:
        table = Table(box=None, show_edge=False, header_style="bold")
        for col, just in (("severity", "left"), ("code", "left"), ("offset", "right"), ("producer", "right"),
                          ("what it means", "left")):
            table.add_column(col, justify=just, overflow="fold")
        for a in anomalies:
            table.add_row(Text(a["severity"], style=SEVERITY_STYLE.get(a["severity"], "")), Text(a["code"]),
                          _cell(a["offset"]), _cell(a["producer_id"]), Text(a["message"]))
        console.print(table)
    for u in doc.get("anomalies_unlisted", []):
        if show_info or u["severity"] != "info":
            console.print(Text(f"{u['count']} more {u['code']} anomalies, counted but not listed (the first "
                               "1000 of each kind are)", style=SEVERITY_STYLE.get(u["severity"], "")))
    counts = doc["anomaly_counts"]
    verdict = Text.assemble((f"{counts['error']} error(s), {counts['warning']} warning(s)",
                             "red bold" if counts["error"] else "yellow bold" if counts["warning"] else "green"),
                            f", {counts['info']} note(s)")
    console.print(verdict)
