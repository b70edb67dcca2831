"""``check`` says nothing of the producer snapshots Kafka's own metadata log writes (issue 31, item 4.2).

``fixtures/kafka-4x/metadata-clean-restarts`` is a 4.4.0 node's ``__cluster_metadata-0`` after two clean
shutdowns: the broker logged writing each ``.snapshot`` (0 producer ids) at its shutdown and, at the next start,
deleting and rewriting them (``expected.json``'s ``brokerSaid``). The first shutdown's snapshot is no longer at the
log end; it is still Kafka's own file, not a stray.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from kafkatool.cli import app
from tests.kafka.experiments import CASES, REPO, load_case, materialize

runner = CliRunner()
CASE = REPO / "fixtures" / "kafka-4x" / "metadata-clean-restarts"
PART = "__cluster_metadata-0"


def _findings(root: Path) -> list[dict]:
    result = runner.invoke(app, ["check", "--show-info", "-f", "json", str(root)])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["findings"]


def test_kafkas_own_metadata_snapshots_are_not_stray(tmp_path: Path) -> None:
    root = materialize(CASE, tmp_path / "input")
    written = load_case(CASE)["snapshotsAfterEachStop"]["second"]
    on_disk = sorted(int(p.stem) for p in (root / PART).glob("*.snapshot"))
    assert on_disk == written and len(written) > 1
    assert not [f for f in _findings(root) if f["code"].startswith("snapshot")]


def test_a_snapshot_with_producers_in_the_metadata_log_is_still_reported(tmp_path: Path) -> None:
    """A producer snapshot that is not Kafka's empty one (here a data partition's, with producers) is no part of
    the metadata log's own lifecycle: it stays a stray."""
    root = materialize(CASE, tmp_path / "input")
    foreign = sorted((CASES / "crash-3.9.2-4101-swap" / "input" / "txn-1").glob("*.snapshot"))[-1]
    assert foreign.stat().st_size > 10  # more than the empty snapshot's header: it lists producers
    shutil.copyfile(foreign, root / PART / "00000000000000000100.snapshot")
    stray = [f for f in _findings(root) if f["code"] == "snapshot-stray"]
    assert [f["file"] for f in stray] == [f"{PART}/00000000000000000100.snapshot"]
