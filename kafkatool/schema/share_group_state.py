"""Records of ``__share_group_state``: the share coordinator's log (KIP-932).

Models Kafka's ``ShareCoordinatorRecordSerde`` (share-coordinator, via ``CoordinatorRecordSerde``): a key is a
big-endian int16 *record type* followed by the key message (0 ``ShareSnapshotKey``, 1 ``ShareUpdateKey``: group
id, topic id, partition); a value is an int16 version followed by the matching value message
(``ShareSnapshotValue``: the share-partition's whole state; ``ShareUpdateValue``: the state batches changed since
the last snapshot); a null value is a tombstone. Layouts follow
``share-coordinator/src/main/resources/common/message/Share{Snapshot,Update}{Key,Value}.json`` as of Kafka 4.1
(share groups' general availability); the 4.0 preview layouts, which differ at the same version number, are not
decoded (see ``tests/test_message_conformance.py``).

Public names: :data:`SHARE_GROUP_STATE_TOPIC`, the four messages, :data:`RECORD_TYPES` (record type -> kind, key
and value message), :data:`DELIVERY_STATES`, :func:`decode_key`, :func:`decode_value`, :func:`decode` (the
``topic_records`` decoder function, never raises) and :data:`DECODER` (registered under ``share-group-state``
once this module is listed in ``topic_records._MODULES``).
"""

from __future__ import annotations

from typing import Any

from kafkatool.errors import DecodeError
from kafkatool.schema.coordinator_records import PREVIEW, decode_record, layout_value, record_version
from kafkatool.schema.kafka_message import NEVER, Field, Message, read_part
from kafkatool.schema.topic_records import DecodedRecord, TopicDecoder, register

SHARE_GROUP_STATE_TOPIC = "__share_group_state"
SERDE = "ShareCoordinatorRecordSerde"


def _key(name: str, record_type: int) -> Message:
    """A key message, read at its record type (the int16 the key starts with), as kafkatool reads every
    coordinator key (Kafka 4.0 declared the key's version as the record type; 4.1+ as version 0 with the record
    type as ``apiKey``: the bytes are the same)."""
    v = str(record_type)
    return Message(name, v, flexible=NEVER, fields=(
        Field("GroupId", "string", v), Field("TopicId", "uuid", v), Field("Partition", "int32", v)))


_STATE_BATCH = (Field("FirstOffset", "int64"), Field("LastOffset", "int64"), Field("DeliveryState", "int8"),
                Field("DeliveryCount", "int16"))
_DELIVERY_COMPLETE_COUNT = Field("DeliveryCompleteCount", "int32", tag=0, tagged="0+", default=-1)  # 4.2+, KIP-1226

SHARE_SNAPSHOT_KEY = _key("ShareSnapshotKey", 0)
SHARE_SNAPSHOT_VALUE = Message("ShareSnapshotValue", "0", fields=(
    Field("SnapshotEpoch", "int32"),
    Field("StateEpoch", "int32"),
    Field("LeaderEpoch", "int32"),
    Field("StartOffset", "int64"),
    _DELIVERY_COMPLETE_COUNT,
    Field("CreateTimestamp", "int64"),
    Field("WriteTimestamp", "int64"),
    Field("StateBatches", "[]StateBatch", fields=_STATE_BATCH),
))
SHARE_UPDATE_KEY = _key("ShareUpdateKey", 1)
SHARE_UPDATE_VALUE = Message("ShareUpdateValue", "0", fields=(
    Field("SnapshotEpoch", "int32"),
    Field("LeaderEpoch", "int32"),
    Field("StartOffset", "int64"),  # -1: the start offset is not being updated
    _DELIVERY_COMPLETE_COUNT,
    Field("StateBatches", "[]StateBatch", fields=_STATE_BATCH),
))

# The 4.0 preview layouts (same version 0, other fields): tried when the 4.1+ layout does not read a value exactly;
# the decoded value then says ``"layout": "4.0-preview"``.
_STATE_BATCH_PREVIEW = tuple(Field(f.name, f.type, "0") for f in _STATE_BATCH)
SHARE_SNAPSHOT_VALUE_PREVIEW = Message("ShareSnapshotValue", "0", extra={"layout": PREVIEW}, fields=(
    Field("SnapshotEpoch", "uint16", "0"),
    Field("StateEpoch", "int32"),
    Field("LeaderEpoch", "int32"),
    Field("StartOffset", "int64", "0"),
    Field("StateBatches", "[]StateBatch", "0", fields=_STATE_BATCH_PREVIEW),
))
SHARE_UPDATE_VALUE_PREVIEW = Message("ShareUpdateValue", "0", extra={"layout": PREVIEW}, fields=(
    Field("SnapshotEpoch", "uint16", "0"),
    Field("LeaderEpoch", "int32"),
    Field("StartOffset", "int64", "0"),
    Field("StateBatches", "[]StateBatch", "0", fields=_STATE_BATCH_PREVIEW),
))
PREVIEW_VALUES: dict[int, Message] = {0: SHARE_SNAPSHOT_VALUE_PREVIEW, 1: SHARE_UPDATE_VALUE_PREVIEW}
"""Record type -> the 4.0 preview layout of its value."""

RECORD_TYPES: dict[int, tuple[str, Message, Message]] = {
    0: ("share_snapshot", SHARE_SNAPSHOT_KEY, SHARE_SNAPSHOT_VALUE),
    1: ("share_update", SHARE_UPDATE_KEY, SHARE_UPDATE_VALUE),
}
"""Record type (the key's first int16) -> (kind, key message, value message)."""

DELIVERY_STATES: dict[int, str] = {0: "Available", 1: "Acquired", 2: "Acknowledged", 4: "Archived"}
"""``RecordState``'s ids, the ``DeliveryState`` of a state batch (only 0, 2 and 4 are persisted)."""


def decode_key(key: bytes) -> tuple[str, dict[str, Any]]:
    """The record's kind and its key as ``{"version", "type", "data"}`` (``version`` is the record type)."""
    rtype = record_version(key, "key")
    if rtype not in RECORD_TYPES:
        raise DecodeError("key.version", f"unknown record type {rtype} ({SERDE} knows 0..{max(RECORD_TYPES)}; "
                          "kept raw)", 0)
    kind, message, _ = RECORD_TYPES[rtype]
    return kind, {"version": rtype, "type": message.name, "data": read_part(message, rtype, key, "key")}


def decode_value(rtype: int, value: bytes) -> dict[str, Any]:
    """A value of record type ``rtype`` as ``{"version", "type", "data"}`` (absent tagged fields at their
    defaults), plus ``"layout": "4.0-preview"`` when only the 4.0 preview layout reads it."""
    return layout_value(RECORD_TYPES[rtype][2], PREVIEW_VALUES[rtype], value)


def decode(key: bytes | None, value: bytes | None) -> DecodedRecord:
    """Decode one ``__share_group_state`` record; never raises (undecodable parts stay hex, with a defect)."""
    return decode_record(key, value, decode_key, decode_value, "share-group state")


DECODER = register(TopicDecoder("share-group-state", (SHARE_GROUP_STATE_TOPIC,), decode,
                                "__share_group_state: share-partition snapshots and updates (KIP-932)"))
