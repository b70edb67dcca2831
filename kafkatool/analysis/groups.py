"""``groups``' analysis: ``__consumer_offsets`` replayed as Kafka's ``GroupMetadataManager`` loads it and
``__share_group_state`` as the share coordinator loads it (``engine.groups``), each committed offset (and each
share partition's start offset) measured against the data partitions found in the same log dirs."""

from __future__ import annotations

from typing import Any

from kafkatool.analysis.findings import defect_row, record_problem_row, replay_stop_rows, segment_defect_rows
from kafkatool.engine.groups import (
    PartitionEnds,
    group_rows,
    member_rows,
    offset_rows,
    replay_offsets,
    replay_share_state,
    share_offset_rows,
    share_state_rows,
    topic_names,
)
from kafkatool.engine.replay import replay
from kafkatool.errors import UsageError
from kafkatool.reading.files import not_read
from kafkatool.reading.partitions import LocatedPartition, read_partitions
from kafkatool.schema.group_coordinator import OFFSETS_TOPIC
from kafkatool.schema.share_group_state import SHARE_GROUP_STATE_TOPIC
from kafkatool.schema.topic_records import decoder_named


def _ends(p: LocatedPartition, stops: list[dict[str, Any]]) -> PartitionEnds:
    """A data partition's log start (Kafka's: the checkpoint, at least the first segment's base), log end, high
    watermark (clamped to the log as Kafka clamps it at load) and last stable offset (replayed; where the replay
    stopped at a read defect is added to ``stops`` as a ``defects`` row)."""
    data = p.data
    first = data.segments[0].base_offset if data.segments else 0
    start = max(first, p.checkpoint_log_start or 0)
    leo = data.log_end_offset
    hw = None if p.high_watermark is None else min(max(p.high_watermark, start), leo)
    replayed = replay(data, compare_snapshots=False)
    stops += replay_stop_rows(replayed, data.directory)
    lso = replayed.manager.last_stable_offset(leo if hw is None else hw)
    return PartitionEnds(data.directory, start, leo, hw, lso)


def groups_document(paths: list[str], *, group: str | None = None) -> dict[str, Any]:
    """Read the log dirs, replay the offsets topic, measure each commit; the ``--format json`` document."""
    parts, dir_defects = read_partitions(paths, frozenset({OFFSETS_TOPIC, SHARE_GROUP_STATE_TOPIC}))
    decoder = decoder_named("group-coordinator")
    share_decoder = decoder_named("share-group-state")
    assert decoder is not None and share_decoder is not None
    offset_parts = [p.data for p in parts if p.topic == OFFSETS_TOPIC]
    share_parts = [p.data for p in parts if p.topic == SHARE_GROUP_STATE_TOPIC]
    state = replay_offsets(offset_parts, decoder.decode)
    replay_share_state(share_parts, share_decoder.decode, state)
    names = topic_names(state, {p.data.partition_metadata.topic_id: p.topic for p in parts
                                if p.data.partition_metadata is not None and p.topic})
    wanted = {(t, n) for (g, t, n) in state.offsets if group is None or g == group}
    wanted |= {(names[t], n) for (g, t, n) in state.share_state if (group is None or g == group) and t in names}
    stops: list[dict[str, Any]] = []
    ends = {(p.topic, p.partition): _ends(p, stops) for p in parts if (p.topic, p.partition) in wanted}
    offsets = [r for r in offset_rows(state, ends) + share_offset_rows(state, ends, names)
               if group is None or r["group"] == group]
    groups = [g for g in group_rows(state, offsets) if group is None or g["group"] == group]
    members = [m for m in member_rows(state, names) if group is None or m["group"] == group]
    share_state = [s for s in share_state_rows(state, names) if group is None or s["group"] == group]
    if group is not None and not groups and not offsets:
        if not offset_parts:
            raise UsageError(f"groups --group {group}: no {OFFSETS_TOPIC} partition in the given log dirs")
        known = sorted(set(state.groups) | {g for (g, _, _) in state.offsets} | {g for (g, _, _) in state.share_state})
        listed = ", ".join(known[:10]) + (f" and {len(known) - 10} more" if len(known) > 10 else "")
        where = ", ".join(p.directory for p in offset_parts)
        raise UsageError(f"groups --group {group}: no such group in {where}"
                         + (f" (groups there: {listed})" if known else " (it holds no group)"))
    defects = [defect_row(d) for d in dir_defects]
    defects += [record_problem_row(p["partition"], p) for p in state.problems]
    defects += segment_defect_rows(p.data for p in parts if p.topic in (OFFSETS_TOPIC, SHARE_GROUP_STATE_TOPIC)
                                   or (p.topic, p.partition) in ends)
    defects += stops
    defects += [defect_row(d) for d in not_read(parts=(p.data for p in parts))]
    return {
        "log_dirs": paths, "coordinator_partitions": [p.directory for p in offset_parts],
        "offsets_records": state.records, "groups": groups, "offsets": offsets,
        "problems": [r for r in offsets if r["problem"]], "defects": defects,
        "members": members, "share_state": share_state,
        "share_coordinator_partitions": [p.directory for p in share_parts], "share_state_records": state.share_records,
    }
