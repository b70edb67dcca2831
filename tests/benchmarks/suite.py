"""The measurements: kafkatool's scans and commands against kafka-python, aiokafka and the raw CRC-32C rate,
all in one run, so every ratio compares figures taken minutes apart on the same (shared, noisy) machine.

Each in-process figure is the median of ``repeat`` runs, interleaved between the contenders; peak RSS and the
command-line figures come from fresh processes (:mod:`tests.benchmarks.probe`).
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from crc32c import crc32c

from kafkatool.model import Defect
from kafkatool.reading import columns
from kafkatool.schema import batch_columns as bc
from kafkatool.schema.log_segment import walk_log

Result = dict[str, Any]


class Mapped:
    """A read-only mapping of one input, with its size and (on demand) a ``bytes`` copy for aiokafka."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd = os.open(path, os.O_RDONLY)
        self.mm = mmap.mmap(self.fd, 0, access=mmap.ACCESS_READ)
        self.size = len(self.mm)

    def close(self) -> None:
        with contextlib.suppress(BufferError):  # a peer still holds a view: the mapping goes with it
            self.mm.close()
        os.close(self.fd)


def prefix_end(mm: mmap.mmap, limit: int) -> int:
    """The first batch boundary at or after ``limit`` (the end of a prefix made of whole batches)."""
    positions: list[int] = []
    end = bc.scan_chain(mm, 0, len(mm), limit, False, positions, [])
    return min(end, len(mm))


def timed(contenders: dict[str, Callable[[], int]], repeat: int) -> dict[str, Result]:
    """Run each contender ``repeat`` times, interleaved; median and min-max seconds, and its item count."""
    times: dict[str, list[float]] = {k: [] for k in contenders}
    counts: dict[str, int] = {}
    for _ in range(repeat):
        for name, fn in contenders.items():
            started = time.perf_counter()
            counts[name] = fn()
            times[name].append(time.perf_counter() - started)
    return {k: {"s": statistics.median(v), "min_s": min(v), "max_s": max(v), "items": counts[k]}
            for k, v in times.items()}


# --- contenders -----------------------------------------------------------------------------------------


def crc_one_buffer(m: Mapped, end: int | None = None) -> int:
    """crc32c in one call over the bytes (the CRC instruction's own rate, the ceiling of any CRC scan)."""
    crc32c(m.mm if end is None else memoryview(m.mm)[:end])
    columns.release(m.mm, 0, m.size)
    return 1


def crc_fresh_mapping(path: str) -> int:
    """crc32c in one call over a mapping made for the call: the CRC of a file as any reader of it pays, the pages
    mapped into the process (page faults) on top of the CRC instruction's rate."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        crc32c(mm)
    return 1


def crc_slices(m: Mapped, positions: list[int], lengths: list[int]) -> int:
    """crc32c once per batch from a Python loop, nothing else: the bound of any per-batch CRC loop."""
    view = memoryview(m.mm)
    for pos, length in zip(positions, lengths, strict=True):
        crc32c(view[pos + 21:pos + 12 + length])
    columns.release(m.mm, 0, m.size)
    return len(positions)


def ours_columns(m: Mapped, verify: bool, threads: int | None = None) -> int:
    cols = columns.scan_buffer(m.mm, m.path, verify_crc=verify, threads=threads, path=m.path)
    assert not cols.defects, cols.defects[:3]
    return len(cols)


def ours_parallel(m: Mapped) -> int:
    cols = columns.scan_segment_parallel(m.path)
    assert not cols.defects
    return len(cols)


def ours_walker(m: Mapped, verify: bool, deep: bool = False, end: int | None = None) -> int:
    n = 0
    for item in walk_log(m.mm, m.path, deep=deep, verify_crc=verify, end=end):
        if isinstance(item, Defect):
            raise AssertionError(item.describe())
        n += len(item.records) if deep and item.records is not None else 1
    columns.release(m.mm, 0, m.size)
    return n


def _peer_walk(batches: Iterator[Any], mode: str) -> int:
    """The same work for either peer's batch objects: batches touched (shallow, crc) or records decoded (deep)."""
    n = 0
    for batch in batches:
        if mode == "shallow":
            _ = (batch.base_offset, batch.producer_id, batch.next_offset)
            n += 1
        elif mode == "crc":
            assert batch.validate_crc()
            n += 1
        else:
            assert batch.validate_crc()
            for rec in batch:
                _ = (rec.offset, rec.timestamp, rec.key, rec.value, rec.headers)
                n += 1
    return n


def kafka_python(data: Any, mode: str) -> int:
    from kafka.record.memory_records import MemoryRecords

    mr = MemoryRecords(data)

    def batches() -> Iterator[Any]:
        while mr.has_next():
            yield mr.next_batch()

    return _peer_walk(batches(), mode)


def aiokafka(data: bytes, mode: str) -> int:
    from aiokafka.record.memory_records import MemoryRecords

    mr = MemoryRecords(data)
    return _peer_walk(iter(mr.next_batch, None), mode)


def peers_available() -> dict[str, bool]:
    out = {}
    for name, module in (("kafka-python", "kafka.record.memory_records"), ("aiokafka", "aiokafka.record._crecords")):
        try:
            __import__(module)
            out[name] = True
        except ImportError:
            out[name] = False
    return out


# --- the groups of measurements -------------------------------------------------------------------------


def segment_scan(path: str, repeat: int, peers: dict[str, bool], parallel: bool) -> Result:
    """Shallow and CRC scans of one segment by every contender, plus the raw CRC rates over the same bytes."""
    m = Mapped(path)
    try:
        cols = columns.scan_buffer(m.mm, path, verify_crc=False)
        positions = cols.positions.tolist()
        lengths = cols.headers["batch_length"].tolist()
        contenders: dict[str, Callable[[], int]] = {
            "crc32c_one_buffer": lambda: crc_one_buffer(m),
            "crc32c_fresh_mapping": lambda: crc_fresh_mapping(path),
            "crc32c_per_batch_loop": lambda: crc_slices(m, positions, lengths),
            "kafkatool_shallow": lambda: ours_columns(m, False),
            "kafkatool_crc": lambda: ours_columns(m, True),
            "kafkatool_crc_two_threads": lambda: ours_columns(m, True, threads=2),
            "kafkatool_walker_shallow": lambda: ours_walker(m, False),
            "kafkatool_walker_crc": lambda: ours_walker(m, True),
        }
        if parallel:
            contenders["kafkatool_crc_process_pool"] = lambda: ours_parallel(m)
        if peers["kafka-python"]:
            contenders["kafka-python_shallow"] = lambda: kafka_python(m.mm, "shallow")
            contenders["kafka-python_crc"] = lambda: kafka_python(m.mm, "crc")
        result = timed(contenders, repeat)
        if peers["aiokafka"]:
            data = bytes(m.mm)  # aiokafka's C reader takes only bytes: a copy of the whole file
            columns.release(m.mm, 0, m.size)
            result.update(timed({"aiokafka_shallow": lambda: aiokafka(data, "shallow"),
                                 "aiokafka_crc": lambda: aiokafka(data, "crc")}, repeat))
            del data
        for r in result.values():
            r["gb_per_s"] = m.size / r["s"] / 1e9
            r["m_batches_per_s"] = len(positions) / r["s"] / 1e6
        return {"bytes": m.size, "batches": len(positions), "runs": result}
    finally:
        m.close()


def deep_decode(path: str, limit: int | None, repeat: int, peers: dict[str, bool]) -> Result:
    """Every record decoded (offset, timestamp, key, value, headers) over a prefix of whole batches."""
    m = Mapped(path)
    try:
        end = prefix_end(m.mm, limit) if limit is not None and limit < m.size else m.size
        view = memoryview(m.mm)[:end]
        contenders: dict[str, Callable[[], int]] = {
            "kafkatool_deep": lambda: ours_walker(m, True, deep=True, end=end if end < m.size else None)}
        if peers["kafka-python"]:
            contenders["kafka-python_deep"] = lambda: kafka_python(view, "deep")
        result = timed(contenders, repeat)
        if peers["aiokafka"]:
            data = bytes(view)
            result.update(timed({"aiokafka_deep": lambda: aiokafka(data, "deep")}, repeat))
            del data
        counts = {r["items"] for r in result.values()}
        assert len(counts) == 1, f"the readers disagree on the record count: {result}"
        for r in result.values():
            r["m_records_per_s"] = r["items"] / r["s"] / 1e6
            r["gb_per_s"] = end / r["s"] / 1e9
        return {"bytes": end, "records": counts.pop(), "runs": result}
    finally:
        m.close()


def commands_in_process(logdir: str, repeat: int) -> Result:
    """replay-producers, simulate-restart (unclean, recovery point 0) and check on the partition, called as the
    commands call them (reading and engine, no rendering), against a plain CRC scan of the same segments."""
    from kafkatool.engine.check import check_log_dir
    from kafkatool.engine.replay import replay
    from kafkatool.reading.logdir import partition_with_high_watermark, read_log_dir

    part_dir = next(p for p in Path(logdir).iterdir() if p.is_dir())
    logs = sorted(str(p) for p in part_dir.glob("*.log"))
    size = sum(os.path.getsize(p) for p in logs)

    def crc_scan() -> int:
        return sum(len(columns.scan_segment(p)) for p in logs)

    def restart() -> int:
        return _restart(logdir)

    def replay_producers() -> int:
        part, _hw = partition_with_high_watermark(part_dir)
        return len(replay(part).manager.snapshot_entries())

    def check() -> int:
        return len(check_log_dir(read_log_dir(logdir)))

    result = timed({"plain_crc_scan": crc_scan, "simulate-restart": restart, "replay-producers": replay_producers,
                    "check": check}, repeat)
    for r in result.values():
        r["gb_per_s"] = size / r["s"] / 1e9
    return {"bytes": size, "segments": len(logs), "runs": result}


def restart_in_process(logdir: str, repeat: int) -> Result:
    """``simulate-restart`` (unclean, recovery point 0) on ``logdir`` as the command calls it (reading and
    engine, no rendering): median and min-max seconds."""
    return timed({"simulate-restart": lambda: _restart(logdir)}, repeat)["simulate-restart"]


def _restart(logdir: str) -> int:
    """One ``simulate-restart --assume unclean --recovery-point 0`` of ``logdir``, engine only."""
    from kafkatool.engine.restart import RestartOptions, simulate_restart
    from kafkatool.reading.restart_inputs import read_restart_inputs

    inputs = read_restart_inputs(Path(logdir))
    result = simulate_restart(inputs.log_dir, inputs.swaps, RestartOptions(now=1_800_000_000_000, assume="unclean",
                                                                           recovery_point=0, plan_output=False))
    return len(result.partitions)


def cli(args: list[str], repeat: int, native: bool = True) -> Result:
    """A ``kafkatool`` command in a fresh process (interpreter start and imports included), output discarded;
    ``native=False`` runs it with ``KAFKATOOL_NATIVE=0`` (the Python path)."""
    times = []
    rss = 0
    env = {**os.environ, **({} if native else {"KAFKATOOL_NATIVE": "0"})}
    for _ in range(repeat):
        # Wall time from fork to exit, taken here: a start time read from /proc inside the child is whole seconds
        # of boot time plus clock ticks, off by up to a second.
        started = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "tests.benchmarks.probe", "cli", *args], capture_output=True,
                             text=True, check=True, env=env)
        times.append(time.perf_counter() - started)
        info = json.loads(out.stdout.strip().splitlines()[-1])
        rss = max(rss, info["max_rss_mb"])
    return {"args": args, "native": native, "s": statistics.median(times), "min_s": min(times),
            "max_s": max(times), "max_rss_mb": rss}


def help_time(repeat: int) -> Result:
    """``kafkatool --help`` as a user's shell runs it: a fresh ``python -m kafkatool --help`` process, wall time
    from fork to exit (interpreter start included), median of ``repeat``."""
    times, cpu = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "kafkatool", "--help"], stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        times.append(time.perf_counter() - started)
        cpu.append(usage.ru_utime + usage.ru_stime)
        proc.returncode = os.waitstatus_to_exitcode(status)
        assert proc.returncode == 0
    return {"s": statistics.median(times), "min_s": min(times), "max_s": max(times),
            "cpu_s": statistics.median(cpu)}


def peak_rss(mode: str, path: str) -> Result:
    """Peak resident memory of one scan mode over ``path``, in a fresh process."""
    out = subprocess.run([sys.executable, "-m", "tests.benchmarks.probe", mode, path], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])
