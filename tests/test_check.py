"""kafkatool check on Kafka-made data: clean cases are clean, damaged cases show exactly their damage."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from tests.conftest import SHARED, corpus_cases, load_expected, shared_dir

runner = CliRunner()

# What each kind of mutation in ../shared/corpus must make check report: (pattern, code, file group).
MUTATION_CODES = [
    (r"deleted \.kafka_cleanshutdown", "unclean-shutdown", None),
    (r"recovery-point-offset-checkpoint for (\S+) set back", "recovery-point-behind", None),
    (r"torn write: (\S+\.log) truncated", "torn-tail", 1),
    (r"appended \d+ zero bytes after the last batch of (\S+\.log)", "trailing-zeros", 1),
    (r"deleted (\S+)/(\d{20})\.index", "missing-index", None),
    (r"deleted (\S+\.snapshot) \(latest producer snapshot\)", "snapshot-missing", None),
]


def check_json(*args: str) -> tuple[int, dict]:
    result = runner.invoke(app, ["check", "-f", "json", *args])
    return result.exit_code, json.loads(result.stdout)


def damaged_cases() -> list[str]:
    return [c for c in corpus_cases()
            if json.loads((SHARED / "corpus" / c / "expected.json").read_text()).get("mutations")]


def clean_cases() -> list[str]:
    return [c for c in corpus_cases() if c.endswith("-clean")
            and not json.loads((SHARED / "corpus" / c / "expected.json").read_text()).get("mutations")]


@pytest.mark.parametrize("case", clean_cases())
def test_clean_corpus_cases_have_no_error(case: str) -> None:
    code, doc = check_json(str(shared_dir("corpus") / case / "input"))
    errors = [f for f in doc["findings"] if f["severity"] == "error"]
    assert code == 0 and not errors, errors


@pytest.mark.parametrize("case", damaged_cases())
def test_damaged_corpus_cases_report_their_mutations(case: str) -> None:
    code, doc = check_json("--fail-on", "warning", str(shared_dir("corpus") / case / "input"))
    assert code == 1
    found = {(f["code"], f["file"]) for f in doc["findings"]}
    codes = {c for c, _ in found}
    for mutation in load_expected(case)["mutations"]:
        matched = False
        for pattern, want, group in MUTATION_CODES:
            m = re.search(pattern, mutation)
            if not m:
                continue
            matched = True
            assert want in codes, f"{mutation!r} should give {want}, got {sorted(codes)}"
            if group is not None:
                assert (want, m.group(group)) in found
        assert matched, f"no rule for mutation {mutation!r}"


def test_torn_write_findings_say_what_kafka_does(corpus_root: Path) -> None:
    _, doc = check_json(str(corpus_root / "idem-torn-write" / "input"))
    by_code = {f["code"]: f for f in doc["findings"]}
    torn = by_code["torn-tail"]
    assert torn["position"] == 1889  # "inside batch at position 1889" in the mutation
    assert "truncates" in torn["reason"]
    hw = by_code["high-watermark-beyond-leo"]
    assert "412" in hw["reason"] and "404" in hw["reason"]  # HW checkpoint vs Kafka's LEO after the cut
    assert load_expected("idem-torn-write")["afterLoad"]["partitions"]["payments-0"]["logEndOffset"] == 404


def test_expect_file_drives_the_exit_code(corpus_root: Path, tmp_path: Path) -> None:
    target = str(corpus_root / "plain-none-trailing-zeros" / "input")
    good = tmp_path / "expect.json"
    good.write_text(json.dumps({"findings": [
        {"code": "trailing-zeros", "file": "orders-0/00000000000000000691.log"},
        {"code": "unclean-shutdown"}, {"code": "recovery-point-behind"}]}))
    assert runner.invoke(app, ["check", "--expect", str(good), target]).exit_code == 0
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({"findings": [{"code": "trailing-zeros"}]}))
    result = runner.invoke(app, ["check", "--expect", str(partial), target])
    assert result.exit_code == 1 and "found but not expected" in result.stderr
    extra = tmp_path / "extra.json"
    extra.write_text(json.dumps({"findings": [{"code": "torn-tail"}], "min_severity": "error"}))
    result = runner.invoke(app, ["check", "--expect", str(extra), target])
    assert result.exit_code == 1 and "expected but not found: torn-tail" in result.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert runner.invoke(app, ["check", "--expect", str(bad), target]).exit_code == 2


def test_broker_log_dirs_must_agree(corpus_root: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(corpus_root / "idem-clean" / "input", a)
    shutil.copytree(corpus_root / "plain-none-clean" / "input", b)
    props = (b / "meta.properties").read_text().replace("node.id=1", "node.id=2")
    (b / "meta.properties").write_text(props)
    code, doc = check_json(str(a), str(b))
    assert code == 1
    assert any(f["code"] == "meta-properties-mismatch" and f["field"] == "node.id" for f in doc["findings"])


def test_healthy_table_is_one_line(corpus_root: Path) -> None:
    result = runner.invoke(app, ["check", str(corpus_root / "plain-none-clean" / "input")])
    assert result.exit_code == 0
    assert result.stdout.strip().splitlines() == [result.stdout.strip()]
    assert "healthy" in result.stdout


def test_check_reports_unreadable_dir(tmp_path: Path) -> None:
    result = runner.invoke(app, ["check", str(tmp_path / "nope")])
    assert result.exit_code == 3
    (tmp_path / "empty").mkdir()
    result = runner.invoke(app, ["check", str(tmp_path / "empty")])
    assert result.exit_code == 3 and "no Kafka" in result.stderr


def test_input_is_never_modified(corpus_root: Path) -> None:
    root = corpus_root / "swap-interrupted-unclean" / "input"
    before = {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in root.rglob("*")}
    runner.invoke(app, ["check", str(root)])
    assert before == {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in root.rglob("*")}


def test_the_table_reads_at_80_columns_without_splitting_a_code_or_a_file_name() -> None:
    """Every damaged fixture and corpus case at 80 columns: no line wider than 80, and each finding's code and
    file name whole on its first line."""
    import io

    from kafkatool.render.report import render_report

    roots = [p for p in (Path(__file__).parents[1] / "fixtures").iterdir() if (p / "expect.json").is_file()]
    roots += [SHARED / "corpus" / c / "input" for c in corpus_cases()[:40]]
    checked = 0
    for root in roots:
        _, doc = check_json(str(root))
        out = io.StringIO()
        out.isatty = lambda: True  # type: ignore[method-assign]  # a terminal 80 columns wide
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("COLUMNS", "80")
            render_report(doc["findings"], {**doc["summary"], "show_info": True}, "table", out)
        lines = re.sub("\x1b\\[[0-9;]*m", "", out.getvalue()).splitlines()
        assert all(len(line) <= 80 for line in lines), root
        for f in doc["findings"]:
            head = f"{f['code']}  {f['file']}"
            assert any(head in line for line in lines), (root, head)
            checked += 1
    assert checked > 20


def _swap_case(tmp_path: Path, *, replaced_deleted: bool) -> Path:
    """swap-interrupted-unclean (a cleaner stopped after .cleaned became .swap) copied, its replaced segment's
    batch at byte 139 made to fail its CRC; with ``replaced_deleted`` that segment already renamed .deleted."""
    root = tmp_path / "logdir"
    shutil.copytree(shared_dir("corpus") / "swap-interrupted-unclean" / "input", root)
    part = root / "accounts-0"
    seg = part / "00000000000000000000.log"
    data = bytearray(seg.read_bytes())
    data[139 + 70] ^= 0xFF  # inside the second batch's records: its CRC fails
    seg.write_bytes(bytes(data))
    if replaced_deleted:
        for f in sorted(part.glob("00000000000000000000.*")):
            if f.suffix in (".log", ".index", ".timeindex", ".txnindex"):
                f.rename(f.with_name(f.name + ".deleted"))
    return root


@pytest.mark.parametrize("replaced_deleted", [False, True], ids=["replaced-in-place", "replaced-deleted"])
def test_an_interrupted_swap_is_checked_as_kafka_loads_it(tmp_path: Path, replaced_deleted: bool) -> None:
    """check uses the swap rule of simulate-restart and replay-producers (engine.swaps): the .swap segment is
    checked in place of the segments it replaces, which Kafka deletes at load. Damage in a replaced segment is
    no loss and no defect; nothing is an error; simulate-restart loses no record either."""
    root = _swap_case(tmp_path, replaced_deleted=replaced_deleted)
    result = runner.invoke(app, ["check", "-f", "json", "--show-info", str(root)])
    assert result.exit_code == 0, result.stdout
    findings = json.loads(result.stdout)["findings"]
    assert not [f for f in findings if f["severity"] == "error"], findings
    assert not [f for f in findings if f["file"] == "accounts-0/00000000000000000000.log"
                and f["code"] != "swap-replaced"]
    assert any(f["file"].endswith(".log.swap") for f in findings)  # the swap segment's own content is checked
    replaced = [f for f in findings if f["code"] == "swap-replaced"]
    assert len(replaced) == (0 if replaced_deleted else 1)
    restart = json.loads(runner.invoke(app, ["simulate-restart", "-f", "json", str(root)]).stdout)
    (p,) = restart["partitions"]
    assert p["outcome"] == "loaded" and not p["loss"]["records"]  # the damaged replaced segment is deleted
