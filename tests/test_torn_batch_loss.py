"""A batch cut short by a torn write, its header whole: every summary of the loss counts what the header says the
batch held (issue 31, item 4.1).

The input is ``fixtures/oracle/crash-4.4.0-3100-cut-in-batch``: a SIGKILLed 4.4.0 broker's log dir whose active
segment was cut inside its last batch, and what the same broker did when restarted on it. The expected loss
(``loss`` in its ``expected.json``) is the batches whose headers were on disk at or past the restarted broker's
log end (``tests.kafka.crash.lost_view``), not a number kafkatool computed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from kafkatool.cli import app
from tests.kafka.experiments import CASES, load_case, materialize

runner = CliRunner()
CASE = CASES / "crash-4.4.0-3100-cut-in-batch"


def _case(tmp_path: Path) -> tuple[Path, str, dict[str, Any]]:
    """The materialised input, the cut partition and what the restarted broker lost of it."""
    expected = load_case(CASE)
    [(name, view)] = expected["partitions"].items()
    assert view["loss"]["records"] > 0, "the saved case must have lost records"
    return materialize(CASE, tmp_path / "input"), name, {"now": expected["now"], **view}


def test_json_and_jsonl_count_the_torn_batch(tmp_path: Path) -> None:
    root, name, kafka = _case(tmp_path)
    result = runner.invoke(app, ["simulate-restart", "-f", "json", "--now", str(kafka["now"]), str(root)])
    assert result.exit_code == 1, result.output
    [p] = [p for p in json.loads(result.stdout)["partitions"] if p["directory"] == name]
    assert p["log_end_offset"] == kafka["log_end_offset"]
    assert {"offsets": p["loss"]["offsets"], "records": p["loss"]["records"]} == kafka["loss"]
    assert p["loss"]["partial_batches"] == 1 and p["loss"]["batches"] >= 1
    lines = runner.invoke(app, ["simulate-restart", "-f", "jsonl", "--now", str(kafka["now"]), str(root)]).stdout
    [row] = [r for r in map(json.loads, lines.splitlines()) if r.get("directory") == name]
    assert row["loss"] == p["loss"]


def test_table_and_check_say_what_the_header_held(tmp_path: Path) -> None:
    root, _name, kafka = _case(tmp_path)
    lost = kafka["loss"]
    span = f"offsets {lost['offsets']['from']} to {lost['offsets']['to'] - 1}"
    table = runner.invoke(app, ["simulate-restart", "--now", str(kafka["now"]), str(root)]).stdout
    assert f"{lost['records']} record(s) in 1 batch(es) ({span})" in table
    assert "cut short by a torn write" in table
    assert f"whose header says it held {span} ({lost['records']} record(s))" in table
    check = runner.invoke(app, ["check", "-f", "json", str(root)])
    assert check.exit_code == 1
    torn = [f for f in json.loads(check.stdout)["findings"] if f["code"] == "torn-tail"]
    assert torn and f"its header says it held {span} ({lost['records']} record(s))" in torn[0]["reason"]


def test_report_marks_the_lost_records(tmp_path: Path) -> None:
    root, _name, kafka = _case(tmp_path)
    lost = kafka["loss"]
    out = tmp_path / "report.html"
    result = runner.invoke(app, ["report", "-q", "--now", str(kafka["now"]), "-o", str(out), str(root)])
    assert result.exit_code == 1, result.output
    html = out.read_text()
    assert (f"offsets {lost['offsets']['from']} to {lost['offsets']['to'] - 1} ({lost['records']} records)"
            in html)
