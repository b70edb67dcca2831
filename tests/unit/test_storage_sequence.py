"""storage.sequence: the scalar and vectorised sequence arithmetic agree, and wrap where Kafka's do."""

from __future__ import annotations

import numpy as np

from kafkatool.storage.sequence import (
    MAX_SEQUENCE,
    decrement_sequence,
    in_sequence,
    increment_sequence,
    increment_sequences,
)

EDGES = [0, 1, 5, 1000, MAX_SEQUENCE - 10, MAX_SEQUENCE - 1, MAX_SEQUENCE]
DELTAS = [0, 1, 2, 9, 10, 11, 1000, MAX_SEQUENCE]


def test_increment_wraps_at_int_max_to_zero() -> None:
    assert increment_sequence(MAX_SEQUENCE, 1) == 0
    assert increment_sequence(MAX_SEQUENCE - 1, 3) == 1
    assert increment_sequence(5, 10) == 15
    assert decrement_sequence(0, 1) == MAX_SEQUENCE
    assert decrement_sequence(1, 3) == MAX_SEQUENCE - 1


def test_vectorised_form_matches_the_scalar_form() -> None:
    pairs = [(s, d) for s in EDGES for d in DELTAS]
    seq = np.array([s for s, _ in pairs], dtype=np.int64)
    delta = np.array([d for _, d in pairs], dtype=np.int64)
    assert increment_sequences(seq, delta).tolist() == [increment_sequence(s, d) for s, d in pairs]
    assert [increment_sequences(s, d) for s, d in pairs] == [increment_sequence(s, d) for s, d in pairs]


def test_decrement_inverts_increment() -> None:
    for s in EDGES:
        for d in DELTAS:
            assert decrement_sequence(increment_sequence(s, d), d) == s


def test_in_sequence_follows_or_wraps() -> None:
    assert in_sequence(4, 5) and in_sequence(MAX_SEQUENCE, 0)
    assert not in_sequence(4, 6) and not in_sequence(4, 0) and not in_sequence(MAX_SEQUENCE - 1, 0)
