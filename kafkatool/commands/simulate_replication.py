"""``kafkatool simulate-replication``: one partition's replicas stepped through a scenario's events."""

from __future__ import annotations

import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from kafkatool.analysis.replica_sets import analyse
from kafkatool.analysis.replication import replication_document
from kafkatool.commands.common import INT32_MAX, INT64_MAX, FollowLinks, parse_broker_ids, report_not_read, run_guarded
from kafkatool.engine.replication import ScenarioError, run
from kafkatool.errors import ExitCode, UsageError
from kafkatool.reading.objects import input_path
from kafkatool.reading.scenario import ScenarioFormatError, load_scenario
from kafkatool.render.plot import plot_timeline
from kafkatool.render.replication_report import render_replica_set, render_replication
from kafkatool.writing.atomic import prepare_output_file, write_atomic


class ReplicationFormat(StrEnum):
    """Output formats."""

    table = "table"
    json = "json"


def parse_replicas(specs: list[str]) -> dict[int, Path]:
    """``BROKER_ID=LOG_DIR`` options."""
    out: dict[int, Path] = {}
    for spec in specs:
        broker, sep, path = spec.partition("=")
        if not sep or not broker.strip().isdigit() or not path:
            raise UsageError(f"--replica expects BROKER_ID=LOG_DIR, not {spec!r}")
        if int(broker) > INT32_MAX:
            raise UsageError(f"--replica {spec}: broker ids are 0 to {INT32_MAX}")
        out[int(broker)] = input_path(path)
    if len(out) < 2:
        raise UsageError("give at least two --replica BROKER_ID=LOG_DIR")
    return out


def real_data(replica: list[str], partition: str | None, leader: int | None, isr: str | None,
              leader_epoch: int | None, now: int | None, fmt: ReplicationFormat) -> int:
    """The replica-set mode: pairs and elections from the brokers' log dirs."""
    if partition is None or leader is None:
        raise UsageError("--replica needs --partition TOPIC-N and --leader BROKER_ID")
    members = parse_broker_ids(isr) or []
    replicas = parse_replicas(replica)
    doc = analyse(replicas, partition=partition, leader=leader, isr=members or sorted(replicas),
                  leader_epoch=leader_epoch, now=now if now is not None else int(time.time() * 1000))
    render_replica_set(doc, fmt.value)
    refused = report_not_read(doc["not_read"])
    lossy = any(e["lost_acknowledged_batches"] for e in doc["elections"] if e["clean"])
    return int(ExitCode.DEFECTS if lossy or refused else ExitCode.CLEAN)


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
    leader: Annotated[int | None, typer.Option("--leader", min=0, max=INT32_MAX, metavar="BROKER_ID",
                                               help="Real data: the current leader.")] = None,
    isr: Annotated[str | None, typer.Option("--isr", metavar="IDS",
                                            help="Real data: the last known ISR, comma-separated.")] = None,
    leader_epoch: Annotated[int | None, typer.Option(
        "--leader-epoch", min=0, max=INT32_MAX, metavar="N",
        help="Real data: the current leader epoch (default: the leader's latest).")]
    = None,
    now: Annotated[int | None, typer.Option("--now", min=0, max=INT64_MAX, metavar="MS",
                                            help="Real data: the clock for loading the replicas.")] = None,
    plot: Annotated[str | None, typer.Option(
        "--plot", metavar="FILE.svg|png", help="Scenario mode: draw LEO and HW per replica over the events "
                                               "(needs the plot extra: matplotlib).")] = None,
    force: Annotated[bool, typer.Option("--force", help="With --plot: replace an existing FILE.")] = False,
    follow_links: FollowLinks = False,
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
        doc = replication_document(scenario, result, name=path.stem)
        if plot is not None:
            target = Path(plot)
            write_atomic(target, plot_timeline(doc, target.suffix.lstrip(".").lower()))
        render_replication(doc, fmt.value)
        bad = doc["differences"] or doc["violations"] or doc["final"]["acknowledged_lost"]
        return int(ExitCode.DEFECTS if bad else ExitCode.CLEAN)

    run_guarded(body, follow_links=follow_links)
