"""Helpers shared by the scan tests: Kafka-made expectations in table form, and generated log dirs with large
segments (to exercise byte-range cuts) and with a segment whose ``.index`` points at a false batch start."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from kafkatool.fleet.tables import TABLES, sorted_rows
from kafkatool.model import OffsetIndexEntry
from kafkatool.schema import offset_index
from kafkatool.schema.filenames import FileKind, classify, in_flight_suffix
from kafkatool.writing.atomic import write_tree
from kafkatool.writing.fixture_writer import LogDir, PartitionWriter, Producer, TopicConfig, text_value


def read_tables(out: Path) -> dict[str, list[dict[str, Any]]]:
    """Every table of a scan output, rows sorted by the table's key."""
    return {name: sorted_rows(pq.read_table(out / name), name) for name in TABLES}


def expected_batch_rows(expected: dict[str, Any], log_dir: str) -> list[dict[str, Any]]:
    """The corpus case's ``before`` batch lists, as batches-table rows (Kafka's -1 sentinels as nulls)."""

    def opt(value: int | None) -> int | None:
        return None if value is None or value == -1 else value

    rows = []
    before = expected["before"]
    parts = dict(before.get("partitions", {}))
    metadata = before.get("metadataPartition") or before.get("bootstrapAndMetadata", {}).get("metadataPartition")
    if metadata:
        parts["__cluster_metadata-0"] = metadata  # the KRaft metadata log, kept apart in expected.json
    for part, info in parts.items():
        topic, _, number = part.rpartition("-")
        for lf in info.get("logFiles", []):
            name = lf["file"]
            if classify(name) is not FileKind.LOG or in_flight_suffix(name):
                continue
            for b in lf["batches"]:
                rows.append({
                    "log_dir": log_dir, "topic": topic, "partition": int(number), "segment": name,
                    "position": b["position"], "base_offset": b["baseOffset"], "last_offset": b["lastOffset"],
                    "size": b["sizeInBytes"], "magic": b["magic"], "compression": b["compression"],
                    "crc": b["crc"], "crc_valid": b["crcValid"],
                    "partition_leader_epoch": opt(b["partitionLeaderEpoch"]),
                    "producer_id": opt(b["producerId"]), "producer_epoch": opt(b["producerEpoch"]),
                    "base_sequence": opt(b["baseSequence"]), "last_sequence": opt(b["lastSequence"]),
                    "is_transactional": b["isTransactional"], "is_control": b["isControl"],
                    "timestamp_type": b["timestampType"], "max_timestamp": b["maxTimestamp"],
                    "count": b["recordCount"], "control_type": b.get("controlType"),
                })
    return rows


def big_partition_dir(root: Path, *, batches: int = 1500, value_bytes: int = 1500) -> Path:
    """A log dir with one partition whose single segment is a few MiB, with a dense ``.index``."""
    config = TopicConfig(segment_bytes=64 << 20, index_interval_bytes=4096, segment_index_bytes=1 << 20)
    part = PartitionWriter("big", 0, config=config)
    producer = Producer(7000, 0)
    for i in range(batches):
        values = [text_value(i * 3 + k, value_bytes // 8) for k in range(3)]
        part.append(values, leader_epoch=1 + i // 500, producer=producer if i % 2 else None)
    part.close()
    log_dir = root / "broker-1"
    write_tree(LogDir([part]).files(), log_dir)
    return log_dir


def false_cut_dir(root: Path) -> tuple[Path, int]:
    """A log dir whose segment holds, inside one record value, a chain of whole valid batches, and whose
    ``.index`` points at the first of them: a cut there passes every header test but is not a batch start.

    Returns the log dir and the false position.
    """
    inner = PartitionWriter("inner", 0, config=TopicConfig(segment_bytes=1 << 20))
    for i in range(4):
        inner.append([text_value(i, 4)], leader_epoch=0)
    inner.close()
    embedded = inner.files()["00000000000000000000.log"]
    config = TopicConfig(segment_bytes=64 << 20, index_interval_bytes=1 << 30, segment_index_bytes=4096)
    part = PartitionWriter("trap", 0, config=config)
    part.append([text_value(1, 400)], leader_epoch=0)
    hit = part.append([b"x" * 2000 + embedded + b"y" * 2000], leader_epoch=0)
    for i in range(50):
        part.append([text_value(i, 400)], leader_epoch=0)
    part.close()
    assert hit is not None
    files = LogDir([part]).files()
    data = files["trap-0/00000000000000000000.log"]
    false_pos = data.index(embedded)
    files["trap-0/00000000000000000000.index"] = offset_index.build_offset_index(
        [OffsetIndexEntry(1, false_pos)], 0)
    log_dir = root / "broker-trap"
    write_tree(files, log_dir)
    return log_dir, false_pos


def spark_unavailable() -> str | None:
    """Why the Spark engine cannot run here (no pyspark, no Java), or ``None`` when it can."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed"
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        return "no Java runtime"
    return None
