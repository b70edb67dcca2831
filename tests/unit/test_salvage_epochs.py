"""Salvage never writes a log whose leader epochs fall along its offsets (``rising_epochs``): Kafka's
``LeaderEpochFileCache.assign`` would truncate its cache on load (seen live: tests/kafka/salvage.py, unclean kind,
4.4.0 seed 3352, the old leader's epoch-0 suffix after the new leader's epoch-2 batches)."""

from __future__ import annotations

from kafkatool.engine.salvage import Candidate, LogPlanner, Run, SourceInfo, rising_epochs, select
from kafkatool.model import LeaderEpochEntry


def _batch(source: int, base: int, last: int, epoch: int) -> Candidate:
    return Candidate(source=source, position=base * 100, size=100, base_offset=base, last_offset=last, epoch=epoch,
                     crc=base * 7 + epoch, records=last - base + 1, attributes=0, producer_id=-1, producer_epoch=-1,
                     base_sequence=-1, last_sequence=-1, max_timestamp=base)


def _run(c: Candidate, lineage: bool) -> Run:
    return Run.starting(c, lineage)


def test_an_older_epoch_after_a_newer_one_is_left_out_and_named() -> None:
    new_leader = [_batch(0, 0, 9, 0), _batch(0, 10, 14, 2)]  # elected uncleanly at 10 (epoch 2)
    old_leader = [_batch(1, 0, 9, 0), _batch(1, 10, 19, 0), _batch(1, 20, 29, 0)]  # its diverged epoch-0 suffix
    sources = [SourceInfo(None, "segment", 0), SourceInfo(1, "segment", 0)]
    cache = [LeaderEpochEntry(0, 0), LeaderEpochEntry(2, 10)]
    batches = new_leader + old_leader
    runs = [_run(c, lineage=c.source == 0 or c.base_offset < 10) for c in batches]  # one run a batch: the worst case

    def expand(r: Run) -> list[Candidate]:
        return [c for c in batches if c.source == r.source and r.position <= c.position < r.end]

    sel = select(runs, sources, cache, None, expand)
    assert [(r.source, r.base_offset) for r in sel.chosen] == [(0, 0), (0, 10)]
    assert [(r.source, r.base_offset) for r in sel.rejected] == [(1, 20)]
    assert "epoch 0 below epoch 2" in sel.rejected[0].reason
    planner = LogPlanner()
    for r in sel.chosen:
        for c in expand(r):
            planner.add(c)
    assert [(e.epoch, e.start_offset) for e in planner.finish().epochs] == [(0, 0), (2, 10)]


def test_rising_and_equal_epochs_are_all_kept() -> None:
    runs = [_run(c, True) for c in (_batch(0, 0, 4, 0), _batch(1, 5, 9, 0), _batch(0, 10, 14, 3),
                                    _batch(1, 15, 19, 3), _batch(0, 20, 20, -1))]
    kept, left = rising_epochs(runs)
    assert kept == runs and left == []
