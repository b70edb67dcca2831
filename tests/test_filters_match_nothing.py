"""A filter that matches nothing says so and exits 2, naming what there is, instead of printing an empty result
(issue 20): simulate-restart --partition, metadata --history, replay-producers --until / --at, the replica-set
mode's --partition and --isr, report --isr (groups --group and dump-segment --offsets have their own tests)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from kafkatool.cli import app
from tests.conftest import shared_dir

runner = CliRunner()
REPLICAS = Path(__file__).resolve().parents[1] / "fixtures" / "replica-set"


def refused(*args: str) -> str:
    """Run ``kafkatool ARGS``, expect exit 2 and nothing on stdout; its one-line message."""
    result = runner.invoke(app, list(args))
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    return result.stderr


def test_simulate_restart_partition_names_the_partitions_there() -> None:
    err = refused("simulate-restart", "--partition", "orders-7", str(shared_dir("corpus") / "idem-clean" / "input"))
    assert "orders-7" in err and "partitions there: payments-0" in err


def test_metadata_history_of_an_unknown_partition_names_the_image_s() -> None:
    root = shared_dir("corpus") / "kraft-controller-metadata-clean" / "input"
    err = refused("metadata", "--history", "nope-3", str(root))
    assert "nope-3" in err and "orders-0" in err
    assert runner.invoke(app, ["metadata", "--history", "orders-0", str(root)]).exit_code in (0, 1)


def test_replay_producers_until_and_at_outside_the_log(tmp_path: Path) -> None:
    part = shared_dir("corpus") / "idem-clean" / "input" / "payments-0"
    assert "starts at offset 0" in refused("replay-producers", "--until", "0", str(part))
    out = tmp_path / "x.snapshot"
    assert "past the end of the log (offset 412)" in refused("replay-producers", "--write-snapshot", str(out),
                                                                 "--at", "5000", str(part))
    assert not out.exists()
    assert runner.invoke(app, ["replay-producers", "--until", "300", str(part)]).exit_code == 0
    assert runner.invoke(app, ["replay-producers", "--write-snapshot", str(out), "--at", "412",
                               str(part)]).exit_code == 0


def test_replica_mode_partition_and_isr_outside_the_replicas() -> None:
    replicas = [f"--replica={b}={REPLICAS / f'broker-{b}'}" for b in (1, 2, 3)]
    found = runner.invoke(app, ["simulate-replication", "-f", "json", *replicas, "--partition", "orders-0",
                                "--leader", "1"])
    assert found.exit_code in (0, 1), found.stderr
    err = refused("simulate-replication", *replicas, "--partition", "nope-0", "--leader", "1")
    assert "nope-0" in err and "partitions there: " in err
    err = refused("simulate-replication", *replicas, "--partition", "orders-0", "--leader", "1", "--isr", "1,9")
    assert "--isr 9" in err and "[1, 2, 3]" in err


def test_report_isr_of_no_broker(tmp_path: Path) -> None:
    err = refused("report", "--out", str(tmp_path / "r.html"), "--isr", "1,9",
                  *(str(REPLICAS / f"broker-{b}") for b in (1, 2, 3)))
    assert "--isr 9" in err and "brokers: 1, 2, 3" in err
    assert not (tmp_path / "r.html").exists()
