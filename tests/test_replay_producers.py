"""replay-producers against Kafka's own producer state: every snapshot file, every afterLoad producer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.engine.replay import replay
from kafkatool.reading.logdir import read_partition
from tests.conftest import SHARED, corpus_cases, load_expected, shared_dir

runner = CliRunner()


def partitions(clean_only: bool = False) -> list[tuple[str, str]]:
    out = []
    for case in corpus_cases():
        if clean_only and not case.endswith("-clean"):
            continue
        exp = json.loads((SHARED / "corpus" / case / "expected.json").read_text())
        out += [(case, p) for p in exp["before"].get("partitions", {})]
    return out


def part(case: str, name: str):
    return read_partition(shared_dir("corpus") / case / "input" / name, name)


@pytest.mark.parametrize(("case", "name"), partitions())
def test_replay_matches_every_snapshot_file(case: str, name: str) -> None:
    """The state replayed from the log start equals each .snapshot Kafka wrote, as Kafka decoded it."""
    p = part(case, name)
    result = replay(p)
    assert not [a for a in result.anomalies if a.code.startswith("snapshot-") and a.code != "snapshot-beyond-log-end"]
    decoded = {s["offset"]: s for s in load_expected(case)["before"]["partitions"][name]["producerSnapshots"]}
    assert result.snapshots_compared == len([o for o in decoded if result.start_offset < o <= result.end_offset])
    beyond = [a for a in result.anomalies if a.code == "snapshot-beyond-log-end"]
    assert len(beyond) == len([o for o in decoded if o > result.end_offset])


def loaded_partitions() -> list[tuple[str, str]]:
    """Clean cases' partitions that Kafka loaded as regular logs (the KRaft metadata log is not)."""
    out = []
    for case, name in partitions(clean_only=True):
        exp = json.loads((SHARED / "corpus" / case / "expected.json").read_text())
        if "producers" in exp.get("afterLoad", {}).get("partitions", {}).get(name, {}):
            out.append((case, name))
    return out


@pytest.mark.parametrize(("case", "name"), loaded_partitions())
def test_restart_state_equals_kafkas_after_load(case: str, name: str) -> None:
    """From the latest snapshot, as a clean restart does: every producer field, cached batches included."""
    after = load_expected(case)["afterLoad"]["partitions"][name]
    _code, out = invoke("--from-snapshot", "latest", "-f", "json", str(shared_dir("corpus") / case / "input" / name))
    doc = json.loads(out)
    got = {str(p["producer_id"]): {
        "producerEpoch": p["producer_epoch"],
        "coordinatorEpoch": -1 if p["coordinator_epoch"] is None else p["coordinator_epoch"],
        "lastTimestamp": p["last_timestamp"], "firstSequence": p["first_sequence"], "lastSequence": p["last_sequence"],
        "firstDataOffset": p["first_offset"], "lastDataOffset": p["last_offset"],
        "lastOffsetDelta": p["last_offset_delta"], "currentTxnFirstOffset": p["current_txn_first_offset"],
        "cachedBatches": [{"firstSeq": b["first_sequence"], "lastSeq": b["last_sequence"],
                           "firstOffset": b["first_offset"], "lastOffset": b["last_offset"],
                           "offsetDelta": b["offset_delta"], "timestamp": b["timestamp"]} for b in p["cached_batches"]],
    } for p in doc["producers"]}
    want = {pid: {k: v.get(k) for k in next(iter(got.values()))} for pid, v in after["producers"].items()} \
        if got else after["producers"]
    assert got == want
    assert doc["first_unstable_offset"] == after["firstUnstableOffset"]
    assert doc["last_stable_offset"] == after["lastStableOffset"]


@pytest.mark.parametrize(("case", "name"), partitions(clean_only=True))
def test_write_snapshot_is_byte_identical(case: str, name: str, tmp_path: Path) -> None:
    directory = shared_dir("corpus") / case / "input" / name
    for snap in sorted(directory.glob("*.snapshot")):
        offset = int(snap.name.split(".")[0])
        out = tmp_path / snap.name
        result = runner.invoke(app, ["replay-producers", "--write-snapshot", str(out), "--at", str(offset),
                                     "-f", "json", str(directory)])
        assert result.exit_code in (0, 1), result.stderr
        assert out.read_bytes() == snap.read_bytes(), snap.name


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["replay-producers", *args])
    return result.exit_code, result.stdout


def test_hanging_transaction_in_txn_clean(corpus_root: Path) -> None:
    exp = load_expected("txn-clean")["afterLoad"]
    after = exp["partitions"]["ledger-0"]
    code, out = invoke("--now", str(exp["loadTimeMs"]), "-f", "json", str(corpus_root / "txn-clean" / "input" /
                                                                          "ledger-0"))
    assert code == 1
    doc = json.loads(out)
    [hanging] = doc["hanging"]
    open_producer = after["producers"][str(hanging["producer_id"])]
    assert hanging["first_offset"] == open_producer["currentTxnFirstOffset"] == after["firstUnstableOffset"]
    assert hanging["producer_epoch"] == open_producer["producerEpoch"]
    assert doc["last_stable_offset"] == after["lastStableOffset"]
    assert doc["high_watermark"] == after["highWatermark"]
    # Committed and aborted transactions agree with the markers and with every .txnindex entry.
    aborted = [t for t in doc["transactions"]["items"] if t["state"] == "aborted"]
    indexed = [a for f in load_expected("txn-clean")["before"]["partitions"]["ledger-0"]["txnIndexes"]
               for a in f["abortedTxns"]]
    assert sorted((t["producer_id"], t["first_offset"], t["last_offset"], t["last_stable_offset"]) for t in aborted) \
        == sorted((a["producerId"], a["firstOffset"], a["lastOffset"], a["lastStableOffset"]) for a in indexed)
    assert not [a for a in doc["anomalies"] if a["code"].startswith("txnindex")]


def test_usage_errors(corpus_root: Path) -> None:
    directory = str(corpus_root / "txn-clean" / "input" / "ledger-0")
    assert invoke("--from-snapshot", "17", directory)[0] == 2
    assert invoke("--at", "5", directory)[0] == 2
    assert invoke("--from-snapshot", "nope", directory)[0] == 2
    result = runner.invoke(app, ["replay-producers", "--write-snapshot", f"{directory}/x.snapshot", directory])
    assert result.exit_code == 2 and "inside the input" in result.stderr


def _damaged_copy(tmp_path: Path) -> tuple[Path, int, int]:
    """A Kafka-made partition with one byte flipped inside its third batch's records: (dir, its offset, its
    byte position)."""
    import shutil

    src = shared_dir("corpus") / "idem-clean" / "input" / "payments-0"
    dst = tmp_path / "payments-0"
    shutil.copytree(src, dst)
    seg = sorted(dst.glob("*.log"))[0]
    data = bytearray(seg.read_bytes())
    pos = 0
    for _ in range(2):
        pos += 12 + int.from_bytes(data[pos + 8:pos + 12], "big")
    data[pos + 70] ^= 0x01
    seg.write_bytes(bytes(data))
    return dst, int.from_bytes(data[pos:pos + 8], "big"), pos


def test_the_replay_stops_where_kafkas_recovery_truncates(tmp_path: Path) -> None:
    """Issue 20, item 5: a batch that fails its CRC ends the replay there (exit 1, said with the file, byte and
    offset); --read-past-damage reads on to the same end as the undamaged log."""
    damaged, offset, pos = _damaged_copy(tmp_path)
    clean = json.loads(runner.invoke(app, ["replay-producers", "-f", "json", str(
        shared_dir("corpus") / "idem-clean" / "input" / "payments-0")]).stdout)
    stopped = runner.invoke(app, ["replay-producers", "-f", "json", str(damaged)])
    assert stopped.exit_code == 1
    doc = json.loads(stopped.stdout)
    assert doc["end_offset"] == offset
    (note,) = [a for a in doc["anomalies"] if a["code"] == "replay-stopped"]
    assert note["offset"] == offset and note["position"] == pos and "fails its CRC" in note["message"]
    read_on = json.loads(runner.invoke(app, ["replay-producers", "-f", "json", "--read-past-damage",
                                             str(damaged)]).stdout)
    assert read_on["end_offset"] == clean["end_offset"]
    assert read_on["producers"] == clean["producers"]
    assert [a["code"] for a in read_on["anomalies"] if a["code"] == "read-past-damage"] == ["read-past-damage"]


def test_an_interrupted_swap_is_replayed_as_kafka_loads_it(tmp_path: Path) -> None:
    """Issue 20, item 1: the cleaner's replaced segments already renamed ``.deleted`` while the ``.swap`` files
    remain. Kafka's LogLoader renames the swap in, so its producer state has the producers of the swapped range;
    replay-producers must replay that log too, and end with the producers Kafka's load ends with."""
    import shutil

    case = shared_dir("corpus") / "swap-interrupted-unclean"
    part = tmp_path / "accounts-0"
    shutil.copytree(case / "input" / "accounts-0", part)
    for f in sorted(part.glob("00000000000000000000.*")):
        if not f.name.endswith(".swap"):
            f.rename(f.with_name(f.name + ".deleted"))
    doc = json.loads(runner.invoke(app, ["replay-producers", "-f", "json", str(part)]).stdout)
    (after,) = load_expected("swap-interrupted-unclean")["afterLoad"]["partitions"].values()
    kafka = {int(pid): (p["producerEpoch"], p["lastSequence"], p["lastDataOffset"])
             for pid, p in after["producers"].items()}
    ours = {p["producer_id"]: (p["producer_epoch"], p["last_sequence"], p["last_offset"]) for p in doc["producers"]}
    assert ours == kafka
    assert doc["start"]["offset"] == 0
    assert "swap-completed" in [a["code"] for a in doc["anomalies"]]
    assert "snapshot-extra-producer" not in [a["code"] for a in doc["anomalies"]]
