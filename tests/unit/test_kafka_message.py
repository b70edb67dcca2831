"""The generated-message reader on hand-made bytes laid out as Kafka's ``MessageDataGenerator`` reads them.

The corpus covers the common shapes (every metadata record, the coordinators' records); these cover the rules
seen rarely on disk: non-flexible lengths and nulls, nullable struct markers, Kafka's string checks.
"""

from __future__ import annotations

import struct

import pytest

from kafkatool.errors import DecodeError
from kafkatool.schema.kafka_message import NEVER, Field, Message, read_message

OLD = Message("Old", "0-1", flexible=NEVER, fields=(
    Field("Name", "string"),
    Field("Note", "string", "1+", nullable="1+"),
    Field("Blob", "bytes", nullable="0+"),
    Field("Ids", "[]int32"),
    Field("Inner", "struct", nullable="0+", fields=(Field("X", "int16"),)),
))
NEW = Message("New", "0", fields=(
    Field("A", "int8"),
    Field("Extra", "struct", nullable="0+", tag=0, fields=(Field("Y", "int32"),)),
))


def s16(text: bytes | None) -> bytes:
    """A non-flexible string: int16 length, -1 for null (written here, independent of the reader)."""
    return struct.pack(">h", -1) if text is None else struct.pack(">h", len(text)) + text


def test_non_flexible_lengths_nulls_and_struct_marker() -> None:
    data = (s16(b"a\xffb") + s16(None) + struct.pack(">i", -1) + struct.pack(">i", 2) + struct.pack(">ii", 7, 8)
            + b"\x01" + struct.pack(">h", 5))
    got, end = read_message(OLD, data, 1)
    assert end == len(data)
    # Java's new String(bytes, UTF_8) replaces a malformed byte; an int8 marker >= 0 means a struct follows.
    assert got == {"name": "a\ufffdb", "note": None, "blob": None, "ids": [7, 8], "inner": {"x": 5}}
    null_inner = s16(b"n") + struct.pack(">i", 0) + struct.pack(">i", 0) + b"\xff"
    assert read_message(OLD, null_inner, 0)[0] == {"name": "n", "blob": "", "ids": [], "inner": None}


def test_non_nullable_null_and_overlong_string_fail_as_in_kafka() -> None:
    with pytest.raises(DecodeError, match="non-nullable field Name was serialized as null"):
        read_message(OLD, s16(None), 0)
    with pytest.raises(DecodeError, match="non-nullable field Ids was serialized as null"):
        read_message(OLD, s16(b"") + struct.pack(">i", 0) + struct.pack(">i", -1), 0)
    flexible = Message("S", "0", fields=(Field("Name", "string"),))
    with pytest.raises(DecodeError, match="string field Name had invalid length 32768"):
        read_message(flexible, b"\x81\x80\x02" + bytes(40000), 0)  # uvarint 32769 = length 32768


def test_tagged_nullable_struct_uses_a_varint_marker() -> None:
    present = b"\x03" + b"\x01" + bytes([0, 6, 1]) + struct.pack(">i", 9) + b"\x00"
    assert read_message(NEW, present, 0)[0] == {"a": 3, "extra": {"y": 9}}
    null = b"\x03" + b"\x01" + bytes([0, 1, 0])
    # Written as null, it differs from the struct's default (new Extra()): Kafka 4.4's --offsets-decoder prints
    # ConsumerGroupMemberMetadataValue's "classicMemberMetadata":null for a real broker's record.
    assert read_message(NEW, null, 0)[0] == {"a": 3, "extra": None}
    assert read_message(NEW, null, 0, defaults=True)[0] == {"a": 3, "extra": None}


def test_absent_tagged_struct_is_the_empty_struct() -> None:
    """Kafka's FieldSpec: a struct's default is ``new T()`` (unless ``"default": "null"``); the converter writes a
    tagged field only when it differs from its default, so absent and present-but-empty are left out."""
    absent = b"\x03" + b"\x00"
    assert read_message(NEW, absent, 0)[0] == {"a": 3}
    assert read_message(NEW, absent, 0, defaults=True)[0] == {"a": 3, "extra": {"y": 0}}
    empty = b"\x03" + b"\x01" + bytes([0, 6, 1]) + struct.pack(">i", 0) + b"\x00"
    assert read_message(NEW, empty, 0)[0] == {"a": 3}
    # An unknown tagged field inside makes it differ from new Extra() (equals compares them), though unshown.
    unknown = b"\x03" + b"\x01" + bytes([0, 9, 1]) + struct.pack(">i", 0) + bytes([1, 5, 1, 7])
    assert read_message(NEW, unknown, 0)[0] == {"a": 3, "extra": {"y": 0}}
    null_default = Message("N", "0", fields=(
        Field("Extra", "struct", nullable="0+", tag=0, default="null", fields=(Field("Y", "int32"),)),))
    assert read_message(null_default, b"\x00", 0)[0] == {}
    assert read_message(null_default, b"\x00", 0, defaults=True)[0] == {"extra": None}
    assert read_message(null_default, bytes([1, 0, 6, 1]) + struct.pack(">i", 0) + b"\x00", 0)[0] == {
        "extra": {"y": 0}}
