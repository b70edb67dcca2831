"""``kafkatool transactions``: hanging transactions found offline, as ``kafka-transactions.sh find-hanging`` does
online, by joining ``__transaction_state`` with the data partitions' producer state."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from kafkatool.commands.common import OutputFormat, run_guarded
from kafkatool.engine.replay import replay
from kafkatool.engine.transactions import (
    PartitionReplay,
    find_transactions,
    replay_transaction_log,
    transaction_rows,
)
from kafkatool.errors import ExitCode, UsageError
from kafkatool.reading.partitions import read_partitions
from kafkatool.render.transactions_report import render_transactions
from kafkatool.schema.topic_records import decoder_named
from kafkatool.schema.transaction_log import TRANSACTION_TOPIC

DEFAULT_TIMEOUT_MS = 15 * 60 * 1000
SKIPPED_TOPICS = frozenset({TRANSACTION_TOPIC, "__cluster_metadata"})


def build_document(paths: list[str], *, now: int | None, timeout_ms: int, bootstrap: str) -> dict[str, Any]:
    """Read the log dirs, replay both sides and join them; the ``--format json`` document."""
    parts, dir_defects = read_partitions(paths, frozenset({TRANSACTION_TOPIC}))
    decoder = decoder_named("transaction-log")
    assert decoder is not None
    log_parts = [p.data for p in parts if p.topic == TRANSACTION_TOPIC]
    log = replay_transaction_log(log_parts, decoder.decode)
    replays = [PartitionReplay(p.topic, p.partition, p.data.directory, replay(p.data), p.high_watermark)
               for p in parts if p.topic and p.topic not in SKIPPED_TOPICS]
    newest = [r.result.manager.last_timestamp for r in replays if r.result.manager.last_timestamp >= 0]
    newest += [b.max_timestamp for p in log_parts for s in p.segments for b in s.entries if b.max_timestamp >= 0]
    clock = now if now is not None else max(newest, default=0)
    found = find_transactions(log, replays, now=clock, timeout_ms=timeout_ms, bootstrap=bootstrap,
                              have_log=bool(log_parts))
    defects = [{"file": d.file, "position": d.position, "field": d.field, "reason": d.reason}
               for d in dir_defects]
    defects += [{"file": f"{p['partition']}", "position": p["position"], "field": f"record {p['offset']}",
                 "reason": p["reason"]} for p in log.problems]
    for p in parts:
        for seg in p.data.segments:
            defects += [{"file": d.file, "position": d.position, "field": d.field, "reason": d.reason}
                        for d in seg.defects if d.severity != "info"]
    return {
        "log_dirs": paths, "now": clock, "transaction_timeout_ms": timeout_ms,
        "coordinator_partitions": [p.directory for p in log_parts], "transaction_log_records": log.records,
        "data_partitions": [r.directory for r in replays],
        "transactional_ids": transaction_rows(log),
        "open_transactions": found,
        "hanging": [t for t in found if t["hanging"]],
        "defects": defects,
    }


def command(
    log_dirs: Annotated[list[str], typer.Argument(help="Broker log dirs (or partition directories).",
                                                 metavar="LOG_DIR...", show_default=False)],
    transaction_timeout_ms: Annotated[int, typer.Option(
        "--transaction-timeout-ms", metavar="MS", min=1,
        help="An open transaction idle for longer than this is a candidate, as find-hanging's "
             "--max-transaction-timeout.")] = DEFAULT_TIMEOUT_MS,
    now: Annotated[int | None, typer.Option("--now", metavar="MS",
                                            help="The clock, epoch ms (default: the newest timestamp in the "
                                                 "data).")] = None,
    bootstrap_server: Annotated[str, typer.Option(
        "--bootstrap-server", metavar="HOST:PORT", help="Put in the printed abort commands.")] = "localhost:9092",
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f", help="table, json or jsonl.")] = OutputFormat.table,
) -> None:
    """Find hanging transactions in broker log dirs: open, older than the timeout, and no coordinator to end them."""

    def body() -> int:
        if now is not None and now < 0:
            raise UsageError("--now takes epoch milliseconds")
        doc = build_document(list(log_dirs), now=now, timeout_ms=transaction_timeout_ms, bootstrap=bootstrap_server)
        render_transactions(doc, fmt.value)
        return int(ExitCode.DEFECTS if doc["hanging"] or doc["defects"] else ExitCode.CLEAN)

    run_guarded(body)
