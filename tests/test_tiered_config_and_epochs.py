"""Tiered storage, from the metadata image and against the leader epochs, on the real 4.x cases
``fixtures/kafka-4x/tiered-*`` and damaged copies of them:

* ``remote.storage.enable`` of each topic from the KRaft metadata log the log dir holds
  (``analysis.metadata.topic_remote_storage``), fed to ``check`` and ``simulate-restart``: with the config alone
  (no ``__remote_log_metadata``) the load keeps the checkpointed log start as Kafka's did (its ListOffsets after
  the restart, saved in ``kafka.json``); with it false the log loads as a local one;
* each remote segment's ``segmentLeaderEpochs`` against the local ``leader-epoch-checkpoint``
  (``RemoteLogManager.isRemoteSegmentWithinLeaderEpochs``): a contradiction is a ``check`` finding and a
  ``simulate-restart`` step.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kafkatool.analysis.metadata import topic_remote_storage
from kafkatool.engine.check import check_log_dir
from kafkatool.engine.restart import RestartOptions, simulate_restart
from kafkatool.reading.restart_inputs import read_restart_inputs
from kafkatool.storage.tiered import filtered_leader_epochs, outside_lineage, remote_storage_enabled

CASES = Path(__file__).resolve().parents[1] / "fixtures" / "kafka-4x"
LOCAL = CASES / "tiered-local"
NOW = 1_800_000_000_000


def _kafka(case: Path) -> dict:
    return json.loads((case / "kafka.json").read_text())


def test_the_metadata_image_says_which_topics_are_tiered() -> None:
    got = topic_remote_storage(LOCAL / "data")
    assert got is not None and got["tiered"] is True
    assert got["__remote_log_metadata"] is False and got["__consumer_offsets"] is False  # set false / default
    assert topic_remote_storage(LOCAL / "data" / "tiered-0") == got  # a partition directory: its log dir's
    assert topic_remote_storage(CASES / "tiered-crash" / "data") is None  # no metadata log kept in that case


def test_config_alone_gives_kafkas_log_start_after_restart(tmp_path: Path) -> None:
    """Without ``__remote_log_metadata`` (removed from a copy), the topic's remote.storage.enable keeps the
    checkpointed log start 0 below the first local segment 22: Kafka's earliest/earliest-local after its restart;
    ``check`` says the range is remote, from the topic config. Without the config it would be raised to 22."""
    root = tmp_path / "data"
    shutil.copytree(LOCAL / "data", root)
    shutil.rmtree(root / "__remote_log_metadata-0")
    after = _kafka(LOCAL)["after_restart"]["list_offsets"]
    inputs = read_restart_inputs(root)
    enabled = topic_remote_storage(root)
    p = next(p for p in simulate_restart(inputs.log_dir, inputs.swaps, RestartOptions(now=NOW), None,
                                         inputs.tiered.remote, enabled).partitions if p.topic == "tiered")
    assert (p.log_start_offset, p.local_log_start_offset, p.log_end_offset) == (
        after["earliest"], after["earliest_local"], after["latest"])
    assert p.remote_offsets == (0, 22) and p.loss.offsets is None
    found = check_log_dir(inputs.log_dir, inputs.swaps, inputs.tiered.remote, enabled)
    ranges = [d for d in found if d.code == "remote-log-range"]
    assert len(ranges) == 1 and "remote.storage.enable" in ranges[0].reason
    assert not any(d.code == "log-start-below-segments" and d.field == "tiered-0" for d in found)
    unknown = next(p for p in simulate_restart(inputs.log_dir, inputs.swaps, RestartOptions(now=NOW), None,
                                               inputs.tiered.remote).partitions if p.topic == "tiered")
    assert unknown.log_start_offset == 22  # no evidence of tiered storage: the start is raised, as before


def test_config_false_loads_a_local_log_and_says_why() -> None:
    inputs = read_restart_inputs(LOCAL / "data")
    off = {"tiered": False}
    p = next(p for p in simulate_restart(inputs.log_dir, inputs.swaps, RestartOptions(now=NOW), None,
                                         inputs.tiered.remote, off).partitions if p.topic == "tiered")
    assert p.log_start_offset == 22 and p.remote_offsets is None
    assert any(s.action == "remote-storage-disabled" for s in p.steps)
    found = check_log_dir(inputs.log_dir, inputs.swaps, inputs.tiered.remote, off)
    assert [d.code for d in found if d.code.startswith("remote-")] == ["remote-storage-disabled"]


@pytest.mark.parametrize("case", sorted(CASES.glob("tiered-*")), ids=lambda c: c.name)
def test_real_remote_segments_are_within_the_local_lineage(case: Path) -> None:
    inputs = read_restart_inputs(case / "data")
    enabled = topic_remote_storage(case / "data")
    found = check_log_dir(inputs.log_dir, inputs.swaps, inputs.tiered.remote, enabled)
    assert not [d for d in found if d.code == "remote-epoch-lineage"]
    result = simulate_restart(inputs.log_dir, inputs.swaps, RestartOptions(now=NOW), None, inputs.tiered.remote,
                              enabled)
    assert not [s for p in result.partitions for s in p.steps if s.action == "remote-epoch-lineage"]


@pytest.mark.parametrize(("checkpoint", "flagged"), [
    ("0\n2\n0 0\n1 5\n", [(4, 6), (7, 9), (10, 12), (13, 15), (16, 18), (19, 21)]),  # epoch 0 ends at 4 locally
    ("0\n1\n3 0\n", [(0, 3), (4, 6), (7, 9), (10, 12), (13, 15), (16, 18), (19, 21)]),  # no local epoch 0
])
def test_a_damaged_local_epoch_cache_contradicts_the_remote_segments(tmp_path: Path, checkpoint: str,
                                                                     flagged: list[tuple[int, int]]) -> None:
    root = tmp_path / "data"
    shutil.copytree(LOCAL / "data", root)
    (root / "tiered-0" / "leader-epoch-checkpoint").write_text(checkpoint)
    inputs = read_restart_inputs(root)
    found = [d for d in check_log_dir(inputs.log_dir, inputs.swaps, inputs.tiered.remote, topic_remote_storage(root))
             if d.code == "remote-epoch-lineage"]
    segments = {s.segment_id: (s.start_offset, s.end_offset)
                for s in inputs.tiered.remote[("tiered", 0)].segments.values()}
    assert sorted(segments[d.reason.split()[2]] for d in found) == flagged
    assert all(d.severity == "warning" and d.file == "tiered-0/leader-epoch-checkpoint" for d in found)


def test_lineage_rule_on_kafkas_own_example() -> None:
    """RemoteLogManager's comment: cache {(5, 10), (7, 15), (9, 100)}; segment1 5-50 with {(5, 10), (7, 15)},
    segment2 14-150 with {(5, 14), (7, 15), (9, 100)} (after a leader election); once segment1 is gone the cache
    is {(7, 51), (9, 100)} and segment2 is still within it."""
    cache = [(5, 10), (7, 15), (9, 100)]
    assert outside_lineage({5: 10, 7: 15}, 50, 200, cache) is None
    assert outside_lineage({5: 14, 7: 15, 9: 100}, 150, 200, cache) is None
    assert outside_lineage({5: 14, 7: 15, 9: 100}, 150, 200, [(7, 51), (9, 100)]) is None
    assert "log end" in (outside_lineage({9: 100}, 150, 150, cache) or "")
    assert "past offset 99" in (outside_lineage({7: 15}, 120, 200, cache) or "")  # epoch 7 ends at 99 locally
    assert "not in the local" in (outside_lineage({8: 20}, 30, 200, cache) or "")
    assert "is 8 from offset 20" in (outside_lineage({5: 10, 8: 20}, 30, 200, cache) or "")
    assert "before the local start" in (outside_lineage({7: 12}, 20, 200, cache) or "")
    assert "is 9 from offset 90" in (outside_lineage({7: 15, 9: 90}, 120, 200, cache) or "")
    assert outside_lineage({5: 10}, 5, 200, []) is None  # no local cache: nothing to compare
    assert filtered_leader_epochs([(1, 0), (2, 0), (3, 7)]) == {2: 0, 3: 7}  # epoch 1 wrote nothing
    assert remote_storage_enabled("TRUE") and not remote_storage_enabled(None) and not remote_storage_enabled("no")
