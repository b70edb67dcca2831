"""Turning the paths a user gives into the list of Kafka files to read, in Kafka's order.

A path may be a file, a partition directory (``topic-N``, also ``-delete`` / ``-future`` ones) or a
whole log dir. Files within a partition come segment by segment (``.log``, ``.index``, ``.timeindex``,
``.txnindex``), then snapshots, then the partition's own metadata files.
"""

from __future__ import annotations

import os
from pathlib import Path

from kafkatool.errors import UnreadableInputError
from kafkatool.reading.files import list_dir
from kafkatool.schema.filenames import BOOTSTRAP_CHECKPOINT, QUORUM_STATE

SEGMENT_SUFFIX_ORDER = {".log": 0, ".index": 1, ".timeindex": 2, ".txnindex": 3, ".snapshot": 4}
LOG_DIR_FILES = (
    "meta.properties",
    ".kafka_cleanshutdown",
    "recovery-point-offset-checkpoint",
    "replication-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
    BOOTSTRAP_CHECKPOINT,
)
PARTITION_FILES = ("leader-epoch-checkpoint", "partition.metadata")


def _offset_of(name: str) -> int | None:
    head = name.split(".", 1)[0].split("-", 1)[0]
    return int(head) if head.isdigit() and len(head) == 20 else None


def _file_key(path: Path) -> tuple[int, int, int, str]:
    name = path.name
    offset = _offset_of(name)
    if offset is None:
        rank = PARTITION_FILES.index(name) if name in PARTITION_FILES else len(PARTITION_FILES)
        return (2, rank, 0, name)
    suffix = "." + name.split(".", 2)[1] if "." in name else ""
    order = SEGMENT_SUFFIX_ORDER.get(suffix, 5)
    group = 1 if suffix == ".snapshot" else 0
    return (group, offset, order, name)


def is_kafka_name(name: str) -> bool:
    """Whether a file name is one Kafka writes in a log dir or partition dir."""
    return _offset_of(name) is not None or name in PARTITION_FILES or name in LOG_DIR_FILES or name == QUORUM_STATE


def partition_files(directory: Path) -> list[Path]:
    """The Kafka files of one partition directory, in reading order."""
    files = [p for p in list_dir(directory) if p.is_file()]
    return sorted(files, key=_file_key)


def looks_like_partition_dir(directory: Path) -> bool:
    """A directory holding segment files or partition metadata."""
    try:
        names = os.listdir(directory)
    except OSError:
        return False
    return any(_offset_of(n) is not None or n in PARTITION_FILES for n in names)


def expand(paths: list[str]) -> list[Path]:
    """Every file to read, from files, partition directories and log dirs, in order.

    Raises :class:`UnreadableInputError` for a path that does not exist or a directory holding no
    Kafka file at all.
    """
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise UnreadableInputError(raw, "no such file or directory")
        if path.is_file():
            out.append(path)
            continue
        if not path.is_dir():
            raise UnreadableInputError(raw, "not a regular file or directory")
        if looks_like_partition_dir(path):
            out.extend(partition_files(path))
            continue
        found: list[Path] = [p for p in list_dir(path) if p.is_file() and p.name in LOG_DIR_FILES]
        found.sort(key=lambda p: LOG_DIR_FILES.index(p.name))
        for sub in list_dir(path):
            if sub.is_dir() and looks_like_partition_dir(sub):
                found.extend(partition_files(sub))
        if not found:
            raise UnreadableInputError(raw, "directory holds no Kafka log files (not a partition or log dir)")
        out.extend(found)
    return out
