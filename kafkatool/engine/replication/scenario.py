"""The scenario document's vocabulary: its truncation modes, its errors and its start-up logs.

A ``kafkatool.replication-scenario/1`` document (validated by ``kafkatool.reading.scenario``) gives each
replica's log as runs of records per leader epoch, and optionally the epoch cache its checkpoint held.
"""

from __future__ import annotations

from typing import Any

from kafkatool.storage import LeaderEpochCache

MODES = ("fetch_diverging_epoch", "offsets_for_leader_epoch", "offsets_for_leader_epoch_v0", "high_watermark")
"""How followers truncate: KIP-320's diverging epoch in Fetch, OffsetsForLeaderEpoch (v1+ / v0, KIP-279 /
KIP-101), or to the high watermark (before KIP-101)."""


class ScenarioError(ValueError):
    """An event the model cannot apply (for example a clean election of a replica outside the ISR)."""

    event_index: int | None = None


def build_log(spec: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """A scenario's ``log`` items (runs of ``count`` records, or single records at their offset) as records."""
    log: list[tuple[int, str]] = []
    for item in spec:
        if "count" in item:
            ids = item.get("ids")
            for k in range(int(item["count"])):
                off = len(log)
                log.append((int(item["epoch"]), ids[k] if ids else f"e{item['epoch']}o{off}"))
        else:
            off = int(item["offset"])
            if off != len(log):
                raise ScenarioError(f"log record at offset {off} does not follow offset {len(log) - 1}")
            log.append((int(item["epoch"]), item.get("id") or f"e{item['epoch']}o{off}"))
    return log


def rebuild_cache(log: list[tuple[int, str]]) -> LeaderEpochCache:
    """The cache a log without a checkpoint gets: each record's epoch assigned at its offset."""
    cache = LeaderEpochCache()
    for off, (epoch, _) in enumerate(log):
        cache.assign(epoch, off)
    return cache
