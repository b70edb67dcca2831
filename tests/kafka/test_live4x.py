"""Share groups, streams groups and a KRaft voter change, live on every release line that has them (issue 22
item 5, issue 31 item 3): each case of :mod:`tests.kafka.live4x` written afresh by a real broker of that line (the
features it needs switched on at format time) into a temporary corpus, then every check of
``tests/test_kafka4x_corpus.py`` on it (decoding with no unknown record or defect, that release's DumpLogSegments
text byte for byte, groups and quorum equal to its admin client's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kafka import live4x, versions
from tests.kafka.conftest import require_version
from tests.test_kafka4x_corpus import check_case


@pytest.mark.parametrize("name", list(live4x.CASES))
def test_a_fresh_case_passes_the_corpus_checks(kafka_version: str, name: str, tmp_path: Path) -> None:
    if not live4x.runs_on(name, kafka_version):
        pytest.skip(f"Kafka {kafka_version} has no {name} (since {'.'.join(map(str, live4x.SINCE[name]))})")
    require_version(kafka_version)
    if name == "streams":
        try:
            live4x.streams_jars(kafka_version)
        except versions.JarsMissing as exc:
            pytest.fail(str(exc))
    case = live4x.CASES[name](tmp_path / "work", root=tmp_path / "corpus", version=kafka_version)
    assert sum(f.stat().st_size for f in case.rglob("*") if f.is_file()) < 200_000
    check_case(case)
