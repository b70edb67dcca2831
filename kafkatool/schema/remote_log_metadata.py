"""Records of ``__remote_log_metadata``: tiered storage's topic-based metadata (KIP-405).

Models Kafka's ``RemoteLogMetadataSerde`` (storage, package
``org.apache.kafka.server.log.remote.metadata.storage.serialization``): a record value is
``AbstractApiMessageSerde``'s frame (unsigned varint frame version 1, api key, record version; see
:func:`kafkatool.schema.metadata_records.read_frame`) then the message in Kafka's flexible format; the key is
not used (``RemoteLogMetadataSerde`` reads values only). Api keys: 0 ``RemoteLogSegmentMetadataRecord`` (a
segment copied or being copied), 1 ``RemoteLogSegmentMetadataUpdateRecord`` (its state changed), 2
``RemotePartitionDeleteMetadataRecord`` (a partition's deletion), 3 ``RemoteLogSegmentMetadataSnapshotRecord``
(kept in the local ``remote_log_snapshot`` file, not in the topic). Layouts follow
``storage/src/main/resources/message/*.json``.

Public names: :data:`REMOTE_LOG_METADATA_TOPIC`, the four messages, :data:`BY_API_KEY`,
:data:`SEGMENT_STATES`, :data:`PARTITION_DELETE_STATES`, :func:`parse_remote_log_metadata` (raises),
:func:`decode` (the ``topic_records`` decoder function, never raises) and :data:`DECODER` (registered under
``remote-log-metadata`` once this module is listed in ``topic_records._MODULES``).
"""

from __future__ import annotations

from typing import Any

from kafkatool.errors import DecodeError
from kafkatool.schema.kafka_message import Field, Message, read_message
from kafkatool.schema.metadata_records import read_frame
from kafkatool.schema.topic_records import DecodedRecord, RecordDefect, TopicDecoder, register

REMOTE_LOG_METADATA_TOPIC = "__remote_log_metadata"

_TOPIC_ID_PARTITION = (Field("Name", "string"), Field("Id", "uuid"), Field("Partition", "int32"))
_SEGMENT_ID = (Field("TopicIdPartition", "TopicIdPartitionEntry", fields=_TOPIC_ID_PARTITION), Field("Id", "uuid"))
_LEADER_EPOCHS = Field("SegmentLeaderEpochs", "[]SegmentLeaderEpochEntry", fields=(
    Field("LeaderEpoch", "int32"), Field("Offset", "int64")))
_CUSTOM_METADATA = Field("CustomMetadata", "bytes", nullable="0+", default="null")
_TXN_INDEX_EMPTY = Field("TxnIndexEmpty", "bool", tag=0, tagged="0+", default=False)

# A segment's metadata after its id, the same in the record and in the snapshot record.
_SEGMENT_FIELDS = (
    Field("StartOffset", "int64"),
    Field("EndOffset", "int64"),
    Field("BrokerId", "int32"),
    Field("MaxTimestampMs", "int64"),
    Field("EventTimestampMs", "int64"),
    _LEADER_EPOCHS,
    Field("SegmentSizeInBytes", "int32"),
    _CUSTOM_METADATA,
    Field("RemoteLogSegmentState", "int8"),
    _TXN_INDEX_EMPTY,
)

REMOTE_LOG_SEGMENT_METADATA_RECORD = Message("RemoteLogSegmentMetadataRecord", "0", api_key=0, fields=(
    Field("RemoteLogSegmentId", "RemoteLogSegmentIdEntry", fields=_SEGMENT_ID),
    *_SEGMENT_FIELDS,
))
REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD = Message("RemoteLogSegmentMetadataUpdateRecord", "0", api_key=1, fields=(
    Field("RemoteLogSegmentId", "RemoteLogSegmentIdEntry", fields=_SEGMENT_ID),
    Field("BrokerId", "int32"),
    Field("EventTimestampMs", "int64"),
    _CUSTOM_METADATA,
    Field("RemoteLogSegmentState", "int8"),
))
REMOTE_PARTITION_DELETE_METADATA_RECORD = Message("RemotePartitionDeleteMetadataRecord", "0", api_key=2, fields=(
    Field("TopicIdPartition", "TopicIdPartitionEntry", fields=_TOPIC_ID_PARTITION),
    Field("BrokerId", "int32"),
    Field("EventTimestampMs", "int64"),
    Field("RemotePartitionDeleteState", "int8"),
))
REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD = Message("RemoteLogSegmentMetadataSnapshotRecord", "0", api_key=3,
                                                      fields=(
    Field("SegmentId", "uuid"),
    *_SEGMENT_FIELDS,
))

BY_API_KEY: dict[int, Message] = {m.api_key: m for m in (
    REMOTE_LOG_SEGMENT_METADATA_RECORD, REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD,
    REMOTE_PARTITION_DELETE_METADATA_RECORD, REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD) if m.api_key is not None}
"""Every record ``RemoteLogMetadataSerde`` knows, by api key."""

SEGMENT_STATES: dict[int, str] = {0: "COPY_SEGMENT_STARTED", 1: "COPY_SEGMENT_FINISHED", 2: "DELETE_SEGMENT_STARTED",
                                  3: "DELETE_SEGMENT_FINISHED"}
"""``RemoteLogSegmentState``'s ids."""
PARTITION_DELETE_STATES: dict[int, str] = {0: "DELETE_PARTITION_MARKED", 1: "DELETE_PARTITION_STARTED",
                                           2: "DELETE_PARTITION_FINISHED"}
"""``RemotePartitionDeleteState``'s ids."""


def parse_remote_log_metadata(value: bytes | memoryview) -> dict[str, Any]:
    """A record value as ``{"api_key", "version", "type", "data"}`` (``data`` in the JSON converter's form);
    raises :class:`DecodeError` (position relative to the value) for a bad frame, an unknown api key, a cut
    message or bytes left after it."""
    data = bytes(value)
    _, api_key, version, pos = read_frame(data)
    message = BY_API_KEY.get(api_key)
    if message is None:
        raise DecodeError("api_key", f"unknown remote log metadata api key {api_key}", 0)
    fields, end = read_message(message, data, version, pos)
    if end != len(data):
        raise DecodeError("value", f"Found {len(data) - end} byte(s) of garbage after {api_key}", end)
    return {"api_key": api_key, "version": version, "type": message.name, "data": fields}


_KINDS = {0: "remote_log_segment_metadata", 1: "remote_log_segment_metadata_update",
          2: "remote_partition_delete_metadata", 3: "remote_log_segment_metadata_snapshot"}


def decode(key: bytes | None, value: bytes | None) -> DecodedRecord:
    """Decode one ``__remote_log_metadata`` record; never raises (an undecodable value stays hex, with a defect).
    The key, which Kafka ignores, is kept as hex."""
    key_out = None if key is None else key.hex()
    if value is None:
        return DecodedRecord(key_out, None, None, (RecordDefect("value", "null value"),))
    try:
        out = parse_remote_log_metadata(value)
    except DecodeError as err:
        return DecodedRecord(key_out, value.hex(), None, (RecordDefect.of(err),))
    return DecodedRecord(key_out, out, _KINDS[out["api_key"]])


DECODER = register(TopicDecoder("remote-log-metadata", (REMOTE_LOG_METADATA_TOPIC,), decode,
                                "__remote_log_metadata: tiered storage segment and partition-delete events"))
