"""``.txnindex`` files: the aborted transactions of a segment (Kafka's ``TransactionIndex`` / ``AbortedTxn``).

Each 34-byte entry: int16 version (0), int64 producer id, int64 first offset, int64 last offset (the
ABORT marker's) and int64 last stable offset at the time of the abort. The file is created only for a
segment that holds an abort, is never preallocated, and entries are appended with increasing last
offsets.

Kafka reads only whole entries (a partial tail is silently ignored), and its ``AbortedTxn.version()``
reads a single byte, the high byte of the int16: an entry whose version bytes are ``00 05`` reads as
version 0 and passes, ``01 00`` reads as 1 and stops the iteration with an error. :func:`kafka_version`
models that; :class:`~kafkatool.model.AbortedTxn` keeps the stored int16.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

from construct import GreedyBytes, GreedyRange, Int16sb, Int64sb, Struct

from kafkatool.errors import DecodeError
from kafkatool.model import AbortedTxn
from kafkatool.schema.fixed import derive_struct, field_offsets

ENTRY = Struct("version" / Int16sb, "producer_id" / Int64sb, "first_offset" / Int64sb, "last_offset" / Int64sb,
               "last_stable_offset" / Int64sb)
"""One entry, as ``AbortedTxn.toByteBuffer`` lays it out."""
FILE = Struct("entries" / GreedyRange(ENTRY), "trailing" / GreedyBytes)
"""A whole file: whole entries, then a partial tail Kafka ignores."""
ENTRY_STRUCT = derive_struct(ENTRY)
ENTRY_SIZE = ENTRY.sizeof()
CURRENT_VERSION = 0
_FIELDS = tuple(sc.name for sc in ENTRY.subcons)
_LAST_OFFSET_AT = field_offsets(ENTRY)["last_offset"]


def parse_txn_index(data: bytes | memoryview) -> list[AbortedTxn] | AbortedTxns:
    """Every whole entry in file order, whatever its version (a partial tail is left out, as Kafka does); a long
    zero-filled tail is counted, not decoded (:class:`AbortedTxns`)."""
    whole = len(data) - len(data) % ENTRY_SIZE
    return parse_txn_index_tail(data[:zero_run_start(data, whole)], whole // ENTRY_SIZE)


ZERO_ENTRY = AbortedTxn(0, 0, 0, 0, 0)
"""An all-zero entry as ``AbortedTxn`` reads it (a zero-filled file's)."""
ZERO_RUN_MIN = 1024
"""A zero-filled run at the end of at least this many entries is counted, not decoded (:class:`AbortedTxns`)."""


class AbortedTxns(Sequence[AbortedTxn]):
    """A ``.txnindex``'s entries whose last ``zero_tail`` are all-zero (a zero-filled tail): the ones before
    decoded, the tail only counted. Each tail entry reads as :data:`ZERO_ENTRY`, as Kafka's iterator reads it;
    iterating yields every entry (without holding them), :func:`key_positions` and :func:`distinct` answer
    without walking the tail."""

    __slots__ = ("live", "zero_tail")

    def __init__(self, live: list[AbortedTxn], zero_tail: int) -> None:
        self.live = live
        self.zero_tail = zero_tail

    def __len__(self) -> int:
        return len(self.live) + self.zero_tail

    @overload
    def __getitem__(self, index: int) -> AbortedTxn: ...

    @overload
    def __getitem__(self, index: slice) -> list[AbortedTxn]: ...

    def __getitem__(self, index: int | slice) -> AbortedTxn | list[AbortedTxn]:
        n = len(self)
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(n))]
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("transaction index entry out of range")
        return self.live[index] if index < len(self.live) else ZERO_ENTRY

    def __iter__(self) -> Iterator[AbortedTxn]:
        yield from self.live
        for _ in range(self.zero_tail):
            yield ZERO_ENTRY

    def __eq__(self, other: object) -> bool:
        if isinstance(other, AbortedTxns):
            return (self.live, self.zero_tail) == (other.live, other.zero_tail)
        return isinstance(other, Sequence) and len(other) == len(self) and all(
            a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"AbortedTxns({len(self.live)} entries, then {self.zero_tail} zero-filled)"


def with_zero_tail(live: list[AbortedTxn], zero_tail: int) -> list[AbortedTxn] | AbortedTxns:
    """``live`` followed by ``zero_tail`` all-zero entries: a list when the tail is short, else
    :class:`AbortedTxns` (the tail counted)."""
    if zero_tail < ZERO_RUN_MIN:
        return live + [ZERO_ENTRY] * zero_tail
    return AbortedTxns(live, zero_tail)


def distinct(entries: Sequence[AbortedTxn]) -> Iterable[AbortedTxn]:
    """The entries in file order with a counted zero tail as one entry: for rules whose answer is the same for
    equal entries (a predicate over entries, a map keyed by their fields)."""
    if isinstance(entries, AbortedTxns):
        return entries.live + ([ZERO_ENTRY] if entries.zero_tail else [])
    return entries


def key_positions(entries: Sequence[AbortedTxn]) -> dict[tuple[int, int], int]:
    """``(producer id, last offset) -> index`` of the last entry with that key, keys in first-seen order."""
    live = entries.live if isinstance(entries, AbortedTxns) else entries
    out = {(t.producer_id, t.last_offset): i for i, t in enumerate(live)}
    if isinstance(entries, AbortedTxns) and entries.zero_tail:
        out[(0, 0)] = len(entries) - 1
    return out


def zero_run_start(data: bytes | memoryview | Any, whole: int, step: int = 1 << 20) -> int:
    """The first byte of the run of zero bytes that ends ``data[:whole]`` (``whole`` when there is none),
    searched backwards ``step`` bytes at a time (``data``: anything sliceable into bytes)."""
    end = whole
    zero = bytes(step)
    while end > 0:
        start = max(0, end - step)
        chunk = bytes(data[start:end])
        if chunk != zero[:end - start]:
            return start + len(chunk.rstrip(b"\0"))
        end = start
    return 0


def parse_txn_index_tail(head: bytes | memoryview, slots: int) -> list[AbortedTxn] | AbortedTxns:
    """The ``slots`` whole entries of a file whose first bytes are ``head`` and whose bytes after ``head`` are all
    zero (:func:`zero_run_start`): ``head``'s entries (a last partial one completed with zeros), then zero
    entries."""
    live = -(-len(head) // ENTRY_SIZE)
    padded = bytes(head) + bytes(live * ENTRY_SIZE - len(head))
    return with_zero_tail([AbortedTxn(*fields) for fields in ENTRY_STRUCT.iter_unpack(padded)], slots - live)


def trailing_bytes(data: bytes | memoryview) -> int:
    """Bytes after the last whole entry (Kafka never reads them)."""
    return len(data) % ENTRY_SIZE


def kafka_version(entry: AbortedTxn) -> int:
    """The version ``AbortedTxn.version()`` reports: the signed high byte of the stored int16."""
    return entry.version >> 8


def check_versions(entries: Sequence[AbortedTxn]) -> None:
    """Kafka's iterator throws at the first entry whose version (as it reads it) is newer than it knows."""
    for i, e in enumerate(distinct(entries)):  # a zero tail is version 0
        version = kafka_version(e)
        if version > CURRENT_VERSION:
            raise DecodeError("version", f"unexpected aborted transaction version {version}, current version is "
                              f"{CURRENT_VERSION}", i * ENTRY_SIZE)


def sanity_check(entries: Sequence[AbortedTxn], base_offset: int) -> None:
    """``TransactionIndex.sanityCheck``: versions as the iterator checks them, then every entry's last offset
    must be at or above the segment's base offset (else ``CorruptIndexException``)."""
    check_versions(entries)
    for i, e in enumerate(distinct(entries)):  # the zero tail's first entry stands for all of it
        if e.last_offset < base_offset:
            raise DecodeError("last_offset", f"last offset {e.last_offset} of the aborted transaction of producer "
                              f"{e.producer_id} is less than the start offset {base_offset}",
                              i * ENTRY_SIZE + _LAST_OFFSET_AT)


def build_txn_index(entries: Iterable[AbortedTxn]) -> bytes:
    """Transaction index bytes, entries as given (``ValueError`` when a field does not fit)."""
    pack = ENTRY_STRUCT.pack
    try:
        return b"".join(pack(*(getattr(e, name) for name in _FIELDS)) for e in entries)
    except struct.error as err:
        raise ValueError(f"aborted transaction does not fit a .txnindex entry: {err}") from None
