"""Reading a KRaft metadata partition (``__cluster_metadata-0``): its segments, KRaft snapshots and quorum-state.

Everything is opened read-only. Segments are read as any partition's (for the start-up load model), then
re-read deep up to the bytes the load keeps; snapshot files (``<end offset>-<epoch>.checkpoint``, plus
``.checkpoint.part`` / ``.checkpoint.deleted`` leftovers) are listed by name and read deep on demand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from kafkatool.errors import DecodeError, UnreadableInputError
from kafkatool.model import Defect, PartitionData, RecordBatch
from kafkatool.reading.context import resolve
from kafkatool.reading.files import is_readable_file, list_dir, read_bytes, survey
from kafkatool.reading.log import read_log
from kafkatool.reading.logdir import read_partition
from kafkatool.reading.objects import input_path
from kafkatool.schema.codecs import ReadLimits
from kafkatool.schema.filenames import (
    BOOTSTRAP_CHECKPOINT,
    EPOCH_DIGITS,
    KRAFT_DELETED_SUFFIX,
    KRAFT_PARTIAL_SUFFIX,
    KRAFT_SNAPSHOT_SUFFIX,
    OFFSET_DIGITS,
    QUORUM_STATE,
    parse_partition_dir,
)
from kafkatool.schema.metadata_records import METADATA_TOPIC, MetaBatch, SnapshotFile, SnapshotId, meta_batch
from kafkatool.schema.quorum_state import QuorumState, parse_quorum_state


@dataclass
class MetadataFiles:
    """A metadata partition directory as found on disk."""

    directory: Path
    partition: PartitionData
    snapshots: list[SnapshotFile] = field(default_factory=list)
    quorum_state: QuorumState | None = None
    bootstrap: Path | None = None
    defects: list[Defect] = field(default_factory=list)


def find_metadata_partition(path: str | Path) -> Path:
    """The ``__cluster_metadata-N`` directory: ``path`` itself or the one inside the log dir ``path``."""
    root = input_path(path)
    if not root.exists():
        raise UnreadableInputError(str(path), "no such file or directory")
    if not root.is_dir():
        raise UnreadableInputError(str(path), "not a directory (give a log dir or its __cluster_metadata-0)")
    parsed = parse_partition_dir(root.name)
    if parsed and parsed[0].topic == METADATA_TOPIC:
        return root
    entries, refused = survey(root)
    found = sorted(p for p in entries if p.is_dir() and (q := parse_partition_dir(p.name)) is not None
                   and q[0].topic == METADATA_TOPIC and q[1] == "")
    if not found:
        for r in refused:
            if r.path.name.startswith(METADATA_TOPIC + "-"):
                raise UnreadableInputError(str(r.path), r.reason)
        raise UnreadableInputError(str(path), f"no {METADATA_TOPIC}-0 directory: not a KRaft metadata log dir")
    return found[0]


def read_metadata_files(directory: Path, *, limits: ReadLimits | None = None) -> MetadataFiles:
    """The partition (segments, shallow), its snapshot file names, quorum-state and the log dir's bootstrap
    (``limits``: the decoding's, the current ones when ``None``)."""
    label = directory.name
    files = MetadataFiles(directory, read_partition(directory, label, limits=resolve(limits)))
    for p in list_dir(directory):
        if not p.is_file():
            continue
        try:
            snap = kafka_snapshot_path(p.name)
        except ValueError as err:
            files.defects.append(Defect("kraft-snapshot-name", f"{label}/{p.name}", None, "name",
                                        f"Snapshots.parse throws ({err}): the node cannot start"))
            continue
        if snap is not None:
            files.snapshots.append(snap)
    state = directory / QUORUM_STATE
    if is_readable_file(state):
        try:
            files.quorum_state = parse_quorum_state(read_bytes(state))
        except DecodeError as err:
            files.defects.append(Defect("quorum-state-decode", f"{label}/{QUORUM_STATE}", err.position, err.field,
                                        err.reason))
    bootstrap = directory.parent / BOOTSTRAP_CHECKPOINT
    files.bootstrap = bootstrap if is_readable_file(bootstrap) else None
    return files


def _java_long(text: str, bits: int) -> int:
    """Java's ``Long.parseLong`` / ``Integer.parseInt`` (an optional sign, ASCII digits, in range)."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise ValueError(f'NumberFormatException: For input string: "{text}"')
    value = int(text)
    if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
        raise ValueError(f'NumberFormatException: For input string: "{text}"')
    return value


def kafka_snapshot_path(name: str) -> SnapshotFile | None:
    """Raft's ``Snapshots.parse``: a name ending ``.checkpoint``, ``.checkpoint.part`` or ``.checkpoint.deleted``
    is a snapshot whose end offset is its first 20 characters and whose epoch the 10 after the dash, whatever
    follows; ``None`` for other names. Raises ``ValueError`` where Kafka's parse throws."""
    for suffix in (KRAFT_PARTIAL_SUFFIX, KRAFT_DELETED_SUFFIX, KRAFT_SNAPSHOT_SUFFIX):
        if name.endswith(suffix):
            break
    else:
        return None
    if len(name) < OFFSET_DIGITS + 1 + EPOCH_DIGITS:
        raise ValueError(f"StringIndexOutOfBoundsException: name {name!r} is too short")
    offset = _java_long(name[:OFFSET_DIGITS], 64)
    epoch = _java_long(name[OFFSET_DIGITS + 1:OFFSET_DIGITS + 1 + EPOCH_DIGITS], 32)
    return SnapshotFile(name, SnapshotId(offset, epoch), suffix)


def read_meta_batches(path: Path, label: str, limit: int | None = None, *,
                      limits: ReadLimits | None = None) -> tuple[list[MetaBatch], list[Defect]]:
    """Every raft batch of a segment or snapshot file (only its first ``limit`` bytes), records decoded within
    ``limits`` (the current ones when ``None``)."""
    entries, defects = read_log(path, deep=True, max_bytes=limit, label=label, limits=resolve(limits))
    batches: list[MetaBatch] = []
    for e in entries:
        if not isinstance(e, RecordBatch):
            defects.append(Defect("metadata-magic", label, e.position, "magic",
                                  "a legacy message set in the metadata log"))
            continue
        if e.crc_valid is False:
            continue  # reported by the walk; Kafka's reader throws on it (CorruptRecordException)
        batch, bad = meta_batch(e, label)
        batches.append(batch)
        defects.extend(bad)
    return batches, defects
