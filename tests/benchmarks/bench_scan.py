"""Segment scan speed: kafkatool's walker against kafka-python, measured in the same run.

Run: ``python -m tests.benchmarks.bench_scan [--mib 64] [--repeat 5]``. Writes a synthetic magic 2
segment (our own builder; kafka-python validates its CRCs) to a temporary directory, then times
three modes for each reader: shallow (headers), crc (headers + CRC-32C) and deep (every record).
Prints medians and the ratio kafkatool / kafka-python (above 1 = kafkatool faster). Not a unit
test: figures depend on the machine, ratios are what to compare.
"""

from __future__ import annotations

import argparse
import mmap
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from kafkatool.model import Compression, Defect, Record
from kafkatool.schema.log_segment import walk_log
from kafkatool.schema.record_batch import build_records_batch


def make_segment(path: Path, target: int, records_per_batch: int, value_size: int) -> tuple[int, int]:
    """Write batches until ``target`` bytes; return (batches, records)."""
    batches = records = 0
    offset = 0
    with open(path, "wb") as fh:
        size = 0
        while size < target:
            recs = [Record(offset=i, timestamp=0, key=f"key-{offset + i}".encode(),
                           value=(b"%08d" % (offset + i)) * (value_size // 8), offset_delta=i, timestamp_delta=i)
                    for i in range(records_per_batch)]
            pid = -1 if batches % 2 else 1000 + batches % 7
            data = build_records_batch(recs, base_offset=offset, base_timestamp=1_700_000_000_000 + offset,
                                       compression=Compression.NONE, producer_id=pid,
                                       producer_epoch=-1 if pid < 0 else 0,
                                       base_sequence=-1 if pid < 0 else offset % 100000, partition_leader_epoch=3)
            fh.write(data)
            size += len(data)
            offset += records_per_batch
            batches += 1
            records += records_per_batch
    return batches, records


def ours(buf: mmap.mmap, mode: str) -> int:
    n = 0
    for item in walk_log(buf, "bench", deep=mode == "deep", verify_crc=mode != "shallow"):
        if isinstance(item, Defect):
            raise AssertionError(item.describe())
        n += len(item.records) if item.records is not None else 1
    return n


def theirs(data: bytes, mode: str) -> int:
    from kafka.record.memory_records import MemoryRecords

    mr = MemoryRecords(data)
    n = 0
    while mr.has_next():
        batch = mr.next_batch()
        if mode == "shallow":
            _ = (batch.base_offset, batch.producer_id, batch.next_offset)
            n += 1
        elif mode == "crc":
            assert batch.validate_crc()
            n += 1
        else:
            assert batch.validate_crc()
            n += sum(1 for _ in batch)
    return n


def timed(fn: Callable[[], int], repeat: int) -> tuple[float, int]:
    times = []
    result = 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for label, rpb, vsize in (("big batches", 15, 1024), ("tiny batches", 1, 80)):
            path = Path(tmp) / "00000000000000000000.log"
            batches, records = make_segment(path, args.mib << 20, rpb, vsize)
            size = path.stat().st_size
            fd = os.open(path, os.O_RDONLY)
            buf = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
            data = bytes(buf)
            print(f"{label}: {size / 1e6:.1f} MB, {batches} batches, {records} records")
            for mode in ("shallow", "crc", "deep"):
                t_ours, n1 = timed(lambda m=mode, b=buf: ours(b, m), args.repeat)
                t_theirs, n2 = timed(lambda m=mode, d=data: theirs(d, m), args.repeat)
                assert n1 == n2, (mode, n1, n2)
                print(f"  {mode:8s} kafkatool {size / t_ours / 1e9:6.2f} GB/s {n1 / t_ours / 1e6:6.3f} M/s   "
                      f"kafka-python {size / t_theirs / 1e9:6.2f} GB/s   ratio {t_theirs / t_ours:5.2f}x")
            buf.close()
            os.close(fd)


if __name__ == "__main__":
    main()
