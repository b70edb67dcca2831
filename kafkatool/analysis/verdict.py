"""The incident report's judgement: per-partition marks and the verdict, from the other engines' documents.

Pure and deterministic. It adds no model of its own: every mark is a value that ``simulate-restart``
(``LogLoader`` / ``UnifiedLog``), ``replay-producers`` (``ProducerStateManager``), ``check`` or
``simulate-replication``'s replica mode (``AbstractFetcherThread`` truncation) already computed; this module
only picks them out and puts them into plain words.
"""

from __future__ import annotations

from typing import Any

Doc = dict[str, Any]
LEVELS = ("healthy", "damaged", "loses-data")


def restart_marks(restart: Doc) -> Doc:
    """The offsets a segment map marks, from one partition of ``simulate-restart``'s JSON document.

    ``truncate_at`` is the offset where the restart cuts the log (the new log end), set only when the load
    removes anything; ``acknowledged_lost`` is [new log end, high-watermark checkpoint) when that is not empty.
    """
    inputs = restart.get("inputs") or {}
    loss = restart.get("loss") or {}
    # What a completed cleaner swap removes is compaction, not a cut: only the loss's bytes count.
    lost_bytes = loss.get("bytes", restart.get("bytes_truncated")) or 0
    cuts = bool(lost_bytes or loss.get("records") or loss.get("offsets"))
    offsets = loss.get("offsets")
    ack = loss.get("acknowledged")
    return {
        "log_start_offset": restart.get("log_start_offset"),
        "log_end_offset": restart.get("log_end_offset"),
        "recovery_point": restart.get("recovery_point"),
        "recovery_point_checkpoint": inputs.get("recovery_point_checkpoint"),
        "high_watermark": restart.get("high_watermark"),
        "high_watermark_checkpoint": inputs.get("high_watermark_checkpoint"),
        "last_stable_offset": restart.get("last_stable_offset"),
        "truncate_at": restart.get("log_end_offset") if cuts else None,
        "bytes_truncated": lost_bytes,
        "lost_offsets": None if offsets is None else [offsets["from"], offsets["to"]],
        "lost_records": loss.get("records") or 0,
        "acknowledged_lost": None if ack is None else [ack["from"], ack["to"]],
        "failed": restart.get("outcome") == "failed",
    }


def follower_losses(replica_set: Doc) -> list[Doc]:
    """What each follower loses when it follows the current leader (the pairs of ``simulate-replication``'s
    replica mode whose leader is the current one), with the lost batches that lay below the follower's own
    high watermark and are not on the leader: records the follower had counted as committed."""
    hw = {r["broker"]: r["high_watermark"] for r in replica_set["replicas"]}
    out = []
    for p in replica_set["pairs"]:
        if p["leader"] != replica_set["leader"]:
            continue
        gone = [b for b in p["lost_batches_detail"] if not b["same_batch_on_leader"]]
        acked = [b for b in gone if b["last_offset"] < hw.get(p["follower"], 0)]
        out.append({"follower": p["follower"], "relation": p["relation"],
                    "divergence_offset": p["divergence_offset"], "truncation_offset": p["truncation_offset"],
                    "lost_record_count": p["lost_record_count"],
                    "lost_batches": p["lost_batches"],
                    "committed_lost": [[b["base_offset"], b["last_offset"]] for b in acked]})
    return out


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def verdict(doc: Doc) -> Doc:
    """``{"level", "headline", "reasons"}``: loses-data when a restart would cut records or acknowledged
    offsets are missing, when a partition fails to load, or when following the current leader removes
    records a follower had committed; damaged when check or replay-producers report an error or warning;
    healthy otherwise."""
    level = 0
    reasons: list[str] = []
    for p in doc["partitions"]:
        where = f"{p['directory']} on {p['log_dir_label']}"
        m = p["marks"]
        if m["failed"]:
            level = 2
            reasons.append(f"{where}: Kafka would fail to load this partition ({p['restart']['error']}).")
            continue
        if m["truncate_at"] is not None:
            level = 2
            lost = m["lost_offsets"]
            what = (f" and offsets {lost[0]} to {lost[1] - 1} ({_plural(m['lost_records'], 'record')})" if lost
                    else " that hold no complete batch")
            reasons.append(f"{where}: a restart truncates the log at offset {m['truncate_at']}, dropping "
                           f"{_plural(m['bytes_truncated'], 'byte')}{what}.")
        if m["acknowledged_lost"] is not None:
            level = 2
            a = m["acknowledged_lost"]
            reasons.append(f"{where}: offsets {a[0]} to {a[1] - 1} were acknowledged (below the high-watermark "
                           f"checkpoint {a[1]}) and are missing from this replica.")
        replay = p.get("replay")
        if replay is not None:
            for t in replay["hanging"]:
                level = max(level, 1)
                reasons.append(f"{where}: the transaction of producer {t['producer_id']} has hung since offset "
                               f"{t['first_offset']}; read_committed consumers are stuck there.")
    for rs in doc["replica_sets"]:
        for f in rs["follower_losses"]:
            if not f["lost_record_count"]:
                continue
            committed = sum(b[1] - b[0] + 1 for b in f["committed_lost"])
            if committed:
                level = 2
            reasons.append(
                f"{rs['partition']}: broker {f['follower']} diverged from leader {rs['leader']} at offset "
                f"{f['divergence_offset']}; following it truncates at {f['truncation_offset']} and removes "
                f"{_plural(f['lost_record_count'], 'record')}"
                + (f", {committed} of them below its own high watermark (committed there)." if committed
                   else ", none of them acknowledged (ordinary follower truncation)."))
    for section in doc.get("sections", []):
        if section.get("level") in LEVELS:
            level = max(level, LEVELS.index(section["level"]))
        reasons += section.get("reasons", [])
    serious = [f for f in doc["findings"] if f["severity"] in ("error", "warning")]
    anomalies = [a for p in doc["partitions"] if p.get("replay") for a in p["replay"]["anomalies"]
                 if a["severity"] in ("error", "warning")]
    if serious or anomalies:
        level = max(level, 1)
        errors = sum(1 for f in serious if f["severity"] == "error")
        kinds = "anomaly" if len(anomalies) == 1 else "anomalies"
        reasons.append(f"check: {_plural(errors, 'error')}, {_plural(len(serious) - errors, 'warning')}; "
                       f"replay-producers: {len(anomalies)} {kinds} (see Findings).")
    name = LEVELS[level]
    headline = {"healthy": "Healthy: nothing on disk is damaged and a restart would lose no data.",
                "damaged": "Damaged: files need attention, but a restart would lose no data.",
                "loses-data": "Would lose data: on restart or failover, records are cut or already missing."}[name]
    return {"level": name, "headline": headline, "reasons": reasons}
