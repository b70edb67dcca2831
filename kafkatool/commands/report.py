"""``kafkatool report``: one self-contained HTML incident report for people who will never run the CLI.

The document is ``analysis.report``'s (the same analyses as ``check``, ``replay-producers``,
``simulate-restart`` and ``simulate-replication``'s replica mode, on the same inputs); this module parses the
options, shows progress and writes the page the HTML renderer makes of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kafkatool.analysis.replay import DEFAULT_TXN_TIMEOUT_MS, check_kafka_version
from kafkatool.analysis.report import build_report
from kafkatool.commands.common import INT32_MAX, INT64_MAX, FollowLinks, parse_broker_ids, run_guarded
from kafkatool.errors import ExitCode, UnreadableInputError
from kafkatool.reading.logdir import segment_bytes
from kafkatool.reading.objects import input_path
from kafkatool.render.html_report import render_html
from kafkatool.render.output import Diagnostics
from kafkatool.render.scan_report import byte_progress, wants_progress
from kafkatool.writing.atomic import prepare_output_file, write_atomic


def command(
    paths: Annotated[list[str], typer.Argument(help="Log dirs of one or more brokers, or partition directories.",
                                               metavar="PATH", show_default=False)],
    out: Annotated[str, typer.Option("--out", "-o", metavar="REPORT.html",
                                     help="The HTML file to write (never inside an input).")],
    force: Annotated[bool, typer.Option("--force", help="Replace REPORT.html if it exists.")] = False,
    now: Annotated[int | None, typer.Option("--now", min=0, max=INT64_MAX, metavar="MS",
                                            help="The clock for the restart and for hanging transactions "
                                                 "(default: as simulate-restart and replay-producers).")] = None,
    transaction_timeout_ms: Annotated[int, typer.Option(
        "--transaction-timeout-ms", metavar="MS", min=1, max=INT32_MAX,
        help="An open transaction older than this is reported as hanging.")] = DEFAULT_TXN_TIMEOUT_MS,
    leader: Annotated[int | None, typer.Option(
        "--leader", min=0, max=INT32_MAX, metavar="BROKER_ID",
        help="Replica sets: the current leader (default: the broker with the newest leader epoch).")] = None,
    isr: Annotated[str | None, typer.Option("--isr", metavar="IDS",
                                            help="Replica sets: the last known ISR, comma-separated "
                                                 "(default: every broker given).")] = None,
    leader_epoch: Annotated[int | None, typer.Option(
        "--leader-epoch", min=0, max=INT32_MAX, metavar="N",
        help="Replica sets: the current leader epoch (default: the leader's latest).")]
    = None,
    kafka_version: Annotated[str | None, typer.Option(
        "--kafka-version", metavar="VERSION",
        help="The brokers' Kafka release, for the transaction version when neither the metadata log nor the "
             "batches tell (as replay-producers --kafka-version). Default: infer.")] = None,
    title: Annotated[str | None, typer.Option("--title", metavar="TEXT", help="The report's title.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar on stderr.")] = False,
    follow_links: FollowLinks = False,
) -> None:
    """Write a self-contained HTML incident report: verdict, segment maps, epochs, producers, replicas, findings."""

    def body() -> int:
        for p in paths:
            if not input_path(p).is_dir():
                raise UnreadableInputError(p, "not a log dir or partition directory")
        target = Path(out)
        prepare_output_file(target, [input_path(p) for p in paths], force=force)
        members = parse_broker_ids(isr)
        total = 2 * segment_bytes(paths)
        with byte_progress(total, "reading and analysing", enabled=wants_progress(total, quiet=quiet)) as advance:
            doc = build_report(paths, now=now, timeout_ms=transaction_timeout_ms, leader=leader, isr=members,
                               leader_epoch=leader_epoch, advance=advance,
                               kafka_version=check_kafka_version(kafka_version))
        doc["title"] = title or "Kafka incident report: " + ", ".join(i["label"] for i in doc["inputs"])
        page = render_html(doc).encode()
        write_atomic(target, page)
        verdict = doc["verdict"]
        Diagnostics().verdict(f"report: wrote {target} ({len(page):,} bytes). {verdict['headline']}",
                              verdict["level"])
        return int(ExitCode.CLEAN if verdict["level"] == "healthy" else ExitCode.DEFECTS)

    run_guarded(body, follow_links=follow_links)
