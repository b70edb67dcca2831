"""Kafka refuses to load a log where a producer writes a non-transactional batch inside its open transaction.

``fixtures/kafka-4x/refused-non-transactional-in-txn``: a segment that real 3.9.2 and 4.4.0 brokers refused to
load (``expected.json``: ``ProducerAppendInfo.appendDataBatch``'s ``InvalidTxnStateException`` during the
unclean load, "Error starting LogManager", the broker halts). Without a broker: ``simulate-restart`` must say the
partition fails with Kafka's exception line, on both paths (``KAFKATOOL_NATIVE`` 0 and 1); ``replay-producers``
flags the batch as an error that stops Kafka's load; storage's ``ProducerStateManager`` refuses the batch
(:class:`~kafkatool.storage.producer_state.InvalidTxnState`) and the native replay hands it to Python at the same
row.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.engine.producer_state import CheckedProducerState, batch_columns, replay_columns
from kafkatool.model import RecordBatch
from kafkatool.reading.logdir import read_partition
from kafkatool.schema import native
from kafkatool.storage.producer_state import InvalidTxnState, ProducerStateManager
from tests.conftest import REPO

CASE = REPO / "fixtures" / "kafka-4x" / "refused-non-transactional-in-txn"
EXPECTED: dict[str, Any] = json.loads((CASE / "expected.json").read_text())
runner = CliRunner()


@pytest.fixture(params=["0", "1"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both paths: the Python reference and the native core (skipped when it is not built)."""
    monkeypatch.setenv("KAFKATOOL_NATIVE", request.param)
    if request.param == "1" and native.core() is None:
        pytest.skip("native core not built")
    return str(request.param)


def _batches() -> list[RecordBatch]:
    part = read_partition(CASE / "input" / "t-0", "t-0")
    return [e for seg in part.segments for e in seg.entries if isinstance(e, RecordBatch)]


def test_kafka_refused_the_load_in_every_version() -> None:
    lines = {v["exception"] for v in EXPECTED["kafka"].values()}
    assert set(EXPECTED["kafka"]) == {"3.9.2", "4.4.0"} and len(lines) == 1
    assert all(v["outcome"] == "failed" and v["exit_code"] == 1 for v in EXPECTED["kafka"].values())


@pytest.mark.parametrize("args", [[], ["--assume", "unclean", "--recovery-point", "0"]])
def test_simulate_restart_fails_as_kafka_did(path: str, args: list[str]) -> None:
    res = runner.invoke(app, ["simulate-restart", "-f", "json", "--now", "1800000000000", *args, str(CASE / "input")])
    doc = json.loads(res.stdout)
    (p,) = doc["partitions"]
    assert p["directory"] == EXPECTED["partition"] and p["outcome"] == "failed"
    assert p["error"] == EXPECTED["kafka"]["4.4.0"]["exception"]
    fail = p["steps"][-1]
    assert fail["action"] == "fail" and fail["offset"] == EXPECTED["offset"]
    assert fail["file"] == "t-0/00000000000000000000.log"
    text = runner.invoke(app, ["simulate-restart", *args, str(CASE / "input")]).stdout
    assert "Kafka fails to load this partition: org.apache.kafka.common.errors.InvalidTxnStateException" in text
    assert "The broker halts at startup" in text


def test_replay_producers_flags_the_batch_that_stops_the_load(path: str) -> None:
    res = runner.invoke(app, ["replay-producers", "-f", "json", "--now", "1800000000000",
                              str(CASE / "input" / "t-0")])
    doc = json.loads(res.stdout)
    text = json.dumps(doc)
    assert "non-transactional-in-txn" in text and "Kafka refuses to load this log" in text
    first = next(a for a in _anomalies(doc) if a["code"] == "non-transactional-in-txn")
    assert first["offset"] == EXPECTED["offset"] and first["producer_id"] == EXPECTED["producer_id"]
    assert first["severity"] == "error"


def _anomalies(doc: Any) -> list[dict[str, Any]]:
    """Every anomaly object in the document, wherever the command puts them."""
    found: list[dict[str, Any]] = []
    if isinstance(doc, dict):
        if "code" in doc and "offset" in doc:
            found.append(doc)
        for v in doc.values():
            found += _anomalies(v)
    elif isinstance(doc, list):
        for v in doc:
            found += _anomalies(v)
    return sorted(found, key=lambda a: a["offset"])


def test_the_storage_manager_refuses_and_the_checked_replay_carries_on(path: str) -> None:
    batches = _batches()
    plain = ProducerStateManager(0, keep_committed=False)
    with pytest.raises(InvalidTxnState) as err:
        replay_columns(plain, batch_columns(batches))
    assert (err.value.producer_id, err.value.offset) == (EXPECTED["producer_id"], EXPECTED["offset"])
    assert err.value.kafka_message("t-0") == EXPECTED["kafka"]["3.9.2"]["exception"]
    assert plain.map_end_offset == EXPECTED["offset"]  # nothing of the refused batch applied
    assert plain.producers[1000].current_txn_first_offset == EXPECTED["transaction_first_offset"]
    checked = CheckedProducerState(0)
    replay_columns(checked, batch_columns(batches))
    assert checked.map_end_offset == batches[-1].last_offset + 1
    assert any(a.code == "non-transactional-in-txn" for a in checked.anomalies)


def test_the_segment_is_the_benchmark_writers(tmp_path: Path) -> None:
    from tests.benchmarks.inputs import write_segment

    seg = tmp_path / "00000000000000000000.log"
    write_segment(seg, 300 * 171, 1, 100, transactions=True)
    assert seg.read_bytes() == (CASE / "input" / "t-0" / "00000000000000000000.log").read_bytes()
