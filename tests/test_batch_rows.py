"""The fleet's batch rows three ways on every corpus partition and on damaged copies: from a partition's walked
entries by their header columns (``reading.batch_scan.entry_columns``, the fast path), from the same entries as
objects (``_row`` per batch), and by scanning each segment again (``scan_range``). All three must agree value for
value, nulls included."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import pytest

from kafkatool.fleet.tables import batches_arrow
from kafkatool.reading.batch_scan import COLUMN_NAMES, BatchColumns, SegmentRange, entry_columns, scan_range
from kafkatool.reading.logdir import read_partition
from kafkatool.schema.filenames import parse_partition_dir
from kafkatool.schema.native import core
from tests.conftest import corpus_cases, shared_dir
from tests.fuzz.native import python_path
from tests.scan_support import big_partition_dir


def _partitions(log_dir: Path) -> list[Path]:
    return sorted(p for p in log_dir.iterdir() if p.is_dir() and parse_partition_dir(p.name) is not None)


def _rows(cols: BatchColumns) -> list[dict]:
    """The rows as the fleet's Arrow table holds them (and as lists: both must say the same)."""
    got = batches_arrow(cols).to_pylist()
    assert got == [dict(zip(COLUMN_NAMES, row, strict=True)) for row in zip(*cols.lists().values(), strict=True)]
    return got


def _three_ways(log_dir: Path, directory: Path) -> None:
    tp = parse_partition_dir(directory.name)[0]  # type: ignore[index]
    topic, partition = tp.topic, tp.partition
    part = read_partition(directory, directory.name)
    segments = [(Path(s.log_file).name, s.entries) for s in part.segments if s.log_file]
    fast = entry_columns(str(log_dir), topic, partition, segments)
    objects = entry_columns(str(log_dir), topic, partition, [(n, list(e)) for n, e in segments])
    assert _rows(fast) == _rows(objects), directory
    scanned: list[dict] = []
    for s in part.segments:
        if not s.log_file:
            continue
        rows = scan_range(SegmentRange(str(log_dir), topic, partition, str(directory / Path(s.log_file).name)))
        if rows.defects:
            return  # a damaged segment: the walk's entries and a fresh scan may stop differently
        scanned += _rows(rows)
    assert _rows(fast) == scanned, directory


@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
@pytest.mark.parametrize("case", corpus_cases())
def test_batch_rows_from_columns_objects_and_scans_agree(case: str, native: bool) -> None:
    log_dir = shared_dir("corpus") / case / "input"
    with contextlib.nullcontext() if native else python_path():
        for directory in _partitions(log_dir):
            _three_ways(log_dir, directory)


def test_the_fast_path_is_taken_and_agrees_on_a_big_partition(tmp_path: Path) -> None:
    """A clean partition of many batches gives its rows as arrays (no list per column) with the native core."""
    log_dir = big_partition_dir(tmp_path, batches=300)
    directory = _partitions(log_dir)[0]
    _three_ways(log_dir, directory)
    part = read_partition(directory, directory.name)
    fast = entry_columns(str(log_dir), "big", 0, [(Path(s.log_file).name, s.entries) for s in part.segments])
    assert len(fast) == 300
    if core() is not None:
        assert not isinstance(fast.columns["base_offset"], list)


def test_damaged_copy_rows_agree(tmp_path: Path) -> None:
    """A segment with a flipped CRC byte: the walk keeps it (crc_valid false) and every path says the same."""
    log_dir = big_partition_dir(tmp_path, batches=50)
    copy = tmp_path / "copy"
    shutil.copytree(log_dir, copy)
    directory = _partitions(copy)[0]
    seg = next(directory.glob("*.log"))
    data = bytearray(seg.read_bytes())
    data[200] ^= 0xFF
    seg.write_bytes(bytes(data))
    part = read_partition(directory, directory.name)
    segments = [(Path(s.log_file).name, s.entries) for s in part.segments if s.log_file]
    fast = entry_columns(str(copy), "big", 0, segments)
    objects = entry_columns(str(copy), "big", 0, [(n, list(e)) for n, e in segments])
    assert _rows(fast) == _rows(objects)
    assert False in fast.column("crc_valid")
