"""A repaired segment's pieces are copied kernel to kernel (``reading.salvage_sources.ByteRange``, written by
``writing.salvage_writer.StagedDir.stream``): the same bytes as a copy through memory, the fallback where the
kernel copy is refused gives them too, each chunk's write-back is started as it lands, and an input that ends
early is named, never padded."""

from __future__ import annotations

import errno
import os
import random
from itertools import pairwise
from pathlib import Path

import pytest

from kafkatool.errors import UnreadableInputError
from kafkatool.reading import byte_ranges as ss
from kafkatool.reading.byte_ranges import ByteRange
from kafkatool.writing import salvage_writer as sw
from kafkatool.writing.salvage_writer import StagedDir


@pytest.fixture()
def source(tmp_path: Path) -> tuple[Path, bytes]:
    data = random.Random(7).randbytes(300_001)
    path = tmp_path / "in.log"
    path.write_bytes(data)
    return path, data


PIECES = [(0, 1), (5, 70_000), (70_000, 70_000), (123_457, 300_001), (299_999, 300_001)]


def _write(tmp_path: Path, path: Path, data: bytes) -> tuple[bytes, list[tuple[int, int]]]:
    landed: list[tuple[int, int]] = []
    out = tmp_path / "out"
    staged = StagedDir(out)
    pieces: list[bytes | ByteRange] = [b"head"]
    for a, b in PIECES:
        pieces += [ByteRange(str(path), a, b), data[a:a + 3]]
    real = sw._write_back
    sw._write_back = lambda fd, at, n: (landed.append((at, n)), real(fd, at, n))  # type: ignore[assignment]
    try:
        n = staged.stream("p/seg.log", pieces)
    finally:
        sw._write_back = real  # type: ignore[assignment]
    staged.commit()
    got = (out / "p" / "seg.log").read_bytes()
    assert n == len(got)
    return got, landed


def _want(data: bytes) -> bytes:
    return b"head" + b"".join(data[a:b] + data[a:a + 3] for a, b in PIECES)


def test_pieces_copied_by_the_kernel_are_the_bytes(tmp_path: Path, source: tuple[Path, bytes],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path, data = source
    monkeypatch.setattr(ss, "COPY_CHUNK", 4096)
    monkeypatch.setattr(sw, "WRITEBACK_BYTES", 10_000)
    got, landed = _write(tmp_path, path, data)
    assert got == _want(data)
    # every byte of the file was handed to the disk before the sync, in order, each once
    spans = sorted(landed)
    assert spans[0][0] == 0 and sum(n for _, n in spans) == len(got)
    assert all(a + n == b for (a, n), (b, _) in pairwise(spans))


@pytest.mark.parametrize("code", [errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EIO])
def test_a_refused_kernel_copy_goes_through_memory(tmp_path: Path, source: tuple[Path, bytes],
                                                   monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    path, data = source
    calls = []

    def refuse(*args: object) -> int:
        calls.append(args)
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "copy_file_range", refuse)
    monkeypatch.setattr(ss, "COPY_CHUNK", 50_000)
    got, _ = _write(tmp_path, path, data)
    assert got == _want(data)
    assert len(calls) == len([p for p in PIECES if p[1] > p[0]])  # tried once a piece, then by memory


def test_without_a_kernel_copy_at_all(tmp_path: Path, source: tuple[Path, bytes],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path, data = source
    monkeypatch.delattr(os, "copy_file_range")
    got, _ = _write(tmp_path, path, data)
    assert got == _want(data)


def test_an_input_shorter_than_its_range_is_named(tmp_path: Path, source: tuple[Path, bytes]) -> None:
    path, _ = source
    out = tmp_path / "o"
    fd = os.open(out, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        with pytest.raises(UnreadableInputError) as err:
            ByteRange(str(path), 300_000, 300_010).copy_into(fd, 0)
    finally:
        os.close(fd)
    assert str(path) in str(err.value) and "changed while read" in str(err.value)
    assert "byte 300000" in str(err.value)


def test_a_missing_or_special_input_is_named(tmp_path: Path) -> None:
    fd = os.open(tmp_path / "o", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        with pytest.raises(UnreadableInputError):
            ByteRange(str(tmp_path / "gone.log"), 0, 10).copy_into(fd, 0)
        os.mkfifo(tmp_path / "fifo.log")
        with pytest.raises(UnreadableInputError, match="not a regular file"):
            ByteRange(str(tmp_path / "fifo.log"), 0, 10).copy_into(fd, 0)
    finally:
        os.close(fd)
