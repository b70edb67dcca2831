"""Finding the broker log dirs under the scan's paths and cutting the work into units.

A unit is a byte range of a segment (:class:`~kafkatool.reading.batch_scan.SegmentRange`), a partition
to analyse, or a log dir's own files. Both engines run the same plan, so their tables are identical. The plan
also carries the scan's :class:`~kafkatool.schema.codecs.ReadLimits`: the engines hand them to every unit, in
worker processes and Spark executors alike, which never saw the command line that set them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from kafkatool.errors import UnreadableInputError
from kafkatool.reading.batch_scan import SegmentRange, split_points
from kafkatool.reading.context import resolve
from kafkatool.reading.files import list_dir
from kafkatool.reading.logdir import is_log_dir, read_log_dir_files
from kafkatool.reading.objects import fs_options, input_path, is_remote
from kafkatool.schema.codecs import DEFAULT_LIMITS, ReadLimits
from kafkatool.schema.filenames import FileKind, classify, in_flight_suffix, offset_from_name, parse_partition_dir

MAX_DEPTH = 8
DEFAULT_CHUNK_BYTES = 64 << 20


@dataclass(frozen=True, slots=True)
class PartitionUnit:
    """A partition directory to analyse, in its log dir; ``size`` is its segments' bytes (for balancing).

    The analysis reads every segment once and also yields their batch rows, except for the segments named in
    ``split``: those are cut into byte ranges, whose units yield their rows in parallel.
    """

    log_dir: str
    directory: str
    size: int
    split: tuple[str, ...] = ()


@dataclass
class Plan:
    """Every unit of a scan, in a deterministic order, and the limits every unit reads within."""

    log_dirs: list[str] = field(default_factory=list)
    ranges: list[SegmentRange] = field(default_factory=list)
    partitions: list[PartitionUnit] = field(default_factory=list)
    segments: int = 0
    limits: ReadLimits = DEFAULT_LIMITS
    fs_options: dict[str, str] = field(default_factory=dict)  # --fs-option: workers never saw the command line

    @property
    def remote(self) -> bool:
        """Whether the inputs are in an object store."""
        return any(is_remote(d) for d in self.log_dirs)

    @property
    def total_bytes(self) -> int:
        """The segment bytes of the scan."""
        return sum(p.size for p in self.partitions)

    @property
    def work_bytes(self) -> int:
        """Bytes the units read in all (split segments are read by their ranges and by their partition)."""
        return self.total_bytes + sum(r.size for r in self.ranges)


def discover(paths: list[str]) -> list[str]:
    """Every broker log dir (or lone partition directory) at or under ``paths``, sorted, without duplicates.

    Symbolic links to directories are not followed below the given paths (a link loop cannot trap the walk).
    """
    found: list[str] = []

    def walk(path: Path, depth: int) -> None:
        if is_log_dir(path):
            found.append(str(path) if is_remote(path) else os.path.abspath(path))
            return
        if depth >= MAX_DEPTH:
            return
        try:
            children = list_dir(path)
        except UnreadableInputError:
            return
        for child in children:
            if child.is_dir() and not child.is_symlink():
                walk(child, depth + 1)

    for raw in paths:
        path = input_path(raw)
        if not path.exists():
            raise UnreadableInputError(raw, "no such file or directory")
        if not path.is_dir():
            raise UnreadableInputError(raw, "not a directory (scan takes log dirs or folders holding them)")
        walk(path, 0)
    out = sorted(set(found))
    if not out:
        raise UnreadableInputError(paths[0] if len(paths) == 1 else ", ".join(paths),
                                   "holds no Kafka log dir or partition directory")
    return out


def segment_files(directory: Path) -> list[Path]:
    """The live ``.log`` segments of a partition directory, by base offset (in-flight files excluded)."""
    logs = []
    for p in list_dir(directory):
        if p.is_file() and classify(p.name) is FileKind.LOG and not in_flight_suffix(p.name):
            offset = offset_from_name(p.name)
            if offset is not None:
                logs.append((offset, p))
    return [p for _, p in sorted(logs)]


def make_plan(paths: list[str], *, chunk_bytes: int = DEFAULT_CHUNK_BYTES, all_ranges: bool = False,
              limits: ReadLimits | None = None) -> Plan:
    """Discover the log dirs under ``paths`` and cut segments larger than ``chunk_bytes`` at confirmed batch
    starts. Ranges are made for the cut segments only, unless ``all_ranges`` (every segment, whole or cut:
    the batches table alone, without the partition analyses). ``limits``: the units' (the current ones, e.g.
    the command line's, when ``None``)."""
    plan = Plan(log_dirs=discover(paths), limits=resolve(limits), fs_options=fs_options())
    for log_dir in plan.log_dirs:
        _, partition_dirs = read_log_dir_files(log_dir)
        for directory in partition_dirs:
            parsed = parse_partition_dir(directory.name)
            assert parsed is not None  # read_log_dir_files only lists parsable names
            tp = parsed[0]
            part_size = 0
            split: list[str] = []
            for log in segment_files(directory):
                plan.segments += 1
                size = log.stat().st_size
                part_size += size
                cuts = split_points(log, chunk_bytes)
                if len(cuts) == 1 and not all_ranges:
                    continue
                split.append(log.name)
                for i, start in enumerate(cuts):
                    stop = cuts[i + 1] if i + 1 < len(cuts) else None
                    plan.ranges.append(SegmentRange(log_dir, tp.topic, tp.partition, str(log), start, stop,
                                                    (stop if stop is not None else size) - start))
            plan.partitions.append(PartitionUnit(log_dir, str(directory), part_size, tuple(split)))
    return plan


def balance(sizes: list[int], groups: int) -> list[list[int]]:
    """Indexes of ``sizes`` packed greedily (largest first) into at most ``groups`` groups of similar total."""
    groups = max(1, min(groups, len(sizes)))
    bins: list[list[int]] = [[] for _ in range(groups)]
    totals = [0] * groups
    for i in sorted(range(len(sizes)), key=lambda k: (-sizes[k], k)):
        j = totals.index(min(totals))
        bins[j].append(i)
        totals[j] += sizes[i]
    return [sorted(b) for b in bins if b]
