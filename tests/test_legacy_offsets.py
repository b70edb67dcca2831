"""Legacy (magic 0/1) compressed wrappers in a shallow dump (issue 20, item 2): Kafka's ``baseOffset()`` is the
first inner offset (the stored offset is the last), so ``base_offset``, ``count`` and ``--offsets`` must agree with
what Kafka reported for every legacy corpus case, without ``--deep``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kafkatool.cli import app
from tests.conftest import corpus_cases, load_expected, shared_dir

runner = CliRunner()
LEGACY = [c for c in corpus_cases() if c.startswith("legacy-")]


def _kafka_batches(case: str) -> list[tuple[str, dict]]:
    out = []
    for part in load_expected(case)["before"]["partitions"].values():
        for lf in part["logFiles"]:
            out += [(lf["file"], b) for b in lf["batches"]]
    return out


def _shallow(path: str, *extra: str) -> list[dict]:
    res = runner.invoke(app, ["dump-segment", "-f", "json", *extra, path])
    assert res.exit_code in (0, 1), res.stderr
    return [i for f in json.loads(res.stdout)["files"] for i in f["items"] if i["type"] == "batch"]


@pytest.mark.parametrize("case", LEGACY)
def test_shallow_base_offsets_are_kafkas(case: str) -> None:
    root = shared_dir("corpus") / case / "input"
    kafka = _kafka_batches(case)
    assert any(b["magic"] < 2 and b["compression"] != "none" for _, b in kafka), "no legacy wrapper in the case"
    by_file: dict[str, list[dict]] = {}
    for file, b in kafka:
        by_file.setdefault(file, []).append(b)
    for file, batches in by_file.items():
        (path,) = root.glob(f"*/{file}") if "/" not in file else [root / file]
        ours = _shallow(str(path))
        got = [(b["position"], b["base_offset"], b["last_offset"]) for b in ours]
        want = [(b["position"], b["baseOffset"], b["lastOffset"]) for b in batches]
        assert got[:len(want)] == want, file
        for b, k in zip(ours, batches, strict=False):
            if k["magic"] < 2 and k["compression"] != "none":
                assert b["count"] == len(k["records"])


@pytest.mark.parametrize("case", LEGACY)
def test_offsets_filter_finds_a_wrapper_by_its_first_inner_offset(case: str) -> None:
    root = shared_dir("corpus") / case / "input"
    file, wrapper = next((f, b) for f, b in _kafka_batches(case)
                         if b["magic"] < 2 and b["compression"] != "none" and b["lastOffset"] > b["baseOffset"])
    (path,) = root.glob(f"*/{file}")
    first = wrapper["baseOffset"]
    found = _shallow(str(path), "--offsets", f"{first}:{first}")
    assert [b["position"] for b in found] == [wrapper["position"]]
