"""The scan's closing summary, computed the same way for both engines from the partitions and findings rows."""

from __future__ import annotations

from typing import Any

from kafkatool.storage.severity import SEVERITY_RANK

WORST = 10


def summarise(partitions: list[dict[str, Any]], findings: list[dict[str, Any]], *, log_dirs: int, segments: int,
              scanned_bytes: int, batch_rows: int) -> dict[str, Any]:
    """Totals over the fleet and the worst findings (most severe first, then by place)."""
    counts = {s: sum(1 for f in findings if f["severity"] == s) for s in ("error", "warning", "info")}
    worst = sorted(findings, key=lambda f: (-SEVERITY_RANK.get(f["severity"], 0), f["log_dir"] or "",
                                            f["file"] or "", f["position"] if f["position"] is not None else -1,
                                            f["code"]))
    damaged = sorted({(p["log_dir"], p["directory"]) for p in partitions
                      if p["errors"] or p["invalid_crc_batches"]})
    return {
        "log_dirs": log_dirs,
        "partitions": len(partitions),
        "segments": segments,
        "bytes": scanned_bytes,
        "batches": batch_rows,
        "records": sum(p["records"] or 0 for p in partitions),
        "invalid_crc_batches": sum(p["invalid_crc_batches"] or 0 for p in partitions),
        "producers": sum(p["producers"] or 0 for p in partitions),
        "open_transactions": sum(p["open_transactions"] or 0 for p in partitions),
        "damaged_partitions": [f"{d}/{p}" for d, p in damaged],
        "counts": counts,
        "worst_findings": [f for f in worst if f["severity"] != "info"][:WORST],
    }
