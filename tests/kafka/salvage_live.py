"""Salvage against a real broker: one node under the workload stopped cleanly, a copy of its log dir with one byte
flipped in the middle of a data segment and the clean-shutdown marker removed (Kafka's recovery then truncates
there and deletes the later segments), ``kafkatool salvage --out --export`` on the copy, then a node of the same
version started on the repaired copy and every data partition consumed from the start with Kafka's own consumer
semantics (kafka-python, read_uncommitted and read_committed): each salvaged record must come back at its original
offset with the same key, value, headers and timestamp, and aborted ones must be hidden from read_committed.

    python -m tests.kafka.salvage_live 4.4.0 /tmp/salvage-live
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.kafka.broker import Cluster, KafkaError, Node, Workload, oracle
from tests.kafka.crash import RESTART_PROPS, TOPIC_CONFIGS, _batches, data_partitions

WORKLOAD_BYTES = 3 << 20
WORKLOAD_MS = 25_000


def make_base(version: str, workdir: Path) -> tuple[Path, dict[str, str], str]:
    """A node under the workload, stopped cleanly; its log dir, props and cluster id."""
    with Cluster(version, workdir / "base", seed=7) as cluster:
        cluster.format()
        cluster.start()
        node = cluster.nodes[0]
        oracle(version, "topics", cluster.bootstrap, "1", TOPIC_CONFIGS)
        with Workload(cluster, 7, WORKLOAD_BYTES, WORKLOAD_MS, mix="plain,idem,txn,codecs") as work:
            work.wait(timeout=WORKLOAD_MS / 1000 + 120)
        node.stop()
        return node.log_dir, dict(node.props), cluster.cluster_id


def damage(log_dir: Path) -> str:
    """Flip one byte inside a middle batch of the first multi-segment data partition with many batches."""
    for part in data_partitions(log_dir):
        segs = sorted(part.glob("*.log"))
        if len(segs) < 2 or not part.name.startswith(("txn", "plain")):
            continue
        data = bytearray(segs[0].read_bytes())
        batches = _batches(bytes(data))
        if len(batches) < 6:
            continue
        pos, size, base = batches[len(batches) // 2]
        at = pos + 61 + (size - 61) // 2
        data[at] ^= 0xFF
        segs[0].write_bytes(bytes(data))
        (log_dir / ".kafka_cleanshutdown").unlink(missing_ok=True)
        return f"{part.name}/{segs[0].name} byte {at} (batch at {base})"
    raise KafkaError("no data partition with two segments and six batches")


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
    print(json.dumps(run(sys.argv[1], Path(sys.argv[2])), indent=2))
