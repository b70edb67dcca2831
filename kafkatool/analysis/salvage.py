"""``salvage``'s analysis: every copy of every partition found and scanned (``reading.salvage_sources``), the
trustworthy batches chosen (``engine.salvage``), Kafka's own recovery beside it (``simulate-restart``'s model,
``engine.restart``), and the account, the export rows and the repaired log's plan. Reads, never writes."""

from __future__ import annotations

import base64
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kafkatool.engine.restart import PartitionRestart, RestartOptions, simulate_restart
from kafkatool.engine.salvage import (
    STATES,
    Candidate,
    FileOrder,
    IndexState,
    LogPlan,
    LogPlanner,
    Rejected,
    Run,
    SegmentPlan,
    Selection,
    SourceInfo,
    TransactionStates,
    consistent_in_file,
    segment_indexes,
    select,
)
from kafkatool.engine.verify import forget_windows
from kafkatool.errors import DecodeError, UsageError
from kafkatool.model import ControlType, Defect, LeaderEpochEntry, Record, TopicPartition
from kafkatool.process import release_heap
from kafkatool.reading.byte_ranges import ByteRange, leading
from kafkatool.reading.columns import SegmentColumns
from kafkatool.reading.context import current_limits
from kafkatool.reading.entries import SegmentEntries
from kafkatool.reading.entry_columns import forget_columns, header_columns
from kafkatool.reading.files import list_dir, read_bytes
from kafkatool.reading.restart_inputs import read_restart_inputs
from kafkatool.reading.salvage_sources import (
    InputDir,
    PartitionCopy,
    SourceFile,
    find_inputs,
    not_read,
    read_chunks,
    read_span,
    scan_windows,
)
from kafkatool.schema import checkpoint, offset_index, producer_snapshot, time_index, txn_index
from kafkatool.schema import record_batch as rb
from kafkatool.schema.control import parse_control_record
from kafkatool.schema.filenames import (
    CLUSTER_METADATA_TOPIC,
    INDEX_SUFFIX,
    LEADER_EPOCH_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    LOG_SUFFIX,
    META_PROPERTIES,
    PARTITION_METADATA,
    PRODUCER_SNAPSHOT_SUFFIX,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    DirState,
    segment_file_name,
)
from kafkatool.storage.producer_state import ABORT_MARKER, COMMIT_MARKER

SCHEMA_VERSION = 1
MAX_COMPARED_OVERLAPS = 10_000
"""Overlapping batches whose records are compared (each decodes two batches); beyond, they are counted."""


@dataclass
class Account:
    """What one pass over the chosen batches counts for the account."""

    batches: int = 0
    records: int = 0
    beyond: int = 0
    by_source: dict[int, list[int]] = field(default_factory=dict)
    states: dict[str, int] = field(default_factory=dict)
    data_records: int = 0


@dataclass
class PartitionSalvage:
    """One partition: its sources, what was chosen and why, and Kafka's own recovery of it."""

    name: str
    topic: str
    partition: int
    sources: list[SourceFile]
    selection: Selection
    rejected: list[Rejected]
    defects: list[tuple[int, Defect]]
    legacy_left_out: int
    states: bytearray
    plan: LogPlan
    conflicts: list[dict[str, Any]]
    duplicates: int
    covered: int
    epoch_cache_from: str | None
    partition_metadata: Path | None
    kafka: dict[str, Any] | None
    high_watermark: int | None
    offset_context: list[tuple[int, int, int, int]] = field(default_factory=list)
    kafka_kept: list[tuple[int, int]] = field(default_factory=list)
    account: Account = field(default_factory=Account)


@dataclass
class SalvageResult:
    """Every partition, the inputs, and the metadata-log partitions copied as they are."""

    inputs: list[InputDir]
    partitions: list[PartitionSalvage]
    metadata_copies: list[PartitionCopy]
    index_interval_bytes: int = 4096


def _marker(data: bytes) -> tuple[int, int]:
    """A control batch's transaction marker (as ``storage.producer_state.marker_of`` reads it)."""
    try:
        batch = rb.parse_batch(data, 0, deep=True, max_output=current_limits().max_decompressed_bytes)
    except DecodeError:
        return -1, 0
    if not batch.records or batch.records[0].key is None:
        return -1, 0
    try:
        control = parse_control_record(batch.records[0].key, batch.records[0].value)
    except DecodeError:
        return -1, 0
    if control.coordinator_epoch is None:
        return -1, 0
    return (COMMIT_MARKER if control.type == ControlType.COMMIT.value else ABORT_MARKER), control.coordinator_epoch


_FIELDS = ("base_offset", "batch_length", "partition_leader_epoch", "crc", "records_count", "attributes",
           "last_offset_delta", "producer_id", "producer_epoch", "base_sequence", "max_timestamp")


def _batches(k: int, source: SourceFile, start: int, end: int, valid_only: bool = False) -> Iterator[Candidate]:
    """The batches of ``source`` in the byte range ``[start, end)`` as :class:`Candidate` objects, a window at a
    time (markers read for control batches); ``valid_only`` checks CRCs and skips the batches that fail."""
    for cols in scan_windows(source, start, end, verify_crc=valid_only):
        h = cols.headers
        valid = cols.crc_valid.tolist() if cols.crc_valid is not None else [True] * len(cols)
        rows = zip(cols.positions.tolist(), valid, *(h[f].tolist() for f in _FIELDS), strict=True)
        for pos, ok, *fields in rows:
            if not ok or pos >= end:
                continue
            yield _candidate(k, source, pos, *fields)


def _candidate(k: int, source: SourceFile, pos: int, base: int, length: int, epoch: int, crc: int, count: int,
               attrs: int, delta: int, pid: int, pep: int, seq: int, max_ts: int) -> Candidate:
    """The :class:`Candidate` of a batch from its header fields (:data:`_FIELDS`); a control batch's marker is
    read from the file."""
    c = Candidate.of(k, pos, length + rb.LOG_OVERHEAD, base, delta, epoch, crc, count, attrs, pid, pep, seq, max_ts)
    if c.control and pid >= 0:
        c.marker, c.coordinator_epoch = _marker(read_span(source.path, pos, c.size))
    return c


def _expand(sources: list[SourceFile]) -> Callable[[Run], Iterator[Candidate]]:
    def expand(r: Run) -> Iterator[Candidate]:
        return _batches(r.source, sources[r.source], r.position, r.end)
    return expand


PLAIN_STRETCHES = True
"""Whether :func:`_partition` plans stretches of plain batches by columns (:func:`_chosen_stretches`); off, every
batch goes through :meth:`LogPlanner.add` (the differential test compares the two)."""


def _chosen_stretches(p: PartitionSalvage, planner: LogPlanner, txns: TransactionStates,
                      kept: list[tuple[int, int]]) -> Iterator[Candidate]:
    """:func:`chosen_batches`, except that stretches of plain batches (neither control nor transactional, with a
    sequence Kafka's ``lastSequence`` and this module's agree on) are planned, given their transaction state and
    counted in the account here, by columns; the other batches are yielded, in order, for the caller's
    per-batch path."""
    acc = p.account
    starts = np.asarray([a for a, _ in kept], dtype=np.int64)
    stops = np.asarray([b for _, b in kept], dtype=np.int64)
    for r in p.selection.chosen:
        source = p.sources[r.source]
        for cols in scan_windows(source, r.position, r.end, verify_crc=False):
            h = cols.headers
            inside = cols.positions < r.end
            at = cols.positions[inside]
            if not len(at):
                continue
            base = h["base_offset"][inside].astype(np.int64)
            delta = h["last_offset_delta"][inside].astype(np.int64)
            attrs = h["attributes"][inside].astype(np.int64)
            seq = h["base_sequence"][inside].astype(np.int64)
            plain = ((attrs & 0x30) == 0) & (seq >= -1) & (delta >= 0)
            columns = {"position": at.astype(np.int64),
                       "size": h["batch_length"][inside].astype(np.int64) + rb.LOG_OVERHEAD,
                       "base_offset": base, "last_offset": base + delta, "last_offset_delta": delta,
                       "epoch": h["partition_leader_epoch"][inside].astype(np.int64),
                       "max_timestamp": h["max_timestamp"][inside].astype(np.int64),
                       "producer_id": h["producer_id"][inside].astype(np.int64),
                       "producer_epoch": h["producer_epoch"][inside].astype(np.int64), "base_sequence": seq,
                       "attributes": attrs, "records": h["records_count"][inside].astype(np.int64)}
            special = np.flatnonzero(~plain).tolist()
            fields = [h[f][inside][special].tolist() for f in _FIELDS] if special else []
            lo = 0
            for n, stop in enumerate([*special, len(at)]):
                if stop > lo:
                    part = {name: col[lo:stop] for name, col in columns.items()}
                    planner.add_plain(r.source, part)
                    txns.add_plain(stop - lo)
                    _count_plain(acc, r.source, part, starts, stops)
                if stop < len(at):
                    yield _candidate(r.source, source, int(at[stop]), *(f[n] for f in fields))
                lo = stop + 1


def _count_plain(acc: Any, k: int, cols: dict[str, np.ndarray], starts: np.ndarray, stops: np.ndarray) -> None:
    """The account of a stretch of plain (data) batches of source ``k``, as the per-batch loop counts each."""
    base, last, records = cols["base_offset"], cols["last_offset"], cols["records"]
    n, total = len(base), int(records.sum())
    held = np.zeros(n, dtype=bool)
    if len(starts):  # _covered: inside the Kafka-kept range that starts last at or before the batch
        i = np.searchsorted(starts, base, side="right") - 1
        j = np.maximum(i, 0)
        held = (i >= 0) & (base >= starts[j]) & (last <= stops[j])
    beyond = int(records[~held].sum())
    acc.batches += n
    acc.records += total
    acc.data_records += total
    acc.beyond += beyond
    row = acc.by_source.get(k)
    if row is None:
        row = acc.by_source[k] = [0, 0, int(base[0]), int(last[0]), 0]
    row[0] += n
    row[1] += total
    row[3] = int(last[-1])
    row[4] += beyond


def chosen_batches(p: PartitionSalvage) -> Iterator[Candidate]:
    """The chosen batches of a partition in offset order, read again from their files (headers only)."""
    for r in p.selection.chosen:
        yield from _batches(r.source, p.sources[r.source], r.position, r.end)


class _RunBuilder:
    """One file's trusted batches as :class:`Run` objects, fed a window of columns at a time: the CRC-valid
    batches whose offsets agree with their neighbours (``consistent_in_file``, batch by batch only where the
    window's offsets do not simply rise), cut where bytes stop being contiguous, the leader epoch changes or the
    lineage verdict changes."""

    def __init__(self, k: int, source: SourceFile, cache: list[LeaderEpochEntry] | None) -> None:
        self.k, self.source = k, source
        self.bounds: dict[int, tuple[int, int]] = {}
        for i, e in enumerate(cache or []):
            end = cache[i + 1].start_offset if cache is not None and i + 1 < len(cache) else (1 << 63) - 1
            self.bounds.setdefault(e.epoch, (e.start_offset, end))
        self.order = FileOrder(source.base_offset, source.base_offset - 1)
        self.carry: dict[str, np.ndarray] | None = None
        self.runs: list[Run] = []
        self.rejected: list[Rejected] = []
        self.open: Run | None = None
        # the offsets each defect may hide: between the valid batches around it in the file
        self.context: list[tuple[int, int, int, int]] = []
        self.waiting: list[tuple[int, int]] = []  # (defect position, offset after the valid batch before it)
        self.last_valid = source.base_offset - 1

    def feed(self, cols: SegmentColumns) -> None:
        """The next window."""
        h = cols.headers
        ok = cols.crc_valid if cols.crc_valid is not None else np.ones(len(cols), dtype=bool)
        arr = {"pos": cols.positions[ok].astype(np.int64), "base": h["base_offset"][ok].astype(np.int64),
               "size": h["batch_length"][ok].astype(np.int64) + rb.LOG_OVERHEAD,
               "epoch": h["partition_leader_epoch"][ok].astype(np.int64),
               "records": h["records_count"][ok].astype(np.int64)}
        arr["last"] = arr["base"] + h["last_offset_delta"][ok].astype(np.int64)
        self._context(cols, arr)
        if self.carry is not None:
            arr = {f: np.concatenate([self.carry[f], v]) for f, v in arr.items()}
        if len(arr["pos"]) == 0:
            self.carry = None
            return
        self.carry = {f: v[-1:] for f, v in arr.items()}
        self._decide(arr, len(arr["pos"]) - 1)

    def _context(self, cols: SegmentColumns, arr: dict[str, np.ndarray]) -> None:
        pos, base, last = arr["pos"], arr["base"], arr["last"]
        events = sorted([(d.position, 1, None) for d in cols.defects] +
                        [(p, 0, i) for i, p in enumerate(pos.tolist())] if cols.defects else [])
        if not events:
            if len(pos):
                for dpos, lo in self.waiting:
                    self.context.append((self.k, dpos, lo, int(base[0]) - 1))
                self.waiting = []
                self.last_valid = int(last[-1])
            return
        for p, kind, i in events:
            if kind == 1:
                self.waiting.append((p, self.last_valid + 1))
            else:
                for dpos, lo in self.waiting:
                    self.context.append((self.k, dpos, lo, int(base[i]) - 1))
                self.waiting = []
                self.last_valid = int(last[i])

    def _decide(self, a: dict[str, np.ndarray], n: int) -> None:
        """Keep or reject the first ``n`` batches of ``a`` (each has its next batch in ``a``, or is the file's
        last when ``n`` is all of them): ``consistent_in_file``, called only when the offsets do not simply
        rise (the common case needs no object per batch)."""
        if n <= 0:
            return
        base, last = a["base"], a["last"]
        order = self.order
        if base[0] > order.prev_last and (n == 1 or bool((base[1:n] > last[:n - 1]).all())) and \
                (n == len(base) or base[n] > last[n - 1]):
            keep = np.ones(n, dtype=bool)
            order.prev_last, order.kept_any = int(last[n - 1]), True
        else:
            rows = list(zip(a["pos"].tolist(), base.tolist(), last.tolist(), strict=True))
            kept, rejected = consistent_in_file(self.k, rows, order, n)
            self.rejected += rejected
            keep = np.zeros(n, dtype=bool)
            keep[kept] = True
        if keep.any():
            self._runs({f: v[:n][keep] for f, v in a.items()})

    def _runs(self, a: dict[str, np.ndarray]) -> None:
        pos, size, base, last, epoch = a["pos"], a["size"], a["base"], a["last"], a["epoch"]
        lineage = np.zeros(len(pos), dtype=bool)
        changes = np.flatnonzero(epoch[1:] != epoch[:-1]) + 1  # the epochs present (np.unique loads numpy.ma)
        for e in sorted(set(epoch[:1].tolist() + epoch[changes].tolist())):
            if e in self.bounds:
                lo, hi = self.bounds[e]
                m = epoch == e
                lineage[m] = (base[m] >= lo) & (last[m] < hi)
        cut = np.flatnonzero((pos[1:] != pos[:-1] + size[:-1]) | (epoch[1:] != epoch[:-1])
                             | (lineage[1:] != lineage[:-1])) + 1
        starts = [0, *cut.tolist()]
        ends = [*cut.tolist(), len(pos)]
        records = np.add.reduceat(a["records"], starts).tolist()
        for s, e, n in zip(starts, ends, records, strict=True):
            first_pos, end_pos = int(pos[s]), int(pos[e - 1] + size[e - 1])
            ep, lin = int(epoch[s]), bool(lineage[s])
            o = self.open
            if o is not None and o.end == first_pos and o.epoch == ep and o.lineage == lin:
                o.end, o.last_offset, o.batches, o.records = end_pos, int(last[e - 1]), o.batches + e - s, \
                    o.records + n
                continue
            self.open = Run(self.k, first_pos, end_pos, int(base[s]), int(last[e - 1]), ep, e - s, n, lin)
            self.runs.append(self.open)

    def finish(self) -> None:
        """The file's end: its last batch is decided, the defects after the last valid batch closed."""
        if self.carry is not None:
            self._decide(self.carry, len(self.carry["pos"]))
            self.carry = None
        for dpos, lo in self.waiting:
            self.context.append((self.k, dpos, lo, -1))
        self.waiting = []


def _scan_file(k: int, source: SourceFile, cache: list[LeaderEpochEntry] | None,
               defects: list[tuple[int, Defect]]) -> tuple[_RunBuilder, int]:
    """One file scanned a window at a time: its runs, rejected batches, defects and their context."""
    builder = _RunBuilder(k, source, cache)
    legacy = 0
    for cols in scan_windows(source):
        defects.extend((k, d) for d in cols.defects)
        legacy += len(cols.legacy)
        builder.feed(cols)
    builder.finish()
    return builder, legacy


def _records(source: SourceFile, c: Candidate) -> list[Record]:
    batch = rb.parse_batch(read_span(source.path, c.position, c.size), 0, deep=True,
                           max_output=current_limits().max_decompressed_bytes)
    return batch.records or []


def _content(r: Record) -> tuple[Any, ...]:
    return r.timestamp, r.key, r.value, tuple((h.key, h.value) for h in r.headers)


def _classify(sources: list[SourceFile], selection: Selection) -> tuple[list[dict[str, Any]], int, int]:
    """Overlaps as conflicts (some offset holds other content), duplicates (the same batch) and covered (other
    batches holding the same records, e.g. a compacted copy)."""
    conflicts: list[dict[str, Any]] = []
    covered = 0
    for n, o in enumerate(selection.overlaps):
        if n >= MAX_COMPARED_OVERLAPS:
            conflicts.append(_conflict(sources, o.candidate, o.chosen, None, "not compared (too many overlaps)"))
            continue
        try:
            mine = {r.offset: _content(r) for r in _records(sources[o.candidate.source], o.candidate)}
            theirs: dict[int, tuple[Any, ...]] = {}
            for ch in o.chosen:
                theirs.update({r.offset: _content(r) for r in _records(sources[ch.source], ch)})
        except DecodeError as err:
            conflicts.append(_conflict(sources, o.candidate, o.chosen, None, f"records do not decode: {err}"))
            continue
        differ = sorted(off for off in mine.keys() & theirs.keys() if mine[off] != theirs[off])
        only = sorted(mine.keys() - theirs.keys())
        if differ:
            conflicts.append(_conflict(sources, o.candidate, o.chosen, differ, "same offsets, different records"))
        elif only:
            conflicts.append(_conflict(sources, o.candidate, o.chosen, only,
                                       "records at offsets the chosen batch does not hold (batch boundaries differ)"))
        else:
            covered += 1
    return conflicts, selection.duplicates, covered


def _conflict(sources: list[SourceFile], c: Candidate, chosen: tuple[Candidate, ...], offsets: list[int] | None,
              reason: str) -> dict[str, Any]:
    def where(b: Candidate) -> dict[str, Any]:
        s = sources[b.source]
        return {"file": s.label, "position": b.position, "replica": s.replica, "kind": s.kind,
                "base_offset": b.base_offset, "last_offset": b.last_offset, "leader_epoch": b.epoch, "crc": b.crc}

    return {"offsets": None if offsets is None else {"from": offsets[0], "to": offsets[-1], "count": len(offsets)},
            "reason": reason, "kept": [where(b) for b in chosen], "left_out": where(c)}


def _reference(copies: list[PartitionCopy], leader: int | None) -> tuple[list[LeaderEpochEntry] | None, int | None,
                                                                           str | None]:
    """The final leader's epoch cache: ``--leader``'s, else the local input's, else the newest replica's."""
    live = [c for c in copies if c.state is DirState.LIVE and c.leader_epochs]
    if leader is not None:
        live = [c for c in live if c.replica == leader]
    if not live:
        return None, leader, None
    local = [c for c in live if c.replica is None]
    best = local[0] if local else max(live, key=lambda c: (c.leader_epochs[-1].epoch if c.leader_epochs else -1))
    where = "input" if best.replica is None else f"replica {best.replica}"
    return best.leader_epochs, best.replica, f"{where}:{best.directory.name}/leader-epoch-checkpoint"


Ahead = Callable[[list[tuple[str, list[ByteRange]]], list[str]], None]
"""A writer's head start (``StagedDir.ahead``): files by relative path with their pieces, and the directories
whose files these are all of."""

KafkaView = dict[tuple[int | None, str], tuple[dict[str, Any] | None, list[tuple[int, int]]]]


def _kafka_view(inputs: list[InputDir], now: int) -> KafkaView:
    """Each input's partitions as Kafka's recovery leaves them (``simulate-restart``), reduced at once to what
    the account needs (:func:`_kafka_doc`): the restart model's reading of an input is let go before the next
    one, and before salvage scans, so the two peaks never add up."""
    # the metadata image's modules load only here (a tenth of a second of the command's start otherwise)
    from kafkatool.analysis.metadata import topic_remote_storage

    out: KafkaView = {}
    for inp in inputs:
        try:
            ri = read_restart_inputs(inp.path)
        except Exception:
            continue
        result = simulate_restart(ri.log_dir, ri.swaps, RestartOptions(now=now, plan_output=False), None,
                                  ri.tiered.remote, topic_remote_storage(inp.path))
        parts = {p.directory: p for p in ri.log_dir.partitions}
        for p in result.partitions:
            if p.directory in parts:
                out[(inp.replica, p.directory)] = _kafka_doc((p, parts[p.directory]))
        del ri, result, parts
        # the kept header columns hold the read's entries: let them go too, and the heap they freed (on 1 GiB of
        # one-record batches 162 MB were still held after salvage, 101 MB without them, measured 2026-11-28)
        forget_columns()
        forget_windows()
        release_heap()
    return out


def _kept_batches(entries: Any, start: int, end: int) -> Iterator[tuple[np.ndarray, np.ndarray, int]]:
    """The magic 2 batches of a loaded segment's ``entries`` that Kafka keeps (offsets in ``[start, end)``), a
    window of header columns at a time: (base offsets, last offsets, records) of each window."""
    step = 1 << 16
    for lo in range(0, len(entries), step):
        window = entries[lo:lo + step]
        cols = header_columns(window) if isinstance(entries, SegmentEntries) else None
        if cols is None:  # legacy entries or objects: one at a time
            rows = [(e.base_offset, e.last_offset, e.records_count) for e in window
                    if isinstance(e, rb.RecordBatch) and e.last_offset < end and e.base_offset >= start]
            if rows:
                b, la, n = (np.asarray(c, dtype=np.int64) for c in zip(*rows, strict=True))
                yield b, la, int(n.sum())
            continue
        base = cols["base_offset"].astype(np.int64)
        last = base + cols["last_offset_delta"]
        keep = (last < end) & (base >= start)
        yield base[keep], last[keep], int(cols["records_count"][keep].sum())


def _kafka_doc(view: tuple[PartitionRestart, Any] | None) -> tuple[dict[str, Any] | None, list[tuple[int, int]]]:
    if view is None:
        return None, []
    p, part = view
    end = p.log_end_offset if p.outcome == "loaded" and p.log_end_offset is not None else None
    kept: list[tuple[int, int]] = []
    records = 0
    if end is not None:
        for s in part.segments:
            for base, last, n in _kept_batches(s.entries, p.log_start_offset or 0, end):
                records += n
                if not len(base):
                    continue
                # consecutive batches with no offset between them make one range
                cut = np.flatnonzero(base[1:] > last[:-1] + 1) + 1
                firsts = [int(base[0]), *base[cut].tolist()]
                lasts = [*last[cut - 1].tolist(), int(last[-1])]
                for a, b in zip(firsts, lasts, strict=True):
                    if kept and kept[-1][1] + 1 >= a:
                        kept[-1] = (kept[-1][0], max(kept[-1][1], b))
                    else:
                        kept.append((a, b))
    return {"outcome": p.outcome, "error": p.error, "log_start_offset": p.log_start_offset, "log_end_offset": end,
            "records": records, "records_lost": p.loss.records, "bytes_truncated": p.bytes_truncated,
            "lost_offsets": None if p.loss.offsets is None else
            {"from": p.loss.offsets[0], "to": p.loss.offsets[1]}}, kept


def salvage(paths: list[Path], replicas: dict[int, Path], *, leader: int | None = None, now: int = 0,
            partition: str | None = None, segment_bytes: int = 1 << 30,
            index_interval_bytes: int = 4096,
            ahead: Ahead | None = None) -> SalvageResult:
    """Find, scan and choose every partition's trustworthy batches (see ``engine.salvage``). Inside
    ``reading.scan_memo.remembering``, a small file is read once for all the passes over it. ``ahead`` is given
    the segments :func:`repaired_layout` streams as soon as they can be told, for a writer's head start
    (``writing.salvage_writer.StagedDir.ahead``): each partition's first one once its copies are scanned (before
    Kafka's view is taken), then all of them as planned."""
    inputs = find_inputs(paths, replicas)
    names = sorted({n for i in inputs for n in i.copies})
    if partition is not None:
        if partition not in names:
            raise UsageError(f"--partition {partition}: no copy of it in the inputs "
                             f"({', '.join(names[:20]) or 'they hold no partition'})")
        names = [partition]

    def hand(partition: str, files: list[tuple[str, list[ByteRange]]]) -> None:
        if ahead is not None:  # all of the partition's files known so far: any other handed ahead is stopped
            ahead(files, [partition])

    # each partition's copies scanned and chosen from first: the first repaired segment is known before Kafka's
    # view (which the account needs) is taken, and the writer copies it meanwhile
    scanned: list[_Scanned] = []
    metadata: list[PartitionCopy] = []
    for name in names:
        copies = [c for i in inputs for c in i.copies.get(name, [])]
        if name.startswith(CLUSTER_METADATA_TOPIC + "-"):
            metadata += [c for c in copies if c.state is DirState.LIVE and c.replica is None][:1]
            continue
        scanned.append(_scan_partition(name, copies, leader))
        hand(name, _first_segment(scanned[-1], segment_bytes))
    kafka = _kafka_view(inputs, now)
    out: list[PartitionSalvage] = []
    for one in scanned:
        out.append(_partition(one, inputs, kafka, segment_bytes, index_interval_bytes))
        hand(one.name, [(f"{one.name}/{segment_file_name(seg.base_offset, LOG_SUFFIX)}",
                         list(_segment_bytes(out[-1], seg))) for seg in out[-1].plan.segments])
    return SalvageResult(inputs, out, metadata, index_interval_bytes)


@dataclass
class _Scanned:
    """A partition's copies scanned and its batches chosen: all of salvage's work on it that Kafka's view of the
    restart is not needed for."""

    name: str
    copies: list[PartitionCopy]
    sources: list[SourceFile]
    selection: Selection
    rejected: list[Rejected]
    defects: list[tuple[int, Defect]]
    context: list[tuple[int, int, int, int]]
    legacy: int
    preferred: int | None
    cache_from: str | None
    conflicts: list[dict[str, Any]]
    duplicates: int
    covered: int


def _scan_partition(name: str, copies: list[PartitionCopy], leader: int | None) -> _Scanned:
    sources = [f for c in copies for f in sorted(c.files, key=lambda f: (f.base_offset, f.kind))]
    infos = [SourceInfo(s.replica, s.kind, s.base_offset) for s in sources]
    defects: list[tuple[int, Defect]] = []
    context: list[tuple[int, int, int, int]] = []
    runs: list[Run] = []
    rejected: list[Rejected] = []
    legacy = 0
    cache, preferred, cache_from = _reference(copies, leader)
    for k, s in enumerate(sources):
        built, n_legacy = _scan_file(k, s, cache, defects)
        legacy += n_legacy
        runs += built.runs
        rejected += built.rejected
        context += built.context
    selection = select(runs, infos, cache, preferred, _expand(sources))
    rejected += selection.rejected
    del runs
    conflicts, duplicates, covered = _classify(sources, selection)
    return _Scanned(name, copies, sources, selection, rejected, defects, context, legacy, preferred, cache_from,
                    conflicts, duplicates, covered)


def _first_segment(p: _Scanned, segment_bytes: int) -> list[tuple[str, list[ByteRange]]]:
    """The first repaired segment's pieces as far as the chosen runs tell them: the runs in offset order, up to
    ``segment.bytes`` (where the planner rolls, at a batch the runs do not show: the writer keeps what agrees)."""
    pieces = leading((ByteRange(str(p.sources[r.source].path), r.position, r.end) for r in p.selection.chosen),
                     segment_bytes)
    if not pieces:
        return []
    return [(f"{p.name}/{segment_file_name(p.selection.chosen[0].base_offset, LOG_SUFFIX)}", pieces)]


def _partition(scanned: _Scanned, inputs: list[InputDir], kafka: KafkaView,
               segment_bytes: int, index_interval_bytes: int) -> PartitionSalvage:
    name, copies, sources, selection = scanned.name, scanned.copies, scanned.sources, scanned.selection
    rejected, defects, context, legacy = scanned.rejected, scanned.defects, scanned.context, scanned.legacy
    preferred, cache_from = scanned.preferred, scanned.cache_from
    conflicts, duplicates, covered = scanned.conflicts, scanned.duplicates, scanned.covered
    topic, _, num = name.rpartition("-")
    kafka_doc, kept_ranges = kafka.get((preferred, name)) or kafka.get((None, name)) or (None, [])
    kept_ranges = _merge(kept_ranges)
    base = kafka_doc["log_start_offset"] if kafka_doc and kafka_doc["log_start_offset"] is not None else 0
    meta = next((c.partition_metadata for c in copies if c.partition_metadata is not None
                 and c.state is DirState.LIVE and c.replica == preferred), None) or \
        next((c.partition_metadata for c in copies if c.partition_metadata is not None), None)
    hw = None
    for inp in inputs:
        if inp.replica == preferred and inp.data is not None:
            cp = inp.data.checkpoints.get(REPLICATION_OFFSET_CHECKPOINT) or {}
            hw = next((v for k, v in cp.items() if str(k) == name), None)
    part = PartitionSalvage(name, topic, int(num), sources, selection, rejected, defects, legacy, bytearray(),
                            LogPlan([], {}, [], base, base, [], [], []), conflicts, duplicates, covered, cache_from,
                            meta, kafka_doc, hw, context, kept_ranges)
    # one pass over the chosen batches, in offset order: the repaired log's plan, the transaction states and the
    # account (nothing per batch is kept but its one-byte transaction state)
    planner = LogPlanner(segment_bytes=segment_bytes, index_interval_bytes=index_interval_bytes, empty_base=base)
    txns = TransactionStates(planner.psm)
    acc = part.account
    for c in _chosen_stretches(part, planner, txns, kept_ranges) if PLAIN_STRETCHES else chosen_batches(part):
        planner.add(c)
        txns.add(c)
        acc.batches += 1
        acc.records += c.records
        row = acc.by_source.get(c.source)
        if row is None:
            row = acc.by_source[c.source] = [0, 0, c.base_offset, c.last_offset, 0]
        row[0] += 1
        row[1] += c.records
        row[3] = c.last_offset
        if not _covered(kept_ranges, c.base_offset, c.last_offset):
            acc.beyond += c.records
            row[4] += c.records
        if not c.control:
            acc.data_records += c.records
    part.plan = planner.finish()
    part.states, counts = txns.finish()
    counts["none"] = acc.data_records - sum(counts.values())
    acc.states = counts
    return part


# --- the account -------------------------------------------------------------------------------------------------


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _covered(ranges: list[tuple[int, int]], a: int, b: int) -> bool:
    """Whether ``[a, b]`` lies in one of ``ranges`` (merged, in order)."""
    i = bisect_right(ranges, (a, INT64_MAX)) - 1
    return i >= 0 and ranges[i][0] <= a and b <= ranges[i][1]


INT64_MAX = (1 << 63) - 1


def partition_document(p: PartitionSalvage) -> dict[str, Any]:
    """One partition's account, as ``--format json`` prints it."""
    acc = p.account
    lost = []
    for a, b in p.plan.gaps:
        hidden = [{"file": p.sources[k].label, "position": pos} for k, pos, lo, hi in p.offset_context
                  if lo <= b and (hi < 0 or hi >= a)]
        lost.append({"from": a, "to": b, "count": b - a + 1,
                     "why": "damaged" if hidden else "no copy holds them (compacted, deleted or never written here)",
                     "damage": hidden[:5]})
    ranges, offsets = p.plan.gaps_total, p.plan.gap_offsets
    end = p.plan.log_end_offset
    if p.high_watermark is not None and p.high_watermark > end:
        ranges, offsets = ranges + 1, offsets + p.high_watermark - end
        lost.append({"from": end, "to": p.high_watermark - 1, "count": p.high_watermark - end,
                     "why": "acknowledged (below the high-watermark checkpoint), in no trustworthy batch",
                     "damage": []})
    return {
        "partition": p.name, "topic": p.topic, "number": p.partition,
        "kafka": p.kafka,
        "salvage": {"batches": acc.batches, "records": acc.records,
                    "records_beyond_kafka": acc.beyond,
                    "log_start_offset": p.plan.log_start_offset, "log_end_offset": end,
                    "segments": len(p.plan.segments), "choice": p.selection.lineage,
                    "epoch_cache": p.epoch_cache_from,
                    "transactions": {k: acc.states.get(k, 0) for k in ("committed", "aborted", "open", "none")},
                    "open_transactions": [
                        {"producer_id": t.producer_id, "first_offset": t.first_offset}
                        for t in p.plan.open_transactions],
                    "refused_by_kafka_at": p.plan.invalid_txn, "refused_by_kafka": p.plan.invalid_txn_total},
        "sources": [{"file": p.sources[k].label, "kind": p.sources[k].kind, "replica": p.sources[k].replica,
                     "batches": v[0], "records": v[1], "from": v[2], "to": v[3], "records_beyond_kafka": v[4]}
                    for k, v in sorted(acc.by_source.items())],
        "lost": lost, "lost_ranges": ranges, "lost_offsets": offsets,
        "conflicts": p.conflicts,
        "duplicates": p.duplicates, "covered_by_chosen": p.covered,
        "rejected": [{"file": p.sources[r.source].label, "position": r.position, "base_offset": r.base_offset,
                      "last_offset": r.last_offset, "reason": r.reason} for r in p.rejected],
        "legacy_entries_left_out": p.legacy_left_out,
        "defects": [{"file": p.sources[k].label, "position": d.position, "field": d.field, "code": d.code,
                     "reason": d.reason} for k, d in p.defects],
    }


def salvage_document(result: SalvageResult) -> dict[str, Any]:
    """The whole account."""
    parts = [partition_document(p) for p in result.partitions]
    return {"schema_version": SCHEMA_VERSION,
            "inputs": [{"path": str(i.path), "replica": i.replica} for i in result.inputs],
            "not_read": [{"file": d.file, "code": d.code, "reason": d.reason} for d in not_read(result.inputs)],
            "metadata_log_copied": [f"{c.directory.name}" for c in result.metadata_copies],
            "partitions": parts,
            "totals": {k: sum(p["salvage"][k] for p in parts)
                       for k in ("batches", "records", "records_beyond_kafka")} |
            {"kafka_records": sum((p["kafka"] or {}).get("records", 0) for p in parts),
             "conflicts": sum(len(p["conflicts"]) for p in parts),
             "lost_offsets": sum(p["lost_offsets"] for p in parts)}}


# --- the export rows ---------------------------------------------------------------------------------------------


def _b64(b: bytes | None) -> str | None:
    return None if b is None else base64.b64encode(b).decode()


def export_rows(result: SalvageResult, *, binary: bool = False) -> Iterator[dict[str, Any]]:
    """One row per salvaged data record, in partition and offset order (bytes as base64, or raw with ``binary``)."""
    enc = (lambda b: b) if binary else _b64
    for p in result.partitions:
        for c, code in zip(chosen_batches(p), p.states, strict=True):
            if c.control:
                continue
            s = p.sources[c.source]
            st = STATES[code] or "none"
            for r in _records(s, c):
                yield {"topic": p.topic, "partition": p.partition, "offset": r.offset, "timestamp": r.timestamp,
                       "timestamp_type": "LogAppendTime" if c.attributes & 0x08 else "CreateTime",
                       "key": enc(r.key), "value": enc(r.value),
                       "headers": [{"key": h.key.decode("utf-8", "replace"), "value": enc(h.value)}
                                   for h in r.headers],
                       "producer_id": None if c.producer_id < 0 else c.producer_id,
                       "producer_epoch": None if c.producer_id < 0 else c.producer_epoch,
                       "sequence": None if r.sequence < 0 else r.sequence,
                       "transaction_state": st, "leader_epoch": c.epoch,
                       "file": s.label, "position": c.position, "replica": s.replica, "source_kind": s.kind}


def data_records(result: SalvageResult) -> int:
    """The salvaged data records (not markers) of every partition."""
    return sum(p.account.data_records for p in result.partitions)


# --- the repaired log dir ----------------------------------------------------------------------------------------

Content = bytes | Iterator[bytes] | Iterator[ByteRange]


def _segment_bytes(p: PartitionSalvage, seg: SegmentPlan) -> Iterator[ByteRange]:
    """A planned segment's bytes: its pieces of source files, for the writer to copy (kernel to kernel where the
    file systems allow; :class:`ByteRange`)."""
    for k, start, end in seg.pieces:
        yield ByteRange(str(p.sources[k].path), start, end)


def _segment_indexes(p: PartitionSalvage, seg: SegmentPlan, interval: int) -> IndexState:
    """A planned segment's offset and time indexes, from its batches' headers read again."""
    def batches() -> Iterator[tuple[int, int, int]]:
        for k, start, end in seg.pieces:
            for cols in scan_windows(p.sources[k], start, end, verify_crc=False):
                h = cols.headers
                keep = cols.positions < end
                sizes = (h["batch_length"][keep].astype(np.int64) + rb.LOG_OVERHEAD).tolist()
                lasts = (h["base_offset"][keep] + h["last_offset_delta"][keep]).tolist()
                yield from zip(sizes, lasts, h["max_timestamp"][keep].tolist(), strict=True)

    return segment_indexes(batches(), interval)


def repaired_layout(result: SalvageResult) -> Iterator[tuple[str, Content]]:
    """Every file of the repaired log dir, by relative path: small files as bytes, segments and copied files as
    byte streams read from the inputs on demand.

    No ``.kafka_cleanshutdown``: without it ``LogLoader.recoverLog`` re-validates every segment from the recovery
    point (here the log end, so only the active segment) and rebuilds the producer state from the snapshot at the
    log end, truncating nothing salvaged (seen on a real broker, ``tests/kafka/test_salvage_live.py``); the marker
    would make Kafka skip that check of files no broker wrote, and claim a broker epoch's clean shutdown that never
    happened.

    The segments come last, after every small file: a writer copying them ahead (``StagedDir.ahead``) is still at
    it while the rest is written."""
    offsets: list[tuple[TopicPartition, int]] = []
    segments: list[tuple[str, Content]] = []
    for p in result.partitions:
        plan = p.plan
        d = p.name
        for seg in plan.segments:
            idx = _segment_indexes(p, seg, result.index_interval_bytes)
            yield f"{d}/{segment_file_name(seg.base_offset, INDEX_SUFFIX)}", \
                offset_index.build_offset_index(idx.index_entries(), seg.base_offset)
            yield f"{d}/{segment_file_name(seg.base_offset, TIME_INDEX_SUFFIX)}", \
                time_index.build_time_index(idx.time_entries(), seg.base_offset)
            del idx
            segments.append((f"{d}/{segment_file_name(seg.base_offset, LOG_SUFFIX)}", _segment_bytes(p, seg)))
            if seg.aborted:
                yield f"{d}/{segment_file_name(seg.base_offset, TXN_INDEX_SUFFIX)}", \
                    txn_index.build_txn_index(seg.aborted)
        for offset, entries in sorted(plan.snapshots.items()):
            yield f"{d}/{segment_file_name(offset, PRODUCER_SNAPSHOT_SUFFIX)}", \
                producer_snapshot.build_producer_snapshot(entries)
        yield f"{d}/{LEADER_EPOCH_CHECKPOINT}", checkpoint.build_leader_epoch_checkpoint(plan.epochs)
        if p.partition_metadata is not None:
            yield f"{d}/{PARTITION_METADATA}", read_bytes(p.partition_metadata)
        offsets.append((TopicPartition(p.topic, p.partition), plan.log_end_offset))
    for copy in result.metadata_copies:
        for f in list_dir(copy.directory):
            if f.is_file() and f.name != ".lock":
                segments.append((f"{copy.directory.name}/{f.name}", read_chunks(f)))
    meta = next((i.meta_properties_path for i in result.inputs if i.replica is None and i.meta_properties_path), None) \
        or next((i.meta_properties_path for i in result.inputs if i.meta_properties_path), None)
    if meta is not None:
        yield META_PROPERTIES, read_bytes(meta)
    yield RECOVERY_POINT_CHECKPOINT, checkpoint.build_offset_checkpoint(offsets)
    yield REPLICATION_OFFSET_CHECKPOINT, checkpoint.build_offset_checkpoint(offsets)
    yield LOG_START_OFFSET_CHECKPOINT, checkpoint.build_offset_checkpoint([])
    yield from segments
