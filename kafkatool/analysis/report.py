"""The incident report's document (``kafkatool report``): the same analyses as ``check``, ``replay-producers``,
``simulate-restart``, ``transactions``, ``groups`` and, when several brokers hold the same partition,
``simulate-replication``'s replica mode, run on the same inputs and put side by side for the HTML renderer.
Nothing here decides anything those analyses do not; the judgement is ``analysis.verdict``'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from kafkatool.analysis.findings import broker_identity_findings, log_dir_findings, sort_findings
from kafkatool.analysis.groups import groups_document
from kafkatool.analysis.metadata import topic_remote_storage
from kafkatool.analysis.replay import DEFAULT_TXN_TIMEOUT_MS, cluster_transaction_version, replay_document
from kafkatool.analysis.replica_sets import analyse
from kafkatool.analysis.restart import restart_document
from kafkatool.analysis.salvage import salvage, salvage_document
from kafkatool.analysis.transactions import transactions_document
from kafkatool.analysis.verdict import follower_losses, restart_marks, verdict
from kafkatool.engine.replay import replay
from kafkatool.engine.restart import RestartOptions, simulate_restart
from kafkatool.errors import UsageError
from kafkatool.model import LogDirData, PartitionData, RecordBatch
from kafkatool.reading.logdir import read_log_dir
from kafkatool.reading.objects import input_path
from kafkatool.reading.restart_inputs import RestartInputs, read_restart_inputs
from kafkatool.reading.scan_memo import remembering
from kafkatool.schema.filenames import REPLICATION_OFFSET_CHECKPOINT
from kafkatool.schema.group_coordinator import OFFSETS_TOPIC
from kafkatool.schema.transaction_log import TRANSACTION_TOPIC
from kafkatool.shell import command

# Sections contributed by other analyses (e.g. internal topics): each takes the report document and the
# decoded log dirs and returns ``{"id", "title", "intro", "columns", "rows", "commands"}`` or ``None``.
SectionHook = Callable[[dict[str, Any], list[tuple[str, LogDirData]]], dict[str, Any] | None]


def transactions_section(doc: dict[str, Any], inputs: list[tuple[str, LogDirData]]) -> dict[str, Any] | None:
    """Open and hanging transactions from ``__transaction_state`` joined with the data partitions, as
    ``kafkatool transactions`` finds them; only when a transaction-log partition is among the inputs."""
    if not any(p.topic_partition is not None and p.topic_partition.topic == TRANSACTION_TOPIC
               for _, data in inputs for p in data.partitions):
        return None
    paths = [path for path, _ in inputs]
    txn = transactions_document(paths, now=doc["now"], timeout_ms=doc["transaction_timeout_ms"],
                                bootstrap="localhost:9092", kafka_version=doc.get("kafka_version"))
    rows = [[t.get("transactional_id"), t["directory"], t["producer_id"], t["producer_epoch"], t["start_offset"],
             t.get("coordinator_state"), "yes" if t["hanging"] else "no", t["last_stable_offset"], t["reason"],
             t["abort_command"] if t["hanging"] else ""] for t in txn["open_transactions"]]
    now_args = [] if doc["now"] is None else ["--now", doc["now"]]
    return {
        "id": "transactions", "title": "Transactions (__transaction_state)",
        "intro": f"{len(txn['transactional_ids'])} transactional id(s) in the transaction log; "
                 f"{len(txn['open_transactions'])} open transaction(s) in the data partitions, "
                 f"{len(txn['hanging'])} hanging.",
        "columns": ["transactional id", "partition", "producer", "epoch", "start offset", "coordinator state",
                    "hanging", "LSO held at", "why", "abort with"],
        "rows": rows,
        "commands": [command("kafkatool", "transactions", *now_args, *paths)],
        "level": "damaged" if txn["hanging"] or txn["defects"] else "healthy",
        "reasons": [f"transaction log: {t.get('transactional_id')} hangs on {t['directory']} since offset "
                    f"{t['start_offset']} ({t['reason_code']})." for t in txn["hanging"]],
    }


def groups_section(doc: dict[str, Any], inputs: list[tuple[str, LogDirData]]) -> dict[str, Any] | None:
    """Consumer groups' committed offsets from ``__consumer_offsets`` with their lag, as ``kafkatool groups``
    lists them; only when an offsets-topic partition is among the inputs. A commit beyond its partition's log
    end means consumers had records the log no longer holds (e.g. cut by a truncation after a failover)."""
    if not any(p.topic_partition is not None and p.topic_partition.topic == OFFSETS_TOPIC
               for _, data in inputs for p in data.partitions):
        return None
    paths = [path for path, _ in inputs]
    grp = groups_document(paths)
    rows = [[o["group"], f"{o['topic']}-{o['partition']}", o["committed_offset"], o["log_start_offset"],
             o["log_end_offset"], o["lag"], o["problem"] or "", o["message"] or ""] for o in grp["offsets"]]
    problems = grp["problems"]
    return {
        "id": "groups", "title": "Consumer groups (__consumer_offsets)",
        "intro": f"{len(grp['groups'])} consumer group(s), {len(grp['offsets'])} committed offset(s), "
                 f"{len(problems)} outside their partition's log. Lag is against the log end found in these "
                 "log dirs (empty when the partition is not among them).",
        "columns": ["group", "partition", "committed", "log start", "log end", "lag", "problem", "why"],
        "rows": rows,
        "commands": [command("kafkatool", "groups", *paths)],
        "level": "damaged" if problems else "healthy",
        "reasons": [f"consumer group {o['group']}: committed offset {o['committed_offset']} on "
                    f"{o['topic']}-{o['partition']} is {o['problem']} ({o['message']})." for o in problems],
    }


SALVAGE_SECTION_MAX_BATCHES = 100_000
"""Above this many batches in the inputs the report's salvage section names the commands instead of running
salvage, which reads every batch of every copy again and compares the copies (bounded by 200 MB, not by the
report's 150 MB, and minutes of Python per million one-record batches: 461 s for 1 GiB of them, 2026-11-28)."""


def _needs_salvage(doc: dict[str, Any]) -> bool:
    return any(p["marks"]["failed"] or p["marks"]["truncate_at"] is not None for p in doc["partitions"]) or any(
        f["severity"] == "error" for f in doc["findings"])


def salvage_section(doc: dict[str, Any], inputs: list[tuple[str, LogDirData]]) -> dict[str, Any] | None:
    """What ``kafkatool salvage`` keeps beside what Kafka's recovery keeps, per partition and by source, the
    offsets lost everywhere and the conflicts between copies; only when a restart would cut or fail to load a
    partition, or check found an error (on a healthy log dir salvage keeps what Kafka keeps)."""
    if not _needs_salvage(doc):
        return None
    nodes = [data.meta_properties.node_id if data.meta_properties is not None else None for _, data in inputs]
    as_replicas = len(inputs) > 1 and None not in nodes and len(set(nodes)) == len(nodes)
    paths = [input_path(path) for path, _ in inputs]
    replicas = {int(n): p for n, p in zip(nodes, paths, strict=True)} if as_replicas else {}
    args = [a for n, p in replicas.items() for a in ("--replica", f"{n}={p}")] if as_replicas else list(map(str, paths))
    now_args = ["--now", doc["now"]] if doc["now"] is not None else []
    commands = [command("kafkatool", "salvage", *now_args, *args),
                command("kafkatool", "salvage", *now_args, "--out", "/restore/logdir", "--export",
                        "/restore/records.parquet", *args)]
    batches = sum(len(seg.entries) for _, data in inputs for part in data.partitions for seg in part.segments)
    if batches > SALVAGE_SECTION_MAX_BATCHES:
        return {
            "id": "salvage", "title": "Salvage: what can be saved beyond Kafka's recovery",
            "intro": f"Not computed in this report: the log dirs hold {batches} batches, more than "
                     f"{SALVAGE_SECTION_MAX_BATCHES} (salvage reads every batch of every copy again and weighs the "
                     "copies against each other: minutes on millions of batches). Run kafkatool "
                     "salvage for the account, and to write the repaired log dir or re-produce the records.",
            "columns": [], "rows": [], "tables": [], "commands": commands, "level": "healthy", "reasons": [],
        }
    clock = doc["now"] if doc["now"] is not None else int(time.time() * 1000)
    with remembering():  # each small segment read once for Kafka's view and salvage's scan
        acc = salvage_document(salvage([] if as_replicas else paths, replicas, now=clock))
    parts = acc["partitions"]
    t = acc["totals"]
    kept = [[p["partition"], (p["kafka"] or {}).get("records"), (p["kafka"] or {}).get("records_lost"),
             "fails to load" if p["kafka"] and p["kafka"]["outcome"] != "loaded" else
             ("no live copy" if p["kafka"] is None else (p["kafka"] or {}).get("log_end_offset")),
             p["salvage"]["records"], p["salvage"]["records_beyond_kafka"], p["salvage"]["log_end_offset"],
             p["lost_offsets"], len(p["conflicts"])] for p in parts]
    sources = [[p["partition"], s["file"], s["kind"], s["replica"], s["records"], s["records_beyond_kafka"],
                f"{s['from']}-{s['to']}"] for p in parts for s in p["sources"]]
    lost = [[p["partition"], g["from"], g["to"], g["count"], g["why"],
             "; ".join(f"{d['file']} byte {d['position']}" for d in g["damage"])] for p in parts for g in p["lost"]]
    conflicts = [[p["partition"], f"{c['offsets']['from']}-{c['offsets']['to']}" if c["offsets"] else "", c["reason"],
                  ", ".join(f"{k['file']} byte {k['position']} (epoch {k['leader_epoch']})" for k in c["kept"]),
                  f"{c['left_out']['file']} byte {c['left_out']['position']} (epoch {c['left_out']['leader_epoch']})"]
                 for p in parts for c in p["conflicts"]]
    tables = [{"caption": "Kafka's recovery against salvage, per partition", "id": "salvage-partitions",
               "columns": ["partition", "Kafka keeps (records)", "Kafka loses", "Kafka's log end", "salvage keeps",
                           "beyond Kafka", "salvage's log end", "offsets lost everywhere", "conflicts"],
               "rows": kept, "numeric": [1, 2, 3, 4, 5, 6, 7, 8]},
              {"caption": "Where salvage's records come from", "id": "salvage-sources",
               "columns": ["partition", "source", "kind", "replica", "records", "beyond Kafka", "offsets"],
               "rows": sources, "numeric": [3, 4, 5]}]
    if lost:
        tables.append({"caption": "Offsets no trustworthy batch of any copy holds", "id": "salvage-lost",
                       "columns": ["partition", "from", "to", "count", "why", "damage"], "rows": lost,
                       "numeric": [1, 2, 3]})
    if conflicts:
        tables.append({"caption": "Conflicts: copies holding other records at the same offsets",
                       "id": "salvage-conflicts",
                       "columns": ["partition", "offsets", "why", "kept", "left out"], "rows": conflicts})
    beyond = t["records_beyond_kafka"]
    return {
        "id": "salvage", "title": "Salvage: what can be saved beyond Kafka's recovery",
        "intro": f"Kafka's recovery keeps {t['kafka_records']} record(s); salvage keeps {t['records']}, "
                 f"{beyond} of them beyond Kafka's recovery (every CRC-valid batch of every copy and leftover, "
                 f"byte for byte at its offset); {t['lost_offsets']} offset(s) are lost everywhere; "
                 f"{t['conflicts']} conflict(s) between copies. Write the repaired log dir with --out, or "
                 "re-produce the records into a live cluster with --produce-to.",
        "columns": [], "rows": [], "tables": tables,
        "commands": commands,
        "level": "healthy",
        "reasons": [f"salvage: {beyond} record(s) that Kafka's recovery drops can be saved (see Salvage)."]
        if beyond else [],
    }


SECTION_HOOKS: list[SectionHook] = [transactions_section, groups_section, salvage_section]


#: The producer plot resolves at most this many offset steps across a partition: spans of one producer closer
#: than one step are merged as they are read (a chart cannot show them apart, and a log of interleaved producers
#: would otherwise make a span per batch).
PLOT_STEPS = 2000


def producer_spans(part: PartitionData) -> list[dict[str, Any]]:
    """Each producer's data batches as offset ranges, consecutive batches merged (for the producer plot); in a
    partition of more than :data:`PLOT_STEPS` offsets, also those less than a step apart."""
    spans: list[dict[str, Any]] = []
    last: dict[tuple[int, bool], dict[str, Any]] = {}  # per producer and kind: spans merge across the other kind
    first_base = part.segments[0].base_offset if part.segments else 0
    step = max(1, (part.log_end_offset - first_base) // PLOT_STEPS)
    for seg in part.segments:
        for e in seg.entries:
            if not isinstance(e, RecordBatch) or e.producer_id < 0 or e.is_control:
                continue
            key = (e.producer_id, e.is_transactional)
            prev = last.get(key)
            if prev is not None and prev["last_offset"] + step >= e.base_offset:
                prev["last_offset"] = e.last_offset
                continue
            span = {"producer_id": e.producer_id, "first_offset": e.base_offset, "last_offset": e.last_offset,
                    "transactional": e.is_transactional}
            spans.append(span)
            last[key] = span
    return spans


def epoch_runs(part: PartitionData) -> list[dict[str, Any]]:
    """A replica's magic 2 batches as runs: contiguous batches of one leader epoch merged into one range
    (nothing is lost for the side-by-side plot, and a log of small batches stays a handful of rows)."""
    runs: list[dict[str, Any]] = []
    for s in part.segments:
        for e in s.entries:
            if not isinstance(e, RecordBatch):
                continue
            prev = runs[-1] if runs else None
            if prev is not None and prev["epoch"] == e.partition_leader_epoch \
                    and prev["last_offset"] + 1 == e.base_offset:
                prev["last_offset"] = e.last_offset
            else:
                runs.append({"base_offset": e.base_offset, "last_offset": e.last_offset,
                             "epoch": e.partition_leader_epoch})
    return runs


def segments_on_disk(part: PartitionData) -> list[dict[str, Any]]:
    """The segments as read: offsets held, bytes, bytes that are not a valid batch, defects."""
    return [{"base_offset": s.base_offset, "next_offset": s.next_offset, "size_bytes": s.log_size,
             "valid_bytes": s.valid_bytes, "file": s.log_file, "defects": len(s.defects)} for s in part.segments]


def _label(path: str, data: LogDirData) -> str:
    node = data.meta_properties.node_id if data.meta_properties is not None else None
    return f"broker {node}" if node is not None else path


def analyse_path(path: str, inputs: RestartInputs, *, now: int | None, timeout_ms: int,
                 advance: Callable[[int], None] = lambda n: None, kafka_version: str | None = None) -> dict[str, Any]:
    """One input path: check findings, the simulated restart and a producer replay of each partition
    (``advance(n)``: the segment bytes of each partition analysed), following the transaction version of the
    path's metadata log, else the batches', else ``kafka_version``."""
    data = inputs.log_dir
    checked = data if not inputs.single_partition else read_log_dir(path)
    findings = log_dir_findings(checked, log_dir=path, swaps=inputs.swaps)
    clock = now if now is not None else int(time.time() * 1000)
    result = simulate_restart(data, inputs.swaps, RestartOptions(now=clock), remote=inputs.tiered.remote,
                              remote_enabled=topic_remote_storage(path))
    restart_doc = restart_document(result)
    by_dir = {p["directory"]: p for p in restart_doc["partitions"]}
    label = _label(path, data)
    cluster = None if inputs.single_partition else cluster_transaction_version(input_path(path))
    now_args = ["--now", now] if now is not None else []
    partitions = []
    for part in data.partitions:
        r = by_dir.get(part.directory)
        if r is None:
            continue
        part_path = path if inputs.single_partition else str(input_path(path) / part.directory)
        rep = replay(part, cluster=cluster, kafka_version=kafka_version)
        advance(sum(s.log_size for s in part.segments))
        tp = part.topic_partition
        rdoc = replay_document(rep, directory=part.directory, topic=tp.topic if tp else part.directory,
                               partition=tp.partition if tp else None,
                               high_watermark=data.checkpoint(REPLICATION_OFFSET_CHECKPOINT, tp),
                               now=now if now is not None else rep.manager.last_timestamp, timeout_ms=timeout_ms)
        timeout_args = ["--transaction-timeout-ms", timeout_ms] if timeout_ms != DEFAULT_TXN_TIMEOUT_MS else []
        partitions.append({
            "log_dir": path, "log_dir_label": label, "directory": part.directory,
            "restart": r, "marks": restart_marks(r), "replay": rdoc,
            "segments_on_disk": segments_on_disk(part),
            "epochs_on_disk": [{"epoch": e.epoch, "start_offset": e.start_offset} for e in part.leader_epochs or []],
            "producer_spans": producer_spans(part),
            "commands": {
                "segments": command("kafkatool", "simulate-restart", "--partition", part.directory, *now_args, path),
                "epochs": command("kafkatool", "dump-segment", part_path + "/leader-epoch-checkpoint"),
                "producers": command("kafkatool", "replay-producers", *now_args, *timeout_args, part_path),
                "damage": command("kafkatool", "dump-segment", "--verify", part_path),
            },
        })
    return {"path": path, "label": label, "data": checked, "findings": findings, "partitions": partitions,
            "clean_shutdown_marker": result.marker_present}


def replica_groups(paths: list[dict[str, Any]]) -> dict[str, dict[int, str]]:
    """Partitions held by several of the inputs, keyed by directory: broker id (meta.properties) to path."""
    groups: dict[str, dict[int, str]] = {}
    for i, p in enumerate(paths):
        meta = p["data"].meta_properties
        broker = meta.node_id if meta is not None and meta.node_id is not None else i + 1
        for part in p["partitions"]:
            group = groups.setdefault(part["directory"], {})
            if broker in group:
                raise UsageError(f"{p['path']} and {group[broker]} are both broker {broker} "
                                 f"(meta.properties): give each broker's log dir once")
            group[broker] = p["path"]
    return {k: v for k, v in groups.items() if len(v) >= 2}


def replica_set(partition: str, brokers: dict[int, str], paths: list[dict[str, Any]], *, leader: int | None,
                isr: list[int] | None, leader_epoch: int | None, now: int | None) -> dict[str, Any]:
    """simulate-replication's replica mode on one partition held by several brokers."""
    if leader is None:
        # The replica with the newest leader epoch, then the longest log: the one a controller last elected.
        def rank(b: int) -> tuple[int, int]:
            part = next(q for p in paths if p["path"] == brokers[b] for q in p["partitions"]
                        if q["directory"] == partition)
            epochs = part["restart"]["leader_epochs"]
            return (epochs[-1]["epoch"] if epochs else -1, part["restart"]["log_end_offset"] or 0)

        chosen = max(sorted(brokers), key=rank)
    elif leader not in brokers:
        raise UsageError(f"--leader {leader} is not one of the brokers holding {partition}: {sorted(brokers)}")
    else:
        chosen = leader
    members = [b for b in (isr or sorted(brokers)) if b in brokers] or sorted(brokers)
    clock = now if now is not None else int(time.time() * 1000)
    doc = analyse({b: input_path(p) for b, p in brokers.items()}, partition=partition, leader=chosen, isr=members,
                  leader_epoch=leader_epoch, now=clock)
    args = [a for b in sorted(brokers) for a in ("--replica", f"{b}={brokers[b]}")]
    line = command("kafkatool", "simulate-replication", *args, "--partition", partition, "--leader", chosen,
                   "--isr", ",".join(map(str, members)),
                   *(["--leader-epoch", leader_epoch] if leader_epoch is not None else []),
                   *(["--now", now] if now is not None else []))
    batches: dict[int, list[dict[str, Any]]] = {}
    for b, p in brokers.items():
        part = next(q for x in paths if x["path"] == p for q in x["data"].partitions if q.directory == partition)
        batches[b] = epoch_runs(part)
    doc.update({"leader_chosen_by": "--leader" if leader is not None else "newest leader epoch",
                "isr_given": isr is not None, "command": line, "batches": batches,
                "follower_losses": follower_losses(doc)})
    return doc


def build_report(paths: list[str], *, now: int | None, timeout_ms: int, leader: int | None, isr: list[int] | None,
                 leader_epoch: int | None, advance: Callable[[int], None] = lambda n: None,
                 kafka_version: str | None = None) -> dict[str, Any]:
    """The whole report document (see ``render/html_report``); ``advance(n)`` counts segment bytes read, then
    analysed (twice the segment bytes in all); ``kafka_version``: as ``replay-producers --kafka-version``."""
    analysed = [analyse_path(p, read_restart_inputs(p, advance), now=now, timeout_ms=timeout_ms, advance=advance,
                             kafka_version=kafka_version) for p in paths]
    findings = [f for a in analysed for f in a["findings"]]
    brokers = broker_groups(analysed)
    for group in brokers.values():
        findings += broker_identity_findings([a["data"] for a in group])
    sort_findings(findings)
    groups = replica_groups(analysed)
    known = {b for group in groups.values() for b in group} | {
        a["data"].meta_properties.node_id for a in analysed
        if a["data"].meta_properties is not None and a["data"].meta_properties.node_id is not None}
    unknown = sorted(set(isr or []) - known)
    if unknown:
        raise UsageError(f"--isr {','.join(map(str, unknown))}: no such broker among the inputs "
                         f"(brokers: {', '.join(map(str, sorted(known))) or 'none with a node.id'})")
    doc: dict[str, Any] = {
        "inputs": [{"path": a["path"], "label": a["label"], "clean_shutdown_marker": a["clean_shutdown_marker"]}
                   for a in analysed],
        "now": now,
        "transaction_timeout_ms": timeout_ms,
        "kafka_version": kafka_version,
        "findings": findings,
        "check_commands": [command("kafkatool", "check", *(a["path"] for a in group)) for group in brokers.values()],
        "partitions": [p for a in analysed for p in a["partitions"]],
        "replica_sets": [replica_set(name, brokers, analysed, leader=leader, isr=isr, leader_epoch=leader_epoch,
                                     now=now) for name, brokers in sorted(groups.items())],
    }
    doc["sections"] = [s for hook in SECTION_HOOKS if (s := hook(doc, [(a["path"], a["data"]) for a in analysed]))]
    doc["verdict"] = verdict(doc)
    return doc


def broker_groups(analysed: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The inputs per broker (``node.id`` of meta.properties; an input without one stands alone), so that
    ``check``'s cross-log-dir identity rules apply to the log dirs of one broker only, as ``check`` runs."""
    out: dict[str, list[dict[str, Any]]] = {}
    for a in analysed:
        meta = a["data"].meta_properties
        key = f"node {meta.node_id}" if meta is not None and meta.node_id is not None else a["path"]
        out.setdefault(key, []).append(a)
    return out
