"""The producer-state engine: each anomaly on a log that shows it, and Kafka's invariants under
random producer sessions (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkatool.engine.producer_state import CheckedProducerState as ProducerStateManager
from kafkatool.model import MAX_SEQUENCE as INT32_MAX
from kafkatool.model import Record, RecordBatch
from kafkatool.schema import producer_snapshot
from kafkatool.schema.control import build_control_key, build_end_txn_marker
from kafkatool.schema.record_batch import build_records_batch, parse_batch


class Log:
    """Builds batches as a leader would assign offsets, and feeds them to an engine."""

    def __init__(self) -> None:
        self.offset = 0
        self.clock = 1_700_000_000_000
        self.engine = ProducerStateManager()

    def data(self, pid: int, epoch: int, seq: int, count: int = 1, txn: bool = False) -> RecordBatch:
        recs = [Record(offset=i, timestamp=0, key=None, value=b"v", offset_delta=i, timestamp_delta=0)
                for i in range(count)]
        return self._append(build_records_batch(recs, base_offset=self.offset, base_timestamp=self.clock,
                                                attributes=0x10 if txn else 0, producer_id=pid,
                                                producer_epoch=epoch, base_sequence=seq))

    def marker(self, pid: int, epoch: int, commit: bool, coordinator_epoch: int = 0) -> RecordBatch:
        rec = Record(offset=0, timestamp=0, key=build_control_key(1 if commit else 0),
                     value=build_end_txn_marker(coordinator_epoch))
        return self._append(build_records_batch([rec], base_offset=self.offset, base_timestamp=self.clock,
                                                attributes=0x30, producer_id=pid, producer_epoch=epoch))

    def _append(self, data: bytes) -> RecordBatch:
        batch = parse_batch(data)
        self.engine.append(batch)
        self.offset = batch.last_offset + 1
        self.clock += 10
        return batch

    def codes(self) -> list[str]:
        return [a.code for a in self.engine.anomalies]


def test_clean_idempotent_history_has_no_anomaly() -> None:
    log = Log()
    log.data(1, 0, 0, 3)
    log.data(1, 0, 3, 2)
    log.data(1, 1, 0, 1)  # epoch bump with sequence reset: fine
    log.data(2, 0, INT32_MAX, 1)
    log.data(2, 0, 0, 1)  # wraparound at Int32 max: fine
    assert log.codes() == []
    entry = log.engine.producers[1]
    assert (entry.producer_epoch, entry.last_seq, len(entry.batches)) == (1, 0, 1)


def test_each_anomaly_is_reported() -> None:
    cases = {
        "sequence-gap": lambda log: (log.data(1, 0, 0, 2), log.data(1, 0, 5)),
        "duplicate-batch": lambda log: (log.data(1, 0, 0, 2), log.data(1, 0, 0, 2)),
        "epoch-regression": lambda log: (log.data(1, 3, 0), log.data(1, 2, 1)),
        "epoch-bump-without-reset": lambda log: (log.data(1, 0, 0), log.data(1, 1, 7)),
        "sequence-reset": lambda log: (log.data(1, 0, 0, 4), log.data(1, 0, 0, 1)),
        "marker-without-transaction": lambda log: log.marker(1, 0, True),
        "coordinator-epoch-regression": lambda log: (log.data(1, 0, 0, txn=True), log.marker(1, 0, True, 5),
                                                     log.data(1, 0, 1, txn=True), log.marker(1, 0, False, 4)),
        "non-transactional-in-txn": lambda log: (log.data(1, 0, 0, txn=True), log.data(1, 0, 1)),
    }
    for code, scenario in cases.items():
        log = Log()
        scenario(log)
        assert code in log.codes(), (code, log.codes())


def test_transactions_lso_and_hanging() -> None:
    log = Log()
    log.data(1, 0, 0, 2, txn=True)          # offsets 0-1, producer 1 opens at 0
    log.data(2, 0, 0, 1, txn=True)          # offset 2, producer 2 opens at 2
    log.marker(1, 0, commit=False)          # offset 3: abort; LSO then = 2 (producer 2 still open)
    e = log.engine
    [aborted] = [t for t in e.transactions if t.aborted]
    assert (aborted.first_offset, aborted.last_offset, aborted.last_stable_offset) == (0, 3, 2)
    assert e.first_unstable_offset() == 2 and e.last_stable_offset(4) == 2
    [open_txn] = e.hanging(now=log.clock + 20 * 60 * 1000, timeout_ms=15 * 60 * 1000)
    assert (open_txn.producer_id, open_txn.first_offset) == (2, 2)
    log.marker(2, 0, commit=True)
    assert e.first_unstable_offset() is None and e.last_stable_offset(5) == 5


sessions = st.lists(st.tuples(st.integers(1, 4), st.integers(1, 6), st.booleans(), st.sampled_from(
    ["data", "data", "data", "commit", "abort", "bump"])), min_size=1, max_size=60)


@settings(max_examples=150, deadline=None)
@given(sessions)
def test_well_behaved_sessions_keep_kafkas_invariants(steps: list[tuple[int, int, bool, str]]) -> None:
    log = Log()
    state: dict[int, dict] = {}
    for pid, count, txn_wanted, action in steps:
        s = state.setdefault(pid, {"epoch": 0, "seq": 0, "txn": False, "transactional": txn_wanted,
                                   "logged_epoch": 0})
        if action == "bump":
            if s["txn"]:
                log.marker(pid, s["epoch"], commit=False)
                s["txn"] = False
            s["epoch"] += 1
            s["seq"] = 0
        elif action in ("commit", "abort"):
            if s["txn"]:
                log.marker(pid, s["epoch"], commit=action == "commit")
                s["txn"] = False
        else:
            log.data(pid, s["epoch"], s["seq"], count, txn=s["transactional"])
            s["logged_epoch"] = s["epoch"]
            s["seq"] += count
            s["txn"] = s["txn"] or s["transactional"]
    e = log.engine
    assert log.codes() == []
    for pid, s in state.items():
        entry = e.producers.get(pid)
        if entry is None:
            continue
        assert entry.producer_epoch == s["logged_epoch"]
        assert len(entry.batches) <= 5
        assert [b.last_offset for b in entry.batches] == sorted(b.last_offset for b in entry.batches)
        if entry.batches and s["logged_epoch"] == s["epoch"]:
            assert entry.last_seq == s["seq"] - 1
        assert (entry.current_txn_first_offset is not None) == s["txn"]
    open_firsts = [t.first_offset for t in e.transactions if t.aborted is None]
    assert e.first_unstable_offset() == (min(open_firsts) if open_firsts else None)
    # A snapshot of the state reads back to the same entries (what a restart would load).
    entries = e.snapshot_entries()
    assert producer_snapshot.parse_producer_snapshot(producer_snapshot.build_producer_snapshot(entries)).entries \
        == entries
