"""Reading the small file kinds: indexes, snapshots, checkpoints and the metadata files.

Each loader reads the whole file (they are small: an index is at most ``segment.index.bytes``), decodes
it through its schema module and returns the decoded value with the defects found, never raising for
bad content: a damaged file still yields whatever could be decoded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkatool.errors import DecodeError
from kafkatool.model import Defect
from kafkatool.reading.files import mapped, read_bytes, read_txn_index
from kafkatool.schema import (
    checkpoint,
    clean_shutdown,
    meta_properties,
    offset_index,
    partition_metadata,
    producer_snapshot,
    quorum_state,
    time_index,
    txn_index,
)
from kafkatool.schema.filenames import FileKind, offset_from_name


@dataclass
class Loaded:
    """A decoded small file: its kind label, the decoded value, its size and the defects found."""

    kind: str
    value: Any
    size: int
    defects: list[Defect] = field(default_factory=list)
    base_offset: int | None = None


#: How one small file decodes into a :class:`Loaded` (value and defects): ``loader(loaded, name, data, kind)``.
Loader = Callable[[Loaded, str, bytes, FileKind], None]


def _defect(path: str, err: DecodeError, code: str) -> Defect:
    return Defect(code, path, err.position, err.field, err.reason)


def _index(loaded: Loaded, name: str, data: bytes, kind: FileKind) -> None:
    """Decode an offset or time index and note a partial tail and an untrimmed zero fill."""
    base = loaded.base_offset or 0
    if kind is FileKind.OFFSET_INDEX:
        value, entry_size = offset_index.parse_offset_index(data, base), offset_index.ENTRY_SIZE
    else:
        value, entry_size = time_index.parse_time_index(data, base), time_index.ENTRY_SIZE
    loaded.value = value
    if value.trailing_bytes:
        loaded.defects.append(Defect(
            "index-size", name, len(data) - value.trailing_bytes, "entries",
            f"{value.trailing_bytes} trailing bytes are not a whole {entry_size}-byte entry: Kafka's sanity "
            "check fails and the index is rebuilt at start-up"))
    if value.zero_tail:
        loaded.defects.append(Defect(
            "index-preallocated", name, len(value.entries) * entry_size, "entries",
            f"{value.zero_tail} zero-filled slots after the last entry: the index was never trimmed "
            "(the active segment at a crash, or a log not closed)", "info"))


def _txn_index(loaded: Loaded, name: str, data: bytes, kind: FileKind) -> None:
    """Decode a transaction index; a partial entry at the end is a warning, an unknown version an error."""
    loaded.value = data.entries if isinstance(data, _TxnFile) else txn_index.parse_txn_index(data)
    if len(data) % txn_index.ENTRY_SIZE:
        loaded.defects.append(Defect(
            "txnindex-partial", name, len(data) - len(data) % txn_index.ENTRY_SIZE, "entry",
            f"{len(data) % txn_index.ENTRY_SIZE} trailing bytes do not form a whole entry", "warning"))
    txn_index.check_versions(loaded.value)


def _producer_snapshot(loaded: Loaded, name: str, data: bytes, kind: FileKind) -> None:
    """Decode a producer snapshot; a CRC mismatch is a defect (Kafka rejects the file at load)."""
    snap = producer_snapshot.parse_producer_snapshot(data)
    loaded.value = snap
    if not snap.crc_valid:
        loaded.defects.append(Defect("snapshot-crc", name, producer_snapshot.CRC_OFFSET, "crc",
                                     f"stored CRC {snap.crc} does not match the entries: Kafka rejects "
                                     "this snapshot at load and rebuilds producer state from the log"))


def _clean_shutdown(loaded: Loaded, name: str, data: bytes, kind: FileKind) -> None:
    """Decode the clean-shutdown marker; odd content is a warning (Kafka still takes the marker)."""
    try:
        loaded.value = clean_shutdown.parse_clean_shutdown(data)
    except DecodeError as err:
        loaded.defects.append(Defect("clean-shutdown-content", name, err.position, err.field,
                                     f"{err.reason}; Kafka still treats the marker as a clean shutdown "
                                     "(it only reads no broker epoch)", "warning"))
        return
    if loaded.value.problem:
        loaded.defects.append(Defect("clean-shutdown-content", name, 0, "content", loaded.value.problem, "warning"))


def _decoded_by(parse: Callable[[bytes], Any]) -> Loader:
    """A loader that only decodes the file through its schema function ``parse``."""

    def loader(loaded: Loaded, name: str, data: bytes, kind: FileKind) -> None:
        loaded.value = parse(data)

    return loader


#: The loader of each small file kind (``reading.kinds`` registers them); a decode error is the caller's.
LOADERS: dict[FileKind, Loader] = {
    FileKind.OFFSET_INDEX: _index,
    FileKind.TIME_INDEX: _index,
    FileKind.TXN_INDEX: _txn_index,
    FileKind.PRODUCER_SNAPSHOT: _producer_snapshot,
    FileKind.LEADER_EPOCH_CHECKPOINT: _decoded_by(checkpoint.parse_leader_epoch_checkpoint),
    FileKind.RECOVERY_POINT_CHECKPOINT: _decoded_by(checkpoint.parse_offset_checkpoint),
    FileKind.REPLICATION_OFFSET_CHECKPOINT: _decoded_by(checkpoint.parse_offset_checkpoint),
    FileKind.LOG_START_OFFSET_CHECKPOINT: _decoded_by(checkpoint.parse_offset_checkpoint),
    FileKind.CLEANER_OFFSET_CHECKPOINT: _decoded_by(checkpoint.parse_offset_checkpoint),
    FileKind.PARTITION_METADATA: _decoded_by(partition_metadata.parse_partition_metadata),
    FileKind.META_PROPERTIES: _decoded_by(meta_properties.parse_meta_properties),
    FileKind.QUORUM_STATE: _decoded_by(quorum_state.parse_quorum_state),
    FileKind.CLEAN_SHUTDOWN: _clean_shutdown,
}


def load(path: Path, kind: FileKind) -> Loaded:
    """Decode one small file of ``kind`` with its loader (:data:`LOADERS`). Indexes are mapped (only their live
    entries are read, never a preallocated zero fill), a ``.txnindex`` read with its zero tail counted
    (``reading.files.read_txn_index``); the others are read whole."""
    if kind in (FileKind.OFFSET_INDEX, FileKind.TIME_INDEX):
        with mapped(path) as data:
            return _load(path, kind, data)
    if kind is FileKind.TXN_INDEX:
        return _load(path, kind, _TxnFile(path))
    return _load(path, kind, read_bytes(path))


class _TxnFile:
    """A ``.txnindex`` as its loader takes it: its size and its entries (``read_txn_index``)."""

    def __init__(self, path: Path) -> None:
        self.entries = read_txn_index(path)
        self.size = path.stat().st_size

    def __len__(self) -> int:
        return self.size


def _load(path: Path, kind: FileKind, data: Any) -> Loaded:
    name = str(path)
    loaded = Loaded(kind.value, None, len(data), base_offset=offset_from_name(path.name))
    try:
        loader = LOADERS.get(kind)
        if loader is None:
            raise DecodeError("file", f"no decoder for {kind.value} files")
        loader(loaded, name, data, kind)
    except DecodeError as err:
        loaded.defects.append(_defect(name, err, f"{kind.value}-decode"))
    return loaded
