"""``salvage``'s analysis: every copy of every partition found and scanned (``reading.salvage_sources``), the
trustworthy batches chosen (``engine.salvage``), Kafka's own recovery beside it (``simulate-restart``'s model,
``engine.restart``), and the account, the export rows and the repaired log's plan. Reads, never writes."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkatool.analysis.metadata import topic_remote_storage
from kafkatool.engine.restart import PartitionRestart, RestartOptions, simulate_restart
from kafkatool.engine.salvage import (
    Candidate,
    LogPlan,
    Rejected,
    Selection,
    SourceInfo,
    consistent_in_file,
    gaps,
    plan_log,
    select,
    transaction_states,
)
from kafkatool.errors import DecodeError, UnreadableInputError, UsageError
from kafkatool.model import ControlType, Defect, LeaderEpochEntry, Record, TopicPartition
from kafkatool.reading.context import current_limits
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
    scan_source,
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
    states: list[str | None]
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


@dataclass
class SalvageResult:
    """Every partition, the inputs, and the metadata-log partitions copied as they are."""

    inputs: list[InputDir]
    partitions: list[PartitionSalvage]
    metadata_copies: list[PartitionCopy]


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


def _candidates(k: int, source: SourceFile, defects: list[tuple[int, Defect]],
                context: list[tuple[int, int, int, int]]) -> tuple[list[Candidate], int]:
    """The CRC-valid magic 2 batches of one file, in file order, and how many legacy entries it holds."""
    cols = scan_source(source)
    defects.extend((k, d) for d in cols.defects)
    h = cols.headers
    out: list[Candidate] = []
    valid = cols.crc_valid.tolist() if cols.crc_valid is not None else [True] * len(cols)
    rows = zip(cols.positions.tolist(), valid, h["base_offset"].tolist(), h["batch_length"].tolist(),
               h["partition_leader_epoch"].tolist(), h["crc"].tolist(), h["records_count"].tolist(),
               h["attributes"].tolist(), h["last_offset_delta"].tolist(), h["producer_id"].tolist(),
               h["producer_epoch"].tolist(), h["base_sequence"].tolist(), h["max_timestamp"].tolist(), strict=True)
    for pos, ok, base, length, epoch, crc, count, attrs, delta, pid, pep, seq, max_ts in rows:
        if not ok:
            continue
        last_seq = -1 if seq < 0 else (seq + delta) % (1 << 31)
        c = Candidate(k, pos, length + rb.LOG_OVERHEAD, base, base + delta, epoch, crc, count, attrs, pid, pep, seq,
                      last_seq, max_ts)
        if c.control and pid >= 0:
            c.marker, c.coordinator_epoch = _marker(read_span(source.path, pos, c.size))
        out.append(c)
    # the offsets each defect may hide: between the valid batches around it in the same file
    for _, d in (x for x in defects if x[0] == k):
        before = [c for c in out if c.position < d.position]
        after = [c for c in out if c.position > d.position]
        context.append((k, d.position, before[-1].last_offset + 1 if before else source.base_offset,
                        after[0].base_offset - 1 if after else -1))
    return out, len(cols.legacy)


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
    duplicates = covered = 0
    for n, o in enumerate(selection.overlaps):
        if o.same:
            duplicates += 1
            continue
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
    return conflicts, duplicates, covered


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


def _kafka_view(inputs: list[InputDir], now: int) -> dict[tuple[int | None, str], tuple[PartitionRestart, Any]]:
    """Each input's partitions as Kafka's recovery leaves them (``simulate-restart``)."""
    out: dict[tuple[int | None, str], tuple[PartitionRestart, Any]] = {}
    for inp in inputs:
        try:
            ri = read_restart_inputs(inp.path)
        except Exception:
            continue
        result = simulate_restart(ri.log_dir, ri.swaps, RestartOptions(now=now), None, ri.tiered.remote,
                                  topic_remote_storage(inp.path))
        parts = {p.directory: p for p in ri.log_dir.partitions}
        for p in result.partitions:
            if p.directory in parts:
                out[(inp.replica, p.directory)] = (p, parts[p.directory])
    return out


def _kafka_doc(view: tuple[PartitionRestart, Any] | None) -> tuple[dict[str, Any] | None, list[tuple[int, int]]]:
    if view is None:
        return None, []
    p, part = view
    end = p.log_end_offset if p.outcome == "loaded" and p.log_end_offset is not None else None
    kept: list[tuple[int, int]] = []
    records = 0
    if end is not None:
        for s in part.segments:
            for e in s.entries:
                if isinstance(e, rb.RecordBatch) and e.last_offset < end and e.base_offset >= (p.log_start_offset or 0):
                    records += e.records_count
                    if kept and kept[-1][1] + 1 >= e.base_offset:
                        kept[-1] = (kept[-1][0], max(kept[-1][1], e.last_offset))
                    else:
                        kept.append((e.base_offset, e.last_offset))
    return {"outcome": p.outcome, "error": p.error, "log_start_offset": p.log_start_offset, "log_end_offset": end,
            "records": records, "records_lost": p.loss.records, "bytes_truncated": p.bytes_truncated,
            "lost_offsets": None if p.loss.offsets is None else
            {"from": p.loss.offsets[0], "to": p.loss.offsets[1]}}, kept


def salvage(paths: list[Path], replicas: dict[int, Path], *, leader: int | None = None, now: int = 0,
            partition: str | None = None, segment_bytes: int = 1 << 30,
            index_interval_bytes: int = 4096) -> SalvageResult:
    """Find, scan and choose every partition's trustworthy batches (see ``engine.salvage``)."""
    inputs = find_inputs(paths, replicas)
    names = sorted({n for i in inputs for n in i.copies})
    if partition is not None:
        if partition not in names:
            raise UsageError(f"--partition {partition}: no copy of it in the inputs "
                             f"({', '.join(names[:20]) or 'they hold no partition'})")
        names = [partition]
    kafka = _kafka_view(inputs, now)
    out: list[PartitionSalvage] = []
    metadata: list[PartitionCopy] = []
    for name in names:
        copies = [c for i in inputs for c in i.copies.get(name, [])]
        if name.startswith(CLUSTER_METADATA_TOPIC + "-"):
            metadata += [c for c in copies if c.state is DirState.LIVE and c.replica is None][:1]
            continue
        out.append(_partition(name, copies, inputs, kafka, leader, segment_bytes, index_interval_bytes))
    return SalvageResult(inputs, out, metadata)


def _partition(name: str, copies: list[PartitionCopy], inputs: list[InputDir],
               kafka: dict[tuple[int | None, str], tuple[PartitionRestart, Any]], leader: int | None,
               segment_bytes: int, index_interval_bytes: int) -> PartitionSalvage:
    sources = [f for c in copies for f in sorted(c.files, key=lambda f: (f.base_offset, f.kind))]
    infos = [SourceInfo(s.replica, s.kind, s.base_offset) for s in sources]
    defects: list[tuple[int, Defect]] = []
    context: list[tuple[int, int, int, int]] = []
    candidates: list[Candidate] = []
    rejected: list[Rejected] = []
    legacy = 0
    for k, s in enumerate(sources):
        found, n_legacy = _candidates(k, s, defects, context)
        legacy += n_legacy
        kept, rej = consistent_in_file(k, found, s.base_offset)
        candidates += kept
        rejected += rej
    cache, preferred, cache_from = _reference(copies, leader)
    selection = select(candidates, infos, cache, preferred)
    rejected += selection.rejected
    del candidates
    conflicts, duplicates, covered = _classify(sources, selection)
    states, _ = transaction_states(selection.chosen)
    topic, _, num = name.rpartition("-")
    view = kafka.get((preferred, name)) or kafka.get((None, name))
    kafka_doc, kept_ranges = _kafka_doc(view)
    base = kafka_doc["log_start_offset"] if kafka_doc and kafka_doc["log_start_offset"] is not None else 0
    plan = plan_log(selection.chosen, segment_bytes=segment_bytes, index_interval_bytes=index_interval_bytes,
                    empty_base=base)
    meta = next((c.partition_metadata for c in copies if c.partition_metadata is not None
                 and c.state is DirState.LIVE and c.replica == preferred), None) or \
        next((c.partition_metadata for c in copies if c.partition_metadata is not None), None)
    hw = None
    for inp in inputs:
        if inp.replica == preferred and inp.data is not None:
            cp = inp.data.checkpoints.get(REPLICATION_OFFSET_CHECKPOINT) or {}
            hw = next((v for k, v in cp.items() if str(k) == name), None)
    return PartitionSalvage(name, topic, int(num), sources, selection, rejected, defects, legacy, states, plan,
                            conflicts, duplicates, covered, cache_from, meta, kafka_doc, hw, context,
                            _merge(kept_ranges))


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
    return any(x <= a and b <= y for x, y in ranges)


def partition_document(p: PartitionSalvage) -> dict[str, Any]:
    """One partition's account, as ``--format json`` prints it."""
    chosen = p.selection.chosen
    by_source: dict[int, list[int]] = {}
    beyond = 0
    states: dict[str, int] = {"committed": 0, "aborted": 0, "open": 0, "none": 0}
    for c, st in zip(chosen, p.states, strict=True):
        acc = by_source.setdefault(c.source, [0, 0, c.base_offset, c.last_offset, 0])
        acc[0] += 1
        acc[1] += c.records
        acc[3] = c.last_offset
        if not _covered(p.kafka_kept, c.base_offset, c.last_offset):
            beyond += c.records
            acc[4] += c.records
        if not c.control:
            states[st or "none"] += c.records
    lost = []
    for a, b in gaps(chosen):
        hidden = [{"file": p.sources[k].label, "position": pos} for k, pos, lo, hi in p.offset_context
                  if lo <= b and (hi < 0 or hi >= a)]
        lost.append({"from": a, "to": b, "count": b - a + 1,
                     "why": "damaged" if hidden else "no copy holds them (compacted, deleted or never written here)",
                     "damage": hidden[:5]})
    end = p.plan.log_end_offset
    if p.high_watermark is not None and p.high_watermark > end:
        lost.append({"from": end, "to": p.high_watermark - 1, "count": p.high_watermark - end,
                     "why": "acknowledged (below the high-watermark checkpoint), in no trustworthy batch",
                     "damage": []})
    return {
        "partition": p.name, "topic": p.topic, "number": p.partition,
        "kafka": p.kafka,
        "salvage": {"batches": len(chosen), "records": sum(c.records for c in chosen),
                    "records_beyond_kafka": beyond,
                    "log_start_offset": p.plan.log_start_offset, "log_end_offset": end,
                    "segments": len(p.plan.segments), "choice": p.selection.lineage,
                    "epoch_cache": p.epoch_cache_from,
                    "transactions": states, "open_transactions": [
                        {"producer_id": t.producer_id, "first_offset": t.first_offset}
                        for t in p.plan.open_transactions],
                    "refused_by_kafka_at": p.plan.invalid_txn},
        "sources": [{"file": p.sources[k].label, "kind": p.sources[k].kind, "replica": p.sources[k].replica,
                     "batches": v[0], "records": v[1], "from": v[2], "to": v[3], "records_beyond_kafka": v[4]}
                    for k, v in sorted(by_source.items())],
        "lost": lost,
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
             "lost_offsets": sum(g["count"] for p in parts for g in p["lost"])}}


# --- the export rows ---------------------------------------------------------------------------------------------


def _b64(b: bytes | None) -> str | None:
    return None if b is None else base64.b64encode(b).decode()


def export_rows(result: SalvageResult, *, binary: bool = False) -> Iterator[dict[str, Any]]:
    """One row per salvaged data record, in partition and offset order (bytes as base64, or raw with ``binary``)."""
    enc = (lambda b: b) if binary else _b64
    for p in result.partitions:
        for c, st in zip(p.selection.chosen, p.states, strict=True):
            if c.control:
                continue
            s = p.sources[c.source]
            for r in _records(s, c):
                yield {"topic": p.topic, "partition": p.partition, "offset": r.offset, "timestamp": r.timestamp,
                       "timestamp_type": "LogAppendTime" if c.attributes & 0x08 else "CreateTime",
                       "key": enc(r.key), "value": enc(r.value),
                       "headers": [{"key": h.key.decode("utf-8", "replace"), "value": enc(h.value)}
                                   for h in r.headers],
                       "producer_id": None if c.producer_id < 0 else c.producer_id,
                       "producer_epoch": None if c.producer_id < 0 else c.producer_epoch,
                       "sequence": None if r.sequence < 0 else r.sequence,
                       "transaction_state": st or "none", "leader_epoch": c.epoch,
                       "file": s.label, "position": c.position, "replica": s.replica, "source_kind": s.kind}


# --- the repaired log dir ----------------------------------------------------------------------------------------

Content = bytes | Iterator[bytes]


def _segment_bytes(p: PartitionSalvage, batches: list[int]) -> Iterator[bytes]:
    for k in batches:
        c = p.selection.chosen[k]
        data = read_span(p.sources[c.source].path, c.position, c.size)
        if len(data) != c.size:
            raise UnreadableInputError(str(p.sources[c.source].path), f"changed while read: {c.size} bytes at byte "
                                       f"{c.position} expected, {len(data)} read")
        yield data


def repaired_layout(result: SalvageResult) -> Iterator[tuple[str, Content]]:
    """Every file of the repaired log dir, by relative path: small files as bytes, segments and copied files as
    byte streams read from the inputs on demand.

    No ``.kafka_cleanshutdown``: without it ``LogLoader.recoverLog`` re-validates every segment from the recovery
    point (here the log end, so only the active segment) and rebuilds the producer state from the snapshot at the
    log end, truncating nothing salvaged (seen on a real broker, ``tests/kafka/test_salvage_live.py``); the marker
    would make Kafka skip that check of files no broker wrote, and claim a broker epoch's clean shutdown that never
    happened."""
    offsets: list[tuple[TopicPartition, int]] = []
    for p in result.partitions:
        plan = p.plan
        d = p.name
        for seg in plan.segments:
            yield f"{d}/{segment_file_name(seg.base_offset, LOG_SUFFIX)}", _segment_bytes(p, seg.batches)
            yield f"{d}/{segment_file_name(seg.base_offset, INDEX_SUFFIX)}", \
                offset_index.build_offset_index(seg.index, seg.base_offset)
            yield f"{d}/{segment_file_name(seg.base_offset, TIME_INDEX_SUFFIX)}", \
                time_index.build_time_index(seg.times, seg.base_offset)
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
                yield f"{copy.directory.name}/{f.name}", read_chunks(f)
    meta = next((i.meta_properties_path for i in result.inputs if i.replica is None and i.meta_properties_path), None) \
        or next((i.meta_properties_path for i in result.inputs if i.meta_properties_path), None)
    if meta is not None:
        yield META_PROPERTIES, read_bytes(meta)
    yield RECOVERY_POINT_CHECKPOINT, checkpoint.build_offset_checkpoint(offsets)
    yield REPLICATION_OFFSET_CHECKPOINT, checkpoint.build_offset_checkpoint(offsets)
    yield LOG_START_OFFSET_CHECKPOINT, checkpoint.build_offset_checkpoint([])
