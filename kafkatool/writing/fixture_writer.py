"""The fixture writer: deterministic partition directories and log dirs, as a small broker writes them.

:class:`PartitionWriter` lays out one partition directory the way Kafka's storage code does it, modeled on
``UnifiedLog.append`` / ``roll`` / ``close`` (Kafka 3.9/4.0): ``LogSegment.append`` adds an offset index entry
(the append's last offset, its start position) and a time index entry (max timestamp so far and its offset)
whenever more than ``index.interval.bytes`` were appended since the last one; ``LogSegment.shouldRoll`` rolls
when the next batch would take the segment past ``segment.bytes`` or an index is full;
``onBecomeInactiveSegment`` / ``close`` add the final time index entry and trim the indexes; the
``ProducerStateManager`` takes a snapshot at each roll (at the new segment's base, even with no producers) and
at the log end on a clean close, its entries in ``java.util.HashMap`` order; ``ProducerAppendInfo`` rejects
duplicates, fenced epochs and out-of-order sequences; each ABORT of a non-empty transaction adds an
``AbortedTxn`` with the last stable offset to the ``.txnindex`` of the segment holding the marker;
``LeaderEpochFileCache.assign`` / ``truncateFromStart`` keep the epoch checkpoint. :class:`LogDir` adds what
``LogManager.shutdown`` writes: the recovery-point, log-start-offset (only partitions whose log start is above
their first segment's base) and replication-offset checkpoints, then the clean-shutdown marker.

The producer state and its append checks are storage's (:mod:`kafkatool.storage.producer_state`), the epoch
cache too (:class:`~kafkatool.storage.epoch.LeaderEpochCache`); this module lays out bytes. Everything is
fixed: timestamps, topic ids, ``meta.properties`` (with a fixed date comment), payloads. The named scenarios
built with it are :mod:`kafkatool.writing.fixture_recipes`.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from kafkatool.model import (
    AbortedTxn,
    Compression,
    ControlType,
    Header,
    OffsetIndexEntry,
    Record,
    TimeIndexEntry,
    TopicPartition,
    increment_sequence,
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
from kafkatool.storage import LeaderEpochCache
from kafkatool.storage.producer_state import AppendCheck, ProducerStateManager, check_data_append, check_producer_epoch

BASE_TIME = 1_700_000_000_000
"""Record timestamps start here (CreateTime), as in the Kafka-made corpus."""
CLUSTER_ID = "kafkatool-fixtures"
NODE_ID = 1
DIRECTORY_ID = "a2Fma2F0b29sRml4RGlyIQ"
"""``directory.id``: the Kafka ``Uuid`` of the 16 bytes ``kafkatoolFixDir!``."""
META_DATE_COMMENT = "#Tue Nov 14 22:13:20 UTC 2023"
"""``Properties.store`` writes the current date; fixtures use :data:`BASE_TIME`'s."""
BROKER_EPOCH = 12
OFFSET_INDEX_ENTRY = 8
TIME_INDEX_ENTRY = 12
TRANSACTIONAL = 0x10
CONTROL = 0x20
_WORDS = ("amber", "basalt", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper",
          "kelp", "lumen", "mistral", "nectar", "onyx", "quartz")

Tree = dict[str, bytes]
"""A built log dir: file contents by ``/``-separated path relative to the log dir."""


@dataclass(frozen=True, slots=True)
class TopicConfig:
    """The topic configs that shape the files (Kafka's ``LogConfig``)."""

    segment_bytes: int = 4096
    index_interval_bytes: int = 512
    segment_index_bytes: int = 4096

    @property
    def offset_index_bytes(self) -> int:
        """Preallocated ``.index`` size: ``segment.index.bytes`` rounded down to whole entries (``AbstractIndex``)."""
        return self.segment_index_bytes // OFFSET_INDEX_ENTRY * OFFSET_INDEX_ENTRY

    @property
    def time_index_bytes(self) -> int:
        """Preallocated ``.timeindex`` size (4092 for 4096)."""
        return self.segment_index_bytes // TIME_INDEX_ENTRY * TIME_INDEX_ENTRY


@dataclass
class Producer:
    """The client side of an idempotent or transactional producer: id, epoch and next sequence, as Kafka's
    ``TransactionManager`` keeps them, so recipes need not count sequences."""

    producer_id: int
    epoch: int = 0
    transactional: bool = False
    next_sequence: int = 0

    def bump_epoch(self) -> None:
        """A new epoch (``InitProducerId`` or a KIP-360 bump) restarts sequences at 0."""
        self.epoch += 1
        self.next_sequence = 0


@dataclass(frozen=True, slots=True)
class Appended:
    """Where one accepted append landed."""

    base_offset: int
    last_offset: int
    segment_base: int
    position: int
    size: int
    compression: Compression
    control: bool


@dataclass
class SegmentBuffer:
    """One segment being written: log bytes, index entries, aborted transactions and ``LogSegment``'s
    ``bytesSinceLastIndexEntry`` / ``maxTimestampAndOffsetSoFar``."""

    base: int
    log: bytearray = field(default_factory=bytearray)
    index: list[OffsetIndexEntry] = field(default_factory=list)
    times: list[TimeIndexEntry] = field(default_factory=list)
    aborted: list[AbortedTxn] = field(default_factory=list)
    batches: list[Appended] = field(default_factory=list)
    since_index: int = 0
    max_ts: int = -1
    max_ts_offset: int = -1

    def maybe_append_time(self, timestamp: int, offset: int) -> None:
        """``TimeIndex.maybeAppend``: only a timestamp above the last entry's (or -1 when empty) is kept."""
        last = self.times[-1].timestamp if self.times else -1
        if timestamp > last:
            self.times.append(TimeIndexEntry(timestamp, offset))


def topic_id_for(topic: str) -> str:
    """A fixed Kafka ``Uuid`` (base64url, no padding) for a fixture topic, never starting with ``-`` (Kafka's
    ``Uuid.randomUuid`` avoids those too)."""
    salt = 0
    while True:
        digest = hashlib.sha256(f"kafkatool-fixtures/{topic}/{salt}".encode()).digest()[:16]
        text = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        if not text.startswith("-"):
            return text
        salt += 1


def text_value(seed: int, words: int) -> bytes:
    """A deterministic, mildly compressible payload."""
    return f"{seed:05d} ".encode() + " ".join(
        _WORDS[(seed * 5 + k * 3) % len(_WORDS)] for k in range(words)).encode()


class PartitionWriter:
    """One partition's files, written as Kafka's ``UnifiedLog`` would as leader (offsets assigned, producer
    state validated) or as follower (explicit offsets and epochs, ``AppendOrigin.REPLICATION``).

    Use :meth:`append` and :meth:`end_transaction`, then :meth:`close` (clean) or :meth:`crash` (hard crash),
    then :meth:`files`. ``recovery_point`` and ``high_watermark`` are what the log dir's checkpoints record;
    recipes may move them to stage an incident.
    """

    def __init__(self, topic: str, partition: int, *, config: TopicConfig | None = None,
                 topic_id: str | None = None, start_time: int = BASE_TIME) -> None:
        self.topic_partition = TopicPartition(topic, partition)
        self.config = config or TopicConfig()
        self.topic_id = topic_id or topic_id_for(topic)
        self.segments: list[SegmentBuffer] = [SegmentBuffer(0)]
        self.log_end_offset = 0
        self.log_start_offset = 0
        self.producer_state = ProducerStateManager(keep_committed=False)
        self.epochs = LeaderEpochCache()
        self.snapshots: dict[int, bytes] = {}
        self.rejected: list[str] = []
        self.clock = start_time
        self.appends = 0
        self.state = "open"
        self.recovery_point = 0
        self.high_watermark = 0

    @property
    def directory(self) -> str:
        """The partition directory name, ``topic-N``."""
        return str(self.topic_partition)

    def _tick(self) -> int:
        self.appends += 1
        self.clock += 9 + (self.appends * 7) % 13
        return self.clock

    def _check_open(self) -> None:
        if self.state != "open":
            raise ValueError(f"{self.directory} is already {self.state}")

    def append(self, values: Sequence[bytes | None], *, leader_epoch: int, codec: Compression = Compression.NONE,
               producer: Producer | None = None, keys: Sequence[bytes | None] | None = None,
               headers: Sequence[tuple[Header, ...]] | None = None, base_sequence: int | None = None,
               base_offset: int | None = None) -> Appended | None:
        """Append one batch of records; ``None`` when Kafka rejects it as a duplicate (nothing is written).

        ``base_sequence`` overrides the producer's next sequence (a retry); the client's counter then stays
        put. ``base_offset`` makes this a follower append at that offset (at or above the log end).
        Raises ``ValueError`` for what Kafka would refuse otherwise (fenced epoch, out-of-order sequence).
        """
        self._check_open()
        if not values:
            raise ValueError("a data batch needs at least one record")
        follower = base_offset is not None
        first = self.log_end_offset if base_offset is None else base_offset
        if first < self.log_end_offset:
            raise ValueError(f"offset {first} is below the log end offset {self.log_end_offset}")
        count = len(values)
        pid = producer.producer_id if producer else -1
        epoch = producer.epoch if producer else -1
        seq = -1
        if producer is not None:
            seq = producer.next_sequence if base_sequence is None else base_sequence
        last_seq = increment_sequence(seq, count - 1) if seq >= 0 else -1
        transactional = bool(producer and producer.transactional)
        if producer is not None and not follower:
            entry = self.producer_state.producers.get(pid)
            if entry is not None and entry.find_duplicate_batch(epoch, seq, last_seq) is not None:
                self.rejected.append(f"{self.directory}: duplicate batch of producer {pid} epoch {epoch} "
                                     f"sequences {seq}..{last_seq} (DuplicateSequenceException: not appended)")
                return None
            self._validate(pid, epoch, seq, transactional)
        now = self._tick()
        key_list = list(keys) if keys is not None else [f"key-{(first + i) % 11}".encode() for i in range(count)]
        header_list = list(headers) if headers is not None else [() for _ in range(count)]
        records = [Record(offset=0, timestamp=0, key=key_list[i], value=values[i], headers=header_list[i],
                          offset_delta=i, timestamp_delta=i) for i in range(count)]
        data = build_records_batch(records, base_offset=first, base_timestamp=now, compression=codec,
                                   attributes=TRANSACTIONAL if transactional else 0,
                                   partition_leader_epoch=leader_epoch, producer_id=pid, producer_epoch=epoch,
                                   base_sequence=seq)
        last = first + count - 1
        info = self._append_bytes(data, first, last, now + count - 1, leader_epoch, codec, control=False)
        if producer is not None:
            self.producer_state.append_data(pid, epoch, last_seq, first, last, now + count - 1, transactional)
            if base_sequence is None:
                producer.next_sequence = increment_sequence(last_seq, 1)
        return info

    def end_transaction(self, producer: Producer, *, commit: bool, coordinator_epoch: int, leader_epoch: int,
                        producer_epoch: int | None = None, base_offset: int | None = None) -> Appended:
        """Append a COMMIT or ABORT marker (``MemoryRecords.withEndTransactionMarker``) written by the
        transaction coordinator; an ABORT of a non-empty transaction goes into the segment's ``.txnindex``.

        ``producer_epoch`` defaults to the producer's; a higher one (a timeout abort) fences the old epoch.
        """
        self._check_open()
        pid = producer.producer_id
        epoch = producer.epoch if producer_epoch is None else producer_epoch
        entry = self.producer_state.entry(pid)  # before a roll's snapshot, which then lists the producer
        if base_offset is None and check_producer_epoch(entry, epoch):
            raise ValueError(f"marker epoch {epoch} is below producer {pid}'s epoch {entry.producer_epoch}")
        offset = self.log_end_offset if base_offset is None else base_offset
        now = self._tick()
        ctype = ControlType.COMMIT if commit else ControlType.ABORT
        record = Record(offset=0, timestamp=0, key=build_control_key(ctype.value),
                        value=build_end_txn_marker(coordinator_epoch))
        data = build_records_batch([record], base_offset=offset, base_timestamp=now,
                                   attributes=TRANSACTIONAL | CONTROL, partition_leader_epoch=leader_epoch,
                                   producer_id=pid, producer_epoch=epoch, base_sequence=-1)
        info = self._append_bytes(data, offset, offset, now, leader_epoch, Compression.NONE, control=True)
        txn = self.producer_state.append_end_txn_marker(pid, epoch, coordinator_epoch, not commit, offset, now)
        if txn is not None and txn.aborted:
            assert txn.last_stable_offset is not None
            self.segments[-1].aborted.append(AbortedTxn(0, pid, txn.first_offset, offset, txn.last_stable_offset))
        if epoch > producer.epoch:
            producer.epoch, producer.next_sequence = epoch, 0
        return info

    def delete_records(self, offset: int) -> None:
        """``DeleteRecords``: raise the log start offset (segments stay until retention removes them) and
        truncate the epoch cache from the start (``LeaderEpochFileCache.truncateFromStart``)."""
        if not self.log_start_offset < offset <= self.log_end_offset:
            raise ValueError(f"log start offset {offset} outside ({self.log_start_offset}, {self.log_end_offset}]")
        self.log_start_offset = offset
        self.epochs.truncate_from_start(offset)

    def close(self, *, high_watermark: int | None = None) -> None:
        """A clean close (``UnifiedLog.close``): final time index entry, snapshot at the log end, indexes
        trimmed; everything flushed, so the recovery point is the log end."""
        self._check_open()
        seg = self.segments[-1]
        seg.maybe_append_time(seg.max_ts, seg.max_ts_offset)
        self._take_snapshot(self.log_end_offset)
        self.state = "closed"
        self.recovery_point = self.log_end_offset
        self.high_watermark = self.log_end_offset if high_watermark is None else high_watermark

    def crash(self, *, high_watermark: int | None = None) -> None:
        """A hard crash: the active segment's indexes stay preallocated and zero-filled, no final time index
        entry, no snapshot at the log end; flushed up to the last roll, so the recovery point (and, unless
        given, the checkpointed high watermark) is the active segment's base."""
        self._check_open()
        self.state = "crashed"
        self.recovery_point = self.segments[-1].base
        self.high_watermark = self.segments[-1].base if high_watermark is None else high_watermark

    def files(self) -> Tree:
        """The partition directory's files, by name."""
        if self.state == "open":
            raise ValueError(f"{self.directory} is still open: close() or crash() it first")
        out: Tree = {}
        cfg = self.config
        for seg in self.segments:
            untrimmed = self.state == "crashed" and seg is self.segments[-1]
            out[segment_file_name(seg.base, LOG_SUFFIX)] = bytes(seg.log)
            out[segment_file_name(seg.base, INDEX_SUFFIX)] = offset_index.build_offset_index(
                seg.index, seg.base, preallocate=cfg.offset_index_bytes if untrimmed else 0)
            out[segment_file_name(seg.base, TIME_INDEX_SUFFIX)] = time_index.build_time_index(
                seg.times, seg.base, preallocate=cfg.time_index_bytes if untrimmed else 0)
            if seg.aborted:
                out[segment_file_name(seg.base, TXN_INDEX_SUFFIX)] = txn_index.build_txn_index(seg.aborted)
        for offset in sorted(self.snapshots):
            out[segment_file_name(offset, PRODUCER_SNAPSHOT_SUFFIX)] = self.snapshots[offset]
        out[LEADER_EPOCH_CHECKPOINT] = checkpoint.build_leader_epoch_checkpoint(self.epochs.entries)
        out[PARTITION_METADATA] = partition_metadata.build_partition_metadata(self.topic_id)
        return out

    # --- Kafka's rules ---------------------------------------------------------------------------------

    def _validate(self, pid: int, epoch: int, seq: int, transactional: bool) -> None:
        """Refuse what storage's ``ProducerAppendInfo`` checks refuse from a client."""
        entry = self.producer_state.producers.get(pid)
        check = check_data_append(entry, epoch, seq, transactional)
        if check is None or entry is None:
            return
        if check is AppendCheck.FENCED_EPOCH:
            raise ValueError(f"producer {pid} epoch {epoch} is fenced by epoch {entry.producer_epoch}")
        if check is AppendCheck.NEW_EPOCH_NOT_AT_ZERO:
            raise ValueError(f"producer {pid}'s new epoch {epoch} must start at sequence 0, not {seq}")
        if check is AppendCheck.OUT_OF_ORDER_SEQUENCE:
            raise ValueError(f"producer {pid}: sequence {seq} does not follow {entry.last_seq}")
        raise ValueError(f"producer {pid} has an open transaction: a non-transactional write is refused")

    def _append_bytes(self, data: bytes, first: int, last: int, max_ts: int, leader_epoch: int,
                      codec: Compression, *, control: bool) -> Appended:
        """``UnifiedLog.maybeRoll`` then ``LogSegment.append``, the epoch cache, and the log end offset."""
        seg = self.segments[-1]
        cfg = self.config
        if seg.log and (len(seg.log) > cfg.segment_bytes - len(data)
                        or len(seg.index) >= cfg.offset_index_bytes // OFFSET_INDEX_ENTRY
                        or len(seg.times) >= cfg.time_index_bytes // TIME_INDEX_ENTRY):
            seg = self._roll(max(first, self.log_end_offset))
        if leader_epoch >= 0:
            self.epochs.assign(leader_epoch, first)
        position = len(seg.log)
        seg.log += data
        if max_ts > seg.max_ts:
            seg.max_ts, seg.max_ts_offset = max_ts, last
        if seg.since_index > cfg.index_interval_bytes:
            seg.index.append(OffsetIndexEntry(last, position))
            seg.maybe_append_time(seg.max_ts, seg.max_ts_offset)
            seg.since_index = 0
        seg.since_index += len(data)
        info = Appended(first, last, seg.base, position, len(data), codec, control)
        seg.batches.append(info)
        self.log_end_offset = last + 1
        return info

    def _roll(self, base: int) -> SegmentBuffer:
        """``UnifiedLog.roll``: the old segment gets its final time index entry, a snapshot is taken at the
        new base (``ProducerStateManager.takeSnapshot``), and the flush Kafka schedules runs at once."""
        old = self.segments[-1]
        old.maybe_append_time(old.max_ts, old.max_ts_offset)
        seg = SegmentBuffer(base)
        self.segments.append(seg)
        self._take_snapshot(base)
        return seg

    def _take_snapshot(self, offset: int) -> None:
        """A snapshot only at a new offset (``lastMapOffset > lastSnapOffset``), producers in HashMap order."""
        self.producer_state.map_end_offset = offset
        entries = self.producer_state.take_snapshot()
        if entries is not None:
            self.snapshots[offset] = producer_snapshot.build_producer_snapshot(entries)


@dataclass
class LogDir:
    """A log dir of closed (or crashed) partitions, and what ``LogManager.shutdown`` writes beside them."""

    partitions: list[PartitionWriter]
    clean_shutdown: bool = True
    broker_epoch: int = BROKER_EPOCH

    def partition(self, name: str) -> PartitionWriter:
        """The partition whose directory is ``name``."""
        for p in self.partitions:
            if p.directory == name:
                return p
        raise KeyError(name)

    def files(self) -> Tree:
        """Every file of the log dir, by path relative to it."""
        out: Tree = {}
        parts = sorted(self.partitions, key=lambda p: (p.topic_partition.topic, p.topic_partition.partition))
        for p in parts:
            for name, data in p.files().items():
                out[f"{p.directory}/{name}"] = data
        tps = [p.topic_partition for p in parts]
        out[RECOVERY_POINT_CHECKPOINT] = checkpoint.build_offset_checkpoint(
            [(tp, p.recovery_point) for tp, p in zip(tps, parts, strict=True)])
        out[LOG_START_OFFSET_CHECKPOINT] = checkpoint.build_offset_checkpoint(
            [(tp, p.log_start_offset) for tp, p in zip(tps, parts, strict=True)
             if p.log_start_offset > p.segments[0].base])
        out[REPLICATION_OFFSET_CHECKPOINT] = checkpoint.build_offset_checkpoint(
            [(tp, p.high_watermark) for tp, p in zip(tps, parts, strict=True)])
        out[META_PROPERTIES] = meta_properties.build_meta_properties(
            {"node.id": str(NODE_ID), "directory.id": DIRECTORY_ID, "version": "1", "cluster.id": CLUSTER_ID},
            ("#", META_DATE_COMMENT))
        if self.clean_shutdown:
            out[CLEAN_SHUTDOWN] = clean_shutdown.build_clean_shutdown(self.broker_epoch)
        return out
