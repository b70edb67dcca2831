"""KRaft metadata records (``__cluster_metadata``): Kafka's ``MetadataRecordSerde`` frame and every record type
of ``metadata/src/main/resources/common/metadata/*.json``.

A record value is ``AbstractApiMessageSerde``'s frame: an unsigned varint frame version (only 1 is valid; 0
was KRaft's 2.8 preview), an unsigned varint api key, an unsigned varint record version, then the message in
Kafka's flexible format (see :mod:`kafkatool.schema.kafka_message`); bytes left after the message are
rejected ("garbage"). Every number must fit in a Java short. An api key Kafka does not define keeps its number
and raw bytes. Records have no key.

Registers the ``cluster-metadata`` decoder for topic ``__cluster_metadata`` in
:mod:`kafkatool.schema.topic_records`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafkatool.errors import DecodeError
from kafkatool.model import Defect, RecordBatch
from kafkatool.schema.control import RAFT_CONTROL_MESSAGES, parse_control_record, parse_raft_control_message
from kafkatool.schema.kafka_message import Field as F
from kafkatool.schema.kafka_message import Message, read_message
from kafkatool.schema.releases import as_read_by
from kafkatool.schema.topic_records import DecodedRecord, RecordDefect, TopicDecoder, register
from kafkatool.schema.varint import read_unsigned_varint

METADATA_TOPIC = "__cluster_metadata"
FRAME_VERSION = 1
SHORT_MAX = 0x7FFF

_ENDPOINT = (F("Name", "string"), F("Host", "string"), F("Port", "uint16"), F("SecurityProtocol", "int16"))
_FEATURE = (F("Name", "string"), F("MinSupportedVersion", "int16"), F("MaxSupportedVersion", "int16"))


def _m(api_key: int, name: str, valid: str, *fields: F) -> Message:
    return Message(name, valid, tuple(fields), api_key)


RECORDS: tuple[Message, ...] = (
    _m(0, "RegisterBrokerRecord", "0-4",
       F("BrokerId", "int32"), F("IsMigratingZkBroker", "bool", "2+", default=False),
       F("IncarnationId", "uuid"), F("BrokerEpoch", "int64"),
       F("EndPoints", "[]BrokerEndpoint", fields=_ENDPOINT), F("Features", "[]BrokerFeature", fields=_FEATURE),
       F("Rack", "string", nullable="0+"), F("Fenced", "bool", default=True),
       F("InControlledShutdown", "bool", "1+", default=False),
       F("LogDirs", "[]uuid", "3+", tag=0, tagged="3+"),
       F("CordonedLogDirs", "[]uuid", "4+", nullable="4+", tag=1, tagged="4+", default="null")),
    _m(1, "UnregisterBrokerRecord", "0", F("BrokerId", "int32"), F("BrokerEpoch", "int64")),
    _m(2, "TopicRecord", "0", F("Name", "string"), F("TopicId", "uuid")),
    _m(3, "PartitionRecord", "0-2",
       F("PartitionId", "int32", default=-1), F("TopicId", "uuid"), F("Replicas", "[]int32"), F("Isr", "[]int32"),
       F("RemovingReplicas", "[]int32"), F("AddingReplicas", "[]int32"), F("Leader", "int32", default=-1),
       F("LeaderRecoveryState", "int8", tag=0, tagged="0+", default=0),
       F("LeaderEpoch", "int32", default=-1), F("PartitionEpoch", "int32", default=-1),
       F("Directories", "[]uuid", "1+"),
       F("EligibleLeaderReplicas", "[]int32", "2+", nullable="2+", tag=1, tagged="2+", default="null"),
       F("LastKnownElr", "[]int32", "2+", nullable="2+", tag=2, tagged="2+", default="null")),
    _m(4, "ConfigRecord", "0",
       F("ResourceType", "int8"), F("ResourceName", "string"), F("Name", "string"),
       F("Value", "string", nullable="0+")),
    _m(5, "PartitionChangeRecord", "0-2",
       F("PartitionId", "int32", default=-1), F("TopicId", "uuid"),
       F("Isr", "[]int32", nullable="0+", tag=0, tagged="0+", default="null"),
       F("Leader", "int32", tag=1, tagged="0+", default=-2),
       F("Replicas", "[]int32", nullable="0+", tag=2, tagged="0+", default="null"),
       F("RemovingReplicas", "[]int32", nullable="0+", tag=3, tagged="0+", default="null"),
       F("AddingReplicas", "[]int32", nullable="0+", tag=4, tagged="0+", default="null"),
       F("LeaderRecoveryState", "int8", tag=5, tagged="0+", default=-1),
       F("Directories", "[]uuid", "1+", nullable="1+", tag=8, tagged="1+", default="null"),
       F("EligibleLeaderReplicas", "[]int32", "2+", nullable="2+", tag=6, tagged="2+", default="null"),
       F("LastKnownElr", "[]int32", "2+", nullable="2+", tag=7, tagged="2+", default="null")),
    _m(7, "FenceBrokerRecord", "0", F("Id", "int32"), F("Epoch", "int64")),
    _m(8, "UnfenceBrokerRecord", "0", F("Id", "int32"), F("Epoch", "int64")),
    _m(9, "RemoveTopicRecord", "0", F("TopicId", "uuid")),
    _m(10, "DelegationTokenRecord", "0",
       F("Owner", "string"), F("Requester", "string"), F("Renewers", "[]string"), F("IssueTimestamp", "int64"),
       F("MaxTimestamp", "int64"), F("ExpirationTimestamp", "int64"), F("TokenId", "string")),
    _m(11, "UserScramCredentialRecord", "0",
       F("Name", "string"), F("Mechanism", "int8"), F("Salt", "bytes"), F("StoredKey", "bytes"),
       F("ServerKey", "bytes"), F("Iterations", "int32")),
    _m(12, "FeatureLevelRecord", "0", F("Name", "string"), F("FeatureLevel", "int16")),
    _m(14, "ClientQuotaRecord", "0",
       F("Entity", "[]EntityData", fields=(F("EntityType", "string"), F("EntityName", "string", nullable="0+"))),
       F("Key", "string"), F("Value", "float64"), F("Remove", "bool")),
    _m(15, "ProducerIdsRecord", "0",
       F("BrokerId", "int32"), F("BrokerEpoch", "int64", default=-1), F("NextProducerId", "int64")),
    _m(17, "BrokerRegistrationChangeRecord", "0-3",
       F("BrokerId", "int32"), F("BrokerEpoch", "int64"), F("Fenced", "int8", tag=0, tagged="0+", default=0),
       F("InControlledShutdown", "int8", "1+", tag=1, tagged="1+", default=0),
       F("LogDirs", "[]uuid", "2+", tag=2, tagged="2+"),
       F("CordonedLogDirs", "[]uuid", "3+", nullable="3+", tag=3, tagged="3+", default="null")),
    _m(18, "AccessControlEntryRecord", "0",
       F("Id", "uuid"), F("ResourceType", "int8"), F("ResourceName", "string"), F("PatternType", "int8"),
       F("Principal", "string"), F("Host", "string"), F("Operation", "int8"), F("PermissionType", "int8")),
    _m(19, "RemoveAccessControlEntryRecord", "0", F("Id", "uuid")),
    _m(20, "NoOpRecord", "0"),
    _m(21, "ZkMigrationStateRecord", "0", F("ZkMigrationState", "int8")),
    _m(22, "RemoveUserScramCredentialRecord", "0", F("Name", "string"), F("Mechanism", "int8")),
    _m(23, "BeginTransactionRecord", "0",
       F("Name", "string", nullable="0+", tag=0, tagged="0+", default="null")),
    _m(24, "EndTransactionRecord", "0"),
    _m(25, "AbortTransactionRecord", "0",
       F("Reason", "string", nullable="0+", tag=0, tagged="0+", default="null")),
    _m(26, "RemoveDelegationTokenRecord", "0", F("TokenId", "string")),
    _m(27, "RegisterControllerRecord", "0",
       F("ControllerId", "int32"), F("IncarnationId", "uuid"), F("ZkMigrationReady", "bool"),
       F("EndPoints", "[]ControllerEndpoint", fields=_ENDPOINT), F("Features", "[]ControllerFeature", fields=_FEATURE)),
    _m(28, "ClearElrRecord", "0", F("TopicName", "string")),
    _m(29, "UnregisterControllerRecord", "0", F("ControllerId", "int32")),
)
"""Every metadata record ``MetadataRecordType`` defines up to Kafka 4.4 (api keys 6, 13 and 16 are not defined and
decode as unknown; records and versions added after the corpus's commit were checked against the 4.4.0 jars)."""

BY_API_KEY: dict[int, Message] = {m.api_key: m for m in RECORDS if m.api_key is not None}

METADATA_VERSIONS: dict[int, str] = {
    1: "3.0-IV1", 2: "3.1-IV0", 3: "3.2-IV0", 4: "3.3-IV0", 5: "3.3-IV1", 6: "3.3-IV2", 7: "3.3-IV3",
    8: "3.4-IV0", 9: "3.5-IV0", 10: "3.5-IV1", 11: "3.5-IV2", 12: "3.6-IV0", 13: "3.6-IV1", 14: "3.6-IV2",
    15: "3.7-IV0", 16: "3.7-IV1", 17: "3.7-IV2", 18: "3.7-IV3", 19: "3.7-IV4", 20: "3.8-IV0", 21: "3.9-IV0",
    22: "4.0-IV0", 23: "4.0-IV1", 24: "4.0-IV2", 25: "4.0-IV3", 26: "4.1-IV0", 27: "4.1-IV1", 28: "4.2-IV0",
    29: "4.2-IV1", 30: "4.3-IV0", 31: "4.4-IV0", 32: "4.4-IV1", 33: "4.4-IV2", 34: "4.5-IV0",
}
"""``MetadataVersion``'s feature level to release name, up to Kafka 4.4.0's (whose newest, 4.5-IV0, is not yet
production-ready there); checked against each supported release's ``MetadataVersion`` class by
``tests/test_message_conformance.py``."""


def record_type_name(class_name: str) -> str:
    """``MetadataRecordType``'s constant: ``ZkMigrationStateRecord`` -> ``ZK_MIGRATION_STATE_RECORD``."""
    out = []
    for i, ch in enumerate(class_name):
        if ch.isupper() and i > 0 and not class_name[i - 1].isupper():
            out.append("_")
        out.append(ch.upper())
    return "".join(out)


@dataclass(frozen=True, slots=True)
class MetadataRecord:
    """One decoded metadata record value: the frame, the record class and its fields (Kafka's JSON form).

    ``record_class`` is ``None`` for an api key Kafka does not define; ``raw`` then holds the message bytes.
    """

    frame_version: int
    api_key: int
    version: int
    record_class: str | None
    fields: dict[str, Any] | None
    raw: bytes | None = None

    @property
    def record_type(self) -> str | None:
        """Kafka's ``MetadataRecordType`` name, e.g. ``PARTITION_CHANGE_RECORD``."""
        return record_type_name(self.record_class) if self.record_class else None

    def to_json(self) -> dict[str, Any]:
        """Stable JSON form (snake_case frame keys; ``fields`` as Kafka's JSON converter names them)."""
        out: dict[str, Any] = {"frame_version": self.frame_version, "api_key": self.api_key,
                               "record_type": self.record_type, "record_class": self.record_class,
                               "version": self.version, "fields": self.fields}
        if self.raw is not None:
            out["raw"] = self.raw.hex()
        return out


def _short(buf: bytes, pos: int, what: str) -> tuple[int, int]:
    """``AbstractApiMessageSerde.unsignedIntToShort``: an unsigned varint read as a Java int, refused above
    ``Short.MAX_VALUE`` and otherwise cast to a short (so a value past Int32 max, negative in Java, wraps)."""
    try:
        value, nxt = read_unsigned_varint(buf, pos)
    except DecodeError as err:
        raise DecodeError(what.replace(" ", "_"), f"Error while reading {what}: {err.reason}", pos) from None
    if value > SHORT_MAX:
        raise DecodeError(what.replace(" ", "_"), f"Value for {what} was too large.", pos)
    return ((value & 0xFFFF) ^ 0x8000) - 0x8000, nxt


def read_frame(data: bytes) -> tuple[int, int, int, int]:
    """``AbstractApiMessageSerde.read``'s frame (``MetadataRecordSerde``, ``RemoteLogMetadataSerde``): frame
    version (only 1), api key and record version as unsigned varints, each a Java short; returns them and the
    position of the message. Raises :class:`DecodeError` with Kafka's ``MetadataParseException`` wording."""
    frame, pos = _short(data, 0, "frame version")
    if frame == 0:
        raise DecodeError("frame_version", "Could not deserialize metadata record with frame version 0. Note that "
                          "upgrades from the preview release of KRaft in 2.8 to newer versions are not supported.", 0)
    if frame != FRAME_VERSION:
        raise DecodeError("frame_version", f"Could not deserialize metadata record due to unknown frame version "
                          f"{frame}(only frame version {FRAME_VERSION} is supported)", 0)
    api_key, pos = _short(data, pos, "type")
    version, pos = _short(data, pos, "version")
    return frame, api_key, version, pos


def parse_metadata_record(value: bytes | memoryview, release: str | None = None) -> MetadataRecord:
    """Decode one record value with ``MetadataRecordSerde``'s rules, as ``release`` (``"3.9"``...; ``None``: the
    newest) reads it (:mod:`kafkatool.schema.releases`: a record type it lacks is an unknown api key, fields added
    after it are unknown tags); raises :class:`DecodeError` (position relative to the value) where Kafka throws
    ``MetadataParseException``."""
    data = bytes(value)
    frame, api_key, version, pos = read_frame(data)
    message = BY_API_KEY.get(api_key)
    if message is not None and release is not None:
        message = as_read_by(message, message.name, release)
    if message is None:
        return MetadataRecord(frame, api_key, version, None, None, data[pos:])
    try:
        fields, end = read_message(message, data, version, pos)
    except DecodeError as err:
        raise DecodeError(err.field, f"Failed to deserialize record with type {api_key}: {err.reason}",
                          err.position) from None
    if end != len(data):
        raise DecodeError("value", f"Found {len(data) - end} byte(s) of garbage after {api_key}", end)
    return MetadataRecord(frame, api_key, version, message.name, fields)


@dataclass(frozen=True, slots=True)
class MetaRecord:
    """One record of a raft batch: its offset and decoded metadata record (``None`` when undecodable)."""

    offset: int
    record: MetadataRecord | None


@dataclass(frozen=True, slots=True)
class MetaBatch:
    """A raft batch as the listener sees it: offsets, epoch, append time and its metadata records.

    Control batches carry no metadata records (raft consumes them itself).
    """

    base_offset: int
    last_offset: int
    epoch: int
    append_time: int
    is_control: bool
    records: tuple[MetaRecord, ...]
    file: str
    position: int
    controls: tuple[tuple[int, dict[str, Any] | None], ...] = ()
    """A control batch's records: (control type, raft message fields or ``None``)."""


@dataclass(frozen=True, slots=True, order=True)
class SnapshotId:
    """Raft's ``OffsetAndEpoch``: a snapshot's end offset (exclusive) and the epoch of its last record."""

    end_offset: int
    epoch: int


@dataclass(frozen=True, slots=True)
class SnapshotFile:
    """A KRaft snapshot file found in the partition directory: its id and name suffix."""

    name: str
    snapshot_id: SnapshotId
    suffix: str


def meta_batch(batch: RecordBatch, file: str) -> tuple[MetaBatch, list[Defect]]:
    """A deep-read raft batch as the metadata listener sees it, with a defect per undecodable record."""
    defects: list[Defect] = []
    records: list[MetaRecord] = []
    if not batch.is_control:
        for r in batch.records or ():
            try:
                if r.value is None:
                    raise DecodeError("value", "null metadata record value", 0)
                records.append(MetaRecord(r.offset, parse_metadata_record(r.value)))
            except DecodeError as err:
                where = None if r.position is None else r.position
                defects.append(Defect("metadata-record", file, where, err.field, f"offset {r.offset}: {err.reason}"))
                records.append(MetaRecord(r.offset, None))
    controls: list[tuple[int, dict[str, Any] | None]] = []
    if batch.is_control:
        for r in batch.records or ():
            try:
                ctl = parse_control_record(r.key, r.value)
                controls.append((ctl.type, parse_raft_control_message(ctl.type, r.value)
                                 if ctl.type in RAFT_CONTROL_MESSAGES else None))
            except DecodeError as err:
                defects.append(Defect("control-record", file, r.position, err.field,
                                      f"offset {r.offset}: {err.reason}"))
    return MetaBatch(batch.base_offset, batch.last_offset, batch.partition_leader_epoch, batch.max_timestamp,
                     batch.is_control, tuple(records), file, batch.position, tuple(controls)), defects


def _decode(key: bytes | None, value: bytes | None) -> DecodedRecord:
    """The registry entry: a null key, the value decoded or kept as hex with the reason."""
    defects: list[RecordDefect] = []
    key_out: Any = None
    if key is not None:
        key_out = key.hex()
        defects.append(RecordDefect(None, "metadata records have no key"))
    if value is None:
        return DecodedRecord(key_out, None, None, tuple(defects))
    try:
        rec = parse_metadata_record(value)
    except DecodeError as err:
        return DecodedRecord(key_out, value.hex(), None, (*defects, RecordDefect.of(err)))
    if rec.record_class is None:
        defects.append(RecordDefect(None, f"unknown metadata record api key {rec.api_key}"))
    return DecodedRecord(key_out, rec.to_json(), rec.record_class or f"api_key_{rec.api_key}", tuple(defects))


DECODER = register(TopicDecoder("cluster-metadata", (METADATA_TOPIC,), _decode,
                                "KRaft metadata records (MetadataRecordSerde frame, api key, version, fields)"))
