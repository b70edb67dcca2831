"""Consistency checks over decoded files: what ``dump-segment --verify`` reports.

Pure functions over model objects. They cover what Kafka's DumpLogSegments checks (batch CRCs,
non-consecutive offsets, index entries against the log, time index order) and what Kafka's own
``OffsetIndex.sanityCheck`` / ``TimeIndex.sanityCheck`` decide at broker start-up, reported as
defects instead of exceptions. :func:`tiered_findings` says which offsets below the local log are remote
(``UnifiedLog``'s local log start offset, KIP-405), with the rule in :mod:`kafkatool.storage.tiered`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kafkatool.model import (
    Defect,
    LegacyBatch,
    LogEntry,
    OffsetIndexEntry,
    RecordBatch,
    TimeIndexEntry,
)
from kafkatool.storage.tiered import RemoteLog, local_start_view


@dataclass
class LogChecker:
    """Streaming offset-order checks for one segment (feed entries in file order).

    Overlapping or backwards offsets are errors (Kafka's offset lookups assume increasing offsets);
    gaps are informational, since compaction and transaction markers make them normal.
    """

    file: str
    base_offset: int | None
    defects: list[Defect] = field(default_factory=list)
    previous: LogEntry | None = None
    first_offset: int | None = None
    last_offset: int | None = None
    entries: int = 0
    records: int = 0

    def feed(self, e: LogEntry) -> None:
        """Check one entry against the one before it."""
        base = e.base_offset
        if self.previous is None:
            self.first_offset = base
            if self.base_offset is not None and base < self.base_offset:
                self.defects.append(Defect(
                    "segment-name-mismatch", self.file, e.position, "base_offset",
                    f"first batch starts at offset {base}, below the segment's name offset {self.base_offset}: "
                    "the file is misnamed (Kafka refuses to recover such a segment)"))
        else:
            prev_last = self.previous.last_offset
            if base <= prev_last:
                self.defects.append(Defect(
                    "offset-order", self.file, e.position, "base_offset",
                    f"offset {base} does not follow the previous entry's last offset {prev_last}"))
            elif base > prev_last + 1:
                self.defects.append(Defect(
                    "offset-gap", self.file, e.position, "base_offset",
                    f"offsets {prev_last + 1}..{base - 1} are absent (normal after compaction or fencing)",
                    "info"))
        if isinstance(e, RecordBatch):
            if e.records_count > e.last_offset_delta + 1:
                self.defects.append(Defect(
                    "record-count", self.file, e.position, "records_count",
                    f"{e.records_count} records cannot fit in {e.last_offset_delta + 1} offsets"))
            if e.records is not None and len(e.records) != e.records_count:
                self.defects.append(Defect(
                    "record-count", self.file, e.position, "records_count",
                    f"batch declares {e.records_count} records, {len(e.records)} decoded"))
            self.records += e.records_count
        elif isinstance(e, LegacyBatch):
            self.records += len(e.records) if e.records is not None else 1
        self.previous = e
        self.last_offset = e.last_offset
        self.entries += 1


def at_positions(log: Iterable[LogEntry], wanted: set[int]) -> dict[int, tuple[LogEntry, int | None]]:
    """For each wanted byte position that starts an entry: the entry and the last offset of the entry before it
    (in file order). One pass over ``log``; only the wanted entries are kept (an index names one every few KiB)."""
    found: dict[int, tuple[LogEntry, int | None]] = {}
    prev_last: int | None = None
    for e in log:
        if e.position in wanted:
            found[e.position] = (e, prev_last)
        prev_last = e.last_offset
    return found


def check_offset_index(file: str, entries: Sequence[OffsetIndexEntry], base_offset: int, log: Sequence[LogEntry],
                       log_size: int, raw_size: int, entry_size: int = 8) -> list[Defect]:
    """Every index entry must point at a batch boundary from which a lookup finds its offset.

    ``entries`` are the live entries (the zero-filled preallocated tail already cut off).
    """
    out: list[Defect] = []
    if raw_size % entry_size:
        out.append(Defect("index-size", file, raw_size - raw_size % entry_size, "entries",
                          f"{raw_size} bytes is not a multiple of the {entry_size}-byte entry: Kafka's sanity check "
                          "fails and the index is rebuilt at start-up"))
    if entries and entries[-1].offset < base_offset:
        out.append(Defect("index-sanity", file, (len(entries) - 1) * entry_size, "offset",
                          f"last offset {entries[-1].offset} is below the base offset {base_offset}: Kafka's "
                          "sanity check fails and the index is rebuilt at start-up"))
    by_pos = at_positions(log, {ent.position for ent in entries})
    prev: OffsetIndexEntry | None = None
    for i, ent in enumerate(entries):
        where = i * entry_size
        if prev is not None and (ent.offset <= prev.offset or ent.position <= prev.position):
            out.append(Defect("index-order", file, where, "offset",
                              f"entry ({ent.offset}, {ent.position}) does not follow ({prev.offset}, "
                              f"{prev.position})"))
        prev = ent
        if ent.position >= log_size:
            out.append(Defect("index-beyond-log", file, where, "position",
                              f"position {ent.position} is beyond the end of the log ({log_size} bytes)"))
            continue
        hit = by_pos.get(ent.position)
        if hit is None:
            out.append(Defect("index-not-boundary", file, where, "position",
                              f"position {ent.position} is not the start of a batch"))
            continue
        batch, before = hit
        if before is not None and before >= ent.offset:
            out.append(Defect("index-offset-behind", file, where, "offset",
                              f"offset {ent.offset} lies in an earlier batch than position {ent.position}: "
                              "lookups would start too late"))
        elif batch.last_offset != ent.offset:
            out.append(Defect("index-offset-mismatch", file, where, "offset",
                              f"index offset {ent.offset}, batch at {ent.position} ends at {batch.last_offset} "
                              "(DumpLogSegments reports this as a mismatch)", "info"))
    return out


def check_time_index(file: str, entries: Sequence[TimeIndexEntry], base_offset: int, log: Sequence[LogEntry],
                     raw_size: int, entry_size: int = 12) -> list[Defect]:
    """Time index entries must be ordered and name a batch whose max timestamp they record."""
    out: list[Defect] = []
    if raw_size % entry_size:
        out.append(Defect("index-size", file, raw_size - raw_size % entry_size, "entries",
                          f"{raw_size} bytes is not a multiple of the {entry_size}-byte entry"))
    if entries and entries[-1].offset < base_offset:
        out.append(Defect("index-sanity", file, (len(entries) - 1) * entry_size, "offset",
                          f"last offset {entries[-1].offset} is below the base offset {base_offset}"))
    if entries and entries[-1].timestamp < entries[0].timestamp:
        out.append(Defect("index-sanity", file, (len(entries) - 1) * entry_size, "timestamp",
                          f"last timestamp {entries[-1].timestamp} is below the first {entries[0].timestamp}: "
                          "Kafka's sanity check fails and the index is rebuilt"))
    wanted = {ent.offset for ent in entries}
    by_last = {e.last_offset: e for e in log if e.last_offset in wanted}  # the last entry ending there, as a lookup
    prev: TimeIndexEntry | None = None
    for i, ent in enumerate(entries):
        where = i * entry_size
        if prev is not None and ent.timestamp < prev.timestamp:
            out.append(Defect("time-index-order", file, where, "timestamp",
                              f"timestamp {ent.timestamp} is below the previous entry's {prev.timestamp}"))
        prev = ent
        batch = by_last.get(ent.offset)
        if batch is None:
            out.append(Defect("time-index-offset", file, where, "offset",
                              f"no batch of the log ends at offset {ent.offset}"))
        elif batch.max_timestamp != ent.timestamp:
            out.append(Defect("time-index-timestamp", file, where, "timestamp",
                              f"index timestamp {ent.timestamp}, batch max timestamp {batch.max_timestamp}"))
    return out


def tiered_findings(found: list[Defect], directory: str, log_start_checkpoint: int | None, first_local_base: int,
                    remote: RemoteLog | None, remote_enabled: bool | None = None,
                    checkpoint_file: str = "log-start-offset-checkpoint") -> list[Defect]:
    """``found`` (a partition's ``check`` findings) with the local log start understood as tiered storage has it
    (``UnifiedLog.localLogStartOffset``, ``LogLoader.load`` keeping the checkpointed log start when remote storage
    is enabled): the offsets below the first local segment are said to be remote, never a gap, and the
    ``log-start-below-segments`` note (which says Kafka raises the start) is replaced. Offsets there that no
    ``COPY_SEGMENT_FINISHED`` remote segment holds are a warning. Without tiered evidence ``found`` is returned
    unchanged."""
    view = local_start_view(log_start_checkpoint, first_local_base, remote, remote_enabled)
    if view.remote is None and (remote is None or not remote.problems):
        return found
    out = [d for d in found if view.remote is None or d.code != "log-start-below-segments"]
    if view.remote is not None:
        lo, hi = view.remote
        held = view.covered_by
        source = (f"{len(held)} remote segment(s) COPY_SEGMENT_FINISHED in __remote_log_metadata"
                  if view.evidence == "remote-log-metadata" else "remote.storage.enable in the topic's config")
        out.append(Defect("remote-log-range", checkpoint_file, None, directory,
                          f"{directory}: offsets {lo}..{hi - 1} are in remote storage ({source}); the local log "
                          f"starts at {view.local_log_start_offset} (local log start offset) and the log start "
                          f"offset stays {view.log_start_offset}: not a gap, nothing lost", "info"))
        for a, b in view.uncovered:
            out.append(Defect("remote-log-uncovered", checkpoint_file, None, directory,
                              f"{directory}: offsets {a}..{b - 1} are below the local log start "
                              f"{view.local_log_start_offset} and no finished remote segment holds them: a fetch "
                              "there finds no data (remote copy incomplete, or metadata missing from this log dir)",
                              "warning"))
    if remote is not None:
        for problem in remote.problems:
            out.append(Defect("remote-metadata-refused", "__remote_log_metadata", None, directory,
                              f"{directory}: {problem}", "info"))
    return out
