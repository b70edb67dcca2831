"""The fixture scenarios: deterministic, fresh in fixtures/, healthy or damaged exactly as described, readable by
an independent reader, and laid out the way Kafka's own storage code lays out the Kafka-made corpus."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer.core
import typer.main
from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.model import RecordBatch
from kafkatool.schema import checkpoint, offset_index, time_index, txn_index
from kafkatool.schema.log_segment import walk_log
from kafkatool.storage.java_hash import long_hash_map_order as java_hash_map_order
from kafkatool.writing import fixture_recipes as fixtures
from kafkatool.writing.fixture_recipes import SCENARIOS, build_scenario, build_tree
from tests.conftest import REPO, shared_dir

FIXTURES = REPO / "fixtures"
NAMES = list(SCENARIOS)
# Scenarios holding several brokers' log dirs (one subdirectory each) are checked in test_replica_set_fixture.
MULTI_BROKER = {"replica-set"}
CLEAN = [n for n in NAMES if not SCENARIOS[n].damaged and n not in MULTI_BROKER]
DAMAGED = [n for n in NAMES if SCENARIOS[n].damaged]
runner = CliRunner()


def files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by relative path, the kept ``expect.json`` left out."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name not in fixtures.KEPT_NAMES}


def log_batches(data: bytes) -> list[RecordBatch]:
    return [e for e in walk_log(data, "x", deep=True) if isinstance(e, RecordBatch)]


# --- determinism and freshness --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_scenario_rebuilds_identically_and_the_committed_copy_is_fresh(name: str, tmp_path: Path) -> None:
    build_scenario(name, tmp_path / "a")
    build_scenario(name, tmp_path / "b")
    first = files(tmp_path / "a")
    assert first == files(tmp_path / "b")
    assert first == build_tree(name)
    committed = files(FIXTURES / name)
    assert sorted(committed) == sorted(first), f"fixtures/{name} is stale: kafkatool fixture build --force {name} " \
        f"fixtures/{name}"
    stale = [k for k in first if first[k] != committed[k]]
    assert not stale, f"fixtures/{name} is stale ({stale[:3]}): kafkatool fixture build --force {name} fixtures/{name}"


def test_readme_lists_every_scenario() -> None:
    text = (FIXTURES / "README.md").read_text()
    listed = re.findall(r"^- `([a-z0-9-]+)`", text, flags=re.M)
    assert set(NAMES) <= set(listed)
    assert set(NAMES) <= {p.name for p in FIXTURES.iterdir() if p.is_dir()}


def test_java_hash_map_order() -> None:
    # HashMap<Long, ...> with 16 buckets: 2000 -> 0, 2001 -> 1, 1000 -> 8 (as in the corpus's txn-clean snapshots)
    assert java_hash_map_order([1000, 2000, 2001]) == [2000, 2001, 1000]
    assert java_hash_map_order([17, 1]) == [17, 1]  # same bucket: insertion order
    assert java_hash_map_order(list(range(20, 0, -1))) == sorted(range(1, 21))  # 32 buckets after the resize


# --- what dump-segment sees -----------------------------------------------------------------------------------


def verify(path: Path) -> tuple[int, dict]:
    result = runner.invoke(app, ["dump-segment", "--verify", "--deep", "-f", "json", str(path)])
    return result.exit_code, json.loads(result.stdout)


def defects_by_file(doc: dict) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for f in doc["files"]:
        for d in f.get("defects") or []:
            out.setdefault(Path(f["path"]).name, set()).add(d["code"])
    return out


@pytest.mark.parametrize("name", CLEAN)
def test_clean_scenarios_verify_without_any_defect(name: str) -> None:
    code, doc = verify(FIXTURES / name)
    assert code == 0
    assert doc["summary"]["defects"] == 0
    assert defects_by_file(doc) == {}, "not even an informational note"


def seg(offset: int, suffix: str) -> str:
    return f"{offset:020d}{suffix}"


BASE = fixtures.damage_base()[1]
FIRST, SECOND, BEFORE_ACTIVE, ACTIVE = (BASE.segments[0].base, BASE.segments[1].base, BASE.segments[-2].base,
                                        BASE.segments[-1].base)
LEO = BASE.log_end_offset

VISIBLE: dict[str, dict[str, set[str]]] = {
    "torn-write": {seg(ACTIVE, ".log"): {"torn-tail"}},
    "crc-flip-above-recovery-point": {seg(ACTIVE, ".log"): {"crc-mismatch"}},
    "crc-flip-below-recovery-point": {seg(FIRST, ".log"): {"crc-mismatch"}},
    "trailing-zeros": {seg(ACTIVE, ".log"): {"trailing-zeros"}},
    "corrupt-index": {seg(FIRST, ".index"): {"index-not-boundary"}},
    "misnamed-segment": {seg(SECOND + 3, ".log"): {"segment-name-mismatch"}},
    "hard-crash": {seg(ACTIVE, ".index"): {"index-preallocated"}, seg(ACTIVE, ".timeindex"): {"index-preallocated"}},
}


@pytest.mark.parametrize("name", DAMAGED)
def test_damage_shows_in_dump_segment_where_it_can_see_it(name: str) -> None:
    code, doc = verify(FIXTURES / name)
    found = defects_by_file(doc)
    for file, codes in VISIBLE.get(name, {}).items():
        assert codes <= found.get(file, set()), (file, found)
    serious = doc["summary"]["defects"]
    assert (code, bool(serious)) == ((1, True) if name in VISIBLE and name != "hard-crash" else (0, False))


P = "payments-0/"
MARKER = ".kafka_cleanshutdown"
RP = "recovery-point-offset-checkpoint"
HW = "replication-offset-checkpoint"
LOG_START = "log-start-offset-checkpoint"


@dataclass(frozen=True)
class Change:
    """How a damaged scenario differs from the clean build it copies: files changed, removed, added."""

    changed: set[str]
    removed: set[str]
    added: set[str]


CHANGES: dict[str, Change] = {
    "torn-write": Change({P + seg(ACTIVE, ".log"), RP}, {MARKER}, set()),
    "crc-flip-above-recovery-point": Change({P + seg(ACTIVE, ".log"), RP}, {MARKER}, set()),
    "crc-flip-below-recovery-point": Change({P + seg(FIRST, ".log"), RP}, {MARKER}, set()),
    "trailing-zeros": Change({P + seg(ACTIVE, ".log"), RP}, {MARKER}, set()),
    "recovery-point-back": Change({RP}, {MARKER}, set()),
    "missing-index": Change(set(), {P + seg(FIRST, ".index")}, set()),
    "corrupt-index": Change({P + seg(FIRST, ".index")}, set(), set()),
    "missing-latest-snapshot": Change(set(), {MARKER, P + seg(LEO, ".snapshot")}, set()),
    "all-snapshots-missing": Change(set(), {P + seg(o, ".snapshot") for o in BASE.snapshots}, set()),
    "stray-files": Change(set(), set(), {P + seg(FIRST, s + ".deleted") for s in (".log", ".index", ".timeindex")}
                          | {P + seg(SECOND, s + ".cleaned") for s in (".log", ".index", ".timeindex")}
                          | {P + seg(LEO + 25, ".snapshot")}),
    "misnamed-segment": Change(set(), {P + seg(SECOND, s) for s in (".log", ".index", ".timeindex")},
                               {P + seg(SECOND + 3, s) for s in (".log", ".index", ".timeindex")}),
    "hard-crash": Change({P + seg(ACTIVE, ".index"), P + seg(ACTIVE, ".timeindex"), RP, HW},
                         {MARKER, P + seg(LEO, ".snapshot")}, set()),
}


@pytest.mark.parametrize("name", DAMAGED)
def test_damage_is_exactly_what_the_scenario_says(name: str) -> None:
    clean = build_tree("idempotent-epoch-bump")
    damaged = build_tree(name)
    got = Change({k for k in clean.keys() & damaged.keys() if clean[k] != damaged[k]}, clean.keys() - damaged.keys(),
                 damaged.keys() - clean.keys())
    assert got == CHANGES[name]
    recovery = checkpoint.parse_offset_checkpoint(damaged[RP])
    expected_rp = {"recovery-point-back": BEFORE_ACTIVE, "missing-latest-snapshot": LEO}.get(name)
    if RP in got.changed:
        assert list(recovery.values()) == [expected_rp or ACTIVE]
    log = P + seg(ACTIVE, ".log")
    if name == "torn-write":
        cut = damaged[log]
        assert clean[log].startswith(cut) and len(log_batches(cut)) == len(log_batches(clean[log])) - 2
    if name == "trailing-zeros":
        assert damaged[log] == clean[log] + bytes(200)
    if name.startswith("crc-flip"):
        file = P + seg(ACTIVE if "above" in name else FIRST, ".log")
        diff = [i for i, (a, b) in enumerate(zip(clean[file], damaged[file], strict=True)) if a != b]
        assert len(diff) == 1
        batch = next(b for b in log_batches(clean[file]) if b.position <= diff[0] < b.position + b.size_in_bytes)
        assert diff[0] >= batch.position + 61, "inside the batch body, not its header"
    if name == "corrupt-index":
        entries = offset_index.parse_offset_index(damaged[P + seg(FIRST, ".index")], FIRST).entries
        starts = {b.position for b in log_batches(clean[P + seg(FIRST, ".log")])}
        assert [e.position in starts for e in entries].count(False) == 1
    if name == "hard-crash":
        assert len(damaged[P + seg(ACTIVE, ".index")]) == 4096
        assert len(damaged[P + seg(ACTIVE, ".timeindex")]) == 4092
        assert list(checkpoint.parse_offset_checkpoint(damaged[HW]).values()) == [ACTIVE]


def test_the_duplicate_retry_was_not_written() -> None:
    tree = build_tree("idempotent-epoch-bump")
    seen: set[tuple[int, int, int]] = set()
    for name in sorted(k for k in tree if k.endswith(".log")):
        for b in log_batches(tree[name]):
            if b.producer_id >= 0 and not b.is_control:
                key = (b.producer_id, b.producer_epoch, b.base_sequence)
                assert key not in seen
                seen.add(key)
    assert fixtures.damage_base()[1].rejected, "the recipe does retry a batch"
    epochs = {e for pid, e, _ in seen if pid == 1000}
    assert epochs == {0, 1}
    assert (1000, 1, 0) in seen, "the bumped epoch restarts at sequence 0"


# --- an independent reader -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CLEAN)
def test_kafka_python_reads_every_clean_segment(name: str) -> None:
    from kafka.record.memory_records import MemoryRecords

    logs = sorted((FIXTURES / name).glob("*/*.log"))
    assert logs
    for log in logs:
        data = log.read_bytes()
        mr = MemoryRecords(data)
        count = 0
        while mr.has_next():
            batch = mr.next_batch()
            assert batch.validate_crc(), f"{log}: batch {count}"
            count += 1
        assert count == len(log_batches(data))


# --- Kafka's layout, checked on the corpus and on the fixtures alike -----------------------------------------------


@dataclass(frozen=True)
class Config:
    segment_bytes: int
    index_interval_bytes: int


def corpus_config(case: Path) -> Callable[[str], Config]:
    doc = json.loads((case / "expected.json").read_text())

    def of(topic: str) -> Config:
        over = doc["topicConfigs"][topic]["overrides"]
        return Config(int(over["segment.bytes"]), int(over["index.interval.bytes"]))

    return of


def fixture_config(name: str) -> Callable[[str], Config]:
    configs = {"codecs": (4096, 1024), "payments": (3072, 512), "ledger": (3072, 512), "epochs": (2560, 384),
               "replica": (3072, 512), "alpha": (3072, 512), "beta": (2048, 256)}
    return lambda topic: Config(*configs[topic])


def check_kafka_layout(root: Path, config: Callable[[str], Config], *, clean: bool = True) -> dict[str, set[str]]:
    """Assert Kafka's layout rules on a log dir; return the file suffixes of each partition (``topic-N``)."""
    suffixes: dict[str, set[str]] = {}
    for pdir in sorted(p for p in root.iterdir() if p.is_dir()):
        cfg = config(pdir.name.rsplit("-", 1)[0])
        names = sorted(p.name for p in pdir.iterdir())
        suffixes[pdir.name] = {n[20:] if n[:20].isdigit() else n for n in names}
        bases = sorted(int(n[:20]) for n in names if n.endswith(".log"))
        batches = {b: log_batches((pdir / seg(b, ".log")).read_bytes()) for b in bases}
        leo = batches[bases[-1]][-1].last_offset + 1
        for i, base in enumerate(bases):
            log = batches[base]
            size = (pdir / seg(base, ".log")).stat().st_size
            last_segment = i == len(bases) - 1
            assert size <= cfg.segment_bytes
            if not last_segment:  # LogSegment.shouldRoll: the next batch did not fit
                assert size + batches[bases[i + 1]][0].size_in_bytes > cfg.segment_bytes, (pdir.name, base)
            want_index, want_times = [], []
            since, max_ts, max_off = 0, -1, -1
            for b in log:  # LogSegment.append
                if b.max_timestamp > max_ts:
                    max_ts, max_off = b.max_timestamp, b.last_offset
                if since > cfg.index_interval_bytes:
                    want_index.append((b.last_offset, b.position))
                    if max_ts > (want_times[-1][0] if want_times else -1):
                        want_times.append((max_ts, max_off))
                    since = 0
                since += b.size_in_bytes
            if (clean or not last_segment) and max_ts > (want_times[-1][0] if want_times else -1):
                want_times.append((max_ts, max_off))  # onBecomeInactiveSegment / close
            index = offset_index.parse_offset_index((pdir / seg(base, ".index")).read_bytes(), base)
            times = time_index.parse_time_index((pdir / seg(base, ".timeindex")).read_bytes(), base)
            assert [(e.offset, e.position) for e in index.entries] == want_index, (pdir.name, base)
            assert [(e.timestamp, e.offset) for e in times.entries] == want_times, (pdir.name, base)
            assert (index.zero_tail == 0 and times.zero_tail == 0) == (clean or not last_segment)
            aborts = {b.base_offset for b in log if b.is_control and b.records
                      and b.records[0].control is not None and b.records[0].control.type_name == "ABORT"}
            txn = pdir / seg(base, ".txnindex")
            assert txn.exists() == bool(aborts), (pdir.name, base)
            if txn.exists():
                for e in txn_index.parse_txn_index(txn.read_bytes()):
                    assert e.last_offset in aborts and e.first_offset < e.last_offset and e.last_stable_offset <= \
                        e.last_offset + 1
        snapshots = {int(n[:20]) for n in names if n.endswith(".snapshot")}
        assert snapshots == set(bases[1:]) | ({leo} if clean else set()), pdir.name
        assert re.fullmatch(r"0\n(\d+)\n(\d+ \d+\n)*", (pdir / "leader-epoch-checkpoint").read_text())
        assert re.fullmatch(r"version: 0\ntopic_id: [A-Za-z0-9_-]{22}", (pdir / "partition.metadata").read_text())
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint", "log-start-offset-checkpoint"):
        text = (root / name).read_text()
        m = re.fullmatch(r"0\n(\d+)\n((?:\S+ \d+ \d+\n)*)", text)
        assert m and int(m.group(1)) == m.group(2).count("\n"), name
    lines = (root / "meta.properties").read_text().split("\n")
    assert lines[0] == "#" and re.fullmatch(r"#\w{3} \w{3} \d\d \d\d:\d\d:\d\d UTC \d{4}", lines[1])
    assert [line.split("=")[0] for line in lines[2:]] == ["node.id", "directory.id", "version", "cluster.id", ""]
    marker = root / ".kafka_cleanshutdown"
    assert marker.exists() == clean
    if clean:
        assert re.fullmatch(r'\{"version":0,"brokerEpoch":\d+\}', marker.read_text())
    return suffixes


PAIRS = [
    ("txn-commit-abort-hanging", "txn-clean", {"ledger-0": "ledger-0"}),
    ("idempotent-epoch-bump", "idem-clean", {"payments-0": "payments-0"}),
    ("leader-epochs", "epochs-clean", {"epochs-0": "epochs-0"}),
    ("follower", "epochs-clean", {"replica-0": "replica-0"}),
    ("multi-partition", "multi-partition-clean", {"alpha-0": "alpha-0", "alpha-1": "alpha-1", "beta-0": "beta-0"}),
    ("codecs-clean", "plain-none-clean", {"codecs-0": "orders-0"}),
]


@pytest.mark.parametrize(("name", "case", "partitions"), PAIRS, ids=[p[0] for p in PAIRS])
def test_clean_scenario_has_the_layout_of_kafkas_own(name: str, case: str, partitions: dict[str, str]) -> None:
    corpus = shared_dir("corpus") / case / "input"
    kafka = check_kafka_layout(corpus, corpus_config(corpus.parent))
    ours = check_kafka_layout(FIXTURES / name, fixture_config(name))
    for mine, theirs in partitions.items():
        assert ours[mine] == kafka[theirs], (mine, theirs)
    top = {p.name for p in (FIXTURES / name).iterdir() if p.is_file() and p.name not in fixtures.KEPT_NAMES}
    assert top == {p.name for p in corpus.iterdir() if p.is_file()}


def test_hard_crash_has_the_layout_of_a_kafka_crash() -> None:
    corpus = shared_dir("corpus") / "swap-cleaned-leftover-unclean" / "input"
    active = corpus / "accounts-0" / seg(669, ".index")
    assert active.stat().st_size == 4096 and active.with_suffix(".timeindex").stat().st_size == 4092
    assert not (corpus / "accounts-0" / seg(760, ".snapshot")).exists()
    check_kafka_layout(FIXTURES / "hard-crash", fixture_config("hard-crash"), clean=False)


def test_log_start_offset_checkpoint_lists_only_a_raised_log_start() -> None:
    root = FIXTURES / "multi-partition"
    assert (root / LOG_START).read_text() == f"0\n1\nalpha 0 {fixtures_log_start()}\n"
    assert (root / "alpha-0" / "leader-epoch-checkpoint").read_text() == f"0\n1\n0 {fixtures_log_start()}\n"
    hw = checkpoint.parse_offset_checkpoint((root / HW).read_bytes())
    rp = checkpoint.parse_offset_checkpoint((root / RP).read_bytes())
    assert [rp[tp] - hw[tp] for tp in sorted(rp, key=str)] == [0, 0, 3]
    for name in CLEAN:
        if name != "multi-partition":
            assert (FIXTURES / name / LOG_START).read_text() == "0\n0\n"


def fixtures_log_start() -> int:
    alpha0 = sorted((FIXTURES / "multi-partition" / "alpha-0").glob("*.log"))
    return int(alpha0[1].name[:20]) + 3


def test_hanging_transaction_and_aborts() -> None:
    part = FIXTURES / "txn-commit-abort-hanging" / "ledger-0"
    from kafkatool.schema.producer_snapshot import parse_producer_snapshot

    last = max(part.glob("*.snapshot"))
    open_txns = [e for e in parse_producer_snapshot(last.read_bytes()).entries if e.current_txn_first_offset >= 0]
    assert [e.producer_id for e in open_txns] == [2002]
    entries = [e for f in sorted(part.glob("*.txnindex")) for e in txn_index.parse_txn_index(f.read_bytes())]
    assert any(e.last_stable_offset < e.last_offset for e in entries), "an abort while another txn was open"
    bases = sorted(int(p.name[:20]) for p in part.glob("*.log"))
    assert any(e.first_offset < b <= e.last_offset for e in entries for b in bases), "an aborted txn spans a roll"


def test_follower_and_leader_epochs() -> None:
    follower = FIXTURES / "follower"
    assert [e.epoch for e in checkpoint.parse_leader_epoch_checkpoint(
        (follower / "replica-0" / "leader-epoch-checkpoint").read_bytes())] == [2, 4, 7]
    hw = checkpoint.parse_offset_checkpoint((follower / HW).read_bytes())
    rp = checkpoint.parse_offset_checkpoint((follower / RP).read_bytes())
    assert [rp[tp] - hw[tp] for tp in rp] == [4]
    leader = FIXTURES / "leader-epochs" / "epochs-0"
    epochs = checkpoint.parse_leader_epoch_checkpoint((leader / "leader-epoch-checkpoint").read_bytes())
    assert [e.epoch for e in epochs] == [0, 1, 3, 5]
    assert epochs[-1].start_offset in {int(p.name[:20]) for p in leader.glob("*.log")}


def test_codecs_clean_covers_every_codec_and_record_shape() -> None:
    batches = [b for log in sorted((FIXTURES / "codecs-clean").glob("*/*.log")) for b in log_batches(log.read_bytes())]
    assert {b.compression.label for b in batches} == {"none", "gzip", "snappy", "lz4", "zstd"}
    records = [r for b in batches for r in b.records or []]
    assert any(r.key is None for r in records) and any(r.value is None for r in records)
    assert any(r.headers for r in records)
    assert {b.is_idempotent for b in batches} == {True, False}


def test_meta_properties_are_fixed() -> None:
    for name in (n for n in NAMES if n not in MULTI_BROKER):
        assert (FIXTURES / name / "meta.properties").read_text() == (
            "#\n#Tue Nov 14 22:13:20 UTC 2023\nnode.id=1\ndirectory.id=a2Fma2F0b29sRml4RGlyIQ\nversion=1\n"
            "cluster.id=kafkatool-fixtures\n")


# --- the command ----------------------------------------------------------------------------------------------


def test_list_names_every_scenario() -> None:
    result = runner.invoke(app, ["fixture", "list"])
    assert result.exit_code == 0
    assert [line.split()[0] for line in result.stdout.splitlines()] == NAMES


def test_build_unknown_scenario_is_a_usage_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["fixture", "build", "nope", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert "codecs-clean" in result.stderr and "hard-crash" in result.stderr
    assert not (tmp_path / "x").exists()


def test_build_refuses_a_non_empty_dir_without_force(tmp_path: Path) -> None:
    out = tmp_path / "logdir"
    assert runner.invoke(app, ["fixture", "build", "torn-write", str(out)]).exit_code == 0
    (out / "expect.json").write_text("{}")
    again = runner.invoke(app, ["fixture", "build", "hard-crash", str(out)])
    assert again.exit_code == 2 and "--force" in again.stderr
    forced = runner.invoke(app, ["fixture", "build", "--force", "hard-crash", str(out)])
    assert forced.exit_code == 0, forced.stderr
    assert files(out) == build_tree("hard-crash")
    assert (out / "expect.json").read_text() == "{}", "the expectation beside a fixture is kept"
    (out / "notes.txt").write_text("mine")
    refused = runner.invoke(app, ["fixture", "build", "--force", "torn-write", str(out)])
    assert refused.exit_code == 2 and "notes.txt" in refused.stderr
    assert (out / "notes.txt").exists()


@pytest.mark.parametrize("sub", ["list", "build"])
def test_help_and_man_page_document_every_option(sub: str) -> None:
    group = typer.main.get_command(app).commands["fixture"]  # type: ignore[attr-defined]
    command = group.commands[sub]
    man = (REPO / "man" / "kafkatool-fixture.1").read_text()
    man_plain = man.replace("\\-", "-")
    result = runner.invoke(app, ["fixture", sub, "--help"])
    assert result.exit_code == 0
    for param in command.params:
        if isinstance(param, typer.core.TyperOption):
            for opt in param.opts:
                assert opt in man_plain, f"{opt} missing from man/kafkatool-fixture.1"
                assert opt in result.stdout, f"{opt} missing from fixture {sub} --help"
    documented = set(re.findall(r"^\.(?:TP\n)?\.B[IR]? (\\-\\-[a-z-]+)", man, flags=re.M))
    assert documented <= {"\\-\\-force", "\\-\\-help"}
    assert f".B {sub}" in man or f".BI {sub}" in man
    for name in NAMES:
        assert f".B {name}".replace("-", "\\-") in man, f"scenario {name} missing from the man page"


def test_build_help_names_the_arguments() -> None:
    result = runner.invoke(app, ["fixture", "build", "--help"])
    assert "SCENARIO" in result.stdout and "OUT_DIR" in result.stdout and "--force" in result.stdout


def test_man_page_renders() -> None:
    import os
    import shutil
    import subprocess

    if not shutil.which("man"):
        pytest.skip("man not installed")
    proc = subprocess.run(["man", "-l", str(REPO / "man" / "kafkatool-fixture.1")], capture_output=True, text=True,
                          env={**os.environ, "MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "100"}, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "SYNOPSIS" in proc.stdout and "hard-crash" in proc.stdout
