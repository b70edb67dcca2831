"""``simulate-replication``'s scenario mode: a run of the replication engine (``engine.replication``, modelled
on Kafka's ``Partition`` / ``ReplicaManager`` / fetcher) as the stable document that command prints and plots,
with one timeline row per step and the differences from the scenario's expected outcome."""

from __future__ import annotations

from typing import Any

from kafkatool.engine.replication import RunResult, compare_steps


def _event_label(event: dict[str, Any] | None) -> str:
    """A short description of an event for the timeline."""
    if event is None:
        return "start-up"
    kind = event["type"]
    if kind == "produce":
        return f"produce {event['records']} acks={event['acks']}"
    if kind == "fetch":
        extra = f" max {event['max_records']}" if event.get("max_records") is not None else ""
        outcome = event.get("outcome", "complete")
        return f"fetch by {event['replica']}{extra}" + ("" if outcome == "complete" else f" ({outcome})")
    if kind in ("crash", "restart"):
        extra = f" flushed<{event['flushed_offset']}" if kind == "crash" and "flushed_offset" in event else ""
        return f"{kind} {event['replica']}{extra}"
    if kind == "elect":
        return f"elect {event['leader']} ({'clean' if event.get('clean', True) else 'unclean'})"
    if kind == "alter_partition_response":
        return f"AlterPartition {'accepted' if event.get('accept', True) else 'rejected'}"
    return kind


def timeline_rows(scenario: dict[str, Any], result: RunResult) -> list[dict[str, Any]]:
    """One row per step: time, event, each replica's LEO/HW, ISR (with any AlterPartition in flight and the
    maximal ISR the HW counts), leader epoch, newly acknowledged ids (in offset order)."""
    rows = []
    events: list[dict[str, Any] | None] = [None, *scenario["events"]]
    seen: list[str] = []
    t = scenario["initial"].get("t_ms", 0)
    for event, step in zip(events, result.steps, strict=False):
        if event is not None:
            t = event["t_ms"]
        replicas = {}
        for rid, rep in step["replicas"].items():
            if not rep["alive"]:
                replicas[rid] = {"alive": False, "role": "down", "leo": rep["disk_leo"], "hw": None}
            else:
                replicas[rid] = {"alive": True, "role": rep["role"], "leo": rep["leo"], "hw": rep["hw"]}
        new = [i for i in step["acknowledged"] if i not in seen]
        seen = list(step["acknowledged"])
        ctrl = step["controller"]
        view = step["leader_view"]
        rows.append({"step": step["after"], "t_ms": t, "event": _event_label(event), "replicas": replicas,
                     "leader": ctrl["leader"], "leader_epoch": ctrl["leader_epoch"], "isr": ctrl["isr"],
                     "maximal_isr": None if view is None else view["maximal_isr"],
                     "pending_isr_change": None if view is None else view["pending_isr_change"],
                     "newly_acknowledged": new, "notes": step.get("notes", [])})
    return rows


def replication_document(scenario: dict[str, Any], result: RunResult, *, name: str) -> dict[str, Any]:
    """The run as a JSON-ready document: steps, final summary, differences, violations, timeline rows."""
    expected = scenario.get("expected") or {}
    differences = compare_steps(result.steps, expected["steps"]) if "steps" in expected else []
    if "final" in expected:
        for key in sorted(set(expected["final"]) | set(result.final)):
            want, got = expected["final"].get(key, "<absent>"), result.final.get(key, "<absent>")
            if want != got:
                differences.append({"step": "final", "path": key, "expected": want, "actual": got})
    return {
        "scenario": scenario.get("name", name), "description": scenario.get("description"),
        "settings": scenario["settings"], "has_expected": bool(expected),
        "steps": result.steps, "final": result.final, "differences": differences,
        "violations": [{"step": v.step, "rule": v.rule, "message": v.message} for v in result.violations],
        "timeline": timeline_rows(scenario, result),
    }
