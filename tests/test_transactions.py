"""``kafkatool transactions`` against Kafka's own state: the hanging transaction of the joined corpus case, and every
open transaction of every clean case equal to the producers Kafka left with a ``currentTxnFirstOffset``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kafkatool.analysis.transactions import transactions_document as build_document
from kafkatool.cli import app
from tests.conftest import corpus_cases, load_expected, shared_dir

runner = CliRunner()
JOINED = "internal-topics-hanging-txn-clean"


def load_clock(case: str) -> int:
    """The clock Kafka's load of the case ran with."""
    return load_expected(case)["afterLoad"]["loadTimeMs"]


def transaction_log_states(case: str) -> dict[str, dict]:
    """Kafka's decoding of the case's transaction log: the last value per transactional id."""
    last: dict[str, dict] = {}
    for name, part in load_expected(case)["before"]["partitions"].items():
        if not name.startswith("__transaction_state-"):
            continue
        for lf in part["logFiles"]:
            for batch in lf["batches"]:
                for r in batch.get("records", []):
                    d = r["decoded"]
                    last[d["key"]["transactionalId"]] = d
    return last


def run_json(*args: str) -> tuple[int, dict]:
    res = runner.invoke(app, ["transactions", "-f", "json", *args])
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, json.loads(res.stdout)


def test_joined_case_finds_the_hanging_transaction() -> None:
    """Producer, epoch, first offset and blocked LSO come from Kafka's loaded state; the abort command ends it."""
    root = shared_dir("corpus") / JOINED / "input"
    after = load_expected(JOINED)["afterLoad"]["partitions"]["invoices-0"]
    stuck = [p for p in after["producers"].values() if p["currentTxnFirstOffset"] is not None]
    assert len(stuck) == 1
    code, doc = run_json("--now", str(load_clock(JOINED)), str(root))
    assert code == 1
    (hanging,) = doc["hanging"]
    assert (hanging["topic"], hanging["partition"]) == ("invoices", 0)
    assert hanging["producer_id"] == stuck[0]["producerId"]
    assert hanging["producer_epoch"] == stuck[0]["producerEpoch"]
    assert hanging["start_offset"] == stuck[0]["currentTxnFirstOffset"]
    assert hanging["blocked_last_stable_offset"] == after["lastStableOffset"]
    assert hanging["last_stable_offset"] == after["lastStableOffset"]
    assert hanging["high_watermark"] == after["highWatermark"]
    assert hanging["last_timestamp"] == stuck[0]["lastTimestamp"]
    assert hanging["abort_command"] == (
        "kafka-transactions.sh --bootstrap-server localhost:9092 abort --topic invoices --partition 0 "
        f"--start-offset {after['lastStableOffset']}")
    # The join: the coordinator's own record for this producer, as Kafka decoded it.
    states = transaction_log_states(JOINED)
    owner = [tid for tid, d in states.items() if d["value"]["producerId"] == hanging["producer_id"]]
    assert hanging["transactional_id"] == owner[0]
    assert hanging["coordinator_state"] == states[owner[0]]["transactionStatusName"] == "Ongoing"
    assert hanging["reason_code"] == "coordinator-timed-out"


def test_joined_case_coordinator_states_equal_kafkas() -> None:
    """Every transactional id's last state equals the last record Kafka decoded for it."""
    root = shared_dir("corpus") / JOINED / "input"
    doc = build_document([str(root)], now=None, timeout_ms=60000, bootstrap="b:9092")
    got = {t["transactional_id"]: t for t in doc["transactional_ids"]}
    want = transaction_log_states(JOINED)
    assert set(got) == set(want)
    for tid, d in want.items():
        v = d["value"]
        assert (got[tid]["producer_id"], got[tid]["producer_epoch"], got[tid]["state"], got[tid]["timeout_ms"]) == (
            v["producerId"], v["producerEpoch"], d["transactionStatusName"], v["transactionTimeoutMs"])
        assert got[tid]["partitions"] == [f"{p['topic']}-{i}" for p in v["transactionPartitions"] or ()
                                          for i in p["partitionIds"]]


def test_not_hanging_before_the_timeout() -> None:
    """At the data's own clock (36 s after the transaction began, under its 60 s timeout) nothing hangs: exit 0,
    and the open transaction is still listed."""
    root = shared_dir("corpus") / JOINED / "input"
    code, doc = run_json("--transaction-timeout-ms", "1000", str(root))
    assert code == 0 and doc["hanging"] == []
    assert [t["start_offset"] for t in doc["open_transactions"]] == [58]


@pytest.mark.parametrize("case", [c for c in corpus_cases() if c.endswith("-clean")
                                  and "loadTimeMs" in load_expected(c).get("afterLoad", {})])
def test_open_transactions_equal_kafkas_producers(case: str) -> None:
    """Each open transaction is a producer Kafka's load left with a current transaction, at the same offset."""
    root = shared_dir("corpus") / case / "input"
    doc = build_document([str(root)], now=load_clock(case), timeout_ms=900000, bootstrap="b:9092")
    got = {(f"{t['topic']}-{t['partition']}", t["producer_id"], t["producer_epoch"], t["start_offset"])
           for t in doc["open_transactions"]}
    want = {(name, p["producerId"], p["producerEpoch"], p["currentTxnFirstOffset"])
            for name, part in load_expected(case)["afterLoad"]["partitions"].items()
            if not name.startswith(("__transaction_state-", "__cluster_metadata-"))
            for p in part.get("producers", {}).values() if p["currentTxnFirstOffset"] is not None}
    assert got == want


def test_without_a_transaction_log_every_old_open_transaction_hangs() -> None:
    """txn-clean has no __transaction_state: its open transaction has no transactional id (find-hanging's first
    case) and is reported with the partition's LSO from Kafka's load."""
    case = "txn-clean"
    root = shared_dir("corpus") / case / "input"
    code, doc = run_json("--now", str(load_clock(case)), "--bootstrap-server", "k1:9093", str(root))
    after = load_expected(case)["afterLoad"]["partitions"]
    assert code == 1
    for h in doc["hanging"]:
        assert h["reason_code"] == "no-transactional-id"
        assert h["last_stable_offset"] == after[f"{h['topic']}-{h['partition']}"]["lastStableOffset"]
        assert h["abort_command"].startswith("kafka-transactions.sh --bootstrap-server k1:9093 abort ")
    assert doc["hanging"]


def test_table_output_and_bad_input() -> None:
    """The table names the abort command; a missing directory is exit 3 with a one-line message."""
    root = shared_dir("corpus") / JOINED / "input"
    res = runner.invoke(app, ["transactions", "--now", str(load_clock(JOINED)), str(root)])
    assert res.exit_code == 1
    assert "--start-offset 58" in res.stdout and "hanging transaction" in res.stdout
    missing = runner.invoke(app, ["transactions", str(root / "nope")])
    assert missing.exit_code == 3 and "Traceback" not in missing.output


def test_find_hanging_rules_on_the_joined_case() -> None:
    """find-hanging's three cases, each made from the coordinator's real record for producer 5002 by changing
    the one field the rule looks at; an untouched coordinator state inside the timeout is not hanging."""
    from dataclasses import replace

    from kafkatool.engine.replay import replay
    from kafkatool.engine.transactions import PartitionReplay, TxnLog, find_transactions, replay_transaction_log
    from kafkatool.reading.logdir import read_partition
    from kafkatool.schema.topic_records import decoder_named

    root = shared_dir("corpus") / JOINED / "input"
    decoder = decoder_named("transaction-log")
    log = replay_transaction_log([read_partition(root / "__transaction_state-17", "t", deep=True)], decoder.decode)
    data = [PartitionReplay("invoices", 0, "invoices-0", replay(read_partition(root / "invoices-0", "i")), 113)]
    clock = load_clock(JOINED)
    (tid,) = [t for t, m in log.states.items() if m.producer_id == 5002]

    def verdict(**changes: object) -> str | None:
        states = dict(log.states)
        states[tid] = replace(states[tid], **changes)
        (found,) = find_transactions(TxnLog(states), data, now=clock, timeout_ms=60000, bootstrap="b", have_log=True)
        return found["reason_code"] if found["hanging"] else None

    assert verdict() == "coordinator-timed-out"
    assert verdict(partitions=[("invoices", 1)]) == "partition-not-in-transaction"
    assert verdict(state="CompleteCommit", partitions=[]) == "partition-not-in-transaction"
    assert verdict(deleted=True) == "unknown-transactional-id"
    assert verdict(producer_epoch=4) == "epoch-mismatch"
    assert verdict(start_timestamp=clock - 1000) is None
    assert verdict(state="PrepareAbort") is None
    (alone,) = find_transactions(TxnLog(), data, now=clock, timeout_ms=60000, bootstrap="b", have_log=True)
    assert alone["reason_code"] == "no-transactional-id"
