"""A faithful emulation of Kafka's ``DumpLogSegments`` (``kafka-dump-log.sh``) text output.

Pure: every function works on buffers the caller has already read (the reading layer opens files).
What is modeled, class by class:

- ``DumpLogSegments.execute`` -> :class:`DlsSession` (the cross-file summaries printed on stderr after
  every file: offset-index mismatches, time-index problems, non-consecutive offsets) and the per-file
  functions :func:`dump_log`, :func:`dump_index`, :func:`dump_time_index`, :func:`dump_txn_index`,
  :func:`dump_snapshot`, each returning a :class:`FileDump` (stdout lines, immediate stderr lines and
  the message of the exception that ended the run, if any).
- ``FileRecords`` / ``FileLogInputStream`` / ``FileChannelRecordBatch`` -> :class:`FileRecordsView` and
  :class:`FileBatch`: the exact framing rules (stop when 17 bytes or fewer remain, throw on a size below
  14, stop quietly on a partial entry), slices and their error messages.
- ``OffsetIndex`` / ``TimeIndex`` (``AbstractIndex``) -> entry counts, ``lookup`` (including its
  warm-section binary search over zero-filled slots) and ``sanityCheck`` messages.
- ``printBatchLevel`` / ``dumpBatchRecords`` / ``printControlRecord`` and the generated JSON converters'
  output (Jackson's compact text) -> the line layout of each batch, record and control record.

This module decodes no bytes (``tests/unit/test_dls_layering.py`` checks it): framing reads, batch headers and
records come from :mod:`kafkatool.schema.file_records` (Kafka's lenient record walk, with Java's exception
messages, is :mod:`kafkatool.schema.record_walk`), legacy messages from :mod:`kafkatool.schema.legacy`, control
records from :mod:`kafkatool.schema.control` and :mod:`kafkatool.schema.kraft_control`, Java's UTF-8 decoder
(:func:`java_utf8`) from :mod:`kafkatool.schema.java`, snapshot checks from
:mod:`kafkatool.schema.producer_snapshot`; index and snapshot entries arrive decoded from the caller.

Paths are printed as the caller names them; Kafka prints absolute paths in some places (summary headers,
exception messages) and the caller is expected to name files relative to where the user ran the tool.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kafkatool.errors import DecodeError
from kafkatool.model import (
    NO_SEQUENCE,
    AbortedTxn,
    LegacyBatch,
    ProducerSnapshotEntry,
    Record,
    RecordBatch,
    increment_sequence,
)
from kafkatool.schema import file_records, log_segment, offset_index, time_index
from kafkatool.schema import record_batch as rb
from kafkatool.schema.codecs import DEFAULT_MAX_OUTPUT
from kafkatool.schema.control import is_transaction_marker_key, parse_control_record
from kafkatool.schema.java import JavaException, java_utf8
from kafkatool.schema.kraft_control import read_kraft_control
from kafkatool.schema.native import INFLATED_BY_PYTHON
from kafkatool.schema.producer_snapshot import snapshot_corruption
from kafkatool.schema.txn_index import ZERO_ENTRY, AbortedTxns
from kafkatool.storage.codecs import CODEC_BITS, KNOWN_CODEC_BY_BITS
from kafkatool.storage.java_hash import BinnedMapOrder

INT_MAX = 0x7FFFFFFF
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024
RECORD_OVERHEAD_V0 = log_segment.RECORD_OVERHEAD_V0
HEADER_SIZE_UP_TO_MAGIC = file_records.ENTRY_HEAD_SIZE
LOG_OVERHEAD = rb.LOG_OVERHEAD
RECORD_BATCH_OVERHEAD = rb.HEADER_SIZE
OFFSET_INDEX_ENTRY = offset_index.ENTRY_SIZE
TIME_INDEX_ENTRY = time_index.ENTRY_SIZE
RECORD_INDENT = "|"

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
TXN_INDEX_SUFFIX = ".txnindex"
SNAPSHOT_SUFFIX = ".snapshot"
KRAFT_SNAPSHOT_SUFFIX = ".checkpoint"
BOOTSTRAP_SNAPSHOT = "bootstrap.checkpoint"


_CODEC, _LOG_APPEND, _TXN, _CONTROL, _HORIZON = (CODEC_BITS, rb.TIMESTAMP_TYPE_FLAG, rb.TRANSACTIONAL_FLAG,
                                                  rb.CONTROL_FLAG, rb.DELETE_HORIZON_FLAG)
"""The magic 2 ``attributes`` bits, bound once for the per-batch lines."""


class Buffer(Protocol):
    """Anything indexable like ``bytes`` with a length: bytes, memoryview, a read-only mmap."""

    def __len__(self) -> int: ...

    def __getitem__(self, index: Any) -> Any: ...


class DlsError(Exception):
    """A Java exception that ends the DumpLogSegments run; ``message`` is its ``getMessage()``.

    ``None`` stands for Java's null message, which DumpLogSegments prints as ``null``.
    """

    def __init__(self, message: str | None) -> None:
        super().__init__(message)
        self.message = message

    @property
    def line(self) -> str:
        """What ``System.err.println(e.getMessage())`` prints."""
        return "null" if self.message is None else self.message


# --- Java value formatting ------------------------------------------------------------------------


def optional_long(value: int | None) -> str:
    """``OptionalLong.toString()``."""
    return "OptionalLong.empty" if value is None else f"OptionalLong[{value}]"


def java_bool(value: bool) -> str:
    """``String.valueOf(boolean)``."""
    return "true" if value else "false"


def java_parse_long(text: str) -> int:
    """``Long.parseLong``: optional sign then ASCII digits, within the signed 64-bit range."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not all("0" <= c <= "9" for c in body):
        raise DlsError(f'For input string: "{text}"')
    value = int(text)
    if not -(1 << 63) <= value < (1 << 63):
        raise DlsError(f'For input string: "{text}"')
    return value


def java_parse_int(text: str) -> int:
    """``Integer.parseInt`` (same rules as :func:`java_parse_long`, 32-bit range)."""
    value = java_parse_long(text)
    if not -(1 << 31) <= value < (1 << 31):
        raise DlsError(f'For input string: "{text}"')
    return value


# --- FileRecords / FileLogInputStream -------------------------------------------------------------


class FileRecordsView:
    """Kafka's ``FileRecords`` over an in-memory copy of a file: ``[start, end)`` of ``buf``.

    ``label`` is the file as Kafka would print it in ``toString()`` and exception messages; ``max_output`` caps
    what one compressed batch may inflate to (kafkatool's bound, not Kafka's; ``None``: the decoders' default).
    """

    def __init__(self, label: str, buf: Buffer, start: int = 0, end: int = INT_MAX, is_slice: bool = False,
                 max_output: int | None = None) -> None:
        self.label = label
        self.buf = buf
        self.max_output = max_output
        self.start = start
        self.end = end
        self.is_slice = is_slice
        self.size = end - start if is_slice else min(len(buf), end) - start

    def __str__(self) -> str:
        return f"FileRecords(size={self.size}, file={self.label}, start={self.start}, end={self.end})"

    def slice(self, position: int, size: int) -> FileRecordsView:
        """``FileRecords.slice``, with ``availableBytes``' checks and messages."""
        current = self.size
        if position < 0:
            raise DlsError(f"Invalid position: {position} in read from {self}")
        if position > current - self.start:
            raise DlsError(f"Slice from position {position} exceeds end position of {self}")
        if size < 0:
            raise DlsError(f"Invalid size: {size} in read from {self}")
        end = self.start + position + size
        if end > INT_MAX or end > self.start + current:
            end = self.start + current
        available = end - (self.start + position)
        begin = self.start + position
        return FileRecordsView(self.label, self.buf, begin, begin + available, True, self.max_output)

    def batches(self, start: int | None = None) -> Iterator[FileBatch]:
        """``FileLogInputStream.nextBatch`` until it returns null (or throws); from ``start`` (a batch start the
        native batch-line writer reached) instead of the view's start when given."""
        end = self.end if self.is_slice else self.size
        pos = self.start if start is None else start
        buf = self.buf
        file_len = len(buf)
        released = pos  # mapped pages behind the batch being printed are let go: bounded memory on huge segments
        while True:
            if pos - released >= log_segment.RELEASE_EVERY:
                log_segment.release_pages(buf, released, pos)
                released = pos
            if pos >= end - HEADER_SIZE_UP_TO_MAGIC:
                return
            if pos + HEADER_SIZE_UP_TO_MAGIC > file_len:
                raise DlsError(f"Failed to read `log header` from file channel `{self.label}`. Expected to read "
                               f"{HEADER_SIZE_UP_TO_MAGIC} bytes, but reached end of file after reading "
                               f"{max(0, file_len - pos)} bytes. Started read from position {pos}.")
            offset, size, magic = file_records.read_entry_head(buf, pos)
            if size < RECORD_OVERHEAD_V0:
                raise DlsError(f"Found record size {size} smaller than minimum record overhead "
                               f"({RECORD_OVERHEAD_V0}) in file {self.label}.")
            if pos > end - LOG_OVERHEAD - size:
                return
            batch = FileBatch(self, offset, magic, pos, size)
            pos += batch.size_in_bytes
            yield batch


class FileBatch:
    """``FileChannelRecordBatch``: a batch found by the framing, its header and body decoded on demand."""

    def __init__(self, records: FileRecordsView, offset: int, magic: int, position: int, size: int) -> None:
        self.file_records = records
        self.offset = offset
        self.magic = magic
        self.position = position
        self.batch_size = size
        self._header: RecordBatch | None = None
        self._legacy: LegacyBatch | None = None

    @property
    def size_in_bytes(self) -> int:
        """``LOG_OVERHEAD + batchSize``."""
        return LOG_OVERHEAD + self.batch_size

    @property
    def is_v2(self) -> bool:
        """``magic >= MAGIC_VALUE_V2`` (the magic is a signed byte)."""
        return self.magic >= 2

    def _load_error(self) -> DlsError:
        return DlsError(f"Failed to load record batch at position {self.position} from {self.file_records}")

    def peek_header(self) -> RecordBatch | None:
        """The 61-byte ``DefaultRecordBatch`` header, ``None`` when the file ends before it."""
        if self._header is None:
            self._header = file_records.read_batch_header(self.file_records.buf, self.position)
        return self._header

    def header(self) -> RecordBatch:
        """The 61-byte ``DefaultRecordBatch`` header (Kafka reads it whatever the batch size, and throws when the
        file ends first)."""
        header = self.peek_header()
        if header is None:
            raise self._load_error()
        return header

    def legacy(self) -> LegacyBatch:
        """The whole legacy message (magic 0/1), decoded by the schema layer."""
        if self._legacy is None:
            from kafkatool.schema import legacy

            try:
                self._legacy = legacy.parse_legacy_entry(self.file_records.buf, self.position)
            except DecodeError as err:
                raise DlsError(err.reason) from None
        return self._legacy

    @property
    def last_offset(self) -> int:
        """``lastOffset()``: from the header for magic 2, the stored offset for legacy entries."""
        return self.header().last_offset if self.is_v2 else self.offset

    @property
    def timestamp_type(self) -> str:
        """``timestampType()`` as Kafka names it."""
        if self.is_v2:  # the per-batch hot path: the flag, without the model's enum
            return "LogAppendTime" if self.header().attributes & _LOG_APPEND else "CreateTime"
        return self.legacy().timestamp_type.label

    @property
    def max_timestamp(self) -> int:
        """``maxTimestamp()``."""
        return self.header().max_timestamp if self.is_v2 else self.legacy().max_timestamp

    def compression_name(self) -> str:
        """``compressionType().name``; an unknown id throws as ``CompressionType.forId`` does."""
        attrs = self.header().attributes if self.is_v2 else self.legacy().attributes
        codec = attrs & CODEC_BITS
        name = KNOWN_CODEC_BY_BITS[codec]
        if name is None:
            raise DlsError(f"Unknown compression type id: {codec}")
        return name

    @property
    def checksum(self) -> int:
        """The stored CRC, unsigned."""
        return self.header().crc if self.is_v2 else self.legacy().crc

    def is_valid(self) -> bool:
        """``isValid()`` on the full batch: big enough and the CRC matches."""
        if self.is_v2:
            if self.size_in_bytes < RECORD_BATCH_OVERHEAD:
                return False
            header = self.header()
            return rb.compute_crc(self.file_records.buf, self.position, self.batch_size) == header.crc
        entry = self.legacy()
        return bool(entry.crc_valid)

    def record_list(self) -> list[Record]:
        """Every record of the batch (see :meth:`records`)."""
        return list(self.records())

    def records(self) -> Iterator[Record]:
        """``iterator()``: the records of a magic 2 batch, the (inner) messages of a legacy one.

        An uncompressed magic 2 batch is read lazily, as Kafka does: the records before a damaged one
        are produced before the exception. A compressed batch is decoded whole first.
        """
        if not self.is_v2:
            from kafkatool.schema import legacy

            entry = self.legacy()
            if entry.attributes & legacy.CODEC_MASK == 0:
                # An uncompressed legacy message iterates as itself (AbstractLegacyRecordBatch is a Record).
                yield Record(offset=entry.offset, timestamp=entry.max_timestamp, key=entry.key, value=entry.value,
                             magic=entry.magic, crc=entry.crc, crc_valid=entry.crc_valid)
                return
            try:
                inner = entry.records if entry.records is not None else legacy.inner_records(
                    entry, max_output=self.file_records.max_output)
            except DecodeError as err:
                raise DlsError(err.reason) from None
            yield from inner
            return
        header = self.header()
        if header.records_count == 0:
            return
        if header.records_count < 0:
            raise DlsError(f"Found invalid record count {header.records_count} in magic v{self.magic} batch")
        try:
            yield from file_records.batch_records(header, self.file_records.buf, self.position, self.size_in_bytes,
                                                  max_output=self.file_records.max_output)
        except JavaException as err:
            raise DlsError(err.message) from None


def _legacy_record_valid(record: Record) -> bool:
    return bool(record.crc_valid)


# --- what differs between release lines ---------------------------------------------------------------


@dataclass(frozen=True)
class KafkaLayout:
    """The points where DumpLogSegments' text differs between the Kafka release lines kafkatool reproduces, each
    found by running that release's own tool over the saved broker data and the corpus
    (``tests/kafka/dls_conformance.py``) and on files its brokers wrote (``tests/kafka/decoding.py``).

    ``scala_tool``: the Scala ``kafka.tools.DumpLogSegments`` (3.9 to 4.2) rather than the Java
    ``org.apache.kafka.tools`` one (4.3 on). The Scala tool throws ``StringIndexOutOfBoundsException`` on a file
    name without a dot (the Java one ignores it as unknown); notes no offset gap at a file's first record; keeps each
    file's gaps and index mismatches as a list, newest first (the Java one in sorted maps); ends a legacy record's
    metadata with a stray ``}``; prints `` payload:`` after a null key even with ``--skip-record-metadata``; words
    its not-found summary ``in the log.`` (Java: ``in :<file>``); and lists its summaries in the order of Scala's
    ``mutable.HashMap`` (Java: ``HashMap.computeIfAbsent``'s).
    ``leader_change_json``: a KRaft ``LeaderChange`` control record prints as ``LeaderChange: {json}`` instead of
    ``controlType: LEADER_CHANGE(2)``.
    ``snapshot_space_without_batch``: a producer-snapshot entry without batch metadata ends with a space (the
    Scala tool prints ``lastTimestamp: N `` and then the optional batch part).
    ``transaction_log_json``: ``--transaction-log-decoder`` prints the key and value as the offsets decoder does
    (``{"type":"0","data":...}``) instead of ``transaction_metadata::transactionalId=...`` and
    ``producerId:..,state=..``; ``transaction_status_names``: its ``transactionStatus`` by name (``"Empty"``)
    rather than as the stored number.
    """

    name: str
    scala_tool: bool
    leader_change_json: bool
    snapshot_space_without_batch: bool
    transaction_log_json: bool
    transaction_status_names: bool


LAYOUTS: dict[str, KafkaLayout] = {
    "3.9": KafkaLayout("3.9", scala_tool=True, leader_change_json=False, snapshot_space_without_batch=True,
                       transaction_log_json=False, transaction_status_names=False),
    "4.0": KafkaLayout("4.0", scala_tool=True, leader_change_json=False, snapshot_space_without_batch=True,
                       transaction_log_json=False, transaction_status_names=False),
    "4.1": KafkaLayout("4.1", scala_tool=True, leader_change_json=True, snapshot_space_without_batch=True,
                       transaction_log_json=True, transaction_status_names=False),
    "4.2": KafkaLayout("4.2", scala_tool=True, leader_change_json=True, snapshot_space_without_batch=True,
                       transaction_log_json=True, transaction_status_names=False),
    "4.3": KafkaLayout("4.3", scala_tool=False, leader_change_json=True, snapshot_space_without_batch=False,
                       transaction_log_json=True, transaction_status_names=False),
    "4.4": KafkaLayout("4.4", scala_tool=False, leader_change_json=True, snapshot_space_without_batch=False,
                       transaction_log_json=True, transaction_status_names=True),
}
DEFAULT_LAYOUT = LAYOUTS["4.4"]
"""The newest release line, the default of ``--kafka-version``."""


def layout_for(version: str) -> KafkaLayout | None:
    """The layout for a Kafka version (``3.9`` to ``4.4``, with or without a patch number); ``None`` for a
    version not reproduced."""
    parts = version.strip().split(".")
    if not 2 <= len(parts) <= 3 or not all(x.isdigit() for x in parts):
        return None
    return LAYOUTS.get(f"{int(parts[0])}.{int(parts[1])}")


# --- KRaft control records: the generated JSON converters ------------------------------------------


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def jackson(value: Any) -> str:
    """Jackson's compact ``JsonNode.toString`` of a converter's tree (field order kept, non-ASCII as is)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return java_bool(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + "".join(_ESCAPES.get(c) or (f"\\u{ord(c):04X}" if ord(c) < 0x20 else c) for c in value) + '"'
    if isinstance(value, list):
        return "[" + ",".join(jackson(v) for v in value) + "]"
    return "{" + ",".join(f"{jackson(k)}:{jackson(v)}" for k, v in value.items()) + "}"


KRAFT_CONTROL_PRINTERS: dict[int, str] = {
    2: " LeaderChange: ",
    3: " SnapshotHeader ",
    4: " SnapshotFooter ",
    5: " KRaftVersion ",
    6: " KRaftVoters ",
}
"""What ``printControlRecord`` prints before each KRaft control record's JSON."""


def kraft_control_json(control_type: int, value: bytes | None) -> str:
    """The text ``printControlRecord`` appends for a KRaft control record (types 2 to 6)."""
    prefix = KRAFT_CONTROL_PRINTERS[control_type]
    try:
        return prefix + jackson(read_kraft_control(control_type, value))
    except JavaException as err:
        raise DlsError(err.message) from None


CONTROL_TYPE_NAMES = {2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER", 5: "KRAFT_VERSION",
                      6: "KRAFT_VOTERS"}
"""``ControlRecordType`` names of the KRaft control records."""


def _control_text(record: Record, layout: KafkaLayout = DEFAULT_LAYOUT) -> str:
    """``printControlRecord``: the marker, the KRaft JSON, or the type's name and id (the unknown id)."""
    key = record.key
    if key is None:
        raise DlsError('Cannot invoke "java.nio.ByteBuffer.remaining()" because "key" is null')
    if is_transaction_marker_key(key) and record.value is None:
        raise DlsError('Cannot invoke "java.nio.ByteBuffer.remaining()" because "value" is null')
    try:
        control = parse_control_record(key, record.value)
    except DecodeError as err:
        raise DlsError(err.reason) from None
    ctype = control.type
    if control.coordinator_epoch is not None:
        return f" endTxnMarker: {control.type_name} coordinatorEpoch: {control.coordinator_epoch}"
    if ctype == 2 and not layout.leader_change_json:
        return f" controlType: {CONTROL_TYPE_NAMES[ctype]}({ctype})"
    if ctype in KRAFT_CONTROL_PRINTERS:
        return kraft_control_json(ctype, record.value)
    return f" controlType: UNKNOWN({ctype})"


# --- results and the session ----------------------------------------------------------------------


@dataclass
class FileDump:
    """What dumping one file printed.

    ``lines`` are complete stdout lines; ``partial`` is text printed without a line end just before
    a crash; ``err`` are stderr lines printed at once (not summaries); ``crash`` is the message line of
    the exception that ended the run (exit 1), ``None`` when the file was dumped to the end.
    """

    lines: list[str] = field(default_factory=list)
    partial: str = ""
    err: list[str] = field(default_factory=list)
    crash: str | None = None

    def text(self) -> str:
        """The stdout text exactly as Kafka wrote it."""
        body = "".join(line + "\n" for line in self.lines)
        return body + self.partial


Emit = Callable[[str], None]
"""Where complete stdout lines go as they are made (each with its line end), like Kafka's ``println``."""

FastLines = Callable[[int, int, Emit], int]
"""A native writer of the shallow batch lines (``kafkatool._native.dls_batch_lines_*``, bound to one file by the
caller): ``(start, end, emit) -> position``. From the batch at ``start`` it emits blocks of complete lines, each as
:func:`_fast_batch_line` prints it, and returns the position of the first entry it does not handle, where
:func:`dump_log` goes on."""


class _Out:
    """Collects ``print``/``println`` calls into a :class:`FileDump`; with ``emit``, complete lines are handed
    over at once instead (a dump of a huge segment is never held in memory) and only the partial line stays."""

    def __init__(self, emit: Emit | None = None) -> None:
        self.dump = FileDump()
        self.pending: list[str] = []
        self.emit = emit

    def print(self, text: str) -> None:
        self.pending.append(text)

    def println(self, text: str = "") -> None:
        self.pending.append(text)
        line = "".join(self.pending)
        self.pending = []
        self.line(line)

    def line(self, text: str) -> None:
        """A complete line: streamed to ``emit`` or kept (``println`` without the pending part, for the hot path)."""
        if self.emit is not None:
            self.emit(text + "\n")
        else:
            self.dump.lines.append(text)

    def lines_from(self, text: str) -> None:
        """Complete lines (``text`` ends with a line end) kept, as :meth:`line` keeps them without ``emit``."""
        self.dump.lines.extend(text.split("\n")[:-1])

    def finish(self, error: DlsError | None = None) -> FileDump:
        self.dump.partial = "".join(self.pending)
        if error is not None:
            self.dump.crash = error.line
        return self.dump


@dataclass
class _Keyed:
    """A summary entry: the map key Kafka used and prints (the file's absolute path) and its data."""

    shown: str
    data: Any


class DlsSession:
    """``DumpLogSegments.execute``'s cross-file state, printed on stderr after the last file.

    Each map is keyed, as in Kafka, by the file's absolute path (``key``, else the ``path`` given), which is the
    name printed and decides the order in which files are listed (every ``computeIfAbsent`` / ``put`` call is
    replayed, :class:`BinnedMapOrder`). The Java tool keeps a file's gaps and index mismatches in sorted maps, the
    Scala tool in lists, newest first (see :class:`KafkaLayout`).
    """

    def __init__(self, layout: KafkaLayout = DEFAULT_LAYOUT) -> None:
        self.layout = layout
        self.index_mismatches: dict[str, _Keyed] = {}
        self.time_mismatches: dict[str, _Keyed] = {}
        self.out_of_order: dict[str, _Keyed] = {}
        self.not_found: dict[str, _Keyed] = {}
        self.non_consecutive: dict[str, _Keyed] = {}
        self._orders: dict[int, BinnedMapOrder] = {}

    def _slot(self, table: dict[str, _Keyed], path: str, key: str | None, make: Callable[[], Any],
              touch_once: bool = False) -> Any:
        k = key if key is not None else path
        order = self._orders.setdefault(id(table), BinnedMapOrder(scala=self.layout.scala_tool))
        if k not in table:
            table[k] = _Keyed(k, make())
            order.touch(k)
        elif not (touch_once and self.layout.scala_tool):
            order.touch(k)
        return table[k].data

    def _pairs(self) -> Callable[[], Any]:
        return list if self.layout.scala_tool else dict

    def record_index_mismatch(self, path: str, key: str | None, index_offset: int, log_offset: int) -> None:
        """``misMatchesForIndexFilesMap``: a reverse-ordered TreeMap per file (Java), a list (Scala)."""
        pairs = self._slot(self.index_mismatches, path, key, self._pairs())
        if isinstance(pairs, list):
            pairs.insert(0, (index_offset, log_offset))
        else:
            pairs[index_offset] = log_offset

    def record_time_mismatch(self, path: str, key: str | None, index_ts: int, log_ts: int) -> None:
        """``TimeIndexDumpErrors.recordMismatchTimeIndex``."""
        self._slot(self.time_mismatches, path, key, list, touch_once=True).append((index_ts, log_ts))

    def record_out_of_order(self, path: str, key: str | None, index_ts: int, previous_ts: int) -> None:
        """``TimeIndexDumpErrors.recordOutOfOrderIndexTimestamp``."""
        self._slot(self.out_of_order, path, key, list, touch_once=True).append((index_ts, previous_ts))

    def record_not_found(self, path: str, key: str | None, index_offset: int, log_offset: int) -> None:
        """``TimeIndexDumpErrors.recordShallowOffsetNotFound``."""
        self._slot(self.not_found, path, key, list, touch_once=True).append((index_offset, log_offset))

    def record_gap(self, path: str, key: str | None, previous: int, offset: int) -> None:
        """``nonConsecutivePairsForLogFilesMap``: a TreeMap per file (Java: later pairs replace earlier ones), a
        list (Scala, which notes nothing while its last offset is still -1)."""
        if self.layout.scala_tool and previous == -1:
            return
        pairs = self._slot(self.non_consecutive, path, key, self._pairs())
        if isinstance(pairs, list):
            pairs.insert(0, (previous, offset))
        else:
            pairs[previous] = offset

    def _ordered(self, table: dict[str, _Keyed]) -> list[_Keyed]:
        order = self._orders.get(id(table))
        return [] if order is None else [table[k] for k in order.order()]

    @staticmethod
    def _sorted_pairs(pairs: Any, reverse: bool = False) -> list[tuple[int, int]]:
        if isinstance(pairs, list):
            return pairs
        return [(a, pairs[a]) for a in sorted(pairs, reverse=reverse)]

    def summary_lines(self) -> list[str]:
        """The stderr lines ``execute`` prints after the last file."""
        lines: list[str] = []
        for item in self._ordered(self.index_mismatches):
            lines.append(f"Mismatches in :{item.shown}")
            lines.extend(f"  Index offset: {a}, log offset: {b}" for a, b in self._sorted_pairs(item.data, True))
        for item in self._ordered(self.time_mismatches):
            lines.append(f"Found timestamp mismatch in :{item.shown}")
            lines.extend(f"  Index timestamp: {a}, log timestamp: {b}" for a, b in item.data)
        for item in self._ordered(self.out_of_order):
            lines.append(f"Found out of order timestamp in :{item.shown}")
            lines.extend(f"  Index timestamp: {a}, Previously indexed timestamp: {b}" for a, b in item.data)
        for item in self._ordered(self.not_found):
            lines.append("The following indexed offsets are not found in the log." if self.layout.scala_tool
                         else f"The following indexed offsets are not found in :{item.shown}")
            lines.extend(f"Indexed offset: {a}, found log offset: {b}" for a, b in item.data)
        for item in self._ordered(self.non_consecutive):
            lines.append(f"Non-consecutive offsets in {item.shown}")
            lines.extend(f"  {a} is followed by {b}" for a, b in self._sorted_pairs(item.data))
        return lines


# --- file names -----------------------------------------------------------------------------------


def java_file(path: str) -> str:
    """``new File(path).toString()`` on Unix: repeated slashes collapsed, a trailing slash dropped (an object
    store's URL keeps its ``scheme://``)."""
    scheme, sep, rest = path.partition("://")
    if sep and scheme.isalnum() and scheme[:1].isalpha():
        return scheme + sep + java_file(rest)
    while "//" in path:
        path = path.replace("//", "/")
    return path[:-1] if len(path) > 1 and path.endswith("/") else path


def file_kind(path: str, layout: KafkaLayout = DEFAULT_LAYOUT) -> str:
    """The ``switch (suffix)`` of ``execute``: ``log``, ``index``, ``timeindex``, ``snapshot``,
    ``txnindex`` or ``unknown``. A name without a dot throws ``StringIndexOutOfBoundsException`` in the Scala
    tool and is unknown to the Java one.
    """
    name = posixpath.basename(path.rstrip("/")) or path
    dot = name.rfind(".")
    if dot < 0:
        if not layout.scala_tool:
            return "unknown"
        raise DlsError(f"begin -1, end {len(name)}, length {len(name)}")
    suffix = name[dot:]
    return {LOG_SUFFIX: "log", KRAFT_SNAPSHOT_SUFFIX: "log", INDEX_SUFFIX: "index",
            TIME_INDEX_SUFFIX: "timeindex", SNAPSHOT_SUFFIX: "snapshot",
            TXN_INDEX_SUFFIX: "txnindex"}.get(suffix, "unknown")


def unknown_file_line(path: str) -> str:
    """The stderr line for a suffix DumpLogSegments does not handle."""
    return f"Ignoring unknown file {path}"


def _name(path: str) -> str:
    return posixpath.basename(path.rstrip("/")) or path


def base_offset_of(path: str) -> int:
    """``Long.parseLong(file.getName().split("\\.")[0])``."""
    return java_parse_long(_name(path).split(".")[0])


def sibling_path(path: str, suffix: str) -> str:
    """The file of the same segment with another suffix, named the way the user named ``path``."""
    return posixpath.join(posixpath.dirname(path), _name(path).split(".")[0] + suffix)


def _snapshot_id(name: str) -> tuple[int, int]:
    """``Snapshots.parse``: a 20-digit end offset, a dash, a 10-digit epoch."""
    if len(name) < 20:
        raise DlsError(f"begin 0, end 20, length {len(name)}")
    offset = java_parse_long(name[:20])
    if len(name) < 31:
        raise DlsError(f"begin 21, end 31, length {len(name)}")
    epoch = java_parse_int(name[21:31])
    return offset, epoch


# --- .log -----------------------------------------------------------------------------------------


def _batch_line(out: _Out, batch: FileBatch, position: int) -> None:
    """``printBatchLevel``."""
    if batch.is_v2 and not out.pending and _fast_batch_line(out, batch, position):
        return
    if batch.is_v2:
        h = batch.header()
        count = h.records_count
        last_seq = NO_SEQUENCE if h.base_sequence == NO_SEQUENCE else increment_sequence(
            h.base_sequence, h.last_offset_delta)
        out.print(f"baseOffset: {batch.offset} lastOffset: {h.last_offset} count: {count} "
                  f"baseSequence: {h.base_sequence} lastSequence: {last_seq} producerId: {h.producer_id} "
                  f"producerEpoch: {h.producer_epoch} partitionLeaderEpoch: {h.partition_leader_epoch} "
                  f"isTransactional: {java_bool(h.is_transactional)} isControl: {java_bool(h.is_control)} "
                  f"deleteHorizonMs: {optional_long(h.delete_horizon_ms)}")
    else:
        out.print(f"offset: {batch.last_offset}")
    out.println(f" position: {position} {batch.timestamp_type}: {batch.max_timestamp} "
                f"size: {batch.size_in_bytes} magic: {batch.magic} compresscodec: {batch.compression_name()} "
                f"crc: {batch.checksum} isvalid: {java_bool(batch.is_valid())}")


def _fast_batch_line(out: _Out, batch: FileBatch, position: int) -> bool:
    """The common magic 2 line in one step (one unpack, one CRC call, one string): this runs once per batch
    of every dumped segment. Returns False, printing nothing, wherever Kafka's path could throw mid-line
    (a header past the end of the file, an unknown codec), so :func:`_batch_line` keeps those exact."""
    h = batch.peek_header()
    if h is None:
        return False
    attrs = h.attributes
    codec = KNOWN_CODEC_BY_BITS[attrs & _CODEC]
    if codec is None:
        return False
    size = batch.batch_size + LOG_OVERHEAD
    base_seq, delta = h.base_sequence, h.last_offset_delta
    last_seq = NO_SEQUENCE if base_seq == NO_SEQUENCE else increment_sequence(base_seq, delta)
    valid = size >= RECORD_BATCH_OVERHEAD and rb.compute_crc(batch.file_records.buf, h.position,
                                                             batch.batch_size) == h.crc
    out.line(
        f"baseOffset: {batch.offset} lastOffset: {h.base_offset + delta} count: {h.records_count} "
        f"baseSequence: {base_seq} lastSequence: {last_seq} producerId: {h.producer_id} "
        f"producerEpoch: {h.producer_epoch} partitionLeaderEpoch: {h.partition_leader_epoch} "
        f"isTransactional: {'true' if attrs & _TXN else 'false'} isControl: {'true' if attrs & _CONTROL else 'false'} "
        f"deleteHorizonMs: {f'OptionalLong[{h.base_timestamp}]' if attrs & _HORIZON else 'OptionalLong.empty'}"
        f" position: {position} {'LogAppendTime' if attrs & _LOG_APPEND else 'CreateTime'}: {h.max_timestamp} "
        f"size: {size} magic: {batch.magic} compresscodec: {codec} crc: {h.crc} "
        f"isvalid: {'true' if valid else 'false'}")
    return True


def _is_control(batch: FileBatch) -> bool:
    return batch.is_v2 and batch.header().is_control


def _record_lines(out: _Out, session: DlsSession, batch: FileBatch, last_offset: list[int], path: str,
                  key: str | None, skip_record_metadata: bool, print_data: bool,
                  parser: Callable[[Record], tuple[str | None, str | None]] | None = None) -> None:
    """``dumpBatchRecords`` / ``printRecordMetadata`` / ``printRecordContents``; ``parser`` is a decoder
    option's ``MessageParser`` (the default prints keys and values as UTF-8 text)."""
    control = _is_control(batch)
    ts_type = batch.timestamp_type
    for record in batch.records():
        previous = last_offset[0]
        if record.offset != previous + 1:
            session.record_gap(path, key, previous, record.offset)
        last_offset[0] = record.offset
        if not skip_record_metadata:
            out.print(f"{RECORD_INDENT} offset: {record.offset} {ts_type}: {record.timestamp} "
                      f"keySize: {record.key_size} valueSize: {record.value_size}")
            if batch.is_v2:
                keys = ",".join(java_utf8(h.key) for h in record.headers)
                out.print(f" sequence: {record.sequence} headerKeys: [{keys}]")
            else:
                out.print(f" isValid: {java_bool(_legacy_record_valid(record))} crc: {record.crc}"
                          + ("}" if session.layout.scala_tool else ""))
            if control:
                out.print(_control_text(record, session.layout))
        if print_data and not control and parser is not None:
            prefix = RECORD_INDENT + " " if skip_record_metadata else " "
            shown_key, payload = parser(record)
            if shown_key is not None:
                out.print(f"{prefix}key: {shown_key}")
            if payload is not None:
                out.print(f" payload: {payload}")
        elif print_data and not control:
            prefix = RECORD_INDENT + " " if skip_record_metadata else " "
            if record.key is not None:
                out.print(f"{prefix}key: {java_utf8(record.key)}")
                prefix = " "
            if record.value is not None:
                out.print(f"{' ' if session.layout.scala_tool else prefix}payload: {java_utf8(record.value)}")
        out.println()


class _NativeDeep:
    """The native deep writer (``kafkatool/_core/src/text_deep.rs``, the twin of :func:`_fast_batch_line` and
    :func:`_record_lines` for ordinary magic 2 batches): it writes runs of batches and stops before any batch it
    does not handle, which the Python path then prints. Used only when lines are streamed (``emit``), the dump
    starts at byte 0 and no decoder option is given."""

    CHUNK = 256 << 10  # bytes per call: buffers this small are reused by malloc, 4 MiB ones cost page faults

    def __init__(self, core: Any, out: _Out, session: DlsSession, records: FileRecordsView, path: str,
                 key: str | None, skip_record_metadata: bool, print_data: bool) -> None:
        self.core, self.out, self.session, self.records = core, out, session, records
        self.path, self.key = path, key
        self.skip_record_metadata, self.print_data = skip_record_metadata, print_data
        self.until = -1  # the batches before this position were written natively

    @classmethod
    def make(cls, out: _Out, session: DlsSession, records: FileRecordsView, path: str, key: str | None,
             skip_record_metadata: bool, print_data: bool) -> _NativeDeep | None:
        """The writer, or ``None`` when the native core is off or this dump is not one it handles."""
        from kafkatool.schema.native import core

        native = core()
        if native is None or out.emit is None or records.start != 0 or not records.is_slice:
            return None
        if skip_record_metadata and session.layout.scala_tool:  # the Scala tool's payload prefix differs
            return None
        return cls(native, out, session, records, path, key, skip_record_metadata, print_data)

    def covers(self, batch: FileBatch, last_offset: list[int]) -> bool:
        """Whether ``batch`` was (or now is) written natively; False: print it with the Python path."""
        pos = batch.position
        if pos < self.until:
            return True
        if self.out.pending or self.out.emit is None:
            return False
        source = self.records.buf
        chunk = rb.batch_bytes(source, pos, max(self.CHUNK, batch.size_in_bytes))
        max_output = self.records.max_output
        text, stop, last, gaps = self.core.dump_deep(
            chunk, pos, len(source), self.records.end, last_offset[0], self.print_data, self.skip_record_metadata,
            DEFAULT_MAX_OUTPUT if max_output is None else max_output)
        if stop == pos:
            text, stop, last, gaps = self._inflated(batch, last_offset[0])
            if stop == pos:
                return False
        self.out.emit(text)
        for previous, offset in gaps:
            self.session.record_gap(self.path, self.key, previous, offset)
        last_offset[0] = last
        self.until = stop
        return True


    def _inflated(self, batch: FileBatch, last: int) -> tuple[str, int, int, list[tuple[int, int]]]:
        """A zstd or lz4 batch the native codecs hand back: decompressed by the Python path (libzstd, liblz4),
        its lines written natively; ``stop`` is the batch's position when it is handed back."""
        nothing: tuple[str, int, int, list[tuple[int, int]]] = ("", batch.position, last, [])
        header = batch.peek_header()
        if header is None or header.attributes & _CODEC not in INFLATED_BY_PYTHON or header.is_control or \
                header.records_count <= 0:
            return nothing
        max_output = self.records.max_output
        inflated = rb.inflated_payload(self.records.buf, header, max_output)
        if inflated is None:
            return nothing
        result: tuple[str, int, int, list[tuple[int, int]]] = self.core.dump_deep_inflated(
            rb.batch_bytes(self.records.buf, batch.position, batch.size_in_bytes), batch.position, inflated, last,
            self.print_data, self.skip_record_metadata, DEFAULT_MAX_OUTPUT if max_output is None else max_output)
        return result


def dump_log(session: DlsSession, path: str, buf: Buffer | None, *, deep: bool = False, print_data: bool = False,
             skip_record_metadata: bool = False, max_bytes: int | None = None, key: str | None = None,
             parser: Callable[[Record], tuple[str | None, str | None]] | None = None,
             emit: Emit | None = None, max_output: int | None = None, fast_lines: FastLines | None = None) -> FileDump:
    """``dumpLog`` for a ``.log`` segment or a KRaft ``.checkpoint`` snapshot (``buf`` None: missing file).

    ``print_data`` implies deep iteration, as in Kafka. ``max_bytes`` None is Kafka's default
    (Integer.MAX_VALUE), the only value with which trailing bytes are reported. With ``emit``, lines are
    streamed to it as made (the returned dump then holds only a partial line, stderr lines and the crash).
    ``max_output`` is the decompression cap of the run (see :class:`FileRecordsView`). ``fast_lines`` writes the
    clean run's batch lines of a shallow dump (see :data:`FastLines`).
    """
    out = _Out(emit)
    deep = deep or print_data
    limit = INT_MAX if max_bytes is None else max_bytes
    name = _name(path)
    try:
        if name.endswith(LOG_SUFFIX):
            out.println(f"Log starting offset: {base_offset_of(path)}")
        elif name.endswith(KRAFT_SNAPSHOT_SUFFIX):
            if name == BOOTSTRAP_SNAPSHOT:
                out.println("KRaft bootstrap snapshot")
            else:
                end_offset, epoch = _snapshot_id(name)
                out.println(f"Snapshot end offset: {end_offset}, epoch: {epoch}")
        if buf is None:
            raise DlsError(path)  # NoSuchFileException
        records = FileRecordsView(path, buf, max_output=max_output).slice(0, limit)
        valid = 0
        resume = None
        if fast_lines is not None and not deep and not out.pending:
            resume = fast_lines(records.start, records.end, emit if emit is not None else out.lines_from)
            valid = resume - records.start
        last_offset = [-1]
        fast = _NativeDeep.make(out, session, records, path, key, skip_record_metadata, print_data) \
            if deep and parser is None else None
        for batch in records.batches(resume):
            if fast is not None and fast.covers(batch, last_offset):
                valid += batch.size_in_bytes
                continue
            _batch_line(out, batch, valid)
            if deep:
                _record_lines(out, session, batch, last_offset, path, key, skip_record_metadata, print_data, parser)
            valid += batch.size_in_bytes
        trailing = records.size - valid
        if trailing > 0 and limit == INT_MAX:
            out.println(f"Found {trailing} invalid bytes at the end of {name}")
    except DlsError as err:
        return out.finish(err)
    return out.finish()


# --- .index ---------------------------------------------------------------------------------------


@dataclass
class IndexSlots:
    """An index file as ``AbstractIndex`` sees it: every slot (``entries`` of them) and the length.

    ``slots`` holds ``(key, value)`` pairs: ``(absolute offset, position)`` for an offset index,
    ``(timestamp, absolute offset)`` for a time index.
    """

    base_offset: int
    length: int
    slots: Sequence[tuple[int, int]]

    @property
    def entries(self) -> int:
        """``entries()``: whole entries in the file."""
        return len(self.slots)


def index_lookup(index: IndexSlots, target: int) -> tuple[int, int]:
    """``OffsetIndex.lookup``: the largest slot whose offset is <= ``target`` (warm section first).

    Returns ``(offset, position)``; ``(baseOffset, 0)`` when no slot qualifies.
    """
    entries = index.entries
    slots = index.slots
    if entries == 0:
        return index.base_offset, 0
    warm = 8192 // OFFSET_INDEX_ENTRY
    first_hot = max(0, entries - 1 - warm)

    def search(lo: int, hi: int) -> int:
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            found = slots[mid][0]
            if found > target:
                hi = mid - 1
            elif found < target:
                lo = mid
            else:
                return mid
        return lo

    if slots[first_hot][0] < target:
        slot = search(first_hot, entries - 1)
    elif slots[0][0] > target:
        slot = -1
    else:
        slot = search(0, first_hot)
    return (index.base_offset, 0) if slot == -1 else slots[slot]


def offset_index_sanity(path: str, index: IndexSlots) -> None:
    """``OffsetIndex.sanityCheck`` (``path``: the file's absolute path, as its messages name it)."""
    last = index.slots[-1][0] if index.entries else index.base_offset
    if index.entries != 0 and last < index.base_offset:
        raise DlsError(f"Corrupt index found, index file {path} has non-zero size but the last offset is {last} "
                       f"which is less than the base offset {index.base_offset}")
    if index.length % OFFSET_INDEX_ENTRY != 0:
        raise DlsError(f"Index file {path} is corrupt, found {index.length} bytes which is neither positive nor "
                       f"a multiple of {OFFSET_INDEX_ENTRY}")


def time_index_sanity(path: str, index: IndexSlots) -> None:
    """``TimeIndex.sanityCheck`` (``path``: the file's absolute path, as its messages name it)."""
    if index.entries:
        last_ts, last_offset = index.slots[-1]
        first_ts = index.slots[0][0]
    else:
        last_ts, last_offset, first_ts = -1, index.base_offset, 0
    if index.entries != 0 and last_ts < first_ts:
        raise DlsError(f"Corrupt time index found, time index file ({path}) has non-zero size but the last "
                       f"timestamp is {last_ts} which is less than the first timestamp {first_ts}")
    if index.entries != 0 and last_offset < index.base_offset:
        raise DlsError(f"Corrupt time index found, time index file ({path}) has non-zero size but the last "
                       f"offset is {last_offset} which is less than the first offset {index.base_offset}")
    if index.length % TIME_INDEX_ENTRY != 0:
        raise DlsError(f"Time index file {path} is corrupt, found {index.length} bytes which is neither positive "
                       f"nor a multiple of {TIME_INDEX_ENTRY}")


def missing_index_error() -> DlsError:
    """What ``new OffsetIndex(file, base, -1, false)`` throws when the file does not exist yet.

    (Kafka creates the empty file first; kafkatool never writes, the message is the same.)
    """
    return DlsError("Invalid max index size: -1")


def dump_index(session: DlsSession, path: str, index: IndexSlots | None, log_buf: Buffer | None, *,
               verify_only: bool = False, sanity_only: bool = False,
               max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE, key: str | None = None,
               emit: Emit | None = None) -> FileDump:
    """``dumpIndex``: entries checked against the first batch at each position of the sibling log.

    ``index`` None means the index file is missing; ``log_buf`` None, the sibling ``.log`` is. ``emit``
    streams lines as in :func:`dump_log`.
    """
    out = _Out(emit)
    try:
        base_offset_of(path)
        log_path = sibling_path(key if key is not None else path, LOG_SUFFIX)  # getAbsoluteFile().getParent()
        if log_buf is None:
            raise DlsError(log_path)
        if index is None:
            raise missing_index_error()
        records = FileRecordsView(log_path, log_buf)
        if index.entries == 0:
            out.println(f"{path} is empty.")
            return out.finish()
        if sanity_only:
            offset_index_sanity(key if key is not None else path, index)  # file().getAbsolutePath()
            out.println(f"{path} passed sanity check.")
            return out.finish()
        for i, (offset, position) in enumerate(index.slots):
            if offset == index.base_offset and i > 0:
                break
            part = records.slice(position, max_message_size)
            first = next(part.batches(), None)
            if first is None:
                raise DlsError(None)  # NoSuchElementException from iterator().next()
            found = first.last_offset
            if found != offset:
                session.record_index_mismatch(path, key, offset, found)
            if not verify_only:
                out.println(f"offset: {offset} position: {position}")
    except DlsError as err:
        return out.finish(err)
    return out.finish()


# --- .timeindex -----------------------------------------------------------------------------------


def dump_time_index(session: DlsSession, path: str, time_index: IndexSlots | None, index: IndexSlots | None,
                    log_buf: Buffer | None, *, verify_only: bool = False, sanity_only: bool = False,
                    key: str | None = None, emit: Emit | None = None, max_output: int | None = None) -> FileDump:
    """``dumpTimeIndex``: each entry looked up in the offset index, then matched to a batch of the log.

    ``time_index``/``index``/``log_buf`` None: that file is missing. ``emit`` streams lines and ``max_output``
    caps decompression as in :func:`dump_log`.
    """
    out = _Out(emit)
    try:
        base_offset_of(path)
        log_path = sibling_path(key if key is not None else path, LOG_SUFFIX)  # getAbsoluteFile().getParent()
        if log_buf is None:
            raise DlsError(log_path)
        if index is None or time_index is None:
            raise missing_index_error()
        records = FileRecordsView(log_path, log_buf, max_output=max_output)
        if sanity_only:
            time_index_sanity(key if key is not None else path, time_index)  # file().getAbsolutePath()
            out.println(f"{path} passed sanity check.")
            return out.finish()
        previous_ts = -1
        for i, (timestamp, offset) in enumerate(time_index.slots):
            if offset == time_index.base_offset and i > 0:
                break
            _, position = index_lookup(index, offset)
            match = None
            for b in records.slice(position, INT_MAX).batches():
                if match is None and b.last_offset >= offset:
                    match = b
                    if session.layout.scala_tool:
                        break  # the Scala tool's ``batches.asScala.find`` stops at the first match
                # the Java tool reads every batch from there to the end first (a bad one further on throws),
                # here without keeping them
            if match is None:
                session.record_not_found(path, key, offset, -1)
            elif match.last_offset != offset:
                session.record_not_found(path, key, offset, match.last_offset)
            else:
                max_ts = -1
                for record in match.records():
                    max_ts = max(max_ts, record.timestamp)
                if max_ts != timestamp:
                    session.record_time_mismatch(path, key, timestamp, max_ts)
                if previous_ts >= timestamp:
                    session.record_out_of_order(path, key, timestamp, previous_ts)
            if not verify_only:
                out.println(f"timestamp: {timestamp} offset: {offset}")
            previous_ts = timestamp
    except DlsError as err:
        return out.finish(err)
    return out.finish()


# --- .txnindex and .snapshot ----------------------------------------------------------------------


def dump_txn_index(path: str, entries: Sequence[AbortedTxn] | None, emit: Emit | None = None) -> FileDump:
    """``dumpTxnIndex``: one line per aborted transaction (``entries`` None: no such file, no lines); ``emit``
    streams lines as in :func:`dump_log` (a counted zero tail, ``txn_index.AbortedTxns``, in blocks of its one
    line).

    An entry with a version above 0 throws as ``TransactionIndex``'s iterator does.
    """
    out = _Out(emit)
    try:
        java_parse_long(_name(path)[:_name(path).find(".")])
        tail = entries.zero_tail if isinstance(entries, AbortedTxns) else 0
        for txn in entries.live if isinstance(entries, AbortedTxns) else entries or []:
            if txn.version > 0:
                raise DlsError(f"Unexpected aborted transaction version {txn.version} in transaction index {path}, "
                               "current version is 0")
            out.println(_txn_line(txn))
        if tail:
            line = _txn_line(ZERO_ENTRY)
            if emit is None:
                out.dump.lines.extend([line] * tail)
            for done in range(0, tail if emit is not None else 0, 4096):
                emit((line + "\n") * min(4096, tail - done))  # type: ignore[misc]
    except DlsError as err:
        return out.finish(err)
    return out.finish()


def _txn_line(txn: AbortedTxn) -> str:
    return (f"version: {txn.version} producerId: {txn.producer_id} firstOffset: {txn.first_offset} "
            f"lastOffset: {txn.last_offset} lastStableOffset: {txn.last_stable_offset}")


def snapshot_entry_line(entry: ProducerSnapshotEntry, layout: KafkaLayout = DEFAULT_LAYOUT) -> str:
    """One producer of ``dumpProducerIdSnapshot`` (batch metadata only when a last offset is stored)."""
    txn_first = entry.current_txn_first_offset if entry.current_txn_first_offset >= 0 else None
    line = (f"producerId: {entry.producer_id} producerEpoch: {entry.producer_epoch} "
            f"coordinatorEpoch: {entry.coordinator_epoch} currentTxnFirstOffset: {optional_long(txn_first)} "
            f"lastTimestamp: {entry.timestamp}")
    if entry.last_offset >= 0:
        line += (f" firstSequence: {entry.first_sequence} lastSequence: {entry.last_sequence} "
                 f"lastOffset: {entry.last_offset} offsetDelta: {entry.offset_delta} timestamp: {entry.timestamp}")
    elif layout.snapshot_space_without_batch:
        line += " "
    return line


def dump_snapshot(path: str, entries: list[ProducerSnapshotEntry] | None, corrupt: str | None = None,
                  layout: KafkaLayout = DEFAULT_LAYOUT) -> FileDump:
    """``dumpProducerIdSnapshot``: ``corrupt`` is a ``CorruptSnapshotException`` message (printed on stderr,
    the run goes on); ``entries`` None means the file is missing (``NoSuchFileException``).
    """
    out = _Out()
    if corrupt is not None:
        out.dump.err.append(corrupt)
        return out.finish()
    if entries is None:
        return out.finish(DlsError(path))
    for entry in entries:
        out.println(snapshot_entry_line(entry, layout))
    return out.finish()


__all__ = [
    "DlsError",
    "DlsSession",
    "FileBatch",
    "FileDump",
    "FileRecordsView",
    "IndexSlots",
    "base_offset_of",
    "dump_index",
    "dump_log",
    "dump_snapshot",
    "dump_time_index",
    "dump_txn_index",
    "file_kind",
    "index_lookup",
    "jackson",
    "java_file",
    "java_utf8",
    "kraft_control_json",
    "missing_index_error",
    "sibling_path",
    "snapshot_corruption",
    "snapshot_entry_line",
    "unknown_file_line",
]
