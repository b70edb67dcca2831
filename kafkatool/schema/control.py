"""Control records: the key (version, type) and the end-transaction marker value.

Models Kafka's ``ControlRecordType`` and ``EndTransactionMarker``: both read version and type as
signed int16, reject a negative version as corruption, and parse newer versions as the current one.
Types Kafka does not know keep their number and raw value.
"""

from __future__ import annotations

from construct import Int16sb, Int32sb, Struct

from kafkatool.errors import DecodeError
from kafkatool.model import ControlRecord, ControlType

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


def build_control_key(ctype: int, version: int = 0) -> bytes:
    """The 4-byte control record key."""
    return CONTROL_KEY.build({"version": version, "type": ctype})


def build_end_txn_marker(coordinator_epoch: int, version: int = 0) -> bytes:
    """The 6-byte COMMIT/ABORT marker value."""
    return END_TXN_MARKER_VALUE.build({"version": version, "coordinator_epoch": coordinator_epoch})
