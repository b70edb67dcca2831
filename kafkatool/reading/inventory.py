"""Turning the paths a user gives into the list of Kafka files to read, in Kafka's order.

A path may be a file, a partition directory (``topic-N``, also ``-delete`` / ``-future`` ones) or a
whole log dir. Files within a partition come segment by segment (``.log``, ``.index``, ``.timeindex``,
``.txnindex``), then snapshots, then the partition's own metadata files.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from kafkatool.errors import UnreadableInputError
from kafkatool.model import Defect
from kafkatool.reading.files import Refusal, survey
from kafkatool.reading.objects import input_path, is_remote
from kafkatool.schema.filenames import BOOTSTRAP_CHECKPOINT, QUORUM_STATE, FileKind, classify, parse_partition_dir

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


def refused_defects(refused: list[Refusal], label: Callable[[Path], str]) -> list[Defect]:
    """The findings naming the entries :func:`~kafkatool.reading.files.survey` refused (``label`` names each as
    the output names files): an error where the name is one Kafka writes (a segment, an index, a checkpoint, a
    partition directory: data Kafka would read is not there to check), a warning for any other name."""
    return [r.defect(label(r.path), "error" if is_kafka_name(r.path.name) or classify(r.path.name) is not
                     FileKind.UNKNOWN or parse_partition_dir(r.path.name) else "warning") for r in refused]


def partition_files(directory: Path, refused: list[Refusal] | None = None) -> list[Path]:
    """The Kafka files of one partition directory, in reading order; the entries not to be read are added to
    ``refused`` (see :func:`~kafkatool.reading.files.survey`)."""
    entries, skipped = survey(directory)
    if refused is not None:
        refused += skipped
    return sorted((p for p in entries if p.is_file()), key=_file_key)


def looks_like_partition_dir(directory: Path) -> bool:
    """A directory holding segment files or partition metadata (a prefix of objects holding them, in a store)."""
    try:
        names = [p.name for p in survey(directory)[0]] if is_remote(directory) else os.listdir(directory)
    except (OSError, UnreadableInputError):
        return False
    return any(_offset_of(n) is not None or n in PARTITION_FILES for n in names)


def expand(paths: list[str]) -> list[Path]:
    """Every file to read, from files, partition directories and log dirs, in order (the entries refused are
    left out: :func:`expand_with_refusals` names them)."""
    return expand_with_refusals(paths)[0]


def expand_with_refusals(paths: list[str]) -> tuple[list[Path], list[Refusal]]:
    """Every file to read, from files, partition directories and log dirs, in order, and every entry met that is
    not read (a link out of the tree, a FIFO, a device...: :func:`~kafkatool.reading.files.survey`).

    Raises :class:`UnreadableInputError` for a path that does not exist, one that is no regular file or directory,
    or a directory holding no Kafka file at all (and nothing refused).
    """
    out: list[Path] = []
    refused: list[Refusal] = []
    for raw in paths:
        path = input_path(raw)
        if not path.exists():
            raise UnreadableInputError(raw, "no such file or directory")
        if path.is_file():
            out.append(path)
            continue
        if not path.is_dir():
            raise UnreadableInputError(raw, "not a regular file or directory")
        if looks_like_partition_dir(path):
            out.extend(partition_files(path, refused))
            continue
        entries, skipped = survey(path)
        here = len(refused)
        refused += skipped
        found: list[Path] = [p for p in entries if p.is_file() and p.name in LOG_DIR_FILES]
        found.sort(key=lambda p: LOG_DIR_FILES.index(p.name))
        for sub in entries:
            if sub.is_dir() and looks_like_partition_dir(sub):
                found.extend(partition_files(sub, refused))
        if not found and len(refused) == here:
            raise UnreadableInputError(raw, "directory holds no Kafka log files (not a partition or log dir)")
        out.extend(found)
    return out, refused
