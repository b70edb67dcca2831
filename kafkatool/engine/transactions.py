"""Hanging transactions found offline: the transaction log's last state per transactional id joined with the
producer state of the data partitions.

Models the two halves of what ``kafka-transactions.sh find-hanging`` (tools ``TransactionsCommand``'s
``FindHangingTransactionsCommand``) asks a live cluster: the partitions' active producers with an open
transaction (``DescribeProducers``: ``currentTransactionStartOffset``, here replayed by
:mod:`kafkatool.engine.replay`) and the coordinator's view of each producer's transactional id
(``ListTransactions`` + ``DescribeTransactions``, here the ``__transaction_state`` records replayed the way
``TransactionStateManager`` loads them: the last value per transactional id wins, a tombstone removes it).
As in the tool, a transaction open longer than the timeout (``now - lastTimestamp``) hangs when its producer id
has no transactional id, when that id is no longer known, or when the coordinator's transaction does not hold
the partition. Offline one more case shows: the coordinator's own record is still ``Ongoing`` with the partition
long past the transaction's timeout — a live coordinator would have aborted it (``abortTimedOutTransactions``),
so the record is all that is left of a transaction nobody will end.

With transaction version 2 (KIP-890, ``TransactionMetadata.prepareAbortOrCommit``) the coordinator bumps the
epoch as it prepares the transaction's end: its PrepareCommit/PrepareAbort record carries the partition's
epoch + 1 (and ``ClientTransactionVersion`` 2). Such a record is the coordinator completing this very
transaction, not another epoch; with TV_0/1 (every 3.x record) the epochs must match as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kafkatool.engine.replay import ReplayResult
from kafkatool.model import PartitionData, RecordBatch
from kafkatool.schema.topic_records import DecodeFn
from kafkatool.shell import command
from kafkatool.storage.producer_state import NO_COORDINATOR_EPOCH
from kafkatool.storage.transaction_version import TransactionVersion


@dataclass
class TransactionMetadata:
    """A transactional id's state as the coordinator last wrote it (``TransactionMetadata``)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: str
    partitions: list[tuple[str, int]]
    start_timestamp: int
    last_update_timestamp: int
    offset: int
    coordinator_partition: str
    deleted: bool = False
    client_transaction_version: int = 0


@dataclass
class TxnLog:
    """Every transactional id's last state, and what could not be decoded on the way."""

    states: dict[str, TransactionMetadata] = field(default_factory=dict)
    problems: list[dict[str, Any]] = field(default_factory=list)
    records: int = 0


def replay_transaction_log(parts: list[PartitionData], decode: DecodeFn) -> TxnLog:
    """Load ``__transaction_state`` partitions (read deep) as the coordinator does at election."""
    log = TxnLog()
    for part in parts:
        for seg in part.segments:
            for batch in seg.entries:
                if not isinstance(batch, RecordBatch) or batch.is_control or batch.records is None:
                    continue
                for r in batch.records:
                    log.records += 1
                    d = decode(r.key, r.value)
                    if d.defects or not isinstance(d.key, dict):
                        log.problems.append({"partition": part.directory, "offset": r.offset, "position": r.position,
                                             "reason": "; ".join(d.defects) or "undecodable key"})
                        continue
                    tid = d.key["data"]["transactionalId"]
                    if d.value is None:
                        if tid in log.states:
                            log.states[tid].deleted = True
                        continue
                    v = d.value["data"]
                    parts_of = [(p["topic"], pid) for p in v["transactionPartitions"] or ()
                                for pid in p["partitionIds"]]
                    log.states[tid] = TransactionMetadata(
                        tid, v["producerId"], v["producerEpoch"], v["transactionTimeoutMs"],
                        d.value["state"] or str(v["transactionStatus"]),
                        parts_of if d.value["state"] != "Empty" else [],
                        v["transactionStartTimestampMs"], v["transactionLastUpdateTimestampMs"], r.offset,
                        part.directory, client_transaction_version=v.get("clientTransactionVersion") or 0)
    return log


@dataclass
class PartitionReplay:
    """One data partition's replayed producer state, with its name and high watermark."""

    topic: str
    partition: int
    directory: str
    result: ReplayResult
    high_watermark: int | None


def abort_command(topic: str, partition: int, start_offset: int, bootstrap: str) -> str:
    """The ``kafka-transactions.sh abort`` line that writes the ABORT marker for this transaction (brokers 3.0+),
    every argument quoted (the topic is a directory name anyone could have chosen)."""
    return command("kafka-transactions.sh", "--bootstrap-server", bootstrap, "abort", "--topic", topic,
                   "--partition", partition, "--start-offset", start_offset)


def _bumped_end(txn: TransactionMetadata, epoch: int) -> bool:
    """A TV_2 coordinator preparing this transaction's end: its record is at the partition's epoch + 1."""
    return (TransactionVersion(min(max(txn.client_transaction_version, 0), 2)).supports_epoch_bump
            and txn.state in ("PrepareCommit", "PrepareAbort") and txn.producer_epoch == epoch + 1)


def _verdict(txn: TransactionMetadata | None, topic: str, partition: int, epoch: int, now: int,
             have_log: bool) -> tuple[str | None, str]:
    """Why an old open transaction hangs (``None``: the coordinator still owns it), and a sentence."""
    if txn is None:
        where = "in the __transaction_state partitions given" if have_log else "(no __transaction_state partition " \
                "was given, so no coordinator state could be joined)"
        return "no-transactional-id", f"no transactional id maps to this producer id {where}"
    if txn.deleted:
        return "unknown-transactional-id", (f"transactional id {txn.transactional_id!r} was deleted (tombstone) from "
                                            "the transaction log")
    if (topic, partition) not in txn.partitions:
        return "partition-not-in-transaction", (
            f"coordinator state of {txn.transactional_id!r} is {txn.state} (epoch {txn.producer_epoch}) with "
            f"partitions [{', '.join(f'{t}-{p}' for t, p in txn.partitions)}]: it will never write a marker here")
    if txn.producer_epoch != epoch and not _bumped_end(txn, epoch):
        return "epoch-mismatch", (f"coordinator has epoch {txn.producer_epoch} for {txn.transactional_id!r}, the "
                                  f"open transaction is epoch {epoch}")
    if txn.state == "Ongoing" and txn.start_timestamp + txn.timeout_ms < now:  # timedOutTransactions
        return "coordinator-timed-out", (
            f"coordinator record of {txn.transactional_id!r} (offset {txn.offset} of {txn.coordinator_partition}) is "
            f"still {txn.state} with this partition, {(now - txn.start_timestamp) // 1000} s after it began, past its "
            f"{txn.timeout_ms} ms timeout: a running coordinator would have aborted it, none did")
    if txn.state == "Ongoing":
        return None, f"the coordinator still owns this transaction (Ongoing, within its {txn.timeout_ms} ms timeout)"
    return None, (f"the coordinator is completing this transaction ({txn.state}): it writes the markers, again "
                  "after a coordinator move")


def find_transactions(log: TxnLog, replays: list[PartitionReplay], *, now: int, timeout_ms: int,
                      bootstrap: str, have_log: bool) -> list[dict[str, Any]]:
    """Every open transaction of the data partitions, each with its coordinator state and, for those older than
    ``timeout_ms`` that no coordinator will end, ``hanging`` true, a reason and the abort command."""
    by_pid: dict[int, list[TransactionMetadata]] = {}
    for t in log.states.values():
        by_pid.setdefault(t.producer_id, []).append(t)
    out: list[dict[str, Any]] = []
    for rp in replays:
        m = rp.result.manager
        hw = rp.result.end_offset if rp.high_watermark is None else rp.high_watermark
        lso = m.last_stable_offset(hw)
        first_ts = {(t.producer_id, t.first_offset): t.first_timestamp for t in m.transactions if t.aborted is None}
        for pid in m.order.order():
            e = m.producers[pid]
            if e.current_txn_first_offset is None:
                continue
            candidates = sorted(by_pid.get(pid, []), key=lambda t: (t.deleted, -t.producer_epoch))
            txn = candidates[0] if candidates else None
            idle_ms = now - e.last_timestamp
            old = idle_ms > timeout_ms
            code, why = _verdict(txn, rp.topic, rp.partition, e.producer_epoch, now, have_log)
            hanging = old and code is not None
            start = e.current_txn_first_offset
            began = first_ts.get((pid, start))
            out.append({
                "topic": rp.topic, "partition": rp.partition, "directory": rp.directory, "producer_id": pid,
                "producer_epoch": e.producer_epoch,
                "coordinator_epoch": None if e.coordinator_epoch == NO_COORDINATOR_EPOCH else e.coordinator_epoch,
                "start_offset": start, "first_timestamp": began, "last_timestamp": e.last_timestamp,
                "open_ms": None if began is None else now - began, "duration_min": idle_ms // 60000,
                "transactional_id": None if txn is None else txn.transactional_id,
                "coordinator_state": None if txn is None else ("deleted" if txn.deleted else txn.state),
                "coordinator_partitions": None if txn is None else [f"{t}-{p}" for t, p in txn.partitions],
                "coordinator_timeout_ms": None if txn is None else txn.timeout_ms,
                "coordinator_transaction_version": None if txn is None else txn.client_transaction_version,
                "hanging": hanging, "reason_code": code if hanging else None,
                "reason": why,
                "blocked_last_stable_offset": start, "last_stable_offset": lso, "high_watermark": hw,
                "abort_command": abort_command(rp.topic, rp.partition, start, bootstrap) if hanging else None,
            })
    out.sort(key=lambda t: (t["topic"], t["partition"], t["start_offset"]))
    return out


def transaction_rows(log: TxnLog) -> list[dict[str, Any]]:
    """The coordinator's last state per transactional id, as rows."""
    return [{"transactional_id": t.transactional_id, "producer_id": t.producer_id, "producer_epoch": t.producer_epoch,
             "state": "deleted" if t.deleted else t.state, "partitions": [f"{tp}-{p}" for tp, p in t.partitions],
             "timeout_ms": t.timeout_ms, "start_timestamp": None if t.start_timestamp == -1 else t.start_timestamp,
             "last_update_timestamp": t.last_update_timestamp, "offset": t.offset,
             "coordinator_partition": t.coordinator_partition}
            for t in sorted(log.states.values(), key=lambda t: t.transactional_id)]
