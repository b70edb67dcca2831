"""reading.kinds: one registry of file kinds, used by dump-segment and its --kind."""

from __future__ import annotations

from kafkatool.commands.dump_segment import ForcedKind
from kafkatool.engine.rows import SMALL_FILE_ROWS
from kafkatool.reading.kinds import FORCEABLE, KAFKA_DUMPABLE, REGISTRY, SEGMENT_KINDS, SMALL_KINDS, Reader
from kafkatool.reading.small_files import LOADERS
from kafkatool.schema.filenames import FileKind


def test_every_kind_has_one_entry_and_one_way_to_be_read() -> None:
    assert list(REGISTRY) == list(FileKind)
    assert {FileKind.LOG, FileKind.KRAFT_SNAPSHOT} == SEGMENT_KINDS
    assert set(LOADERS) == SMALL_KINDS
    assert {k for k, e in REGISTRY.items() if e.reader is Reader.NONE} == {FileKind.LOCK, FileKind.UNKNOWN}
    assert all(REGISTRY[k].loader is LOADERS[k] for k in SMALL_KINDS)
    assert set(SMALL_FILE_ROWS) <= SMALL_KINDS


def test_forced_kinds_are_the_registrys() -> None:
    assert [k.value for k in ForcedKind] == [k.value for k in FORCEABLE]
    assert FileKind.LOCK not in FORCEABLE and FileKind.CLEAN_SHUTDOWN not in FORCEABLE
    assert FileKind.QUORUM_STATE in FORCEABLE and REGISTRY[FileKind.QUORUM_STATE].label == "quorum-state"


def test_kafka_dumps_segments_indexes_and_snapshots() -> None:
    assert {FileKind.LOG, FileKind.OFFSET_INDEX, FileKind.TIME_INDEX, FileKind.TXN_INDEX,
                              FileKind.PRODUCER_SNAPSHOT, FileKind.KRAFT_SNAPSHOT} == KAFKA_DUMPABLE
