"""Rendering ``salvage``'s account: per partition what Kafka's recovery keeps, what salvage keeps beyond it and
from where, the offsets lost everywhere and the conflicts (table / json / jsonl)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

import orjson
from rich.console import Console
from rich.table import Table
from rich.text import Text

from kafkatool.render.safe import for_people, human_console, json_text, printable

Row = dict[str, Any]


def _v(value: Any) -> str:
    return "–" if value is None else str(value)


def _partition(console: Console, p: Row) -> None:
    k, s = p["kafka"], p["salvage"]
    console.print(Text(p["partition"], style="bold"))
    if k is None:
        console.print("  Kafka's recovery: no live copy of this partition in the inputs")
    elif k["outcome"] != "loaded":
        console.print(Text(f"  Kafka's recovery: fails to load ({k['error']})", style="red"))
    else:
        lost = f", loses {k['records_lost']} record(s)" if k["records_lost"] else ""
        console.print(f"  Kafka's recovery keeps {k['records']} record(s), offsets {_v(k['log_start_offset'])} to "
                      f"{_v(k['log_end_offset'])} (end){lost}")
    style = "bold green" if s["records_beyond_kafka"] else ""
    console.print(Text(f"  salvage keeps {s['records']} record(s) in {s['batches']} batch(es), offsets "
                       f"{s['log_start_offset']} to {s['log_end_offset']} (end): {s['records_beyond_kafka']} beyond "
                       "Kafka's recovery", style=style))
    t = s["transactions"]
    console.print(f"  transactions: {t['committed']} committed, {t['aborted']} aborted, {t['open']} open, "
                  f"{t['none']} outside; chosen by the {s['choice']}")
    table = Table(box=None, show_edge=False, header_style="bold dim", padding=(0, 1))
    for col, just in (("source", "left"), ("kind", "left"), ("records", "right"), ("beyond", "right"),
                      ("offsets", "right")):
        table.add_column(col, justify=just, overflow="fold")  # type: ignore[arg-type]
    for src in p["sources"]:
        table.add_row(src["file"], src["kind"], str(src["records"]), str(src["records_beyond_kafka"]),
                      f"{src['from']}-{src['to']}")
    console.print(table)
    for g in p["lost"][:LOST_SHOWN]:
        where = "; ".join(f"{d['file']} byte {d['position']}" for d in g["damage"])
        console.print(Text(f"  LOST everywhere: offsets {g['from']}-{g['to']} ({g['count']}): {g['why']}"
                           + (f" ({where})" if where else ""), style="red"))
    if p["lost_ranges"] > LOST_SHOWN:
        console.print(Text(f"  ... {p['lost_ranges'] - LOST_SHOWN} more offset range(s) lost everywhere "
                           f"({p['lost_offsets']} offset(s) in all; -f json lists the first ones)", style="red"))
    for c in p["conflicts"]:
        off = f"offsets {c['offsets']['from']}-{c['offsets']['to']}" if c["offsets"] else "offsets"
        kept = ", ".join(f"{x['file']}@{x['position']}" for x in c["kept"])
        console.print(Text(f"  CONFLICT {off}: {c['reason']}: kept {kept}, left out {c['left_out']['file']}@"
                           f"{c['left_out']['position']} (epoch {c['left_out']['leader_epoch']})", style="yellow"))
    for r in p["rejected"]:
        console.print(Text(f"  left out {r['file']} byte {r['position']}: {r['reason']}", style="yellow"))
    if p["defects"]:
        console.print(Text(f"  {len(p['defects'])} defect(s) skipped in the sources (see -f json)", style="dim"))


LOST_SHOWN = 20
"""The lost offset ranges the table names one by one (a compacted partition can have millions)."""


def wants_bar(*, quiet: bool, err: TextIO | None = None) -> bool:
    """A re-produce progress bar: stderr is a terminal and ``--quiet`` was not given."""
    stream = err or sys.stderr
    try:
        return not quiet and stream.isatty()
    except (AttributeError, ValueError):
        return False


@contextmanager
def count_progress(total: int, description: str, *, enabled: bool,
                   err: TextIO | None = None) -> Iterator[Callable[[int], None]]:
    """A progress bar over ``total`` records on stderr (a no-op when not ``enabled``); yields ``advance(n)``."""
    if not enabled:
        yield lambda n: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=Console(file=err or sys.stderr), transient=True) as bar:
        task = bar.add_task(for_people(description), total=max(total, 1))
        yield lambda n: bar.advance(task, n)


def _reproduce(console: Console, r: Row) -> None:
    verb = "would send" if r["dry_run"] else "sent"
    sent = r["would_send"] if r["dry_run"] else r["sent"]
    console.print(Text(f"re-produce to {r['target']} ({r['partitioning']} partitioning): {sent} record(s) {verb}, "
                       f"{r['skipped']} skipped (delivered by an earlier run; {r['found_in_target']} found in the "
                       f"target's tail), {r['refused']} refused, {r['left_out']} left out (aborted or open "
                       "transactions" + ("" if r["include_aborted"] else "; --include-aborted sends them") + ")",
                       style="bold"))
    for name, s in r["partitions"].items():
        console.print(f"  {name} -> {s['target']}: {s['sent']} {verb}, {s['skipped']} skipped, {s['refused']} "
                      f"refused, {s['left_out']} left out")
    for x in r["refusals"]:
        console.print(Text(f"  refused {x['partition']} offset {x['offset']}: {x['error']}", style="red"))
    if r["stopped"]:
        console.print(Text(f"  stopped: {r['stopped']} (rerun with the same --progress to resume)", style="red"))


def render_salvage(doc: Row, fmt: str, out: TextIO | None = None) -> None:
    """Write the salvage account ``doc`` (its JSON shape is the ``--format json`` schema)."""
    out = out or sys.stdout
    if fmt == "json":
        out.write(json_text(doc, option=orjson.OPT_INDENT_2) + "\n")
        return
    if fmt == "jsonl":
        head = {"type": "salvage", **{k: v for k, v in doc.items() if k != "partitions"}}
        out.write(json_text(head) + "\n")
        for p in doc["partitions"]:
            out.write(json_text({"type": "partition", **p}) + "\n")
        return
    doc = for_people(doc)
    console = human_console(out, soft_wrap=False)
    for entry in doc.get("not_read", []):
        console.print(Text(f"not read: {printable(entry['file'])}: {printable(entry['reason'])} ({entry['code']})",
                           style="red"))
    for p in doc["partitions"]:
        _partition(console, p)
    t = doc["totals"]
    console.print(Text(f"total: Kafka's recovery keeps {t['kafka_records']} record(s); salvage keeps "
                       f"{t['records']} ({t['records_beyond_kafka']} beyond); {t['lost_offsets']} offset(s) lost "
                       f"everywhere; {t['conflicts']} conflict(s)", style="bold"))
    if doc.get("reproduce"):
        _reproduce(console, doc["reproduce"])
