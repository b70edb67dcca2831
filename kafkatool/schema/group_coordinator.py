"""Records of ``__consumer_offsets``: the group coordinator's keys and values.

Models Kafka's ``GroupCoordinatorRecordSerde`` (group-coordinator, via ``CoordinatorRecordSerde``): a key is a
big-endian int16 *record type* followed by the key message in that version (0 and 1 ``OffsetCommitKey``,
2 ``GroupMetadataKey``, 3..8 the KIP-848 ``ConsumerGroup*Key`` records, 9..15 the KIP-932 ``ShareGroup*Key``
records); a value is an int16 version followed by
the matching value message; a null value is a tombstone, whatever the type. Layouts follow the JSON schemas
``group-coordinator/src/main/resources/common/message/*Key.json`` / ``*Value.json``.
"""

from __future__ import annotations

from typing import Any

from kafkatool.errors import DecodeError
from kafkatool.schema.kafka_message import NEVER, Field, Message, read_part
from kafkatool.schema.topic_records import DecodedRecord, RecordDefect, TopicDecoder, register

OFFSETS_TOPIC = "__consumer_offsets"
SERDE = "GroupCoordinatorRecordSerde"


def _key(name: str, version: int, *names: str) -> Message:
    return Message(name, str(version), flexible=NEVER, fields=tuple(Field(n, "string", str(version)) for n in names))


OFFSET_COMMIT_KEY = Message("OffsetCommitKey", "0-1", flexible=NEVER, fields=(
    Field("group", "string", "0-1"), Field("topic", "string", "0-1"), Field("partition", "int32", "0-1")))
OFFSET_COMMIT_VALUE = Message("OffsetCommitValue", "0-4", flexible="4+", fields=(
    Field("offset", "int64"),
    Field("leaderEpoch", "int32", "3+", default=-1),
    Field("metadata", "string"),
    Field("commitTimestamp", "int64"),
    Field("expireTimestamp", "int64", "1", default=-1),
    Field("topicId", "uuid", "4+", tag=0, tagged="4+"),  # 4.1+: the committed partition's topic id
))
GROUP_METADATA_KEY = _key("GroupMetadataKey", 2, "group")
GROUP_METADATA_VALUE = Message("GroupMetadataValue", "0-4", flexible="4+", fields=(
    Field("protocolType", "string"),
    Field("generation", "int32"),
    Field("protocol", "string", nullable="0+"),
    Field("leader", "string", nullable="0+"),
    Field("currentStateTimestamp", "int64", "2+", default=-1),
    Field("members", "[]struct", fields=(
        Field("memberId", "string"),
        Field("groupInstanceId", "string", "3+", nullable="3+"),
        Field("clientId", "string"),
        Field("clientHost", "string"),
        Field("rebalanceTimeout", "int32", "1+", default=-1),
        Field("sessionTimeout", "int32"),
        Field("subscription", "bytes"),
        Field("assignment", "bytes"),
    )),
))
_TOPIC_PARTITIONS = (Field("TopicId", "uuid"), Field("Partitions", "[]int32"))
_ASSIGNED_PARTITIONS = (*_TOPIC_PARTITIONS,  # 4.1+: the epoch each partition was assigned at (zombie fencing)
                        Field("AssignmentEpochs", "[]int32", nullable="0+", tag=0, tagged="0+", default="null"))
CONSUMER_GROUP_METADATA_KEY = _key("ConsumerGroupMetadataKey", 3, "GroupId")
CONSUMER_GROUP_METADATA_VALUE = Message("ConsumerGroupMetadataValue", "0", fields=(
    Field("Epoch", "int32"), Field("MetadataHash", "int64", tag=0, tagged="0+", default=0)))
CONSUMER_GROUP_PARTITION_METADATA_KEY = _key("ConsumerGroupPartitionMetadataKey", 4, "GroupId")
CONSUMER_GROUP_PARTITION_METADATA_VALUE = Message("ConsumerGroupPartitionMetadataValue", "0", fields=(
    Field("Topics", "[]struct", fields=(
        Field("TopicId", "uuid"), Field("TopicName", "string"), Field("NumPartitions", "int32"),
        Field("PartitionMetadata", "[]struct", fields=(Field("Partition", "int32"), Field("Racks", "[]string"))),
    )),
))
CONSUMER_GROUP_MEMBER_METADATA_KEY = _key("ConsumerGroupMemberMetadataKey", 5, "GroupId", "MemberId")
CONSUMER_GROUP_MEMBER_METADATA_VALUE = Message("ConsumerGroupMemberMetadataValue", "0", fields=(
    Field("InstanceId", "string", nullable="0+"),
    Field("RackId", "string", nullable="0+"),
    Field("ClientId", "string"),
    Field("ClientHost", "string"),
    Field("SubscribedTopicNames", "[]string"),
    Field("SubscribedTopicRegex", "string", nullable="0+"),
    Field("RebalanceTimeoutMs", "int32", default=-1),
    Field("ServerAssignor", "string", nullable="0+"),
    Field("ClassicMemberMetadata", "struct", nullable="0+", tag=0, fields=(
        Field("SessionTimeoutMs", "int32"),
        Field("SupportedProtocols", "[]struct", fields=(Field("Name", "string"), Field("Metadata", "bytes"))),
    )),
))
CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = _key("ConsumerGroupTargetAssignmentMetadataKey", 6, "GroupId")
CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = Message("ConsumerGroupTargetAssignmentMetadataValue", "0", fields=(
    Field("AssignmentEpoch", "int32"), Field("AssignmentTimestamp", "int64", tag=0, tagged="0+", default=0)))
CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY = _key("ConsumerGroupTargetAssignmentMemberKey", 7, "GroupId",
                                                   "MemberId")
CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = Message("ConsumerGroupTargetAssignmentMemberValue", "0", fields=(
    Field("TopicPartitions", "[]struct", fields=_TOPIC_PARTITIONS),))
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY = _key("ConsumerGroupCurrentMemberAssignmentKey", 8, "GroupId",
                                                    "MemberId")
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = Message("ConsumerGroupCurrentMemberAssignmentValue", "0", fields=(
    Field("MemberEpoch", "int32"),
    Field("PreviousMemberEpoch", "int32"),
    Field("State", "int8"),
    Field("AssignedPartitions", "[]struct", fields=_ASSIGNED_PARTITIONS),
    Field("PartitionsPendingRevocation", "[]struct", fields=_ASSIGNED_PARTITIONS),
))

# KIP-932 share groups (record types 9..15), declared as at the modelled commit (early access there).
SHARE_GROUP_PARTITION_METADATA_KEY = _key("ShareGroupPartitionMetadataKey", 9, "GroupId")
SHARE_GROUP_PARTITION_METADATA_VALUE = Message("ShareGroupPartitionMetadataValue", "0",
                                               fields=CONSUMER_GROUP_PARTITION_METADATA_VALUE.fields)
SHARE_GROUP_MEMBER_METADATA_KEY = _key("ShareGroupMemberMetadataKey", 10, "GroupId", "MemberId")
SHARE_GROUP_MEMBER_METADATA_VALUE = Message("ShareGroupMemberMetadataValue", "0", fields=(
    Field("RackId", "string", nullable="0+"),
    Field("ClientId", "string"),
    Field("ClientHost", "string"),
    Field("SubscribedTopicNames", "[]string"),
))
SHARE_GROUP_METADATA_KEY = _key("ShareGroupMetadataKey", 11, "GroupId")
SHARE_GROUP_METADATA_VALUE = Message("ShareGroupMetadataValue", "0", fields=(Field("Epoch", "int32"),))
SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = _key("ShareGroupTargetAssignmentMetadataKey", 12, "GroupId")
SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = Message("ShareGroupTargetAssignmentMetadataValue", "0",
                                                       fields=(Field("AssignmentEpoch", "int32"),))
SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY = _key("ShareGroupTargetAssignmentMemberKey", 13, "GroupId", "MemberId")
SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = Message("ShareGroupTargetAssignmentMemberValue", "0", fields=(
    Field("TopicPartitions", "[]struct", fields=_TOPIC_PARTITIONS),))
SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY = _key("ShareGroupCurrentMemberAssignmentKey", 14, "GroupId", "MemberId")
SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = Message("ShareGroupCurrentMemberAssignmentValue", "0", fields=(
    Field("MemberEpoch", "int32"),
    Field("PreviousMemberEpoch", "int32"),
    Field("State", "int8"),
    Field("AssignedPartitions", "[]struct", fields=_TOPIC_PARTITIONS),
))
SHARE_GROUP_STATE_PARTITION_METADATA_KEY = _key("ShareGroupStatePartitionMetadataKey", 15, "GroupId")
SHARE_GROUP_STATE_PARTITION_METADATA_VALUE = Message("ShareGroupStatePartitionMetadataValue", "0", fields=(
    Field("InitializedTopics", "[]struct", fields=(
        Field("TopicId", "uuid"), Field("TopicName", "string"), Field("Partitions", "[]int32"))),
    Field("DeletingTopics", "[]struct", fields=(Field("TopicId", "uuid"), Field("TopicName", "string"))),
))

# The consumer embedded protocol inside a classic group's member subscription and assignment bytes
# (clients/src/main/resources/common/message/ConsumerProtocol{Subscription,Assignment}.json): an int16 version, then
# the message. DumpLogSegments' offsets decoder shows them decoded for protocol type "consumer".
_OWNED = (Field("Topic", "string", "1+"), Field("Partitions", "[]int32", "1+"))
CONSUMER_PROTOCOL_SUBSCRIPTION = Message("ConsumerProtocolSubscription", "0-3", flexible=NEVER, fields=(
    Field("Topics", "[]string"),
    Field("UserData", "bytes", nullable="0+"),
    Field("OwnedPartitions", "[]struct", "1+", fields=_OWNED),
    Field("GenerationId", "int32", "2+", default=-1),
    Field("RackId", "string", "3+", nullable="3+"),
))
CONSUMER_PROTOCOL_ASSIGNMENT = Message("ConsumerProtocolAssignment", "0-3", flexible=NEVER, fields=(
    Field("AssignedPartitions", "[]struct", fields=(Field("Topic", "string"), Field("Partitions", "[]int32"))),
    Field("UserData", "bytes", nullable="0+"),
))


def decode_consumer_protocol(message: Message, data: bytes) -> dict[str, Any]:
    """A member's subscription or assignment bytes (int16 version, then ``message``) as the JSON converter
    writes them; :class:`DecodeError` when they are not in the consumer protocol."""
    return read_part(message, _version(data, "protocol"), data, "protocol")


# Record type (the key's first int16) -> (kind, key message, value message), as apiMessageKeyFor/ValueFor.
RECORD_TYPES: dict[int, tuple[str, Message, Message]] = {
    0: ("offset_commit", OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE),
    1: ("offset_commit", OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE),
    2: ("group_metadata", GROUP_METADATA_KEY, GROUP_METADATA_VALUE),
    3: ("consumer_group_metadata", CONSUMER_GROUP_METADATA_KEY, CONSUMER_GROUP_METADATA_VALUE),
    4: ("consumer_group_partition_metadata", CONSUMER_GROUP_PARTITION_METADATA_KEY,
        CONSUMER_GROUP_PARTITION_METADATA_VALUE),
    5: ("consumer_group_member_metadata", CONSUMER_GROUP_MEMBER_METADATA_KEY, CONSUMER_GROUP_MEMBER_METADATA_VALUE),
    6: ("consumer_group_target_assignment_metadata", CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
        CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE),
    7: ("consumer_group_target_assignment_member", CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
        CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE),
    8: ("consumer_group_current_member_assignment", CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
        CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE),
    9: ("share_group_partition_metadata", SHARE_GROUP_PARTITION_METADATA_KEY, SHARE_GROUP_PARTITION_METADATA_VALUE),
    10: ("share_group_member_metadata", SHARE_GROUP_MEMBER_METADATA_KEY, SHARE_GROUP_MEMBER_METADATA_VALUE),
    11: ("share_group_metadata", SHARE_GROUP_METADATA_KEY, SHARE_GROUP_METADATA_VALUE),
    12: ("share_group_target_assignment_metadata", SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
         SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE),
    13: ("share_group_target_assignment_member", SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
         SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE),
    14: ("share_group_current_member_assignment", SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
         SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE),
    15: ("share_group_state_partition_metadata", SHARE_GROUP_STATE_PARTITION_METADATA_KEY,
         SHARE_GROUP_STATE_PARTITION_METADATA_VALUE),
}


def _version(data: bytes, part: str) -> int:
    if len(data) < 2:
        raise DecodeError(f"{part}.version", f"Could not read version from {part}'s buffer ({len(data)} bytes)", 0)
    return int.from_bytes(data[:2], "big", signed=True)


def decode_key(key: bytes) -> tuple[str, dict[str, Any]]:
    """The record's kind and its key as ``{"version", "type", "data"}`` (``version`` is the record type)."""
    rtype = _version(key, "key")
    if rtype not in RECORD_TYPES:
        raise DecodeError("key.version", f"unknown record type {rtype} (GroupCoordinatorRecordSerde knows "
                          f"0..{max(RECORD_TYPES)}; kept raw)", 0)
    kind, message, _ = RECORD_TYPES[rtype]
    return kind, {"version": rtype, "type": message.name, "data": read_part(message, rtype, key, "key")}


def decode_value(rtype: int, value: bytes) -> dict[str, Any]:
    """A value of record type ``rtype`` as ``{"version", "type", "data"}``."""
    message = RECORD_TYPES[rtype][2]
    version = _version(value, "value")
    return {"version": version, "type": message.name, "data": read_part(message, version, value, "value")}


def decode(key: bytes | None, value: bytes | None) -> DecodedRecord:
    """Decode one ``__consumer_offsets`` record; never raises (undecodable parts stay hex, with a defect)."""
    if key is None:
        return DecodedRecord(None, None if value is None else value.hex(), None,
                             (RecordDefect("key", "null key (the offsets topic decoder needs a key)"),))
    try:
        kind, dkey = decode_key(key)
    except DecodeError as err:
        return DecodedRecord(key.hex(), None if value is None else value.hex(), None, (RecordDefect.of(err),))
    if value is None:
        return DecodedRecord(dkey, None, kind)
    try:
        return DecodedRecord(dkey, decode_value(dkey["version"], value), kind)
    except DecodeError as err:
        return DecodedRecord(dkey, value.hex(), kind, (RecordDefect.of(err),))


DECODER = register(TopicDecoder("group-coordinator", (OFFSETS_TOPIC,), decode,
                                "__consumer_offsets: offset commits, classic and consumer group records"))
