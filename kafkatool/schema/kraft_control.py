"""KRaft control record values read as Kafka's generated ``read`` methods read them, failures as Java's.

Models the generated ``LeaderChangeMessage``, ``SnapshotHeaderRecord``, ``SnapshotFooterRecord``,
``KRaftVersionRecord`` and ``VotersRecord`` readers over a ``ByteBufferAccessor`` (flexible versions: compact
strings and arrays, tagged fields skipped), and their ``*JsonConverter.write`` field order: each reader returns
the JSON tree (a dict in the converter's order). A cut value raises :class:`~kafkatool.schema.java.JavaException`
with a null message (``BufferUnderflowException``), a null array or string the generated code's
``non-nullable field ... was serialized as null``. Strings decode as Java's UTF-8 decoder does.

:func:`kafkatool.schema.control.parse_raft_control_message` reads the same messages from their declarations
with kafkatool's own error wording; this module is for callers that reproduce ``DumpLogSegments``' text
(``printControlRecord``), whose corner cases (the 4.x ``LeaderChange`` read at version 0, Java's messages) it
keeps exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from construct import Int16sb, Int16ub, Int32sb, Int64sb, Struct

from kafkatool.errors import DecodeError
from kafkatool.schema.fixed import derive_struct
from kafkatool.schema.java import JavaException, java_utf8
from kafkatool.schema.kafka_message import UUID_SIZE, ZERO_UUID_TEXT, uuid_text
from kafkatool.schema.varint import read_unsigned_varint

_INT16 = derive_struct(Struct("v" / Int16sb)).unpack
_UINT16 = derive_struct(Struct("v" / Int16ub)).unpack
_INT32 = derive_struct(Struct("v" / Int32sb)).unpack
_INT64 = derive_struct(Struct("v" / Int64sb)).unpack


class _Reader:
    """``ByteBufferAccessor`` over a control record value (flexible versions: compact types)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def _take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise JavaException(None, "control.value", self.pos)  # BufferUnderflowException
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def int16(self) -> int:
        return int(_INT16(self._take(2))[0])

    def uint16(self) -> int:
        return int(_UINT16(self._take(2))[0])

    def int32(self) -> int:
        return int(_INT32(self._take(4))[0])

    def int64(self) -> int:
        return int(_INT64(self._take(8))[0])

    def uvarint(self) -> int:
        try:
            value, self.pos = read_unsigned_varint(self.data, self.pos)
        except DecodeError as err:
            raise JavaException(err.reason, "control.value", err.position) from None
        return value

    def uuid(self) -> str:
        return uuid_text(self._take(UUID_SIZE))

    def compact_string(self, name: str) -> str:
        length = self.uvarint() - 1
        if length < 0:
            raise JavaException(f"non-nullable field {name} was serialized as null", "control.value", self.pos)
        return java_utf8(self._take(length))

    def compact_array(self, name: str, item: Callable[[], dict[str, Any]]) -> list[dict[str, Any]]:
        length = self.uvarint() - 1
        if length < 0:
            raise JavaException(f"non-nullable field {name} was serialized as null", "control.value", self.pos)
        return [item() for _ in range(length)]

    def tagged_fields(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()
            self._take(self.uvarint())


def _leader_change(r: _Reader) -> dict[str, Any]:
    version = r.int16()
    leader = r.int32()

    def voter() -> dict[str, Any]:
        v: dict[str, Any] = {"voterId": r.int32()}
        r.tagged_fields()
        return v

    voters = r.compact_array("voters", voter)
    granting = r.compact_array("grantingVoters", voter)
    r.tagged_fields()
    if version >= 1:  # written at the record's own version; read at version 0, so the ids are the zero UUID
        for v in voters + granting:
            v["voterDirectoryId"] = ZERO_UUID_TEXT
    return {"version": version, "leaderId": leader, "voters": voters, "grantingVoters": granting}


def _snapshot_header(r: _Reader) -> dict[str, Any]:
    out = {"version": r.int16(), "lastContainedLogTimestamp": r.int64()}
    r.tagged_fields()
    return out


def _snapshot_footer(r: _Reader) -> dict[str, Any]:
    out = {"version": r.int16()}
    r.tagged_fields()
    return out


def _kraft_version(r: _Reader) -> dict[str, Any]:
    out = {"version": r.int16(), "kRaftVersion": r.int16()}
    r.tagged_fields()
    return out


def _voters(r: _Reader) -> dict[str, Any]:
    version = r.int16()

    def endpoint() -> dict[str, Any]:
        out = {"name": r.compact_string("name"), "host": r.compact_string("host"), "port": r.uint16()}
        r.tagged_fields()
        return out

    def voter() -> dict[str, Any]:
        out: dict[str, Any] = {"voterId": r.int32(), "voterDirectoryId": r.uuid()}
        out["endpoints"] = r.compact_array("endpoints", endpoint)
        feature = {"minSupportedVersion": r.int16(), "maxSupportedVersion": r.int16()}
        r.tagged_fields()
        out["kRaftVersionFeature"] = feature
        r.tagged_fields()
        return out

    voters = r.compact_array("voters", voter)
    r.tagged_fields()
    return {"version": version, "voters": voters}


READERS: dict[int, Callable[[_Reader], dict[str, Any]]] = {
    2: _leader_change, 3: _snapshot_header, 4: _snapshot_footer, 5: _kraft_version, 6: _voters}
"""The generated reader of each KRaft control type (``ControlRecordType`` id)."""


def read_kraft_control(control_type: int, value: bytes | None) -> dict[str, Any]:
    """The JSON tree of a KRaft control record's value (types 2 to 6, a ``KeyError`` for others); raises
    :class:`JavaException` where Kafka's reader throws (a null value: a null message)."""
    reader = READERS[control_type]
    if value is None:
        raise JavaException(None, "control.value")
    return reader(_Reader(value))


__all__ = ["READERS", "read_kraft_control"]
