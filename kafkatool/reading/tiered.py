"""Tiered storage evidence in a log dir (KIP-405): the ``__remote_log_metadata`` partitions and the broker's
remote index cache.

Reads what Kafka's ``TopicBasedRemoteLogMetadataManager`` consumes (the records of ``__remote_log_metadata``,
decoded by :mod:`kafkatool.schema.remote_log_metadata`) and lists ``RemoteIndexCache``'s directory
(``<log.dir>/remote-log-index-cache/``: ``<startOffset>_<segmentId>.index|.timeindex|.txnindex``, plus
``.deleted``/``.tmp`` leftovers Kafka removes at start-up). The folding of the events into segment states is
:func:`kafkatool.storage.tiered.fold_events`. A partition directory given alone is looked at beside its
parent's files, as the broker's log dir holds them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkatool.errors import DecodeError, UnreadableInputError
from kafkatool.model import RecordBatch, TopicPartition
from kafkatool.reading.files import list_dir
from kafkatool.reading.logdir import read_partition
from kafkatool.reading.objects import input_path
from kafkatool.schema.filenames import REMOTE_INDEX_CACHE_DIR, parse_partition_dir
from kafkatool.schema.remote_log_metadata import REMOTE_LOG_METADATA_TOPIC, parse_remote_log_metadata
from kafkatool.storage.tiered import RemoteLog, fold_events

CACHE_SUFFIXES = (".index", ".timeindex", ".txnindex")


@dataclass(frozen=True)
class CachedIndex:
    """One file of the remote index cache: the remote segment's start offset and id, and the index kind."""

    file: str
    start_offset: int
    segment_id: str
    kind: str  # index, timeindex, txnindex
    leftover: bool  # a .deleted or .tmp file (Kafka deletes it at start-up)


@dataclass
class TieredEvidence:
    """What a log dir shows of tiered storage, by (topic, partition) where the metadata names it."""

    metadata_partitions: list[str] = field(default_factory=list)  # __remote_log_metadata-N directories read
    remote: dict[tuple[str, int], RemoteLog] = field(default_factory=dict)
    cache_dir: str | None = None
    cache: list[CachedIndex] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # undecodable records

    @property
    def present(self) -> bool:
        """Any sign of tiered storage at all."""
        return bool(self.metadata_partitions or self.cache_dir)

    def for_partition(self, tp: TopicPartition | None) -> RemoteLog | None:
        """The remote log of one partition, if the metadata names it."""
        return None if tp is None else self.remote.get((tp.topic, tp.partition))

    def cached_segments(self) -> set[str]:
        """Ids of the remote segments whose three indexes are all in the cache (what ``RemoteIndexCache`` keeps
        at start-up; an incomplete set is deleted)."""
        kinds: dict[str, set[str]] = {}
        for c in self.cache:
            if not c.leftover:
                kinds.setdefault(c.segment_id, set()).add(c.kind)
        return {sid for sid, k in kinds.items() if len(k) == len(CACHE_SUFFIXES)}


    def cache_mismatches(self) -> list[CachedIndex]:
        """Cached index files of a segment that ``__remote_log_metadata`` (as read here) does not know, or knows
        at another start offset (stale: the cache outlived the segment, or the metadata is missing)."""
        starts = {sid: seg.start_offset for log in self.remote.values() for sid, seg in log.segments.items()}
        return [c for c in self.cache if not c.leftover and starts.get(c.segment_id) != c.start_offset]


def parse_cache_name(name: str) -> CachedIndex | None:
    """``RemoteIndexCache``'s file name (``offsetFromRemoteIndexFileName`` / ``remoteLogSegmentIdFromRemote
    IndexFileName``: offset before the first ``_``, segment id up to the first ``.``), or ``None``."""
    leftover = name.endswith((".deleted", ".tmp"))
    under, dot = name.find("_"), name.find(".")
    if under <= 0 or dot <= under:
        return None
    offset, seg_id, rest = name[:under], name[under + 1:dot], name[dot:]
    kind = next((s[1:] for s in CACHE_SUFFIXES if rest == s or rest.startswith(s + ".")), None)
    if not offset.isdigit() or kind is None:
        return None
    return CachedIndex(name, int(offset), seg_id, kind, leftover)


def _metadata_events(directory: Path, evidence: TieredEvidence) -> list[tuple[int | None, dict[str, Any]]]:
    part = read_partition(directory, directory.name, deep=True)
    events: list[tuple[int | None, dict[str, Any]]] = []
    for seg in part.segments:
        for e in seg.entries:
            if not isinstance(e, RecordBatch) or e.is_control or e.records is None:
                continue
            for r in e.records:
                if r.value is None:
                    continue
                try:
                    events.append((r.offset, parse_remote_log_metadata(r.value)))
                except DecodeError as err:
                    evidence.problems.append(f"{directory.name} offset {r.offset}: {err.field}: {err.reason}")
    return events


def read_tiered(path: str | Path) -> TieredEvidence:
    """The tiered-storage evidence of the log dir (or partition directory) at ``path``."""
    root = input_path(path)
    if parse_partition_dir(root.name) is not None and not (root / REMOTE_INDEX_CACHE_DIR).is_dir() and \
            not any(p.is_dir() and parse_partition_dir(p.name) for p in _children(root)):
        root = root.parent  # a partition directory given alone: its log dir holds the metadata and cache
    evidence = TieredEvidence()
    meta_dirs = sorted((p for p in _children(root) if p.is_dir() and _is_metadata_dir(p.name)), key=lambda p: p.name)
    events: list[tuple[int | None, dict[str, Any]]] = []
    for d in meta_dirs:
        evidence.metadata_partitions.append(d.name)
        events += _metadata_events(d, evidence)
    # Each metadata partition is ordered on its own; a topic partition's events all go to one of them.
    evidence.remote = fold_events(events)
    cache = root / REMOTE_INDEX_CACHE_DIR
    if cache.is_dir():
        evidence.cache_dir = REMOTE_INDEX_CACHE_DIR
        for p in _children(cache):
            got = parse_cache_name(p.name) if p.is_file() else None
            if got is not None:
                evidence.cache.append(got)
        evidence.cache.sort(key=lambda c: (c.start_offset, c.segment_id, c.kind))
    return evidence


def _is_metadata_dir(name: str) -> bool:
    parsed = parse_partition_dir(name)
    return parsed is not None and parsed[0].topic == REMOTE_LOG_METADATA_TOPIC and not parsed[1]


def _children(root: Path) -> list[Path]:
    try:
        return list_dir(root)
    except UnreadableInputError:
        return []
