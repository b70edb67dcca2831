"""A lazily held segment's magic 2 batch headers as NumPy columns, re-read from the file in one gather.

:class:`~kafkatool.reading.entries.SegmentEntries` keeps positions, sizes and the walk's CRC verdicts; the
engines that replay per batch (``LogSegment.recover``, the producer-state replay) need a dozen header fields of
every batch and, for a control batch, its transaction marker. :func:`header_columns` gives them as columns
without a Python object per batch: one vectorised header gather (``schema.batch_columns.gather_headers``) and,
for the control batches only, the entry as :meth:`SegmentEntries.__getitem__` makes it (so the marker is the
one the object path reads). It answers ``None`` where the object path must be taken: a legacy (magic 0/1)
entry, or a file that changed since the walk (the object path reports it).

The columns are those of ``engine.producer_state.REPLAY_COLUMNS`` plus ``size``, ``crc_invalid`` (the walk
found the CRC wrong), ``partition_leader_epoch``, ``magic`` and ``records_count``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kafkatool.model import ControlType, LogEntry, RecordBatch
from kafkatool.reading.entries import _CRC_INVALID, SegmentEntries
from kafkatool.reading.files import mapped
from kafkatool.schema import batch_columns as bc
from kafkatool.schema import record_batch as rb

_MAGIC_AT = rb.FIELD_OFFSETS["magic"]
_CONTROL = 0x20


def header_columns(entries: Sequence[LogEntry]) -> dict[str, np.ndarray] | None:
    """The entries' header columns (see the module notes), or ``None`` for the object path."""
    if not isinstance(entries, SegmentEntries):
        return None
    lo, hi = entries._lo, entries._hi
    pos = np.asarray(entries._pos[lo:hi], dtype=np.int64)
    size = np.asarray(entries._size[lo:hi], dtype=np.int64)
    crc = np.frombuffer(bytes(entries._crc[lo:hi]), dtype=np.uint8)
    n = len(pos)
    with mapped(entries._path) as buf:
        if n and int((pos + size).max()) > len(buf):
            return None  # the file changed: the object path says so
        if n and int(pos[-1]) + rb.BATCH_OVERHEAD > len(buf):
            return None
        raw = np.frombuffer(buf, dtype=np.uint8) if n else np.zeros(0, dtype=np.uint8)
        if n and not (raw[pos + _MAGIC_AT] == 2).all():
            return None  # legacy entries: the object path
        heads = bc.gather_headers(buf, pos)
        cols: dict[str, Any] = {name: heads[name].astype(heads.dtype[name].newbyteorder("=")) for name in (
            "base_offset", "last_offset_delta", "partition_leader_epoch", "magic", "attributes", "max_timestamp",
            "producer_id", "producer_epoch", "base_sequence", "records_count")}
        marker = np.full(n, -1, dtype=np.int8)
        coordinator = np.zeros(n, dtype=np.int32)
        for k in np.flatnonzero(cols["attributes"] & _CONTROL).tolist():
            entry = entries._make(buf, lo + k)
            control = entry.records[0].control if isinstance(entry, RecordBatch) and entry.records else None
            if control is not None and control.coordinator_epoch is not None:
                marker[k] = 1 if control.type == ControlType.COMMIT.value else 0
                coordinator[k] = control.coordinator_epoch
        del raw, heads
    cols.update(position=pos, size=size, crc_invalid=crc == _CRC_INVALID, marker=marker,
                coordinator_epoch=coordinator)
    for name in ("base_offset", "max_timestamp", "producer_id"):
        cols[name] = cols[name].astype(np.int64)
    return cols
