"""Legacy (magic 0/1) segments scanned with and without the native core: ``python -m tests.benchmarks.legacy
[--work DIR] [--mb N] [--repeat N]``.

Writes legacy-only segments of about ``--mb`` MB with kafkatool's own builders (``schema.legacy``: uncompressed
magic 1 and magic 0 messages as old clients wrote them, and magic 1 gzip, snappy and lz4 wrappers of 20 messages, the
producer's framing), then times ``reading.columns.scan_segment`` in this process with the native walk and with
``KAFKATOOL_NATIVE=0`` (the page cache warm; the native figure the best of ``--repeat``, the Python one a single
run), checks both give the same columns and defects, and prints MB/s both ways. Not collected by pytest.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from pathlib import Path

from kafkatool.model import Compression
from kafkatool.reading import columns
from kafkatool.schema import legacy

POOL = 64  # distinct messages (or wrappers) a segment repeats at rising offsets
WRAPPED = 20  # inner messages a wrapper


def _messages(rnd: random.Random, magic: int) -> list[bytes]:
    """Messages of 0.8-1.6 KB: a random head and a zero tail (compressible, as typical payloads are)."""
    return [legacy.build_message(magic=magic, attributes=0, key=b"key-%d" % k,
                                 value=rnd.randbytes(200) + bytes(rnd.randrange(600, 1400)),
                                 timestamp=1_500_000_000_000 + k) for k in range(POOL)]


def _wrappers(rnd: random.Random, codec: Compression) -> list[bytes]:
    """Magic 1 wrapper messages (relative inner offsets 0-19: the entry's offset places them)."""
    out = []
    for k in range(POOL):
        inner = [legacy.build_message(magic=1, attributes=0, key=b"key-%d" % i,
                                      value=rnd.randbytes(100) + bytes(rnd.randrange(300, 900)),
                                      timestamp=1_500_000_000_000 + i) for i in range(WRAPPED)]
        entry = legacy.build_wrapper(magic=1, codec=codec, offsets=range(WRAPPED), messages=inner,
                                     last_offset=WRAPPED - 1, timestamp=1_500_000_000_000 + k)
        out.append(entry[legacy.LOG_OVERHEAD:])
    return out


def write(path: Path, size: int, kind: str) -> None:
    """A legacy-only segment of about ``size`` bytes: ``v1``, ``v0``, ``v1-gzip``, ``v1-snappy`` or ``v1-lz4``."""
    rnd = random.Random(kind)
    codec = {"v1-gzip": Compression.GZIP, "v1-snappy": Compression.SNAPPY, "v1-lz4": Compression.LZ4}.get(kind)
    pool = _wrappers(rnd, codec) if codec else _messages(rnd, 0 if kind == "v0" else 1)
    step = WRAPPED if codec else 1
    with open(path, "wb") as fh:
        written, offset = 0, step - 1
        while written < size:
            entry = legacy.build_entry(offset, pool[offset // step % POOL])
            fh.write(entry)
            written += len(entry)
            offset += step


def _scan(path: Path, native: bool, repeat: int) -> tuple[float, columns.SegmentColumns]:
    old = os.environ.pop("KAFKATOOL_NATIVE", None)
    if not native:
        os.environ["KAFKATOOL_NATIVE"] = "0"
    try:
        best, cols = float("inf"), None
        for _ in range(repeat):
            began = time.perf_counter()
            cols = columns.scan_segment(path)
            best = min(best, time.perf_counter() - began)
    finally:
        os.environ.pop("KAFKATOOL_NATIVE", None)
        if old is not None:
            os.environ["KAFKATOOL_NATIVE"] = old
    assert cols is not None
    return best, cols


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.legacy", description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=None, help="where the segments are written (kept)")
    parser.add_argument("--mb", type=int, default=150, help="segment size in MB (10^6 bytes)")
    parser.add_argument("--repeat", type=int, default=3, help="native runs (the best is kept)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="kafkatool-legacy-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    for kind in ("v1", "v0", "v1-gzip", "v1-snappy", "v1-lz4"):
        path = work / f"{kind}.log"
        if not path.exists() or path.stat().st_size < args.mb * 10**6:
            write(path, args.mb * 10**6, kind)
        size = path.stat().st_size
        with open(path, "rb") as fh:  # the page cache warm for both
            while fh.read(8 << 20):
                pass
        native_s, a = _scan(path, True, args.repeat)
        python_s, b = _scan(path, False, 1)
        same = (a.legacy.rows() == b.legacy.rows() and a.defects == b.defects and a.landing == b.landing
                and a.positions.tolist() == b.positions.tolist())
        print(f"{kind}: {size / 1e6:.0f} MB, {len(a.legacy)} legacy entries: native {native_s:.3f} s "
              f"({size / native_s / 1e6:.0f} MB/s), KAFKATOOL_NATIVE=0 {python_s:.2f} s "
              f"({size / python_s / 1e6:.1f} MB/s), {python_s / native_s:.0f}x; same result: {same}", flush=True)


if __name__ == "__main__":
    main()
