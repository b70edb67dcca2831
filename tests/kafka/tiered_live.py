"""Tiered storage on a real broker (KIP-405), saved as a corpus case: ``python -m tests.kafka.tiered_live OUT``.

One KRaft node of Kafka 4.0.2 with Kafka's own test remote storage manager, ``LocalTieredStorage`` (the
``kafka-storage`` *test* jar, resolved from Maven Central through ``mvn dependency:get`` and loaded through
``remote.log.storage.manager.class.path``), remote storage on loopback in a directory. Not 4.4.0: Maven
Central has no ``kafka-storage-4.4.0-test.jar`` (404), and 4.0.2's ``LocalTieredStorage`` does not link against
a 4.4.0 broker (``ClassNotFoundException: org.apache.kafka.common.utils.LogContext``, moved in 4.4).

A topic with ``remote.storage.enable=true``, ``segment.ms`` short and ``local.retention.bytes=1`` is written
slowly (one segment a second); the broker copies the rolled segments to remote storage and deletes them
locally; a consumer reads from the beginning (filling the remote index cache); what Kafka reports (ListOffsets
earliest / earliest-local / latest / latest-tiered, DescribeLogDirs) is recorded; the broker stops cleanly
and its log dir is saved under ``OUT/data`` with ``kafka.json``; the broker then starts again on that state
(what ListOffsets says and which files its load keeps go to ``kafka.json`` too) and stops. The broker is always
stopped (SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.kafka import versions
from tests.kafka.broker import Cluster, run_java

RSM_VERSION = "4.0.2"  # the newest supported release whose kafka-storage test jar is on Maven Central
BROKER_VERSION = RSM_VERSION  # the test jar links only against its own release
RSM_CLASS = "org.apache.kafka.server.log.remote.storage.LocalTieredStorage"
TOPIC = "tiered"


def test_jar(version: str = RSM_VERSION) -> Path:
    """The ``kafka-storage`` test jar of ``version`` in the local Maven cache, resolved by Maven if absent."""
    jar = (Path.home() / ".m2" / "repository" / "org" / "apache" / "kafka" / "kafka-storage" / version
           / f"kafka-storage-{version}-test.jar")
    if not jar.is_file():
        subprocess.run(["mvn", "-q", "dependency:get", f"-Dartifact=org.apache.kafka:kafka-storage:{version}:jar:test",
                        "-Dtransitive=false"], check=True, timeout=600)
    return jar


def broker_props(remote_dir: Path, jar: Path) -> dict[str, str]:
    """The broker settings of the experiment."""
    return {
        "remote.log.storage.system.enable": "true",
        "remote.log.storage.manager.class.name": RSM_CLASS,
        "remote.log.storage.manager.class.path": str(jar),
        "rsm.config.dir": str(remote_dir),
        "rsm.config.delete.on.close": "false",
        "remote.log.metadata.manager.listener.name": "PLAINTEXT",
        "rlmm.config.remote.log.metadata.topic.replication.factor": "1",
        "rlmm.config.remote.log.metadata.topic.num.partitions": "1",
        "remote.log.manager.task.interval.ms": "1000",
        "log.retention.check.interval.ms": "1000",
        "log.flush.start.offset.checkpoint.interval.ms": "1000",
        "log.flush.offset.checkpoint.interval.ms": "1000",
        "log.segment.delete.delay.ms": "1000",
        "log.index.size.max.bytes": "4096",  # small preallocated indexes in a crashed active segment
    }


def offsets(version: str, bootstrap: str, time_spec: str) -> int | None:
    """GetOffsetShell's answer for partition 0 of the topic (``--time``: -1 latest, -2 earliest, -4 earliest-local,
    -5 latest-tiered)."""
    proc = run_java(version, "GetOffsetShell", "--bootstrap-server", bootstrap, "--topic", TOPIC, "--time",
                    time_spec, timeout=60, check=False)
    for line in proc.stdout.decode().splitlines():
        parts = line.strip().split(":")
        if len(parts) == 3 and parts[0] == TOPIC and parts[1] == "0" and parts[2].lstrip("-").isdigit():
            return int(parts[2])
    return None


def first_local_base(part_dir: Path) -> int | None:
    """The base offset of the first ``.log`` file of a partition directory."""
    logs = sorted(p.name for p in part_dir.glob("*.log"))
    return int(logs[0].split(".")[0]) if logs else None


def run(out: Path, workdir: Path, records: int = 24, crash: bool = False) -> dict:
    """The experiment; returns what Kafka reported (also written to ``out/kafka.json``). ``crash``: the broker is
    killed (SIGKILL, no clean-shutdown marker) instead of stopped before its log dir is saved."""
    jar = test_jar()
    remote_dir = workdir / "remote-storage"
    remote_dir.mkdir(parents=True, exist_ok=True)
    report: dict = {"broker_version": BROKER_VERSION, "rsm": f"{RSM_CLASS} (kafka-storage-{RSM_VERSION}-test.jar)",
                    "topic": TOPIC}
    cluster = Cluster(BROKER_VERSION, workdir, props=broker_props(remote_dir, jar))
    node = cluster.nodes[0]
    try:
        cluster.format()
        cluster.start()
        bs = node.bootstrap
        configs = {"remote.storage.enable": "true", "local.retention.bytes": "1", "segment.ms": "1000",
                   "file.delete.delay.ms": "1000"}
        report["topic_configs"] = configs
        args = ["--bootstrap-server", bs, "--create", "--topic", TOPIC, "--partitions", "1",
                "--replication-factor", "1"]
        for k, v in configs.items():
            args += ["--config", f"{k}={v}"]
        run_java(BROKER_VERSION, "TopicCommand", *args, timeout=120)
        # One record every ~0.4 s: the segment rolls each second (segment.ms), so several segments are rolled.
        run_java(BROKER_VERSION, "ProducerPerformance", "--topic", TOPIC, "--num-records", str(records),
                 "--record-size", "64", "--throughput", "2.5", "--producer-props", f"bootstrap.servers={bs}",
                 "acks=all", "linger.ms=0", timeout=180)
        part_dir = node.log_dir / f"{TOPIC}-0"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            local = offsets(BROKER_VERSION, bs, "-4")
            if local is not None and local > 0 and (first_local_base(part_dir) or 0) > 0:
                break
            time.sleep(2)
        consumer = "org.apache.kafka.tools.consumer.ConsoleConsumer"
        proc = run_java(BROKER_VERSION, consumer, "--bootstrap-server", bs, "--topic", TOPIC, "--from-beginning",
                        "--max-messages", str(records), "--timeout-ms", "30000", timeout=120, check=False)
        report["consumed_from_beginning"] = len(proc.stdout.decode().splitlines())
        report["list_offsets"] = {name: offsets(BROKER_VERSION, bs, spec) for name, spec in
                                  (("earliest", "-2"), ("earliest_local", "-4"), ("latest", "-1"),
                                   ("latest_tiered", "-5"))}
        proc = run_java(BROKER_VERSION, "LogDirsCommand", "--bootstrap-server", bs, "--describe", "--topic-list",
                        f"{TOPIC},__remote_log_metadata", timeout=60, check=False)
        lines = [ln for ln in proc.stdout.decode().splitlines() if ln.startswith("{")]
        report["describe_log_dirs"] = json.loads(lines[-1]) if lines else proc.stdout.decode()
        time.sleep(3)  # a checkpoint round (log-start-offset-checkpoint every second)
        report["shutdown"] = "SIGKILL" if crash else "clean"
        if crash:
            node.kill()
        else:
            node.stop()
        report["local_segments_after_stop"] = sorted(p.name for p in part_dir.glob("*.log"))
        report["remote_storage_files"] = sorted(str(p.relative_to(remote_dir)) for p in remote_dir.rglob("*")
                                                if p.is_file())
        text = node.log_text() if node.log_file.is_file() else ""
        report["broker_log_remote_lines"] = [ln[:300] for ln in text.splitlines()
                                             if "remote" in ln.lower() and ("copied" in ln.lower()
                                                                            or "deleted" in ln.lower())][:20]
        saved = workdir / "saved-log-dir"
        # After a crash the metadata log's active segment keeps its 10 MiB preallocated indexes: not saved then.
        skip = (".lock", "__cluster_metadata-0") if crash else (".lock",)
        shutil.copytree(node.log_dir, saved, ignore=shutil.ignore_patterns(*skip))
        # What Kafka's own load makes of the saved state: start again on it, ask, stop cleanly.
        cluster.start()
        report["after_restart"] = {
            "list_offsets": {name: offsets(BROKER_VERSION, bs, spec) for name, spec in
                             (("earliest", "-2"), ("earliest_local", "-4"), ("latest", "-1"))},
            "local_files": sorted(p.name for p in part_dir.iterdir() if p.is_file())}
        node.stop()
        report["after_restart"]["local_files_after_stop"] = sorted(p.name for p in part_dir.iterdir()
                                                                   if p.is_file())
    finally:
        cluster.kill()
    save(saved, out, report)
    return report


def save(log_dir: Path, out: Path, report: dict) -> None:
    """Copy the broker's whole log dir (the partition, ``__remote_log_metadata-0``, the remote index cache, the
    consumer offsets, the metadata log with the topic's config, the log-dir files) to ``out/data``."""
    dest = out / "data"
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(log_dir, dest)
    (out / "kafka.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--records", type=int, default=24)
    parser.add_argument("--workdir", type=Path, help="keep the broker's files here (default: a temporary dir)")
    parser.add_argument("--crash", action="store_true", help="kill the broker (SIGKILL) instead of stopping it")
    ns = parser.parse_args()
    if not versions.available(BROKER_VERSION):
        print(f"Kafka {BROKER_VERSION} is not fetched", file=sys.stderr)
        return 2
    if ns.workdir is not None:
        report = run(ns.out, ns.workdir, ns.records, ns.crash)
    else:
        with tempfile.TemporaryDirectory(prefix="tiered-live-") as tmp:
            report = run(ns.out, Path(tmp), ns.records, ns.crash)
    print(json.dumps(report, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
