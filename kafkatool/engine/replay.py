"""Replaying a partition's producer state from its log, checked against its ``.snapshot`` files.

Drives :class:`~kafkatool.engine.producer_state.CheckedProducerState` (storage's ``ProducerStateManager``
with the anomaly checks) over a :class:`~kafkatool.model.PartitionData`: from the log start or from a
snapshot (as Kafka does on restart), up to the end or an offset; compares the state with every snapshot file
met on the way and the aborted transactions with each segment's ``.txnindex``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kafkatool.engine.producer_state import Anomaly, CheckedProducerState, replay_columns
from kafkatool.engine.verify import log_windows
from kafkatool.model import Defect, PartitionData, ProducerSnapshotEntry, RecordBatch, SegmentData, SnapshotData
from kafkatool.schema.txn_index import distinct
from kafkatool.storage.producer_state import Transaction
from kafkatool.storage.transaction_version import Decision, decide

COORDINATOR_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
SNAPSHOT_FIELDS = ("producer_epoch", "last_sequence", "last_offset", "offset_delta", "timestamp",
                   "coordinator_epoch", "current_txn_first_offset")


@dataclass
class ReplayResult:
    """The state after a replay, the transactions met, and every anomaly."""

    manager: CheckedProducerState
    start_offset: int
    start_snapshot: str | None
    end_offset: int
    snapshots_compared: int = 0
    anomalies: list[Anomaly] = field(default_factory=list)
    transaction_version: Decision | None = None

    @property
    def transactions(self) -> list[Transaction]:
        return self.manager.transactions


class ReplayError(ValueError):
    """The requested starting point does not exist."""


def _start(part: PartitionData, from_snapshot: str | int | None) -> SnapshotData | None:
    usable = [s for s in part.snapshots if s.snapshot is not None and s.snapshot.crc_valid]
    if from_snapshot is None:
        return None
    if from_snapshot == "latest":
        return usable[-1] if usable else None
    match = [s for s in usable if s.offset == int(from_snapshot)]
    if not match:
        raise ReplayError(f"no usable snapshot at offset {from_snapshot} (have: {[s.offset for s in usable]})")
    return match[0]


def diff_snapshot(got: list[ProducerSnapshotEntry], want: list[ProducerSnapshotEntry], snap: SnapshotData,
                  ) -> list[Anomaly]:
    """Differences between the replayed producers and a snapshot file's."""
    out: list[Anomaly] = []
    mine = {e.producer_id: e for e in got}
    theirs = {e.producer_id: e for e in want}
    for pid in sorted(set(mine) | set(theirs)):
        a, b = mine.get(pid), theirs.get(pid)
        if a is None:
            out.append(Anomaly("snapshot-extra-producer", snap.offset, None, pid,
                               f"{snap.file} lists producer {pid}, which the log does not explain", "warning"))
        elif b is None:
            out.append(Anomaly("snapshot-missing-producer", snap.offset, None, pid,
                               f"{snap.file} lacks producer {pid}, seen in the log before offset {snap.offset}: "
                               "after a restart from it, the producer gets UnknownProducerId", "warning"))
        else:
            fields = [f"{f}: snapshot {getattr(b, f)}, log {getattr(a, f)}" for f in SNAPSHOT_FIELDS
                      if getattr(a, f) != getattr(b, f)]
            if fields:
                out.append(Anomaly("snapshot-differs", snap.offset, None, pid,
                                   f"{snap.file}, producer {pid}: " + "; ".join(fields), "warning"))
    if not out and [e.producer_id for e in got] != [e.producer_id for e in want]:
        out.append(Anomaly("snapshot-order", snap.offset, None, -1,
                           f"{snap.file} lists the same producers in another order than Kafka writes them", "info"))
    return out


def _check_txn_indexes(part: PartitionData, manager: CheckedProducerState, start: int) -> list[Anomaly]:
    out: list[Anomaly] = []
    aborted = {(t.producer_id, t.last_offset): t for t in manager.transactions if t.aborted}
    for seg in part.segments:
        if seg.next_offset <= start:
            continue
        lo, hi = seg.base_offset, seg.next_offset
        indexed = {(a.producer_id, a.last_offset): a for a in distinct(seg.txn_index or [])}
        for key, t in aborted.items():
            if lo <= (t.last_offset or -1) < hi and key not in indexed and t.first_offset >= start:
                out.append(Anomaly("txnindex-missing", t.last_offset or -1, None, t.producer_id,
                                   f"aborted transaction {t.first_offset}..{t.last_offset} of producer "
                                   f"{t.producer_id} is not in {seg.txn_index_file or 'a .txnindex'}: read_committed "
                                   "consumers would receive its records", "error"))
        for key, a in indexed.items():
            t = aborted.get(key)
            if t is None:
                if a.first_offset >= start:
                    out.append(Anomaly("txnindex-unknown", a.last_offset, None, a.producer_id,
                                       f"{seg.txn_index_file} lists an aborted transaction {a.first_offset}.."
                                       f"{a.last_offset} of producer {a.producer_id} with no ABORT marker there",
                                       "warning"))
            elif t.first_offset >= start and (t.first_offset, t.last_stable_offset) != (a.first_offset,
                                                                                        a.last_stable_offset):
                # After compaction the transaction's first batches may be gone: the index keeps the original.
                compacted = a.first_offset < t.first_offset
                out.append(Anomaly("txnindex-differs", a.last_offset, None, a.producer_id,
                                   f"{seg.txn_index_file}: first offset {a.first_offset}, LSO {a.last_stable_offset}; "
                                   f"the log says {t.first_offset}, {t.last_stable_offset}"
                                   + (" (its first batches were compacted away)" if compacted else ""),
                                   "info" if compacted else "warning"))
    return out


#: Read defects after which ``LogSegment.recover`` finds no further valid batch in the segment: it truncates there.
TAIL_DEFECTS = frozenset({"torn-tail", "trailing-zeros", "corrupt-entry", "unreadable-bytes"})


def tail_defect(seg: SegmentData, end: int) -> Defect | None:
    """The first read defect of ``seg`` at or after byte ``end`` (the end of its last readable batch) that
    stops Kafka's recovery of the segment, or ``None``."""
    found = [d for d in seg.defects if d.code in TAIL_DEFECTS and d.position is not None and d.position >= end]
    return min(found, key=lambda d: d.position or 0, default=None)


def _unreadable_snapshots(part: PartitionData) -> list[Anomaly]:
    """Each ``.snapshot`` file that does not decode: ``ProducerStateManager.loadFromSnapshot`` fails on it with
    ``CorruptSnapshotException``, deletes it and falls back to an older snapshot or the log."""
    out = []
    for snap in part.snapshots:
        if snap.snapshot is not None:
            continue
        why = next((d for d in part.defects if d.file == snap.file), None)
        where = snap.file if why is None or why.position is None else f"{snap.file} byte {why.position}"
        detail = "" if why is None else f": {why.field}: {why.reason}"
        out.append(Anomaly("snapshot-unreadable", snap.offset, None if why is None else why.position, -1,
                           f"{where}{detail}; Kafka's ProducerStateManager fails to load it (CorruptSnapshotException)"
                           ", deletes it and rebuilds the producer state from an older snapshot or the log",
                           "warning"))
    return out


def replay(part: PartitionData, *, from_snapshot: str | int | None = None, until: int | None = None,
           compare_snapshots: bool = True, read_past_damage: bool = False, cluster: Decision | None = None,
           kafka_version: str | None = None) -> ReplayResult:
    """Replay ``part``'s producer state; see the module notes. The replay stops at the first batch that fails
    its CRC or follows unreadable bytes, where Kafka's recovery (``LogSegment.recover``) truncates the log;
    ``read_past_damage`` reads on (and says so). ``cluster`` is the transaction version read from the metadata
    log, if any; else the batches decide, else ``kafka_version`` (``transaction_version`` of the result)."""
    start_snap = _start(part, from_snapshot)
    start = start_snap.offset if start_snap else (part.segments[0].base_offset if part.segments else 0)
    topic = part.topic_partition.topic if part.topic_partition else ""
    manager = CheckedProducerState(start, client_checks=topic not in COORDINATOR_TOPICS,
                                   transaction_version=cluster.version if cluster is not None else None)
    if start_snap is not None and start_snap.snapshot is not None:
        manager.load_snapshot(start_snap.snapshot.entries, start_snap.offset)
    result = ReplayResult(manager, start, start_snap.file if start_snap else None, start)
    pending = [s for s in part.snapshots if s.snapshot is not None and s.offset > start] if compare_snapshots else []

    def compare_upto(offset: int) -> None:
        while pending and pending[0].offset <= offset:
            snap = pending.pop(0)
            result.snapshots_compared += 1
            assert snap.snapshot is not None
            result.anomalies.extend(diff_snapshot(manager.snapshot_entries(), snap.snapshot.entries, snap))

    def halts(seg: SegmentData, base_offset: int, position: int, crc_valid: bool | None, gap: int) -> bool:
        """The checks before a batch is applied: the ``until`` end, damage (reported; the replay stops
        there unless it reads past damage), the snapshots it has passed. Whether the replay stops."""
        if until is not None and base_offset >= until:
            return True
        if crc_valid is False or gap != 0:
            why = "fails its CRC" if crc_valid is False else f"follows {gap} unreadable bytes"
            where = f"{seg.log_file} byte {position}: the batch at offset {base_offset} {why}"
            if not read_past_damage:
                result.anomalies.append(Anomaly(
                    "replay-stopped", base_offset, position, -1,
                    f"{where}; Kafka's recovery truncates the log here, so the replay stops "
                    "(--read-past-damage reads on)", "error"))
                return True
            result.anomalies.append(Anomaly(
                "read-past-damage", base_offset, position, -1,
                f"{where}; read on as asked (Kafka's recovery would truncate the log here)", "warning"))
        compare_upto(base_offset)
        return False

    def tail_halts(seg: SegmentData, end: int) -> bool:
        """The read defect after the segment's last readable batch (byte ``end``), if any: a torn or zero-filled
        tail, or bytes no batch can be read from, where ``LogSegment.recover`` truncates the segment (and the
        load deletes every later one); reported like damage before a batch. Whether the replay stops."""
        found = tail_defect(seg, end)
        if found is None:
            return False
        offset = max(manager.map_end_offset, seg.base_offset)
        where = f"{seg.log_file} byte {found.position}: {found.reason}"
        later = seg is not part.segments[-1]
        if not read_past_damage:
            result.anomalies.append(Anomaly(
                "replay-stopped", offset, found.position, -1,
                f"{where}; Kafka's recovery truncates the log here (offset {offset})"
                + (" and deletes every later segment" if later else "")
                + ", so the replay stops (--read-past-damage reads on)", "error"))
            return True
        result.anomalies.append(Anomaly(
            "read-past-damage", offset, found.position, -1,
            f"{where}; read on as asked (Kafka's recovery would truncate the log here)", "warning"))
        return False

    def segment_columns(seg: SegmentData, cols: dict[str, np.ndarray], prev_end: int) -> bool:
        """A window of the segment's batches from header columns (the native replay between the rows that need a
        check), the window before it ending at byte ``prev_end``; whether the replay stops."""
        pos, size, base, last = cols["position"], cols["size"], cols["base_offset"], cols["last_offset"]
        n = len(pos)
        ends = pos + size
        gaps = pos - np.concatenate([np.full(1, prev_end, dtype=np.int64), ends[:-1]])
        active = last >= start
        watch = active & ((gaps != 0) | cols["crc_invalid"])
        if until is not None:
            watch |= active & (base >= until)
        r = 0
        while r < n:
            hits = watch[r:]
            if pending:
                hits = hits | (active[r:] & (base[r:] >= pending[0].offset))
            found = np.flatnonzero(hits)
            nxt = r + int(found[0]) if len(found) else n
            runs = np.flatnonzero(np.diff(np.concatenate([[False], active[r:nxt], [False]]).astype(np.int8)))
            for lo, hi in zip(runs[::2].tolist(), runs[1::2].tolist(), strict=True):
                replay_columns(manager, cols, r + lo, r + hi)
            if nxt == n:
                return False
            crc_valid: bool | None = False if bool(cols["crc_invalid"][nxt]) else None
            if halts(seg, int(base[nxt]), int(pos[nxt]), crc_valid, int(gaps[nxt])):
                return True
            replay_columns(manager, cols, nxt, nxt + 1)
            r = nxt + 1
        return False

    stop = False
    for seg in part.segments:
        # a window of entries at a time (engine.verify.log_windows): no column of a whole segment is built
        expected = 0  # the end of the last batch read (0 before the first)
        for window, cols in log_windows(seg.entries):
            if cols is not None:
                if segment_columns(seg, cols, expected):
                    stop = True
                    break
                if len(cols["position"]):
                    expected = int(cols["position"][-1] + cols["size"][-1])
                continue
            for e in window:
                gap = e.position - expected  # bytes the reader skipped before this batch (0 in a sound segment)
                expected = e.position + e.size_in_bytes
                if e.last_offset < start:
                    continue
                if halts(seg, e.base_offset, e.position, e.crc_valid, gap):
                    stop = True
                    break
                if isinstance(e, RecordBatch):
                    manager.append(e)
                else:
                    manager.map_end_offset = e.last_offset + 1  # legacy messages carry no producer state
            if stop:
                break
        if stop or (seg.next_offset >= start and tail_halts(seg, expected)):
            break
    result.end_offset = manager.map_end_offset
    result.transaction_version = cluster if cluster is not None else decide(evidence=manager.evidence,
                                                                             kafka_version=kafka_version)
    compare_upto(result.end_offset)
    if until is None:
        for snap in pending:
            result.anomalies.append(Anomaly(
                "snapshot-beyond-log-end", snap.offset, None, -1,
                f"{snap.file} is at offset {snap.offset}, beyond the log end {result.end_offset}: the log lost data "
                "after it was taken; Kafka deletes it at load", "warning"))
    result.anomalies[:0] = manager.anomalies
    if compare_snapshots:
        result.anomalies += _unreadable_snapshots(part)
    result.anomalies += _check_txn_indexes(part, manager, start)
    return result
