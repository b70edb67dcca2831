"""Tiered storage's rules (``kafkatool.storage.tiered``) and ``check``'s use of them (``engine.verify``):
remote segment states as ``RemoteLogMetadataCache`` folds them, ``LogLoader``'s log start with remote storage,
and the range below the local log start said to be remote, never a gap."""

from __future__ import annotations

from typing import Any

from kafkatool.engine.verify import tiered_findings
from kafkatool.model import Defect
from kafkatool.storage.tiered import fold_events, local_start_view, log_start_offsets, uncovered

TID = "AQIDBAUGBwgJCgsMDQ4PEA"


def seg(sid: str, start: int, end: int, state: int = 0, topic: str = "orders", tid: str = TID) -> dict[str, Any]:
    return {"api_key": 0, "data": {
        "remoteLogSegmentId": {"topicIdPartition": {"name": topic, "id": tid, "partition": 0}, "id": sid},
        "startOffset": start, "endOffset": end, "brokerId": 1, "maxTimestampMs": 5, "eventTimestampMs": 6,
        "segmentLeaderEpochs": [{"leaderEpoch": 0, "offset": start}], "segmentSizeInBytes": 100,
        "customMetadata": None, "remoteLogSegmentState": state}}


def upd(sid: str, state: int, tid: str = TID) -> dict[str, Any]:
    return {"api_key": 1, "data": {
        "remoteLogSegmentId": {"topicIdPartition": {"name": "orders", "id": tid, "partition": 0}, "id": sid},
        "brokerId": 1, "eventTimestampMs": 7, "customMetadata": None, "remoteLogSegmentState": state}}


def events(*recs: dict[str, Any]) -> list[tuple[int | None, dict[str, Any]]]:
    return list(enumerate(recs))


def test_fold_follows_the_state_graph() -> None:
    logs = fold_events(events(seg("a", 0, 9), upd("a", 1), seg("b", 10, 19), upd("b", 1), seg("c", 20, 29),
                              upd("a", 2), upd("a", 3), upd("b", 0), upd("zz", 1), seg("d", 30, 39, state=1)))
    log = logs[("orders", 0)]
    assert [(r.start, r.end, r.state) for r in log.ranges()] == [
        (10, 19, "COPY_SEGMENT_FINISHED"), (20, 29, "COPY_SEGMENT_STARTED")]
    assert log.deleted == 1
    assert log.readable() == [(10, 19)] and log.log_start_offset == 10 and log.end_offset == 19
    assert len(log.problems) == 3  # finished -> started, unknown segment, added already finished
    assert "cannot move from COPY_SEGMENT_FINISHED to COPY_SEGMENT_STARTED" in log.problems[0]


def test_recreated_topic_keeps_the_newest_id_only() -> None:
    logs = fold_events(events(seg("a", 0, 9), upd("a", 1), seg("n", 0, 4, tid="other"), upd("n", 1, tid="other")))
    log = logs[("orders", 0)]
    assert log.topic_id == "other" and log.readable() == [(0, 4)] and "earlier topic id" in log.problems[0]


def test_log_start_offsets_follow_log_loader() -> None:
    assert log_start_offsets(0, 50, True) == (0, 50)  # remote: the checkpoint's start stays
    assert log_start_offsets(0, 50, False) == (50, 50)  # local only: raised to the first segment
    assert log_start_offsets(70, 50, True) == (70, 70)
    assert log_start_offsets(None, 50, True) == (0, 50)


def test_uncovered() -> None:
    assert uncovered(0, 50, [(0, 19), (20, 49)]) == []
    assert uncovered(0, 50, [(10, 19), (30, 60)]) == [(0, 10), (20, 30)]
    assert uncovered(5, 8, []) == [(5, 8)]
    assert uncovered(5, 8, [(0, 100)]) == []


def test_local_start_view() -> None:
    log = fold_events(events(seg("a", 0, 24), upd("a", 1), seg("b", 25, 49), upd("b", 1)))[("orders", 0)]
    view = local_start_view(0, 50, log)
    assert view.remote == (0, 50) and not view.uncovered and len(view.covered_by) == 2
    assert view.log_start_offset == 0 and view.local_log_start_offset == 50
    partial = local_start_view(0, 60, log)
    assert partial.uncovered == ((50, 60),)
    assert local_start_view(0, 50, None).remote is None  # no evidence: Kafka raises the start, nothing remote
    by_config = local_start_view(0, 50, None, remote_enabled=True)
    assert by_config.remote == (0, 50) and by_config.evidence == "topic-config" and not by_config.uncovered
    no_cp = local_start_view(None, 50, log)
    assert no_cp.remote == (0, 50)


def test_check_says_remote_not_gap() -> None:
    log = fold_events(events(seg("a", 0, 24), upd("a", 1), seg("b", 25, 44), upd("b", 1)))[("orders", 0)]
    note = Defect("log-start-below-segments", "log-start-offset-checkpoint", None, "orders-0", "raised", "info")
    other = Defect("x", "f", None, "orders-0", "kept", "warning")
    out = tiered_findings([note, other], "orders-0", 0, 50, log)
    codes = [d.code for d in out]
    assert "log-start-below-segments" not in codes and "x" in codes
    remote = next(d for d in out if d.code == "remote-log-range")
    assert remote.severity == "info" and "offsets 0..49 are in remote storage" in remote.reason
    gap = next(d for d in out if d.code == "remote-log-uncovered")
    assert gap.severity == "warning" and "offsets 45..49" in gap.reason
    assert tiered_findings([note], "orders-0", 0, 50, None) == [note]  # no evidence: unchanged
