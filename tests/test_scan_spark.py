"""``kafkatool scan --engine spark`` (PySpark Data Sources on ``local[2]``) writes the same tables as the local
engine, row for row, on the Kafka-made corpus, the fixtures, a segment cut into byte ranges and a false cut.

Spark needs Java and pyspark; where either is truly absent these tests skip, except under CI where that is a
failure (CI installs pyspark through the test extra, and the machine has Java 17).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from tests.conftest import REPO, corpus_cases, shared_dir
from tests.scan_support import big_partition_dir, expected_batch_rows, false_cut_dir, read_tables, spark_unavailable

runner = CliRunner()


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    reason = spark_unavailable()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set: the Spark engine must be tested)")
        pytest.skip(reason)
    from kafkatool.fleet.spark import session

    spark, _ = session("local[2]")
    yield spark
    spark.stop()


def scan(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["scan", "--no-progress", "--fail-on", "never", "-f", "json", *args])
    return result.exit_code, result.stdout, result.stderr


def both_engines(tmp_path: Path, *args: str) -> tuple[dict[str, list[dict]], dict[str, list[dict]], dict, dict]:
    """Scan with each engine; the tables of each and their summaries."""
    outs = {}
    summaries = {}
    for engine in ("local", "spark"):
        out = tmp_path / engine
        code, stdout, err = scan(*args, "--out", str(out), "--engine", engine, "--master", "local[2]")
        assert code == 0, err
        outs[engine] = read_tables(out)
        summaries[engine] = json.loads(stdout)
    return outs["local"], outs["spark"], summaries["local"], summaries["spark"]


def assert_same(local: dict[str, list[dict]], spark: dict[str, list[dict]]) -> None:
    for table in local:
        assert len(spark[table]) == len(local[table]), table
        for i, (a, b) in enumerate(zip(local[table], spark[table], strict=True)):
            assert a == b, f"{table} row {i}"


def test_spark_equals_local_on_the_corpus(spark: Any, tmp_path: Path) -> None:
    corpus = shared_dir("corpus")
    local, remote, s_local, s_spark = both_engines(tmp_path, str(corpus))
    assert_same(local, remote)
    for key in ("log_dirs", "partitions", "segments", "batches", "records", "counts", "worst_findings"):
        assert s_local[key] == s_spark[key], key
    for case in corpus_cases():
        log_dir = str(corpus / case / "input")
        want = expected_batch_rows(json.loads((corpus / case / "expected.json").read_text()), log_dir)
        assert sum(1 for r in remote["batches"] if r["log_dir"] == log_dir) == len(want), case


def test_spark_equals_local_on_the_fixtures(spark: Any, tmp_path: Path) -> None:
    local, remote, _, _ = both_engines(tmp_path, str(REPO / "fixtures"))
    assert_same(local, remote)
    assert local["batches"] and local["findings"] and local["producers"]


def test_spark_cuts_large_segments_into_ranges(spark: Any, tmp_path: Path) -> None:
    log_dir = big_partition_dir(tmp_path / "in", batches=3000)
    local, remote, _, _ = both_engines(tmp_path, str(log_dir), "--chunk-mib", "1")
    assert_same(local, remote)
    assert len(remote["batches"]) == 3000
    from kafkatool.fleet.plan import make_plan

    assert len(make_plan([str(log_dir)], chunk_bytes=1 << 20).ranges) > 3


def test_spark_recovers_from_a_false_cut(spark: Any, tmp_path: Path) -> None:
    from kafkatool.fleet.spark import run_spark
    from kafkatool.writing.tables import TableOutput

    log_dir, _ = false_cut_dir(tmp_path / "in")
    tables = {}
    for name, chunk in (("whole", 1 << 40), ("cut", 1024)):
        out = tmp_path / name
        with TableOutput(out, [log_dir]) as output:
            run_spark(spark, [str(log_dir)], output, chunk_bytes=chunk, partitions=2)
            output.commit()
        tables[name] = read_tables(out)
    assert_same(tables["whole"], tables["cut"])
    assert len(tables["cut"]["batches"]) == 52


def test_the_data_sources_work_from_any_spark_program(spark: Any) -> None:
    corpus = shared_dir("corpus")
    case = corpus / "txn-clean" / "input"
    batches = spark.read.format("kafka-segments").load(str(case))
    assert batches.count() == len(expected_batch_rows(json.loads((corpus / "txn-clean" / "expected.json")
                                                                  .read_text()), str(case)))
    assert batches.where("control_type = 'ABORT'").count() > 0
    producers = spark.read.format("kafka-producers").load(str(case)).collect()
    assert {r["producer_id"] for r in producers}
    parts = spark.read.format("kafka-partitions").load(str(case)).collect()
    assert [r["directory"] for r in parts] == ["ledger-0"]
    findings = spark.read.format("kafka-findings").load(str(corpus / "idem-torn-write" / "input"))
    assert findings.where("code = 'torn-tail'").count() == 1


def test_options_reach_the_readers_whatever_their_case(spark: Any, tmp_path: Path) -> None:
    log_dir = big_partition_dir(tmp_path / "in", batches=400)
    from kafkatool.fleet.plan import make_plan

    ranges = len(make_plan([str(log_dir)], chunk_bytes=256 << 10).ranges)
    assert ranges > 2
    frame = spark.read.format("kafka-segments").option("chunkBytes", str(256 << 10)).option(
        "numPartitions", "1000").load(str(log_dir))
    assert frame.rdd.getNumPartitions() == ranges  # one task per range when asked for more tasks than ranges
    assert frame.count() == 400


def test_the_jvm_listens_on_loopback_only(spark: Any) -> None:
    """The driver JVM of a local master (its block manager, RPC and Py4J servers) binds to 127.0.0.1."""
    from tests.conftest import LOOPBACK, listening_sockets

    jvm = spark.sparkContext._gateway.proc  # the JVM PySpark launched
    listening = listening_sockets(jvm.pid)
    assert listening
    assert all(addr in LOOPBACK for addr, _ in listening), listening


def test_spark_logs_go_to_a_file_named_in_one_line(tmp_path: Path) -> None:
    """A fresh ``kafkatool scan --engine spark``: no log4j or JVM line on the terminal, one line naming the file
    that holds them."""
    import subprocess
    import sys

    if spark_unavailable():
        pytest.skip(spark_unavailable() or "")
    proc = subprocess.run([sys.executable, "-m", "kafkatool", "scan", "--engine", "spark", "--master", "local[1]",
                           "--no-progress", "--fail-on", "never", "--out", str(tmp_path / "out"),
                           str(REPO / "fixtures" / "demo")], capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("Spark's own log (log4j, JVM warnings): ")
    log = Path(line.split(": ", 1)[1])
    assert "log4j" in log.read_text()
    log.unlink()
