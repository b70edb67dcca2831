"""Control records: the key (version, type), the end-transaction marker value and the raft control messages.

Models Kafka's ``ControlRecordType`` and ``EndTransactionMarker``: both read version and type as
signed int16, reject a negative version as corruption, and parse newer versions as the current one.
Types Kafka does not know keep their number and raw value.

The KRaft types (``LEADER_CHANGE`` 2, ``SNAPSHOT_HEADER`` 3, ``SNAPSHOT_FOOTER`` 4, ``KRAFT_VERSION`` 5,
``KRAFT_VOTERS`` 6) carry a generated message as value, which Kafka's ``ControlRecordUtils`` reads at each
class's current version (0), whatever the message's own leading ``Version`` field says, and without checking
for bytes left over: :func:`parse_raft_control_message` does the same.
"""

from __future__ import annotations

from typing import Any

from construct import Int16sb, Int32sb, Struct

from kafkatool.errors import DecodeError
from kafkatool.model import ControlRecord, ControlType
from kafkatool.schema.kafka_message import Field, Message, read_message

CONTROL_KEY = Struct("version" / Int16sb, "type" / Int16sb)
END_TXN_MARKER_VALUE = Struct("version" / Int16sb, "coordinator_epoch" / Int32sb)

CONTROL_KEY_SIZE = CONTROL_KEY.sizeof()
END_TXN_MARKER_VALUE_SIZE = END_TXN_MARKER_VALUE.sizeof()
TRANSACTION_MARKERS = (ControlType.ABORT.value, ControlType.COMMIT.value)


def parse_control_record(key: bytes | None, value: bytes | None) -> ControlRecord:
    """Decode a control record's key and, for COMMIT/ABORT, its marker value."""
    # Reasons are Kafka's own InvalidRecordException messages, so both output modes can quote them.
    if key is None or len(key) < CONTROL_KEY_SIZE:
        found = "null" if key is None else str(len(key))
        raise DecodeError("control.key", "Invalid value size found for end control record key. Must have at least "
                          f"{CONTROL_KEY_SIZE} bytes, but found only {found}")
    version = int.from_bytes(key[0:2], "big", signed=True)
    ctype = int.from_bytes(key[2:4], "big", signed=True)
    if version < 0:
        raise DecodeError("control.key.version",
                          f"Invalid version found for control record: {version}. May indicate data corruption")
    try:
        name: str | None = ControlType(ctype).name
    except ValueError:
        name = None
    if ctype not in TRANSACTION_MARKERS:
        return ControlRecord(version, ctype, name, value=value)
    if value is None or len(value) < END_TXN_MARKER_VALUE_SIZE:
        found = "null" if value is None else str(len(value))
        raise DecodeError("control.value", "Invalid value size found for end transaction marker. Must have at least "
                          f"{END_TXN_MARKER_VALUE_SIZE} bytes, but found only {found}")
    vversion = int.from_bytes(value[0:2], "big", signed=True)
    if vversion < 0:
        raise DecodeError("control.value.version", f"Invalid version found for end transaction marker: {vversion}. "
                          "May indicate data corruption")
    epoch = int.from_bytes(value[2:6], "big", signed=True)
    return ControlRecord(version, ctype, name, value_version=vversion, coordinator_epoch=epoch, value=value)


def is_transaction_marker_key(key: bytes) -> bool:
    """Whether ``key`` is a COMMIT or ABORT key with a valid (non-negative) version: the records whose value
    Kafka reads as an ``EndTransactionMarker`` (``ControlRecordType.parse`` then ``EndTransactionMarker``)."""
    if len(key) < CONTROL_KEY_SIZE:
        return False
    version = int.from_bytes(key[0:2], "big", signed=True)
    ctype = int.from_bytes(key[2:4], "big", signed=True)
    return version >= 0 and ctype in TRANSACTION_MARKERS


_VOTER = (Field("VoterId", "int32"), Field("VoterDirectoryId", "uuid", "1+"))
RAFT_CONTROL_MESSAGES: dict[int, Message] = {
    ControlType.LEADER_CHANGE.value: Message("LeaderChangeMessage", "0-1", (
        Field("Version", "int16"), Field("LeaderId", "int32"), Field("Voters", "[]Voter", fields=_VOTER),
        Field("GrantingVoters", "[]Voter", fields=_VOTER))),
    ControlType.SNAPSHOT_HEADER.value: Message("SnapshotHeaderRecord", "0", (
        Field("Version", "int16"), Field("LastContainedLogTimestamp", "int64"))),
    ControlType.SNAPSHOT_FOOTER.value: Message("SnapshotFooterRecord", "0", (Field("Version", "int16"),)),
    ControlType.KRAFT_VERSION.value: Message("KRaftVersionRecord", "0", (
        Field("Version", "int16"), Field("KRaftVersion", "int16"))),
    ControlType.KRAFT_VOTERS.value: Message("VotersRecord", "0", (
        Field("Version", "int16"),
        Field("Voters", "[]Voter", fields=(
            Field("VoterId", "int32"), Field("VoterDirectoryId", "uuid"),
            Field("Endpoints", "[]Endpoint", fields=(
                Field("Name", "string"), Field("Host", "string"), Field("Port", "uint16"))),
            Field("KRaftVersionFeature", "KRaftVersionFeature", fields=(
                Field("MinSupportedVersion", "int16"), Field("MaxSupportedVersion", "int16"))))))),
}
"""The raft control messages (``clients/src/main/resources/common/message``), by control type."""
RAFT_CONTROL_READ_VERSION = 0
"""``ControlRecordUtils``' ``*_CURRENT_VERSION``: every raft control value is read at version 0."""


def raft_message_class(ctype: int) -> str | None:
    """The generated class holding control type ``ctype``'s value, ``None`` for non-raft types."""
    message = RAFT_CONTROL_MESSAGES.get(ctype)
    return message.name if message else None


def parse_raft_control_message(ctype: int, value: bytes | None) -> dict[str, Any]:
    """A raft control record's value as Kafka's JSON converter writes it (camelCase fields).

    Raises :class:`DecodeError` for a non-raft type, a null value or bytes that end too early.
    """
    message = RAFT_CONTROL_MESSAGES.get(ctype)
    if message is None:
        raise DecodeError("control.type", f"control type {ctype} carries no raft message")
    if value is None:
        raise DecodeError("control.value", f"{message.name} value is null")
    try:
        fields, _ = read_message(message, value, RAFT_CONTROL_READ_VERSION)
    except DecodeError as err:
        raise DecodeError(f"control.value.{err.field}", f"{message.name}: {err.reason}", err.position) from None
    return fields


def build_control_key(ctype: int, version: int = 0) -> bytes:
    """The 4-byte control record key."""
    return CONTROL_KEY.build({"version": version, "type": ctype})


def build_end_txn_marker(coordinator_epoch: int, version: int = 0) -> bytes:
    """The 6-byte COMMIT/ABORT marker value."""
    return END_TXN_MARKER_VALUE.build({"version": version, "coordinator_epoch": coordinator_epoch})
