"""``engine.salvage.select`` takes runs of batches (to hold a handful of objects for millions of batches) and must
choose exactly what ranking every batch on its own chooses: checked against that batch-by-batch choice, written
here from the rule (``KIND_RANK``, lineage, epoch, preferred replica, file, position), on random copies of a
partition that overlap, diverge and leave holes. Also the streaming planner's index counts against the indexes
the writer rebuilds for the same batches."""

from __future__ import annotations

import itertools
import random
from bisect import bisect_right, insort

import pytest

from kafkatool.engine.salvage import (
    KIND_RANK,
    Candidate,
    FileOrder,
    IndexState,
    LogPlanner,
    Run,
    SourceInfo,
    consistent_in_file,
    on_lineage,
    segment_indexes,
    select,
)
from kafkatool.model import LeaderEpochEntry


def _reference(batches: list[Candidate], sources: list[SourceInfo], cache: list[LeaderEpochEntry] | None,
               preferred: int | None) -> tuple[list[tuple[int, int]], int, int]:
    """Every batch ranked on its own, best first; one that meets a chosen batch is left out (a duplicate when it
    is the very batch); then one whose epoch falls below an earlier chosen batch's. The chosen (source, position)
    in offset order, the duplicates and the other overlaps."""
    def rank(c: Candidate) -> tuple[int, ...]:
        info = sources[c.source]
        lineage = 0 if cache and on_lineage(cache, c.epoch, c.base_offset, c.last_offset) else 1
        return (lineage, -c.epoch, KIND_RANK.get(info.kind, 9), 0 if info.replica == preferred else 1, c.source,
                c.position)

    starts: list[int] = []
    by_start: dict[int, Candidate] = {}
    dup = other = 0
    for c in sorted(batches, key=rank):
        i = bisect_right(starts, c.last_offset) - 1
        hit = []
        while i >= 0 and by_start[starts[i]].last_offset >= c.base_offset:
            hit.append(by_start[starts[i]])
            i -= 1
        if hit:
            if len(hit) == 1 and (hit[0].base_offset, hit[0].last_offset, hit[0].crc) == \
                    (c.base_offset, c.last_offset, c.crc):
                dup += 1
            else:
                other += 1
            continue
        insort(starts, c.base_offset)
        by_start[c.base_offset] = c
    kept, top = [], -1  # then the batches whose epoch falls below an earlier chosen one's are left out
    for c in (by_start[s] for s in starts):
        if 0 <= c.epoch < top:
            continue
        top = max(top, c.epoch)
        kept.append((c.source, c.position))
    return kept, dup, other


def _copies(rng: random.Random) -> tuple[list[list[Candidate]], list[SourceInfo]]:
    """A few files holding batches of one partition: copies of a common history, some diverging (other epochs,
    other batch boundaries), some with holes (damage, compaction)."""
    files: list[list[Candidate]] = []
    sources: list[SourceInfo] = []
    n_files = rng.randint(1, 5)
    for k in range(n_files):
        kind = rng.choice(list(KIND_RANK))
        sources.append(SourceInfo(rng.choice([None, 1, 2, 3]), kind, 0))
        out: list[Candidate] = []
        offset, pos, epoch = rng.randint(0, 20), 0, rng.randint(0, 2)
        for _ in range(rng.randint(0, 60)):
            if rng.random() < 0.1:
                epoch += 1
            if rng.random() < 0.15:
                offset += rng.randint(1, 8)  # a hole
            if rng.random() < 0.1:
                pos += rng.randint(1, 50)  # bytes left out (a damaged batch)
            width = rng.choice([1, 1, 2, 3]) if k % 2 else 1  # odd files cut batches differently
            size = 70 + width
            crc = (offset * 31 + width) if rng.random() < 0.9 else rng.randint(0, 1 << 30)
            out.append(Candidate(k, pos, size, offset, offset + width - 1, epoch, crc, width, 0, -1, -1, -1, -1,
                                 1000 + offset))
            offset += width
            pos += size
        files.append(out)
    return files, sources


def _runs(k: int, batches: list[Candidate], cache: list[LeaderEpochEntry] | None) -> list[Run]:
    """Runs as the analysis builds them: contiguous bytes, one epoch, one lineage verdict."""
    out: list[Run] = []
    for c in batches:
        lin = bool(cache) and on_lineage(cache or [], c.epoch, c.base_offset, c.last_offset)
        r = out[-1] if out else None
        if r is not None and r.end == c.position and r.epoch == c.epoch and r.lineage == lin:
            r.end, r.last_offset, r.batches, r.records = c.position + c.size, c.last_offset, r.batches + 1, \
                r.records + c.records
        else:
            out.append(Run(k, c.position, c.position + c.size, c.base_offset, c.last_offset, c.epoch, 1, c.records,
                           lin))
    return out


@pytest.mark.parametrize("seed", range(300))
def test_runs_choose_what_batches_ranked_one_by_one_choose(seed: int) -> None:
    rng = random.Random(seed)
    files, sources = _copies(rng)
    cache = None
    if rng.random() < 0.6:
        cache = [LeaderEpochEntry(e, s) for e, s in ((0, 0), (1, rng.randint(5, 40)), (3, rng.randint(41, 120)))]
    preferred = rng.choice([None, 1, 2])
    runs = [r for k, batches in enumerate(files) for r in _runs(k, batches, cache)]

    def expand(r: Run) -> list[Candidate]:
        return [c for c in files[r.source] if r.position <= c.position < r.end]

    sel = select(runs, sources, cache, preferred, expand)
    chosen = [(c.source, c.position) for r in sel.chosen for c in expand(r)]
    want, dup, other = _reference([c for f in files for c in f], sources, cache, preferred)
    assert chosen == want
    assert (sel.duplicates, len(sel.overlaps)) == (dup, other)
    offsets = [c.base_offset for r in sel.chosen for c in expand(r)]
    assert offsets == sorted(offsets)


def test_planner_counts_the_indexes_the_writer_builds() -> None:
    """The planner rolls a segment on its index counts; the writer rebuilds the entries from the same batches
    (:class:`IndexState` for both): counts and entries agree, and the offset index grows every interval."""
    rng = random.Random(7)
    batches = []
    pos = 0
    for offset in range(5000):
        size = rng.choice([80, 300, 5000])
        batches.append(Candidate(0, pos, size, offset, offset, 0, 0, 1, 0, -1, -1, -1, -1,
                                 1_700_000_000_000 + rng.randint(-5, 50) + offset))
        pos += size
    planner = LogPlanner(segment_bytes=1 << 20, index_interval_bytes=4096, segment_index_bytes=1200)
    counted: list[tuple[int, int]] = []
    for c in batches:
        before = planner.seg
        planner.add(c)
        if before is not None and planner.seg is not before:
            counted.append((before.indexes.index_count, before.indexes.time_count))  # type: ignore[union-attr]
    last = planner.seg.indexes  # type: ignore[union-attr]
    last.time_entry()
    counted.append((last.index_count, last.time_count))
    plan = planner.finish()
    assert len(plan.segments) == len(counted) > 2
    built: list[tuple[int, int]] = []
    for seg in plan.segments:
        inside = [c for c in batches if seg.base_offset <= c.base_offset <= seg.last_offset]
        state: IndexState = segment_indexes(((c.size, c.last_offset, c.max_timestamp) for c in inside), 4096)
        index, times = list(state.index_entries()), list(state.time_entries())
        built.append((len(index), len(times)))
        assert sum(c.size for c in inside) == seg.size
        assert [e.offset for e in index] == sorted(e.offset for e in index) and \
            [e.timestamp for e in times] == sorted(e.timestamp for e in times)
    assert built == counted


def test_identical_copies_stay_one_run_each_duplicate_counted() -> None:
    """Three replicas holding the same 10,000 batches: one run chosen, 20,000 duplicates counted, nothing held
    per batch (the choice walks the copies side by side)."""
    batch = [Candidate(0, 80 * i, 80, i, i, 5, i * 7, 1, 0, -1, -1, -1, -1, i) for i in range(10_000)]
    files = [[Candidate(k, c.position, c.size, c.base_offset, c.last_offset, c.epoch, c.crc, 1, 0, -1, -1, -1, -1,
                        c.max_timestamp) for c in batch] for k in range(3)]
    sources = [SourceInfo(k + 1, "segment", 0) for k in range(3)]
    runs = [r for k, f in enumerate(files) for r in _runs(k, f, None)]
    assert len(runs) == 3
    sel = select(runs, sources, None, 2, lambda r: (c for c in files[r.source] if r.position <= c.position < r.end))
    assert [(r.source, r.batches) for r in sel.chosen] == [(1, 10_000)]
    assert sel.duplicates == 20_000 and not sel.overlaps


@pytest.mark.parametrize("seed", range(50))
def test_file_order_decided_a_window_at_a_time_is_decided_whole(seed: int) -> None:
    """``consistent_in_file`` over a file's batches in windows (each but the last holding back its last batch as
    the next one's lookahead, as the scan feeds it) keeps and rejects exactly what one call over all keeps."""
    rng = random.Random(seed)
    rows, offset = [], 10
    for i in range(rng.randint(1, 200)):
        width = rng.randint(1, 3)
        base = offset if rng.random() > 0.1 else rng.randint(0, offset + 5)  # a damaged base offset field
        rows.append((i * 100, base, base + width - 1))
        offset += width
    whole_kept, whole_rej = consistent_in_file(0, rows, FileOrder(10, 9))
    order, kept, rej, start = FileOrder(10, 9), [], [], 0
    while start < len(rows):
        end = min(len(rows), start + rng.randint(1, 20))
        window = rows[start:end + 1]  # one batch past the window: the lookahead
        last_window = end >= len(rows)
        k, r = consistent_in_file(0, window, order, None if last_window else end - start)
        kept += [start + i for i in k]
        rej += r
        start = end
    assert kept == whole_kept and rej == whole_rej
    assert any(rej) or all(b > a for (_, _, a), (_, b, _) in itertools.pairwise(rows))
