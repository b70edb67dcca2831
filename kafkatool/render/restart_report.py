"""Rendering a simulated broker restart: the steps, the state after load, and the loss (text / json)."""

from __future__ import annotations

import sys
from typing import Any, TextIO

import orjson
from rich.console import Console
from rich.table import Table
from rich.text import Text

from kafkatool.render.safe import for_people, human_console, json_bytes

Row = dict[str, Any]
STEP_STYLE = {"truncate": "bold red", "delete-segment": "red", "fail": "bold red", "missing-index": "yellow",
              "corrupt-index": "yellow", "snapshot-delete": "dim", "snapshot-write": "dim", "snapshot-load": "dim",
              "snapshot-corrupt": "yellow", "epoch-truncate": "yellow"}


def _v(value: Any) -> str:
    return "–" if value is None else str(value)


def _partition(console: Console, p: Row) -> None:
    head = f"{p['directory']}  ({'clean' if p['clean_shutdown'] else 'unclean'} start)"
    console.print(Text(head, style="bold"))
    for i, s in enumerate(p["steps"], 1):
        console.print(Text(f"  {i:>2}. ", style="dim"), Text(s["detail"], style=STEP_STYLE.get(s["action"], "")))
    if p["outcome"] == "failed":
        console.print(Text(f"  Kafka fails to load this partition: {p['error']}", style="bold red"))
        halts = str(p["error"]).startswith("org.apache.kafka.common.errors.InvalidTxnStateException")
        console.print(Text("  The broker halts at startup (Error starting LogManager); nothing below would happen."
                           if halts else "  The broker marks the log dir offline; nothing below would happen.",
                           style="red"))
        return
    console.print(Text(
        f"  after load: log start {p['log_start_offset']}, log end {p['log_end_offset']}, recovery point "
        f"{p['recovery_point']}, high watermark {_v(p['high_watermark'])}, last stable {_v(p['last_stable_offset'])}"
        f", first unstable {_v(p['first_unstable_offset'])}"))
    table = Table(box=None, show_edge=False, header_style="bold dim", padding=(0, 2))
    for col in ("segment", "bytes", "next offset"):
        table.add_column(col, justify="right")
    for s in p["segments"]:
        table.add_row(str(s["base_offset"]), str(s["size_bytes"]), str(s["next_offset"]))
    console.print(table)
    epochs = ", ".join(f"{e['epoch']}@{e['start_offset']}" for e in p["leader_epochs"]) or "none"
    console.print(f"  leader epochs: {epochs}; producers: {len(p['producers'])}; snapshots after load: "
                  f"{', '.join(str(o) for o in p['snapshot_files_after']) or 'none'}")
    loss = p["loss"]
    if loss["bytes"] or loss["records"]:
        span = f" (offsets {loss['offsets']['from']} to {loss['offsets']['to'] - 1})" if loss["offsets"] else ""
        line = f"  LOST: {loss['bytes']} bytes dropped from the files"
        if loss["records"]:
            partial = loss.get("partial_batches") or 0
            torn = (f" ({partial} batch(es) cut short by a torn write, counted from their headers)" if partial
                    else "")
            line += (f"; {loss['records']} record(s) in {loss['batches']} batch(es){span} are no longer part of the "
                     f"log{torn}")
        if loss["producers"]:
            line += f"; producers affected: {', '.join(map(str, loss['producers']))}"
        if loss["transactions"]:
            line += f"; transactional batches lost at {', '.join(map(str, loss['transactions']))}"
        console.print(Text(line, style="bold red"))
    if loss["acknowledged"]:
        ack = loss["acknowledged"]
        console.print(Text(f"  The high-watermark checkpoint was {ack['to']}: offsets {ack['from']} to {ack['to'] - 1} "
                           "had been replicated and may have been read by consumers, and are gone from this replica",
                           style="bold red"))
    if loss.get("compacted_bytes"):
        console.print(Text(f"  a completed cleaner swap leaves {loss['compacted_bytes']} fewer bytes: records the "
                           "compaction removed (superseded by newer ones with the same key), not a loss"))
    if not (loss["bytes"] or loss["records"] or loss["acknowledged"]):
        console.print(Text("  nothing lost", style="green"))
    console.print(Text(f"  recovery cost: {p['recovery_bytes_read']} bytes re-read", style="dim"))


def render_restart(doc: Row, fmt: str, out: TextIO | None = None) -> None:
    """Write the restart document ``doc`` (its JSON shape is the ``--format json`` schema)."""
    out = out or sys.stdout
    if fmt == "json":
        out.write(json_bytes(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    if fmt == "jsonl":  # one line for the log dir, then one per partition (the json document's parts)
        head = {"type": "log_dir", **{k: v for k, v in doc.items() if k != "partitions"}}
        out.write(json_bytes(head).decode() + "\n")
        for p in doc["partitions"]:
            out.write(json_bytes({"type": "partition", **p}).decode() + "\n")
        return
    doc = for_people(doc)
    console = human_console(out, soft_wrap=True)
    marker = "present" if doc["clean_shutdown_marker"] else "absent"
    console.print(Text(f"{doc['log_dir']}: clean shutdown marker {marker}; the broker would start "
                       f"{'clean' if doc['clean_shutdown'] else 'unclean (recovery)'}; clock {doc['now']}"))
    for p in doc["partitions"]:
        _partition(console, p)
