"""Tiered storage's rules (KIP-405), pure: remote segment states, the remote ranges of a partition, and whether a
range of offsets below the local log is covered by remote storage.

Models ``RemoteLogSegmentState.isValidTransition`` and ``RemoteLogMetadataCache`` (storage, package
``org.apache.kafka.server.log.remote.metadata.storage``: a segment enters as ``COPY_SEGMENT_STARTED``, its
updates must follow the state graph, ``DELETE_SEGMENT_FINISHED`` removes it; only ``COPY_SEGMENT_FINISHED``
segments are readable), and ``LogLoader.load`` / ``UnifiedLog``'s two start offsets: with remote storage
enabled the log start offset is the ``log-start-offset-checkpoint`` entry as written (not raised to the first
local segment), and the *local* log start offset is ``max(logStartOffset, first local segment base)``; the
offsets in between live in remote storage; and ``RemoteLogManager.isRemoteSegmentWithinLeaderEpochs`` (with
``buildFilteredLeaderEpochMap``): whether a remote segment's leader epochs belong to the local leader epoch
lineage. Public names: :class:`RemoteSegment`, :class:`RemoteRange`, :class:`RemoteLog`, :func:`fold_events`,
:func:`log_start_offsets`, :func:`uncovered`, :func:`local_start_view`, :func:`filtered_leader_epochs`,
:func:`outside_lineage`, :data:`REMOTE_STORAGE_ENABLE`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kafkatool.schema.remote_log_metadata import PARTITION_DELETE_STATES, SEGMENT_STATES

COPY_SEGMENT_STARTED, COPY_SEGMENT_FINISHED, DELETE_SEGMENT_STARTED, DELETE_SEGMENT_FINISHED = 0, 1, 2, 3
REMOTE_STORAGE_ENABLE = "remote.storage.enable"
"""The topic config that turns tiered storage on (``TopicConfig.REMOTE_LOG_STORAGE_ENABLE_CONFIG``, default false;
no broker-level default)."""

#: ``RemoteLogSegmentState.isValidTransition``: the states each state may move to.
VALID_TRANSITIONS: dict[int, frozenset[int]] = {
    COPY_SEGMENT_STARTED: frozenset({COPY_SEGMENT_FINISHED, DELETE_SEGMENT_STARTED}),
    COPY_SEGMENT_FINISHED: frozenset({DELETE_SEGMENT_STARTED}),
    DELETE_SEGMENT_STARTED: frozenset({DELETE_SEGMENT_FINISHED}),
    DELETE_SEGMENT_FINISHED: frozenset(),
}


def state_name(state: int) -> str:
    """A ``RemoteLogSegmentState`` id as Kafka names it (``unknown(N)`` otherwise)."""
    return SEGMENT_STATES.get(state, f"unknown({state})")


@dataclass
class RemoteSegment:
    """One remote segment as ``RemoteLogSegmentMetadata`` holds it (offsets inclusive), with its current state."""

    segment_id: str
    topic_id: str
    topic: str
    partition: int
    start_offset: int
    end_offset: int
    state: int
    broker_id: int
    event_timestamp_ms: int
    size_bytes: int
    leader_epochs: dict[int, int] = field(default_factory=dict)  # epoch -> start offset
    metadata_offset: int | None = None  # where in __remote_log_metadata it was added

    @property
    def readable(self) -> bool:
        """Fetchable from remote storage: ``COPY_SEGMENT_FINISHED`` only (``RemoteLogMetadataCache``)."""
        return self.state == COPY_SEGMENT_FINISHED


@dataclass(frozen=True)
class RemoteRange:
    """Offsets ``[start, end]`` (inclusive, as the metadata gives them) of one remote segment, and its state."""

    start: int
    end: int
    state: str
    segment_id: str


@dataclass
class RemoteLog:
    """What ``__remote_log_metadata`` says about one topic partition: its segments (deleted ones dropped, as
    ``DELETE_SEGMENT_FINISHED`` removes them), its partition-delete state, and the events Kafka would refuse."""

    topic: str
    partition: int
    topic_id: str
    segments: dict[str, RemoteSegment] = field(default_factory=dict)
    deleted: int = 0  # segments that reached DELETE_SEGMENT_FINISHED
    partition_delete_state: str | None = None
    problems: list[str] = field(default_factory=list)

    def ranges(self) -> list[RemoteRange]:
        """The live remote segments' ranges, by start offset."""
        return [RemoteRange(s.start_offset, s.end_offset, state_name(s.state), s.segment_id)
                for s in sorted(self.segments.values(), key=lambda s: (s.start_offset, s.end_offset))]

    def readable(self) -> list[tuple[int, int]]:
        """``[start, end]`` of every ``COPY_SEGMENT_FINISHED`` segment, by start offset."""
        return sorted((s.start_offset, s.end_offset) for s in self.segments.values() if s.readable)

    @property
    def log_start_offset(self) -> int | None:
        """The lowest offset remote storage serves (``RemoteLogManager``'s remote log start), if any."""
        spans = self.readable()
        return spans[0][0] if spans else None

    @property
    def end_offset(self) -> int | None:
        """The highest offset copied to remote storage (``highestOffsetInRemoteStorage``), if any."""
        spans = self.readable()
        return max(end for _, end in spans) if spans else None


def _tip(data: dict[str, Any]) -> tuple[str, str, int]:
    tip = data["topicIdPartition"]
    return tip["id"], tip["name"], tip["partition"]


def fold_events(events: Iterable[tuple[int | None, dict[str, Any]]]) -> dict[tuple[str, int], RemoteLog]:
    """Apply ``__remote_log_metadata`` records in order, as ``RemoteLogMetadataCache`` does; ``events``: (offset in
    the metadata topic, :func:`~kafkatool.schema.remote_log_metadata.parse_remote_log_metadata` output). Returns
    each (topic, partition)'s :class:`RemoteLog`. Snapshot records (api key 3) carry no partition and are
    skipped."""
    out: dict[tuple[str, int], RemoteLog] = {}

    def log_for(topic_id: str, topic: str, partition: int) -> RemoteLog:
        log = out.get((topic, partition))
        if log is None or log.topic_id != topic_id:
            # A topic recreated under the same name has a new id: only the latest id's metadata is its own.
            older = [] if log is None else [f"metadata of an earlier topic id {log.topic_id} ignored"]
            log = out[(topic, partition)] = RemoteLog(topic, partition, topic_id, problems=older)
        return log

    for offset, rec in events:
        data, kind = rec["data"], rec["api_key"]
        where = "" if offset is None else f" (metadata offset {offset})"
        if kind == 0:
            seg_id = data["remoteLogSegmentId"]
            topic_id, topic, partition = _tip(seg_id)
            log = log_for(topic_id, topic, partition)
            state = data["remoteLogSegmentState"]
            if state != COPY_SEGMENT_STARTED:
                log.problems.append(f"segment {seg_id['id']} added in state {state_name(state)}, not "
                                    f"COPY_SEGMENT_STARTED{where}: Kafka refuses it")
                continue
            if data["endOffset"] < data["startOffset"]:
                log.problems.append(f"segment {seg_id['id']} ends at {data['endOffset']}, before its start "
                                    f"{data['startOffset']}{where}: Kafka refuses it")
                continue
            log.segments[seg_id["id"]] = RemoteSegment(
                seg_id["id"], topic_id, topic, partition, data["startOffset"], data["endOffset"], state,
                data["brokerId"], data["eventTimestampMs"], data["segmentSizeInBytes"],
                {e["leaderEpoch"]: e["offset"] for e in data["segmentLeaderEpochs"]}, offset)
        elif kind == 1:
            seg_id = data["remoteLogSegmentId"]
            topic_id, topic, partition = _tip(seg_id)
            log = log_for(topic_id, topic, partition)
            seg = log.segments.get(seg_id["id"])
            state = data["remoteLogSegmentState"]
            if seg is None:
                log.problems.append(f"update of unknown segment {seg_id['id']} to {state_name(state)}{where}")
                continue
            if state not in VALID_TRANSITIONS.get(seg.state, frozenset()):
                log.problems.append(f"segment {seg.segment_id} cannot move from {state_name(seg.state)} to "
                                    f"{state_name(state)}{where}: Kafka refuses the update")
                continue
            seg.state, seg.event_timestamp_ms = state, data["eventTimestampMs"]
            if state == DELETE_SEGMENT_FINISHED:
                del log.segments[seg.segment_id]
                log.deleted += 1
        elif kind == 2:
            topic_id, topic, partition = _tip(data)
            state = data["remotePartitionDeleteState"]
            log_for(topic_id, topic, partition).partition_delete_state = PARTITION_DELETE_STATES.get(
                state, f"unknown({state})")
    return out


def log_start_offsets(log_start_checkpoint: int | None, first_local_base: int, remote_enabled: bool) -> tuple[int, int]:
    """(log start offset, local log start offset) after ``LogLoader.load`` and ``UnifiedLog``'s constructor:
    with remote storage the checkpointed start stays (``isRemoteLogEnabled ? logStartOffsetCheckpoint``),
    otherwise it is raised to the first segment; the local start is never below the first segment."""
    cp = log_start_checkpoint or 0
    start = cp if remote_enabled else max(cp, first_local_base)
    return start, max(start, first_local_base)


def uncovered(start: int, end: int, spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of ``[start, end)`` that no inclusive span ``[a, b]`` of ``spans`` covers, as ``[from, to)``."""
    out: list[tuple[int, int]] = []
    at = start
    for a, b in sorted(spans):
        if at >= end:
            break
        if b < at:
            continue
        if a > at:
            out.append((at, min(a, end)))
        at = max(at, b + 1)
    if at < end:
        out.append((at, end))
    return out


@dataclass(frozen=True)
class LocalStartView:
    """A partition's offsets below its first local segment, as tiered storage explains them."""

    log_start_offset: int
    local_log_start_offset: int
    remote: tuple[int, int] | None  # [from, to) of offsets that are remote (below the local log start)
    covered_by: tuple[RemoteRange, ...]  # the remote segments that hold them
    uncovered: tuple[tuple[int, int], ...]  # [from, to) parts no readable remote segment holds
    evidence: str  # "remote-log-metadata", "topic-config" or "none"


def local_start_view(log_start_checkpoint: int | None, first_local_base: int, remote: RemoteLog | None,
                     remote_enabled: bool | None = None) -> LocalStartView:
    """Which offsets of ``[log start, first local segment)`` are remote. Remote storage counts as enabled when
    ``remote_enabled`` says so (the topic's ``remote.storage.enable``) or, unknown, when ``__remote_log_metadata``
    holds segments of the partition. The range is covered when every offset of it lies in a
    ``COPY_SEGMENT_FINISHED`` segment; with metadata but no checkpoint entry, the log start is the remote log
    start."""
    has_meta = remote is not None and bool(remote.segments)
    enabled = remote_enabled if remote_enabled is not None else has_meta
    cp = log_start_checkpoint
    if enabled and cp is None and remote is not None and remote.log_start_offset is not None:
        cp = remote.log_start_offset
    start, local = log_start_offsets(cp, first_local_base, bool(enabled))
    evidence = "remote-log-metadata" if has_meta else "topic-config" if remote_enabled else "none"
    if not enabled or start >= local:
        return LocalStartView(start, local, None, (), (), evidence)
    spans = remote.readable() if remote is not None else []
    holders = tuple(r for r in (remote.ranges() if remote is not None else [])
                    if r.state == state_name(COPY_SEGMENT_FINISHED) and r.end >= start and r.start < local)
    gaps = tuple(uncovered(start, local, spans)) if has_meta else ()
    return LocalStartView(start, local, (start, local), holders, gaps, evidence)


def remote_storage_enabled(value: str | None) -> bool:
    """A ``remote.storage.enable`` config value as ``ConfigDef``'s BOOLEAN parses it (``true``/``false`` in any
    case; absent: the default, false)."""
    return value is not None and value.strip().lower() == "true"


def filtered_leader_epochs(epochs: Iterable[tuple[int, int]]) -> dict[int, int]:
    """``RemoteLogManager.buildFilteredLeaderEpochMap``: epoch -> start offset, by epoch, without the epochs that
    hold no record (an epoch starting at the same offset as the next one)."""
    ordered = sorted(epochs)
    return {e: o for i, (e, o) in enumerate(ordered) if i + 1 == len(ordered) or ordered[i + 1][1] != o}


def outside_lineage(segment_epochs: dict[int, int], segment_end: int, log_end: int,
                    local_epochs: Iterable[tuple[int, int]]) -> str | None:
    """Why ``RemoteLogManager.isRemoteSegmentWithinLeaderEpochs`` says a remote segment (its ``segmentLeaderEpochs``
    and inclusive end offset) is not within the local leader epoch lineage (the leader epoch cache's
    ``(epoch, start offset)`` entries; the log end offset), or ``None`` when it is. Both epoch maps are filtered
    as Kafka filters them. An empty local cache gives ``None`` (nothing to compare with)."""
    lineage = filtered_leader_epochs(local_epochs)
    seg = filtered_leader_epochs(segment_epochs.items())
    if not lineage:
        return None
    if not seg:
        return "it has no leader epochs"
    keys, seg_keys = sorted(lineage), sorted(seg)
    last = seg_keys[-1]
    if last < keys[0] or last > keys[-1]:
        return f"its last epoch {last} is outside the local epochs {keys[0]}..{keys[-1]}"
    first = next((e for e in seg_keys if e >= keys[0]), None)
    if first is None:
        return f"none of its epochs is at or above the local first epoch {keys[0]}"
    for i, epoch in enumerate(seg_keys):
        if epoch < first:
            continue
        offset = seg[epoch]
        if epoch not in lineage:
            return f"its epoch {epoch} is not in the local leader epoch cache"
        if epoch == first and epoch != keys[0] and offset < lineage[epoch]:
            return f"its epoch {epoch} starts at {offset}, before the local start {lineage[epoch]} of that epoch"
        later = [e for e in keys if e > epoch]
        if epoch == last:
            if later and segment_end > lineage[later[0]] - 1:
                return (f"it ends at {segment_end}, past offset {lineage[later[0]] - 1} where the local epoch "
                        f"{epoch} ends")
            continue
        mine = (seg_keys[i + 1], seg[seg_keys[i + 1]])
        theirs = (later[0], lineage[later[0]]) if later else None
        if theirs != mine:
            return (f"its epoch after {epoch} is {mine[0]} from offset {mine[1]}, the local cache's is "
                    + (f"{theirs[0]} from offset {theirs[1]}" if theirs else "none"))
    if segment_end >= log_end:
        return f"it ends at {segment_end}, at or past the local log end offset {log_end}"
    return None
