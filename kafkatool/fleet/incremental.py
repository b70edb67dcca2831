"""Incremental scans (``scan --since PREVIOUS_OUT``): only partitions whose files changed are read again.

Every scan writes, beside its four tables, ``_inputs``: one row per file it was given (each log dir's own files and
every file of every partition directory) with its size, its modification time and, for a live segment, a digest
of its first batch and of its last batch (whole, up to 16 MiB each: a flipped bit in either changes it). The next
scan ``--since`` that output fingerprints its inputs again (sizes and times from the listing, a small read or two
per segment) and reuses a partition's rows, in all four tables, when

* every file of the partition directory is still there with the same size, time and first-batch digest, and the
  batch at the previous last batch's position still has the same digest; and
* its log dir's context is unchanged: the log dir's own files (checkpoints, ``meta.properties``...), the set of
  partition directories, every ``partition.metadata``, and the metadata and tiered-storage partitions
  (``__cluster_metadata``, ``__remote_log_metadata``), which a partition's findings depend on.

Everything else (new or changed partitions, the log dirs' own findings, the cross-log-dir ones) is scanned as a
full scan would, so the tables equal a full scan's. A partition directory whose topic-partition appears twice in
a log dir (a ``-delete`` or ``-future`` twin) is always rescanned: its rows could not be told apart.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from kafkatool.errors import UnreadableInputError
from kafkatool.fleet.plan import Plan
from kafkatool.fleet.tables import columns_schema
from kafkatool.reading.batch_scan import batch_digest
from kafkatool.reading.files import file_stamp, list_dir
from kafkatool.reading.objects import input_path
from kafkatool.reading.scan_tables import table_batches
from kafkatool.schema.filenames import PARTITION_METADATA, FileKind, classify, in_flight_suffix, parse_partition_dir

MANIFEST = "_inputs"
MANIFEST_COLUMNS: tuple[tuple[str, str], ...] = (
    ("log_dir", "string"), ("directory", "string"), ("name", "string"), ("size", "int64"), ("mtime_ns", "int64"),
    ("first_digest", "string"), ("last_position", "int64"), ("last_digest", "string"),
)
MANIFEST_SCHEMA = columns_schema(MANIFEST_COLUMNS)
CONTEXT_TOPICS = ("__cluster_metadata", "__remote_log_metadata")

FileKey = tuple[str, str, str]  # log dir, partition directory name ("" for the log dir's own files), file name
Stamp = tuple[int, int, str | None]  # size, mtime (ns), first-batch digest


def _is_segment(name: str) -> bool:
    return classify(name) is FileKind.LOG and not in_flight_suffix(name)


def _digest(path: str, position: int) -> str | None:
    """A digest of the whole batch at ``position`` (``reading.batch_scan.batch_digest``)."""
    return batch_digest(path, position)


@dataclass
class Inputs:
    """The fingerprints of a scan's inputs: files by key, and where each file is."""

    stamps: dict[FileKey, Stamp] = field(default_factory=dict)
    paths: dict[FileKey, str] = field(default_factory=dict)
    partitions: dict[tuple[str, str], str] = field(default_factory=dict)  # (log dir, directory name) -> path


def fingerprint(plan: Plan) -> Inputs:
    """Size, time and first-batch digest of every file of the plan's log dirs and partitions."""
    out = Inputs()

    def add(log_dir: str, directory: str, entry: Any) -> None:
        try:
            size, mtime = file_stamp(entry)
            first = _digest(str(entry), 0) if directory and _is_segment(entry.name) else None
        except UnreadableInputError:
            return  # gone since the plan: the partition is rescanned (its rows say what is missing)
        key = (log_dir, directory, entry.name)
        out.stamps[key] = (size, mtime, first)
        out.paths[key] = str(entry)

    for log_dir in plan.log_dirs:
        try:
            entries = list_dir(log_dir)
        except UnreadableInputError:
            continue
        for entry in entries:
            if entry.is_file():
                add(log_dir, "", entry)
    for part in plan.partitions:
        directory = input_path(part.directory)
        out.partitions[(part.log_dir, directory.name)] = part.directory
        try:
            entries = list_dir(directory)
        except UnreadableInputError:
            continue
        for entry in entries:
            if entry.is_file():
                add(part.log_dir, directory.name, entry)
    return out


def manifest(inputs: Inputs, last: dict[FileKey, int]) -> pa.RecordBatch:
    """The ``_inputs`` rows: ``last`` gives each segment's last batch position (from the batches table)."""
    rows: dict[str, list[Any]] = {name: [] for name, _ in MANIFEST_COLUMNS}
    for key in sorted(inputs.stamps):
        size, mtime, first = inputs.stamps[key]
        position = last.get(key)
        try:
            digest = _digest(inputs.paths[key], position) if position is not None else None
        except UnreadableInputError:
            digest = None
        for name, value in zip(("log_dir", "directory", "name", "size", "mtime_ns", "first_digest", "last_position",
                                "last_digest"), (*key, size, mtime, first, position, digest), strict=True):
            rows[name].append(value)
    return pa.RecordBatch.from_pydict(rows, schema=MANIFEST_SCHEMA)


class LastPositions:
    """Each segment's last batch position, gathered from the batches table's record batches as they are written
    (its log dir, topic, partition, segment and position columns)."""

    def __init__(self) -> None:
        self.best: dict[tuple[str, str, int, str], int] = {}

    def add(self, batch: pa.RecordBatch) -> None:
        """Take in one record batch of the batches table."""
        if not batch.num_rows:
            return
        names = ("log_dir", "topic", "partition", "segment")
        ends = [pc.min_max(batch[name]) for name in names]
        if all(e["min"] == e["max"] and e["min"].is_valid for e in ends):
            # a range's rows (one segment): its largest position, without a grouping (Arrow's Acero engine
            # would start for it: 13 MB more resident in the scan's parent)
            key = tuple(e["min"].as_py() for e in ends)
            self.best[key] = max(self.best.get(key, -1), pc.max(batch["position"]).as_py())  # type: ignore
            return
        table = pa.Table.from_batches([batch.select(["log_dir", "topic", "partition", "segment", "position"])])
        grouped = table.group_by(["log_dir", "topic", "partition", "segment"]).aggregate([("position", "max")])
        for row in grouped.to_pylist():
            key = (row["log_dir"], row["topic"], row["partition"], row["segment"])
            self.best[key] = max(self.best.get(key, -1), row["position_max"])

    def by_file(self, plan: Plan) -> dict[FileKey, int]:
        """The positions keyed as the manifest keys files (by partition directory name)."""
        dirs = _directories(plan)
        out: dict[FileKey, int] = {}
        for (log_dir, topic, partition, segment), position in self.best.items():
            directory = dirs.get((log_dir, topic, partition))
            if directory is not None:
                out[(log_dir, directory, segment)] = position
        return out


def _directories(plan: Plan) -> dict[tuple[str, str, int], str]:
    """(log dir, topic, partition) -> directory name, for topic-partitions with one directory in their log dir."""
    found: dict[tuple[str, str, int], list[str]] = defaultdict(list)
    for part in plan.partitions:
        name = input_path(part.directory).name
        parsed = parse_partition_dir(name)
        if parsed is not None:
            found[(part.log_dir, parsed[0].topic, parsed[0].partition)].append(name)
    return {k: v[0] for k, v in found.items() if len(v) == 1}


@dataclass
class Reuse:
    """What ``--since`` decided: the plan of what to scan, and the previous rows to keep."""

    plan: Plan
    since: str
    tps: set[tuple[str, str, int]] = field(default_factory=set)  # (log dir, topic, partition) reused
    directories: set[tuple[str, str]] = field(default_factory=set)  # (log dir, directory name) reused
    rescanned: int = 0


def _previous(since: str) -> tuple[dict[FileKey, Stamp], dict[FileKey, tuple[int | None, str | None]]]:
    stamps: dict[FileKey, Stamp] = {}
    lasts: dict[FileKey, tuple[int | None, str | None]] = {}
    for batch in table_batches(since, MANIFEST):
        for row in batch.to_pylist():
            key = (row["log_dir"], row["directory"], row["name"])
            stamps[key] = (row["size"], row["mtime_ns"], row["first_digest"])
            lasts[key] = (row["last_position"], row["last_digest"])
    return stamps, lasts


def _grouped(source: dict[FileKey, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    out: dict[tuple[str, str], dict[str, Any]] = defaultdict(dict)
    for (log_dir, directory, name), value in source.items():
        out[(log_dir, directory)][name] = value
    return out


def plan_since(plan: Plan, inputs: Inputs, since: str) -> Reuse:
    """Split ``plan`` into what must be scanned again and what the scan at ``since`` already holds."""
    stamps, lasts = _previous(since)
    now_files, before_files = _grouped(inputs.stamps), _grouped(stamps)

    def unchanged(log_dir: str, directory: str) -> bool:
        now = now_files.get((log_dir, directory), {})
        if now != before_files.get((log_dir, directory), {}):
            return False
        for name in now:
            position, digest = lasts.get((log_dir, directory, name), (None, None))
            if position is not None:
                try:
                    if _digest(inputs.paths[(log_dir, directory, name)], position) != digest:
                        return False
                except UnreadableInputError:
                    return False
        return True

    by_log_dir: dict[str, list[str]] = defaultdict(list)
    for log_dir, directory in inputs.partitions:
        by_log_dir[log_dir].append(directory)
    before_dirs: dict[str, set[str]] = defaultdict(set)
    for log_dir, directory in before_files:
        if directory:
            before_dirs[log_dir].add(directory)
    reuse = Reuse(plan, since)
    for log_dir, directories in by_log_dir.items():
        present = {d for d in directories if (log_dir, d) in now_files}
        context = now_files.get((log_dir, ""), {}) == before_files.get((log_dir, ""), {}) and \
            present == before_dirs.get(log_dir, set())
        twins = Counter(p[0] for d in directories if (p := parse_partition_dir(d)) is not None)
        for d in directories:
            if not context:
                break
            parsed = parse_partition_dir(d)
            if parsed is not None and parsed[0].topic in CONTEXT_TOPICS:
                context = unchanged(log_dir, d)
            meta = (log_dir, d, PARTITION_METADATA)
            context = context and inputs.stamps.get(meta) == stamps.get(meta)
        if not context:
            continue
        for d in directories:
            parsed = parse_partition_dir(d)
            if parsed is None or twins[parsed[0]] > 1 or not unchanged(log_dir, d):
                continue
            reuse.tps.add((log_dir, parsed[0].topic, parsed[0].partition))
            reuse.directories.add((log_dir, d))
    kept = [p for p in plan.partitions if (p.log_dir, input_path(p.directory).name) not in reuse.directories]
    scan_dirs = {p.directory for p in kept}
    ranges = [r for r in plan.ranges if str(input_path(r.path).parent) in scan_dirs]
    reuse.plan = replace(plan, partitions=kept, ranges=ranges)
    reuse.rescanned = len(kept)
    return reuse


def reused_rows(reuse: Reuse, tables: tuple[str, ...]) -> Iterator[tuple[str, pa.RecordBatch]]:
    """The previous scan's rows of the reused partitions, table by table, a record batch at a time."""
    if not reuse.tps:
        return
    tp_keys = pa.array(sorted(f"{ld}\0{t}\0{p}" for ld, t, p in reuse.tps), pa.string())
    dir_keys = pa.array(sorted(f"{ld}\0{d}" for ld, d in reuse.directories), pa.string())
    for table in tables:
        for batch in table_batches(reuse.since, table):
            if table == "partitions":
                key = pc.binary_join_element_wise(batch["log_dir"], batch["directory"], "\0")
                mask = pc.is_in(key, value_set=dir_keys)
            else:
                key = pc.binary_join_element_wise(batch["log_dir"], batch["topic"],
                                                  pc.cast(batch["partition"], pa.string()), "\0")
                mask = pc.is_in(key, value_set=tp_keys)
            kept = batch.filter(pc.fill_null(mask, False))
            if kept.num_rows:
                yield table, kept
