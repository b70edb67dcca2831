"""Rules that follow the transaction version (issue 22, item 3): the storage model, the marker epoch check of
Kafka 4.1+, the anomaly layer on TV_2 and TV_0/1 histories, the coordinator's bumped PrepareCommit, and the
corpus cases of real 3.9.2 and 4.4.0 brokers under ``fixtures/kafka-4x/``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kafkatool.analysis.replay import cluster_transaction_version
from kafkatool.cli import app
from kafkatool.engine.producer_state import CheckedProducerState
from kafkatool.engine.transactions import TransactionMetadata, _verdict
from kafkatool.model import Record, RecordBatch
from kafkatool.schema.control import build_control_key, build_end_txn_marker
from kafkatool.schema.record_batch import build_records_batch, parse_batch
from kafkatool.storage.producer_state import AppendCheck, ProducerStateEntry, check_marker_epoch
from kafkatool.storage.transaction_version import (
    EpochBumpEvidence,
    TransactionVersion,
    decide,
    from_feature_level,
    from_kafka_version,
)

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "kafka-4x"
ORACLE = CORPUS.parent / "oracle"
runner = CliRunner()


class Log:
    """Batches as a leader assigns offsets, fed to the checked producer state."""

    def __init__(self, version: TransactionVersion | None = None) -> None:
        self.offset = 0
        self.clock = 1_700_000_000_000
        self.engine = CheckedProducerState(transaction_version=version)

    def data(self, pid: int, epoch: int, seq: int, count: int = 1, txn: bool = True) -> None:
        recs = [Record(offset=i, timestamp=0, key=None, value=b"v", offset_delta=i, timestamp_delta=0)
                for i in range(count)]
        self._append(build_records_batch(recs, base_offset=self.offset, base_timestamp=self.clock,
                                         attributes=0x10 if txn else 0, producer_id=pid, producer_epoch=epoch,
                                         base_sequence=seq))

    def marker(self, pid: int, epoch: int, commit: bool = True, coordinator_epoch: int = 0) -> None:
        rec = Record(offset=0, timestamp=0, key=build_control_key(1 if commit else 0),
                     value=build_end_txn_marker(coordinator_epoch))
        self._append(build_records_batch([rec], base_offset=self.offset, base_timestamp=self.clock,
                                         attributes=0x30, producer_id=pid, producer_epoch=epoch))

    def _append(self, data: bytes) -> None:
        batch: RecordBatch = parse_batch(data)
        self.engine.append(batch)
        self.offset = batch.last_offset + 1
        self.clock += 10

    def codes(self) -> list[str]:
        return [a.code for a in self.engine.anomalies]


def tv2_history(log: Log, pid: int = 7, transactions: int = 3) -> None:
    """KIP-890 part 2: each transaction's marker at epoch + 1, the next transaction at that epoch from 0."""
    for epoch in range(transactions):
        log.data(pid, epoch, 0, 3)
        log.data(pid, epoch, 3, 2)
        log.marker(pid, epoch + 1, commit=epoch % 2 == 0)


def test_versions_and_feature_levels() -> None:
    assert from_feature_level(None) is TransactionVersion.TV_0
    assert from_feature_level(1) is TransactionVersion.TV_1 and not TransactionVersion.TV_1.supports_epoch_bump
    assert from_feature_level(2).supports_epoch_bump and from_feature_level(5) is TransactionVersion.TV_2
    assert from_kafka_version("3.9.2") is TransactionVersion.TV_0
    assert from_kafka_version("4.0.2") is from_kafka_version("4.4.0") is TransactionVersion.TV_2
    with pytest.raises(ValueError):
        from_kafka_version("four")


def test_decide_order_metadata_then_batches_then_option() -> None:
    bumped = EpochBumpEvidence()
    bumped.data(1, 0, True)
    bumped.marker(1, 1, commit=True)
    assert bumped.inferred() is TransactionVersion.TV_2 and bumped.bumped == {1}
    assert decide(metadata_log=True, feature_level=None, evidence=bumped).version is TransactionVersion.TV_0
    assert decide(metadata_log=True, feature_level=2).source == "metadata-log"
    assert decide(evidence=bumped, kafka_version="3.9.2").source == "batches"
    assert decide(evidence=EpochBumpEvidence(), kafka_version="4.4.0").to_json()["label"] == "TV_2"
    assert decide().source == "default" and decide().version is TransactionVersion.TV_0
    plain = EpochBumpEvidence()
    plain.data(1, 3, True)
    plain.marker(1, 3, commit=True)
    assert plain.inferred() is TransactionVersion.TV_0
    # An abort at epoch + 1 (even followed by data at that epoch) is no proof: TV_0/1 write it too (KIP-360).
    abort = EpochBumpEvidence()
    abort.data(1, 3, True)
    abort.marker(1, 4, commit=False)
    abort.data(1, 4, True)
    assert abort.inferred() is None and abort.abort_bumps == 1


def test_marker_epoch_check_by_version() -> None:
    entry = ProducerStateEntry(1, producer_epoch=5, current_txn_first_offset=10)
    assert check_marker_epoch(entry, 5, 0) is None  # TV_0/1: the marker at the producer's epoch
    assert check_marker_epoch(entry, 4, 1) is AppendCheck.FENCED_EPOCH
    assert check_marker_epoch(entry, 6, 2) is None  # TV_2: the bump
    assert check_marker_epoch(entry, 5, 2) is AppendCheck.FENCED_EPOCH  # TV_2 with an open txn: must bump
    entry.current_txn_first_offset = None
    assert check_marker_epoch(entry, 5, 2) is None  # an idempotent marker retry
    entry.producer_epoch = 32767
    entry.current_txn_first_offset = 3
    assert check_marker_epoch(entry, 32767, 2) is None  # the last epoch of a producer id


def test_tv2_history_has_no_anomaly_and_is_inferred() -> None:
    log = Log()
    tv2_history(log)
    log.data(7, 3, 0, 1)
    assert log.codes() == []
    assert log.engine.evidence.inferred() is TransactionVersion.TV_2
    entry = log.engine.producers[7]
    assert (entry.producer_epoch, entry.last_seq, entry.current_txn_first_offset) == (3, 0, log.offset - 1)


def test_tv2_producer_that_stops_bumping_is_reported() -> None:
    log = Log()
    tv2_history(log, transactions=2)
    log.data(7, 2, 0, 1)
    log.marker(7, 2)  # at the data epoch: Kafka 4.1+ refuses it from a TV_2 coordinator
    assert log.codes() == ["marker-epoch-not-bumped"]


def test_tv0_history_keeps_the_old_rules() -> None:
    for version in (None, TransactionVersion.TV_0):
        log = Log(version)
        for n in range(3):
            log.data(9, 4, 2 * n, 2)  # TV_0/1: the epoch stays, the sequence goes on
            log.marker(9, 4)
        log.data(9, 3, 0, 1)  # a zombie: fenced as before
        assert log.codes() == ["epoch-regression"], version
        assert log.engine.evidence.inferred() is TransactionVersion.TV_0


def test_kip360_epoch_bump_abort_is_no_tv2_evidence() -> None:
    """The ``txn-clean`` corpus pattern (Kafka 3.x): an abort at epoch + 1 after an abortable error, the producer
    going on at that epoch, then a commit at the same epoch: no anomaly, TV_0/1 inferred."""
    log = Log()
    log.data(5, 0, 0, 3)
    log.marker(5, 1, commit=False)
    log.data(5, 1, 0, 2)
    log.data(5, 1, 2, 2)
    log.marker(5, 1)
    assert log.codes() == []
    assert log.engine.evidence.inferred() is TransactionVersion.TV_0


def test_cluster_below_tv2_never_applies_the_tv2_rule() -> None:
    log = Log(TransactionVersion.TV_1)
    tv2_history(log, transactions=2)
    log.data(7, 2, 0, 1)
    log.marker(7, 2)
    assert log.codes() == []


def test_tv2_prepare_commit_at_epoch_plus_one_is_not_a_mismatch() -> None:
    def meta(state: str, epoch: int, tv: int) -> TransactionMetadata:
        return TransactionMetadata("t", 7, epoch, 60_000, state, [("topic", 0)], 1_000, 1_000, 5,
                                   "__transaction_state-0", client_transaction_version=tv)

    now = 2_000
    assert _verdict(meta("PrepareCommit", 4, 2), "topic", 0, 3, now, True)[0] is None
    assert _verdict(meta("PrepareAbort", 4, 2), "topic", 0, 3, now, True)[0] is None
    # TV_0/1 records (every 3.x one) keep the old rule; so does an Ongoing record.
    assert _verdict(meta("PrepareCommit", 4, 0), "topic", 0, 3, now, True)[0] == "epoch-mismatch"
    assert _verdict(meta("Ongoing", 4, 2), "topic", 0, 3, now, True)[0] == "epoch-mismatch"


def _cases() -> list[Path]:
    """This module's cases of ``fixtures/kafka-4x`` (``tv0-*``, ``tv2-*``; the others belong to other modules)."""
    return sorted(p for p in CORPUS.glob("tv[0-2]-*/case.json")) if CORPUS.is_dir() else []


def test_corpus_cases_are_there() -> None:
    assert {p.parent.name for p in _cases()} >= {"tv2-4.4.0-txn", "tv0-3.9.2-txn"}


@pytest.mark.parametrize(("case", "label"), [("decoding-4.4.0-records", "TV_2"), ("decoding-3.9.2-layout", "TV_0")])
def test_metadata_log_decides(case: str, label: str) -> None:
    """The ``transaction.version`` feature level of a real broker's ``__cluster_metadata-0`` (the oracle's
    decoding cases): 4.4.0 formats a new cluster at TV_2, 3.9.2 has no such feature."""
    decision = cluster_transaction_version(ORACLE / case / "input")
    assert decision is not None and (decision.version.label, decision.source) == (label, "metadata-log")
    result = runner.invoke(app, ["transactions", "-f", "json", str(ORACLE / case / "input")])
    doc = json.loads(result.stdout)
    assert {v["label"] for v in doc["transaction_version"].values()} <= {label}
    assert doc["hanging"] == []


def _described(producers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """kafkatool's producers in DescribeProducers' shape (absent values as the admin client reports them)."""
    return [{"producer_id": p["producer_id"], "producer_epoch": p["producer_epoch"],
             "last_sequence": -1 if p["last_sequence"] is None else p["last_sequence"],
             "last_timestamp": p["last_timestamp"],
             "coordinator_epoch": None if p.get("coordinator_epoch") is None or p["coordinator_epoch"] < 0
             else p["coordinator_epoch"],
             "current_txn_start_offset": p.get("current_txn_first_offset")}
            for p in sorted(producers, key=lambda p: p["producer_id"])]


@pytest.mark.parametrize("case", _cases(), ids=lambda p: p.parent.name)
def test_corpus_case(case: Path) -> None:
    """Partitions written by a real broker (``case.json`` says which Kafka, what it described): the replay's
    producers equal DescribeProducers, its last stable offset the read-committed end, no error or warning
    anomaly beyond the recorded ones, and the transaction version decided as recorded."""
    spec = json.loads(case.read_text())
    for name, want in spec["partitions"].items():
        part = case.parent / "input" / name
        result = runner.invoke(app, ["replay-producers", "-f", "json", *spec.get("args", []), str(part)])
        doc = json.loads(result.stdout)
        serious = sorted(a["code"] for a in doc["anomalies"] if a["severity"] in ("error", "warning"))
        assert serious == want["anomalies"], (name, doc["anomalies"])
        assert result.exit_code == (1 if serious else 0)
        assert doc["transaction_version"]["label"] == want["transaction_version"], name
        assert doc["transaction_version"]["source"] == want["transaction_version_source"], name
        assert _described(doc["producers"]) == want["kafka"]["producers"], name
        assert doc["last_stable_offset"] == want["kafka"]["last_stable_offset"], name


def test_tv2_prepare_commit_at_the_kill_is_completed_not_hanging() -> None:
    """Real 4.4.0 data killed between the coordinator's PrepareCommit (epoch + 1) and its markers: Kafka's
    restart completed the transaction (the producers at the coordinator's epoch, nothing open, LSO = HW), so
    an hour later it is no hanging transaction; under the TV_0/1 rule the same record was an epoch mismatch."""
    case = CORPUS / "tv2-4.4.0-prepare-commit"
    kafka = json.loads((case / "kafka.json").read_text())["kafka_after_restart"]
    later = max(p["last_timestamp"] for part in kafka.values() for p in part["producers"]) + 3_600_000
    result = runner.invoke(app, ["transactions", "-f", "json", "--now", str(later), "--transaction-timeout-ms",
                                 "60000", str(case / "input")])
    assert result.exit_code == 0, result.stdout
    doc = json.loads(result.stdout)
    assert doc["hanging"] == [] and len(doc["open_transactions"]) == 3
    for t in doc["open_transactions"]:
        after = {p["producer_id"]: p for p in kafka[t["directory"]]["producers"]}[t["producer_id"]]
        assert t["coordinator_state"] == "PrepareCommit" and t["coordinator_transaction_version"] == 2
        assert after["producer_epoch"] == t["producer_epoch"] + 1 and after["current_txn_start_offset"] is None
        assert kafka[t["directory"]]["last_stable_offset"] == kafka[t["directory"]]["high_watermark"]
        old = TransactionMetadata("t", t["producer_id"], t["producer_epoch"] + 1, 60_000, "PrepareCommit",
                                  [(t["topic"], t["partition"])], 0, 0, 0, "__transaction_state-0")
        assert _verdict(old, t["topic"], t["partition"], t["producer_epoch"], later, True)[0] == "epoch-mismatch"
    for name in kafka:
        result = runner.invoke(app, ["replay-producers", "-f", "json", str(case / "input" / name)])
        rdoc = json.loads(result.stdout)
        assert result.exit_code == 0 and rdoc["anomaly_counts"]["error"] == rdoc["anomaly_counts"]["warning"] == 0
        assert (rdoc["transaction_version"]["label"], rdoc["transaction_version"]["source"]) == ("TV_2", "batches")
