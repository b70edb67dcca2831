"""The native walk over legacy (magic 0/1) framing (``kafkatool._native.walk_entries_bytes`` / ``_path``) against the
Python path (``KAFKATOOL_NATIVE=0``): the same magic 2 columns, legacy columns, defects and landing, field by
field, on generated legacy message sets (every codec, the odd cases, magic 2 batches among them) with damage,
truncation and garbage; the fleet scan's rows of them; and a legacy segment walked in one native call.

Every ``.log`` of ../shared and fixtures/ (the Kafka-made legacy partitions among them) is compared by
``tests/test_native_walk.py``, whose view holds the legacy columns.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkatool.fleet.tables import batches_arrow
from kafkatool.model import Compression, LegacyBatch
from kafkatool.reading import columns
from kafkatool.reading.batch_scan import SegmentRange, scan_range
from kafkatool.schema import legacy, native
from kafkatool.schema.log_segment import walk_log
from tests.legacy_sets import legacy_segment
from tests.test_native_walk import assert_same, mutated, python_path

pytestmark = pytest.mark.skipif(native.core() is None, reason=f"native core not usable: {native.why_not()}")


def _write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("seed", range(30))
def test_generated_legacy_sets_as_the_python_path(seed: int, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(seed)
    path = _write(tmp_path, legacy_segment(rnd, rnd.randrange(1, 80), v2=seed % 2 == 0))
    assert_same(path, monkeypatch)
    size = path.stat().st_size
    a = rnd.randrange(size)
    assert_same(path, monkeypatch, start=a, stop=rnd.randrange(a, size + 1))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 1 << 30), entries=st.integers(1, 40), v2=st.booleans(),
       flips=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), max_size=6),
       cut=st.integers(0, 3000), zeros=st.booleans(), garbage=st.binary(max_size=200),
       garbage_at=st.integers(0, 1 << 20))
def test_hypothesis_legacy_sets_with_damage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, entries: int,
                                            v2: bool, flips: list[tuple[int, int]], cut: int, zeros: bool,
                                            garbage: bytes, garbage_at: int) -> None:
    data = legacy_segment(random.Random(seed), entries, v2=v2)
    at = garbage_at % (len(data) + 1)
    data = data[:at] + garbage + data[at:]
    path = _write(tmp_path, mutated(data, flips, cut, zeros) if data else data)
    assert_same(path, monkeypatch)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 1 << 30), entries=st.integers(1, 40), cut=st.integers(0, 3000))
def test_fleet_rows_of_legacy_sets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, entries: int,
                                   cut: int) -> None:
    """The fleet scan's batch rows (``batch_scan.scan_range``: legacy rows from the columns), whole and in two
    ranges, as the Python path's walker rows."""
    data = mutated(legacy_segment(random.Random(seed), entries), [], cut, False)
    path = _write(tmp_path, data)
    size = len(data)
    for start, stop in ((0, None), (0, size // 2), (size // 2, None)):
        unit = SegmentRange("d", "t", 0, str(path), start, stop, size)
        want = python_path(lambda u=unit: scan_range(u), monkeypatch)
        got = scan_range(unit)
        assert (got.lists(), got.landing, got.defects) == (want.lists(), want.landing, want.defects)
        assert batches_arrow(got).equals(batches_arrow(want))  # the fleet's Arrow table: the same types and nulls


@pytest.mark.parametrize("codec", [Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4,
                                   Compression.ZSTD])
@pytest.mark.parametrize("magic", [0, 1])
def test_a_legacy_segment_is_one_native_call(codec: Compression, magic: int, tmp_path: Path) -> None:
    """Uncompressed, gzip, snappy and zstd legacy logs are walked to the end natively, wrappers' spans included
    (zstd's from the Python path)."""
    out = bytearray()
    for k in range(50):
        message = legacy.build_message(magic=magic, attributes=0, key=b"k%d" % k, value=b"v" * k, timestamp=k)
        if codec is Compression.NONE:
            out += legacy.build_entry(k, message)
        else:
            offsets = list(range(3)) if magic == 1 else [3 * k, 3 * k + 1, 3 * k + 2]
            out += legacy.build_wrapper(magic=magic, codec=codec, offsets=offsets, messages=[message] * 3,
                                        last_offset=3 * k + 2, timestamp=k)
    data = bytes(out)
    core = native.core()
    assert core is not None
    path = _write(tmp_path, data)
    for result in (core.walk_entries_bytes(data, 0, len(data), len(data)),
                   core.walk_entries_path(str(path), 0, len(data), len(data))):
        positions, _, _, arrays, reached = result
        assert {name: a.dtype for name, a in arrays.items()} == {
            name: np.dtype(dtype) for name, dtype in columns.LEGACY_DTYPES.items()}
        cols = columns.LegacyColumns.from_arrays(arrays)
        assert reached == len(data) and len(positions) == 0 and len(cols) == 50
        walked = [e for e in walk_log(data, "f") if isinstance(e, LegacyBatch)]
        assert cols.entries(data) == walked
        # zstd frames without a content checksum (what producers write) are the Python path's to decode: codecs.rs
        native_count = {Compression.NONE: 0, Compression.ZSTD: -1}.get(codec, 3)
        assert (cols["inner_count"] == native_count).all()
    scan = columns.scan_buffer(data, "f")
    assert (scan.legacy["inner_count"] == (0 if codec is Compression.NONE else 3)).all()


def test_lz4_wrappers_have_native_spans(tmp_path: Path) -> None:
    """An lz4 wrapper (magic 0: Kafka's broken frame header checksum) is inflated by the native codecs for its
    span, the same span the Python path computes."""
    message = legacy.build_message(magic=0, attributes=0, key=None, value=b"x" * 20)
    data = b"".join(legacy.build_wrapper(magic=0, codec=Compression.LZ4, offsets=[2 * k, 2 * k + 1],
                                         messages=[message] * 2, last_offset=2 * k + 1) for k in range(10))
    core = native.core()
    assert core is not None
    *_, arrays, reached = core.walk_entries_bytes(data, 0, len(data), len(data))
    assert reached == len(data)
    assert arrays["inner_first"].tolist() == list(range(0, 20, 2))
    assert arrays["inner_count"].tolist() == [2] * 10
    walked = [e for e in walk_log(data, "f") if isinstance(e, LegacyBatch)]
    assert [e.inner_span for e in walked] == [(2 * k, 2) for k in range(10)]
    assert columns.LegacyColumns.from_arrays(arrays).entries(data) == walked


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 1 << 30), entries=st.integers(1, 40), flips=st.lists(
    st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), max_size=2))
def test_shallow_segment_reads_of_legacy_sets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int,
                                              entries: int, flips: list[tuple[int, int]]) -> None:
    """A partition read (``reading.logdir._read_segment``: the column scan, ``entry_columns.read_clean_segment``, when
    the native core is on) keeps the walker's entries and defects, legacy wrappers' inner offsets included."""
    from kafkatool.reading.logdir import read_partition

    part = tmp_path / "t-0"
    part.mkdir(exist_ok=True)
    _write(part, mutated(legacy_segment(random.Random(seed), entries), flips, 0, True))

    def view() -> tuple[list[tuple], list]:
        read = read_partition(part, "t-0")
        seg = read.segments[0]
        rows = [(e.position, e.size_in_bytes, e.crc_valid, e.base_offset, e.last_offset, e.max_timestamp)
                for e in seg.entries]
        return rows, seg.defects

    assert view() == python_path(view, monkeypatch)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 1 << 30), entries=st.integers(1, 40), flips=st.lists(
    st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), max_size=2))
def test_magic2_entries_skip_legacy_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int,
                                           entries: int, flips: list[tuple[int, int]]) -> None:
    """``SegmentEntries.magic2_entries`` (the producer replay's walk) gives the magic 2 batches of a mixed segment
    exactly as filtering its entries does, and never decodes a legacy entry on the way."""
    from kafkatool.model import RecordBatch, magic2_entries
    from kafkatool.reading.logdir import read_partition
    from kafkatool.schema import log_segment

    part = tmp_path / "t-0"
    part.mkdir(exist_ok=True)
    _write(part, mutated(legacy_segment(random.Random(seed), entries), flips, 0, True))
    seg = read_partition(part, "t-0").segments[0]
    expected = [(e.position, e.base_offset, e.crc_valid) for e in seg.entries if isinstance(e, RecordBatch)]
    real = log_segment._read_legacy

    def refused(*args: object, **kwargs: object) -> object:
        raise AssertionError("a legacy entry was read")

    monkeypatch.setattr(log_segment, "_read_legacy", refused)
    assert [(e.position, e.base_offset, e.crc_valid) for e in magic2_entries(seg.entries)] == expected
    monkeypatch.setattr(log_segment, "_read_legacy", real)


_EDGES = st.sampled_from([-(1 << 63), -(1 << 40), -1, 0, 1, 7, 26, 61, 1 << 40, (1 << 63) - 1])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=600), pos=st.integers(-(1 << 40), 1 << 40) | _EDGES,
       limit=st.integers(-(1 << 40), 1 << 40) | _EDGES, stop=st.integers(-(1 << 40), 1 << 40) | _EDGES,
       verify=st.booleans(), max_output=st.integers(0, 1 << 20))
def test_any_arguments_are_answered(tmp_path: Path, data: bytes, pos: int, limit: int, stop: int, verify: bool,
                                    max_output: int) -> None:
    """Arbitrary bytes and bounds (int64's ends included): an answer stopping inside the bytes, never a crash."""
    core = native.core()
    assert core is not None
    path = _write(tmp_path, data)
    for out in (core.walk_entries_bytes(data, pos, limit, stop, verify, max_output),
                core.walk_entries_path(str(path), pos, limit, stop, verify, max_output)):
        positions, headers, bad, legacy_arrays, reached = out
        assert len(headers) == 61 * len(positions) and set(bad.tolist()) <= set(positions.tolist())
        assert reached == pos or (0 <= pos < reached <= len(data))
        assert all(pos <= p < reached for p in legacy_arrays["position"].tolist())
