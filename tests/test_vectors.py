"""Every byte-exact vector from independent implementations decodes to its sidecar's expected fields.

Record-bearing kinds (record_batch, records, message_set, log_segment) go through the same log walker
the tool uses; tables and varints through the schema functions. Codec payloads and bare legacy
messages are covered in tests/unit/test_codecs.py and tests/unit/test_legacy.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkatool.errors import DecodeError
from kafkatool.model import Defect, LegacyBatch, RecordBatch
from kafkatool.schema.control import parse_control_record
from kafkatool.schema.log_segment import walk_log
from kafkatool.schema.varint import (
    VARLONG_MAX_BYTES,
    encode_unsigned_varint,
    encode_varint,
    read_unsigned_varint,
    read_varint,
)
from tests.conftest import hexs, load_vector, shared_dir, vector_names

RECORD_KINDS = ("record_batch", "records", "message_set", "log_segment")


vectors = vector_names
load = load_vector


def v2_view(e: RecordBatch) -> dict:
    return {
        "magic": 2, "base_offset": e.base_offset, "batch_length": e.batch_length,
        "partition_leader_epoch": e.partition_leader_epoch, "crc": e.crc, "crc_valid": e.crc_valid,
        "attributes": e.attributes, "compression": e.compression.label, "timestamp_type": e.timestamp_type.label,
        "is_transactional": e.is_transactional, "is_control": e.is_control,
        "has_delete_horizon": e.has_delete_horizon, "last_offset_delta": e.last_offset_delta,
        "base_timestamp": e.base_timestamp, "max_timestamp": e.max_timestamp, "producer_id": e.producer_id,
        "producer_epoch": e.producer_epoch, "base_sequence": e.base_sequence, "record_count": e.records_count,
    }


def v2_record_view(r, want: dict) -> dict:
    view = {
        "length": r.size_in_bytes - len(encode_varint(r.size_in_bytes)) if False else None,
        "attributes": r.attributes, "offset_delta": r.offset_delta, "offset": r.offset,
        "timestamp_delta": r.timestamp_delta, "timestamp": r.timestamp, "key": hexs(r.key), "value": hexs(r.value),
        "headers": [{"key": h.key.hex(), "value": hexs(h.value)} for h in r.headers],
    }
    # size_in_bytes counts the length prefix; the sidecar's "length" is the body length.
    body = r.size_in_bytes
    for n in range(1, 6):
        if len(encode_varint(body - n)) == n:
            view["length"] = body - n
            break
    if r.control is not None:
        c = r.control
        ctrl = {"version": c.version, "type": c.type, "type_name": c.type_name}
        if "value_version" in (want.get("control") or {}):
            ctrl["value_version"] = c.value_version
            ctrl["coordinator_epoch"] = c.coordinator_epoch
        view["control"] = ctrl
    return view


def legacy_view(e, want: dict) -> dict:
    view = {"magic": e.magic, "offset": e.offset, "crc": e.crc, "crc_valid": e.crc_valid,
            "attributes": e.attributes, "compression": e.compression.label, "key": hexs(e.key),
            "value": hexs(e.value)}
    if isinstance(e, LegacyBatch):
        view["message_size"] = e.message_size
    if e.magic == 1:
        view["timestamp_type"] = e.timestamp_type.label
        view["timestamp"] = e.timestamp
    return {k: v for k, v in view.items() if k in want}


@pytest.mark.parametrize("name", vectors(*RECORD_KINDS))
def test_record_vector(name: str) -> None:
    meta, data = load(name)
    error = meta["expect_error"]
    items = list(walk_log(data, name, deep=True))
    entries = [i for i in items if not isinstance(i, Defect)]
    defects = [i for i in items if isinstance(i, Defect)]
    if error:
        if error["kind"] == "crc_mismatch":
            assert any(d.code == "crc-mismatch" for d in defects)
            assert entries and entries[0].records is not None  # lenient decode still yields the records
            assert entries[0].records[0].control is not None
            assert entries[0].records[0].control.type_name == "ABORT"
        else:
            assert [d for d in defects if d.severity == "error"], f"{name}: expected {error['kind']}"
        return
    want_entries = meta["expected"]["entries"]
    assert len(entries) == len(want_entries)
    for got, want in zip(entries, want_entries, strict=True):
        if want["magic"] == 2:
            assert isinstance(got, RecordBatch)
            view = v2_view(got)
            assert view == {k: want[k] for k in view}
            assert got.records is not None
            assert len(got.records) == len(want["records"])
            for r, w in zip(got.records, want["records"], strict=True):
                rv = v2_record_view(r, w)
                wv = {k: w.get(k) for k in rv}
                wv["headers"] = [{"key": h["key"], "value": h["value"]} for h in w.get("headers", [])]
                assert rv == wv
        else:
            assert isinstance(got, LegacyBatch)
            assert legacy_view(got, want) == {k: want[k] for k in legacy_view(got, want)}
            if "inner" in want:
                assert got.records is not None
                assert [r.offset for r in got.records] == [i["offset"] for i in want["inner"]]
                assert [hexs(r.value) for r in got.records] == [i["value"] for i in want["inner"]]
    trailing = meta["expected"].get("trailing_bytes", 0)
    tails = [d for d in defects if d.code in ("torn-tail", "trailing-zeros")]
    assert not [d for d in defects if d.code not in ("torn-tail", "trailing-zeros")]
    if trailing:
        assert len(tails) == 1 and tails[0].reason.startswith(f"{trailing} ")
    else:
        assert not tails


def test_java_client_produce_batch() -> None:
    """The batch from a real Java-client produce request quoted in issue 2 (producerId 1005)."""
    data = bytes.fromhex(
        "0000000000000000" "00000039" "ffffffff" "02" "a7c8475d" "0000" "00000000" "00000162175bda8b"
        "00000162175bda8b" "00000000000003ed" "0000" "00000000" "00000001" "0e00000001023100")
    [batch] = list(walk_log(data, "produce", deep=True))
    assert isinstance(batch, RecordBatch)
    assert batch.crc == 0xA7C8475D and batch.crc_valid
    assert batch.producer_id == 1005 and batch.magic == 2
    assert batch.records is not None and len(batch.records) == 1
    assert batch.records[0].key is None and batch.records[0].value == b"1"


def test_varint_table() -> None:
    meta, data = load("kafka-java/varint_table")
    for e in meta["expected"]["entries"]:
        chunk = data[e["offset"]:e["offset"] + e["length"]]
        assert chunk.hex() == e["hex"]
        if e["kind"] == "unsigned_varint32":
            assert read_unsigned_varint(chunk, 0) == (e["value"], len(chunk))
            assert encode_unsigned_varint(e["value"]) == chunk
        else:
            width = VARLONG_MAX_BYTES if e["kind"] == "zigzag_varint64" else 5
            assert read_varint(chunk, 0, width) == (e["value"], len(chunk))
            assert encode_varint(e["value"], width) == chunk


@pytest.mark.parametrize(("name", "width"), [("kafka-java/varint32_invalid_6_bytes", 5),
                                             ("kafka-java/varint64_invalid_11_bytes", 10)])
def test_overlong_varints_rejected(name: str, width: int) -> None:
    _, data = load(name)
    with pytest.raises(DecodeError, match="longer than"):
        read_varint(data, 0, width)


@pytest.mark.parametrize("name", ["aiokafka/control_record_keys_table", "sarama/control_record_key_value_table"])
def test_control_record_tables(name: str) -> None:
    meta, data = load(name)
    for e in meta["expected"]["entries"]:
        chunk = data[e["offset"]:e["offset"] + e["length"]]
        want = e["expected"]
        if e.get("field", "control_key") != "control_key":
            continue
        version = int.from_bytes(chunk[0:2], "big", signed=True)
        if version < 0:
            # Kafka reads int16 signed: 0xffff is version -1, rejected as corruption (aiokafka differs).
            with pytest.raises(DecodeError, match="Invalid version found for control record: -1"):
                parse_control_record(chunk, None)
            continue
        ctype = int.from_bytes(chunk[2:4], "big", signed=True)
        if ctype in (0, 1):
            continue  # markers need their value; covered by the record vectors and the corpus
        got = parse_control_record(chunk, None)
        assert (got.version, got.type) == (want["version"], want["type"])


def test_vector_kinds_all_covered() -> None:
    root = shared_dir("vectors")
    kinds = {json.loads(p.read_text())["kind"] for p in Path(root).glob("*/*.json")}
    handled = set(RECORD_KINDS) | {"table", "varint", "codec_payload", "legacy_message"}
    assert kinds <= handled, kinds - handled


@pytest.mark.parametrize("name", vectors(*RECORD_KINDS))
def test_record_vector_rebuilds_byte_exact(name: str) -> None:
    from kafkatool.schema import legacy
    from kafkatool.schema import record_batch as rb

    _meta, data = load(name)
    entries = [i for i in walk_log(data, name) if not isinstance(i, Defect)]
    rebuilt = b"".join(rb.rebuild_batch(data, e) if isinstance(e, RecordBatch) else legacy.rebuild_entry(data, e)
                       for e in entries)
    end = entries[-1].position + entries[-1].size_in_bytes if entries else 0
    assert rebuilt == data[:end]


@pytest.mark.parametrize("name", vectors("legacy_message"))
def test_bare_legacy_message(name: str) -> None:
    from kafkatool.schema import legacy

    meta, data = load(name)
    if meta["expect_error"]:
        with pytest.raises(DecodeError):
            legacy.parse_bare_message(data)
        return
    want = meta["expected"]["message"]
    msg = legacy.parse_bare_message(data)
    view = legacy_view(msg, want)
    view["offset"] = None  # a bare message has no offset (reported as -1)
    assert view == {k: want[k] for k in view}
    if "inner" in want:
        inner = legacy.inner_entries(__import__("kafkatool.schema.codecs", fromlist=["x"]).decompress(
            msg.compression, msg.value or b"", magic=msg.magic))
        assert [hexs(i.value) for i in inner] == [i["value"] for i in want["inner"]]
    rebuilt = legacy.build_message(magic=msg.magic, attributes=msg.attributes, key=msg.key, value=msg.value,
                                   timestamp=msg.timestamp, crc=msg.crc)
    assert rebuilt == data
