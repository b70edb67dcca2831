"""The replication differential (issue 19, item 4d): three brokers (acks=all, min.insync.replicas=2, unclean
leader election allowed) and a dedicated controller; brokers killed and restarted at seeded points; the three log
dirs copied while the incident is on disk; ``kafkatool simulate-replication --replica ...`` on the copies against
what the cluster did once it healed.

One experiment, on one seeded partition P (leader L, followers A and B) under the workload:

1. *unclean* (even seeds): SIGKILL follower A; the load goes on with ISR {L, B}; SIGKILL B (the ISR shrinks to
   {L}, acks=all stops); SIGKILL L. All three are down. Copy the three log dirs. Start A alone: the controller
   elects it although it is out of the ISR (an unclean election), and every record A missed is gone. Then start
   L and B: each truncates to A's log.
2. *failover* (odd seeds): SIGKILL the leader L under load; the controller elects a follower A from the ISR;
   producers go on against A. Copy the three log dirs (L's as the crash left it, A's and B's while running).
   Start L again: it truncates the suffix only it had and catches up.

Compared, from the copies and what the cluster did:

* ``truncation``: where each restarted follower cut its log (its ``UnifiedLog`` "Truncating to offset N" line;
  "nothing" when it logged no truncation or only one that "has no effect") against kafkatool's pair (new leader,
  follower);
* ``lost_acknowledged``: records below the old leader's high watermark (Kafka's ListOffsets before it went down)
  that the new leader lacks (its epoch starts at its log end: its own "starts at leader epoch E from offset N"
  line), against kafkatool's election of that candidate; ``acknowledged_within_hw``: every record the workload
  saw acknowledged and the new leader lacks lies below that high watermark;
* ``clean``: whether the election was clean (the new leader in the last ISR the cluster reported);
* ``healed``: the cluster ends with the new leader leading a full ISR.

With ``KAFKATOOL_SAVE_CASES=1`` a disagreement (``always``: any run) is saved under ``fixtures/oracle`` with the
three replicas of the partition, replayed by ``tests/test_oracle_replication_cases.py``.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.kafka.broker import Cluster, KafkaError, Node, Workload, oracle
from tests.kafka.experiments import CASES, Outcome

#: Quick failure detection, HW checkpoints every half second, and no retention or cleaning during a run.
PROPS = {
    "replica.lag.time.max.ms": "3000",
    "replica.high.watermark.checkpoint.interval.ms": "500",
    "log.initial.task.delay.ms": "500",
    "log.flush.offset.checkpoint.interval.ms": "1000",
    "log.cleaner.enable": "false",
    "unclean.leader.election.enable": "true",
    "broker.session.timeout.ms": "3000",
    "broker.heartbeat.interval.ms": "300",
}
#: The partitions the scenario picks from (idempotent and plain producers, acks=all).
CANDIDATES = ("plain-0", "plain-1", "idem-0", "idem-1")
MIX = "plain,idem"
TRUNCATING = re.compile(r"\[UnifiedLog partition=(?P<p>[^,]+), dir=[^\]]*\] Truncating to (?:offset )?(?P<o>\d+)"
                        r"(?P<none> has no effect)?")


def describe(cluster: Cluster, partition: str, timeout: float = 60) -> dict[str, Any]:
    """Kafka's admin client's view of ``partition``, through the running brokers. An admin client that does not
    answer within ``timeout`` (its requests to a broker just killed can wait out their own timeouts, several in a
    row) is a :class:`KafkaError`, which :func:`wait_for` asks again after."""
    try:
        return oracle(cluster.version, "describe", cluster.live_bootstrap(), partition, timeout=timeout)[-1]
    except subprocess.TimeoutExpired:
        raise KafkaError(f"the admin client did not describe {partition} within {timeout:.0f} s") from None


def described(cluster: Cluster, partition: str) -> dict[str, Any]:
    """:func:`describe`, asked again (up to two minutes) when the admin client does not answer."""
    return wait_for(cluster, partition, f"a description of {partition}", lambda ps: True, timeout=120)


def wait_for(cluster: Cluster, partition: str, what: str, test: Any, timeout: float = 60) -> dict[str, Any]:
    """Describe ``partition`` until ``test(partitions)`` holds; the last description."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            doc = describe(cluster, partition)
            if test(doc["partitions"]):
                return doc
        except KafkaError:
            doc = None
        if time.monotonic() > deadline:
            raise KafkaError(f"timed out waiting for {what}: {json.dumps(doc)[:600] if doc else 'no answer'}")
        time.sleep(0.5)


def leader_start(node: Node, partition: str, timeout: float = 60) -> int:
    """The offset the node's latest leadership of ``partition`` started at (``Partition.makeLeader``'s line)."""
    pattern = re.compile(rf"(?:\] |Leader ){re.escape(partition)}(?: with topic id \S+)? starts at leader epoch \d+ "
                         r"from offset (\d+)")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = pattern.findall(node.log_text())
        if found:
            return int(found[-1])
        time.sleep(0.3)
    raise KafkaError(f"broker {node.node_id} never led {partition}\n{node.log_tail()}")


def truncations(node: Node, partition: str) -> list[tuple[int, bool]]:
    """Every truncation the node's latest run logged for ``partition``: (offset, whether it cut anything)."""
    return [(int(m.group("o")), not m.group("none")) for m in TRUNCATING.finditer(node.log_text())
            if m.group("p") == partition]


def simulate(copies: dict[int, Path], partition: str, leader: int, isr: list[int]) -> dict[str, Any]:
    """``kafkatool simulate-replication -f json`` on the copied log dirs."""
    cmd = [sys.executable, "-m", "kafkatool", "simulate-replication", "-f", "json", "--partition", partition,
           "--leader", str(leader), "--isr", ",".join(map(str, isr))]
    for broker, path in sorted(copies.items()):
        cmd += ["--replica", f"{broker}={path}"]
    proc = subprocess.run(cmd, capture_output=True, timeout=300, check=False)
    if proc.returncode not in (0, 1):
        raise KafkaError(f"simulate-replication exited {proc.returncode}: {proc.stderr.decode()[-2000:]}")
    return json.loads(proc.stdout)


def _copy(cluster: Cluster, into: Path) -> dict[int, Path]:
    copies = {}
    for n in cluster.nodes:
        target = into / f"broker{n.node_id}"
        shutil.copytree(n.log_dir, target, ignore=shutil.ignore_patterns(".lock"))
        copies[n.node_id] = target
    return copies


def run(version: str, seed: int, workdir: Path) -> Outcome:
    """One replication experiment (unclean election on even seeds, clean failover on odd ones)."""
    outcome = Outcome(version, "replication", seed)
    rng = random.Random(f"replication-{seed}")
    scenario = "unclean" if seed % 2 == 0 else "failover"
    partition = rng.choice(CANDIDATES)
    outcome.detail.update({"scenario": scenario, "partition": partition})
    with Cluster(version, workdir / "cluster", nodes=3, seed=seed, props=PROPS, dedicated_controller=True) as cl:
        cl.format()
        cl.start()
        cl.wait_brokers(3)
        oracle(version, "topics", cl.bootstrap, "3")
        by_id = {n.node_id: n for n in cl.nodes}
        doc = wait_for(cl, partition, "a full ISR", lambda ps: len(ps[partition]["isr"]) == 3)
        leader = doc["partitions"][partition]["leader"]
        followers = [b for b in doc["partitions"][partition]["replicas"] if b != leader]
        rng.shuffle(followers)
        a, b = followers
        outcome.detail.update({"leader": leader, "new_leader": a, "other": b})
        with Workload(cl, seed, 64 << 20, 120_000, MIX) as work:
            work.wait_acked(rng.randrange(800, 2500), timeout=60)
            if scenario == "unclean":
                by_id[a].kill()
                base = work.acked()
                work.wait_acked(base + rng.randrange(600, 2000), timeout=60)
                wait_for(cl, partition, f"{a} out of the ISR", lambda ps: a not in ps[partition]["isr"])
                base = work.acked()
                work.wait_acked(base + rng.randrange(300, 1200), timeout=60)
                by_id[b].kill()
                wait_for(cl, partition, "the ISR down to the leader", lambda ps: ps[partition]["isr"] == [leader])
                time.sleep(1.5)  # the leader's high-watermark checkpoint catches up (every 0.5 s)
                before = described(cl, partition)
                by_id[leader].kill()
                work.stop()
                acks = work.acks()
            else:
                before = described(cl, partition)
                by_id[leader].kill()
                acks = work.acks()  # what the old leader acknowledged (nothing more can come from it)
                wait_for(cl, partition, f"{a} or {b} leading", lambda ps: ps[partition]["leader"] in (a, b), timeout=60)
                base = work.acked()
                work.wait_acked(base + rng.randrange(300, 1200), timeout=60)
                work.stop()
                now = described(cl, partition)
                a = now["partitions"][partition]["leader"]
                b = next(x for x in followers if x != a)
                outcome.detail.update({"new_leader": a, "other": b})
        state = before["partitions"][partition]
        old_hw, last_isr = state["high_watermark"], state["isr"]
        copies = _copy(cl, workdir / "copies")
        if scenario == "failover":
            prediction = simulate(copies, partition, a, now["partitions"][partition]["isr"])
        else:
            prediction = simulate(copies, partition, leader, last_isr)
        outcome.detail["kafkatool"] = {k: prediction.get(k) for k in ("leader", "isr", "next_leader_epoch")}
        # Heal: the new leader first (an unclean election), then the others.
        if scenario == "unclean":
            cl.start([by_id[a]])
            wait_for(cl, partition, f"{a} leading {partition}", lambda ps: ps[partition]["leader"] == a, timeout=90)
            restarted = [by_id[leader], by_id[b]]
        else:
            restarted = [by_id[leader]]
        # Where the new leader's epoch starts: its log end when it took over (its own "starts at leader epoch"
        # line; Kafka 4's leader alone under min.insync.replicas does not serve ListOffsets latest).
        new_leo = leader_start(by_id[a], partition, timeout=60)
        cl.start(restarted)
        healed = wait_for(cl, partition, "a full ISR again", lambda ps: len(ps[partition]["isr"]) == 3, timeout=120)
        final = healed["partitions"][partition]
        sim_leader, sim_isr = (a, now["partitions"][partition]["isr"]) if scenario == "failover" else (leader, last_isr)
        facts = {
            "partition": partition, "leader": sim_leader, "isr": sim_isr, "old_leader": leader, "new_leader": a,
            "old_high_watermark": old_hw, "new_leader_start": new_leo, "last_isr": last_isr,
            "truncations": {str(n.node_id): first_cut(truncations(n, partition)) for n in restarted},
            "lost_acknowledged": max(0, old_hw - new_leo), "clean": a in last_isr,
            "healed": [final["leader"], len(final["isr"])],
        }
        compare(outcome, prediction, facts)
        gone = [x["offset"] for x in acks if x["ack"] == partition and x["offset"] >= new_leo]
        outcome.detail["acknowledged_gone"] = len(gone)
        outcome.check("acknowledged_within_hw", [], [o for o in gone if o >= old_hw], where=partition)
        wanted = os.environ.get("KAFKATOOL_SAVE_CASES")
        if wanted == "always" or (wanted == "1" and not outcome.agree):
            outcome.case = save_replication_case(outcome, copies, facts).name
    return outcome


def first_cut(seen: list[tuple[int, bool]]) -> int | str:
    """Where a follower first cut its log, or "nothing" (no truncation logged, or only ones with no effect)."""
    cuts = [offset for offset, cut in seen if cut]
    return cuts[0] if cuts else "nothing"


def save_replication_case(outcome: Outcome, copies: dict[int, Path], facts: dict[str, Any]) -> Path:
    """The three copies (the partition's directory and the log-dir files of each) and what the cluster did."""
    case = CASES / f"replication-{outcome.version}-{outcome.seed}-{outcome.detail['scenario']}"
    if case.exists():
        shutil.rmtree(case)
    for broker, path in copies.items():
        target = case / "input" / f"broker{broker}"
        shutil.copytree(path / facts["partition"], target / facts["partition"])
        for f in path.iterdir():
            if f.is_file() and f.name != ".lock":
                shutil.copy2(f, target / f.name)
        for f in (target / facts["partition"]).iterdir():
            if f.suffix in (".index", ".timeindex"):
                data = f.read_bytes()
                end = len(data.rstrip(b"\0"))
                size = 8 if f.suffix == ".index" else 12
                f.write_bytes(data[:-(-end // size) * size])
    doc = {"case": case.name, "kind": "replication", "kafkaVersion": outcome.version, "seed": outcome.seed,
           "scenario": outcome.detail["scenario"], **facts}
    (case / "expected.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return case


def compare(outcome: Outcome, prediction: dict[str, Any], facts: dict[str, Any]) -> None:
    """What the cluster did (``facts``) against kafkatool's prediction from the copies."""
    pairs = {(p["leader"], p["follower"]): p for p in prediction["pairs"]}
    elections = {e["candidate"]: e for e in prediction["elections"]}
    new_leader = facts["new_leader"]
    for broker, seen in sorted(facts["truncations"].items()):
        # A follower whose log is a prefix of the leader's truncates nothing (Kafka logs no truncation, or one
        # that "has no effect"); one that diverged logs where it cut.
        pair = pairs.get((new_leader, int(broker)))
        ours = None if pair is None else (pair["truncation_offset"] if pair["lost_record_count"] else "nothing")
        outcome.check("truncation", seen, ours, where=f"broker {broker} following {new_leader}")
    election = elections.get(new_leader)
    if outcome.check("election", True, election is not None, where=f"candidate {new_leader}") and election:
        # Kafka's own numbers: the old leader's high watermark (ListOffsets before it went down) and where the
        # new leader's epoch started (its log end at the election).
        outcome.check("lost_acknowledged", facts["lost_acknowledged"], election["lost_acknowledged_record_count"],
                      where=f"old leader {facts['old_leader']} HW {facts['old_high_watermark']}, new leader "
                            f"{new_leader} from {facts['new_leader_start']}")
        outcome.check("clean", facts["clean"], election["clean"], where=f"candidate {new_leader}")
    outcome.check("healed", [new_leader, 3], facts["healed"], where=facts["partition"])


if __name__ == "__main__":  # python -m tests.kafka.replication VERSION SEED
    import tempfile
    with tempfile.TemporaryDirectory(prefix="kafkatool-replication-") as tmp:
        result = run(sys.argv[1], int(sys.argv[2]), Path(tmp))
        print("agree" if result.agree else "DISAGREE", result.fields)
        print(json.dumps(result.detail, indent=1, default=str)[:3000])
        print("\n".join(result.disagreements[:20]))
        if len(sys.argv) > 3:
            shutil.copytree(tmp, sys.argv[3], dirs_exist_ok=True)
