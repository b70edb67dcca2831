"""The reads Kafka's ``FileLogInputStream`` and ``FileChannelRecordBatch`` make on a segment, one at a time.

``FileLogInputStream.nextBatch`` reads 17 bytes at a position (offset, size, and the magic at byte 16);
``FileChannelRecordBatch`` then loads the 61-byte ``DefaultRecordBatch`` header, or the whole batch, on demand,
and its ``iterator()`` walks the records. These are the pure reads over an in-memory buffer (bytes, memoryview
or a read-only mmap); the framing rules and their exception messages belong to the caller that reproduces
``DumpLogSegments`` (:mod:`kafkatool.engine.dls`). The resilient segment walk is
:mod:`kafkatool.schema.log_segment`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from construct import Struct

from kafkatool.errors import DecodeError
from kafkatool.model import Record, RecordBatch
from kafkatool.schema import record_batch as rb
from kafkatool.schema.codecs import DEFAULT_MAX_OUTPUT, Compression, gzip_body_before_trailer
from kafkatool.schema.fixed import derive_struct
from kafkatool.schema.java import JavaException
from kafkatool.schema.record_walk import walk_records

ENTRY_HEAD = Struct(*rb.BATCH_PREFIX.subcons[:4])
"""What ``nextBatch`` reads before deciding on a batch: base offset, size, (leader epoch,) magic."""
_ENTRY_HEAD = derive_struct(ENTRY_HEAD).unpack_from
ENTRY_HEAD_SIZE = ENTRY_HEAD.sizeof()
_HEADER = rb.HEADER_STRUCT.unpack_from


def read_entry_head(buf: Any, pos: int) -> tuple[int, int, int]:
    """``(offset, size, magic)`` of the log entry at ``pos``; the caller checks ``ENTRY_HEAD_SIZE`` bytes remain."""
    offset, size, _, magic = _ENTRY_HEAD(buf, pos)
    return offset, size, magic


def read_batch_header(buf: Any, pos: int) -> RecordBatch | None:
    """The 61-byte magic 2 header at ``pos`` whatever the batch's size and magic, ``None`` past the buffer's end
    (Kafka's ``loadBatchHeader`` reads it so)."""
    if pos + rb.HEADER_SIZE > len(buf):
        return None
    return rb.header_from_tuple(pos, _HEADER(buf, pos))


def batch_records(header: RecordBatch, buf: Any, position: int, size_in_bytes: int, *,
                  max_output: int | None = None) -> Iterable[Record]:
    """``DefaultRecordBatch.iterator()`` over the batch at ``position`` (``size_in_bytes`` with the log overhead);
    ``max_output`` caps decompression as in :func:`~kafkatool.schema.record_batch.decode_records`.

    A batch the strict decoder accepts comes back as the list of its records. A compressed one it rejects raises
    :class:`JavaException` with the decoder's reason; an uncompressed one is walked again as Kafka's iterator does
    (:func:`~kafkatool.schema.record_walk.walk_records`, returned lazily): the records before the damaged one
    first, then the exception Kafka throws there.
    """
    view = buf if isinstance(buf, memoryview) else memoryview(buf)
    payload = view[position + rb.HEADER_SIZE:position + size_in_bytes]
    try:
        return rb.decode_records(header, payload, max_output=max_output)
    except DecodeError as err:
        if header.attributes & rb.CODEC_MASK == Compression.GZIP.value:  # the helper tells a bad trailer alone
            body = gzip_body_before_trailer(payload, DEFAULT_MAX_OUTPUT if max_output is None else max_output)
            if body is not None:
                return _then(walk_records(header, body), err.reason)
        if header.attributes & rb.CODEC_MASK != 0:
            raise JavaException(err.reason) from None
    return walk_records(header, bytes(payload))


def _then(records: Iterator[Record], reason: str) -> Iterator[Record]:
    """The records Kafka's compressed iterator reads from a gzip body whose trailer is wrong (the first malformed
    one raises there), then the trailer's failure, met when the iterator reads past the last record."""
    yield from records
    raise JavaException(reason)


__all__ = ["ENTRY_HEAD", "ENTRY_HEAD_SIZE", "batch_records", "read_batch_header", "read_entry_head"]
