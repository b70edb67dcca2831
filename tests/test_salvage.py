"""``kafkatool salvage``: on damaged log dirs (the committed fixtures, the Kafka-made corpus and saved broker data)
it keeps every CRC-valid batch byte for byte at its offsets, the repaired log dir loads in the restart model without
any loss, and the export holds exactly the records of the chosen batches."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.model import Header
from kafkatool.reading.log import read_log
from kafkatool.render.safe import json_bytes
from kafkatool.writing.atomic import write_tree
from kafkatool.writing.fixture_writer import LogDir, PartitionWriter
from tests.report_support import CLOCK, json_of, make_report, num

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
runner = CliRunner()

CASES = ["crc-flip-above-recovery-point", "crc-flip-below-recovery-point", "torn-write", "stray-files",
         "txn-commit-abort-hanging", "multi-partition", "trailing-zeros"]


def _run(*argv: str) -> tuple[int, str]:
    res = runner.invoke(app, list(argv))
    return res.exit_code, res.stdout


def _valid_batches(log_dir: Path) -> dict[tuple[str, int], bytes]:
    """Every CRC-valid magic 2 batch of every live segment, by (partition, base offset): its bytes."""
    out: dict[tuple[str, int], bytes] = {}
    for seg in sorted(log_dir.glob("*-*/*.log")):
        if seg.parent.name.startswith("__cluster_metadata"):
            continue
        data = seg.read_bytes()
        entries, _ = read_log(seg)
        for e in entries:
            if getattr(e, "crc_valid", False) and hasattr(e, "batch_length"):
                out[(seg.parent.name, e.base_offset)] = data[e.position:e.position + e.size_in_bytes]
    return out


@pytest.mark.parametrize("case", CASES)
def test_repaired_log_keeps_every_valid_batch_and_loads_without_loss(case: str, tmp_path: Path) -> None:
    src = REPO / "fixtures" / case
    out = tmp_path / "out"
    code, text = _run("salvage", "-f", "json", "--out", str(out), "--export", str(tmp_path / "x.jsonl"), str(src))
    assert code in (0, 1), text
    doc = json.loads(text)
    before, after = _valid_batches(src), _valid_batches(out)
    # every CRC-valid batch of the input is in the output, byte for byte, at its offset (fixtures have one copy)
    rejected = {(p["partition"], r["base_offset"]) for p in doc["partitions"] for r in p["rejected"]}
    assert {k: v for k, v in before.items() if k not in rejected} == after
    code, text = _run("simulate-restart", "-f", "json", "--now", "1700003600000", str(out))
    restart = json.loads(text)
    for p in restart["partitions"]:
        assert p["outcome"] == "loaded" and p["loss"]["records"] == 0 and p["loss"]["bytes"] == 0, p["directory"]
        mine = next(q for q in doc["partitions"] if q["partition"] == p["directory"])
        assert p["log_end_offset"] == mine["salvage"]["log_end_offset"]
    rows = [json.loads(line) for line in (tmp_path / "x.jsonl").read_text().splitlines()]
    assert len(rows) == sum(p["salvage"]["records"] - _markers(p) for p in doc["partitions"])
    assert doc["totals"]["records"] >= doc["totals"]["kafka_records"] - _unreadable_kept(doc)


def _markers(p: dict) -> int:
    t = p["salvage"]["transactions"]
    return p["salvage"]["records"] - sum(t.values())


def _unreadable_kept(doc: dict) -> int:
    """Records Kafka keeps without reading them (a clean start trusts damaged bytes below the recovery point)."""
    return sum(g["count"] for p in doc["partitions"] for g in p["lost"])


def test_damage_mid_segment_salvage_keeps_what_recovery_cuts(tmp_path: Path) -> None:
    code, text = _run("salvage", "-f", "json", str(REPO / "fixtures" / "crc-flip-above-recovery-point"))
    assert code == 1
    (p,) = json.loads(text)["partitions"]
    assert p["kafka"]["records_lost"] > 0
    assert p["salvage"]["records_beyond_kafka"] > 0
    assert p["salvage"]["records"] == p["kafka"]["records"] + p["salvage"]["records_beyond_kafka"]
    (gap,) = p["lost"]
    assert gap["why"] == "damaged" and gap["damage"]
    assert any(d["code"] == "crc-mismatch" for d in p["defects"])


def test_transaction_states_follow_the_markers(tmp_path: Path) -> None:
    src = REPO / "fixtures" / "txn-commit-abort-hanging"
    _code, text = _run("salvage", "-f", "json", "--export", str(tmp_path / "x.parquet"), str(src))
    t = json.loads(text)["partitions"][0]["salvage"]["transactions"]
    assert t["committed"] and t["aborted"] and t["open"]
    table = pq.read_table(tmp_path / "x.parquet")
    states = table.column("transaction_state").to_pylist()
    assert states.count("aborted") == t["aborted"] and states.count("open") == t["open"]
    assert table.schema.field("value").type == "binary"
    out = tmp_path / "out"
    _run("salvage", "--out", str(out), str(src))
    assert list(out.glob("*/*.txnindex")), "the ABORT markers' AbortedTxn entries"


def test_replica_copies_fill_each_others_damage(tmp_path: Path) -> None:
    """Two copies of one partition, each damaged at a different place: together nothing is lost."""
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(REPO / "fixtures" / "crc-flip-above-recovery-point", a)
    shutil.copytree(REPO / "fixtures" / "crc-flip-above-recovery-point", b)
    clean = REPO / "fixtures" / "crc-flip-below-recovery-point"
    # b's copy of the damaged segment comes from a fixture damaged elsewhere
    for seg in (clean / "payments-0").glob("*.log"):
        if (a / "payments-0" / seg.name).read_bytes() != seg.read_bytes():
            shutil.copy(seg, b / "payments-0" / seg.name)
    _code, text = _run("salvage", "-f", "json", "--replica", f"1={a}", "--replica", f"2={b}")
    doc = json.loads(text)
    (p,) = doc["partitions"]
    assert {s["replica"] for s in p["sources"]} == {1, 2}
    assert p["lost"] == [] and p["conflicts"] == []
    assert p["salvage"]["records"] == p["kafka"]["records"] + p["kafka"]["records_lost"]


def test_refuses_output_inside_an_input(tmp_path: Path) -> None:
    src = tmp_path / "in"
    shutil.copytree(REPO / "fixtures" / "torn-write", src)
    code, _ = _run("salvage", "--out", str(src / "out"), str(src))
    assert code == 2
    assert not (src / "out").exists()


CORPUS_CASES = ["idem-torn-write", "swap-interrupted-unclean", "txn-clean", "legacy-v1-gzip-torn-write-unclean",
                "compacted-tombstones-clean", "epochs-clean"]


@pytest.mark.corpus
@pytest.mark.parametrize("case", CORPUS_CASES)
def test_corpus_repaired_logs_load_without_loss(case: str, tmp_path: Path) -> None:
    src = CORPUS / case / "input"
    if not src.is_dir():
        pytest.skip("../shared is not beside the checkout")
    out = tmp_path / "out"
    code, text = _run("salvage", "-f", "json", "--out", str(out), str(src))
    assert code in (0, 1), text
    code, text = _run("simulate-restart", "-f", "json", "--now", "1700003600000", str(out))
    for p in json.loads(text)["partitions"]:
        assert p["outcome"] == "loaded" and p["loss"]["records"] == 0, p["directory"]


def test_report_salvage_section_is_salvages_account(tmp_path: Path) -> None:
    """The report's salvage section says what ``salvage -f json`` says: Kafka's recovery against salvage per
    partition, the sources, the offsets lost everywhere; a hostile partition directory name is shown escaped."""
    src = tmp_path / "in"
    shutil.copytree(REPO / "fixtures" / "crc-flip-above-recovery-point", src)
    hostile = "pay\u202ements\x1b[31m-0"
    (src / "payments-0").rename(src / hostile)
    code, html, page = make_report(tmp_path / "r.html", src)
    assert code == 1
    _, doc = json_of("salvage", "--now", CLOCK, "-f", "json", str(src))
    (p,) = doc["partitions"]
    (row,) = page.rows_of("salvage-partitions")
    assert [num(x) for x in row[1:]] == [p["kafka"]["records"], p["kafka"]["records_lost"],
                                         p["kafka"]["log_end_offset"], p["salvage"]["records"],
                                         p["salvage"]["records_beyond_kafka"], p["salvage"]["log_end_offset"],
                                         sum(g["count"] for g in p["lost"]), len(p["conflicts"])]
    assert p["salvage"]["records_beyond_kafka"] > 0
    assert [num(r[4]) for r in page.rows_of("salvage-sources")] == [s["records"] for s in p["sources"]]
    assert [(num(r[1]), num(r[2])) for r in page.rows_of("salvage-lost")] == [(g["from"], g["to"]) for g in p["lost"]]
    assert "\u202e" not in html and "\x1b" not in html and "\\u202e" in html
    assert "kafkatool salvage --now" in html and "salvage: " in html  # the command, and the verdict's reason


def test_report_leaves_salvage_out_on_a_healthy_log_dir(tmp_path: Path) -> None:
    _code, _html, page = make_report(tmp_path / "r.html", REPO / "fixtures" / "codecs-clean")
    assert page.by_id("salvage") is None and not page.rows_of("salvage-partitions")


HOSTILE_TOPIC = "r\u202eo\x85l\u2028\x9bd"
HOSTILE_HEADER = "h\u2066\x7fk\u2029\u061c\u200e"
RAW_UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def test_jsonl_export_escapes_hostile_names_as_render_safe_does(tmp_path: Path) -> None:
    """A topic name and a header key holding C1, U+0085, bidi and U+2028/2029 characters reach the JSON lines
    export escaped (``\\uXXXX``) exactly as ``render.safe.json_bytes`` writes them, and parse back to the names."""
    part = PartitionWriter(HOSTILE_TOPIC, 0)
    part.append([b"v1", b"v2"], leader_epoch=0, headers=[(Header(HOSTILE_HEADER.encode(), b"x"),), ()])
    part.close()
    root = tmp_path / "logdir"
    write_tree(LogDir([part]).files(), root)
    export = tmp_path / "x.jsonl"
    code, text = _run("salvage", "-f", "json", "--export", str(export), str(root))
    assert code == 0, text
    data = export.read_bytes()
    assert not RAW_UNSAFE.search(data.decode()), "an unsafe character reached the export raw"
    rows = [json.loads(line) for line in data.splitlines()]
    assert [r["topic"] for r in rows] == [HOSTILE_TOPIC, HOSTILE_TOPIC]
    assert rows[0]["headers"][0]["key"] == HOSTILE_HEADER and rows[0]["file"].startswith(HOSTILE_TOPIC + "-0/")
    for line, row in zip(data.splitlines(), rows, strict=True):
        assert line == json_bytes(row)  # one rule: render's JSON and writing's JSON lines are the same bytes


def test_parquet_row_groups_are_bounded_by_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Big records make small row groups (the rows held before each is written stay within PARQUET_BYTES)."""
    from kafkatool.writing import salvage_writer

    monkeypatch.setattr(salvage_writer, "PARQUET_BYTES", 1 << 20)
    row = {"topic": "t", "partition": 0, "offset": 0, "timestamp": 0, "timestamp_type": "CreateTime", "key": None,
           "value": bytes(300_000), "headers": [], "producer_id": None, "producer_epoch": None, "sequence": None,
           "transaction_state": "none", "leader_epoch": 0, "file": "f", "position": 0, "replica": None,
           "source_kind": "segment"}
    out = tmp_path / "x.parquet"
    assert salvage_writer.write_parquet(out, ({**row, "offset": i} for i in range(20))) == 20
    meta = pq.ParquetFile(out).metadata
    assert meta.num_rows == 20 and meta.num_row_groups == 5


def test_report_salvage_section_above_its_batch_bound_names_the_commands(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``SALVAGE_SECTION_MAX_BATCHES`` the report does not run salvage (minutes on millions of batches): the
    section says why, with the batch count, and gives the salvage commands; the salvage tables are absent."""
    from kafkatool.analysis import report

    src = tmp_path / "in"
    shutil.copytree(REPO / "fixtures" / "crc-flip-above-recovery-point", src)
    monkeypatch.setattr(report, "SALVAGE_SECTION_MAX_BATCHES", 1)
    code, html, page = make_report(tmp_path / "r.html", src)
    assert code == 1
    assert page.by_id("salvage") is not None and not page.rows_of("salvage-partitions")
    batches = sum(len(read_log(p)[0]) for p in src.glob("*/*.log"))
    assert f"the log dirs hold {batches} batches, more than 1" in html
    assert "kafkatool salvage --now" in html
