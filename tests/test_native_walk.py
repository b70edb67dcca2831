"""The native segment walk (``kafkatool._native.walk_bytes`` / ``walk_path``) against the Python path it replaces:
the same positions, header columns, CRC verdicts, legacy entries, defects and landing, field by field, on every
``.log`` of ../shared and fixtures/ and on generated damage (hypothesis), from a ``bytes`` buffer and from the file.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkatool.reading import columns
from kafkatool.schema import native
from tests.conftest import SHARED
from tests.test_columns import clean_segment, damaged

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(native.core() is None, reason=f"native core not usable: {native.why_not()}")


def all_logs() -> list[Path]:
    """Every ``.log`` of the shared corpus and vectors and of fixtures/."""
    found = sorted((REPO / "fixtures").rglob("*.log"))
    for sub in ("corpus", "vectors"):
        if (SHARED / sub).is_dir():
            found += sorted((SHARED / sub).rglob("*.log"))
    return [p for p in found if p.is_file()]


def view(cols: columns.SegmentColumns) -> dict[str, Any]:
    """Everything a scan produces, comparable with ``==``."""
    return {
        "positions": cols.positions.tolist(),
        "headers": cols.headers.tobytes(),
        "dtype": cols.headers.dtype,
        "crc_valid": None if cols.crc_valid is None else cols.crc_valid.tolist(),
        "legacy": cols.legacy.rows(),
        "defects": cols.defects,
        "landing": cols.landing,
        "size": cols.size,
    }


def python_path(fn: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as m:
        m.setenv("KAFKATOOL_NATIVE", "0")
        assert native.core() is None
        return fn()


def assert_same(path: Path, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> None:
    data = path.read_bytes()
    for verify in (True, False):
        want = view(python_path(lambda v=verify: columns.scan_segment(path, label="f", verify_crc=v, **kw),
                                monkeypatch))
        assert view(columns.scan_segment(path, label="f", verify_crc=verify, **kw)) == want
        assert view(columns.scan_buffer(data, "f", verify_crc=verify, **kw)) == want


@pytest.mark.parametrize("path", all_logs(), ids=lambda p: str(p).replace(str(SHARED), "shared").replace(str(REPO), ""))
def test_every_log_file_as_the_python_path(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_same(path, monkeypatch)


@pytest.mark.parametrize("seed", range(40))
def test_generated_damage_as_the_python_path(seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = seed % 2 == 0
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(damaged(seed, clean_segment(60, 8 if big else 1, 700 if big else 40)))
    monkeypatch.setattr(columns, "CHUNK", 5000)  # many runs, a hand-over at every chunk's end
    assert_same(path, monkeypatch)
    size = path.stat().st_size
    rnd = random.Random(seed)
    a = rnd.randrange(size)
    assert_same(path, monkeypatch, start=a, stop=rnd.randrange(a, size + 1))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.integers(1, 30), records=st.integers(1, 5), value=st.integers(0, 400),
       flips=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), max_size=6),
       cut=st.integers(0, 3000), zeros=st.booleans())
def test_hypothesis_mutations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batches: int, records: int,
                              value: int, flips: list[tuple[int, int]], cut: int, zeros: bool) -> None:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(mutated(clean_segment(batches, records, value), flips, cut, zeros))
    assert_same(path, monkeypatch)


def mutated(segment: bytes, flips: list[tuple[int, int]], cut: int, zeros: bool) -> bytes:
    """``segment`` with bytes overwritten (position modulo its size), then ``cut`` zero bytes added or its tail
    of ``cut`` (modulo its size) bytes removed."""
    buf = bytearray(segment)
    for at, byte in flips:
        buf[at % len(buf)] = byte
    if zeros:
        buf += bytes(cut)
    else:
        del buf[len(buf) - cut % len(buf):]
    return bytes(buf)


def test_path_entry_equals_bytes_entry(tmp_path: Path) -> None:
    """The file reader gives the in-memory walk's columns (a window smaller than a batch: the crate's unit test)."""
    data = clean_segment(20, 8, 4000)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    core = native.core()
    assert core is not None
    whole = core.walk_bytes(data, 0, len(data), len(data), True)
    from_file = core.walk_path(str(path), 0, len(data), len(data), True)
    for a, b in zip(whole, from_file, strict=True):
        assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b
    assert len(whole[0]) == 20 and whole[3] == len(data)


def test_missing_file_stops_where_it_started(tmp_path: Path) -> None:
    core = native.core()
    assert core is not None
    positions, headers, bad, reached = core.walk_path(str(tmp_path / "absent.log"), 5, 100, 100, True)
    assert (len(positions), len(headers), len(bad), reached) == (0, 0, 0, 5)


@pytest.mark.parametrize("seed", range(6))
def test_files_over_several_read_chunks(seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Segments of a few MiB (the file reader's chunks are 1 MiB: headers and CRCs across chunk ends)."""
    data = clean_segment(500, 7 + seed, 600 + 37 * seed)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(damaged(seed, data) if seed % 2 else data)
    assert_same(path, monkeypatch)


@pytest.mark.parametrize("path", all_logs(), ids=lambda p: str(p).replace(str(SHARED), "shared").replace(str(REPO), ""))
def test_fleet_batch_rows_as_the_python_path(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fleet scan's batch rows (``reading.batch_scan.scan_range``), whole and in two ranges."""
    from kafkatool.reading.batch_scan import SegmentRange, scan_range

    size = path.stat().st_size
    for start, stop in ((0, None), (0, size // 2), (size // 2, None)):
        unit = SegmentRange("d", "t", 0, str(path), start, stop, size)
        want = python_path(lambda u=unit: scan_range(u), monkeypatch)
        got = scan_range(unit)
        assert (got.lists(), got.landing, got.defects) == (want.lists(), want.landing, want.defects)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=600), pos=st.integers(-(1 << 40), 1 << 40), limit=st.integers(-(1 << 40), 1 << 40),
       stop=st.integers(-(1 << 40), 1 << 40), verify=st.booleans())
def test_any_arguments_are_answered(data: bytes, pos: int, limit: int, stop: int, verify: bool) -> None:
    """Arbitrary bytes and bounds: an answer (stopping where the bytes end), never an error or a crash."""
    core = native.core()
    assert core is not None
    positions, headers, bad, reached = core.walk_bytes(data, pos, limit, stop, verify)
    assert len(headers) == 61 * len(positions) and set(bad.tolist()) <= set(positions.tolist())
    assert reached == pos or (pos >= 0 and reached > pos)
    text: list[str] = []
    at = core.dls_batch_lines_bytes(data, max(pos, 0) % (len(data) + 1), min(limit, 1 << 31), text.append)
    assert 0 <= at <= len(data) and all(t.endswith("\n") for t in text)
