"""``check``, ``simulate-restart`` and the fleet scan take each topic's ``remote.storage.enable`` from the metadata
image of the log dir's KRaft metadata log (``analysis.metadata.topic_remote_storage``): on a copy of
``fixtures/kafka-4x/tiered-local`` without ``__remote_log_metadata``, the config alone keeps the checkpointed log
start 0 below the local segment 22, as Kafka's own restart did (``kafka.json``: earliest 0, earliest-local 22)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from kafkatool.cli import app

LOCAL = Path(__file__).resolve().parents[1] / "fixtures" / "kafka-4x" / "tiered-local"
runner = CliRunner()


def test_check_and_simulate_restart_read_the_topic_config(tmp_path: Path) -> None:
    root = tmp_path / "data"
    shutil.copytree(LOCAL / "data", root)
    shutil.rmtree(root / "__remote_log_metadata-0")
    after = json.loads((LOCAL / "kafka.json").read_text())["after_restart"]["list_offsets"]
    res = runner.invoke(app, ["simulate-restart", "-q", "-f", "json", str(root), "--partition", "tiered-0"])
    p = json.loads(res.stdout)["partitions"][0]
    assert (p["log_start_offset"], p["local_log_start_offset"], p["log_end_offset"]) == (
        after["earliest"], after["earliest_local"], after["latest"])
    res = runner.invoke(app, ["check", "-f", "json", str(root)])
    codes = [r["code"] for r in json.loads(res.stdout)["findings"]]
    assert "remote-log-range" in codes


def test_the_fleet_scan_reads_the_topic_config_as_check_does(tmp_path: Path) -> None:
    """The scan's findings are ``check``'s for each log dir: with the metadata image's remote.storage.enable too
    (without ``__remote_log_metadata`` only the config says the range below the local log is remote)."""
    from tests.scan_support import read_tables

    root = tmp_path / "data"
    shutil.copytree(LOCAL / "data", root)
    shutil.rmtree(root / "__remote_log_metadata-0")
    res = runner.invoke(app, ["check", "-f", "json", str(root)])
    checked = sorted((r["code"], r["file"]) for r in json.loads(res.stdout)["findings"])
    out = tmp_path / "scan"
    res = runner.invoke(app, ["scan", "--no-progress", "-f", "json", "--fail-on", "never", str(root),
                              "--out", str(out)])
    assert res.exit_code == 0, res.stderr
    scanned = sorted((r["code"], r["file"]) for r in read_tables(out)["findings"] if r["source"] == "check")
    assert any(code == "remote-log-range" for code, _ in checked)
    assert scanned == checked
