"""DumpLogSegments' record parsers for the internal topics, for ``dump-segment --format kafka --decoder NAME``.

Models core ``kafka.tools.DumpLogSegments``' ``OffsetsMessageParser`` (``--offsets-decoder``: the key as
``{"type":"<record type>","data":{...}}``, the value as ``{"version":"<v>","data":{...}}`` or ``<DELETE>``, a
classic consumer group's member subscription and assignment decoded in place) and ``TransactionLogMessageParser``
(``--transaction-log-decoder``: ``TransactionLog.formatRecordKeyAndValue``), ``ClusterMetadataLogMessageParser``
(``--cluster-metadata-decoder``), ``ShareGroupStateMessageParser`` (``--share-group-state-decoder``, 4.0+) and
``RemoteMetadataLogMessageParser`` (``--remote-log-metadata-decoder``: the ``toString`` of what
``RemoteLogMetadataSerde`` builds). Each parser returns the key and payload strings DumpLogSegments prints,
``None`` for what it leaves out.
"""

from __future__ import annotations

import base64
import contextlib
import re
from collections.abc import Callable
from decimal import Decimal
from functools import partial
from typing import Any

from kafkatool.engine.dls import DlsError, KafkaLayout, jackson
from kafkatool.errors import DecodeError
from kafkatool.model import Record
from kafkatool.schema import group_coordinator as gc
from kafkatool.schema import metadata_records as mr
from kafkatool.schema import remote_log_metadata as rlm
from kafkatool.schema import share_group_state as sgs
from kafkatool.schema import transaction_log as tl
from kafkatool.schema.kafka_message import read_message, version_prefix
from kafkatool.schema.messages import VALUE, coordinator_message, coordinator_record_types
from kafkatool.schema.releases import as_read_by
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


def offsets_parser(record: Record, release: str | None = None) -> tuple[str | None, str | None]:
    """``OffsetsMessageParser.parse``, as ``release``'s serde reads (``None``: the newest): a record type it
    does not know is skipped, a value it lays out differently is read with its layout."""
    if record.key is None:
        raise DlsError(f"Failed to decode message at offset {record.offset} using offset topic decoder "
                          "(message had a missing key)")
    rtype = version_prefix(record.key)
    if rtype is not None and rtype not in coordinator_record_types(gc.OFFSETS_TOPIC, release):
        return f"Unknown record type {rtype} at offset {record.offset}, skipping.", None
    decoded = gc.decode(record.key, record.value)
    if decoded.defects:
        return f"Error at offset {record.offset}, skipping. {decoded.defects[0]}", None
    key = decoded.key
    value = decoded.value
    key_text = jackson({"type": str(key["version"]), "data": key["data"]})
    if value is None or record.value is None:
        return key_text, "<DELETE>"
    # The converter writes a tagged field only when it differs from its default: read the value as it does,
    # with that release's class (fields added after it skipped, its version checks).
    message = coordinator_message(gc.OFFSETS_TOPIC, VALUE, rtype, release) or gc.RECORD_TYPES[rtype][2]
    try:
        data = read_message(message, record.value, value["version"], 2)[0]
    except DecodeError as err:  # CoordinatorRecordSerde.readMessage's wrapping of the generated read's error
        return (f"Error at offset {record.offset}, skipping. Could not read record with version {value['version']} "
                f"from value's buffer due to: {java_read_error(err.reason)}."), None
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


def transaction_log_json_parser(record: Record, status_names: bool = True,
                                release: str | None = None) -> tuple[str | None, str | None]:
    """4.1+'s ``TransactionLogMessageParser``: the key and value as the offsets decoder prints its records (the key
    ``{"type":"<version>","data":...}``, the value ``{"version":"<v>","data":...}`` in the converter's JSON,
    ``<DELETE>`` for a tombstone), the value read with ``release``'s class (:mod:`kafkatool.schema.releases`). 4.4
    replaces the status byte by ``TransactionState``'s name (``status_names``); 4.1 to 4.3 print the number."""
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
        value_message = as_read_by(tl.TRANSACTION_LOG_VALUE, "TransactionLogValue", release) \
            or tl.TRANSACTION_LOG_VALUE
        data = read_message(value_message, record.value, value_version, 2)[0]
    except DecodeError as err:
        return f"Error at offset {record.offset}, skipping. {err.reason}", None
    state = tl.state_name(data["transactionStatus"]) if status_names else None
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


def cluster_metadata_parser(record: Record, release: str | None = None) -> tuple[str | None, str | None]:
    """``ClusterMetadataLogMessageParser.parse`` (``--cluster-metadata-decoder``): no key; the payload
    ``{"type":"<MetadataRecordType>","version":<v>,"data":{...}}``, or ``Error at <offset>, skipping. <message>``
    where ``MetadataRecordSerde`` throws (the message is Kafka's, details after it are left out). ``release``
    (``None``: the newest) reads with its own classes: a record version above its highest fails where a nested
    struct's class checks it, an api key it lacks is unknown."""
    if record.value is None:
        return None, f"Error at {record.offset}, skipping. null"
    try:
        rec = mr.parse_metadata_record(record.value, release)
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


def java_read_error(reason: str) -> str:
    """The message of the exception Kafka's generated ``read`` throws where kafkatool's reader stopped with
    ``reason`` (Java names the field in camelCase; a cut buffer is a ``BufferUnderflowException`` without one)."""
    found = re.fullmatch(r"non-nullable field (\w+) was serialized as null", reason)
    if found:
        name = found.group(1)
        return f"non-nullable field {name[:1].lower()}{name[1:]} was serialized as null"
    found = re.fullmatch(r"array of (\d+) elements cannot fit in the (\d+) bytes left", reason)
    if found:
        return (f"Tried to allocate a collection of size {found.group(1)}, but there are only {found.group(2)} "
                "bytes remaining.")
    if re.match(r"needs \d+ bytes", reason):
        return "null"
    return reason


def _share_parser(java_tool: bool, release: str | None = None) -> Parser:
    """``ShareGroupStateMessageParser.parse``. 4.0's Scala tool reads values in 4.0's preview layouts, labels the
    value ``{"type":"<version>",...}`` as it does the key and names the share group state decoder when a key is
    missing; 4.1+'s Java tool (``CoordinatorRecordMessageParser``) reads the 4.1+ layouts and labels the value
    ``{"version":"<version>",...}`` as the offsets decoder does, with ``release``'s classes (fields added after
    it skipped, :mod:`kafkatool.schema.releases`)."""
    value_label = "version" if java_tool else "type"
    missing = "the specified decoder" if java_tool else "share group state topic decoder"

    def parse(record: Record) -> tuple[str | None, str | None]:
        if record.key is None:
            raise DlsError(f"Failed to decode message at offset {record.offset} using {missing} "
                           "(message had a missing key)")
        rtype = version_prefix(record.key)
        if rtype is None:
            return f"Error at offset {record.offset}, skipping. Could not read version from key's buffer.", None
        if rtype not in sgs.RECORD_TYPES:
            return f"Unknown record type {rtype} at offset {record.offset}, skipping.", None
        part, version = "key", rtype
        try:
            key_message = sgs.RECORD_TYPES[rtype][1]
            key = read_message(key_message, record.key, rtype, 2)[0]
            key_text = jackson({"type": str(rtype), "data": key})
            if record.value is None:
                return key_text, "<DELETE>"
            part, version = "value", version_prefix(record.value)
            if version is None:
                return f"Error at offset {record.offset}, skipping. Could not read version from value's buffer.", None
            message = sgs.RECORD_TYPES[rtype][2] if java_tool else sgs.PREVIEW_VALUES[rtype]
            message = as_read_by(message, message.name, release) or message
            # The converter writes a tagged field only when it differs from its default: read the value as it does.
            data = read_message(message, record.value, version, 2)[0]
        except DecodeError as err:  # CoordinatorRecordSerde.readMessage's wrapping of the generated read's error
            return (f"Error at offset {record.offset}, skipping. Could not read record with version {version} from "
                    f"{part}'s buffer due to: {java_read_error(err.reason)}."), None
        return key_text, jackson({value_label: str(version), "data": data})

    return parse


def _java_map(epochs: list[dict[str, Any]]) -> str:
    """``TreeMap<Integer, Long>.toString`` of the segment's leader epochs (``HashMap.put``: the last one wins)."""
    by_epoch = {e["leaderEpoch"]: e["offset"] for e in epochs}
    return "{" + ", ".join(f"{k}={by_epoch[k]}" for k in sorted(by_epoch)) + "}"


def _custom(data: dict[str, Any]) -> str:
    """``Optional<CustomMetadata>.toString``."""
    raw = data.get("customMetadata")
    if raw is None:
        return "Optional.empty"
    return f"Optional[CustomMetadata{{{len(base64.b64decode(raw))} bytes}}]"


def _tip(t: dict[str, Any]) -> str:
    """``TopicIdPartition.toString``: ``<id>:<topic>-<partition>``."""
    return f"{t['id']}:{t['name']}-{t['partition']}"


def _segment_text(api_key: int, data: dict[str, Any], txn_index_empty: bool) -> str:
    """The ``toString`` of the ``RemoteLogMetadata`` a remote-log-metadata record deserializes to; raises
    :class:`DlsError` where its constructors throw (their messages)."""
    java_bool = {True: "true", False: "false"}
    if api_key == 2:
        state = rlm.PARTITION_DELETE_STATES.get(data["remotePartitionDeleteState"])
        if state is None:
            raise DlsError("null")  # Objects.requireNonNull(state)
        return (f"RemotePartitionDeleteMetadata{{topicPartition={_tip(data['topicIdPartition'])}, state={state}, "
                f"eventTimestampMs={data['eventTimestampMs']}, brokerId={data['brokerId']}}}")
    state = rlm.SEGMENT_STATES.get(data["remoteLogSegmentState"])
    txn = f", txnIdxEmpty={java_bool[bool(data.get('txnIndexEmpty', False))]}" if txn_index_empty else ""
    if api_key == 1:
        if state is None:
            raise DlsError("state can not be null")
        seg = data["remoteLogSegmentId"]
        return (f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId=RemoteLogSegmentId{{topicIdPartition="
                f"{_tip(seg['topicIdPartition'])}, id={seg['id']}}}, customMetadata={_custom(data)}, state={state}, "
                f"eventTimestampMs={data['eventTimestampMs']}, brokerId={data['brokerId']}}}")
    start, end = data["startOffset"], data["endOffset"]
    if api_key == 0:
        if start < 0:
            raise DlsError(f"Unexpected start offset = {start}. StartOffset for a remote segment cannot be negative")
        if end < start:
            raise DlsError(f"Unexpected end offset = {end}. EndOffset for a remote segment cannot be less than "
                           f"startOffset = {start}")
    if not data["segmentLeaderEpochs"]:
        raise DlsError("segmentLeaderEpochs can not be null or empty")
    if state is None:
        raise DlsError("state can not be null")
    epochs = _java_map(data["segmentLeaderEpochs"])
    if api_key == 3:
        return (f"RemoteLogSegmentMetadataSnapshot{{segmentId={data['segmentId']}, startOffset={start}, "
                f"endOffset={end}, maxTimestampMs={data['maxTimestampMs']}, segmentLeaderEpochs={epochs}, "
                f"segmentSizeInBytes={data['segmentSizeInBytes']}, customMetadata={_custom(data)}, "
                f"state={state}{txn}}}")
    seg = data["remoteLogSegmentId"]
    return (f"RemoteLogSegmentMetadata{{remoteLogSegmentId=RemoteLogSegmentId{{topicIdPartition="
            f"{_tip(seg['topicIdPartition'])}, id={seg['id']}}}, startOffset={start}, endOffset={end}, "
            f"brokerId={data['brokerId']}, maxTimestampMs={data['maxTimestampMs']}, "
            f"eventTimestampMs={data['eventTimestampMs']}, segmentLeaderEpochs={epochs}, "
            f"segmentSizeInBytes={data['segmentSizeInBytes']}, customMetadata={_custom(data)}, state={state}{txn}}}")


def _remote_parser(txn_index_empty: bool) -> Parser:
    """``RemoteMetadataLogMessageParser.parse``: no key; the payload is ``RemoteLogMetadataSerde.deserialize``'s
    object's ``toString`` (4.0+ adds ``txnIdxEmpty``), or ``Error at offset <o>, skipping. <message>``."""

    def parse(record: Record) -> tuple[str | None, str | None]:
        if record.value is None:
            return None, f"Error at offset {record.offset}, skipping. null"
        value = bytes(record.value)
        try:
            api_key = mr.read_frame(value)[1]
        except DecodeError as err:  # MetadataParseException's own message
            return None, f"Error at offset {record.offset}, skipping. {err.reason.split(':', 1)[0]}"
        if api_key not in rlm.BY_API_KEY:  # MetadataRecordType.fromId's exception, wrapped
            return None, (f"Error at offset {record.offset}, skipping. org.apache.kafka.common.errors."
                          f"UnsupportedVersionException: Unknown metadata id {api_key}")
        try:
            rec = rlm.parse_remote_log_metadata(value)
            return None, _segment_text(api_key, rec["data"], txn_index_empty)
        except DecodeError as err:
            message = err.reason if err.reason.startswith("Found ") else \
                f"Failed to deserialize record with type {api_key}"
            return None, f"Error at offset {record.offset}, skipping. {message}"
        except DlsError as err:
            return None, f"Error at offset {record.offset}, skipping. {err}"

    return parse


PARSERS: dict[str, Parser] = {"group-coordinator": offsets_parser, "transaction-log": transaction_log_parser,
                              "cluster-metadata": cluster_metadata_parser,
                              "share-group-state": _share_parser(java_tool=True),
                              "remote-log-metadata": _remote_parser(txn_index_empty=True)}

#: The ``--decoder`` names whose DumpLogSegments option each release line lacks (3.9 has no
#: ``--share-group-state-decoder``).
MISSING: dict[str, frozenset[str]] = {"3.9": frozenset({"share-group-state"})}


def parser_names(layout: KafkaLayout) -> list[str]:
    """The ``--decoder`` names that release line's DumpLogSegments has an option for."""
    return sorted(set(PARSERS) - MISSING.get(layout.name, frozenset()))


def _java_missing_key(parser: Parser) -> Parser:
    """4.1+'s ``CoordinatorRecordMessageParser`` (offsets and transaction log decoders): a record without a key
    stops the dump naming "the specified decoder"."""

    def parse(record: Record) -> tuple[str | None, str | None]:
        if record.key is None:
            raise DlsError(f"Failed to decode message at offset {record.offset} using the specified decoder "
                           "(message had a missing key)")
        return parser(record)

    return parse


def parser_for(name: str, layout: KafkaLayout) -> Parser | None:
    """The record parser of ``--decoder name`` as the release line ``layout`` prints it; ``None`` when that
    line's DumpLogSegments has no such decoder."""
    if name in MISSING.get(layout.name, ()):
        return None
    if name == "transaction-log" and layout.transaction_log_json:
        return _java_missing_key(partial(transaction_log_json_parser, status_names=layout.transaction_status_names,
                                         release=layout.name))
    if name == "group-coordinator":  # over that release's serde; 4.1+: the Java tool
        parser: Parser = partial(offsets_parser, release=layout.name)
        return _java_missing_key(parser) if layout.leader_change_json else parser
    if name == "share-group-state":  # 4.0: the Scala tool
        return _share_parser(java_tool=layout.leader_change_json, release=layout.name)
    if name == "cluster-metadata":
        return partial(cluster_metadata_parser, release=layout.name)
    if name == "remote-log-metadata" and layout.name == "3.9":
        return _remote_parser(txn_index_empty=False)
    return PARSERS.get(name)
