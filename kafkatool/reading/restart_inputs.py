"""The raw facts ``simulate-restart`` needs beyond :func:`~kafkatool.reading.logdir.read_log_dir`.

Kafka's ``LogLoader`` turns interrupted cleaner swaps (``X.log.swap`` and its index files) into
segments, so their content is read here too; and a partition directory given alone still gets its
parent log dir's checkpoints and clean-shutdown marker, as the broker would.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kafkatool.errors import DecodeError
from kafkatool.model import LogDirData, SegmentData
from kafkatool.reading.context import resolve
from kafkatool.reading.files import is_readable_file, list_dir, mapped, read_bytes, read_txn_index
from kafkatool.reading.logdir import OFFSET_CHECKPOINTS, _read_segment, read_log_dir
from kafkatool.reading.objects import input_path
from kafkatool.reading.tiered import TieredEvidence, read_tiered
from kafkatool.schema import checkpoint, clean_shutdown, offset_index, time_index
from kafkatool.schema.codecs import ReadLimits
from kafkatool.schema.filenames import (
    CLEAN_SHUTDOWN,
    INDEX_SUFFIX,
    LOG_SUFFIX,
    SWAP_SUFFIX,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    offset_from_name,
    parse_partition_dir,
)
from kafkatool.storage.swaps import is_swap_file


@dataclass
class RestartInputs:
    """A log dir as read, plus each partition's ``.swap`` segments (by label, then base offset) and its tiered
    storage evidence (``__remote_log_metadata``, the remote index cache; pass ``tiered.remote`` to
    ``simulate_restart``)."""

    log_dir: LogDirData
    swaps: dict[str, dict[int, SegmentData]] = field(default_factory=dict)
    single_partition: bool = False
    tiered: TieredEvidence = field(default_factory=TieredEvidence)


def read_swap_segments(directory: Path, label: str, *,
                       limits: ReadLimits | None = None) -> dict[int, SegmentData]:
    """The ``.swap`` files of a partition directory, decoded as segments named without the suffix (within
    ``limits``, the current ones when ``None``)."""
    limits = resolve(limits)
    out: dict[int, SegmentData] = {}
    for p in list_dir(directory):
        if not p.is_file() or not is_swap_file(p.name):
            continue
        offset = offset_from_name(p.name)
        if offset is None:
            continue
        seg = out.setdefault(offset, SegmentData(offset, "", 0))
        plain = p.name[:-len(SWAP_SUFFIX)]
        name = f"{label}/{p.name}" if label else p.name
        if plain.endswith(LOG_SUFFIX):
            seg.log_file, seg.log_size = name, p.stat().st_size
            _read_segment(seg, p, limits=limits)
        elif plain.endswith(INDEX_SUFFIX):
            with mapped(p) as data:
                seg.index_file, seg.index_size = name, len(data)
                seg.index = offset_index.parse_offset_index(data, offset)
        elif plain.endswith(TIME_INDEX_SUFFIX):
            with mapped(p) as data:
                seg.time_index_file, seg.time_index_size = name, len(data)
                seg.time_index = time_index.parse_time_index(data, offset)
        elif plain.endswith(TXN_INDEX_SUFFIX):
            seg.txn_index_file = name
            seg.txn_index = read_txn_index(p)
    return out


def read_swaps(data: LogDirData, *, limits: ReadLimits | None = None) -> dict[str, dict[int, SegmentData]]:
    """The ``.swap`` segments of each partition of ``data`` (read by :func:`read_log_dir`) that has any, by
    partition directory: what ``check`` needs to see the log as Kafka's load assembles it."""
    limits = resolve(limits)
    root = input_path(data.path)
    out: dict[str, dict[int, SegmentData]] = {}
    for part in data.partitions:
        if not any(is_swap_file(name) for name in part.leftovers):
            continue
        lone = root.name == part.directory and not (root / part.directory).is_dir()
        out[part.directory] = read_swap_segments(root if lone else root / part.directory, part.directory,
                                                 limits=limits)
    return out


def _parent_files(data: LogDirData, parent: Path) -> None:
    """A lone partition directory: take the checkpoints and the marker from its parent log dir."""
    for name in OFFSET_CHECKPOINTS:
        p = parent / name
        if is_readable_file(p):
            try:
                data.checkpoints[name] = checkpoint.parse_offset_checkpoint(read_bytes(p))
            except DecodeError:
                data.checkpoints[name] = None
    marker = parent / CLEAN_SHUTDOWN
    if is_readable_file(marker):
        data.clean_shutdown = clean_shutdown.parse_clean_shutdown(read_bytes(marker))


def read_restart_inputs(path: str | Path, on_partition: Callable[[int], None] | None = None, *,
                        limits: ReadLimits | None = None) -> RestartInputs:
    """Everything Kafka's start-up reads for the log dir (or partition directory) at ``path``
    (``on_partition``, ``limits``: see :func:`read_log_dir`)."""
    limits = resolve(limits)
    data = read_log_dir(path, on_partition, limits=limits)
    root = input_path(path)
    single = len(data.partitions) == 1 and data.partitions[0].directory == root.name \
        and parse_partition_dir(root.name) is not None and not (root / data.partitions[0].directory).is_dir()
    inputs = RestartInputs(data, single_partition=single)
    if single:
        _parent_files(data, root.parent)
    for part in data.partitions:
        directory = root if single else root / part.directory
        inputs.swaps[part.directory] = read_swap_segments(directory, part.directory, limits=limits)
    inputs.tiered = read_tiered(root)
    return inputs

