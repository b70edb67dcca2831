"""Renderers: rows in, table / json / jsonl out. The only layer that imports rich.

Commands hand over plain rows (dicts with snake_case keys, ``None`` for absent values) grouped by input
file; a renderer decides how they look. ``jsonl`` streams one object per line as rows arrive, ``json``
writes one document at the end, ``table`` prints rich tables (in chunks, so a million-batch segment
never sits in memory as one table). Diagnostics always go to stderr, data to stdout.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TextIO

import orjson
from rich.console import Console
from rich.table import Table
from rich.text import Text

from kafkatool.render.safe import for_people, human_console, printable

Row = dict[str, Any]

FORMATS = ("table", "json", "jsonl")
TABLE_CHUNK = 500


class Output(Protocol):
    """What a command talks to while it produces rows."""

    def begin_file(self, path: str, kind: str, info: Row) -> None: ...
    def row(self, row: Row) -> None: ...
    def end_file(self, summary: Row) -> None: ...
    def finish(self, summary: Row) -> None: ...


def _json_default(obj: Any) -> Any:
    if isinstance(obj, bytes):
        return obj.hex()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def dumps(obj: Any) -> str:
    """Compact, stable JSON (key order as built)."""
    return orjson.dumps(obj, default=_json_default).decode()


class JsonlOutput:
    """One JSON object per line: a ``file`` line, then its rows, then a ``file_end`` line."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.path = ""
        buffer = getattr(out, "buffer", None)
        if buffer is not None:
            out.flush()
            self._write = buffer.write  # bytes straight to the buffered stream: no text round trip
        else:
            self._write = lambda data: out.write(data.decode())

    def _line(self, obj: Row) -> None:
        # Each line is written at once: holding many ~0.5 KiB bytes objects costs more than the writes.
        self._write(orjson.dumps(obj, default=_json_default, option=orjson.OPT_APPEND_NEWLINE))

    def begin_file(self, path: str, kind: str, info: Row) -> None:
        self.path = path
        self._line({"type": "file", "path": path, "kind": kind, **info})

    def row(self, row: Row) -> None:
        row["file"] = self.path
        self._line(row)

    def end_file(self, summary: Row) -> None:
        self._line({"type": "file_end", "path": self.path, **summary})

    def finish(self, summary: Row) -> None:
        self._line({"type": "summary", **summary})
        buffer = getattr(self.out, "buffer", None)
        if buffer is not None:
            buffer.flush()
        self.out.flush()


class JsonOutput:
    """A single document: ``{"files": [{path, kind, ..., rows by type}], "summary": {...}}``."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.files: list[Row] = []
        self.current: Row | None = None

    def begin_file(self, path: str, kind: str, info: Row) -> None:
        self.current = {"path": path, "kind": kind, **info, "items": [], "defects": []}
        self.files.append(self.current)

    def row(self, row: Row) -> None:
        assert self.current is not None
        if row.get("type") == "defect":
            self.current["defects"].append({k: v for k, v in row.items() if k != "type"})
        else:
            self.current["items"].append(row)

    def end_file(self, summary: Row) -> None:
        assert self.current is not None
        self.current["summary"] = summary

    def finish(self, summary: Row) -> None:
        json.dump({"files": self.files, "summary": summary}, self.out, default=_json_default,
                  ensure_ascii=False, indent=2)
        self.out.write("\n")
        self.out.flush()


# Column layouts per row type for the table renderer: (key, header, justify).
COLUMNS: dict[str, list[tuple[str, str]]] = {
    "batch": [("position", "pos"), ("base_offset", "base"), ("last_offset", "last"), ("count", "count"),
              ("size", "size"), ("magic", "magic"), ("compression", "codec"), ("partition_leader_epoch", "epoch"),
              ("producer_id", "pid"), ("producer_epoch", "pepoch"), ("base_sequence", "seq"),
              ("flags", "flags"), ("timestamp_type", "ts type"), ("max_timestamp", "max ts"), ("crc", "crc")],
    "record": [("offset", "offset"), ("timestamp", "timestamp"), ("key_size", "key size"),
               ("value_size", "value size"), ("sequence", "seq"), ("header_keys", "headers"),
               ("control", "control"), ("key", "key"), ("value", "value")],
    "index_entry": [("offset", "offset"), ("position", "position")],
    "time_index_entry": [("timestamp", "timestamp"), ("offset", "offset")],
    "aborted_txn": [("version", "version"), ("producer_id", "pid"), ("first_offset", "first"),
                    ("last_offset", "last"), ("last_stable_offset", "lso")],
    "producer": [("producer_id", "pid"), ("producer_epoch", "epoch"), ("coordinator_epoch", "coord epoch"),
                 ("first_sequence", "first seq"), ("last_sequence", "last seq"), ("first_offset", "first offset"),
                 ("last_offset", "last offset"), ("timestamp", "timestamp"),
                 ("current_txn_first_offset", "txn first offset")],
    "checkpoint_entry": [("topic", "topic"), ("partition", "partition"), ("offset", "offset")],
    "epoch_entry": [("epoch", "epoch"), ("start_offset", "start offset")],
    "property": [("key", "key"), ("value", "value")],
    "defect": [("severity", "severity"), ("code", "code"), ("position", "byte"), ("field", "field"),
               ("reason", "what")],
}


#: Which columns stay when a table must fit the terminal: most important first (the rest keep their order).
KEEP_FIRST: dict[str, list[str]] = {
    "batch": ["base_offset", "last_offset", "count", "compression", "max_timestamp", "producer_id",
              "base_sequence", "partition_leader_epoch", "flags", "size", "crc", "position", "producer_epoch",
              "magic", "timestamp_type"],
    "record": ["offset", "key", "value", "timestamp", "control", "sequence", "header_keys", "key_size",
               "value_size"],
    "producer": ["producer_id", "producer_epoch", "last_sequence", "last_offset", "timestamp",
                 "current_txn_first_offset", "coordinator_epoch", "first_sequence", "first_offset"],
}
#: The least width a wrapping column (key, value) is given when columns are chosen.
FLEX_MIN = 20
#: What a table puts between two columns (rich's padding of one on each side).
GAP = 2


def fit_columns(rtype: str, cols: list[tuple[str, str]], widths: dict[str, int], room: int) -> list[tuple[str, str]]:
    """The columns of ``cols`` that fit in ``room`` characters (:data:`GAP` between columns), chosen in
    :data:`KEEP_FIRST` order and shown in their own order. ``widths`` is each column's widest cell or header."""
    order = KEEP_FIRST.get(rtype)
    if order is None:
        return cols
    rank = {k: i for i, k in enumerate(order)}
    chosen: set[str] = set()
    used = 0
    for key, _ in sorted(cols, key=lambda c: rank.get(c[0], len(rank))):
        width = min(widths[key], FLEX_MIN) if key in ("key", "value") else widths[key]
        if used + width + (GAP if chosen else 0) > room and chosen:
            continue
        chosen.add(key)
        used += width + (GAP if len(chosen) > 1 else 0)
    return [c for c in cols if c[0] in chosen]


def _cell(row: Row, key: str) -> Text:
    value = row.get(key)
    if key == "flags":
        return Text(_flags(row))
    if key == "crc":
        text = "" if value is None else f"{value:08x}"
        return Text(text, style="red bold" if row.get("crc_valid") is False else "")
    if key == "header_keys":
        return Text(",".join(value) if value else "")
    if key == "control" and isinstance(value, dict):
        parts = [str(value.get("type_name") or f"type {value.get('type')}")]
        if value.get("coordinator_epoch") is not None:
            parts.append(f"coord epoch {value['coordinator_epoch']}")
        return Text(" ".join(parts), style="magenta")
    if value is None:
        return Text("–", style="dim")
    if isinstance(value, (dict, list, tuple)):
        return Text(dumps(value))
    return Text(str(value))


def _decoded_cell(part: Any) -> Any:
    """A decoded key or value as ``Type vN {data}``; raw hex (undecodable) as is."""
    if isinstance(part, dict) and "data" in part:
        return f"{part.get('type')} v{part.get('version')} {dumps(part['data'])}"
    return part


def _flags(row: Row) -> str:
    flags = []
    if row.get("is_transactional"):
        flags.append("txn")
    if row.get("is_control"):
        flags.append("ctrl")
    if row.get("delete_horizon_ms") is not None:
        flags.append("horizon")
    return " ".join(flags)


SEVERITY_STYLE = {"error": "red bold", "warning": "yellow", "info": "cyan"}


class TableOutput:
    """Rich tables, one block per input file, defects listed after the file's rows."""

    def __init__(self, out: TextIO, err: TextIO, *, color: bool | None = None, wide: bool = False) -> None:
        self.console = human_console(out, piped_width=200, color=color)
        self.wide = wide
        self.hidden: set[str] = set()  # columns left out of this file's tables to fit the width
        self.chosen: dict[str, list[tuple[str, str]]] = {}  # per row type: the columns this file's tables show
        self.pending: list[Row] = []
        self.pending_type = ""
        self.defects: list[Row] = []
        self.shown_header: set[str] = set()

    def begin_file(self, path: str, kind: str, info: Row) -> None:
        details = printable("  ".join(f"{k}: {v}" for k, v in info.items() if v is not None))
        self.console.print(Text.assemble((printable(path), "bold"), "  ", (kind, "cyan"), "  ", (details, "dim")))
        self.shown_header = set()
        self.chosen = {}

    def row(self, row: Row) -> None:
        row = for_people(row)
        rtype = row.get("type", "")
        if rtype == "defect":
            self.defects.append(row)
            return
        if rtype != self.pending_type or len(self.pending) >= TABLE_CHUNK:
            self._flush()
            self.pending_type = rtype
        self.pending.append(row)
        for rec in row.get("records") or ():
            if len(self.pending) >= TABLE_CHUNK:
                self._flush()
                self.pending_type = rtype
            shown = {**rec, "type": "record"}
            if "decoded" in rec:  # an internal topic's record: its decoded key and value instead of raw bytes
                dec = rec["decoded"]
                shown["key"] = _decoded_cell(dec["key"])
                shown["value"] = "<tombstone>" if dec["tombstone"] else _decoded_cell(dec["value"])
            self.pending.append(shown)

    def _flush(self) -> None:
        if not self.pending:
            return
        groups: list[tuple[str, list[Row]]] = []
        for r in self.pending:
            t = r.get("type", "")
            if groups and groups[-1][0] == t:
                groups[-1][1].append(r)
            else:
                groups.append((t, [r]))
        for rtype, rows in groups:
            self.console.print(self._table(rtype, rows))
        self.pending = []

    def _table(self, rtype: str, rows: list[Row]) -> Table:
        cols = COLUMNS.get(rtype) or [(k, k) for k in rows[0] if k != "type"]
        cells = [[_cell(r, key) for key, _ in cols] for r in rows]
        if not self.wide and rtype in KEEP_FIRST:
            # Chosen on a file's first table of each row type and kept; a later table with wider cells can only
            # leave more columns out (never bring one back), so the columns stay steady within a file.
            widths = {key: max([len(header)] + [c[i].cell_len for c in cells]) for i, (key, header) in enumerate(cols)}
            allowed = self.chosen.get(rtype, cols)
            shown = self.chosen[rtype] = fit_columns(rtype, allowed, widths, self.console.width)
            self.hidden |= {header for key, header in cols if (key, header) not in shown}
            keep = [i for i, col in enumerate(cols) if col in shown]
            cols = [cols[i] for i in keep]
            cells = [[c[i] for i in keep] for c in cells]
        table = Table(box=None, pad_edge=False, show_header=True, header_style="bold dim",
                      title=None, show_edge=False)
        for key, header in cols:
            justify = "left" if key in ("key", "value", "reason", "topic", "flags", "control") else "right"
            table.add_column(header, justify=justify, no_wrap=key not in ("reason", "value"),
                             style="dim" if rtype == "record" and key == "offset" else None)
        for c in cells:
            table.add_row(*c)
        return table

    def end_file(self, summary: Row) -> None:
        self._flush()
        self.pending_type = ""
        if self.defects:
            table = Table(box=None, show_edge=False, header_style="bold")
            for key, header in COLUMNS["defect"]:
                table.add_column(header, no_wrap=key != "reason", justify="right" if key == "position" else "left")
            for d in self.defects:
                style = SEVERITY_STYLE.get(d.get("severity", ""), "")
                table.add_row(*(Text(str(d.get(k)) if d.get(k) is not None else "–",
                                     style=style if k == "severity" else "") for k, _ in COLUMNS["defect"]))
            self.console.print(table)
        self.defects = []
        parts = [f"{k.replace('_', ' ')}: {v}" for k, v in summary.items() if v is not None]
        if self.hidden:
            parts.append(f"(--wide shows {len(self.hidden)} more column{'s' if len(self.hidden) > 1 else ''}: "
                         f"{', '.join(sorted(self.hidden))})")
            self.hidden = set()
        self.console.print(Text("  ".join(parts), style="dim"))
        self.console.print()

    def finish(self, summary: Row) -> None:
        pass


def make_output(fmt: str, out: TextIO | None = None, err: TextIO | None = None, *, wide: bool = False) -> Output:
    """The renderer for ``--format`` (``table``, ``json`` or ``jsonl``); ``wide``: every table column, whatever
    the width."""
    out = out or sys.stdout
    err = err or sys.stderr
    if fmt == "json":
        return JsonOutput(out)
    if fmt == "jsonl":
        return JsonlOutput(out)
    return TableOutput(out, err, wide=wide)


class Diagnostics:
    """Human messages on stderr: errors, warnings and the closing verdict."""

    def __init__(self, err: TextIO | None = None) -> None:
        self.console = Console(file=err or sys.stderr, highlight=False, soft_wrap=True)

    def error(self, message: str) -> None:
        """``kafkatool: error: ...`` in red."""
        self.console.print(Text.assemble(("kafkatool: error: ", "red bold"), printable(message, keep_newlines=True)))

    def warning(self, message: str) -> None:
        """``kafkatool: warning: ...`` in yellow."""
        self.console.print(Text.assemble(("kafkatool: warning: ", "yellow"), printable(message, keep_newlines=True)))

    def verdict(self, message: str, level: str) -> None:
        """A closing one-line verdict, green when ``level`` is ``healthy``, yellow when ``damaged``, red else."""
        style = {"healthy": "green bold", "damaged": "yellow bold"}.get(level, "red bold")
        self.console.print(Text(printable(message, keep_newlines=True), style=style))

    def note(self, message: str) -> None:
        """A plain dim line."""
        self.console.print(Text(printable(message, keep_newlines=True), style="dim"))


def progress(items: Iterable[Any], total: int, description: str, *, enabled: bool,
             err: TextIO | None = None) -> Iterable[Any]:
    """Wrap ``items`` in a rich progress bar on stderr when ``enabled`` (a terminal and a long job)."""
    if not enabled:
        yield from items
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(file=err or sys.stderr)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task(description, total=total)
        for item in items:
            yield item
            bar.advance(task)


Formatter = Callable[[Row], str]
