"""Kafka's own tools in the benchmark's run: ``DumpLogSegments`` as a whole process, and a real broker's log
recovery (``LogManager.loadLogs`` / ``LogLoader``) timed by the broker itself, on the benchmark's own files.

The jars are the live oracle's (``python -m tests.kafka.versions fetch``; the newest version by default). Both
run with the JVM options Kafka's scripts give them by default, as a user runs them: ``kafka-run-class.sh``'s
for a tool (``KAFKA_HEAP_OPTS=-Xmx256M`` plus ``KAFKA_JVM_PERFORMANCE_OPTS``), ``kafka-server-start.sh``'s heap
for the broker (``-Xmx1G -Xms1G``). Output goes to /dev/null; wall time covers the whole process, JVM start
included; peak RSS is the process's own ``VmHWM``, sampled while it runs.

The recovery run: a fresh single KRaft node (broker and controller, loopback) is formatted, the benchmark's
partition is copied into its log dir with no clean-shutdown marker and no recovery-point checkpoint (so
``hadCleanShutdown=false`` and recovery point 0: every segment is recovered, as ``LogLoader`` does after a
crash), the broker is started and its own figures are read from its log: ``LogManager``'s
``Loaded N logs in Xms`` (the whole load of the log dir), the per-log ``Completed load of ... in Xms`` and the
``Recovering unflushed segment`` lines of ``LogLoader``. The broker is stopped after (SIGKILL of its process
group: nothing of it is kept).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.kafka import versions
from tests.kafka.broker import KafkaError, Node, cluster_id, run_java

Result = dict[str, Any]

#: ``kafka-run-class.sh``'s defaults for a tool: KAFKA_HEAP_OPTS and KAFKA_JVM_PERFORMANCE_OPTS.
TOOL_JVM: tuple[str, ...] = ("-Xmx256M", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
                             "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
                             "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true")
#: ``kafka-server-start.sh``'s heap, then the same performance options.
BROKER_JVM: tuple[str, ...] = ("-Xmx1G", "-Xms1G", *TOOL_JVM[1:])

LOADED = re.compile(r"Loaded (\d+) logs in (\d+)ms")
COMPLETED = re.compile(r"Completed load of .*? with (\d+) segments.*? in (\d+)ms")
RECOVERING = re.compile(r"Recovering unflushed segment")


def available(version: str | None = None) -> str | None:
    """The Kafka version to run (the newest fetched), or None when no jars or no java are there."""
    for v in ([version] if version else list(reversed(versions.VERSIONS))):
        try:
            versions.classpath(v)
            versions.java_binary()
        except versions.JarsMissing:
            continue
        return v
    return None


def command(version: str, simple_main: str, args: list[str], jvm: tuple[str, ...],
            log_file: Path | None = None) -> list[str]:
    """The ``java`` command line of one of Kafka's main classes with ``jvm`` options (logging as the harness)."""
    main = versions.main_class(version, simple_main) if "." not in simple_main else simple_main
    logging = ([f"-Dorg.slf4j.simpleLogger.logFile={log_file}", "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
                "-Dorg.slf4j.simpleLogger.showDateTime=true"] if log_file else
               ["-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"])
    return [versions.java_binary(), *jvm, *logging, "-cp", versions.classpath(version), main, *args]


def _peak_kb(pid: int) -> int:
    """``VmHWM`` of a running process (its own peak: unlike ``ru_maxrss`` it is not inherited from the parent
    that forked it, here a benchmark holding a 1 GiB copy), 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            return next((int(line.split()[1]) for line in fh if line.startswith("VmHWM:")), 0)
    except (OSError, ValueError):
        return 0


def _run_once(cmd: list[str]) -> tuple[float, float, int]:
    """Wall seconds, peak RSS (MB, ``VmHWM`` sampled every 20 ms) and exit status of one process, stdout to
    /dev/null."""
    with open(os.devnull, "wb") as devnull, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=devnull, stderr=err)
        peak = 0
        while proc.poll() is None:
            peak = max(peak, _peak_kb(proc.pid))
            time.sleep(0.02)
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            err.seek(0)
            raise KafkaError(f"{' '.join(cmd[-4:])} exited {proc.returncode}: "
                             f"{err.read().decode(errors='replace')[-2000:]}")
    return wall, peak / 1024, proc.returncode


def dump_log_segments(version: str, path: str, flags: tuple[str, ...], repeat: int) -> Result:
    """``kafka-dump-log.sh --files PATH FLAGS`` as a whole process, ``repeat`` times: median and min-max wall
    seconds, peak RSS."""
    cmd = command(version, "DumpLogSegments", ["--files", path, *flags], TOOL_JVM)
    times, rss = [], 0.0
    for _ in range(repeat):
        wall, peak, _ = _run_once(cmd)
        times.append(wall)
        rss = max(rss, peak)
    return {"args": ["--files", path, *flags], "version": version, "s": statistics.median(times),
            "min_s": min(times), "max_s": max(times), "max_rss_mb": rss}


def _recovery_once(version: str, partition_dir: Path, work: Path, timeout: float) -> Result:
    shutil.rmtree(work, ignore_errors=True)
    node = Node(version, 1, work)
    node.format(cluster_id(f"bench-{work.name}"))
    target = node.log_dir / partition_dir.name
    shutil.copytree(partition_dir, target)  # a fresh, unclean copy: recovery may rewrite indexes
    (node.log_dir / ".kafka_cleanshutdown").unlink(missing_ok=True)
    size = sum(p.stat().st_size for p in target.glob("*.log"))
    for p in target.glob("*.log"):  # pages in the cache, as for every other contender
        with open(p, "rb") as fh:
            while fh.read(8 << 20):
                pass
    node.starts += 1
    log_file = node.log_file
    cmd = command(version, "kafka.Kafka", [str(node.config())], BROKER_JVM, log_file=log_file)
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                            start_new_session=True, cwd=work)
    try:
        text = ""
        while time.perf_counter() - started < timeout:
            text = log_file.read_text(errors="replace") if log_file.exists() else ""
            if LOADED.search(text) or proc.poll() is not None:
                break
            time.sleep(0.05)
        process_s = time.perf_counter() - started
        loaded = LOADED.search(text)
        if loaded is None:
            why = (f"exited (rc={proc.returncode})" if proc.poll() is not None
                   else f"still loading after {timeout:.0f} s")
            raise KafkaError(f"Kafka {version} logged no 'Loaded N logs' line: {why}\n"
                             + "\n".join(text.splitlines()[-30:]))
        completed = COMPLETED.search(text)
        return {"version": version, "bytes": size, "logs": int(loaded.group(1)),
                "loaded_ms": int(loaded.group(2)),
                "log_load_ms": int(completed.group(2)) if completed else None,
                "segments": int(completed.group(1)) if completed else None,
                "recovered_segments": len(RECOVERING.findall(text)),
                "start_to_loaded_s": process_s}
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


def broker_recovery(version: str, partition_dir: Path, work: Path, repeat: int, timeout: float = 180) -> Result:
    """Kafka's own recovery of ``partition_dir`` (unclean, recovery point 0) in a real broker, ``repeat`` times
    (a fresh node and copy each): the broker's ``Loaded N logs in Xms`` as seconds, median and min-max."""
    runs = [_recovery_once(version, partition_dir, work / f"broker-{i}", timeout) for i in range(repeat)]
    secs = [r["loaded_ms"] / 1000 for r in runs]
    out = dict(runs[0])
    out.update({"s": statistics.median(secs), "min_s": min(secs), "max_s": max(secs),
                "gb_per_s": runs[0]["bytes"] / statistics.median(secs) / 1e9, "runs": runs})
    return out


__all__ = ["available", "broker_recovery", "dump_log_segments", "run_java"]
