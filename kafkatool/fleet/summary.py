"""The scan's closing summary, computed the same way for both engines from the partitions and findings rows
(counted and ordered as ``analysis.findings`` counts and orders every finding)."""

from __future__ import annotations

from typing import Any

from kafkatool.analysis.findings import severity_counts, worst_first

WORST = 10


def summarise(partitions: list[dict[str, Any]], findings: list[dict[str, Any]], *, log_dirs: int, segments: int,
              scanned_bytes: int, batch_rows: int) -> dict[str, Any]:
    """Totals over the fleet and the worst findings (most severe first, then by place)."""
    counts = severity_counts(findings)
    worst = worst_first(findings)
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
