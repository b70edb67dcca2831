"""A deterministic step model of one partition's replicas: leader HW, ISR, fetch, truncation, election.

Every rule cites the Kafka source it follows (trunk at 1eb76443, KRaft mode). Offsets are Kafka's:
the HW and LEO are exclusive, the log starts at offset 0. The engine is pure: it takes a validated
scenario document (``kafkatool.reading.scenario``) and returns plain dictionaries in the
``expected.steps`` shape of ``kafkatool.replication-scenario/1``.

Cut along Kafka's classes: ``partition`` (the leader's ``Partition``: HW, ISR, fetch checks), ``replica``
(``Replica``: the leader's record of a follower), ``fetcher`` (``AbstractFetcherThread``: fetch state and
truncation), ``log`` (``UnifiedLog`` with its ``LeaderEpochFileCache``), ``produce`` (``ReplicaManager``
acks and ``DelayedProduce``), ``controller`` (elections), ``simulation`` (the brokers together). This module
is the scenario driver: start-up, events, invariants and step comparison.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from kafkatool.engine.replication.controller import Controller
from kafkatool.engine.replication.log import LocalReplica
from kafkatool.engine.replication.scenario import MODES, ScenarioError, build_log, rebuild_cache
from kafkatool.engine.replication.simulation import Simulation
from kafkatool.storage import LeaderEpochCache

__all__ = ["HANDLERS", "MODES", "RunResult", "ScenarioError", "Simulation", "Violation", "apply", "cache_assign",
           "cache_end_offset_for", "check_invariants", "compare_steps", "run", "start"]


def cache_assign(cache: list[list[int]], epoch: int, start: int) -> None:
    """``LeaderEpochCache.assign`` on a cache in the scenario's ``[[epoch, start_offset], ...]`` form, in place."""
    model = LeaderEpochCache.from_pairs(cache)
    model.assign(epoch, start)
    cache[:] = map(list, model.pairs())


def cache_end_offset_for(cache: list[list[int]], epoch: int, leo: int) -> tuple[int, int]:
    """``LeaderEpochCache.end_offset_for`` on a cache in the scenario's ``[[epoch, start_offset], ...]`` form."""
    return LeaderEpochCache.from_pairs(cache).end_offset_for(epoch, leo)


@dataclass
class Violation:
    """An invariant broken after a step."""

    step: int | str
    rule: str
    message: str


def start(scenario: dict[str, Any]) -> Simulation:
    """Start-up: build the replicas and apply one LeaderAndIsr (makeLeader / makeFollower)."""
    s = scenario["settings"]
    init = scenario["initial"]
    ids = [int(r) for r in s["replicas"]]
    reps: dict[int, LocalReplica] = {}
    for rid in ids:
        spec = init["replicas"].get(str(rid), {"log": [], "hw": 0})
        log = build_log(spec.get("log", []))
        cache = LeaderEpochCache.from_pairs(spec["epoch_cache"]) if spec.get("epoch_cache") is not None \
            else rebuild_cache(log)
        hw = max(0, min(int(spec.get("hw", 0)), len(log)))
        reps[rid] = LocalReplica(rid, log, hw, cache)
    leader = init.get("leader")
    controller = Controller(None if leader is None else int(leader), int(init.get("leader_epoch", 0)),
                            int(init.get("partition_epoch", 0)), sorted(int(r) for r in init.get("isr", ids)),
                            bool(s.get("unclean_leader_election", False)))
    sim = Simulation(ids, int(s.get("min_insync_replicas", 1)), int(s.get("replica_lag_time_max_ms", 30000)),
                     s.get("truncation", MODES[0]), bool(s.get("alter_partition_auto_commit", True)),
                     int(init.get("t_ms", 0)), reps, controller)
    if controller.leader is not None:
        sim.make_leader(controller.leader, False)
        for rid in ids:
            if rid != controller.leader:
                sim.make_follower(reps[rid])
    return sim


HANDLERS = {"produce": Simulation.produce, "fetch": Simulation.fetch, "crash": Simulation.crash,
            "restart": Simulation.restart, "elect": Simulation.elect,
            "alter_partition_response": Simulation.alter_partition_response}


def apply(sim: Simulation, event: dict[str, Any]) -> None:
    """Apply one event at its time."""
    sim.now = max(sim.now, int(event.get("t_ms", sim.now)))
    sim.notes = []
    kind = event["type"]
    if kind == "tick":
        sim.tick()
    elif kind in HANDLERS:
        HANDLERS[kind](sim, event)
    else:
        raise ScenarioError(f"unknown event type {kind!r}")


@dataclass
class RunResult:
    """Every step, the final summary and the invariant violations."""

    steps: list[dict[str, Any]]
    final: dict[str, Any]
    violations: list[Violation]


def check_invariants(sim: Simulation, prev: dict[str, Any] | None, after: int | str,
                     acked_all: set[str], reported: set[str]) -> list[Violation]:
    """Invariants after a step: leader HW monotonic; HW <= maximal-ISR LEOs; acks=all kept; follower HW <= LEO.

    The acks=all rule holds only while every election was clean; a lost record is reported once.
    """
    out: list[Violation] = []
    ls = sim.lstate
    leader = sim.leader_replica()
    if ls is not None and leader is not None:
        if prev and prev["leader_view"] and prev["leader_view"]["leader"] == ls.leader \
                and prev["leader_view"]["leader_epoch"] == ls.leader_epoch:
            old = prev["replicas"][str(ls.leader)].get("hw", 0)
            if leader.hw < old:
                out.append(Violation(after, "leader-hw-decreased",
                                     f"leader {ls.leader} HW went down from {old} to {leader.hw}"))
        for rid in ls.maximal_isr:
            rep = sim.replicas[rid]
            if rid != ls.leader and rep.alive and rep.role == "follower" and leader.hw > rep.leo:
                out.append(Violation(after, "hw-above-isr-leo",
                                     f"leader HW {leader.hw} is above the LEO {rep.leo} of ISR member {rid}"))
        if not sim.unclean_happened:
            have = {i for _, i in leader.log}
            lost = [i for i in sim.acknowledged if i in acked_all and i not in have and i not in reported]
            reported.update(lost)
            if lost:
                out.append(Violation(after, "acked-record-lost",
                                     f"acks=all records acknowledged but missing from leader {ls.leader}: "
                                     + ", ".join(lost)))
    for rid in sim.replicas_ids:
        rep = sim.replicas[rid]
        if rep.alive and rep.hw > rep.leo:
            out.append(Violation(after, "hw-above-leo", f"replica {rid} HW {rep.hw} is above its LEO {rep.leo}"))
    return out


def run(scenario: dict[str, Any]) -> RunResult:
    """Run a scenario: the start-up step, then one step per event, with invariant checks."""
    sim = start(scenario)
    steps = [sim.snapshot("initial")]
    reported: set[str] = set()
    violations = check_invariants(sim, None, "initial", set(), reported)
    for n, event in enumerate(scenario["events"]):
        try:
            apply(sim, event)
        except ScenarioError as err:
            err.event_index = n
            raise
        step = sim.snapshot(n)
        acked_all = {i for r in sim.requests if r.acks == -1 and r.status == "acked" for i in r.ids}
        violations += check_invariants(sim, steps[-1], n, acked_all, reported)
        steps.append(step)
    return RunResult(steps, sim.final(), violations)


def compare_steps(actual: list[dict[str, Any]], expected: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Differences between steps, by JSON path (``notes`` are informative and not compared)."""
    diffs: list[dict[str, Any]] = []

    def walk(a: Any, e: Any, path: str, step: Any) -> None:
        if isinstance(a, dict) and isinstance(e, dict):
            for key in sorted(set(a) | set(e), key=str):
                if key == "notes" and path.count(".") == 0:
                    continue
                walk(a.get(key, "<absent>"), e.get(key, "<absent>"), f"{path}.{key}" if path else str(key), step)
        elif a != e:
            diffs.append({"step": step, "path": path, "expected": copy.deepcopy(e), "actual": copy.deepcopy(a)})

    for n in range(max(len(actual), len(expected))):
        a = actual[n] if n < len(actual) else {}
        e = expected[n] if n < len(expected) else {}
        walk(a, e, "", e.get("after", a.get("after")))
    return diffs
