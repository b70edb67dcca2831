"""The report's charts read (issue 20): no label drawn over another, damage kinds told apart in greyscale, and a
sentence instead of a chart with nothing on it. Drawn from Kafka-made data: corpus cases (damaged, compacted,
transactional, several partitions) and the replica sets of ../shared/replica-sets."""

from __future__ import annotations

import colorsys
from pathlib import Path
from typing import Any

import pytest

from kafkatool.commands.report import build_report
from kafkatool.render import report_plots
from tests.conftest import REPO, shared_dir
from tests.report_support import make_report

pytest.importorskip("matplotlib")
CASES = ["swap-interrupted-unclean", "idem-torn-write", "txn-edge-clean", "txn-clean", "plain-none-clean",
         "multi-partition-clean", "epochs-clean", "legacy-v1-gzip-torn-write-unclean"]


def _inputs(case: str) -> list[str]:
    if case == "fixture-replica-set":
        return [str(REPO / "fixtures" / "replica-set" / f"broker-{b}") for b in (1, 2, 3)]
    if case.startswith("replica-sets/"):
        root = shared_dir("replica-sets") / case.split("/", 1)[1] / "brokers"
        return [str(p) for p in sorted(root.iterdir())]
    return [str(shared_dir("corpus") / case / "input")]


def overlapping_labels(fig: Any) -> list[tuple[str, str]]:
    """Pairs of visible texts of ``fig`` whose drawn boxes overlap (a pixel of slack)."""
    import matplotlib.text

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in fig.findobj(matplotlib.text.Text)
             if t.get_visible() and t.get_text().strip()]
    return [(a, b) for i, (a, p) in enumerate(boxes) for b, q in boxes[i + 1:]
            if p.x0 < q.x1 - 1 and q.x0 < p.x1 - 1 and p.y0 < q.y1 - 1 and q.y0 < p.y1 - 1]


@pytest.mark.parametrize("case", [*CASES, "fixture-replica-set", "replica-sets/kip101-divergence-after-double-crash",
                                  "replica-sets/clean-failover-old-leader-suffix"])
def test_no_label_is_drawn_over_another(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    found: list[tuple[str, tuple[str, str]]] = []
    drawn: list[str] = []

    def inspect(fig: Any) -> str:
        found.extend((drawn[-1], pair) for pair in overlapping_labels(fig))
        report_plots._plt().close(fig)
        return "<svg></svg>"

    monkeypatch.setattr(report_plots, "_svg", inspect)
    doc = build_report(_inputs(case), now=None, timeout_ms=900_000, leader=None, isr=None, leader_epoch=None)
    for p in doc["partitions"]:
        for draw in (report_plots.segment_map, report_plots.epoch_timeline, report_plots.producer_plot):
            drawn.append(f"{p['directory']} {draw.__name__}")
            draw(p)
    for rs in doc["replica_sets"]:
        drawn.append(f"{rs['partition']} replica_plot")
        report_plots.replica_plot(rs)
    assert drawn and not found, found


def _lightness(colour: str) -> float:
    r, g, b = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return colorsys.rgb_to_hls(r, g, b)[1]


def test_damage_kinds_differ_in_greyscale() -> None:
    """Cut, invalid and acknowledged-but-missing share no hatch, and the one with a different hatch family also
    differs in lightness: a greyscale print tells each apart."""
    styles = [report_plots.CUT, report_plots.INVALID, report_plots.ACK_MISSING]
    assert len({hatch for _, hatch in styles}) == 3
    assert len({hatch[0] for _, hatch in styles}) == 3  # three hatch shapes (/, x, .), not densities of one
    assert abs(_lightness(report_plots.ACK_MISSING[0]) - _lightness(report_plots.CUT[0])) > 0.2


def test_an_empty_chart_is_a_sentence(tmp_path: Path) -> None:
    """plain-none-clean has no idempotent or transactional producer: its producer chart would be empty axes."""
    code, html, page = make_report(tmp_path / "r.html", Path(_inputs("plain-none-clean")[0]))
    assert code == 0
    (fig,) = page.figures("producers")
    assert "empty" in fig["class"].split()
    section = html[html.index(f'id="{fig["id"]}"'):]
    section = section[:section.index("</figure>")]
    assert "<svg" not in section and "No idempotent or transactional producer" in section
    assert "kafkatool replay-producers" in section  # the command that reproduces it stays
    # The others are drawn.
    for kind in ("segment-map", "epochs"):
        (other,) = page.figures(kind)
        assert "empty" not in other["class"].split()
