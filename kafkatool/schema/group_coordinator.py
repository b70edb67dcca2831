"""Records of ``__consumer_offsets``: the group coordinator's keys and values.

Models Kafka's ``GroupCoordinatorRecordSerde`` (group-coordinator, via ``CoordinatorRecordSerde``): a key is a
big-endian int16 *record type* followed by the key message in that version (0 and 1 ``OffsetCommitKey``,
2 ``GroupMetadataKey``, 3..8 the KIP-848 ``ConsumerGroup*Key`` records, 9..15 the KIP-932 ``ShareGroup*Key``
records, 16 ``ConsumerGroupRegularExpressionKey``, 17 and 19..23 the KIP-1071 ``StreamsGroup*Key`` records); a value
is an int16 version followed by the matching value message; a null value is a tombstone, whatever the type. Layouts
follow the JSON schemas ``group-coordinator/src/main/resources/common/message/*Key.json`` / ``*Value.json`` of Kafka
4.4 (checked against each supported release's jars by ``tests/test_message_conformance.py``; 4.1+ names type 0
``LegacyOffsetCommit*``). Keys are read at their record type, as 3.x/4.0 declared them (4.1+ declares them as
version 0 with the record type as ``apiKey``: the same bytes).
"""

from __future__ import annotations

from typing import Any

from kafkatool.errors import DecodeError
from kafkatool.schema.coordinator_records import PREVIEW, decode_record, layout_value, record_version
from kafkatool.schema.kafka_message import NEVER, Field, Message, read_part
from kafkatool.schema.topic_records import DecodedRecord, TopicDecoder, register

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
        Field("groupInstanceId", "string", "3+", nullable="3+", default="null"),
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
                        Field("AssignmentEpochs", "[]int32", nullable="0+", tag=0, tagged="0+"))
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

# KIP-932 share groups (record types 9..15) as of 4.1 (general availability); 3.9's early-access and 4.0's preview
# layouts of some values differ at the same version and are not decoded. Type 9 exists up to 4.0 only.
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
SHARE_GROUP_METADATA_VALUE = Message("ShareGroupMetadataValue", "0", fields=(
    Field("Epoch", "int32"), Field("MetadataHash", "int64")))
SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = _key("ShareGroupTargetAssignmentMetadataKey", 12, "GroupId")
SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = Message("ShareGroupTargetAssignmentMetadataValue", "0", fields=(
    Field("AssignmentEpoch", "int32"), Field("AssignmentTimestamp", "int64", tag=0, tagged="0+", default=0)))
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
_TOPIC_PARTITIONS_INFO = (Field("TopicId", "uuid"), Field("TopicName", "string"), Field("Partitions", "[]int32"))
SHARE_GROUP_STATE_PARTITION_METADATA_VALUE = Message("ShareGroupStatePartitionMetadataValue", "0", fields=(
    Field("InitializingTopics", "[]struct", fields=_TOPIC_PARTITIONS_INFO),
    Field("InitializedTopics", "[]struct", fields=_TOPIC_PARTITIONS_INFO),
    Field("DeletingTopics", "[]struct", fields=(Field("TopicId", "uuid"), Field("TopicName", "string"))),
))

# The 4.0 preview layouts of share-group values that changed at the same version in 4.1 (3.9's early access wrote
# the 4.0 state-partition layout under record type 9). A value is read with the 4.1+ layout when that reads it
# exactly, else with the preview one (``"layout": "4.0-preview"`` in the decoded value).
SHARE_GROUP_METADATA_VALUE_PREVIEW = Message("ShareGroupMetadataValue", "0", fields=(Field("Epoch", "int32"),),
                                             extra={"layout": PREVIEW})
SHARE_GROUP_STATE_PARTITION_METADATA_VALUE_PREVIEW = Message(
    "ShareGroupStatePartitionMetadataValue", "0", extra={"layout": PREVIEW},
    fields=SHARE_GROUP_STATE_PARTITION_METADATA_VALUE.fields[1:])
PREVIEW_VALUES: dict[int, Message] = {11: SHARE_GROUP_METADATA_VALUE_PREVIEW,
                                      15: SHARE_GROUP_STATE_PARTITION_METADATA_VALUE_PREVIEW}
"""Record type -> the 4.0 preview layout of its value, tried after the 4.1+ one."""

# KIP-848 regular-expression subscriptions (record type 16, 4.0+): the topics a regex resolved to.
CONSUMER_GROUP_REGULAR_EXPRESSION_KEY = _key("ConsumerGroupRegularExpressionKey", 16, "GroupId", "RegularExpression")
CONSUMER_GROUP_REGULAR_EXPRESSION_VALUE = Message("ConsumerGroupRegularExpressionValue", "0", fields=(
    Field("Topics", "[]string"), Field("Version", "int64"), Field("Timestamp", "int64")))

# KIP-1071 streams groups (record types 17..23, 4.1+; type 18, a partition-metadata record of the 4.1 early access,
# is gone from 4.4's definitions and not declared).
_TASK_IDS = (Field("SubtopologyId", "string"), Field("Partitions", "[]int32"))
_ASSIGNED_TASKS = (*_TASK_IDS, Field("AssignmentEpochs", "[]int32", nullable="0+", tag=0, tagged="0+"))
_KEY_VALUE = (Field("Key", "string"), Field("Value", "string"))
STREAMS_GROUP_METADATA_KEY = _key("StreamsGroupMetadataKey", 17, "GroupId")
STREAMS_GROUP_METADATA_VALUE = Message("StreamsGroupMetadataValue", "0", fields=(
    Field("Epoch", "int32"),
    Field("MetadataHash", "int64"),
    Field("ValidatedTopologyEpoch", "int32", tag=0, tagged="0+", default=-1),
    Field("LastAssignmentConfigs", "[]LastAssignmentConfig", nullable="0+", tag=1, tagged="0+", fields=_KEY_VALUE),
    Field("StoredDescriptionTopologyEpoch", "int32", tag=2, tagged="0+", default=-1),
    Field("FailedDescriptionTopologyEpoch", "int32", tag=3, tagged="0+", default=-1),
))
STREAMS_GROUP_MEMBER_METADATA_KEY = _key("StreamsGroupMemberMetadataKey", 19, "GroupId", "MemberId")
STREAMS_GROUP_MEMBER_METADATA_VALUE = Message("StreamsGroupMemberMetadataValue", "0", fields=(
    Field("InstanceId", "string", nullable="0+"),
    Field("RackId", "string", nullable="0+"),
    Field("ClientId", "string"),
    Field("ClientHost", "string"),
    Field("RebalanceTimeoutMs", "int32", default=-1),
    Field("TopologyEpoch", "int32"),
    Field("ProcessId", "string"),
    Field("UserEndpoint", "Endpoint", nullable="0+", default="null", fields=(
        Field("Host", "string"), Field("Port", "uint16"))),
    Field("ClientTags", "[]KeyValue", fields=_KEY_VALUE),
))
STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = _key("StreamsGroupTargetAssignmentMetadataKey", 20, "GroupId")
STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = Message("StreamsGroupTargetAssignmentMetadataValue", "0", fields=(
    Field("AssignmentEpoch", "int32"), Field("AssignmentTimestamp", "int64", tag=0, tagged="0+", default=0)))
STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY = _key("StreamsGroupTargetAssignmentMemberKey", 21, "GroupId", "MemberId")
STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = Message("StreamsGroupTargetAssignmentMemberValue", "0", fields=(
    Field("ActiveTasks", "[]TaskIds", fields=_TASK_IDS),
    Field("StandbyTasks", "[]TaskIds", fields=_TASK_IDS),
    Field("WarmupTasks", "[]TaskIds", fields=_TASK_IDS),
))
STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY = _key("StreamsGroupCurrentMemberAssignmentKey", 22, "GroupId",
                                                   "MemberId")
STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = Message("StreamsGroupCurrentMemberAssignmentValue", "0", fields=(
    Field("MemberEpoch", "int32"),
    Field("PreviousMemberEpoch", "int32"),
    Field("State", "int8"),
    *(Field(name, "[]TaskIds", fields=_ASSIGNED_TASKS) for name in (
        "ActiveTasks", "StandbyTasks", "WarmupTasks", "ActiveTasksPendingRevocation",
        "StandbyTasksPendingRevocation", "WarmupTasksPendingRevocation")),
))
_TOPIC_INFO = (Field("Name", "string"), Field("Partitions", "int32"), Field("ReplicationFactor", "int16"),
               Field("TopicConfigs", "[]TopicConfig", fields=(Field("key", "string"), Field("value", "string"))))
STREAMS_GROUP_TOPOLOGY_KEY = _key("StreamsGroupTopologyKey", 23, "GroupId")
STREAMS_GROUP_TOPOLOGY_VALUE = Message("StreamsGroupTopologyValue", "0", fields=(
    Field("Epoch", "int32"),
    Field("Subtopologies", "[]Subtopology", fields=(
        Field("SubtopologyId", "string"),
        Field("SourceTopics", "[]string"),
        Field("SourceTopicRegex", "[]string"),
        Field("StateChangelogTopics", "[]TopicInfo", fields=_TOPIC_INFO),
        Field("RepartitionSinkTopics", "[]string"),
        Field("RepartitionSourceTopics", "[]TopicInfo", fields=_TOPIC_INFO),
        Field("CopartitionGroups", "[]CopartitionGroup", fields=(
            Field("SourceTopics", "[]int16"), Field("SourceTopicRegex", "[]int16"),
            Field("RepartitionSourceTopics", "[]int16"))),
    )),
))

# The consumer embedded protocol inside a classic group's member subscription and assignment bytes
# (clients/src/main/resources/common/message/ConsumerProtocol{Subscription,Assignment}.json): an int16 version, then
# the message. DumpLogSegments' offsets decoder shows them decoded for protocol type "consumer".
_OWNED = (Field("Topic", "string", "1+"), Field("Partitions", "[]int32", "1+"))
CONSUMER_PROTOCOL_SUBSCRIPTION = Message("ConsumerProtocolSubscription", "0-3", flexible=NEVER, fields=(
    Field("Topics", "[]string"),
    Field("UserData", "bytes", nullable="0+", default="null"),
    Field("OwnedPartitions", "[]struct", "1+", fields=_OWNED),
    Field("GenerationId", "int32", "2+", default=-1),
    Field("RackId", "string", "3+", nullable="3+", default="null"),
))
CONSUMER_PROTOCOL_ASSIGNMENT = Message("ConsumerProtocolAssignment", "0-3", flexible=NEVER, fields=(
    Field("AssignedPartitions", "[]struct", fields=(Field("Topic", "string"), Field("Partitions", "[]int32"))),
    Field("UserData", "bytes", nullable="0+", default="null"),
))


def decode_consumer_protocol(message: Message, data: bytes) -> dict[str, Any]:
    """A member's subscription or assignment bytes (int16 version, then ``message``) as the JSON converter
    writes them; :class:`DecodeError` when they are not in the consumer protocol."""
    return read_part(message, record_version(data, "protocol"), data, "protocol")


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
    16: ("consumer_group_regular_expression", CONSUMER_GROUP_REGULAR_EXPRESSION_KEY,
         CONSUMER_GROUP_REGULAR_EXPRESSION_VALUE),
    17: ("streams_group_metadata", STREAMS_GROUP_METADATA_KEY, STREAMS_GROUP_METADATA_VALUE),
    19: ("streams_group_member_metadata", STREAMS_GROUP_MEMBER_METADATA_KEY, STREAMS_GROUP_MEMBER_METADATA_VALUE),
    20: ("streams_group_target_assignment_metadata", STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
         STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE),
    21: ("streams_group_target_assignment_member", STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
         STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE),
    22: ("streams_group_current_member_assignment", STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
         STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE),
    23: ("streams_group_topology", STREAMS_GROUP_TOPOLOGY_KEY, STREAMS_GROUP_TOPOLOGY_VALUE),
}


def decode_key(key: bytes) -> tuple[str, dict[str, Any]]:
    """The record's kind and its key as ``{"version", "type", "data"}`` (``version`` is the record type)."""
    rtype = record_version(key, "key")
    if rtype not in RECORD_TYPES:
        raise DecodeError("key.version", f"unknown record type {rtype} (GroupCoordinatorRecordSerde knows "
                          f"0..{max(RECORD_TYPES)}; kept raw)", 0)
    kind, message, _ = RECORD_TYPES[rtype]
    return kind, {"version": rtype, "type": message.name, "data": read_part(message, rtype, key, "key")}


def decode_value(rtype: int, value: bytes) -> dict[str, Any]:
    """A value of record type ``rtype`` as ``{"version", "type", "data"}``."""
    return layout_value(RECORD_TYPES[rtype][2], PREVIEW_VALUES.get(rtype), value)


def decode(key: bytes | None, value: bytes | None) -> DecodedRecord:
    """Decode one ``__consumer_offsets`` record; never raises (undecodable parts stay hex, with a defect)."""
    return decode_record(key, value, decode_key, decode_value, "offsets topic")


DECODER = register(TopicDecoder("group-coordinator", (OFFSETS_TOPIC,), decode,
                                "__consumer_offsets: offset commits; classic, consumer, share, streams groups"))
