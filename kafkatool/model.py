"""Plain data types every layer shares: decoded file contents, and defects.

These are deliberately dumb dataclasses: the schema layer fills them, the engine reasons over them and
the render layer prints them. Field names follow Kafka's own names in snake_case.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Literal

Severity = Literal["info", "warning", "error"]

NO_SEQUENCE = -1
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_PARTITION_LEADER_EPOCH = -1
NO_TIMESTAMP = -1
MAX_SEQUENCE = 0x7FFFFFFF
"""Java's ``Integer.MAX_VALUE``: the last sequence before Kafka's sequence arithmetic wraps to 0."""


class Compression(Enum):
    """Codec ids from the low three attribute bits (Kafka's ``CompressionType``)."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4

    @property
    def label(self) -> str:
        """The lower-case name Kafka prints (``compresscodec: gzip``)."""
        return self.name.lower()


class TimestampType(Enum):
    """Kafka's ``TimestampType``; the names are what DumpLogSegments prints."""

    NO_TIMESTAMP_TYPE = -1
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1

    @property
    def label(self) -> str:
        """``CreateTime`` / ``LogAppendTime`` / ``NoTimestampType``."""
        return {-1: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}[self.value]


class ControlType(Enum):
    """Kafka's ``ControlRecordType`` (the key's type field)."""

    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


@dataclass(slots=True, frozen=True)
class Defect:
    """Something wrong in an input, located as precisely as the bytes allow.

    ``code`` is a stable kebab-case identifier (``crc-mismatch``, ``torn-tail``...), ``field`` the
    format field that is wrong, ``position`` the absolute byte position in ``file``.
    """

    code: str
    file: str
    position: int | None
    field: str
    reason: str
    severity: Severity = "error"

    def describe(self) -> str:
        """One line for humans: ``file @ byte N: field: reason``."""
        where = self.file if self.position is None else f"{self.file} @ byte {self.position}"
        return f"{where}: {self.field}: {self.reason}"


@dataclass(slots=True, frozen=True)
class Header:
    """A record header (magic 2 only). The value may be null."""

    key: bytes
    value: bytes | None


@dataclass(slots=True, frozen=True)
class ControlRecord:
    """The decoded key (and, for transaction markers, value) of a control record.

    ``type`` is the raw type number; ``type_name`` is ``None`` for types Kafka does not know,
    whose value is kept raw in ``value``.
    """

    version: int
    type: int
    type_name: str | None
    value_version: int | None = None
    coordinator_epoch: int | None = None
    value: bytes | None = None


@dataclass(slots=True)
class Record:
    """One record, from a magic 2 batch or an (inner) legacy message.

    For magic 2: ``sequence`` is the batch's base sequence plus the offset delta (Kafka's wrapping
    increment), or -1. For legacy records ``crc``/``crc_valid``/``magic`` are set instead.
    """

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()
    sequence: int = NO_SEQUENCE
    attributes: int = 0
    offset_delta: int = 0
    timestamp_delta: int = 0
    size_in_bytes: int = 0
    position: int | None = None
    control: ControlRecord | None = None
    magic: int = 2
    crc: int | None = None
    crc_valid: bool | None = None

    @property
    def key_size(self) -> int:
        """Key length, -1 for a null key (as Kafka prints it)."""
        return -1 if self.key is None else len(self.key)

    @property
    def value_size(self) -> int:
        """Value length, -1 for a null value."""
        return -1 if self.value is None else len(self.value)


def increment_sequence(sequence: int, increment: int) -> int:
    """Kafka's ``DefaultRecordBatch.incrementSequence``: sequences wrap at Int32 max to 0.

    Storage's sequence rule (``kafkatool.storage.sequence`` names it, beside its vectorised twin); defined here
    because :attr:`RecordBatch.last_sequence` and the schema's record decoder, below storage, need it."""
    if sequence > MAX_SEQUENCE - increment:
        return increment - (MAX_SEQUENCE - sequence) - 1
    return sequence + increment


@dataclass(slots=True)
class RecordBatch:
    """A magic 2 record batch header (Kafka's ``DefaultRecordBatch``), as found at ``position``.

    ``records`` is filled only by a deep read. ``crc_valid`` is ``None`` when the CRC was not checked.
    """

    position: int
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int
    crc_valid: bool | None = None
    records: list[Record] | None = None

    @property
    def size_in_bytes(self) -> int:
        """Bytes on disk, including the 12-byte offset/length prefix."""
        return self.batch_length + 12

    @property
    def last_offset(self) -> int:
        """``baseOffset + lastOffsetDelta``."""
        return self.base_offset + self.last_offset_delta

    @property
    def compression(self) -> Compression:
        """Codec from attribute bits 0-2. Unknown ids raise ``ValueError`` (callers check first)."""
        return Compression(self.attributes & 0x07)

    @property
    def timestamp_type(self) -> TimestampType:
        """Attribute bit 3."""
        return TimestampType.LOG_APPEND_TIME if self.attributes & 0x08 else TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        """Attribute bit 4."""
        return bool(self.attributes & 0x10)

    @property
    def is_control(self) -> bool:
        """Attribute bit 5."""
        return bool(self.attributes & 0x20)

    @property
    def has_delete_horizon(self) -> bool:
        """Attribute bit 6: the base timestamp holds the delete horizon (KIP-534)."""
        return bool(self.attributes & 0x40)

    @property
    def delete_horizon_ms(self) -> int | None:
        """The delete horizon, when the attribute bit says the base timestamp holds one."""
        return self.base_timestamp if self.has_delete_horizon else None

    @property
    def last_sequence(self) -> int:
        """Kafka's ``lastSequence()``: -1 without a base sequence, else wrapped base + delta."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self.base_sequence, self.last_offset_delta)

    @property
    def is_idempotent(self) -> bool:
        """A producer id is set."""
        return self.producer_id >= 0


@dataclass(slots=True)
class LegacyBatch:
    """A shallow legacy (magic 0 or 1) message as stored in a log: offset, size, then the message.

    A compressed wrapper's records are its inner messages (filled by a deep read). ``offset`` is the
    stored offset, which for a wrapper is the offset of its last inner message.
    """

    position: int
    offset: int
    message_size: int
    crc: int
    magic: int
    attributes: int
    timestamp: int | None
    key: bytes | None
    value: bytes | None
    crc_valid: bool | None = None
    records: list[Record] | None = None
    inner_span: tuple[int, int] | None = None
    """A compressed wrapper's (first inner offset, inner message count), known without keeping the records."""

    @property
    def size_in_bytes(self) -> int:
        """Bytes on disk, including the 12-byte offset/size prefix."""
        return self.message_size + 12

    @property
    def last_offset(self) -> int:
        """For a shallow legacy entry Kafka's last offset is the stored offset."""
        return self.offset

    @property
    def base_offset(self) -> int:
        """Kafka's ``baseOffset()`` (``AbstractLegacyRecordBatch``): a compressed wrapper's first inner offset (its
        stored offset is the last); an uncompressed message's stored offset."""
        if self.records:
            return self.records[0].offset
        if self.inner_span is not None:
            return self.inner_span[0]
        return self.offset

    @property
    def compression(self) -> Compression:
        """Codec from attribute bits 0-2."""
        return Compression(self.attributes & 0x07)

    @property
    def timestamp_type(self) -> TimestampType:
        """NoTimestampType for magic 0; attribute bit 3 for magic 1."""
        if self.magic == 0:
            return TimestampType.NO_TIMESTAMP_TYPE
        return TimestampType.LOG_APPEND_TIME if self.attributes & 0x08 else TimestampType.CREATE_TIME

    @property
    def max_timestamp(self) -> int:
        """The message timestamp (-1 for magic 0)."""
        return NO_TIMESTAMP if self.timestamp is None else self.timestamp


LogEntry = RecordBatch | LegacyBatch


@dataclass(frozen=True, slots=True)
class OutputField:
    """One field of the output contract: its one name in every output (dump JSON and JSONL, the scan's Parquet,
    the report), its Arrow type on the columnar path (``json`` for nested values that only the JSON outputs carry)
    and what it holds."""

    name: str
    arrow: str
    doc: str


#: The batch model's fields (magic 2 batches and legacy entries), in dump JSON order, named as DumpLogSegments
#: words them. ``engine.rows.entry_row`` writes them (except ``control_type``); the scan's ``batches`` table
#: (``reading.batch_scan.BATCH_COLUMNS``) carries the columns named in ``SCAN_BATCH_FIELDS``. An output may
#: null a Kafka sentinel (-1) or keep it, but always the same way for one field within one output.
BATCH_FIELDS: tuple[OutputField, ...] = (
    OutputField("position", "int64", "byte position of the entry in its segment"),
    OutputField("base_offset", "int64", "first offset (a legacy wrapper's first inner offset)"),
    OutputField("last_offset", "int64", "baseOffset + lastOffsetDelta (a legacy entry's stored offset)"),
    OutputField("count", "int32", "records in the batch (recordsCount; a legacy wrapper's inner messages)"),
    OutputField("size", "int32", "bytes on disk, the 12-byte offset/length prefix included"),
    OutputField("magic", "int8", "format version: 2, or 0/1 for legacy messages"),
    OutputField("compression", "string", "codec label (storage.codecs), from attribute bits 0-2"),
    OutputField("timestamp_type", "string", "CreateTime / LogAppendTime / NoTimestampType (attribute bit 3)"),
    OutputField("base_timestamp", "int64", "the batch's base timestamp (a legacy message's timestamp in the scan)"),
    OutputField("max_timestamp", "int64", "the batch's max timestamp"),
    OutputField("partition_leader_epoch", "int32", "leader epoch of the appending leader (-1: none)"),
    OutputField("producer_id", "int64", "idempotent producer id (-1: none)"),
    OutputField("producer_epoch", "int16", "producer epoch (-1: none)"),
    OutputField("base_sequence", "int32", "first record's sequence (-1: none)"),
    OutputField("last_sequence", "int32", "base sequence + lastOffsetDelta, wrapping at Int32 max (storage.sequence)"),
    OutputField("is_transactional", "bool", "attribute bit 4"),
    OutputField("is_control", "bool", "attribute bit 5: the batch holds control records (markers, raft)"),
    OutputField("control_type", "string", "a control batch's marker type (COMMIT, ABORT, ...)"),
    OutputField("delete_horizon_ms", "int64", "attribute bit 6: the base timestamp is the delete horizon"),
    OutputField("attributes", "int16", "the raw attribute bits"),
    OutputField("crc", "int64", "stored CRC-32C (magic 2) or CRC-32 (legacy)"),
    OutputField("crc_valid", "bool", "whether the stored CRC matches the bytes (null: not checked)"),
)

#: The batch fields the scan's ``batches`` table holds, in its column order (after log_dir, topic, partition,
#: segment).
SCAN_BATCH_FIELDS: tuple[str, ...] = (
    "position", "base_offset", "last_offset", "size", "magic", "compression", "crc", "crc_valid",
    "partition_leader_epoch", "producer_id", "producer_epoch", "base_sequence", "last_sequence", "is_transactional",
    "is_control", "control_type", "timestamp_type", "base_timestamp", "max_timestamp", "count",
)

#: The record model's fields, in dump JSON order (``engine.rows.record_row``); records have no columnar output.
RECORD_FIELDS: tuple[OutputField, ...] = (
    OutputField("offset", "int64", "the record's offset"),
    OutputField("position", "int64", "byte position of the record (in the decompressed payload if compressed)"),
    OutputField("timestamp", "int64", "the record's timestamp"),
    OutputField("key_size", "int32", "key length, -1 for a null key"),
    OutputField("value_size", "int32", "value length, -1 for a null value"),
    OutputField("sequence", "int32", "magic 2: base sequence + offset delta, wrapping"),
    OutputField("header_keys", "json", "magic 2: the header keys"),
    OutputField("magic", "int8", "legacy: the inner message's magic"),
    OutputField("crc", "int64", "legacy: the inner message's CRC"),
    OutputField("crc_valid", "bool", "legacy: whether it matches"),
    OutputField("control", "json", "a control record's key (and raft message)"),
    OutputField("key", "json", "the key, decoded as asked (--print-data)"),
    OutputField("value", "json", "the value, decoded as asked"),
    OutputField("headers", "json", "magic 2: the headers, decoded as asked"),
    OutputField("decoded", "json", "an internal topic's record, decoded (schema.topic_records)"),
)


def field_types(fields: tuple[OutputField, ...], names: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """``(name, arrow type)`` of the fields ``names``, in that order (a columnar output's schema)."""
    by_name = {f.name: f for f in fields}
    return tuple((name, by_name[name].arrow) for name in names)


@dataclass(slots=True, frozen=True)
class OffsetIndexEntry:
    """One ``.index`` entry, with the offset made absolute."""

    offset: int
    position: int


@dataclass(slots=True, frozen=True)
class TimeIndexEntry:
    """One ``.timeindex`` entry, with the offset made absolute."""

    timestamp: int
    offset: int


@dataclass(slots=True, frozen=True)
class AbortedTxn:
    """One ``.txnindex`` entry (Kafka's ``AbortedTxn``)."""

    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


@dataclass(slots=True, frozen=True)
class ProducerSnapshotEntry:
    """One producer in a ``.snapshot`` file, as stored (Kafka's ``ProducerSnapshot.ProducerEntry``)."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int

    @property
    def first_sequence(self) -> int:
        """Kafka's ``BatchMetadata.firstSeq()``: last sequence minus the offset delta, wrapping."""
        return decrement_sequence(self.last_sequence, self.offset_delta)

    @property
    def first_offset(self) -> int:
        """Offset of the first record of the last batch."""
        return self.last_offset - self.offset_delta


def decrement_sequence(sequence: int, decrement: int) -> int:
    """Kafka's ``DefaultRecordBatch.decrementSequence``: the inverse of :func:`increment_sequence` (named in
    ``kafkatool.storage.sequence`` too)."""
    if sequence < decrement:
        return MAX_SEQUENCE - (decrement - sequence) + 1
    return sequence - decrement


@dataclass(slots=True)
class ProducerSnapshot:
    """A decoded producer-state snapshot file."""

    version: int
    crc: int
    crc_valid: bool
    entries: list[ProducerSnapshotEntry] = field(default_factory=list)


@dataclass(slots=True, frozen=True)
class LeaderEpochEntry:
    """One ``leader-epoch-checkpoint`` line: an epoch and the first offset it wrote."""

    epoch: int
    start_offset: int


@dataclass(slots=True, frozen=True)
class TopicPartition:
    """A topic and partition number."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(slots=True)
class IndexFile:
    """A decoded ``.index`` or ``.timeindex``.

    ``entries`` are the live entries: Kafka's readers stop at the first entry after the first whose
    offset is the base offset again, the zero fill of a preallocated index. ``slots`` counts every
    whole entry in the file, ``zero_tail`` the slots after the live ones, ``trailing_bytes`` the bytes
    after the last whole slot.
    """

    entries: list[OffsetIndexEntry] | list[TimeIndexEntry]
    slots: int
    zero_tail: int
    trailing_bytes: int


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    """A decoded ``partition.metadata``: the version and the topic id (Kafka's text and its 16 bytes in hex)."""

    version: int
    topic_id: str
    topic_id_hex: str

    @property
    def topic_id_bytes(self) -> bytes:
        """The 16 raw bytes of the topic id."""
        return bytes.fromhex(self.topic_id_hex)

    @property
    def topic_uuid(self) -> uuid.UUID:
        """The topic id as a standard UUID (``8-4-4-4-12`` when printed)."""
        return uuid.UUID(bytes=self.topic_id_bytes)


@dataclass(frozen=True, slots=True)
class MetaProperties:
    """Kafka's reading of the known fields, every property in file order, and the comment lines.

    ``version`` is the effective version (0 when absent); ``node_id`` is the id Kafka uses (``broker.id``
    for version 0, ``node.id`` for version 1); ``broker_id`` is ``broker.id`` when it is a number.
    """

    version: int
    cluster_id: str | None
    node_id: int | None
    directory_id: str | None
    broker_id: int | None = None
    properties: dict[str, str] = field(default_factory=dict)
    comments: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CleanShutdown:
    """The marker's content: ``format`` is ``empty`` (old brokers) or ``json``; ``version`` and
    ``broker_epoch`` as Kafka reads them; ``problem`` says how the content differs from what Kafka writes."""

    format: str
    version: int | None
    broker_epoch: int | None
    problem: str | None = None


def entry_spans(entries: Sequence[LogEntry]) -> Iterator[tuple[int, int]]:
    """``(position, end)`` of each entry in order. A segment's lazily held entries answer from their arrays
    (``spans()``, no re-read of the file); a plain list from its objects."""
    spans = getattr(entries, "spans", None)
    if spans is not None:
        return spans()  # type: ignore[no-any-return]
    return ((e.position, e.position + e.size_in_bytes) for e in entries)


def magic2_entries(entries: Sequence[LogEntry]) -> Iterator[LogEntry]:
    """The magic 2 batches of ``entries`` in order. A segment's lazily held entries skip the legacy ones by their
    magic byte, unread (a legacy wrapper is not inflated); a plain list filters its objects."""
    batches = getattr(entries, "magic2_entries", None)
    if batches is not None:
        return batches()  # type: ignore[no-any-return]
    return (e for e in entries if isinstance(e, RecordBatch))


def entries_max_timestamp(entries: Sequence[LogEntry]) -> int:
    """The newest ``max_timestamp`` of the entries, at least 0 (a segment's lazily held entries keep it)."""
    known = getattr(entries, "max_timestamp", None)
    if isinstance(known, int):
        return max(0, known)
    return max(0, max((e.max_timestamp for e in entries), default=0))


@dataclass(slots=True)
class SegmentData:
    """Everything read about one segment: its log entries (shallow, CRC-checked; control batches decoded),
    its indexes and what was wrong while reading them. File names are relative to the log dir."""

    base_offset: int
    log_file: str
    log_size: int
    entries: Sequence[LogEntry] = field(default_factory=list)
    defects: list[Defect] = field(default_factory=list)
    index_file: str | None = None
    index: IndexFile | None = None
    index_size: int = 0
    time_index_file: str | None = None
    time_index: IndexFile | None = None
    time_index_size: int = 0
    txn_index_file: str | None = None
    txn_index: list[AbortedTxn] | None = None
    torn: RecordBatch | None = None  # the header of a partial batch at the end (torn write), when it is whole

    @property
    def next_offset(self) -> int:
        """One past the last offset held, or the base offset for an empty segment."""
        return self.entries[-1].last_offset + 1 if self.entries else self.base_offset

    @property
    def valid_bytes(self) -> int:
        """Bytes up to the end of the last readable entry."""
        return self.entries[-1].position + self.entries[-1].size_in_bytes if self.entries else 0


@dataclass(slots=True)
class SnapshotData:
    """A producer snapshot file as found: its offset, content (``None`` if undecodable) and size."""

    offset: int
    file: str
    size: int
    snapshot: ProducerSnapshot | None


@dataclass(slots=True)
class PartitionData:
    """One partition directory as read from disk."""

    directory: str
    topic_partition: TopicPartition | None
    state: str
    segments: list[SegmentData] = field(default_factory=list)
    snapshots: list[SnapshotData] = field(default_factory=list)
    leader_epochs: list[LeaderEpochEntry] | None = None
    partition_metadata: PartitionMetadata | None = None
    leftovers: list[str] = field(default_factory=list)
    unknown_files: list[str] = field(default_factory=list)
    defects: list[Defect] = field(default_factory=list)

    @property
    def log_end_offset(self) -> int:
        """The next offset to be written: one past the last readable entry of the last segment holding any."""
        for seg in reversed(self.segments):
            if seg.entries:
                return seg.next_offset
        return self.segments[-1].base_offset if self.segments else 0


@dataclass(slots=True)
class LogDirData:
    """A whole log dir: the log-dir-level files and every partition directory in it."""

    path: str
    partitions: list[PartitionData] = field(default_factory=list)
    checkpoints: dict[str, dict[TopicPartition, int] | None] = field(default_factory=dict)
    clean_shutdown: CleanShutdown | None = None
    meta_properties: MetaProperties | None = None
    unknown_files: list[str] = field(default_factory=list)
    defects: list[Defect] = field(default_factory=list)

    def checkpoint(self, name: str, tp: TopicPartition | None) -> int | None:
        """``tp``'s entry in the log-dir checkpoint file ``name``; ``None`` when the file or the entry is absent."""
        entries = self.checkpoints.get(name)
        return None if entries is None or tp is None else entries.get(tp)
