"""``.txnindex`` files: the aborted transactions of a segment (Kafka's ``TransactionIndex`` / ``AbortedTxn``).

Each 34-byte entry: int16 version (0), int64 producer id, int64 first offset, int64 last offset (the
ABORT marker's) and int64 last stable offset at the time of the abort. Kafka reads only whole entries;
its ``AbortedTxn.version()`` reads the first byte of the version field, which is the same for version 0.
"""

from __future__ import annotations

from collections.abc import Iterable

from construct import Int16sb, Int64sb, Struct

from kafkatool.errors import DecodeError
from kafkatool.model import AbortedTxn
from kafkatool.schema.fixed import derive_struct

ENTRY = Struct("version" / Int16sb, "producer_id" / Int64sb, "first_offset" / Int64sb, "last_offset" / Int64sb,
               "last_stable_offset" / Int64sb)
ENTRY_STRUCT = derive_struct(ENTRY)
ENTRY_SIZE = ENTRY.sizeof()
CURRENT_VERSION = 0


def parse_txn_index(data: bytes | memoryview) -> list[AbortedTxn]:
    """Every whole entry in file order (a partial tail is left out, as Kafka does)."""
    whole = len(data) - len(data) % ENTRY_SIZE
    return [AbortedTxn(*fields) for fields in ENTRY_STRUCT.iter_unpack(data[:whole])]


def check_versions(entries: list[AbortedTxn]) -> None:
    """Kafka refuses to read past an entry of an unknown (newer) version."""
    for i, e in enumerate(entries):
        if e.version > CURRENT_VERSION:
            raise DecodeError("version", f"unexpected aborted transaction version {e.version}, current version is "
                              f"{CURRENT_VERSION}", i * ENTRY_SIZE)


def build_txn_index(entries: Iterable[AbortedTxn]) -> bytes:
    """Transaction index bytes."""
    return b"".join(ENTRY.build({"version": e.version, "producer_id": e.producer_id, "first_offset": e.first_offset,
                                 "last_offset": e.last_offset, "last_stable_offset": e.last_stable_offset})
                    for e in entries)
