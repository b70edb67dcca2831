"""``check``'s per-segment checks over the native column walk against the per-entry loop (issue 23).

With the native core, ``reading.logdir._read_segment`` reads a clean segment by the column walk
(``reading.entry_columns.read_clean_segment``) and ``engine.verify`` runs the offset order and gap, record count,
index and time index checks, the leader epochs and the ABORT marker candidates over its header columns. Every
fixture, corpus and vector partition, and damaged copies of some (offsets moved, counts raised with the CRC
recomputed, bytes flipped, tails cut), are checked both ways: the same defects, in the same order, word for word;
and ``kafkatool check`` prints the same with ``KAFKATOOL_NATIVE=0`` and ``=1``.
"""

from __future__ import annotations

import random
import shutil
import struct
from pathlib import Path

import pytest

from kafkatool.engine.verify import (
    LogChecker,
    abort_marker_candidates,
    batch_leader_epochs,
    check_offset_index,
    check_time_index,
    log_columns,
    offset_index_clean,
    time_index_clean,
)
from kafkatool.model import PartitionData, RecordBatch
from kafkatool.schema import native
from kafkatool.schema import record_batch as rb
from tests.conftest import SHARED

pytestmark = pytest.mark.skipif(native.core() is None, reason=f"native core unusable: {native.why_not()}")

ROOT = Path(__file__).resolve().parents[1]


def _partitions() -> list[Path]:
    found: set[Path] = set()
    for root in (ROOT / "fixtures", SHARED / "corpus", SHARED / "vectors"):
        if root.is_dir():
            found.update(p.parent for p in root.rglob("*.log") if p.is_file())
    return sorted(found)


def _read(directory: Path) -> PartitionData | None:
    from kafkatool.errors import KafkatoolError
    from kafkatool.reading.logdir import read_partition

    try:
        return read_partition(directory, directory.name)
    except KafkatoolError:
        return None


decided = {True: 0, False: 0}  # the index checks the columns passed whole / left to the per-entry loop


def _compare(part: PartitionData) -> int:
    """Each segment's checks over its entries (columns where they are given) and over the entries as a list (the
    per-entry loop); the number of segments that took the columns."""
    from kafkatool.engine.check import _live_entries

    taken = 0
    for seg in part.segments:
        if not seg.log_file:
            continue
        objects = list(seg.entries)
        taken += log_columns(seg.entries) is not None
        ref = LogChecker(seg.log_file, seg.base_offset)
        for e in objects:
            ref.feed(e)
        got = LogChecker(seg.log_file, seg.base_offset)
        got.feed_all(seg.entries)
        assert (got.defects, got.records, got.entries, got.first_offset, got.last_offset) == \
            (ref.defects, ref.records, ref.entries, ref.first_offset, ref.last_offset), seg.log_file
        aborts = [e for e in objects if isinstance(e, RecordBatch) and e.is_control and e.records and
                  e.records[0].control is not None and e.records[0].control.type == 0]
        candidates = [e for e in abort_marker_candidates(seg.entries) if e.records and
                      e.records[0].control is not None and e.records[0].control.type == 0]
        assert candidates == aborts
        assert list(batch_leader_epochs(seg.entries)) == list(batch_leader_epochs(objects))
        if seg.index is not None and seg.index_file:
            live = _live_entries(seg.index, (seg.base_offset, 0))
            args = (seg.index_file, live, seg.base_offset)
            sizes = (seg.valid_bytes, seg.index_size - 8 * seg.index.zero_tail)
            loop = check_offset_index(*args, objects, *sizes)
            assert check_offset_index(*args, seg.entries, *sizes) == loop
            # the columns' verdict on the per-entry rules is the loop's (an undecided False leaves it to the loop)
            per_entry = [d for d in loop if d.code not in ("index-size", "index-sanity")]
            clean = offset_index_clean(live, seg.entries, seg.valid_bytes)
            assert not (clean and per_entry), seg.index_file
            decided[clean] += 1
        if seg.time_index is not None and seg.time_index_file:
            live = _live_entries(seg.time_index, (0, seg.base_offset))
            args = (seg.time_index_file, live, seg.base_offset)
            size = seg.time_index_size - 12 * seg.time_index.zero_tail
            loop = check_time_index(*args, objects, size)
            assert check_time_index(*args, seg.entries, size) == loop
            per_entry = [d for d in loop if d.code not in ("index-size", "index-sanity")]
            clean = time_index_clean(live, seg.entries)
            assert not (clean and per_entry), seg.time_index_file
            decided[clean] += 1
    return taken


def test_every_partition_checks_alike_over_columns() -> None:
    """Also the differential test of ``verify.offset_index_clean`` / ``time_index_clean`` (the index rules over
    columns) against the per-entry loop of ``check_offset_index`` / ``check_time_index``."""
    decided.update({True: 0, False: 0})
    taken = 0
    for directory in _partitions():
        part = _read(directory)
        if part is not None:
            taken += _compare(part)
    assert taken > 100  # the columns did run
    assert decided[True] > 100 and decided[False] > 0  # both ways of deciding the index rules ran


def test_every_partition_checks_alike_by_small_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same with the clean read scanning 4 KiB at a time and the checks taking 3 entries at a time (so every
    window edge of a real segment is crossed: the previous window's last offset, boundaries, abort markers)."""
    from kafkatool.engine import verify
    from kafkatool.reading import entry_columns

    monkeypatch.setattr(entry_columns, "READ_WINDOW", 4096)
    monkeypatch.setattr(entry_columns, "READ_ROWS", 3)  # windows grow after big batches, 3 of them at a time
    monkeypatch.setattr(verify, "WINDOW_ROWS", 3)
    windows = 0
    for directory in _partitions():
        part = _read(directory)
        if part is not None:
            _compare(part)
            windows += sum(len(list(verify.log_windows(s.entries))) > 1 for s in part.segments if s.log_file)
    assert windows > 50  # segments of several windows did run


def test_kept_header_columns_equal_a_fresh_gather(monkeypatch: pytest.MonkeyPatch) -> None:
    """``header_columns`` hands a segment's kept columns out again (read-only, the same arrays) and they equal a
    gather from the file made afresh; the kept bytes stay within the budget however many segments are asked."""
    import numpy as np

    from kafkatool.reading import entry_columns as ec

    monkeypatch.setattr(ec, "COLUMNS_CACHE_BYTES", 1 << 16)
    ec.forget_columns()
    kept = 0
    for directory in _partitions():
        part = _read(directory)
        for seg in part.segments if part is not None else []:
            first = ec.header_columns(seg.entries)
            if first is None:
                continue
            again = ec.header_columns(seg.entries)
            assert again is not None and again is not first
            assert ec._cached_bytes[0] <= ec.COLUMNS_CACHE_BYTES
            if all(again[k] is first[k] for k in first):
                kept += 1
                assert not any(a.flags.writeable for a in again.values())
            fresh = ec._header_columns(seg.entries)  # type: ignore[arg-type]
            assert fresh is not None and fresh.keys() == again.keys()
            for name, values in fresh.items():
                assert np.array_equal(values, again[name]), (seg.log_file, name)
    ec.forget_columns()
    assert ec._cached_bytes[0] == 0 and kept > 100


def _check_json(path: Path, monkeypatch: pytest.MonkeyPatch, native_on: bool) -> tuple[int, str]:
    from typer.testing import CliRunner

    from kafkatool.cli import app

    with monkeypatch.context() as m:
        m.setenv("KAFKATOOL_NATIVE", "1" if native_on else "0")
        res = CliRunner().invoke(app, ["check", "-f", "json", str(path)])
    return res.exit_code, res.stdout


def test_check_prints_the_same_on_both_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    for d in sorted({p.parent for p in _partitions()}):
        assert _check_json(d, monkeypatch, True) == _check_json(d, monkeypatch, False), d


def _batches(data: bytes) -> list[int]:
    """The positions of a clean segment's chain of batches."""
    out, pos = [], 0
    while pos + rb.LOG_OVERHEAD <= len(data):
        (length,) = struct.unpack_from(">i", data, 8 + pos)
        if length <= 0 or pos + rb.LOG_OVERHEAD + length > len(data):
            break
        out.append(pos)
        pos += rb.LOG_OVERHEAD + length
    return out


def _recrc(buf: bytearray, pos: int) -> None:
    import crc32c

    (length,) = struct.unpack_from(">i", buf, pos + 8)
    start = pos + rb.FIELD_OFFSETS["attributes"]
    struct.pack_into(">I", buf, pos + rb.FIELD_OFFSETS["crc"], crc32c.crc32c(bytes(buf[start:pos + 12 + length])))


def _damage(buf: bytearray, rng: random.Random, how: str) -> None:
    """One kind of damage: offsets moved (outside the CRC), a count raised (CRC recomputed), an epoch changed,
    a byte flipped, a tail cut."""
    positions = [p for p in _batches(bytes(buf)) if buf[p + rb.FIELD_OFFSETS["magic"]] == 2]
    if len(positions) < 2:
        return
    at = positions[rng.randrange(1, len(positions))]
    if how == "offset-back":
        struct.pack_into(">q", buf, at, struct.unpack_from(">q", buf, at)[0] - rng.choice([1, 2, 50]))
    elif how == "offset-gap":
        for p in positions[positions.index(at):]:
            struct.pack_into(">q", buf, p, struct.unpack_from(">q", buf, p)[0] + 7)
    elif how == "first-below-name":
        struct.pack_into(">q", buf, 0, struct.unpack_from(">q", buf, 0)[0] - 3)
    elif how == "count":
        where = at + rb.FIELD_OFFSETS["records_count"]
        struct.pack_into(">i", buf, where, struct.unpack_from(">i", buf, where)[0] + 5)
        _recrc(buf, at)
    elif how == "epoch":
        struct.pack_into(">i", buf, at + rb.FIELD_OFFSETS["partition_leader_epoch"], rng.choice([-1, 0, 9, 3]))
    elif how == "flip":
        buf[rng.randrange(at, len(buf))] ^= 0x5A
    elif how == "cut":
        del buf[rng.randrange(at, len(buf)):]


DAMAGE = ("offset-back", "offset-gap", "first-below-name", "count", "epoch", "flip", "cut")


@pytest.mark.parametrize("how", DAMAGE)
def test_damaged_copies_check_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    rng = random.Random(f"check-{how}")
    sources = [d for d in _partitions() if len(list(d.glob("*.log"))) and d.name.rsplit("-", 1)[-1].isdigit()]
    rng.shuffle(sources)
    done = taken = flagged = 0
    for src in sources[:12]:
        dst = tmp_path / f"{done}" / src.name
        shutil.copytree(src, dst)
        for log in sorted(dst.glob("*.log")):
            data = bytearray(log.read_bytes())
            _damage(data, rng, how)
            log.write_bytes(bytes(data))
        part = _read(dst)
        if part is None:
            continue
        taken += _compare(part)
        flagged += sum(1 for seg in part.segments if log_columns(seg.entries) is not None and _defects(seg))
        assert _check_json(dst.parent, monkeypatch, True) == _check_json(dst.parent, monkeypatch, False), (how, src)
        done += 1
    assert done >= 3
    if how in ("offset-back", "offset-gap", "first-below-name", "count"):
        assert taken and flagged  # damage the checks find, in segments checked over the columns


def _defects(seg: object) -> list[object]:
    checker = LogChecker(seg.log_file, seg.base_offset)  # type: ignore[attr-defined]
    checker.feed_all(seg.entries)  # type: ignore[attr-defined]
    return checker.defects
