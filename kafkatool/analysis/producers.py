"""A producer-state entry as a document row, once for ``replay-producers`` and ``simulate-restart`` (and so for
the report, which embeds both): Kafka's ``ProducerStateEntry`` with its cached batch metadata
(``BatchMetadata``), the ``-1`` sentinels of its fields shown as ``null``."""

from __future__ import annotations

from typing import Any

from kafkatool.storage.producer_state import ProducerStateEntry


def optional(value: int) -> int | None:
    """A field whose ``-1`` means "none" (no sequence, offset, timestamp or coordinator epoch yet)."""
    return None if value == -1 else value


def entry_document(producer_id: int, e: ProducerStateEntry, *,
                   offset_fields: tuple[str, str] = ("first_offset", "last_offset")) -> dict[str, Any]:
    """One producer's state; ``offset_fields``: the names of its first and last data offsets in the document
    (``replay-producers`` says ``first_offset`` / ``last_offset``, ``simulate-restart`` ``first_data_offset`` /
    ``last_data_offset``)."""
    first, last = offset_fields
    return {
        "producer_id": producer_id, "producer_epoch": e.producer_epoch,
        "coordinator_epoch": optional(e.coordinator_epoch), "first_sequence": optional(e.first_seq),
        "last_sequence": optional(e.last_seq), first: optional(e.first_data_offset),
        last: optional(e.last_data_offset), "last_offset_delta": e.last_offset_delta,
        "last_timestamp": optional(e.last_timestamp), "current_txn_first_offset": e.current_txn_first_offset,
        "cached_batches": [{"first_sequence": b.first_seq, "last_sequence": b.last_seq,
                            "first_offset": b.first_offset, "last_offset": b.last_offset,
                            "offset_delta": b.offset_delta, "timestamp": b.timestamp} for b in e.batches],
    }
