"""A CRC failure is reported at the start of the batch it fails (where Kafka's recovery truncates), naming the
``crc`` field, in every reader: the segment walk (dump-segment, check) and the columnar scan (issue 20, item 6).
The segment is Kafka-made (the demo fixture); one byte inside its second batch is flipped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.reading.columns import scan_segment

runner = CliRunner()
DEMO = Path(__file__).resolve().parents[1] / "fixtures" / "demo" / "demo-0"


def damaged(tmp_path: Path) -> tuple[Path, int]:
    part = tmp_path / "demo-0"
    shutil.copytree(DEMO, part)
    seg = part / "00000000000000000000.log"
    data = bytearray(seg.read_bytes())
    second = 12 + int.from_bytes(data[8:12], "big")
    length = int.from_bytes(data[second + 8:second + 12], "big")
    data[second + 12 + length // 2] ^= 0x01  # inside the records: only the CRC notices
    seg.write_bytes(bytes(data))
    return seg, second


def test_dump_segment_names_the_batch_start(tmp_path: Path) -> None:
    seg, second = damaged(tmp_path)
    result = runner.invoke(app, ["dump-segment", "-f", "jsonl", str(seg)])
    assert result.exit_code == 1
    defects = [json.loads(line) for line in result.stdout.splitlines() if '"defect"' in line]
    assert [(d["code"], d["position"], d["field"]) for d in defects] == [("crc-mismatch", second, "crc")]
    assert f"@ byte {second}: crc:" in result.stderr


def test_the_columnar_scan_agrees(tmp_path: Path) -> None:
    seg, second = damaged(tmp_path)
    cols = scan_segment(seg)
    assert [(d.code, d.position, d.field) for d in cols.defects] == [("crc-mismatch", second, "crc")]


def test_a_table_says_each_defect_once(tmp_path: Path) -> None:
    """Issue 20: in table mode the defect is in the table and not repeated on stderr; the machine formats keep
    stdout for data and say it on stderr."""
    seg, second = damaged(tmp_path)
    table = runner.invoke(app, ["dump-segment", str(seg)])
    assert table.exit_code == 1
    assert table.stdout.count("crc-mismatch") == 1
    assert "crc-mismatch" not in table.stderr and "does not match" not in table.stderr
    jsonl = runner.invoke(app, ["dump-segment", "-f", "jsonl", str(seg)])
    assert f"@ byte {second}: crc:" in jsonl.stderr
