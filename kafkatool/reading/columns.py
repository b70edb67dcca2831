"""A segment's batch headers as numpy columns, CRC-checked, in bounded memory: the fast scan of a ``.log``.

Kafka's ``LogSegment.recover`` reads a segment batch by batch and checks each CRC; this does the same over a
read-only mapping without a Python object per batch (:mod:`kafkatool.schema.batch_columns`), handing any
damage to the resilient walker so defects are exactly those of ``dump-segment --verify``. Mapped pages are
released behind the cursor every :data:`CHUNK` bytes, so a 1 GiB segment is scanned in well under 150 MB of
resident memory. On request (``threads``), the CRCs of big batches are computed by threads with the GIL
released (crc32c's C loop); on the shared 2-core machine kind the single-threaded loop measured faster, so it
is the default. :func:`scan_segment_parallel` splits a file between processes.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kafkatool.model import Defect, LegacyBatch, RecordBatch
from kafkatool.reading.files import mapped
from kafkatool.schema import batch_columns as bc
from kafkatool.schema import record_batch as rb
from kafkatool.schema.log_segment import find_next_batch, walk_log

CHUNK = 64 << 20  # pages are released behind the cursor at this interval
CRC_THREADS = 2
THREADED_MIN_BATCH = 4096  # average batch size from which CRCs go to threads (below, call overhead dominates)


@dataclass
class SegmentColumns:
    """The magic 2 batches of a segment (or of the batches starting in a byte range) as columns.

    ``headers`` is a structured array of :data:`~kafkatool.schema.record_batch.BATCH_HEADER`'s fields, in file
    order, with ``positions`` beside it; ``crc_valid`` is ``None`` when CRCs were not checked. Legacy
    (magic 0/1) entries are kept as objects in ``legacy``; ``defects`` are the walker's, in file order;
    ``landing`` is where the chain of entries crossed the range's end (the file size at the end).
    """

    positions: np.ndarray
    headers: np.ndarray
    crc_valid: np.ndarray | None
    legacy: list[LegacyBatch] = field(default_factory=list)
    defects: list[Defect] = field(default_factory=list)
    landing: int = 0
    size: int = 0

    def __len__(self) -> int:
        return len(self.positions)

    @property
    def bytes_scanned(self) -> int:
        """Bytes of the batches listed (their ``batch_length`` plus the 12-byte prefix)."""
        return int(self.headers["batch_length"].sum()) + rb.LOG_OVERHEAD * len(self)

    def batches(self) -> Iterator[RecordBatch]:
        """The rows as :class:`RecordBatch` objects (for code that wants objects; the columns stay the source)."""
        cols = [self.headers[name].tolist() for name in rb.FIELD_NAMES]
        valid = self.crc_valid.tolist() if self.crc_valid is not None else [None] * len(self)
        for pos, ok, *fields in zip(self.positions.tolist(), valid, *cols, strict=True):
            yield RecordBatch(pos, *fields, crc_valid=ok)


def release(buf: Any, start: int, end: int) -> None:
    """Drop a read-only mapping's pages in ``[start, end)`` from the process (they stay in the page cache)."""
    if not isinstance(buf, mmap.mmap) or end <= start:
        return
    first = start - start % mmap.PAGESIZE
    with suppress(OSError, ValueError):
        buf.madvise(mmap.MADV_DONTNEED, first, end - first)


def _crc_pass(buf: Any, positions: list[int], heads: np.ndarray, pool: ThreadPoolExecutor | None,
              parts: int = CRC_THREADS) -> list[int]:
    """CRC-check the batches at ``positions`` (headers ``heads``): in ``pool``'s threads (GIL released) or inline."""
    if not positions:
        return []
    lengths, stored = heads["batch_length"].tolist(), heads["crc"].tolist()
    if pool is None:
        return bc.crc_failures(buf, positions, lengths, stored, release_gil=False)
    step = -(-len(positions) // parts)
    done = [pool.submit(bc.crc_failures, buf, positions[i:i + step], lengths[i:i + step], stored[i:i + step])
            for i in range(0, len(positions), step)]
    return [pos for part in done for pos in part.result()]


def scan_buffer(buf: Any, file: str, *, verify_crc: bool = True, start: int = 0, stop: int | None = None,
                threads: int | None = None, max_output: int | None = None, path: str | None = None) -> SegmentColumns:
    """The batches of ``buf`` that start in ``[start, stop)`` as columns, with the walker's defects.

    ``threads`` (default none) computes the CRCs of big batches in that many GIL-free threads; ``max_output``
    is the read's decompression cap (legacy wrappers are inflated for their offsets). With the native core
    (:func:`kafkatool.schema.native.core`), clean runs are walked by it: from ``path`` (the file ``buf`` maps,
    read in bounded chunks) or from ``buf`` itself when it is ``bytes``; ``threads`` is then not needed.
    """
    size = len(buf)
    stop = size if stop is None else min(stop, size)
    parts: list[np.ndarray] = []  # the positions, a run at a time
    bad: list[int] = []
    legacy: list[LegacyBatch] = []
    defects: list[Defect] = []
    heads: list[np.ndarray] = []
    pos = start
    pool: ThreadPoolExecutor | None = None
    walk = _native_walk(buf, path)
    try:
        while pos < stop:
            # the native walk touches no mapped page: one call over the whole range
            chunk_end = stop if walk is not None else min(stop, pos + CHUNK)
            first_bad = len(bad)
            if walk is not None:
                # the native twin of scan_chain (kafkatool._native.walk_*): the same stop, columns and bad CRCs
                found, raw, bad_found, reached = walk(pos, size, chunk_end, verify_crc)
                parts.append(found)
                heads.append(raw.view(bc.native_header_dtype()))
                bad.extend(bad_found.tolist())
            else:
                run: list[int] = []
                two_pass = verify_crc and bool(threads) and _batch_length(buf, pos, size) >= THREADED_MIN_BATCH
                reached = bc.scan_chain(buf, pos, size, chunk_end, verify_crc and not two_pass, run, bad)
                parts.append(np.asarray(run, dtype=np.int64))
                heads.append(bc.gather_headers(buf, parts[-1]))
                if two_pass:
                    if pool is None:
                        pool = ThreadPoolExecutor(threads)
                    bad.extend(_crc_pass(buf, run, heads[-1], pool, threads or CRC_THREADS))
            defects.extend(_crc_defect(buf, file, p) for p in bad[first_bad:])
            release(buf, start, min(reached, chunk_end))
            pos = reached
            if pos >= chunk_end:
                continue
            # Not a clean magic 2 batch: the resilient walker reports it and finds where to go on.
            nxt = size
            for item in walk_log(buf, file, verify_crc=verify_crc, start=pos, max_output=max_output):
                if isinstance(item, Defect):
                    defects.append(item)
                    continue
                nxt = item.position + item.size_in_bytes
                if item.position >= stop:
                    nxt = item.position
                elif isinstance(item, RecordBatch):
                    parts.append(np.asarray([item.position], dtype=np.int64))
                    heads.append(bc.gather_headers(buf, parts[-1]))
                    if item.crc_valid is False:
                        bad.append(item.position)
                else:
                    legacy.append(item)
                break
            if nxt <= pos:
                break
            pos = nxt
    finally:
        if pool is not None:
            pool.shutdown()
    arr = _joined(parts) if parts else np.zeros(0, dtype=np.int64)
    headers = _joined(heads) if heads else bc.gather_headers(buf, arr)
    valid = None
    if verify_crc:
        valid = np.ones(len(arr), dtype=bool)
        if bad:
            valid = ~np.isin(arr, np.asarray(bad, dtype=np.int64))
    release(buf, start, min(pos, size))
    return SegmentColumns(arr, headers, valid, legacy, defects, landing=min(pos, size), size=size)


def _joined(runs: list[np.ndarray]) -> np.ndarray:
    """The runs' rows in one array, as ``np.concatenate`` makes it (fields in the machine's byte order); a single
    run already so (the native walk's) is kept as it is: no copy of a big segment's columns."""
    if len(runs) == 1 and runs[0].dtype == np.concatenate([runs[0][:0]]).dtype:
        return runs[0]
    return np.concatenate(runs)


def _native_walk(buf: Any, path: str | None) -> Callable[[int, int, int, bool], tuple[Any, Any, Any, int]] | None:
    """The native clean-run walk over ``path`` (the file ``buf`` maps) or over ``buf`` when it is ``bytes``:
    ``(pos, limit, stop, verify) -> (positions, raw headers, bad CRC positions, reached)``; None without it."""
    from kafkatool.schema.native import core

    native = core()
    if native is None:
        return None
    if isinstance(buf, bytes):
        return lambda pos, limit, stop, verify: native.walk_bytes(buf, pos, limit, stop, verify)  # type: ignore[no-any-return]
    if path is not None and isinstance(buf, mmap.mmap):
        name = os.fspath(path)
        return lambda pos, limit, stop, verify: native.walk_path(name, pos, limit, stop, verify)  # type: ignore[no-any-return]
    return None


def _crc_defect(buf: Any, file: str, pos: int) -> Defect:
    """The walker's CRC defect for the magic 2 batch at ``pos``."""
    head = rb.parse_batch_header(buf, pos)
    return Defect("crc-mismatch", file, pos, "crc",
                  f"stored CRC {head.crc} does not match the bytes (entry at offset {head.last_offset}); "
                  "Kafka's recovery truncates the segment here")


def _batch_length(buf: Any, pos: int, size: int) -> int:
    """The length of the batch at ``pos`` (a cheap guess of the segment's batch size)."""
    if size - pos < rb.ATTRIBUTES_OFFSET:
        return 0
    return bc.CHAIN_STRUCT.unpack_from(buf, pos + bc.CHAIN_AT)[0]


def scan_segment(path: str | Path, *, verify_crc: bool = True, start: int = 0, stop: int | None = None,
                 threads: int | None = None, label: str | None = None) -> SegmentColumns:
    """Map ``path`` read-only and scan it (see :func:`scan_buffer`); ``label`` names it in defects."""
    with mapped(path) as buf:
        return scan_buffer(buf, label if label is not None else str(path), verify_crc=verify_crc, start=start,
                           stop=stop, threads=threads, path=str(path))


def split_ranges(path: str | Path, parts: int) -> list[tuple[int, int]]:
    """Cut a segment into ``parts`` byte ranges at confirmed batch starts (resync search from each cut)."""
    with mapped(path) as buf:
        size = len(buf)
        cuts = [0]
        for k in range(1, parts):
            at = find_next_batch(buf, max(cuts[-1] + 1, size * k // parts), size)
            if at is None:
                break
            cuts.append(at)
        release(buf, 0, size)
    return [(a, b) for a, b in zip(cuts, [*cuts[1:], size], strict=True) if a < b]


def _scan_part(args: tuple[str, bool, int, int, str]) -> SegmentColumns:
    path, verify, start, stop, label = args
    return scan_segment(path, verify_crc=verify, start=start, stop=stop, threads=0, label=label)


def scan_segment_parallel(path: str | Path, *, jobs: int | None = None, verify_crc: bool = True,
                          label: str | None = None) -> SegmentColumns:
    """:func:`scan_segment` with the file split between ``jobs`` processes (default: one per CPU).

    Each range is cut at a batch start confirmed by CRC and chained headers; a range whose predecessor's chain
    does not land exactly on its start (a record value that itself looks like batches) is rescanned from the
    landing, so the result always equals the single-process scan.
    """
    import multiprocessing

    name = label if label is not None else str(path)
    jobs = jobs or os.cpu_count() or 1
    ranges = split_ranges(path, jobs)
    if len(ranges) <= 1:
        return scan_segment(path, verify_crc=verify_crc, label=name)
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(len(ranges)) as pool:
        parts = pool.map(_scan_part, [(str(path), verify_crc, a, b, name) for a, b in ranges])
    merged = [parts[0]]
    for (start, stop), part in zip(ranges[1:], parts[1:], strict=True):
        landing = merged[-1].landing
        if landing != start:
            part = scan_segment(path, verify_crc=verify_crc, start=landing, stop=stop, label=name)
        merged.append(part)
    return _concat(merged)


def _concat(parts: list[SegmentColumns]) -> SegmentColumns:
    valid = None if parts[0].crc_valid is None else np.concatenate([p.crc_valid for p in parts])  # type: ignore[misc]
    return SegmentColumns(np.concatenate([p.positions for p in parts]), np.concatenate([p.headers for p in parts]),
                          valid, [e for p in parts for e in p.legacy], [d for p in parts for d in p.defects],
                          landing=parts[-1].landing, size=parts[-1].size)
