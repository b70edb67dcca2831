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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kafkatool.model import NO_PRODUCER_EPOCH, NO_SEQUENCE, ControlRecord, ControlType, LogEntry, RecordBatch
from kafkatool.schema import native
from kafkatool.storage.producer_state import (
    NO_MARKER,
    AppendCheck,
    BatchMetadata,
    ProducerStateEntry,
    Transaction,
    check_coordinator_epoch,
    check_marker_epoch,
    check_producer_epoch,
    check_sequence,
    check_transactional,
    marker_of,
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


# Verdict bits, in the order the checks run for one batch (the native replay, ``producers.rs``, uses the same).
EPOCH_REGRESSION = 1
EPOCH_BUMP_WITHOUT_RESET = 1 << 1
SEQUENCE_RESET = 1 << 2
SEQUENCE_GAP = 1 << 3
SEQUENCE_OVERLAP = 1 << 4
DUPLICATE_BATCH = 1 << 5
NON_TRANSACTIONAL_IN_TXN = 1 << 6
MARKER_STALE_EPOCH = 1 << 7
MARKER_EPOCH_NOT_BUMPED = 1 << 8
COORDINATOR_EPOCH_REGRESSION = 1 << 9
MARKER_WITHOUT_TRANSACTION = 1 << 10


@dataclass(slots=True)
class Verdict:
    """What one batch's client-origin checks found (``flags``, the bits above) and the producer's state they
    judged it against (for the anomalies' text)."""

    flags: int = 0
    prev_epoch: int = NO_PRODUCER_EPOCH
    prev_last_seq: int = NO_SEQUENCE
    prev_txn_first: int | None = None
    prev_coordinator_epoch: int = -1
    duplicate_first_offset: int = -1

    @classmethod
    def before(cls, entry: ProducerStateEntry) -> Verdict:
        """A verdict to fill, judged against ``entry``."""
        return cls(0, entry.producer_epoch, entry.last_seq, entry.current_txn_first_offset, entry.coordinator_epoch)


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
        super().__init__(start_offset, keep_committed=keep_committed, refuse_invalid_txn=False)
        self.client_checks = client_checks
        self.transaction_version = transaction_version
        self.evidence = EpochBumpEvidence()
        self.anomalies: list[Anomaly] = []
        self.unlisted: dict[str, int] = {}  # code -> anomalies past LISTED_PER_CODE, counted only
        self.unlisted_severity: dict[str, str] = {}
        self._listed: dict[str, int] = {}

    def append(self, batch: RecordBatch) -> None:
        """Check one magic 2 batch against the state before it, then apply it."""
        pid = batch.producer_id
        if pid >= 0:
            marker: str | None = None
            coordinator_epoch: int | None = None
            if batch.is_control:
                commit, v = self._marker_verdict(batch)
                if commit is not None:
                    self.evidence.marker(pid, batch.producer_epoch, commit)
                    control = batch.records[0].control  # type: ignore[index]
                    marker, coordinator_epoch = control.type_name, control.coordinator_epoch
            else:
                v = self._data_verdict(batch)
                self.evidence.data(pid, batch.producer_epoch, batch.is_transactional)
            if v.flags:
                self.report(v, pid, batch.producer_epoch, batch.base_sequence, batch.last_sequence,
                            batch.base_offset, batch.position, marker, coordinator_epoch)
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

    def _anomaly(self, code: str, offset: int, position: int | None, producer_id: int, message: str,
                 severity: str = "warning") -> None:
        listed = self._listed.get(code, 0)
        if listed >= LISTED_PER_CODE:
            self.unlisted[code] = self.unlisted.get(code, 0) + 1
            self.unlisted_severity[code] = severity
            return
        self._listed[code] = listed + 1
        self.anomalies.append(Anomaly(code, offset, position, producer_id, message, severity))

    def _data_verdict(self, batch: RecordBatch) -> Verdict:
        pid = batch.producer_id
        entry = self.producers.get(pid)
        if entry is None:
            return Verdict()  # a producer's first batch: nothing to hold it against
        v = Verdict.before(entry)
        epoch = batch.producer_epoch
        first_seq = batch.base_sequence
        if check_producer_epoch(entry, epoch):
            v.flags |= EPOCH_REGRESSION
        elif entry.producer_epoch != NO_PRODUCER_EPOCH and self.client_checks:
            v.flags |= self._sequence_verdict(entry, epoch, first_seq)
        duplicate = entry.find_duplicate_batch(epoch, first_seq, batch.last_sequence)
        if duplicate is not None and first_seq != NO_SEQUENCE and self.client_checks:
            v.flags |= DUPLICATE_BATCH
            v.duplicate_first_offset = duplicate.first_offset
        if check_transactional(entry, batch.is_transactional):
            v.flags |= NON_TRANSACTIONAL_IN_TXN
        return v

    @staticmethod
    def _sequence_verdict(entry: ProducerStateEntry, epoch: int, first_seq: int) -> int:
        """``checkSequence``'s verdict, named: a batch without a sequence is not checked, nor one of the same
        epoch when the log no longer holds the producer's last sequence."""
        if first_seq == NO_SEQUENCE or (epoch == entry.producer_epoch and entry.last_seq == NO_SEQUENCE):
            return 0
        verdict = check_sequence(entry, epoch, first_seq)
        last = entry.last_seq
        if verdict is AppendCheck.NEW_EPOCH_NOT_AT_ZERO:
            return EPOCH_BUMP_WITHOUT_RESET
        if verdict is not AppendCheck.OUT_OF_ORDER_SEQUENCE:
            return 0
        if first_seq == 0 and last > 0:
            return SEQUENCE_RESET
        if first_seq > last + 1:
            return SEQUENCE_GAP
        return SEQUENCE_OVERLAP

    def _marker_verdict(self, batch: RecordBatch) -> tuple[bool | None, Verdict]:
        """A marker's checks; whether it commits, ``None`` when the batch is no transaction marker."""
        pid = batch.producer_id
        control = batch.records[0].control if batch.records else None
        if control is None or control.coordinator_epoch is None:
            return None, Verdict()  # not a transaction marker (or no records): no producer state change
        known = self.producers.get(pid)
        entry = known if known is not None else ProducerStateEntry(pid)
        v = Verdict.before(entry)
        epoch = batch.producer_epoch
        commit = control.type == ControlType.COMMIT.value
        version = self.marker_version(pid, epoch, commit)
        if known is not None and check_producer_epoch(entry, epoch):
            v.flags |= MARKER_STALE_EPOCH
        elif known is not None and check_marker_epoch(entry, epoch, version):
            v.flags |= MARKER_EPOCH_NOT_BUMPED
        if check_coordinator_epoch(entry, control.coordinator_epoch):
            v.flags |= COORDINATOR_EPOCH_REGRESSION
        if entry.current_txn_first_offset is None:
            v.flags |= MARKER_WITHOUT_TRANSACTION
        return commit, v

    def report(self, v: Verdict, pid: int, epoch: int, first_seq: int, last_seq: int, offset: int,
               position: int | None, marker: str | None, coordinator_epoch: int | None) -> None:
        """The anomalies of one batch's verdict, in the order the checks run (both replay paths report
        through this, so their text is one). ``marker`` is the control type name of a transaction marker."""
        f = v.flags
        if f & EPOCH_REGRESSION:
            self._anomaly("epoch-regression", offset, position, pid, f"producer {pid} wrote with epoch {epoch} "
                          f"after epoch {v.prev_epoch}: a fenced (zombie) producer; a leader rejects this with "
                          "InvalidProducerEpoch", "error")
        last = v.prev_last_seq
        if f & EPOCH_BUMP_WITHOUT_RESET:
            self._anomaly("epoch-bump-without-reset", offset, position, pid, f"producer {pid} moved to epoch {epoch} "
                          f"with sequence {first_seq} instead of 0: OutOfOrderSequence for a client")
        if f & SEQUENCE_RESET:
            self._anomaly("sequence-reset", offset, position, pid, f"producer {pid} restarted at sequence 0 after "
                          f"{last} without an epoch bump: OutOfOrderSequence for a client (or the producer lost "
                          "its state)")
        if f & SEQUENCE_GAP:
            self._anomaly("sequence-gap", offset, position, pid, f"producer {pid} epoch {epoch}: sequence "
                          f"{first_seq} follows {last}; {first_seq - last - 1} sequence(s) missing: the client got "
                          "OutOfOrderSequence (records lost in between, e.g. by an unclean leader election or "
                          "truncation)")
        if f & SEQUENCE_OVERLAP:
            self._anomaly("sequence-overlap", offset, position, pid, f"producer {pid} epoch {epoch}: sequence "
                          f"{first_seq} does not follow {last} (overlap): duplicates written, or "
                          "OutOfOrderSequence for a client")
        if f & DUPLICATE_BATCH:
            self._anomaly("duplicate-batch", offset, position, pid, f"producer {pid} epoch {epoch} wrote sequences "
                          f"{first_seq}..{last_seq} again (first at offset {v.duplicate_first_offset}): "
                          "a retry the leader should have deduplicated; consumers see the records twice", "error")
        if f & NON_TRANSACTIONAL_IN_TXN:
            self._anomaly("non-transactional-in-txn", offset, position, pid, f"producer {pid} wrote a "
                          f"non-transactional batch inside its open transaction (started at {v.prev_txn_first}): "
                          "InvalidTxnStateException for every origin: Kafka refuses to load this log (the load "
                          "stops here and the broker halts at startup)", "error")
        if f & MARKER_STALE_EPOCH:
            self._anomaly("marker-stale-epoch", offset, position, pid, f"{marker} marker for producer {pid} with "
                          f"epoch {epoch} after epoch {v.prev_epoch}", "warning")
        if f & MARKER_EPOCH_NOT_BUMPED:
            self._anomaly("marker-epoch-not-bumped", offset, position, pid, f"{marker} marker for producer {pid} at "
                          f"its transaction's epoch {epoch}, though the producer commits with an epoch "
                          "bump (transaction version 2): Kafka 4.1+ refuses this marker (InvalidProducerEpoch)",
                          "warning")
        if f & COORDINATOR_EPOCH_REGRESSION:
            self._anomaly("coordinator-epoch-regression", offset, position, pid, f"{marker} marker for producer "
                          f"{pid} carries coordinator epoch {coordinator_epoch} after {v.prev_coordinator_epoch}: "
                          "a zombie transaction coordinator (TransactionCoordinatorFenced for a leader)")
        if f & MARKER_WITHOUT_TRANSACTION:
            self._anomaly("marker-without-transaction", offset, position, pid, f"{marker} marker for producer {pid} "
                          f"at {offset} with no open transaction (a retried or late marker)", "info")


# -- the replay over batch columns (native when the core is built, else this module's Python) ------------

REPLAY_COLUMNS: dict[str, type[np.integer[Any]]] = {
    "position": np.int64, "base_offset": np.int64, "last_offset_delta": np.int32, "producer_id": np.int64,
    "producer_epoch": np.int16, "base_sequence": np.int32, "attributes": np.int16, "max_timestamp": np.int64,
    "marker": np.int8, "coordinator_epoch": np.int32,
}
"""The header columns of a producer replay and their dtypes (``RecordBatch`` field names; ``marker`` is the
transaction marker of a control batch, from its first record: -1 none, 0 ABORT, 1 COMMIT, with its
``coordinator_epoch``)."""
INT64_MAX = (1 << 63) - 1

ReplayColumns = dict[str, np.ndarray]


def entry_columns(entries: Sequence[LogEntry]) -> dict[str, np.ndarray] | None:
    """The entries' header columns when they can give them (a lazily held segment's ``header_columns``, see
    ``reading.entry_columns``) and the native core is built; ``None``: the object path."""
    get = getattr(entries, "header_columns", None)
    if get is None or native.core() is None:
        return None
    cols: dict[str, np.ndarray] | None = get()
    if cols is None:
        return None
    base, delta = cols["base_offset"], cols["last_offset_delta"].astype(np.int64)
    if len(base) and bool(((delta > 0) & (base > INT64_MAX - delta)).any() | ((delta < 0) & (base < -INT64_MAX - 1
                                                                                              - delta)).any()):
        return None  # a last offset past 64 bits: Python's ints
    cols["last_offset"] = base + delta
    return cols


def batch_columns(batches: Iterable[RecordBatch]) -> ReplayColumns:
    """The replay columns of decoded magic 2 batches."""
    rows: dict[str, list[int]] = {name: [] for name in REPLAY_COLUMNS}
    for b in batches:
        marker, coordinator_epoch = marker_of(b)
        for name, value in (("position", b.position), ("base_offset", b.base_offset),
                            ("last_offset_delta", b.last_offset_delta), ("producer_id", b.producer_id),
                            ("producer_epoch", b.producer_epoch), ("base_sequence", b.base_sequence),
                            ("attributes", b.attributes), ("max_timestamp", b.max_timestamp), ("marker", marker),
                            ("coordinator_epoch", coordinator_epoch)):
            rows[name].append(value)
    return {name: np.asarray(rows[name], dtype=dtype) for name, dtype in REPLAY_COLUMNS.items()}


class _RowBatch:
    """One row of replay columns as the batch ``ProducerStateManager.append`` reads (the Python path)."""

    __slots__ = ("attributes", "base_offset", "base_sequence", "last_offset_delta", "max_timestamp", "position",
                 "producer_epoch", "producer_id", "records")

    def __init__(self, cols: ReplayColumns, row: int) -> None:
        self.position = int(cols["position"][row])
        self.base_offset = int(cols["base_offset"][row])
        self.last_offset_delta = int(cols["last_offset_delta"][row])
        self.producer_id = int(cols["producer_id"][row])
        self.producer_epoch = int(cols["producer_epoch"][row])
        self.base_sequence = int(cols["base_sequence"][row])
        self.attributes = int(cols["attributes"][row]) & 0xFFFF
        self.max_timestamp = int(cols["max_timestamp"][row])
        marker = int(cols["marker"][row])
        self.records: list[Any] | None = None
        if marker != NO_MARKER and self.is_control:
            control = ControlRecord(0, marker, ControlType(marker).name, 0, int(cols["coordinator_epoch"][row]))
            self.records = [_Marker(control)]

    last_offset = RecordBatch.last_offset
    last_sequence = RecordBatch.last_sequence
    is_control = RecordBatch.is_control
    is_transactional = RecordBatch.is_transactional


@dataclass(frozen=True, slots=True)
class _Marker:
    control: ControlRecord


def replay_columns(manager: StorageProducerStateManager, cols: ReplayColumns, start: int = 0,
                   stop: int | None = None) -> None:
    """Apply rows ``[start, stop)`` of ``cols`` to ``manager`` as ``manager.append`` applies each batch (a
    :class:`CheckedProducerState` reports its anomalies): by the native core when it is built (it hands back
    what it cannot represent), else, and for the rest, by the manager itself."""
    stop = len(cols["base_offset"]) if stop is None else stop
    core = native.core()
    if core is not None and stop > start:
        start += _native_replay(core, manager, cols, start, stop)
    for row in range(start, stop):
        manager.append(_RowBatch(cols, row))  # type: ignore[arg-type]


def _i64(values: Iterable[int]) -> np.ndarray:
    return np.fromiter(values, dtype=np.int64)


def _state(manager: StorageProducerStateManager) -> dict[str, Any]:
    """The manager's state as ``replay_producers`` takes it."""
    entries = list(manager.producers.values())
    ongoing = list(manager.ongoing.values())
    checked = manager if isinstance(manager, CheckedProducerState) else None
    tv = checked.transaction_version if checked is not None else None
    ev = checked.evidence if checked is not None else EpochBumpEvidence()
    return {
        "map_end_offset": manager.map_end_offset, "last_timestamp": manager.last_timestamp,
        "checks": checked is not None, "client_checks": checked is not None and checked.client_checks,
        "tv2_allowed": checked is not None and (tv is None or tv.supports_epoch_bump),
        "keep_committed": manager.keep_committed, "refuse_invalid_txn": manager.refuse_invalid_txn,
        "p_producer_id": _i64(e.producer_id for e in entries), "p_epoch": _i64(e.producer_epoch for e in entries),
        "p_coordinator_epoch": _i64(e.coordinator_epoch for e in entries),
        "p_last_timestamp": _i64(e.last_timestamp for e in entries),
        "p_txn_first": _i64(-1 if e.current_txn_first_offset is None else e.current_txn_first_offset
                            for e in entries),
        "p_has_txn": np.fromiter((e.current_txn_first_offset is not None for e in entries), dtype=bool),
        "p_batches": _i64(len(e.batches) for e in entries),
        "b_last_seq": _i64(b.last_seq for e in entries for b in e.batches),
        "b_last_offset": _i64(b.last_offset for e in entries for b in e.batches),
        "b_offset_delta": _i64(b.offset_delta for e in entries for b in e.batches),
        "b_timestamp": _i64(b.timestamp for e in entries for b in e.batches),
        "t_first_offset": _i64(manager.ongoing), "t_producer_id": _i64(t.producer_id for t in ongoing),
        "t_epoch": _i64(t.producer_epoch for t in ongoing),
        "t_first_timestamp": _i64(t.first_timestamp for t in ongoing),
        "e_bumps": ev.bumps, "e_plain": ev.plain, "e_abort_bumps": ev.abort_bumps, "e_bumped": _i64(ev.bumped),
        "e_data_pid": _i64(ev._data_epoch), "e_data_epoch": _i64(ev._data_epoch.values()),
    }


def _native_replay(core: Any, manager: StorageProducerStateManager, cols: ReplayColumns, start: int,
                   stop: int) -> int:
    """Rows ``[start, stop)`` by the native core; the rows it applied (the state and anomalies are taken
    over: the manager ends as its own path would leave it)."""
    try:
        state = _state(manager)
    except OverflowError:
        return 0  # a value past 64 bits (hostile input): the Python path
    part = {name: np.ascontiguousarray(cols[name][start:stop], dtype=dtype) for name, dtype in REPLAY_COLUMNS.items()}
    out = core.replay_producers(state, part)
    applied = int(out["applied"])
    if applied <= 0:
        return 0
    _take_state(manager, out)
    if isinstance(manager, CheckedProducerState):
        _take_verdicts(manager, part, out, applied)
    return applied


def _take_state(manager: StorageProducerStateManager, out: dict[str, Any]) -> None:
    pids, epochs, coords = out["p_producer_id"].tolist(), out["p_epoch"].tolist(), out["p_coordinator_epoch"].tolist()
    stamps, txns, has_txn = out["p_last_timestamp"].tolist(), out["p_txn_first"].tolist(), out["p_has_txn"].tolist()
    counts = out["p_batches"].tolist()
    seqs, offs = out["b_last_seq"].tolist(), out["b_last_offset"].tolist()
    deltas, bts = out["b_offset_delta"].tolist(), out["b_timestamp"].tolist()
    k = 0
    for i, pid in enumerate(pids):
        entry = manager.producers.get(pid)
        if entry is None:
            entry = ProducerStateEntry(pid)
            manager._put(entry)
        entry.producer_epoch, entry.coordinator_epoch, entry.last_timestamp = epochs[i], coords[i], stamps[i]
        entry.current_txn_first_offset = txns[i] if has_txn[i] else None
        n = counts[i]
        entry.batches.clear()
        entry.batches.extend(BatchMetadata(seqs[j], offs[j], deltas[j], bts[j]) for j in range(k, k + n))
        k += n
    objs: list[Transaction] = list(manager.ongoing.values())
    t = {name: out[name].tolist() for name in ("t_producer_id", "t_epoch", "t_first_offset", "t_first_timestamp",
                                               "t_completed", "t_last_offset", "t_aborted", "t_last_stable_offset",
                                               "t_end_timestamp", "t_coordinator_epoch")}
    for h in range(len(t["t_first_offset"])):
        if h >= len(objs):
            objs.append(Transaction(t["t_producer_id"][h], t["t_epoch"][h], t["t_first_offset"][h],
                                    t["t_first_timestamp"][h]))
        if t["t_completed"][h]:
            txn = objs[h]
            txn.last_offset, txn.aborted = t["t_last_offset"][h], t["t_aborted"][h]
            txn.last_stable_offset, txn.end_timestamp = t["t_last_stable_offset"][h], t["t_end_timestamp"][h]
            txn.coordinator_epoch = t["t_coordinator_epoch"][h]
    manager.transactions.extend(objs[h] for h in out["appended"].tolist())
    manager.ongoing.clear()
    manager.ongoing.update((k, objs[h]) for k, h in zip(out["ongoing_first_offset"].tolist(),
                                                         out["ongoing_txn"].tolist(), strict=True))
    manager.map_end_offset, manager.last_timestamp = int(out["map_end_offset"]), int(out["last_timestamp"])
    if isinstance(manager, CheckedProducerState):
        ev = manager.evidence
        ev.bumps, ev.plain, ev.abort_bumps = int(out["e_bumps"]), int(out["e_plain"]), int(out["e_abort_bumps"])
        for pid in out["e_bumped"].tolist():
            ev.bumped.add(pid)
        ev._data_epoch.clear()
        ev._data_epoch.update(zip(out["e_data_pid"].tolist(), out["e_data_epoch"].tolist(), strict=True))


def _take_verdicts(manager: CheckedProducerState, part: ReplayColumns, out: dict[str, Any], applied: int) -> None:
    """The anomalies of the flagged rows, in row order (as the Python path reports them)."""
    flags = out["flags"]
    for row in np.flatnonzero(flags[:applied]).tolist():
        b = _RowBatch(part, row)
        v = Verdict(int(flags[row]), int(out["prev_epoch"][row]), int(out["prev_last_seq"][row]),
                    int(out["prev_txn_first"][row]), int(out["prev_coordinator_epoch"][row]),
                    int(out["duplicate_first_offset"][row]))
        marker = b.records[0].control if b.records else None
        manager.report(v, b.producer_id, b.producer_epoch, b.base_sequence, b.last_sequence, b.base_offset,
                       b.position, marker.type_name if marker else None,
                       marker.coordinator_epoch if marker else None)


__all__ = ["LISTED_PER_CODE", "REPLAY_COLUMNS", "Anomaly", "CheckedProducerState", "ReplayColumns", "Verdict",
           "batch_columns", "entry_columns", "marker_of", "replay_columns"]
