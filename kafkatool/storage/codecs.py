"""Codec labels by attribute bits: Kafka's ``CompressionType`` names (``compresscodec: gzip``) for the low three
attribute bits of a batch or legacy message, and the label of an id Kafka does not know.

The names themselves are :attr:`kafkatool.model.Compression.label` (model sits below storage; the schema's codecs
need the enum); this module turns them into the one table by bits every output uses: the dump rows
(``engine.rows``), the scan's columns (``reading.batch_scan``) and, for ``unknown(N)``, the dump text.
"""

from __future__ import annotations

from kafkatool.model import Compression

CODEC_BITS = 0x07
"""The attribute bits that hold the codec id."""

KNOWN_CODEC_BY_BITS: tuple[str | None, ...] = tuple(
    Compression(bits).label if bits in Compression._value2member_map_ else None for bits in range(CODEC_BITS + 1))
"""The codec label of each possible id, ``None`` for ids Kafka does not know (the scan's null)."""


def codec_label(bits: int) -> str:
    """The label of codec id ``bits`` (``gzip``), or ``unknown(N)`` for an id Kafka does not know."""
    known = KNOWN_CODEC_BY_BITS[bits] if 0 <= bits <= CODEC_BITS else None
    return f"unknown({bits})" if known is None else known


CODEC_LABEL_BY_BITS: tuple[str, ...] = tuple(codec_label(bits) for bits in range(CODEC_BITS + 1))
""":func:`codec_label` of each possible id, for hot loops."""
