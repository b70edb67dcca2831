"""storage.producer_state against Kafka's documented behaviour (``ProducerStateEntry``, ``BatchMetadata``,
``ProducerAppendInfo``'s checks, ``ProducerStateManager``), one rule per test."""

from __future__ import annotations

from kafkatool.model import MAX_SEQUENCE, NO_PRODUCER_EPOCH, NO_SEQUENCE, ProducerSnapshotEntry
from kafkatool.storage.producer_state import (
    NUM_BATCHES_TO_RETAIN,
    AppendCheck,
    BatchMetadata,
    ProducerStateEntry,
    ProducerStateManager,
    check_coordinator_epoch,
    check_data_append,
    check_producer_epoch,
    check_sequence,
    check_transactional,
)


def _entry(epoch: int, *batches: tuple[int, int, int]) -> ProducerStateEntry:
    """An entry of ``epoch`` with batches given as (first seq, first offset, record count)."""
    e = ProducerStateEntry(7)
    for first_seq, first_offset, count in batches:
        e.add_batch(epoch, first_seq + count - 1, first_offset + count - 1, count - 1, 1000 + first_offset)
    if not batches:
        e.producer_epoch = epoch
    return e


def test_batch_metadata_derives_first_sequence_and_offset_wrapping() -> None:
    b = BatchMetadata(last_seq=2, last_offset=104, offset_delta=4, timestamp=1)
    assert b.first_offset == 100
    assert b.first_seq == MAX_SEQUENCE - 1  # MAX-1, MAX, 0, 1, 2


def test_entry_retains_five_batches_and_forgets_them_on_a_new_epoch() -> None:
    e = _entry(0, *[(i * 2, i * 2, 2) for i in range(7)])
    assert NUM_BATCHES_TO_RETAIN == 5 and len(e.batches) == 5
    assert (e.first_seq, e.last_seq, e.first_data_offset, e.last_data_offset) == (4, 13, 4, 13)
    e.add_batch(1, 0, 20, 0, 2000)
    assert (e.producer_epoch, len(e.batches), e.first_seq, e.last_timestamp) == (1, 1, 0, 2000)


def test_empty_entry_has_no_sequence_and_no_offsets() -> None:
    e = ProducerStateEntry(3)
    assert (e.producer_epoch, e.first_seq, e.last_seq, e.last_data_offset, e.last_offset_delta) == (
        NO_PRODUCER_EPOCH, NO_SEQUENCE, NO_SEQUENCE, -1, 0)


def test_find_duplicate_batch_needs_same_epoch_and_same_range() -> None:
    e = _entry(2, (0, 10, 3), (3, 13, 3))
    assert e.find_duplicate_batch(2, 0, 2) == e.batches[0]
    assert e.find_duplicate_batch(2, 3, 5) == e.batches[1]
    assert e.find_duplicate_batch(2, 0, 5) is None  # a range spanning two batches is not a duplicate
    assert e.find_duplicate_batch(3, 0, 2) is None  # another epoch never is


def test_producer_epoch_below_the_current_one_is_fenced() -> None:
    e = _entry(5, (0, 0, 1))
    assert check_producer_epoch(e, 4) is AppendCheck.FENCED_EPOCH
    assert AppendCheck.FENCED_EPOCH.exception == "InvalidProducerEpochException"
    assert check_producer_epoch(e, 5) is None and check_producer_epoch(e, 6) is None


def test_sequence_continues_and_wraps_after_int_max() -> None:
    e = _entry(0, (0, 0, 3))
    assert check_sequence(e, 0, 3) is None
    for bad in (2, 4, 0):
        assert check_sequence(e, 0, bad) is AppendCheck.OUT_OF_ORDER_SEQUENCE
    wrapped = _entry(0, (MAX_SEQUENCE - 1, 0, 2))
    assert wrapped.last_seq == MAX_SEQUENCE and check_sequence(wrapped, 0, 0) is None
    assert AppendCheck.OUT_OF_ORDER_SEQUENCE.exception == "OutOfOrderSequenceException"


def test_a_new_epoch_starts_at_sequence_zero() -> None:
    e = _entry(0, (0, 0, 3))
    assert check_sequence(e, 1, 0) is None
    assert check_sequence(e, 1, 3) is AppendCheck.NEW_EPOCH_NOT_AT_ZERO
    assert AppendCheck.NEW_EPOCH_NOT_AT_ZERO.exception == "OutOfOrderSequenceException"


def test_without_a_producer_epoch_any_sequence_is_accepted() -> None:
    """checkSequence: "If there is no current producer epoch (possibly because all producer records have been
    deleted due to retention or the DeleteRecords API) accept writes with any sequence number"."""
    e = ProducerStateEntry(7)
    assert check_sequence(e, 0, 42) is None and check_sequence(e, NO_PRODUCER_EPOCH, 42) is None
    assert check_data_append(None, 0, 42, False) is None


def test_same_epoch_without_cached_batches_starts_at_zero() -> None:
    """After a marker bumped the epoch the entry has no batches: inSequence(-1, seq) holds only for 0."""
    e = _entry(3)
    assert check_sequence(e, 3, 0) is None
    assert check_sequence(e, 3, 1) is AppendCheck.OUT_OF_ORDER_SEQUENCE


def test_non_transactional_write_inside_a_transaction_is_refused() -> None:
    e = _entry(0, (0, 0, 1))
    assert check_transactional(e, False) is None
    e.current_txn_first_offset = 0
    assert check_transactional(e, True) is None
    assert check_transactional(e, False) is AppendCheck.NON_TRANSACTIONAL_IN_TXN
    assert AppendCheck.NON_TRANSACTIONAL_IN_TXN.exception == "InvalidTxnStateException"


def test_marker_of_an_older_coordinator_is_fenced() -> None:
    e = _entry(0, (0, 0, 1))
    e.end_transaction(0, 4, 10)
    assert check_coordinator_epoch(e, 3) is AppendCheck.COORDINATOR_FENCED
    assert check_coordinator_epoch(e, 4) is None and check_coordinator_epoch(e, 5) is None
    assert AppendCheck.COORDINATOR_FENCED.exception == "TransactionCoordinatorFencedException"


def test_data_checks_run_in_kafkas_order() -> None:
    e = _entry(2, (0, 0, 1))
    e.current_txn_first_offset = 0
    assert check_data_append(e, 1, 9, False) is AppendCheck.FENCED_EPOCH  # epoch before sequence
    assert check_data_append(e, 2, 9, False) is AppendCheck.OUT_OF_ORDER_SEQUENCE  # sequence before txn state
    assert check_data_append(e, 2, 1, False) is AppendCheck.NON_TRANSACTIONAL_IN_TXN
    assert check_data_append(e, 2, 1, True) is None


def test_transactions_complete_with_the_last_stable_offset() -> None:
    m = ProducerStateManager(keep_committed=False)
    started = m.append_data(1, 0, 0, 10, 10, 100, True)
    assert started is not None and started.first_offset == 10
    assert m.append_data(1, 0, 1, 11, 11, 101, True) is None  # the open transaction continues
    m.append_data(2, 0, 0, 12, 12, 102, True)
    assert m.first_unstable_offset() == 10 and m.last_stable_offset(11) == 10 and m.last_stable_offset(5) == 5
    done = m.append_end_txn_marker(1, 0, 3, True, 13, 103)
    assert done is not None and (done.first_offset, done.last_offset, done.aborted) == (10, 13, True)
    assert done.last_stable_offset == 12  # the other producer's open transaction holds the LSO
    assert m.transactions == [done] and m.producers[1].current_txn_first_offset is None
    assert m.producers[1].coordinator_epoch == 3
    last = m.append_end_txn_marker(2, 0, 3, False, 14, 104)
    assert last is not None and last.last_stable_offset == 15 and m.transactions == [done]  # commits not kept
    assert m.first_unstable_offset() is None
    assert m.append_end_txn_marker(2, 0, 3, False, 15, 105) is None  # no open transaction


def test_snapshot_round_trip_and_empty_entry() -> None:
    e = _entry(4, (7, 20, 3))
    e.coordinator_epoch, e.current_txn_first_offset = 2, 20
    snap = e.to_snapshot()
    assert snap == ProducerSnapshotEntry(7, 4, 9, 22, 2, 1020, 2, 20)
    back = ProducerStateEntry.from_snapshot(snap)
    assert (back.last_seq, back.first_seq, back.last_data_offset, back.current_txn_first_offset) == (9, 7, 22, 20)
    empty = ProducerStateEntry.from_snapshot(ProducerSnapshotEntry(8, 1, -1, -1, 0, 5, -1, -1))
    assert not empty.batches and empty.current_txn_first_offset is None
    assert empty.to_snapshot() == ProducerSnapshotEntry(8, 1, -1, -1, 0, 5, -1, -1)


def test_snapshot_lists_producers_in_java_hashmap_order() -> None:
    m = ProducerStateManager()
    for pid in (1, 16, 2):
        m.append_data(pid, 0, 0, pid, pid, 0, False)
    assert [e.producer_id for e in m.snapshot_entries()] == [16, 1, 2]  # buckets 0, 1, 2 of 16


def test_take_snapshot_only_past_the_last_one() -> None:
    m = ProducerStateManager()
    assert m.take_snapshot() is None  # map end 0 is not past the last snapshot (0)
    m.map_end_offset = 5
    assert m.take_snapshot() == [] and m.last_snap_offset == 5
    assert m.take_snapshot() is None


def test_loading_a_snapshot_reopens_its_transactions() -> None:
    m = ProducerStateManager()
    open_txn, idle = ProducerSnapshotEntry(3, 0, 4, 40, 0, 9, -1, 38), ProducerSnapshotEntry(4, 0, 1, 41, 0, 9, -1, -1)
    m.load_snapshot([open_txn, idle], 42)
    assert m.map_end_offset == 42 and m.first_unstable_offset() == 38 and sorted(m.producers) == [3, 4]
    assert [t.first_offset for t in m.transactions] == [38]


def test_producer_expiry_spares_open_transactions() -> None:
    e = _entry(0, (0, 0, 1))  # last timestamp 1000
    assert e.is_expired(now=1000 + 60, expiration_ms=60) and not e.is_expired(now=1000 + 59, expiration_ms=60)
    e.current_txn_first_offset = 0
    assert not e.is_expired(now=10**9, expiration_ms=60)
