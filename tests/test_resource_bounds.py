"""Bounded resources on hostile input (issue 9), each run in a child process whose peak RSS is read back.

A 2^31-1 batch length in a 1 KiB file, a zstd frame claiming 8 GiB and a 1 GiB segment of zeros (a sparse file:
no disk used) each end in a defect report under 200 MB; 10,000 partition directories are walked in bounded
memory; ``--max-decompressed-bytes`` turns an oversized batch into a defect. No timing is asserted here (speed
lives in ``tests/benchmarks``).
"""

from __future__ import annotations

import json
import os
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
import os, resource, subprocess, sys
cpu = int(os.environ.get("PROBE_CPU_SECONDS", "0"))
limit = (lambda: resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))) if cpu else None
proc = subprocess.run([sys.executable, "-m", "kafkatool", *sys.argv[1:]], capture_output=True, preexec_fn=limit)
sys.stdout.buffer.write(proc.stdout)
sys.stderr.buffer.write(proc.stderr)
print(f"\\n{proc.returncode} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}", file=sys.stderr)
"""


def run_measured(*argv: str, cpu_seconds: int = 0) -> tuple[int, str, str, int]:
    """``kafkatool argv`` in a fresh process: exit code, stdout, stderr and peak RSS in KiB; ``cpu_seconds``: the
    process is killed (SIGXCPU) past that much CPU time (a bound on the work, not a timing)."""
    env = {**os.environ, "PROBE_CPU_SECONDS": str(cpu_seconds)}
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=600, env=env)
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


def test_zero_filled_index_files(tmp_path: Path) -> None:
    """A segment's ``.index``, ``.timeindex`` and ``.txnindex`` zero-filled to 1 GiB (sparse: no disk): their zero
    tails are recognised, never expanded (Kafka's loading takes a preallocated index's zero slots as unused)."""
    records = [rb.Record(offset=i, timestamp=0, key=None, value=b"v", offset_delta=0, timestamp_delta=0)
               for i in range(3)]
    log = b"".join(rb.build_records_batch(records[i:i + 1], base_offset=i, base_timestamp=0) for i in range(3))
    part = _partition(tmp_path, log)
    for suffix in (".index", ".timeindex", ".txnindex"):
        with (part / segment_file_name(0, suffix)).open("wb") as fh:
            fh.truncate(1 << 30)
    code, out, err, rss = run_measured("check", "-f", "json", str(part), cpu_seconds=120)
    assert code == 1, err
    codes = {f["code"] for f in _findings(out)}
    assert {"index-preallocated", "txnindex-without-marker"} <= codes, codes
    assert rss < LIMIT_KB, f"check: {rss} KiB"
    for suffix in (".index", ".timeindex"):
        for fmt in ("json", "kafka"):
            code, out, err, rss = run_measured("dump-segment", "-f", fmt, str(part / segment_file_name(0, suffix)),
                                               cpu_seconds=120)
            assert code in (0, 1) and "Traceback" not in err, err
            assert rss < LIMIT_KB, f"dump-segment -f {fmt} {suffix}: {rss} KiB"
    # A zero-filled .txnindex of 64 MiB: 1,973,790 entries, each a line or a row, streamed.
    txn = part / segment_file_name(0, ".txnindex")
    with txn.open("r+b") as fh:
        fh.truncate(64 << 20)
    entries = (64 << 20) // 34
    code, out, err, rss = run_measured("dump-segment", "-f", "kafka", str(txn), cpu_seconds=120)
    assert code == 0 and out.count("\n") == entries + 1, err
    assert rss < LIMIT_KB, f"dump-segment -f kafka .txnindex: {rss} KiB"
    code, out, err, rss = run_measured("dump-segment", "-f", "jsonl", str(txn), cpu_seconds=120)
    assert out.count('"type":"aborted_txn"') == entries, err
    assert rss < LIMIT_KB, f"dump-segment -f jsonl .txnindex: {rss} KiB"


def test_index_verified_against_its_log_held_lazily(tmp_path: Path, monkeypatch: object) -> None:
    """``dump-segment --verify`` of an index reads its segment as a partition read does (positions, entries
    re-read on use), never as a list of every batch: on 1 GiB of one-record batches beside a zero-filled
    ``.index`` that list was 2.2 GB. The objects' reader is refused here; the checks still find what they find."""
    import pytest
    from typer.testing import CliRunner

    from kafkatool.cli import app
    from kafkatool.reading import log as log_reader

    records = [rb.Record(offset=0, timestamp=0, key=None, value=b"v", offset_delta=0, timestamp_delta=0)]
    log = b"".join(rb.build_records_batch(records, base_offset=i, base_timestamp=1000 + i) for i in range(50))
    part = _partition(tmp_path, log)
    for suffix in (".index", ".timeindex"):
        with (part / segment_file_name(0, suffix)).open("wb") as fh:
            fh.write(bytes(24))  # zero slots: a preallocated index
    assert isinstance(monkeypatch, pytest.MonkeyPatch)

    def refused(*args: object, **kwargs: object) -> object:
        raise AssertionError("the segment was read as a list of entries")

    monkeypatch.setattr(log_reader, "read_log", refused)
    outputs = {}
    for suffix in (".index", ".timeindex"):
        index = str(part / segment_file_name(0, suffix))
        res = CliRunner().invoke(app, ["dump-segment", "--verify", "-f", "json", index])
        assert res.exit_code in (0, 1), res.output  # a refused read would be an internal error, exit 3
        outputs[suffix] = res.output
    assert "timestamp" in outputs[".timeindex"]  # the zero entry's timestamp 0 against the batch's: still checked


def _gzip_bomb(seed: int, size: int = 1 << 20) -> bytes:
    """A gzip member of about ``size`` bytes inflating to about 1,000 times that (zeros)."""
    import zlib

    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts, done, zeros = [comp.compress(seed.to_bytes(8, "big"))], 0, bytes(1 << 20)
    while done < size - 2048:
        parts.append(comp.compress(zeros))
        done += len(parts[-1])
    parts.append(comp.flush())
    return b"".join(parts)


def test_legacy_gzip_wrappers_past_the_cap(tmp_path: Path) -> None:
    """Legacy gzip wrappers of 1 MB each inflating past the cap (1 GB each): each is refused at the wrapper's own
    position, in bounded memory, and within a CPU budget a whole inflation per wrapper per read would exceed."""
    from kafkatool.schema import legacy

    entries = [legacy.build_legacy_entry(i, magic=1, attributes=Compression.GZIP.value, value=_gzip_bomb(i),
                                         timestamp=0) for i in range(4)]
    positions = [sum(len(e) for e in entries[:i]) for i in range(len(entries))]
    part = _partition(tmp_path, b"".join(entries))
    for argv in (["check", "-f", "json"], ["dump-segment", "--verify", "--deep", "-f", "json"],
                 ["replay-producers", "-f", "json"], ["simulate-restart", "-f", "json"]):
        for native in ("1", "0"):
            os.environ["KAFKATOOL_NATIVE"] = native
            try:
                code, out, err, rss = run_measured(*argv, str(part), cpu_seconds=60)
            finally:
                del os.environ["KAFKATOOL_NATIVE"]
            assert code in (0, 1) and "Traceback" not in err, (argv, err)
            assert rss < LIMIT_KB, f"{argv[0]} (native {native}): {rss} KiB"
            if argv[0] in ("check", "dump-segment"):
                found = _findings(out) if argv[0] == "check" else _defects(out)
                refused = [d["position"] for d in found if "decompresses to more than" in d["reason"]]
                assert refused == positions, (argv, native, refused)
