"""Producer sequence arithmetic: Kafka's ``DefaultRecordBatch.incrementSequence`` / ``decrementSequence`` and
``ProducerAppendInfo.inSequence``. Sequences are Java ints that wrap from ``Integer.MAX_VALUE`` to 0.

Where it is defined: the scalar forms live in :mod:`kafkatool.model` (``RecordBatch.last_sequence``,
``ProducerSnapshotEntry.first_sequence`` and the schema's record decoder need them, and model/schema sit below
storage), and are named here; the vectorised form, for whole header columns at once (the fleet scan), and the
"in sequence" rule are defined here. The vectorised form uses only arithmetic operators, so it serves numpy
arrays without storage importing numpy (and plain ints too: tests check it against the scalar form).
"""

from __future__ import annotations

from typing import Any

from kafkatool.model import MAX_SEQUENCE, NO_SEQUENCE, decrement_sequence, increment_sequence

__all__ = ["MAX_SEQUENCE", "NO_SEQUENCE", "decrement_sequence", "in_sequence", "increment_sequence",
           "increment_sequences"]

def increment_sequences(sequences: Any, increments: Any) -> Any:
    """:func:`increment_sequence` element-wise over int64 arrays (or on two ints): past ``MAX_SEQUENCE`` the
    sum wraps to 0, i.e. ``MAX_SEQUENCE + 1`` is taken off where it overflows."""
    wrapped = sequences > MAX_SEQUENCE - increments
    return sequences + increments - wrapped * (MAX_SEQUENCE + 1)


def in_sequence(last_sequence: int, next_sequence: int) -> bool:
    """Kafka's ``ProducerAppendInfo.inSequence``: ``next_sequence`` follows ``last_sequence`` (wrapping to 0 after
    ``MAX_SEQUENCE``)."""
    return next_sequence == last_sequence + 1 or (next_sequence == 0 and last_sequence == MAX_SEQUENCE)
