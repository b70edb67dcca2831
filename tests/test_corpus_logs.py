"""Every .log of the Kafka-made corpus decodes to exactly what Kafka's own classes decoded."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkatool.model import LegacyBatch, RecordBatch
from kafkatool.reading.log import read_log
from kafkatool.schema import record_batch as rb
from tests.conftest import SHARED, corpus_cases, load_expected, shared_dir


def log_files() -> list[tuple[str, str, str]]:
    out = []
    for case in corpus_cases():
        import json

        exp = json.loads((SHARED / "corpus" / case / "expected.json").read_text())
        for part, info in exp["before"].get("partitions", {}).items():
            for lf in info.get("logFiles", []):
                out.append((case, part, lf["file"]))
    return out


def batch_view(e: RecordBatch | LegacyBatch) -> dict:
    legacy = isinstance(e, LegacyBatch)
    view = {
        "position": e.position,
        "baseOffset": e.base_offset,
        "lastOffset": e.last_offset,
        "sizeInBytes": e.size_in_bytes,
        "magic": e.magic,
        "crcValid": e.crc_valid,
        "crc": e.crc,
        "partitionLeaderEpoch": -1 if legacy else e.partition_leader_epoch,
        "producerId": -1 if legacy else e.producer_id,
        "producerEpoch": -1 if legacy else e.producer_epoch,
        "baseSequence": -1 if legacy else e.base_sequence,
        "lastSequence": -1 if legacy else e.last_sequence,
        "isTransactional": False if legacy else e.is_transactional,
        "isControl": False if legacy else e.is_control,
        "compression": e.compression.label,
        "timestampType": e.timestamp_type.label,
        "maxTimestamp": e.max_timestamp,
        "recordCount": None if legacy else e.records_count,
    }
    if not legacy:
        view["deleteHorizonMs"] = e.delete_horizon_ms
    return view


def record_view(r, legacy: bool) -> dict:
    view = {"offset": r.offset, "timestamp": r.timestamp, "keySize": r.key_size, "valueSize": r.value_size,
            "key": None if r.key is None or r.control is not None else r.key.decode("utf-8", errors="replace")}
    if legacy:
        view.update({"magic": r.magic, "crc": r.crc, "isValid": r.crc_valid})
    else:
        view["sequence"] = r.sequence
    return view


@pytest.mark.parametrize(("case", "part", "name"), log_files())
def test_log_decodes_as_kafka_did(case: str, part: str, name: str) -> None:
    root = shared_dir("corpus") / case
    expected = next(lf for lf in load_expected(case)["before"]["partitions"][part]["logFiles"] if lf["file"] == name)
    path = root / "input" / part / name
    entries, defects = read_log(path, deep=True)
    assert path.stat().st_size == expected["sizeInBytes"]
    got = [batch_view(e) for e in entries]
    assert len(entries) == len(expected["batches"])
    for g, b, e in zip(got, expected["batches"], entries, strict=True):
        if "deleteHorizonMs" not in b:  # first-wave cases predate the field
            g.pop("deleteHorizonMs", None)
        assert g == {k: b.get(k) for k in g}, f"batch at {b['position']}"
        if "records" in b:
            legacy = isinstance(e, LegacyBatch)
            assert e.records is not None
            assert [record_view(r, legacy) for r in e.records] == [
                {k: r.get(k) for k in record_view(e.records[0], legacy)} for r in b["records"]]
        if "controlType" in b:
            assert e.records and e.records[0].control is not None
            assert e.records[0].control.type_name == b["controlType"]
            assert e.records[0].control.coordinator_epoch == b["coordinatorEpoch"]
    if "iterationError" in expected:
        assert any(d.code == "trailing-zeros" for d in defects) or defects, expected["iterationError"]
    else:
        assert not [d for d in defects if d.code not in ("torn-tail",)], defects


@pytest.mark.parametrize(("case", "part", "name"), log_files())
def test_log_rebuilds_byte_exact(case: str, part: str, name: str) -> None:
    path = shared_dir("corpus") / case / "input" / part / name
    data = path.read_bytes()
    entries, _ = read_log(path)
    rebuilt = bytearray()
    for e in entries:
        if isinstance(e, RecordBatch):
            rebuilt += rb.rebuild_batch(data, e)
        else:
            from kafkatool.schema import legacy

            rebuilt += legacy.rebuild_entry(data, e)
    assert bytes(rebuilt) == data[:len(rebuilt)]
    end = entries[-1].position + entries[-1].size_in_bytes if entries else 0
    assert len(rebuilt) == end


def test_torn_tail_reported_with_count(corpus_root: Path) -> None:
    path = corpus_root / "idem-torn-write" / "input" / "payments-0" / "00000000000000000389.log"
    _, defects = read_log(path)
    torn = [d for d in defects if d.code == "torn-tail"]
    assert len(torn) == 1
    # DumpLogSegments printed "Found 30 invalid bytes at the end of 00000000000000000389.log".
    dump = (corpus_root / "idem-torn-write" / "dump" / "payments-0" / "00000000000000000389.log.shallow.txt")
    line = next(x for x in dump.read_text().splitlines() if x.startswith("Found "))
    assert torn[0].reason.startswith(f"{line.split()[1]} invalid bytes")
