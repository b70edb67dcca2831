"""The native deep writer (kafkatool/_core/src/text_deep.rs) against the Python path (kafkatool.engine.dls).

:func:`kafkatool.engine.dls.dump_log` streams its lines (``emit``, as ``dump-segment -f kafka`` does) once with the
native core and once with ``KAFKATOOL_NATIVE=0``: the text, the crash line, the stderr lines and the session's
summary lines must be byte for byte the same for every .log of ../shared and fixtures/, with ``--deep``,
``--print-data`` and ``--skip-record-metadata``, whole and cut by ``--max-bytes``, and on generated and damaged
segments.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkatool.engine import dls
from kafkatool.model import Compression, Header, Record
from kafkatool.schema import native, record_batch
from tests.conftest import REPO, SHARED
from tests.test_native_codecs import python_path

pytestmark = pytest.mark.skipif(native.core() is None, reason=f"native core unusable: {native.why_not()}")

MODES = [(True, False, False), (True, True, False), (True, True, True), (True, False, True)]


def dump(path: str, buf: bytes, deep: bool, print_data: bool, skip: bool, max_bytes: int | None = None) -> tuple:
    """Everything one dump prints, as data."""
    emitted: list[str] = []
    session = dls.DlsSession()
    result = dls.dump_log(session, path, buf, deep=deep, print_data=print_data, skip_record_metadata=skip,
                          max_bytes=max_bytes, key=path, emit=emitted.append)
    return "".join(emitted) + result.text(), result.err, result.crash, session.summary_lines()


def both(path: str, buf: bytes, deep: bool, print_data: bool, skip: bool, max_bytes: int | None = None) -> tuple:
    """Dump with both paths and assert the same output."""
    fast = dump(path, buf, deep, print_data, skip, max_bytes)
    with python_path():
        slow = dump(path, buf, deep, print_data, skip, max_bytes)
    assert fast == slow
    return fast


LOGS = sorted((SHARED / "corpus").rglob("*.log")) + sorted((REPO / "fixtures").rglob("*.log")) + sorted(
    (SHARED / "corpus").rglob("*.checkpoint")) + sorted((REPO / "fixtures").rglob("*.checkpoint"))


@pytest.mark.parametrize("path", LOGS, ids=[str(p) for p in LOGS])
def test_reference_logs(path: Path) -> None:
    """Every reference segment prints byte for byte the same, in each deep mode, whole and cut."""
    buf = path.read_bytes()
    for deep, print_data, skip in MODES:
        both(str(path), buf, deep, print_data, skip)
    both(str(path), buf, True, True, False, max_bytes=len(buf) // 2)


def test_native_path_is_taken() -> None:
    """An ordinary segment is written by the native writer (it returns text, not a hand-back)."""
    recs = [Record(0, 0, b"k", b"v", (Header(b"h", b"x"),), offset_delta=0)]
    buf = record_batch.build_records_batch(recs, base_offset=0, base_timestamp=1)
    core = native.core()
    assert core is not None
    text, stop, last, gaps = core.dump_deep(buf, 0, len(buf), len(buf), -1, True, False, 1 << 20)
    assert stop == len(buf) and last == 0 and gaps == []
    assert text == both("00000000000000000000.log", buf, True, True, False)[0].split("\n", 1)[1]


record_st = st.tuples(st.none() | st.binary(max_size=40) | st.text(max_size=20).map(str.encode),
                      st.none() | st.binary(max_size=60) | st.text(max_size=30).map(str.encode),
                      st.lists(st.tuples(st.text(max_size=5).map(str.encode), st.none() | st.binary(max_size=5)),
                               max_size=2))
batch_st = st.tuples(st.lists(record_st, min_size=0, max_size=6), st.sampled_from(list(Compression)),
                     st.integers(0, 0x7F), st.integers(-1, 1 << 31 - 1), st.integers(0, 3))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(batch_st, min_size=1, max_size=5), st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(1, 255)),
                                                           max_size=2), st.integers(0, 1 << 16))
def test_generated_segments(batches: list, flips: list[tuple[int, int]], cut: int) -> None:
    """Generated segments (codecs, flags, gaps between batches, text and binary keys), intact, damaged and cut."""
    parts: list[bytes] = []
    offset = 0
    for specs, codec, attributes, base_sequence, gap in batches:
        recs = [Record(0, 0, k, v, tuple(Header(hk, hv) for hk, hv in hs), offset_delta=i)
                for i, (k, v, hs) in enumerate(specs)]
        parts.append(record_batch.build_records_batch(
            recs, base_offset=offset, base_timestamp=1_700_000_000_000, compression=codec,
            attributes=attributes & 0x58, base_sequence=base_sequence, producer_id=3, producer_epoch=1))
        offset += len(recs) + gap
    buf = bytearray(b"".join(parts))
    for deep, print_data, skip in MODES:
        both("00000000000000000000.log", bytes(buf), deep, print_data, skip)
    for at, xor in flips:
        buf[at % len(buf)] ^= xor
    both("00000000000000000000.log", bytes(buf), True, True, False)
    both("00000000000000000000.log", bytes(buf[:cut % (len(buf) + 1)]), True, True, False)


def control_segment(markers: list[tuple[int, int, int, int, bool]], codec: Compression) -> tuple[bytes, bytes]:
    """A transactional batch, a control batch of ``markers`` (type, key version, value version, coordinator epoch,
    whether the value is whole), the transactional batch again; and that batch alone."""
    from kafkatool.schema.control import build_control_key, build_end_txn_marker

    data = record_batch.build_records_batch([Record(0, 0, b"k", b"v", (), offset_delta=0)], base_offset=0,
                                            base_timestamp=5, producer_id=9, producer_epoch=0, attributes=0x10)
    recs = [Record(0, 0, build_control_key(ctype, version), build_end_txn_marker(epoch, vversion)[:6 if full else 3],
                   (), offset_delta=i) for i, (ctype, version, vversion, epoch, full) in enumerate(markers)]
    marker = record_batch.build_records_batch(recs, base_offset=1, base_timestamp=6, compression=codec,
                                              producer_id=9, producer_epoch=0, attributes=0x30)
    return data + marker + data, data


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(-1, 7), st.integers(-1, 1), st.integers(-1, 1), st.integers(-5, 1 << 20),
                          st.booleans()), min_size=1, max_size=3),
       st.sampled_from([Compression.NONE, Compression.GZIP]))
def test_control_batches(markers: list[tuple[int, int, int, int, bool]], codec: Compression) -> None:
    """Control batches: end-transaction markers (written natively), other and malformed control records (handed
    back), between ordinary batches."""
    buf, data = control_segment(markers, codec)
    core = native.core()
    assert core is not None
    written = core.dump_deep(buf, 0, len(buf), len(buf), -1, True, False, 1 << 20)[1]
    if all(ctype in (0, 1) and version >= 0 and vversion >= 0 and full for ctype, version, vversion, _, full in
           markers):
        assert written == len(buf)  # markers are written natively
    else:
        assert written == len(data)  # handed back at the control batch
    for deep, print_data, skip in MODES:
        both("00000000000000000000.log", buf, deep, print_data, skip)
