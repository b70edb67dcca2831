"""Segments of the 4.x internal topics written here, byte by byte, independently of kafkatool's readers:
``__share_group_state`` (ShareCoordinatorRecordSerde, 4.1+ layouts) and ``__remote_log_metadata``
(RemoteLogMetadataSerde), each record laid out as Kafka's generated ``write`` lays it out, wrapped in batches by
kafkatool's own ``schema.record_batch.build_records_batch``. The live test dumps these segments with each Kafka
version's DumpLogSegments (``tests/kafka/test_decoders_4x.py``); the saved text is checked without Kafka by
``tests/test_decoders_4x.py``.
"""

from __future__ import annotations

import base64
from pathlib import Path

from kafkatool.model import Record
from kafkatool.schema.record_batch import build_records_batch

BASE_TS = 1_764_000_000_000
TOPIC_ID = bytes(range(1, 17))
SEGMENT_IDS = [bytes([0x40 + i] * 8 + [i] * 8) for i in range(6)]


def uuid_text(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def i8(n: int) -> bytes:
    return n.to_bytes(1, "big", signed=True)


def i16(n: int) -> bytes:
    return n.to_bytes(2, "big", signed=True)


def i32(n: int) -> bytes:
    return n.to_bytes(4, "big", signed=True)


def i64(n: int) -> bytes:
    return n.to_bytes(8, "big", signed=True)


def uvarint(n: int) -> bytes:
    """An unsigned varint written here, not by the schema, so the hand-made inputs stay independent of the reader."""
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def compact_string(text: str) -> bytes:
    raw = text.encode()
    return uvarint(len(raw) + 1) + raw


def compact_bytes(raw: bytes | None) -> bytes:
    return uvarint(0) if raw is None else uvarint(len(raw) + 1) + raw


def old_string(text: str) -> bytes:
    raw = text.encode()
    return i16(len(raw)) + raw


def tags(fields: dict[int, bytes]) -> bytes:
    out = uvarint(len(fields))
    for tag in sorted(fields):
        out += uvarint(tag) + uvarint(len(fields[tag])) + fields[tag]
    return out


# --- __share_group_state -----------------------------------------------------------------------------------

def share_key(record_type: int, group: str, topic_id: bytes, partition: int) -> bytes:
    """ShareSnapshotKey (0) / ShareUpdateKey (1): not flexible."""
    return i16(record_type) + old_string(group) + topic_id + i32(partition)


def _batches(batches: list[tuple[int, int, int, int]]) -> bytes:
    out = uvarint(len(batches) + 1)
    for first, last, state, count in batches:
        out += i64(first) + i64(last) + i8(state) + i16(count) + uvarint(0)
    return out


def share_snapshot_value(snapshot_epoch: int, state_epoch: int, leader_epoch: int, start: int, created: int,
                         written: int, batches: list[tuple[int, int, int, int]],
                         delivery_complete: int | None = None) -> bytes:
    """ShareSnapshotValue v0 (4.1+): tagged DeliveryCompleteCount (tag 0) only when given."""
    tagged = {} if delivery_complete is None else {0: i32(delivery_complete)}
    return (i16(0) + i32(snapshot_epoch) + i32(state_epoch) + i32(leader_epoch) + i64(start) + i64(created)
            + i64(written) + _batches(batches) + tags(tagged))


def share_update_value(snapshot_epoch: int, leader_epoch: int, start: int, batches: list[tuple[int, int, int, int]],
                       delivery_complete: int | None = None) -> bytes:
    """ShareUpdateValue v0 (4.1+)."""
    tagged = {} if delivery_complete is None else {0: i32(delivery_complete)}
    return i16(0) + i32(snapshot_epoch) + i32(leader_epoch) + i64(start) + _batches(batches) + tags(tagged)


def share_records() -> list[tuple[bytes | None, bytes | None]]:
    """Snapshots and updates of share partitions of two groups, tombstones, an unknown record type."""
    return [
        (share_key(0, "sg-orders", TOPIC_ID, 0),
         share_snapshot_value(0, 1, 3, 0, BASE_TS, BASE_TS, [])),
        (share_key(1, "sg-orders", TOPIC_ID, 0),
         share_update_value(0, 3, 10, [(10, 14, 2, 1), (15, 15, 4, 5), (16, 19, 0, 2)])),
        (share_key(1, "sg-orders", TOPIC_ID, 0),
         share_update_value(0, 3, -1, [(20, 29, 2, 1)], delivery_complete=12)),
        (share_key(0, "sg-orders", TOPIC_ID, 0),
         share_snapshot_value(1, 1, 3, 20, BASE_TS, BASE_TS + 5000, [(20, 29, 2, 1), (30, 31, 0, 3)],
                              delivery_complete=10)),
        (share_key(0, "sg-audit", TOPIC_ID, 2),
         share_snapshot_value(0, 0, 0, -1, BASE_TS + 100, BASE_TS + 100, [])),
        (share_key(1, "sg-audit", TOPIC_ID, 2), None),
        (share_key(0, "sg-gone", TOPIC_ID, 1), None),
        (i16(5) + old_string("sg-x"), i16(0)),  # a record type the share coordinator does not know
    ]


def share_preview_snapshot_value(snapshot_epoch: int, state_epoch: int, leader_epoch: int, start: int,
                                 batches: list[tuple[int, int, int, int]]) -> bytes:
    """ShareSnapshotValue v0 as Kafka 4.0 (the KIP-932 preview) laid it out: SnapshotEpoch uint16, no timestamps."""
    return (i16(0) + snapshot_epoch.to_bytes(2, "big") + i32(state_epoch) + i32(leader_epoch) + i64(start)
            + _batches(batches) + tags({}))


def share_preview_update_value(snapshot_epoch: int, leader_epoch: int, start: int,
                               batches: list[tuple[int, int, int, int]]) -> bytes:
    """ShareUpdateValue v0 as Kafka 4.0 laid it out."""
    return i16(0) + snapshot_epoch.to_bytes(2, "big") + i32(leader_epoch) + i64(start) + _batches(batches) + tags({})


def share_preview_records() -> list[tuple[bytes | None, bytes | None]]:
    """The same share partitions' life in 4.0's preview layouts."""
    return [
        (share_key(0, "sg-orders", TOPIC_ID, 0), share_preview_snapshot_value(0, 1, 3, 0, [])),
        (share_key(1, "sg-orders", TOPIC_ID, 0),
         share_preview_update_value(0, 3, 10, [(10, 14, 2, 1), (15, 15, 4, 5), (16, 19, 0, 2)])),
        (share_key(0, "sg-orders", TOPIC_ID, 0),
         share_preview_snapshot_value(1, 1, 3, 20, [(20, 29, 2, 1), (30, 31, 0, 3)])),
        (share_key(1, "sg-audit", TOPIC_ID, 2), None),
    ]


# --- __remote_log_metadata ---------------------------------------------------------------------------------

def frame(api_key: int, version: int = 0) -> bytes:
    return uvarint(1) + uvarint(api_key) + uvarint(version)


def _tip(topic: str, topic_id: bytes, partition: int) -> bytes:
    return compact_string(topic) + topic_id + i32(partition) + uvarint(0)


def _epochs(epochs: list[tuple[int, int]]) -> bytes:
    out = uvarint(len(epochs) + 1)
    for epoch, offset in epochs:
        out += i32(epoch) + i64(offset) + uvarint(0)
    return out


def segment_metadata(seg: bytes, start: int, end: int, epochs: list[tuple[int, int]], state: int, *,
                     custom: bytes | None = None, txn_index_empty: bool | None = None, broker: int = 1,
                     event_ts: int = BASE_TS, max_ts: int = BASE_TS - 1, size: int = 4096) -> bytes:
    """RemoteLogSegmentMetadataRecord v0 (api key 0): tagged TxnIndexEmpty (tag 0) only when given."""
    tagged = {} if txn_index_empty is None else {0: b"\x01" if txn_index_empty else b"\x00"}
    return (frame(0) + _tip("orders", TOPIC_ID, 0) + seg + uvarint(0) + i64(start) + i64(end) + i32(broker)
            + i64(max_ts) + i64(event_ts) + _epochs(epochs) + i32(size) + compact_bytes(custom) + i8(state)
            + tags(tagged))


def segment_update(seg: bytes, state: int, *, custom: bytes | None = None, broker: int = 1,
                   event_ts: int = BASE_TS) -> bytes:
    """RemoteLogSegmentMetadataUpdateRecord v0 (api key 1)."""
    return (frame(1) + _tip("orders", TOPIC_ID, 0) + seg + uvarint(0) + i32(broker) + i64(event_ts)
            + compact_bytes(custom) + i8(state) + tags({}))


def partition_delete(state: int, *, broker: int = 2, event_ts: int = BASE_TS) -> bytes:
    """RemotePartitionDeleteMetadataRecord v0 (api key 2)."""
    return frame(2) + _tip("orders", TOPIC_ID, 0) + i32(broker) + i64(event_ts) + i8(state) + tags({})


def segment_snapshot(seg: bytes, start: int, end: int, epochs: list[tuple[int, int]], state: int, *,
                     custom: bytes | None = None, txn_index_empty: bool | None = None) -> bytes:
    """RemoteLogSegmentMetadataSnapshotRecord v0 (api key 3)."""
    tagged = {} if txn_index_empty is None else {0: b"\x01" if txn_index_empty else b"\x00"}
    return (frame(3) + seg + i64(start) + i64(end) + i32(1) + i64(BASE_TS - 1) + i64(BASE_TS) + _epochs(epochs)
            + i32(512) + compact_bytes(custom) + i8(state) + tags(tagged))


def remote_records() -> list[tuple[bytes | None, bytes | None]]:
    """A segment's life (copy started, finished, delete started, finished), a second segment with custom metadata
    and several leader epochs, a snapshot record, a partition delete, and records Kafka refuses."""
    s0, s1, s2 = SEGMENT_IDS[:3]
    return [
        (None, segment_metadata(s0, 0, 99, [(0, 0)], 0)),
        (None, segment_update(s0, 1, event_ts=BASE_TS + 10)),
        (None, segment_metadata(s1, 100, 249, [(3, 100), (1, 0), (5, 180)], 0, custom=b"rsm-path",
                                txn_index_empty=True, broker=3)),
        (None, segment_update(s1, 1, custom=b"rsm-path-2", broker=3)),
        (None, segment_update(s0, 2, event_ts=BASE_TS + 20)),
        (None, segment_update(s0, 3, event_ts=BASE_TS + 30)),
        (None, segment_snapshot(s2, 250, 300, [(5, 250)], 1, txn_index_empty=False)),
        (None, partition_delete(0)),
        (None, partition_delete(2, broker=3)),
        (None, segment_metadata(s2, 50, 10, [(0, 0)], 0)),  # end before start
        (None, segment_metadata(s2, 0, 10, [], 0)),  # no leader epoch
        (None, segment_update(s2, 9)),  # unknown state
        (None, frame(7) + b"\x00"),  # unknown api key
        (None, partition_delete(1) + b"\x00\x00"),  # garbage after the message
        (None, frame(0) + b"\x05or"),  # cut
    ]


def segment(records: list[tuple[bytes | None, bytes | None]], *, per_batch: int = 3) -> bytes:
    """The records in batches of ``per_batch``, offsets from 0, as a ``.log`` file's bytes."""
    out = b""
    for start in range(0, len(records), per_batch):
        chunk = records[start:start + per_batch]
        recs = [Record(offset=start + i, timestamp=BASE_TS + start + i, key=k, value=v, offset_delta=i,
                       timestamp_delta=i) for i, (k, v) in enumerate(chunk)]
        out += build_records_batch(recs, base_offset=start, base_timestamp=BASE_TS + start, partition_leader_epoch=0)
    return out


CASES = {"share-group-state": ("share-group-state", "__share_group_state-0", share_records),
         "share-group-state-preview": ("share-group-state", "__share_group_state-0", share_preview_records),
         "remote-log-metadata": ("remote-log-metadata", "__remote_log_metadata-0", remote_records),
         "group-records-4x": ("group-coordinator", "__consumer_offsets-0",
                              lambda: group_records() + streams_records())}
"""Each case: its decoder, the partition directory its segment goes in and the records written."""


def write_segment(root: Path, case: str) -> Path:
    """The case's segment written under ``root/<partition>/00000000000000000000.log``; its path."""
    _, directory, records = CASES[case]
    path = root / directory / "00000000000000000000.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(segment(records()))
    return path


# --- __consumer_offsets: KIP-848 consumer and KIP-932 share group records (4.1+ layouts) -------------------------

def group_key(record_type: int, *parts: str) -> bytes:
    """A group coordinator key: the record type, then its strings (not flexible)."""
    return i16(record_type) + b"".join(old_string(p) for p in parts)


def nullable_compact(text: str | None) -> bytes:
    return uvarint(0) if text is None else compact_string(text)


def compact_strings(items: list[str]) -> bytes:
    return uvarint(len(items) + 1) + b"".join(compact_string(t) for t in items)


def topic_partitions(items: list[tuple[bytes, list[int]]]) -> bytes:
    """``[]TopicPartitions`` {TopicId, Partitions} with empty tagged fields."""
    out = uvarint(len(items) + 1)
    for tid, parts in items:
        out += tid + uvarint(len(parts) + 1) + b"".join(i32(p) for p in parts) + uvarint(0)
    return out


def epoch_value(epoch: int) -> bytes:
    """ConsumerGroupMetadataValue v0: Epoch, no tagged field."""
    return i16(0) + i32(epoch) + tags({})


def share_group_metadata_value(epoch: int) -> bytes:
    """ShareGroupMetadataValue v0 (4.1+): Epoch, MetadataHash."""
    return i16(0) + i32(epoch) + i64(0x5678) + tags({})


def consumer_member_value(client: str, host: str, topics: list[str], assignor: str | None) -> bytes:
    """ConsumerGroupMemberMetadataValue v0."""
    return (i16(0) + nullable_compact(None) + nullable_compact(None) + compact_string(client) + compact_string(host)
            + compact_strings(topics) + nullable_compact(None) + i32(45000) + nullable_compact(assignor) + tags({}))


def consumer_assignment_value(epoch: int, assigned: list[tuple[bytes, list[int]]],
                              pending: list[tuple[bytes, list[int]]] = ()) -> bytes:  # type: ignore[assignment]
    """ConsumerGroupCurrentMemberAssignmentValue v0."""
    return (i16(0) + i32(epoch) + i32(epoch - 1) + i8(0) + topic_partitions(assigned) + topic_partitions(list(pending))
            + tags({}))


def share_member_value(client: str, host: str, topics: list[str]) -> bytes:
    """ShareGroupMemberMetadataValue v0."""
    return i16(0) + nullable_compact(None) + compact_string(client) + compact_string(host) + compact_strings(topics) \
        + tags({})


def share_assignment_value(epoch: int, assigned: list[tuple[bytes, list[int]]]) -> bytes:
    """ShareGroupCurrentMemberAssignmentValue v0."""
    return i16(0) + i32(epoch) + i32(epoch - 1) + i8(0) + topic_partitions(assigned) + tags({})


def offset_commit(group: str, topic: str, partition: int, offset: int) -> tuple[bytes, bytes]:
    """OffsetCommitKey (type 1) and OffsetCommitValue v3 (not flexible)."""
    return (group_key(1, group, topic) + i32(partition),
            i16(3) + i64(offset) + i32(0) + old_string("") + i64(BASE_TS))


def group_records() -> list[tuple[bytes | None, bytes | None]]:
    """A consumer group (two members, offsets on orders-0 and orders-1) and a share group (one member, then a
    member that left), as the 4.x coordinator writes them."""
    return [
        (group_key(5, "cg-billing", "m-1"), consumer_member_value("billing-1", "/10.0.0.1", ["orders"], "uniform")),
        (group_key(5, "cg-billing", "m-2"), consumer_member_value("billing-2", "/10.0.0.2", ["orders"], "uniform")),
        (group_key(3, "cg-billing"), epoch_value(4)),
        (group_key(8, "cg-billing", "m-1"), consumer_assignment_value(4, [(TOPIC_ID, [0])])),
        (group_key(8, "cg-billing", "m-2"), consumer_assignment_value(4, [(TOPIC_ID, [1, 2])], [(TOPIC_ID, [0])])),
        offset_commit("cg-billing", "orders", 0, 7),
        offset_commit("cg-billing", "orders", 1, 3),
        (group_key(10, "sg-orders", "s-1"), share_member_value("share-1", "/10.0.0.3", ["orders"])),
        (group_key(10, "sg-orders", "s-2"), share_member_value("share-2", "/10.0.0.4", ["orders"])),
        (group_key(11, "sg-orders"), share_group_metadata_value(2)),
        (group_key(14, "sg-orders", "s-1"), share_assignment_value(2, [(TOPIC_ID, [0, 1, 2])])),
        (group_key(10, "sg-orders", "s-2"), None),
    ]


# --- __consumer_offsets: KIP-1071 streams group records (4.4 layouts) ---------------------------------------------

def task_ids(items: list[tuple[str, list[int]]]) -> bytes:
    """``[]TaskIds`` {SubtopologyId, Partitions} with empty tagged fields."""
    out = uvarint(len(items) + 1)
    for sub, parts in items:
        out += compact_string(sub) + uvarint(len(parts) + 1) + b"".join(i32(p) for p in parts) + uvarint(0)
    return out


def streams_metadata_value(epoch: int) -> bytes:
    """StreamsGroupMetadataValue v0: Epoch, MetadataHash, no tagged field."""
    return i16(0) + i32(epoch) + i64(0x1234) + tags({})


def streams_member_value(client: str, host: str, topology_epoch: int, process: str) -> bytes:
    """StreamsGroupMemberMetadataValue v0: no instance, rack or endpoint, no client tag."""
    return (i16(0) + nullable_compact(None) + nullable_compact(None) + compact_string(client) + compact_string(host)
            + i32(30000) + i32(topology_epoch) + compact_string(process) + b"\xff" + uvarint(1) + tags({}))


def streams_assignment_value(epoch: int, active: list[tuple[str, list[int]]],
                             standby: list[tuple[str, list[int]]]) -> bytes:
    """StreamsGroupCurrentMemberAssignmentValue v0: active and standby tasks, nothing warming up or revoked."""
    return (i16(0) + i32(epoch) + i32(epoch - 1) + i8(0) + task_ids(active) + task_ids(standby) + task_ids([])
            + task_ids([]) + task_ids([]) + task_ids([]) + tags({}))


def streams_topology_value(epoch: int, subtopologies: list[tuple[str, list[str]]]) -> bytes:
    """StreamsGroupTopologyValue v0: each subtopology's source topics, nothing else."""
    out = i16(0) + i32(epoch) + uvarint(len(subtopologies) + 1)
    for sub, sources in subtopologies:
        out += (compact_string(sub) + compact_strings(sources) + compact_strings([]) + uvarint(1) + compact_strings([])
                + uvarint(1) + uvarint(1) + uvarint(0))
    return out + tags({})


def streams_records() -> list[tuple[bytes | None, bytes | None]]:
    """A streams group: its topology (two subtopologies), one member with active and standby tasks, its epoch and
    a committed offset."""
    return [
        (group_key(23, "st-counts"), streams_topology_value(1, [("0", ["orders"]), ("1", ["counts-repartition"])])),
        (group_key(19, "st-counts", "t-1"), streams_member_value("counts-1", "/10.0.0.5", 1, "proc-a")),
        (group_key(17, "st-counts"), streams_metadata_value(3)),
        (group_key(22, "st-counts", "t-1"), streams_assignment_value(3, [("0", [0, 1]), ("1", [0])], [("0", [2])])),
        offset_commit("st-counts", "orders", 0, 5),
    ]
