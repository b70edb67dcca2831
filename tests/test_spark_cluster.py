"""``kafkatool scan --engine spark`` on a real standalone cluster (a master and two workers, separate JVM processes
with separate work directories, ``tests.spark_cluster``) reading ``s3://`` input from a real object store
(versitygw, ``tests.object_store``) and writing ``s3://`` tables: the same rows as the local engine's on the corpus
and the fixtures, also when one worker's executor JVM is killed in the middle of the scan (Spark runs its tasks
again). Executors run a separate venv without kafkatool and get kafkatool as a Spark archive built from this
checkout.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.fleet.tables import sort_rows
from tests.conftest import LOOPBACK, REPO, listening_sockets, shared_dir
from tests.object_store import BUCKET, Store
from tests.scan_support import read_tables, spark_unavailable
from tests.spark_cluster import (
    Cluster,
    executor_jvms,
    executor_python,
    kafkatool_archive,
    python_workers,
    running_cluster,
)
from tests.test_object_store import mapped, remote_tables

TREES = {"corpus": shared_dir("corpus"), "fixtures": REPO / "fixtures"}


@dataclass
class Rig:
    store: Store
    cluster: Cluster
    archive: Path
    python: Path
    tmp: Path
    local: dict[str, list[dict[str, Any]]]


@pytest.fixture(scope="module")
def rig(s3_store: tuple[Store, dict[str, Path]], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    reason = spark_unavailable()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set: the Spark cluster must be tested)")
        pytest.skip(reason)
    store, _ = s3_store
    tmp = tmp_path_factory.mktemp("cluster")
    python = executor_python()
    proc = subprocess.run([str(python), "-c", "import kafkatool"], capture_output=True, check=False, cwd=tmp)
    assert proc.returncode != 0, "the executors' venv must not hold kafkatool: it comes as a Spark archive"
    archive = kafkatool_archive(tmp)
    out = tmp / "local"
    result = CliRunner().invoke(app, ["scan", "-q", "--fail-on", "never", *map(str, TREES.values()), "--out",
                                      str(out)])
    assert result.exit_code == 0, result.stderr
    local = read_tables(out)
    for name, path in TREES.items():
        local = mapped(local, str(path), f"s3://{BUCKET}/{name}")
    local = {name: sort_rows(rows, name) for name, rows in local.items()}  # the URLs may sort unlike the paths
    with running_cluster(tmp / "spark", store.env()) as cluster:
        yield Rig(store, cluster, archive, python, tmp, local)


def driver(rig: Rig, out: str) -> subprocess.Popen[str]:
    """``kafkatool scan --engine spark --master spark://...`` over the store, as a separate driver process."""
    submit = (f"--archives {rig.archive}#kafkatool --conf spark.executor.cores=1 --conf spark.executor.memory=1g "
              "--conf spark.driver.host=127.0.0.1 --conf spark.driver.bindAddress=127.0.0.1 pyspark-shell")
    env = {**os.environ, **rig.store.env(), "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": str(rig.python),
           "PYSPARK_DRIVER_PYTHON": sys.executable, "PYSPARK_SUBMIT_ARGS": submit}
    argv = [sys.executable, "-m", "kafkatool", *rig.store.fs_options, "scan", "--engine", "spark", "--master",
            rig.cluster.master, "-q", "-f", "json", "--fail-on", "never", "--chunk-mib", "1",
            *(f"s3://{BUCKET}/{name}" for name in TREES), "--out", out]
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=rig.tmp, start_new_session=True)


def finish(proc: subprocess.Popen[str], timeout: float = 900) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    return proc.returncode, out, err


def assert_same_as_local(rig: Rig, key: str) -> None:
    got = remote_tables(rig.store, key)
    for table, rows in rig.local.items():
        assert len(got[table]) == len(rows), table
        for i, (g, w) in enumerate(zip(got[table], rows, strict=True)):
            assert g == w, f"{table} row {i}"


def test_cluster_scan_of_s3_with_a_killed_executor_equals_the_local_engine(rig: Rig) -> None:
    """One scan of the corpus and the fixtures on the cluster, ``s3://`` in and out; once tasks run, one worker's
    executor JVM is killed (SIGKILL): Spark runs its tasks again on a new executor, and the tables still equal the
    local engine's. Every process of the cluster listens on 127.0.0.1 only."""
    proc = driver(rig, f"s3://{BUCKET}/out/cluster")
    victim = None
    deadline = time.monotonic() + 600
    try:
        while victim is None and proc.poll() is None and time.monotonic() < deadline:
            for worker in rig.cluster.workers:
                for jvm in executor_jvms(worker.pid):
                    if python_workers(jvm):  # its tasks are running
                        victim = jvm
                        break
                if victim is not None:
                    break
            time.sleep(0.2)
        assert victim is not None, "no executor ran a Python task"
        listening = set()
        for pid in [*rig.cluster.pids, victim]:
            listening |= listening_sockets(pid)
        assert listening and all(addr in LOOPBACK for addr, _ in listening), listening
        os.kill(victim, signal.SIGKILL)
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    code, out, err = finish(proc)
    assert code == 0, err[-3000:]
    assert json.loads(out)["engine"] == f"spark {rig.cluster.master}"
    assert_same_as_local(rig, f"{BUCKET}/out/cluster")
    # each worker ran executors in its own work directory, each of which unpacked the kafkatool archive when given
    # its first task; the killed one was replaced by a new executor, which the job may have finished without (an
    # executor fetches the archive with its first task; seen once in CI: one executor directory without it)
    executors = [d for work in rig.cluster.work_dirs for d in work.glob("app-*/*") if d.is_dir()]
    assert len(executors) >= 3, executors
    idle = [d for d in executors if not (d / "kafkatool" / "__init__.py").exists()]
    assert len(idle) <= 1 and len(executors) - len(idle) >= 2, (executors, idle)
    assert {d.parent.parent for d in executors} == set(rig.cluster.work_dirs)
