"""``replay-producers``' analysis: a partition's log replayed as Kafka's ``ProducerStateManager`` rebuilds its
state (``engine.replay``), and the replay as the stable document that command prints and ``report`` embeds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafkatool.analysis.metadata import load as load_metadata
from kafkatool.analysis.producers import entry_document
from kafkatool.engine.producer_state import Anomaly
from kafkatool.engine.replay import ReplayError, ReplayResult, replay
from kafkatool.engine.swaps import log_after_swaps
from kafkatool.errors import KafkatoolError, UsageError
from kafkatool.model import PartitionData
from kafkatool.reading.files import not_read
from kafkatool.reading.logdir import partition_with_high_watermark
from kafkatool.reading.metadata_log import find_metadata_partition, read_metadata_files
from kafkatool.reading.restart_inputs import read_swap_segments
from kafkatool.storage.transaction_version import FEATURE_NAME, Decision, decide, from_kafka_version

#: Kafka's ``transaction.max.timeout.ms`` default: an open transaction older than this is hanging.
DEFAULT_TXN_TIMEOUT_MS = 15 * 60 * 1000


def check_kafka_version(value: str | None) -> str | None:
    """``--kafka-version``: a release number (``UsageError`` otherwise)."""
    if value is not None:
        try:
            from_kafka_version(value)
        except ValueError as err:
            raise UsageError(f"--kafka-version: {err}") from None
    return value


def cluster_transaction_version(log_dir: Path) -> Decision | None:
    """The ``transaction.version`` feature level of the cluster, from the ``__cluster_metadata-0`` partition of
    ``log_dir`` (loaded and replayed as ``kafkatool metadata`` does); ``None`` without a readable one."""
    try:
        directory = find_metadata_partition(log_dir)
        _, image = load_metadata(read_metadata_files(directory))
    except (KafkatoolError, OSError, ValueError, KeyError):
        return None
    return decide(feature_level=image.features.get(FEATURE_NAME), metadata_log=True)


def replay_partition_dir(path: Path, *, from_snapshot: str | int | None, until: int | None,
                         read_past_damage: bool, phase: Callable[[str], None] = lambda s: None,
                         kafka_version: str | None = None) -> tuple[PartitionData, int | None, ReplayResult]:
    """Read a partition directory (and its high-watermark checkpoint entry) and replay the log Kafka will load:
    an interrupted cleaner swap is completed first, and noted as the first anomaly (``phase``: called when the
    reading is done and the replay starts). The transaction version comes from the log dir's metadata log when
    it has one, else from the batches, else ``kafka_version``."""
    part, hw = partition_with_high_watermark(path)
    # An interrupted cleaner swap: replay the log Kafka will load (the swap in place of what it replaces).
    part, swap = log_after_swaps(part, read_swap_segments(path, part.directory))
    cluster = cluster_transaction_version(path.resolve().parent)
    phase(f"replaying {path.name}")
    try:
        result = replay(part, from_snapshot=from_snapshot, until=until, read_past_damage=read_past_damage,
                        cluster=cluster, kafka_version=kafka_version)
    except ReplayError as err:
        raise UsageError(str(err)) from None
    for d in reversed(not_read(parts=[part])):  # named first: what the replay could not read
        result.anomalies.insert(0, Anomaly(d.code, -1, None, -1, f"{d.file}: {d.reason}", d.severity))
    if swap is not None:
        replaced = ", ".join(str(b) for b in swap.replaced) or "none"
        result.anomalies.insert(0, Anomaly(
            "swap-completed", swap.low, None, -1,
            f"an interrupted cleaner swap: the log is replayed as Kafka's LogLoader will load it, the .swap "
            f"segment(s) {', '.join(map(str, swap.swapped_in))} in place of the segments they replace "
            f"(offsets [{swap.low}, {swap.high}); replaced segments still on disk: {replaced})", "info"))
    return part, hw, result


def replay_document(result: ReplayResult, *, directory: str, topic: str, partition: int | None,
                    high_watermark: int | None, now: int, timeout_ms: int) -> dict[str, Any]:
    """The replay as a stable JSON-ready document."""
    m = result.manager
    producers = [entry_document(pid, m.producers[pid]) for pid in m.order.order()]
    items = []
    for t in sorted(m.transactions, key=lambda t: t.first_offset):
        state = "open" if t.aborted is None else "aborted" if t.aborted else "committed"
        items.append({"producer_id": t.producer_id, "producer_epoch": t.producer_epoch, "state": state,
                      "first_offset": t.first_offset, "last_offset": t.last_offset,
                      "offsets_spanned": None if t.last_offset is None else t.last_offset - t.first_offset + 1,
                      "last_stable_offset": t.last_stable_offset, "coordinator_epoch": t.coordinator_epoch,
                      "first_timestamp": t.first_timestamp,
                      "duration_ms": None if t.end_timestamp is None else t.end_timestamp - t.first_timestamp})
    hanging = [{"producer_id": t.producer_id, "producer_epoch": t.producer_epoch, "first_offset": t.first_offset,
                "first_timestamp": t.first_timestamp, "open_ms": now - t.first_timestamp}
               for t in m.hanging(now, timeout_ms)]
    anomalies = [{"code": a.code, "severity": a.severity, "offset": a.offset, "position": a.position,
                  "producer_id": None if a.producer_id < 0 else a.producer_id, "message": a.message}
                 for a in result.anomalies]
    anomalies += [{"code": "hanging-transaction", "severity": "error", "offset": h["first_offset"], "position": None,
                   "producer_id": h["producer_id"],
                   "message": f"transaction of producer {h['producer_id']} (epoch {h['producer_epoch']}) open since "
                              f"offset {h['first_offset']} for {h['open_ms'] // 60000} min, past the "
                              f"{timeout_ms // 60000} min timeout: read_committed consumers are stuck at that "
                              "offset and compaction cannot pass it"} for h in hanging]
    hanging_first = {h["first_offset"] for h in hanging}
    anomalies += [{"code": "open-transaction", "severity": "info", "offset": t["first_offset"], "position": None,
                   "producer_id": t["producer_id"],
                   "message": f"transaction of producer {t['producer_id']} (epoch {t['producer_epoch']}) is open since "
                              f"offset {t['first_offset']} ({(now - t['first_timestamp']) // 1000} s before the "
                              "clock): it holds the last stable offset there until its marker is written"}
                  for t in items if t["state"] == "open" and t["first_offset"] not in hanging_first]
    hw = result.end_offset if high_watermark is None else high_watermark
    unlisted = [{"code": code, "severity": m.unlisted_severity[code], "count": n}
                for code, n in sorted(m.unlisted.items())]
    counts = {s: sum(1 for a in anomalies if a["severity"] == s)
              + sum(u["count"] for u in unlisted if u["severity"] == s) for s in ("error", "warning", "info")}
    return {
        "partition": directory, "topic": topic, "partition_number": partition,
        "start": {"offset": result.start_offset, "snapshot": result.start_snapshot},
        "end_offset": result.end_offset, "high_watermark": high_watermark,
        "first_unstable_offset": m.first_unstable_offset(), "last_stable_offset": m.last_stable_offset(hw),
        "now": now, "snapshots_compared": result.snapshots_compared, "producers": producers,
        "transactions": {"committed": sum(1 for t in items if t["state"] == "committed"),
                         "aborted": sum(1 for t in items if t["state"] == "aborted"),
                         "open": sum(1 for t in items if t["state"] == "open"), "items": items},
        "hanging": hanging, "anomalies": anomalies, "anomalies_unlisted": unlisted, "anomaly_counts": counts,
        "transaction_version": None if result.transaction_version is None else result.transaction_version.to_json(),
    }
