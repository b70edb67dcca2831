"""CRC-32C, the checksum of Kafka's magic 2 batches and producer snapshots (``Crc32C``), from the crc32c package
imported on first use: importing that package costs tens of milliseconds (it loads ``importlib.metadata`` and its
own command line), which runs the native core does the checksums for never need to pay."""

from __future__ import annotations

from typing import Any

_IMPL: Any = None


def crc32c(data: Any, value: int = 0, gil_release_mode: int = -1) -> int:
    """``crc32c.crc32c``: the CRC-32C of ``data`` continuing from ``value`` (``gil_release_mode`` as there)."""
    global _IMPL
    if _IMPL is None:
        from crc32c import crc32c as impl

        _IMPL = impl
    return int(_IMPL(data, value, gil_release_mode))
