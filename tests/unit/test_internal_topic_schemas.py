"""The 4.x internal-topic declarations: ``__share_group_state``, ``__remote_log_metadata``, the streams-group and
regular-expression records of ``__consumer_offsets`` and the 4.0 preview layouts read beside the 4.1+ ones."""

from __future__ import annotations

import struct

from kafkatool.schema import group_coordinator as gc
from kafkatool.schema import remote_log_metadata as rlm
from kafkatool.schema import share_group_state as sgs
from kafkatool.schema.kafka_message import uuid_text
from kafkatool.schema.messages import MESSAGES, declared

TOPIC_ID = bytes(range(16))


def compact(text: str) -> bytes:
    raw = text.encode()
    return bytes([len(raw) + 1]) + raw


def share_key(rtype: int) -> bytes:
    return struct.pack(">hh", rtype, 2) + b"sg" + TOPIC_ID + struct.pack(">i", 3)


BATCH = struct.pack(">qqbh", 100, 109, 2, 1) + b"\x00"


def test_share_snapshot_41_layout() -> None:
    value = (struct.pack(">hiiiq", 0, 4, 5, 6, 100) + struct.pack(">qq", 1700000000000, 1700000000001)
             + b"\x02" + BATCH + b"\x00")
    got = sgs.decode(share_key(0), value)
    assert not got.defects and got.kind == "share_snapshot"
    assert got.key["data"] == {"groupId": "sg", "topicId": uuid_text(TOPIC_ID), "partition": 3}
    assert got.value["data"] == {
        "snapshotEpoch": 4, "stateEpoch": 5, "leaderEpoch": 6, "startOffset": 100, "deliveryCompleteCount": -1,
        "createTimestamp": 1700000000000, "writeTimestamp": 1700000000001,
        "stateBatches": [{"firstOffset": 100, "lastOffset": 109, "deliveryState": 2, "deliveryCount": 1}]}
    assert "layout" not in got.value


def test_share_update_40_preview_layout() -> None:
    value = struct.pack(">hHiq", 0, 4, 6, -1) + b"\x02" + BATCH + b"\x00"
    got = sgs.decode(share_key(1), value)
    assert not got.defects and got.value["layout"] == sgs.PREVIEW
    assert got.value["data"]["snapshotEpoch"] == 4 and got.value["data"]["startOffset"] == -1


def test_share_group_state_tombstone_and_unknown_type() -> None:
    assert sgs.decode(share_key(1), None).value is None
    bad = sgs.decode(share_key(7), b"\x00\x00")
    assert bad.defects and bad.kind is None


def test_remote_log_segment_metadata_record() -> None:
    value = (b"\x01\x00\x00" + compact("t") + TOPIC_ID + struct.pack(">i", 0) + b"\x00" + TOPIC_ID + b"\x00"
             + struct.pack(">qqiqq", 0, 9, 1, 5, 6) + b"\x02" + struct.pack(">iq", 0, 0) + b"\x00"
             + struct.pack(">i", 10) + b"\x00" + b"\x01" + b"\x01\x00\x01\x01")
    got = rlm.decode(None, value)
    assert not got.defects and got.kind == "remote_log_segment_metadata"
    data = got.value["data"]
    assert data["customMetadata"] is None and data["txnIndexEmpty"] is True
    assert rlm.SEGMENT_STATES[data["remoteLogSegmentState"]] == "COPY_SEGMENT_FINISHED"
    garbage = rlm.decode(None, value + b"\x00")
    assert garbage.defects and isinstance(garbage.value, str)


def test_share_group_metadata_41_and_preview() -> None:
    key = b"\x00\x0b\x00\x02sg"
    ga = gc.decode(key, struct.pack(">hiq", 0, 9, 77) + b"\x00")
    assert ga.value["data"] == {"epoch": 9, "metadataHash": 77} and "layout" not in ga.value
    preview = gc.decode(key, struct.pack(">hi", 0, 9) + b"\x00")
    assert preview.value["data"] == {"epoch": 9} and preview.value["layout"] == gc.PREVIEW


def test_streams_group_topology_and_regex_records() -> None:
    key = b"\x00\x17\x00\x03app"
    value = (struct.pack(">hi", 0, 2) + b"\x02" + compact("0") + b"\x02" + compact("in") + b"\x01" + b"\x01"
             + b"\x01" + b"\x01" + b"\x01" + b"\x00" + b"\x00")
    got = gc.decode(key, value)
    assert not got.defects and got.kind == "streams_group_topology"
    assert got.value["data"]["subtopologies"][0]["sourceTopics"] == ["in"]
    regex = gc.decode(b"\x00\x10\x00\x01g\x00\x03t.*",
                      struct.pack(">h", 0) + b"\x02" + compact("t1") + struct.pack(">qq", 3, 4) + b"\x00")
    assert regex.key["data"] == {"groupId": "g", "regularExpression": "t.*"}
    assert regex.value["data"] == {"topics": ["t1"], "version": 3, "timestamp": 4}


def test_registry_names_and_release_layouts() -> None:
    assert MESSAGES["LegacyOffsetCommitKey"].message is MESSAGES["OffsetCommitKey"].message
    assert MESSAGES["StreamsGroupTopologyValue"].number == 23
    assert declared("ShareSnapshotValue", "4.0.2").message is sgs.SHARE_SNAPSHOT_VALUE_PREVIEW
    assert declared("ShareSnapshotValue", "4.4.0").message is sgs.SHARE_SNAPSHOT_VALUE
    assert declared("NoSuchRecord") is None
