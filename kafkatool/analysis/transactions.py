"""``transactions``' analysis: ``__transaction_state`` replayed as Kafka's ``TransactionStateManager`` loads it,
joined with each data partition's producer state (``engine.transactions``), as ``kafka-transactions.sh
find-hanging`` joins them online."""

from __future__ import annotations

from typing import Any

from kafkatool.analysis.findings import defect_row, record_problem_row, replay_stop_rows, segment_defect_rows
from kafkatool.analysis.replay import cluster_transaction_version
from kafkatool.engine.replay import replay
from kafkatool.engine.transactions import (
    PartitionReplay,
    find_transactions,
    replay_transaction_log,
    transaction_rows,
)
from kafkatool.reading.files import not_read
from kafkatool.reading.objects import input_path
from kafkatool.reading.partitions import read_partitions
from kafkatool.schema.filenames import CLUSTER_METADATA_TOPIC
from kafkatool.schema.topic_records import decoder_named
from kafkatool.schema.transaction_log import TRANSACTION_TOPIC

#: Topics that are not data partitions: their producer state holds no user transaction.
SKIPPED_TOPICS = frozenset({TRANSACTION_TOPIC, CLUSTER_METADATA_TOPIC})


def transactions_document(paths: list[str], *, now: int | None, timeout_ms: int, bootstrap: str,
                          kafka_version: str | None = None) -> dict[str, Any]:
    """Read the log dirs, replay both sides and join them; the ``--format json`` document. The data partitions
    follow the transaction version of the log dirs' metadata log, else their batches', else ``kafka_version``."""
    cluster = next((d for d in (cluster_transaction_version(input_path(p)) for p in paths) if d is not None), None)
    parts, dir_defects = read_partitions(paths, frozenset({TRANSACTION_TOPIC}))
    decoder = decoder_named("transaction-log")
    assert decoder is not None
    log_parts = [p.data for p in parts if p.topic == TRANSACTION_TOPIC]
    log = replay_transaction_log(log_parts, decoder.decode)
    replays = [PartitionReplay(p.topic, p.partition, p.data.directory,
                               replay(p.data, cluster=cluster, kafka_version=kafka_version), p.high_watermark)
               for p in parts if p.topic and p.topic not in SKIPPED_TOPICS]
    newest = [r.result.manager.last_timestamp for r in replays if r.result.manager.last_timestamp >= 0]
    newest += [b.max_timestamp for p in log_parts for s in p.segments for b in s.entries if b.max_timestamp >= 0]
    clock = now if now is not None else max(newest, default=0)
    found = find_transactions(log, replays, now=clock, timeout_ms=timeout_ms, bootstrap=bootstrap,
                              have_log=bool(log_parts))
    defects = [defect_row(d) for d in dir_defects]
    defects += [record_problem_row(f"{p['partition']}", p) for p in log.problems]
    defects += segment_defect_rows(p.data for p in parts)
    defects += [row for r in replays for row in replay_stop_rows(r.result, r.directory)]
    defects += [defect_row(d) for d in not_read(parts=(p.data for p in parts))]
    return {
        "log_dirs": paths, "now": clock, "transaction_timeout_ms": timeout_ms,
        "coordinator_partitions": [p.directory for p in log_parts], "transaction_log_records": log.records,
        "data_partitions": [r.directory for r in replays],
        "transactional_ids": transaction_rows(log),
        "open_transactions": found,
        "hanging": [t for t in found if t["hanging"]],
        "defects": defects,
        "transaction_version": {r.directory: r.result.transaction_version.to_json()
                                for r in replays if r.result.transaction_version is not None},
    }
