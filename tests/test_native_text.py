"""The native shallow ``dump-segment -f kafka`` writer (``kafkatool._native.dls_batch_lines_*``) against the Python
path (``engine.dls``): byte-identical stdout, stderr and exit code on every ``.log`` of ../shared and fixtures/,
from the file and from ``bytes``, for every ``--kafka-version`` layout, and on generated damage (hypothesis).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkatool.engine import dls
from kafkatool.render import kafka_text
from kafkatool.schema import native
from tests.conftest import SHARED
from tests.test_columns import clean_segment, damaged
from tests.test_native_walk import all_logs, mutated

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(native.core() is None, reason=f"native core not usable: {native.why_not()}")


def run(path: Path, **kw: Any) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = kafka_text.run_kafka_format(
        [str(path)], deep=False, print_data=False, verify_index_only=False, index_sanity_check=False,
        max_message_size=dls.DEFAULT_MAX_MESSAGE_SIZE, skip_record_metadata=False, out=out, err=err,
        **{"max_bytes": None, **kw})
    return rc, out.getvalue(), err.getvalue()


def python_path(fn: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as m:
        m.setenv("KAFKATOOL_NATIVE", "0")
        assert native.core() is None
        return fn()


def from_bytes(path: Path, max_bytes: int | None = None) -> tuple[list[str], str, str | None]:
    """``dump_log`` over the file's bytes with the native writer bound to them (lines collected, no ``emit``)."""
    data = path.read_bytes()
    fast = kafka_text._fast_lines(str(path), data)
    assert fast is not None
    got = dls.dump_log(dls.DlsSession(), str(path), data, max_bytes=max_bytes, fast_lines=fast)
    return got.lines, got.partial, got.crash


def assert_same(path: Path, monkeypatch: pytest.MonkeyPatch, max_bytes: int | None = None) -> None:
    want = python_path(lambda: run(path, max_bytes=max_bytes), monkeypatch)
    assert run(path, max_bytes=max_bytes) == want
    data = path.read_bytes()
    plain = dls.dump_log(dls.DlsSession(), str(path), data, max_bytes=max_bytes)
    assert from_bytes(path, max_bytes) == (plain.lines, plain.partial, plain.crash)


@pytest.mark.parametrize("path", all_logs(), ids=lambda p: str(p).replace(str(SHARED), "shared").replace(str(REPO), ""))
def test_every_log_file_as_the_python_path(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_same(path, monkeypatch)
    size = path.stat().st_size
    if size > 200:
        assert_same(path, monkeypatch, max_bytes=size // 3)


@pytest.mark.parametrize("version", sorted(dls.LAYOUTS))
def test_every_layout(version: str, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = dls.LAYOUTS[version]
    for path in all_logs()[::7]:
        want = python_path(lambda p=path: run(p, layout=layout), monkeypatch)
        assert run(path, layout=layout) == want


@pytest.mark.parametrize("seed", range(30))
def test_generated_damage_as_the_python_path(seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = seed % 2 == 0
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(damaged(seed, clean_segment(300 if big else 60, 8 if big else 1, 700 if big else 40)))
    assert_same(path, monkeypatch)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.integers(1, 30), records=st.integers(1, 5), value=st.integers(0, 400),
       flips=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), max_size=6),
       cut=st.integers(0, 3000), zeros=st.booleans(), max_bytes=st.none() | st.integers(0, 1 << 16))
def test_hypothesis_mutations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batches: int, records: int,
                              value: int, flips: list[tuple[int, int]], cut: int, zeros: bool,
                              max_bytes: int | None) -> None:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(mutated(clean_segment(batches, records, value), flips, cut, zeros))
    assert_same(path, monkeypatch, max_bytes)


def test_blocks_over_several_read_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A few MiB of batches: text blocks and the file reader's 1 MiB chunks both cross batch ends."""
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(clean_segment(3000, 3, 900))
    assert_same(path, monkeypatch)


def test_an_emit_error_reaches_the_caller(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(clean_segment(10, 1, 10))
    fast = kafka_text._fast_lines(str(path), path.read_bytes())
    assert fast is not None

    def refuse(text: str) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    with pytest.raises(BrokenPipeError):
        fast(0, path.stat().st_size, refuse)


@pytest.mark.parametrize("path", all_logs()[::5], ids=lambda p: p.name)
def test_binary_layer_of_a_text_stream(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over a text file with a binary layer (stdout), blocks go to the binary layer: the same bytes in order."""
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", newline="\n", write_through=False)
    err = io.StringIO()
    rc = kafka_text.run_kafka_format(
        [str(path), str(path)], deep=False, print_data=False, verify_index_only=False, index_sanity_check=False,
        max_message_size=dls.DEFAULT_MAX_MESSAGE_SIZE, max_bytes=None, skip_record_metadata=False, out=out, err=err)
    out.flush()
    want = python_path(lambda: run_two(path), monkeypatch)
    assert (rc, raw.getvalue().decode(), err.getvalue()) == want


def run_two(path: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = kafka_text.run_kafka_format(
        [str(path), str(path)], deep=False, print_data=False, verify_index_only=False, index_sanity_check=False,
        max_message_size=dls.DEFAULT_MAX_MESSAGE_SIZE, max_bytes=None, skip_record_metadata=False, out=out, err=err)
    return rc, out.getvalue(), err.getvalue()


def test_whole_command_to_stdout(tmp_path: Path) -> None:
    """``kafkatool dump-segment -f kafka`` as a user runs it: stdout and stderr bytes with and without the core."""
    import os
    import subprocess
    import sys

    clean = tmp_path / "00000000000000000000.log"
    clean.write_bytes(clean_segment(2000, 2, 300))
    torn = tmp_path / "00000000000000004000.log"
    torn.write_bytes(damaged(1, clean_segment(200, 1, 50)))
    files = [str(clean), str(torn), *[str(p) for p in all_logs()[::40]]]

    def cli(flag: str) -> tuple[int, bytes, bytes]:
        env = {**os.environ, "KAFKATOOL_NATIVE": flag, "PYTHONPATH": str(REPO)}
        done = subprocess.run([sys.executable, "-m", "kafkatool", "dump-segment", "-f", "kafka", *files],
                              capture_output=True, env=env, check=False)
        return done.returncode, done.stdout, done.stderr

    assert cli("1") == cli("0")
