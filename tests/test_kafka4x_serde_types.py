"""The coordinator record types each release's group coordinator serde reads (``schema.messages``'
:func:`coordinator_record_types`), checked against the release jars: 3.9's ``CoordinatorRecordSerde`` and 4.0's
``GroupCoordinatorRecordSerde`` switch over the record type (read here with ``javap``), 4.1+ reads every
``coordinator-key`` spec's ``apiKey`` (its generated ``CoordinatorRecordType``). DumpLogSegments'
``--offsets-decoder`` prints any other type as ``Unknown record type``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import zipfile

import pytest

from kafkatool.schema.group_coordinator import OFFSETS_TOPIC
from kafkatool.schema.messages import VALUE, coordinator_message, coordinator_record_types
from tests.kafka.versions import VERSIONS
from tests.kafka_definitions import definitions, jars, missing_jars

SERDES = ("org/apache/kafka/coordinator/group/CoordinatorRecordSerde.class",
          "org/apache/kafka/coordinator/group/GroupCoordinatorRecordSerde.class")
"""The group coordinator's serde class: 3.9's name, then 4.0+'s."""


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set)")
    pytest.skip(reason)


def switched_types(version: str) -> set[int] | None:
    """The record types the serde's ``readRecordKey``/``readRecordValue`` switch over (``tableswitch { // 0 to N``
    in both), or ``None`` when it has no switch (4.1+: ``CoordinatorRecordType.fromId``)."""
    javap = shutil.which("javap")
    jar = jars(version).get("kafka-group-coordinator")
    if javap is None or jar is None:
        _unavailable(f"no javap or no kafka-group-coordinator {version} jar")
    assert javap is not None and jar is not None
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(jar) as zf:
        member = next((m for m in SERDES if m in zf.namelist()), None)
        assert member is not None, f"no group coordinator serde in {jar}"
        path = zf.extract(member, tmp)
        text = subprocess.run([javap, "-c", "-p", path], capture_output=True, text=True, check=True).stdout
    ranges = {(int(a), int(b)) for a, b in re.findall(r"tableswitch\s*\{\s*//\s*(-?\d+) to (-?\d+)", text)}
    if not ranges:
        return None
    assert len(ranges) == 1, ranges  # key and value read the same types
    low, high = ranges.pop()
    return set(range(low, high + 1))


@pytest.mark.parametrize("version", VERSIONS)
def test_record_types_each_release_reads(version: str) -> None:
    if missing_jars(version):
        _unavailable(f"Kafka {version}'s jars not found: run `python -m tests.kafka.versions fetch`")
    want = switched_types(version)
    if want is None:
        want = {d.api_key for d in definitions(version).values()
                if d.kind == "coordinator-key" and d.artifact == "kafka-group-coordinator" and d.api_key is not None}
    assert set(coordinator_record_types(OFFSETS_TOPIC, version)) == want


def test_release_layouts_and_unknown_types() -> None:
    """4.0 reads ShareGroupMetadataValue in its own layout (no MetadataHash) and no streams type; 3.9 no share
    type; 4.1+ no ShareGroupPartitionMetadata (type 9); ``None`` reads every declared type with the final layouts."""
    preview = coordinator_message(OFFSETS_TOPIC, VALUE, 11, "4.0.2")
    assert preview is not None and [f.name for f in preview.fields] == ["Epoch"]
    final = coordinator_message(OFFSETS_TOPIC, VALUE, 11)
    assert final is not None and "MetadataHash" in [f.name for f in final.fields]
    assert coordinator_message(OFFSETS_TOPIC, VALUE, 23, "4.0.2") is None
    assert coordinator_message(OFFSETS_TOPIC, VALUE, 10, "3.9.2") is None
    assert coordinator_message(OFFSETS_TOPIC, VALUE, 23, "4.4.0") is not None
    assert coordinator_record_types(OFFSETS_TOPIC) - coordinator_record_types(OFFSETS_TOPIC, "4.4.0") == {9}
    assert coordinator_message(OFFSETS_TOPIC, VALUE, 9, "4.0.2") is not None
    assert coordinator_message(OFFSETS_TOPIC, VALUE, 9, "4.1") is None
