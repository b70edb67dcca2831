"""Salvage reads a file's bytes once where it can: inside ``reading.scan_memo.remembering``, a file scanned whole
(by Kafka's view, ``entry_columns.read_clean_segment``, or by ``reading.salvage_sources.scan_windows``) is kept as
columns when they are small (``scan_memo.BUDGET``), and the later passes (the scan, the plan, the rebuilt indexes,
the export) are answered from them; windows grow after big batches (``WINDOW_ROWS``). Both are tied here to the
plain scan they replace: the same batches, headers, CRC verdicts and defects, on every segment of the fixtures and
the shared corpus, intact and with batches damaged; a file that changes is read again; and whole salvages give
the same account and repaired bytes with and without it."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from kafkatool.reading import salvage_sources as ss
from kafkatool.reading import scan_memo
from kafkatool.reading.columns import SegmentColumns, scan_segment
from kafkatool.reading.salvage_sources import SourceFile, scan_windows

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def _segments() -> list[Path]:
    found = sorted((REPO / "fixtures").rglob("*.log"))
    if (SHARED / "corpus").is_dir():
        found += sorted((SHARED / "corpus").rglob("*.log"))[:60]
    return [p for p in found if p.is_file() and p.stat().st_size > 0]


def _source(path: Path) -> SourceFile:
    return SourceFile(None, path, path.name, "segment", 0)


def _rows(windows: list[SegmentColumns]) -> tuple[list[int], list[bytes], list[bool] | None,
                                                  list[tuple[str, int, str]]]:
    """Every window joined: positions, raw headers, verdicts, defects."""
    pos = np.concatenate([w.positions for w in windows]) if windows else np.zeros(0, dtype=np.int64)
    heads = np.concatenate([w.headers for w in windows]) if windows else None
    valid = None if not windows or any(w.crc_valid is None for w in windows) else \
        np.concatenate([w.crc_valid for w in windows]).tolist()  # type: ignore[misc]
    return (pos.tolist(), [] if heads is None else [h.tobytes() for h in heads], valid,
            [(d.code, d.position, d.reason) for w in windows for d in w.defects])


def _damaged_copy(src: Path, tmp: Path) -> Path:
    """``src`` copied with one record byte of every third batch flipped (each such batch fails its CRC)."""
    out = tmp / src.name
    shutil.copyfile(src, out)
    cols = scan_segment(out, verify_crc=False)
    data = bytearray(out.read_bytes())
    for k in range(0, len(cols), 3):
        start = int(cols.positions[k]) + 61
        end = int(cols.positions[k]) + 12 + int(cols.headers["batch_length"][k])
        if end > start:
            data[(start + end) // 2] ^= 0x5A
    out.write_bytes(bytes(data))
    return out


@pytest.fixture(autouse=True)
def _remembering() -> Iterator[None]:
    with scan_memo.remembering():
        yield


def _kept(path: Path) -> bool:
    return scan_memo.identity(str(path)) in scan_memo._memo


def _check_file(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = _source(path)
    with monkeypatch.context() as m:  # the plain scan: nothing kept, 4 MiB windows that never grow
        m.setattr(scan_memo, "BUDGET", -1)
        m.setattr(ss, "MAX_WINDOW", ss.WINDOW)
        whole = list(scan_windows(src))
        plain_whole = _rows(whole)
        starts = plain_whole[0]
        picks = sorted({starts[i] for i in (0, len(starts) // 3, len(starts) // 2, len(starts) - 1)}) if starts else []
        ranges = [(a, b) for a in picks for b in (None, a + 1, a + 5000)]
        plain = {(a, b, v): _rows(list(scan_windows(src, a, b, verify_crc=v))) for a, b in ranges
                 for v in (True, False)}
    got_whole = _rows(list(scan_windows(src)))  # kept now, with windows that grow after big batches
    assert got_whole == plain_whole
    if len(plain_whole[0]) and not any(len(w.legacy) for w in whole):
        assert _kept(path), "a small magic 2 file scanned whole is kept"
    for (a, b, v), want in plain.items():
        assert _rows(list(scan_windows(src, a, b, verify_crc=v))) == want, (path, a, b, v)


@pytest.mark.parametrize("path", _segments(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_kept_columns_answer_as_the_scan_does(path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _check_file(path, monkeypatch)
    scan_memo._memo.clear()
    _check_file(_damaged_copy(path, tmp_path), monkeypatch)


def test_windows_grow_after_big_batches_and_join_as_one_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows of a few rows, growing as fast as they may: their concatenation is still the whole file's scan."""
    for path in _segments()[:20]:
        want = _rows([scan_segment(path, label=path.name)])
        monkeypatch.setattr(ss, "WINDOW", 64)
        monkeypatch.setattr(ss, "WINDOW_ROWS", 3)
        monkeypatch.setattr(scan_memo, "BUDGET", -1)
        assert _rows(list(scan_windows(_source(path)))) == want, path
        monkeypatch.undo()


def test_a_file_that_changes_is_read_again(tmp_path: Path) -> None:
    path = _damaged_copy(sorted((REPO / "fixtures" / "codecs-clean").rglob("*.log"))[0], tmp_path)
    src = _source(path)
    first = _rows(list(scan_windows(src)))
    assert _kept(path)
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # the last batch's CRC changes verdict; same size
    time.sleep(0.05)  # past the file system's clock tick (a rewrite within one tick keeps the change time)
    path.write_bytes(bytes(data))
    os.utime(path, ns=(0, 0))  # even with its times put back, its change time moved
    again = _rows(list(scan_windows(src)))
    assert again[2] != first[2]
    assert again == _rows([scan_segment(path, label=path.name)])


def test_the_kept_columns_stay_within_their_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _segments()[:12]
    sizes = []
    for p in paths:
        list(scan_windows(_source(p)))
        hit = scan_memo._memo.get(scan_memo.identity(str(p)))  # type: ignore[arg-type]
        sizes.append(hit.size if hit is not None else 0)
    budget = max(sizes) * 2
    scan_memo._memo.clear()
    monkeypatch.setattr(scan_memo, "BUDGET", budget)
    for p in paths:
        list(scan_windows(_source(p)))
        assert sum(s.size for s in scan_memo._memo.values()) <= budget
    assert _kept(paths[-1]) or sizes[-1] == 0  # the newest is kept, the oldest let go


def test_nothing_is_kept_outside_remembering() -> None:
    path = _segments()[0]
    with scan_memo.remembering():
        pass
    scan_memo._on[0] = False
    try:
        scan_memo._memo.clear()
        list(scan_windows(_source(path)))
        assert not scan_memo._memo
    finally:
        scan_memo._on[0] = True


def test_kafkas_view_is_remembered_for_salvage_s_scan(tmp_path: Path) -> None:
    """The clean read of Kafka's view leaves each small segment's scan behind: salvage's own scan reads nothing
    (the native walk is not called again), and answers as the walk does."""
    from kafkatool.reading.logdir import read_partition
    from kafkatool.schema import native

    if native.core() is None:
        pytest.skip("the native core is not built")
    root = REPO / "fixtures" / "crc-flip-above-recovery-point"
    part = next(p for p in sorted(root.iterdir()) if p.is_dir() and any(p.glob("*.log")))
    seg = sorted(part.glob("*.log"))[0]
    with scan_memo.remembering():
        scan_memo._memo.clear()
        read_partition(part, part.name)
        assert _kept(seg)
        got = _rows(list(scan_windows(_source(seg))))
    scan_memo._memo.clear()
    scan_memo._on[0] = False
    try:
        want = _rows(list(scan_windows(_source(seg))))
    finally:
        scan_memo._on[0] = True
    assert got == want


@pytest.mark.parametrize("name", ["crc-flip-above-recovery-point", "torn-write", "txn-commit-abort-hanging",
                                  "multi-partition", "replica-set", "codecs-clean"])
def test_a_salvage_remembering_gives_what_one_reading_again_gives(name: str, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from kafkatool.cli import app

    src = REPO / "fixtures" / name
    outs = []
    for budget in (scan_memo.BUDGET, -1):
        monkeypatch.setattr(scan_memo, "BUDGET", budget)
        out = tmp_path / f"out{budget}"
        res = CliRunner().invoke(app, ["salvage", "--out", str(out), "--now", "1800000000000", "-f", "json", str(src)])
        assert res.exit_code in (0, 1), res.output
        files = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
        outs.append((res.stdout, files))
    assert outs[0] == outs[1]


def _log_dirs() -> list[Path]:
    found = [p for p in sorted((REPO / "fixtures").iterdir()) if p.is_dir() and any(p.glob("*/*.log"))]
    if (SHARED / "corpus").is_dir():
        found += [p / "input" for p in sorted((SHARED / "corpus").iterdir()) if any(p.glob("input/*/*.log"))]
    return found


@pytest.mark.parametrize("root", _log_dirs(), ids=lambda p: str(p.relative_to(p.parents[1])))
def test_kafkas_view_from_salvage_s_scan_is_kafkas_view_read_again(root: Path, tmp_path: Path) -> None:
    """Salvage scans first and takes Kafka's view after (``analysis.salvage.salvage``): the clean read answers
    from the kept scan (``entry_columns.read_clean_segment``), and what the account gets of it is what reading
    every segment again gives, intact and with batches damaged."""
    from kafkatool.analysis import salvage as sv

    damaged = tmp_path / "damaged"
    shutil.copytree(root, damaged)
    for seg in sorted(damaged.rglob("*.log"))[:3]:
        if seg.stat().st_size:
            _damaged_copy(seg, tmp_path).replace(seg)
    for base in (root, damaged):
        inputs = ss.find_inputs([base], {})
        scan_memo._memo.clear()
        for inp in inputs:
            for copies in inp.copies.values():
                for c in copies:
                    for f in c.files:
                        list(scan_windows(f))
        remembered = sv._kafka_view(inputs, 1_800_000_000_000)
        scan_memo._memo.clear()
        scan_memo._on[0] = False
        try:
            read_again = sv._kafka_view(ss.find_inputs([base], {}), 1_800_000_000_000)
        finally:
            scan_memo._on[0] = True
        assert remembered == read_again, base
