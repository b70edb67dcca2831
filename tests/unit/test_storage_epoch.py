"""``kafkatool.storage.LeaderEpochCache``: each expected value worked out by hand from Kafka's
``LeaderEpochFileCache`` (storage/src/main/java/org/apache/kafka/storage/internals/epoch, trunk at 1eb76443,
cited as LEFC:line)."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from kafkatool.model import LeaderEpochEntry
from kafkatool.storage import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, LeaderEpochCache


def cache(*pairs: tuple[int, int]) -> LeaderEpochCache:
    return LeaderEpochCache.from_pairs(pairs)


def test_assign_to_an_empty_cache_appends() -> None:
    c = LeaderEpochCache()
    assert c.assign(0, 0) is True  # isUpdateNeeded: no latest entry -> true (LEFC:122-124)
    assert c.pairs() == [(0, 0)]
    assert c.latest_entry() == LeaderEpochEntry(0, 0)
    assert c.latest_epoch() == 0


def test_assign_of_the_latest_epoch_at_a_later_offset_changes_nothing() -> None:
    c = cache((0, 0), (2, 10))
    assert c.assign(2, 10) is False  # same epoch, startOffset not below the latest's: no update (LEFC:123)
    assert c.assign(2, 15) is False
    assert c.pairs() == [(0, 0), (2, 10)]


def test_assign_of_the_latest_epoch_at_an_earlier_offset_moves_its_start() -> None:
    c = cache((0, 0), (2, 10))
    # 5 < 10: update needed; (2, 10) goes (epoch 2 >= 2), (0, 0) stays (0 < 2 and 0 < 5) (LEFC:152-156)
    assert c.assign(2, 5) is True
    assert c.pairs() == [(0, 0), (2, 5)]


def test_assign_of_a_lower_epoch_removes_the_higher_ones() -> None:
    c = cache((1, 0), (3, 10))
    assert c.assign(2, 20) is True  # (3, 10) goes on its epoch (3 >= 2), (1, 0) stays
    assert c.pairs() == [(1, 0), (2, 20)]
    c = cache((1, 0), (2, 11))
    assert c.assign(1, 16) is True  # (2, 11) on its epoch, then (1, 0) on its epoch (1 >= 1)
    assert c.pairs() == [(1, 16)]


def test_assign_of_a_higher_epoch_at_an_earlier_offset_removes_later_starts() -> None:
    c = cache((0, 0), (1, 5), (2, 10))
    assert c.assign(3, 7) is True  # (2, 10) goes on its start (10 >= 7); (1, 5) stops the removal
    assert c.pairs() == [(0, 0), (1, 5), (3, 7)]
    c = cache((0, 0), (1, 5))
    assert c.assign(2, 5) is True  # the same start: (1, 5) goes (5 >= 5), no data was written in epoch 1
    assert c.pairs() == [(0, 0), (2, 5)]


def test_truncate_from_end_removes_entries_starting_at_or_after_the_offset() -> None:
    c = cache((0, 0), (1, 5), (2, 10))
    assert c.truncate_from_end(11) == []  # the latest starts at 10 < 11 (LEFC:407)
    assert c.truncate_from_end(10) == [LeaderEpochEntry(2, 10)]
    assert c.pairs() == [(0, 0), (1, 5)]
    c = cache((0, 0), (1, 5), (2, 10))
    assert c.truncate_from_end(5) == [LeaderEpochEntry(2, 10), LeaderEpochEntry(1, 5)]  # latest first
    assert c.pairs() == [(0, 0)]
    c = cache((0, 0), (1, 5))
    assert c.truncate_from_end(0) == [LeaderEpochEntry(1, 5), LeaderEpochEntry(0, 0)]
    assert c.pairs() == []
    assert c.truncate_from_end(0) == []  # empty: no latest entry


def test_truncate_from_end_ignores_a_negative_offset_and_drop_entries_from_does_not() -> None:
    c = cache((0, 0), (1, 5))
    assert c.truncate_from_end(-1) == []  # endOffset >= 0 is required (LEFC:407)
    assert c.pairs() == [(0, 0), (1, 5)]
    assert c.drop_entries_from(-1) == [LeaderEpochEntry(1, 5), LeaderEpochEntry(0, 0)]
    assert c.pairs() == []
    c = cache((0, 0), (1, 5), (2, 10))
    assert c.drop_entries_from(6) == [LeaderEpochEntry(2, 10)]  # from a non-negative offset: truncate_from_end
    assert c.pairs() == [(0, 0), (1, 5)]


def test_truncate_from_start_keeps_the_epoch_holding_the_new_start() -> None:
    c = cache((0, 0), (1, 5), (2, 10))
    # (0, 0) and (1, 5) start at or before 6; the last removed, epoch 1, comes back at 6 (LEFC:392-403)
    assert c.truncate_from_start(6) == [LeaderEpochEntry(0, 0), LeaderEpochEntry(1, 5)]
    assert c.pairs() == [(1, 6), (2, 10)]
    c = cache((0, 0), (1, 5), (2, 10))
    c.truncate_from_start(5)  # exclusive: an entry at exactly the new start stays (LEFC:363)
    assert c.pairs() == [(1, 5), (2, 10)]
    c = cache((0, 0), (1, 5), (2, 10))
    c.truncate_from_start(15)  # past every start: the latest epoch alone, from 15
    assert c.pairs() == [(2, 15)]
    c = cache((1, 5), (2, 10))
    assert c.truncate_from_start(3) == []  # nothing starts at or before 3
    assert c.pairs() == [(1, 5), (2, 10)]
    assert LeaderEpochCache().truncate_from_start(3) == []


def test_end_offset_for() -> None:
    c = cache((0, 0), (1, 5), (4, 12))
    leo = 14
    assert c.end_offset_for(UNDEFINED_EPOCH, leo) == (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)  # LEFC:290-293
    assert c.end_offset_for(4, leo) == (4, 14)  # the latest epoch: the log end offset (LEFC:294-299)
    assert c.end_offset_for(3, leo) == (1, 12)  # floor epoch 1, higher entry (4, 12) (LEFC:315-318)
    assert c.end_offset_for(1, leo) == (1, 12)
    assert c.end_offset_for(0, leo) == (0, 5)
    assert c.end_offset_for(5, leo) == (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)  # no higher entry (LEFC:302-305)
    # below every epoch: the requested epoch and the first higher entry's start (LEFC:308-314)
    assert cache((2, 5)).end_offset_for(1, 9) == (1, 5)
    assert LeaderEpochCache().end_offset_for(0, 9) == (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


def test_from_checkpoint_assigns_each_entry_and_leaves_out_negative_ones() -> None:
    entries = [LeaderEpochEntry(0, 0), LeaderEpochEntry(2, 10), LeaderEpochEntry(1, 20),
               LeaderEpochEntry(-1, 25), LeaderEpochEntry(3, -1)]
    # assign(0, 0); assign(2, 10); assign(1, 20) removes (2, 10) on its epoch; Kafka's assign would throw on
    # the last two (LEFC:127-129), the forensic reader leaves them out
    assert LeaderEpochCache.from_checkpoint(entries).pairs() == [(0, 0), (1, 20)]
    assert LeaderEpochCache.from_checkpoint(None).pairs() == []


def test_from_pairs_keeps_entries_as_given_and_clear_empties() -> None:
    c = cache((3, 0), (1, 5))  # a hand-written scenario cache need not be monotonic
    assert c.pairs() == [(3, 0), (1, 5)]
    assert c.latest_epoch() == 1
    c.clear()
    assert c.pairs() == [] and c.latest_entry() is None and c.latest_epoch() is None


@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 100)), max_size=30))
def test_assign_keeps_epochs_and_start_offsets_strictly_increasing(assigns: list[tuple[int, int]]) -> None:
    c = LeaderEpochCache()
    for epoch, start in assigns:
        c.assign(epoch, start)
        pairs = c.pairs()
        assert all(a[0] < b[0] and a[1] < b[1] for a, b in pairwise(pairs))
        assert c.latest_entry() is not None
