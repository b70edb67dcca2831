"""Kafka's producer state, replayed from decoded batches: models of ``ProducerStateManager``,
``ProducerAppendInfo``, ``ProducerStateEntry`` and ``BatchMetadata`` (storage module).

State changes follow Kafka's replication/recovery origin (what ``LogSegment.recover`` and
``UnifiedLog.rebuildProducerState`` apply: epochs and coordinator epochs may only be logged, never
rejected). The checks Kafka applies to appends of client origin (sequence continuity, epoch fencing,
coordinator fencing, transactional state) are evaluated on the side and reported as anomalies: they
are what a producer would have been told, or what must have gone wrong for the log to look like this.
Pure and deterministic: batches in, state and anomalies out.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from kafkatool.model import (
    NO_SEQUENCE,
    ControlType,
    ProducerSnapshotEntry,
    RecordBatch,
    decrement_sequence,
)
from kafkatool.storage.java_hash import LongHashMapOrder

NUM_BATCHES_TO_RETAIN = 5
INT32_MAX = 0x7FFFFFFF
NO_PRODUCER_EPOCH = -1


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    """Kafka's ``BatchMetadata``: one cached batch of a producer (used for duplicate detection)."""

    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        """First sequence of the batch (wrapping)."""
        return decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        """First offset of the batch."""
        return self.last_offset - self.offset_delta


@dataclass(slots=True)
class ProducerEntry:
    """Kafka's ``ProducerStateEntry``."""

    producer_id: int
    producer_epoch: int = NO_PRODUCER_EPOCH
    coordinator_epoch: int = -1
    last_timestamp: int = -1
    current_txn_first_offset: int | None = None
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=NUM_BATCHES_TO_RETAIN))

    @property
    def first_seq(self) -> int:
        return self.batches[0].first_seq if self.batches else NO_SEQUENCE

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    @property
    def first_data_offset(self) -> int:
        return self.batches[0].first_offset if self.batches else -1

    @property
    def last_data_offset(self) -> int:
        return self.batches[-1].last_offset if self.batches else -1

    @property
    def last_offset_delta(self) -> int:
        return self.batches[-1].offset_delta if self.batches else 0

    def maybe_update_epoch(self, epoch: int) -> None:
        """A new epoch forgets the cached batches."""
        if self.producer_epoch != epoch:
            self.batches.clear()
            self.producer_epoch = epoch

    def add_batch(self, epoch: int, last_seq: int, last_offset: int, offset_delta: int, timestamp: int) -> None:
        """``addBatch``: cache the batch (the oldest of more than five is dropped)."""
        self.maybe_update_epoch(epoch)
        self.batches.append(BatchMetadata(last_seq, last_offset, offset_delta, timestamp))
        self.last_timestamp = timestamp

    def end_transaction(self, epoch: int, coordinator_epoch: int, timestamp: int) -> None:
        """What a COMMIT/ABORT marker does to the entry."""
        self.maybe_update_epoch(epoch)
        self.coordinator_epoch = coordinator_epoch
        self.current_txn_first_offset = None
        self.last_timestamp = timestamp

    def to_snapshot(self) -> ProducerSnapshotEntry:
        """The entry as ``writeSnapshot`` stores it."""
        return ProducerSnapshotEntry(self.producer_id, self.producer_epoch, self.last_seq, self.last_data_offset,
                                     self.last_offset_delta, self.last_timestamp, self.coordinator_epoch,
                                     -1 if self.current_txn_first_offset is None else self.current_txn_first_offset)

    @classmethod
    def from_snapshot(cls, e: ProducerSnapshotEntry) -> ProducerEntry:
        """``readSnapshot``: one cached batch when the snapshot has a last offset."""
        entry = cls(e.producer_id, e.producer_epoch, e.coordinator_epoch, e.timestamp,
                    None if e.current_txn_first_offset < 0 else e.current_txn_first_offset)
        if e.last_offset >= 0:
            entry.batches.append(BatchMetadata(e.last_sequence, e.last_offset, e.offset_delta, e.timestamp))
        return entry


@dataclass(slots=True)
class Transaction:
    """A transaction seen in the log: started at ``first_offset``, ended by a marker at ``last_offset``."""

    producer_id: int
    producer_epoch: int
    first_offset: int
    first_timestamp: int
    last_offset: int | None = None
    aborted: bool | None = None
    last_stable_offset: int | None = None
    end_timestamp: int | None = None
    coordinator_epoch: int | None = None


@dataclass(frozen=True, slots=True)
class Anomaly:
    """Something in the producer history that Kafka would have refused from a client, or that leaves
    consumers or producers in trouble."""

    code: str
    offset: int
    position: int | None
    producer_id: int
    message: str
    severity: str = "warning"


#: Anomalies of one code listed in full; the rest are counted (``unlisted``), so a log that breaks a rule at
#: every batch does not make the replay's memory grow with it.
LISTED_PER_CODE = 1000


class ProducerStateManager:
    """Kafka's ``ProducerStateManager`` over decoded batches, with the anomaly checks on the side.

    Like Kafka's, it holds per-producer state (five cached batches each) and the open transactions; besides,
    ``transactions`` lists the transactions seen (only the aborted ones with ``keep_committed=False``, what a
    restart needs for its transaction indexes) and ``anomalies`` the first :data:`LISTED_PER_CODE` of each code.
    """

    def __init__(self, start_offset: int = 0, *, client_checks: bool = True, keep_committed: bool = True) -> None:
        # Coordinator-written topics (offsets, transaction state) are appended with origin COORDINATOR:
        # Kafka never checks their sequences, so neither do we.
        self.client_checks = client_checks
        self.producers: dict[int, ProducerEntry] = {}
        self.order = LongHashMapOrder()
        self.ongoing: dict[int, Transaction] = {}  # first offset -> transaction
        self.transactions: list[Transaction] = []
        self.anomalies: list[Anomaly] = []
        self.unlisted: dict[str, int] = {}  # code -> anomalies past LISTED_PER_CODE, counted only
        self.unlisted_severity: dict[str, str] = {}
        self._listed: dict[str, int] = {}
        self.keep_committed = keep_committed
        self.map_end_offset = start_offset
        self.last_timestamp = -1

    # -- loading --------------------------------------------------------------------------------------

    def load_snapshot(self, entries: list[ProducerSnapshotEntry], offset: int) -> None:
        """``loadFromSnapshot``: replace the state with a snapshot's producers (none expire here)."""
        self.producers.clear()
        self.order.clear()
        self.ongoing.clear()
        for e in entries:
            entry = ProducerEntry.from_snapshot(e)
            self._put(entry)
            if entry.current_txn_first_offset is not None:
                txn = Transaction(e.producer_id, e.producer_epoch, entry.current_txn_first_offset, e.timestamp)
                self.ongoing[txn.first_offset] = txn
                if self.keep_committed:
                    self.transactions.append(txn)
        self.map_end_offset = offset

    def _put(self, entry: ProducerEntry) -> None:
        self.producers[entry.producer_id] = entry
        self.order.put(entry.producer_id)

    # -- appending ------------------------------------------------------------------------------------

    def append(self, batch: RecordBatch) -> None:
        """Apply one magic 2 batch, as ``LogSegment.recover`` does (control batches need their records)."""
        if batch.max_timestamp > self.last_timestamp:
            self.last_timestamp = batch.max_timestamp
        if batch.producer_id >= 0:
            if batch.is_control:
                self._append_marker(batch)
            else:
                self._append_data(batch)
        self.map_end_offset = batch.last_offset + 1

    def _entry(self, pid: int) -> ProducerEntry:
        entry = self.producers.get(pid)
        if entry is None:
            entry = ProducerEntry(pid)
            self._put(entry)
        return entry

    def _anomaly(self, code: str, batch: RecordBatch, message: str, severity: str = "warning") -> None:
        listed = self._listed.get(code, 0)
        if listed >= LISTED_PER_CODE:
            self.unlisted[code] = self.unlisted.get(code, 0) + 1
            self.unlisted_severity[code] = severity
            return
        self._listed[code] = listed + 1
        self.anomalies.append(Anomaly(code, batch.base_offset, batch.position, batch.producer_id, message, severity))

    def _append_data(self, batch: RecordBatch) -> None:
        pid = batch.producer_id
        known = pid in self.producers
        entry = self._entry(pid)
        epoch = batch.producer_epoch
        first_seq = batch.base_sequence
        if known and epoch < entry.producer_epoch:
            self._anomaly("epoch-regression", batch, f"producer {pid} wrote with epoch {epoch} after epoch "
                          f"{entry.producer_epoch}: a fenced (zombie) producer; a leader rejects this with "
                          "InvalidProducerEpoch", "error")
        elif known and entry.producer_epoch != NO_PRODUCER_EPOCH and self.client_checks:
            self._check_sequence(batch, entry, epoch, first_seq)
        last_seq = batch.last_sequence
        duplicate = None
        if epoch == entry.producer_epoch:
            # The cheap last-sequence test first: this runs for every producer batch of every replayed segment.
            for b in entry.batches:
                if b.last_seq == last_seq and b.first_seq == first_seq:
                    duplicate = b
                    break
        if duplicate is not None and first_seq != NO_SEQUENCE and self.client_checks:
            self._anomaly("duplicate-batch", batch, f"producer {pid} epoch {epoch} wrote sequences "
                          f"{first_seq}..{last_seq} again (first at offset {duplicate.first_offset}): "
                          "a retry the leader should have deduplicated; consumers see the records twice", "error")
        entry.add_batch(epoch, last_seq, batch.last_offset, batch.last_offset_delta, batch.max_timestamp)
        if entry.current_txn_first_offset is not None and not batch.is_transactional:
            self._anomaly("non-transactional-in-txn", batch, f"producer {pid} wrote a non-transactional batch "
                          f"inside its open transaction (started at {entry.current_txn_first_offset}): "
                          "InvalidTxnState for a client", "error")
        elif entry.current_txn_first_offset is None and batch.is_transactional:
            entry.current_txn_first_offset = batch.base_offset
            txn = Transaction(pid, epoch, batch.base_offset, batch.max_timestamp)
            self.ongoing[batch.base_offset] = txn
            if self.keep_committed:
                self.transactions.append(txn)

    def _check_sequence(self, batch: RecordBatch, entry: ProducerEntry, epoch: int, first_seq: int) -> None:
        pid = batch.producer_id
        if epoch != entry.producer_epoch:
            if first_seq not in (0, NO_SEQUENCE):
                self._anomaly("epoch-bump-without-reset", batch, f"producer {pid} moved to epoch {epoch} with "
                              f"sequence {first_seq} instead of 0: OutOfOrderSequence for a client")
            return
        last = entry.last_seq
        if last == NO_SEQUENCE or first_seq == NO_SEQUENCE:
            return
        if first_seq == last + 1 or (first_seq == 0 and last == INT32_MAX):
            return
        if first_seq == 0 and last > 0:
            self._anomaly("sequence-reset", batch, f"producer {pid} restarted at sequence 0 after {last} without an "
                          "epoch bump: OutOfOrderSequence for a client (or the producer lost its state)")
        elif first_seq > last + 1:
            self._anomaly("sequence-gap", batch, f"producer {pid} epoch {epoch}: sequence {first_seq} follows "
                          f"{last}; {first_seq - last - 1} sequence(s) missing: the client got OutOfOrderSequence "
                          "(records lost in between, e.g. by an unclean leader election or truncation)")
        else:
            self._anomaly("sequence-overlap", batch, f"producer {pid} epoch {epoch}: sequence {first_seq} does not "
                          f"follow {last} (overlap): duplicates written, or OutOfOrderSequence for a client")

    def _append_marker(self, batch: RecordBatch) -> None:
        pid = batch.producer_id
        control = batch.records[0].control if batch.records else None
        if control is None or control.coordinator_epoch is None:
            return  # not a transaction marker (or no records): no producer state change
        known = pid in self.producers
        entry = self._entry(pid)
        epoch = batch.producer_epoch
        if known and epoch < entry.producer_epoch:
            self._anomaly("marker-stale-epoch", batch, f"{control.type_name} marker for producer {pid} with epoch "
                          f"{epoch} after epoch {entry.producer_epoch}", "warning")
        if entry.coordinator_epoch > control.coordinator_epoch:
            self._anomaly("coordinator-epoch-regression", batch, f"{control.type_name} marker for producer {pid} "
                          f"carries coordinator epoch {control.coordinator_epoch} after {entry.coordinator_epoch}: "
                          "a zombie transaction coordinator (TransactionCoordinatorFenced for a leader)")
        first = entry.current_txn_first_offset
        if first is None:
            self._anomaly("marker-without-transaction", batch, f"{control.type_name} marker for producer {pid} at "
                          f"{batch.base_offset} with no open transaction (a retried or late marker)", "info")
        else:
            txn = self.ongoing.pop(first, None)
            if txn is not None:
                txn.last_offset = batch.base_offset
                txn.aborted = control.type == ControlType.ABORT.value
                txn.last_stable_offset = self._lso_for(pid, batch.base_offset)
                txn.end_timestamp = batch.max_timestamp
                txn.coordinator_epoch = control.coordinator_epoch
                if txn.aborted and not self.keep_committed:
                    self.transactions.append(txn)
        entry.end_transaction(epoch, control.coordinator_epoch, batch.max_timestamp)

    def _lso_for(self, pid: int, marker_offset: int) -> int:
        """``lastStableOffset(completedTxn)``: the first other open transaction, else past the marker."""
        for first in sorted(self.ongoing):
            if self.ongoing[first].producer_id != pid:
                return first
        return marker_offset + 1

    # -- results --------------------------------------------------------------------------------------

    def snapshot_entries(self) -> list[ProducerSnapshotEntry]:
        """The producers as ``writeSnapshot`` would list them (Java HashMap order)."""
        return [self.producers[pid].to_snapshot() for pid in self.order.order() if pid in self.producers]

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
