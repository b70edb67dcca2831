"""A legacy (magic 0/1) wrapper whose codec bits are 6 or 7 (no Kafka codec) is a defect, never an internal error:
every command that reads a log dir goes on and reports it, on the native path and the Python path alike.

Found while testing the native check on damaged copies of the corpus case ``legacy-mixed-v1-v2-clean``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import shared_dir

COMMANDS = [
    ["check", "-f", "json"],
    ["simulate-restart", "-f", "json"],
    ["transactions", "-f", "json"],
    ["dump-segment", "--deep", "-f", "json"],
    ["dump-segment", "-f", "kafka", "--deep"],
    ["dump-segment", "--verify"],
]


def _damaged(tmp_path: Path, codec: int) -> Path:
    src = shared_dir("corpus") / "legacy-mixed-v1-v2-clean" / "input"
    root = tmp_path / "logdir"
    shutil.copytree(src, root)
    seg = root / "upgraded-0" / "00000000000000000000.log"
    data = bytearray(seg.read_bytes())
    assert data[16] in (0, 1)  # a legacy entry first: byte 17 is its attributes
    data[17] = (data[17] & ~0x07) | codec
    seg.write_bytes(bytes(data))
    return root


@pytest.mark.parametrize("native", ["1", "0"])
@pytest.mark.parametrize("codec", [6, 7])
def test_every_command_reports_it(tmp_path: Path, codec: int, native: str) -> None:
    root = _damaged(tmp_path, codec)
    env = {**os.environ, "KAFKATOOL_NATIVE": native}
    runs = [*COMMANDS, ["scan", "--out", str(tmp_path / "scan"), "--force", "--fail-on", "never"]]
    for args in runs:
        proc = subprocess.run([sys.executable, "-m", "kafkatool", *args, str(root)], capture_output=True, text=True,
                              env=env, timeout=120, check=False)
        assert "internal error" not in proc.stderr, (args, proc.stderr)
        assert proc.returncode in (0, 1), (args, proc.returncode, proc.stderr)
    check = subprocess.run([sys.executable, "-m", "kafkatool", "check", str(root)], capture_output=True, text=True,
                           env=env, timeout=120, check=False)
    assert f"unknown compression codec id {codec}" in check.stdout + check.stderr
