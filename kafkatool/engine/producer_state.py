"""The producer-state replay's anomaly checks, layered on storage's Kafka rules.

:class:`~kafkatool.storage.producer_state.ProducerStateManager` applies batches as Kafka's replication/recovery
origin does (what ``LogSegment.recover`` and ``UnifiedLog.rebuildProducerState`` apply: nothing is rejected).
:class:`CheckedProducerState` evaluates, before each batch changes the state, the checks Kafka applies to
appends of client origin (storage's ``ProducerAppendInfo`` verdicts: epoch fencing, sequence continuity,
duplicates, transactional state, coordinator fencing) and reports what fails as an :class:`Anomaly`: what a
producer would have been told, or what must have gone wrong for the log to look like this. Which verdict gets
which code, the leniencies of a forensic replay (a batch without a sequence, a producer whose last sequence
the log no longer holds) and the wording are kafkatool's; the rules are storage's.

The transaction version (:mod:`kafkatool.storage.transaction_version`) is per transaction: a marker follows
TV_2's rule (Kafka 4.1+'s ``checkProducerEpoch`` with the marker's version: it must bump the epoch) when the
cluster allows TV_2 and the producer is seen committing with an epoch bump (this marker or an earlier one;
an abort's bump is no proof, TV_0/1 bump there too); any other marker keeps the TV_0/1 rules, so a 3.x log is
checked exactly as before. The batches' evidence is gathered on the way (``evidence``) for
:func:`~kafkatool.storage.transaction_version.decide`.
Pure and deterministic: batches in, state and anomalies out.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkatool.model import NO_PRODUCER_EPOCH, NO_SEQUENCE, ControlType, RecordBatch
from kafkatool.storage.producer_state import (
    AppendCheck,
    ProducerStateEntry,
    check_coordinator_epoch,
    check_marker_epoch,
    check_producer_epoch,
    check_sequence,
    check_transactional,
)
from kafkatool.storage.producer_state import ProducerStateManager as StorageProducerStateManager
from kafkatool.storage.transaction_version import EpochBumpEvidence, TransactionVersion


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


class CheckedProducerState(StorageProducerStateManager):
    """Storage's ``ProducerStateManager`` with the client-origin checks on the side, as anomalies.

    ``anomalies`` holds the first :data:`LISTED_PER_CODE` of each code, ``unlisted`` counts the rest.
    ``client_checks=False`` (coordinator-written topics, appended with origin COORDINATOR, whose sequences
    Kafka never checks) skips the sequence and duplicate checks. ``transaction_version`` is the cluster's when
    known (the metadata log, ``--kafka-version``): below TV_2 no marker follows TV_2's rule; ``None`` lets the
    batches decide per producer.
    """

    def __init__(self, start_offset: int = 0, *, client_checks: bool = True, keep_committed: bool = True,
                 transaction_version: TransactionVersion | None = None) -> None:
        super().__init__(start_offset, keep_committed=keep_committed)
        self.client_checks = client_checks
        self.transaction_version = transaction_version
        self.evidence = EpochBumpEvidence()
        self.anomalies: list[Anomaly] = []
        self.unlisted: dict[str, int] = {}  # code -> anomalies past LISTED_PER_CODE, counted only
        self.unlisted_severity: dict[str, str] = {}
        self._listed: dict[str, int] = {}

    def append(self, batch: RecordBatch) -> None:
        """Check one magic 2 batch against the state before it, then apply it."""
        if batch.producer_id >= 0:
            if batch.is_control:
                commit = self._check_marker(batch)
                if commit is not None:
                    self.evidence.marker(batch.producer_id, batch.producer_epoch, commit)
            else:
                self._check_data(batch)
                self.evidence.data(batch.producer_id, batch.producer_epoch, batch.is_transactional)
        super().append(batch)

    def marker_version(self, producer_id: int, epoch: int, commit: bool) -> TransactionVersion:
        """The transaction version a marker of ``producer_id`` at ``epoch`` (not yet applied) was written
        under: TV_2 when the cluster allows it and the producer committed with an epoch bump (this marker or an
        earlier one), else TV_0 (the TV_0/1 rules)."""
        allowed = self.transaction_version is None or self.transaction_version.supports_epoch_bump
        if allowed and (producer_id in self.evidence.bumped
                        or self.evidence.bumps_at_marker(producer_id, epoch, commit)):
            return TransactionVersion.TV_2
        return TransactionVersion.TV_0

    def _anomaly(self, code: str, batch: RecordBatch, message: str, severity: str = "warning") -> None:
        listed = self._listed.get(code, 0)
        if listed >= LISTED_PER_CODE:
            self.unlisted[code] = self.unlisted.get(code, 0) + 1
            self.unlisted_severity[code] = severity
            return
        self._listed[code] = listed + 1
        self.anomalies.append(Anomaly(code, batch.base_offset, batch.position, batch.producer_id, message, severity))

    def _check_data(self, batch: RecordBatch) -> None:
        pid = batch.producer_id
        entry = self.producers.get(pid)
        if entry is None:
            return  # a producer's first batch: nothing to hold it against
        epoch = batch.producer_epoch
        first_seq = batch.base_sequence
        if check_producer_epoch(entry, epoch):
            self._anomaly("epoch-regression", batch, f"producer {pid} wrote with epoch {epoch} after epoch "
                          f"{entry.producer_epoch}: a fenced (zombie) producer; a leader rejects this with "
                          "InvalidProducerEpoch", "error")
        elif entry.producer_epoch != NO_PRODUCER_EPOCH and self.client_checks:
            self._check_sequence(batch, entry, epoch, first_seq)
        last_seq = batch.last_sequence
        duplicate = entry.find_duplicate_batch(epoch, first_seq, last_seq)
        if duplicate is not None and first_seq != NO_SEQUENCE and self.client_checks:
            self._anomaly("duplicate-batch", batch, f"producer {pid} epoch {epoch} wrote sequences "
                          f"{first_seq}..{last_seq} again (first at offset {duplicate.first_offset}): "
                          "a retry the leader should have deduplicated; consumers see the records twice", "error")
        if check_transactional(entry, batch.is_transactional):
            self._anomaly("non-transactional-in-txn", batch, f"producer {pid} wrote a non-transactional batch "
                          f"inside its open transaction (started at {entry.current_txn_first_offset}): "
                          "InvalidTxnState for a client", "error")

    def _check_sequence(self, batch: RecordBatch, entry: ProducerStateEntry, epoch: int, first_seq: int) -> None:
        """``checkSequence``'s verdict, named: a batch without a sequence is not checked, nor one of the same
        epoch when the log no longer holds the producer's last sequence."""
        if first_seq == NO_SEQUENCE or (epoch == entry.producer_epoch and entry.last_seq == NO_SEQUENCE):
            return
        verdict = check_sequence(entry, epoch, first_seq)
        pid = batch.producer_id
        last = entry.last_seq
        if verdict is AppendCheck.NEW_EPOCH_NOT_AT_ZERO:
            self._anomaly("epoch-bump-without-reset", batch, f"producer {pid} moved to epoch {epoch} with "
                          f"sequence {first_seq} instead of 0: OutOfOrderSequence for a client")
        elif verdict is not AppendCheck.OUT_OF_ORDER_SEQUENCE:
            return
        elif first_seq == 0 and last > 0:
            self._anomaly("sequence-reset", batch, f"producer {pid} restarted at sequence 0 after {last} without an "
                          "epoch bump: OutOfOrderSequence for a client (or the producer lost its state)")
        elif first_seq > last + 1:
            self._anomaly("sequence-gap", batch, f"producer {pid} epoch {epoch}: sequence {first_seq} follows "
                          f"{last}; {first_seq - last - 1} sequence(s) missing: the client got OutOfOrderSequence "
                          "(records lost in between, e.g. by an unclean leader election or truncation)")
        else:
            self._anomaly("sequence-overlap", batch, f"producer {pid} epoch {epoch}: sequence {first_seq} does not "
                          f"follow {last} (overlap): duplicates written, or OutOfOrderSequence for a client")

    def _check_marker(self, batch: RecordBatch) -> bool | None:
        """A marker's checks; whether it commits, ``None`` when the batch is no transaction marker."""
        pid = batch.producer_id
        control = batch.records[0].control if batch.records else None
        if control is None or control.coordinator_epoch is None:
            return None  # not a transaction marker (or no records): no producer state change
        known = self.producers.get(pid)
        entry = known if known is not None else ProducerStateEntry(pid)
        epoch = batch.producer_epoch
        commit = control.type == ControlType.COMMIT.value
        version = self.marker_version(pid, epoch, commit)
        if known is not None and check_producer_epoch(entry, epoch):
            self._anomaly("marker-stale-epoch", batch, f"{control.type_name} marker for producer {pid} with epoch "
                          f"{epoch} after epoch {entry.producer_epoch}", "warning")
        elif known is not None and check_marker_epoch(entry, epoch, version):
            self._anomaly("marker-epoch-not-bumped", batch, f"{control.type_name} marker for producer {pid} at its "
                          f"transaction's epoch {epoch}, though the producer commits with an epoch "
                          "bump (transaction version 2): Kafka 4.1+ refuses this marker (InvalidProducerEpoch)",
                          "warning")
        if check_coordinator_epoch(entry, control.coordinator_epoch):
            self._anomaly("coordinator-epoch-regression", batch, f"{control.type_name} marker for producer {pid} "
                          f"carries coordinator epoch {control.coordinator_epoch} after {entry.coordinator_epoch}: "
                          "a zombie transaction coordinator (TransactionCoordinatorFenced for a leader)")
        if entry.current_txn_first_offset is None:
            self._anomaly("marker-without-transaction", batch, f"{control.type_name} marker for producer {pid} at "
                          f"{batch.base_offset} with no open transaction (a retried or late marker)", "info")
        return commit


__all__ = ["LISTED_PER_CODE", "Anomaly", "CheckedProducerState"]
