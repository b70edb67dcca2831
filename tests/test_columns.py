"""The columnar fast scan (reading.columns): Kafka's own batch lists on every corpus segment, and exactly the
resilient walker's entries and defects on damaged bytes (flipped CRCs, torn and zero tails, garbage, legacy
entries), whatever the chunking, threading or process split."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from kafkatool.model import Defect, LegacyBatch, RecordBatch
from kafkatool.reading import columns
from kafkatool.schema import batch_columns as bc
from kafkatool.schema import record_batch as rb
from kafkatool.schema.log_segment import walk_log
from tests.conftest import load_expected, shared_dir
from tests.test_corpus_logs import log_files

REPO = Path(__file__).resolve().parent.parent


def walker_view(buf: bytes, verify: bool = True) -> tuple[list[tuple], list[int], list[Defect]]:
    rows, legacy, defects = [], [], []
    for item in walk_log(buf, "f", verify_crc=verify):
        if isinstance(item, Defect):
            defects.append(item)
        elif isinstance(item, RecordBatch):
            rows.append((item.position, *rb.HEADER_STRUCT.unpack_from(buf, item.position), item.crc_valid))
        else:
            legacy.append(item.position)
    return rows, legacy, defects


def columns_view(cols: columns.SegmentColumns) -> tuple[list[tuple], list[int], list[Defect]]:
    valid = cols.crc_valid.tolist() if cols.crc_valid is not None else [None] * len(cols)
    rows = [(p, *(int(h[name]) for name in rb.FIELD_NAMES), v)
            for p, h, v in zip(cols.positions.tolist(), cols.headers, valid, strict=True)]
    return rows, cols.legacy["position"].tolist(), cols.defects


def test_dtype_matches_the_declaration() -> None:
    dtype = bc.header_dtype()
    assert dtype.names == rb.FIELD_NAMES
    assert dtype.itemsize == rb.BATCH_HEADER.sizeof()
    raw = rb.BATCH_HEADER.build({name: i + 1 for i, name in enumerate(rb.FIELD_NAMES)})
    parsed = np.frombuffer(raw, dtype=dtype)[0]
    assert [int(parsed[n]) for n in rb.FIELD_NAMES] == list(range(1, len(rb.FIELD_NAMES) + 1))


@pytest.mark.parametrize(("case", "part", "name"), log_files())
def test_corpus_batches_as_kafka_listed_them(case: str, part: str, name: str) -> None:
    path = shared_dir("corpus") / case / "input" / part / name
    expected = next(lf for lf in load_expected(case)["before"]["partitions"][part]["logFiles"] if lf["file"] == name)
    cols = columns.scan_segment(path, label="f")
    got = {int(p): (int(h["base_offset"]), int(h["base_offset"] + h["last_offset_delta"]), int(h["crc"]), bool(v))
           for p, h, v in zip(cols.positions, cols.headers, cols.crc_valid, strict=True)}
    # A legacy wrapper's base offset is its first inner offset in Kafka: that needs a deep read, not a scan.
    got.update({e.position: (None, e.last_offset, e.crc, e.crc_valid) for e in cols.legacy.entries(path.read_bytes())})
    want = {b["position"]: (b["baseOffset"] if b["magic"] == 2 else None, b["lastOffset"], b["crc"], b["crcValid"])
            for b in expected["batches"]}
    assert got == want
    assert columns_view(cols) == walker_view(path.read_bytes())


def fixture_logs() -> list[Path]:
    return sorted((REPO / "fixtures").rglob("*.log"))


@pytest.mark.parametrize("path", fixture_logs(), ids=lambda p: str(p.relative_to(REPO / "fixtures")))
def test_fixture_segments_equal_the_walker(path: Path) -> None:
    data = path.read_bytes()
    for verify in (True, False):
        assert columns_view(columns.scan_buffer(data, "f", verify_crc=verify)) == walker_view(data, verify)


def clean_segment(batches: int, records: int, value: int) -> bytes:
    from kafkatool.model import Record

    out = bytearray()
    offset = 0
    for i in range(batches):
        recs = [Record(offset=k, timestamp=0, key=None, value=bytes([i % 251]) * value, offset_delta=k,
                       timestamp_delta=k) for k in range(records)]
        out += rb.build_records_batch(recs, base_offset=offset, base_timestamp=1000 + i,
                                      producer_id=7 if i % 2 else -1, producer_epoch=0 if i % 2 else -1,
                                      base_sequence=offset if i % 2 else -1)
        offset += records
    return bytes(out)


def damaged(seed: int, data: bytes) -> bytes:
    rnd = random.Random(seed)
    buf = bytearray(data)
    kind = seed % 5
    if kind == 0:  # flipped bits inside batches (bad CRCs)
        for _ in range(3):
            buf[rnd.randrange(len(buf))] ^= 1 << rnd.randrange(8)
    elif kind == 1:  # torn tail
        del buf[rnd.randrange(len(buf) // 2, len(buf)):]
    elif kind == 2:  # zero-filled tail
        buf += bytes(rnd.randrange(1, 5000))
    elif kind == 3:  # garbage in the middle
        at = rnd.randrange(len(buf))
        buf[at:at + 300] = bytes(rnd.randrange(256) for _ in range(300))
    else:  # a length field broken
        at = rnd.randrange(len(buf) - 12)
        buf[at:at + 12] = b"\xff" * 12
    return bytes(buf)


@pytest.mark.parametrize("seed", range(40))
def test_damage_reported_exactly_as_the_walker(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    big = seed % 2 == 0
    data = damaged(seed, clean_segment(60, 8 if big else 1, 700 if big else 40))
    monkeypatch.setattr(columns, "CHUNK", 5000)  # many chunks, page release and threads on every one
    for threads in (None, 0, 2):
        assert columns_view(columns.scan_buffer(data, "f", threads=threads)) == walker_view(data)


def test_ranges_meet_and_equal_the_whole(tmp_path: Path) -> None:
    data = clean_segment(400, 4, 300)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    whole = columns.scan_segment(path)
    ranges = columns.split_ranges(path, 3)
    assert len(ranges) == 3 and ranges[0][0] == 0 and ranges[-1][1] == len(data)
    parts = [columns.scan_segment(path, start=a, stop=b) for a, b in ranges]
    assert [p.landing for p in parts[:-1]] == [b for _, b in ranges[:-1]]
    assert np.concatenate([p.positions for p in parts]).tolist() == whole.positions.tolist()
    parallel = columns.scan_segment_parallel(path, jobs=2)
    assert columns_view(parallel) == columns_view(whole)
    assert whole.bytes_scanned == len(data)
    assert [b.position for b in whole.batches()] == whole.positions.tolist()


def test_legacy_entries_are_columns_that_make_the_walkers_objects() -> None:
    logs = sorted((shared_dir("corpus") / "legacy-mixed-v1-v2-clean" / "input").rglob("*.log"))
    seen = 0
    for log in logs:
        data = log.read_bytes()
        legacy = columns.scan_segment(log).legacy.entries(data)
        assert legacy == [e for e in walk_log(data, "f") if isinstance(e, LegacyBatch)]
        seen += len(legacy)
    assert seen


@pytest.mark.parametrize("codec", ["none", "gzip", "zstd"])
def test_benchmark_segments_are_valid_kafka_data(tmp_path: Path, codec: str) -> None:
    """The benchmark's generator writes batches every reader accepts: the walker, the columns and kafka-python."""
    from kafka.record.memory_records import MemoryRecords

    from kafkatool.model import Compression
    from tests.benchmarks.inputs import write_segment

    path = tmp_path / "00000000000000000000.log"
    info = write_segment(path, 256 << 10, 15, 1024, Compression[codec.upper()])
    data = path.read_bytes()
    rows, legacy, defects = walker_view(data)
    assert not defects and not legacy and len(rows) == info["batches"] and len(data) == info["bytes"]
    cols = columns.scan_segment(path)
    assert columns_view(cols)[0] == rows
    assert cols.headers["producer_id"].max() >= 0 and (cols.headers["attributes"] & 0x10).any()
    mr = MemoryRecords(data)
    seen = 0
    while mr.has_next():
        batch = mr.next_batch()
        assert batch.validate_crc()
        seen += sum(1 for _ in batch)
    assert seen == info["records"]
