"""``partition.metadata`` (Kafka's ``PartitionMetadataFile``): the partition's topic id.

Two lines, ``version: 0`` and ``topic_id: <22-character base64url UUID>``. Kafka rejects another
version, a missing or malformed line, and an unparsable UUID.
"""

from __future__ import annotations

import base64
import re

from kafkatool.errors import DecodeError
from kafkatool.model import PartitionMetadata

CURRENT_VERSION = 0
_LINE = re.compile(r"^(\S+): ?(.*)$")


def parse_partition_metadata(data: bytes) -> PartitionMetadata:
    """Decode the two lines; errors name the byte position of the bad line."""
    text = data.decode("utf-8", errors="replace")
    lines = text.splitlines()
    if len(lines) < 2:
        raise DecodeError("topic_id", f"expected 2 lines, found {len(lines)}", len(data))
    m = _LINE.match(lines[0])
    if not m or m.group(1) != "version":
        raise DecodeError("version", f"malformed version line {lines[0]!r}", 0)
    try:
        version = int(m.group(2))
    except ValueError:
        raise DecodeError("version", f"{m.group(2)!r} is not a number", 0) from None
    if version != CURRENT_VERSION:
        raise DecodeError("version", f"unrecognised version {version}, expected {CURRENT_VERSION}", 0)
    pos = len(lines[0].encode()) + 1
    m = _LINE.match(lines[1])
    if not m or m.group(1) != "topic_id":
        raise DecodeError("topic_id", f"malformed topic id line {lines[1]!r}", pos)
    raw = _uuid_bytes(m.group(2).strip(), pos)
    return PartitionMetadata(version, m.group(2).strip(), raw.hex())


def _uuid_bytes(text: str, pos: int) -> bytes:
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError:
        raw = b""
    if len(raw) != 16:
        raise DecodeError("topic_id", f"{text!r} is not a base64url UUID", pos)
    return raw


def build_partition_metadata(topic_id: str, version: int = CURRENT_VERSION) -> bytes:
    """The file's bytes as Kafka writes them."""
    return f"version: {version}\ntopic_id: {topic_id}".encode()
