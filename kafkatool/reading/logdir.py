"""Reading a whole log dir (or one partition directory) into the model, for cross-file checks.

Everything is read through the schema modules and nothing raises for bad content: each decoding
failure becomes a defect on the partition or log dir, and whatever could be read is kept.
Segments are walked shallow with CRCs checked; only control batches are decoded further (to match
abort markers with ``.txnindex`` entries).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from kafkatool.errors import DecodeError, UnreadableInputError
from kafkatool.model import (
    CleanShutdown,
    Defect,
    LogDirData,
    PartitionData,
    SegmentData,
    SnapshotData,
)
from kafkatool.reading.context import resolve
from kafkatool.reading.entries import SegmentEntries, complete_entry
from kafkatool.reading.entry_columns import read_clean_segment
from kafkatool.reading.files import file_size, is_readable_file, list_dir, mapped, read_bytes, read_txn_index, survey
from kafkatool.reading.inventory import looks_like_partition_dir, refused_defects
from kafkatool.reading.objects import input_path
from kafkatool.schema import (
    checkpoint,
    clean_shutdown,
    meta_properties,
    offset_index,
    partition_metadata,
    producer_snapshot,
    time_index,
)
from kafkatool.schema.codecs import ReadLimits
from kafkatool.schema.filenames import (
    CLEAN_SHUTDOWN,
    CLEANER_OFFSET_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    LOG_SUFFIX,
    META_PROPERTIES,
    PARTITION_METADATA,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    FileKind,
    classify,
    in_flight_suffix,
    offset_from_name,
    parse_partition_dir,
)
from kafkatool.schema.log_segment import torn_header, walk_log

OFFSET_CHECKPOINTS = (RECOVERY_POINT_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT,
                      CLEANER_OFFSET_CHECKPOINT)
LOG_DIR_LEVEL = {*OFFSET_CHECKPOINTS, META_PROPERTIES, CLEAN_SHUTDOWN, "bootstrap.checkpoint"}


def _decode(defects: list[Defect], name: str, code: str, fn: Callable[[bytes], object], data: bytes) -> object:
    try:
        return fn(data)
    except DecodeError as err:
        defects.append(Defect(code, name, err.position, err.field, err.reason))
        return None


def _read_segment(seg: SegmentData, path: Path, deep: bool = False, limits: ReadLimits | None = None) -> None:
    """Walk a segment shallow (CRC checked), decoding control batches' records (every record when ``deep``),
    within ``limits`` (the current ones when ``None``).

    The entries are kept as :class:`~kafkatool.reading.entries.SegmentEntries`: positions, re-read on use."""
    limits = resolve(limits)
    with mapped(path) as buf:
        if not deep and read_clean_segment(seg, buf, str(path), limits):
            return  # a clean segment: the column scan's entries, with their header columns (reading.entry_columns)
        entries = SegmentEntries(path, deep=deep, file_size=len(buf), limits=limits)
        for item in walk_log(buf, seg.log_file, deep=deep, max_output=limits.max_decompressed_bytes):
            if isinstance(item, Defect):
                seg.defects.append(item)
                if item.code == "torn-tail" and item.position is not None:
                    seg.torn = torn_header(buf, item.position, len(buf))
                continue
            err = complete_entry(item, buf, deep=deep, limits=limits)
            if err is not None:
                seg.defects.append(Defect("record-decode", seg.log_file, err.position, err.field, err.reason))
            entries.append(item)
    seg.entries = entries


def read_segment(path: Path) -> SegmentData:
    """One segment read shallow as a partition read reads it: its entries held lazily (positions, re-read on use),
    never a Python object per batch for the whole file."""
    seg = SegmentData(0, path.name, file_size(path))
    _read_segment(seg, path)
    return seg


def read_partition(directory: Path, label: str, *, deep: bool = False,
                   limits: ReadLimits | None = None) -> PartitionData:
    """Read every file of a partition directory. ``label`` prefixes file names in defects; ``deep`` decodes
    every record of the segments (for the internal topics' records), not only control batches'; ``limits``
    bound the decoding (the current ones when ``None``)."""
    limits = resolve(limits)
    parsed = parse_partition_dir(directory.name)
    part = PartitionData(label, parsed[0] if parsed else None, parsed[1] if parsed else "")
    segments: dict[int, SegmentData] = {}
    entries, refused = survey(directory)
    files = [p for p in entries if p.is_file()]

    def name(p: Path) -> str:
        return f"{label}/{p.name}" if label else p.name

    part.defects += refused_defects(refused, name)

    def segment(offset: int) -> SegmentData:
        if offset not in segments:
            segments[offset] = SegmentData(offset, "", 0)
        return segments[offset]

    for p in files:
        kind = classify(p.name)
        offset = offset_from_name(p.name)
        if in_flight_suffix(p.name):
            part.leftovers.append(name(p))
            continue
        if kind is FileKind.LOG and offset is not None:
            seg = segment(offset)
            seg.log_file, seg.log_size = name(p), p.stat().st_size
            _read_segment(seg, p, deep, limits)
        elif kind in (FileKind.OFFSET_INDEX, FileKind.TIME_INDEX) and offset is not None:
            seg = segment(offset)
            with mapped(p) as data:  # the live entries only: a preallocated zero fill is never read
                if kind is FileKind.OFFSET_INDEX:
                    seg.index_file, seg.index_size = name(p), len(data)
                    seg.index = offset_index.parse_offset_index(data, offset)
                else:
                    seg.time_index_file, seg.time_index_size = name(p), len(data)
                    seg.time_index = time_index.parse_time_index(data, offset)
        elif kind is FileKind.TXN_INDEX and offset is not None:
            seg = segment(offset)
            seg.txn_index_file = name(p)
            seg.txn_index = read_txn_index(p)
        elif kind is FileKind.PRODUCER_SNAPSHOT and offset is not None:
            data = read_bytes(p)
            snap = _decode(part.defects, name(p), "snapshot-decode", producer_snapshot.parse_producer_snapshot, data)
            part.snapshots.append(SnapshotData(offset, name(p), len(data), snap))  # type: ignore[arg-type]
        elif kind is FileKind.LEADER_EPOCH_CHECKPOINT:
            part.leader_epochs = _decode(part.defects, name(p), "leader-epoch-checkpoint-decode",  # type: ignore[assignment]
                                         checkpoint.parse_leader_epoch_checkpoint, read_bytes(p))
        elif kind is FileKind.PARTITION_METADATA:
            part.partition_metadata = _decode(part.defects, name(p), "partition-metadata-decode",  # type: ignore[assignment]
                                              partition_metadata.parse_partition_metadata, read_bytes(p))
        elif kind in (FileKind.KRAFT_SNAPSHOT, FileKind.QUORUM_STATE):
            continue  # KRaft metadata files: checked by the KRaft tooling, not here
        else:
            part.unknown_files.append(name(p))
    part.segments = [segments[k] for k in sorted(segments)]
    part.snapshots.sort(key=lambda s: s.offset)
    return part


def read_partition_light(directory: Path, label: str) -> PartitionData:
    """A partition directory's identity only (name, state, ``partition.metadata``): what log-dir-level checks
    need, without reading segments."""
    parsed = parse_partition_dir(directory.name)
    part = PartitionData(label, parsed[0] if parsed else None, parsed[1] if parsed else "")
    meta = directory / PARTITION_METADATA
    if is_readable_file(meta):
        part.partition_metadata = _decode(part.defects, f"{label}/{meta.name}",  # type: ignore[assignment]
                                          "partition-metadata-decode", partition_metadata.parse_partition_metadata,
                                          read_bytes(meta))
    return part


def read_log_dir_shell(path: str | Path) -> tuple[LogDirData, list[Path]]:
    """A log dir's own files with its partitions read light (see :func:`read_partition_light`), and the
    partition directories to read in full."""
    data, partition_dirs = read_log_dir_files(path)
    data.partitions = [read_partition_light(p, p.name) for p in partition_dirs]
    return data, partition_dirs


def read_log_dir(path: str | Path, on_partition: Callable[[int], None] | None = None, *,
                 limits: ReadLimits | None = None) -> LogDirData:
    """Read a log dir, or a single partition directory (then the log-dir files are simply absent).

    ``on_partition(n)`` is called after each partition with the bytes of its segments (for a progress bar);
    ``limits`` bound the decoding (the current ones when ``None``)."""
    limits = resolve(limits)
    data, partition_dirs = read_log_dir_files(path)
    data.partitions = []
    for p in partition_dirs:
        data.partitions.append(read_partition(p, p.name, limits=limits))
        if on_partition is not None:
            on_partition(sum(s.log_size for s in data.partitions[-1].segments))
    return data


def segment_bytes(paths: Iterable[str | Path]) -> int:
    """The bytes of every segment under ``paths`` (log dirs or partition directories), from the file sizes only:
    the total a reading progress bar counts to."""
    total = 0
    for path in paths:
        root = input_path(path)
        if not root.is_dir():
            continue
        dirs = [root] if parse_partition_dir(root.name) and looks_like_partition_dir(root) else \
            [p for p in list_dir(root) if p.is_dir() and parse_partition_dir(p.name)]
        for d in dirs:
            try:
                total += sum(f.stat().st_size for f in list_dir(d) if f.name.endswith(LOG_SUFFIX) and f.is_file())
            except (OSError, UnreadableInputError):
                continue
    return total


def is_log_dir(root: Path) -> bool:
    """Whether ``root`` is a broker log dir or a partition directory (what :func:`read_log_dir` accepts)."""
    if not root.is_dir():
        return False
    if parse_partition_dir(root.name) and _holds_kafka_files(root):
        return True
    try:
        children = list_dir(root)
    except UnreadableInputError:
        return False
    # A partition-named folder counts only if it holds Kafka files (a folder of DumpLogSegments text output
    # named after a partition is not a log dir).
    return any((p.name in LOG_DIR_LEVEL and p.is_file()) or
               (p.is_dir() and parse_partition_dir(p.name) is not None and _holds_kafka_files(p))
               for p in children)


def _holds_kafka_files(directory: Path) -> bool:
    try:
        return any(classify(p.name) is not FileKind.UNKNOWN for p in list_dir(directory))
    except UnreadableInputError:
        return False


def read_log_dir_files(path: str | Path) -> tuple[LogDirData, list[Path]]:
    """A log dir's own files (checkpoints, ``meta.properties``, marker) and its partition directories, unread.

    A partition directory given alone comes back as a log dir without files holding just itself.
    """
    root = input_path(path)
    if not root.exists():
        raise UnreadableInputError(str(path), "no such file or directory")
    if not root.is_dir():
        raise UnreadableInputError(str(path), "not a directory (give a log dir or a partition directory)")
    data = LogDirData(str(path))
    if looks_like_partition_dir(root) and parse_partition_dir(root.name):
        return data, [root]
    entries, refused = survey(root)
    data.defects += refused_defects(refused, lambda p: p.name)
    found_any = any(d.severity == "error" for d in data.defects)
    partition_dirs: list[Path] = []
    for p in entries:
        if p.is_dir():
            if parse_partition_dir(p.name):
                partition_dirs.append(p)
                found_any = True
            continue
        found_any |= p.name in LOG_DIR_LEVEL
        if p.name in OFFSET_CHECKPOINTS:
            data.checkpoints[p.name] = _decode(data.defects, p.name, "checkpoint-decode",  # type: ignore[assignment]
                                               checkpoint.parse_offset_checkpoint, read_bytes(p))
        elif p.name == META_PROPERTIES:
            data.meta_properties = _decode(data.defects, p.name, "meta-properties-decode",  # type: ignore[assignment]
                                           meta_properties.parse_meta_properties, read_bytes(p))
        elif p.name == CLEAN_SHUTDOWN:
            try:
                data.clean_shutdown = clean_shutdown.parse_clean_shutdown(read_bytes(p))
            except DecodeError as err:
                # Kafka counts any marker file as a clean shutdown; it only fails to read the epoch.
                data.clean_shutdown = CleanShutdown("unparsable", None, None, f"{err.field}: {err.reason}; Kafka "
                                                    "still treats the marker as a clean shutdown (no broker epoch)")
        elif p.name in LOG_DIR_LEVEL or p.name.startswith(".lock") or p.name == ".lock":
            continue
        else:
            data.unknown_files.append(p.name)
    if not found_any:
        raise UnreadableInputError(str(path), "holds no Kafka log dir or partition files")
    return data, partition_dirs


def partition_with_high_watermark(directory: Path, *,
                                  limits: ReadLimits | None = None) -> tuple[PartitionData, int | None]:
    """A partition directory (read within ``limits``, the current ones when ``None``), and its high watermark
    from the parent log dir's checkpoint if there is one."""
    part = read_partition(directory, directory.name, limits=limits)
    hw_file = directory.parent / REPLICATION_OFFSET_CHECKPOINT
    if part.topic_partition is None or not is_readable_file(hw_file):
        return part, None
    try:
        return part, checkpoint.parse_offset_checkpoint(read_bytes(hw_file)).get(part.topic_partition)
    except DecodeError:
        return part, None
