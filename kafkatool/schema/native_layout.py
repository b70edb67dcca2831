"""The native core's layout constants, generated from the construct declarations (issue 23).

The Rust crate in ``kafkatool/_core`` reads batches with hard-coded offsets; those offsets, sizes, flag bits
and sentinels come from here, made from the same declarations the Python path parses with (``BATCH_HEADER``,
the legacy ``ENTRY_HEAD`` and messages, the control record key and marker value), so the two cannot drift:
``python -m kafkatool.writing.native_layout`` writes ``src/layout.rs`` and ``tests/test_native_layout.py``
fails when the file is not exactly :func:`rust_source`.
"""

from __future__ import annotations

import hashlib

from construct import Struct

from kafkatool import model
from kafkatool.schema import codecs, control, legacy, record_batch
from kafkatool.schema.fixed import field_offsets

RUST_PATH = "kafkatool/_core/src/layout.rs"


def _struct_fields(prefix: str, decl: Struct, doc: str) -> list[str]:
    """``<PREFIX>_<FIELD>_OFFSET`` / ``_SIZE`` for every field of a flat fixed-size declaration, and its size."""
    lines = [f"// {doc}"]
    for name, offset in field_offsets(decl).items():
        size = next(sc for sc in decl.subcons if sc.name == name).sizeof()
        key = f"{prefix}_{name.upper()}"
        lines.append(f"pub const {key}_OFFSET: usize = {offset};")
        lines.append(f"pub const {key}_SIZE: usize = {size};")
    lines.append(f"pub const {prefix}_SIZE: usize = {decl.sizeof()};")
    return lines


def _consts(items: list[tuple[str, str, int, str]]) -> list[str]:
    """``pub const NAME: TYPE = VALUE; // doc`` lines."""
    return [f"pub const {name}: {rtype} = {value}; // {doc}" for name, rtype, value, doc in items]


def _body() -> list[str]:
    rb, lg = record_batch, legacy
    lines: list[str] = []
    lines += _struct_fields("V2", rb.BATCH_HEADER, "Magic 2 batch header (DefaultRecordBatch), from BATCH_HEADER")
    lines += _consts([
        ("V2_MAGIC", "i8", rb.MAGIC, "the magic of DefaultRecordBatch"),
        ("LOG_OVERHEAD", "usize", rb.LOG_OVERHEAD, "offset + length, before every batch of every magic"),
        ("MAGIC_OFFSET", "usize", rb.MAGIC_OFFSET, "the magic byte's position in every magic"),
        ("V2_HEADER_SIZE", "usize", rb.HEADER_SIZE, "the whole fixed header; records follow"),
        ("V2_CRC_COVERED_FROM", "usize", rb.ATTRIBUTES_OFFSET, "first byte the CRC-32C covers"),
        ("V2_BATCH_OVERHEAD", "usize", rb.BATCH_OVERHEAD, "the smallest batch_length (a header, no records)"),
        ("V2_CODEC_MASK", "i16", rb.CODEC_MASK, "attributes: codec id bits"),
        ("V2_TIMESTAMP_TYPE_FLAG", "i16", rb.TIMESTAMP_TYPE_FLAG, "attributes: LogAppendTime"),
        ("V2_TRANSACTIONAL_FLAG", "i16", rb.TRANSACTIONAL_FLAG, "attributes: transactional"),
        ("V2_CONTROL_FLAG", "i16", rb.CONTROL_FLAG, "attributes: control batch"),
        ("V2_DELETE_HORIZON_FLAG", "i16", rb.DELETE_HORIZON_FLAG, "attributes: delete horizon set"),
    ])
    lines += _struct_fields("LEGACY_ENTRY", lg.ENTRY_HEAD, "Magic 0/1 log entry head (LegacyRecord), from ENTRY_HEAD")
    lines += _struct_fields("LEGACY_MESSAGE", lg.MESSAGE_PREFIX, "Magic 0/1 message prefix, from MESSAGE_PREFIX")
    lines += _consts([
        ("LEGACY_SIZE_OFFSET", "usize", lg.SIZE_OFFSET, "the message size inside the log entry prefix"),
        ("LEGACY_TIMESTAMP_SIZE", "usize", lg.TIMESTAMP.sizeof(), "magic 1's timestamp"),
        ("LEGACY_LENGTH_SIZE", "usize", lg.LENGTH.size, "key and value length fields"),
        ("LEGACY_RECORD_OVERHEAD_V0", "usize", lg.RECORD_OVERHEAD_V0, "crc, magic, attributes, two lengths"),
        ("LEGACY_RECORD_OVERHEAD_V1", "usize", lg.RECORD_OVERHEAD_V1, "the same with the timestamp"),
        ("LEGACY_CODEC_MASK", "i8", lg.CODEC_MASK, "attributes: codec id bits"),
        ("LEGACY_TIMESTAMP_TYPE_MASK", "i8", lg.TIMESTAMP_TYPE_MASK, "attributes: LogAppendTime (magic 1)"),
        ("LEGACY_CRC_COVERED_FROM", "usize", lg.MAGIC_OFFSET, "first message byte the CRC-32 covers (the magic)"),
        ("RECORD_COST", "usize", codecs.RECORD_COST, "a decoded record's cost against the decompression cap"),
        ("DEFAULT_MAX_OUTPUT", "usize", codecs.DEFAULT_MAX_OUTPUT, "the decompression cap when none is given"),
    ])
    lines += _struct_fields("CONTROL_KEY", control.CONTROL_KEY, "Control record key (ControlRecordType)")
    lines += _struct_fields("END_TXN_MARKER", control.END_TXN_MARKER_VALUE, "End-transaction marker value")
    lines += _consts([
        ("NO_SEQUENCE", "i32", model.NO_SEQUENCE, "RecordBatch.NO_SEQUENCE"),
        ("NO_PRODUCER_ID", "i64", model.NO_PRODUCER_ID, "RecordBatch.NO_PRODUCER_ID"),
        ("NO_PRODUCER_EPOCH", "i16", model.NO_PRODUCER_EPOCH, "RecordBatch.NO_PRODUCER_EPOCH"),
        ("NO_PARTITION_LEADER_EPOCH", "i32", model.NO_PARTITION_LEADER_EPOCH, "RecordBatch.NO_PARTITION_LEADER_EPOCH"),
        ("NO_TIMESTAMP", "i64", model.NO_TIMESTAMP, "RecordBatch.NO_TIMESTAMP"),
        ("MAX_SEQUENCE", "i32", model.MAX_SEQUENCE, "sequences wrap after Integer.MAX_VALUE"),
    ])
    return lines


def rust_source() -> str:
    """The whole text of ``src/layout.rs``: the constants and a fingerprint of them."""
    body = "\n".join(_body())
    digest = fingerprint()
    head = [
        "// @generated by `python -m kafkatool.writing.native_layout` from kafkatool/schema (construct declarations).",
        "// Do not edit: tests/test_native_layout.py fails when this file differs from what the schema generates.",
        "//! Layout constants of Kafka's on-disk formats, generated from kafkatool's construct schema.",
        "#![allow(dead_code)]",
        "",
        f'pub const FINGERPRINT: &str = "{digest}";',
        "",
    ]
    return "\n".join(head) + body + "\n"


def fingerprint() -> str:
    """The fingerprint the generated file carries (the built crate reports it through ``build_info``)."""
    return hashlib.sha256("\n".join(_body()).encode()).hexdigest()[:16]
