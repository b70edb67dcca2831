"""Inputs and outputs in a real object store (versitygw on 127.0.0.1, ``tests.object_store``): ``scan``, ``check``
and ``dump-segment`` on ``s3://`` give what they give on the same files locally, row for row and byte for byte
(file names mapped from the local path to the URL), on the Kafka-made corpus, the fixtures, a smaller benchmark
tree and segments cut into byte ranges; ``--since`` scans only what changed and still writes complete tables.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from kafkatool.fleet.tables import TABLES, sorted_rows
from tests.conftest import REPO, corpus_cases, shared_dir
from tests.object_store import BUCKET, Store, mapped
from tests.object_store import run_cli as run
from tests.scan_support import read_tables


@pytest.fixture
def store(s3_store: tuple[Store, dict[str, Path]]) -> tuple[Store, dict[str, Path]]:
    """The session's S3 server and the trees it holds (``tests.conftest.s3_store``)."""
    return s3_store


def url(name: str, rel: str = "") -> str:
    return f"s3://{BUCKET}/{name}" + (f"/{rel}" if rel else "")


def remote_tables(st: Store, key: str) -> dict[str, list[dict[str, Any]]]:
    fs = st.filesystem()
    return {name: sorted_rows(pq.read_table(f"{key}/{name}", filesystem=fs), name) for name in TABLES}


def scan_both(st: Store, trees: dict[str, Path], name: str, tmp: Path, *extra: str) -> None:
    """Scan the tree locally and from the store into the store; the tables equal after mapping names."""
    local_out = tmp / f"{name}-local"
    code, out_local, err = run(st, "scan", "-q", "--fail-on", "never", "-f", "json", str(trees[name]),
                               "--out", str(local_out), *extra)
    assert code == 0, err
    code, out_remote, err = run(st, "scan", "-q", "--fail-on", "never", "-f", "json", url(name),
                                "--out", f"s3://{BUCKET}/out/{name}", *extra)
    assert code == 0, err
    want = mapped(read_tables(local_out), str(trees[name]), url(name))
    got = remote_tables(st, f"{BUCKET}/out/{name}")
    for table in TABLES:
        assert len(got[table]) == len(want[table]), table
        for i, (g, w) in enumerate(zip(got[table], want[table], strict=True)):
            assert g == w, f"{name} {table} row {i}"
    s_local, s_remote = json.loads(out_local), json.loads(out_remote)
    for key in ("log_dirs", "partitions", "segments", "bytes", "batches", "records", "counts"):
        assert s_local[key] == s_remote[key], key
    assert mapped(s_local["worst_findings"], str(trees[name]), url(name)) == s_remote["worst_findings"]


@pytest.mark.parametrize("name", ["corpus", "fixtures", "bench"])
def test_scan_on_s3_equals_the_local_scan(store: tuple[Store, dict[str, Path]], name: str, tmp_path: Path) -> None:
    st, trees = store
    scan_both(st, trees, name, tmp_path)


def test_byte_ranges_of_objects_give_the_same_rows(store: tuple[Store, dict[str, Path]], tmp_path: Path) -> None:
    """A segment cut into 1 MiB ranges (each one ranged read), and a false cut the engine must catch."""
    from kafkatool.fleet.plan import make_plan
    from kafkatool.reading.objects import input_path, set_fs_options

    st, trees = store
    set_fs_options({"endpoint": st.endpoint, "region": "us-east-1"})
    try:
        plan = make_plan([url("big")], chunk_bytes=1 << 20)
        local = make_plan([str(trees["big"])], chunk_bytes=1 << 20)
        assert [r.start for r in plan.ranges] == [r.start for r in local.ranges] and len(plan.ranges) > 3
        assert isinstance(input_path(plan.ranges[0].path), type(input_path(url("big"))))
    finally:
        set_fs_options({})
    scan_both(st, trees, "big", tmp_path, "--chunk-mib", "1", "-j", "2")
    scan_both(st, trees, "trap", tmp_path, "--chunk-mib", "1")


def test_check_on_s3_prints_what_it_prints_locally(store: tuple[Store, dict[str, Path]]) -> None:
    st, _trees = store
    dirs = [(f"corpus/{c}/input", shared_dir("corpus") / c / "input") for c in corpus_cases()]
    dirs += [(f"fixtures/{p.name}", p) for p in sorted((REPO / "fixtures").iterdir()) if p.is_dir()
             and p.name != "oracle"]
    assert len(dirs) > 20
    for rel, local in dirs:
        for fmt in ("json", "table"):
            code_l, out_l, _err_l = run(st, "check", "-q", "-f", fmt, str(local))
            code_r, out_r, err_r = run(st, "check", "-q", "-f", fmt, f"s3://{BUCKET}/{rel}")
            assert code_r == code_l, (rel, err_r)
            assert out_r == out_l.replace(str(local), f"s3://{BUCKET}/{rel}"), (rel, fmt)


def test_dump_segment_on_s3_prints_what_it_prints_locally(store: tuple[Store, dict[str, Path]]) -> None:
    st, _trees = store
    files = sorted(p for c in ("txn-clean", "idem-torn-write", "compacted-clean") if (shared_dir("corpus") / c).is_dir()
                   for p in (shared_dir("corpus") / c / "input").rglob("*") if p.is_file())
    files += sorted(p for p in (REPO / "fixtures" / "demo").rglob("*") if p.is_file())
    assert len(files) > 10
    for local in files:
        corpus = shared_dir("corpus")
        rel = f"corpus/{local.relative_to(corpus)}" if corpus in local.parents else local.relative_to(REPO)
        remote = f"s3://{BUCKET}/{rel}"
        for fmt in (["-f", "json", "--verify"], ["-f", "kafka", "--deep"]):
            code_l, out_l, _ = run(st, "dump-segment", "-q", *fmt, str(local))
            code_r, out_r, err_r = run(st, "dump-segment", "-q", *fmt, remote)
            assert code_r == code_l, (remote, err_r)
            assert out_r == out_l.replace(str(local), remote), (remote, fmt)


def test_errors_name_the_url_and_never_show_a_traceback(store: tuple[Store, dict[str, Path]],
                                                       tmp_path: Path) -> None:
    st, _ = store
    code, _out, err = run(st, "check", f"s3://{BUCKET}/nothing-here")
    assert code == 3 and "s3://kafkatool/nothing-here" in err and "Traceback" not in err
    code, _, err = run(st, "scan", "-q", url("fixtures", "demo"), "--out", url("fixtures", "demo/out"))
    assert code == 2 and "inside the input" in err
    code, _, err = run(st, "scan", "-q", url("fixtures", "demo"), "--out", "s3://no-such-bucket/x")
    assert code == 2 and "no-such-bucket" in err
    code, _, err = run(st, "--fs-option", "nonsense", "check", url("fixtures", "demo"))
    assert code == 2 and "KEY=VALUE" in err


def change_tree(tree: Path) -> tuple[list[Path], list[Path]]:
    """Between two scans: a segment modified in place (same size), a segment added to a partition, one removed
    from another (three partitions changed). Returns the files written and the files removed."""
    parts = sorted({p.parent for p in tree.rglob("*.log")}, key=str)
    multi = [d for d in parts if len(list(d.glob("*.log"))) > 2]
    modified = sorted(parts[0].glob("*.log"))[0]
    grown, shrunk = multi[0], multi[-1]
    assert len({parts[0], grown, shrunk}) == 3
    data = bytearray(modified.read_bytes())
    data[200] ^= 0xFF
    modified.write_bytes(bytes(data))
    last = sorted(grown.glob("*.log"))[-1]
    extra = grown / f"{int(last.stem) + 1_000_000:020d}.log"
    extra.write_bytes(last.read_bytes()[:3000])
    removed = [p for p in shrunk.iterdir() if p.name.startswith(sorted(shrunk.glob("*.log"))[0].stem)]
    for p in removed:
        p.unlink()
    return [modified, extra], removed


def test_since_scans_only_what_changed(store: tuple[Store, dict[str, Path]], tmp_path: Path) -> None:
    """Two scans of a tree in the store with segments modified, added and removed between them: the second
    (``--since`` the first) reads again only the three partitions that changed and writes the tables a full scan
    writes."""
    st, trees = store
    fs = st.filesystem()
    work = tmp_path / "tree"
    shutil.copytree(trees["bench"], work)
    st.upload(work, f"{BUCKET}/since")
    base = ["scan", "-q", "--fail-on", "never", "-f", "json", url("since")]
    code, _, err = run(st, *base, "--out", url("out/since-1"))
    assert code == 0, err
    written, removed = change_tree(work)
    for p in written:
        with fs.open_output_stream(f"{BUCKET}/since/{p.relative_to(work).as_posix()}") as out:
            out.write(p.read_bytes())
    for p in removed:
        fs.delete_file(f"{BUCKET}/since/{p.relative_to(work).as_posix()}")
    code, out_inc, err = run(st, *base, "--out", url("out/since-2"), "--since", url("out/since-1"))
    assert code == 0, err
    code, out_full, err = run(st, *base, "--out", url("out/since-full"))
    assert code == 0, err
    inc_tables = remote_tables(st, f"{BUCKET}/out/since-2")
    assert inc_tables == remote_tables(st, f"{BUCKET}/out/since-full")
    assert inc_tables["batches"] and inc_tables["findings"]
    inc, full = json.loads(out_inc), json.loads(out_full)
    for key in ("counts", "batches", "records", "partitions", "segments", "worst_findings"):
        assert inc[key] == full[key], key
    assert inc["incremental"]["rescanned_partitions"] == 3
    assert inc["incremental"]["reused_partitions"] == full["partitions"] - 3


def test_a_range_is_one_ranged_read_and_a_tree_one_listing(store: tuple[Store, dict[str, Path]],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Planning a tree lists it once, recursively (not a request per directory); a byte range of a segment is
    read by one ranged read of that range (and the slack for the batch crossing its end), never as the whole
    object."""
    from kafkatool.fleet.plan import make_plan
    from kafkatool.reading import batch_scan, files, objects

    st, _ = store
    listings: list[str] = []
    real_list = objects.list_tree
    monkeypatch.setattr(objects, "list_tree", lambda p: listings.append(str(p)) or real_list(p))
    objects.set_fs_options({"endpoint": st.endpoint, "region": "us-east-1"})
    objects.forget_listings()
    try:
        plan = make_plan([url("corpus")])
        assert listings == [url("corpus")] and len(plan.partitions) > 30
        objects.forget_listings()
        listings.clear()
        plan = make_plan([url("big")], chunk_bytes=1 << 20)
        reads: list[tuple[str, int, int]] = []
        whole: list[str] = []
        real_range, real_object = batch_scan.read_range, files.read_object
        monkeypatch.setattr(batch_scan, "read_range",
                            lambda p, a, b: reads.append((str(p), a, b)) or real_range(p, a, b))
        monkeypatch.setattr(files, "read_object", lambda p, limit=None: whole.append(str(p)) or real_object(p, limit))
        objects.forget_listings()
        for rng in plan.ranges:
            reads.clear()
            rows = batch_scan.scan_range(rng)
            assert len(rows) > 0
            ((path, start, stop),) = reads
            assert path == rng.path and start == rng.start
            assert stop - start <= (rng.stop or start) - start + batch_scan.REMOTE_SLACK or rng.stop is None
        assert not [w for w in whole if w.endswith(".log")]
        assert len(listings) <= 1
    finally:
        objects.set_fs_options({})
        objects.forget_listings()


READ_ONLY = [
    ("replay-producers", "txn-clean/input/ledger-0", ["-f", "json"]),
    ("simulate-restart", "idem-torn-write/input", ["-f", "json", "--now", "1800000000000"]),
    ("simulate-restart", "swap-interrupted-unclean/input", ["-f", "json", "--now", "1800000000000"]),
    ("transactions", "internal-topics-hanging-txn-clean/input", ["-f", "json", "--now", "1800000000000"]),
    ("groups", "internal-topics-hanging-txn-clean/input", ["-f", "json"]),
    ("metadata", "kraft-controller-metadata-clean/input", ["-f", "json"]),
    ("salvage", "idem-torn-write/input", ["-f", "json"]),
    ("check", "legacy-v1-gzip-torn-write-unclean/input", ["-f", "jsonl"]),
]


@pytest.mark.parametrize(("command", "rel", "args"), READ_ONLY, ids=[f"{c}-{r.split('/')[0]}" for c, r, _ in READ_ONLY])
def test_read_only_commands_on_s3_print_what_they_print_locally(store: tuple[Store, dict[str, Path]], command: str,
                                                                rel: str, args: list[str]) -> None:
    st, _ = store
    local = str(shared_dir("corpus") / rel)
    remote = url("corpus", rel)
    code_l, out_l, err_l = run(st, command, *args, local)
    code_r, out_r, err_r = run(st, command, *args, remote)
    assert code_r == code_l, (err_l, err_r)
    assert out_r == out_l.replace(local, remote)
    assert out_l and "Traceback" not in err_r


def test_report_reads_s3(store: tuple[Store, dict[str, Path]], tmp_path: Path) -> None:
    st, _ = store
    code_l, _, err_l = run(st, "report", "-q", str(shared_dir("corpus") / "txn-clean" / "input"), "--out",
                           str(tmp_path / "local.html"), "--now", "1800000000000")
    code_r, _, err_r = run(st, "report", "-q", url("corpus", "txn-clean/input"), "--out", str(tmp_path / "s3.html"),
                           "--now", "1800000000000")
    assert code_r == code_l, (err_l, err_r)
    local = (tmp_path / "local.html").read_text()
    remote = (tmp_path / "s3.html").read_text()
    assert len(remote) > 10_000 and url("corpus", "txn-clean/input") in remote
    assert abs(len(remote) - len(local)) < 0.05 * len(local)


def test_a_large_object_is_read_in_ranges_and_streamed_in_bounded_memory(store: tuple[Store, dict[str, Path]],
                                                                          tmp_path: Path) -> None:
    """A 256 MiB segment in the store: a 64 MiB range of it is one GET serving 64 MiB (the server's own access
    log and byte counters say so, not the client); ``check``, ``dump-segment`` and ``scan`` of it stream the object
    once, in ranged GETs of ``SPILL_PIECE``, into a spill file they map like a local file, print what they print
    on the local copy and stay under the resource bound local inputs are held to (peak RSS of the process)."""
    from kafkatool.reading import objects
    from tests.object_store import write_large_segment
    from tests.test_resource_bounds import LIMIT_KB, run_measured

    st, _ = store
    part = tmp_path / "large" / "big-0"
    part.mkdir(parents=True)
    seg = part / "00000000000000000000.log"
    with seg.open("wb") as out:
        size = write_large_segment(out, 256 << 20)
    st.upload(tmp_path / "large", f"{BUCKET}/large")
    key = f"{BUCKET}/large/big-0/{seg.name}"
    remote = f"s3://{key}"
    objects.set_fs_options({"endpoint": st.endpoint, "region": "us-east-1"})
    objects.forget_listings()
    try:
        before, sent = len(st.requests(key)), st.bytes_sent()
        data = objects.read_range(objects.input_path(remote), 64 << 20, 128 << 20)  # type: ignore[arg-type]
        served = st.bytes_sent() - sent
        assert data == seg.read_bytes()[64 << 20:128 << 20]
        assert st.requests(key)[before:].count("s3_GetObject") == 1
        assert 64 << 20 <= served < (64 << 20) + (1 << 20), served
    finally:
        objects.set_fs_options({})
        objects.forget_listings()
    pieces = -(-size // objects.SPILL_PIECE)
    fs_opts = list(st.fs_options)
    for argv in (["check", "-f", "json"], ["dump-segment", "--verify", "-f", "json"],
                 ["scan", "-q", "--fail-on", "never", "-f", "json", "--out"]):
        scan = argv[0] == "scan"
        before, sent = len(st.requests(key)), st.bytes_sent()
        code_r, out_r, err_r, rss = run_measured(*fs_opts, *argv, *([str(tmp_path / "out")] if scan else []),
                                                 url("large", "big-0"))
        served = st.bytes_sent() - sent
        gets = st.requests(key)[before:].count("s3_GetObject")
        assert code_r == 0, err_r
        assert rss < LIMIT_KB, f"{argv[0]}: {rss} KiB for a {size}-byte object"
        # scan also reads the first and last batches alone for its --since fingerprints: a few small GETs more
        assert pieces <= gets <= pieces + (8 if scan else 2), (argv[0], gets)
        assert size <= served < size + (4 << 20), (argv[0], served)  # the object once, not once per read
        if not scan:  # the scan's tables over this object are compared with local ones by the tests above
            code_l, out_l, _err_l, _rss = run_measured(*argv, str(part))
            assert code_l == 0 and out_r == out_l.replace(str(part), url("large", "big-0")), argv[0]
