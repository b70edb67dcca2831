"""A real S3-compatible object store for the tests: versitygw (the Versity S3 gateway, Apache-2.0), built from the Go
module proxy with ``go install`` into a cache directory once (``python -m tests.object_store build``, which
``.ci/run`` calls; idempotent: a built binary is reused), started on 127.0.0.1 over a temporary directory and
stopped by whoever started it, also on failure.

No mock: every request goes over HTTP to the gateway, which keeps the objects as files in its own directory.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

VERSION = "v1.8.0"
MODULE = "github.com/versity/versitygw/cmd/versitygw"
ACCESS_KEY = "kafkatool-test"
SECRET_KEY = "kafkatool-test-secret"


def cache_dir() -> Path:
    """Where the binary is built (``KAFKATOOL_TEST_CACHE``, else ``~/.cache/kafkatool-tests``)."""
    base = os.environ.get("KAFKATOOL_TEST_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kafkatool-tests")
    return Path(base) / f"versitygw-{VERSION}"


def binary() -> Path:
    """The versitygw binary's path (built or not)."""
    return cache_dir() / "versitygw"


def build() -> Path:
    """``go install`` versitygw at :data:`VERSION` into :func:`cache_dir` unless it is already there."""
    return _go_install(binary(), MODULE, VERSION, "versitygw")


def _go_install(target: Path, module: str, version: str, name: str) -> Path:
    """``go install module@version`` into ``target``'s directory unless ``target`` is already there."""
    if target.exists():
        return target
    go = shutil.which("go") or ("/usr/local/go/bin/go" if os.path.exists("/usr/local/go/bin/go") else None)
    if go is None:
        raise RuntimeError(f"go is not installed: {name} is built from the Go module proxy with go install")
    target.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GOBIN": str(target.parent), "GOFLAGS": "-mod=mod"}
    subprocess.run(["nice", go, "install", f"{module}@{version}"], env=env, check=True, timeout=1800)
    return target


def run_cli(store: Any, *args: str) -> tuple[int, str, str]:
    """kafkatool's CLI in process with the store's ``--fs-option``s: exit code, stdout, stderr."""
    from typer.testing import CliRunner

    from kafkatool.cli import app

    result = CliRunner().invoke(app, [*store.fs_options, *args])
    return result.exit_code, result.stdout, result.stderr


def mapped(value: Any, local: str, remote: str) -> Any:
    """``value`` with the local root's name replaced by the URL (strings inside lists and dicts too)."""
    if isinstance(value, str):
        return value.replace(local, remote)
    if isinstance(value, list):
        return [mapped(v, local, remote) for v in value]
    if isinstance(value, dict):
        return {k: mapped(v, local, remote) for k, v in value.items()}
    return value


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Store:
    """A running gateway: its endpoint, credentials and pid."""

    endpoint: str
    pid: int
    root: Path
    access_log: Path | None = None

    @property
    def fs_options(self) -> list[str]:
        """The ``--fs-option`` pairs that reach it (credentials go by the environment, :meth:`env`)."""
        return ["--fs-option", f"endpoint={self.endpoint}", "--fs-option", "region=us-east-1"]

    def env(self) -> dict[str, str]:
        """The AWS SDK's credential variables for it."""
        return {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_DEFAULT_REGION": "us-east-1",
                "AWS_EC2_METADATA_DISABLED": "true"}

    def requests(self, key: str) -> list[str]:
        """The operations (``s3_GetObject``, ``s3_HeadObject``...) the server logged so far on ``bucket/key``, in
        order (its access log)."""
        if self.access_log is None or not self.access_log.exists():
            return []
        out = []
        for line in self.access_log.read_text(errors="replace").splitlines():
            fields = line.split()
            if len(fields) > 10 and fields[9].split("?")[0] == f"/{key}":
                out.append(fields[7])
        return out

    def bytes_sent(self) -> int:
        """Bytes the server process has written so far, to sockets and files (``wchar`` of ``/proc/PID/io``):
        during reads, the bytes it served."""
        for line in Path(f"/proc/{self.pid}/io").read_text().splitlines():
            if line.startswith("wchar:"):
                return int(line.split()[1])
        raise RuntimeError("no wchar in /proc/PID/io")

    def filesystem(self) -> Any:
        """A pyarrow S3 file system on it (for uploads and checks)."""
        import pyarrow.fs as pafs

        return pafs.S3FileSystem(access_key=ACCESS_KEY, secret_key=SECRET_KEY, endpoint_override=self.endpoint,
                                 scheme="http", region="us-east-1", allow_bucket_creation=True)

    def upload(self, local: Path, bucket_key: str) -> None:
        """Copy the tree ``local`` to ``bucket/key`` (symbolic links, FIFOs and devices are left out), a few
        objects at a time."""
        upload_tree(self.filesystem(), local, bucket_key)


@contextmanager
def running_store(tmp: Path, buckets: tuple[str, ...] = ("kafkatool",)) -> Iterator[Store]:
    """versitygw on 127.0.0.1 over ``tmp``, with ``buckets`` made; stopped (its process group) on the way out."""
    path = build()
    root = tmp / "versitygw"
    root.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = {**os.environ, "ROOT_ACCESS_KEY": ACCESS_KEY, "ROOT_SECRET_KEY": SECRET_KEY}
    log = open(tmp / "versitygw.log", "wb")  # noqa: SIM115 - closed below
    access = tmp / "versitygw-access.log"
    proc = subprocess.Popen([str(path), "--port", f"127.0.0.1:{port}", "--access-log", str(access), "posix",
                             str(root)], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_listening(proc, port, tmp / "versitygw.log", "versitygw")
        store = Store(f"http://127.0.0.1:{port}", proc.pid, root, access)
        fs = store.filesystem()
        for bucket in buckets:
            fs.create_dir(bucket)
        yield store
    finally:
        _stop(proc, grace=20)  # versitygw flushes what it holds
        log.close()


def write_large_segment(out: Any, size: int, value_bytes: int = 64 << 10) -> int:
    """Write to ``out`` (a binary stream) a valid segment of at least ``size`` bytes: batches of one record of
    ``value_bytes`` each (offsets 0, 1, ...; a varied value so no two batches are alike). Returns its size."""
    from kafkatool.schema import record_batch as rb

    written, offset = 0, 0
    filler = bytes(range(256)) * (value_bytes // 256 + 1)
    while written < size:
        value = offset.to_bytes(8, "big") + filler[offset % 256:offset % 256 + value_bytes - 8]
        record = rb.Record(offset=0, timestamp=0, key=None, value=value, offset_delta=0, timestamp_delta=0)
        batch = rb.build_records_batch([record], base_offset=offset, base_timestamp=1_700_000_000_000 + offset,
                                       partition_leader_epoch=0)
        out.write(batch)
        written += len(batch)
        offset += 1
    return written


#: The benchmark tree's kinds (tests/benchmarks/bench_fleet.py), fewer and smaller: a 6 MiB segment cut into ranges.
SMALL_BENCH = {
    "big": {"records": 15, "value": 1000, "batches": 120, "segment": 1 << 20, "partitions": 3},
    "medium": {"records": 40, "value": 300, "batches": 100, "segment": 256 << 10, "partitions": 4},
    "tiny": {"records": 1, "value": 100, "batches": 3000, "segment": 128 << 10, "partitions": 3},
    "huge": {"records": 15, "value": 1000, "batches": 400, "segment": 16 << 20, "partitions": 1},
}
BUCKET = "kafkatool"


@contextmanager
def uploaded_store(tmp: Path) -> Iterator[tuple[Store, dict[str, Path]]]:
    """:func:`running_store` with the corpus, the fixtures, a small benchmark tree and two cut-segment trees
    uploaded (``s3://kafkatool/<name>`` holds the local tree of each name) and the credential variables set."""
    from tests.benchmarks.bench_fleet import generate
    from tests.conftest import REPO, shared_dir
    from tests.scan_support import big_partition_dir, false_cut_dir

    trees = {"corpus": shared_dir("corpus"), "fixtures": REPO / "fixtures",
             "bench": generate(tmp / "bench", SMALL_BENCH),
             "big": big_partition_dir(tmp / "big", batches=3000),
             "trap": false_cut_dir(tmp / "trap")[0]}
    saved = {k: os.environ.get(k) for k in Store("", 0, tmp).env()}
    with running_store(tmp) as st:
        os.environ.update(st.env())
        try:
            for name, local in trees.items():
                st.upload(local, f"{BUCKET}/{name}")
            yield st, trees
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


# ---- Google Cloud Storage and Azure Blob Storage: real emulators, each a server process on 127.0.0.1 ----

GCS_VERSION = "v1.56.1"
GCS_MODULE = "github.com/fsouza/fake-gcs-server"
AZURITE_VERSION = "3.37.0"
#: Azurite's well-known development account and key (public: Azure's documentation for the emulator gives them).
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def _cache_root() -> Path:
    return cache_dir().parent


def gcs_binary() -> Path:
    """fake-gcs-server's binary (built or not)."""
    return _cache_root() / f"fake-gcs-server-{GCS_VERSION}" / "fake-gcs-server"


def azurite_script() -> Path:
    """Azurite's blob service entry point (installed or not)."""
    return (_cache_root() / f"azurite-{AZURITE_VERSION}" / "node_modules" / "azurite" / "dist" / "src" / "blob" /
            "main.js")


def build_gcs() -> Path:
    """``go install`` fake-gcs-server (a Google Cloud Storage emulator, BSD-2) unless it is already built."""
    return _go_install(gcs_binary(), GCS_MODULE, GCS_VERSION, "fake-gcs-server")


def build_azurite() -> Path:
    """``npm install`` Azurite (Microsoft's Azure Storage emulator, MIT) unless it is already installed."""
    target = azurite_script()
    if target.exists():
        return target
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not installed: Azurite comes from the npm registry")
    prefix = target.parents[5]
    prefix.mkdir(parents=True, exist_ok=True)
    subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", str(prefix),
                    f"azurite@{AZURITE_VERSION}"], check=True, timeout=1800, stdout=subprocess.DEVNULL)
    return target


@dataclass
class Emulator:
    """A running GCS or Azure emulator: the URL scheme it serves, how to reach it and its process."""

    scheme: str
    endpoint: str
    pid: int
    options: dict[str, str]

    @property
    def fs_options(self) -> list[str]:
        """The ``--fs-option`` pairs that reach it."""
        return [x for k, v in self.options.items() for x in ("--fs-option", f"{k}={v}")]

    def url(self, bucket: str, key: str = "") -> str:
        """The URL of ``key`` in ``bucket`` (a container for Azure, named in the Hadoop form)."""
        top = f"{bucket}@{AZURITE_ACCOUNT}.dfs.core.windows.net" if self.scheme == "abfs" else bucket
        return f"{self.scheme}://{top}" + (f"/{key}" if key else "")

    def filesystem(self) -> Any:
        """A pyarrow file system on it (for uploads)."""
        import pyarrow.fs as pafs

        host = self.endpoint.split("://", 1)[1]
        if self.scheme == "gs":
            return pafs.GcsFileSystem(anonymous=True, scheme="http", endpoint_override=host, project_id="kafkatool")
        return pafs.AzureFileSystem(account_name=AZURITE_ACCOUNT, account_key=AZURITE_KEY,
                                    blob_storage_authority=host, dfs_storage_authority=host,
                                    blob_storage_scheme="http", dfs_storage_scheme="http")

    def upload(self, local: Path, bucket_key: str) -> None:
        """Copy the tree ``local`` to ``bucket/key`` (regular files only), a few objects at a time."""
        upload_tree(self.filesystem(), local, bucket_key)


def upload_tree(fs: Any, local: Path, bucket_key: str) -> None:
    """Copy the tree ``local`` into the pyarrow file system ``fs`` at ``bucket/key`` (symbolic links, FIFOs and
    devices left out), a few objects at a time."""
    from concurrent.futures import ThreadPoolExecutor

    files = [Path(root) / name for root, _dirs, names in os.walk(local) for name in names]
    files = [f for f in files if not f.is_symlink() and f.is_file()]

    def put(src: Path) -> None:
        with fs.open_output_stream(f"{bucket_key}/{src.relative_to(local).as_posix()}") as out:
            out.write(src.read_bytes())

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(put, files))


def _wait_listening(proc: subprocess.Popen[bytes], port: int, log: Path, name: str) -> None:
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited: {log.read_text(errors='replace')[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not start listening within 60 s") from None
            time.sleep(0.2)


def _stop(proc: subprocess.Popen[bytes], grace: float = 3) -> None:
    """SIGTERM to a server's process group, SIGKILL ``grace`` seconds later (an emulator's data is thrown away
    anyway)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@contextmanager
def running_emulator(scheme: str, tmp: Path, buckets: tuple[str, ...] = (BUCKET,)) -> Iterator[Emulator]:
    """fake-gcs-server (``gs``) or Azurite (``abfs``) on 127.0.0.1 over ``tmp``, ``buckets`` made; stopped (its
    process group) on the way out, also after a failure."""
    port = free_port()
    data = tmp / f"{scheme}-data"
    data.mkdir(parents=True, exist_ok=True)
    endpoint = f"http://127.0.0.1:{port}"
    if scheme == "gs":
        argv = [str(build_gcs()), "-scheme", "http", "-host", "127.0.0.1", "-port", str(port), "-backend",
                "filesystem", "-filesystem-root", str(data), "-public-host", f"127.0.0.1:{port}", "-external-url",
                endpoint, "-log-level", "warn"]
        options = {"endpoint": endpoint, "anonymous": "true"}
    elif scheme == "abfs":
        node = shutil.which("node") or "node"
        argv = [node, str(build_azurite()), "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location",
                str(data), "--skipApiVersionCheck", "--loose", "--silent"]
        options = {"endpoint": endpoint}
    else:
        raise ValueError(scheme)
    log_path = tmp / f"{scheme}-server.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=data)
    try:
        _wait_listening(proc, port, log_path, argv[0])
        emu = Emulator(scheme, endpoint, proc.pid, options)
        fs = emu.filesystem()
        for bucket in buckets:
            fs.create_dir(bucket)
        yield emu
    finally:
        _stop(proc)


if __name__ == "__main__":
    if sys.argv[1:] != ["build"]:
        sys.exit("usage: python -m tests.object_store build")
    print(build())
    print(build_gcs())
    print(build_azurite())
