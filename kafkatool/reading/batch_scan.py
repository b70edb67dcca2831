"""One row per batch of a segment, or of a byte range of it, as plain column lists: the fleet scan's core.

The same code serves ``scan``'s local engine and its Spark Data Source, so both produce the same table.
A range ``[start, stop)`` holds the batches that *start* in it; the walk may read past ``stop`` to finish the
last one. The range's ``landing`` (where the chain of batches crosses ``stop``) lets the caller check that
consecutive ranges meet exactly (see :func:`split_points`).

Split points come from the segment's ``.index`` (Kafka's entries are exact batch starts), each confirmed
by the same boundary test the resilient walker uses to resynchronise (``storage.boundary``): cheap header
checks on the candidate and two chained headers, then the candidate's CRC. An index that is missing, stale
or zero-filled simply yields fewer cuts.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from kafkatool.errors import DecodeError, UnreadableInputError
from kafkatool.model import (
    BATCH_FIELDS,
    SCAN_BATCH_FIELDS,
    Defect,
    LegacyBatch,
    LogEntry,
    RecordBatch,
    TimestampType,
    field_types,
)
from kafkatool.reading.columns import LegacyColumns, SegmentColumns, scan_buffer
from kafkatool.reading.context import resolve
from kafkatool.reading.entries import _CRC_UNCHECKED, _CRC_VALID, SegmentEntries
from kafkatool.reading.entry_columns import header_columns
from kafkatool.reading.files import mapped, read_bytes, read_span
from kafkatool.reading.objects import input_path, is_remote, object_size, read_range
from kafkatool.reading.siblings import exists
from kafkatool.schema import legacy, offset_index
from kafkatool.schema import record_batch as rb
from kafkatool.schema.codecs import ReadLimits
from kafkatool.schema.control import parse_control_record
from kafkatool.schema.filenames import offset_from_name
from kafkatool.schema.log_segment import find_next_batch, walk_log
from kafkatool.storage.boundary import confirmed_batch_start
from kafkatool.storage.codecs import KNOWN_CODEC_BY_BITS
from kafkatool.storage.sequence import increment_sequences

# The batch table's columns, in order, with their Arrow types (the fleet layer builds its schema from this): the
# partition's own, then the batch model's (``model.SCAN_BATCH_FIELDS``, named as in dump JSON).
BATCH_COLUMNS: tuple[tuple[str, str], ...] = (
    ("log_dir", "string"), ("topic", "string"), ("partition", "int32"), ("segment", "string"),
    *field_types(BATCH_FIELDS, SCAN_BATCH_FIELDS),
)
COLUMN_NAMES = tuple(name for name, _ in BATCH_COLUMNS)
SORT_KEY = ("log_dir", "topic", "partition", "segment", "position")


@dataclass(frozen=True, slots=True)
class SegmentRange:
    """A unit of scanning work: the batches of the segment at ``path`` starting in ``[start, stop)`` (``stop``
    None: to the end of the file); ``size`` is the range's bytes, for balancing."""

    log_dir: str
    topic: str
    partition: int
    path: str
    start: int = 0
    stop: int | None = None
    size: int = 0

    @property
    def segment(self) -> str:
        """The segment's file name."""
        return Path(self.path).name


@dataclass(frozen=True, slots=True)
class Coded:
    """A string column as small codes into a few labels (the unit's constants, codec and timestamp names): no
    Python string per row, and Arrow makes it one ``take``."""

    codes: np.ndarray
    labels: tuple[str | None, ...]

    def __len__(self) -> int:
        return len(self.codes)

    def tolist(self) -> list[str | None]:
        """The values, one label per row."""
        labels = self.labels
        return [labels[c] for c in self.codes.tolist()]


def _as_list(values: Any, mask: np.ndarray | None) -> list[Any]:
    """A column (list, array or :class:`Coded`) as Python values, ``None`` where ``mask`` says null."""
    if isinstance(values, list):
        return values
    out: list[Any] = values.tolist()
    if mask is not None:
        for i in np.flatnonzero(mask).tolist():
            out[i] = None
    return out


@dataclass
class BatchColumns:
    """The rows as columns in :data:`COLUMN_NAMES` order, plus where the range's chain landed past ``stop``.

    A column is a list (``None`` for null), a NumPy array with, in ``nulls``, a mask of its null rows, or
    :class:`Coded` strings: the clean magic 2 path fills whole columns without a Python value per batch, and the
    fleet's Arrow arrays are made from them directly (``fleet.tables.batches_arrow``).
    """

    columns: dict[str, Any] = field(default_factory=lambda: {n: [] for n in COLUMN_NAMES})
    landing: int | None = None
    defects: list[Defect] = field(default_factory=list)
    nulls: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.columns["position"])

    def column(self, name: str) -> list[Any]:
        """One column as a list of Python values (``None`` for null), whichever way it is held."""
        return _as_list(self.columns[name], self.nulls.get(name))

    def lists(self) -> dict[str, list[Any]]:
        """Every column as :meth:`column` gives it (for comparisons and small outputs)."""
        return {name: self.column(name) for name in COLUMN_NAMES}


def _none_if(value: int, sentinel: int = -1) -> int | None:
    return None if value == sentinel else value


def _control_type(buf: bytes | memoryview | None, batch: RecordBatch, max_output: int) -> str | None:
    """The marker type of a control batch: from its records if already decoded, else from ``buf`` (inflating at
    most ``max_output`` bytes)."""
    records = batch.records
    if records is None and buf is not None:
        try:
            records = rb.decode_records(batch, rb.records_payload(buf, batch), max_output=max_output)
        except DecodeError:
            return None
    if not records:
        return None
    try:
        return parse_control_record(records[0].key, records[0].value).type_name
    except DecodeError:
        return None


_UNIT_COLUMNS = ("log_dir", "topic", "partition", "segment")
_ROW_COLUMNS = COLUMN_NAMES[len(_UNIT_COLUMNS):]


def scan_range_or_nothing(unit: SegmentRange, limits: ReadLimits | None = None) -> BatchColumns:
    """:func:`scan_range`, or no rows when the file cannot be read at all (the partition's analysis reports it
    as a finding; one unreadable file does not stop a fleet scan)."""
    try:
        return scan_range(unit, limits)
    except UnreadableInputError:
        return BatchColumns(landing=unit.stop)


_TIMESTAMP_LABEL = (TimestampType.CREATE_TIME.label, TimestampType.LOG_APPEND_TIME.label)


def _row(buf: bytes | memoryview | None, e: RecordBatch | LegacyBatch, max_output: int) -> tuple[Any, ...]:
    """One batch's values for the columns after the unit's own (:data:`_ROW_COLUMNS`).

    The attribute bits are read through lookup tables built from the model's enums: this runs once per batch.
    """
    if isinstance(e, RecordBatch):
        attrs = e.attributes
        control = bool(attrs & rb.CONTROL_FLAG)
        epoch, pid, pepoch, seq = e.partition_leader_epoch, e.producer_id, e.producer_epoch, e.base_sequence
        return (
            e.position, e.base_offset, e.base_offset + e.last_offset_delta, e.batch_length + rb.LOG_OVERHEAD,
            e.magic, KNOWN_CODEC_BY_BITS[attrs & rb.CODEC_MASK], e.crc, e.crc_valid, None if epoch == -1 else epoch,
            None if pid == -1 else pid, None if pepoch == -1 else pepoch, None if seq == -1 else seq,
            None if seq == -1 else e.last_sequence, bool(attrs & rb.TRANSACTIONAL_FLAG), control,
            _control_type(buf, e, max_output) if control else None,
            _TIMESTAMP_LABEL[(attrs & rb.TIMESTAMP_TYPE_FLAG) != 0],
            e.base_timestamp, e.max_timestamp, e.records_count,
        )
    codec = KNOWN_CODEC_BY_BITS[e.attributes & legacy.CODEC_MASK]  # None for an id Kafka does not know, as above
    if codec != "none" and e.records is None:
        try:
            # Kafka's baseOffset of a legacy wrapper is its first inner offset
            e.records = legacy.inner_records(e, max_output=max_output)
        except DecodeError:
            e.records = None
    return (
        e.position, e.base_offset, e.last_offset, e.size_in_bytes, e.magic, codec, e.crc,
        e.crc_valid, None, None, None, None, None, False, False, None, e.timestamp_type.label, e.timestamp,
        e.max_timestamp, None,
    )


_MARKER_TYPE = {1: "COMMIT", 0: "ABORT"}  # the replay columns' marker: ControlType's names


def _header_rows(h: Any, positions: np.ndarray, sizes: np.ndarray, control_types: list[Any],
                 crc_valid: np.ndarray | None, crc_unchecked: np.ndarray | None) -> tuple[dict[str, Any],
                                                                                            dict[str, np.ndarray]]:
    """:func:`_row`'s values for clean magic 2 batches, column by column from their header fields ``h`` (a
    structured array or a dict of arrays): arrays, with null masks for Kafka's -1 sentinels and unchecked CRCs."""
    def field(name: str) -> np.ndarray:  # in the machine's byte order (the Python walk's headers are big-endian)
        values: np.ndarray = h[name]
        return values.astype(values.dtype.newbyteorder("="), copy=False)

    attrs = h["attributes"].astype(np.int64)
    base = h["base_offset"].astype(np.int64)
    delta = h["last_offset_delta"].astype(np.int64)
    seq = h["base_sequence"].astype(np.int64)
    epoch, pid, pepoch = field("partition_leader_epoch"), field("producer_id"), field("producer_epoch")
    absent = seq == -1
    n = len(positions)
    columns: dict[str, Any] = {
        "position": positions.astype(np.int64), "base_offset": base, "last_offset": base + delta,
        "size": sizes.astype(np.int64), "magic": field("magic"),
        "compression": Coded((attrs & rb.CODEC_MASK).astype(np.int8), KNOWN_CODEC_BY_BITS), "crc": field("crc"),
        "crc_valid": crc_valid if crc_valid is not None else np.zeros(n, dtype=bool),
        "partition_leader_epoch": epoch, "producer_id": pid, "producer_epoch": pepoch, "base_sequence": seq,
        "last_sequence": increment_sequences(seq, delta),  # Kafka's incrementSequence: past Int32 max it wraps
        "is_transactional": (attrs & rb.TRANSACTIONAL_FLAG) != 0, "is_control": (attrs & rb.CONTROL_FLAG) != 0,
        "control_type": np.array(control_types, dtype=object) if control_types else np.full(n, None, dtype=object),
        "timestamp_type": Coded(((attrs & rb.TIMESTAMP_TYPE_FLAG) != 0).astype(np.int8), _TIMESTAMP_LABEL),
        "base_timestamp": field("base_timestamp"), "max_timestamp": field("max_timestamp"),
        "count": field("records_count"),
    }
    nulls = {"partition_leader_epoch": epoch == -1, "producer_id": pid == -1, "producer_epoch": pepoch == -1,
             "base_sequence": absent, "last_sequence": absent,
             "control_type": np.array([t is None for t in control_types], dtype=bool) if control_types
             else np.ones(n, dtype=bool),
             "crc_valid": np.ones(n, dtype=bool) if crc_valid is None else crc_unchecked}
    return {name: columns[name] for name in _ROW_COLUMNS}, {k: v for k, v in nulls.items() if v is not None}


def _unit_columns(unit_values: tuple[Any, ...], n: int) -> dict[str, Any]:
    """The unit's own columns (log dir, topic, partition, segment), one value repeated ``n`` times."""
    zeros = np.zeros(n, dtype=np.int8)
    return {name: np.full(n, value, dtype=np.int32) if name == "partition" else Coded(zeros, (value,))
            for name, value in zip(_UNIT_COLUMNS, unit_values, strict=True)}


def _clean_rows(buf: bytes | memoryview, cols: SegmentColumns, max_output: int) -> tuple[dict[str, Any],
                                                                                       dict[str, np.ndarray]]:
    """:func:`_header_rows` of a clean range the column scan read (only control batches decoded, for their
    marker type)."""
    h = cols.headers
    positions = cols.positions
    control = np.flatnonzero(h["attributes"].astype(np.int64) & rb.CONTROL_FLAG).tolist()
    control_types: list[Any] = []
    if control:
        control_types = [None] * len(positions)
        for i in control:
            control_types[i] = _control_type(buf, rb.parse_batch_header(buf, int(positions[i])), max_output)
    sizes = h["batch_length"].astype(np.int64) + rb.LOG_OVERHEAD
    return _header_rows(h, positions, sizes, control_types, cols.crc_valid, None)


_LEGACY_TIMESTAMP_LABEL = (*_TIMESTAMP_LABEL, TimestampType.NO_TIMESTAMP_TYPE.label)


def _legacy_rows(cols: LegacyColumns) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """:func:`_row`'s values for legacy entries, column by column from the scan's legacy columns (every span in
    them): Kafka's ``AbstractLegacyRecordBatch`` view, no producer fields, magic 0 without a timestamp."""
    n = len(cols)
    attrs = cols["attributes"].astype(np.int64)
    magic0 = cols["magic"] == 0
    timestamp_type = np.where(magic0, 2, (attrs & legacy.TIMESTAMP_TYPE_MASK) != 0).astype(np.int8)
    absent = np.ones(n, dtype=bool)
    minus = np.full(n, -1, dtype=np.int64)
    columns: dict[str, Any] = {
        "position": cols["position"], "base_offset": cols.base_offsets(), "last_offset": cols["offset"],
        "size": cols["message_size"].astype(np.int64) + rb.LOG_OVERHEAD, "magic": cols["magic"],
        "compression": Coded((attrs & legacy.CODEC_MASK).astype(np.int8), KNOWN_CODEC_BY_BITS),
        "crc": cols["crc"], "crc_valid": cols["crc_valid"], "partition_leader_epoch": minus.astype(np.int32),
        "producer_id": minus, "producer_epoch": minus.astype(np.int16), "base_sequence": minus,
        "last_sequence": minus, "is_transactional": np.zeros(n, dtype=bool), "is_control": np.zeros(n, dtype=bool),
        "control_type": np.full(n, None, dtype=object),
        "timestamp_type": Coded(timestamp_type, _LEGACY_TIMESTAMP_LABEL),
        "base_timestamp": cols["timestamp"], "max_timestamp": cols["timestamp"],
        "count": minus.astype(np.int32),
    }
    nulls = {name: absent for name in ("partition_leader_epoch", "producer_id", "producer_epoch", "base_sequence",
                                       "last_sequence", "control_type", "count")}
    nulls["base_timestamp"] = magic0
    return {name: columns[name] for name in _ROW_COLUMNS}, nulls


def _in_file_order(columns: dict[str, Any], nulls: dict[str, np.ndarray]) -> tuple[dict[str, Any],
                                                                                 dict[str, np.ndarray]]:
    """Rows joined from two sets (magic 2 batches, legacy entries) sorted by position."""
    order = np.argsort(columns["position"], kind="stable")
    out = {name: Coded(v.codes[order], v.labels) if isinstance(v, Coded) else v[order]
           for name, v in columns.items()}
    return out, {name: mask[order] for name, mask in nulls.items()}


def scan_range(unit: SegmentRange, limits: ReadLimits | None = None) -> BatchColumns:
    """The batch rows of ``unit`` (CRC-checked, shallow).

    Clean ranges (the usual case) are read by the columnar scanner, :mod:`kafkatool.reading.columns`, legacy
    (magic 0/1) entries among them as its legacy columns; a range with anything else in it (a defect, a legacy
    wrapper whose span is not in the columns) is walked batch by batch by the resilient walker, so the rows and
    defects are those of ``dump-segment --verify`` either way. Legacy wrappers and control batches inflate at
    most ``limits``' cap (``None``: the limits in force, ``reading.context``)."""
    max_output = resolve(limits).max_decompressed_bytes
    if is_remote(unit.path) and (unit.start or unit.stop is not None):
        return _scan_remote_range(unit, max_output)
    with mapped(unit.path) as buf:
        return _scan(buf, unit, max_output, native_path=None if is_remote(unit.path) else unit.path)


#: Bytes read past a remote range's end in the same request, for the batch that starts before it and ends after.
REMOTE_SLACK = 4 << 20


def _scan_remote_range(unit: SegmentRange, max_output: int) -> BatchColumns:
    """A byte range of an object: one ranged read of ``[start, stop + slack)``, scanned with positions counted
    from ``start`` and shifted back. When the last batch does not end inside what was read (or the range is
    damaged, whose walk may look further), the read is repeated with twice the slack, up to the object's end."""
    path = input_path(unit.path)
    size = object_size(path)  # type: ignore[arg-type]
    stop = size if unit.stop is None else min(unit.stop, size)
    slack = REMOTE_SLACK
    while True:
        end = min(size, stop + slack)
        buf = read_range(path, unit.start, end)  # type: ignore[arg-type]
        rel = SegmentRange(unit.log_dir, unit.topic, unit.partition, unit.path, 0, stop - unit.start, unit.size)
        out = _scan(buf, rel, max_output, native_path=None)
        complete = out.landing is not None and out.landing <= len(buf) and not out.defects
        if end >= size or complete:
            return _shifted(out, unit.start)
        slack *= 2


def _shifted(out: BatchColumns, origin: int) -> BatchColumns:
    """``out`` with its positions (rows, landing, defects) moved by ``origin`` bytes."""
    if not origin:
        return out
    positions = out.columns["position"]
    out.columns["position"] = positions + origin if isinstance(positions, np.ndarray) else [
        p + origin for p in positions]
    if out.landing is not None:
        out.landing += origin
    out.defects = [replace(d, position=d.position + origin) if d.position is not None else d for d in out.defects]
    return out


def _scan(buf: Any, unit: SegmentRange, max_output: int, native_path: str | None) -> BatchColumns:
    """:func:`scan_range` over ``buf`` (the file's bytes, or a range's counted from 0)."""
    out = BatchColumns()
    rows: list[tuple[Any, ...]] = []
    fast = scan_buffer(buf, unit.path, start=unit.start, stop=unit.stop, max_output=max_output,
                       path=native_path)  # the native walk reads a local file itself
    if not fast.defects and not (fast.legacy["inner_count"] < 0).any():
        values = (unit.log_dir, unit.topic, unit.partition, unit.segment)
        rows, nulls = _clean_rows(buf, fast, max_output)
        out.columns, out.nulls = {**_unit_columns(values, len(fast)), **rows}, nulls
        if len(fast.legacy):  # the legacy entries' rows joined in, in file order
            rows, nulls = _legacy_rows(fast.legacy)
            legacy_part = ({**_unit_columns(values, len(fast.legacy)), **rows}, nulls)
            out.columns, out.nulls = _in_file_order(*_joined([(out.columns, out.nulls), legacy_part]))
        out.landing = fast.landing
        return out
    size = len(buf)
    stop = size if unit.stop is None else min(unit.stop, size)
    out.landing = size
    for item in walk_log(buf, unit.path, start=unit.start, max_output=max_output):
        if item.position is not None and item.position >= stop:
            out.landing = item.position
            break
        if isinstance(item, Defect):
            out.defects.append(item)
            continue
        rows.append(_row(buf, item, max_output))
    out.columns = _columns((unit.log_dir, unit.topic, unit.partition, unit.segment), rows)
    return out


def _columns(unit_values: tuple[Any, ...], rows: list[tuple[Any, ...]]) -> dict[str, list[Any]]:
    n = len(rows)
    out = {name: [value] * n for name, value in zip(_UNIT_COLUMNS, unit_values, strict=True)}
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(_ROW_COLUMNS)
    for name, values in zip(_ROW_COLUMNS, columns, strict=True):
        out[name] = list(values)
    return out


def entry_columns(log_dir: str, topic: str, partition: int,
                  segments: list[tuple[str, Sequence[LogEntry]]],
                  limits: ReadLimits | None = None) -> BatchColumns:
    """Batch rows from entries already walked (CRC-checked, control batches decoded), e.g. by
    ``reading.logdir.read_partition``: the same rows :func:`scan_range` gives, without a second pass. Segments held
    lazily give them from their header columns (``reading.entry_columns``); others batch by batch."""
    out = BatchColumns()
    max_output = resolve(limits).max_decompressed_bytes
    parts: list[tuple[dict[str, Any], dict[str, np.ndarray]]] = []
    for name, entries in segments:
        unit = (log_dir, topic, partition, name)
        cols = header_columns(entries)
        if cols is None:
            parts.append((_columns(unit, [_row(None, e, max_output) for e in entries]), {}))
            continue
        assert isinstance(entries, SegmentEntries)  # header_columns answers only for them
        n = len(cols["position"])
        control_types: list[Any] = []
        control = np.flatnonzero(cols["attributes"].astype(np.int64) & rb.CONTROL_FLAG).tolist()
        if control:
            control_types = [None] * n
            for i in control:
                known = _MARKER_TYPE.get(int(cols["marker"][i]))
                if known is None:  # not a transaction marker: its type from the record itself
                    entry = entries[i]
                    known = _control_type(None, entry, max_output) if isinstance(entry, RecordBatch) else None
                control_types[i] = known
        flags = entries.crc_flags()
        rows, nulls = _header_rows(cols, cols["position"], cols["size"], control_types, flags == _CRC_VALID,
                                   flags == _CRC_UNCHECKED)
        parts.append(({**_unit_columns(unit, n), **rows}, nulls))
    if len(parts) == 1:
        out.columns, out.nulls = parts[0]
    elif parts:
        out.columns, out.nulls = _joined(parts)
    return out


def _joined(parts: list[tuple[dict[str, Any], dict[str, np.ndarray]]]) -> tuple[dict[str, Any],
                                                                                 dict[str, np.ndarray]]:
    """Several segments' columns as one set (lists and arrays joined as object arrays where they differ)."""
    columns: dict[str, Any] = {}
    nulls: dict[str, np.ndarray] = {}
    for name in COLUMN_NAMES:
        values = [p[0][name] for p in parts]
        masks = [p[1].get(name) for p in parts]
        if all(isinstance(v, Coded) for v in values) and not any(m is not None for m in masks):
            offsets = np.cumsum([0] + [len(v.labels) for v in values[:-1]]).tolist()
            codes = [v.codes.astype(np.int32) + o for v, o in zip(values, offsets, strict=True)]
            columns[name] = Coded(np.concatenate(codes), tuple(label for v in values for label in v.labels))
        elif all(isinstance(v, np.ndarray) for v in values):
            columns[name] = np.concatenate(values)
            if any(m is not None for m in masks):
                nulls[name] = np.concatenate([np.zeros(len(v), dtype=bool) if m is None else m
                                              for v, m in zip(values, masks, strict=True)])
        else:
            columns[name] = [x for v, m in zip(values, masks, strict=True) for x in _as_list(v, m)]
    return columns, nulls


def confirmed_boundary(buf: bytes | memoryview, pos: int) -> bool:
    """Whether ``pos`` is a batch start to trust: storage's one boundary test
    (:func:`~kafkatool.storage.boundary.confirmed_batch_start`: chained plausible headers, then a valid CRC)."""
    return confirmed_batch_start(buf, pos, len(buf))


#: A range spans at most this many offsets (so at most this many batch rows, held as Python values while a range
#: is turned into Arrow columns): a 64 MiB range of one-record batches would hold 380,000.
MAX_RANGE_ROWS = 25_000
MIN_SEARCH_STEP = 1 << 20
_BASE_OFFSET = struct.Struct(">q")


def split_points(log_path: Path, chunk_bytes: int) -> list[int]:
    """Byte positions at which to cut a segment into ranges of about ``chunk_bytes`` and at most
    :data:`MAX_RANGE_ROWS` offsets (always starting with 0).

    Cuts are ``.index`` positions confirmed by :func:`confirmed_boundary`. A segment without a usable index is
    cut where the walk's resynchronisation search finds a confirmed batch (CRC and chained headers) after each
    ``chunk_bytes``, so no unit holds more than about a chunk's rows. Either way the engines check that each
    range's walk lands on the next cut, and scan the segment on in one piece where it does not. An object in an
    object store is cut at its index's entries only, each confirmed from one small ranged read (never the whole
    object).
    """
    if is_remote(log_path):
        return _remote_split_points(input_path(str(log_path)), chunk_bytes)
    with mapped(log_path) as buf:
        size = len(buf)
        if size <= chunk_bytes:
            return [0]
        index_path = log_path.with_suffix(".index")
        base = offset_from_name(log_path.name) or 0
        index = None
        if exists(index_path):
            try:
                with mapped(index_path) as ibuf:  # read where looked at: a zero-filled index stops at once
                    index = offset_index.parse_offset_index(ibuf, base)
            except DecodeError:
                index = None
        if index is not None and index.entries:
            cuts = _index_cuts(index.entries, base, size, chunk_bytes, lambda at: confirmed_boundary(buf, at))
            if len(cuts) > 1:
                return cuts
            # an index that gives no cut (zero-filled, or entries that are no batch boundary) would make the
            # whole segment one unit: 4.9 GB for 1 GiB of one-record batches; cut it by searching instead
    return _searched_cuts(log_path, size, chunk_bytes)


def _index_cuts(entries: Any, base: int, size: int, chunk_bytes: int, confirm: Callable[[int], bool]) -> list[int]:
    """Cut points at ``.index`` entries at least ``chunk_bytes`` (or :data:`MAX_RANGE_ROWS` offsets) apart, each
    kept only where ``confirm(position)`` finds a batch boundary."""
    cuts, cut_offset = [0], base
    for entry in entries:
        position = entry.position
        if position >= size or position <= cuts[-1]:
            continue
        if position < cuts[-1] + chunk_bytes and entry.offset - cut_offset < MAX_RANGE_ROWS:
            continue
        if confirm(position):
            cuts.append(position)
            cut_offset = entry.offset
    return cuts


#: Bytes read at a remote cut candidate to confirm it (its batch and the next headers must lie inside).
CONFIRM_WINDOW = 1 << 20


def _remote_split_points(log_path: Path, chunk_bytes: int) -> list[int]:
    """:func:`split_points` of an object: ``.index`` entries confirmed each by one read of
    :data:`CONFIRM_WINDOW` bytes (a batch longer than that is simply not cut at); no index, no cuts."""
    size = object_size(log_path)  # type: ignore[arg-type]
    if size <= chunk_bytes:
        return [0]
    index_path = log_path.with_suffix(".index")
    if not exists(index_path):
        return [0]
    base = offset_from_name(log_path.name) or 0
    try:
        index = offset_index.parse_offset_index(read_bytes(index_path), base)
    except DecodeError:
        return [0]
    return _index_cuts(index.entries, base, size, chunk_bytes, lambda at: confirmed_boundary(
        read_range(log_path, at, at + CONFIRM_WINDOW), 0))  # type: ignore[arg-type]


def _searched_cuts(log_path: Path, size: int, chunk_bytes: int) -> list[int]:
    """Cuts about ``chunk_bytes`` apart (closer where batches are small: at most :data:`MAX_RANGE_ROWS` offsets
    a range) at batches :func:`~kafkatool.schema.log_segment.find_next_batch` confirms. Each search maps the file
    afresh: pages the kernel maps around a search are let go with it, not kept across the whole segment."""
    cuts = [0]
    step = chunk_bytes
    while cuts[-1] + step < size:
        with mapped(log_path) as buf:
            nxt = find_next_batch(buf, cuts[-1] + step, size)
            if nxt is None:
                break
            spanned = _BASE_OFFSET.unpack_from(buf, nxt)[0] - _BASE_OFFSET.unpack_from(buf, cuts[-1])[0]
        if spanned > MAX_RANGE_ROWS and step > MIN_SEARCH_STEP:
            step = max(MIN_SEARCH_STEP, step * MAX_RANGE_ROWS // spanned)
            continue
        cuts.append(nxt)
    return cuts


#: Bytes read at once for a batch's digest (a larger batch takes a second read); a batch is digested up to
#: :data:`DIGEST_CAP` bytes.
DIGEST_WINDOW = 64 << 10
DIGEST_CAP = 16 << 20
_LENGTH = struct.Struct(">i")


def batch_digest(path: str | Path, position: int) -> str | None:
    """A digest (SHA-256, 32 hex digits) of the whole entry at ``position`` of a segment: its length from the
    log overhead every magic shares (offset, length), at most :data:`DIGEST_CAP` bytes; ``None`` when no whole
    header is there. ``scan --since`` fingerprints a segment's first and last batch with it."""
    data = read_span(path, position, position + DIGEST_WINDOW)
    if len(data) < rb.HEADER_SIZE:
        return None
    total = rb.LOG_OVERHEAD + max(0, _LENGTH.unpack_from(data, 8)[0])
    if total > len(data):
        data = read_span(path, position, position + min(total, DIGEST_CAP))
    return hashlib.sha256(data[:total]).hexdigest()[:32]
