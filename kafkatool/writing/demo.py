"""The bundled demo log dir (``fixtures/demo``): a small, healthy, deterministic broker data directory.

Built through the schema's build side the way Kafka's ``LogSegment.append`` lays files out: an offset
and time index entry whenever more than ``index.interval.bytes`` were appended since the last one, a
final time index entry when a segment rolls, a producer snapshot at every roll and at the log end on a
clean close, then the log-dir checkpoints and the clean-shutdown marker.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from kafkatool.model import (
    AbortedTxn,
    Compression,
    LeaderEpochEntry,
    OffsetIndexEntry,
    ProducerSnapshotEntry,
    Record,
    TimeIndexEntry,
    TopicPartition,
)
from kafkatool.schema import (
    checkpoint,
    clean_shutdown,
    meta_properties,
    offset_index,
    partition_metadata,
    producer_snapshot,
    time_index,
    txn_index,
)
from kafkatool.schema.control import build_control_key, build_end_txn_marker
from kafkatool.schema.filenames import (
    CLEAN_SHUTDOWN,
    INDEX_SUFFIX,
    LEADER_EPOCH_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    LOG_SUFFIX,
    META_PROPERTIES,
    PARTITION_METADATA,
    PRODUCER_SNAPSHOT_SUFFIX,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    segment_file_name,
)
from kafkatool.schema.record_batch import build_records_batch
from kafkatool.writing.atomic import write_atomic

INDEX_INTERVAL_BYTES = 1024
SEGMENT_BYTES = 8192
BASE_TIME = 1_700_000_000_000
TOPIC_ID = "rje7iD-Zl_0r9ko9TQU1Xw"


@dataclass
class _Producer:
    epoch: int
    next_seq: int = 0
    last_seq: int = -1
    last_offset: int = -1
    delta: int = 0
    timestamp: int = -1
    coordinator_epoch: int = -1
    txn_first: int = -1


@dataclass
class _Segment:
    base: int
    log: bytearray = field(default_factory=bytearray)
    index: list[OffsetIndexEntry] = field(default_factory=list)
    times: list[TimeIndexEntry] = field(default_factory=list)
    aborted: list[AbortedTxn] = field(default_factory=list)
    since_index: int = 0
    max_ts: int = -1
    max_ts_offset: int = -1


class _Partition:
    """Appends batches as a leader would, rolling segments and keeping producer state."""

    def __init__(self) -> None:
        self.segments = [_Segment(0)]
        self.next_offset = 0
        self.producers: dict[int, _Producer] = {}
        self.snapshots: dict[int, bytes] = {}
        self.epochs: list[LeaderEpochEntry] = []
        self.clock = BASE_TIME

    def _snapshot(self) -> bytes:
        return producer_snapshot.build_producer_snapshot(
            ProducerSnapshotEntry(pid, p.epoch, p.last_seq, p.last_offset, p.delta, p.timestamp, p.coordinator_epoch,
                                  p.txn_first)
            for pid, p in self.producers.items())

    def append(self, values: list[bytes | None], *, epoch: int, codec: Compression = Compression.NONE,
               pid: int = -1, transactional: bool = False, control: tuple[int, int] | None = None) -> None:
        seg = self.segments[-1]
        if len(seg.log) >= SEGMENT_BYTES:
            self._roll()
            seg = self.segments[-1]
        if not self.epochs or self.epochs[-1].epoch != epoch:
            self.epochs.append(LeaderEpochEntry(epoch, self.next_offset))
        producer = self.producers.get(pid)
        base_seq = -1
        if pid >= 0 and producer is not None and control is None:
            base_seq = producer.next_seq
        records = []
        if control is not None:
            ctype, coordinator_epoch = control
            records.append(Record(offset=0, timestamp=0, key=build_control_key(ctype),
                                  value=build_end_txn_marker(coordinator_epoch), offset_delta=0, timestamp_delta=0))
        else:
            for i, value in enumerate(values):
                key = f"key-{(self.next_offset + i) % 7}".encode()
                records.append(Record(offset=0, timestamp=0, key=key, value=value, offset_delta=i,
                                      timestamp_delta=i * 3))
        self.clock += 17
        attributes = (0x10 if transactional else 0) | (0x20 if control else 0)
        data = build_records_batch(records, base_offset=self.next_offset, base_timestamp=self.clock,
                                   compression=codec, attributes=attributes, partition_leader_epoch=epoch,
                                   producer_id=pid, producer_epoch=producer.epoch if producer else -1,
                                   base_sequence=base_seq)
        last = self.next_offset + len(records) - 1
        max_ts = self.clock + (len(records) - 1) * 3 if control is None else self.clock
        if seg.since_index > INDEX_INTERVAL_BYTES:
            seg.index.append(OffsetIndexEntry(last, len(seg.log)))
            if seg.max_ts > (seg.times[-1].timestamp if seg.times else -1):
                seg.times.append(TimeIndexEntry(seg.max_ts, seg.max_ts_offset))
            seg.since_index = 0
        if max_ts > seg.max_ts:
            seg.max_ts, seg.max_ts_offset = max_ts, last
        seg.log += data
        seg.since_index += len(data)
        if producer is not None:
            if control is not None:
                producer.coordinator_epoch = control[1]
                if control[0] == 0:
                    seg.aborted.append(AbortedTxn(0, pid, producer.txn_first, last, self._lso_after(pid)))
                producer.txn_first = -1
            else:
                producer.last_seq = base_seq + len(records) - 1
                producer.next_seq = producer.last_seq + 1
                producer.delta = len(records) - 1
                if transactional and producer.txn_first < 0:
                    producer.txn_first = self.next_offset
            producer.last_offset = last
            producer.timestamp = max_ts
        self.next_offset = last + 1

    def _lso_after(self, pid: int) -> int:
        open_firsts = [p.txn_first for q, p in self.producers.items() if q != pid and p.txn_first >= 0]
        return min(open_firsts) if open_firsts else self.next_offset + 1

    def _roll(self) -> None:
        seg = self.segments[-1]
        if seg.max_ts > (seg.times[-1].timestamp if seg.times else -1):
            seg.times.append(TimeIndexEntry(seg.max_ts, seg.max_ts_offset))
        self.segments.append(_Segment(self.next_offset))
        self.snapshots[self.next_offset] = self._snapshot()

    def close(self) -> None:
        self.snapshots[self.next_offset] = self._snapshot()


def build_demo(out: Path) -> None:
    """Write the demo log dir to ``out`` (replaced if it exists)."""
    part = _Partition()
    part.producers[1000] = _Producer(epoch=0)
    part.producers[2000] = _Producer(epoch=2)
    codecs = [Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD]
    for i in range(60):
        epoch = 0 if i < 30 else 1
        values = [f"order-{i}-{j}: {'payload ' * (j + 1)}".encode() for j in range(1 + i % 4)]
        if i % 10 == 7:
            part.append(values, epoch=epoch, pid=2000, transactional=True)
            part.append([f"more-{i}".encode()], epoch=epoch, pid=2000, transactional=True)
            part.append([], epoch=epoch, pid=2000, transactional=True, control=(1 if i % 20 == 7 else 0, 4))
        elif i % 3 == 0:
            part.append(values, epoch=epoch, codec=codecs[i % 5], pid=1000)
        else:
            part.append([*values, None], epoch=epoch, codec=codecs[(i + 1) % 5])
    part.close()
    if out.exists():
        shutil.rmtree(out)
    pdir = out / "demo-0"
    for seg in part.segments:
        name = segment_file_name
        write_atomic(pdir / name(seg.base, LOG_SUFFIX), bytes(seg.log))
        write_atomic(pdir / name(seg.base, INDEX_SUFFIX), offset_index.build_offset_index(seg.index, seg.base))
        times = seg.times
        if seg is part.segments[-1] and seg.max_ts > (times[-1].timestamp if times else -1):
            times = [*times, TimeIndexEntry(seg.max_ts, seg.max_ts_offset)]
        write_atomic(pdir / name(seg.base, TIME_INDEX_SUFFIX), time_index.build_time_index(times, seg.base))
        if seg.aborted:
            write_atomic(pdir / name(seg.base, TXN_INDEX_SUFFIX), txn_index.build_txn_index(seg.aborted))
    for offset, data in part.snapshots.items():
        write_atomic(pdir / segment_file_name(offset, PRODUCER_SNAPSHOT_SUFFIX), data)
    write_atomic(pdir / LEADER_EPOCH_CHECKPOINT, checkpoint.build_leader_epoch_checkpoint(part.epochs))
    write_atomic(pdir / PARTITION_METADATA, partition_metadata.build_partition_metadata(TOPIC_ID))
    tp = TopicPartition("demo", 0)
    write_atomic(out / RECOVERY_POINT_CHECKPOINT, checkpoint.build_offset_checkpoint([(tp, part.next_offset)]))
    write_atomic(out / REPLICATION_OFFSET_CHECKPOINT, checkpoint.build_offset_checkpoint([(tp, part.next_offset)]))
    write_atomic(out / LOG_START_OFFSET_CHECKPOINT, checkpoint.build_offset_checkpoint([]))
    write_atomic(out / META_PROPERTIES, meta_properties.build_meta_properties(
        {"node.id": "1", "directory.id": "S2Fma2FPcmFjbGVEaXJJZA", "version": "1", "cluster.id": "kafkatool-demo"},
        ("#", "#kafkatool demo fixture")))
    write_atomic(out / CLEAN_SHUTDOWN, clean_shutdown.build_clean_shutdown(7))
