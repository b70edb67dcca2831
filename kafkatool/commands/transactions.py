"""``kafkatool transactions``: hanging transactions found offline, as ``kafka-transactions.sh find-hanging`` does
online, by joining ``__transaction_state`` with the data partitions' producer state."""

from __future__ import annotations

from typing import Annotated

import typer

from kafkatool.analysis.replay import DEFAULT_TXN_TIMEOUT_MS, check_kafka_version
from kafkatool.analysis.transactions import transactions_document
from kafkatool.commands.common import INT32_MAX, INT64_MAX, FollowLinks, OutputFormat, run_guarded
from kafkatool.errors import ExitCode, UsageError
from kafkatool.render.transactions_report import render_transactions


def command(
    log_dirs: Annotated[list[str], typer.Argument(help="Broker log dirs (or partition directories).",
                                                 metavar="LOG_DIR...", show_default=False)],
    transaction_timeout_ms: Annotated[int, typer.Option(
        "--transaction-timeout-ms", metavar="MS", min=1, max=INT32_MAX,
        help="An open transaction idle for longer than this is a candidate, as find-hanging's "
             "--max-transaction-timeout.")] = DEFAULT_TXN_TIMEOUT_MS,
    now: Annotated[int | None, typer.Option("--now", min=0, max=INT64_MAX, metavar="MS",
                                            help="The clock, epoch ms (default: the newest timestamp in the "
                                                 "data).")] = None,
    bootstrap_server: Annotated[str, typer.Option(
        "--bootstrap-server", metavar="HOST:PORT", help="Put in the printed abort commands.")] = "localhost:9092",
    kafka_version: Annotated[str | None, typer.Option(
        "--kafka-version", metavar="VERSION",
        help="The brokers' Kafka release, for the transaction version when neither the metadata log nor the "
             "batches tell (3.x: markers at the producer's epoch; 4.x: an epoch bump at each transaction end). "
             "Default: infer.")] = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f", help="table, json or jsonl.")] = OutputFormat.table,
    follow_links: FollowLinks = False,
) -> None:
    """Find hanging transactions in broker log dirs: open, older than the timeout, and no coordinator to end them."""

    def body() -> int:
        if now is not None and now < 0:
            raise UsageError("--now takes epoch milliseconds")
        doc = transactions_document(list(log_dirs), now=now, timeout_ms=transaction_timeout_ms,
                                    bootstrap=bootstrap_server, kafka_version=check_kafka_version(kafka_version))
        render_transactions(doc, fmt.value)
        return int(ExitCode.DEFECTS if doc["hanging"] or doc["defects"] else ExitCode.CLEAN)

    run_guarded(body, follow_links=follow_links)
