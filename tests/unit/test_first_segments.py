"""The first repaired segments ``salvage --out`` starts copying before anything is scanned
(``reading.byte_ranges.first_segments``): only partitions one input holds, live, never the metadata log's; their
live segments in offset order up to ``segment.bytes``; only regular files inside the inputs. And a writer told
a directory's files are complete stops any other copy ahead under it (``StagedDir.ahead(..., complete=)``)."""

from __future__ import annotations

import os
from pathlib import Path

from kafkatool.reading.byte_ranges import ByteRange, first_segments
from kafkatool.writing.salvage_writer import StagedDir


def _seg(d: Path, offset: int, size: int) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    p = d / f"{offset:020d}.log"
    p.write_bytes(os.urandom(size))
    return p


def test_partitions_held_once_live_and_packed_up_to_segment_bytes(tmp_path: Path) -> None:
    logdir = tmp_path / "logdir"
    a0, a1, a2 = _seg(logdir / "a-0", 0, 700), _seg(logdir / "a-0", 10, 500), _seg(logdir / "a-0", 20, 100)
    (logdir / "a-0" / "00000000000000000030.log.deleted").write_bytes(b"x" * 50)
    _seg(logdir / "b-0", 0, 100)
    _seg(logdir / "b-0.0123456789abcdef0123456789abcdef-delete", 0, 100)  # b-0 is held twice: no guess
    _seg(logdir / "__cluster_metadata-0", 0, 100)
    _seg(logdir / "c-1-stray", 0, 100)
    (logdir / "notes").mkdir()
    got = first_segments([logdir], 1000)
    assert got == [("a-0/00000000000000000000.log", [ByteRange(str(a0), 0, 700), ByteRange(str(a1), 0, 300)])]
    assert first_segments([logdir], 1300) == [("a-0/00000000000000000000.log", [
        ByteRange(str(a0), 0, 700), ByteRange(str(a1), 0, 500), ByteRange(str(a2), 0, 100)])]
    assert first_segments([logdir], 1000, only="b-0") == []
    assert first_segments([logdir / "a-0"], 500) == [("a-0/00000000000000000000.log", [ByteRange(str(a0), 0, 500)])]
    # the same partition in two inputs: another copy, nothing guessed
    assert first_segments([logdir, logdir / "a-0"], 1000) == []


def test_only_regular_files_inside_the_inputs(tmp_path: Path) -> None:
    part = tmp_path / "logdir" / "t-0"
    real = _seg(part, 5, 100)
    outside = _seg(tmp_path / "elsewhere", 0, 100)
    (part / "00000000000000000000.log").symlink_to(outside)
    os.mkfifo(part / "00000000000000000002.log")
    got = first_segments([tmp_path / "logdir"], 1 << 30)
    assert got == [("t-0/00000000000000000005.log", [ByteRange(str(real), 0, 100)])]


def test_a_directory_said_complete_stops_its_other_copies_ahead(tmp_path: Path) -> None:
    src = _seg(tmp_path / "in", 0, 300_000)
    staged = StagedDir(tmp_path / "out")
    whole = [ByteRange(str(src), 0, 300_000)]
    staged.ahead([("p/00000000000000000000.log", whole), ("p/00000000000000000009.log", whole),
                  ("q/00000000000000000000.log", whole)])
    staged.ahead([("p/00000000000000000009.log", [ByteRange(str(src), 10, 20)])], ["p"])
    assert staged._jobs["p/00000000000000000000.log"].size == 0  # stopped
    assert staged._jobs["q/00000000000000000000.log"].size == 300_000  # another directory: untouched
    staged.stream("p/00000000000000000009.log", [ByteRange(str(src), 10, 20)])
    staged.stream("q/00000000000000000000.log", whole)
    staged.commit()
    out = tmp_path / "out"
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*.log")) == [
        "p/00000000000000000009.log", "q/00000000000000000000.log"]
    assert (out / "p" / "00000000000000000009.log").read_bytes() == src.read_bytes()[10:20]
