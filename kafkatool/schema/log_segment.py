"""A ``.log`` segment: a sequence of log entries (magic 2 batches and legacy messages), walked resiliently.

Models Kafka's ``FileLogInputStream.nextBatch``: 12 bytes of offset and size, the magic at byte 16,
a size below 14 bytes (``RECORD_OVERHEAD_V0``) is corruption, and an entry running past the end of
the file is a partial (torn) tail. Unlike Kafka, which throws on the first bad size, the walker
reports a :class:`~kafkatool.model.Defect` and resynchronises on the next trustworthy batch
boundary, so damage in the middle of a segment never hides what follows it.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Callable, Iterator
from contextlib import suppress

from kafkatool.errors import DecodeError
from kafkatool.model import Compression, Defect, LegacyBatch, LogEntry, RecordBatch
from kafkatool.schema import record_batch as rb
from kafkatool.schema.checksum import crc32c

RECORD_OVERHEAD_V0 = 14  # the smallest legacy message: crc, magic, attributes, key and value lengths
HEADER_SIZE_UP_TO_MAGIC = rb.MAGIC_OFFSET + 1
MAX_PLAUSIBLE_BATCH = 1 << 30  # resync candidates above 1 GiB are not believed
RESYNC_CONFIRM = 2  # headers that must chain after a resync candidate (or reach the end)
LEGACY_MAGICS = (0, 1)
SCAN_CHUNK = 1 << 20  # long scans (zero tails, resync searches) read this much at a time
ZERO_CHUNK = bytes(SCAN_CHUNK)
RELEASE_EVERY = 16 << 20  # the walk releases the mapped pages behind it at this interval (they count in RSS)

WalkItem = LogEntry | Defect
#: A caller's own handling of a run of entries (the native jsonl writer): called with the buffer, an entry
#: boundary and the walk's limit, it returns the position after the entries it handled (the boundary itself when
#: it handled none: the walk yields that entry). It must only take entries the walk would yield without a defect.
FastEntries = Callable[[bytes | memoryview, int, int], int]
HEADER_UNPACK = rb.HEADER_STRUCT.unpack_from
HEADER_SIZE = rb.HEADER_SIZE
_LENGTH = struct.Struct(">i")


def plausible_batch_header(buf: bytes | memoryview, pos: int, end: int) -> tuple[int, int] | None:
    """``(next_pos, last_offset)`` if a believable magic 2 header starts at ``pos``, else ``None``.

    The cheap half of the batch-boundary test (what Kafka's ``DefaultRecordBatch`` would accept as a header:
    magic 2, a known codec, no unknown attribute bits, a length that fits before ``end`` and within
    :data:`MAX_PLAUSIBLE_BATCH`, a record count its last offset delta covers).
    """
    if end - pos < rb.HEADER_SIZE:
        return None
    f = rb.HEADER_STRUCT.unpack_from(buf, pos)
    base_offset, length, epoch, magic, _crc, attrs, last_delta = f[0], f[1], f[2], f[3], f[4], f[5], f[6]
    count = f[12]
    if magic != 2 or base_offset < 0 or epoch < -1 or attrs & ~0x7F or attrs & 0x07 > 4:
        return None
    if length < rb.BATCH_OVERHEAD or length > MAX_PLAUSIBLE_BATCH or pos + rb.LOG_OVERHEAD + length > end:
        return None
    if count < 0 or last_delta < count - 1:
        return None
    return pos + rb.LOG_OVERHEAD + length, base_offset + last_delta


def confirmed_batch_start(buf: bytes | memoryview, pos: int, end: int, chained: int = RESYNC_CONFIRM) -> bool:
    """The one batch-boundary test: a plausible header at ``pos`` whose next ``chained`` headers are plausible
    with rising last offsets (or the data ends exactly), and whose CRC holds.

    Used by the walker's resynchronisation search (:func:`find_next_batch`) and by the fleet scan's split points
    (``reading.batch_scan.confirmed_boundary``); ``kafkatool.storage.boundary`` names it as storage's rule.
    """
    first = plausible_batch_header(buf, pos, end)
    if first is None:
        return False
    # The chained headers first: a false candidate with a large plausible length fails them in a few reads,
    # where its CRC would read (and map) every byte it claims.
    nxt, last = first
    for _ in range(chained):
        if nxt == end:
            break
        step = plausible_batch_header(buf, nxt, end)
        if step is None or step[1] <= last:
            return False
        nxt, last = step
    length = first[0] - pos - rb.LOG_OVERHEAD
    stored = int.from_bytes(buf[pos + rb.CRC_OFFSET:pos + rb.CRC_OFFSET + 4], "big")
    return rb.compute_crc(buf, pos, length) == stored


def find_next_batch(buf: bytes | memoryview, start: int, end: int) -> int | None:
    """The first position at or after ``start`` where a confirmed magic 2 batch begins, or ``None``.

    The search goes ``SCAN_CHUNK`` bytes at a time, in place where the buffer can search itself (a mapping or
    bytes: no copy, which the allocator would keep), and lets a read-only mapping drop the pages it has searched,
    so garbage of any size is scanned in bounded memory.
    """
    at = start + rb.MAGIC_OFFSET
    while at < end:
        stop = min(end, at + SCAN_CHUNK)
        if isinstance(buf, memoryview):
            chunk, base, limit = bytes(buf[at:stop]), at, stop - at
        else:
            chunk, base, limit = buf, 0, stop
        i = chunk.find(b"\x02", at - base, limit)
        while i >= 0:
            cand = base + i - rb.MAGIC_OFFSET
            if confirmed_batch_start(buf, cand, end):
                release_pages(buf, at, stop)
                return cand
            i = chunk.find(b"\x02", i + 1, limit)
        release_pages(buf, at, stop)
        at = stop
    return None


def release_pages(buf: object, start: int, end: int) -> None:
    """Let a read-only file mapping drop its pages in ``[start, end)`` once they have been read.

    The pages stay in the page cache and are mapped again if read again; only the process's resident
    set shrinks, so scanning a huge file does not hold it all in memory. Other buffers are left alone.
    """
    madvise = getattr(buf, "madvise", None)
    if madvise is None or end <= start:
        return
    first = start - start % mmap.PAGESIZE
    with suppress(OSError, ValueError):
        madvise(mmap.MADV_DONTNEED, first, end - first)




def _all_zero(buf: bytes | memoryview, start: int, end: int) -> bool:
    """``buf[start:end]`` holds only zero bytes; memory stays bounded whatever the length."""
    view = memoryview(buf)
    step = len(ZERO_CHUNK)
    for at in range(start, end, step):
        stop = min(end, at + step)
        if view[at:stop] != ZERO_CHUNK[:stop - at]:
            return False
        release_pages(buf, at, stop)
    return True


def not_a_segment(buf: bytes | memoryview, end: int | None = None) -> str | None:
    """Why ``buf`` is not a Kafka log segment at all (``None`` when it may be one, however damaged).

    A segment starts with an entry header: offset, size, then the magic byte at byte 16. When that header is
    impossible (a magic other than 0, 1 or 2, or a size below any entry's) and no record batch can be found
    anywhere in the file, the file was never a segment: a text file, a copy of something else under a segment's
    name. A segment whose first batch is torn or damaged still has a batch later on, or a plausible header.
    """
    limit = len(buf) if end is None else min(end, len(buf))
    if limit <= rb.MAGIC_OFFSET or _all_zero(buf, 0, min(limit, 4096)):
        return None
    magic = buf[rb.MAGIC_OFFSET]
    length = int.from_bytes(bytes(buf[8:12]), "big", signed=True)
    if magic in (0, 1, 2) and length >= RECORD_OVERHEAD_V0:
        return None
    if find_next_batch(buf, 0, limit) is not None:
        return None
    why = (f"byte {rb.MAGIC_OFFSET} (magic) is {magic:#04x}, not 0, 1 or 2" if magic not in (0, 1, 2)
           else f"bytes 8-11 (batch_length) hold {length}, below any entry's size")
    return f"not a Kafka log segment: {why}, and no record batch is found in its {limit} bytes"


def walk_log(buf: bytes | memoryview, file: str, *, deep: bool = False, verify_crc: bool = True,
             start: int = 0, end: int | None = None, max_output: int | None = None,
             fast: FastEntries | None = None) -> Iterator[WalkItem]:
    """Yield every entry of a log buffer in order, and a :class:`Defect` wherever the bytes are bad.

    ``end`` limits the walk (``--max-bytes``); an entry crossing it is not reported as torn then, the
    caller having asked for a prefix. With ``deep`` each entry's records are decoded too. ``fast`` is offered
    each entry boundary first (see :data:`FastEntries`).
    """
    size = len(buf)
    view = memoryview(buf)
    limit = size if end is None else min(end, size)
    prefix_only = end is not None and end < size
    pos = start
    released = start  # mapped pages before this were let go (every RELEASE_EVERY bytes: bounded memory)
    while pos < limit:
        if pos - released >= RELEASE_EVERY:
            release_pages(buf, released, pos)
            released = pos
        if fast is not None:
            nxt = fast(buf, pos, limit)
            if nxt != pos:  # the caller handled the entries up to nxt
                pos = nxt
                continue
        remaining = limit - pos
        if remaining < HEADER_SIZE_UP_TO_MAGIC:
            if not prefix_only:
                yield _tail_defect(buf, file, pos, limit)
            return
        length = _LENGTH.unpack_from(buf, pos + 8)[0]
        if length < RECORD_OVERHEAD_V0:
            if _all_zero(buf, pos, limit):
                yield Defect("trailing-zeros", file, pos, "batch_length",
                             f"{limit - pos} zero bytes after the last entry (preallocated or zero-filled tail); "
                             f"Kafka reads a record size of 0 here, below the minimum of {RECORD_OVERHEAD_V0}")
                return
            nxt = yield from _resync(buf, file, pos, limit,
                                     f"record size {length} smaller than minimum record overhead "
                                     f"({RECORD_OVERHEAD_V0})", "batch_length", pos + 8)
            if nxt is None:
                return
            pos = nxt
            continue
        if pos + rb.LOG_OVERHEAD + length > limit:
            if not prefix_only:
                yield _tail_defect(buf, file, pos, limit, length)
            return
        magic = buf[pos + rb.MAGIC_OFFSET]
        if magic == rb.MAGIC and not deep and length >= rb.BATCH_OVERHEAD and limit - pos >= HEADER_SIZE:
            # The shallow magic 2 path, inlined: this loop runs once per batch of every segment scanned.
            batch = RecordBatch(pos, *HEADER_UNPACK(buf, pos))
            after = pos + rb.LOG_OVERHEAD + length
            if verify_crc:
                batch.crc_valid = crc32c(view[pos + rb.ATTRIBUTES_OFFSET:after]) == batch.crc
                if not batch.crc_valid:
                    yield Defect("crc-mismatch", file, pos, "crc",
                                 f"stored CRC {batch.crc} does not match the bytes (entry at offset "
                                 f"{batch.last_offset}); Kafka's recovery truncates the segment here")
            yield batch
            pos = after
            continue
        try:
            entry: LogEntry
            if magic == rb.MAGIC:
                entry, record_error = _read_v2(view, pos, deep, verify_crc, max_output)
            elif magic in LEGACY_MAGICS:
                entry, record_error = _read_legacy(buf, pos, deep, max_output)
            else:
                raise DecodeError("magic", f"unknown magic {magic} (expected 0, 1 or 2)", pos + rb.MAGIC_OFFSET)
        except DecodeError as err:
            nxt = yield from _resync(buf, file, pos, limit, err.reason, err.field,
                                     err.position if err.position is not None else pos)
            if nxt is None:
                return
            pos = nxt
            continue
        if entry.crc_valid is False:
            yield Defect("crc-mismatch", file, pos, "crc",
                         f"stored CRC {entry.crc} does not match the bytes (entry at offset {entry.last_offset}); "
                         "Kafka's recovery truncates the segment here")
        yield entry
        if record_error is not None:
            yield Defect("record-decode", file,
                         record_error.position if record_error.position is not None else pos,
                         record_error.field, record_error.reason)
        pos += entry.size_in_bytes


def read_entry_at(buf: bytes | memoryview, pos: int, *, deep: bool = False,
                  max_output: int | None = None) -> LogEntry:
    """The entry a walk found at ``pos``, read again without its CRC check (the caller knows the walk's verdict):
    what :class:`~kafkatool.reading.entries.SegmentEntries` re-reads on use. A magic 2 batch comes back as its
    header (records are the caller's to decode); a legacy entry as the walk at that depth made it."""
    if buf[pos + rb.MAGIC_OFFSET] == rb.MAGIC:
        return RecordBatch(pos, *HEADER_UNPACK(buf, pos))
    return _read_legacy(buf, pos, deep, max_output)[0]


def torn_header(buf: bytes | memoryview, pos: int, limit: int) -> RecordBatch | None:
    """The header of the partial entry at ``pos`` (a torn write) when it is a magic 2 batch whose whole
    :data:`HEADER_SIZE`-byte header lies before ``limit`` and runs past it: what the batch held (base offset,
    last offset delta, record count, producer) although its records are gone. ``None`` otherwise."""
    if limit - pos < HEADER_SIZE or buf[pos + rb.MAGIC_OFFSET] != rb.MAGIC:
        return None
    batch = RecordBatch(pos, *HEADER_UNPACK(buf, pos))
    if batch.batch_length < rb.BATCH_OVERHEAD or pos + rb.LOG_OVERHEAD + batch.batch_length <= limit:
        return None
    return batch


def _tail_defect(buf: bytes | memoryview, file: str, pos: int, limit: int, length: int | None = None) -> Defect:
    """The torn-tail report: how many bytes at the end do not form a complete entry (and, when the cut batch's
    header is whole, the offsets and records it says were there)."""
    count = limit - pos
    if _all_zero(buf, pos, limit):
        return Defect("trailing-zeros", file, pos, "batch_length", f"{count} zero bytes after the last entry")
    need = "" if length is None else f" (entry declares {length + rb.LOG_OVERHEAD} bytes)"
    torn = None if length is None else torn_header(buf, pos, limit)
    held = "" if torn is None else (f"; its header says it held offsets {torn.base_offset} to {torn.last_offset} "
                                    f"({torn.records_count} record(s))")
    return Defect("torn-tail", file, pos, "batch_length",
                  f"{count} invalid bytes at the end: a partial entry{need}, as left by a torn write{held}")


def _resync(buf: bytes | memoryview, file: str, pos: int, limit: int, reason: str, field: str,
            where: int) -> Iterator[WalkItem]:
    """Report the bad entry, find the next trustworthy batch and report the skipped bytes.

    Returns the position to continue at, or ``None`` when nothing further can be trusted.
    """
    yield Defect("corrupt-entry", file, where, field, reason)
    nxt = find_next_batch(buf, pos + 1, limit)
    if nxt is None:
        yield Defect("unreadable-bytes", file, pos, "log",
                     f"{limit - pos} bytes from here to the end hold no recognisable batch")
        return None
    yield Defect("unreadable-bytes", file, pos, "log",
                 f"skipped {nxt - pos} bytes up to the next valid batch at byte {nxt}", "warning")
    return nxt


def _read_v2(buf: memoryview, pos: int, deep: bool, verify_crc: bool,
             max_output: int | None) -> tuple[RecordBatch, DecodeError | None]:
    """One magic 2 batch; a record-level failure is returned, not raised, so the header still counts."""
    if len(buf) - pos < HEADER_SIZE:
        raise DecodeError("batch_header", f"needs {HEADER_SIZE} bytes, only {len(buf) - pos} remain", pos)
    batch = RecordBatch(pos, *HEADER_UNPACK(buf, pos))
    if batch.batch_length < rb.BATCH_OVERHEAD:
        raise DecodeError("batch_length",
                          f"batch length {batch.batch_length} is below the {rb.BATCH_OVERHEAD}-byte batch header",
                          pos + 8)
    end = pos + rb.LOG_OVERHEAD + batch.batch_length
    if verify_crc:
        batch.crc_valid = crc32c(buf[pos + rb.ATTRIBUTES_OFFSET:end]) == batch.crc
    if deep:
        try:
            batch.records = rb.decode_records(batch, buf[pos + rb.HEADER_SIZE:end], max_output=max_output)
        except DecodeError as err:
            return batch, err
    return batch, None


def _read_legacy(buf: bytes | memoryview, pos: int, deep: bool,
                 max_output: int | None) -> tuple[LegacyBatch, DecodeError | None]:
    """One shallow legacy message (and, with ``deep``, its inner messages)."""
    from kafkatool.schema import legacy

    entry = legacy.parse_legacy_entry(buf, pos)
    if deep:
        try:
            entry.records = legacy.inner_records(entry, max_output=max_output)
        except DecodeError as err:
            return entry, err
    elif entry.attributes & legacy.CODEC_MASK != Compression.NONE.value:  # an unknown codec id is decoded below
        # Kafka's baseOffset() of a wrapper is its first inner offset: a shallow read needs the inner messages too
        # (their damage is the deep read's to report).
        try:
            inner = legacy.inner_records(entry, max_output=max_output)
        except DecodeError:
            inner = []
        if inner:
            entry.inner_span = (inner[0].offset, len(inner))
    return entry, None
