"""Rendering a replication simulation: timeline, differences from ``expected``, violations, losses."""

from __future__ import annotations

import sys
from typing import Any, TextIO

import orjson
from rich.table import Table
from rich.text import Text

from kafkatool.render.safe import for_people, human_console, json_bytes

Row = dict[str, Any]
JSON_KEYS = ("scenario", "steps", "final", "differences", "violations")


def _short(value: Any) -> str:
    text = json_bytes(value).decode() if not isinstance(value, str) else value
    return text if len(text) <= 70 else text[:67] + "..."


def _ids(ids: list[str]) -> str:
    if len(ids) <= 6:
        return ", ".join(ids)
    return f"{', '.join(ids[:3])} … {ids[-1]} ({len(ids)})"


def isr_cell(isr: list[int], maximal: list[int] | None, pending: Row | None) -> str:
    """The committed ISR, and an AlterPartition in flight with the maximal ISR that the HW already counts.

    Kafka's Partition (PendingExpandIsr / PendingShrinkIsr): a pending addition counts for the HW at once, a
    pending removal still counts until the controller commits it.
    """
    text = ",".join(map(str, isr))
    if pending is not None:
        change = [f"+{r}" for r in pending["isr"] if r not in isr] + [f"-{r}" for r in isr if r not in pending["isr"]]
        basis = ",".join(map(str, maximal if maximal is not None else isr))
        return f"{text} ({' '.join(change) or 'no change'} pending, HW by {basis})"
    if maximal is not None and maximal != isr:
        text += f" (max {','.join(map(str, maximal))})"
    return text


def render_replication(doc: Row, fmt: str, out: TextIO | None = None) -> None:
    """Write the simulation document ``doc``; ``json`` is ``{"steps": [...], ...}``."""
    out = out or sys.stdout
    if fmt == "json":
        out.write(json_bytes({k: doc[k] for k in JSON_KEYS}, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    doc = for_people(doc)
    console = human_console(out)
    s = doc["settings"]
    console.print(Text.assemble((str(doc["scenario"]), "bold"),
                                f"  replicas {s['replicas']}, min.insync.replicas {s.get('min_insync_replicas', 1)},"
                                f" lag {s.get('replica_lag_time_max_ms')} ms, truncation "
                                f"{s.get('truncation', 'fetch_diverging_epoch')}"))
    timeline = doc["timeline"]
    replica_ids = list(timeline[0]["replicas"]) if timeline else []
    table = Table(box=None, show_edge=False, header_style="bold dim")
    table.add_column("step", justify="right")
    table.add_column("t ms", justify="right")
    table.add_column("event")
    for rid in replica_ids:
        table.add_column(f"r{rid} LEO/HW", justify="right")
    for col in ("leader", "epoch", "ISR", "acknowledged"):
        table.add_column(col, justify="right" if col in ("leader", "epoch") else "left")
    for row in timeline:
        cells = [Text(str(row["step"])), Text(str(row["t_ms"])), Text(row["event"])]
        for rid in replica_ids:
            rep = row["replicas"][rid]
            if not rep["alive"]:
                cells.append(Text(f"down ({rep['leo']})", style="red"))
            else:
                style = "bold" if rep["role"] == "leader" else ""
                mark = "*" if rep["role"] == "leader" else ""
                cells.append(Text(f"{mark}{rep['leo']}/{rep['hw']}", style=style))
        isr = isr_cell(row["isr"], row["maximal_isr"], row.get("pending_isr_change"))
        cells += [Text("–" if row["leader"] is None else str(row["leader"]), style="dim" if row["leader"] is None
                       else ""), Text(str(row["leader_epoch"])), Text(isr),
                  Text(_ids(row["newly_acknowledged"]), style="green")]
        table.add_row(*cells)
    console.print(table)
    console.print(Text("* leader; LEO/HW per replica; a crashed replica shows its on-disk LEO", style="dim"))
    if any(row.get("pending_isr_change") for row in timeline):
        console.print(Text("ISR: committed; (+N/-N pending, HW by ...): an AlterPartition in flight; the leader's HW "
                           "already counts a pending addition and still counts a pending removal", style="dim"))
    if doc["has_expected"]:
        diffs = doc["differences"]
        if diffs:
            console.print(Text(f"{len(diffs)} difference(s) from the scenario's expected steps:", style="red bold"))
            dt = Table(box=None, show_edge=False, header_style="bold")
            for col in ("step", "field", "expected", "simulated"):
                dt.add_column(col, overflow="fold")
            for d in diffs:
                dt.add_row(str(d["step"]), d["path"], _short(d["expected"]), _short(d["actual"]))
            console.print(dt)
        else:
            console.print(Text("every step matches the scenario's expected steps", style="green"))
    for v in doc["violations"]:
        console.print(Text.assemble(("invariant violated ", "red bold"), f"after step {v['step']} ({v['rule']}): ",
                                    v["message"]))
    final = doc["final"]
    console.print(Text.assemble(("losses", "bold"), f"  final leader {final['leader']}"))
    lost = final["acknowledged_lost"]
    committed = final["committed_lost"]
    console.print(Text(f"acknowledged records lost: {_ids(lost) if lost else 'none'}",
                       style="red bold" if lost else "green"))
    console.print(Text(f"committed records (once below a leader's HW) lost: {_ids(committed) if committed else 'none'}",
                       style="red bold" if committed else "green"))
    for rid, diverged in final["diverged_from_leader"].items():
        if diverged:
            console.print(Text(f"replica {rid}'s log differs from the leader's within their common length",
                               style="yellow"))


def render_replica_set(doc: dict[str, Any], fmt: str, out: TextIO | None = None) -> None:
    """The replica-set comparison: per pair where the follower truncates, per candidate what is lost."""
    out = out or sys.stdout
    if fmt == "json":
        out.write(json_bytes(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    doc = for_people(doc)
    console = human_console(out)
    console.print(Text.assemble((doc["partition"], "bold"), f"  leader {doc['leader']}, ISR {doc['isr']}, "
                                f"a new election would use epoch {doc['next_leader_epoch']}"))
    reps = Table(box=None, show_edge=False, header_style="bold dim")
    for col in ("broker", "log end", "high watermark", "leader epochs"):
        reps.add_column(col, justify="right")
    for r in doc["replicas"]:
        reps.add_row(str(r["broker"]), str(r["log_end_offset"]), str(r["high_watermark"]),
                     " ".join(f"{e}@{o}" for e, o in r["leader_epochs"]))
    console.print(reps)
    pairs = Table(box=None, show_edge=False, header_style="bold", title="if LEADER led, FOLLOWER would",
                  title_justify="left")
    for col in ("leader", "follower", "diverges at", "truncate to", "records lost", "relation"):
        pairs.add_column(col, justify="left" if col == "relation" else "right")
    for p in doc["pairs"]:
        lost = p["lost_record_count"]
        pairs.add_row(str(p["leader"]), str(p["follower"]), "–" if p["divergence_offset"] is None
                      else str(p["divergence_offset"]), str(p["truncation_offset"]),
                      Text(str(lost), style="red" if lost else ""), p["relation"])
    console.print(pairs)
    elections = Table(box=None, show_edge=False, header_style="bold", title="electing CANDIDATE would",
                      title_justify="left")
    for col in ("candidate", "election", "acknowledged records lost", "batches"):
        elections.add_column(col, justify="right" if col != "batches" else "left", overflow="fold")
    for e in doc["elections"]:
        n = e["lost_acknowledged_record_count"]
        elections.add_row(str(e["candidate"]), "clean" if e["clean"] else Text("unclean", style="yellow"),
                          Text(str(n), style="red bold" if n else "green"),
                          ", ".join(str(b) for b in e["lost_acknowledged_batches"][:12])
                          + (" …" if len(e["lost_acknowledged_batches"]) > 12 else ""))
    console.print(elections)
