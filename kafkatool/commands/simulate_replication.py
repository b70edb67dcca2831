"""``kafkatool simulate-replication``: one partition's replicas stepped through a scenario's events."""

from __future__ import annotations

import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from kafkatool.commands.common import run_guarded
from kafkatool.commands.replica_sets import analyse, parse_replicas
from kafkatool.engine.replication import RunResult, ScenarioError, compare_steps, run
from kafkatool.errors import ExitCode, UsageError
from kafkatool.reading.scenario import ScenarioFormatError, load_scenario
from kafkatool.render.plot import plot_timeline
from kafkatool.render.replication_report import render_replica_set, render_replication
from kafkatool.writing.atomic import prepare_output_file, write_atomic


class ReplicationFormat(StrEnum):
    """Output formats."""

    table = "table"
    json = "json"


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


def build_document(scenario: dict[str, Any], result: RunResult, *, name: str) -> dict[str, Any]:
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


def real_data(replica: list[str], partition: str | None, leader: int | None, isr: str | None,
              leader_epoch: int | None, now: int | None, fmt: ReplicationFormat) -> int:
    """The replica-set mode: pairs and elections from the brokers' log dirs."""
    if partition is None or leader is None:
        raise UsageError("--replica needs --partition TOPIC-N and --leader BROKER_ID")
    try:
        members = [int(x) for x in isr.split(",")] if isr else []
    except ValueError:
        raise UsageError(f"--isr expects comma-separated broker ids, not {isr!r}") from None
    replicas = parse_replicas(replica)
    doc = analyse(replicas, partition=partition, leader=leader, isr=members or sorted(replicas),
                  leader_epoch=leader_epoch, now=now if now is not None else int(time.time() * 1000))
    render_replica_set(doc, fmt.value)
    lossy = any(e["lost_acknowledged_batches"] for e in doc["elections"] if e["clean"])
    return int(ExitCode.DEFECTS if lossy else ExitCode.CLEAN)


def command(
    scenario_file: Annotated[str | None, typer.Argument(
        help="A replication scenario (kafkatool.replication-scenario/1).", metavar="SCENARIO.json",
        show_default=False)] = None,
    fmt: Annotated[ReplicationFormat, typer.Option("--format", "-f", help="table or json.")]
    = ReplicationFormat.table,
    replica: Annotated[list[str] | None, typer.Option(
        "--replica", metavar="BROKER_ID=LOG_DIR",
        help="Real data: a broker's log dir holding a replica (repeat for each broker).")] = None,
    partition: Annotated[str | None, typer.Option("--partition", metavar="TOPIC-N",
                                                  help="Real data: the partition directory to compare.")] = None,
    leader: Annotated[int | None, typer.Option("--leader", metavar="BROKER_ID",
                                               help="Real data: the current leader.")] = None,
    isr: Annotated[str | None, typer.Option("--isr", metavar="IDS",
                                            help="Real data: the last known ISR, comma-separated.")] = None,
    leader_epoch: Annotated[int | None, typer.Option(
        "--leader-epoch", metavar="N", help="Real data: the current leader epoch (default: the leader's latest).")]
    = None,
    now: Annotated[int | None, typer.Option("--now", metavar="MS",
                                            help="Real data: the clock for loading the replicas.")] = None,
    plot: Annotated[str | None, typer.Option(
        "--plot", metavar="FILE.svg|png", help="Scenario mode: draw LEO and HW per replica over the events "
                                               "(needs the plot extra: matplotlib).")] = None,
    force: Annotated[bool, typer.Option("--force", help="With --plot: replace an existing FILE.")] = False,
) -> None:
    """Step one partition's leader and followers through a scenario, or compare real replicas' log dirs:
    HW, ISR, divergence, truncation, losses."""

    def body() -> int:
        if replica:
            return real_data(replica, partition, leader, isr, leader_epoch, now, fmt)
        if scenario_file is None:
            raise UsageError("give SCENARIO.json, or --replica BROKER_ID=LOG_DIR ... --partition TOPIC-N --leader ID")
        path = Path(scenario_file)
        if plot is not None:
            if Path(plot).resolve() == path.resolve():
                raise UsageError(f"refusing to write {plot}: it is the scenario file")
            prepare_output_file(Path(plot), [], force=force)
        scenario = load_scenario(path)
        try:
            result = run(scenario)
        except ScenarioError as err:
            where = "$" if err.event_index is None else f"$.events[{err.event_index}]"
            raise ScenarioFormatError(str(path), where, str(err)) from None
        doc = build_document(scenario, result, name=path.stem)
        if plot is not None:
            target = Path(plot)
            write_atomic(target, plot_timeline(doc, target.suffix.lstrip(".").lower()))
        render_replication(doc, fmt.value)
        bad = doc["differences"] or doc["violations"] or doc["final"]["acknowledged_lost"]
        return int(ExitCode.DEFECTS if bad else ExitCode.CLEAN)

    run_guarded(body)
