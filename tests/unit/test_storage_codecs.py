"""storage.codecs: one codec label table by attribute bits, from model's Compression names."""

from __future__ import annotations

from kafkatool.model import Compression
from kafkatool.storage.codecs import CODEC_LABEL_BY_BITS, KNOWN_CODEC_BY_BITS, codec_label


def test_labels_by_bits() -> None:
    assert KNOWN_CODEC_BY_BITS == ("none", "gzip", "snappy", "lz4", "zstd", None, None, None)
    assert CODEC_LABEL_BY_BITS == ("none", "gzip", "snappy", "lz4", "zstd", "unknown(5)", "unknown(6)",
                                   "unknown(7)")
    assert [codec_label(c.value) for c in Compression] == [c.label for c in Compression]
    assert codec_label(9) == "unknown(9)"
