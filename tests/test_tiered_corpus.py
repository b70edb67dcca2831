"""The tiered-storage corpus case written by a real broker (``tests/kafka/tiered_live.py``: Kafka 4.0.2 with
``LocalTieredStorage``), checked without Kafka: kafkatool's log start and local log start agree with Kafka's
ListOffsets earliest and earliest-local, the offsets in between are remote (held by finished remote segments of
``__remote_log_metadata``), and ``check`` calls none of it a gap."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from kafkatool.engine.check import partition_findings
from kafkatool.engine.log_loader import LogLoader
from kafkatool.engine.restart import RestartOptions, simulate_restart
from kafkatool.engine.verify import tiered_findings
from kafkatool.model import TopicPartition
from kafkatool.reading.restart_inputs import read_restart_inputs
from kafkatool.schema import checkpoint
from kafkatool.schema.filenames import LOG_START_OFFSET_CHECKPOINT

CASES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "kafka-4x").glob("tiered*/kafka.json"))


@pytest.mark.parametrize("kafka_json", CASES, ids=[p.parent.name for p in CASES])
def test_tiered_case_agrees_with_kafka(kafka_json: Path) -> None:
    kafka = json.loads(kafka_json.read_text())
    log_dir = kafka_json.parent / "data"
    tp = TopicPartition(kafka["topic"], 0)
    earliest, local = kafka["list_offsets"]["earliest"], kafka["list_offsets"]["earliest_local"]
    assert local > earliest  # the case shows a local log start above the log start
    inputs = read_restart_inputs(log_dir)
    remote = inputs.tiered.for_partition(tp)
    assert remote is not None and not remote.problems and not inputs.tiered.problems
    cached = inputs.tiered.cached_segments()
    assert cached == {r.segment_id for r in remote.ranges()} and not inputs.tiered.cache_mismatches()
    assert remote.log_start_offset is not None and remote.log_start_offset <= earliest
    assert remote.end_offset is not None and remote.end_offset >= local - 1
    if kafka["list_offsets"].get("latest_tiered") is not None:
        assert remote.end_offset == kafka["list_offsets"]["latest_tiered"]
    result = simulate_restart(inputs.log_dir, inputs.swaps, RestartOptions(now=1_800_000_000_000),
                              remote=inputs.tiered.remote)
    p = next(p for p in result.partitions if p.topic == tp.topic)
    assert p.outcome == "loaded" and p.loss.records == 0 and p.loss.offsets is None
    assert p.log_start_offset == earliest and p.local_log_start_offset == local
    assert p.remote_offsets == (earliest, local) and not p.remote_uncovered
    assert p.log_end_offset == kafka["list_offsets"]["latest"]
    after = kafka.get("after_restart")
    if after is not None:  # Kafka started again on this very state
        assert (p.log_start_offset, p.local_log_start_offset, p.log_end_offset) == (
            after["list_offsets"]["earliest"], after["list_offsets"]["earliest_local"], after["list_offsets"]["latest"])
        kept = sorted(int(n.split(".")[0]) for n in after["local_files"] if n.endswith(".snapshot"))
        if "remote_enabled" in inspect.getsource(LogLoader.__init__):  # the loader keeps the checkpointed start
            assert p.snapshot_files_after == kept
    data = inputs.log_dir
    part = next(q for q in data.partitions if q.topic_partition == tp)
    cp = checkpoint.parse_offset_checkpoint((log_dir / LOG_START_OFFSET_CHECKPOINT).read_bytes()).get(tp)
    out = tiered_findings(partition_findings(data, part), part.directory, cp, part.segments[0].base_offset, remote)
    assert [d.code for d in out if d.code.startswith("remote-")] == ["remote-log-range"]
    serious = sorted({d.code for d in out if d.severity != "info"})
    # A crash leaves the active segment above the recovery point (Kafka re-reads it): nothing about the remote range.
    assert serious == (["recovery-point-behind"] if kafka.get("shutdown") == "SIGKILL" else []), out


def test_the_case_is_there() -> None:
    if not CASES:
        pytest.skip("no tiered corpus case saved (tests/kafka/tiered_live.py)")
