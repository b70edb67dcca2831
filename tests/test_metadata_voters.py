"""``metadata``'s KRaft quorum (KIP-853): the voter set and kraft.version Kafka's ``KRaftControlRecordStateMachine``
starts with, and the voter changes in the log, on ``fixtures/kafka-4x/voters-change`` (a real 4.4.0 quorum: node 1
formatted ``--standalone``, controller 2 added, then removed), against what Kafka's admin client
(``DescribeMetadataQuorum``, saved by the live oracle in the case's ``expected.json``) saw; and on damaged copies."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.engine import metadata_image as mi
from kafkatool.reading.metadata_log import read_meta_batches

REPO = Path(__file__).resolve().parents[1]
CASE = REPO / "fixtures" / "kafka-4x" / "voters-change"
META = "__cluster_metadata-0"
runner = CliRunner()


def quorum_of(log_dir: Path) -> dict[str, Any]:
    res = runner.invoke(app, ["metadata", "-q", "-f", "json", str(log_dir)])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)["quorum"]


def admin() -> dict[str, Any]:
    return json.loads((CASE / "expected.json").read_text())["quorum"]


def admin_voters(state: dict[str, Any]) -> list[tuple[int, str]]:
    return sorted((v["replica_id"], v["directory_id"]) for v in state["voters"])


def ours(quorum: dict[str, Any]) -> list[tuple[int, str]]:
    return sorted((v["voter_id"], v["directory_id"]) for v in quorum["voters"])


def test_both_nodes_start_with_the_admin_clients_final_voter_set() -> None:
    """Node 1 (leader) and controller 2 (an observer after its removal) both load voter 1 alone, with its
    directory id and endpoint as ``kafka-metadata-quorum describe --status`` printed them, at kraft.version 1."""
    status = admin()["final_text"]["status"]
    current = json.loads(status.split("CurrentVoters:", 1)[1].split("\n", 1)[0])
    for node in ("data", "data-node2"):
        quorum = quorum_of(CASE / node)
        assert ours(quorum) == admin_voters(admin()["final"]), node
        assert [(v["voter_id"], v["directory_id"], v["endpoints"]) for v in quorum["voters"]] == [
            (c["id"], c["directoryId"], c["endpoints"]) for c in current]
        assert quorum["kraft_version"] == 1
        assert quorum["voters_source"].startswith("VotersRecord at offset") and "checkpoint" in quorum["voters_source"]


def test_the_log_holds_each_voter_set_the_admin_client_saw_in_order() -> None:
    """The kept log's VotersRecords: standalone, after add-controller, after remove-controller."""
    want = [[v for v, _ in admin_voters(admin()[k])] for k in ("before", "after_add", "after_remove")]
    for node in ("data", "data-node2"):
        log = quorum_of(CASE / node)["log"]
        assert [c["voters"] for c in log if c["record"] == "VotersRecord"] == want, node
        assert [c["kraft_version"] for c in log if c["record"] == "KRaftVersionRecord"] == [1]


def test_offsets_are_those_kafkas_dump_shows() -> None:
    """Offsets of the KRaftVersion/KRaftVoters records in node 1's log, as DumpLogSegments printed them."""
    text = (CASE / "kafka-dls" / "data" / META / "00000000000000000000.log.cluster-metadata-decoder.txt").read_text()
    want = [int(line.split("offset: ", 1)[1].split(" ", 1)[0]) for line in text.splitlines()
            if line.startswith("| offset:") and (" KRaftVoters " in line or " KRaftVersion " in line)]
    assert [c["offset"] for c in quorum_of(CASE / "data")["log"]] == want


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    shutil.copytree(CASE / "data", root)
    return root


def test_without_snapshots_the_log_alone_gives_the_same_voters(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    for snap in (root / META).glob("*.checkpoint"):
        snap.unlink()
    quorum = quorum_of(root)
    assert ours(quorum) == admin_voters(admin()["final"])
    assert quorum["voters_source"] == "VotersRecord at offset 49 (log)"
    assert [c["offset"] for c in quorum["loaded"]] == [1, 2, 35, 49]


def test_a_log_cut_before_the_removal_starts_with_both_voters(tmp_path: Path) -> None:
    """Cut the log before the batch holding the removal's VotersRecord (offset 49) and drop the snapshot taken
    after it: the older snapshot (32) is loaded, then the log from 32, whose last VotersRecord (35) is the set
    after add-controller (read uncommitted, as the state machine does)."""
    root = _copy(tmp_path)
    seg = root / META / "00000000000000000000.log"
    batches, _ = read_meta_batches(seg, seg.name)
    cut = next(b for b in batches if b.base_offset <= 49 <= b.last_offset)
    seg.write_bytes(seg.read_bytes()[:cut.position])
    (root / META / "00000000000000000059-0000000001.checkpoint").unlink()
    quorum = quorum_of(root)
    assert ours(quorum) == admin_voters(admin()["after_add"])
    assert quorum["voters_source"] == "VotersRecord at offset 35 (log)"
    assert quorum["loaded"][0]["source"] == "00000000000000000032-0000000001.checkpoint"


def test_table_names_the_voters_and_the_changes() -> None:
    res = runner.invoke(app, ["metadata", "-q", str(CASE / "data")])
    assert res.exit_code == 0
    flat = " ".join(res.stdout.split())
    assert "kraft.version 1" in flat and "voters 1 (lPNPCipAT3Oyq2Rgxs0KSw)" in flat
    assert "voter sets in the log: offset 2: 1; offset 35: 1,2; offset 49: 1" in flat


def test_static_voters_without_a_voters_record() -> None:
    """kraft.version 0: no VotersRecord; a quorum-state v0's currentVoters (controller.quorum.voters) stands in."""
    quorum = mi.quorum_json([], [3, 1], [])
    assert quorum["kraft_version"] == 0 and [v["voter_id"] for v in quorum["voters"]] == [1, 3]
    assert "controller.quorum.voters" in quorum["voters_source"]
    assert mi.quorum_json([], None, [])["voters"] == []


STATIC_CASES = ("share-groups", "streams-groups")


def test_a_static_quorum_of_real_brokers() -> None:
    """The 4.4.0 share/streams cases ran one node with the static ``controller.quorum.voters`` of itself (the
    harness's single-node configuration): Kafka's dump of their metadata log shows no KRaftVersion or KRaftVoters
    record, their quorum-state is data version 0 naming node 1, so the raft client runs kraft.version 0 with the
    static voter, the node of meta.properties."""
    for name in STATIC_CASES:
        case = CASE.parent / name
        dumps = (case / "kafka-dls" / "data" / META).glob("*.txt")
        assert not any(" KRaftVoters " in d.read_text() or " KRaftVersion " in d.read_text() for d in dumps)
        node = next(int(line.split("=", 1)[1]) for line in (case / "data" / "meta.properties").read_text().splitlines()
                    if line.startswith("node.id="))
        quorum = quorum_of(case / "data")
        assert quorum["kraft_version"] == 0 and [v["voter_id"] for v in quorum["voters"]] == [node]
        assert "quorum-state data version 0" in quorum["voters_source"] and quorum["log"] == []
