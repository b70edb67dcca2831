"""storage.boundary: one batch-boundary test for the walker's resynchronisation and the scan's split points."""

from __future__ import annotations

from kafkatool.model import Record
from kafkatool.reading.batch_scan import confirmed_boundary
from kafkatool.schema import log_segment
from kafkatool.schema import record_batch as rb
from kafkatool.storage import boundary


def _segment(batches: int = 6, records: int = 3) -> tuple[bytes, list[int]]:
    out, starts = b"", []
    for i in range(batches):
        starts.append(len(out))
        recs = [Record(offset=j, timestamp=0, key=None, value=b"v%d" % j, offset_delta=j) for j in range(records)]
        out += rb.build_records_batch(recs, base_offset=i * records, base_timestamp=1000 + i)
    return out, starts


def test_storage_names_the_walkers_rule() -> None:
    assert boundary.confirmed_batch_start is log_segment.confirmed_batch_start
    assert boundary.plausible_batch_header is log_segment.plausible_batch_header


def test_every_batch_start_and_nothing_else_is_confirmed() -> None:
    data, starts = _segment()
    confirmed = [p for p in range(len(data)) if confirmed_boundary(data, p)]
    assert confirmed == starts
    assert [p for p in range(len(data)) if boundary.confirmed_batch_start(data, p, len(data))] == starts


def test_the_walkers_search_and_the_scans_cuts_agree() -> None:
    data, starts = _segment()
    assert log_segment.find_next_batch(data, 1, len(data)) == starts[1]
    for pos in starts:
        assert log_segment.find_next_batch(data, pos, len(data)) == pos


def test_chained_headers_must_rise_and_codec_must_be_known() -> None:
    data, starts = _segment(batches=3)
    # The second batch repeats the first's offsets: the chain from the first start is refused.
    recs = [Record(offset=0, timestamp=0, key=None, value=b"x", offset_delta=0)]
    repeat = rb.build_records_batch(recs, base_offset=0, base_timestamp=0)
    twice = repeat + repeat + repeat
    assert not confirmed_boundary(twice, 0)
    assert boundary.confirmed_batch_start(twice, 0, len(twice), chained=0)
    # Codec 5 does not exist: not a believable header.
    bad = bytearray(data[:starts[1]])
    bad[rb.ATTRIBUTES_OFFSET + 1] |= 0x05
    assert boundary.plausible_batch_header(bytes(bad), 0, len(bad)) is None
    # The data ending exactly after a candidate is enough chaining.
    assert confirmed_boundary(data[starts[2]:], 0)
