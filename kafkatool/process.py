"""This process's own resources: giving freed heap back to the operating system.

glibc keeps freed blocks for reuse, so a process that held a large structure for a while (a segment's columns, a
unit of a scan) stays as large as its largest moment; ``malloc_trim`` hands the free pages back. Used between the
phases of a command and between the units of a fleet scan (peak RSS is what the memory targets measure)."""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any

_MALLOC_TRIM: Any = None


def release_heap() -> None:
    """Give the heap's free pages back to the OS (about 1 ms); a no-op where there is no glibc."""
    global _MALLOC_TRIM
    if _MALLOC_TRIM is None:
        try:
            _MALLOC_TRIM = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _MALLOC_TRIM = False
    if _MALLOC_TRIM:
        _MALLOC_TRIM(0)
