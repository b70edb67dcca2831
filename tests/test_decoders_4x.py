"""DumpLogSegments' ``--share-group-state-decoder`` and ``--remote-log-metadata-decoder`` text, as each Kafka
version printed it for the segments of ``fixtures/kafka-4x/decoders-*`` (saved by ``python -m
tests.kafka.decoders_4x``), reproduced byte for byte by ``dump-segment -f kafka --kafka-version V --decoder ...``
without Kafka; and the same records in kafkatool's own JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from kafkatool.engine.dls import layout_for
from kafkatool.engine.dls_decoders import parser_for, parser_names
from kafkatool.schema.topic_records import decoder_for_topic, decoder_named
from tests.internal_4x import CASES as SEGMENTS
from tests.internal_4x import remote_records, segment, share_records, write_segment

REPO = Path(__file__).resolve().parents[1]
CASES = sorted((REPO / "fixtures" / "kafka-4x").glob("decoders-*"))
runner = CliRunner()


def saved() -> list[tuple[Path, str]]:
    out = []
    for case in CASES:
        for version in json.loads((case / "expected.json").read_text())["versions"]:
            out.append((case, version))
    return out


def test_the_cases_are_saved() -> None:
    assert {c.name for c in CASES} == {f"decoders-{name}" for name in SEGMENTS}


@pytest.mark.parametrize(("case", "version"), saved(), ids=[f"{c.name}:{v}" for c, v in saved()])
def test_text_equals_what_kafka_printed(case: Path, version: str) -> None:
    doc = json.loads((case / "expected.json").read_text())
    entry = doc["versions"][version]
    seg = case / "input" / doc["partition"] / "00000000000000000000.log"
    res = runner.invoke(app, ["dump-segment", "-f", "kafka", "--kafka-version", version, "--decoder", doc["decoder"],
                              str(seg)])
    want = (case / entry["dump"]).read_text()
    if not entry["reproduced"]:
        assert res.exit_code != 0 or res.stdout.split("\n", 1)[-1] != want
        pytest.xfail(entry["why"])
    assert res.exit_code == 0, res.output
    assert res.stdout.split("\n", 1)[1] == want  # after the "Dumping <path>" line


def test_the_saved_segments_are_what_the_builder_writes(tmp_path: Path) -> None:
    """The fixtures stay the builder's output (so a change of either is seen)."""
    for case in CASES:
        doc = json.loads((case / "expected.json").read_text())
        fresh = write_segment(tmp_path / doc["segment"], doc["segment"]).read_bytes()
        assert (case / "input" / doc["partition"] / "00000000000000000000.log").read_bytes() == fresh


def test_registry_and_versions() -> None:
    """Chosen by topic and by name; -f kafka offers each only where that version's DumpLogSegments has it."""
    assert decoder_for_topic("__share_group_state") is decoder_named("share-group-state")
    assert decoder_for_topic("__remote_log_metadata") is decoder_named("remote-log-metadata")
    v39, v44 = layout_for("3.9"), layout_for("4.4")
    assert v39 is not None and v44 is not None
    assert "share-group-state" not in parser_names(v39) and parser_for("share-group-state", v39) is None
    assert {"share-group-state", "remote-log-metadata"} <= set(parser_names(v44))


def records(path: Path, *args: str) -> list[dict]:
    res = runner.invoke(app, ["dump-segment", "--print-data", "-f", "jsonl", *args, str(path)])
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    return [r for row in rows if row.get("type") == "batch" for r in row.get("records", [])]


def test_json_decodes_every_record_by_topic(tmp_path: Path) -> None:
    """dump-segment picks the decoders by the partition's topic; refused records keep their bytes with a defect."""
    share = records(write_segment(tmp_path, "share-group-state"))
    assert len(share) == len(share_records())
    first = share[0]["decoded"]
    assert first["key"]["type"] == "ShareSnapshotKey" and first["value"]["data"]["stateEpoch"] == 1
    assert share[2]["decoded"]["value"]["data"]["deliveryCompleteCount"] == 12
    assert share[5]["decoded"]["value"] is None and not share[5]["decoded"]["defects"]  # a tombstone
    assert share[-1]["decoded"]["defects"]  # unknown record type
    remote = records(write_segment(tmp_path, "remote-log-metadata"))
    assert len(remote) == len(remote_records())
    assert [r["decoded"]["value"]["type"] for r in remote[:9] if isinstance(r["decoded"]["value"], dict)] == [
        "RemoteLogSegmentMetadataRecord", "RemoteLogSegmentMetadataUpdateRecord", "RemoteLogSegmentMetadataRecord",
        "RemoteLogSegmentMetadataUpdateRecord", "RemoteLogSegmentMetadataUpdateRecord",
        "RemoteLogSegmentMetadataUpdateRecord", "RemoteLogSegmentMetadataSnapshotRecord",
        "RemotePartitionDeleteMetadataRecord", "RemotePartitionDeleteMetadataRecord"]
    assert remote[2]["decoded"]["value"]["data"]["txnIndexEmpty"] is True
    assert all(r["decoded"]["defects"] for r in remote[12:])  # unknown api key, garbage, cut


def test_forced_decoder_on_another_file(tmp_path: Path) -> None:
    """--decoder remote-log-metadata on any file (here the share state's) decodes with it, keeping bytes."""
    path = tmp_path / "x-0" / "00000000000000000000.log"
    path.parent.mkdir()
    path.write_bytes(segment(share_records()))
    got = records(path, "--decoder", "remote-log-metadata")
    assert got and all(r["decoded"]["defects"] for r in got)


def test_a_version_without_the_decoder_is_a_usage_error(tmp_path: Path) -> None:
    """DumpLogSegments 3.9 has no --share-group-state-decoder: -f kafka --kafka-version 3.9 refuses it (exit 2)."""
    seg = write_segment(tmp_path, "share-group-state")
    res = runner.invoke(app, ["dump-segment", "-f", "kafka", "--kafka-version", "3.9", "--decoder",
                              "share-group-state", str(seg)])
    assert res.exit_code == 2 and "share-group-state" in res.output
