"""A real Spark standalone cluster for the tests: a master and two workers, each its own JVM process with its own
work directory, started from the pyspark wheel's ``bin/spark-class`` on 127.0.0.1 and stopped (process groups) by
whoever started them, also on failure.

Executors do not see this checkout or its venv. Their Python is a separate venv holding kafkatool's dependencies
only (:func:`executor_python`, built once into the test cache from PyPI by pip, the versions of this venv), and
kafkatool reaches them the way Spark ships Python code: :func:`kafkatool_archive` builds a wheel from the checkout
(``pip wheel``) and repacks its ``kafkatool/`` package as ``kafkatool.zip``, which ``--archives
kafkatool.zip#kafkatool`` unpacks into every executor's working directory, a directory on the Python workers'
path: ``import kafkatool`` finds it there.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import REPO
from tests.object_store import cache_dir, free_port

#: What the executors' venv holds: kafkatool's dependencies and pandas (PySpark's Arrow paths), never kafkatool.
EXECUTOR_PACKAGES = ("typer", "rich", "crc32c", "construct", "cramjam", "xxhash", "orjson", "zstandard", "pyarrow",
                     "numpy", "confluent-kafka", "pandas")


def spark_home() -> Path:
    """The installed pyspark package (it holds ``bin/spark-class`` and the jars)."""
    import pyspark

    return Path(pyspark.__file__).parent


def executor_python() -> Path:
    """The executors' interpreter: a separate venv with :data:`EXECUTOR_PACKAGES` at this venv's versions (built
    once by pip into the test cache, keyed by those versions; reused after)."""
    pins = sorted(f"{p}=={importlib.metadata.version(p)}" for p in EXECUTOR_PACKAGES)
    key = hashlib.sha256(("\n".join(pins) + sys.version).encode()).hexdigest()[:12]
    venv = cache_dir().parent / f"executor-venv-{key}"
    python = venv / "bin" / "python"
    if (venv / ".complete").exists():
        return python
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, timeout=300)
    subprocess.run(["nice", str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *pins],
                   check=True, timeout=1800)
    (venv / ".complete").write_text("\n".join(pins))
    return python


def kafkatool_archive(tmp: Path) -> Path:
    """``kafkatool.zip``: the ``kafkatool`` package of a wheel built from this checkout, at the archive's top."""
    wheels = tmp / "wheel"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(REPO)],
                   check=True, timeout=900)
    (wheel,) = wheels.glob("kafkatool-*.whl")
    archive = tmp / "kafkatool.zip"
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            if info.filename.startswith("kafkatool/") and not info.is_dir():
                out.writestr(info.filename[len("kafkatool/"):], src.read(info))
    return archive


@dataclass
class Cluster:
    """A running standalone cluster: the master URL, and each worker's process and work directory."""

    master: str
    ui: str
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    work_dirs: list[Path] = field(default_factory=list)
    pids: list[int] = field(default_factory=list)

    def alive_workers(self) -> int:
        """Workers registered with the master (its JSON status page)."""
        with urllib.request.urlopen(f"{self.ui}/json/", timeout=5) as r:
            return int(json.load(r).get("aliveworkers", 0))


def _spark_class(home: Path, *args: str) -> list[str]:
    return [str(home / "bin" / "spark-class"), *args]


@contextmanager
def running_cluster(tmp: Path, env: dict[str, str], workers: int = 2) -> Iterator[Cluster]:
    """A master and ``workers`` workers (one core, 1 GiB each) on 127.0.0.1; ``env``: the workers' (and so the
    executors') environment beyond this one (the object store's credentials, as instance roles would give)."""
    home = spark_home()
    tmp.mkdir(parents=True, exist_ok=True)
    base = {**os.environ, **env, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_LOG_DIR": str(tmp / "logs"), "SPARK_NO_DAEMONIZE": "1"}
    base.pop("PYSPARK_SUBMIT_ARGS", None)
    port, ui_port = free_port(), free_port()
    with ExitStack() as stack:
        procs: list[subprocess.Popen[bytes]] = []

        def stop_all() -> None:
            for proc in reversed(procs):
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGTERM)
            for proc in reversed(procs):
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()

        stack.callback(stop_all)

        def start(name: str, args: list[str]) -> subprocess.Popen[bytes]:
            log = stack.enter_context(open(tmp / f"{name}.log", "wb"))
            proc = subprocess.Popen(_spark_class(home, *args), env=base, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True, cwd=tmp)
            procs.append(proc)
            return proc

        start("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                         "--webui-port", str(ui_port)])
        cluster = Cluster(f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{ui_port}")
        _wait(lambda: _listening(port) and _listening(ui_port), 120, "the Spark master", tmp / "master.log")
        for i in range(workers):
            work = tmp / f"worker-{i + 1}"
            work.mkdir()
            proc = start(f"worker-{i + 1}", ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                                             "--cores", "1", "--memory", "1g", "--webui-port", str(free_port()),
                                             "--work-dir", str(work), cluster.master])
            cluster.workers.append(proc)
            cluster.work_dirs.append(work)
        cluster.pids = [p.pid for p in procs]
        _wait(lambda: cluster.alive_workers() == workers, 120, "the Spark workers", tmp / "worker-1.log")
        yield cluster


def _listening(port: int) -> bool:
    import socket

    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def _wait(ready: object, seconds: float, what: str, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            if ready():  # type: ignore[operator]
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
            raise RuntimeError(f"{what} did not come up within {seconds} s:\n{tail}")
        time.sleep(0.5)


def executor_jvms(worker_pid: int) -> list[int]:
    """The executor JVMs a worker launched (its children running ``CoarseGrainedExecutorBackend``)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == worker_pid and b"CoarseGrainedExecutorBackend" in cmdline:
            out.append(int(entry.name))
    return out


def python_workers(pid: int) -> list[int]:
    """The Python processes (PySpark daemon and workers) below process ``pid``."""
    children: dict[int, list[int]] = {}
    names: dict[int, bytes] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            names[int(entry.name)] = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            todo.append(child)
            if b"pyspark" in names.get(child, b""):
                found.append(child)
    return found
