"""Real Kafka 4.x data for the corpus (issue 22 item 5): share groups (KIP-932), streams groups (KIP-1071) and a
KRaft voter change (KIP-853), written by a 4.4 broker on loopback and saved under ``fixtures/kafka-4x/<case>/``
with what Kafka itself printed.

``python -m tests.kafka.live4x [share|streams|voters ...]`` (after ``python -m tests.kafka.versions fetch`` and
``mvn dependency:get -Dartifact=org.apache.kafka:kafka-streams:4.4.0``, once, online) builds each case:

- **share-groups**: one combined node (share groups are on by default on 4.4: ``share.version`` 2 is the newest
  production level, set at format), a topic of 12 records, one ``KafkaShareConsumer`` in explicit acknowledgement
  mode accepting, releasing (then redelivered) and rejecting records, committing after each poll. The share
  coordinator snapshots every 3 updates (``share.coordinator.snapshot.update.records.per.snapshot``), so
  ``__share_group_state`` holds ShareSnapshot and ShareUpdate records; ``__consumer_offsets`` holds the
  ShareGroup* records.
- **streams-groups**: one combined node, a Kafka Streams app (``group.protocol=streams``, a count by key into an
  in-memory store, whose changelog topic ``streams-app-counts-changelog`` the broker creates for the group, topic
  auto-creation being off) that runs until its offsets are committed: ``__consumer_offsets`` holds the
  StreamsGroup* records (topology, members, assignments) and the committed offsets.
- **voters-change**: node 1 (broker+controller) formatted ``--standalone`` (a dynamic quorum, kraft.version 1),
  node 2 a controller formatted ``--no-initial-controllers``; ``kafka-metadata-quorum add-controller`` makes node 2
  a voter, ``remove-controller`` removes it again. ``__cluster_metadata`` (log and snapshots) holds the
  KRaftVersionRecord and a VotersRecord per change; ``quorum-state`` is data version 1 (leader, epoch,
  ``votedDirectoryId``; no voter list any more).

Each case keeps the node's log dir (every partition, the checkpoints, the clean-shutdown marker; a ``.log`` above
the size cap cut after its last whole batch within the cap, as kafkatool's own log walker reads it; the metadata
log's preallocated 10 MiB indexes left out, Kafka rebuilds them) and, beside it,
``kafka-dls/<log dir>/<partition>/<file>.<mode>.txt`` (DumpLogSegments 4.4 with the topic's decoder) and
``expected.json`` (the admin client's describe of the groups or of the quorum, and MetadataQuorumCommand's text).
Every broker started here is stopped before the function returns.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kafkatool.model import RecordBatch
from kafkatool.schema.log_segment import walk_log
from tests.kafka import versions
from tests.kafka.broker import Cluster, KafkaError, Node, cluster_id, oracle, run_java
from tests.kafka.decoding import kafka_dump, split_dumps

VERSION = "4.4.0"
"""The newest release line: the one the saved ``fixtures/kafka-4x`` cases come from."""

#: The first release line each case runs on, whose broker and clients have its feature (KIP-932 share groups,
#: KIP-1071 streams groups, KIP-853 voter changes: the voters case needs only the base driver, the others Oracle4x,
#: which compiles against 4.1+ clients); and the features each line needs set at format time to run it.
SINCE: dict[str, tuple[int, int]] = {"share": (4, 1), "streams": (4, 2), "voters": (3, 9)}
FORMAT_FEATURES: dict[tuple[str, str], tuple[str, ...]] = {
    ("share", "4.1"): ("--feature", "share.version=1"),
    ("share", "4.2"): ("--feature", "share.version=1"),
    ("share", "4.3"): ("--feature", "share.version=1"),
    ("streams", "4.2"): ("--feature", "streams.version=1"),
    ("streams", "4.3"): ("--feature", "streams.version=1"),
}


def line(version: str) -> str:
    """``4.2.2`` -> ``4.2``."""
    return ".".join(version.split(".")[:2])


def runs_on(case: str, version: str) -> bool:
    """Whether ``version`` has what ``case`` exercises."""
    major, minor = (int(x) for x in version.split(".")[:2])
    return (major, minor) >= SINCE[case]


def format_extra(case: str, version: str) -> tuple[str, ...]:
    """The ``kafka-storage format`` arguments ``case`` needs on ``version``."""
    return FORMAT_FEATURES.get((case, line(version)), ())
ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "kafka-4x"
SRC = Path(__file__).resolve().parent / "src" / "live4x" / "java"
#: A case's segments are cut to whole batches of at most this many bytes.
MAX_LOG_BYTES = 48 << 10

#: Each internal topic's DumpLogSegments decoder flag.
DECODERS = {
    "__consumer_offsets": ("offsets-decoder", ("--offsets-decoder",)),
    "__share_group_state": ("share-group-state-decoder", ("--share-group-state-decoder",)),
    "__cluster_metadata": ("cluster-metadata-decoder", ("--cluster-metadata-decoder",)),
    "__transaction_state": ("transaction-log-decoder", ("--transaction-log-decoder",)),
}

#: Broker settings for the group cases: one partition per internal topic, snapshots of share state often.
GROUP_PROPS = {
    "offsets.topic.num.partitions": "1",
    "transaction.state.log.num.partitions": "1",
    "share.coordinator.state.topic.num.partitions": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "share.coordinator.snapshot.update.records.per.snapshot": "3",
    "group.share.min.heartbeat.interval.ms": "1000",
    "group.share.heartbeat.interval.ms": "1000",
    "group.streams.min.heartbeat.interval.ms": "1000",
    "group.streams.heartbeat.interval.ms": "1000",
    "group.streams.initial.rebalance.delay.ms": "0",
}


def m2() -> Path:
    """The local Maven repository."""
    return Path(os.environ.get("MAVEN_REPO", Path.home() / ".m2" / "repository"))


def streams_jars(version: str = VERSION) -> list[Path]:
    """kafka-streams of ``version`` from the local Maven cache (``tests/kafka/pom.xml`` resolves it). RocksDB is
    not needed: the app's only store is an in-memory one."""
    jars = [m2() / "org/apache/kafka/kafka-streams" / version / f"kafka-streams-{version}.jar"]
    missing = [j for j in jars if not j.is_file()]
    if missing:
        raise versions.JarsMissing(f"kafka-streams {version} is not in the Maven cache: run "
                                   "`python -m tests.kafka.versions fetch`")
    return jars


def classes_dir(version: str = VERSION) -> Path:
    """Where Oracle4x is compiled (beside the version's Maven build)."""
    return versions.target(version) / "live4x-classes"


def driver_classpath(version: str = VERSION) -> str:
    """Oracle4x, kafka-streams and the version's broker/tools/clients classpath."""
    return os.pathsep.join([str(classes_dir(version)), *map(str, streams_jars(version)),
                            versions.classpath(version)])


def compile_driver(version: str = VERSION) -> None:
    """javac Oracle4x.java (and Oracle.java, whose helpers it uses) against ``version``'s clients when a source is
    newer than its class."""
    out = classes_dir(version)
    target = out / "kafkatool" / "oracle" / "Oracle4x.class"
    sources = [*SRC.rglob("*.java"), *(SRC.parents[1] / "main" / "java").rglob("*.java")]
    if target.is_file() and all(s.stat().st_mtime <= target.stat().st_mtime for s in sources):
        return
    out.mkdir(parents=True, exist_ok=True)
    javac = str(Path(versions.java_binary()).with_name("javac"))
    cp = os.pathsep.join([*map(str, streams_jars(version)), versions.classpath(version)])
    proc = subprocess.run([javac, "-nowarn", "--release", "17", "-d", str(out), "-cp", cp, *map(str, sources)],
                          capture_output=True, timeout=300, check=False)
    if proc.returncode != 0:
        raise KafkaError(f"javac Oracle4x failed:\n{proc.stderr.decode(errors='replace')[-4000:]}")


def oracle4x(*args: str, timeout: float = 180, log_file: Path | None = None, version: str = VERSION) -> list[dict]:
    """Run Oracle4x of ``version`` and parse its JSON lines."""
    compile_driver(version)
    cmd = versions.java(version, "kafkatool.oracle.Oracle4x", *args, log_file=log_file)
    cmd[cmd.index("-cp") + 1] = driver_classpath(version)
    proc = subprocess.run(cmd, capture_output=True, timeout=timeout, start_new_session=True, check=False)
    if proc.returncode != 0:
        raise KafkaError(f"Oracle4x {' '.join(args)} exited {proc.returncode}:\n"
                         f"{proc.stderr.decode(errors='replace')[-3000:]}")
    return [json.loads(line) for line in proc.stdout.decode().splitlines() if line.startswith("{")]


def batch_end_within(data: bytes, limit: int) -> int:
    """The end of the last whole batch within ``limit`` bytes, as kafkatool's own log walker reads the segment."""
    end = 0
    for item in walk_log(data, "trim"):
        if not isinstance(item, RecordBatch) or item.position + 12 + item.batch_length > limit:
            break
        end = item.position + 12 + item.batch_length
    return end


def copy_partition(src: Path, dst: Path) -> list[str]:
    """Copy a partition directory, cutting each ``.log`` above the cap to whole batches; the cuts made."""
    dst.mkdir(parents=True, exist_ok=True)
    cuts = []
    for f in sorted(src.iterdir()):
        if not f.is_file() or f.name.endswith((".deleted", ".cleaned", ".swap")):
            continue
        if src.name == "__cluster_metadata-0" and f.suffix in (".index", ".timeindex"):
            # the raft log's active segment keeps its indexes preallocated (10 MiB of zeros); Kafka rebuilds them
            cuts.append(f"{src.name}/{f.name} left out (a preallocated index of {f.stat().st_size} bytes)")
            continue
        data = f.read_bytes()
        if f.suffix == ".log" and len(data) > MAX_LOG_BYTES:
            data = data[:batch_end_within(data, MAX_LOG_BYTES)]
            cuts.append(f"{src.name}/{f.name} cut to its first {len(data)} bytes (whole batches)")
        (dst / f.name).write_bytes(data)
    return cuts


def dls(case: Path, label: str, version: str = VERSION) -> list[dict]:
    """DumpLogSegments of ``version`` over every segment and snapshot under ``<case>/<label>/``: internal partitions
    with their topic's decoder, data partitions deep with print-data; saved as
    ``kafka-dls/<label>/<partition>/<file>.<mode>.txt``.
    """
    out = []
    data = case / label
    for part in sorted(p for p in data.iterdir() if p.is_dir()):
        topic = part.name.rsplit("-", 1)[0]
        mode, flags = DECODERS.get(topic, ("print-data", ("--deep-iteration", "--print-data-log")))
        files = sorted(f for f in part.iterdir() if f.suffix in (".log", ".checkpoint") and f.stat().st_size)
        if not files:
            continue
        texts = split_dumps(kafka_dump(version, files, flags))
        for f in files:
            rel = f"kafka-dls/{label}/{part.name}/{f.name}.{mode}.txt"
            (case / rel).parent.mkdir(parents=True, exist_ok=True)
            (case / rel).write_text(texts[str(f)])
            out.append({"file": f"{label}/{part.name}/{f.name}", "mode": mode, "dump": rel,
                        "dumpLogSegmentsFlags": list(flags)})
    return out


def save(name: str, log_dir: Path, partitions: list[str] | None, extra: dict, description: str,
         other_dirs: dict[str, Path] | None = None, root: Path = FIXTURES, version: str = VERSION) -> Path:
    """Save a case: ``data/`` (the chosen partitions and the log dir's own files: meta.properties, the offset
    checkpoints, the clean-shutdown marker; another node's as ``data-<name>/``), ``kafka-dls/`` and
    ``expected.json``."""
    case = root / name
    if case.exists():
        shutil.rmtree(case)
    cuts: list[str] = []
    dumps: list[dict] = []
    for label, src in {"data": log_dir, **(other_dirs or {})}.items():
        dst = case / label
        for part in partitions or sorted(p.name for p in src.iterdir() if p.is_dir()):
            if (src / part).is_dir():
                cuts += [f"{label}/{c}" for c in copy_partition(src / part, dst / part)]
        dst.mkdir(parents=True, exist_ok=True)
        for f in sorted(src.iterdir()):  # meta.properties, the checkpoints, the clean-shutdown marker
            if f.is_file():
                shutil.copy(f, dst / f.name)
        if dst.is_dir():
            dumps += dls(case, label, version)
    doc = {"case": name, "kafkaVersion": version, "description": description, "mutations": cuts,
           "dumps": dumps, **extra}
    (case / "expected.json").write_text(json.dumps(doc, indent=1) + "\n")
    return case


def share_case(workdir: Path, root: Path = FIXTURES, version: str = VERSION) -> Path:
    """The share-groups case."""
    with Cluster(version, workdir / "share", props=GROUP_PROPS,
                 format_extra=format_extra("share", version)) as cluster:
        cluster.format()
        cluster.start()
        cluster.wait_brokers()
        node = cluster.nodes[0]
        run = oracle4x("share", cluster.bootstrap, "share-g", "share-t", "12", log_file=workdir / "share.log",
                       version=version)
        if not run or run[0]["delivered"] == 0:
            raise KafkaError(f"the share consumer received nothing: {run}\n{node.log_tail()}")
        time.sleep(2)
        groups = oracle4x("groups", cluster.bootstrap, version=version)[0]["groups"]
        node.stop()
    return save("share-groups", node.log_dir, None,
                {"workload": run, "admin": {"groups": groups}},
                f"a share group (KIP-932) on Kafka {version}: one KafkaShareConsumer accepting, releasing and "
                "rejecting records of share-t-0; ShareGroup* records in __consumer_offsets, ShareSnapshot/ShareUpdate "
                "in __share_group_state", root=root, version=version)


def streams_case(workdir: Path, root: Path = FIXTURES, version: str = VERSION) -> Path:
    """The streams-groups case."""
    with Cluster(version, workdir / "streams", props=GROUP_PROPS,
                 format_extra=format_extra("streams", version)) as cluster:
        cluster.format()
        cluster.start()
        cluster.wait_brokers()
        node = cluster.nodes[0]
        lines = oracle4x("streams", cluster.bootstrap, "streams-app", "streams-in", "streams-out", "20",
                         timeout=240, log_file=workdir / "streams.log", version=version)
        during = next(line for line in lines if "groups" in line)["groups"]
        if next(line for line in lines if "streams_group" in line)["committed"] < 0:
            raise KafkaError(f"the streams app committed nothing: {lines}\n{node.log_tail()}")
        time.sleep(2)
        after = oracle4x("groups", cluster.bootstrap, version=version)[0]["groups"]
        node.stop()
    return save("streams-groups", node.log_dir, None,
                {"workload": [x for x in lines if "groups" not in x],
                 "admin": {"groups_while_running": during, "groups": after}},
                f"a streams group (KIP-1071) on Kafka {version}: a Kafka Streams app with group.protocol=streams "
                "counting streams-in by key into streams-out; StreamsGroup* records and offsets in __consumer_offsets",
                root=root, version=version)


def quorum_text(bootstrap_controller: str, version: str = VERSION) -> dict[str, str]:
    """MetadataQuorumCommand's ``describe --status`` and ``describe --replication`` text."""
    out = {}
    for what in ("--status", "--replication"):
        proc = run_java(version, "MetadataQuorumCommand", "--bootstrap-controller", bootstrap_controller, "describe",
                        what, timeout=120)
        out[what.lstrip("-")] = proc.stdout.decode()
    return out


def dir_id(node: Node) -> str:
    """The node's metadata log dir id (``directory.id`` in meta.properties)."""
    text = (node.log_dir / "meta.properties").read_text()
    return re.search(r"^directory\.id=(\S+)", text, re.M).group(1)  # type: ignore[union-attr]


def wait_voters(bootstrap_controller: str, want: set[int], timeout: float = 90, version: str = VERSION) -> dict:
    """Wait until DescribeMetadataQuorum lists exactly ``want`` as voters; the quorum."""
    t0 = time.monotonic()
    while True:
        quorum = oracle(version, "quorum", "controller:" + bootstrap_controller)[0]
        if {v["replica_id"] for v in quorum["voters"]} == want:
            return quorum
        if time.monotonic() - t0 > timeout:
            raise KafkaError(f"voters {quorum['voters']} never became {sorted(want)}")
        time.sleep(1)


VOTER_RACE = "Unexpected acknowledgement from non-voter"
"""What Kafka 4.0.2's raft IO thread logs as it terminates node 1 on a late response from the controller just removed
(``KafkaRaftClient.handleResponse``, a fatal fault: seen once in CI on 2026-11-28, the quorum gone for the rest of
the case). A race inside Kafka, not a state kafkatool reads: the case is made again from scratch."""


def voters_case(workdir: Path, root: Path = FIXTURES, version: str = VERSION, attempts: int = 3) -> Path:
    """The voters-change case (:func:`_voters_case`), made again when Kafka's own :data:`VOTER_RACE` killed it."""
    for attempt in range(attempts):
        work = workdir if attempt == 0 else workdir / f"again-{attempt}"
        try:
            return _voters_case(work, root, version)
        except KafkaError:
            logs = (work / "voters" / "node1").glob("*.log")
            if attempt + 1 < attempts and any(VOTER_RACE in f.read_text(errors="replace") for f in logs):
                continue
            raise
    raise AssertionError("not reached")


def _voters_case(workdir: Path, root: Path, version: str) -> Path:
    """The voters-change case: a standalone dynamic quorum, a controller added, then removed."""
    base = workdir / "voters"
    cid = cluster_id(f"{version}-voters")
    n1 = Node(version, 1, base / "node1", props=dict(GROUP_PROPS))
    n2 = Node(version, 2, base / "node2", props=dict(GROUP_PROPS), roles="controller")
    quorum_bootstrap = f"127.0.0.1:{n1.controller_port}"
    for n in (n1, n2):
        n.props.update({"controller.quorum.bootstrap.servers": quorum_bootstrap,
                        "offsets.topic.replication.factor": "1",
                        "transaction.state.log.replication.factor": "1",
                        "transaction.state.log.min.isr": "1",
                        "metadata.log.max.record.bytes.between.snapshots": "2048",
                        "metadata.snapshot.max.interval.ms": "3000"})
    facts: dict = {}
    try:
        n1.format(cid, ("--standalone",))
        n2.format(cid, ("--no-initial-controllers",))
        n1.start()
        n1.wait_started()
        facts["before"] = wait_voters(quorum_bootstrap, {1}, version=version)
        n2.start()
        n2.wait_started()
        cfg = n2.config()
        run_java(version, "MetadataQuorumCommand", "--bootstrap-controller", quorum_bootstrap, "--command-config",
                 str(cfg), "add-controller", timeout=120)
        facts["after_add"] = wait_voters(quorum_bootstrap, {1, 2}, version=version)
        facts["after_add_text"] = quorum_text(quorum_bootstrap, version)
        run_java(version, "MetadataQuorumCommand", "--bootstrap-controller", quorum_bootstrap, "remove-controller",
                 "--controller-id", "2", "--controller-directory-id", dir_id(n2), timeout=120)
        facts["after_remove"] = wait_voters(quorum_bootstrap, {1}, version=version)
        time.sleep(4)  # a metadata snapshot after the change (metadata.snapshot.max.interval.ms)
        facts["final"] = oracle(version, "quorum", "controller:" + quorum_bootstrap)[0]
        facts["final_text"] = quorum_text(quorum_bootstrap, version)
        facts["directory_ids"] = {"1": dir_id(n1), "2": dir_id(n2)}
        n2.stop()
        n1.stop()
    finally:
        n2.kill()
        n1.kill()
    return save("voters-change", n1.log_dir, ["__cluster_metadata-0"], {"quorum": facts},
                f"a KRaft voter change (KIP-853) on Kafka {version}: node 1 formatted --standalone, controller 2 "
                "(--no-initial-controllers) added with kafka-metadata-quorum add-controller, then removed with "
                "remove-controller; data/ is node 1's metadata log, data-node2/ controller 2's",
                other_dirs={"data-node2": n2.log_dir}, root=root, version=version)


CASES = {"share": share_case, "streams": streams_case, "voters": voters_case}


def main(argv: list[str]) -> int:
    """Build the named cases (default all), one broker set at a time."""
    chosen = argv or list(CASES)
    with tempfile.TemporaryDirectory(prefix="kafkatool-live4x-") as tmp:
        for name in chosen:
            t0 = time.monotonic()
            case = CASES[name](Path(tmp))
            size = sum(f.stat().st_size for f in case.rglob("*") if f.is_file())
            print(f"{name}: {case.relative_to(ROOT)} ({size} bytes, {time.monotonic() - t0:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
