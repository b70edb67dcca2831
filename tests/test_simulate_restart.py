"""simulate-restart against Kafka's own load of every corpus case: afterLoad, field by field."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from tests.conftest import SHARED, corpus_cases, load_expected, shared_dir

runner = CliRunner()
PRODUCER_FIELDS = {"producerEpoch": "producer_epoch", "coordinatorEpoch": "coordinator_epoch",
                   "lastTimestamp": "last_timestamp", "firstSequence": "first_sequence",
                   "lastSequence": "last_sequence", "firstDataOffset": "first_data_offset",
                   "lastDataOffset": "last_data_offset", "lastOffsetDelta": "last_offset_delta",
                   "currentTxnFirstOffset": "current_txn_first_offset"}


def partitions() -> list[tuple[str, str]]:
    """Every (case, partition) Kafka loaded as a regular log, with its afterLoad."""
    out = []
    for case in corpus_cases():
        exp = json.loads((SHARED / "corpus" / case / "expected.json").read_text())
        out += [(case, name) for name in exp["afterLoad"].get("partitions", {})]
    return out


_CACHE: dict[str, dict[str, Any]] = {}


def simulate(case: str) -> dict[str, Any]:
    """The JSON document for a whole case (cached: one run per case)."""
    if case not in _CACHE:
        clock = load_expected(case)["afterLoad"]["loadTimeMs"]
        result = runner.invoke(app, ["simulate-restart", "--format", "json", "--now", str(clock),
                                     str(shared_dir("corpus") / case / "input")])
        assert result.exit_code in (0, 1), result.stdout + result.stderr
        _CACHE[case] = json.loads(result.stdout)
    return _CACHE[case]


def _producers(doc: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for p in doc["producers"]:
        row = {k: p[v] for k, v in PRODUCER_FIELDS.items()}
        row["coordinatorEpoch"] = -1 if row["coordinatorEpoch"] is None else row["coordinatorEpoch"]
        row["cachedBatches"] = [{"firstSeq": b["first_sequence"], "lastSeq": b["last_sequence"],
                                 "firstOffset": b["first_offset"], "lastOffset": b["last_offset"],
                                 "offsetDelta": b["offset_delta"], "timestamp": b["timestamp"]}
                                for b in p["cached_batches"]]
        out[str(p["producer_id"])] = row
    return out


@pytest.mark.parametrize(("case", "name"), partitions())
def test_after_load_matches_kafka(case: str, name: str) -> None:
    after = load_expected(case)["afterLoad"]["partitions"][name]
    [got] = [p for p in simulate(case)["partitions"] if p["directory"] == name]
    if after.get("loadError"):
        assert got["outcome"] == "failed"
        assert got["error"] and after["loadError"].split(":")[0].split(".")[-1] in got["error"]
        return
    assert got["outcome"] == "loaded", got["error"]
    assert (got["log_start_offset"], got["log_end_offset"], got["recovery_point"], got["high_watermark"]) == \
        (after["logStartOffset"], after["logEndOffset"], after["recoveryPoint"], after["highWatermark"])
    assert got["first_unstable_offset"] == after["firstUnstableOffset"]
    assert got["last_stable_offset"] == after["lastStableOffset"]
    assert [(s["base_offset"], s["size_bytes"], s["next_offset"]) for s in got["segments"]] == \
        [(s["baseOffset"], s["sizeInBytes"], s["nextOffset"]) for s in after["segments"]]
    assert got["bytes_truncated"] == after["totalBytesDropped"]
    assert [[e["epoch"], e["start_offset"]] for e in got["leader_epochs"]] == \
        after["leaderEpochEntries[epoch,startOffset]"]
    want = {pid: {k: v[k] for k in (*PRODUCER_FIELDS, "cachedBatches")} for pid, v in after["producers"].items()}
    assert _producers(got) == want
    assert got["snapshot_files_after"] == [int(f.split(".")[0]) for f in after["snapshotFilesAfterLoad"]]
