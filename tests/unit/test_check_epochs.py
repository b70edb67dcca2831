"""``check``'s leader-epoch-checkpoint rules against the batches' own epochs (``engine.check._check_epochs``):
the findings of the vectorised check equal those of a plain per-batch reading of the rule (each epoch's first
batch whose covering checkpoint entry, Kafka's ``LeaderEpochFileCache.epochForOffset`` floor, names another
epoch), on ordered and unordered checkpoints."""

from __future__ import annotations

from bisect import bisect_right
from pathlib import Path

import pytest

from kafkatool.engine.check import check_log_dir
from kafkatool.model import LeaderEpochEntry
from kafkatool.reading.logdir import read_log_dir
from kafkatool.schema import checkpoint
from kafkatool.schema.filenames import LEADER_EPOCH_CHECKPOINT
from kafkatool.writing.atomic import write_tree
from kafkatool.writing.fixture_writer import LogDir, PartitionWriter, TopicConfig


def _log_dir(root: Path, epochs: list[int]) -> Path:
    part = PartitionWriter("ep", 0, config=TopicConfig(segment_bytes=4096))
    for i, epoch in enumerate(epochs):
        part.append([b"v%d" % i] * 3, leader_epoch=epoch)
    part.close()
    write_tree(LogDir([part]).files(), root)
    return root


def _expected(batches: list[tuple[int, int]], entries: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(offset, epoch) of each epoch's first batch the checkpoint covers with another epoch."""
    starts = [s for _, s in entries]
    out, seen = [], set()
    for offset, epoch in batches:
        if epoch in seen:
            continue
        if starts == sorted(starts):
            k = bisect_right(starts, offset)
            cover = entries[k - 1] if k else None
        else:
            cover = next((e for e in reversed(entries) if e[1] <= offset), None)
        if cover is not None and cover[0] != epoch:
            seen.add(epoch)
            out.append((offset, epoch))
    return out


@pytest.mark.parametrize("entries", [
    [(1, 0), (2, 30), (5, 60)],            # as written: no finding
    [(1, 0), (2, 27), (5, 60)],            # epoch 2 starts 3 offsets early: epoch 1's last batch is "in 2"
    [(1, 0), (3, 30), (5, 60)],            # epoch 2 missing from the checkpoint
    [(1, 6), (2, 30), (5, 60)],            # the first batches below the first entry: not evidence
    [(2, 0), (1, 30), (5, 60)],            # epochs out of order (reported as such too)
    [(1, 0), (5, 60), (2, 30)],            # start offsets out of order: the per-batch path
])
def test_leader_epoch_mismatches_are_the_rules(tmp_path: Path, entries: list[tuple[int, int]]) -> None:
    epochs = [1] * 10 + [2] * 10 + [5] * 10  # 3 records a batch: epoch 2 from offset 30, 5 from 60
    log_dir = _log_dir(tmp_path / "d", epochs)
    (log_dir / "ep-0" / LEADER_EPOCH_CHECKPOINT).write_bytes(checkpoint.build_leader_epoch_checkpoint(
        [LeaderEpochEntry(e, s) for e, s in entries]))
    data = read_log_dir(log_dir)
    got = [d for d in check_log_dir(data) if d.code == "leader-epoch-mismatch"]
    batches = [(3 * i, e) for i, e in enumerate(epochs)]
    want = _expected(batches, entries)
    assert [(d.field, f"batch at offset {o} was written in epoch {e}" in d.reason) for d, (o, e) in
            zip(got, want, strict=True)] == [(f"epoch {e}", True) for _, e in want]
    assert len(got) == len(want)
    assert bool(want) == (entries != [(1, 0), (2, 30), (5, 60)] and entries != [(1, 6), (2, 30), (5, 60)])
