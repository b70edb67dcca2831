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
from collections.abc import Iterable

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


def parse_txn_index(data: bytes | memoryview) -> list[AbortedTxn]:
    """Every whole entry in file order, whatever its version (a partial tail is left out, as Kafka does)."""
    whole = len(data) - len(data) % ENTRY_SIZE
    return [AbortedTxn(*fields) for fields in ENTRY_STRUCT.iter_unpack(data[:whole])]


def trailing_bytes(data: bytes | memoryview) -> int:
    """Bytes after the last whole entry (Kafka never reads them)."""
    return len(data) % ENTRY_SIZE


def kafka_version(entry: AbortedTxn) -> int:
    """The version ``AbortedTxn.version()`` reports: the signed high byte of the stored int16."""
    return entry.version >> 8


def check_versions(entries: list[AbortedTxn]) -> None:
    """Kafka's iterator throws at the first entry whose version (as it reads it) is newer than it knows."""
    for i, e in enumerate(entries):
        version = kafka_version(e)
        if version > CURRENT_VERSION:
            raise DecodeError("version", f"unexpected aborted transaction version {version}, current version is "
                              f"{CURRENT_VERSION}", i * ENTRY_SIZE)


def sanity_check(entries: list[AbortedTxn], base_offset: int) -> None:
    """``TransactionIndex.sanityCheck``: versions as the iterator checks them, then every entry's last offset
    must be at or above the segment's base offset (else ``CorruptIndexException``)."""
    check_versions(entries)
    for i, e in enumerate(entries):
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
