"""Read limits (issue 21): the decompression cap is a value passed explicitly from the command line down to the
decoders, and through a scan's plan to every unit of work (worker processes, Spark executors), never a
process-wide setting.

The input is a magic 1 gzip wrapper whose 100 inner messages inflate to about 100 KiB: fine under the default cap,
a ``record-decode`` defect ("gzip payload decompresses to more than 50000 bytes") under a 50,000-byte one. A
shallow read inflates a legacy wrapper too (Kafka's ``baseOffset()`` of a wrapper is its first inner offset), so
``check`` and the scan's analysis meet the cap as ``dump-segment --deep`` does.
"""

from __future__ import annotations

import ast
import json
import os
import pickle
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.fleet.local import run_local
from kafkatool.fleet.plan import make_plan
from kafkatool.model import Compression
from kafkatool.reading.context import current_limits, resolve, using_limits
from kafkatool.reading.logdir import read_log_dir
from kafkatool.schema import codecs, legacy
from kafkatool.schema.codecs import DEFAULT_LIMITS, DEFAULT_MAX_OUTPUT, ReadLimits
from kafkatool.schema.filenames import segment_file_name
from tests.scan_support import read_tables, spark_unavailable

CAP = 50_000
REFUSED = f"gzip payload decompresses to more than {CAP} bytes (refused)"
runner = CliRunner()


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    """A log dir with one partition whose segment is one gzip wrapper of 100 messages of 1000 bytes."""
    part = tmp_path / "logdir" / "bomb-0"
    part.mkdir(parents=True)
    messages = [legacy.build_message(magic=1, attributes=0, key=None, value=bytes(1000), timestamp=0)] * 100
    wrapper = legacy.build_wrapper(magic=1, codec=Compression.GZIP, offsets=range(100), messages=messages,
                                   last_offset=99)
    (part / segment_file_name(0, ".log")).write_bytes(wrapper)
    return part.parent


def _segment(log_dir: Path) -> str:
    return str(log_dir / "bomb-0" / segment_file_name(0, ".log"))


def test_limits_are_a_plain_value_with_a_default() -> None:
    assert ReadLimits() == DEFAULT_LIMITS and DEFAULT_LIMITS.max_decompressed_bytes == DEFAULT_MAX_OUTPUT
    assert pickle.loads(pickle.dumps(ReadLimits(CAP))) == ReadLimits(CAP)
    with pytest.raises(ValueError, match="must be positive"):
        ReadLimits(0)


def test_the_cap_is_never_module_state() -> None:
    """No setter, no module-level cap below the reading layer; one ContextVar, in ``reading.context``."""
    assert not hasattr(codecs, "set_max_output") and not hasattr(codecs, "max_output_limit")
    package = Path(codecs.__file__).resolve().parents[1]
    makers = []
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        rel = path.relative_to(package).as_posix()
        for node in ast.walk(tree):
            if isinstance(node, ast.Global) and rel in ("schema/codecs.py", "schema/legacy.py"):
                makers.append(f"{rel}:{node.lineno}: global")
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "ContextVar":
                makers.append(rel)
    assert set(makers) == {"reading/context.py"}  # the limits, and the evidence trees of the run


def test_a_scope_sets_the_current_limits_and_an_explicit_value_wins() -> None:
    assert current_limits() == DEFAULT_LIMITS
    with using_limits(ReadLimits(CAP)):
        assert current_limits() == ReadLimits(CAP) == resolve(None)
        assert resolve(ReadLimits(7)) == ReadLimits(7)
    assert current_limits() == DEFAULT_LIMITS


def test_dump_segment_refuses_under_the_cap_only(log_dir: Path) -> None:
    plain = runner.invoke(app, ["dump-segment", "--deep", "-f", "json", _segment(log_dir)])
    assert plain.exit_code == 0 and REFUSED not in plain.stdout, plain.stdout
    env_cap = {"KAFKATOOL_MAX_DECOMPRESSED_BYTES": str(CAP)}
    for args, env in ((["--max-decompressed-bytes", str(CAP)], {}), ([], env_cap)):
        capped = runner.invoke(app, [*args, "dump-segment", "--deep", "-f", "json", _segment(log_dir)], env=env)
        reasons = [d["reason"] for f in json.loads(capped.stdout)["files"] for d in f["defects"]]
        assert reasons == [REFUSED], capped.stdout
    assert current_limits() == DEFAULT_LIMITS  # the command line's limits end with its command


def test_check_refuses_under_the_cap_only(log_dir: Path) -> None:
    plain = runner.invoke(app, ["check", "-f", "json", str(log_dir)])
    assert REFUSED not in plain.stdout, plain.stdout
    capped = runner.invoke(app, ["--max-decompressed-bytes", str(CAP), "check", "-f", "json", str(log_dir)])
    found = [(f["code"], f["reason"]) for f in json.loads(capped.stdout)["findings"]]
    assert ("record-decode", REFUSED) in found, capped.stdout


def test_a_reading_function_takes_its_limits_explicitly(log_dir: Path) -> None:
    def reasons(data: Any) -> list[str]:
        return [d.reason for p in data.partitions for s in p.segments for d in s.defects]

    assert reasons(read_log_dir(log_dir)) == []
    assert reasons(read_log_dir(log_dir, limits=ReadLimits(CAP))) == [REFUSED]
    with using_limits(ReadLimits(CAP)):
        assert reasons(read_log_dir(log_dir)) == [REFUSED]
        assert reasons(read_log_dir(log_dir, limits=DEFAULT_LIMITS)) == []


def _findings(plan: Any, jobs: int) -> list[str]:
    tables: dict[str, list[dict[str, Any]]] = defaultdict(list)

    def sink(table: str, batch: pa.RecordBatch) -> None:
        tables[table].extend(batch.to_pylist())

    run_local(plan, sink, jobs=jobs)
    return [r["reason"] for r in tables["findings"]]


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_plan_carries_the_limits_to_every_unit(log_dir: Path, jobs: int) -> None:
    """The plan's limits, not the process's: a worker reads within them wherever it runs."""
    assert make_plan([str(log_dir)]).limits == DEFAULT_LIMITS
    with using_limits(ReadLimits(CAP)):
        assert make_plan([str(log_dir)]).limits == ReadLimits(CAP)
    assert REFUSED not in _findings(make_plan([str(log_dir)]), jobs)
    capped = make_plan([str(log_dir)], limits=ReadLimits(CAP))
    assert REFUSED in _findings(capped, jobs)


def test_scan_local_refuses_under_the_cap(log_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["--max-decompressed-bytes", str(CAP), "scan", "--no-progress", "--fail-on", "never",
                                 "-f", "json", "--out", str(out), "--jobs", "2", str(log_dir)])
    assert result.exit_code == 0, result.stderr
    assert REFUSED in [r["reason"] for r in read_tables(out)["findings"]]


def test_scan_spark_executors_use_the_command_lines_cap(log_dir: Path, tmp_path: Path) -> None:
    """Spark's Python workers never see the command line: the cap reaches them with the readers."""
    reason = spark_unavailable()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set: the Spark engine must be tested)")
        pytest.skip(reason)
    outs = {}
    for name, args in (("plain", []), ("capped", ["--max-decompressed-bytes", str(CAP)])):
        outs[name] = tmp_path / name
        result = runner.invoke(app, [*args, "scan", "--no-progress", "--fail-on", "never", "-f", "json", "--out",
                                     str(outs[name]), "--engine", "spark", "--master", "local[2]", str(log_dir)])
        assert result.exit_code == 0, result.stderr
    assert REFUSED not in [r["reason"] for r in read_tables(outs["plain"])["findings"]]
    assert REFUSED in [r["reason"] for r in read_tables(outs["capped"])["findings"]]
    assert [r["base_offset"] for r in read_tables(outs["plain"])["batches"]] == [0]
    assert [r["base_offset"] for r in read_tables(outs["capped"])["batches"]] == [99]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_batches_table_reads_within_the_cap(log_dir: Path, tmp_path: Path, jobs: str) -> None:
    """A wrapper the cap refuses yields no inner offsets: its row's base offset is the wrapper's own (99)."""
    for name, args, base in (("plain", [], 0), ("capped", ["--max-decompressed-bytes", str(CAP)], 99)):
        out = tmp_path / name
        result = runner.invoke(app, [*args, "scan", "--no-progress", "--fail-on", "never", "-f", "json", "--out",
                                     str(out), "--jobs", jobs, str(log_dir)])
        assert result.exit_code == 0, result.stderr
        assert [r["base_offset"] for r in read_tables(out)["batches"]] == [base], name
