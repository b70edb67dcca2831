"""The scan's batch rows inflate legacy wrappers within the limits given (explicitly, or those in force)."""

from __future__ import annotations

from pathlib import Path

from kafkatool.model import Compression
from kafkatool.reading.batch_scan import SegmentRange, scan_range
from kafkatool.reading.context import using_limits
from kafkatool.schema import legacy
from kafkatool.schema.codecs import ReadLimits


def _wrapper_segment(tmp_path: Path) -> str:
    messages = [legacy.build_message(magic=1, attributes=0, key=None, value=bytes(1000), timestamp=0)] * 100
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(legacy.build_wrapper(magic=1, codec=Compression.GZIP, offsets=range(100), messages=messages,
                                          last_offset=99))
    return str(path)


def test_a_wrapper_inflates_under_the_default_cap_only(tmp_path: Path) -> None:
    unit = SegmentRange("d", "t", 0, _wrapper_segment(tmp_path))
    assert scan_range(unit).column("base_offset") == [0]  # Kafka's baseOffset: the first inner offset
    small = ReadLimits(max_decompressed_bytes=50_000)
    assert scan_range(unit, small).column("base_offset") == [99]  # not inflated: the stored offset
    with using_limits(small):
        assert scan_range(unit).column("base_offset") == [99]
