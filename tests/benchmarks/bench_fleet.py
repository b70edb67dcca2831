"""Fleet scan throughput: one plain process, the local engine's process pool, and Spark, in the same run.

Run: ``python -m tests.benchmarks.bench_fleet [--work DIR] [--repeat 3] [--master local[2]] [--cluster]``.

Generates (once, into ``--work``, default a temporary directory) a tree of three brokers' log dirs: 200
partitions and about 0.9 GB written by kafkatool's own fixture writer (Kafka's layout: segments, indexes,
snapshots, checkpoints): 16 KiB batches, 40-record batches of 300 B, one-record batches of about 100 B, and
two partitions holding a 96 MiB segment each (cut into byte ranges by both engines). Then times ``scan``'s
pipeline writing all four Parquet tables:

- ``single``: the plan run in this process (``--jobs 1``), the baseline ratios are taken against;
- ``local``: the local engine's process pool, one worker per CPU;
- ``spark``: the Spark engine on ``--master`` (session start measured apart, then each scan in that session);
- with ``--cluster``: a real standalone cluster (``tests.spark_cluster``: a master and one, then two workers of one
  core each, separate JVMs, executors on their own venv with kafkatool shipped as a Spark archive), the scan run by
  a separate driver process (session warmed by one scan, then timed), against the local engine's pool with as many
  workers as the cluster has cores, in the same run: ``cluster_1`` / ``local_1``, ``cluster_2`` / ``local_2``, and
  the scaling ``cluster_1`` / ``cluster_2``.

CPU seconds (this process and its children, for the local engine) are recorded beside wall time: on a shared
machine the per-core rate is the segment bytes over the CPU seconds, which other processes' load does not change.
Prints medians (min-max), GB/s over the segment bytes, and ratios to ``single`` measured in the same run;
``--json FILE`` writes them. Not a unit test: absolute figures depend on the machine, the ratios are the point.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafkatool.fleet.local import run_local
from kafkatool.fleet.plan import DEFAULT_CHUNK_BYTES, make_plan
from kafkatool.model import TopicPartition
from kafkatool.schema import checkpoint, clean_shutdown, meta_properties
from kafkatool.writing.atomic import write_tree
from kafkatool.writing.fixture_writer import PartitionWriter, Producer, TopicConfig, text_value
from kafkatool.writing.tables import TableOutput

BROKERS = 3
SHAPES: dict[str, dict[str, int]] = {
    # name: records per batch, value bytes, batches, segment bytes, partitions
    "big": {"records": 15, "value": 1000, "batches": 500, "segment": 4 << 20, "partitions": 60},
    "medium": {"records": 40, "value": 300, "batches": 160, "segment": 1 << 20, "partitions": 70},
    "tiny": {"records": 1, "value": 100, "batches": 7000, "segment": 1 << 20, "partitions": 68},
    "huge": {"records": 15, "value": 1000, "batches": 6200, "segment": 128 << 20, "partitions": 2},
}

# Large partitions: one ~96 MiB segment of 16 KiB batches each (Kafka's default segment is 1 GiB).
LARGE: dict[str, dict[str, int]] = {"huge": {**SHAPES["huge"], "partitions": 4}}


def _template(spec: dict[str, int], shape: str) -> tuple[dict[str, bytes], PartitionWriter]:
    part = PartitionWriter(shape, 0, config=TopicConfig(segment_bytes=spec["segment"], index_interval_bytes=4096,
                                                        segment_index_bytes=10 << 20))
    producers = [Producer(9000 + k, 0) for k in range(4)]
    for i in range(spec["batches"]):
        values = [text_value(i * spec["records"] + k, spec["value"] // 8) for k in range(spec["records"])]
        part.append(values, leader_epoch=1, producer=producers[i % 4] if i % 2 else None)
    part.close()
    return part.files(), part


def generate(root: Path, shapes: dict[str, dict[str, int]] = SHAPES) -> Path:
    """The broker tree under ``root`` (kept between runs: a ``.complete`` marker says it is whole); ``shapes``: a
    smaller tree of the same kinds (the object store's tests)."""
    tree = root / "fleet"
    if (tree / ".complete").exists():
        return tree
    shutil.rmtree(tree, ignore_errors=True)
    templates = {shape: _template(spec, shape) for shape, spec in shapes.items()}
    n = 0
    brokers: dict[int, dict[str, bytes]] = {b: {} for b in range(BROKERS)}
    offsets: dict[int, list[tuple[TopicPartition, int]]] = {b: [] for b in range(BROKERS)}
    for shape, spec in shapes.items():
        files, part = templates[shape]
        for i in range(spec["partitions"]):
            broker = n % BROKERS
            n += 1
            tp = TopicPartition(f"fleet-{shape}", i)
            for name, data in files.items():
                brokers[broker][f"{tp}/{name}"] = data
            offsets[broker].append((tp, part.log_end_offset))
    for broker, files in brokers.items():
        files["recovery-point-offset-checkpoint"] = checkpoint.build_offset_checkpoint(offsets[broker])
        files["replication-offset-checkpoint"] = checkpoint.build_offset_checkpoint(offsets[broker])
        files["log-start-offset-checkpoint"] = checkpoint.build_offset_checkpoint([])
        files["meta.properties"] = meta_properties.build_meta_properties(
            {"node.id": str(broker + 1), "directory.id": f"YmVuY2gtZGlyLWlkLTAw{broker}", "version": "1",
             "cluster.id": "kafkatool-bench"}, ("#", "#Mon Nov 23 00:00:00 UTC 2026"))
        files[".kafka_cleanshutdown"] = clean_shutdown.build_clean_shutdown(7)
        write_tree(files, tree / f"broker-{broker + 1}" / "kafka-logs")
    (tree / ".complete").write_text("")
    return tree


def _cpu_seconds() -> float:
    """CPU seconds (user and system) of this process and of its children that have ended (the pool's workers)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


_CPU: list[float] = []  # the CPU seconds of each run of the last _timed


def _timed(fn: Callable[[], Any], repeat: int) -> list[float]:
    times = []
    _CPU.clear()
    for _ in range(repeat):
        started, cpu = time.perf_counter(), _cpu_seconds()
        fn()
        times.append(time.perf_counter() - started)
        _CPU.append(_cpu_seconds() - cpu)
    return times


def _scan_local(tree: Path, out_root: Path, jobs: int, chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> None:
    out = Path(tempfile.mkdtemp(dir=out_root)) / "out"
    plan = make_plan([str(tree)], chunk_bytes=chunk_bytes)
    with TableOutput(out, [tree]) as output:
        run_local(plan, output.append, jobs=jobs)
        output.commit()
    shutil.rmtree(out.parent)


def empty_tree(root: Path) -> Path:
    """A broker log dir without partitions (its own files only): what a scan costs before it reads a byte."""
    tree = root / "fleet-empty"
    files = {"meta.properties": meta_properties.build_meta_properties(
        {"node.id": "1", "directory.id": "YmVuY2gtZGlyLWlkLTAwMA", "version": "1", "cluster.id": "kafkatool-bench"},
        ("#", "#Mon Nov 23 00:00:00 UTC 2026")), ".kafka_cleanshutdown": clean_shutdown.build_clean_shutdown(7)}
    shutil.rmtree(tree, ignore_errors=True)
    write_tree(files, tree / "broker-1" / "kafka-logs")
    return tree


def _scan_spark(spark: Any, tree: Path, out_root: Path) -> None:
    from kafkatool.fleet.spark import run_spark

    out = Path(tempfile.mkdtemp(dir=out_root)) / "out"
    with TableOutput(out, [tree]) as output:
        run_spark(spark, [str(tree)], output)
        output.commit()
    shutil.rmtree(out.parent)


def _stats(times: list[float], size: int, cpu: list[float] | None = None) -> dict[str, float]:
    med = statistics.median(times)
    out = {"median_s": med, "min_s": min(times), "max_s": max(times), "gb_per_s": size / med / 1e9}
    if cpu:
        out["cpu_s"] = statistics.median(cpu)
        out["gb_per_cpu_s"] = size / out["cpu_s"] / 1e9
    return out


def _load() -> str:
    """The machine's load averages now (reported with every figure: the machine is shared)."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _archive(tmp: Path) -> Path:
    """``kafkatool.zip`` from this checkout's package as installed (its built native core included), the layout
    :func:`tests.spark_cluster.kafkatool_archive` gives from a wheel, without building the wheel again."""
    import zipfile

    import kafkatool

    package = Path(kafkatool.__file__).parent
    archive = tmp / "kafkatool.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as out:
        for path in sorted(package.rglob("*")):
            rel = path.relative_to(package)
            if path.is_file() and rel.parts[0] != "_core" and "__pycache__" not in rel.parts:
                out.write(path, str(rel))
    return archive


def _driver(master: str, tree: Path, repeat: int) -> dict[str, Any]:
    """In a driver process started by :func:`measure_cluster`: one warming scan, then ``repeat`` timed ones."""
    from kafkatool.fleet.spark import session

    out_root = Path(tempfile.mkdtemp(prefix="kafkatool-bench-out-"))
    t0 = time.perf_counter()
    sess, _ = session(master)
    start = time.perf_counter() - t0
    first = _timed(lambda: _scan_spark(sess, tree, out_root), 1)[0]
    times = _timed(lambda: _scan_spark(sess, tree, out_root), repeat)
    sess.stop()
    shutil.rmtree(out_root, ignore_errors=True)
    return {"session_start_s": start, "first_run_s": first, "times": times}


def measure_cluster(work: Path, tree: Path, size: int, repeat: int) -> dict[str, Any]:
    """The Spark engine on a standalone cluster of one, then two one-core workers, each against the local engine's
    pool with as many workers, in the same run (a driver process per cluster, as ``spark-submit`` would be)."""
    from tests.spark_cluster import executor_python, running_cluster

    out: dict[str, Any] = {}
    tmp = Path(tempfile.mkdtemp(prefix="kafkatool-bench-cluster-", dir=work))
    python = executor_python()
    archive = _archive(tmp)
    out_root = Path(tempfile.mkdtemp(prefix="kafkatool-bench-out-"))
    for workers in (1, 2):
        with running_cluster(tmp / f"spark-{workers}", {}, workers=workers) as cluster:
            submit = (f"--archives {archive}#kafkatool --conf spark.executor.cores=1 --conf spark.executor.memory=1g "
                      "--conf spark.driver.host=127.0.0.1 --conf spark.driver.bindAddress=127.0.0.1 pyspark-shell")
            env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": str(python),
                   "PYTHONPATH": str(Path(__file__).resolve().parents[2]),  # the driver's: this checkout's tests
                   "PYSPARK_DRIVER_PYTHON": sys.executable, "PYSPARK_SUBMIT_ARGS": submit}
            load = _load()
            proc = subprocess.run([sys.executable, "-m", "tests.benchmarks.bench_fleet", "--driver", cluster.master,
                                   "--tree", str(tree), "--repeat", str(repeat)], env=env, cwd=tmp,
                                  capture_output=True, text=True, timeout=3600, check=False)
            if proc.returncode != 0:
                raise RuntimeError(f"the driver on {cluster.master} failed:\n{proc.stderr[-3000:]}")
            got = json.loads(proc.stdout.strip().splitlines()[-1])
        local = _timed(lambda: _scan_local(tree, out_root, workers), repeat)  # noqa: B023 (called at once)
        out[f"local_{workers}"] = {**_stats(local, size, list(_CPU)), "load": _load()}
        out[f"cluster_{workers}"] = {**_stats(got["times"], size), "session_start_s": got["session_start_s"],
                                     "first_run_s": got["first_run_s"], "load": load}
        out[f"cluster_{workers}_over_local"] = (out[f"cluster_{workers}"]["median_s"]
                                                / out[f"local_{workers}"]["median_s"])
    out["cluster_scaling_1_to_2"] = out["cluster_1"]["median_s"] / out["cluster_2"]["median_s"]
    out["local_scaling_1_to_2"] = out["local_1"]["median_s"] / out["local_2"]["median_s"]
    shutil.rmtree(out_root, ignore_errors=True)
    shutil.rmtree(tmp, ignore_errors=True)
    return out


def measure(work: Path, repeat: int, master: str = "local[2]", spark: bool = True,
            cluster: bool = False) -> dict[str, Any]:
    """The fleet figures: ``single``, ``local`` and (``spark``) Spark on the tree under ``work`` (made once),
    with GB/s per core of the local engine and Spark's time over local's (issue 23's targets)."""
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    tree = generate(work)
    print(f"tree: {tree} (ready in {time.perf_counter() - started:.1f} s)", file=sys.stderr)
    plan = make_plan([str(tree)])
    size = plan.total_bytes
    print(f"{len(plan.log_dirs)} log dirs, {len(plan.partitions)} partitions, {plan.segments} segments, "
          f"{len(plan.ranges)} ranges, {size / 1e6:.0f} MB", file=sys.stderr)
    out_root = Path(tempfile.mkdtemp(prefix="kafkatool-bench-out-"))
    cpus = len(os.sched_getaffinity(0))
    results: dict[str, Any] = {"bytes": size, "partitions": len(plan.partitions), "cpus": cpus, "load": _load()}
    # Warm the page cache so the first timed run is not a disk read.
    _scan_local(tree, out_root, 1)
    results["single"] = _stats(_timed(lambda: _scan_local(tree, out_root, 1), repeat), size, list(_CPU))
    results["local"] = _stats(_timed(lambda: _scan_local(tree, out_root, cpus), repeat), size, list(_CPU))
    results["local_floor_s"] = statistics.median(_timed(lambda: _scan_local(empty_tree(work), out_root, cpus), repeat))
    # The per-byte rate apart from the per-partition cost: a few partitions of one large segment each, one process,
    # with the scan's default cut into 64 MiB ranges (the segment is walked by its ranges and by its partition's
    # analysis) and uncut (one walk).
    large = generate(work / "large", LARGE)
    large_size = make_plan([str(large)]).total_bytes
    _scan_local(large, out_root, 1)
    results["large_bytes"] = large_size
    results["large_single"] = _stats(_timed(lambda: _scan_local(large, out_root, 1), repeat), large_size, list(_CPU))
    results["large_single_uncut"] = _stats(_timed(lambda: _scan_local(large, out_root, 1, 1 << 62), repeat),
                                           large_size, list(_CPU))
    if spark:
        from kafkatool.fleet.spark import session

        t0 = time.perf_counter()
        sess, _ = session(master)
        results["spark_session_start_s"] = time.perf_counter() - t0
        first = _timed(lambda: _scan_spark(sess, tree, out_root), 1)
        results["spark_first_run_s"] = first[0]
        results["spark"] = _stats(_timed(lambda: _scan_spark(sess, tree, out_root), repeat), size)
        # Spark's floor: the same jobs (five, each a Python Data Source read and a Parquet write) over no data
        empty = empty_tree(work)
        _scan_spark(sess, empty, out_root)
        results["spark_floor_s"] = statistics.median(_timed(lambda: _scan_spark(sess, empty, out_root), repeat))
        sess.stop()
    if cluster:
        results["cluster"] = measure_cluster(work, tree, size, repeat)
    results["load_after"] = _load()
    shutil.rmtree(out_root, ignore_errors=True)
    base = results["single"]["median_s"]
    for name in ("single", "local", "spark"):
        if name in results:
            results[name]["speedup_vs_single"] = base / results[name]["median_s"]
    results["local_gb_per_s_per_core"] = results["local"]["gb_per_s"] / cpus
    # The per-core rate as CPU time gives it: the segment bytes over the CPU seconds one scan took.
    results["single_gb_per_cpu_s"] = results["single"]["gb_per_cpu_s"]
    if "spark" in results:
        results["spark_over_local"] = results["spark"]["median_s"] / results["local"]["median_s"]
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, help="where to generate the tree (kept for later runs)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--no-spark", action="store_true")
    parser.add_argument("--cluster", action="store_true", help="also a standalone cluster of 1 and 2 workers")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--driver", help=argparse.SUPPRESS)  # measure_cluster's driver process: the master URL
    parser.add_argument("--tree", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.driver:
        print(json.dumps(_driver(args.driver, args.tree, args.repeat)))
        return 0
    work = args.work or Path(tempfile.mkdtemp(prefix="kafkatool-bench-fleet-"))
    results = measure(work, args.repeat, args.master, not args.no_spark, args.cluster)
    print(f"{'engine':<8} {'median s':>9} {'min-max':>13} {'GB/s':>6} {'vs single':>10}")
    for name in ("single", "local", "spark"):
        if name not in results:
            continue
        r = results[name]
        print(f"{name:<8} {r['median_s']:>9.2f} {r['min_s']:>6.2f}-{r['max_s']:<6.2f} {r['gb_per_s']:>6.2f} "
              f"{r['speedup_vs_single']:>9.2f}x")
    print(f"local: {results['local_gb_per_s_per_core']:.3f} GB/s per core ({results['cpus']} cores, wall); "
          f"single: {results['single_gb_per_cpu_s']:.3f} GB per CPU second (target >= 1); "
          f"load {results['load']} -> {results['load_after']}")
    for name in ("large_single", "large_single_uncut"):
        r = results[name]
        print(f"{name}: {r['median_s']:.2f} s, {r['gb_per_cpu_s']:.3f} GB per CPU second "
              f"({results['large_bytes'] / 1e6:.0f} MB in {len(LARGE) * LARGE['huge']['partitions']} partitions)")
    if "spark" in results:
        print(f"spark session start {results['spark_session_start_s']:.1f} s, first scan in it "
              f"{results['spark_first_run_s']:.1f} s; spark / local = {results['spark_over_local']:.2f}x "
              f"(target <= 1.3x); the same scans of an empty log dir: spark {results['spark_floor_s']:.2f} s, "
              f"local {results['local_floor_s']:.2f} s")
    if "cluster" in results:
        c = results["cluster"]
        for n in (1, 2):
            print(f"cluster {n} worker(s): {c[f'cluster_{n}']['median_s']:.2f} s "
                  f"(first {c[f'cluster_{n}']['first_run_s']:.1f} s, load {c[f'cluster_{n}']['load']}); "
                  f"local --jobs {n}: {c[f'local_{n}']['median_s']:.2f} s; "
                  f"cluster / local = {c[f'cluster_{n}_over_local']:.2f}x (target <= 1.3x)")
        print(f"scaling 1 -> 2 workers: cluster {c['cluster_scaling_1_to_2']:.2f}x, "
              f"local {c['local_scaling_1_to_2']:.2f}x")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
