"""Kafka's file and directory names in a log dir (Kafka's ``LogFileUtils``, ``LocalLog``, ``UnifiedLog``,
``LogManager``, raft's ``Snapshots``); what the tool uses to pick a decoder by file name.

* Segment files are named by their base offset, zero-padded to 20 digits (``filenamePrefixFromOffset``),
  plus ``.log``, ``.index``, ``.timeindex`` or ``.txnindex``; producer snapshots by their offset plus
  ``.snapshot``. A file being cleaned, swapped or deleted carries ``.cleaned`` / ``.swap`` /
  ``.deleted`` after its normal suffix (``LogSegment.changeFileSuffixes``).
* Partition directories are ``<topic>-<partition>``; one being deleted is renamed
  ``<topic>-<partition>.<uuid>-delete`` (the topic cut short to keep the name within 255 characters),
  a stray one ``...-stray``, and a replica being moved between log dirs is ``...-future``
  (``LocalLog.parseTopicPartitionName`` and the ``DeleteDirPattern`` family).
* KRaft snapshots are ``<20-digit end offset>-<10-digit epoch>.checkpoint``; while being written they
  are ``<id>-<random>.checkpoint.part``, and ``.checkpoint.deleted`` once marked for deletion.
* The log dir itself holds the offset checkpoints, ``meta.properties``, ``.kafka_cleanshutdown`` and
  ``.lock``; each partition directory its ``leader-epoch-checkpoint`` and ``partition.metadata``. A
  checkpoint, ``partition.metadata`` or ``meta.properties`` is first written as ``<name>.tmp`` and then
  renamed, so a crash can leave the ``.tmp`` behind.
"""

from __future__ import annotations

import re
import uuid
from enum import Enum, StrEnum

from kafkatool.model import TopicPartition

OFFSET_DIGITS = 20
EPOCH_DIGITS = 10
LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
TXN_INDEX_SUFFIX = ".txnindex"
PRODUCER_SNAPSHOT_SUFFIX = ".snapshot"
KRAFT_SNAPSHOT_SUFFIX = ".checkpoint"
KRAFT_PARTIAL_SUFFIX = ".checkpoint.part"
KRAFT_DELETED_SUFFIX = ".checkpoint.deleted"
DELETED_SUFFIX = ".deleted"
CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"
TEMP_SUFFIX = ".tmp"
DELETE_DIR_SUFFIX = "-delete"
FUTURE_DIR_SUFFIX = "-future"
STRAY_DIR_SUFFIX = "-stray"
MAX_DIR_NAME = 255
"""``LocalLog.logDirNameWithSuffixCappedLength`` keeps renamed directories within this many characters."""

RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
PARTITION_METADATA = "partition.metadata"
META_PROPERTIES = "meta.properties"
CLEAN_SHUTDOWN = ".kafka_cleanshutdown"
LOCK_FILE = ".lock"
QUORUM_STATE = "quorum-state"
BOOTSTRAP_CHECKPOINT = "bootstrap.checkpoint"
CLUSTER_METADATA_TOPIC = "__cluster_metadata"
"""The KRaft metadata topic: its partition ``__cluster_metadata-0`` holds the raft log and snapshots."""
REMOTE_INDEX_CACHE_DIR = "remote-log-index-cache"


class FileKind(Enum):
    """Every kind of file a Kafka log dir holds; the value is the label used in output.

    ``bootstrap.checkpoint`` is a ``KRAFT_SNAPSHOT``: the same record-batch layout as a KRaft snapshot.
    """

    LOG = "log"
    OFFSET_INDEX = "index"
    TIME_INDEX = "timeindex"
    TXN_INDEX = "txnindex"
    PRODUCER_SNAPSHOT = "snapshot"
    KRAFT_SNAPSHOT = "kraft-snapshot"
    LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
    RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
    REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
    LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
    CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"
    PARTITION_METADATA = "partition.metadata"
    META_PROPERTIES = "meta.properties"
    CLEAN_SHUTDOWN = "clean-shutdown"
    QUORUM_STATE = "quorum-state"
    LOCK = "lock"
    UNKNOWN = "unknown"


class DirState(StrEnum):
    """What a partition directory's name says about it (compares equal to its string value)."""

    LIVE = ""
    DELETE = "delete"
    FUTURE = "future"
    STRAY = "stray"


SEGMENT_SUFFIXES: dict[str, FileKind] = {
    LOG_SUFFIX: FileKind.LOG,
    INDEX_SUFFIX: FileKind.OFFSET_INDEX,
    TIME_INDEX_SUFFIX: FileKind.TIME_INDEX,
    TXN_INDEX_SUFFIX: FileKind.TXN_INDEX,
    PRODUCER_SNAPSHOT_SUFFIX: FileKind.PRODUCER_SNAPSHOT,
}
IN_FLIGHT_SUFFIXES = (DELETED_SUFFIX, CLEANED_SUFFIX, SWAP_SUFFIX)
FIXED_NAMES: dict[str, FileKind] = {
    LEADER_EPOCH_CHECKPOINT: FileKind.LEADER_EPOCH_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT: FileKind.RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT: FileKind.REPLICATION_OFFSET_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT: FileKind.LOG_START_OFFSET_CHECKPOINT,
    CLEANER_OFFSET_CHECKPOINT: FileKind.CLEANER_OFFSET_CHECKPOINT,
    PARTITION_METADATA: FileKind.PARTITION_METADATA,
    META_PROPERTIES: FileKind.META_PROPERTIES,
    CLEAN_SHUTDOWN: FileKind.CLEAN_SHUTDOWN,
    QUORUM_STATE: FileKind.QUORUM_STATE,
    LOCK_FILE: FileKind.LOCK,
    BOOTSTRAP_CHECKPOINT: FileKind.KRAFT_SNAPSHOT,
}
TEMP_WRITTEN_NAMES = frozenset({LEADER_EPOCH_CHECKPOINT, RECOVERY_POINT_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT,
                                LOG_START_OFFSET_CHECKPOINT, CLEANER_OFFSET_CHECKPOINT, PARTITION_METADATA,
                                META_PROPERTIES, QUORUM_STATE})
"""Files Kafka writes as ``<name>.tmp`` then renames (``CheckpointFile``, ``PartitionMetadataFile``,
``PropertiesUtils``, ``FileQuorumStateStore``)."""

_SEGMENT = re.compile(r"^(\d{20})(\.[a-z]+)((?:\.deleted|\.cleaned|\.swap)?)$", re.ASCII)
_KRAFT_SNAPSHOT = re.compile(r"^(\d{20})-(\d{10})(?:(\.checkpoint(?:\.deleted)?)|-\d+(\.checkpoint\.part))$", re.ASCII)
_NON_SPACE = r"[^ \t\n\x0b\f\r]+"  # Java's \S
_SPECIAL_DIR = {state: re.compile(f"^{_NON_SPACE}-{_NON_SPACE}\\.{_NON_SPACE}-{state.value}$")
                for state in (DirState.DELETE, DirState.FUTURE, DirState.STRAY)}


def segment_file_name(offset: int, suffix: str) -> str:
    """``00000000000000000042.log`` for offset 42 and suffix ``.log`` (``LogFileUtils`` names)."""
    return f"{offset:0{OFFSET_DIGITS}d}{suffix}"


def kraft_snapshot_file_name(end_offset: int, epoch: int) -> str:
    """``Snapshots.filenameFromSnapshotId`` plus ``.checkpoint``."""
    return f"{end_offset:0{OFFSET_DIGITS}d}-{epoch:0{EPOCH_DIGITS}d}{KRAFT_SNAPSHOT_SUFFIX}"


def parse_kraft_snapshot_name(name: str) -> tuple[int, int, str] | None:
    """``(end offset, epoch, suffix)`` of a KRaft snapshot file name, suffix ``.checkpoint``,
    ``.checkpoint.part`` or ``.checkpoint.deleted``; ``None`` for any other name."""
    m = _KRAFT_SNAPSHOT.match(name)
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), m.group(3) or m.group(4)


def offset_from_name(name: str) -> int | None:
    """The offset a segment, index, producer snapshot or KRaft snapshot file is named after, or ``None``."""
    m = _SEGMENT.match(name) or _KRAFT_SNAPSHOT.match(name)
    return int(m.group(1)) if m else None


def kafka_offset_from_file_name(name: str) -> int | None:
    """``LogFileUtils.offsetFromFileName``: ``Long.parseLong`` of the text before the first dot, which
    Kafka applies to any ``.log`` or index file it loads, padded or not (``None`` where Java throws)."""
    head = name.split(".", 1)[0] if "." in name else None
    if head is None or not re.fullmatch(r"[+-]?\d+", head):
        return None
    value = int(head)
    return value if -(1 << 63) <= value < (1 << 63) else None


def in_flight_suffix(name: str) -> str | None:
    """``.deleted``, ``.cleaned``, ``.swap`` (segment files), ``.checkpoint.part`` / ``.checkpoint.deleted``
    (KRaft snapshots) or ``.tmp`` (a half-written checkpoint) when the file is mid-way through an operation."""
    m = _SEGMENT.match(name)
    if m:
        return m.group(3) or None
    snap = parse_kraft_snapshot_name(name)
    if snap:
        return None if snap[2] == KRAFT_SNAPSHOT_SUFFIX else snap[2]
    if name.endswith(TEMP_SUFFIX) and name[:-len(TEMP_SUFFIX)] in TEMP_WRITTEN_NAMES:
        return TEMP_SUFFIX
    return None


def classify(name: str) -> FileKind:
    """The kind of a file from its name alone, the way Kafka dispatches on suffixes.

    A file carrying an in-flight suffix (``.log.deleted``, ``.index.cleaned``, ``.log.swap``,
    ``.checkpoint.part``, ``leader-epoch-checkpoint.tmp``) is classified by its underlying kind: it holds
    the same layout (see :func:`in_flight_suffix`).
    """
    fixed = FIXED_NAMES.get(name)
    if fixed is not None:
        return fixed
    m = _SEGMENT.match(name)
    if m:
        return SEGMENT_SUFFIXES.get(m.group(2), FileKind.UNKNOWN)
    if _KRAFT_SNAPSHOT.match(name):
        return FileKind.KRAFT_SNAPSHOT
    if name.endswith(TEMP_SUFFIX) and name[:-len(TEMP_SUFFIX)] in TEMP_WRITTEN_NAMES:
        return FIXED_NAMES[name[:-len(TEMP_SUFFIX)]]
    return FileKind.UNKNOWN


def parse_partition_dir(name: str) -> tuple[TopicPartition, DirState] | None:
    """``LocalLog.parseTopicPartitionName``: ``(TopicPartition, state)`` for a partition directory name,
    ``None`` where Kafka would throw (the name is not ``topic-partition`` or one of its renamed forms).

    Like Kafka: a ``-delete``/``-future``/``-stray`` name must match its pattern and loses everything
    from its last ``.``; the partition is what follows the last ``-`` and must parse as an int.
    """
    if not name or "-" not in name:
        return None
    state = DirState.LIVE
    for candidate, pattern in _SPECIAL_DIR.items():
        if name.endswith(f"-{candidate.value}"):
            if not pattern.match(name):
                return None
            state = candidate
    base = name[:name.rindex(".")] if state is not DirState.LIVE else name
    topic, _, partition_text = base.rpartition("-")
    if not topic or not partition_text or not re.fullmatch(r"[+-]?\d+", partition_text):
        return None
    partition = int(partition_text)
    if not -(1 << 31) <= partition < (1 << 31):
        return None
    return TopicPartition(topic, partition), state


def partition_dir_name(tp: TopicPartition, state: DirState = DirState.LIVE, unique_id: str | None = None) -> str:
    """``LocalLog.logDirName`` / ``logDeleteDirName`` / ``logStrayDirName`` / ``logFutureDirName``.

    ``unique_id`` is the 32-hex-digit id Kafka draws at random (a fresh one when not given); delete and
    stray names cut the topic so the name stays within 255 characters, future names do not.
    """
    plain = f"{tp.topic}-{tp.partition}"
    if state is DirState.LIVE:
        return plain
    uid = unique_id if unique_id is not None else uuid.uuid4().hex
    if state is DirState.FUTURE:
        return f"{plain}.{uid}-{state.value}"
    suffix = f"-{tp.partition}.{uid}-{state.value}"
    return tp.topic[:max(0, MAX_DIR_NAME - len(suffix))] + suffix
