"""The restart loader's parts on their own: ``LogSegments.values``, the snapshot files of ``ProducerStateManager``
(``removeStraySnapshots``, ``truncateAndReload``, ``loadFromSnapshot``) and ``takeSnapshot``'s rule."""

from __future__ import annotations

from kafkatool.engine.restart_producers import ProducerStateFiles, SnapshotFiles
from kafkatool.engine.restart_segments import LoadedSegment, segments_between
from kafkatool.engine.restart_steps import Step
from kafkatool.model import PartitionData, ProducerSnapshot, ProducerSnapshotEntry, SnapshotData

NOW = 1_700_000_000_000
DAY = 86_400_000


def segment(base: int) -> LoadedSegment:
    return LoadedSegment(base, f"p-0/{base:020d}.log", 0, [], None, True, False)


def producer(pid: int, timestamp: int, txn_first: int = -1) -> ProducerSnapshotEntry:
    return ProducerSnapshotEntry(pid, 0, 4, 10, 4, timestamp, -1, txn_first)


def partition(snapshots: dict[int, list[ProducerSnapshotEntry] | None]) -> PartitionData:
    part = PartitionData("p-0", None, "")
    for offset, entries in snapshots.items():
        snap = None if entries is None else ProducerSnapshot(1, 0, True, entries)
        part.snapshots.append(SnapshotData(offset, f"p-0/{offset:020d}.snapshot", 0, snap))
    return part


def test_values_runs_from_the_segment_holding_from_up_to_to() -> None:
    segs = [segment(0), segment(10), segment(20)]
    assert [s.base for s in segments_between(segs, 15, 1 << 63)] == [10, 20]
    assert [s.base for s in segments_between(segs, 10, 20)] == [10]
    assert [s.base for s in segments_between(segs, 5, 5)] == []
    assert segment(7).read_next_offset() == 7  # an empty segment ends at its base


def test_remove_stray_snapshots_keeps_bases_and_the_latest_stray_above_them() -> None:
    steps: list[Step] = []
    disk = SnapshotFiles(partition({0: [], 10: [], 15: [], 20: [], 40: []}), steps)
    disk.remove_stray_snapshots([0, 20])
    assert sorted(disk.files) == [0, 20, 40]
    assert [s.offset for s in steps] == [10, 15]
    disk = SnapshotFiles(partition({5: [], 20: []}), [])
    disk.remove_stray_snapshots([0, 20])
    assert sorted(disk.files) == [20]  # the latest stray lies below the last segment


def test_load_from_snapshot_skips_corrupt_files_and_drops_expired_producers() -> None:
    steps: list[Step] = []
    disk = SnapshotFiles(partition({10: [producer(1, NOW - 2 * DAY), producer(2, NOW), producer(3, 0, 7)],
                                    30: None}), steps)
    psm = ProducerStateFiles(disk, NOW, DAY, "load")
    psm.truncate_and_reload(0, 50)
    assert [s.action for s in steps] == ["snapshot-corrupt", "snapshot-delete", "snapshot-load"]
    assert sorted(psm.state.producers) == [2, 3]  # 1 expired; 3 has an open transaction
    assert psm.map_end == 10 and psm.state.last_snap_offset == 10
    psm.map_end = 50
    psm.take_snapshot()
    psm.take_snapshot()  # the map end did not move: no second snapshot
    assert sorted(disk.files) == [10, 50] and [s.action for s in steps][-1] == "snapshot-write"
    assert len([s for s in steps if s.action == "snapshot-write"]) == 1


def test_truncate_and_reload_deletes_snapshots_outside_the_log() -> None:
    steps: list[Step] = []
    disk = SnapshotFiles(partition({0: [], 10: [], 60: []}), steps)
    psm = ProducerStateFiles(disk, NOW, DAY, "load")
    psm.truncate_and_reload(0, 50)
    assert sorted(disk.files) == [10]
    assert psm.map_end == 10
