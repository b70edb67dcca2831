"""``partition.metadata`` (Kafka's ``PartitionMetadataFile`` / ``PartitionMetadataReadBuffer`` /
``PartitionMetadata``): the partition's topic id; also Kafka's ``Uuid`` text form, shared with
``meta.properties``.

Kafka writes ``version: 0\\ntopic_id: <id>`` with no final line end; the id is the 16 UUID bytes in
unpadded base64url (22 characters). The reader is looser than the writer, and this module follows it:
each of the first two lines is split on the regex ``:\\s+`` and must give exactly two parts (the key
text itself is never checked), the version must parse as an int and be >= 0 (any newer version is
accepted, for downgrades), the id must decode as ``Uuid.fromString`` does and must not be the zero
UUID. Lines after the second are ignored.
"""

from __future__ import annotations

import base64
import re

from kafkatool.errors import DecodeError
from kafkatool.model import PartitionMetadata
from kafkatool.schema.checkpoint import JAVA_WHITESPACE, java_split, parse_java_int, split_lines

CURRENT_VERSION = 0
VERSION_KEY = "version"
TOPIC_ID_KEY = "topic_id"
SEPARATOR = ": "
LINE_END = "\n"
KEY_VALUE_PATTERN = re.compile(f":[{re.escape(JAVA_WHITESPACE)}]+")
"""``PartitionMetadataReadBuffer``'s ``WHITE_SPACES_PATTERN``, which is really ``:\\s+``."""
UUID_SIZE = 16
MAX_UUID_TEXT = 24
"""``Uuid.fromString`` refuses longer strings before decoding."""
_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")
ZERO_UUID = bytes(UUID_SIZE)


def decode_kafka_uuid(text: str) -> bytes:
    """The 16 bytes of a Kafka ``Uuid`` string, with ``Uuid.fromString``'s rules (Java's strict base64url
    decoder: optional correct ``=`` padding, no other characters). Raises ``ValueError``."""
    if len(text) > MAX_UUID_TEXT:
        raise ValueError(f"input string with prefix {text[:MAX_UUID_TEXT]!r} is too long to be decoded as a base64 "
                         "UUID")
    body = text.rstrip("=")
    padding = len(text) - len(body)
    if not _BASE64URL.fullmatch(body):
        raise ValueError(f"{text!r} holds characters outside the base64url alphabet")
    if len(body) % 4 == 1:
        raise ValueError(f"{text!r}: the last unit does not have enough valid bits")
    if padding and (len(body) % 4 == 0 or padding != 4 - len(body) % 4):
        raise ValueError(f"{text!r} has wrong padding")
    raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    if len(raw) != UUID_SIZE:
        raise ValueError(f"input string {text!r} decoded as {len(raw)} bytes, which is not equal to the expected "
                         f"{UUID_SIZE} bytes of a base64-encoded UUID")
    return raw


def encode_kafka_uuid(raw: bytes) -> str:
    """``Uuid.toString``: unpadded base64url of the 16 bytes."""
    if len(raw) != UUID_SIZE:
        raise ValueError(f"a UUID is {UUID_SIZE} bytes, not {len(raw)}")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def parse_partition_metadata(data: bytes) -> PartitionMetadata:
    """Decode the file as ``PartitionMetadataReadBuffer.read`` does; errors name the byte position of the
    bad line."""
    lines = split_lines(data)
    if not lines:
        raise DecodeError("version", "the file is empty (Kafka fails reading its first line)", 0)
    first = lines[0]
    parts = java_split(KEY_VALUE_PATTERN, first.text)
    if len(parts) != 2:
        raise DecodeError("version", f"line 1: malformed line {first.text!r}", first.position)
    version = parse_java_int(parts[1])
    if version is None:
        raise DecodeError("version", f"line 1: {parts[1]!r} is not a number (malformed line {first.text!r})",
                          first.position)
    if version < CURRENT_VERSION:
        raise DecodeError("version", f"line 1: unrecognized version {version}", first.position)
    if len(lines) < 2:
        raise DecodeError("topic_id", "the file ends after the version line", len(data))
    second = lines[1]
    parts = java_split(KEY_VALUE_PATTERN, second.text)
    if len(parts) != 2:
        raise DecodeError("topic_id", f"line 2: malformed line {second.text!r}", second.position)
    try:
        raw = decode_kafka_uuid(parts[1])
    except ValueError as err:
        raise DecodeError("topic_id", f"line 2: {err}", second.position) from None
    if raw == ZERO_UUID:
        raise DecodeError("topic_id", "line 2: invalid topic ID (the zero UUID)", second.position)
    return PartitionMetadata(version, parts[1], raw.hex())


def build_partition_metadata(topic_id: str, version: int = CURRENT_VERSION) -> bytes:
    """The file's bytes as ``PartitionMetadata.encode`` writes them (no final line end)."""
    decode_kafka_uuid(topic_id)
    return f"{VERSION_KEY}{SEPARATOR}{version}{LINE_END}{TOPIC_ID_KEY}{SEPARATOR}{topic_id}".encode()
