"""The decoding differential (issue 19, item 4a): every file a real broker wrote, dumped by that version's own
``DumpLogSegments`` and by ``kafkatool dump-segment -f kafka --kafka-version V``, compared byte for byte per file.

One experiment: a single KRaft node of version V, the whole workload mix (plain, the four codecs, idempotent and
transactional producers with aborts and fencing, compaction with tombstones, retention deletes), enough data
into a few partitions to roll segments, consumer-group commits (classic; also the KIP-848 consumer protocol on
4.x), a controller that snapshots its metadata often, then a controlled shutdown (SIGTERM: producer snapshots
and the clean-shutdown marker written). Then, per mode, one DumpLogSegments JVM over all the files of that mode
(``--files a,b,c``: it prints ``Dumping <file>`` before each) and one kafkatool run over the same files:

============================  =======================================================  =====================
field                         files                                                    DumpLogSegments flags
============================  =======================================================  =====================
dump:shallow                  every ``.log`` (internal topics too)                     (none)
dump:deep                     every ``.log``                                           --deep-iteration
dump:print-data               every data-topic ``.log``                                + --print-data-log
dump:offsets-decoder          ``__consumer_offsets-*/*.log``                           --offsets-decoder
dump:transaction-log-decoder  ``__transaction_state-*/*.log``                          --transaction-log-decoder
dump:cluster-metadata-decoder ``__cluster_metadata-0`` ``.log`` and ``.checkpoint``    --cluster-metadata-decoder
dump:index / timeindex /      every ``.index``, ``.timeindex``, ``.txnindex`` and
txnindex / snapshot           producer ``.snapshot``                                   (none)
============================  =======================================================  =====================

stdout is compared per file (the text after each ``Dumping`` header). Record values hold the workload's own
text; keys and values are printed as Kafka's ``StringDeserializer`` does.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.kafka.broker import Cluster, Workload, oracle, run_java
from tests.kafka.experiments import CASES, Outcome

#: The broker settings of a decoding run: metadata snapshots every few KiB of records, and the cleaner quick.
PROPS = {
    "metadata.log.max.record.bytes.between.snapshots": "4096",
    "metadata.snapshot.max.interval.ms": "2000",
}
WORKLOAD_BYTES = 16 << 20
WORKLOAD_MS = 40_000

#: Each mode: (field, DumpLogSegments flags, kafkatool flags, which files).
MODES: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = [
    ("dump:shallow", (), ("--decoder", "none"), "log"),
    ("dump:deep", ("--deep-iteration",), ("--deep", "--decoder", "none"), "log"),
    ("dump:print-data", ("--deep-iteration", "--print-data-log"), ("--print-data", "--decoder", "none"), "data-log"),
    ("dump:offsets-decoder", ("--offsets-decoder",), ("--decoder", "group-coordinator"), "offsets-log"),
    ("dump:transaction-log-decoder", ("--transaction-log-decoder",), ("--decoder", "transaction-log"), "txn-log"),
    ("dump:cluster-metadata-decoder", ("--cluster-metadata-decoder",), ("--decoder", "cluster-metadata"),
     "metadata"),
    ("dump:index", (), (), "index"),
    ("dump:timeindex", (), (), "timeindex"),
    ("dump:txnindex", (), (), "txnindex"),
    ("dump:snapshot", (), (), "snapshot"),
]


def produce(version: str, seed: int, workdir: Path) -> Path:
    """Run the node, the workload and the groups, shut down cleanly; the node's log dir."""
    with Cluster(version, workdir / "cluster", seed=seed, props=PROPS) as cluster:
        cluster.format()
        cluster.start()
        node = cluster.nodes[0]
        oracle(version, "topics", cluster.bootstrap, "1")
        with Workload(cluster, seed, WORKLOAD_BYTES, WORKLOAD_MS) as work:
            work.wait(timeout=WORKLOAD_MS / 1000 + 120)
        protocols = "classic" if version.startswith("3.") else "classic,consumer"
        oracle(version, "groups", cluster.bootstrap, str(seed), protocols)
        time.sleep(3)  # the cleaner and retention act on their short intervals
        node.stop()
        return node.log_dir


def files_by_kind(log_dir: Path) -> dict[str, list[Path]]:
    """Every file of each mode's kind, sorted (partition, then name)."""
    out: dict[str, list[Path]] = {k: [] for k in ("log", "data-log", "offsets-log", "txn-log", "metadata", "index",
                                                    "timeindex", "txnindex", "snapshot")}
    for part in sorted(p for p in log_dir.iterdir() if p.is_dir()):
        internal = part.name.startswith("__")
        for f in sorted(part.iterdir()):
            suffix = f.suffix
            if part.name == "__cluster_metadata-0":
                if suffix in (".log", ".checkpoint"):
                    out["metadata"].append(f)
                if suffix == ".log":
                    out["log"].append(f)
                continue
            if suffix == ".log":
                out["log"].append(f)
                if not internal:
                    out["data-log"].append(f)
                elif part.name.startswith("__consumer_offsets-"):
                    out["offsets-log"].append(f)
                elif part.name.startswith("__transaction_state-"):
                    out["txn-log"].append(f)
            elif suffix in (".index", ".timeindex", ".txnindex", ".snapshot"):
                out[suffix[1:]].append(f)
    return out


def split_dumps(text: str) -> dict[str, str]:
    """DumpLogSegments' output per file: the text after each ``Dumping <file>`` line."""
    out: dict[str, str] = {}
    current = None
    lines: list[str] = []
    for line in text.splitlines(keepends=True):
        if line.startswith("Dumping "):
            if current is not None:
                out[current] = "".join(lines)
            current, lines = line[len("Dumping "):].rstrip("\n"), []
        elif current is not None:
            lines.append(line)
    if current is not None:
        out[current] = "".join(lines)
    return out


def kafka_dump(version: str, files: list[Path], flags: tuple[str, ...]) -> str:
    """That version's DumpLogSegments over ``files`` in one JVM; its stdout."""
    proc = run_java(version, "DumpLogSegments", *flags, "--files", ",".join(map(str, files)), timeout=600)
    return proc.stdout.decode()


def kafkatool_dump(version: str, files: list[Path], flags: tuple[str, ...]) -> str:
    """``kafkatool dump-segment -f kafka --kafka-version V`` over ``files``; its stdout."""
    cmd = [sys.executable, "-m", "kafkatool", "dump-segment", "-f", "kafka", "--kafka-version", version, *flags,
           *map(str, files)]
    proc = subprocess.run(cmd, capture_output=True, timeout=600, env={**os.environ, "COLUMNS": "200"}, check=False)
    return proc.stdout.decode()


def compare(version: str, log_dir: Path, outcome: Outcome) -> None:
    """Every mode over its files: per file, Kafka's text against kafkatool's."""
    files = files_by_kind(log_dir)
    for field, kafka_flags, our_flags, kind in MODES:
        chosen = files[kind]
        if not chosen:  # this run wrote no file of the kind (no aborted transaction: no .txnindex)
            outcome.detail.setdefault("not_exercised", []).append(field)
            continue
        kafka = split_dumps(kafka_dump(version, chosen, kafka_flags))
        ours = split_dumps(kafkatool_dump(version, chosen, our_flags))
        outcome.detail.setdefault("files", {})[field] = len(chosen)
        outcome.check(f"{field}:files", sorted(kafka), sorted(ours))
        for name in sorted(kafka):
            rel = "/".join(Path(name).parts[-2:])
            if not outcome.check(field, kafka[name], ours.get(name), where=rel):
                outcome.detail.setdefault("disagreeing", []).append((rel, field.split(":", 1)[1]))


MODE_FLAGS = {field.split(":", 1)[1]: (kafka, ours) for field, kafka, ours, _ in MODES}
"""Each mode by its short name (``deep``, ``offsets-decoder``...): DumpLogSegments' flags and kafkatool's."""
CASE_LOG_BYTES = 8192


def cut_at_batch(data: bytes, limit: int) -> bytes:
    """The longest prefix of a segment made of whole batches and at most ``limit`` bytes long."""
    pos = 0
    while pos + 12 <= len(data):
        size = 12 + int.from_bytes(data[pos + 8:pos + 12], "big")
        if pos + size > min(limit, len(data)):
            break
        pos += size
    return data[:pos]


def save_decoding_case(name: str, version: str, seed: int, files: list[tuple[Path, str]], description: str) -> Path:
    """A case of ``files`` (each with the mode it is dumped in): segments cut to whole batches of at most
    :data:`CASE_LOG_BYTES`, and that version's DumpLogSegments text of each as ``dump/<partition>/<file>.<mode>.txt``.
    """
    case = CASES / name
    if case.exists():
        shutil.rmtree(case)
    dumps, mutations = [], []
    for path, mode in files:
        target = case / "input" / path.parent.name / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        data = path.read_bytes()
        if path.suffix == ".log" and len(data) > CASE_LOG_BYTES:
            data = cut_at_batch(data, CASE_LOG_BYTES)
            mutations.append(f"{path.parent.name}/{path.name} cut to its first {len(data)} bytes (whole batches)")
        if not target.exists():
            target.write_bytes(data)
        text = split_dumps(kafka_dump(version, [target], MODE_FLAGS[mode][0]))[str(target)]
        rel = f"{path.parent.name}/{path.name}.{mode}.txt"
        (case / "dump" / rel).parent.mkdir(parents=True, exist_ok=True)
        (case / "dump" / rel).write_text(text)
        dumps.append({"file": f"{path.parent.name}/{path.name}", "mode": mode, "dump": rel,
                      "dumpLogSegmentsFlags": list(MODE_FLAGS[mode][0])})
    doc = {"case": name, "kind": "decoding", "kafkaVersion": version, "seed": seed, "description": description,
           "mutations": mutations, "dumps": dumps}
    (case / "expected.json").write_text(json.dumps(doc, indent=1) + "\n")
    return case


def run(version: str, seed: int, workdir: Path) -> Outcome:
    """One decoding experiment; with ``KAFKATOOL_SAVE_CASES=1`` each file that disagreed is saved as a case."""
    outcome = Outcome(version, "decoding", seed)
    log_dir = produce(version, seed, workdir)
    outcome.detail["rolled"] = sorted(p.name for p in log_dir.iterdir() if len(list(p.glob("*.log"))) > 1)
    compare(version, log_dir, outcome)
    if os.environ.get("KAFKATOOL_SAVE_CASES") == "1" and outcome.detail.get("disagreeing"):
        files = [(log_dir / rel, mode) for rel, mode in outcome.detail["disagreeing"]]
        outcome.case = save_decoding_case(f"decoding-{version}-{seed}", version, seed, files,
                                          "files whose dump disagreed in a decoding experiment").name
    return outcome


if __name__ == "__main__":  # python -m tests.kafka.decoding VERSION LOG_DIR: compare a kept log dir again
    result = Outcome(sys.argv[1], "decoding", 0)
    compare(sys.argv[1], Path(sys.argv[2]), result)
    print("\n".join(result.disagreements[:40]) or "agree", result.fields)
