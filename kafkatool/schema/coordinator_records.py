"""What every coordinator-written topic shares (Kafka's ``CoordinatorRecordSerde``): a key whose int16 version
prefix names the record type, then a value whose prefix is its version; a value may be readable only in a
release's preview layout. ``__consumer_offsets`` and ``__share_group_state`` are both written this way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkatool.errors import DecodeError
from kafkatool.schema.kafka_message import Message, read_part, read_part_layouts, version_prefix
from kafkatool.schema.topic_records import DecodedRecord, RecordDefect

PREVIEW = "4.0-preview"
"""The ``layout`` a value carries when only 4.0's preview layout reads it."""


def record_version(data: bytes, part: str) -> int:
    """The int16 a key (its record type) or value (its version) starts with."""
    found = version_prefix(data)
    if found is None:
        raise DecodeError(f"{part}.version", f"Could not read version from {part}'s buffer ({len(data)} bytes)", 0)
    return found


def layout_value(message: Message, preview: Message | None, value: bytes) -> dict[str, Any]:
    """A value as ``{"version", "type", "data"}``, plus ``"layout": PREVIEW`` when only ``preview`` reads it."""
    version = record_version(value, "value")
    if preview is None:
        return {"version": version, "type": message.name, "data": read_part(message, version, value, "value")}
    used, data = read_part_layouts((message, preview), version, value, "value")
    out: dict[str, Any] = {"version": version, "type": used.name, "data": data}
    if used is preview:
        out["layout"] = PREVIEW
    return out


def decode_record(key: bytes | None, value: bytes | None,
                  decode_key: Callable[[bytes], tuple[str, dict[str, Any]]],
                  decode_value: Callable[[int, bytes], dict[str, Any]], decoder: str) -> DecodedRecord:
    """One coordinator record; never raises (undecodable parts stay hex, with a defect)."""
    if key is None:
        return DecodedRecord(None, None if value is None else value.hex(), None,
                             (RecordDefect("key", f"null key (the {decoder} decoder needs a key)"),))
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
