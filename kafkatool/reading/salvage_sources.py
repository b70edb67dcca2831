"""Every copy of a partition's batches that salvage can draw on, found and scanned read-only.

For each input (a log dir or a partition directory, and each ``--replica ID=DIR`` copy) this lists the
partition directories Kafka would load (``topic-N``) and those it renames out of the way (``LocalLog``'s
``-delete``, ``-stray`` and ``-future`` directories), and in each the segments and the leftovers of interrupted
operations (``.log.deleted``, ``.log.cleaned``, ``.log.swap``, see ``LogSegment.changeFileSuffixes``). Each
``.log`` file is scanned as columns (:func:`kafkatool.reading.columns.scan_segment`: CRCs checked, the walker's
resynchronisation past damage); batch bytes are re-read on use (:func:`read_span`), never held.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kafkatool.errors import DecodeError, UnreadableInputError
from kafkatool.model import Defect, LeaderEpochEntry, LogDirData, MetaProperties
from kafkatool.reading import files, scan_memo
from kafkatool.reading.columns import SegmentColumns, grown_window, scan_segment
from kafkatool.reading.files import REFUSAL_CODES, Refusal, _reason, read_bytes, survey
from kafkatool.reading.inventory import looks_like_partition_dir
from kafkatool.reading.logdir import read_log_dir_files
from kafkatool.schema import checkpoint
from kafkatool.schema.filenames import (
    CLEANED_SUFFIX,
    DELETED_SUFFIX,
    LEADER_EPOCH_CHECKPOINT,
    LOG_SUFFIX,
    PARTITION_METADATA,
    SWAP_SUFFIX,
    DirState,
    offset_from_name,
    parse_partition_dir,
)

#: The source kinds, best first when copies hold the same batch (a live segment is what Kafka serves).
SOURCE_KINDS = ("segment", "swap", "cleaned", "deleted", "future-dir", "stray-dir", "delete-dir")
_FILE_KIND = {LOG_SUFFIX: "segment", LOG_SUFFIX + SWAP_SUFFIX: "swap", LOG_SUFFIX + CLEANED_SUFFIX: "cleaned",
              LOG_SUFFIX + DELETED_SUFFIX: "deleted"}
_DIR_KIND = {DirState.FUTURE: "future-dir", DirState.STRAY: "stray-dir", DirState.DELETE: "delete-dir"}


@dataclass
class SourceFile:
    """One ``.log`` file holding batches of the partition: where it is and what kind of copy it is."""

    replica: int | None
    path: Path
    label: str
    kind: str
    base_offset: int


@dataclass
class PartitionCopy:
    """One partition directory of one input: its files, epoch cache and ``partition.metadata``."""

    replica: int | None
    root: Path
    directory: Path
    state: DirState
    leader_epochs: list[LeaderEpochEntry] | None = None
    partition_metadata: Path | None = None
    files: list[SourceFile] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)  #: entries named and not read (reading.files.survey)


@dataclass
class InputDir:
    """An input log dir (or the log dir of a partition directory given alone)."""

    replica: int | None
    path: Path
    data: LogDirData | None
    meta_properties: MetaProperties | None
    meta_properties_path: Path | None
    copies: dict[str, list[PartitionCopy]] = field(default_factory=dict)


def _label(root: Path, path: Path, replica: int | None) -> str:
    rel = path.name if path.parent == root else f"{path.parent.name}/{path.name}"
    return rel if replica is None else f"replica {replica}:{rel}"


def _copy(replica: int | None, root: Path, directory: Path, state: DirState) -> PartitionCopy:
    copy = PartitionCopy(replica, root, directory, state)
    dir_kind = _DIR_KIND.get(state)
    entries, copy.refused = survey(directory)
    for p in entries:
        if not p.is_file():
            continue
        offset = offset_from_name(p.name)
        suffix = p.name[20:] if offset is not None else ""
        if offset is not None and suffix in _FILE_KIND:
            kind = _FILE_KIND[suffix] if dir_kind is None or suffix != LOG_SUFFIX else dir_kind
            copy.files.append(SourceFile(replica, p, _label(root, p, replica), kind, offset))
        elif p.name == LEADER_EPOCH_CHECKPOINT:
            try:
                copy.leader_epochs = checkpoint.parse_leader_epoch_checkpoint(read_bytes(p))
            except DecodeError:
                copy.leader_epochs = None
        elif p.name == PARTITION_METADATA:
            copy.partition_metadata = p
    return copy


def find_inputs(paths: list[Path], replicas: dict[int, Path]) -> list[InputDir]:
    """Every input, each with its partition copies by partition name (``topic-N``)."""
    out: list[InputDir] = []
    for replica, path in [*((None, p) for p in paths), *replicas.items()]:
        if not path.exists():
            raise UnreadableInputError(str(path), "no such file or directory")
        lone = parse_partition_dir(path.name) is not None and looks_like_partition_dir(path)
        root = path.parent if lone else path
        data: LogDirData | None = None
        if lone:
            dirs = [path]
        else:
            data, dirs = read_log_dir_files(path)
        meta = root / "meta.properties"
        props = None
        if data is not None:
            props = data.meta_properties
        entry = InputDir(replica, path, data, props, meta if meta.is_file() else None)
        for d in dirs:
            parsed = parse_partition_dir(d.name)
            if parsed is None:
                continue
            tp, state = parsed
            entry.copies.setdefault(str(tp), []).append(_copy(replica, root, d, state))
        out.append(entry)
    return out


def not_read(inputs: list[InputDir]) -> list[Defect]:
    """Every entry of the inputs named and not read (a link out of the evidence tree, a broken link, a FIFO, a
    socket, a device), as a finding naming it the way the account names files."""
    out: list[Defect] = []
    for inp in inputs:
        if inp.data is not None:
            out += [d for d in inp.data.defects if d.code in REFUSAL_CODES]
        for copies in inp.copies.values():
            for c in copies:
                out += [r.defect(_label(c.root, r.path, c.replica)) for r in c.refused]
    return out


#: Bytes of a source scanned at a time at first: the columns of one window are what is held (a window of
#: one-record batches is some 25,000 batches), whatever the file's size.
WINDOW = 4 << 20
#: Batches a window aims at: a window after one of big batches spans more bytes (:data:`MAX_WINDOW` at most), so
#: a file of 16 KiB batches is scanned in a few calls, not one per 4 MiB.
WINDOW_ROWS = 32_768
MAX_WINDOW = 512 << 20

def scan_windows(source: SourceFile, start: int = 0, end: int | None = None, *,
                 verify_crc: bool = True) -> Iterator[SegmentColumns]:
    """The batches of the file that start in ``[start, end)`` as columns (CRC verdicts, the walker's defects,
    labelled with the source), a window at a time (:data:`WINDOW`, :data:`WINDOW_ROWS`): each window goes on where
    the chain of the last one landed (as ``columns.scan_segment_parallel`` joins its parts). Inside
    ``scan_memo.remembering``, a file scanned whole with its CRCs is remembered when its columns are small, and a
    later scan of its batches is answered from them, in one window."""
    path = str(source.path)
    kept = scan_memo.recall(path, start, end, verify_crc=verify_crc, label=source.label)
    if kept is not None:
        yield kept
        return
    whole = scan_memo.Collector(path) if start == 0 and end is None and verify_crc else None
    pos, window = start, WINDOW
    while True:
        stop = pos + window if end is None else min(end, pos + window)
        cols = scan_segment(source.path, label=source.label, start=pos, stop=stop, verify_crc=verify_crc)
        if whole is not None:
            whole.add(cols)
        yield cols
        limit = cols.size if end is None else min(end, cols.size)
        if cols.landing <= pos or cols.landing >= limit:
            break
        if len(cols):
            window = grown_window(cols.landing - pos, len(cols), WINDOW, WINDOW_ROWS, MAX_WINDOW)
        pos = cols.landing
    if whole is not None:
        whole.finish()


def read_span(path: str | Path, position: int, size: int) -> bytes:
    """``size`` bytes of ``path`` from ``position`` (one batch), read-only."""
    return files.read_span(path, position, position + size)


def read_chunks(path: str | Path, chunk: int = 1 << 20) -> Iterator[bytes]:
    """A whole file, ``chunk`` bytes at a time (for copying big files in bounded memory)."""
    name = str(path)
    try:
        with open(name, "rb") as fh:
            while True:
                block = fh.read(chunk)
                if not block:
                    return
                yield block
    except OSError as err:
        raise UnreadableInputError(name, _reason(err)) from None
