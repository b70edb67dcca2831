"""Kafka's producer-state rules, once: the entry, its append checks and the manager, pure.

Models storage's ``org.apache.kafka.storage.internals.log`` classes:

- :class:`BatchMetadata` -- ``BatchMetadata``: one cached batch (last sequence, last offset, offset delta,
  timestamp); the first sequence and offset are derived, wrapping like ``DefaultRecordBatch.decrementSequence``.
- :class:`ProducerStateEntry` -- ``ProducerStateEntry``: epoch, coordinator epoch, last timestamp, the first
  offset of the open transaction and a deque of the last :data:`NUM_BATCHES_TO_RETAIN` batches
  (``addBatch``, ``maybeUpdateProducerEpoch``, ``findDuplicateBatch``); snapshot form via ``to_snapshot`` /
  ``from_snapshot`` (``ProducerStateManager.writeSnapshot`` / ``readSnapshot``).
- the checks of ``ProducerAppendInfo`` for an append of client origin, as verdicts (:class:`AppendCheck`,
  ``None`` when Kafka accepts): :func:`check_producer_epoch` (``checkProducerEpoch``), :func:`check_sequence`
  (``checkSequence``, with :func:`~kafkatool.storage.sequence.in_sequence`), :func:`check_marker_epoch`
  (``checkProducerEpoch`` for a marker, by transaction version, Kafka 4.1+), :func:`check_transactional` (the
  ``InvalidTxnStateException`` of ``appendDataBatch``), :func:`check_coordinator_epoch`
  (``checkCoordinatorEpoch`` of ``appendEndTxnMarker``), and :func:`check_data_append` (all of a data batch's, in
  Kafka's order). Callers decide what a verdict means: the fixture writer refuses the append (client origin),
  the replay engine reports an anomaly (the log's origin is replication/recovery, where Kafka only logs, except
  for the transactional check, which throws for every origin: :class:`InvalidTxnState`, raised by the manager).
- :class:`ProducerStateManager` -- ``ProducerStateManager`` with ``ProducerAppendInfo``'s state changes of
  replication/recovery origin (what ``LogSegment.recover`` and ``UnifiedLog.rebuildProducerState`` apply):
  producers in a ``java.util.HashMap`` (snapshot order via :class:`~kafkatool.storage.java_hash.LongHashMapOrder`),
  the ongoing transactions (``TxnMetadata``, keyed by first offset), ``lastStableOffset(CompletedTxn)``, the
  first unstable offset, ``takeSnapshot``'s "only past the last snapshot" rule, and ``isProducerExpired``.

API for engines (replay, restart) and the fixture writer:

- ``ProducerStateManager(start_offset=0, *, keep_committed=True)``; ``append(batch)`` applies one decoded magic 2
  :class:`~kafkatool.model.RecordBatch` and moves the map end past it; ``append_data(...)`` /
  ``append_end_txn_marker(...)`` are the same state changes from plain values (the map end is not moved: set
  ``map_end_offset`` as ``updateMapEndOffset`` does);
- ``load_snapshot(entries, offset)``, ``snapshot_entries()``, ``take_snapshot()`` (entries or ``None``),
  ``first_unstable_offset()``, ``last_stable_offset(hw)``, ``hanging(now, timeout_ms)``;
- ``producers`` (pid -> :class:`ProducerStateEntry`), ``order``, ``ongoing`` (first offset -> :class:`Transaction`),
  ``transactions`` (the transactions seen: all, or only the completed aborted ones with ``keep_committed=False``,
  which is what a restart's transaction indexes need), ``map_end_offset``, ``last_snap_offset``,
  ``last_timestamp`` (the highest batch max timestamp applied).

Pure and deterministic: no I/O, no reporting.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from enum import Enum

from kafkatool.model import (
    NO_PRODUCER_EPOCH,
    NO_SEQUENCE,
    ControlType,
    LogEntry,
    ProducerSnapshotEntry,
    RecordBatch,
    decrement_sequence,
)
from kafkatool.storage.java_hash import LongHashMapOrder
from kafkatool.storage.sequence import in_sequence

NUM_BATCHES_TO_RETAIN = 5
"""``ProducerStateEntry.NUM_BATCHES_TO_RETAIN``: the batches cached per producer for duplicate detection."""
NO_COORDINATOR_EPOCH = -1
"""The coordinator epoch of a producer that has seen no transaction marker."""
NO_LAST_OFFSET = -1
"""``ProducerStateEntry.lastDataOffset()`` with no cached batch."""


#: The ``marker`` of a replay's batch columns: -1 no transaction marker, 0 ABORT, 1 COMMIT (with its coordinator
#: epoch beside it), as ``ProducerStateManager.append`` reads a control batch's first record.
NO_MARKER, ABORT_MARKER, COMMIT_MARKER = -1, 0, 1


def marker_of(batch: LogEntry) -> tuple[int, int]:
    """A batch's ``marker`` and ``coordinator_epoch`` (:data:`NO_MARKER` and 0 when it is no transaction marker:
    not a control batch, no decoded records, or a first record that is no end-transaction marker)."""
    if not isinstance(batch, RecordBatch) or not batch.is_control or not batch.records:
        return NO_MARKER, 0
    control = batch.records[0].control
    if control is None or control.coordinator_epoch is None:
        return NO_MARKER, 0
    return (COMMIT_MARKER if control.type == ControlType.COMMIT.value else ABORT_MARKER), control.coordinator_epoch


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    """Kafka's ``BatchMetadata``: one cached batch of a producer (used for duplicate detection)."""

    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        """``firstSeq()``: the last sequence minus the offset delta, wrapping."""
        return decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        """``firstOffset()``: the last offset minus the offset delta."""
        return self.last_offset - self.offset_delta


@dataclass(slots=True)
class ProducerStateEntry:
    """Kafka's ``ProducerStateEntry``: one producer's epoch, cached batches and transaction state."""

    producer_id: int
    producer_epoch: int = NO_PRODUCER_EPOCH
    coordinator_epoch: int = NO_COORDINATOR_EPOCH
    last_timestamp: int = -1
    current_txn_first_offset: int | None = None
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=NUM_BATCHES_TO_RETAIN))

    @property
    def first_seq(self) -> int:
        """``firstSeq()``: the oldest cached batch's first sequence, or ``NO_SEQUENCE``."""
        return self.batches[0].first_seq if self.batches else NO_SEQUENCE

    @property
    def last_seq(self) -> int:
        """``lastSeq()``: the newest cached batch's last sequence, or ``NO_SEQUENCE``."""
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    @property
    def first_data_offset(self) -> int:
        """``firstDataOffset()``: the oldest cached batch's first offset, or -1."""
        return self.batches[0].first_offset if self.batches else NO_LAST_OFFSET

    @property
    def last_data_offset(self) -> int:
        """``lastDataOffset()``: the newest cached batch's last offset, or -1."""
        return self.batches[-1].last_offset if self.batches else NO_LAST_OFFSET

    @property
    def last_offset_delta(self) -> int:
        """``lastOffsetDelta()``: the newest cached batch's offset delta, or 0."""
        return self.batches[-1].offset_delta if self.batches else 0

    def maybe_update_epoch(self, epoch: int) -> None:
        """``maybeUpdateProducerEpoch``: a new epoch forgets the cached batches."""
        if self.producer_epoch != epoch:
            self.batches.clear()
            self.producer_epoch = epoch

    def add_batch(self, epoch: int, last_seq: int, last_offset: int, offset_delta: int, timestamp: int) -> None:
        """``addBatch``: cache the batch (the oldest of more than five is dropped)."""
        self.maybe_update_epoch(epoch)
        self.batches.append(BatchMetadata(last_seq, last_offset, offset_delta, timestamp))
        self.last_timestamp = timestamp

    def find_duplicate_batch(self, epoch: int, first_seq: int, last_seq: int) -> BatchMetadata | None:
        """``findDuplicateBatch``: the cached batch of the same epoch with the same sequence range."""
        if epoch != self.producer_epoch:
            return None
        # The cheap last-sequence test first: this runs for every producer batch of every replayed segment.
        for b in self.batches:
            if b.last_seq == last_seq and b.first_seq == first_seq:
                return b
        return None

    def end_transaction(self, epoch: int, coordinator_epoch: int, timestamp: int) -> None:
        """What ``appendEndTxnMarker`` does to the entry: epoch, coordinator epoch, no open transaction."""
        self.maybe_update_epoch(epoch)
        self.coordinator_epoch = coordinator_epoch
        self.current_txn_first_offset = None
        self.last_timestamp = timestamp

    def is_expired(self, now: int, expiration_ms: int) -> bool:
        """``ProducerStateManager.isProducerExpired``: no open transaction and idle for ``expiration_ms``."""
        return self.current_txn_first_offset is None and now - self.last_timestamp >= expiration_ms

    def to_snapshot(self) -> ProducerSnapshotEntry:
        """The entry as ``writeSnapshot`` stores it."""
        return ProducerSnapshotEntry(self.producer_id, self.producer_epoch, self.last_seq, self.last_data_offset,
                                     self.last_offset_delta, self.last_timestamp, self.coordinator_epoch,
                                     -1 if self.current_txn_first_offset is None else self.current_txn_first_offset)

    @classmethod
    def from_snapshot(cls, e: ProducerSnapshotEntry) -> ProducerStateEntry:
        """``readSnapshot``: one cached batch when the snapshot has a last offset."""
        entry = cls(e.producer_id, e.producer_epoch, e.coordinator_epoch, e.timestamp,
                    None if e.current_txn_first_offset < 0 else e.current_txn_first_offset)
        if e.last_offset >= 0:
            entry.batches.append(BatchMetadata(e.last_sequence, e.last_offset, e.offset_delta, e.timestamp))
        return entry


# -- ProducerAppendInfo's checks ------------------------------------------------------------------------


class AppendCheck(Enum):
    """A check of ``ProducerAppendInfo`` that an append fails. Kafka throws :attr:`exception` to a client; for
    replication/recovery origin it logs the epoch and coordinator checks and skips the sequence checks, but
    :attr:`NON_TRANSACTIONAL_IN_TXN` throws for every origin (:class:`InvalidTxnState`)."""

    FENCED_EPOCH = "fenced-epoch"  # checkProducerEpoch: epoch below the producer's
    NEW_EPOCH_NOT_AT_ZERO = "new-epoch-not-at-zero"  # checkSequence: a new epoch must start at sequence 0
    OUT_OF_ORDER_SEQUENCE = "out-of-order-sequence"  # checkSequence: not last + 1 (nor a wrap to 0)
    NON_TRANSACTIONAL_IN_TXN = "non-transactional-in-txn"  # appendDataBatch: a plain write in an open txn
    COORDINATOR_FENCED = "coordinator-fenced"  # checkCoordinatorEpoch: marker of an older coordinator

    @property
    def exception(self) -> str:
        """The simple name of the exception Kafka throws."""
        return _EXCEPTIONS[self]


_EXCEPTIONS = {
    AppendCheck.FENCED_EPOCH: "InvalidProducerEpochException",
    AppendCheck.NEW_EPOCH_NOT_AT_ZERO: "OutOfOrderSequenceException",
    AppendCheck.OUT_OF_ORDER_SEQUENCE: "OutOfOrderSequenceException",
    AppendCheck.NON_TRANSACTIONAL_IN_TXN: "InvalidTxnStateException",
    AppendCheck.COORDINATOR_FENCED: "TransactionCoordinatorFencedException",
}


def check_producer_epoch(entry: ProducerStateEntry, epoch: int) -> AppendCheck | None:
    """``checkProducerEpoch``: an epoch below the producer's is fenced."""
    return AppendCheck.FENCED_EPOCH if epoch < entry.producer_epoch else None


MAX_PRODUCER_EPOCH = 32767
"""``Short.MAX_VALUE``: the last epoch of a producer id."""


def check_marker_epoch(entry: ProducerStateEntry, epoch: int, transaction_version: int = 0) -> AppendCheck | None:
    """``checkProducerEpoch`` for a marker as Kafka 4.1+ runs it with the marker's transaction version: below
    TV_2 an epoch below the producer's is fenced (:func:`check_producer_epoch`); with TV_2 the marker must bump
    the epoch (an epoch at or below the producer's is fenced), except an idempotent retry of a marker at the
    producer's epoch when no transaction is open (or the epoch is ``Short.MAX_VALUE``)."""
    if transaction_version < 2:
        return check_producer_epoch(entry, epoch)
    if epoch > entry.producer_epoch:
        return None
    if epoch == entry.producer_epoch and (entry.current_txn_first_offset is None or epoch == MAX_PRODUCER_EPOCH):
        return None
    return AppendCheck.FENCED_EPOCH


def check_sequence(entry: ProducerStateEntry, epoch: int, first_seq: int) -> AppendCheck | None:
    """``checkSequence`` against the producer's current entry: a new epoch starts at sequence 0 (unless the
    producer had no epoch), the same epoch continues the last sequence; with no producer epoch known (its
    records removed by retention or DeleteRecords) any sequence is accepted."""
    if epoch != entry.producer_epoch:
        if first_seq != 0 and entry.producer_epoch != NO_PRODUCER_EPOCH:
            return AppendCheck.NEW_EPOCH_NOT_AT_ZERO
        return None
    if entry.producer_epoch == NO_PRODUCER_EPOCH or in_sequence(entry.last_seq, first_seq):
        return None
    return AppendCheck.OUT_OF_ORDER_SEQUENCE


def check_transactional(entry: ProducerStateEntry, transactional: bool) -> AppendCheck | None:
    """``appendDataBatch``: a non-transactional batch while the producer's transaction is open is refused."""
    if entry.current_txn_first_offset is not None and not transactional:
        return AppendCheck.NON_TRANSACTIONAL_IN_TXN
    return None


class InvalidTxnState(Exception):
    """``InvalidTxnStateException`` thrown by ``appendDataBatch`` whatever the append's origin: a producer's
    non-transactional batch while its transaction is open. During a load (``LogSegment.recover``,
    ``UnifiedLog.rebuildProducerState``, both origin REPLICATION) it stops the load: ``LogManager`` reports
    "Error starting LogManager" and the broker halts (Kafka 3.9.2 and 4.4.0 alike, checked on a real broker)."""

    def __init__(self, producer_id: int, offset: int) -> None:
        self.producer_id = producer_id
        self.offset = offset
        super().__init__(f"Expected transactional write from producer {producer_id} at offset {offset}")

    def kafka_message(self, partition: str) -> str:
        """Kafka's exception line: the offset metadata of a load's append carries no segment (``[-1:-1]``)."""
        return (f"org.apache.kafka.common.errors.InvalidTxnStateException: Expected transactional write from "
                f"producer {self.producer_id} at offset (offset={self.offset}, segment=[-1:-1]) in partition "
                f"{partition}")


def check_coordinator_epoch(entry: ProducerStateEntry, coordinator_epoch: int) -> AppendCheck | None:
    """``checkCoordinatorEpoch``: a marker from an older transaction coordinator is fenced."""
    return AppendCheck.COORDINATOR_FENCED if entry.coordinator_epoch > coordinator_epoch else None


def check_data_append(entry: ProducerStateEntry | None, epoch: int, first_seq: int,
                      transactional: bool) -> AppendCheck | None:
    """A client-origin data batch's checks in Kafka's order (epoch, sequence, transaction state); a producer
    unknown or without an epoch is accepted as it comes."""
    if entry is None or entry.producer_epoch == NO_PRODUCER_EPOCH:
        return None
    return (check_producer_epoch(entry, epoch) or check_sequence(entry, epoch, first_seq)
            or check_transactional(entry, transactional))


# -- the manager -------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Transaction:
    """A transaction seen in the log: Kafka's ``TxnMetadata`` (producer, first offset; ``lastOffset`` once
    completed) joined with its ``CompletedTxn`` (aborted?, the last stable offset for the ``AbortedTxn``), plus
    the epochs and timestamps a forensic report wants."""

    producer_id: int
    producer_epoch: int
    first_offset: int
    first_timestamp: int
    last_offset: int | None = None
    aborted: bool | None = None
    last_stable_offset: int | None = None
    end_timestamp: int | None = None
    coordinator_epoch: int | None = None


class ProducerStateManager:
    """Kafka's ``ProducerStateManager`` over appends of replication/recovery origin (nothing is rejected but a
    non-transactional batch inside an open transaction, :class:`InvalidTxnState`, as Kafka does for any origin).

    Holds per-producer state (five cached batches each) in Java ``HashMap`` order, the open transactions, the
    map end offset and the offset of the last snapshot taken; ``transactions`` lists the transactions seen
    (only the completed aborted ones with ``keep_committed=False``, what a restart needs for its transaction
    indexes).
    """

    def __init__(self, start_offset: int = 0, *, keep_committed: bool = True,
                 refuse_invalid_txn: bool = True) -> None:
        self.refuse_invalid_txn = refuse_invalid_txn
        self.producers: dict[int, ProducerStateEntry] = {}
        self.order = LongHashMapOrder()
        self.ongoing: dict[int, Transaction] = {}  # first offset -> transaction
        self.transactions: list[Transaction] = []
        self.keep_committed = keep_committed
        self.map_end_offset = start_offset
        self.last_snap_offset = 0
        self.last_timestamp = -1

    # -- loading --------------------------------------------------------------------------------------

    def load_snapshot(self, entries: list[ProducerSnapshotEntry], offset: int) -> None:
        """``loadFromSnapshot``: replace the state with a snapshot's producers (expired ones are the caller's
        to drop, see :meth:`ProducerStateEntry.is_expired`)."""
        self.producers.clear()
        self.order.clear()
        self.ongoing.clear()
        for e in entries:
            entry = ProducerStateEntry.from_snapshot(e)
            self._put(entry)
            if entry.current_txn_first_offset is not None:
                txn = Transaction(e.producer_id, e.producer_epoch, entry.current_txn_first_offset, e.timestamp)
                self.ongoing[txn.first_offset] = txn
                if self.keep_committed:
                    self.transactions.append(txn)
        self.map_end_offset = offset

    def _put(self, entry: ProducerStateEntry) -> None:
        self.producers[entry.producer_id] = entry
        self.order.put(entry.producer_id)

    def entry(self, producer_id: int) -> ProducerStateEntry:
        """The producer's entry, created empty when new (``prepareUpdate``'s ``ProducerStateEntry.empty``)."""
        entry = self.producers.get(producer_id)
        if entry is None:
            entry = ProducerStateEntry(producer_id)
            self._put(entry)
        return entry

    # -- appending ------------------------------------------------------------------------------------

    def append(self, batch: RecordBatch) -> None:
        """Apply one magic 2 batch, as ``LogSegment.recover`` does (control batches need their records), and
        move the map end past it."""
        if batch.max_timestamp > self.last_timestamp:
            self.last_timestamp = batch.max_timestamp
        if batch.producer_id >= 0:
            if batch.is_control:
                control = batch.records[0].control if batch.records else None
                if control is not None and control.coordinator_epoch is not None:
                    self.append_end_txn_marker(batch.producer_id, batch.producer_epoch, control.coordinator_epoch,
                                               control.type == ControlType.ABORT.value, batch.base_offset,
                                               batch.max_timestamp)
                # else: not a transaction marker (or no records): no producer state change
            else:
                self.append_data(batch.producer_id, batch.producer_epoch, batch.last_sequence, batch.base_offset,
                                 batch.last_offset, batch.max_timestamp, batch.is_transactional)
        self.map_end_offset = batch.last_offset + 1

    def append_data(self, producer_id: int, epoch: int, last_seq: int, first_offset: int, last_offset: int,
                    timestamp: int, transactional: bool) -> Transaction | None:
        """``appendDataBatch``'s state change: cache the batch; a transactional batch with no open transaction
        starts one (returned). A non-transactional batch inside the producer's open transaction raises
        :class:`InvalidTxnState` before any change (Kafka throws for every origin), unless the manager was made
        with ``refuse_invalid_txn=False`` (a forensic replay that reports it and carries on)."""
        entry = self.entry(producer_id)
        if self.refuse_invalid_txn and check_transactional(entry, transactional):
            raise InvalidTxnState(producer_id, first_offset)
        entry.add_batch(epoch, last_seq, last_offset, last_offset - first_offset, timestamp)
        if entry.current_txn_first_offset is None and transactional:
            entry.current_txn_first_offset = first_offset
            txn = Transaction(producer_id, epoch, first_offset, timestamp)
            self.ongoing[first_offset] = txn
            if self.keep_committed:
                self.transactions.append(txn)
            return txn
        return None

    def append_end_txn_marker(self, producer_id: int, epoch: int, coordinator_epoch: int, aborted: bool,
                              offset: int, timestamp: int) -> Transaction | None:
        """``appendEndTxnMarker`` with ``completeTxn``: the open transaction (if any) ends at ``offset`` with
        its last stable offset, and is returned; the entry takes the marker's epochs."""
        entry = self.entry(producer_id)
        first = entry.current_txn_first_offset
        txn = self.ongoing.pop(first, None) if first is not None else None
        if txn is not None:
            txn.last_offset = offset
            txn.aborted = aborted
            txn.last_stable_offset = self.last_stable_offset_after(producer_id, offset)
            txn.end_timestamp = timestamp
            txn.coordinator_epoch = coordinator_epoch
            if txn.aborted and not self.keep_committed:
                self.transactions.append(txn)
        entry.end_transaction(epoch, coordinator_epoch, timestamp)
        return txn

    def last_stable_offset_after(self, producer_id: int, marker_offset: int) -> int:
        """``lastStableOffset(completedTxn)``: the first other open transaction, else past the marker."""
        for first in sorted(self.ongoing):
            if self.ongoing[first].producer_id != producer_id:
                return first
        return marker_offset + 1

    # -- results --------------------------------------------------------------------------------------

    def snapshot_entries(self) -> list[ProducerSnapshotEntry]:
        """The producers as ``writeSnapshot`` would list them (Java HashMap order)."""
        return [self.producers[pid].to_snapshot() for pid in self.order.order() if pid in self.producers]

    def take_snapshot(self) -> list[ProducerSnapshotEntry] | None:
        """``takeSnapshot``: the entries to write at the map end offset, only when it moved past the last
        snapshot (which it then becomes); ``None`` otherwise."""
        if self.map_end_offset <= self.last_snap_offset:
            return None
        self.last_snap_offset = self.map_end_offset
        return self.snapshot_entries()

    def first_unstable_offset(self) -> int | None:
        """The first offset of the oldest open transaction, if any."""
        return min(self.ongoing) if self.ongoing else None

    def last_stable_offset(self, high_watermark: int) -> int:
        """``min(first unstable offset, high watermark)``."""
        first = self.first_unstable_offset()
        return high_watermark if first is None else min(first, high_watermark)

    def hanging(self, now: int, timeout_ms: int) -> list[Transaction]:
        """Open transactions older than ``timeout_ms`` at ``now`` (``kafka-transactions find-hanging``'s rule
        on the partition side)."""
        return [t for t in sorted(self.ongoing.values(), key=lambda t: t.first_offset)
                if now - t.first_timestamp > timeout_ms]
