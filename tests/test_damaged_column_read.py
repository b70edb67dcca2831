"""A segment whose magic 2 batches fail their CRC is read by the column scan (``entry_columns.read_clean_segment``)
exactly as the resilient walk reads it: the same entries with the same CRC verdicts, the same defects in the same
order, and the same restart. Salvage and every command on a damaged segment go through this read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.reading.entry_columns import ColumnEntries
from kafkatool.reading.logdir import read_partition
from kafkatool.schema import native
from tests.test_native_walk import python_path

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "fixtures" / "txn-commit-abort-hanging"
PARTITION = "ledger-0"

pytestmark = pytest.mark.skipif(native.core() is None, reason="the native core is not built")


def _damaged(tmp_path: Path, flips: list[tuple[int, int]]) -> Path:
    """A copy of the fixture with records bytes of some batches flipped (each batch's CRC fails; framing holds)."""
    from kafkatool.reading.columns import scan_segment

    root = tmp_path / "logdir"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(FIXTURE, root)
    seg = root / PARTITION / "00000000000000000000.log"
    cols = scan_segment(seg, verify_crc=False)
    data = bytearray(seg.read_bytes())
    done: set[int] = set()
    for k, byte in flips:
        k %= len(cols)
        start = int(cols.positions[k]) + 61  # past the batch header: its records (the CRC covers them)
        end = int(cols.positions[k]) + 12 + int(cols.headers["batch_length"][k])
        at = start + byte % max(1, end - start)
        if end > start and at not in done:  # a byte flipped twice would be whole again
            done.add(at)
            data[at] ^= 0x5A
    seg.write_bytes(bytes(data))
    return root


def _view(root: Path) -> tuple[list[tuple], list, bool]:
    seg = read_partition(root / PARTITION, PARTITION).segments[0]
    rows = [(e.position, e.size_in_bytes, e.crc_valid, e.base_offset, e.last_offset, e.max_timestamp,
             getattr(e, "is_control", None)) for e in seg.entries]
    return rows, [(d.code, d.file, d.position, d.field, d.reason) for d in seg.defects], \
        isinstance(seg.entries, ColumnEntries)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flips=st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 1 << 16)), min_size=1, max_size=4))
def test_crc_failures_read_by_columns_as_the_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  flips: list[tuple[int, int]]) -> None:
    root = _damaged(tmp_path, flips)
    rows, defects, by_columns = _view(root)
    want_rows, want_defects, _ = python_path(lambda: _view(root), monkeypatch)
    assert by_columns, "a segment damaged only by CRC failures is read by the column scan"
    assert any(r[2] is False for r in rows)
    assert (rows, defects) == (want_rows, want_defects)


def test_restart_and_salvage_of_crc_failures_match_the_python_path(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The control batches among the damaged ones: the restart model and salvage's account agree on both paths."""
    from kafkatool.reading.columns import scan_segment

    seg = FIXTURE / PARTITION / "00000000000000000000.log"
    cols = scan_segment(seg, verify_crc=False)
    control = [k for k in range(len(cols)) if int(cols.headers["attributes"][k]) & 0x20]
    assert control, "the fixture holds transaction markers"
    root = _damaged(tmp_path, [(control[0], 0), (len(cols) - 2, 3)])
    (root / "recovery-point-offset-checkpoint").unlink()  # an unclean start recovered from offset 0
    (root / ".kafka_cleanshutdown").unlink()
    runner = CliRunner()

    def run() -> tuple[dict, dict]:
        restart = runner.invoke(app, ["simulate-restart", "-f", "json", "--now", "1700003600000", str(root)])
        salvage = runner.invoke(app, ["salvage", "-f", "json", "--now", "1700003600000", str(root)])
        assert restart.exit_code in (0, 1) and salvage.exit_code in (0, 1), restart.stdout + salvage.stdout
        return json.loads(restart.stdout), json.loads(salvage.stdout)

    native_docs = run()
    assert native_docs == python_path(run, monkeypatch)
    assert native_docs[0]["partitions"][0]["bytes_truncated"] > 0
