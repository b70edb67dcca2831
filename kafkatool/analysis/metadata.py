"""``metadata``' analysis: the KRaft metadata log loaded as Kafka's ``KafkaMetadataLog`` and the raft client's
first listener load do (``engine.restart`` for the log, ``engine.metadata_image`` for snapshots and replay),
replayed into the cluster image (``MetadataImage``), and a broker's log dirs cross-checked against it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafkatool.engine import metadata_image as mi
from kafkatool.engine.restart import RestartOptions, simulate_partition
from kafkatool.errors import KafkatoolError, UnreadableInputError
from kafkatool.model import Defect, LogDirData
from kafkatool.reading.logdir import read_log_dir
from kafkatool.reading.metadata_log import (
    MetadataFiles,
    find_metadata_partition,
    read_meta_batches,
    read_metadata_files,
)
from kafkatool.reading.objects import input_path
from kafkatool.schema.filenames import LOG_SUFFIX, DirState, parse_partition_dir, segment_file_name
from kafkatool.schema.metadata_records import METADATA_TOPIC, METADATA_VERSIONS, MetaBatch
from kafkatool.storage.tiered import REMOTE_STORAGE_ENABLE, remote_storage_enabled


def _defect_json(d: Defect) -> dict[str, Any]:
    return {"code": d.code, "severity": d.severity, "file": d.file, "position": d.position, "field": d.field,
            "reason": d.reason}


def _snapshot_info(batches: list[MetaBatch]) -> dict[str, Any]:
    records = sum(len(b.records) for b in batches)
    last = batches[-1] if batches else None
    return {"batches": len(batches), "metadata_records": records,
            "last_offset_in_file": None if last is None else last.last_offset}


def load(files: MetadataFiles, *, history_of: tuple[str, int] | None = None,
         advance: Callable[[int], None] = lambda n: None) -> tuple[dict[str, Any], mi.Image]:
    """Load the metadata partition as ``KafkaMetadataLog.apply`` and the raft client's first listener load do,
    replay it, and build the output document (the ``--format json`` schema); ``advance(n)``: segment bytes read."""
    directory = files.directory
    defects: list[Defect] = list(files.defects) + list(files.partition.defects)
    for seg in files.partition.segments:
        defects.extend(seg.defects)
    restart = simulate_partition(LogDirData(str(directory.parent)), files.partition, {}, False, RestartOptions(), 0)
    if restart.outcome != "loaded":
        defects.append(Defect("metadata-log-load", directory.name, None, "log", restart.error or restart.outcome))
    log_start = restart.log_start_offset or 0
    log_end = restart.log_end_offset or 0
    latest_epoch = restart.leader_epochs[-1].epoch if restart.leader_epochs else None
    recovery = mi.recover_snapshots(files.snapshots, log_start, log_end, latest_epoch)
    if log_start > 0 and (recovery.latest is None or recovery.latest.snapshot_id.end_offset < log_start):
        defects.append(Defect("metadata-snapshot-missing", directory.name, None, "snapshots",
                              f"Inconsistent snapshot state: there must be a snapshot at an offset larger then the "
                              f"current log start offset {log_start}: Kafka refuses to start"))
    # The log as kept: each surviving segment up to the bytes the load keeps, nothing after a full truncation.
    log_batches: list[MetaBatch] = []
    if not recovery.truncated_to_snapshot:
        for seg in restart.segments:
            if seg.size_bytes == 0:  # nothing kept (or the empty active segment the load creates)
                continue
            path = directory / Path(seg.file).name
            batches, bad = read_meta_batches(path, f"{directory.name}/{path.name}", seg.size_bytes)
            advance(seg.size_bytes)
            log_batches.extend(b for b in batches if b.last_offset < log_end)
            defects.extend(bad)
    snapshot_doc: dict[str, Any] | None = None
    snap_batches: list[MetaBatch] = []
    if recovery.latest is not None:
        snap = recovery.latest
        label = f"{directory.name}/{snap.name}"
        snap_batches, bad = read_meta_batches(directory / snap.name, label)
        defects.extend(bad)
        defects.extend(mi.snapshot_checks(snap, snap_batches, log_batches, label))
        snapshot_doc = {"file": snap.name, "end_offset": snap.snapshot_id.end_offset,
                        "epoch": snap.snapshot_id.epoch, **_snapshot_info(snap_batches)}
    loaded = mi.listener_load(recovery, snap_batches, log_batches)
    image, start, after = loaded.published(), loaded.start_offset, loaded.log_batches
    defects.extend(loaded.defects)
    segments = [{"file": Path(s.file).name, "base_offset": s.base_offset, "size": s.size_bytes,
                 "next_offset": s.next_offset} for s in restart.segments]
    epochs = [[e.epoch, e.start_offset] for e in restart.leader_epochs]
    if recovery.truncated_to_snapshot:  # truncateFullyAndStartAt: one empty segment, an empty epoch cache
        start_at = recovery.log_start_offset
        segments = [{"file": segment_file_name(start_at, LOG_SUFFIX), "base_offset": start_at, "size": 0,
                     "next_offset": start_at}]
        epochs = []
    doc: dict[str, Any] = {
        "metadata_partition": str(directory),
        "log": {"log_start_offset": recovery.log_start_offset, "log_end_offset": recovery.log_end_offset,
                "latest_epoch": epochs[-1][0] if epochs else None, "bytes_truncated": restart.bytes_truncated,
                "segments": segments, "leader_epochs": epochs,
                "steps": [{"action": s.action, "detail": s.detail, "file": s.file, "offset": s.offset}
                          for s in restart.steps if s.action != "metadata-log"]},
        "snapshots": {"retained": [s.name for s in recovery.retained],
                      "deleted": [{"file": s.name, "reason": why} for s, why in recovery.deleted],
                      "truncate_to_latest_snapshot": recovery.reason, "latest": snapshot_doc},
        "quorum_state": files.quorum_state.to_json() if files.quorum_state else None,
        "replay": {"source": (f"snapshot {snapshot_doc['file']} then log batches from offset {start}"
                              if snapshot_doc else f"log batches from offset {start}"),
                   "log_batches": len(after), "log_records_replayed": sum(len(b.records) for b in after)},
        "image": mi.image_json(image),
    }
    qs = files.quorum_state
    static = list(qs.voters) if qs is not None and qs.data_version == 0 else None
    doc["quorum"] = mi.quorum_json(mi.control_changes(recovery.latest, snap_batches, log_batches), static,
                                   mi.control_changes(None, [], log_batches))
    if files.quorum_state is not None:
        last_fetched = epochs[-1][0] if epochs else (recovery.latest.snapshot_id.epoch if recovery.latest else 0)
        defects.extend(mi.quorum_state_checks(files.quorum_state.epoch, last_fetched,
                                              f"{directory.name}/quorum-state"))
    doc["bootstrap"] = None
    if files.bootstrap is not None:
        doc["bootstrap"], bad = bootstrap(files.bootstrap)
        defects.extend(bad)
    if history_of is not None:
        doc["history"] = [mi.history_json(h) for h in mi.history(recovery, snap_batches, log_batches, *history_of)]
    doc["defects"] = [_defect_json(d) for d in defects]
    return doc, image


def bootstrap(path: Path) -> tuple[dict[str, Any], list[Defect]]:
    """``bootstrap.checkpoint`` as ``BootstrapDirectory`` reads it: every metadata record and the
    metadata.version its FeatureLevelRecord sets."""
    batches, defects = read_meta_batches(path, path.name)
    records = [r.record for b in batches for r in b.records if r.record is not None]
    level = next((r.fields["featureLevel"] for r in records
                  if r.record_class == "FeatureLevelRecord" and r.fields and r.fields["name"] == "metadata.version"),
                 None)
    return {"file": path.name, "metadata_version": METADATA_VERSIONS.get(level) if level is not None else None,
            "records": [{"record_type": r.record_type, "version": r.version, "fields": r.fields} for r in records]}, \
        defects


def local_partitions(broker_dirs: list[str], advance: Callable[[int], None] | None = None) \
        -> tuple[list[mi.LocalPartition], int | None, list[Defect], list[tuple[str, str | None]]]:
    """The partition directories of a broker's log dirs, with their ``partition.metadata`` topic ids; the
    broker id and each log dir's ``directory.id`` from ``meta.properties`` (``advance``: see ``read_log_dir``)."""
    out: list[mi.LocalPartition] = []
    broker_id: int | None = None
    defects: list[Defect] = []
    dir_ids: list[tuple[str, str | None]] = []
    for d in broker_dirs:
        path = input_path(d)
        if not path.is_dir():
            raise UnreadableInputError(d, "not a log dir")
        data = read_log_dir(path, advance)
        defects.extend(data.defects)
        meta = data.meta_properties
        if meta is not None and broker_id is None:
            broker_id = meta.node_id
        dir_ids.append((d, meta.directory_id if meta is not None else None))
        for part in data.partitions:
            tp = part.topic_partition
            if tp is None or part.state != DirState.LIVE or tp.topic == METADATA_TOPIC:
                continue
            pm = part.partition_metadata
            out.append(mi.LocalPartition(part.directory, tp.topic, tp.partition, pm.topic_id if pm else None,
                                         dir_ids[-1][1]))
    return out, broker_id, defects, dir_ids


def broker_cross_check(doc: dict[str, Any], image: mi.Image, broker_id: int | None, parts: list[mi.LocalPartition],
                 dir_ids: list[tuple[str, str | None]], defects: list[Defect]) -> bool:
    """Add the broker's cross-check with the image to ``doc`` (topic ids, replicas, strays, log dir ids, and the
    broker log dirs' own ``defects``); whether anything there fails."""
    checks = mi.cross_check(image, broker_id, parts)
    doc["broker_id"] = broker_id
    doc["log_dir_check"] = mi.log_dir_checks(image, broker_id, dir_ids)
    doc["topic_id_check"] = [mi.check_json(c) for c in checks]
    doc["defects"].extend(_defect_json(d) for d in defects)
    return bool(defects) or any(c.stray or not c.match for c in checks)


def topic_remote_storage(log_dir: str | Path) -> dict[str, bool] | None:
    """Each topic's ``remote.storage.enable`` in the metadata image of the KRaft metadata log the log dir holds
    (``path`` may also be a partition directory of it): its ConfigRecords as the image has them after the load
    (:func:`load`); a topic of the image without the config has the default, false. ``None`` when the log dir
    holds no readable metadata log (then nothing is known)."""
    root = input_path(log_dir)
    parsed = parse_partition_dir(root.name)
    lone = parsed is not None and parsed[0].topic != METADATA_TOPIC  # a partition directory: its log dir's
    for candidate in (root.parent,) if lone else (root,):
        try:
            directory = find_metadata_partition(candidate)
            _, image = load(read_metadata_files(directory))
        except KafkatoolError:
            continue
        out = {t.name: False for t in image.topics.values()}
        for (resource_type, name), values in image.configs.items():
            if resource_type == mi.TOPIC_RESOURCE:
                out[name] = remote_storage_enabled(values.get(REMOTE_STORAGE_ENABLE))
        return out
    return None
