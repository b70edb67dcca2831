"""The bundled demo log dir (scenario ``demo``; its rebuild is checked in test_fixtures): healthy by every check."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kafkatool.cli import app
from tests.conftest import REPO

DEMO = REPO / "fixtures" / "demo"


def test_demo_is_healthy_and_covers_every_codec() -> None:
    result = CliRunner().invoke(app, ["dump-segment", "--verify", "--deep", "-f", "json", str(DEMO)])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["summary"]["defects"] == 0
    batches = [i for f in doc["files"] if f["kind"] == "log" for i in f["items"]]
    assert {b["compression"] for b in batches} == {"none", "gzip", "snappy", "lz4", "zstd"}
    markers = [b["records"][0]["control"]["type_name"] for b in batches if b["is_control"]]
    assert "COMMIT" in markers and "ABORT" in markers
    kinds = {f["kind"] for f in doc["files"]}
    assert {"index", "timeindex", "txnindex", "snapshot", "leader-epoch-checkpoint", "clean-shutdown"} <= kinds


def test_kafka_python_reads_the_demo_segments() -> None:
    """An independent reader agrees on every batch of the segments we wrote."""
    from kafka.record.memory_records import MemoryRecords

    for log in sorted(DEMO.glob("*/*.log")):
        mr = MemoryRecords(log.read_bytes())
        count = 0
        while mr.has_next():
            batch = mr.next_batch()
            assert batch.validate_crc()
            count += 1
        assert count > 0
