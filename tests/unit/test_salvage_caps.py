"""A salvage plan keeps counts, not lists, past a bound: offset gaps (a compacted partition has one between every
two batches) and the batches Kafka would refuse (a data batch inside its producer's open transaction). The
lists hold the first ones; the totals are exact, batch by batch and by columns alike."""

from __future__ import annotations

import numpy as np
import pytest

from kafkatool.engine import salvage as engine
from kafkatool.engine.salvage import Candidate, LogPlanner


def _candidate(base: int, pid: int = -1, attrs: int = 0) -> Candidate:
    return Candidate(0, base * 100, 100, base, base, 0, 0, 1, attrs, pid, 0 if pid >= 0 else -1,
                     base if pid >= 0 else -1, base if pid >= 0 else -1, 1000 + base)


def _columns(cands: list[Candidate]) -> dict[str, np.ndarray]:
    def col(f: str) -> np.ndarray:
        return np.asarray([getattr(c, f) for c in cands], dtype=np.int64)

    return {"position": col("position"), "size": col("size"), "base_offset": col("base_offset"),
            "last_offset": col("last_offset"), "last_offset_delta": col("last_offset") - col("base_offset"),
            "epoch": col("epoch"), "max_timestamp": col("max_timestamp"), "producer_id": col("producer_id"),
            "producer_epoch": col("producer_epoch"), "base_sequence": col("base_sequence"),
            "attributes": col("attributes")}


@pytest.mark.parametrize("by_columns", [False, True])
def test_gaps_and_refused_batches_are_counted_past_the_list(monkeypatch: pytest.MonkeyPatch,
                                                            by_columns: bool) -> None:
    monkeypatch.setattr(engine, "KEPT_GAPS", 5)
    monkeypatch.setattr(engine, "KEPT_INVALID", 3)
    monkeypatch.setattr(engine, "PLAIN_MIN_ROWS", 1)
    planner = LogPlanner()
    planner.add(_candidate(0, pid=7, attrs=0x10))  # producer 7 opens a transaction
    data = [_candidate(2 * k, pid=7 if k % 2 else -1) for k in range(1, 40)]  # a gap before each
    if by_columns:
        planner.add_plain(0, _columns(data))
    else:
        for c in data:
            planner.add(c)
    plan = planner.finish()
    assert plan.gaps == [(1, 1), (3, 3), (5, 5), (7, 7), (9, 9)]
    assert (plan.gaps_total, plan.gap_offsets) == (39, 39)
    refused = [c.base_offset for c in data if c.producer_id == 7]
    assert plan.invalid_txn == refused[:3] and plan.invalid_txn_total == len(refused) == 20
