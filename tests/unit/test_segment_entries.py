"""A segment's entries held as positions (``reading.entries.SegmentEntries``) are the walker's entries exactly,
on every Kafka-made segment, and cost a few bytes a batch instead of a Python object each."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from kafkatool.model import Record, RecordBatch, entries_max_timestamp, entry_spans
from kafkatool.reading.entries import SegmentEntries, complete_entry
from kafkatool.reading.files import mapped
from kafkatool.reading.logdir import read_partition
from kafkatool.schema.log_segment import walk_log
from kafkatool.schema.record_batch import build_records_batch
from tests.conftest import REPO, corpus_cases, shared_dir


def _walked(path: Path, deep: bool) -> list:
    """The entries as the walker makes them and a partition read completes them (the reference)."""
    out = []
    with mapped(path) as buf:
        for item in walk_log(buf, path.name, deep=deep):
            if isinstance(item, RecordBatch) or hasattr(item, "offset"):
                complete_entry(item, buf, deep=deep)
                out.append(item)
    return out


def _segments() -> list[Path]:
    found = sorted(REPO.glob("fixtures/**/*.log"))
    for case in corpus_cases():
        found += sorted((shared_dir("corpus") / case / "input").glob("**/*.log"))
    return found


@pytest.mark.parametrize("deep", [False, True])
def test_reread_entries_equal_the_walkers_on_every_segment(deep: bool) -> None:
    segments = _segments()
    assert segments
    compared = 0
    for log in segments:
        part = read_partition(log.parent, log.parent.name, deep=deep)
        seg = next(s for s in part.segments if s.log_file.endswith(log.name))
        assert isinstance(seg.entries, SegmentEntries)
        want = _walked(log, deep)
        assert list(seg.entries) == want, log
        assert len(seg.entries) == len(want)
        if want:
            assert seg.entries[-1] == want[-1] and seg.entries[0] == want[0]
            assert seg.next_offset == want[-1].last_offset + 1
        assert list(entry_spans(seg.entries)) == [(e.position, e.position + e.size_in_bytes) for e in want]
        assert entries_max_timestamp(seg.entries) == max([0] + [e.max_timestamp for e in want])
        compared += len(want)
    assert compared > 1000


def _segment(tmp_path: Path, batches: int) -> Path:
    part = tmp_path / "t-0"
    part.mkdir()
    data = bytearray()
    for i in range(batches):
        data += build_records_batch([Record(offset=0, timestamp=0, key=None, value=b"v%d" % i)],
                                    base_offset=i, base_timestamp=1_700_000_000_000 + i, partition_leader_epoch=1)
    path = part / "00000000000000000000.log"
    path.write_bytes(bytes(data))
    return path


def test_views_are_slices_of_the_same_entries(tmp_path: Path) -> None:
    path = _segment(tmp_path, 50)
    entries = read_partition(path.parent, "t-0").segments[0].entries
    whole = list(entries)
    for a, b in ((0, 50), (3, 17), (10, 5), (-5, None), (0, 0)):
        view = entries[a:b]
        assert list(view) == whole[a:b]
        assert len(view) == len(whole[a:b])
        assert list(entry_spans(view)) == [(e.position, e.position + e.size_in_bytes) for e in whole[a:b]]
    assert list(entries[3:17][2:5]) == whole[5:8]
    assert entries[-1] == whole[-1] and entries[-50] == whole[0]
    assert list(reversed(entries[5:9])) == whole[5:9][::-1]
    assert entries_max_timestamp(entries[:10]) == whole[9].max_timestamp
    with pytest.raises(IndexError):
        entries[50]


def test_a_segment_costs_a_few_bytes_a_batch(tmp_path: Path) -> None:
    """A batch header object costs about 450 bytes; the held form must stay under 32 (13 in arrays)."""
    batches = 40_000
    path = _segment(tmp_path, batches)
    tracemalloc.start()
    try:
        part = read_partition(path.parent, "t-0")
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(part.segments[0].entries) == batches
    # With the native core a clean segment's entries may also keep its raw 61-byte headers, from one budget for
    # the whole process (reading.entry_columns.HEADERS_BUDGET): bounded whatever the input, so not counted here.
    from kafkatool.reading.entry_columns import HEADERS_BUDGET, _Budget

    assert 0 <= _Budget.used <= HEADERS_BUDGET
    per_batch = (held - _Budget.used) / batches
    assert per_batch < 32, f"{per_batch:.0f} bytes held per batch besides the header budget"
