"""The file-kind registry: for every kind of file a log dir holds, how it is recognised, read and shown.

One table, keyed by :class:`~kafkatool.schema.filenames.FileKind` (whose value is the kind's output label):

- recognised: by name (:func:`~kafkatool.schema.filenames.classify`, Kafka's suffix dispatch in ``LogFileUtils``
  and ``LocalLog``), or forced by ``dump-segment --kind`` (:data:`FORCEABLE`);
- read: a record-batch stream walked segment-wise (``.log``, KRaft snapshots: :data:`SEGMENT_KINDS`), or a small
  file decoded whole through its schema module (``reading.small_files.LOADERS``);
- shown: a small kind's decoded value becomes rows through ``engine.rows.SMALL_FILE_ROWS`` (keyed by the same
  kind), a segment's entries through ``engine.rows.entry_row``; ``kafka_dump`` marks the kinds Kafka's
  DumpLogSegments dumps (the rest it reports as unknown).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from kafkatool.schema.filenames import FileKind, classify

if TYPE_CHECKING:
    from kafkatool.reading.small_files import Loader


class Reader(Enum):
    """How a kind's files are read."""

    SEGMENT = "segment"  # a stream of record batches / legacy messages (schema.log_segment's walker)
    SMALL = "small"  # read whole and decoded at once (reading.small_files)
    NONE = "none"  # nothing to decode (the lock file, unknown files)


@dataclass(frozen=True, slots=True)
class KindEntry:
    """One kind's row of the registry."""

    kind: FileKind
    reader: Reader
    forceable: bool  # ``dump-segment --kind`` accepts it
    kafka_dump: bool  # DumpLogSegments dumps it (``--format kafka`` on a directory picks these)
    loader: Loader | None = None  # a small kind's decoder (schema module plus its defects)

    @property
    def label(self) -> str:
        """The kind's name in output and on the command line."""
        return self.kind.value


_SEGMENT = (FileKind.LOG, FileKind.KRAFT_SNAPSHOT)
_NOT_FORCEABLE = (FileKind.UNKNOWN, FileKind.LOCK, FileKind.CLEAN_SHUTDOWN)
_KAFKA_DUMP = (FileKind.LOG, FileKind.OFFSET_INDEX, FileKind.TIME_INDEX, FileKind.TXN_INDEX,
               FileKind.PRODUCER_SNAPSHOT, FileKind.KRAFT_SNAPSHOT)


def _entry(kind: FileKind, loaders: dict[FileKind, Loader]) -> KindEntry:
    reader = Reader.SEGMENT if kind in _SEGMENT else Reader.SMALL if kind in loaders else Reader.NONE
    return KindEntry(kind, reader, forceable=kind not in _NOT_FORCEABLE, kafka_dump=kind in _KAFKA_DUMP,
                     loader=loaders.get(kind))


#: Kinds read as a stream of record batches.
SEGMENT_KINDS = frozenset(_SEGMENT)
#: Kinds ``--kind`` can force, in :class:`FileKind` order.
FORCEABLE = tuple(k for k in FileKind if k not in _NOT_FORCEABLE)
#: Kinds DumpLogSegments dumps.
KAFKA_DUMPABLE = frozenset(_KAFKA_DUMP)
_LAZY: dict[str, object] = {}


def __getattr__(name: str) -> object:
    """``REGISTRY`` (every kind, in :class:`FileKind` order) and ``SMALL_KINDS`` (kinds read whole and decoded at
    once), made on first use: they need the small files' loaders, whose schema modules a command line that only
    declares ``--kind`` need not import."""
    if name not in ("REGISTRY", "SMALL_KINDS"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if not _LAZY:
        from kafkatool.reading.small_files import LOADERS

        registry = {kind: _entry(kind, LOADERS) for kind in FileKind}
        _LAZY["REGISTRY"] = registry
        _LAZY["SMALL_KINDS"] = frozenset(k for k, e in registry.items() if e.reader is Reader.SMALL)
    return _LAZY[name]


def kind_of(path: Path, forced: FileKind | None = None) -> FileKind:
    """The kind to read ``path`` as: ``forced`` (``--kind``) if given, else what its name says."""
    return forced or classify(path.name)

