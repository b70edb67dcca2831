"""A ``.txnindex`` whose zero-filled tail is counted, not decoded (``schema.txn_index.AbortedTxns``): the same
entries, keys, sanity verdict and DumpLogSegments lines as decoding every entry."""

from __future__ import annotations

import pytest

from kafkatool.engine import dls
from kafkatool.errors import DecodeError
from kafkatool.model import AbortedTxn
from kafkatool.schema import txn_index


def _every_entry(data: bytes) -> list[AbortedTxn]:
    whole = len(data) - len(data) % txn_index.ENTRY_SIZE
    return [AbortedTxn(*f) for f in txn_index.ENTRY_STRUCT.iter_unpack(data[:whole])]


def _cases() -> list[bytes]:
    live = txn_index.build_txn_index([AbortedTxn(0, 7, 10, 20, 10), AbortedTxn(0, 0, 0, 0, 0),
                                      AbortedTxn(0, 8, 30, 40, 30)])
    ends_in_zero_byte = txn_index.build_txn_index([AbortedTxn(0, 9, 1, 256, 0)])  # last byte of the entry is 0
    return [b"", bytes(34 * 5000), bytes(34 * 5000 + 7), live + bytes(34 * 3000), live + bytes(34 * 10 + 5),
            ends_in_zero_byte + bytes(34 * 2000), live]


@pytest.mark.parametrize("data", _cases())
def test_counted_tail_reads_as_every_entry(data: bytes) -> None:
    got, want = txn_index.parse_txn_index(data), _every_entry(data)
    assert len(got) == len(want) and list(got) == want and got == want
    assert txn_index.key_positions(got) == {(t.producer_id, t.last_offset): i for i, t in enumerate(want)}
    assert list(txn_index.key_positions(got)) == list({(t.producer_id, t.last_offset): i for i, t in
                                                       enumerate(want)})
    if want:
        assert got[-1] == want[-1] and got[len(want) // 2] == want[len(want) // 2]
    for base in (0, 5):
        errors = []
        for entries in (got, want):
            try:
                txn_index.sanity_check(entries, base)
                errors.append(None)
            except DecodeError as err:
                errors.append((err.field, err.reason, err.position))
        assert errors[0] == errors[1]
    assert dls.dump_txn_index("00000000000000000000.txnindex", got) == \
        dls.dump_txn_index("00000000000000000000.txnindex", want)
    streamed: list[str] = []
    dls.dump_txn_index("00000000000000000000.txnindex", got, emit=streamed.append)
    assert "".join(streamed) == "".join(line + "\n" for line in dls.dump_txn_index(
        "00000000000000000000.txnindex", want).lines)


def test_long_zero_tail_is_counted() -> None:
    got = txn_index.parse_txn_index(bytes(34 * 100_000))
    assert isinstance(got, txn_index.AbortedTxns) and got.live == [] and got.zero_tail == 100_000
