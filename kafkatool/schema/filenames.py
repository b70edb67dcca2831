"""Kafka's file and directory names in a log dir (Kafka's ``LogFileUtils``, ``LocalLog``, ``UnifiedLog``).

Segment files are named by their base offset, zero-padded to 20 digits, plus a suffix; a file being
cleaned, swapped or deleted carries ``.cleaned`` / ``.swap`` / ``.deleted`` after its normal suffix.
Partition directories are ``<topic>-<partition>``; a partition being deleted is renamed
``<topic>-<partition>.<uuid>-delete`` and one being moved between log dirs is
``<topic>-<partition>.<uuid>-future``. KRaft snapshots are ``<20-digit end offset>-<10-digit epoch>.checkpoint``.
"""

from __future__ import annotations

import re
from enum import Enum

from kafkatool.model import TopicPartition

OFFSET_DIGITS = 20
LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
TXN_INDEX_SUFFIX = ".txnindex"
PRODUCER_SNAPSHOT_SUFFIX = ".snapshot"
KRAFT_SNAPSHOT_SUFFIX = ".checkpoint"
DELETED_SUFFIX = ".deleted"
CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"
DELETE_DIR_SUFFIX = "-delete"
FUTURE_DIR_SUFFIX = "-future"
STRAY_DIR_SUFFIX = "-stray"

RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
PARTITION_METADATA = "partition.metadata"
META_PROPERTIES = "meta.properties"
CLEAN_SHUTDOWN = ".kafka_cleanshutdown"
QUORUM_STATE = "quorum-state"
BOOTSTRAP_CHECKPOINT = "bootstrap.checkpoint"


class FileKind(Enum):
    """Every kind of file a Kafka log dir holds; the value is the label used in output."""

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
    UNKNOWN = "unknown"


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
    BOOTSTRAP_CHECKPOINT: FileKind.KRAFT_SNAPSHOT,
}

_SEGMENT = re.compile(r"^(\d{20})(\.[a-z]+)((?:\.deleted|\.cleaned|\.swap)?)$")
_KRAFT_SNAPSHOT = re.compile(r"^(\d{20})-(\d{10})\.checkpoint((?:\.deleted|\.partial)?)$")
_PARTITION_DIR = re.compile(r"^(.+)-(\d+)$")
_SPECIAL_DIR = re.compile(r"^(.+)-(\d+)\.([0-9a-f]{32})-(delete|future|stray)$")


def segment_file_name(offset: int, suffix: str) -> str:
    """``00000000000000000042.log`` for offset 42 and suffix ``.log``."""
    return f"{offset:0{OFFSET_DIGITS}d}{suffix}"


def offset_from_name(name: str) -> int | None:
    """The offset a segment, index or snapshot file is named after, or ``None``."""
    m = _SEGMENT.match(name) or _KRAFT_SNAPSHOT.match(name)
    return int(m.group(1)) if m else None


def in_flight_suffix(name: str) -> str | None:
    """``.deleted``, ``.cleaned`` or ``.swap`` when the file is mid-way through one of those operations."""
    m = _SEGMENT.match(name)
    return m.group(3) or None if m else None


def classify(name: str) -> FileKind:
    """The kind of a file from its name alone (Kafka dispatches on the suffix the same way).

    A segment file carrying an in-flight suffix (``.log.deleted``, ``.index.cleaned``, ``.log.swap``) is
    classified by its underlying kind: it holds the same bytes.
    """
    fixed = FIXED_NAMES.get(name)
    if fixed is not None:
        return fixed
    m = _SEGMENT.match(name)
    if m:
        return SEGMENT_SUFFIXES.get(m.group(2), FileKind.UNKNOWN)
    if _KRAFT_SNAPSHOT.match(name):
        return FileKind.KRAFT_SNAPSHOT
    return FileKind.UNKNOWN


def parse_partition_dir(name: str) -> tuple[TopicPartition, str] | None:
    """``(TopicPartition, state)`` for a partition directory name; state is ``""``, ``delete``,
    ``future`` or ``stray``. ``None`` when the name is not a partition directory."""
    m = _SPECIAL_DIR.match(name)
    if m:
        return TopicPartition(m.group(1), int(m.group(2))), m.group(4)
    m = _PARTITION_DIR.match(name)
    if m and m.group(1) and not m.group(1).startswith("."):
        return TopicPartition(m.group(1), int(m.group(2))), ""
    return None
