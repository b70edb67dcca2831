"""``gs://`` and ``abfs://`` inputs against real emulators started on 127.0.0.1 (``tests.object_store``):
fake-gcs-server (the Google Cloud Storage JSON API, built from the Go module proxy) read through pyarrow's
``GcsFileSystem`` anonymously, and Azurite (Microsoft's Azure Storage emulator, from npm) read through pyarrow's
``AzureFileSystem`` with the account key in ``AZURE_STORAGE_KEY``. On each, ``scan``, ``check`` and
``dump-segment`` over the fixtures print and write what they do on the local files (names mapped to the URL).

``hdfs://`` has no such test: pyarrow's ``HadoopFileSystem`` needs ``libhdfs.so`` (the JNI shim of a Hadoop
binary distribution), which none of the registries this project installs from ships (Maven Central's
``hadoop-hdfs-native-client`` jar holds no native library; Debian packages no Hadoop).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kafkatool.fleet.tables import TABLES, sorted_rows
from tests.conftest import REPO
from tests.object_store import AZURITE_KEY, BUCKET, Emulator, mapped, running_emulator
from tests.object_store import run_cli as run
from tests.scan_support import read_tables

FIXTURES = REPO / "fixtures"


@pytest.fixture(scope="module", params=["gs", "abfs"])
def emulator(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    """The emulator of the scheme, running, with the fixtures uploaded to ``<bucket>/fixtures``."""
    scheme = request.param
    mp = pytest.MonkeyPatch()
    mp.setenv("AZURE_STORAGE_KEY", AZURITE_KEY)  # Azure's own tools' variable: how abfs:// gets the key here
    try:
        with running_emulator(scheme, tmp_path_factory.mktemp(scheme)) as emu:
            emu.upload(FIXTURES, f"{BUCKET}/fixtures")
            yield emu
    finally:
        mp.undo()


def test_scan_equals_the_local_scan(emulator: Emulator, tmp_path: Path) -> None:
    remote = emulator.url(BUCKET, "fixtures")
    # One job: the units run in this process (the S3 tests run the worker processes; here they would only add
    # their start-up time)
    code, out_l, err = run(emulator, "scan", "-q", "-j", "1", "--fail-on", "never", "-f", "json", str(FIXTURES),
                           "--out", str(tmp_path / "local"))
    assert code == 0, err
    code, out_r, err = run(emulator, "scan", "-q", "-j", "1", "--fail-on", "never", "-f", "json", remote, "--out",
                           str(tmp_path / "remote"))
    assert code == 0, err
    want = mapped(read_tables(tmp_path / "local"), str(FIXTURES), remote)
    got = {name: sorted_rows(pq.read_table(tmp_path / "remote" / name), name) for name in TABLES}
    assert sum(len(v) for v in got.values()) > 100
    for table in TABLES:
        assert got[table] == want[table], table
    s_local, s_remote = json.loads(out_l), json.loads(out_r)
    for key in ("log_dirs", "partitions", "segments", "bytes", "batches", "records", "counts"):
        assert s_local[key] == s_remote[key], key
    assert mapped(s_local["worst_findings"], str(FIXTURES), remote) == s_remote["worst_findings"]


def test_check_prints_what_it_prints_locally(emulator: Emulator) -> None:
    """Every fixture log dir, in JSON (the S3 tests also compare the table: the rendering is the same code)."""
    dirs = [p for p in sorted(FIXTURES.iterdir()) if p.is_dir() and p.name != "oracle"]
    assert len(dirs) > 5
    for local in dirs:
        remote = emulator.url(BUCKET, f"fixtures/{local.name}")
        code_l, out_l, _ = run(emulator, "check", "-q", "-f", "json", str(local))
        code_r, out_r, err_r = run(emulator, "check", "-q", "-f", "json", remote)
        assert code_r == code_l, (remote, err_r)
        assert out_r == out_l.replace(str(local), remote), remote


def test_dump_segment_prints_what_it_prints_locally(emulator: Emulator) -> None:
    files = sorted(p for p in (FIXTURES / "demo").rglob("*") if p.is_file())
    assert len(files) > 10
    for local in files:
        remote = emulator.url(BUCKET, local.relative_to(REPO).as_posix())
        for fmt in (["-f", "json", "--verify"], ["-f", "kafka", "--deep"])[:2 if local.suffix == ".log" else 1]:
            code_l, out_l, _ = run(emulator, "dump-segment", "-q", *fmt, str(local))
            code_r, out_r, err_r = run(emulator, "dump-segment", "-q", *fmt, remote)
            assert code_r == code_l, (remote, err_r)
            assert out_r == out_l.replace(str(local), remote), (remote, fmt)


def test_a_missing_object_is_named_by_its_url(emulator: Emulator) -> None:
    code, _out, err = run(emulator, "check", emulator.url(BUCKET, "nothing-here"))
    assert code == 3 and emulator.url(BUCKET, "nothing-here") in err and "Traceback" not in err
