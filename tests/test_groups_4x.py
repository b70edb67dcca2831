"""``kafkatool groups`` on the 4.x group types: a KIP-848 consumer group and a KIP-932 share group written byte by
byte in ``__consumer_offsets`` (``tests/internal_4x.py``), the share partitions' state in ``__share_group_state``,
and the data partition (with its ``partition.metadata`` topic id) beside them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.model import Record
from kafkatool.schema.partition_metadata import build_partition_metadata
from kafkatool.schema.record_batch import build_records_batch
from tests.internal_4x import BASE_TS, TOPIC_ID, group_records, segment, uuid_text, write_segment

runner = CliRunner()


def log_dir(tmp_path: Path) -> Path:
    """A log dir with __consumer_offsets-0, __share_group_state-0 and orders-0 (20 records, topic id TOPIC_ID)."""
    root = tmp_path / "logs"
    offsets = root / "__consumer_offsets-0"
    offsets.mkdir(parents=True)
    (offsets / "00000000000000000000.log").write_bytes(segment(group_records()))
    write_segment(root, "share-group-state")
    orders = root / "orders-0"
    orders.mkdir()
    recs = [Record(offset=i, timestamp=BASE_TS + i, key=None, value=b"v%d" % i, offset_delta=i, timestamp_delta=i)
            for i in range(40)]
    (orders / "00000000000000000000.log").write_bytes(build_records_batch(recs, base_offset=0, base_timestamp=BASE_TS))
    (orders / "partition.metadata").write_bytes(build_partition_metadata(uuid_text(TOPIC_ID)))
    return root


def run(*args: str) -> tuple[int, str]:
    res = runner.invoke(app, ["groups", *args])
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, res.stdout


def test_consumer_and_share_groups_with_members_and_assignments(tmp_path: Path) -> None:
    _, out = run("-f", "json", str(log_dir(tmp_path)))
    doc = json.loads(out)
    groups = {g["group"]: g for g in doc["groups"]}
    assert groups["cg-billing"]["protocol"] == "consumer" and groups["cg-billing"]["generation"] == 4
    assert groups["cg-billing"]["members"] == ["m-1", "m-2"]
    assert groups["sg-orders"]["protocol"] == "share" and groups["sg-orders"]["generation"] == 2
    assert groups["sg-orders"]["members"] == ["s-1"]  # s-2's member metadata was deleted
    members = {(m["group"], m["member_id"]): m for m in doc["members"]}
    assert set(members) == {("cg-billing", "m-1"), ("cg-billing", "m-2"), ("sg-orders", "s-1")}
    m2 = members[("cg-billing", "m-2")]
    assert m2["client_id"] == "billing-2" and m2["member_epoch"] == 4 and m2["server_assignor"] == "uniform"
    assert m2["assigned"] == [{"topic": "orders", "topic_id": uuid_text(TOPIC_ID), "partitions": [1, 2]}]
    assert m2["pending_revocation"] == [{"topic": "orders", "topic_id": uuid_text(TOPIC_ID), "partitions": [0]}]
    assert members[("sg-orders", "s-1")]["assigned"][0]["partitions"] == [0, 1, 2]


def test_share_state_replayed_from_snapshots_and_updates(tmp_path: Path) -> None:
    """sg-orders' partition 0: the last snapshot (start 20, two batches); sg-audit's partition 2: a snapshot then
    an update tombstone (deleted); sg-gone: only a tombstone."""
    _, out = run("-f", "json", str(log_dir(tmp_path)))
    doc = json.loads(out)
    state = {(s["group"], s["partition"]): s for s in doc["share_state"]}
    assert set(state) == {("sg-orders", 0)}
    s = state[("sg-orders", 0)]
    assert (s["topic"], s["start_offset"], s["state_epoch"], s["leader_epoch"], s["snapshot_epoch"]) == \
        ("orders", 20, 1, 3, 1)
    assert s["delivery_complete_count"] == 10 and s["updates_since_snapshot"] == 0
    assert [(b["first_offset"], b["last_offset"], b["delivery_state"]) for b in s["batches"]] == \
        [(20, 29, "Acknowledged"), (30, 31, "Available")]
    assert s["in_flight_offsets"] == {"Acknowledged": 10, "Available": 2}
    share_offsets = [o for o in doc["offsets"] if o["group"] == "sg-orders"]
    assert [(o["topic"], o["partition"], o["start_offset"], o["lag"]) for o in share_offsets] == [("orders", 0, 20, 10)]
    committed = {(o["topic"], o["partition"]): o["committed_offset"]
                 for o in doc["offsets"] if o["group"] == "cg-billing"}
    assert committed == {("orders", 0): 7, ("orders", 1): 3}
    assert doc["share_state_records"] == 8 and doc["share_coordinator_partitions"]
    # the unknown share record type is a defect, not a crash
    assert any("unknown record type 5" in d["reason"] for d in doc["defects"])


def test_updates_overlay_the_snapshot(tmp_path: Path) -> None:
    """Cut after the first update batch: the first snapshot (start 0, no batch) and the update moving the start to
    10 with three batches."""
    root = log_dir(tmp_path)
    from tests.internal_4x import share_records

    path = root / "__share_group_state-0" / "00000000000000000000.log"
    path.write_bytes(segment(share_records()[:3], per_batch=1))
    _, out = run("-f", "json", str(root))
    (s,) = json.loads(out)["share_state"]
    assert s["start_offset"] == 10 and s["updates_since_snapshot"] == 2 and s["delivery_complete_count"] == 12
    assert [(b["first_offset"], b["last_offset"], b["delivery_state"]) for b in s["batches"]] == [
        (10, 14, "Acknowledged"), (15, 15, "Archived"), (16, 19, "Available"), (20, 29, "Acknowledged")]


def test_table_and_jsonl_show_members_and_share_state(tmp_path: Path) -> None:
    root = str(log_dir(tmp_path))
    _, table = run(root)
    assert "share group state topic" in table and "orders:1,2" in table and "Acknowledged:10" in table
    _, lines = run("-f", "jsonl", root)
    kinds = [json.loads(line)["type"] for line in lines.splitlines()]
    assert kinds.count("member") == 3 and kinds.count("share_state") == 1
    _, one = run("-f", "json", "--group", "sg-orders", root)
    doc = json.loads(one)
    assert {g["group"] for g in doc["groups"]} == {"sg-orders"} and len(doc["members"]) == 1


def test_streams_group_with_topology_members_and_tasks(tmp_path: Path) -> None:
    from tests.internal_4x import streams_records

    root = log_dir(tmp_path)
    (root / "__consumer_offsets-0" / "00000000000000000000.log").write_bytes(segment(streams_records()))
    _, out = run("-f", "json", "--group", "st-counts", str(root))
    doc = json.loads(out)
    (g,) = doc["groups"]
    assert (g["protocol"], g["generation"], g["topology_epoch"], g["members"]) == ("streams", 3, 1, ["t-1"])
    (m,) = doc["members"]
    assert (m["client_id"], m["process_id"], m["member_epoch"], m["topology_epoch"]) == ("counts-1", "proc-a", 3, 1)
    assert m["tasks"]["activeTasks"] == [{"subtopology": "0", "partitions": [0, 1]},
                                         {"subtopology": "1", "partitions": [0]}]
    assert m["tasks"]["standbyTasks"] == [{"subtopology": "0", "partitions": [2]}]
    assert [(o["topic"], o["partition"], o["committed_offset"]) for o in doc["offsets"]] == [("orders", 0, 5)]
    _, table = run("--group", "st-counts", str(root))
    assert "active 0_0,0_1,1_0 standby 0_2" in table


LIVE = Path(__file__).resolve().parents[1] / "fixtures" / "kafka-4x"


@pytest.mark.parametrize("case", ["share-groups", "streams-groups"])
def test_live_4x_groups_equal_the_admin_clients_describe(case: str) -> None:
    """The groups a live 4.4 broker wrote (tests/kafka/live4x.py): type, group epoch, target assignment epoch,
    topology epoch, members and offsets (a share group's start offset and lag) as Kafka's admin client described
    them."""
    if not (LIVE / case / "expected.json").is_file():
        pytest.skip(f"fixtures/kafka-4x/{case} not saved")
    _, out = run("-f", "json", str(LIVE / case / "data"))
    doc = json.loads(out)
    ours = {g["group"]: g for g in doc["groups"]}
    for admin in json.loads((LIVE / case / "expected.json").read_text())["admin"]["groups"]:
        g = ours[admin["group_id"]]
        assert (g["protocol"], g["generation"], g["assignment_epoch"]) == (
            admin["type"].lower(), admin["group_epoch"], admin["target_assignment_epoch"])
        if "topology_epoch" in admin:
            assert g["topology_epoch"] == admin["topology_epoch"]
        assert [m["member_id"] for m in doc["members"] if m["group"] == g["group"]] == \
            [m["member_id"] if isinstance(m, dict) else m for m in admin["members"]]
        for tp, want in admin["offsets"].items():
            (row,) = [o for o in doc["offsets"] if o["group"] == g["group"] and f"{o['topic']}-{o['partition']}" == tp]
            if isinstance(want, dict):
                assert (row["start_offset"], row["lag"]) == (want["start_offset"], want["lag"])
            else:
                assert row["committed_offset"] == want
