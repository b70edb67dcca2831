"""Magic 2 batch headers as columns: the fast shallow and CRC-checking scan of a ``.log`` buffer.

Models the batch loop of Kafka's ``LogSegment.recover`` / ``FileRecords.batches`` (``FileLogInputStream``):
follow ``batchLength`` from batch to batch and check each batch's CRC-32C (``DefaultRecordBatch.isValid``).
The common case -- a clean chain of magic 2 batches -- runs in a tight loop that creates no object per batch:
it keeps only each batch's position (and the positions whose CRC fails); the header fields are then gathered
in one vectorised step with a numpy dtype derived, like :data:`~kafkatool.schema.record_batch.HEADER_STRUCT`,
from the construct declaration :data:`~kafkatool.schema.record_batch.BATCH_HEADER`. Anything else (a legacy
message, a bad length, a torn or zero-filled tail, garbage) stops the fast loop where it is, and the caller
hands that spot to the resilient walker (:func:`kafkatool.schema.log_segment.walk_log`), which reports the
defect exactly as it always does, then resumes the fast loop after the next good entry.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

from construct import Renamed, Struct

from kafkatool.schema import record_batch as rb
from kafkatool.schema.checksum import crc32c

if TYPE_CHECKING:
    import numpy

# (batch_length, partition_leader_epoch, magic, crc): the prefix after base_offset, derived from the declaration.
CHAIN_STRUCT = struct.Struct(">" + "".join(
    sc.subcon.fmtstr[1:] for sc in rb.BATCH_PREFIX.subcons[1:]))  # type: ignore[attr-defined]
CHAIN_AT = rb.FIELD_OFFSETS["batch_length"]
assert CHAIN_STRUCT.size == rb.ATTRIBUTES_OFFSET - CHAIN_AT
GIL_FREE_ABOVE = 4096  # batches at least this big have their CRC computed with the GIL released


def derive_dtype(decl: Struct) -> numpy.dtype:
    """A numpy structured dtype with the same fields, order, sizes and byte order as a flat construct Struct
    of fixed-size integers (the vectorised twin of :func:`kafkatool.schema.fixed.derive_struct`)."""
    import numpy as np

    fields = []
    for sc in decl.subcons:
        inner = sc.subcon if isinstance(sc, Renamed) else sc
        order, code = inner.fmtstr[0], inner.fmtstr[1:]  # type: ignore[attr-defined]
        kind = "i" if code.islower() else "u"  # struct codes: lower case signed, upper case unsigned
        fields.append((sc.name, np.dtype(f"{order}{kind}{struct.calcsize(order + code)}")))
    dtype = np.dtype(fields)
    assert dtype.itemsize == decl.sizeof()
    return dtype


_DTYPE: Any = None


def header_dtype() -> numpy.dtype:
    """The batch header's dtype (built once, on first use, so importing this module does not import numpy)."""
    global _DTYPE
    if _DTYPE is None:
        _DTYPE = derive_dtype(rb.BATCH_HEADER)
    return _DTYPE


_NATIVE_DTYPE: Any = None


def native_header_dtype() -> numpy.dtype:
    """The batch header's dtype with every field in the machine's byte order, packed as declared: what numpy makes
    of :func:`header_dtype` when it joins header arrays (``np.concatenate``), and the native walk's layout."""
    global _NATIVE_DTYPE
    if _NATIVE_DTYPE is None:
        import numpy as np

        _NATIVE_DTYPE = np.concatenate([np.zeros(0, dtype=header_dtype())]).dtype
    return _NATIVE_DTYPE


def scan_chain(buf: Any, pos: int, limit: int, stop: int, verify_crc: bool, positions: list[int],
               bad_crc: list[int]) -> int:
    """Follow clean magic 2 batches from ``pos`` while they start before ``stop`` and end by ``limit``.

    Appends each batch's position to ``positions`` (and, with ``verify_crc``, the positions whose stored
    CRC does not match to ``bad_crc``). Returns where it stopped: at or past ``stop``, or at an entry the
    fast loop does not handle (anything but a complete magic 2 batch of at least a header's length), which
    the resilient walker must look at.
    """
    view = memoryview(buf)
    unpack = CHAIN_STRUCT.unpack_from
    append = positions.append
    overhead, min_length, at_attrs = rb.LOG_OVERHEAD, rb.BATCH_OVERHEAD, rb.ATTRIBUTES_OFFSET
    last_header = min(limit - rb.HEADER_SIZE, stop - 1)
    if verify_crc:
        while pos <= last_header:
            length, _epoch, magic, crc = unpack(buf, pos + 8)
            end = pos + overhead + length
            if magic != 2 or length < min_length or end > limit:
                return pos
            if crc32c(view[pos + at_attrs:end]) != crc:
                bad_crc.append(pos)
            append(pos)
            pos = end
    else:
        while pos <= last_header:
            length, _epoch, magic, _crc = unpack(buf, pos + 8)
            end = pos + overhead + length
            if magic != 2 or length < min_length or end > limit:
                return pos
            append(pos)
            pos = end
    return pos


def crc_failures(buf: Any, positions: Any, lengths: Any, stored: Any, *, release_gil: bool = True) -> list[int]:
    """Positions (from ``positions``) whose stored CRC does not match: the CRC step of a two-pass scan."""
    view = memoryview(buf)
    at_attrs, overhead = rb.ATTRIBUTES_OFFSET, rb.LOG_OVERHEAD
    mode = 1 if release_gil else 0
    bad = []
    for pos, length, crc in zip(positions, lengths, stored, strict=True):
        if crc32c(view[pos + at_attrs:pos + overhead + length], gil_release_mode=mode) != crc:
            bad.append(pos)
    return bad


def gather_headers(buf: Any, positions: numpy.ndarray) -> numpy.ndarray:
    """The 61-byte headers at ``positions`` (ascending) as a structured array of :func:`header_dtype`.

    One vectorised gather over a window of only the bytes from the first to the last header, so a gather
    touches no page outside the range being scanned (a mapping's released pages stay released).
    """
    import numpy as np

    dtype = header_dtype()
    if len(positions) == 0:
        return np.zeros(0, dtype=dtype)
    lo, hi = int(positions[0]), int(positions[-1]) + dtype.itemsize
    raw = np.frombuffer(buf, dtype=np.uint8, count=hi - lo, offset=lo)
    windows = np.lib.stride_tricks.sliding_window_view(raw, dtype.itemsize)
    return windows[positions - lo].view(dtype).reshape(len(positions))
