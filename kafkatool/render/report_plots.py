"""The incident report's figures as inline SVG (matplotlib, the optional ``plot`` extra).

Readable in greyscale: damage is hatched as well as coloured, every marker line has its own dash pattern and
a text label, and fills differ in lightness. Output is deterministic (fixed hash salt, no date) and refers to
nothing outside itself: glyphs are drawn as paths, so no font is fetched when the page opens.
"""

from __future__ import annotations

import io
import logging
import re
import warnings
from typing import Any

from kafkatool.render.safe import printable

Doc = dict[str, Any]
OK_FILLS = ("#d9d9d9", "#a6bddb")  # alternate segments: light grey / light blue, different lightness
DAMAGE = "#b2182b"  # dark red, always with a hatch
#: Each kind of damage on a segment map: a fill and a hatch, told apart in greyscale by the hatch's direction and
#: the fill's lightness (acknowledged-but-missing is a light fill with dots, not a second cross-hatch).
CUT = (DAMAGE, "////")
INVALID = (DAMAGE, "xxxx")
ACK_MISSING = ("#f4a582", "..")
MARKS = {  # name: (line style, width, label prefix)
    "log_start_offset": (":", 1.4, "log start"),
    "recovery_point": ("-.", 1.4, "recovery point"),
    "high_watermark": ("--", 1.6, "high watermark"),
    "last_stable_offset": ((0, (1, 1, 4, 1)), 1.4, "last stable offset"),
    "truncate_at": ("-", 2.8, "restart truncates at"),
}
EPOCH_HATCHES = ("", "..", "//", "xx", "\\\\", "oo")
MAX_BARS = 400  # beyond this many bars per row, neighbours are merged: the SVG stays small on big logs


def coalesce(spans: list[tuple[int, int, Any]], extent: int) -> list[tuple[int, int, Any]]:
    """``(first, last, key)`` ranges in offset order, neighbours with the same key merged when there are more
    than ``MAX_BARS`` of them and the gap between them is under 1/``MAX_BARS`` of ``extent`` (invisible anyway)."""
    if len(spans) <= MAX_BARS:
        return spans
    gap = max(extent // MAX_BARS, 1)
    out: list[tuple[int, int, Any]] = []
    for first, last, key in spans:
        if out and out[-1][2] == key and first - out[-1][1] <= gap:
            out[-1] = (out[-1][0], max(out[-1][1], last), key)
        else:
            out.append((first, last, key))
    return out


def available() -> bool:
    """Whether matplotlib is installed."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "kafkatool-report"
    matplotlib.rcParams["svg.fonttype"] = "path"
    matplotlib.rcParams["hatch.linewidth"] = 0.8
    import matplotlib.pyplot as plt

    return plt


def _where(p: Doc) -> str:
    """A partition's directory and log dir label, as a figure's title names them (shown escaped)."""
    return printable(f"{p['directory']} on {p['log_dir_label']}")


def quiet_save(fig: Any, buf: io.BytesIO, **kwargs: Any) -> None:
    """``fig.savefig(buf)`` with every text shown :func:`~kafkatool.render.safe.printable` (a second guard: labels
    built from data are made printable where they are built) and matplotlib's warnings and log kept off stderr:
    a warning such as "Glyph 27 (ESC) missing" would echo data raw, with source paths, to the operator."""
    from matplotlib.text import Text

    for text in fig.findobj(Text):
        shown = text.get_text()
        if isinstance(shown, str) and printable(shown) != shown:
            text.set_text(printable(shown))
    log = logging.getLogger("matplotlib")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fig.savefig(buf, **kwargs)
    finally:
        log.setLevel(level)


def _svg(fig: Any) -> str:
    plt = _plt()
    buf = io.BytesIO()
    quiet_save(fig, buf, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    text = buf.getvalue().decode()
    text = text[text.index("<svg"):]  # drop the XML declaration and DOCTYPE: the SVG goes inline into HTML
    return re.sub(r"\A<svg ", '<svg role="img" ', text, count=1)


def _marks(ax: Any, marks: dict[str, int | None], top: float, lo: float, hi: float, labels: bool = True) -> None:
    """Vertical marker lines, each labelled; labels of nearby marks are stacked, not overprinted, and
    labels near the right edge are written to the left of their line."""
    span = max(hi - lo, 1)
    placed: list[tuple[float, int]] = []
    for name, (style, width, label) in sorted(MARKS.items(), key=lambda kv: (marks.get(kv[0]) or 0)):
        x = marks.get(name)
        if x is None or not lo <= x <= hi:
            continue
        ax.axvline(x, color="black", linestyle=style, linewidth=width, zorder=5)
        if not labels:
            continue
        level = 0
        for px, plevel in placed:
            if abs(x - px) < span * 0.16:
                level = max(level, plevel + 1)
        placed.append((x, level))
        right = x > lo + span * 0.7
        ax.annotate(f"{label} {x}", (x, top), xytext=(-3 if right else 3, -3 - 10 * level),
                    textcoords="offset points", fontsize=7.5, ha="right" if right else "left", va="top", zorder=6,
                    fontweight="bold" if name == "truncate_at" else None,
                    bbox={"boxstyle": "square,pad=0.12", "fc": "white", "ec": "none", "alpha": 0.9})


def _interest(p: Doc) -> list[int]:
    """Offsets where something happened: the cut, missing acknowledged offsets, torn tails, the recovery point."""
    m = p["marks"]
    out: list[int] = []
    for key in ("truncate_at", "recovery_point"):
        if m[key] is not None:
            out.append(m[key])
    for key in ("lost_offsets", "acknowledged_lost"):
        if m[key] is not None:
            out += m[key]
    out += [s["next_offset"] for s in p["segments_on_disk"] if s["size_bytes"] > s["valid_bytes"]]
    if m["truncate_at"] is None and m["acknowledged_lost"] is None and len(out) <= 1:
        return []
    return out


def _segment_rows(ax: Any, p: Doc, lo: float, hi: float, detail: bool) -> None:
    m = p["marks"]
    disk = p["segments_on_disk"]
    after = p["restart"]["segments"]
    span = max(hi - lo, 1)
    tick = span * 0.012
    rows = {"on disk": 2.0, "after restart": 1.0, "acknowledged": 0.0}

    def seg_bar(y: float, segs: list[Doc]) -> None:
        for i, s in enumerate(segs):
            width = max(s["next_offset"] - s["base_offset"], tick / 2)
            ax.barh(y, width, left=s["base_offset"], height=0.6, color=OK_FILLS[i % 2], edgecolor="black",
                    linewidth=0.8)
            a, b = max(s["base_offset"], lo), min(s["base_offset"] + width, hi)
            if b - a > span * 0.09:
                ax.text((a + b) / 2, y, f"segment {s['base_offset']}\n{s['size_bytes']} B", ha="center",
                        va="center", fontsize=7)

    seg_bar(rows["on disk"], disk)
    for s in disk:
        bad = s["size_bytes"] - s["valid_bytes"]
        if bad > 0:
            ax.barh(rows["on disk"], tick, left=s["next_offset"], height=0.6, color=INVALID[0], hatch=INVALID[1],
                    edgecolor="black", linewidth=0.8)
            if detail:
                name = printable(s["file"].rsplit("/", 1)[-1])
                ax.annotate(f"{bad} invalid bytes at byte {s['valid_bytes']}\nof {name}",
                            (s["next_offset"] + tick, rows["on disk"]), xytext=(6, 0), textcoords="offset points",
                            fontsize=7, va="center", fontweight="bold",
                            bbox={"boxstyle": "square,pad=0.12", "fc": "white", "ec": "none", "alpha": 0.9})
    if m["lost_offsets"] is not None:
        a, b = m["lost_offsets"]
        ax.barh(rows["on disk"], b - a, left=a, height=0.6, color=CUT[0], hatch=CUT[1], edgecolor="black",
                linewidth=0.8, alpha=0.9)
        if detail:
            ax.text((a + b) / 2, rows["on disk"] + 0.34, f"cut: {a}–{b - 1}", ha="center", va="bottom", fontsize=7.5,
                    fontweight="bold")
    seg_bar(rows["after restart"], after)
    end_ack = m["high_watermark_checkpoint"]
    leo = m["log_end_offset"]
    start = m["log_start_offset"] if m["log_start_offset"] is not None else lo
    if leo is not None:
        kept = leo if end_ack is None else min(leo, end_ack)
        ax.barh(rows["acknowledged"], max(kept - start, 0), left=start, height=0.6, color=OK_FILLS[0],
                edgecolor="black", linewidth=0.8)
    if m["acknowledged_lost"] is not None:
        a, b = m["acknowledged_lost"]
        ax.barh(rows["acknowledged"], b - a, left=a, height=0.6, color=ACK_MISSING[0], hatch=ACK_MISSING[1],
                edgecolor="black", linewidth=0.8)
        if detail:
            ax.annotate(f"acknowledged, missing: {a}–{b - 1}", (b, rows["acknowledged"]), xytext=(6, 0),
                        textcoords="offset points", fontsize=7.5, va="center", fontweight="bold",
                        bbox={"boxstyle": "square,pad=0.12", "fc": "white", "ec": "none", "alpha": 0.9})
    ax.set_yticks(list(rows.values()))
    ax.set_yticklabels(list(rows.keys()), fontsize=8)
    ax.set_ylim(-0.5, 2.95)
    ax.tick_params(axis="x", labelsize=7.5)


def segment_map(p: Doc) -> str:
    """One partition: segments on disk and after the restart, to scale in offsets, with the damage, what
    the restart cuts, acknowledged offsets that are missing, and the offset marks; when the damage is a
    small part of the log, a second panel zooms on it."""
    plt = _plt()
    from matplotlib.patches import Patch, Rectangle

    m = p["marks"]
    disk = p["segments_on_disk"]
    hi = max([s["next_offset"] for s in disk] + [m["high_watermark_checkpoint"] or 0, m["log_end_offset"] or 0, 1])
    lo = min([s["base_offset"] for s in disk] + [m["log_start_offset"] or 0])
    span = max(hi - lo, 1)
    interest = _interest(p)
    zoom = None
    if interest:
        zlo, zhi = min(interest), max(interest)
        pad = max(3.0, (zhi - zlo) * 0.35)
        if zhi - zlo + 2 * pad < span * 0.5:
            zoom = (zlo - pad, zhi + pad * 2.2)
    marks = {k: m.get(k) for k in MARKS if k != "last_stable_offset"}
    if zoom is None:
        fig, ax = plt.subplots(figsize=(10, 3.3), dpi=100)
        axes = [ax]
        _segment_rows(ax, p, lo, hi + span * 0.2, True)
        ax.set_xlim(lo - span * 0.01, hi + span * 0.2)
        _marks(ax, marks, 2.95, lo, hi + span * 0.2)
    else:
        fig, axes = plt.subplots(2, 1, figsize=(10, 5.6), dpi=100, gridspec_kw={"height_ratios": [1, 1.25]})
        ax, zx = axes
        _segment_rows(ax, p, lo, hi, False)
        ax.set_xlim(lo - span * 0.01, hi + span * 0.03)
        _marks(ax, marks, 2.95, lo, hi, labels=False)
        ax.add_patch(Rectangle((zoom[0], -0.45), zoom[1] - zoom[0], 3.35, fill=False, ec="black", lw=1.4,
                               linestyle=(0, (4, 2)), zorder=7))
        ax.text(zoom[0], 2.93, "zoomed below ", ha="right", va="top", fontsize=7.5, fontweight="bold")
        _segment_rows(zx, p, zoom[0], zoom[1], True)
        zx.set_xlim(*zoom)
        _marks(zx, marks, 2.95, zoom[0], zoom[1])
        zx.set_title(f"zoom: offsets {int(zoom[0])} to {int(zoom[1])}", fontsize=8.5, loc="left")
        from matplotlib.ticker import MaxNLocator

        zx.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes[-1].set_xlabel("offset (segment widths to scale in offsets)", fontsize=8)
    handles = [Patch(fc=OK_FILLS[0], ec="black", label="valid data"),
               Patch(fc=CUT[0], ec="black", hatch=CUT[1], label="cut by the restart"),
               Patch(fc=INVALID[0], ec="black", hatch=INVALID[1], label="invalid bytes on disk"),
               Patch(fc=ACK_MISSING[0], ec="black", hatch=ACK_MISSING[1], label="acknowledged but missing")]
    axes[-1].legend(handles=handles, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=4,
                    frameon=False)
    axes[0].set_title(f"{_where(p)}: segments", fontsize=9, loc="left")
    fig.tight_layout()
    return _svg(fig)


def epoch_timeline(p: Doc) -> str:
    """Which leader epoch led from which offset: one bar per epoch, from its start offset to the next."""
    plt = _plt()
    entries = p["restart"]["leader_epochs"] or p["epochs_on_disk"]
    end = p["marks"]["log_end_offset"] or max((e["start_offset"] for e in entries), default=0) + 1
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.35 * max(len(entries), 1)), dpi=100)
    for i, e in enumerate(entries):
        stop = entries[i + 1]["start_offset"] if i + 1 < len(entries) else end
        ax.barh(e["epoch"], max(stop - e["start_offset"], 0.5), left=e["start_offset"], height=0.6,
                color=OK_FILLS[i % 2], hatch=EPOCH_HATCHES[i % len(EPOCH_HATCHES)], edgecolor="black", linewidth=0.8)
        ax.text(e["start_offset"], e["epoch"] + 0.36, f"epoch {e['epoch']} from offset {e['start_offset']}",
                fontsize=7.5, va="bottom")
    ax.set_ylabel("leader epoch", fontsize=8)
    ax.set_xlabel("offset", fontsize=8)
    ax.tick_params(labelsize=7.5)
    if entries:
        ax.set_ylim(min(e["epoch"] for e in entries) - 0.6, max(e["epoch"] for e in entries) + 1.0)
        ax.set_yticks(sorted({e["epoch"] for e in entries}))
    ax.set_title(f"{_where(p)}: leader epochs after load", fontsize=9, loc="left")
    fig.tight_layout()
    return _svg(fig)


def producer_plot(p: Doc) -> str:
    """Producer sessions and transactions over offsets (committed, aborted, open), with the LSO and HW."""
    plt = _plt()
    from matplotlib.patches import Patch

    replay = p["replay"]
    pids = sorted({s["producer_id"] for s in p["producer_spans"]}
                  | {t["producer_id"] for t in replay["transactions"]["items"]})
    ys = {pid: i for i, pid in enumerate(pids)}
    end = replay["end_offset"]
    fig, ax = plt.subplots(figsize=(10, 1.6 + 0.32 * max(len(pids), 1)), dpi=100)
    for pid in pids:
        mine = [(s["first_offset"], s["last_offset"], None) for s in p["producer_spans"] if s["producer_id"] == pid]
        for first, last, _ in coalesce(mine, max(end, 1)):
            ax.barh(ys[pid], last - first + 1, left=first, height=0.22, color="black", edgecolor="none", zorder=4)
    style = {"committed": ("#8c8c8c", ""), "aborted": ("white", "////"), "open": (DAMAGE, "xx")}
    for t in replay["transactions"]["items"]:
        fill, hatch = style[t["state"]]
        last = t["last_offset"] if t["last_offset"] is not None else end - 1
        ax.barh(ys[t["producer_id"]], last - t["first_offset"] + 1, left=t["first_offset"], height=0.6, color=fill,
                hatch=hatch, edgecolor="black", linewidth=0.8, alpha=0.85)
    _marks(ax, {"last_stable_offset": replay["last_stable_offset"],
                "high_watermark": replay["high_watermark"]}, len(pids) - 0.3 + 0.6, 0, end)
    ax.set_yticks(range(len(pids)))
    ax.set_yticklabels([f"producer {pid}" for pid in pids], fontsize=7.5)
    ax.set_ylim(-0.7, len(pids) - 0.3 + 0.6)
    ax.set_xlabel("offset", fontsize=8)
    ax.tick_params(axis="x", labelsize=7.5)
    handles = [Patch(fc="black", label="data batches"), Patch(fc="#8c8c8c", ec="black", label="committed"),
               Patch(fc="white", ec="black", hatch="////", label="aborted"),
               Patch(fc=DAMAGE, ec="black", hatch="xx", label="open (no marker yet)")]
    ax.legend(handles=handles, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.35 if pids else -0.2),
              ncol=4, frameon=False)
    ax.set_title(f"{_where(p)}: producers and transactions", fontsize=9, loc="left")
    fig.tight_layout()
    return _svg(fig)


def replica_plot(rs: Doc) -> str:
    """The replicas' logs side by side: batches shaded by leader epoch, each follower's divergence and
    truncation offset under the current leader, the batches it would lose, each replica's high watermark."""
    plt = _plt()
    from matplotlib.patches import Patch

    brokers = sorted(rs["batches"])
    ys = {b: len(brokers) - 1 - i for i, b in enumerate(brokers)}
    epochs = sorted({x["epoch"] for b in brokers for x in rs["batches"][b]})
    shade = {e: (OK_FILLS[i % 2], EPOCH_HATCHES[i % len(EPOCH_HATCHES)]) for i, e in enumerate(epochs)}
    hw = {r["broker"]: r["high_watermark"] for r in rs["replicas"]}
    hi = max([x["last_offset"] + 1 for b in brokers for x in rs["batches"][b]] + [1])
    fig, ax = plt.subplots(figsize=(10, 1.8 + 0.75 * len(brokers)), dpi=100)
    for b in brokers:
        runs = coalesce([(x["base_offset"], x["last_offset"], x["epoch"]) for x in rs["batches"][b]], hi)
        for first, last, epoch in runs:
            fill, hatch = shade[epoch]
            ax.barh(ys[b], last - first + 1, left=first, height=0.55, color=fill, hatch=hatch, edgecolor="#404040",
                    linewidth=0.4)
        if hw.get(b) is not None:
            ax.plot([hw[b]] * 2, [ys[b] - 0.38, ys[b] + 0.38], color="black", linewidth=2.2)
            # Beside a divergence label (written to the left of its line) the HW label goes to the right.
            near = any(f["follower"] == b and f["divergence_offset"] is not None
                       and abs(f["divergence_offset"] - hw[b]) < hi * 0.15 for f in rs["follower_losses"])
            ax.text(hw[b], ys[b] + 0.4, f" HW {hw[b]}" if near else f"HW {hw[b]}", fontsize=7,
                    ha="left" if near else "center", va="bottom")
    for f in rs["follower_losses"]:
        y = ys[f["follower"]]
        gone = set(f["lost_batches"])
        lost = [(x["base_offset"], x["last_offset"], None) for x in rs["batches"][f["follower"]]
                if x["base_offset"] in gone]
        for first, last, _ in coalesce(lost, hi):
            ax.barh(y, last - first + 1, left=first, height=0.55, color=DAMAGE, hatch="xxxx", edgecolor="black",
                    linewidth=1.2)
        if f["divergence_offset"] is not None:
            ax.plot([f["divergence_offset"]] * 2, [y - 0.45, y + 0.45], color="black", linestyle="--", linewidth=1.6,
                    zorder=5)
            ax.text(f["divergence_offset"], y + 0.4, f"diverges at {f['divergence_offset']} ", fontsize=7,
                    ha="right", va="bottom", fontweight="bold")
        t = f["truncation_offset"]
        if t is not None:
            text = (f"broker {f['follower']} truncates to {t}, loses {f['lost_record_count']} records"
                    if f["lost_record_count"] else f"broker {f['follower']} loses nothing, fetches from {t}")
            right = t > hi * 0.6
            ax.annotate(text, (t, y - 0.3), xytext=(6 if right else -6, -16), textcoords="offset points",
                        fontsize=7.5, ha="right" if right else "left", fontweight="bold",
                        arrowprops={"arrowstyle": "-|>", "color": "black"})
    ax.set_yticks([ys[b] for b in brokers])
    ax.set_yticklabels([f"broker {b}" + (" (leader)" if b == rs["leader"] else "") for b in brokers],
                       fontsize=8)
    ax.set_ylim(-0.9, len(brokers) - 0.2)
    ax.set_xlim(0, hi * 1.04)
    ax.set_xlabel("offset", fontsize=8)
    ax.tick_params(axis="x", labelsize=7.5)
    handles = [Patch(fc=shade[e][0], hatch=shade[e][1], ec="black", label=f"epoch {e}") for e in epochs]
    handles.append(Patch(fc=DAMAGE, hatch="xxxx", ec="black", label="lost when following the leader"))
    ax.legend(handles=handles, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=min(len(handles), 5),
              frameon=False)
    ax.set_title(f"{printable(rs['partition'])}: replicas side by side (leader {rs['leader']})", fontsize=9, loc="left")
    fig.tight_layout()
    return _svg(fig)
