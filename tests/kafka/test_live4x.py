"""Kafka 4.4 share groups, streams groups and a KRaft voter change, live (issue 22 item 5): each case of
:mod:`tests.kafka.live4x` written afresh by a real 4.4 broker into a temporary corpus, then every check of
``tests/test_kafka4x_corpus.py`` on it (decoding with no unknown record or defect, DumpLogSegments' text byte for
byte, groups and quorum equal to the admin client's)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.kafka import live4x, versions
from tests.kafka.conftest import require_version
from tests.test_kafka4x_corpus import check_case


@pytest.mark.parametrize("name", list(live4x.CASES))
def test_a_fresh_case_passes_the_corpus_checks(name: str, tmp_path: Path) -> None:
    require_version(live4x.VERSION)
    if name == "streams":
        try:
            live4x.streams_jars()
        except versions.JarsMissing as exc:  # tests/kafka/pom.xml does not resolve kafka-streams (yet)
            pytest.skip(str(exc))
    if os.environ.get("KAFKATOOL_KAFKA_VERSIONS") and live4x.VERSION not in versions.selected_versions():
        pytest.skip(f"Kafka {live4x.VERSION} not selected")
    case = live4x.CASES[name](tmp_path / "work", root=tmp_path / "corpus")
    assert sum(f.stat().st_size for f in case.rglob("*") if f.is_file()) < 200_000
    check_case(case)
