"""``-f json`` is written as the rows come (``render.output.JsonOutput``): byte for byte the document
``json.dump(..., indent=2)`` writes of the whole through ``JsonSafeWriter`` (control, C1 and bidi characters
escaped), which the writer held before (a zero-filled ``.txnindex`` of
1 GiB is 31 M rows)."""

from __future__ import annotations

import io
import json
from typing import Any

from kafkatool.render.output import JsonOutput, _json_default
from kafkatool.render.safe import JsonSafeWriter


def _reference(files: list[tuple[str, str, dict[str, Any], list[dict[str, Any]], dict[str, Any]]],
               summary: dict[str, Any]) -> str:
    doc = []
    for path, kind, info, rows, end in files:
        current: dict[str, Any] = {"path": path, "kind": kind, **info, "items": [], "defects": []}
        for row in rows:
            if row.get("type") == "defect":
                current["defects"].append({k: v for k, v in row.items() if k != "type"})
            else:
                current["items"].append(row)
        current["summary"] = end
        doc.append(current)
    out = io.StringIO()
    json.dump({"files": doc, "summary": summary}, JsonSafeWriter(out), default=_json_default, ensure_ascii=False,
              indent=2)
    return out.getvalue() + "\n"


def _streamed(files: list[tuple[str, str, dict[str, Any], list[dict[str, Any]], dict[str, Any]]],
              summary: dict[str, Any]) -> str:
    out = io.StringIO()
    writer = JsonOutput(out)
    for path, kind, info, rows, end in files:
        writer.begin_file(path, kind, info)
        for row in rows:
            writer.row(dict(row))
        writer.end_file(end)
    writer.finish(summary)
    return out.getvalue()


def test_streamed_document_is_json_dumps() -> None:
    rows = [{"type": "batch", "offset": 1, "key": b"\x00k", "nested": {"a": [1, {"b": None}], "e": {}},
             "text": "line\nend \u202e é", "empty": []},
            {"type": "defect", "code": "x", "position": 3, "reason": "bad"},
            {"type": "record", "value": 1.5, "list": [[], [1, 2]]}]
    cases: list[list[Any]] = [
        [],
        [("a.log", "log", {}, [], {"entries": 0})],
        [("a.log", "log", {"size": 3, "base_offset": 0}, rows, {"entries": 2, "defects": 1}),
         ("b.index", "index", {"size": 0}, rows[1:2], {}),
         ("c.txnindex", "txnindex", {"size": 34}, rows[:1], {"entries": 1})],
    ]
    for files in cases:
        assert _streamed(files, {"files": len(files)}) == _reference(files, {"files": len(files)})
