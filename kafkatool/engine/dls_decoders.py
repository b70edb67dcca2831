"""DumpLogSegments' record parsers for the internal topics, for ``dump-segment --format kafka --decoder NAME``.

Models core ``kafka.tools.DumpLogSegments``' ``OffsetsMessageParser`` (``--offsets-decoder``: the key as
``{"type":"<record type>","data":{...}}``, the value as ``{"version":"<v>","data":{...}}`` or ``<DELETE>``, a
classic consumer group's member subscription and assignment decoded in place) and ``TransactionLogMessageParser``
(``--transaction-log-decoder``: ``TransactionLog.formatRecordKeyAndValue``). Each parser returns the key and
payload strings DumpLogSegments prints, ``None`` for what it leaves out.
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from kafkatool.engine.dls import DlsError, KafkaLayout, jackson
from kafkatool.errors import DecodeError
from kafkatool.model import Record
from kafkatool.schema import group_coordinator as gc
from kafkatool.schema import metadata_records as mr
from kafkatool.schema import transaction_log as tl
from kafkatool.schema.kafka_message import read_message, version_prefix
from kafkatool.storage.java_hash import scala_hash_set_order

Parser = Callable[[Record], tuple[str | None, str | None]]

def _consumer_members(data: dict[str, Any]) -> dict[str, Any]:
    """``prepareGroupMetadataValue``: members' subscription/assignment decoded when the protocol type is
    ``consumer``; bytes that do not decode stay as they are."""
    if data.get("protocolType") != "consumer":
        return data
    members = []
    for m in data.get("members") or []:
        m = dict(m)
        for name, message in (("subscription", gc.CONSUMER_PROTOCOL_SUBSCRIPTION),
                              ("assignment", gc.CONSUMER_PROTOCOL_ASSIGNMENT)):
            with contextlib.suppress(DecodeError):  # Kafka swallows it and keeps the bytes
                m[name] = gc.decode_consumer_protocol(message, base64.b64decode(m[name]))
        members.append(m)
    return {**data, "members": members}


def offsets_parser(record: Record) -> tuple[str | None, str | None]:
    """``OffsetsMessageParser.parse``."""
    if record.key is None:
        raise DlsError(f"Failed to decode message at offset {record.offset} using offset topic decoder "
                          "(message had a missing key)")
    rtype = version_prefix(record.key)
    if rtype is not None and rtype not in gc.RECORD_TYPES:
        return f"Unknown record type {rtype} at offset {record.offset}, skipping.", None
    decoded = gc.decode(record.key, record.value)
    if decoded.defects:
        return f"Error at offset {record.offset}, skipping. {decoded.defects[0]}", None
    key = decoded.key
    value = decoded.value
    key_text = jackson({"type": str(key["version"]), "data": key["data"]})
    if value is None or record.value is None:
        return key_text, "<DELETE>"
    # The converter writes a tagged field only when it differs from its default: read the value as it does.
    data = read_message(gc.RECORD_TYPES[rtype][2], record.value, value["version"], 2)[0]
    if decoded.kind == "group_metadata":
        data = _consumer_members(data)
    return key_text, jackson({"version": str(value["version"]), "data": data})


def transaction_log_parser(record: Record) -> tuple[str | None, str | None]:
    """``TransactionLog.formatRecordKeyAndValue``."""
    version = version_prefix(record.key)
    if version is None:
        raise DlsError("java.nio.BufferUnderflowException")
    if version != 0:
        return f"unknown::version={version}", None
    try:
        tid = tl.decode_key(record.key)["data"]["transactionalId"]
    except DecodeError as err:
        raise DlsError(err.reason) from None
    key = f"transaction_metadata::transactionalId={tid}"
    if record.value is None:
        return key, "<DELETE>"
    value_version = version_prefix(record.value)
    if value_version is None or not tl.TRANSACTION_LOG_VALUE.supports(value_version):
        raise DlsError(f"Unknown version {value_version} from the transaction log message value")
    try:
        value = tl.decode_value(record.value)
    except DecodeError as err:
        raise DlsError(err.reason) from None
    v = value["data"]
    if value["state"] is None:
        raise DlsError(f"Unknown transaction state id {v['transactionStatus']} from the transaction status message")
    tps = [] if value["state"] == "Empty" else [(p["topic"], i) for p in v["transactionPartitions"] or ()
                                                 for i in p["partitionIds"]]
    shown = ",".join(f"{t}-{p}" for t, p in scala_hash_set_order(tps))
    return key, (f"producerId:{v['producerId']},producerEpoch:{v['producerEpoch']},state={value['state']},"
                 f"partitions=[{shown}],txnLastUpdateTimestamp={v['transactionLastUpdateTimestampMs']},"
                 f"txnTimeoutMs={v['transactionTimeoutMs']}")


def transaction_log_json_parser(record: Record) -> tuple[str | None, str | None]:
    """4.1+'s ``TransactionLogMessageParser``: the key and value as the offsets decoder prints its records (the key
    ``{"type":"<version>","data":...}``, the value ``{"version":"<v>","data":...}`` in the converter's JSON with the
    status byte replaced by ``TransactionState``'s name, ``<DELETE>`` for a tombstone)."""
    if record.key is None:
        raise DlsError(f"Failed to decode message at offset {record.offset} using transaction log decoder "
                       "(message had a missing key)")
    version = version_prefix(record.key)
    if version != 0:
        return f"Unknown record type {version} at offset {record.offset}, skipping.", None
    try:
        key = read_message(tl.TRANSACTION_LOG_KEY, record.key, 0, 2)[0]
        key_text = jackson({"type": "0", "data": key})
        if record.value is None:
            return key_text, "<DELETE>"
        value_version = version_prefix(record.value)
        if value_version is None:
            value_version = -1
        data = read_message(tl.TRANSACTION_LOG_VALUE, record.value, value_version, 2)[0]
    except DecodeError as err:
        return f"Error at offset {record.offset}, skipping. {err.reason}", None
    state = tl.state_name(data["transactionStatus"])
    data = {**data, "transactionStatus": state if state is not None else data["transactionStatus"]}
    return key_text, jackson({"version": str(value_version), "data": data})


def java_double(value: float) -> str:
    """Java's ``Double.toString`` (what Jackson writes for a double): shortest digits, ``1.0E7`` form outside
    [1e-3, 1e7)."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        return repr(value)
    _, digits, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    text = "".join(str(d) for d in digits)
    power = exponent + len(text) - 1  # type: ignore[operator]
    return ("-" if value < 0 else "") + f"{text[0]}.{text[1:] or '0'}E{power}"


def _metadata_json(value: Any) -> str:
    """``jackson`` plus doubles (ClientQuotaRecord's value)."""
    if isinstance(value, float):
        return java_double(value)
    if isinstance(value, list):
        return "[" + ",".join(_metadata_json(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{jackson(k)}:{_metadata_json(v)}" for k, v in value.items()) + "}"
    return jackson(value)


def cluster_metadata_parser(record: Record) -> tuple[str | None, str | None]:
    """``ClusterMetadataLogMessageParser.parse`` (``--cluster-metadata-decoder``): no key; the payload
    ``{"type":"<MetadataRecordType>","version":<v>,"data":{...}}``, or ``Error at <offset>, skipping. <message>``
    where ``MetadataRecordSerde`` throws (the message is Kafka's, details after it are left out)."""
    if record.value is None:
        return None, f"Error at {record.offset}, skipping. null"
    try:
        rec = mr.parse_metadata_record(record.value)
    except DecodeError as err:
        message = err.reason
        if message.startswith("Failed to deserialize record with type") or message.startswith("Error while reading"):
            message = message.split(":", 1)[0]
        return None, f"Error at {record.offset}, skipping. {message}"
    if rec.record_class is None:
        return None, (f"Error at {record.offset}, skipping. org.apache.kafka.common.errors."
                      f"UnsupportedVersionException: Unknown metadata id {rec.api_key}")
    return None, (f'{{"type":"{rec.record_type}","version":{rec.version},'
                  f'"data":{_metadata_json(rec.fields)}}}')


PARSERS: dict[str, Parser] = {"group-coordinator": offsets_parser, "transaction-log": transaction_log_parser,
                              "cluster-metadata": cluster_metadata_parser}


def parser_for(name: str, layout: KafkaLayout) -> Parser | None:
    """The record parser of ``--decoder name`` as the release line ``layout`` prints it."""
    if name == "transaction-log" and layout.transaction_log_json:
        return transaction_log_json_parser
    return PARSERS.get(name)
