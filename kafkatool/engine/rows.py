"""Model objects to plain rows: the stable, documented JSON shape of every decoded thing.

Keys are snake_case; a value Kafka stores as a sentinel (-1 producer id, epoch, sequence, timestamp,
``OptionalLong.empty``) becomes ``None`` here, so machine readers never have to know the sentinels.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable
from typing import Any

from kafkatool.errors import DecodeError
from kafkatool.model import (
    AbortedTxn,
    Defect,
    LeaderEpochEntry,
    LegacyBatch,
    LogEntry,
    OffsetIndexEntry,
    ProducerSnapshotEntry,
    Record,
    RecordBatch,
    TimeIndexEntry,
    TimestampType,
)
from kafkatool.schema.control import RAFT_CONTROL_MESSAGES, parse_raft_control_message, raft_message_class
from kafkatool.schema.filenames import FileKind
from kafkatool.schema.topic_records import DecodedRecord, DecodeFn
from kafkatool.storage.codecs import CODEC_BITS, CODEC_LABEL_BY_BITS

Row = dict[str, Any]
DECODERS = ("utf8", "hex", "base64", "json", "none")


def _opt(value: int) -> int | None:
    """Kafka's -1 sentinel to ``None``."""
    return None if value == -1 else value


def decode_bytes(data: bytes | None, decoder: str) -> Any:
    """Render a key or value with ``decoder``: utf8 (invalid bytes replaced, as Kafka's StringDecoder),
    hex, base64, json (parsed; an undecodable value stays a string), or none (omitted)."""
    if data is None or decoder == "none":
        return None
    if decoder == "hex":
        return data.hex()
    if decoder == "base64":
        return base64.b64encode(data).decode("ascii")
    text = data.decode("utf-8", errors="replace")
    if decoder == "json":
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def defect_row(d: Defect) -> Row:
    """A defect as a row."""
    return {"type": "defect", "severity": d.severity, "code": d.code, "position": d.position, "field": d.field,
            "reason": d.reason}


def raft_control_row(ctype: int, value: bytes | None) -> Row:
    """A raft control record's message: its class and fields, or the reason it does not decode."""
    try:
        return {"class": raft_message_class(ctype), "fields": parse_raft_control_message(ctype, value)}
    except DecodeError as err:
        return {"class": raft_message_class(ctype), "fields": None, "error": err.reason}


def decoded_row(d: DecodedRecord) -> Row:
    """An internal-topic record's decoding (``schema.topic_records``): its kind, key, value and defects."""
    return {"kind": d.kind, "key": d.key, "value": d.value, "tombstone": d.value is None and not d.defects,
            "defects": list(d.defects)}


def record_row(r: Record, *, key_decoder: str | None, value_decoder: str | None,
               topic_decoder: DecodeFn | None = None) -> Row:
    """One record; ``key``/``value`` only when a decoder is given (``--print-data``), and ``decoded`` when a
    ``topic_decoder`` (an internal topic's record format) applies."""
    row: Row = {
        "offset": r.offset,
        "position": r.position,
        "timestamp": _opt(r.timestamp),
        "key_size": r.key_size,
        "value_size": r.value_size,
    }
    if r.magic == 2:
        row["sequence"] = _opt(r.sequence)
        row["header_keys"] = [h.key.decode("utf-8", errors="replace") for h in r.headers]
    else:
        row["magic"] = r.magic
        row["crc"] = r.crc
        row["crc_valid"] = r.crc_valid
    if r.control is not None:
        c = r.control
        row["control"] = {"type": c.type, "type_name": c.type_name, "version": c.version,
                          "value_version": c.value_version, "coordinator_epoch": c.coordinator_epoch}
        if c.type in RAFT_CONTROL_MESSAGES:  # KRaft control records: the raft message, as Kafka reads it
            row["control"]["message"] = raft_control_row(c.type, r.value)
    elif key_decoder is not None or value_decoder is not None:
        row["key"] = decode_bytes(r.key, key_decoder or "none")
        row["value"] = decode_bytes(r.value, value_decoder or "none")
        if r.magic == 2:
            row["headers"] = [{"key": h.key.decode("utf-8", errors="replace"),
                               "value": decode_bytes(h.value, value_decoder or "none")} for h in r.headers]
    if topic_decoder is not None and r.control is None:
        row["decoded"] = decoded_row(topic_decoder(r.key, r.value))
    return row


TIMESTAMP_LABELS = (TimestampType.CREATE_TIME.label, TimestampType.LOG_APPEND_TIME.label)  # by attribute bit 3


def entry_row(e: LogEntry, *, key_decoder: str | None = None, value_decoder: str | None = None,
              topic_decoder: DecodeFn | None = None) -> Row:
    """A batch (magic 2) or a shallow legacy message, with its records when they were decoded.

    Written without property calls: on small-batch segments this runs a million times.
    """
    if not isinstance(e, RecordBatch):
        row = _legacy_row(e)
    else:
        attrs = e.attributes
        codec = attrs & CODEC_BITS
        base_seq = e.base_sequence
        pid = e.producer_id
        row = {
            "type": "batch",
            "position": e.position,
            "base_offset": e.base_offset,
            "last_offset": e.base_offset + e.last_offset_delta,
            "count": e.records_count,
            "size": e.batch_length + 12,
            "magic": e.magic,
            "compression": CODEC_LABEL_BY_BITS[codec],
            "timestamp_type": TIMESTAMP_LABELS[(attrs >> 3) & 1],
            "base_timestamp": e.base_timestamp,
            "max_timestamp": None if e.max_timestamp == -1 else e.max_timestamp,
            "partition_leader_epoch": None if e.partition_leader_epoch == -1 else e.partition_leader_epoch,
            "producer_id": None if pid == -1 else pid,
            "producer_epoch": None if e.producer_epoch == -1 else e.producer_epoch,
            "base_sequence": None if base_seq == -1 else base_seq,
            "last_sequence": None if base_seq == -1 else e.last_sequence,
            "is_transactional": bool(attrs & 0x10),
            "is_control": bool(attrs & 0x20),
            "delete_horizon_ms": e.base_timestamp if attrs & 0x40 else None,
            "attributes": attrs,
            "crc": e.crc,
            "crc_valid": e.crc_valid,
        }
    if e.records is not None:
        row["records"] = [record_row(r, key_decoder=key_decoder, value_decoder=value_decoder,
                                     topic_decoder=topic_decoder) for r in e.records]
    return row


def _legacy_row(e: LegacyBatch) -> Row:
    return {
        "type": "batch",
        "position": e.position,
        "base_offset": e.base_offset,
        "last_offset": e.last_offset,
        "count": len(e.records) if e.records is not None else (e.inner_span[1] if e.inner_span else None),
        "size": e.size_in_bytes,
        "magic": e.magic,
        "compression": CODEC_LABEL_BY_BITS[e.attributes & CODEC_BITS],
        "timestamp_type": e.timestamp_type.label,
        "base_timestamp": None,
        "max_timestamp": _opt(e.max_timestamp),
        "partition_leader_epoch": None,
        "producer_id": None,
        "producer_epoch": None,
        "base_sequence": None,
        "last_sequence": None,
        "is_transactional": False,
        "is_control": False,
        "delete_horizon_ms": None,
        "attributes": e.attributes,
        "crc": e.crc,
        "crc_valid": e.crc_valid,
    }


def index_row(e: OffsetIndexEntry) -> Row:
    """An offset index entry."""
    return {"type": "index_entry", "offset": e.offset, "position": e.position}


def time_index_row(e: TimeIndexEntry) -> Row:
    """A time index entry."""
    return {"type": "time_index_entry", "timestamp": e.timestamp, "offset": e.offset}


def aborted_txn_row(e: AbortedTxn) -> Row:
    """A transaction index entry."""
    return {"type": "aborted_txn", "version": e.version, "producer_id": e.producer_id,
            "first_offset": e.first_offset, "last_offset": e.last_offset,
            "last_stable_offset": e.last_stable_offset}


def producer_row(e: ProducerSnapshotEntry) -> Row:
    """A producer-state snapshot entry, with the derived first sequence and first offset."""
    has_batch = e.last_sequence != -1 or e.last_offset != -1
    return {"type": "producer", "producer_id": e.producer_id, "producer_epoch": e.producer_epoch,
            "coordinator_epoch": _opt(e.coordinator_epoch),
            "first_sequence": e.first_sequence if has_batch else None,
            "last_sequence": _opt(e.last_sequence),
            "first_offset": e.first_offset if has_batch else None,
            "last_offset": _opt(e.last_offset), "offset_delta": e.offset_delta,
            "timestamp": _opt(e.timestamp),
            "current_txn_first_offset": _opt(e.current_txn_first_offset)}


def checkpoint_row(topic: str, partition: int, offset: int) -> Row:
    """An offset checkpoint line."""
    return {"type": "checkpoint_entry", "topic": topic, "partition": partition, "offset": offset}


def epoch_row(e: LeaderEpochEntry) -> Row:
    """A leader-epoch-checkpoint line."""
    return {"type": "epoch_entry", "epoch": e.epoch, "start_offset": e.start_offset}


def property_row(key: str, value: Any) -> Row:
    """A key/value fact (partition.metadata, meta.properties, the clean-shutdown marker)."""
    return {"type": "property", "key": key, "value": value}


RowMaker = Callable[[Any], Row]


def _checkpoint_rows(value: Any) -> list[Row]:
    if isinstance(value, dict):
        return [checkpoint_row(tp.topic, tp.partition, off) for tp, off in value.items()]
    return _property_rows(value)


def _property_rows(value: Any) -> list[Row]:
    return [property_row(k, v) for k, v in facts(value).items()]


#: The rows of each small file kind's decoded value (the output side of ``reading.kinds``' registry); a kind
#: not listed shows its value's fields as ``property`` rows.
SMALL_FILE_ROWS: dict[FileKind, Callable[[Any], Iterable[Row]]] = {
    FileKind.OFFSET_INDEX: lambda v: [index_row(e) for e in v.entries],
    FileKind.TIME_INDEX: lambda v: [time_index_row(e) for e in v.entries],
    FileKind.TXN_INDEX: lambda v: (aborted_txn_row(e) for e in v),  # made as written: a zero tail is counted
    FileKind.PRODUCER_SNAPSHOT: lambda v: [producer_row(e) for e in v.entries],
    FileKind.LEADER_EPOCH_CHECKPOINT: lambda v: [epoch_row(e) for e in v],
    FileKind.RECOVERY_POINT_CHECKPOINT: _checkpoint_rows,
    FileKind.REPLICATION_OFFSET_CHECKPOINT: _checkpoint_rows,
    FileKind.LOG_START_OFFSET_CHECKPOINT: _checkpoint_rows,
    FileKind.CLEANER_OFFSET_CHECKPOINT: _checkpoint_rows,
}


def small_file_rows(kind: FileKind, value: Any) -> tuple[Row, Iterable[Row]]:
    """File-level facts beyond size and base offset (a producer snapshot's version and CRC), and one row per
    decoded entry (made as they are taken), for a small file of ``kind`` whose decoded value is ``value``."""
    info: Row = {}
    if kind is FileKind.PRODUCER_SNAPSHOT:
        info = {"version": value.version, "crc": value.crc, "crc_valid": value.crc_valid}
    return info, SMALL_FILE_ROWS.get(kind, _property_rows)(value)


def facts(value: Any) -> dict[str, Any]:
    """The fields of a decoded metadata object (a dataclass or a mapping) as plain key/values."""
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    elif isinstance(value, dict):
        items = dict(value)
    else:
        items = {"value": value}
    return {str(k): (v.hex() if isinstance(v, bytes) else v) for k, v in items.items()}
