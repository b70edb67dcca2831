"""One name per batch/record field: dump JSON rows and the scan's columns are named from model's field tables."""

from __future__ import annotations

from kafkatool.engine.rows import entry_row, record_row
from kafkatool.model import BATCH_FIELDS, RECORD_FIELDS, SCAN_BATCH_FIELDS, Record
from kafkatool.reading.batch_scan import BATCH_COLUMNS
from kafkatool.schema import legacy
from kafkatool.schema import record_batch as rb


def _batch() -> bytes:
    recs = [Record(offset=j, timestamp=0, key=None, value=b"v", offset_delta=j) for j in range(2)]
    return rb.build_records_batch(recs, base_offset=7, base_timestamp=1000, producer_id=3, producer_epoch=0,
                                  base_sequence=4)


def test_dump_batch_rows_follow_the_batch_table() -> None:
    data = _batch()
    row = entry_row(rb.parse_batch_header(data, 0))
    names = [f.name for f in BATCH_FIELDS if f.name != "control_type"]
    assert list(row) == ["type", *names]


def test_legacy_rows_have_the_same_fields() -> None:
    data = legacy.build_entry(5, legacy.build_message(magic=1, attributes=0, key=None, value=b"x", timestamp=10))
    row = entry_row(legacy.parse_legacy_entry(data, 0))
    assert list(row) == ["type", *[f.name for f in BATCH_FIELDS if f.name != "control_type"]]


def test_record_rows_use_record_field_names() -> None:
    data = _batch()
    batch = rb.parse_batch(data, 0)
    assert batch.records is not None
    row = record_row(batch.records[0], key_decoder="utf8", value_decoder="utf8")
    assert set(row) <= {f.name for f in RECORD_FIELDS}


def test_scan_columns_are_batch_fields_with_their_types() -> None:
    types = {f.name: f.arrow for f in BATCH_FIELDS}
    assert BATCH_COLUMNS[4:] == tuple((name, types[name]) for name in SCAN_BATCH_FIELDS)
    assert [n for n, _ in BATCH_COLUMNS[:4]] == ["log_dir", "topic", "partition", "segment"]


def test_decoder_defects_are_structured_and_print_as_before() -> None:
    from kafkatool.schema import transaction_log
    from kafkatool.schema.topic_records import RecordDefect, decoder_named

    null_key = transaction_log.decode(None, b"\x00")
    assert null_key.defects == ("key: null key",)
    assert (null_key.defects[0].field, null_key.defects[0].reason) == ("key", "null key")
    bad = decoder_named("cluster-metadata")
    assert bad is not None
    keyed = bad.decode(b"\x01", None)
    assert keyed.defects == ("metadata records have no key",) and keyed.defects[0].field is None
    truncated = transaction_log.decode(b"\x00\x01\x00\x05ab", None)
    assert all(isinstance(d, RecordDefect) and str(d) == f"{d.field}: {d.reason}" for d in truncated.defects)
