"""``dump-segment``'s default table with the batch rows laid out from the native walk's columns and written by the
native core (``render/table_native.py``, ``_core/src/table.rs``): byte for byte what the Python rows print
(``KAFKATOOL_NATIVE=0``), in every width and with legacy entries and damage between runs of clean batches (the
table chunks of 500 rows shared between the two)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kafkatool.schema import legacy, native
from tests.benchmarks.inputs import write_segment

pytestmark = pytest.mark.skipif(native.core() is None, reason=f"native core not usable: {native.why_not()}")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2,300-odd one-record batches (half idempotent, a tenth of those transactional) with, after batch 700, two
    legacy messages, after batch 1,300 a batch whose CRC is wrong, and a torn tail."""
    part = tmp_path_factory.mktemp("table") / "orders-0"
    part.mkdir()
    whole = part / "whole.log"
    write_segment(whole, 400_000, 1, 100)
    data = whole.read_bytes()
    whole.unlink()
    size = 12 + int.from_bytes(data[8:12], "big")  # every batch of this input has the same size
    cut_a, cut_b = 700 * size, 1300 * size
    bad = bytearray(data[cut_b:cut_b + size])
    bad[-1] ^= 0xFF  # a record byte: the stored CRC no longer matches
    legacy_part = (legacy.build_entry(700, legacy.build_message(magic=1, attributes=0, key=b"k", value=b"v",
                                                                timestamp=1_700_000_000_000))
                   + legacy.build_entry(701, legacy.build_message(magic=0, attributes=0, key=None, value=b"w")))
    (part / "00000000000000000000.log").write_bytes(
        data[:cut_a] + legacy_part + data[cut_a:cut_b] + bytes(bad) + data[cut_b + size:] + data[:size // 2])
    return part / "00000000000000000000.log"


def _table(path: Path, *args: str, native_on: bool, columns: str | None = None) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "KAFKATOOL_NATIVE")}
    if not native_on:
        env["KAFKATOOL_NATIVE"] = "0"
    if columns is not None:
        env["COLUMNS"] = columns
    done = subprocess.run([sys.executable, "-m", "kafkatool", "dump-segment", *args, str(path)], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    return done.returncode, done.stdout


@pytest.mark.parametrize(("args", "columns"), [([], None), ([], "80"), ([], "40"), (["--wide"], "80"),
                                               (["--verify"], None)], ids=["pipe", "80", "40", "wide", "verify"])
def test_the_native_table_is_the_python_table(mixed: Path, args: list[str], columns: str | None) -> None:
    code, shown = _table(mixed, *args, native_on=True, columns=columns)
    reference_code, reference = _table(mixed, *args, native_on=False, columns=columns)
    assert code == reference_code == 1  # the CRC mismatch and the torn tail
    assert shown.count("\n") > 2200
    assert shown == reference


def test_every_fixture_segment(tmp_path: Path) -> None:
    code, shown = _table(FIXTURES, native_on=True, columns="100")
    reference_code, reference = _table(FIXTURES, native_on=False, columns="100")
    assert code == reference_code
    assert shown == reference


def test_damage_between_two_runs_of_one_table(tmp_path: Path) -> None:
    """Unreadable bytes between two runs the native walk takes (the walk resyncs, then offers the next run): the
    batches of both share one table, as the Python rows do (the fuzzer's first finding)."""
    whole = tmp_path / "w.log"
    write_segment(whole, 30_000, 1, 100)
    data = whole.read_bytes()
    size = 12 + int.from_bytes(data[8:12], "big")
    part = tmp_path / "orders-0"
    part.mkdir()
    segment = part / "00000000000000000000.log"
    unknown_magic = (40).to_bytes(8, "big") + (125).to_bytes(4, "big") + bytes(4) + bytes([130]) + bytes(120)
    segment.write_bytes(data[:40 * size] + unknown_magic + data[40 * size:])
    code, shown = _table(segment, native_on=True)
    reference_code, reference = _table(segment, native_on=False)
    assert code == reference_code == 1
    assert shown == reference
    assert shown.count(" base ") == reference.count(" base ") == 1
