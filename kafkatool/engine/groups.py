"""Consumer groups from ``__consumer_offsets``: committed offsets per partition, group metadata, and the lag and
range checks against the partitions found in the same log dirs.

Models the group coordinator's load of its partitions (group-coordinator ``GroupMetadataManager`` and
``OffsetMetadataManager.replay``): records are replayed in offset order. An offset commit of a batch without a
producer id replaces the previous one for its group and partition; one with a producer id (TxnOffsetCommit) stays
pending for that producer until its COMMIT marker applies it, unless a commit written later is already there
(``replayEndTransactionMarker``), or its ABORT marker drops it. A tombstone deletes the committed offset and the
pending ones for that partition. A ``GroupMetadata`` or ``ConsumerGroupMetadata`` tombstone deletes the group.
Lag is measured as ``kafka-consumer-groups.sh --describe`` does: against the partition's high watermark (what
``ListOffsets`` latest returns to a read_uncommitted admin), or the log end offset when no checkpoint holds one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kafkatool.model import NO_PRODUCER_ID, PartitionData, RecordBatch
from kafkatool.schema.topic_records import DecodeFn

COMMIT, ABORT = 1, 0


@dataclass
class Commit:
    """One committed offset as the coordinator holds it."""

    group: str
    topic: str
    partition: int
    offset: int
    leader_epoch: int | None
    metadata: str
    commit_timestamp: int
    expire_timestamp: int | None
    record_offset: int
    coordinator_partition: str
    transactional: bool = False


@dataclass
class Group:
    """A group's metadata as last written: classic (``GroupMetadataValue``) or consumer (KIP-848 records)."""

    group_id: str
    protocol: str = "classic"
    generation: int | None = None
    protocol_type: str | None = None
    assignor: str | None = None
    leader: str | None = None
    members: set[str] = field(default_factory=set)
    deleted: bool = False


@dataclass
class OffsetsState:
    """The replayed ``__consumer_offsets`` partitions."""

    offsets: dict[tuple[str, str, int], Commit] = field(default_factory=dict)
    pending: dict[int, dict[tuple[str, str, int], Commit]] = field(default_factory=dict)
    groups: dict[str, Group] = field(default_factory=dict)
    problems: list[dict[str, Any]] = field(default_factory=list)
    records: int = 0


def _group(state: OffsetsState, gid: str) -> Group:
    g = state.groups.get(gid)
    if g is None:
        g = state.groups[gid] = Group(gid)
    return g


def _apply_group_record(state: OffsetsState, kind: str, key: dict[str, Any], value: dict[str, Any] | None) -> None:
    data = key["data"]
    gid = data.get("group") or data.get("groupId")
    if gid is None:
        return
    if kind == "group_metadata":
        g = _group(state, gid)
        if value is None:
            g.deleted = True
            return
        v = value["data"]
        g.deleted, g.protocol, g.generation = False, "classic", v["generation"]
        g.protocol_type, g.assignor, g.leader = v["protocolType"], v["protocol"], v["leader"]
        g.members = {m["memberId"] for m in v["members"]}
    elif kind == "consumer_group_metadata":
        g = _group(state, gid)
        g.protocol = "consumer"
        if value is None:
            g.deleted = True
        else:
            g.deleted, g.generation = False, value["data"]["epoch"]
    elif kind == "consumer_group_member_metadata":
        g = _group(state, gid)
        g.protocol = "consumer"
        if value is None:
            g.members.discard(data["memberId"])
        else:
            g.members.add(data["memberId"])
            g.assignor = value["data"].get("serverAssignor") or g.assignor


def replay_offsets(parts: list[PartitionData], decode: DecodeFn) -> OffsetsState:
    """Replay ``__consumer_offsets`` partitions (read deep) into committed offsets and groups."""
    state = OffsetsState()
    for part in parts:
        for seg in part.segments:
            for batch in seg.entries:
                if not isinstance(batch, RecordBatch) or batch.records is None:
                    continue
                if batch.is_control:
                    for r in batch.records:
                        if r.control is None or r.control.type not in (COMMIT, ABORT):
                            continue
                        items = state.pending.pop(batch.producer_id, {})
                        for k, c in items.items() if r.control.type == COMMIT else ():
                            existing = state.offsets.get(k)
                            if existing is None or c.record_offset > existing.record_offset:
                                state.offsets[k] = c
                    continue
                for r in batch.records:
                    state.records += 1
                    d = decode(r.key, r.value)
                    if d.defects or not isinstance(d.key, dict) or d.kind is None:
                        state.problems.append({"partition": part.directory, "offset": r.offset, "position": r.position,
                                               "reason": "; ".join(d.defects) or "undecodable key"})
                        continue
                    if d.kind != "offset_commit":
                        _apply_group_record(state, d.kind, d.key, d.value)
                        continue
                    k = d.key["data"]
                    tp = (k["group"], k["topic"], k["partition"])
                    commit = None
                    if d.value is not None:
                        v = d.value["data"]
                        epoch = v.get("leaderEpoch", -1)
                        expire = v.get("expireTimestamp", -1)
                        commit = Commit(k["group"], k["topic"], k["partition"], v["offset"],
                                        None if epoch == -1 else epoch, v["metadata"], v["commitTimestamp"],
                                        None if expire == -1 else expire, r.offset, part.directory,
                                        batch.producer_id != NO_PRODUCER_ID)
                    if commit is None:
                        state.offsets.pop(tp, None)
                        for items in state.pending.values():
                            items.pop(tp, None)
                    elif batch.producer_id != NO_PRODUCER_ID:
                        state.pending.setdefault(batch.producer_id, {})[tp] = commit
                    else:
                        state.offsets[tp] = commit
    return state


@dataclass
class PartitionEnds:
    """What the data partition found in the log dirs says about a committed offset's range."""

    directory: str
    log_start_offset: int
    log_end_offset: int
    high_watermark: int | None
    last_stable_offset: int | None


def offset_rows(state: OffsetsState, ends: dict[tuple[str, int], PartitionEnds]) -> list[dict[str, Any]]:
    """One row per committed offset: the offset, the partition's range and lag, and a ``problem`` when the offset
    is beyond the log end (records the consumers had that the log no longer has) or below the log start."""
    rows = []
    for (gid, topic, partition), c in sorted(state.offsets.items()):
        end = ends.get((topic, partition))
        row: dict[str, Any] = {
            "group": gid, "topic": topic, "partition": partition, "committed_offset": c.offset,
            "leader_epoch": c.leader_epoch, "metadata": c.metadata, "commit_timestamp": c.commit_timestamp,
            "expire_timestamp": c.expire_timestamp, "transactional": c.transactional,
            "record_offset": c.record_offset, "coordinator_partition": c.coordinator_partition,
            "directory": None, "log_start_offset": None, "log_end_offset": None, "high_watermark": None,
            "last_stable_offset": None, "lag": None, "problem": None, "message": None,
        }
        if end is not None:
            latest = end.high_watermark if end.high_watermark is not None else end.log_end_offset
            row.update(directory=end.directory, log_start_offset=end.log_start_offset,
                       log_end_offset=end.log_end_offset, high_watermark=end.high_watermark,
                       last_stable_offset=end.last_stable_offset, lag=latest - c.offset)
            if c.offset > end.log_end_offset:
                row["problem"] = "beyond-log-end"
                row["message"] = (f"committed offset {c.offset} is beyond the log end {end.log_end_offset}: the log "
                                  f"lost {c.offset - end.log_end_offset} offsets the consumers had read (truncation, "
                                  "unclean election); they will get OFFSET_OUT_OF_RANGE and reset")
            elif c.offset < end.log_start_offset:
                row["problem"] = "below-log-start"
                row["message"] = (f"committed offset {c.offset} is below the log start {end.log_start_offset}: "
                                  f"{end.log_start_offset - c.offset} offsets were deleted before the group read "
                                  "them; the consumers will reset by auto.offset.reset")
        rows.append(row)
    return rows


def group_rows(state: OffsetsState, offsets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per group: its protocol, generation or epoch, members, and totals over its committed offsets."""
    names = sorted(set(state.groups) | {r["group"] for r in offsets})
    out = []
    for gid in names:
        g = state.groups.get(gid)
        mine = [r for r in offsets if r["group"] == gid]
        lags = [r["lag"] for r in mine if r["lag"] is not None]
        out.append({
            "group": gid, "protocol": None if g is None else g.protocol,
            "generation": None if g is None else g.generation,
            "protocol_type": None if g is None else g.protocol_type, "assignor": None if g is None else g.assignor,
            "leader": None if g is None else g.leader, "members": [] if g is None else sorted(g.members),
            "deleted": False if g is None else g.deleted, "committed_partitions": len(mine),
            "total_lag": sum(lags) if lags else None,
            "problems": sum(1 for r in mine if r["problem"]),
            "pending_transactional_offsets": sum(
                1 for items in state.pending.values() for (pg, _, _) in items if pg == gid),
        })
    return out
