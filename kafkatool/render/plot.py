"""Pictures of a replication run: LEO and HW per replica over the events (matplotlib, an optional extra)."""

from __future__ import annotations

import io
from typing import Any

from kafkatool.errors import UsageError
from kafkatool.render.report_plots import quiet_save
from kafkatool.render.safe import printable

FORMATS = ("svg", "png")


def plot_timeline(doc: dict[str, Any], fmt: str) -> bytes:
    """An SVG or PNG of each replica's log end offset (solid) and high watermark (dashed) after every event,
    with the acknowledged records that were lost named in the title."""
    if fmt not in FORMATS:
        raise UsageError(f"--plot writes .svg or .png files, not .{fmt}")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError("--plot needs matplotlib: pip install 'kafkatool[plot]'") from None
    rows = doc["timeline"]
    steps = list(range(len(rows)))
    replicas = sorted({rid for row in rows for rid in row["replicas"]}, key=str)
    # Names come from the scenario file (or the log dirs): shown escaped, never raw in the image or on stderr.
    fig, ax = plt.subplots(figsize=(max(6.0, 0.55 * len(rows) + 2), 4.2), dpi=110)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, rid in enumerate(replicas):
        color = colors[i % len(colors)]
        leo = [row["replicas"][rid]["leo"] if row["replicas"][rid]["alive"] else None for row in rows]
        hw = [row["replicas"][rid]["hw"] if row["replicas"][rid]["alive"] else None for row in rows]
        ax.plot(steps, [float("nan") if v is None else v for v in leo], "-o", color=color, markersize=3,
                label=printable(f"replica {rid} LEO"))
        ax.plot(steps, [float("nan") if v is None else v for v in hw], "--", color=color, alpha=0.7,
                label=printable(f"replica {rid} HW"))
        leaders = [s for s, row in zip(steps, rows, strict=True) if str(row["leader"]) == str(rid)]
        ax.scatter(leaders, [leo[s] for s in leaders], marker="*", s=70, color=color, zorder=3)
    ax.set_xticks(steps)
    ax.set_xticklabels([printable(str(row["event"] or "start")) for row in rows], rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("offset")
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    lost = doc.get("final", {}).get("acknowledged_lost") or []
    title = printable(str(doc.get("scenario") or "replication"))
    if lost:
        title += f" — {len(lost)} acknowledged record(s) LOST: {', '.join(map(str, lost[:6]))}"
        ax.set_title(title, color="#b00020", fontsize=10)
    else:
        ax.set_title(title + " — no acknowledged record lost", fontsize=10)
    ax.legend(fontsize=7, ncol=2, loc="upper left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    buf = io.BytesIO()
    quiet_save(fig, buf, format=fmt)
    plt.close(fig)
    return buf.getvalue()
