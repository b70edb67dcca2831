"""``python -m tests.kafka.versions fetch`` writes no terminal escape sequence into a log: Debian's Maven 3.8.7
writes ``ESC[0m`` on both streams in batch mode with colour off, and the fetch strips what Maven writes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.kafka import versions


def _fake_mvn(tmp_path: Path, code: int = 0) -> Path:
    mvn = tmp_path / "mvn"
    mvn.write_text("#!/bin/sh\n"
                   "printf '\\033[0m\\033[0m[INFO] Scanning for projects...\\n'\n"
                   "printf '\\033[1;31m[ERROR]\\033[m on stderr \\033]0;title\\007done\\n' >&2\n"
                   "printf '\\033[0m\\033[0m'\n"
                   f"echo \"$@\" > {str(tmp_path / 'args')!r}\n"
                   f"exit {code}\n")
    mvn.chmod(0o755)
    return mvn


def test_fetch_strips_mavens_escape_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    mvn = _fake_mvn(tmp_path)
    monkeypatch.setattr(versions.shutil, "which", lambda name: str(mvn) if name == "mvn" else None)
    monkeypatch.setattr(versions, "classpath", lambda version: "")
    versions.fetch(("3.9.2",), quiet=False)
    out, err = capfdbinary.readouterr()
    assert b"\x1b" not in out and b"\x1b" not in err and b"\x07" not in out
    assert out == b"[INFO] Scanning for projects...\n[ERROR] on stderr done\n"
    assert b"fetching Kafka 3.9.2" in err
    args = (tmp_path / "args").read_text().split()
    assert args[:2] == ["-B", "-Dstyle.color=never"] and "-Dkafka.version=3.9.2" in args


def test_a_failing_maven_still_fails_the_fetch(tmp_path: Path) -> None:
    mvn = _fake_mvn(tmp_path, code=3)
    with pytest.raises(subprocess.CalledProcessError) as caught:
        versions.run_plain([str(mvn)], tmp_path)
    assert caught.value.returncode == 3
