"""Salvage plans stretches of plain batches by columns (``analysis.salvage._chosen_stretches``,
``LogPlanner.add_plain``): on every fixture and corpus log dir (and the saved live-campaign cases) the account,
the repaired log dir byte for byte and the export are those of the batch-by-batch path. The stretches are made
as short as one batch and as small as the planner allows (a segment of a few KiB, an index entry every 64 bytes),
so that rolls, index entries, gaps, epochs and producers fall inside and across them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkatool.analysis import salvage as analysis
from kafkatool.cli import app
from kafkatool.engine import salvage as engine

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
runner = CliRunner()


def _log_dirs() -> list[Path]:
    found: set[Path] = set()
    for root in (ROOT / "fixtures", SHARED / "corpus"):
        if root.is_dir():
            found.update(p.parent.parent for p in root.rglob("*.log") if p.is_file())
    return sorted(d for d in found if not d.name.endswith("-delete"))


def _files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _salvage(log_dir: Path, out: Path, extra: list[str]) -> tuple[int, dict, dict[str, bytes], str]:
    res = runner.invoke(app, ["salvage", "-f", "json", "--now", "1800000000000", "--force", "--out", str(out),
                              "--export", str(out.parent / f"{out.name}.jsonl"), *extra, str(log_dir)])
    if res.exit_code not in (0, 1):
        return res.exit_code, {}, {}, res.stdout
    export = (out.parent / f"{out.name}.jsonl").read_text()
    return res.exit_code, json.loads(res.stdout), _files(out), export


@pytest.mark.parametrize(("extra", "entries"), [([], None),
                                               (["--segment-bytes", "4096", "--index-interval-bytes", "64"], None),
                                               (["--index-interval-bytes", "512"], 8)],
                         ids=["defaults", "small-segments", "full-indexes"])
def test_stretches_plan_what_each_batch_plans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              extra: list[str], entries: int | None) -> None:
    dirs = _log_dirs()
    assert len(dirs) >= 20
    monkeypatch.setattr(engine, "PLAIN_MIN_ROWS", 1)
    if entries is not None:  # segments rolled by a full index (segment.index.bytes of a few entries)
        init = engine.LogPlanner.__init__

        def small(self: engine.LogPlanner, **kw: object) -> None:
            init(self, **kw)  # type: ignore[arg-type]
            self.max_entries = entries

        monkeypatch.setattr(engine.LogPlanner, "__init__", small)
    planned: list[int] = []
    real = engine.LogPlanner._stretch

    def counted(self: engine.LogPlanner, k: int, cols: dict, i: int, j: int) -> None:
        planned.append(j - i)
        real(self, k, cols, i, j)

    monkeypatch.setattr(engine.LogPlanner, "_stretch", counted)
    for n, d in enumerate(dirs):
        monkeypatch.setattr(analysis, "PLAIN_STRETCHES", False)
        want = _salvage(d, tmp_path / f"a{n}", extra)
        monkeypatch.setattr(analysis, "PLAIN_STRETCHES", True)
        got = _salvage(d, tmp_path / f"b{n}", extra)
        assert got == want, d
    # the columns did plan, in stretches of many batches (with full indexes mostly batch by batch: near the roll)
    assert sum(planned) > (100 if entries else 1000) and max(planned) > (3 if entries else 10)
