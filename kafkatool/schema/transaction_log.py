"""Records of ``__transaction_state``: the transaction coordinator's log.

Models Kafka's ``TransactionLog`` (core ``kafka.coordinator.transaction.TransactionLog``): a key is a big-endian
int16 version then ``TransactionLogKey`` (transactional id); a value is an int16 version then
``TransactionLogValue`` (producer id and epoch, timeout, state, partitions, timestamps; version 1 is flexible and
adds tagged fields); a null value is a tombstone (an expired transactional id). Layouts follow
``transaction-coordinator/src/main/resources/common/message/TransactionLog{Key,Value}.json``; state ids follow
``TransactionState.fromId``.
"""

from __future__ import annotations

from typing import Any

from kafkatool.errors import DecodeError
from kafkatool.schema.kafka_message import NEVER, Field, Message, read_part
from kafkatool.schema.topic_records import DecodedRecord, RecordDefect, TopicDecoder, register

TRANSACTION_TOPIC = "__transaction_state"

TRANSACTION_LOG_KEY = Message("TransactionLogKey", "0", flexible=NEVER,
                              fields=(Field("TransactionalId", "string", "0"),))
TRANSACTION_LOG_VALUE = Message("TransactionLogValue", "0-1", flexible="1+", fields=(
    Field("ProducerId", "int64"),
    Field("PreviousProducerId", "int64", "1+", tag=0, default=-1),
    Field("NextProducerId", "int64", "1+", tag=1, default=-1),
    Field("ProducerEpoch", "int16"),
    Field("NextProducerEpoch", "int16", "1+", tag=3, default=-1),
    Field("TransactionTimeoutMs", "int32"),
    Field("TransactionStatus", "int8"),
    Field("TransactionPartitions", "[]struct", nullable="0+", fields=(
        Field("Topic", "string"), Field("PartitionIds", "[]int32"))),
    Field("TransactionLastUpdateTimestampMs", "int64"),
    Field("TransactionStartTimestampMs", "int64"),
    Field("ClientTransactionVersion", "int16", "1+", tag=2, default=0),
))

STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead",
          "PrepareEpochFence")


def state_name(status: int) -> str | None:
    """``TransactionState.fromId``'s name for a status byte, ``None`` for an unknown id."""
    return STATES[status] if 0 <= status < len(STATES) else None


def _version(data: bytes, part: str) -> int:
    if len(data) < 2:
        raise DecodeError(f"{part}.version", f"{part} shorter than its 2-byte version ({len(data)} bytes)", 0)
    return int.from_bytes(data[:2], "big", signed=True)


def decode_key(key: bytes) -> dict[str, Any]:
    """The key as ``{"version", "type", "data"}``; an unknown version raises (Kafka's ``UnknownKey``)."""
    version = _version(key, "key")
    return {"version": version, "type": TRANSACTION_LOG_KEY.name,
            "data": read_part(TRANSACTION_LOG_KEY, version, key, "key")}


def decode_value(value: bytes) -> dict[str, Any]:
    """The value as ``{"version", "type", "data", "state"}`` (``state`` is the status byte's name); ``data`` holds
    every field of the version, absent tagged fields at their defaults, as the coordinator's
    ``TransactionLogValue`` object does."""
    version = _version(value, "value")
    data = read_part(TRANSACTION_LOG_VALUE, version, value, "value")
    return {"version": version, "type": TRANSACTION_LOG_VALUE.name, "data": data,
            "state": state_name(data["transactionStatus"])}


def decode(key: bytes | None, value: bytes | None) -> DecodedRecord:
    """Decode one ``__transaction_state`` record; never raises (undecodable parts stay hex, with a defect)."""
    if key is None:
        return DecodedRecord(None, None if value is None else value.hex(), None, (RecordDefect("key", "null key"),))
    try:
        dkey = decode_key(key)
    except DecodeError as err:
        return DecodedRecord(key.hex(), None if value is None else value.hex(), None, (RecordDefect.of(err),))
    if value is None:
        return DecodedRecord(dkey, None, "transaction_metadata")
    try:
        dvalue = decode_value(value)
    except DecodeError as err:
        return DecodedRecord(dkey, value.hex(), "transaction_metadata", (RecordDefect.of(err),))
    defects = () if dvalue["state"] is not None else (
        RecordDefect("value.transactionStatus",
                     f"unknown transaction state id {dvalue['data']['transactionStatus']}"),)
    return DecodedRecord(dkey, dvalue, "transaction_metadata", defects)


DECODER = register(TopicDecoder("transaction-log", (TRANSACTION_TOPIC,), decode,
                                "__transaction_state: transactional id -> producer, state, partitions"))
