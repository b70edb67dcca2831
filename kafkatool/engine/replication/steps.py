"""The model's state as scenario steps: the ``expected.steps`` and ``expected.final`` shapes of
``kafkatool.replication-scenario/1``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kafkatool.engine.replication.simulation import Simulation


def snapshot(sim: Simulation, after: int | str) -> dict[str, Any]:
    """The state in the ``expected.steps`` shape."""
    reps: dict[str, Any] = {}
    for rid in sim.replicas_ids:
        rep = sim.replicas[rid]
        if not rep.alive:
            reps[str(rid)] = {"alive": False, "disk_leo": rep.leo}
            continue
        out: dict[str, Any] = {"alive": True, "role": rep.role, "leo": rep.leo, "hw": rep.hw,
                               "epoch_cache": [list(e) for e in rep.cache.pairs()],
                               "log": [f"{e}:{i}" for e, i in rep.log]}
        if rep.role == "follower" and rep.fetch is not None:
            out["fetch_state"] = {"fetch_offset": rep.fetch.offset,
                                  "state": "truncating" if rep.fetch.truncating else "fetching",
                                  "last_fetched_epoch": rep.fetch.last_fetched_epoch}
        reps[str(rid)] = out
    ls = sim.lstate
    view = None
    if ls is not None:
        pending = None if ls.pending is None else {"type": ls.pending[0], "isr": list(ls.pending[1])}
        view = {"leader": ls.leader, "leader_epoch": ls.leader_epoch, "isr": list(ls.isr),
                "maximal_isr": ls.maximal_isr, "pending_isr_change": pending,
                "under_min_isr": sim.under_min_isr(),
                "followers": {str(r): {"leo": v.leo, "last_caught_up_ms": v.last_caught_up_ms,
                                       "last_fetch_ms": v.last_fetch_ms,
                                       "last_fetch_leader_leo": v.last_fetch_leader_leo}
                              for r, v in sorted(ls.followers.items())}}
    ctl = sim.controller
    step: dict[str, Any] = {
        "after": after, "replicas": reps,
        "controller": {"leader": ctl.leader, "leader_epoch": ctl.leader_epoch,
                       "partition_epoch": ctl.partition_epoch, "isr": list(ctl.isr)},
        "leader_view": view,
        "requests": [{"request": n, "ids": list(r.ids), "first_offset": r.first_offset,
                      "last_offset": r.last_offset, "acks": r.acks, "status": r.status}
                     for n, r in enumerate(sim.requests)],
        "acknowledged": list(sim.acknowledged),
    }
    if sim.notes:
        step["notes"] = list(sim.notes)
    return step


def final(sim: Simulation) -> dict[str, Any]:
    """The ``expected.final`` summary: losses and divergence against the final leader's log."""
    leader = sim.leader_replica()
    ids = {i for _, i in leader.log} if leader is not None else set()
    diverged: dict[str, bool] = {}
    if leader is not None:
        for rid in sim.replicas_ids:
            rep = sim.replicas[rid]
            if rid != leader.rid and rep.alive:
                n = min(rep.leo, leader.leo)
                diverged[str(rid)] = rep.log[:n] != leader.log[:n]
    return {"leader": sim.controller.leader,
            "acknowledged_lost": [i for i in sim.acknowledged if i not in ids],
            "committed_lost": [i for i in sim.committed if i not in ids],
            "diverged_from_leader": diverged}
