"""Groups from ``__consumer_offsets``: committed offsets per partition, the four group types' metadata, members
and assignments, share partitions' state from ``__share_group_state``, and the lag and range checks against the
partitions found in the same log dirs.

Models the group coordinator's load of its partitions (group-coordinator ``GroupMetadataManager`` and
``OffsetMetadataManager.replay``): records are replayed in offset order. An offset commit of a batch without a
producer id replaces the previous one for its group and partition; one with a producer id (TxnOffsetCommit) stays
pending for that producer until its COMMIT marker applies it, unless a commit written later is already there
(``replayEndTransactionMarker``), or its ABORT marker drops it. A tombstone deletes the committed offset and the
pending ones for that partition. A ``GroupMetadata`` or ``ConsumerGroupMetadata`` tombstone deletes the group.
Lag is measured as ``kafka-consumer-groups.sh --describe`` does: against the partition's high watermark (what
``ListOffsets`` latest returns to a read_uncommitted admin), or the log end offset when no checkpoint holds one.

Group records are told apart by their key message (Kafka's name): classic (``GroupMetadata``, members with their
consumer-protocol subscription and assignment), consumer (KIP-848 ``ConsumerGroup*``), share (KIP-932
``ShareGroup*``) and streams (KIP-1071 ``StreamsGroup*``) groups, each with its group epoch, members (member
metadata), target and current assignments, replayed as ``GroupMetadataManager.replay`` does: a value replaces,
a tombstone deletes. Share partitions' state is replayed as share-coordinator ``ShareCoordinatorShard.replay``
does: a ``ShareSnapshot`` replaces the state, a ``ShareUpdate`` overlays its state batches on it (newer offsets
win, the start offset moves unless it is -1), a tombstone deletes it.
"""

from __future__ import annotations

import base64
import contextlib
from dataclasses import dataclass, field
from typing import Any

from kafkatool.errors import DecodeError
from kafkatool.model import NO_PRODUCER_ID, PartitionData, Record, RecordBatch
from kafkatool.schema import group_coordinator as gc
from kafkatool.schema.share_group_state import DELIVERY_STATES
from kafkatool.schema.topic_records import DecodedRecord, DecodeFn

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
class Member:
    """One member as its group's records last described it: its metadata, its current assignment (partitions, or
    a streams member's tasks) and the target assignment the coordinator computed for it."""

    member_id: str
    has_metadata: bool = False
    instance_id: str | None = None
    client_id: str | None = None
    client_host: str | None = None
    rack_id: str | None = None
    subscribed_topics: list[str] = field(default_factory=list)
    subscribed_regex: str | None = None
    server_assignor: str | None = None
    rebalance_timeout_ms: int | None = None
    session_timeout_ms: int | None = None
    member_epoch: int | None = None
    previous_member_epoch: int | None = None
    state: int | None = None
    assigned: list[dict[str, Any]] = field(default_factory=list)
    pending_revocation: list[dict[str, Any]] = field(default_factory=list)
    target: list[dict[str, Any]] | None = None
    tasks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    target_tasks: dict[str, list[dict[str, Any]]] | None = None
    process_id: str | None = None
    topology_epoch: int | None = None


@dataclass
class Group:
    """A group's metadata as last written: classic (``GroupMetadataValue``), consumer (KIP-848), share (KIP-932)
    or streams (KIP-1071) records."""

    group_id: str
    protocol: str = "classic"
    generation: int | None = None
    protocol_type: str | None = None
    assignor: str | None = None
    leader: str | None = None
    members: set[str] = field(default_factory=set)
    deleted: bool = False
    member_details: dict[str, Member] = field(default_factory=dict)
    assignment_epoch: int | None = None
    topology_epoch: int | None = None
    topic_names: dict[str, str] = field(default_factory=dict)
    subtopologies: list[str] = field(default_factory=list)


@dataclass
class SharePartitionState:
    """A share partition's state as the share coordinator holds it (``ShareGroupOffset``)."""

    group: str
    topic_id: str
    partition: int
    snapshot_epoch: int
    state_epoch: int
    leader_epoch: int
    start_offset: int
    delivery_complete_count: int
    create_timestamp: int | None
    write_timestamp: int | None
    batches: list[dict[str, Any]]
    updates_since_snapshot: int
    record_offset: int
    coordinator_partition: str


@dataclass
class OffsetsState:
    """The replayed ``__consumer_offsets`` partitions."""

    offsets: dict[tuple[str, str, int], Commit] = field(default_factory=dict)
    pending: dict[int, dict[tuple[str, str, int], Commit]] = field(default_factory=dict)
    groups: dict[str, Group] = field(default_factory=dict)
    problems: list[dict[str, Any]] = field(default_factory=list)
    records: int = 0
    share_state: dict[tuple[str, str, int], SharePartitionState] = field(default_factory=dict)
    share_records: int = 0


def _group(state: OffsetsState, gid: str) -> Group:
    g = state.groups.get(gid)
    if g is None:
        g = state.groups[gid] = Group(gid)
    return g


#: Key message name prefix -> group type.
_GROUP_TYPES = (("ConsumerGroup", "consumer"), ("ShareGroup", "share"), ("StreamsGroup", "streams"))


def _topic_partitions(items: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """``[{TopicId, Partitions}]`` as ``[{"topic_id", "partitions"}]``."""
    return [{"topic_id": tp.get("topicId"), "partitions": list(tp.get("partitions") or [])} for tp in items or ()]


def _tasks(v: dict[str, Any], *names: str) -> dict[str, list[dict[str, Any]]]:
    """A streams assignment's task lists (``[{SubtopologyId, Partitions}]``) by kind."""
    out = {}
    for name in names:
        out[name] = [{"subtopology": t.get("subtopologyId"), "partitions": list(t.get("partitions") or [])}
                     for t in v.get(name) or ()]
    return out


def _classic_members(g: Group, v: dict[str, Any]) -> None:
    """A classic group's members; a consumer-protocol member's subscription and assignment decoded (bytes that do
    not decode are left out, as the broker would fail them)."""
    g.member_details = {}
    for m in v.get("members") or ():
        info = Member(m["memberId"], True, m.get("groupInstanceId"), m.get("clientId"), m.get("clientHost"),
                      rebalance_timeout_ms=m.get("rebalanceTimeout"), session_timeout_ms=m.get("sessionTimeout"))
        if v.get("protocolType") == "consumer":
            with contextlib.suppress(DecodeError, ValueError, TypeError):
                sub = gc.decode_consumer_protocol(gc.CONSUMER_PROTOCOL_SUBSCRIPTION,
                                                  base64.b64decode(m.get("subscription") or ""))
                info.subscribed_topics = list(sub.get("topics") or [])
                info.rack_id = sub.get("rackId")
            with contextlib.suppress(DecodeError, ValueError, TypeError):
                assignment = gc.decode_consumer_protocol(gc.CONSUMER_PROTOCOL_ASSIGNMENT,
                                                         base64.b64decode(m.get("assignment") or ""))
                info.assigned = [{"topic": tp.get("topic"), "partitions": list(tp.get("partitions") or [])}
                                 for tp in assignment.get("assignedPartitions") or ()]
        g.member_details[info.member_id] = info


def _member(g: Group, member_id: str) -> Member:
    m = g.member_details.get(member_id)
    if m is None:
        m = g.member_details[member_id] = Member(member_id)
    return m


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
        _classic_members(g, v)
        return
    name = str(key.get("type") or "")
    gtype = next((t for prefix, t in _GROUP_TYPES if name.startswith(prefix)), None)
    if gtype is None:
        return
    record = name.removeprefix({"consumer": "ConsumerGroup", "share": "ShareGroup",
                                "streams": "StreamsGroup"}[gtype]).removesuffix("Key")
    g = _group(state, gid)
    g.protocol = gtype
    v = None if value is None else value["data"]
    mid = data.get("memberId")
    if record == "Metadata":
        if v is None:
            g.deleted = True
        else:
            g.deleted, g.generation = False, v["epoch"]
    elif record == "MemberMetadata" and mid is not None:
        if v is None:
            g.members.discard(mid)
            g.member_details.pop(mid, None)
            return
        g.members.add(mid)
        if gtype == "consumer":
            g.assignor = v.get("serverAssignor") or g.assignor
        m = _member(g, mid)
        m.has_metadata = True
        m.instance_id, m.rack_id = v.get("instanceId"), v.get("rackId")
        m.client_id, m.client_host = v.get("clientId"), v.get("clientHost")
        m.subscribed_topics = list(v.get("subscribedTopicNames") or [])
        m.subscribed_regex, m.server_assignor = v.get("subscribedTopicRegex"), v.get("serverAssignor")
        m.rebalance_timeout_ms = v.get("rebalanceTimeoutMs")
        m.process_id, m.topology_epoch = v.get("processId"), v.get("topologyEpoch")
    elif record == "CurrentMemberAssignment" and mid is not None:
        if v is None:
            m = g.member_details.get(mid)
            if m is not None:
                m.member_epoch = m.previous_member_epoch = m.state = None
                m.assigned, m.pending_revocation, m.tasks = [], [], {}
            return
        m = _member(g, mid)
        m.member_epoch, m.previous_member_epoch, m.state = v.get("memberEpoch"), v.get("previousMemberEpoch"), \
            v.get("state")
        if gtype == "streams":
            m.tasks = _tasks(v, "activeTasks", "standbyTasks", "warmupTasks", "activeTasksPendingRevocation",
                             "standbyTasksPendingRevocation", "warmupTasksPendingRevocation")
        else:
            m.assigned = _topic_partitions(v.get("assignedPartitions"))
            m.pending_revocation = _topic_partitions(v.get("partitionsPendingRevocation"))
    elif record == "TargetAssignmentMember" and mid is not None:
        if v is None:
            m = g.member_details.get(mid)
            if m is not None:
                m.target, m.target_tasks = None, None
            return
        m = _member(g, mid)
        if gtype == "streams":
            m.target_tasks = _tasks(v, "activeTasks", "standbyTasks", "warmupTasks")
        else:
            m.target = _topic_partitions(v.get("topicPartitions"))
    elif record == "TargetAssignmentMetadata":
        g.assignment_epoch = None if v is None else v.get("assignmentEpoch")
    elif record in ("PartitionMetadata", "StatePartitionMetadata"):
        if v is not None:
            for t in (v.get("topics") or []) + (v.get("initializedTopics") or []) + (v.get("deletingTopics") or []):
                if t.get("topicId") and t.get("topicName"):
                    g.topic_names[t["topicId"]] = t["topicName"]
    elif record == "Topology":
        g.topology_epoch = None if v is None else v.get("epoch")
        g.subtopologies = [] if v is None else [s.get("subtopologyId") for s in v.get("subtopologies") or ()]


def _overlay(batches: list[dict[str, Any]], newer: list[dict[str, Any]], start: int) -> list[dict[str, Any]]:
    """State batches with ``newer`` written over them (an offset in a newer batch takes its state), those below
    ``start`` dropped and a batch straddling it cut, sorted by offset, contiguous batches of the same state and
    delivery count joined (share-coordinator ``PersisterStateBatchCombiner``)."""
    out: list[dict[str, Any]] = []
    for b in batches:
        pieces = [(b["first_offset"], b["last_offset"])]
        for n in newer:
            cut = []
            for first, last in pieces:
                if n["last_offset"] < first or n["first_offset"] > last:
                    cut.append((first, last))
                    continue
                if first < n["first_offset"]:
                    cut.append((first, n["first_offset"] - 1))
                if last > n["last_offset"]:
                    cut.append((n["last_offset"] + 1, last))
            pieces = cut
        out += [{**b, "first_offset": f, "last_offset": e} for f, e in pieces]
    out += [dict(n) for n in newer]
    if start >= 0:
        out = [{**b, "first_offset": max(b["first_offset"], start)} for b in out if b["last_offset"] >= start]
    merged: list[dict[str, Any]] = []
    for b in sorted(out, key=lambda b: b["first_offset"]):  # contiguous batches alike become one
        last = merged[-1] if merged else None
        if (last is not None and last["last_offset"] + 1 == b["first_offset"]
                and (last["delivery_state"], last["delivery_count"]) == (b["delivery_state"], b["delivery_count"])):
            last["last_offset"] = b["last_offset"]
        else:
            merged.append(dict(b))
    return merged


def _state_batches(v: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"first_offset": b["firstOffset"], "last_offset": b["lastOffset"],
             "delivery_state": DELIVERY_STATES.get(b["deliveryState"], str(b["deliveryState"])),
             "delivery_count": b["deliveryCount"]} for b in v.get("stateBatches") or ()]


def _problem(part: PartitionData, r: Record, d: DecodedRecord) -> dict[str, Any]:
    """A record the decoder could not read, as listed in the groups output."""
    return {"partition": part.directory, "offset": r.offset, "position": r.position,
            "reason": "; ".join(d.defects) or "undecodable key"}


def replay_share_state(parts: list[PartitionData], decode: DecodeFn, state: OffsetsState) -> None:
    """Replay ``__share_group_state`` partitions (read deep) into ``state.share_state``; undecodable records
    become problems."""
    for part in parts:
        for seg in part.segments:
            for batch in seg.entries:
                if not isinstance(batch, RecordBatch) or batch.records is None or batch.is_control:
                    continue
                for r in batch.records:
                    state.share_records += 1
                    d = decode(r.key, r.value)
                    if d.defects or not isinstance(d.key, dict) or d.kind is None:
                        state.problems.append(_problem(part, r, d))
                        continue
                    k = d.key["data"]
                    sp = (k["groupId"], k["topicId"], k["partition"])
                    if d.value is None:
                        state.share_state.pop(sp, None)
                        continue
                    v = d.value["data"]
                    old = state.share_state.get(sp)
                    if d.kind == "share_snapshot" or old is None:
                        state.share_state[sp] = SharePartitionState(
                            sp[0], sp[1], sp[2], v["snapshotEpoch"], v.get("stateEpoch", 0), v["leaderEpoch"],
                            v["startOffset"], v.get("deliveryCompleteCount", -1), v.get("createTimestamp"),
                            v.get("writeTimestamp"), _overlay([], _state_batches(v), v["startOffset"]), 0, r.offset,
                            part.directory)
                        continue
                    start = old.start_offset if v["startOffset"] == -1 else v["startOffset"]
                    old.batches = _overlay(old.batches, _state_batches(v), start)
                    old.start_offset = start
                    old.leader_epoch = old.leader_epoch if v["leaderEpoch"] == -1 else v["leaderEpoch"]
                    old.snapshot_epoch = v["snapshotEpoch"]
                    if v.get("deliveryCompleteCount", -1) != -1:
                        old.delivery_complete_count = v["deliveryCompleteCount"]
                    old.updates_since_snapshot += 1
                    old.record_offset = r.offset


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
                        state.problems.append(_problem(part, r, d))
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
            _range_check(row, c.offset, end, "committed offset")
        rows.append(row)
    return rows


def _range_check(row: dict[str, Any], offset: int, end: PartitionEnds, what: str) -> None:
    """Fill the partition's range and lag into ``row`` and flag ``offset`` beyond the log end or below its start."""
    latest = end.high_watermark if end.high_watermark is not None else end.log_end_offset
    row.update(directory=end.directory, log_start_offset=end.log_start_offset, log_end_offset=end.log_end_offset,
               high_watermark=end.high_watermark, last_stable_offset=end.last_stable_offset, lag=latest - offset)
    if offset > end.log_end_offset:
        row["problem"] = "beyond-log-end"
        row["message"] = (f"{what} {offset} is beyond the log end {end.log_end_offset}: the log lost "
                          f"{offset - end.log_end_offset} offsets the consumers had read (truncation, unclean "
                          "election); they will get OFFSET_OUT_OF_RANGE and reset")
    elif offset < end.log_start_offset:
        row["problem"] = "below-log-start"
        row["message"] = (f"{what} {offset} is below the log start {end.log_start_offset}: "
                          f"{end.log_start_offset - offset} offsets were deleted before the group read them; the "
                          "consumers will reset by auto.offset.reset")


def topic_names(state: OffsetsState, known: dict[str, str]) -> dict[str, str]:
    """Topic id -> name: the partitions' ``partition.metadata`` files (``known``), then the groups' own records."""
    names = dict(known)
    for g in state.groups.values():
        for tid, name in g.topic_names.items():
            names.setdefault(tid, name)
    return names


def share_offset_rows(state: OffsetsState, ends: dict[tuple[str, int], PartitionEnds],
                      names: dict[str, str]) -> list[dict[str, Any]]:
    """One row per share partition with state (a share group's offset is its share-partition start offset, as
    ``kafka-share-groups.sh --describe --offsets`` shows it): the offset rows' columns plus ``start_offset`` and the
    share state's epochs; the lag leaves out the offsets already delivered (``DeliveryCompleteCount``, KIP-1226, or
    the acknowledged and archived offsets of the state batches where the record has no count)."""
    rows = []
    for (gid, tid, partition), sp in sorted(state.share_state.items()):
        topic = names.get(tid)
        row: dict[str, Any] = {
            "group": gid, "topic": topic if topic is not None else tid, "partition": partition,
            "committed_offset": sp.start_offset, "leader_epoch": sp.leader_epoch, "metadata": None,
            "commit_timestamp": sp.write_timestamp, "expire_timestamp": None, "transactional": False,
            "record_offset": sp.record_offset, "coordinator_partition": sp.coordinator_partition,
            "directory": None, "log_start_offset": None, "log_end_offset": None, "high_watermark": None,
            "last_stable_offset": None, "lag": None, "problem": None, "message": None,
            "start_offset": sp.start_offset, "topic_id": tid, "state_epoch": sp.state_epoch,
            "snapshot_epoch": sp.snapshot_epoch,
        }
        end = ends.get((topic, partition)) if topic is not None else None
        if end is not None and sp.start_offset >= 0:
            _range_check(row, sp.start_offset, end, "share-partition start offset")
            # KIP-1226: offsets at or past the start offset whose delivery completed are no lag
            done = sp.delivery_complete_count if sp.delivery_complete_count >= 0 else sum(
                b["last_offset"] - b["first_offset"] + 1 for b in sp.batches
                if b["delivery_state"] in ("Acknowledged", "Archived"))
            row["lag"] = max(0, row["lag"] - done)
        rows.append(row)
    return rows


def share_state_rows(state: OffsetsState, names: dict[str, str]) -> list[dict[str, Any]]:
    """One row per share partition: its whole state (start offset, epochs, the in-flight state batches)."""
    rows = []
    for (gid, tid, partition), sp in sorted(state.share_state.items()):
        counts: dict[str, int] = {}
        for b in sp.batches:
            counts[b["delivery_state"]] = counts.get(b["delivery_state"], 0) + b["last_offset"] - b["first_offset"] + 1
        rows.append({
            "group": gid, "topic": names.get(tid), "topic_id": tid, "partition": partition,
            "start_offset": sp.start_offset, "state_epoch": sp.state_epoch, "leader_epoch": sp.leader_epoch,
            "snapshot_epoch": sp.snapshot_epoch, "delivery_complete_count": sp.delivery_complete_count,
            "create_timestamp": sp.create_timestamp, "write_timestamp": sp.write_timestamp,
            "updates_since_snapshot": sp.updates_since_snapshot, "in_flight_offsets": counts,
            "batches": sp.batches, "record_offset": sp.record_offset, "coordinator_partition": sp.coordinator_partition,
        })
    return rows


def _named(items: list[dict[str, Any]] | None, names: dict[str, str]) -> list[dict[str, Any]] | None:
    if items is None:
        return None
    return [{"topic": i.get("topic") or names.get(i.get("topic_id") or ""), "topic_id": i.get("topic_id"),
             "partitions": sorted(i["partitions"])} for i in items]


def member_rows(state: OffsetsState, names: dict[str, str]) -> list[dict[str, Any]]:
    """One row per member of a live group (member metadata present, or a classic group's member): who it is, what
    it subscribes to, its current assignment (partitions, or a streams member's tasks) and its target."""
    rows = []
    for gid in sorted(state.groups):
        g = state.groups[gid]
        if g.deleted:
            continue
        for mid in sorted(g.member_details):
            m = g.member_details[mid]
            if not m.has_metadata:
                continue
            rows.append({
                "group": gid, "protocol": g.protocol, "member_id": mid, "instance_id": m.instance_id,
                "client_id": m.client_id, "client_host": m.client_host, "rack_id": m.rack_id,
                "member_epoch": m.member_epoch, "previous_member_epoch": m.previous_member_epoch, "state": m.state,
                "subscribed_topics": m.subscribed_topics, "subscribed_regex": m.subscribed_regex,
                "server_assignor": m.server_assignor, "rebalance_timeout_ms": m.rebalance_timeout_ms,
                "session_timeout_ms": m.session_timeout_ms, "assigned": _named(m.assigned, names),
                "pending_revocation": _named(m.pending_revocation, names), "target": _named(m.target, names),
                "tasks": m.tasks or None, "target_tasks": m.target_tasks, "process_id": m.process_id,
                "topology_epoch": m.topology_epoch,
            })
    return rows


def group_rows(state: OffsetsState, offsets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per group: its protocol (classic, consumer, share or streams), generation or epoch, members, and
    totals over its committed offsets (a share group's: its share partitions' start offsets)."""
    names = sorted(set(state.groups) | {r["group"] for r in offsets})
    out = []
    for gid in names:
        g = state.groups.get(gid)
        mine = [r for r in offsets if r["group"] == gid]
        lags = [r["lag"] for r in mine if r["lag"] is not None]
        share_only = g is None and any("start_offset" in r for r in mine)  # only __share_group_state knows it
        out.append({
            "group": gid, "protocol": "share" if share_only else None if g is None else g.protocol,
            "generation": None if g is None else g.generation,
            "protocol_type": None if g is None else g.protocol_type, "assignor": None if g is None else g.assignor,
            "leader": None if g is None else g.leader, "members": [] if g is None else sorted(g.members),
            "deleted": False if g is None else g.deleted, "committed_partitions": len(mine),
            "total_lag": sum(lags) if lags else None,
            "problems": sum(1 for r in mine if r["problem"]),
            "pending_transactional_offsets": sum(
                1 for items in state.pending.values() for (pg, _, _) in items if pg == gid),
            "assignment_epoch": None if g is None else g.assignment_epoch,
            "topology_epoch": None if g is None else g.topology_epoch,
        })
    return out
