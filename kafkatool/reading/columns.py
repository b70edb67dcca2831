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
from kafkatool.schema import legacy as lg
from kafkatool.schema import record_batch as rb
from kafkatool.schema.codecs import DEFAULT_MAX_OUTPUT
from kafkatool.schema.log_segment import find_next_batch, read_entry_at, walk_log

CHUNK = 64 << 20  # pages are released behind the cursor at this interval
CRC_THREADS = 2
THREADED_MIN_BATCH = 4096  # average batch size from which CRCs go to threads (below, call overhead dominates)


LEGACY_DTYPES: dict[str, Any] = {
    "position": np.int64, "offset": np.int64, "message_size": np.int32, "crc": np.uint32, "magic": np.int8,
    "attributes": np.int8, "timestamp": np.int64, "key_length": np.int32, "value_length": np.int32,
    "crc_valid": np.bool_, "inner_first": np.int64, "inner_count": np.int64,
}
"""The legacy columns and their dtypes: the fields of the native walk's ``LegacyColumns`` (``walk.rs``), which
``kafkatool._native.walk_entries_*`` return by name; :meth:`LegacyColumns.rows` gives them in this order."""


@dataclass
class LegacyColumns:
    """Legacy (magic 0/1) entries as columns, in file order: the fields of ``legacy.parse_legacy_entry``'s
    :class:`LegacyBatch` (Kafka's ``LegacyRecord`` in a ``FileLogInputStream`` entry) with the key and value as
    lengths (-1: null; the bytes stay in the file), ``timestamp`` -1 for magic 0 (which has none), and a compressed
    wrapper's inner span (``inner_count`` 0: none; -1: not in the columns, the entry is read again for it: the
    native walk leaves it to the Python path, :meth:`resolve_spans`, and a span past int64 stays so)."""

    cols: dict[str, np.ndarray]

    @classmethod
    def empty(cls) -> LegacyColumns:
        """No entries."""
        return cls({name: np.zeros(0, dtype=dtype) for name, dtype in LEGACY_DTYPES.items()})

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> LegacyColumns:
        """The native walk's dict of arrays (the fields of :data:`LEGACY_DTYPES`, in those dtypes)."""
        return cls({name: arrays[name] for name in LEGACY_DTYPES})

    @classmethod
    def from_entries(cls, entries: list[LegacyBatch]) -> LegacyColumns:
        """Entries the Python walker read, as columns."""
        def length(b: bytes | None) -> int:
            return -1 if b is None else len(b)

        rows = [(e.position, e.offset, e.message_size, e.crc, e.magic, e.attributes, e.max_timestamp, length(e.key),
                 length(e.value), bool(e.crc_valid), *_span_cell(e.inner_span)) for e in entries]
        values = list(zip(*rows, strict=True)) if rows else [()] * len(LEGACY_DTYPES)
        return cls({name: np.asarray(v, dtype=dtype) for (name, dtype), v in zip(LEGACY_DTYPES.items(), values,
                                                                              strict=True)})

    @classmethod
    def concat(cls, parts: list[LegacyColumns]) -> LegacyColumns:
        """The parts' rows one after the other."""
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return cls.empty()
        return cls({name: np.concatenate([p.cols[name] for p in parts]) for name in LEGACY_DTYPES})

    def __len__(self) -> int:
        return len(self.cols["position"])

    def __getitem__(self, name: str) -> np.ndarray:
        return self.cols[name]

    def rows(self) -> list[tuple[Any, ...]]:
        """Every entry's values (:data:`LEGACY_DTYPES`' order) as Python tuples."""
        return list(zip(*(self.cols[name].tolist() for name in LEGACY_DTYPES), strict=True))

    def resolve_spans(self, buf: Any, max_output: int | None) -> None:
        """Compute the inner spans the native walk left to the Python path (``inner_count`` -1: an lz4 wrapper, a
        payload the native codecs hand back) as ``log_segment._read_legacy`` does, in place."""
        count = self.cols["inner_count"]
        todo = np.flatnonzero(count < 0).tolist()
        if not todo:
            return
        first = self.cols["inner_first"]
        for k in todo:
            entry = read_entry_at(buf, int(self.cols["position"][k]), max_output=max_output)
            assert isinstance(entry, LegacyBatch)
            first[k], count[k] = _span_cell(entry.inner_span)

    def base_offsets(self) -> np.ndarray:
        """Kafka's ``baseOffset()`` of each entry (``AbstractLegacyRecordBatch``): a wrapper's first inner offset
        where known, else the stored offset (a row whose span is not in the columns, ``inner_count`` -1, is the
        caller's to read: :meth:`entries`)."""
        return np.where(self.cols["inner_count"] > 0, self.cols["inner_first"], self.cols["offset"])

    def entries(self, buf: Any, max_output: int | None = None) -> list[LegacyBatch]:
        """The rows as :class:`LegacyBatch` objects, key and value read from ``buf`` (the scanned file's bytes), for
        callers that want objects; the columns stay the source (a span not in them is read with ``max_output``)."""
        out: list[LegacyBatch] = []
        for (pos, offset, size, crc, magic, attrs, ts, klen, vlen, ok, first, count) in self.rows():
            if count < 0:
                entry = read_entry_at(buf, pos, max_output=max_output)
                assert isinstance(entry, LegacyBatch)
                entry.crc_valid = ok
                out.append(entry)
                continue
            # the key follows its length field; the value length field follows the key
            key_at = pos + rb.LOG_OVERHEAD + (lg.RECORD_OVERHEAD_V1 if magic == 1 else lg.RECORD_OVERHEAD_V0) \
                - lg.LENGTH.size
            key = None if klen < 0 else bytes(buf[key_at:key_at + klen])
            value_at = key_at + max(klen, 0) + lg.LENGTH.size
            value = None if vlen < 0 else bytes(buf[value_at:value_at + vlen])
            out.append(LegacyBatch(pos, offset, size, crc, magic, attrs, ts if magic == 1 else None, key, value, ok,
                                   inner_span=(first, count) if count else None))
        return out


@dataclass
class SegmentColumns:
    """The magic 2 batches of a segment (or of the batches starting in a byte range) as columns.

    ``headers`` is a structured array of :data:`~kafkatool.schema.record_batch.BATCH_HEADER`'s fields, in file
    order, with ``positions`` beside it; ``crc_valid`` is ``None`` when CRCs were not checked. Legacy
    (magic 0/1) entries are columns of their own in ``legacy`` (:class:`LegacyColumns`, positions beside them to
    merge the two in file order); ``defects`` are the walker's, in file order;
    ``landing`` is where the chain of entries crossed the range's end (the file size at the end).
    """

    positions: np.ndarray
    headers: np.ndarray
    crc_valid: np.ndarray | None
    legacy: LegacyColumns = field(default_factory=LegacyColumns.empty)
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
    legacy: list[LegacyColumns] = []  # a run at a time
    walked: list[LegacyBatch] = []  # the Python walker's legacy entries (since the last run)
    defects: list[Defect] = []
    heads: list[np.ndarray] = []
    pos = start
    pool: ThreadPoolExecutor | None = None
    walk = _native_walk(buf, path, DEFAULT_MAX_OUTPUT if max_output is None else max_output)
    try:
        while pos < stop:
            # the native walk touches no mapped page: one call over the whole range
            chunk_end = stop if walk is not None else min(stop, pos + CHUNK)
            first_bad = len(bad)
            if walk is not None:
                # the native walk (kafkatool._native.walk_entries_*): scan_chain's stop, columns and bad CRCs, and
                # the legacy entries the Python walker would read, as columns
                found, raw, bad_found, legacy_found, reached = walk(pos, size, chunk_end, verify_crc)
                parts.append(found)
                heads.append(raw.view(bc.native_header_dtype()))
                bad.extend(bad_found.tolist())
                run_legacy = LegacyColumns.from_arrays(legacy_found)
                if len(run_legacy):
                    run_legacy.resolve_spans(buf, max_output)
                    _flush(legacy, walked)
                    legacy.append(run_legacy)
            else:
                run_legacy = None
                run: list[int] = []
                two_pass = verify_crc and bool(threads) and _batch_length(buf, pos, size) >= THREADED_MIN_BATCH
                reached = bc.scan_chain(buf, pos, size, chunk_end, verify_crc and not two_pass, run, bad)
                parts.append(np.asarray(run, dtype=np.int64))
                heads.append(bc.gather_headers(buf, parts[-1]))
                if two_pass:
                    if pool is None:
                        pool = ThreadPoolExecutor(threads)
                    bad.extend(_crc_pass(buf, run, heads[-1], pool, threads or CRC_THREADS))
            defects.extend(_crc_defects(buf, file, bad[first_bad:], run_legacy))
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
                    walked.append(item)
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
    _flush(legacy, walked)
    return SegmentColumns(arr, headers, valid, LegacyColumns.concat(legacy), defects, landing=min(pos, size),
                          size=size)


_INT64 = np.iinfo(np.int64)


def _span_cell(span: tuple[int, int] | None) -> tuple[int, int]:
    """``LegacyBatch.inner_span`` as the columns hold it: (0, 0) for none, (0, -1) for a first offset past int64."""
    if span is None:
        return 0, 0
    return span if _INT64.min <= span[0] <= _INT64.max else (0, -1)


def _flush(legacy: list[LegacyColumns], walked: list[LegacyBatch]) -> None:
    """Move the Python walker's legacy entries (``walked``, emptied) into ``legacy`` as columns, keeping file
    order."""
    if walked:
        legacy.append(LegacyColumns.from_entries(walked))
        walked.clear()


def _crc_defects(buf: Any, file: str, bad: list[int], run: LegacyColumns | None) -> list[Defect]:
    """The walker's CRC defects of a run, in file order: the magic 2 batches at ``bad`` and the legacy entries of
    ``run`` (a native run's) whose CRC-32 does not match (``log_segment.walk_log``'s text for both)."""
    found = [(p, _crc_defect(buf, file, p)) for p in bad]
    if run is None or bool(run["crc_valid"].all()):
        return [d for _, d in found]
    wrong = ~run["crc_valid"]
    found += [(p, _crc_text(file, p, crc, offset)) for p, crc, offset in zip(
        run["position"][wrong].tolist(), run["crc"][wrong].tolist(), run["offset"][wrong].tolist(), strict=True)]
    found.sort(key=lambda item: item[0])
    return [d for _, d in found]


def _joined(runs: list[np.ndarray]) -> np.ndarray:
    """The runs' rows in one array, as ``np.concatenate`` makes it (fields in the machine's byte order); a single
    run already so (the native walk's) is kept as it is: no copy of a big segment's columns."""
    if len(runs) == 1 and runs[0].dtype == np.concatenate([runs[0][:0]]).dtype:
        return runs[0]
    return np.concatenate(runs)


def _native_walk(buf: Any, path: str | None,
                 max_output: int) -> Callable[[int, int, int, bool], tuple[Any, Any, Any, Any, int]] | None:
    """The native walk over ``path`` (the file ``buf`` maps) or over ``buf`` when it is ``bytes``: ``(pos, limit,
    stop, verify) -> (positions, raw headers, bad CRC positions, legacy column arrays, reached)``; None without
    it. ``max_output`` caps a legacy wrapper's decompression (its inner span)."""
    from kafkatool.schema.native import core

    native = core()
    if native is None:
        return None
    if isinstance(buf, bytes):
        return lambda pos, limit, stop, verify: native.walk_entries_bytes(  # type: ignore[no-any-return]
            buf, pos, limit, stop, verify, max_output)
    if path is not None and isinstance(buf, mmap.mmap):
        name = os.fspath(path)
        return lambda pos, limit, stop, verify: native.walk_entries_path(  # type: ignore[no-any-return]
            name, pos, limit, stop, verify, max_output)
    return None


def _crc_defect(buf: Any, file: str, pos: int) -> Defect:
    """The walker's CRC defect for the magic 2 batch at ``pos``."""
    head = rb.parse_batch_header(buf, pos)
    return _crc_text(file, pos, head.crc, head.last_offset)


def _crc_text(file: str, pos: int, crc: int, last_offset: int) -> Defect:
    """The walker's CRC defect (``log_segment.walk_log``'s) for the entry at ``pos``."""
    return Defect("crc-mismatch", file, pos, "crc",
                  f"stored CRC {crc} does not match the bytes (entry at offset {last_offset}); "
                  "Kafka's recovery truncates the segment here")


def _batch_length(buf: Any, pos: int, size: int) -> int:
    """The length of the batch at ``pos`` (a cheap guess of the segment's batch size)."""
    if size - pos < rb.ATTRIBUTES_OFFSET:
        return 0
    return bc.CHAIN_STRUCT.unpack_from(buf, pos + bc.CHAIN_AT)[0]


def grown_window(spanned: int, rows: int, least: int, rows_wanted: int, most: int) -> int:
    """The bytes of a file's next scan window after one that spanned ``spanned`` bytes in ``rows`` (at least one)
    batches: enough for about ``rows_wanted`` batches of that size, never under ``least`` nor over ``most`` (so a
    file of big batches is scanned in a few native calls while the columns held stay those of ``rows_wanted``
    batches)."""
    return min(most, max(least, spanned // rows * rows_wanted))


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
    return join_columns(merged)


def join_columns(parts: list[SegmentColumns]) -> SegmentColumns:
    """Consecutive scans of one file (each starting where the last landed) as one."""
    valid = None if parts[0].crc_valid is None else np.concatenate([p.crc_valid for p in parts])  # type: ignore[misc]
    return SegmentColumns(np.concatenate([p.positions for p in parts]), np.concatenate([p.headers for p in parts]),
                          valid, LegacyColumns.concat([p.legacy for p in parts]), [d for p in parts for d in p.defects],
                          landing=parts[-1].landing, size=parts[-1].size)
