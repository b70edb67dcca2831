"""The producer-state differential (issue 19, item 4c): ``kafkatool replay-producers`` on a broker's logs against
what the broker itself holds, and snapshots rebuilt by kafkatool against the broker's own snapshot files.

One experiment: a KRaft node of version V under the workload mix (idempotent producers on every codec,
transactional producers committing and aborting on three partitions, fenced producers; on 4.x the clients use the
newer transaction protocol where the broker enables it, so every transaction end bumps the epoch). When the load
ends, Kafka's admin client describes every partition (DescribeProducers); then the broker shuts down cleanly
(SIGTERM), writing a producer snapshot at each log end besides those it wrote at segment rolls.

Compared per data partition:

* ``producers``: ``replay-producers -f json`` (replayed from the log start; from the latest snapshot, as Kafka
  does, when retention moved the log start, since Kafka keeps the state of producers whose batches are gone)
  against DescribeProducers: id, epoch, last sequence, last timestamp, coordinator epoch, open transaction start;
* ``last_stable_offset``: the replay's against ListOffsets read-committed;
* ``snapshot_bytes``: for every ``.snapshot`` the broker left, ``replay-producers --write-snapshot F --at OFFSET``
  must write the same bytes. A compacted partition's roll snapshots are left out: the cleaner since removed
  batches they were taken from (its log-end snapshot is compared: the cleaner keeps each producer's last batch).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from kafkatool.cli import app
from tests.kafka.broker import Cluster, Workload, oracle
from tests.kafka.crash import _producers, data_partitions
from tests.kafka.experiments import Outcome

WORKLOAD_BYTES = 12 << 20
WORKLOAD_MS = 20_000
#: Topic configs: a roll every second, so each partition has several roll snapshots.
TOPIC_CONFIGS = "segment.ms=1000"

runner = CliRunner()


def produce(version: str, seed: int, workdir: Path) -> tuple[Path, dict[str, Any]]:
    """Run the node and the workload, describe it, shut it down cleanly; its log dir and the description."""
    with Cluster(version, workdir / "cluster", seed=seed) as cluster:
        cluster.format()
        cluster.start()
        node = cluster.nodes[0]
        oracle(version, "topics", cluster.bootstrap, "1", TOPIC_CONFIGS)
        with Workload(cluster, seed, WORKLOAD_BYTES, WORKLOAD_MS) as work:
            work.wait(timeout=WORKLOAD_MS / 1000 + 120)
        described = oracle(version, "describe", cluster.bootstrap)[-1]
        node.stop()
        return node.log_dir, described


def kafkatool(*args: str) -> tuple[int, str]:
    """Run one kafkatool command in this process (there are many); exit code and stdout."""
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout


def compare(outcome: Outcome, log_dir: Path, described: dict[str, Any], out: Path) -> None:
    """Every data partition: the replay against DescribeProducers, and every snapshot file rebuilt."""
    out.mkdir(parents=True, exist_ok=True)
    for part in data_partitions(log_dir):
        name = part.name
        kafka = described["partitions"].get(name, {})
        segments = sorted(part.glob("*.log"))
        log_start = int(segments[0].stem) if segments else 0
        start = [] if log_start == 0 else ["--from-snapshot", "latest"]
        code, text = kafkatool("replay-producers", "-f", "json", *start, str(part))
        if not outcome.check("replay_runs", True, code in (0, 1) and text.startswith("{"), where=name):
            outcome.detail.setdefault("errors", []).append(f"{name}: exit {code}")
            continue
        doc = json.loads(text)
        outcome.check("producers", kafka.get("producers"), _producers(doc["producers"]), where=name)
        lso = doc.get("last_stable_offset")
        outcome.check("last_stable_offset", kafka.get("last_stable_offset"),
                      doc["end_offset"] if lso is None else lso, where=name)
        compacted = name.startswith("compact-")
        snapshots = sorted(part.glob("*.snapshot"))
        last = snapshots[-1] if snapshots else None
        for snap in snapshots:
            if compacted and snap != last:
                continue
            offset = int(snap.stem)
            target = out / f"{name}-{snap.name}"
            code, _ = kafkatool("replay-producers", "--write-snapshot", str(target), "--at", str(offset), "--force",
                                *(["--from-snapshot", "latest"] if log_start and snap == last else []), str(part))
            ours = target.read_bytes() if target.exists() else None
            outcome.check("snapshot_bytes", snap.read_bytes().hex(), ours.hex() if ours is not None else None,
                          where=f"{name}/{snap.name}")
            outcome.detail["snapshots"] = outcome.detail.get("snapshots", 0) + 1


def run(version: str, seed: int, workdir: Path) -> Outcome:
    """One producer-state experiment."""
    outcome = Outcome(version, "producers", seed)
    t0 = time.monotonic()
    log_dir, described = produce(version, seed, workdir)
    outcome.detail["broker_seconds"] = round(time.monotonic() - t0, 1)
    outcome.detail["producers"] = sum(len(p.get("producers") or []) for n, p in described["partitions"].items()
                                      if not n.startswith("__") and isinstance(p.get("producers"), list))
    compare(outcome, log_dir, described, workdir / "kafkatool-snapshots")
    return outcome


if __name__ == "__main__":  # python -m tests.kafka.producers VERSION SEED
    import tempfile
    with tempfile.TemporaryDirectory(prefix="kafkatool-producers-") as tmp:
        result = run(sys.argv[1], int(sys.argv[2]), Path(tmp))
        print("agree" if result.agree else "DISAGREE", result.fields, result.detail.get("snapshots"),
              result.detail.get("producers"))
        print("\n".join(result.disagreements[:20]))
