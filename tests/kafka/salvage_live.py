"""Salvage against a real broker: one node under the workload stopped cleanly, a copy of its log dir with one byte
flipped in the middle of a data segment and the clean-shutdown marker removed, ``kafkatool salvage --out --export``
on the copy, then a node of the same version started on the repaired copy and every data partition consumed from
the start with Kafka's own consumer semantics (kafka-python, read_uncommitted and read_committed): each salvaged
record must come back at its original offset with the same key, value, headers and timestamp, and aborted ones
must be hidden from read_committed.

Two places for the damage. Below the recovery point (:func:`run`): a clean stop checkpoints the recovery point at
the log end, so ``LogLoader.recoverLog`` re-reads only the active segment and Kafka keeps the damaged segment as it
is. At the recovery point (:func:`run_truncation`, a crash before the damaged segment was flushed: its recovery
point set back to the segment's base offset): Kafka's recovery re-reads the segment, stops at the damaged batch,
truncates there and deletes every later segment; a node started on the unrepaired copy and one on the salvaged copy
are then consumed side by side.

    python -m tests.kafka.salvage_live 4.4.0 /tmp/salvage-live [truncation]
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.kafka.broker import Cluster, KafkaError, Node, Workload, oracle
from tests.kafka.crash import RESTART_PROPS, TOPIC_CONFIGS, _batches, _checkpoint_set, data_partitions

WORKLOAD_BYTES = 3 << 20
WORKLOAD_MS = 25_000
#: The truncation case needs only a few segments of one partition: a shorter workload.
TRUNCATION_BYTES = 1 << 20
TRUNCATION_MS = 10_000
RECOVERY_POINT = "recovery-point-offset-checkpoint"
#: A damaged batch with batches before and after it in its segment.
MIN_BATCHES = 3
#: Workload rounds, and the pause after each (more than the topics' segment.ms=1000).
ROUNDS = 3
ROLL_PAUSE_S = 1.5


def make_base(version: str, workdir: Path, max_bytes: int = WORKLOAD_BYTES,
              max_ms: int = WORKLOAD_MS, *, seed: int = 7, props: dict[str, str] | None = None,
              finish: Callable[[Node], None] | None = None) -> tuple[Path, dict[str, str], str]:
    """A node under the workload, stopped cleanly (or ended by ``finish``); its log dir, props and cluster id. The
    workload runs in rounds with a pause longer than ``segment.ms`` between them: a fast machine otherwise writes
    it all into one segment per partition, and there is no closed segment to damage."""
    with Cluster(version, workdir / "base", seed=seed, props=props) as cluster:
        cluster.format()
        cluster.start()
        node = cluster.nodes[0]
        oracle(version, "topics", cluster.bootstrap, "1", TOPIC_CONFIGS)
        for r in range(seed, seed + ROUNDS):  # rounds apart, so segments roll (segment.ms) however fast they go
            with Workload(cluster, r, max_bytes // ROUNDS, max_ms // ROUNDS, mix="plain,idem,txn,codecs") as work:
                work.wait(timeout=max_ms / 1000 + 120)
            time.sleep(ROLL_PAUSE_S)
        (finish or Node.stop)(node)
        return node.log_dir, dict(node.props), cluster.cluster_id


def damage(log_dir: Path, at_recovery_point: bool = False) -> str:
    """Flip one byte inside a middle batch of the closed data segment with the most batches (a workload whose
    segments roll every second may leave any one partition's first segment with only a batch or two); with
    ``at_recovery_point`` also set that partition's recovery point back to the damaged segment's base offset (the
    segment was not flushed when the broker died), so Kafka's recovery re-reads it and every later segment."""
    best: tuple[int, str, Path, bytes, list[tuple[int, int, int]]] | None = None
    for part in data_partitions(log_dir):
        if not part.name.startswith(("txn", "plain")):
            continue
        for seg in sorted(part.glob("*.log"))[:-1]:  # closed segments only: the active one is always re-read
            data = seg.read_bytes()
            batches = _batches(data)
            key = (len(batches), f"{part.name}/{seg.name}")
            if best is None or key > best[:2]:
                best = (*key, seg, data, batches)
    if best is None or best[0] < MIN_BATCHES:
        raise KafkaError(f"no closed data segment with {MIN_BATCHES} batches (best: {best and best[:2]})")
    _count, name, seg, raw, batches = best
    pos, size, base = batches[len(batches) // 2]
    at = pos + 61 + (size - 61) // 2
    data = bytearray(raw)
    data[at] ^= 0xFF
    seg.write_bytes(bytes(data))
    (log_dir / ".kafka_cleanshutdown").unlink(missing_ok=True)
    if at_recovery_point:
        _checkpoint_set(log_dir / RECOVERY_POINT, seg.parent.name, int(seg.name.split(".")[0]))
    return f"{name} byte {at} (batch at {base})"


def consume(topic_partitions: list[str], bootstrap: str, isolation: str) -> dict[str, list[dict[str, Any]]]:
    """Every record of each partition from the start."""
    from kafka import KafkaConsumer, TopicPartition

    out: dict[str, list[dict[str, Any]]] = {}
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False,
                             consumer_timeout_ms=8000, auto_offset_reset="earliest")
    try:
        for name in topic_partitions:
            topic, _, num = name.rpartition("-")
            tp = TopicPartition(topic, int(num))
            consumer.assign([tp])
            consumer.seek_to_beginning(tp)
            end = consumer.end_offsets([tp])[tp]
            rows: list[dict[str, Any]] = []
            deadline = time.monotonic() + 60
            while consumer.position(tp) < end and time.monotonic() < deadline:
                for recs in consumer.poll(timeout_ms=1000).values():
                    rows += [{"offset": r.offset, "timestamp": r.timestamp, "key": r.key, "value": r.value,
                              "headers": [(k, v) for k, v in r.headers]} for r in recs]
            out[name] = rows
    finally:
        consumer.close()
    return out


def _b(x: str | None) -> bytes | None:
    return None if x is None else base64.b64decode(x)


def _salvage(copy: Path, out: Path, export: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    proc = subprocess.run([sys.executable, "-m", "kafkatool", "salvage", "-f", "json", "--out", str(out),
                           "--export", str(export), str(copy)], capture_output=True, text=True, timeout=600,
                          check=False)
    if proc.returncode not in (0, 1):
        raise KafkaError(f"salvage exited {proc.returncode}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout), [json.loads(line) for line in export.read_text().splitlines()]


def _mismatches(rows: list[dict[str, Any]], served: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Each salvaged record not served at its offset with the same timestamp, key, value and headers."""
    out: list[str] = []
    for name, recs in served.items():
        by_offset = {r["offset"]: r for r in recs}
        for r in (r for r in rows if f"{r['topic']}-{r['partition']}" == name):
            got = by_offset.get(r["offset"])
            want = (r["timestamp"], _b(r["key"]), _b(r["value"]), [(h["key"], _b(h["value"])) for h in r["headers"]])
            if got is None or (got["timestamp"], got["key"], got["value"], got["headers"]) != want:
                out.append(f"{name} offset {r['offset']}: salvaged {want[:1]} served {got and got['timestamp']}")
    return out


def run_truncation(version: str, workdir: Path) -> dict[str, Any]:
    """Damage at the recovery point: a node on the unrepaired copy (Kafka truncates) against a node on the
    salvaged copy, both consumed read_uncommitted; a summary with every mismatch."""
    log_dir, props, _cid = make_base(version, workdir, TRUNCATION_BYTES, TRUNCATION_MS)
    copy = workdir / "damaged"
    shutil.copytree(log_dir, copy)
    what = damage(copy, at_recovery_point=True)
    damaged_part = what.split("/")[0]
    account, rows = _salvage(copy, workdir / "repaired", workdir / "export.jsonl")
    names = sorted({f"{r['topic']}-{r['partition']}" for r in rows})
    nodes = {"unrepaired": Node(version, 1, workdir / "on-damaged", props={**props, **RESTART_PROPS}),
             "salvaged": Node(version, 1, workdir / "on-salvaged", props={**props, **RESTART_PROPS})}
    shutil.copytree(copy, nodes["unrepaired"].log_dir)  # the broker changes what it loads: never the evidence
    shutil.copytree(workdir / "repaired", nodes["salvaged"].log_dir)
    served: dict[str, dict[str, list[dict[str, Any]]]] = {}
    try:
        for node in nodes.values():
            node.start()
        for key, node in nodes.items():
            node.wait_started()
            oracle(version, "ready", node.bootstrap, "1", "60000", timeout=120)
            served[key] = consume(names, node.bootstrap, "read_uncommitted")
    finally:
        for node in nodes.values():
            node.kill()
    (part,) = [p for p in account["partitions"] if p["partition"] == damaged_part]
    logs = {k: n.log_text() for k, n in nodes.items()}
    rescanned = [line for line in logs["salvaged"].splitlines()
                 if "Recovering unflushed segment" in line and f"partition={damaged_part}," in line]
    return {"version": version, "damage": what,
            "kafka_logged_truncation": "Corruption found in segment" in logs["unrepaired"],
            "salvaged_logged_truncation": "Corruption found in segment" in logs["salvaged"],
            "salvaged_segments_rescanned": len(rescanned),
            "account_kafka": part["kafka"], "account_salvage": part["salvage"]["records"],
            "salvaged_rows": sum(f"{r['topic']}-{r['partition']}" == damaged_part for r in rows),
            "served_unrepaired": len(served["unrepaired"][damaged_part]),
            "served_unrepaired_end": max((r["offset"] for r in served["unrepaired"][damaged_part]), default=-1) + 1,
            "served_salvaged": len(served["salvaged"][damaged_part]),
            "served_total": {k: sum(len(v) for v in s.values()) for k, s in served.items()},
            "records_exported": len(rows),
            "mismatches": _mismatches(rows, served["salvaged"])[:50],
            "mismatch_count": len(_mismatches(rows, served["salvaged"]))}


def run(version: str, workdir: Path) -> dict[str, Any]:
    """The experiment; a summary with every mismatch."""
    log_dir, props, _cid = make_base(version, workdir)
    copy = workdir / "damaged"
    shutil.copytree(log_dir, copy)
    what = damage(copy)
    out, export = workdir / "repaired", workdir / "export.jsonl"
    proc = subprocess.run([sys.executable, "-m", "kafkatool", "salvage", "-f", "json", "--out", str(out),
                           "--export", str(export), str(copy)], capture_output=True, text=True, timeout=600,
                          check=False)
    if proc.returncode not in (0, 1):
        raise KafkaError(f"salvage exited {proc.returncode}: {proc.stderr[-2000:]}")
    account = json.loads(proc.stdout)
    rows = [json.loads(line) for line in export.read_text().splitlines()]
    node = Node(version, 1, workdir / "restart", props={**props, **RESTART_PROPS})
    shutil.copytree(out, node.log_dir)
    names = sorted({f"{r['topic']}-{r['partition']}" for r in rows})
    try:
        node.start()
        node.wait_started()
        oracle(version, "ready", node.bootstrap, "1", "60000", timeout=120)
        uncommitted = consume(names, node.bootstrap, "read_uncommitted")
        committed = consume(names, node.bootstrap, "read_committed")
    finally:
        node.kill()
    mismatches: list[str] = []
    for name in names:
        mine = [r for r in rows if f"{r['topic']}-{r['partition']}" == name]
        served = {r["offset"]: r for r in uncommitted[name]}
        for r in mine:
            got = served.get(r["offset"])
            want = (r["timestamp"], _b(r["key"]), _b(r["value"]), [(h["key"], _b(h["value"])) for h in r["headers"]])
            if got is None or (got["timestamp"], got["key"], got["value"], got["headers"]) != want:
                mismatches.append(f"{name} offset {r['offset']}: salvaged {want[:1]} served {got and got['timestamp']}")
        visible = {r["offset"] for r in committed[name]}
        for r in mine:
            hidden = r["transaction_state"] in ("aborted", "open")
            if (r["offset"] in visible) == hidden and r["transaction_state"] != "open":
                mismatches.append(f"{name} offset {r['offset']}: {r['transaction_state']} but "
                                  f"{'visible' if r['offset'] in visible else 'hidden'} to read_committed")
    return {"version": version, "damage": what, "totals": account["totals"], "records_exported": len(rows),
            "served_uncommitted": sum(len(v) for v in uncommitted.values()),
            "served_committed": sum(len(v) for v in committed.values()),
            "aborted": sum(r["transaction_state"] == "aborted" for r in rows), "mismatches": mismatches[:50],
            "mismatch_count": len(mismatches)}


if __name__ == "__main__":
    experiment = run_truncation if sys.argv[3:] == ["truncation"] else run
    print(json.dumps(experiment(sys.argv[1], Path(sys.argv[2])), indent=2))
