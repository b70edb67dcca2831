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

from kafkatool.reading.small_files import LOADERS, Loader
from kafkatool.schema.filenames import FileKind, classify


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


def _entry(kind: FileKind) -> KindEntry:
    segment = kind in (FileKind.LOG, FileKind.KRAFT_SNAPSHOT)
    reader = Reader.SEGMENT if segment else Reader.SMALL if kind in LOADERS else Reader.NONE
    return KindEntry(kind, reader,
                     forceable=kind not in (FileKind.UNKNOWN, FileKind.LOCK, FileKind.CLEAN_SHUTDOWN),
                     kafka_dump=kind in (FileKind.LOG, FileKind.OFFSET_INDEX, FileKind.TIME_INDEX,
                                         FileKind.TXN_INDEX, FileKind.PRODUCER_SNAPSHOT, FileKind.KRAFT_SNAPSHOT),
                     loader=LOADERS.get(kind))


#: Every kind, in :class:`FileKind` order.
REGISTRY: dict[FileKind, KindEntry] = {kind: _entry(kind) for kind in FileKind}
#: Kinds read as a stream of record batches.
SEGMENT_KINDS = frozenset(k for k, e in REGISTRY.items() if e.reader is Reader.SEGMENT)
#: Kinds read whole and decoded at once.
SMALL_KINDS = frozenset(k for k, e in REGISTRY.items() if e.reader is Reader.SMALL)
#: Kinds ``--kind`` can force, in :class:`FileKind` order.
FORCEABLE = tuple(k for k, e in REGISTRY.items() if e.forceable)
#: Kinds DumpLogSegments dumps.
KAFKA_DUMPABLE = frozenset(k for k, e in REGISTRY.items() if e.kafka_dump)


def kind_of(path: Path, forced: FileKind | None = None) -> FileKind:
    """The kind to read ``path`` as: ``forced`` (``--kind``) if given, else what its name says."""
    return forced or classify(path.name)

