"""The campaign's ``salvage`` kind (issue 33, item 6): seeded damage on copies of a real broker's log dirs,
``kafkatool salvage --out --export`` on each, and the repaired dir checked end to end against a broker of the
same version.

Each seed picks one damage kind, :data:`DAMAGES` in turn (``seed % 7``), and places it with ``random.Random``:

* ``flip-below`` / ``flip-above``: one bit flipped in a middle batch of a closed data segment, below the recovery
  point (a clean stop checkpoints it at the log end: ``LogLoader.recoverLog`` never re-reads the segment and Kafka
  keeps the damaged batch as it is) or at it (the recovery point set back to the segment's base, as a crash
  before the segment was flushed leaves it: ``LogSegment.recover`` stops at the damaged batch, Kafka truncates
  there and deletes every later segment);
* ``torn-below`` / ``torn-above``: a torn write, one 4 KiB page of such a segment left as zeros (a page that never
  reached the disk), below or at the recovery point likewise;
* ``segment-deleted``: a middle segment of a partition removed with its indexes (an offset gap Kafka loads);
* ``topic-deleted``: a topic deleted through the admin client and the broker killed right after, its partitions
  caught in their ``<topic>-<n>.<id>-delete`` directories (``LogManager.asyncDelete`` renames them and
  ``LogManager.deleteLogs`` removes them ``file.delete.delay.ms`` later, the broker's
  ``log.segment.delete.delay.ms``, set to an hour here so the window outlasts the experiment);
* ``unclean``: three brokers and a dedicated controller; follower A killed, then follower B, then the leader L of
  one partition; A started alone is elected uncleanly and takes a few records (``acks=1``) in its new epoch, then
  is killed too: L's and A's copies of the partition diverge. Salvaged with A's copy as the input (so its epoch
  cache decides, as the leader the controller elected last, and its ``meta.properties`` is kept) and
  ``--replica ID=DIR`` for L's and B's.

Checked end to end: a broker of the same version started on the repaired dir (for ``unclean``: broker A with the
controller, A's log dir replaced by the repaired one) serves every salvaged record at its original offset with
the same timestamp, key, value and headers, read_uncommitted, and hides the aborted ones from read_committed
(``served``); ``kafkatool simulate-restart`` on the repaired dir predicts no loss (``restart_no_loss``) and the
last stable offset the broker answers read_committed consumers with (``last_stable_offset``: a transaction whose
marker was damaged stays open in the repaired log, and Kafka's LSO stops there). A topic deleted in the metadata
is not served by any broker whatever its log dir holds (``ReplicaManager`` marks its partitions stray), so
``topic-deleted`` re-produces them with ``--produce-to`` into a new topic on the same broker and finds each record
there once, in order, unchanged (``reproduced``), and checks that the broker renamed the restored partitions
``-stray`` as ``man kafkatool-salvage`` says (``deleted_topic_stray``). Where Kafka's recovery is what cuts (the
single-node kinds), a second broker is started on the unrepaired copy beside it and kafkatool's account of
Kafka's recovery is compared with what that broker serves (``kafka_log_end``).

Per experiment ``detail["counts"]`` holds, for the damaged partitions: the records Kafka's recovery keeps and the
records salvage keeps, from the account (``account_kafka``, ``account_salvage``) and from what the brokers serve
(``served_kafka``: the broker on the unrepaired copy, or the healed cluster's new leader for ``unclean``;
``served_salvage``). :func:`summary` tabulates them per damage kind. With ``KAFKATOOL_SAVE_CASES=1`` a
single-node experiment that disagreed (``always``: any) is saved under ``fixtures/oracle/salvage-*`` and replayed
without a broker by ``tests/test_oracle_salvage_cases.py``.

    python -m tests.kafka.campaign --kinds salvage --versions all --experiments 7 --seed 3300 --json s.json
    python -m tests.kafka.salvage s.json          # the per-kind table of records kept
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from tests.kafka import salvage_live
from tests.kafka.broker import Cluster, KafkaError, Node, Workload, oracle
from tests.kafka.crash import RESTART_PROPS, TOPIC_CONFIGS, _batches, _checkpoint_set, data_partitions
from tests.kafka.experiments import Outcome, save_case

DAMAGES: tuple[str, ...] = ("flip-below", "flip-above", "torn-below", "torn-above", "segment-deleted",
                            "topic-deleted", "unclean")
#: A short workload (in rounds a segment.ms apart: every partition has closed segments to damage); each round ends
#: at its third of the bytes, or its third of the time, which counts from before the producers start (a loaded
#: machine took over 3 s to set up transactional producers, and a round wrote nothing).
WORKLOAD_BYTES = 1 << 20
WORKLOAD_MS = 30_000
#: The base broker keeps a deleted topic's ``-delete`` directories for an hour (LogManager.deleteLogs).
BASE_PROPS = {"log.segment.delete.delay.ms": "3600000"}
RECOVERY_POINT = "recovery-point-offset-checkpoint"
PAGE = 4096
#: The topics whose partitions may be damaged (transactions, idempotent and plain producers, every codec).
DAMAGED_TOPICS = ("plain", "idem", "txn", "codec-gzip", "codec-lz4", "codec-zstd", "codec-snappy")
DELETABLE = ("plain", "idem", "txn")


def rotation() -> int | None:
    """The live tests' rotation number (``test_salvage_live.py``, ``test_salvage_produce.py``):
    ``KAFKATOOL_ROTATION``, else the UTC day number; ``None`` for ``all``."""
    chosen = os.environ.get("KAFKATOOL_ROTATION", "").strip()
    if chosen == "all":
        return None
    return int(chosen) if chosen else datetime.datetime.now(datetime.UTC).date().toordinal()


def damage_for(seed: int) -> str:
    """The damage kind of ``seed``."""
    return DAMAGES[seed % len(DAMAGES)]


# --- the base ----------------------------------------------------------------------------------------------------

def make_base(version: str, seed: int, workdir: Path, delete_topic: str | None = None
              ) -> tuple[Path, dict[str, str]]:
    """A node under a short workload (``salvage_live.make_base``: rounds a ``segment.ms`` apart), stopped cleanly;
    with ``delete_topic`` that topic is deleted at the end and the node killed once its partitions sit in their
    ``-delete`` directories. Its log dir and props."""
    def finish(node: Node) -> None:
        if delete_topic is None:
            node.stop()
        else:
            _delete_topic(node, delete_topic)
            node.kill()

    log_dir, props, _cid = salvage_live.make_base(version, workdir, WORKLOAD_BYTES, WORKLOAD_MS, seed=seed * 10,
                                                  props=BASE_PROPS, finish=finish)
    return log_dir, props


def _delete_topic(node: Node, topic: str, timeout: float = 60) -> None:
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=node.bootstrap, request_timeout_ms=30000)
    try:
        admin.delete_topics([topic], timeout_ms=30000)
    finally:
        admin.close()
    deadline = time.monotonic() + timeout
    while not any(p.name.startswith(f"{topic}-") and p.name.endswith("-delete") for p in node.log_dir.iterdir()):
        if time.monotonic() > deadline:
            raise KafkaError(f"topic {topic} deleted but no {topic}-N.ID-delete directory after {timeout:.0f} s")
        time.sleep(0.1)
    time.sleep(0.5)  # every partition of the topic renamed


# --- the damage --------------------------------------------------------------------------------------------------

def _closed_segments(log_dir: Path) -> list[tuple[Path, list[tuple[int, int, int]]]]:
    """Closed data segments with at least two batches (a damaged batch with one after it in the segment; a short
    workload whose segments roll every second may leave no segment with more)."""
    out = []
    for part in data_partitions(log_dir):
        if part.name.rpartition("-")[0] not in DAMAGED_TOPICS:
            continue
        for seg in sorted(part.glob("*.log"))[:-1]:
            batches = _batches(seg.read_bytes())
            if len(batches) >= 2:
                out.append((seg, batches))
    return out


def damage(log_dir: Path, kind: str, rng: random.Random) -> tuple[str, list[str]]:
    """Apply ``kind`` (not ``topic-deleted`` / ``unclean``, done while the broker runs) to a copy; what was done
    and the damaged partitions."""
    (log_dir / ".kafka_cleanshutdown").unlink(missing_ok=True)
    if kind == "segment-deleted":
        multi = [p for p in data_partitions(log_dir) if p.name.rpartition("-")[0] in DAMAGED_TOPICS
                 and len(list(p.glob("*.log"))) >= 3]
        if not multi:
            raise KafkaError("no data partition with three segments")
        part = rng.choice(multi)
        segs = sorted(part.glob("*.log"))
        seg = rng.choice(segs[1:-1])
        gone = sorted(f.name for f in part.glob(f"{seg.stem}.*") if f.suffix != ".snapshot")
        for name in gone:
            (part / name).unlink()
        return f"segment-deleted: {part.name}: {', '.join(gone)} removed", [part.name]
    candidates = _closed_segments(log_dir)
    if not candidates:
        raise KafkaError("no closed data segment with two batches")
    seg, batches = rng.choice(candidates)
    pos, size, base = batches[rng.randrange(1, len(batches) - 1) if len(batches) >= 3 else 0]
    data = bytearray(seg.read_bytes())
    if kind.startswith("flip"):
        at = rng.randrange(pos + 61, pos + size) if size > 61 else pos + 17  # the records, else the CRC'd header
        bit = 1 << rng.randrange(8)
        data[at] ^= bit
        what = f"byte {at} xor {bit:#04x} (batch at offset {base}, bytes {pos}..{pos + size - 1})"
    elif kind.startswith("torn"):
        page = (rng.randrange(pos, pos + size) // PAGE) * PAGE
        end = min(page + PAGE, len(data))
        data[page:end] = bytes(end - page)
        what = f"bytes {page}..{end - 1} zeroed (a torn page; batch at offset {base} inside)"
    else:
        raise ValueError(f"unknown damage {kind}")
    seg.write_bytes(bytes(data))
    if kind.endswith("above"):
        _checkpoint_set(log_dir / RECOVERY_POINT, seg.parent.name, int(seg.stem))
        what += f"; recovery point set back to {int(seg.stem)}"
    return f"{kind}: {seg.parent.name}/{seg.name} {what}", [seg.parent.name]


# --- kafkatool ---------------------------------------------------------------------------------------------------

def kafkatool(*argv: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``python -m kafkatool ARGV``; exit 0 or 1 expected."""
    proc = subprocess.run([sys.executable, "-m", "kafkatool", *argv], capture_output=True, text=True,
                          timeout=timeout, check=False)
    if proc.returncode not in (0, 1):
        raise KafkaError(f"kafkatool {' '.join(argv[:2])} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return proc


def salvage(inputs: list[str], out: Path, export: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The account and the exported rows."""
    proc = kafkatool("salvage", "-f", "json", "--out", str(out), "--export", str(export), *inputs)
    return json.loads(proc.stdout), [json.loads(line) for line in export.read_text().splitlines()]


def restart_view(log_dir: Path) -> tuple[dict[str, int], dict[str, int | None]]:
    """``simulate-restart`` on a repaired dir: the records and batches it predicts lost per partition (none
    wanted), and the last stable offset it predicts for each."""
    doc = json.loads(kafkatool("simulate-restart", "-f", "json", str(log_dir)).stdout)
    lost_by, lso = {}, {}
    for p in doc["partitions"]:
        name = p.get("directory") or p.get("partition")
        loss = p.get("loss") or {}
        lost = (loss.get("records") or 0) + (loss.get("batches") or 0) + (loss.get("partial_batches") or 0)
        if lost or p.get("outcome") not in (None, "loaded"):
            lost_by[name] = lost or -1
        lso[name] = p.get("last_stable_offset")
    return lost_by, lso


def restart_loss(log_dir: Path) -> dict[str, int]:
    """The losses ``simulate-restart`` predicts on a repaired dir, per partition (none wanted)."""
    return restart_view(log_dir)[0]


# --- the brokers -------------------------------------------------------------------------------------------------

def consume(names: list[str], bootstrap: str, isolation: str) -> dict[str, dict[str, Any]]:
    """Every record of each partition from the start, one consumer per partition, each offset once (a consumer
    whose fetch offset was reset reads from the start again: seen once in the unclean kind on 4.1.2); a partition
    the consumer cannot read to its end (a damaged batch Kafka kept) keeps what came before and the error."""
    from kafka import KafkaConsumer, TopicPartition

    out: dict[str, dict[str, Any]] = {}
    for name in names:
        topic, _, num = name.rpartition("-")
        tp = TopicPartition(topic, int(num))
        rows: list[dict[str, Any]] = []
        doc: dict[str, Any] = {"records": rows, "start": None, "end": None, "error": None}
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False,
                                 consumer_timeout_ms=8000, auto_offset_reset="earliest")
        try:
            consumer.assign([tp])
            consumer.seek_to_beginning(tp)
            doc["start"] = consumer.beginning_offsets([tp])[tp]
            end = doc["end"] = consumer.end_offsets([tp])[tp]
            deadline = time.monotonic() + 60
            seen: dict[int, dict[str, Any]] = {}
            while consumer.position(tp) < end and time.monotonic() < deadline:
                for recs in consumer.poll(timeout_ms=1000).values():
                    for r in recs:
                        row = {"offset": r.offset, "timestamp": r.timestamp, "key": r.key, "value": r.value,
                               "headers": [(k, v) for k, v in r.headers]}
                        if r.offset not in seen:
                            seen[r.offset] = row
                            rows.append(row)
                        elif seen[r.offset] != row:  # read again (an offset reset): the same, or it is reported
                            doc["error"] = f"offset {r.offset} served twice, different"
            if consumer.position(tp) < end:
                doc["error"] = f"stuck at {consumer.position(tp)} of {end}"
        except Exception as exc:  # a damaged batch Kafka kept and serves: what came before it counts
            doc["error"] = f"{type(exc).__name__}: {exc}"[:300]
        finally:
            consumer.close()
        out[name] = doc
    return out


def _b(x: str | None) -> bytes | None:
    return None if x is None else base64.b64decode(x)


def _want(r: dict[str, Any]) -> tuple[Any, ...]:
    return (r["timestamp"], _b(r["key"]), _b(r["value"]), [(h["key"], _b(h["value"])) for h in r["headers"]])


def served_mismatches(rows: list[dict[str, Any]], uncommitted: dict[str, dict[str, Any]],
                      committed: dict[str, dict[str, Any]]) -> list[str]:
    """Each salvaged record not served at its offset unchanged, or visible/hidden to read_committed against its
    transaction state and the last stable offset the broker answered read_committed with (a transaction whose
    marker was damaged stays open in the repaired log: Kafka's LSO stops at its first offset and read_committed
    shows nothing from there on, committed or not)."""
    out: list[str] = []
    by_name: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_name[f"{r['topic']}-{r['partition']}"].append(r)
    for name, mine in sorted(by_name.items()):
        if name not in uncommitted:
            continue
        served = {r["offset"]: r for r in uncommitted[name]["records"]}
        visible = {r["offset"] for r in committed[name]["records"]}
        lso = committed[name].get("end")
        for r in mine:
            got = served.get(r["offset"])
            if got is None or (got["timestamp"], got["key"], got["value"], got["headers"]) != _want(r):
                out.append(f"{name} offset {r['offset']}: salvaged ts {r['timestamp']}, served "
                           f"{'nothing' if got is None else got['timestamp']}")
            state = r["transaction_state"]
            shown = state in ("committed", None, "none") and (lso is None or r["offset"] < lso)
            if state != "open" and (r["offset"] in visible) != shown:
                out.append(f"{name} offset {r['offset']}: {state} but "
                           f"{'visible' if r['offset'] in visible else 'hidden'} to read_committed")
        extra = sorted(set(served) - {r["offset"] for r in mine})
        if extra:
            out.append(f"{name}: {len(extra)} records served that salvage did not export (first {extra[:3]})")
    return out


def _node(version: str, node_id: int, workdir: Path, props: dict[str, str], log_dir: Path) -> Node:
    node = Node(version, node_id, workdir, props={**props, **RESTART_PROPS})
    shutil.copytree(log_dir, node.log_dir, ignore=shutil.ignore_patterns(".lock"))
    return node


def _records(doc: dict[str, Any] | None) -> int:
    return len(doc["records"]) if doc else 0


# --- the single-node kinds ---------------------------------------------------------------------------------------

def run_single(version: str, seed: int, workdir: Path, kind: str, outcome: Outcome) -> None:
    """A single broker's log dir damaged by ``kind``; the repaired copy and the unrepaired one side by side."""
    rng = random.Random(f"salvage-{seed}")
    deleted = rng.choice(DELETABLE) if kind == "topic-deleted" else None
    log_dir, props = make_base(version, seed, workdir, delete_topic=deleted)
    copy = workdir / "damaged"
    shutil.copytree(log_dir, copy, ignore=shutil.ignore_patterns(".lock"))
    if deleted is None:
        what, damaged = damage(copy, kind, rng)
    else:
        dirs = sorted(p.name for p in copy.iterdir() if p.name.startswith(f"{deleted}-") and p.name.endswith("-delete"))
        what = f"topic-deleted: {deleted} deleted and the broker killed: {', '.join(dirs)}"
        damaged = [d.split(".")[0] for d in dirs]
    outcome.detail.update({"damage": what, "damaged": damaged})
    check_copy(version, workdir, copy, props, damaged, deleted, outcome)


def check_copy(version: str, workdir: Path, copy: Path, props: dict[str, str], damaged: list[str],
               deleted: str | None, outcome: Outcome) -> None:
    """Salvage ``copy`` into ``workdir/repaired``; brokers on it and on ``copy`` side by side; every check. Also
    re-runs the checks on a kept work dir (``python -m tests.kafka.salvage recheck``)."""
    for d in ("repaired", "on-damaged", "on-salvaged"):  # a kept run's own results
        shutil.rmtree(workdir / d, ignore_errors=True)
    (workdir / "export.jsonl").unlink(missing_ok=True)
    account, rows = salvage([str(copy)], workdir / "repaired", workdir / "export.jsonl")
    parts = {p["partition"]: p for p in account["partitions"]}
    lost, lso = restart_view(workdir / "repaired")
    outcome.check("restart_no_loss", {}, lost)
    names = sorted(p for p in parts if not p.startswith("__") and p.rpartition("-")[0] != deleted)
    nodes = {"kafka": _node(version, 1, workdir / "on-damaged", props, copy),
             "salvage": _node(version, 1, workdir / "on-salvaged", props, workdir / "repaired")}
    served: dict[str, dict[str, dict[str, Any]]] = {}
    try:
        for node in nodes.values():
            node.start()
        for node in nodes.values():
            node.wait_started()
            oracle(version, "ready", node.bootstrap, "1", "60000", timeout=120)
        served["kafka"] = consume(names, nodes["kafka"].bootstrap, "read_uncommitted")
        served["salvage"] = consume(names, nodes["salvage"].bootstrap, "read_uncommitted")
        served["committed"] = consume(names, nodes["salvage"].bootstrap, "read_committed")
        if deleted is not None:
            _check_reproduced(outcome, version, nodes["salvage"], copy, deleted, damaged, rows)
            # as man/kafkatool-salvage.1 says: the metadata log records the delete, the broker marks them stray
            stray = sorted(d.name.split(".")[0] for d in nodes["salvage"].log_dir.iterdir()
                           if d.name.startswith(f"{deleted}-") and d.name.endswith("-stray"))
            outcome.check("deleted_topic_stray", damaged, stray)
    finally:
        for node in nodes.values():
            node.kill()
    kept = [r for r in rows if f"{r['topic']}-{r['partition']}" in names]
    bad = served_mismatches(kept, served["salvage"], served["committed"])
    outcome.check("served", [], bad[:20])
    errors = {n: d["error"] for n, d in served["salvage"].items() if d["error"]}
    outcome.check("served_whole", {}, errors)
    outcome.check("last_stable_offset", {n: served["committed"][n]["end"] for n in names},
                  {n: lso.get(n) for n in names})
    for name in damaged:
        if name in names:
            ours = (parts[name]["kafka"] or {}).get("log_end_offset")
            outcome.check("kafka_log_end", served["kafka"][name]["end"], ours, where=name)
    exported = [r for r in rows if f"{r['topic']}-{r['partition']}" in damaged
                and (deleted is None or r["transaction_state"] not in ("aborted", "open"))]
    outcome.detail["counts"] = {
        "exported": len(exported),
        "account_kafka": sum((parts[n]["kafka"] or {}).get("records", 0) for n in damaged if n in parts),
        "account_salvage": sum(parts[n]["salvage"]["records"] for n in damaged if n in parts),
        "served_kafka": sum(_records(served["kafka"].get(n)) for n in damaged),
        "served_salvage": (sum(_records(served["salvage"].get(n)) for n in damaged) if deleted is None
                           else outcome.detail.get("reproduced", 0)),
        "kafka_errors": {n: served["kafka"][n]["error"] for n in damaged if n in served["kafka"]
                         and served["kafka"][n]["error"]},
    }
    if deleted is not None:  # Kafka's recovery deletes a -delete directory: nothing of the topic is served
        outcome.detail["counts"]["served_kafka"] = 0
    wanted = os.environ.get("KAFKATOOL_SAVE_CASES")
    if deleted is None and (wanted == "always" or (wanted == "1" and not outcome.agree)):
        outcome.case = save_salvage_case(outcome, copy, damaged, served).name


def save_salvage_case(outcome: Outcome, copy: Path, damaged: list[str],
                      served: dict[str, dict[str, dict[str, Any]]]) -> Path:
    """The damaged copy (its damaged partitions and log-dir files) and what the brokers did with it: where the
    broker on the unrepaired copy ended each partition, and the offsets the broker on the repaired copy served
    read_uncommitted and read_committed (replayed by ``tests/test_oracle_salvage_cases.py``)."""
    expected = {
        "kind": "salvage", "kafkaVersion": outcome.version, "seed": outcome.seed,
        "damage": outcome.detail["damage"], "damaged": damaged,
        "kafka_log_end": {n: served["kafka"][n]["end"] for n in damaged},
        "served": {n: [r["offset"] for r in served["salvage"][n]["records"]] for n in damaged},
        "served_committed": {n: [r["offset"] for r in served["committed"][n]["records"]] for n in damaged},
        "last_stable_offset": {n: served["committed"][n]["end"] for n in damaged},
    }
    name = f"salvage-{outcome.version}-{outcome.seed}-{outcome.detail['kind']}"
    return save_case(name, copy, expected, partitions=damaged)


def _check_reproduced(outcome: Outcome, version: str, node: Node, copy: Path, topic: str, damaged: list[str],
                      rows: list[dict[str, Any]]) -> None:
    """Re-produce the deleted topic's salvaged records into ``<topic>.restored`` on ``node`` and read them back."""
    from kafka.admin import KafkaAdminClient, NewTopic

    target = f"{topic}.restored"
    admin = KafkaAdminClient(bootstrap_servers=node.bootstrap, request_timeout_ms=30000)
    try:
        admin.create_topics([NewTopic(target, max(int(n.rpartition("-")[2]) for n in damaged) + 1, 1,
                                      topic_configs={"retention.ms": "-1"})], timeout_ms=30000)
    finally:
        admin.close()
    time.sleep(1)
    sent = 0
    for name in damaged:
        proc = kafkatool("salvage", "-f", "json", "-q", "-p", name, "--produce-to", node.bootstrap,
                         "--topic-map", f"{topic}={target}", str(copy))
        sent += json.loads(proc.stdout).get("reproduce", {}).get("sent", 0)
    back = consume([f"{target}-{n.rpartition('-')[2]}" for n in damaged], node.bootstrap, "read_committed")
    bad: list[str] = []
    got_total = 0
    for name in damaged:
        want = [r for r in rows if f"{r['topic']}-{r['partition']}" == name
                and r["transaction_state"] not in ("aborted", "open") and not r.get("control")]
        got = back[f"{target}-{name.rpartition('-')[2]}"]["records"]
        got_total += len(got)
        origin = [dict(g["headers"]).get("kafkatool.origin") for g in got]
        mine = [(g["timestamp"], g["key"], g["value"], [h for h in g["headers"] if h[0] != "kafkatool.origin"])
                for g in got]
        if mine != [_want(r) for r in want]:
            bad.append(f"{name}: {len(want)} salvaged records, {len(got)} re-produced, not the same")
        if origin != [f"{topic}/{r['partition']}/{r['offset']}".encode() for r in want]:
            bad.append(f"{name}: provenance headers not the salvaged offsets in order")
    outcome.detail["reproduced"] = got_total
    outcome.detail["reproduce_sent"] = sent
    outcome.check("reproduced", [], bad)


# --- the unclean election ----------------------------------------------------------------------------------------

def run_unclean(version: str, seed: int, workdir: Path, outcome: Outcome) -> None:
    """Diverged replicas after an unclean election; A's copy salvaged with the others as ``--replica`` (A's copy
    first, so its epoch cache decides and its ``meta.properties`` is kept), served by A restarted on it."""
    from tests.kafka.replication import CANDIDATES, MIX, PROPS, leader_start, wait_for

    rng = random.Random(f"salvage-unclean-{seed}")
    partition = rng.choice(CANDIDATES)
    with Cluster(version, workdir / "cluster", nodes=3, seed=seed, props={**PROPS, **BASE_PROPS},
                 dedicated_controller=True) as cl:
        cl.format()
        cl.start()
        cl.wait_brokers(3)
        oracle(version, "topics", cl.bootstrap, "3", TOPIC_CONFIGS)
        by_id = {n.node_id: n for n in cl.nodes}
        doc = wait_for(cl, partition, "a full ISR", lambda ps: len(ps[partition]["isr"]) == 3)
        leader = doc["partitions"][partition]["leader"]
        a, b = rng.sample(sorted(x for x in doc["partitions"][partition]["replicas"] if x != leader), 2)
        with Workload(cl, seed, 64 << 20, 120_000, MIX) as work:
            work.wait_acked(rng.randrange(800, 2000), timeout=60)
            by_id[a].kill()
            work.wait_acked(work.acked() + rng.randrange(600, 1500), timeout=60)
            wait_for(cl, partition, f"{a} out of the ISR", lambda ps: a not in ps[partition]["isr"])
            work.wait_acked(work.acked() + rng.randrange(300, 1000), timeout=60)
            by_id[b].kill()
            wait_for(cl, partition, "the ISR down to the leader", lambda ps: ps[partition]["isr"] == [leader])
            time.sleep(1.5)
            by_id[leader].kill()
            work.stop()
        cl.start([by_id[a]])
        wait_for(cl, partition, f"{a} leading {partition}", lambda ps: ps[partition]["leader"] == a, timeout=90)
        new_start = leader_start(by_id[a], partition)
        extra = rng.randrange(5, 40)
        _produce_acks1(by_id[a].bootstrap, partition, extra, seed)
        time.sleep(1.5)
        by_id[a].kill()
        copies = {}
        for n in cl.nodes:
            copies[n.node_id] = workdir / "copies" / f"broker{n.node_id}"
            shutil.copytree(n.log_dir, copies[n.node_id], ignore=shutil.ignore_patterns(".lock"))
        outcome.detail.update({"damage": f"unclean: {partition} leader {leader}, {a} elected uncleanly from "
                                         f"offset {new_start}, {extra} records written in its epoch (acks=1)",
                               "damaged": [partition], "leader": leader, "new_leader": a})
        inputs = [str(copies[a])] + [arg for i in (leader, b) for arg in ("--replica", f"{i}={copies[i]}")]
        account, rows = salvage(inputs, workdir / "repaired", workdir / "export.jsonl")
        lost, lso = restart_view(workdir / "repaired")
        outcome.check("restart_no_loss", {}, lost)
        parts = {p["partition"]: p for p in account["partitions"]}
        names = sorted(p for p in parts if not p.startswith("__"))
        # A restarted on the repaired dir (the controller elects it, the only replica alive): every record served.
        shutil.rmtree(by_id[a].log_dir)
        shutil.copytree(workdir / "repaired", by_id[a].log_dir)
        cl.start([by_id[a]])
        wait_for(cl, partition, f"{a} leading {partition} again", lambda ps: ps[partition]["leader"] == a,
                 timeout=90)
        uncommitted = consume(names, by_id[a].bootstrap, "read_uncommitted")
        committed = consume(names, by_id[a].bootstrap, "read_committed")
        by_id[a].kill()
        # Kafka's own outcome: the cluster healed on the unrepaired copies, L and B truncated to A's log.
        for n in cl.nodes:
            shutil.rmtree(n.log_dir)
            shutil.copytree(copies[n.node_id], n.log_dir)
        cl.start([by_id[a]])
        wait_for(cl, partition, f"{a} leading {partition} (unrepaired)", lambda ps: ps[partition]["leader"] == a,
                 timeout=90)
        cl.start([by_id[leader], by_id[b]])
        wait_for(cl, partition, "a full ISR again", lambda ps: len(ps[partition]["isr"]) == 3, timeout=120)
        kafka_served = consume([partition], by_id[a].bootstrap, "read_uncommitted")[partition]
    kept = [r for r in rows if f"{r['topic']}-{r['partition']}" in names]
    outcome.check("served", [], served_mismatches(kept, uncommitted, committed)[:20])
    outcome.check("served_whole", {}, {n: d["error"] for n, d in uncommitted.items() if d["error"]})
    outcome.check("last_stable_offset", {n: committed[n]["end"] for n in names}, {n: lso.get(n) for n in names})
    p = parts[partition]
    outcome.check("kafka_log_end", kafka_served["end"], (p["kafka"] or {}).get("log_end_offset"), where=partition)
    outcome.detail["counts"] = {"exported": sum(f"{r['topic']}-{r['partition']}" == partition for r in rows),
                                "account_kafka": (p["kafka"] or {}).get("records", 0),
                                "account_salvage": p["salvage"]["records"],
                                "served_kafka": len(kafka_served["records"]),
                                "served_salvage": _records(uncommitted.get(partition)),
                                "conflicts": len(p["conflicts"])}


def _produce_acks1(bootstrap: str, partition: str, count: int, seed: int) -> None:
    """``count`` records to ``partition`` with acks=1 (the only replica in the ISR: acks=all is refused under
    min.insync.replicas=2)."""
    from kafka import KafkaProducer

    topic, _, num = partition.rpartition("-")
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, retries=5, linger_ms=5)
    try:
        for i in range(count):
            producer.send(topic, key=f"unclean-{seed}-{i}".encode(), value=b"after the unclean election %d" % i,
                          partition=int(num), headers=[("epoch", b"new")])
        producer.flush(timeout=60)
    finally:
        producer.close()


# --- the campaign's entry point ----------------------------------------------------------------------------------

def run(version: str, seed: int, workdir: Path, kind: str | None = None) -> Outcome:
    """One salvage experiment (the damage kind of ``seed`` unless ``kind`` is given)."""
    kind = kind or damage_for(seed)
    outcome = Outcome(version, "salvage", seed)
    outcome.detail["kind"] = kind
    if kind == "unclean":
        run_unclean(version, seed, workdir, outcome)
    else:
        run_single(version, seed, workdir, kind, outcome)
    return outcome


def summary(experiments: list[dict[str, Any]]) -> str:
    """Records kept per damage kind, summed over a campaign's salvage experiments: Kafka's recovery against
    salvage, from the account and from what the brokers served."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    for e in experiments:
        if e.get("kind") != "salvage" or "counts" not in e.get("detail", {}):
            continue
        c, t = e["detail"]["counts"], totals[e["detail"]["kind"]]
        for i, key in enumerate(("account_kafka", "account_salvage", "served_kafka", "served_salvage")):
            t[i] += c[key]
        t[4] += 1
        t[5] += e["agree"]
    lines = ["| damage | runs | agree | kept by Kafka (account / served) | kept by salvage (account / served) |",
             "|---|---|---|---|---|"]
    for kind in DAMAGES:
        if kind in totals:
            t = totals[kind]
            lines.append(f"| {kind} | {t[4]} | {t[5]} | {t[0]} / {t[2]} | {t[1]} / {t[3]} |")
    return "\n".join(lines)


def recheck(version: str, seed: int, kind: str, kept: Path, damaged: list[str]) -> Outcome:
    """The checks again on a work dir the campaign kept (``--keep``): its ``damaged`` copy, brokers of
    ``version`` started afresh; with ``KAFKATOOL_SAVE_CASES`` the case is saved as a live run saves it."""
    outcome = Outcome(version, "salvage", seed)
    outcome.detail.update({"kind": kind, "damage": f"{kind}: kept run {kept.name}", "damaged": damaged})
    check_copy(version, kept, kept / "damaged", {**BASE_PROPS}, damaged, None, outcome)
    return outcome


if __name__ == "__main__":
    if len(sys.argv) == 2:  # python -m tests.kafka.salvage campaign.json: the per-kind table
        print(summary(json.loads(Path(sys.argv[1]).read_text())["experiments"]))
    elif sys.argv[1] == "recheck":  # python -m tests.kafka.salvage recheck VERSION SEED KIND KEPT_DIR PARTITION...
        result = recheck(sys.argv[2], int(sys.argv[3]), sys.argv[4], Path(sys.argv[5]), sys.argv[6:])
        print(json.dumps(result.to_json(), indent=1, default=str)[:6000])
    else:  # python -m tests.kafka.salvage VERSION SEED [KIND] [KEEP_DIR]
        import tempfile
        with tempfile.TemporaryDirectory(prefix="kafkatool-salvage-") as tmp:
            result = run(sys.argv[1], int(sys.argv[2]), Path(tmp), sys.argv[3] if len(sys.argv) > 3 else None)
            print(json.dumps(result.to_json(), indent=1, default=str)[:6000])
            if len(sys.argv) > 4:
                shutil.copytree(tmp, sys.argv[4], dirs_exist_ok=True)
