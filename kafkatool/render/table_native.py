"""The default table's batch rows from the native segment walk (``walk_entries_path``), without a row per batch.

The twin of :class:`~kafkatool.render.jsonl_native.NativeRows` for ``dump-segment``'s shallow table: offered each
entry boundary of the segment walk (``schema.log_segment.FastEntries``), it walks the run of clean magic 2 batches
from there natively and hands their header columns to :meth:`TableOutput.batch_columns`, which prints exactly what
the rows would. It stops before the first entry that is not one (a legacy entry, a CRC mismatch, damage, a tail),
which the Python walk then reads and reports. Shallow only, and only without ``--offsets`` or a decoder.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kafkatool.reading.context import resolve
from kafkatool.render.jsonl_native import Run
from kafkatool.render.output import Output, TableOutput
from kafkatool.schema import batch_columns as bc
from kafkatool.schema import record_batch as rb
from kafkatool.schema.native import core

_NOTHING = Run(b"", 0, 0, None, None, np.zeros(0, dtype=np.int64))


class NativeTable:
    """The native batch rows of one segment for a :class:`TableOutput` (the command's walk hook)."""

    SPAN = 16 << 20  # bytes of the segment walked per call: a table chunk's worth many times, memory bounded

    def __init__(self, native: Any, out: TableOutput, path: str, max_output: int) -> None:
        self.native, self.out, self.path, self.max_output = native, out, path, max_output

    @classmethod
    def make(cls, out: Output, path: str) -> NativeTable | None:
        """The walker for the segment at ``path`` (a file the core can open by name) printing to ``out``; ``None``
        when the core is off or ``out`` is not a table."""
        native = core()
        if native is None or not isinstance(out, TableOutput):
            return None
        return cls(native, out, path, resolve(None).max_decompressed_bytes)

    def __call__(self, buf: bytes | memoryview | Any, pos: int, limit: int) -> Run:
        """Print the batches from ``pos`` (up to the walk's ``limit``); the run, ``stop == pos`` when none."""
        if pos + rb.HEADER_SIZE > limit or rb.peek_entry(buf, pos)[0] != rb.MAGIC:
            return _NOTHING._replace(stop=pos)  # a tail or a legacy entry: the walk's
        found, raw, bad, legacy, reached = self.native.walk_entries_path(
            self.path, pos, limit, min(limit, pos + self.SPAN), True, self.max_output)
        positions = np.asarray(found, dtype=np.int64)
        heads = raw.view(bc.native_header_dtype())
        ends = [reached]
        if len(bad):
            ends.append(int(np.min(bad)))
        if len(legacy["position"]):
            ends.append(int(np.min(legacy["position"])))
        end = min(ends)
        keep = int(np.searchsorted(positions, end))  # the batches before the first entry the walk must read
        if keep == 0:
            return _NOTHING._replace(stop=pos)
        positions, heads = positions[:keep], heads[:keep]
        last = int(positions[-1]) + rb.LOG_OVERHEAD + int(heads["batch_length"][-1])
        self.out.batch_columns(positions, heads)
        base = heads["base_offset"].astype(np.int64)
        last_offsets = base + heads["last_offset_delta"]
        values = np.stack([positions, base, last_offsets, heads["records_count"].astype(np.int64),
                           heads["last_offset_delta"].astype(np.int64)], axis=1).reshape(-1)
        return Run(b"", last, keep, int(base[0]), int(last_offsets[-1]), values)


__all__ = ["NativeTable"]
