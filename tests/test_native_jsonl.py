"""The native jsonl rows (kafkatool/_core/src/jsonl.rs, kafkatool.render.jsonl_native) against the Python path.

``dump-segment -f jsonl`` (its ``dump_log`` into a ``JsonlOutput``, and the whole command) runs once with the
native core and once with ``KAFKATOOL_NATIVE=0``: the bytes written, the defects, the errors, the exit code and
stderr must be the same for every .log of ../shared (the corpus and the record vectors) and fixtures/, shallow,
``--deep`` and ``--print-data`` with each decoder the native rows write, whole and cut by ``--max-bytes``, and on
generated (every codec, flags, control batches, invalid UTF-8, control characters, headers) and damaged segments.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.model import Compression, Header, Record
from kafkatool.schema import native, record_batch
from tests.conftest import REPO, SHARED
from tests.fuzz.native import JSONL_MODES, jsonl_dump, python_path
from tests.test_native_text_deep import control_segment

pytestmark = pytest.mark.skipif(native.core() is None, reason=f"native core unusable: {native.why_not()}")

MODES = JSONL_MODES


def both(path: Path, *args: object, **kwargs: object) -> tuple:
    """Dump with both paths and assert the same result."""
    fast = jsonl_dump(path, *args, **kwargs)  # type: ignore[arg-type]
    with python_path():
        slow = jsonl_dump(path, *args, **kwargs)  # type: ignore[arg-type]
    assert fast == slow
    return fast


def vector_segments() -> list[Path]:
    """The record vectors of ../shared/vectors that are log bytes (segments, batches, message sets)."""
    out = []
    for sidecar in sorted((SHARED / "vectors").rglob("*.json")):
        try:
            kind = json.loads(sidecar.read_text()).get("kind")
        except (OSError, ValueError):
            continue
        if kind in ("record_batch", "records", "message_set", "log_segment"):
            out.append(sidecar.with_suffix(".bin"))
    return out


LOGS = sorted((SHARED / "corpus").rglob("*.log")) + sorted((REPO / "fixtures").rglob("*.log")) + sorted(
    (SHARED / "corpus").rglob("*.checkpoint")) + sorted((REPO / "fixtures").rglob("*.checkpoint"))
VECTORS = vector_segments()


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        yield Path(tmp)


def as_segment(scratch: Path, data: bytes) -> Path:
    """``data`` as a segment file in ``scratch`` (never in the repository)."""
    path = scratch / "t-0" / "00000000000000000000.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("path", LOGS, ids=[str(p) for p in LOGS])
def test_reference_logs(path: Path) -> None:
    """Every reference segment is written byte for byte the same, in each mode, whole and cut."""
    for mode in MODES:
        both(path, *mode)
    size = path.stat().st_size
    both(path, True, True, max_bytes=max(size // 2, 1))
    both(path, False, False, max_bytes=max(size // 3, 1))
    both(path, False, False, verify=True)
    both(path, True, True, verify=True, max_bytes=max(size // 2, 1))


@pytest.mark.parametrize("vector", VECTORS, ids=[str(p.relative_to(SHARED)) for p in VECTORS])
def test_vectors(vector: Path, scratch: Path) -> None:
    """The record vectors as segments (legacy, v2, every codec, torn tails) in each mode."""
    path = as_segment(scratch, vector.read_bytes())
    for mode in MODES:
        both(path, *mode)
    both(path, True, True, verify=True)


def test_whole_command_and_text_stream() -> None:
    """The command itself (exit code, stdout bytes, stderr) on segments with damage, and a text stream output."""
    runner = CliRunner()
    picked = [p for p in LOGS if "crc" in str(p) or "torn" in str(p) or "legacy" in str(p)][:12] + LOGS[:4]
    for args in (["--print-data"], ["--deep"], [], ["--print-data", "--key-decoder", "hex"], ["--verify"],
                 ["--verify", "--print-data"]):
        fast = runner.invoke(app, ["dump-segment", "-f", "jsonl", *args, *map(str, picked)])
        with python_path():
            slow = runner.invoke(app, ["dump-segment", "-f", "jsonl", *args, *map(str, picked)])
        assert (fast.exit_code, fast.stdout_bytes, fast.stderr) == (slow.exit_code, slow.stdout_bytes, slow.stderr)
    for path in LOGS[:6]:
        both(path, True, True, text=True)


def test_native_path_is_taken(scratch: Path) -> None:
    """An ordinary segment's rows are written by the native writer, in one block."""
    recs = [Record(0, 0, b"k\x00\xff", "v\u00e9\u2028".encode(), (Header(b"h", b"x"),), offset_delta=0)]
    buf = record_batch.build_records_batch(recs, base_offset=0, base_timestamp=1)
    core = native.core()
    assert core is not None
    text, stop, count, first, last, heads = core.jsonl_rows(buf, 0, len(buf), b'"f"', True, "utf8", "utf8", 1 << 20)
    assert (stop, count, first, last, heads.tolist()) == (len(buf), 1, 0, 0, [0, 0, 0, 1, 0])
    row = json.loads(text)
    assert row["records"][0]["key"] == "k\x00\ufffd" and row["file"] == "f"
    written = both(as_segment(scratch, buf), True, True)[0]
    assert b'"key":"k\\u0000\xef\xbf\xbd"' in written


#: Characters no JSON output carries raw (``kafkatool.shell.UNSAFE`` beyond C0), their neighbours that stay raw,
#: and ordinary multi-byte text sharing their lead bytes.
HOSTILE = ("\x1b]0;t\x07", "\x7f", "\x80", "\x85", "\x9b2J", "\x9f", "\xa0", "\u061b\u061c", "\u200d\u200e\u200f",
           "\u2027\u2028\u2029", "\u202a\u202e\u202f", "\u2065\u2066\u2069\u206a", "\u20ac\u201c\u00e9")
RAW_UNSAFE = re.compile(rb"[\x00-\x1f\x7f]|\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]")
hostile_st = st.text(alphabet="".join(HOSTILE) + "ab", max_size=12).map(str.encode)

record_st = st.tuples(st.none() | st.binary(max_size=40) | st.text(max_size=20).map(str.encode) | hostile_st,
                      st.none() | st.binary(max_size=60) | st.text(max_size=30).map(str.encode) | hostile_st,
                      st.lists(st.tuples(st.binary(max_size=5) | st.text(max_size=5).map(str.encode),
                                         st.none() | st.binary(max_size=5)), max_size=2),
                      st.integers(-(1 << 20), 1 << 20))
batch_st = st.tuples(st.lists(record_st, min_size=0, max_size=6), st.sampled_from(list(Compression)),
                     st.integers(0, 0x7F), st.integers(-1, (1 << 31) - 1), st.integers(0, 3),
                     st.sampled_from([-1, 0, 1_700_000_000_000, (1 << 62)]), st.integers(-1, 1 << 40))
mode_st = st.sampled_from(MODES)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(st.lists(batch_st, min_size=1, max_size=5), st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(1, 255)),
                                                           max_size=2), st.integers(0, 1 << 16), mode_st)
def test_generated_segments(scratch: Path, batches: list, flips: list[tuple[int, int]], cut: int,
                            mode: tuple) -> None:
    """Generated segments (codecs, flags, gaps, sentinels, invalid UTF-8 and control characters in keys, values
    and header keys), intact, damaged and cut."""
    parts: list[bytes] = []
    offset = 0
    for specs, codec, attributes, base_sequence, gap, base_ts, pid in batches:
        recs = [Record(0, 0, k, v, tuple(Header(hk, hv) for hk, hv in hs), offset_delta=i, timestamp_delta=td)
                for i, (k, v, hs, td) in enumerate(specs)]
        parts.append(record_batch.build_records_batch(
            recs, base_offset=offset, base_timestamp=base_ts, compression=codec, attributes=attributes & 0x58,
            base_sequence=base_sequence, producer_id=pid, producer_epoch=pid % 3 - 1))
        offset += len(recs) + gap
    buf = bytearray(b"".join(parts))
    path = as_segment(scratch, bytes(buf))
    both(path, *mode)
    both(path, True, True)
    both(path, False, False, verify=True)
    for at, xor in flips:
        buf[at % len(buf)] ^= xor
    both(as_segment(scratch, bytes(buf)), *mode, verify=True)
    both(as_segment(scratch, bytes(buf[:cut % (len(buf) + 1)])), True, True, "hex", "utf8")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(-1, 9), st.integers(-1, 1), st.integers(-1, 1), st.integers(-5, 1 << 20),
                          st.booleans()), min_size=1, max_size=3),
       st.sampled_from([Compression.NONE, Compression.GZIP, Compression.ZSTD]), mode_st)
def test_control_batches(scratch: Path, markers: list[tuple[int, int, int, int, bool]], codec: Compression,
                         mode: tuple) -> None:
    """Control batches: end-transaction markers and unknown types (written natively), raft and malformed control
    records (handed back), between ordinary transactional batches."""
    buf, data = control_segment(markers, codec)
    core = native.core()
    assert core is not None
    if codec is Compression.NONE:
        written = core.jsonl_rows(buf, 0, len(buf), b'"f"', True, None, None, 1 << 20)[1]
        written_ok = all(version >= 0 and not 2 <= ctype <= 6 and (ctype not in (0, 1) or (vversion >= 0 and full))
                         for ctype, version, vversion, _, full in markers)
        assert written == (len(buf) if written_ok else len(data))
    both(as_segment(scratch, buf), *mode)


def test_verify_over_native_rows(scratch: Path) -> None:
    """``--verify``'s offset checks over the written batches' header columns: a misnamed segment, offsets going
    back, a gap, a legacy entry between native runs (fed entry by entry), as the Python path reports them."""
    from kafkatool.schema import legacy

    def batch(base: int, n: int = 2) -> bytes:
        recs = [Record(0, 0, b"k", b"v", (), offset_delta=i) for i in range(n)]
        return record_batch.build_records_batch(recs, base_offset=base, base_timestamp=1)

    old = legacy.build_legacy_entry(20, magic=1, key=b"k", value=b"v", timestamp=1_700_000_000_000)
    buf = batch(5) + batch(3) + batch(10) + old + batch(30) + batch(31)
    path = scratch / "t-0" / "00000000000000000100.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buf)
    written, defects, _seen = both(path, False, False, verify=True)[:3]
    codes = [d.code for d in defects[1]] if defects[0] == "ok" else []
    assert {"segment-name-mismatch", "offset-order", "offset-gap"} <= set(codes), codes
    assert b'"code":"offset-order"' in written



def test_hostile_characters_escaped_alike(scratch: Path) -> None:
    """Control, C1, bidi and separator characters in keys, values, header keys and the directory name: both paths
    write the same bytes, every such character as ``\\uXXXX`` (no raw one in a line), and each line parses back to
    the data."""
    text = "".join(HOSTILE)
    recs = [Record(0, 0, (s + "k").encode(), (text + s).encode(), (Header(s.encode(), s.encode()),), offset_delta=i)
            for i, s in enumerate(HOSTILE)]
    recs.append(Record(0, 0, b"x" * 15 + "\u202e".encode() + b"y" * 15, "\x9b".encode() * 9, (), offset_delta=99))
    buf = record_batch.build_records_batch(recs, base_offset=0, base_timestamp=1)
    path = scratch / "d\u202e\x1b\x9b\u2028x-0" / "00000000000000000000.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buf)
    for mode in MODES:
        written = both(path, *mode)[0]
        for line in written.splitlines():
            assert not RAW_UNSAFE.search(line), line
            row = json.loads(line)
            if row.get("type") == "batch":
                assert row["file"] == str(path)
    written = both(path, True, True)[0]
    rows = [json.loads(line) for line in written.splitlines()]
    got = [r for row in rows if row.get("type") == "batch" for r in row["records"]]
    assert [(r["key"], r["value"]) for r in got] == [(k.decode(), v.decode()) for k, v in
                                                       ((r.key, r.value) for r in recs)]
    assert b"\\u202e" in written and b"\\u009b" in written and b"\\u2028" in written and b"\\u007f" in written
