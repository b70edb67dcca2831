"""The real-data side of ``simulate-replication`` (and the report's replica sets): each replica's log dir loaded
as Kafka would load it after a restart (``engine.restart``), then every (candidate leader, follower) pair and
every election analysed as Kafka's fetcher truncation and leader election would go (``engine.divergence``:
``AbstractFetcherThread`` / ``Partition.makeLeader``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kafkatool.analysis.metadata import topic_remote_storage
from kafkatool.analysis.restart import partitions_there
from kafkatool.engine.divergence import Batch, Election, Pair, Replica, analyse_election, analyse_pair
from kafkatool.engine.restart import RestartOptions, simulate_restart
from kafkatool.errors import UnreadableInputError, UsageError
from kafkatool.model import PartitionData, RecordBatch
from kafkatool.reading.files import not_read
from kafkatool.reading.restart_inputs import read_restart_inputs


def load_replica(broker: int, log_dir: Path, partition: str, now: int,
                 refused: list[dict[str, Any]] | None = None) -> Replica:
    """A replica as its broker would hold it after restart (``simulate-restart``'s model); the entries of its log
    dir named and not read (a link out of the tree, a FIFO...) are added to ``refused``."""
    inputs = read_restart_inputs(log_dir)
    if refused is not None:
        refused += [{"broker": broker, "code": d.code, "severity": d.severity, "file": d.file, "reason": d.reason}
                    for d in not_read([inputs.log_dir], inputs.log_dir.partitions)]
    result = simulate_restart(inputs.log_dir, inputs.swaps, RestartOptions(now=now), partition,
                              inputs.tiered.remote, topic_remote_storage(log_dir))
    loaded = [p for p in result.partitions if p.directory == partition]
    if not loaded:
        there = partitions_there([p.directory for p in inputs.log_dir.partitions])
        raise UsageError(f"--partition {partition}: broker {broker}'s {log_dir} holds no such partition directory "
                         f"({there})")
    state = loaded[0]
    if state.outcome != "loaded" or state.log_end_offset is None:
        raise UnreadableInputError(str(log_dir), f"{partition} does not load: {state.error}")
    part = next(p for p in inputs.log_dir.partitions if p.directory == partition)
    return Replica(broker, state.log_end_offset, state.high_watermark or 0,
                   [(e.epoch, e.start_offset) for e in state.leader_epochs],
                   _LoadedBatches(part, state.log_end_offset))


class _LoadedBatches:
    """A replica's magic 2 batches below its log end after the load, streamed from its segments each time they
    are walked (the engine walks them in offset order; nothing per batch is held)."""

    def __init__(self, part: PartitionData, log_end_offset: int) -> None:
        self.part = part
        self.log_end_offset = log_end_offset

    def __iter__(self) -> Iterator[Batch]:
        for s in self.part.segments:
            for e in s.entries:
                if isinstance(e, RecordBatch) and e.last_offset < self.log_end_offset:
                    yield Batch(e.base_offset, e.last_offset, e.partition_leader_epoch, e.crc, e.records_count)


def _batch(b: Batch) -> dict[str, int]:
    return {"base_offset": b.base_offset, "last_offset": b.last_offset, "partition_leader_epoch": b.epoch,
            "crc": b.crc}


def _pair(p: Pair) -> dict[str, Any]:
    return {"leader": p.leader, "follower": p.follower, "relation": p.relation,
            "divergence_offset": p.divergence_offset, "divergence_by_epoch": p.divergence_by_epoch,
            "divergence_by_batch_crc": p.divergence_by_crc, "truncation_offset": p.truncation_offset,
            "lost_batches": [b.base_offset for b in p.lost_batches],
            "lost_record_count": sum(b.records for b in p.lost_batches),
            "lost_batches_detail": [{**_batch(b), "same_batch_on_leader": same}
                                    for b, same in zip(p.lost_batches, p.same_on_leader, strict=True)],
            "rounds": [{"request_epoch": r.request_epoch, "response_epoch": r.response_epoch,
                        "response_end_offset": r.response_end_offset,
                        "follower_log_end_offset_before": r.follower_log_end_offset_before,
                        "truncate_to": r.truncate_to, "completed": r.completed,
                        "follower_epochs_after": [list(e) for e in r.follower_epochs_after]} for r in p.rounds]}


def _election(e: Election) -> dict[str, Any]:
    return {"candidate": e.candidate, "clean": e.clean,
            "lost_acknowledged_batches": [b.base_offset for b in e.lost_acknowledged],
            "lost_acknowledged_record_count": sum(b.records for b in e.lost_acknowledged),
            "lost_unacknowledged_batches": [b.base_offset for b in e.lost_unacknowledged]}


def analyse(replicas: dict[int, Path], *, partition: str, leader: int, isr: list[int], leader_epoch: int | None,
            now: int) -> dict[str, Any]:
    """The ``pairs`` / ``elections`` document for a replica set."""
    if leader not in replicas:
        raise UsageError(f"--leader {leader} is not one of the --replica brokers {sorted(replicas)}")
    unknown = [b for b in isr if b not in replicas]
    if unknown:
        raise UsageError(f"--isr {','.join(map(str, unknown))}: not one of the --replica brokers {sorted(replicas)}")
    refused: list[dict[str, Any]] = []
    loaded = {b: load_replica(b, d, partition, now, refused) for b, d in sorted(replicas.items())}
    current = loaded[leader]
    next_epoch = (leader_epoch if leader_epoch is not None else max((e for e, _ in current.epochs), default=0)) + 1
    pairs = [analyse_pair(loaded[a], loaded[b], is_current_leader=a == leader, next_epoch=next_epoch)
             for a in loaded for b in loaded if a != b]
    elections = [analyse_election(current, loaded[c], isr=isr, old_hw=current.high_watermark) for c in loaded]
    return {
        "partition": partition, "leader": leader, "isr": isr, "next_leader_epoch": next_epoch,
        "replicas": [{"broker": r.broker, "log_end_offset": r.log_end_offset, "high_watermark": r.high_watermark,
                      "leader_epochs": [list(e) for e in r.epochs]} for r in loaded.values()],
        "pairs": [_pair(p) for p in pairs],
        "elections": [_election(e) for e in elections],
        "not_read": refused,
    }
