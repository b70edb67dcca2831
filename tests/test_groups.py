"""``kafkatool groups`` against Kafka's own decoding of ``__consumer_offsets``: every committed offset exactly, the
lag against Kafka's loaded partition, and the offsets outside the log flagged after the log loses its tail or its
head (the corpus copy cut at a batch boundary Kafka reported, or its log start moved)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from kafkatool.cli import app
from tests.conftest import load_expected, shared_dir

runner = CliRunner()
CASE = "internal-topics-hanging-txn-clean"


def kafka_committed_offsets() -> dict[tuple[str, str, int], int]:
    """The group coordinator's committed offsets, replayed from Kafka's own decoding of every record and batch by
    OffsetMetadataManager's rules: commits without a producer id apply at once, those with one at their producer's
    COMMIT marker (unless a later commit is there); tombstones delete the offset and the pending ones."""
    committed: dict[tuple[str, str, int], tuple[int, int]] = {}
    pending: dict[int, dict[tuple[str, str, int], tuple[int, int]]] = {}
    for lf in load_expected(CASE)["before"]["partitions"]["__consumer_offsets-32"]["logFiles"]:
        for batch in lf["batches"]:
            if batch["isControl"]:
                done = pending.pop(batch["producerId"], {})
                if batch["controlType"] == "COMMIT":
                    for k, (record_offset, v) in done.items():
                        if k not in committed or committed[k][0] < record_offset:
                            committed[k] = (record_offset, v)
                continue
            for r in batch["records"]:
                d = r["decoded"]
                if d["keyType"] != "OffsetCommitKey":
                    continue
                k = (d["key"]["group"], d["key"]["topic"], d["key"]["partition"])
                if d["tombstone"]:
                    committed.pop(k, None)
                    for items in pending.values():
                        items.pop(k, None)
                elif batch["producerId"] != -1:
                    pending.setdefault(batch["producerId"], {})[k] = (r["offset"], d["value"]["offset"])
                else:
                    committed[k] = (r["offset"], d["value"]["offset"])
    return {k: v for k, (_, v) in committed.items()}


def run_json(*args: str) -> tuple[int, dict]:
    res = runner.invoke(app, ["groups", "-f", "json", *args])
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, json.loads(res.stdout)


def test_committed_offsets_equal_kafkas() -> None:
    """Every group's committed offset per partition, exactly; the deleted group's offsets are gone."""
    code, doc = run_json(str(shared_dir("corpus") / CASE / "input"))
    assert code == 0 and doc["problems"] == [] and doc["defects"] == []
    got = {(o["group"], o["topic"], o["partition"]): o["committed_offset"] for o in doc["offsets"]}
    want = kafka_committed_offsets()
    assert got == want
    assert not [k for k in got if k[0] == "legacy-audit-37"]
    groups = {g["group"]: g for g in doc["groups"]}
    assert groups["legacy-audit-37"]["deleted"] is True
    assert groups["analytics-etl-76"]["protocol"] == "consumer"
    assert groups["billing-service-28"]["protocol"] == "classic"


def test_lag_against_kafkas_loaded_partition() -> None:
    """invoices-0 is the only committed partition present: its range is what Kafka's load reported."""
    _, doc = run_json(str(shared_dir("corpus") / CASE / "input"))
    after = load_expected(CASE)["afterLoad"]["partitions"]["invoices-0"]
    (row,) = [o for o in doc["offsets"] if (o["topic"], o["partition"]) == ("invoices", 0)]
    assert row["log_end_offset"] == after["logEndOffset"]
    assert row["high_watermark"] == after["highWatermark"]
    assert row["last_stable_offset"] == after["lastStableOffset"]
    assert row["log_start_offset"] == after["logStartOffset"]
    assert row["lag"] == after["highWatermark"] - kafka_committed_offsets()[("billing-service-28", "invoices", 0)]
    others = [o for o in doc["offsets"] if (o["topic"], o["partition"]) != ("invoices", 0)]
    assert others and all(o["lag"] is None for o in others)


def copy_case(tmp_path: Path) -> Path:
    root = tmp_path / "logdir"
    shutil.copytree(shared_dir("corpus") / CASE / "input", root)
    return root


def test_offset_beyond_a_truncated_log_end_is_flagged(tmp_path: Path) -> None:
    """Cut invoices-0 at the first batch Kafka placed at or after offset 40: the group's commit at 58 is now beyond
    the log end (records the consumers had that the log no longer has): exit 1."""
    root = copy_case(tmp_path)
    batches = load_expected(CASE)["before"]["partitions"]["invoices-0"]["logFiles"][0]["batches"]
    cut = next(b for b in batches if b["baseOffset"] >= 40)
    log = root / "invoices-0" / "00000000000000000000.log"
    with log.open("r+b") as f:
        f.truncate(cut["position"])
    code, doc = run_json(str(root))
    assert code == 1
    (problem,) = doc["problems"]
    committed = kafka_committed_offsets()[("billing-service-28", "invoices", 0)]
    assert (problem["group"], problem["topic"], problem["partition"]) == ("billing-service-28", "invoices", 0)
    assert problem["problem"] == "beyond-log-end"
    assert problem["log_end_offset"] == cut["baseOffset"] < committed == problem["committed_offset"]
    table = runner.invoke(app, ["groups", str(root)])
    assert table.exit_code == 1 and "beyond the log end" in table.stdout


def test_offset_below_the_log_start_is_flagged(tmp_path: Path) -> None:
    """With the log start moved past the committed offset (as deleteRecords records it in the checkpoint), the
    commit is below the log start."""
    root = copy_case(tmp_path)
    (root / "log-start-offset-checkpoint").write_text("0\n1\ninvoices 0 100\n")
    code, doc = run_json("--group", "billing-service-28", str(root))
    assert code == 1
    (problem,) = doc["problems"]
    assert problem["problem"] == "below-log-start" and problem["log_start_offset"] == 100
    assert {o["group"] for o in doc["offsets"]} == {"billing-service-28"}


def test_jsonl_and_bad_input() -> None:
    """jsonl has one line per group and offset and a summary; a missing directory is exit 3, one line."""
    root = shared_dir("corpus") / CASE / "input"
    res = runner.invoke(app, ["groups", "-f", "jsonl", str(root)])
    lines = [json.loads(line) for line in res.stdout.splitlines()]
    assert lines[-1]["type"] == "summary" and lines[-1]["offsets"] == len(kafka_committed_offsets())
    assert sum(1 for line in lines if line["type"] == "offset") == len(kafka_committed_offsets())
    missing = runner.invoke(app, ["groups", str(root / "nope")])
    assert missing.exit_code == 3 and "Traceback" not in missing.output


def test_a_later_plain_commit_wins_over_an_earlier_pending_transactional_one() -> None:
    """replayEndTransactionMarker keeps the most recent commit: a plain commit written after a transactional one
    of the same partition survives that transaction's COMMIT marker; a tombstone drops pending commits too."""
    from kafkatool.engine.groups import replay_offsets
    from kafkatool.model import ControlRecord, PartitionData, Record, RecordBatch, SegmentData
    from kafkatool.schema.group_coordinator import DECODER

    key = b"\x00\x01\x00\x01g\x00\x01t" + (0).to_bytes(4, "big")

    def value(offset: int) -> bytes:
        return b"\x00\x03" + offset.to_bytes(8, "big") + (-1).to_bytes(4, "big", signed=True) + b"\x00\x00" \
            + (1).to_bytes(8, "big")

    def batch(base: int, pid: int, records: list[Record], attributes: int = 0) -> RecordBatch:
        return RecordBatch(0, base, 0, 0, 2, 0, attributes, len(records) - 1, 0, 0, pid, 0 if pid >= 0 else -1,
                           0, len(records), True, records)

    marker = Record(3, 0, None, None, control=ControlRecord(0, 1, "COMMIT", 0, 4))
    seg = SegmentData(0, "x.log", 0, entries=[
        batch(0, 5000, [Record(0, 0, key, value(10))], 0x10),
        batch(1, -1, [Record(1, 0, key, value(20))]),
        batch(3, 5000, [marker], 0x30),
    ])
    part = PartitionData("__consumer_offsets-0", None, "", segments=[seg])
    state = replay_offsets([part], DECODER.decode)
    assert state.offsets[("g", "t", 0)].offset == 20
    seg.entries[1] = batch(1, -1, [Record(1, 0, key, None)])
    state = replay_offsets([part], DECODER.decode)
    assert ("g", "t", 0) not in state.offsets


def test_a_group_filter_that_matches_nothing_says_so_and_exits_2() -> None:
    """``--group`` naming no group of the offsets topic: one line listing the groups there, exit 2, no table."""
    root = shared_dir("corpus") / CASE / "input"
    res = runner.invoke(app, ["groups", "--group", "no-such-group", str(root)])
    assert res.exit_code == 2 and res.stdout == ""
    assert "no such group" in res.stderr and "billing-service-28" in res.stderr
    none = runner.invoke(app, ["groups", "--group", "x", str(Path(__file__).parents[1] / "fixtures" / "demo")])
    assert none.exit_code == 2 and "no __consumer_offsets partition" in none.stderr
