"""kafkatool report: its verdict and marks agree with simulate-restart, replay-producers and simulate-replication
on the same input, and with what Kafka's own code did (../shared); it writes one file, safely."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from kafkatool.commands.report import build_report
from kafkatool.render import html_report, report_plots
from tests.conftest import REPO, corpus_cases, load_expected, shared_dir
from tests.report_support import CLOCK, ReportParser, json_of, make_report, num, run_cli

KIP101 = "kip101-divergence-after-double-crash"


def _input(case: str) -> Path:
    return shared_dir("corpus") / case / "input"


def test_torn_write_marks_agree_with_simulate_restart_and_kafka(tmp_path: Path) -> None:
    code, html, page = make_report(tmp_path / "r.html", _input("idem-torn-write"))
    restart_code, restart = json_of("simulate-restart", "--now", CLOCK, "-f", "json", str(_input("idem-torn-write")))
    kafka = load_expected("idem-torn-write")["afterLoad"]["partitions"]["payments-0"]
    (fig,) = page.figures("segment-map")
    (p,) = restart["partitions"]
    # The restart cuts the torn tail: at the log end Kafka's LogLoader reports ("truncating to offset 404").
    assert num(fig["data-truncate-at"]) == p["log_end_offset"] == kafka["logEndOffset"]
    assert num(fig["data-bytes-truncated"]) == p["bytes_truncated"] == kafka["totalBytesDropped"]
    assert num(fig["data-recovery-point"]) == p["recovery_point"] == kafka["recoveryPoint"]
    assert num(fig["data-high-watermark"]) == p["high_watermark"] == kafka["highWatermark"]
    assert num(fig["data-log-start-offset"]) == p["log_start_offset"] == kafka["logStartOffset"]
    assert num(fig["data-high-watermark-checkpoint"]) == kafka["inputs"]["highWatermarkCheckpoint"]
    # Acknowledged offsets [LEO after load, HW checkpoint) are gone from this replica.
    assert (num(fig["data-acknowledged-lost-from"]), num(fig["data-acknowledged-lost-to"])) == \
        (kafka["logEndOffset"], kafka["inputs"]["highWatermarkCheckpoint"])
    assert page.by_id("verdict")["data-level"] == "loses-data"
    assert code == restart_code == 1
    assert "truncates the log at offset 404" in html


def test_txn_clean_producers_agree_with_replay_producers_and_kafka(tmp_path: Path) -> None:
    code, _, page = make_report(tmp_path / "r.html", _input("txn-clean"))
    part = _input("txn-clean") / "ledger-0"
    _, replay = json_of("replay-producers", "--now", CLOCK, "-f", "json", str(part))
    restart_code, _ = json_of("simulate-restart", "--now", CLOCK, "-f", "json", str(_input("txn-clean")))
    kafka = load_expected("txn-clean")["afterLoad"]["partitions"]["ledger-0"]
    (fig,) = page.figures("producers")
    assert num(fig["data-last-stable-offset"]) == replay["last_stable_offset"] == kafka["lastStableOffset"]
    assert num(fig["data-first-unstable-offset"]) == replay["first_unstable_offset"] == kafka["firstUnstableOffset"]
    for state in ("committed", "aborted", "open"):
        assert num(fig[f"data-{state}"]) == replay["transactions"][state]
    assert num(fig["data-open"]) >= 1  # the open transaction at the end of the case
    (seg,) = page.figures("segment-map")
    assert seg["data-truncate-at"] == ""
    assert num(seg["data-high-watermark"]) == kafka["highWatermark"]
    (epochs,) = page.figures("epochs")
    assert epochs["data-epochs"] == " ".join(f"{e}@{o}" for e, o in kafka["leaderEpochEntries[epoch,startOffset]"])
    # An hour after the last write the open transaction hangs: damaged, and replay-producers says so too.
    replay_code, _ = json_of("replay-producers", "--now", CLOCK, "-f", "json", str(part))
    assert page.by_id("verdict")["data-level"] == "damaged"
    assert code == replay_code == 1 and restart_code == 0
    # At the partition's own clock it is merely open: healthy, as every subcommand says.
    code, _, page = make_report(tmp_path / "now.html", part, extra=("--now", "1700000002200"))
    assert page.by_id("verdict")["data-level"] == "healthy" and code == 0


def _replica_report(tmp_path: Path, *extra: str) -> tuple[int, str, ReportParser, dict, dict]:
    root = shared_dir("replica-sets") / KIP101
    exp = json.loads((root / "expected.json").read_text())
    brokers = [root / "brokers" / str(b) for b in exp["brokerIds"]]
    code, html, page = make_report(tmp_path / "r.html", *brokers, extra=extra)
    ctl = exp["controllerAtCapture"]
    args = ["simulate-replication", "-f", "json", "--partition", exp["partitionDir"], "--leader", str(ctl["leader"]),
            "--isr", ",".join(map(str, ctl["isr"])), "--now", CLOCK]
    for b, path in zip(exp["brokerIds"], brokers, strict=True):
        args += ["--replica", f"{b}={path}"]
    _, sim = json_of(*args)
    return code, html, page, sim, exp


@pytest.mark.parametrize("given", [True, False], ids=["leader-given", "leader-inferred"])
def test_kip101_replicas_agree_with_simulate_replication_and_kafka(tmp_path: Path, given: bool) -> None:
    ctl_args = ("--leader", "2", "--isr", "2") if given else ("--isr", "2")
    code, html, page, sim, exp = _replica_report(tmp_path, *ctl_args)
    (fig,) = page.figures("replicas")
    assert num(fig["data-leader"]) == sim["leader"] == exp["controllerAtCapture"]["leader"]
    rows = {(int(r[0]), int(r[1])): r for r in page.rows_of("pair")}
    assert len(rows) == len(exp["pairs"]) == len(sim["pairs"])
    for p in sim["pairs"]:
        row = rows[(p["leader"], p["follower"])]
        assert [row[2], num(row[3]), num(row[4]), num(row[5]), int(row[6])] == \
            [p["relation"], p["divergence_by_epoch"], p["divergence_by_batch_crc"], p["truncation_offset"],
             p["lost_record_count"]]
    for want in exp["pairs"]:
        row = rows[(want["leader"], want["follower"])]
        assert (num(row[5]), int(row[6])) == (want["truncationOffset"], want["lostRecordCount"])
    # Broker 1 (A) loses its committed audit batches 225..236 when it follows broker 2: data loss.
    a = next(w for w in exp["pairs"] if (w["leader"], w["follower"]) == (2, 1))
    assert page.by_id("verdict")["data-level"] == "loses-data" and code == 1
    assert f"truncates at {a['truncationOffset']} and removes {a['lostRecordCount']} records" in html
    assert f"--leader 2 --isr 2 --now {CLOCK}" in html  # the reproducing command is the one compared above


def test_verdict_agrees_with_simulate_restart_on_every_corpus_case() -> None:
    cases = corpus_cases()
    if not cases:
        shared_dir("corpus")
    for case in cases:
        doc = build_report([str(_input(case))], now=int(CLOCK), timeout_ms=15 * 60 * 1000, leader=None, isr=None,
                           leader_epoch=None)
        code, restart = json_of("simulate-restart", "--now", CLOCK, "-f", "json", str(_input(case)))
        assert (doc["verdict"]["level"] == "loses-data") == (code == 1), case
        marks = {p["directory"]: p["marks"] for p in doc["partitions"]}
        for p in restart["partitions"]:
            m = marks[p["directory"]]
            assert (m["log_end_offset"], m["high_watermark"], m["recovery_point"]) == \
                (p["log_end_offset"], p["high_watermark"], p["recovery_point"]), case


def test_fixture_replica_set_without_shared(tmp_path: Path) -> None:
    """The committed replica-set fixture (three brokers of orders-0): a replicas section, figures with text."""
    root = REPO / "fixtures" / "replica-set"
    code, html, page = make_report(tmp_path / "r.html", *(root / f"broker-{b}" for b in (1, 2, 3)),
                                   extra=("--leader", "2", "--isr", "2,3"))
    assert len(page.figures("replicas")) == 1
    assert len(page.figures("segment-map")) == 3
    assert code == (0 if page.by_id("verdict")["data-level"] == "healthy" else 1)
    for t, a in page.elements:
        if t == "svg":
            alt = page.by_id(a["aria-labelledby"])
            assert alt is not None and a["role"] == "img"
    assert "<script" not in html.lower()
    assert not re.search(r"""(?:src|href)\s*=\s*["'](?!#)""", html), "the report refers to something outside itself"


def test_refuses_to_overwrite_or_write_inside_the_input(tmp_path: Path) -> None:
    src = tmp_path / "torn-write"
    shutil.copytree(REPO / "fixtures" / "torn-write", src)
    code, _, err = run_cli("report", "-o", str(src / "r.html"), str(src))
    assert code == 2 and "inside the input" in err and not (src / "r.html").exists()
    out = tmp_path / "r.html"
    out.write_text("keep me")
    code, _, err = run_cli("report", "-o", str(out), str(src))
    assert code == 2 and "--force" in err and out.read_text() == "keep me"
    code, _, err = run_cli("report", "--force", "-o", str(out), str(src))
    assert code == 1, err
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert run_cli("report", "-o", str(tmp_path / "x.html"), str(tmp_path / "missing"))[0] == 3
    assert run_cli("report", "--isr", "a,b", "-o", str(tmp_path / "y.html"), str(src))[0] == 2


def test_without_matplotlib_the_text_alternatives_remain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = build_report([str(REPO / "fixtures" / "torn-write")], now=int(CLOCK), timeout_ms=900000, leader=None,
                       isr=None, leader_epoch=None)
    doc["title"] = "t"
    monkeypatch.setattr(report_plots, "available", lambda: False)
    html = html_report.render_html(doc)
    assert "<svg" not in html and "figure not drawn" in html
    page = ReportParser()
    page.feed(html)
    (fig,) = page.figures("segment-map")
    assert page.by_id(f"{fig['id']}-alt") is not None
    assert doc["verdict"]["level"] == "loses-data"


def test_internal_topics_section_agrees_with_transactions(tmp_path: Path) -> None:
    logdir = _input("internal-topics-hanging-txn-clean")
    code, _, page = make_report(tmp_path / "r.html", logdir)
    _, txn = json_of("transactions", "--now", CLOCK, "-f", "json", str(logdir))
    assert page.by_id("transactions") is not None
    rows = [r for r in page.rows if r[1] and r[1][0] in {t["transactional_id"] for t in txn["open_transactions"]}]
    got = {(r[1][0], r[1][1], int(r[1][4]), r[1][6]) for r in rows}
    assert got == {(t["transactional_id"], t["directory"], t["start_offset"], "yes" if t["hanging"] else "no")
                   for t in txn["open_transactions"]}
    assert txn["hanging"] and page.by_id("verdict")["data-level"] == "damaged" and code == 1


def test_groups_section_equals_kafkas_commits_and_flags_a_truncated_log(tmp_path: Path) -> None:
    """The groups section lists each committed offset Kafka's own decoding gives; after invoices-0 is cut below a
    group's commit, that commit is flagged beyond the log end and the verdict says the log is damaged."""
    from tests.test_groups import copy_case, kafka_committed_offsets

    logdir = _input("internal-topics-hanging-txn-clean")
    _, _, page = make_report(tmp_path / "r.html", logdir)
    assert page.by_id("groups") is not None
    want = kafka_committed_offsets()
    names = {g for g, _, _ in want}
    got = {(r[0], r[1], int(r[2])) for _, r in page.rows if len(r) == 8 and r[0] in names}
    assert got == {(g, f"{t}-{n}", v) for (g, t, n), v in want.items()}

    root = copy_case(tmp_path)
    batches = load_expected("internal-topics-hanging-txn-clean")["before"]["partitions"]["invoices-0"]["logFiles"][0]
    cut = next(b for b in batches["batches"] if b["baseOffset"] >= 40)
    with (root / "invoices-0" / "00000000000000000000.log").open("r+b") as f:
        f.truncate(cut["position"])
    code, _, page = make_report(tmp_path / "cut.html", root)
    flagged = [r for _, r in page.rows if len(r) == 8 and r[6] == "beyond-log-end"]
    assert [(r[0], r[1], int(r[4])) for r in flagged] == [("billing-service-28", "invoices-0", cut["baseOffset"])]
    assert code == 1 and page.by_id("verdict")["data-level"] != "healthy"


def test_big_logs_draw_merged_bars() -> None:
    """Thousands of batches become a few bars (same key, invisible gaps); a change of key is never merged."""
    spans = [(i * 10, i * 10 + 8, 0 if i < 1000 else 1) for i in range(2000)]
    merged = report_plots.coalesce(spans, 20000)
    assert merged == [(0, 9998, 0), (10000, 19998, 1)]
    few = spans[:10]
    assert report_plots.coalesce(few, 20000) == few


def test_report_says_where_it_wrote_and_the_verdict(tmp_path: Path) -> None:
    """One line on stderr: the page's path and size, then the verdict's headline; nothing on stdout."""
    out = tmp_path / "r.html"
    code, stdout, stderr = run_cli("report", "--now", CLOCK, "-o", str(out), str(REPO / "fixtures" / "torn-write"))
    page = ReportParser()
    page.feed(out.read_text())
    headline = page.by_id("verdict")
    assert stdout == ""
    (line,) = stderr.strip().splitlines()
    assert line.startswith(f"report: wrote {out} ({out.stat().st_size:,} bytes). ")
    assert code == (0 if headline["data-level"] == "healthy" else 1)
    assert {"healthy": "Healthy", "damaged": "Damaged", "loses-data": "Would lose data"}[headline["data-level"]] in line
