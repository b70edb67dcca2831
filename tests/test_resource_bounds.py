"""Bounded resources on hostile input (issue 9), each run in a child process whose peak RSS is read back.

A 2^31-1 batch length in a 1 KiB file, a zstd frame claiming 8 GiB and a 1 GiB segment of zeros (a sparse file:
no disk used) each end in a defect report under 200 MB; 10,000 partition directories are walked in bounded
memory; ``--max-decompressed-bytes`` turns an oversized batch into a defect. No timing is asserted here (speed
lives in ``tests/benchmarks``).
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

from kafkatool.model import Compression
from kafkatool.schema import codecs
from kafkatool.schema import record_batch as rb
from kafkatool.schema.filenames import segment_file_name

LIMIT_KB = 200 * 1024  # 200 MB, as the acceptance asks
SEGMENT = segment_file_name(0, ".log")

# Runs kafkatool in a grandchild and prints its exit code and peak RSS (KiB): the child's own numbers only,
# whatever the test process itself has used.
PROBE = """
import resource, subprocess, sys
proc = subprocess.run([sys.executable, "-m", "kafkatool", *sys.argv[1:]], capture_output=True)
sys.stdout.buffer.write(proc.stdout)
sys.stderr.buffer.write(proc.stderr)
print(f"\\n{proc.returncode} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}", file=sys.stderr)
"""


def run_measured(*argv: str) -> tuple[int, str, str, int]:
    """``kafkatool argv`` in a fresh process: exit code, stdout, stderr and peak RSS in KiB."""
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=600)
    err, _, last = proc.stderr.rstrip("\n").rpartition("\n")
    code, rss = (int(x) for x in last.split())
    return code, proc.stdout, err, rss


def _partition(tmp_path: Path, data: bytes | None = None, size: int | None = None) -> Path:
    part = tmp_path / "evidence-0"
    part.mkdir()
    seg = part / SEGMENT
    with seg.open("wb") as fh:
        if data is not None:
            fh.write(data)
        if size is not None:
            fh.truncate(size)  # sparse: the zeros cost no disk
    return part


def _defects(stdout: str) -> list[dict]:
    doc = json.loads(stdout)
    return [d for f in doc["files"] for d in f.get("defects", [])] if "files" in doc else doc.get("defects", [])


def _findings(stdout: str) -> list[dict]:
    return json.loads(stdout)["findings"]


def test_huge_batch_length_in_a_1_kib_file(tmp_path: Path) -> None:
    head = struct.pack(">qii", 0, (1 << 31) - 1, 0) + bytes([rb.MAGIC])
    part = _partition(tmp_path, head + bytes(1024 - len(head)))
    code, out, err, rss = run_measured("dump-segment", "--verify", "--deep", "-f", "json", str(part))
    assert code == 1, err
    assert [(d["code"], d["position"]) for d in _defects(out)] == [("torn-tail", 0)]
    assert rss < LIMIT_KB, f"{rss} KiB"
    code, out, err, rss = run_measured("check", "-f", "json", str(part))
    assert code == 1 and any(f["code"] for f in _findings(out)), err
    assert rss < LIMIT_KB, f"{rss} KiB"


def _zstd_claim_batch() -> bytes:
    """A magic 2 batch whose zstd payload's frame header declares 8 GiB of content."""
    frame = b"\x28\xb5\x2f\xfd" + bytes([0xE0]) + (8 << 30).to_bytes(8, "little") + bytes(64)
    assert codecs.zstd_declared_size(frame) == 8 << 30
    return rb.build_batch(base_offset=0, partition_leader_epoch=0, attributes=Compression.ZSTD.value,
                          last_offset_delta=0, base_timestamp=0, max_timestamp=0, producer_id=-1, producer_epoch=-1,
                          base_sequence=-1, records_count=1, payload=frame)


def test_zstd_frame_claiming_8_gib(tmp_path: Path) -> None:
    part = _partition(tmp_path, _zstd_claim_batch())
    code, out, err, rss = run_measured("dump-segment", "--deep", "-f", "json", str(part))
    assert code == 1, err
    assert [d["code"] for d in _defects(out)] == ["record-decode"]
    assert "decompresses to more than" in _defects(out)[0]["reason"]
    assert rss < LIMIT_KB, f"{rss} KiB"
    code, out, err, rss = run_measured("replay-producers", "-f", "json", str(part))
    assert code in (0, 1) and "Traceback" not in err
    assert rss < LIMIT_KB, f"{rss} KiB"


def test_one_gib_of_zeros(tmp_path: Path) -> None:
    part = _partition(tmp_path, size=1 << 30)
    code, out, err, rss = run_measured("dump-segment", "--verify", "-f", "json", str(part))
    assert code == 1, err
    assert [(d["code"], d["position"]) for d in _defects(out)] == [("trailing-zeros", 0)]
    assert rss < LIMIT_KB, f"dump-segment: {rss} KiB for 1 GiB of zeros"
    code, out, err, rss = run_measured("check", "-f", "json", str(part))
    assert code == 1 and _findings(out), err
    assert rss < LIMIT_KB, f"check: {rss} KiB for 1 GiB of zeros"


def test_ten_thousand_partitions(tmp_path: Path) -> None:
    log_dir = tmp_path / "logdir"
    for i in range(10_000):
        part = log_dir / f"topic-{i}"
        part.mkdir(parents=True)
        (part / SEGMENT).touch()
    for argv in (["check", "-f", "json"], ["dump-segment", "-f", "jsonl"]):
        code, out, err, rss = run_measured(*argv, str(log_dir))
        assert code in (0, 1), err
        assert out.count("topic-9999") >= 1
        assert rss < LIMIT_KB, f"{argv[0]}: {rss} KiB for 10,000 partitions"


def test_max_decompressed_bytes_makes_a_large_batch_a_defect(tmp_path: Path) -> None:
    """The cap is the user's: 200 KiB of records pass by default and become a defect under a 100 KB cap."""
    records = [rb.Record(offset=i, timestamp=0, key=None, value=bytes(1000), offset_delta=i, timestamp_delta=0)
               for i in range(200)]
    batch = rb.build_records_batch(records, base_offset=0, base_timestamp=0, compression=Compression.GZIP)
    part = _partition(tmp_path, batch)
    code, out, err, _ = run_measured("dump-segment", "--deep", "--verify", "-f", "json", str(part))
    assert code == 0, err + out
    code, out, err, _ = run_measured("--max-decompressed-bytes", "100000", "dump-segment", "--deep", "-f", "json",
                                     str(part))
    assert code == 1 and "more than 100000 bytes" in out, err
