"""The native producer-state replay (``kafkatool/_core/src/producers.rs``) against the Python reference.

Storage's ``ProducerStateManager`` with ``engine.producer_state.CheckedProducerState``'s checks is the reference:
the same batches are applied by ``manager.append`` (Python) and by ``replay_columns`` (the native core over batch
columns, state in and out), and every field is compared: the producers (epochs, cached batches, Java order), the
transactions (open and seen), the anomalies (text included), the transaction-version evidence, the map end. The
batches are generated (hypothesis) and taken from every fixture and corpus partition.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkatool.engine.producer_state import CheckedProducerState, batch_columns, replay_columns
from kafkatool.model import ControlRecord, ControlType, ProducerSnapshotEntry, Record, RecordBatch
from kafkatool.schema import native
from kafkatool.storage.producer_state import InvalidTxnState, ProducerStateManager
from kafkatool.storage.transaction_version import TransactionVersion
from tests.conftest import SHARED

pytestmark = pytest.mark.skipif(native.core() is None, reason=f"native core unusable: {native.why_not()}")

ROOT = Path(__file__).resolve().parents[1]


def _batch(pos: int, base: int, delta: int, pid: int, epoch: int, seq: int, attrs: int, ts: int,
           control: ControlRecord | None) -> RecordBatch:
    records = None
    if attrs & 0x20:
        records = [Record(base, ts, None, None, control=control)] if control is not None else []
    return RecordBatch(pos, base, 100, 0, 2, 0, attrs, delta, ts, ts, pid, epoch, seq, delta + 1, True, records)


MAX = 0x7FFFFFFF
batch_spec = st.tuples(
    st.sampled_from([1, 2, 3, 1000, -1]),  # producer id
    st.sampled_from([0, 0, 0, 1, 2, -1, 32767]),  # epoch
    st.sampled_from([-1, 0, 0, 1, 2, 3, 5, 8, 13, MAX - 1, MAX]),  # base sequence
    st.integers(0, 3),  # last offset delta
    st.sampled_from(["data", "data", "txn", "txn", "commit", "abort", "other-control", "control-no-records"]),
    st.integers(-2, 3),  # coordinator epoch
    st.integers(-3, 2),  # offset step
    st.integers(0, 5_000),  # timestamp
)


def _batches(specs: list[tuple[Any, ...]]) -> list[RecordBatch]:
    out, offset = [], 0
    for i, (pid, epoch, seq, delta, kind, coord, step, ts) in enumerate(specs):
        offset = max(0, offset + step)
        attrs, control = 0, None
        if kind == "txn":
            attrs = 0x10
        elif kind in ("commit", "abort"):
            attrs, delta, seq = 0x30, 0, -1
            ctype = ControlType.COMMIT if kind == "commit" else ControlType.ABORT
            control = ControlRecord(0, ctype.value, ctype.name, 0, coord)
        elif kind == "other-control":
            attrs, control = 0x20, ControlRecord(0, 2, "LEADER_CHANGE")
        elif kind == "control-no-records":
            attrs = 0x30
        out.append(_batch(i * 100, offset, delta, pid, epoch, seq, attrs, ts, control))
        offset += delta + 1
    return out


def _state(m: ProducerStateManager) -> dict[str, Any]:
    out: dict[str, Any] = {
        "producers": [(pid, dataclasses.astuple(e)[:5], list(e.batches)) for pid, e in m.producers.items()],
        "order": m.order.order(), "snapshot": m.snapshot_entries(),
        "ongoing": [(k, dataclasses.astuple(t)) for k, t in m.ongoing.items()],
        "transactions": [dataclasses.astuple(t) for t in m.transactions],
        "shared": [t is m.ongoing.get(t.first_offset) for t in m.transactions],
        "map_end": m.map_end_offset, "last_ts": m.last_timestamp, "fuo": m.first_unstable_offset(),
    }
    if isinstance(m, CheckedProducerState):
        ev = m.evidence
        out.update(anomalies=m.anomalies, unlisted=m.unlisted, unlisted_severity=m.unlisted_severity,
                   evidence=(ev.bumps, ev.plain, ev.abort_bumps, sorted(ev.bumped), sorted(ev._data_epoch.items())))
    return out


def _manager(kind: str) -> ProducerStateManager:
    if kind == "plain":
        return ProducerStateManager(0, keep_committed=False)
    tv = {"none": None, "tv0": TransactionVersion.TV_0, "tv2": TransactionVersion.TV_2, "coordinator": None}[kind]
    return CheckedProducerState(0, client_checks=kind != "coordinator", transaction_version=tv)


def _both(batches: list[RecordBatch], kind: str, cuts: list[int], monkeypatch: pytest.MonkeyPatch,
          snapshot: list[ProducerSnapshotEntry] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    ref, nat = _manager(kind), _manager(kind)
    if snapshot is not None:
        ref.load_snapshot(snapshot, 0)
        nat.load_snapshot(snapshot, 0)
    refused: list[tuple[int, int] | None] = [None, None]  # a plain manager's InvalidTxnState: where, both paths
    with monkeypatch.context() as m:
        m.setenv("KAFKATOOL_NATIVE", "0")
        try:
            for b in batches:
                ref.append(b)
        except InvalidTxnState as err:
            refused[0] = (err.producer_id, err.offset)
    cols = batch_columns(batches)
    bounds = [0, *sorted(c % (len(batches) + 1) for c in cuts), len(batches)]
    try:
        for lo, hi in itertools.pairwise(bounds):
            replay_columns(nat, cols, lo, hi)
    except InvalidTxnState as err:
        refused[1] = (err.producer_id, err.offset)
    return {**_state(ref), "refused": refused[0]}, {**_state(nat), "refused": refused[1]}


SNAPSHOT = [ProducerSnapshotEntry(2, 0, 4, 10, 2, 500, 1, -1), ProducerSnapshotEntry(3, 1, 9, 12, 0, 600, 0, 7)]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(batch_spec, max_size=60), st.sampled_from(["none", "tv0", "tv2", "coordinator", "plain"]),
       st.lists(st.integers(0, 60), max_size=3), st.booleans())
def test_generated_batches_replay_alike(monkeypatch: pytest.MonkeyPatch, specs: list[tuple[Any, ...]], kind: str,
                                        cuts: list[int], snap: bool) -> None:
    ref, nat = _both(_batches(specs), kind, cuts, monkeypatch, SNAPSHOT if snap else None)
    assert nat == ref


def test_the_native_core_does_the_work(monkeypatch: pytest.MonkeyPatch) -> None:
    core = native.core()
    assert core is not None
    applied: list[int] = []
    real = core.replay_producers

    def spy(state: Any, cols: Any) -> Any:
        out = real(state, cols)
        applied.append(int(out["applied"]))
        return out

    monkeypatch.setattr(core, "replay_producers", spy)
    specs = [(1, 0, 3 * i, 2, "txn", 0, 0, i) for i in range(10)] + [(1, 1, -1, 0, "commit", 0, 0, 99)]
    m = _manager("tv2")
    replay_columns(m, batch_columns(_batches(specs)))
    assert applied == [11]
    assert m.transactions[0].last_offset == 30 and m.evidence.bumps == 1


def test_listed_anomalies_are_capped_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    # every batch a sequence gap: past LISTED_PER_CODE they are counted, not listed
    specs = [(1, 0, 5 * i, 0, "data", 0, 1, i) for i in range(2500)]
    ref, nat = _both(_batches(specs), "none", [700], monkeypatch)
    assert nat["unlisted"] == ref["unlisted"] and nat["unlisted"]
    assert nat == ref


def test_offsets_past_the_long_range_go_to_python(monkeypatch: pytest.MonkeyPatch) -> None:
    batches = _batches([(1, 0, 0, 2, "data", 0, 1, 1)] * 3)
    batches.append(_batch(900, (1 << 63) - 2, 5, 1, 0, 9, 0, 7, None))  # last offset past Long.MAX_VALUE
    ref, nat = _both(batches, "none", [], monkeypatch)
    assert nat == ref and nat["map_end"] == (1 << 63) + 4


def _partitions() -> list[Path]:
    roots = [ROOT / "fixtures", SHARED / "corpus", SHARED / "vectors"]
    found: set[Path] = set()
    for root in roots:
        if root.is_dir():
            found.update(p.parent for p in root.rglob("*.log") if p.is_file())
    return sorted(found)


def test_every_fixture_and_corpus_partition_replays_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    from kafkatool.errors import KafkatoolError
    from kafkatool.reading.logdir import read_partition

    seen = 0
    for directory in _partitions():
        try:
            part = read_partition(directory, directory.name)
        except (KafkatoolError, OSError):
            continue
        batches = [e for seg in part.segments for e in seg.entries if isinstance(e, RecordBatch)]
        if not batches:
            continue
        seen += 1
        for kind in ("none", "tv2", "plain"):
            ref, nat = _both(batches, kind, [len(batches) // 2], monkeypatch)
            assert nat == ref, directory
    assert seen >= 10


# -- the engines: replay-producers, simulate-restart, check and scan print the same on both paths -------------


def _log_dirs() -> list[Path]:
    """Every log dir (or lone partition directory's parent) of the fixtures and the shared corpus."""
    return sorted({p.parent for p in _partitions()})


def _outputs(args_list: list[list[str]]) -> list[tuple[int, str]]:
    from typer.testing import CliRunner

    from kafkatool.cli import app

    runner = CliRunner()
    out = []
    for args in args_list:
        res = runner.invoke(app, args)
        out.append((res.exit_code, res.stdout))
    return out


def _commands() -> list[list[str]]:
    clock = "1800000000000"
    cmds: list[list[str]] = []
    for d in _log_dirs():
        cmds.append(["simulate-restart", "-f", "json", "--now", clock, str(d)])
        cmds.append(["simulate-restart", "-f", "json", "--now", clock, "--assume", "unclean", "--recovery-point", "0",
                     str(d)])
        cmds.append(["check", "-f", "json", str(d)])
    for p in _partitions():
        cmds.append(["replay-producers", "-f", "json", "--now", clock, str(p)])
        cmds.append(["replay-producers", "-f", "json", "--now", clock, "--read-past-damage", str(p)])
        cmds.append(["replay-producers", "-f", "json", "--now", clock, "--from-snapshot", "latest", str(p)])
    return cmds


def column_read(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Segments read as ``reading.logdir._read_segment`` would with ``reading.entry_columns.read_clean_segment``
    first (the column scan of a clean segment); the list says, per segment, whether it was taken."""
    from kafkatool.reading import logdir
    from kafkatool.reading.context import resolve
    from kafkatool.reading.entry_columns import read_clean_segment
    from kafkatool.reading.files import mapped

    original = logdir._read_segment
    taken: list[bool] = []

    def read(seg: Any, path: Path, deep: bool = False, limits: Any = None) -> None:
        if not deep:
            with mapped(path) as buf:
                if read_clean_segment(seg, buf, str(path), resolve(limits)):
                    taken.append(True)
                    return
        taken.append(False)
        original(seg, path, deep, limits)

    monkeypatch.setattr(logdir, "_read_segment", read)
    return taken


def test_clean_segments_read_by_columns_as_by_the_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    from kafkatool.reading.logdir import read_partition

    for directory in _partitions():
        with monkeypatch.context() as m:
            m.setenv("KAFKATOOL_NATIVE", "0")
            ref = read_partition(directory, directory.name)
        with monkeypatch.context() as m:
            taken = column_read(m)
            nat = read_partition(directory, directory.name)
        for a, b in zip(ref.segments, nat.segments, strict=True):
            assert b.defects == a.defects, (directory, a.log_file)
            assert list(b.entries) == list(a.entries), (directory, a.log_file)
            assert list(b.entries[1:-1]) == list(a.entries[1:-1])
            assert getattr(b.entries, "max_timestamp", None) == getattr(a.entries, "max_timestamp", None)
        if any(taken):
            from kafkatool.reading.entry_columns import ColumnEntries

            # legacy (magic 0/1) entries, read from the scan's legacy columns too, take the object path here
            got = [s.entries.header_columns() for s in nat.segments if isinstance(s.entries, ColumnEntries)
                   and all(e.magic == 2 for e in s.entries)]
            assert all(c is not None for c in got)


def test_commands_print_the_same_on_both_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """KAFKATOOL_NATIVE=0 (the objects) against the native core over header columns: clean segments read by the
    column scan (``reading.entry_columns.read_clean_segment``), the others' lazily held entries given
    ``header_columns``."""
    from kafkatool.reading.entries import SegmentEntries
    from kafkatool.reading.entry_columns import header_columns

    cmds = _commands()
    with monkeypatch.context() as m:
        m.setenv("KAFKATOOL_NATIVE", "0")
        ref = _outputs(cmds)
    calls: list[bool] = []

    def counted(entries: Any) -> Any:
        cols = header_columns(entries)
        calls.append(cols is not None)
        return cols

    monkeypatch.setattr(SegmentEntries, "header_columns", counted, raising=False)
    taken = column_read(monkeypatch)
    nat = _outputs(cmds)
    assert sum(calls) > 10 and sum(taken) > 100  # the column paths did run
    for args, a, b in zip(cmds, ref, nat, strict=True):
        assert b == a, args


def test_scan_writes_the_same_tables_on_both_paths(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``scan`` (the fleet's per-partition analysis: replay, counts) of the corpus and the fixtures."""
    from kafkatool.reading.entries import SegmentEntries
    from kafkatool.reading.entry_columns import header_columns
    from tests.scan_support import read_tables

    def run(out: Path) -> tuple[list[tuple[int, str]], dict[str, Any]]:
        args = [["scan", "--no-progress", str(SHARED / "corpus"), str(ROOT / "fixtures"), "--out", str(out), "-f",
                 "json", "--fail-on", "never", "-j", "1"]]
        return _outputs(args), read_tables(out)

    with monkeypatch.context() as m:
        m.setenv("KAFKATOOL_NATIVE", "0")
        ref = run(tmp_path / "ref")
    monkeypatch.setattr(SegmentEntries, "header_columns", header_columns, raising=False)
    taken = column_read(monkeypatch)
    nat = run(tmp_path / "nat")
    assert sum(taken) > 100
    assert nat[0][0][0] == ref[0][0][0] and nat[1] == ref[1]


def test_segments_past_the_column_rows_recover_by_windows_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """A segment of more batches than one set of header columns holds (``MAX_COLUMN_ROWS``, 3 here) is recovered
    and its loss counted window by window (``segment_recovery._recover_windows``, ``column_windows``, 2 rows a
    window here; its chain of spans too, ``restart_segments._chain_from_arrays``): ``simulate-restart`` prints
    what the objects (KAFKATOOL_NATIVE=0) give, on every fixture and
    corpus log dir, from the recovery point and from offset 0."""
    from kafkatool.engine import restart_segments, segment_recovery
    from kafkatool.reading import entry_columns

    clock = "1800000000000"
    cmds = [c for d in _log_dirs() for c in (
        ["simulate-restart", "-f", "json", "--now", clock, str(d)],
        ["simulate-restart", "-f", "json", "--now", clock, "--assume", "unclean", "--recovery-point", "0", str(d)])]
    with monkeypatch.context() as m:
        m.setenv("KAFKATOOL_NATIVE", "0")
        ref = _outputs(cmds)
    monkeypatch.setattr(entry_columns, "MAX_COLUMN_ROWS", 3)
    monkeypatch.setattr(segment_recovery, "RECOVERY_WINDOW_ROWS", 2)
    monkeypatch.setattr(restart_segments, "CHAIN_WINDOW_ROWS", 2)  # the chain's spans, 2 entries a window
    real = segment_recovery._recover_windows
    windowed: list[bool] = []

    def counted(*args: Any) -> Any:
        out = real(*args)
        windowed.append(out is not None)
        return out

    monkeypatch.setattr(segment_recovery, "_recover_windows", counted)
    nat = _outputs(cmds)
    assert sum(windowed) > 20  # the windowed recovery did run
    for args, a, b in zip(cmds, ref, nat, strict=True):
        assert b == a, args
