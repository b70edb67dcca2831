"""The salvage planner's index state (``engine.salvage.IndexState``: entry counts, the last time entry, the bytes
since the last entry) decides where a segment rolls once an index is full. Planned by columns
(``LogPlanner.add_plain``, with its shortcut for rows that are each an entry, ``_each_an_entry``) it must end
exactly as :meth:`LogPlanner.add` leaves it batch by batch: checked here on random stretches, batch sizes around
``index.interval.bytes``, timestamps rising, falling and missing, and rolls by size."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkatool.engine.salvage import PLAIN_MIN_ROWS, LogPlanner

INTERVAL = 4096


def _columns(sizes: list[int], stamps: list[int]) -> dict[str, np.ndarray]:
    n = len(sizes)
    size = np.asarray(sizes, dtype=np.int64)
    base = np.arange(n, dtype=np.int64) * 2 + 10
    zeros = np.zeros(n, dtype=np.int64)
    return {"position": np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(size)[:-1]]), "size": size,
            "base_offset": base, "last_offset": base + 1, "last_offset_delta": zeros + 1, "epoch": zeros + 3,
            "max_timestamp": np.asarray(stamps, dtype=np.int64), "producer_id": zeros - 1,
            "producer_epoch": zeros - 1, "base_sequence": zeros - 1, "attributes": zeros,
            "records": zeros + 2}


def _states(planner: LogPlanner) -> list[tuple[int, ...]]:
    return [(s.base_offset, s.batches, s.indexes.index_count, s.indexes.time_count, s.indexes.last_time,  # type: ignore[union-attr]
             s.indexes.since_index, s.indexes.size, s.indexes.max_ts, s.indexes.max_ts_offset)  # type: ignore[union-attr]
            for s in planner.segments]


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from([61, 900, 4095, 4096, 4097, 9000, 16_400]),
                               st.integers(-1, 40)), min_size=PLAIN_MIN_ROWS, max_size=400),
       big_from=st.integers(0, 400), segment_kib=st.sampled_from([64, 512, 1 << 20]),
       split=st.integers(0, 400))
def test_stretches_leave_the_index_state_as_batch_by_batch(rows: list[tuple[int, int]], big_from: int,
                                                          segment_kib: int, split: int) -> None:
    sizes = [s if i < big_from else max(s, INTERVAL + 1) for i, (s, _) in enumerate(rows)]  # a tail of big rows
    stamps = [t * 100 if t >= 0 else -1 for _, t in rows]
    cols = _columns(sizes, stamps)
    plain = LogPlanner(segment_bytes=segment_kib << 10, index_interval_bytes=INTERVAL)
    cut = min(split, len(sizes))
    for lo, hi in ((0, cut), (cut, len(sizes))):  # two stretches: the state carries from one to the next
        plain.add_plain(0, {k: v[lo:hi] for k, v in cols.items()})
    each = LogPlanner(segment_bytes=segment_kib << 10, index_interval_bytes=INTERVAL)
    each._add_rows(0, cols, 0, len(sizes))
    assert _states(plain) == _states(each)
