"""The live oracle's decoding cases, without a broker: for every file a real broker wrote that once dumped
differently from its own DumpLogSegments, ``dump-segment -f kafka --kafka-version V`` prints exactly the text that
version printed (saved by ``tests/kafka/decoding.py`` under ``fixtures/oracle/decoding-*``)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from tests.kafka.decoding import MODE_FLAGS, split_dumps
from tests.kafka.experiments import load_case, saved_cases

runner = CliRunner()
DUMPS = [(case, d) for case in saved_cases("decoding") for d in load_case(case)["dumps"]]


def test_the_saved_decoding_cases_cover_each_release_line() -> None:
    assert {load_case(c)["kafkaVersion"] for c in saved_cases("decoding")} >= {"3.9.2", "4.0.2", "4.4.0"}


@pytest.mark.parametrize(("case", "dump"), DUMPS, ids=[f"{c.name}:{d['file']}:{d['mode']}" for c, d in DUMPS])
def test_kafkatool_prints_what_that_version_printed(case, dump) -> None:
    version = load_case(case)["kafkaVersion"]
    path = case / "input" / dump["file"]
    res = runner.invoke(app, ["dump-segment", "-f", "kafka", "--kafka-version", version,
                              *MODE_FLAGS[dump["mode"]][1], str(path)])
    assert res.exit_code == 0, res.stderr
    (ours,) = split_dumps(res.stdout).values()
    assert ours == (case / "dump" / dump["dump"]).read_text()


def test_the_other_release_lines_print_differently() -> None:
    """The cases are real differences between versions: each layout case fails under the other layout."""
    differing = 0
    for case, dump in DUMPS:
        version = load_case(case)["kafkaVersion"]
        other = "4.0" if version.startswith("4.4") else "4.4"
        res = runner.invoke(app, ["dump-segment", "-f", "kafka", "--kafka-version", other,
                                  *MODE_FLAGS[dump["mode"]][1], str(case / "input" / dump["file"])])
        (text,) = split_dumps(res.stdout).values()
        differing += text != (case / "dump" / dump["dump"]).read_text()
    assert differing >= 5


def test_an_unknown_version_is_a_usage_error() -> None:
    res = runner.invoke(app, ["dump-segment", "-f", "kafka", "--kafka-version", "3.7", "x.log"])
    assert res.exit_code == 2 and "3.9, 4.0, 4.1, 4.2, 4.3 and 4.4" in res.stderr
