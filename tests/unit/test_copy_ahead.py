"""Segments copied ahead of salvage's plan (``writing.salvage_writer.StagedDir.ahead``): whatever was guessed, and
whenever the guess is corrected or streamed, each file of the repaired dir holds exactly the bytes of the pieces it
is finally streamed from, a guess never streamed leaves nothing behind, and a guess whose copy fails only costs the
copy (the stream writes the file itself)."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import pytest

from kafkatool.reading import byte_ranges as ss
from kafkatool.reading.byte_ranges import ByteRange
from kafkatool.writing import salvage_writer as sw
from kafkatool.writing.salvage_writer import StagedDir, _agreeing


@pytest.fixture()
def sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    monkeypatch.setattr(ss, "COPY_CHUNK", 4096)  # many chunks: the copy is stopped and resumed between them
    rng = random.Random(11)
    out = {}
    for name in ("a.log", "b.log"):
        path = tmp_path / "in" / name
        path.parent.mkdir(exist_ok=True)
        data = rng.randbytes(rng.randrange(50_000, 120_000))
        path.write_bytes(data)
        out[str(path)] = data
    return out


def _pieces(rng: random.Random, sources: dict[str, bytes], n: int) -> list[ByteRange]:
    out = []
    for _ in range(n):
        path = rng.choice(sorted(sources))
        a = rng.randrange(len(sources[path]))
        out.append(ByteRange(path, a, rng.randrange(a, min(len(sources[path]), a + 40_000) + 1)))
    return out


def _gapped(rng: random.Random, path: str, size: int) -> list[ByteRange]:
    """A plan's pieces of one file: the file from its start, with holes cut out (as around damage)."""
    cuts = sorted(rng.sample(range(1, size), rng.randrange(0, 5)))
    bounds = [0, *cuts, size]
    return [ByteRange(path, a, b) for a, b in zip(bounds[::2], bounds[1::2], strict=False) if b > a]


def _bytes(pieces: list[ByteRange], sources: dict[str, bytes]) -> bytes:
    return b"".join(sources[p.path][p.start:p.end] for p in pieces)


def test_agreeing_is_the_common_prefix_of_the_bytes_placed(sources: dict[str, bytes]) -> None:
    rng = random.Random(3)
    for _ in range(400):
        a = _pieces(rng, sources, rng.randrange(0, 4))
        b = list(a) if rng.random() < 0.3 else _pieces(rng, sources, rng.randrange(0, 4))
        if b and rng.random() < 0.3:  # the same bytes cut differently
            p = b[0]
            mid = (p.start + p.end) // 2
            b[:1] = [ByteRange(p.path, p.start, mid), ByteRange(p.path, mid, p.end)]
        where_a = [(p.path, i) for p in a for i in range(p.start, p.end)]
        where_b = [(p.path, i) for p in b for i in range(p.start, p.end)]
        common = 0
        while common < min(len(where_a), len(where_b)) and where_a[common] == where_b[common]:
            common += 1
        assert _agreeing(a, b) == common


@pytest.mark.parametrize("seed", range(24))
def test_each_file_is_what_it_is_streamed_from(tmp_path: Path, sources: dict[str, bytes], seed: int,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    real = sw._write_back
    landed = threading.Event()

    def jittery(fd: int, at: int, n: int) -> None:  # the copy ahead and the writer meet at varied moments
        landed.set()
        if seed % 3 == 1 or rng.random() < 0.5:
            time.sleep(0.001)
        real(fd, at, n)

    monkeypatch.setattr(sw, "_write_back", jittery)
    paths = sorted(sources)
    out = tmp_path / "out"
    staged = StagedDir(out)
    staged.ahead([(f"p/{i}.log", [ByteRange(path, 0, len(sources[path]))]) for i, path in enumerate(paths)]
                 + [("p/never.log", [ByteRange(paths[0], 0, len(sources[paths[0]]))])])
    final = {}
    for i, path in enumerate(paths):
        final[f"p/{i}.log"] = (_gapped(rng, path, len(sources[path])) if rng.random() < 0.7
                               else _pieces(rng, sources, rng.randrange(0, 4)))
    mode = seed % 3
    if mode == 1:  # the plan handed over while the first guess is being copied
        assert landed.wait(5)
    if mode < 2:  # (mode 0: before the copy started)
        staged.ahead(list(final.items()))
    if mode == 1:  # and the copy goes on from it before the files are streamed
        deadline = time.monotonic() + 5
        while not all(staged._jobs[n].started for n in final if staged._jobs[n].size) and time.monotonic() < deadline:
            time.sleep(0.001)
    if rng.random() < 0.3:
        time.sleep(0.01)
    for name, pieces in final.items():
        assert staged.stream(name, iter(pieces)) == sum(p.end - p.start for p in pieces)
    staged.commit()
    for name, pieces in final.items():
        assert (out / name).read_bytes() == _bytes(pieces, sources), name
    assert sorted(f.name for f in (out / "p").iterdir()) == sorted(Path(n).name for n in final)
    assert not [t for t in threading.enumerate() if t.name == "kafkatool-copy-ahead"]


def test_a_guess_whose_copy_fails_costs_only_the_copy(tmp_path: Path, sources: dict[str, bytes]) -> None:
    path = sorted(sources)[0]
    out = tmp_path / "out"
    staged = StagedDir(out)
    staged.ahead([("p/0.log", [ByteRange(str(tmp_path / "gone.log"), 0, 10_000)])])
    pieces = _gapped(random.Random(5), path, len(sources[path]))
    staged.stream("p/0.log", pieces)
    staged.commit()
    assert (out / "p" / "0.log").read_bytes() == _bytes(pieces, sources)


def test_abort_stops_the_copy_and_leaves_nothing(tmp_path: Path, sources: dict[str, bytes],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    real = sw._write_back
    started = threading.Event()

    def slow(fd: int, at: int, n: int) -> None:
        started.set()
        time.sleep(0.002)
        real(fd, at, n)

    monkeypatch.setattr(sw, "_write_back", slow)
    path = sorted(sources)[1]
    staged = StagedDir(tmp_path / "out")
    staged.ahead([("p/0.log", [ByteRange(path, 0, len(sources[path]))])])
    assert started.wait(5)
    staged.abort()
    assert not staged.staging.exists() and not (tmp_path / "out").exists()
    assert not [t for t in threading.enumerate() if t.name == "kafkatool-copy-ahead"]
