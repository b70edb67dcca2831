"""``dump-segment --format jsonl``'s entry rows written by the native core (``kafkatool/_core/src/jsonl.rs``).

The twin of ``engine.rows.entry_row`` and :class:`~kafkatool.render.output.JsonlOutput` for ordinary magic 2
batches: offered each entry boundary of the segment walk (``schema.log_segment.FastEntries``), it writes the rows
of the run of batches from there as one block of bytes and returns where it stopped; the entry it stops at (a
legacy or damaged one, a payload or record it does not write exactly as the Python path) is the walk's, which
yields it to the Python rows. Only for what it writes byte for byte: no ``--offsets``, no internal-topic decoder,
key and value decoders utf8, hex, base64 or none (``--verify``'s offset checks take the written batches' header
columns).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from kafkatool.reading.context import resolve
from kafkatool.render.output import JsonlOutput, Output
from kafkatool.render.safe import json_bytes
from kafkatool.schema import record_batch as rb
from kafkatool.schema.native import INFLATED_BY_PYTHON, core

#: The key and value decoders the native rows show (``engine.rows.DECODERS`` but json).
NATIVE_DECODERS = ("utf8", "hex", "base64", "none")


class Run(NamedTuple):
    """What one call wrote: the rows, where it stopped (the first entry not written), how many entries, the first
    one's base offset, the last one's last offset, and their headers (an int64 array, five values an entry:
    position, base offset, last offset, records count, last offset delta; see :meth:`heads`)."""

    text: bytes
    stop: int
    count: int
    first: int | None
    last: int | None
    head_values: np.ndarray

    def heads(self) -> tuple[np.ndarray, ...]:
        """The header columns (position, base offset, last offset, records count, last offset delta), as
        ``engine.verify.LogChecker.feed_columns`` takes them."""
        table = self.head_values.reshape(-1, 5)
        return tuple(table[:, i] for i in range(5))


_NOTHING = Run(b"", 0, 0, None, None, np.zeros(0, dtype=np.int64))


class NativeRows:
    """The native row writer of one segment, bound to its output; the command's walk hook
    (``schema.log_segment.FastEntries``) calls it at each entry boundary."""

    CHUNK = 256 << 10  # bytes of the segment per call (a batch larger than this goes whole)

    def __init__(self, native: Any, out: JsonlOutput, path: str, deep: bool, key_decoder: str | None,
                 value_decoder: str | None, max_output: int) -> None:
        self.native, self.out, self.deep = native, out, deep
        self.key_decoder, self.value_decoder, self.max_output = key_decoder, value_decoder, max_output
        self.file = json_bytes(path)  # each row's "file", as JsonlOutput.row sets it

    @classmethod
    def make(cls, out: Output, path: str, *, deep: bool, key_decoder: str | None,
             value_decoder: str | None) -> NativeRows | None:
        """The writer of the rows of the segment ``path`` (as ``out.begin_file`` names it) to ``out``, or ``None``
        when the core is off, ``out`` is not a :class:`JsonlOutput` or a decoder is not one it writes (``None``:
        no data shown)."""
        native = core()
        if native is None or not isinstance(out, JsonlOutput):
            return None
        if any(d is not None and d not in NATIVE_DECODERS for d in (key_decoder, value_decoder)):
            return None
        return cls(native, out, path, deep, key_decoder, value_decoder, resolve(None).max_decompressed_bytes)

    def __call__(self, buf: bytes | memoryview | Any, pos: int, limit: int) -> Run:
        """Write the rows of the batches from ``pos`` (up to the walk's ``limit``)."""
        if pos + rb.HEADER_SIZE > limit:
            return _NOTHING._replace(stop=pos)  # a tail: the walk's
        magic, size, codec = rb.peek_entry(buf, pos)
        if magic != rb.MAGIC:
            return _NOTHING._replace(stop=pos)  # a legacy entry: the walk's (no copy of a chunk for it)
        if self.deep and codec in INFLATED_BY_PYTHON:
            run = self._inflated(buf, pos, size, limit)
        else:
            chunk = rb.batch_bytes(buf, pos, min(max(self.CHUNK, size), limit - pos))
            run = Run(*self.native.jsonl_rows(chunk, pos, limit, self.file, self.deep, self.key_decoder,
                                              self.value_decoder, self.max_output))
        if run.count:
            self.out.write_rows(run.text)
        return run

    def _inflated(self, buf: bytes | memoryview | Any, pos: int, size: int, limit: int) -> Run:
        """The row of the zstd or lz4 batch at ``pos`` (``size`` bytes), which the native codecs hand back,
        decompressed by the Python path (libzstd, liblz4) and written natively; ``stop == pos`` when it is handed
        back."""
        nothing = _NOTHING._replace(stop=pos)
        if size < rb.HEADER_SIZE or size > limit - pos:
            return nothing
        header = rb.parse_batch_header(buf, pos)
        inflated = rb.inflated_payload(buf, header, self.max_output)
        if inflated is None:
            return nothing
        return Run(*self.native.jsonl_rows_inflated(rb.batch_bytes(buf, pos, size), pos, inflated, self.file,
                                                    self.key_decoder, self.value_decoder, self.max_output))


__all__ = ["NATIVE_DECODERS", "NativeRows", "Run"]
