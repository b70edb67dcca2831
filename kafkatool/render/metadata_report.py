"""Rendering ``kafkatool metadata``: the load, the image, a partition's history, the broker cross-check."""

from __future__ import annotations

import sys
from typing import Any, TextIO

import orjson
from rich.console import Console
from rich.table import Table
from rich.text import Text

from kafkatool.render.output import SEVERITY_STYLE
from kafkatool.render.safe import for_people, human_console, json_bytes

Row = dict[str, Any]


def _cell(value: Any) -> Text:
    if value is None:
        return Text("–", style="dim")
    if isinstance(value, list | tuple):
        return Text(",".join(str(v) for v in value) or "–")
    return Text(str(value))


def _table(*cols: str) -> Table:
    table = Table(box=None, show_edge=False, header_style="bold dim", title_justify="left")
    for col in cols:
        table.add_column(col, overflow="fold")
    return table


def render_metadata(doc: Row, fmt: str, out: TextIO | None = None) -> None:
    """Write the metadata document ``doc`` (its JSON shape is the ``--format json`` schema)."""
    out = out or sys.stdout
    if fmt == "json":
        out.write(json_bytes(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    if fmt == "jsonl":
        image = doc["image"]
        for b in image["brokers"]:
            out.write(json_bytes({"type": "broker", **b}).decode() + "\n")
        for t in image["topics"]:
            for p in t["partitions"]:
                out.write(json_bytes({"type": "partition", "topic": t["name"], "topic_id": t["topic_id"],
                                        **p}).decode() + "\n")
        for h in doc.get("history", []):
            out.write(json_bytes({"type": "history", **h}).decode() + "\n")
        for c in doc.get("topic_id_check", []):
            out.write(json_bytes({"type": "topic_id_check", **c}).decode() + "\n")
        for c in doc.get("log_dir_check", []):
            out.write(json_bytes({"type": "log_dir_check", **c}).decode() + "\n")
        for d in doc["defects"]:
            out.write(json_bytes({"type": "defect", **d}).decode() + "\n")
        summary = {k: v for k, v in doc.items()
                   if k not in ("image", "history", "topic_id_check", "log_dir_check", "defects")}
        summary["image"] = {k: v for k, v in image.items() if k not in ("brokers", "topics")}
        out.write(json_bytes({"type": "summary", **summary}).decode() + "\n")
        return
    _table_output(for_people(doc), human_console(out))


def _table_output(doc: Row, console: Console) -> None:
    log, snaps, image = doc["log"], doc["snapshots"], doc["image"]
    prov = image["provenance"]
    console.print(Text.assemble((doc["metadata_partition"], "bold"),
                                f"  log [{log['log_start_offset']}, {log['log_end_offset']}) epoch "
                                f"{log['latest_epoch']}; {doc['replay']['source']}; image at offset "
                                f"{prov['last_contained_offset']} epoch {prov['last_contained_epoch']}"))
    if log["bytes_truncated"]:
        console.print(Text(f"the load truncates {log['bytes_truncated']} byte(s) at the first invalid batch",
                           style="yellow"))
    console.print(Text(f"snapshots kept: {', '.join(snaps['retained']) or 'none'}; "
                       f"{snaps['truncate_to_latest_snapshot']}"))
    for d in snaps["deleted"]:
        console.print(Text(f"snapshot deleted at start-up: {d['file']} ({d['reason']})", style="yellow"))
    q = doc["quorum_state"]
    if q:
        voted = q["voted_id"] if q["voted_id"] is not None else "none"
        console.print(Text(f"quorum-state: epoch {q['epoch']}, leader {q['leader_id']}, voted {voted}"))
    quorum = doc.get("quorum")
    if quorum:
        _quorum_lines(quorum, console)
    boot = doc.get("bootstrap")
    if boot:
        console.print(Text(f"{boot['file']}: metadata.version {boot['metadata_version']}, "
                           f"{len(boot['records'])} record(s)"))
    f = image["features"]
    console.print(Text(f"metadata.version {f['metadata_version']}; features "
                       + ", ".join(f"{k}={v}" for k, v in f["finalized_levels"].items())
                       + f"; next producer id {image['producer_ids']['next_producer_id']}"))
    brokers = _table("broker", "epoch", "fenced", "controlled shutdown", "rack", "listeners")
    for b in image["brokers"]:
        brokers.add_row(_cell(b["broker_id"]), _cell(b["broker_epoch"]), _cell(b["fenced"]),
                        _cell(b["in_controlled_shutdown"]), _cell(b["rack"]),
                        _cell([f"{x['name']}://{x['host']}:{x['port']}" for x in b["listeners"]]))
    console.print(brokers)
    if image["controllers"]:
        console.print(Text("controllers: " + ", ".join(str(c["controller_id"]) for c in image["controllers"])))
    parts = _table("topic", "topic id", "partition", "replicas", "isr", "leader", "leader epoch", "partition epoch",
                   "recovery")
    for t in image["topics"]:
        for p in t["partitions"]:
            parts.add_row(Text(t["name"]), Text(t["topic_id"]), _cell(p["partition"]), _cell(p["replicas"]),
                          _cell(p["isr"]), _cell(p["leader"]), _cell(p["leader_epoch"]), _cell(p["partition_epoch"]),
                          Text(p["leader_recovery_state"]))
    console.print(parts)
    for c in image["configs"]:
        console.print(Text(f"config {c['resource_type']}:{c['resource_name']} "
                           + ", ".join(f"{k}={v}" for k, v in c["configs"].items())))
    if "history" in doc:
        hist = _table("offset", "time", "epoch", "record", "topic id", "leader", "isr", "leader epoch",
                      "partition epoch", "recovery")
        for h in doc["history"]:
            hist.add_row(_cell(h["offset"]), _cell(h["timestamp"]), _cell(h["epoch"]), Text(h["record"]),
                         Text(h["topic_id"]), _cell(h["leader"]), _cell(h["isr"]), _cell(h["leader_epoch"]),
                         _cell(h["partition_epoch"]), _cell(h["leader_recovery_state"]))
        console.print(Text("history", style="bold"))
        console.print(hist)
    if "topic_id_check" in doc:
        check = _table("partition dir", "on disk", "in image", "match", "replica", "verdict")
        for c in doc["topic_id_check"]:
            check.add_row(Text(c["partition_dir"]), _cell(c["topic_id_on_disk"]), _cell(c["topic_id_in_image"]),
                          _cell(c["match"]), _cell(c["broker_is_replica"]),
                          Text(c["verdict"], style="" if c["verdict"] == "ok" else "red"))
        console.print(Text(f"cross-check of broker {doc.get('broker_id')}", style="bold"))
        console.print(check)
        for d in doc.get("log_dir_check", []):
            state = {True: "registered", False: "NOT in the broker's registration", None: "unknown"}[d["registered"]]
            console.print(Text(f"log dir {d['log_dir']}: directory.id {d['directory_id']} {state}"))
    for d in doc["defects"]:
        where = d["file"] if d["position"] is None else f"{d['file']} @ byte {d['position']}"
        console.print(Text.assemble((d["severity"], SEVERITY_STYLE.get(d["severity"], "")),
                                    f" {where}: {d['field']}: {d['reason']}"))
    if not doc["defects"]:
        console.print(Text("no defects", style="green"))


def _quorum_lines(quorum: Row, console: Console) -> None:
    """The KRaft voter set and kraft.version the raft client starts with, and the reconfigurations in the log."""
    voters = ", ".join(
        f"{v['voter_id']}" + (f" ({v['directory_id']})" if v["directory_id"] else "")
        + (f" {','.join(v['endpoints'])}" if v["endpoints"] else "") for v in quorum["voters"]) or "none"
    console.print(Text(f"kraft.version {quorum['kraft_version']} ({quorum['kraft_version_source']}); voters {voters} "
                       f"({quorum['voters_source']})"))
    changes = [c for c in quorum["log"] if c["record"] == "VotersRecord"]
    if changes:
        console.print(Text("voter sets in the log: " + "; ".join(
            f"offset {c['offset']}: {','.join(str(v) for v in c['voters'])}" for c in changes)))
