"""A file that is not a Kafka segment at all is unreadable input (exit 3, one line naming the file, the byte and
the field), while a real segment however damaged stays a segment with defects (exit 1) (issue 20, item 7)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app

runner = CliRunner()
SEGMENT = Path(__file__).resolve().parents[1] / "fixtures" / "demo" / "demo-0" / "00000000000000000000.log"


def dump(path: Path) -> tuple[int, str, str]:
    result = runner.invoke(app, ["dump-segment", str(path)])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("content", [
    b"hello, this is a text file\nwith a second line\n",
    b"PK\x03\x04" + bytes(range(256)) * 4,                    # a zip archive under a segment's name
    b'{"records": [1, 2, 3], "note": "exported by some tool"}\n' * 20,
])
def test_something_else_named_like_a_segment_is_unreadable(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(content)
    code, out, err = dump(path)
    assert code == 3
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert str(path) in lines[0] and "not a Kafka log segment" in lines[0] and "byte" in lines[0]


def test_a_segment_with_its_first_batch_destroyed_is_still_a_segment(tmp_path: Path) -> None:
    path = tmp_path / SEGMENT.name
    data = bytearray(SEGMENT.read_bytes())
    data[:40] = b"overwritten by something else entirely!!"
    path.write_bytes(bytes(data))
    code, out, _ = dump(path)
    assert code == 1
    assert "defects: " in out and "not a Kafka log segment" not in out


def test_a_torn_segment_is_still_a_segment(tmp_path: Path) -> None:
    path = tmp_path / SEGMENT.name
    shutil.copyfile(SEGMENT, path)
    with open(path, "r+b") as f:
        f.truncate(SEGMENT.stat().st_size - 7)
    code, out, _ = dump(path)
    assert code == 1
    assert "torn-tail" in out


def test_zeros_and_tiny_files_are_not_refused(tmp_path: Path) -> None:
    zeros = tmp_path / "00000000000000000000.log"
    zeros.write_bytes(bytes(4096))
    assert dump(zeros)[0] in (0, 1)
    tiny = tmp_path / "00000000000000000001.log"
    tiny.write_bytes(b"abc")
    assert dump(tiny)[0] in (0, 1)
