"""Internal-topic record decoders against Kafka's own serdes: every record of ``__consumer_offsets`` and
``__transaction_state`` in the corpus decodes, field for field, to the ``decoded`` Kafka wrote in expected.json."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.reading.logdir import read_partition
from kafkatool.schema import group_coordinator, transaction_log
from kafkatool.schema.kafka_message import read_message
from kafkatool.schema.topic_records import decoder_for_topic, decoder_named, decoders
from tests.conftest import corpus_cases, load_expected, shared_dir
from tests.internal_4x import uvarint

runner = CliRunner()
CASE = "internal-topics-hanging-txn-clean"
INTERNAL = ("__consumer_offsets", "__transaction_state")


def internal_partitions() -> list[tuple[str, str]]:
    out = []
    for case in corpus_cases():
        for name in load_expected(case)["before"].get("partitions", {}):
            if name.rsplit("-", 1)[0] in INTERNAL:
                out.append((case, name))
    return out


def expected_records(case: str, name: str) -> dict[int, dict[str, Any]]:
    found = {}
    for lf in load_expected(case)["before"]["partitions"][name]["logFiles"]:
        for batch in lf["batches"]:
            for r in batch.get("records", []):
                if "decoded" in r:
                    found[r["offset"]] = r["decoded"]
    return found


def test_the_corpus_holds_internal_topics() -> None:
    """The cases named by the issue are there (else the parametrised tests below would silently be empty)."""
    shared_dir("corpus")
    names = {name for _, name in internal_partitions()}
    assert {"__consumer_offsets-32", "__transaction_state-17"} <= names


@pytest.mark.parametrize(("case", "name"), internal_partitions())
def test_every_record_decodes_as_kafka_did(case: str, name: str) -> None:
    """Key type/version, value version, both messages and the tombstone flag equal Kafka's decoding."""
    part = read_partition(shared_dir("corpus") / case / "input" / name, name, deep=True)
    decoder = decoder_for_topic(name.rsplit("-", 1)[0])
    assert decoder is not None
    want = expected_records(case, name)
    seen = 0
    for seg in part.segments:
        for batch in seg.entries:
            if batch.is_control:
                continue
            for r in batch.records:
                got = decoder.decode(r.key, r.value)
                exp = want[r.offset]
                assert got.defects == ()
                assert (got.key["version"], got.key["type"], got.key["data"]) == (
                    exp["keyVersion"], exp["keyType"], exp["key"]), r.offset
                if exp["tombstone"]:
                    assert got.value is None, r.offset
                else:
                    # Kafka's decoding is its JSON converter's: a tagged field only when it differs from its default
                    # (the record object kafkatool's decoders return keeps absent tagged fields at their defaults).
                    message = (transaction_log.TRANSACTION_LOG_VALUE if name.startswith("__transaction_state")
                               else group_coordinator.RECORD_TYPES[got.key["version"]][2])
                    converter = read_message(message, r.value, got.value["version"], 2)[0]
                    assert (got.value["version"], got.value["type"], converter) == (
                        exp["valueVersion"], exp["valueType"], exp["value"]), r.offset
                if "transactionStatusName" in exp:
                    assert got.value["state"] == exp["transactionStatusName"]
                seen += 1
    assert seen == len(want)


def test_registry_names_and_topics() -> None:
    """Both decoders are registered by name and chosen by topic; ordinary topics get none."""
    assert decoder_named("group-coordinator") is group_coordinator.DECODER
    assert decoder_named("transaction-log") is transaction_log.DECODER
    assert decoder_for_topic("__consumer_offsets") is group_coordinator.DECODER
    assert decoder_for_topic("__transaction_state") is transaction_log.DECODER
    assert decoder_for_topic("invoices") is None
    assert {"group-coordinator", "transaction-log"} <= set(decoders())


def test_offset_key_first_short_is_the_record_type() -> None:
    """Key versions 0 and 1 are both OffsetCommitKey; the value version is independent of the key's."""
    key = b"\x00\x00" + b"\x00\x01g" + b"\x00\x01t" + (7).to_bytes(4, "big")
    value = b"\x00\x00" + (42).to_bytes(8, "big") + b"\x00\x00" + (5).to_bytes(8, "big")
    got = group_coordinator.decode(key, value)
    assert got.kind == "offset_commit" and got.key["data"] == {"group": "g", "topic": "t", "partition": 7}
    assert got.value["data"] == {"offset": 42, "metadata": "", "commitTimestamp": 5}


def test_unknown_versions_stay_raw_with_a_defect() -> None:
    """An unknown record type, an unknown value version or short bytes never raise."""
    unknown_type = group_coordinator.decode(b"\x00\x63abc", b"\x00\x00")
    assert unknown_type.key == "0063616263" and unknown_type.defects
    bad_value = group_coordinator.decode(b"\x00\x02\x00\x01g", b"\x00\x09\x00")
    assert bad_value.key["data"] == {"group": "g"} and bad_value.value == "000900" and bad_value.defects
    short = transaction_log.decode(b"\x00\x00\x00\x05ab", None)
    assert short.key == "000000056162" and "key" in short.defects[0]
    unknown_key = transaction_log.decode(b"\x00\x05\x00\x01a", b"\x00\x00")
    assert "no version 5" in unknown_key.defects[0]


def test_dump_segment_decodes_internal_topics_in_json() -> None:
    """dump-segment picks the decoder from the partition directory and shows decoded keys and values."""
    root = shared_dir("corpus") / "internal-topics-hanging-txn-clean" / "input"
    res = runner.invoke(app, ["dump-segment", "--print-data", "-f", "jsonl",
                              str(root / "__transaction_state-17" / "00000000000000000000.log")])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    records = [r for row in rows if row.get("type") == "batch" for r in row.get("records", [])]
    want = expected_records("internal-topics-hanging-txn-clean", "__transaction_state-17")
    assert len(records) == len(want)
    for r in records:
        assert r["decoded"]["key"]["data"] == want[r["offset"]]["key"]
        assert r["decoded"]["value"]["data"] == want[r["offset"]]["value"]
    plain = runner.invoke(app, ["dump-segment", "--print-data", "--decoder", "none", "-f", "jsonl",
                                str(root / "__transaction_state-17" / "00000000000000000000.log")])
    assert "decoded" not in plain.stdout


def kafka_lines(path: str, decoder: str, version: str = "4.4") -> dict[int, tuple[str | None, str | None]]:
    """``dump-segment -f kafka --decoder`` record lines as ``version`` prints them: offset -> (key, payload)."""
    res = runner.invoke(app, ["dump-segment", "-f", "kafka", "--kafka-version", version, "--decoder", decoder, path])
    assert res.exit_code == 0, res.output
    out = {}
    for line in res.stdout.splitlines():
        if line.startswith("| offset: ") and " key: " in line:
            offset = int(line.split()[2])
            rest = line.split(" key: ", 1)[1]
            key, _, payload = rest.partition(" payload: ")
            out[offset] = (key, payload or None)
    return out


def test_kafka_format_offsets_decoder_prints_kafkas_json() -> None:
    """As DumpLogSegments --offsets-decoder: {"type","data"} keys, {"version","data"} values, <DELETE> for
    tombstones, the consumer protocol decoded inside classic group members."""
    name = "__consumer_offsets-32"
    root = shared_dir("corpus") / CASE / "input" / name
    want = expected_records(CASE, name)
    seen = 0
    for seg in sorted(root.glob("*.log")):
        for offset, (key, payload) in kafka_lines(str(seg), "group-coordinator").items():
            exp = want[offset]
            assert json.loads(key) == {"type": str(exp["keyVersion"]), "data": exp["key"]}
            if exp["tombstone"]:
                assert payload == "<DELETE>"
                continue
            value = json.loads(payload)
            assert value["version"] == str(exp["valueVersion"])
            if exp["valueType"] == "GroupMetadataValue":
                for got, raw in zip(value["data"]["members"], exp["value"]["members"], strict=True):
                    sub = base64.b64decode(raw["subscription"])
                    assert got["subscription"]["topics"] == [sub[8:8 + int.from_bytes(sub[6:8], "big")].decode()]
                    assert {tp["topic"] for tp in got["assignment"]["assignedPartitions"]} == {"invoices"}
            else:
                assert value["data"] == exp["value"]
            seen += 1
    assert seen == sum(1 for e in want.values() if not e["tombstone"])


def test_kafka_format_transaction_log_decoder_prints_kafkas_text() -> None:
    """As TransactionLog.formatRecordKeyAndValue: the transactional id, then producer, state, partitions,
    timestamps and timeout from Kafka's decoding of the same record."""
    name = "__transaction_state-17"
    root = shared_dir("corpus") / CASE / "input" / name
    want = expected_records(CASE, name)
    # The corpus's Kafka commit prints the transaction log as 3.9 and 4.0 do (4.1+ prints JSON).
    lines = kafka_lines(str(root / "00000000000000000000.log"), "transaction-log", "4.0")
    assert set(lines) == set(want)
    for offset, (key, payload) in lines.items():
        exp = want[offset]
        v = exp["value"]
        assert key == f"transaction_metadata::transactionalId={exp['key']['transactionalId']}"
        head, _, tail = payload.partition(",partitions=[")
        assert head == (f"producerId:{v['producerId']},producerEpoch:{v['producerEpoch']},"
                        f"state={exp['transactionStatusName']}")
        shown, _, tail = tail.partition("],")
        listed = [] if exp["transactionStatusName"] == "Empty" else [
            f"{p['topic']}-{i}" for p in v["transactionPartitions"] or () for i in p["partitionIds"]]
        assert sorted(filter(None, shown.split(","))) == sorted(listed)
        assert tail == f"txnLastUpdateTimestamp={v['transactionLastUpdateTimestampMs']},txnTimeoutMs=" \
                       f"{v['transactionTimeoutMs']}"


def compact(text: str) -> bytes:
    return uvarint(len(text) + 1) + text.encode()


def test_flexible_transaction_log_value_with_tagged_fields() -> None:
    """TransactionLogValue v1 (transaction.version 2) as Kafka's generator lays it out: compact array and strings,
    tagged PreviousProducerId (0), NextProducerId (1), ClientTransactionVersion (2) after the regular fields."""
    value = (b"\x00\x01" + (7001).to_bytes(8, "big") + (5).to_bytes(2, "big") + (60000).to_bytes(4, "big") + b"\x01"
             + uvarint(2) + compact("orders") + uvarint(2) + (3).to_bytes(4, "big") + b"\x00"
             + (1700000001000).to_bytes(8, "big") + (1700000000000).to_bytes(8, "big"))
    tagged = (uvarint(3) + uvarint(0) + uvarint(8) + (7000).to_bytes(8, "big")
              + uvarint(1) + uvarint(8) + (7002).to_bytes(8, "big") + uvarint(2) + uvarint(2) + (2).to_bytes(2, "big"))
    untagged = value + b"\x00"  # no tagged field: the defaults
    value += tagged
    got = transaction_log.decode(b"\x00\x00\x00\x03tx1", value)
    assert got.defects == ()
    assert got.value["state"] == "Ongoing"
    assert got.value["data"] == {
        "producerId": 7001, "previousProducerId": 7000, "nextProducerId": 7002, "producerEpoch": 5,
        "nextProducerEpoch": -1, "transactionTimeoutMs": 60000, "transactionStatus": 1,
        "transactionPartitions": [{"topic": "orders", "partitionIds": [3]}],
        "transactionLastUpdateTimestampMs": 1700000001000, "transactionStartTimestampMs": 1700000000000,
        "clientTransactionVersion": 2}
    assert transaction_log.decode(b"\x00\x00\x00\x03tx1", untagged).value["data"]["previousProducerId"] == -1


def test_share_group_and_flexible_offset_commit_records() -> None:
    """Record type 11 (ShareGroupMetadata) and an OffsetCommitValue v4 (flexible: compact metadata string)."""
    share = group_coordinator.decode(b"\x00\x0b\x00\x02sg", b"\x00\x00" + (9).to_bytes(4, "big") + b"\x00")
    assert (share.kind, share.key["type"], share.value["data"]) == ("share_group_metadata", "ShareGroupMetadataKey",
                                                                    {"epoch": 9})
    v4 = (b"\x00\x04" + (77).to_bytes(8, "big") + (2).to_bytes(4, "big") + compact("m")
          + (1700000000000).to_bytes(8, "big") + b"\x00")
    got = group_coordinator.decode(b"\x00\x01\x00\x01g\x00\x01t" + (0).to_bytes(4, "big"), v4)
    assert got.value["data"] == {"offset": 77, "leaderEpoch": 2, "metadata": "m", "commitTimestamp": 1700000000000,
                                 "topicId": "AAAAAAAAAAAAAAAAAAAAAA"}  # absent tagged topic id: the zero uuid


def test_wrong_decoder_keeps_raw_bytes_and_reports_defects() -> None:
    """Forcing the offsets decoder on the transaction log: keys (record type 0) do not read as OffsetCommitKey, so
    each record keeps its raw hex with a warning defect naming the record's byte position; the dump finishes, exit 1."""
    seg = shared_dir("corpus") / CASE / "input" / "__transaction_state-17" / "00000000000000000000.log"
    res = runner.invoke(app, ["dump-segment", "--decoder", "group-coordinator", "-f", "jsonl", str(seg)])
    assert res.exit_code == 1
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    records = [r for row in rows if row.get("type") == "batch" for r in row["records"]]
    defects = [row for row in rows if row.get("type") == "defect"]
    assert len(records) == len(expected_records(CASE, "__transaction_state-17"))
    assert all(r["decoded"]["defects"] and isinstance(r["decoded"]["key"], str) for r in records)
    assert [d["position"] for d in defects] == [r["position"] for r in records]
    assert all(d["code"] == "record-decode" and d["severity"] == "warning" for d in defects)
