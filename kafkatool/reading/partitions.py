"""Reading every partition of several log dirs, with the offsets their log dir's checkpoints hold for them.

For the commands that join partitions across log dirs (``transactions``, ``groups``): the internal topics named
in ``deep_topics`` are read with every record decoded; the others as :func:`read_partition` reads them (shallow,
control batches decoded).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kafkatool.model import Defect, PartitionData
from kafkatool.reading.context import resolve
from kafkatool.reading.files import is_readable_file
from kafkatool.reading.logdir import read_log_dir_files, read_partition
from kafkatool.reading.objects import input_path
from kafkatool.schema.codecs import ReadLimits
from kafkatool.schema.filenames import (
    LOG_START_OFFSET_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    DirState,
    parse_partition_dir,
)


@dataclass
class LocatedPartition:
    """A partition as read, the log dir holding it, and its checkpointed high watermark and log start offset."""

    log_dir: str
    data: PartitionData
    high_watermark: int | None
    checkpoint_log_start: int | None

    @property
    def topic(self) -> str:
        """The topic name (empty for a directory whose name does not parse)."""
        return self.data.topic_partition.topic if self.data.topic_partition else ""

    @property
    def partition(self) -> int:
        """The partition number (-1 when the name does not parse)."""
        return self.data.topic_partition.partition if self.data.topic_partition else -1


def read_partitions(paths: Iterable[str], deep_topics: frozenset[str], *,
                    limits: ReadLimits | None = None) -> tuple[list[LocatedPartition], list[Defect]]:
    """Every live partition directory of ``paths`` (log dirs or partition directories), and the log-dir level
    defects met (unreadable checkpoints). ``limits`` bound the decoding (the current ones when ``None``)."""
    limits = resolve(limits)
    found: list[LocatedPartition] = []
    defects: list[Defect] = []
    for path in paths:
        data, dirs = read_log_dir_files(path)
        defects += data.defects
        hws = data.checkpoints.get(REPLICATION_OFFSET_CHECKPOINT) or {}
        starts = data.checkpoints.get(LOG_START_OFFSET_CHECKPOINT) or {}
        if not data.checkpoints and is_readable_file(input_path(path).parent / REPLICATION_OFFSET_CHECKPOINT):
            # a partition directory given alone: its parent log dir's checkpoints
            parent, _ = read_log_dir_files(input_path(path).parent)
            hws = parent.checkpoints.get(REPLICATION_OFFSET_CHECKPOINT) or {}
            starts = parent.checkpoints.get(LOG_START_OFFSET_CHECKPOINT) or {}
        for d in sorted(dirs):
            parsed = parse_partition_dir(d.name)
            if parsed is None or parsed[1] is not DirState.LIVE:
                continue
            tp = parsed[0]
            part = read_partition(d, d.name, deep=tp.topic in deep_topics, limits=limits)
            found.append(LocatedPartition(str(path), part, hws.get(tp), starts.get(tp)))
    return found, defects
