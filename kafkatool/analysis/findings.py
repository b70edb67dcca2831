"""Findings as rows, in one place: ``check``'s defects located in their log dir, the order every output lists
them in, severity floors and counts, the ``expect.json`` comparison, and the ``defects`` rows of the
``groups`` and ``transactions`` documents.

``check``, ``report`` and the fleet ``scan`` all produce findings from the same engine (``engine.check``, which
models what Kafka's ``LogManager`` / ``LogLoader`` will do with each file); this module turns them into rows
once, so the three cannot drift apart.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from kafkatool.analysis.metadata import topic_remote_storage
from kafkatool.engine.check import check_broker_identity, check_log_dir
from kafkatool.engine.replay import ReplayResult
from kafkatool.errors import UsageError
from kafkatool.model import Defect, LogDirData, PartitionData, SegmentData
from kafkatool.reading.files import read_text
from kafkatool.reading.restart_inputs import read_swaps
from kafkatool.reading.tiered import read_tiered
from kafkatool.storage.severity import SEVERITIES, SEVERITY_RANK, at_least

Row = dict[str, Any]

#: The ``log_dir`` of a finding that concerns several log dirs of one broker.
ALL_LOG_DIRS = "*"


def finding_row(d: Defect, log_dir: str) -> Row:
    """A finding as a stable row (``check``'s and the report's)."""
    return {"severity": d.severity, "code": d.code, "log_dir": log_dir, "file": d.file, "position": d.position,
            "field": d.field, "reason": d.reason}


def located_finding_row(log_dir: str, part: PartitionData | None, d: Defect, source: str = "check") -> Row:
    """A finding located in its log dir and partition (``None`` for log-dir-level findings), with the engine it
    came from (``check`` or ``replay``): the scan's ``findings`` table row."""
    tp = part.topic_partition if part is not None else None
    row = finding_row(d, log_dir)
    return {"log_dir": log_dir, "topic": tp.topic if tp else None, "partition": tp.partition if tp else None,
            "source": source, "severity": row["severity"], "code": row["code"], "file": row["file"],
            "position": row["position"], "field": row["field"], "reason": row["reason"]}


def replay_defects(result: ReplayResult, directory: str) -> list[Defect]:
    """A replay's anomalies as findings of the partition (those past the listing cap as one count per code)."""
    manager = result.manager
    out = [Defect(a.code, directory, a.position, f"offset {a.offset}", a.message, a.severity)
           for a in result.anomalies]
    out += [Defect(code, directory, None, "anomalies", f"{n} more {code} anomalies, counted but not listed",
                   manager.unlisted_severity[code]) for code, n in sorted(manager.unlisted.items())]
    return out


def defect_row(d: Defect) -> Row:
    """A defect of the inputs as the ``defects`` rows of the ``groups`` and ``transactions`` documents."""
    return {"file": d.file, "position": d.position, "field": d.field, "reason": d.reason}


def replay_stop_rows(result: ReplayResult, directory: str) -> list[Row]:
    """Where a data partition's producer-state replay stopped at a read defect (Kafka's recovery truncates the log
    there, so what the replay says holds only up to that offset), as ``defects`` rows."""
    hint = " (--read-past-damage reads on)"  # replay-producers' option, which these commands do not have
    return [{"file": directory, "position": a.position, "field": f"offset {a.offset}",
             "reason": a.message.replace(hint, "")} for a in result.anomalies if a.code == "replay-stopped"]


def record_problem_row(file: str, problem: Row) -> Row:
    """A record of an internal topic that its replay could not use (``{"offset", "position", "reason"}``), as a
    ``defects`` row."""
    return {"file": file, "position": problem["position"], "field": f"record {problem['offset']}",
            "reason": problem["reason"]}


def segment_defect_rows(parts: Iterable[PartitionData]) -> list[Row]:
    """The segments' defects of these partitions (informational notes left out), as ``defects`` rows."""
    return [defect_row(d) for part in parts for seg in part.segments for d in seg.defects if d.severity != "info"]


def sort_findings(rows: list[Row]) -> list[Row]:
    """Sort in place, most severe first, then by log dir, file and position (``check``'s order); returns them."""
    rows.sort(key=lambda r: (-SEVERITY_RANK[r["severity"]], r["log_dir"], r["file"], r["position"] or 0))
    return rows


def worst_first(rows: list[Row]) -> list[Row]:
    """A sorted copy, most severe first, then by place and code (rows from several engines, ``None`` allowed)."""
    return sorted(rows, key=lambda f: (-SEVERITY_RANK.get(f["severity"], 0), f["log_dir"] or "", f["file"] or "",
                                       f["position"] if f["position"] is not None else -1, f["code"]))


def at_or_above(rows: list[Row], floor: str) -> list[Row]:
    """The rows whose severity reaches ``floor`` (``info``, ``warning`` or ``error``)."""
    return [r for r in rows if at_least(r["severity"], floor)]


def severity_counts(rows: list[Row]) -> dict[str, int]:
    """How many rows of each severity, most severe first."""
    return {s: sum(1 for f in rows if f["severity"] == s) for s in reversed(SEVERITIES)}


def log_dir_findings(data: LogDirData, *, log_dir: str | None = None,
                     swaps: dict[str, dict[int, SegmentData]] | None = None) -> list[Row]:
    """``check``'s findings for one log dir (``log_dir``: its name in the rows, by default its path); an
    interrupted cleaner swap is checked as Kafka's load completes it, with the ``.swap`` segments ``swaps`` of
    each partition (read here when not given)."""
    found = check_log_dir(data, read_swaps(data) if swaps is None else swaps, read_tiered(data.path).remote,
                          topic_remote_storage(data.path))
    return [finding_row(f, data.path if log_dir is None else log_dir) for f in found]


def broker_identity_findings(datas: list[LogDirData]) -> list[Row]:
    """The cross-log-dir findings of one broker's log dirs (``meta.properties`` agreement)."""
    return [finding_row(f, ALL_LOG_DIRS) for f in check_broker_identity(datas)]


def check_document(datas: list[LogDirData], *, show_info: bool) -> tuple[list[Row], Row]:
    """``check`` on one broker's log dirs: the sorted finding rows and the summary the renderer shows."""
    findings = [f for data in datas for f in log_dir_findings(data)]
    findings += broker_identity_findings(datas)
    sort_findings(findings)
    summary = {"log_dirs": len(datas), "partitions": sum(len(d.partitions) for d in datas),
               "segments": sum(len(p.segments) for d in datas for p in d.partitions),
               "counts": severity_counts(findings), "show_info": show_info}
    return findings, summary


def load_expectation(path: str) -> tuple[list[Row], str]:
    """``expect.json``: ``{"findings": [{"code", "file", "severity"?}...], "min_severity": "warning"}``."""
    try:
        doc = json.loads(read_text(path))
    except ValueError as err:
        raise UsageError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("findings", []), list):
        raise UsageError(f"{path}: expected an object with a \"findings\" list")
    floor = doc.get("min_severity", "warning")
    if floor not in SEVERITY_RANK:
        raise UsageError(f"{path}: min_severity must be info, warning or error")
    for i, item in enumerate(doc.get("findings", [])):
        if not isinstance(item, dict) or "code" not in item:
            raise UsageError(f"{path}: findings[{i}] needs at least a \"code\"")
    return doc.get("findings", []), floor


def compare(rows: list[Row], expected: list[Row], floor: str) -> tuple[list[Row], list[Row]]:
    """(declared but not found, found at or above ``floor`` but not declared)."""

    def matches(row: Row, exp: Row) -> bool:
        return all(row.get(k) == v for k, v in exp.items() if k in ("code", "file", "severity", "log_dir", "field"))

    missing = [e for e in expected if not any(matches(r, e) for r in rows)]
    unexpected = [r for r in at_or_above(rows, floor) if not any(matches(r, e) for e in expected)]
    return missing, unexpected
