"""``kafkatool scan`` with the local engine: its tables against Kafka's own decoding of the corpus, against
``check`` and ``replay-producers`` on the same dirs, and byte-range cuts that never change a row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.engine.check import check_log_dir
from kafkatool.fleet.local import run_local
from kafkatool.fleet.plan import discover, make_plan
from kafkatool.reading.batch_scan import SegmentRange, confirmed_boundary, scan_range, split_points
from kafkatool.reading.logdir import read_log_dir
from kafkatool.reading.restart_inputs import read_swaps
from tests.conftest import REPO, SHARED, corpus_cases, load_expected, shared_dir
from tests.scan_support import big_partition_dir, expected_batch_rows, false_cut_dir, read_tables

runner = CliRunner()


def scan(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["scan", "--no-progress", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def corpus_scan(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict]]:
    corpus = shared_dir("corpus")
    out = tmp_path_factory.mktemp("scan") / "out"
    code, stdout, stderr = scan(str(corpus), "--out", str(out), "-f", "json", "--fail-on", "never", "-j", "2")
    assert code == 0, stderr
    summary = json.loads(stdout)
    tables = read_tables(out)
    tables["_summary"] = [summary]  # type: ignore[list-item]
    return tables


@pytest.mark.parametrize("case", corpus_cases())
def test_batches_table_equals_kafkas_batch_list(corpus_scan: dict[str, list[dict]], case: str) -> None:
    log_dir = str(shared_dir("corpus") / case / "input")
    got = [r for r in corpus_scan["batches"] if r["log_dir"] == log_dir]
    want = expected_batch_rows(load_expected(case), log_dir)
    key = lambda r: (r["topic"], r["partition"], r["segment"], r["position"])  # noqa: E731
    got.sort(key=key)
    want.sort(key=key)
    assert [key(r) for r in got] == [key(r) for r in want]
    for g, w in zip(got, want, strict=True):
        if w["control_type"] is None and g["is_control"]:
            w.pop("control_type")  # Kafka's dump decodes the marker type only where it was asked to
        assert {k: g[k] for k in w} == w, key(w)


def test_every_corpus_case_is_found_once(corpus_scan: dict[str, list[dict]]) -> None:
    corpus = shared_dir("corpus")
    assert corpus_scan["_summary"][0]["log_dirs"] == len(corpus_cases())
    assert discover([str(corpus)]) == sorted(str(corpus / c / "input") for c in corpus_cases())


@pytest.mark.parametrize("case", corpus_cases())
def test_findings_are_checks_findings(corpus_scan: dict[str, list[dict]], case: str) -> None:
    log_dir = str(shared_dir("corpus") / case / "input")
    got = sorted((r["severity"], r["code"], r["file"], r["position"], r["field"], r["reason"])
                 for r in corpus_scan["findings"] if r["log_dir"] == log_dir and r["source"] == "check")
    data = read_log_dir(log_dir)
    want = sorted((d.severity, d.code, d.file, d.position, d.field, d.reason)
                  for d in check_log_dir(data, read_swaps(data)))
    assert got == want


def clean_cases_with_partitions() -> list[str]:
    """Clean corpus cases whose Kafka load result lists data partitions (the KRaft controller case has none)."""
    return [c for c in corpus_cases() if c.endswith("-clean")
            and json.loads((SHARED / "corpus" / c / "expected.json").read_text())["afterLoad"].get("partitions")]


@pytest.mark.parametrize("case", clean_cases_with_partitions())
def test_producers_match_kafkas_state_after_a_clean_load(corpus_scan: dict[str, list[dict]], case: str) -> None:
    log_dir = str(shared_dir("corpus") / case / "input")
    expected = load_expected(case)
    for part, info in expected["afterLoad"]["partitions"].items():
        topic, _, number = part.rpartition("-")
        if topic == "__cluster_metadata":
            continue  # the raft layer's own log: no producer state
        got = {r["producer_id"]: r for r in corpus_scan["producers"]
               if r["log_dir"] == log_dir and r["topic"] == topic and r["partition"] == int(number)}
        want = info["producers"]
        assert sorted(got) == sorted(int(k) for k in want), part
        for pid, p in want.items():
            g = got[int(pid)]
            assert (g["producer_epoch"], g["first_sequence"], g["last_sequence"], g["last_offset"],
                    g["last_timestamp"], g["current_txn_first_offset"]) == (
                p["producerEpoch"], p["firstSequence"], p["lastSequence"], p["lastDataOffset"],
                p["lastTimestamp"], p["currentTxnFirstOffset"]), (part, pid)
            assert g["coordinator_epoch"] == (None if p["coordinatorEpoch"] == -1 else p["coordinatorEpoch"])
        rows = [r for r in corpus_scan["partitions"] if r["log_dir"] == log_dir and r["directory"] == part]
        assert len(rows) == 1
        assert rows[0]["first_unstable_offset"] == info["firstUnstableOffset"]
        assert rows[0]["log_end_offset"] == info["logEndOffset"]


def test_partition_rows_count_what_the_batches_table_holds(corpus_scan: dict[str, list[dict]]) -> None:
    per_dir: dict[tuple[str, str, int], int] = {}
    for b in corpus_scan["batches"]:
        key = (b["log_dir"], b["topic"], b["partition"])
        per_dir[key] = per_dir.get(key, 0) + 1
    for p in corpus_scan["partitions"]:
        assert per_dir.get((p["log_dir"], p["topic"], p["partition"]), 0) == p["batches"], p["directory"]
    bad = sum(1 for b in corpus_scan["batches"] if not b["crc_valid"])
    assert corpus_scan["_summary"][0]["invalid_crc_batches"] == bad


def test_byte_range_cuts_give_the_same_rows_as_one_pass(tmp_path: Path) -> None:
    log_dir = big_partition_dir(tmp_path)
    whole = make_plan([str(log_dir)], chunk_bytes=1 << 40)
    cut = make_plan([str(log_dir)], chunk_bytes=256 << 10)
    assert whole.ranges == [] and whole.partitions[0].split == ()  # read once, by the partition's analysis
    assert len(cut.ranges) >= 8 and cut.partitions[0].split == ("00000000000000000000.log",)
    for r, nxt in zip(cut.ranges, cut.ranges[1:], strict=False):
        assert r.stop == nxt.start
    every = make_plan([str(log_dir)], chunk_bytes=1 << 40, all_ranges=True)
    assert len(every.ranges) == 1
    assert scan_range(every.ranges[0]).column("position") == sorted(
        scan_range(every.ranges[0]).column("position"))
    rows: dict[str, list] = {"whole": [], "cut": [], "every": []}
    for name, plan in (("whole", whole), ("cut", cut), ("every", every)):
        run_local(plan, lambda t, b, n=name: rows[n].extend(b.to_pylist()) if t == "batches" else None, jobs=2)
    assert rows["whole"] == sorted(rows["cut"], key=lambda r: r["position"]) == rows["every"]
    assert len(rows["whole"]) == 1500


def test_a_false_cut_is_caught_and_the_segment_rescanned(tmp_path: Path) -> None:
    log_dir, false_pos = false_cut_dir(tmp_path)
    seg = next(log_dir.glob("trap-0/*.log"))
    data = seg.read_bytes()
    assert confirmed_boundary(data, false_pos)  # the trap passes the header test...
    plan = make_plan([str(log_dir)], chunk_bytes=1024)
    assert [r.start for r in plan.ranges] == [0, false_pos]  # ...so the planner cuts there
    lone = scan_range(plan.ranges[0])
    assert lone.landing != false_pos  # but the first range's chain jumps over it
    got: list[dict] = []
    run_local(plan, lambda t, b: got.extend(b.to_pylist()) if t == "batches" else None)
    truth = scan_range(SegmentRange(str(log_dir), "trap", 0, str(seg))).lists()
    assert [r["position"] for r in got] == truth["position"]
    assert len(got) == 52


def test_output_is_refused_inside_an_input_and_over_an_existing_dir(tmp_path: Path) -> None:
    log_dir = big_partition_dir(tmp_path, batches=20)
    code, _, err = scan(str(log_dir), "--out", str(log_dir / "out"))
    assert code == 2 and "inside the input" in err
    out = tmp_path / "out"
    out.mkdir()
    code, _, err = scan(str(log_dir), "--out", str(out))
    assert code == 2 and "already exists" in err
    code, _, err = scan(str(log_dir), "--out", str(out), "--force")
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["_inputs", "batches", "findings", "partitions", "producers"]
    assert not list(tmp_path.glob(".out.*"))  # no staging leftovers


def test_missing_path_and_empty_tree_exit_3(tmp_path: Path) -> None:
    code, out, err = scan(str(tmp_path / "nope"), "--out", str(tmp_path / "o"))
    assert code == 3 and out == "" and "no such file" in err
    (tmp_path / "empty").mkdir()
    code, _, err = scan(str(tmp_path / "empty"), "--out", str(tmp_path / "o"))
    assert code == 3 and "no Kafka log dir" in err
    assert not (tmp_path / "o").exists()


def test_fixtures_scan_reports_the_damaged_ones(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, stdout, err = scan(str(REPO / "fixtures"), "--out", str(out), "-f", "json")
    assert code == 1, err
    summary = json.loads(stdout)
    tables = read_tables(out)
    damaged = {Path(r["log_dir"]).name for r in tables["findings"] if r["severity"] == "error"}
    assert "demo" not in damaged
    assert {"torn-write", "crc-flip-below-recovery-point"} <= damaged
    assert summary["counts"]["error"] == sum(1 for r in tables["findings"] if r["severity"] == "error")


def test_the_readmes_first_command_runs_as_written(tmp_path: Path) -> None:
    import re
    import shlex

    readme = (REPO / "README.md").read_text()
    first = re.search(r"```sh\n(.+?)\n```", readme, flags=re.S)
    assert first is not None
    line = first.group(1).strip()
    assert line.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install -e . && kafkatool scan ")
    argv = shlex.split(line.rsplit("&& ", 1)[1])[1:]
    out = argv[argv.index("--out") + 1]
    argv[argv.index("--out") + 1] = str(tmp_path / Path(out).name)
    result = runner.invoke(app, argv, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert "worst findings" in result.stdout
    assert sorted(p.name for p in (tmp_path / Path(out).name).iterdir()) == [
        "_inputs", "batches", "findings", "partitions", "producers"]


def test_a_file_that_vanishes_mid_scan_is_a_finding_not_a_crash(tmp_path: Path) -> None:
    log_dir = big_partition_dir(tmp_path, batches=40)
    plan = make_plan([str(log_dir)])
    seg = next(Path(plan.partitions[0].directory).glob("*.log"))
    seg.unlink()
    tables: dict[str, list] = {"batches": [], "findings": [], "partitions": [], "producers": []}
    run_local(plan, lambda t, b: tables[t].extend(b.to_pylist()))
    assert tables["batches"] == []
    # The partition is analysed as it is now: its index has no log and its checkpoints point past the end.
    assert {f["code"] for f in tables["findings"]} >= {"orphan-index", "high-watermark-beyond-leo"}
    assert tables["partitions"][0]["log_end_offset"] == 0


def test_a_false_cut_after_true_ones_keeps_the_chained_ranges_and_rescans_the_rest(tmp_path: Path) -> None:
    """Ranges are handed on as their successor confirms them (memory bounded by one range); a cut that is not a
    batch start makes the segment be scanned on in one piece from the range before it, rows still exact."""
    log_dir = big_partition_dir(tmp_path, batches=600)
    plan = make_plan([str(log_dir)], chunk_bytes=64 << 10)
    assert len(plan.ranges) >= 5
    seg = Path(plan.ranges[0].path)
    truth = scan_range(SegmentRange(str(log_dir), "big", 0, str(seg))).column("position")
    bogus = plan.ranges[3].start + 7  # inside a batch: no walk lands there
    assert bogus not in truth
    r2, r3 = plan.ranges[2], plan.ranges[3]
    plan.ranges[2] = SegmentRange(r2.log_dir, r2.topic, r2.partition, r2.path, r2.start, bogus, r2.size)
    plan.ranges[3] = SegmentRange(r3.log_dir, r3.topic, r3.partition, r3.path, bogus, r3.stop, r3.size)
    got: list[int] = []
    run_local(plan, lambda t, b: got.extend(b.column("position").to_pylist()) if t == "batches" else None)
    assert got == truth


def test_a_segment_without_an_index_is_cut_at_confirmed_batches(tmp_path: Path) -> None:
    log_dir = big_partition_dir(tmp_path, batches=600)
    index = next(log_dir.glob("big-0/*.index"))
    index.unlink()
    plan = make_plan([str(log_dir)], chunk_bytes=64 << 10)
    seg = Path(plan.ranges[0].path)
    truth = scan_range(SegmentRange(str(log_dir), "big", 0, str(seg))).column("position")
    assert len(plan.ranges) >= 5 and all(r.start in truth for r in plan.ranges)
    got: list[int] = []
    run_local(plan, lambda t, b: got.extend(b.column("position").to_pylist()) if t == "batches" else None)
    assert got == truth


def test_since_rescans_only_changed_partitions_and_writes_a_full_scans_tables(tmp_path: Path) -> None:
    """``--since``: segments modified, added and removed between two scans; the second scan reads only the
    changed partitions again and its tables equal a full scan's; a changed checkpoint rescans its log dir."""
    from tests.benchmarks.bench_fleet import generate
    from tests.object_store import SMALL_BENCH
    from tests.test_object_store import change_tree

    tree = generate(tmp_path / "bench", SMALL_BENCH)
    code, _, err = scan(str(tree), "--out", str(tmp_path / "one"), "-f", "json", "--fail-on", "never")
    assert code == 0, err
    change_tree(tree)
    code, out_inc, err = scan(str(tree), "--out", str(tmp_path / "two"), "-f", "json", "--fail-on", "never",
                              "--since", str(tmp_path / "one"), "-j", "2")
    assert code == 0, err
    code, out_full, err = scan(str(tree), "--out", str(tmp_path / "full"), "-f", "json", "--fail-on", "never")
    assert code == 0, err
    assert read_tables(tmp_path / "two") == read_tables(tmp_path / "full")
    inc, full = json.loads(out_inc), json.loads(out_full)
    assert inc["incremental"]["rescanned_partitions"] == 3
    assert inc["counts"] == full["counts"] and inc["batches"] == full["batches"]
    # a log dir's checkpoint changes: every partition of that log dir is read again
    checkpoint = next(tree.rglob("replication-offset-checkpoint"))
    checkpoint.write_bytes(checkpoint.read_bytes() + b"")
    import os

    os.utime(checkpoint, ns=(1, 1))
    code, out_again, err = scan(str(tree), "--out", str(tmp_path / "three"), "-f", "json", "--fail-on", "never",
                                "--since", str(tmp_path / "two"))
    assert code == 0, err
    again = json.loads(out_again)["incremental"]
    parts = [p for p in read_tables(tmp_path / "full")["partitions"] if p["log_dir"] == str(checkpoint.parent)]
    assert again["rescanned_partitions"] == len(parts) > 0
    assert read_tables(tmp_path / "three") == read_tables(tmp_path / "full")
    code, _, err = scan(str(tree), "--out", str(tmp_path / "four"), "--since", str(tmp_path / "nope"))
    assert code == 3 and "nope" in err


def test_local_engine_arrow_leaves_pandas_unimported() -> None:
    """pyarrow's first conversion imports pandas when it is installed (about 50 MB resident in the scan's parent
    and each worker): ``lean_arrow`` settles its lookups without it, and a pandas conversion still works after."""
    import subprocess
    import sys

    pytest.importorskip("pandas")
    code = ("import sys, numpy as np, pyarrow as pa\n"
            "from kafkatool.fleet.tables import lean_arrow\n"
            "lean_arrow()\n"
            "pa.array(['x', None]); pa.array(np.arange(3), pa.int64(), mask=np.zeros(3, bool))\n"
            "assert 'pandas' not in sys.modules, 'pandas imported'\n"
            "assert pa.default_memory_pool().backend_name == 'system'\n"
            "assert pa.table({'a': [1]}).to_pandas()['a'].tolist() == [1]\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stderr


def test_bounded_pool_map_keeps_plan_order_and_bounds_work_in_flight() -> None:
    """The pool is handed at most ``IN_FLIGHT_PER_WORKER`` units per worker ahead of the one being written, and
    the results come back in plan order."""
    from concurrent.futures import Future

    from kafkatool.fleet import local

    submitted: list[int] = []

    class Pool:
        def submit(self, fn: object, job: int) -> Future[int]:
            submitted.append(job)
            done: Future[int] = Future()
            done.set_result(job * 10)
            return done

    work = list(range(9))
    results = local._bounded_map(Pool(), work, 2)  # type: ignore[arg-type]
    got = [next(results)]
    assert len(submitted) == 2 * local.IN_FLIGHT_PER_WORKER + 1  # the first handed on, one more submitted
    got += list(results)
    assert got == [j * 10 for j in work] and submitted == work


def test_zero_filled_index_gives_searched_cuts(tmp_path: Path) -> None:
    """A segment beside a zero-filled ``.index`` (an untrimmed preallocation after a crash) is cut as one without
    an index is, not scanned as one unit (a whole segment's rows held at once)."""
    from tests.benchmarks.inputs import write_segment

    log = tmp_path / "00000000000000000000.log"
    write_segment(log, 2 << 20, 1, 100)
    without = split_points(log, 256 << 10)
    with open(log.with_suffix(".index"), "wb") as fh:
        fh.truncate(1 << 20)
    assert len(without) > 4
    assert split_points(log, 256 << 10) == without
