"""The crash-and-restart differential (issue 19, item 4b): a real broker killed under load, its log dir mutated on
a copy, ``kafkatool simulate-restart`` run on the copy, then the real broker started on another copy; partition by
partition, what kafkatool predicted against what the broker did.

A *base* is one KRaft node of version V under the whole workload mix, SIGKILLed (no flush, no snapshot, no
clean-shutdown marker) once a seeded number of records was acknowledged. An *experiment* takes the base, applies
one seeded mutation (:data:`MUTATIONS`) to a copy ``M``, then:

* kafkatool: ``simulate-restart -f json --now T --apply-to OUT M`` (``M`` is read only);
* Kafka: a fresh process of the same node (same ``node.id``, cluster and metadata log, new ports) on a copy of
  ``M``, started until every partition has a leader, described by Kafka's admin client (ListOffsets earliest,
  latest and read-committed, DescribeProducers), then SIGKILLed, and its log dir read back.

Compared per data partition: ``log_start_offset``, ``log_end_offset`` (the leader's high watermark: with one
replica it is the log end once the node leads), ``last_stable_offset``, ``producers``, ``segments`` (file names
and sizes; bytes), ``indexes`` (offset and time index entry by entry, preallocated zeros ignored), ``txnindex``,
``snapshots`` (file names and bytes), ``leader_epochs`` and ``apply_to`` (OUT's files equal the broker's); after
the mutations that only cut files (:data:`LOSS_COMPARED`) also ``loss``: the offsets and records of the batches
whose headers were on disk (a torn batch's too) that the restarted broker no longer has.

Two things the broker does after the load are outside ``simulate-restart`` and are held still: the restarted
node leads every partition under a new leader epoch (one more leader-epoch entry at the log end, dropped from the
comparison), and the transaction coordinator would complete or time out the transactions it loads from
``__transaction_state`` (markers appended later, on its own clock) - so ``__transaction_state-*`` is removed from
both copies, leaving open transactions open on both sides. The log cleaner is off and retention runs only after an
hour on the restarted node, so neither changes the files before they are read.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.kafka.broker import Cluster, KafkaError, Node, Workload, oracle
from tests.kafka.experiments import CASES, Outcome, save_case

#: Settings of the restarted node: nothing may change the files between the load and the read-back.
RESTART_PROPS = {
    "log.cleaner.enable": "false",
    "log.initial.task.delay.ms": "30000",
    "log.retention.check.interval.ms": "3600000",
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "default.replication.factor": "1",
}
#: Settings of the base: checkpoints written every second from the start, so recovery points, log start offsets
#: and high watermarks on disk trail the log as they do on a busy broker.
BASE_PROPS = {
    "log.initial.task.delay.ms": "500",
    "log.flush.offset.checkpoint.interval.ms": "1000",
    "log.flush.start.offset.checkpoint.interval.ms": "1000",
    "replica.high.watermark.checkpoint.interval.ms": "1000",
}
#: Extra topic configs of a base: segments roll every second, so a few seconds of load leave several small
#: segments per partition (Kafka 4 refuses a segment.bytes below 1 MiB).
TOPIC_CONFIGS = "segment.ms=1000"
WORKLOAD_BYTES = 16 << 20
WORKLOAD_MS = 60_000

#: Each mutation applied to a copy of the killed broker's log dir before the restart.
MUTATIONS: tuple[str, ...] = (
    "none",               # the SIGKILL alone
    "cut-active",         # the active segment cut at a random byte (a torn write)
    "cut-in-batch",       # the active segment cut inside its last batch, the batch's header left whole
    "flip-above",         # one byte flipped at or above the recovery point (recovery finds it)
    "flip-below",         # one byte flipped below the recovery point (Kafka does not re-read it)
    "delete-snapshots",   # every producer snapshot of a partition removed
    "recovery-point-back",  # a recovery point set back to an earlier segment (more is re-read)
    "hw-back",            # a high-watermark checkpoint entry set back
    "log-start-forward",  # a log-start-offset checkpoint entry moved into the log
    "cleaned",            # a leftover ``.cleaned`` file from an interrupted cleaning
    "swap",               # a ``.swap`` copy of a segment from an interrupted replace
    "deleted",            # the oldest segment renamed ``.deleted`` (async delete interrupted)
    "clean-marker",       # a clean-shutdown marker left although the broker was killed
)


@dataclass
class Base:
    """A killed broker's log dir and what set it up."""

    version: str
    seed: int
    log_dir: Path
    acked: int
    node_props: dict[str, str]
    cluster_id: str


def make_base(version: str, seed: int, workdir: Path) -> Base:
    """Run one node under the workload and SIGKILL it after a seeded number of acknowledged records."""
    rng = random.Random(f"crash-base-{seed}")
    target = rng.randrange(20000, 60000)
    with Cluster(version, workdir / "base", seed=seed, props=BASE_PROPS) as cluster:
        cluster.format()
        cluster.start()
        node = cluster.nodes[0]
        oracle(version, "topics", cluster.bootstrap, "1", TOPIC_CONFIGS)
        with Workload(cluster, seed, WORKLOAD_BYTES, WORKLOAD_MS) as work:
            work.wait_acked(target, timeout=WORKLOAD_MS / 1000)
            node.kill()
            acked = work.acked()
        return Base(version, seed, node.log_dir, acked, dict(node.props), cluster.cluster_id)


def data_partitions(log_dir: Path) -> list[Path]:
    """The workload's partition directories (internal topics left out)."""
    return sorted(p for p in log_dir.iterdir() if p.is_dir() and not p.name.startswith("__"))


def _segments(part: Path) -> list[Path]:
    return sorted(part.glob("*.log"))


def _checkpoint_set(path: Path, partition: str, value: int) -> None:
    """Set ``partition``'s entry of an offset checkpoint file (version 0 text: version, count, 'topic p offset')."""
    lines = path.read_text().splitlines() if path.exists() else []
    lines = lines or ["0", "0"]  # Kafka creates the file empty at start-up: no entries yet
    topic, _, num = partition.rpartition("-")
    out, found = lines[:2], False
    for line in lines[2:]:
        t, p, _ = line.split(" ")
        if t == topic and p == num:
            out.append(f"{t} {p} {value}")
            found = True
        else:
            out.append(line)
    if not found:
        out.append(f"{topic} {num} {value}")
        out[1] = str(len(out) - 2)
    path.write_text("\n".join(out) + "\n")


def _checkpoint_get(path: Path, partition: str) -> int | None:
    topic, _, num = partition.rpartition("-")
    if not path.exists():
        return None
    for line in path.read_text().splitlines()[2:]:
        t, p, v = line.split(" ")
        if t == topic and p == num:
            return int(v)
    return None


def _batches(data: bytes) -> list[tuple[int, int, int]]:
    """(position, size, base offset) of each whole batch of a segment."""
    out, pos = [], 0
    while pos + 12 <= len(data):
        size = 12 + int.from_bytes(data[pos + 8:pos + 12], "big")
        if size < 12 + 14 or pos + size > len(data):
            break
        out.append((pos, size, int.from_bytes(data[pos:pos + 8], "big")))
        pos += size
    return out


#: Bytes of a magic 2 batch header, and where its last offset delta and record count are (RecordBatch's layout,
#: read here independently of kafkatool).
BATCH_HEADER = 61
LAST_OFFSET_DELTA_AT = 23
RECORDS_COUNT_AT = 57
#: The mutations after which the records lost are compared: the files are only cut, so every header left on disk
#: is one the broker wrote.
LOSS_COMPARED = ("none", "cut-active", "cut-in-batch")


def headers_on_disk(part: Path) -> list[tuple[int, int, int]]:
    """(base offset, last offset, record count) of every batch of a partition whose whole header is on disk,
    the last one's records cut short or not: what the files say the log held."""
    out = []
    for seg in _segments(part):
        data = seg.read_bytes()
        pos = 0
        while pos + BATCH_HEADER <= len(data):
            length = int.from_bytes(data[pos + 8:pos + 12], "big")
            if length < BATCH_HEADER - 12:
                break
            base = int.from_bytes(data[pos:pos + 8], "big")
            delta = int.from_bytes(data[pos + LAST_OFFSET_DELTA_AT:pos + LAST_OFFSET_DELTA_AT + 4], "big")
            count = int.from_bytes(data[pos + RECORDS_COUNT_AT:pos + RECORDS_COUNT_AT + 4], "big")
            out.append((base, base + delta, count))
            pos += 12 + length
    return out


def lost_view(held: list[tuple[int, int, int]], log_end: int | None) -> dict[str, Any]:
    """What the restarted broker no longer has of ``held`` (:func:`headers_on_disk` before the restart): the
    offsets [its log end, the last offset held + 1) and the records of the batches there, in the shape of
    ``simulate-restart``'s ``loss``."""
    gone = [b for b in held if log_end is not None and b[1] >= log_end]
    if not gone:
        return {"offsets": None, "records": 0}
    return {"offsets": {"from": min(b[0] for b in gone), "to": max(b[1] for b in gone) + 1},
            "records": sum(b[2] for b in gone)}


def mutate(log_dir: Path, mutation: str, rng: random.Random) -> str:
    """Apply ``mutation`` to one seeded partition of ``log_dir``; a sentence saying what was done."""
    parts = data_partitions(log_dir)
    with_data = [p for p in parts if any(s.stat().st_size for s in _segments(p))]
    multi = [p for p in with_data if len(_segments(p)) > 1]
    part = rng.choice(with_data or parts)
    name = part.name
    if mutation == "none":
        return "none: the SIGKILL alone"
    if mutation == "cut-active":
        seg = _segments(part)[-1]
        size = seg.stat().st_size
        cut = rng.randrange(0, size) if size else 0
        with open(seg, "r+b") as f:
            f.truncate(cut)
        return f"cut-active: {name}/{seg.name} cut from {size} to {cut} bytes"
    if mutation == "cut-in-batch":
        lasts = [(p, _segments(p)[-1]) for p in with_data if _batches(_segments(p)[-1].read_bytes())]
        many = [(p, s) for p, s in lasts if _batches(s.read_bytes())[-1][1] > BATCH_HEADER + 1]
        if not many:
            return "cut-in-batch: no active segment ends in a batch with records: nothing cut"
        part, seg = rng.choice(many)
        name = part.name
        data = seg.read_bytes()
        pos, size, base = _batches(data)[-1]
        cut = rng.randrange(pos + BATCH_HEADER, pos + size)
        with open(seg, "r+b") as f:
            f.truncate(cut)
        return (f"cut-in-batch: {name}/{seg.name} cut from {len(data)} to {cut} bytes, inside its last batch "
                f"(offset {base}, bytes {pos}..{pos + size - 1}; its header kept)")
    if mutation in ("flip-above", "flip-below"):
        rp = _checkpoint_get(log_dir / "recovery-point-offset-checkpoint", name) or 0
        segs = _segments(part)
        if mutation == "flip-below":
            below = [s for s, nxt in itertools.pairwise(segs) if int(nxt.stem) <= rp and s.stat().st_size]
            if not below:
                part = rng.choice(multi) if multi else part
                name = part.name
                rp = _checkpoint_get(log_dir / "recovery-point-offset-checkpoint", name) or 0
                segs = _segments(part)
                below = [s for s, nxt in itertools.pairwise(segs) if int(nxt.stem) <= rp and s.stat().st_size]
            if not below:
                return f"flip-below: {name} has no segment below its recovery point {rp}: nothing flipped"
            seg = rng.choice(below)
        else:
            above = [s for s in segs if s.stat().st_size and (s is segs[-1] or int(s.stem) >= rp)]
            seg = rng.choice(above) if above else segs[-1]
        data = bytearray(seg.read_bytes())
        if not data:
            return f"{mutation}: {name}/{seg.name} is empty: nothing flipped"
        pos = rng.randrange(len(data))
        bit = 1 << rng.randrange(8)
        data[pos] ^= bit
        seg.write_bytes(bytes(data))
        return f"{mutation}: {name}/{seg.name} byte {pos} xor {bit:#04x} (recovery point {rp})"
    if mutation == "delete-snapshots":
        snapshotted = [p for p in parts if any(p.glob("*.snapshot"))]
        part = rng.choice(snapshotted) if snapshotted else part
        name = part.name
        gone = sorted(s.name for s in part.glob("*.snapshot"))
        for s in part.glob("*.snapshot"):
            s.unlink()
        return f"delete-snapshots: {name}: removed {', '.join(gone) or 'nothing'}"
    if mutation == "recovery-point-back":
        part = rng.choice(multi) if multi else part
        name = part.name
        bases = [int(s.stem) for s in _segments(part)]
        value = rng.choice(bases[:-1]) if len(bases) > 1 else 0
        _checkpoint_set(log_dir / "recovery-point-offset-checkpoint", name, value)
        return f"recovery-point-back: {name} recovery point set to {value}"
    if mutation == "hw-back":
        hw = _checkpoint_get(log_dir / "replication-offset-checkpoint", name) or 0
        value = rng.randrange(0, hw + 1)
        _checkpoint_set(log_dir / "replication-offset-checkpoint", name, value)
        return f"hw-back: {name} high watermark checkpoint {hw} set to {value}"
    if mutation == "log-start-forward":
        segs = _segments(part)
        batches = [b for s in segs for b in _batches(s.read_bytes())]
        value = rng.choice(batches)[2] + 1 if batches else 0
        path = log_dir / "log-start-offset-checkpoint"
        if not path.exists():
            path.write_text("0\n0\n")
        _checkpoint_set(path, name, value)
        return f"log-start-forward: {name} log start offset set to {value}"
    if mutation in ("cleaned", "swap"):
        part = rng.choice(multi) if multi else part
        name = part.name
        segs = _segments(part)
        seg = rng.choice(segs[:-1]) if len(segs) > 1 else segs[-1]
        target = seg.with_name(seg.name + (".cleaned" if mutation == "cleaned" else ".swap"))
        shutil.copyfile(seg, target)
        return f"{mutation}: {name}/{target.name} left as an identical copy of {seg.name}"
    if mutation == "deleted":
        part = rng.choice(multi) if multi else part
        name = part.name
        segs = _segments(part)
        if len(segs) < 2:
            return f"deleted: {name} has one segment: nothing renamed"
        stem = segs[0].stem
        renamed = []
        for f in sorted(part.glob(f"{stem}.*")):
            if f.suffix in (".log", ".index", ".timeindex", ".txnindex"):
                f.rename(f.with_name(f.name + ".deleted"))
                renamed.append(f.name)
        return f"deleted: {name}: {', '.join(renamed)} renamed *.deleted"
    if mutation == "clean-marker":
        (log_dir / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":-1}')
        return "clean-marker: .kafka_cleanshutdown written after the SIGKILL"
    raise ValueError(f"unknown mutation {mutation}")


def kafkatool_restart(log_dir: Path, out: Path, now_ms: int) -> dict[str, Any]:
    """``kafkatool simulate-restart -f json --now NOW --apply-to OUT LOG_DIR``: its JSON document."""
    cmd = [sys.executable, "-m", "kafkatool", "simulate-restart", "-f", "json", "--now", str(now_ms),
           "--apply-to", str(out), str(log_dir)]
    proc = subprocess.run(cmd, capture_output=True, timeout=600, check=False)
    if proc.returncode not in (0, 1):
        raise KafkaError(f"kafkatool simulate-restart exited {proc.returncode}: {proc.stderr.decode()[-2000:]}")
    return json.loads(proc.stdout)


class StartFailure(KafkaError):
    """The broker stopped while loading its logs; ``loading_error`` is the exception it named, with paths made
    relative to the log dir (as kafkatool names files)."""

    def __init__(self, loading_error: str) -> None:
        super().__init__(loading_error)
        self.loading_error = loading_error


#: LogManager's line when a log failed to load (3.9 and 4.0 put the exception after ": ", 4.4 on the next line).
LOADING_ERROR = re.compile(r"There was an error in one of the threads during logs loading(?:: |\r?\n)(.*)")


def broker_restart(base: Base, log_dir: Path, workdir: Path, timeout: float = 90) -> dict[str, Any]:
    """Start the base's node on ``log_dir`` (moved into the node's work dir), describe it, SIGKILL it. A broker
    that gives up while loading its logs raises :class:`StartFailure`."""
    node = Node(base.version, 1, workdir, props={**base.node_props, **RESTART_PROPS})
    shutil.move(str(log_dir), str(node.log_dir))
    try:
        node.start()
        try:
            node.wait_started()
        except KafkaError:
            found = LOADING_ERROR.search(node.log_text())
            if found and not node.running:
                raise StartFailure(found.group(1).replace(f"{node.log_dir}/", "")) from None
            raise
        wanted = {p.name for p in data_partitions(node.log_dir)}
        deadline = time.monotonic() + timeout
        while True:
            doc = oracle(base.version, "describe", node.bootstrap, timeout=timeout)[-1]
            parts = doc["partitions"]
            ready = all(parts.get(n, {}).get("leader") == 1 and parts[n].get("high_watermark") is not None
                        and isinstance(parts[n].get("producers"), list) for n in wanted)
            if ready:
                return doc
            if time.monotonic() > deadline or not node.running:
                raise KafkaError(f"partitions without a leader after {timeout:.0f} s\n{node.log_tail()}")
            time.sleep(0.5)
    finally:
        node.kill()


# --- reading both sides back -------------------------------------------------------------------------------------


def _entries(path: Path, size: int) -> list[str]:
    """An index file's entries in hex, the preallocated zeros behind the last one left out."""
    data = path.read_bytes() if path.exists() else b""
    end = len(data.rstrip(b"\0"))
    end = -(-end // size) * size
    return [data[i:i + size].hex() for i in range(0, end, size)]


def _epochs(path: Path) -> list[list[int]]:
    if not path.exists():
        return []
    lines = path.read_text().split("\n")
    count = int(lines[1])
    return [[int(a), int(b)] for a, b in (line.split() for line in lines[2:2 + count])]


def _digest(path: Path) -> str:
    data = path.read_bytes()
    return f"{len(data)} bytes sha256 {hashlib.sha256(data).hexdigest()[:16]}"


def files_view(part: Path, below: int | None = None) -> dict[str, Any]:
    """The files of one partition directory as compared: names, sizes and digests of segments, txn indexes and
    snapshots; index entries; leader epochs (those starting below ``below`` when given)."""
    files = sorted(f for f in part.iterdir() if f.is_file())
    epochs = _epochs(part / "leader-epoch-checkpoint")
    return {
        "segments": [[f.name, f.stat().st_size] for f in files if f.suffix == ".log"],
        "segment_bytes": {f.name: _digest(f) for f in files if f.suffix == ".log"},
        "index": {f.name: _entries(f, 8) for f in files if f.suffix == ".index"},
        "timeindex": {f.name: _entries(f, 12) for f in files if f.suffix == ".timeindex"},
        "txnindex": {f.name: _digest(f) for f in files if f.suffix == ".txnindex"},
        "snapshots": {f.name: _digest(f) for f in files if f.suffix == ".snapshot"},
        "other": sorted(f.name for f in files if f.suffix not in (".log", ".index", ".timeindex", ".txnindex",
                                                                  ".snapshot") and f.name != "leader-epoch-checkpoint"),
        "leader_epochs": [e for e in epochs if below is None or e[1] < below],
    }


def kafka_view(described: dict[str, Any], broker_dir: Path, name: str,
               held: list[tuple[int, int, int]] | None = None) -> dict[str, Any]:
    """What the restarted broker showed of one partition: admin-client answers and its files. The leader epoch
    the restarted node assigned itself at the log end is left out (see the module's docstring). With ``held``
    (:func:`headers_on_disk` of the input) also what it lost of them (``loss``)."""
    kafka = described["partitions"].get(name, {})
    leo = kafka.get("high_watermark")
    view = {"log_start_offset": kafka.get("log_start_offset"), "log_end_offset": leo,
            "last_stable_offset": kafka.get("last_stable_offset"), "producers": kafka.get("producers"),
            "files": files_view(broker_dir / name, leo)}
    if held is not None:
        view["loss"] = lost_view(held, leo)
    return view


def _producers(doc: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """kafkatool's producers in DescribeProducers' shape. kafkatool's JSON writes an absent value as null; the
    admin client reports an absent coordinator epoch or transaction start as absent too, but a producer with no
    batch (only markers) with lastSequence -1 (Kafka's NO_SEQUENCE)."""
    out = []
    for p in sorted(doc, key=lambda p: p["producer_id"]):
        coord = p.get("coordinator_epoch")
        last_seq = p["last_sequence"]
        out.append({"producer_id": p["producer_id"], "producer_epoch": p["producer_epoch"],
                    "last_sequence": -1 if last_seq is None else last_seq, "last_timestamp": p["last_timestamp"],
                    "coordinator_epoch": None if coord is None or coord < 0 else coord,
                    "current_txn_start_offset": p.get("current_txn_first_offset")})
    return out


def same_words(error: str | None) -> str | None:
    """An exception as compared: Kafka 3.x's Scala ``require`` puts "requirement failed: " before the message that
    4.x's Java code throws bare; the exception and the message are otherwise the same."""
    return None if error is None else error.replace("requirement failed: ", "")


def start_failures(predicted: dict[str, Any]) -> list[str | None]:
    """The exceptions kafkatool says the broker throws while loading (one per failing partition)."""
    return [same_words(p["error"]) for p in predicted["partitions"] if p.get("outcome") == "failed"]


def compare_partition(outcome: Outcome, name: str, kafka: dict[str, Any], mine: dict[str, Any] | None,
                      out_dir: Path) -> None:
    """One partition: Kafka's view against kafkatool's JSON for it and the directory ``--apply-to`` wrote."""
    if not outcome.check("partitions", True, mine is not None, where=name) or mine is None:
        return
    if "start_failure" in kafka:  # a saved case where the broker gave up on this partition
        outcome.check("start_failure", same_words(kafka["start_failure"]), same_words(mine.get("error")),
                      where=name)
        return
    leo = mine["log_end_offset"]
    theirs = kafka["files"]
    outcome.check("log_start_offset", kafka["log_start_offset"], mine["log_start_offset"], where=name)
    outcome.check("log_end_offset", kafka["log_end_offset"], leo, where=name)
    fuo = mine.get("first_unstable_offset")
    outcome.check("last_stable_offset", kafka["last_stable_offset"], leo if fuo is None else fuo, where=name)
    if "loss" in kafka:  # the offsets and records the restart dropped (cut mutations: every header is Kafka's)
        outcome.check("loss", kafka["loss"], {"offsets": mine["loss"]["offsets"], "records": mine["loss"]["records"]},
                      where=name)
    outcome.check("producers", kafka["producers"], _producers(mine.get("producers") or []), where=name)
    outcome.check("leader_epochs", theirs["leader_epochs"],
                  [[e["epoch"], e["start_offset"]] for e in mine["leader_epochs"] if e["start_offset"] < leo],
                  where=name)
    outcome.check("segments", theirs["segments"],
                  [[f"{s['base_offset']:020d}.log", s["size_bytes"]] for s in mine["segments"]], where=name)
    outcome.check("snapshots", sorted(theirs["snapshots"]),
                  [f"{o:020d}.snapshot" for o in mine["snapshot_files_after"]], where=name)
    if not outcome.check("apply_to", True, (out_dir / name).is_dir(), where=name):
        return
    applied = files_view(out_dir / name, leo)
    for key in ("segment_bytes", "index", "timeindex", "txnindex"):
        outcome.check(key, theirs[key], applied[key], where=name)
    outcome.check("snapshot_bytes", theirs["snapshots"], applied["snapshots"], where=name)
    outcome.check("apply_to", [theirs["other"], theirs["leader_epochs"]],
                  [applied["other"], applied["leader_epochs"]], where=name)


def experiment(base: Base, mutation: str, seed: int, workdir: Path, save: bool = False) -> Outcome:
    """One mutation of ``base``: kafkatool's prediction against the restarted broker. With ``save`` (or
    ``KAFKATOOL_SAVE_CASES=1`` and a disagreement) the mutated partition(s) become a case under fixtures/oracle."""
    outcome = Outcome(base.version, "crash", seed)
    rng = random.Random(f"crash-{seed}-{mutation}")
    work = workdir / f"exp-{seed}-{mutation}"
    mutated = work / "input"
    shutil.copytree(base.log_dir, mutated)
    for internal in mutated.glob("__transaction_state-*"):
        shutil.rmtree(internal)
    outcome.detail["mutation"] = mutate(mutated, mutation, rng)
    outcome.detail["base"] = {"seed": base.seed, "acked": base.acked}
    broker_copy = work / "broker-input"
    shutil.copytree(mutated, broker_copy)
    held = ({p.name: headers_on_disk(p) for p in data_partitions(mutated)} if mutation in LOSS_COMPARED else {})
    now_ms = int(time.time() * 1000)
    predicted = kafkatool_restart(mutated, work / "kafkatool-out", now_ms)
    ours = {p["directory"]: p for p in predicted["partitions"]}
    views: dict[str, dict[str, Any]] = {}
    try:
        described = broker_restart(base, broker_copy, work / "node")
    except StartFailure as failure:
        # The broker gave up loading a partition: kafkatool must name the same partition and exception.
        outcome.detail["start_failure"] = failure.loading_error
        failed = start_failures(predicted)
        outcome.check("start_failure", [same_words(failure.loading_error)], failed)
        named = [p.name for p in data_partitions(mutated) if f"{p.name}/" in failure.loading_error]
        views = {name: {"start_failure": failure.loading_error} for name in named}
    else:
        broker_dir = work / "node" / "data"
        for part in data_partitions(broker_dir):
            views[part.name] = kafka_view(described, broker_dir, part.name, held.get(part.name))
            compare_partition(outcome, part.name, views[part.name], ours.get(part.name), work / "kafkatool-out")
        outcome.check("start_failure", [], start_failures(predicted))
    wanted = os.environ.get("KAFKATOOL_SAVE_CASES")
    if save or wanted == "always" or (wanted == "1" and not outcome.agree):
        names = sorted({d.split(":", 1)[0] for d in outcome.disagreements} & set(views))
        names = names or [n for n in views if f"{n}/" in outcome.detail["mutation"] or f"{n}:" in
                          outcome.detail["mutation"]]
        names = names or ([min(views, key=lambda n: sum(f.stat().st_size for f in (mutated / n).iterdir()
                                                        if f.suffix not in (".index", ".timeindex")))]
                          if views else [])
        outcome.case = save_crash_case(outcome, mutated, now_ms, {n: views[n] for n in names}).name
    return outcome


def save_crash_case(outcome: Outcome, mutated: Path, now_ms: int, views: dict[str, dict[str, Any]]) -> Path:
    """A case: the mutated input (only the partitions in ``views``, with the log dir's checkpoints and marker)
    and what Kafka did with each (``views``), replayed by ``tests/test_oracle_crash_cases.py``."""
    expected = {"kind": "crash", "kafkaVersion": outcome.version, "seed": outcome.seed, "now": now_ms,
                "mutation": outcome.detail.get("mutation"), "disagreements": outcome.disagreements,
                "partitions": views}
    mutation = str(outcome.detail.get("mutation", "")).split(":")[0]
    return save_case(f"crash-{outcome.version}-{outcome.seed}-{mutation}", mutated, expected, partitions=list(views),
                     root=CASES)


def run_many(version: str, seed: int, workdir: Path, count: int,
             mutations: tuple[str, ...] = MUTATIONS) -> list[Outcome]:
    """``count`` experiments on one base (seeded kill moment), the mutations taken in turn from a seeded start."""
    base = make_base(version, seed, workdir)
    start = seed % len(mutations)
    outcomes = []
    for i in range(count):
        mutation = mutations[(start + i) % len(mutations)]
        outcomes.append(experiment(base, mutation, seed * 100 + i, workdir))
        if outcomes[-1].agree:  # a disagreeing experiment's files stay for the caller to keep
            shutil.rmtree(workdir / f"exp-{seed * 100 + i}-{mutation}", ignore_errors=True)
    return outcomes


def run(version: str, seed: int, workdir: Path) -> Outcome:
    """One campaign experiment: its own base (kill moment from the seed) and one mutation from the seed."""
    base = make_base(version, seed, workdir)
    return experiment(base, MUTATIONS[seed % len(MUTATIONS)], seed, workdir)


if __name__ == "__main__":  # python -m tests.kafka.crash VERSION SEED [COUNT]: run and print
    import tempfile
    with tempfile.TemporaryDirectory(prefix="kafkatool-crash-") as tmp:
        only = tuple(sys.argv[4].split(",")) if len(sys.argv) > 4 else MUTATIONS
        results = run_many(sys.argv[1], int(sys.argv[2]), Path(tmp), int(sys.argv[3]) if len(sys.argv) > 3 else 1,
                           only)
        for r in results:
            print(r.detail.get("mutation"), "agree" if r.agree else "DISAGREE")
            print("\n".join("   " + d for d in r.disagreements[:15]))
        if os.environ.get("KEEP"):
            shutil.copytree(tmp, os.environ["KEEP"], dirs_exist_ok=True)
