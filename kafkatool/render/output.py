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
from itertools import repeat
from operator import is_not
from types import NoneType
from typing import Any, Protocol, TextIO

import orjson
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from kafkatool.render.safe import (
    TIME_LIMIT_MS,
    JsonSafeWriter,
    for_people,
    human_console,
    is_time_key,
    iso_second,
    iso_time,
    json_bytes,
    printable,
)

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
    return json_bytes(obj, default=_json_default).decode()


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
        self._write(json_bytes(obj, default=_json_default, option=orjson.OPT_APPEND_NEWLINE))

    def begin_file(self, path: str, kind: str, info: Row) -> None:
        self.path = path
        self._line({"type": "file", "path": path, "kind": kind, **info})

    def row(self, row: Row) -> None:
        row["file"] = self.path
        self._line(row)

    def write_rows(self, block: bytes) -> None:
        """Rows already written as JSON lines (the native writer's, ``render.jsonl_native``)."""
        self._write(block)

    def end_file(self, summary: Row) -> None:
        self._line({"type": "file_end", "path": self.path, **summary})

    def finish(self, summary: Row) -> None:
        self._line({"type": "summary", **summary})
        buffer = getattr(self.out, "buffer", None)
        if buffer is not None:
            buffer.flush()
        self.out.flush()


class JsonOutput:
    """A single document: ``{"files": [{path, kind, ..., rows by type}], "summary": {...}}``, written as the rows
    come (byte for byte what ``json.dump(..., indent=2)`` of the whole document writes), so a file of millions of
    rows is never held; a file's defects are held until its end (they follow its rows)."""

    def __init__(self, out: TextIO) -> None:
        self.stream = out
        self.out = JsonSafeWriter(out)  # control, C1 and bidi characters escaped as \uXXXX
        self.enc = json.JSONEncoder(indent=2, ensure_ascii=False, default=_json_default)
        self.started = False
        self.items = 0
        self.defects: list[Row] = []

    def _value(self, obj: Any, level: int) -> str:
        """``obj`` as ``json.dump`` indents it at nesting ``level`` (its strings hold no raw line ends)."""
        return self.enc.encode(obj).replace("\n", "\n" + "  " * level)

    def begin_file(self, path: str, kind: str, info: Row) -> None:
        self.out.write(",\n    {" if self.started else '{\n  "files": [\n    {')
        self.started = True
        head = {"path": path, "kind": kind, **info}
        self.out.write(",".join(f"\n      {self.enc.encode(k)}: {self._value(v, 3)}" for k, v in head.items()))
        self.items = 0
        self.defects = []

    def row(self, row: Row) -> None:
        if row.get("type") == "defect":
            self.defects.append({k: v for k, v in row.items() if k != "type"})
            return
        self.out.write(',\n      "items": [\n        ' if not self.items else ",\n        ")
        self.out.write(self._value(row, 4))
        self.items += 1

    def end_file(self, summary: Row) -> None:
        self.out.write("\n      ]" if self.items else ',\n      "items": []')
        self.out.write(f',\n      "defects": {self._value(self.defects, 3)},\n'
                       f'      "summary": {self._value(summary, 3)}\n    }}')
        self.defects = []

    def finish(self, summary: Row) -> None:
        self.out.write("\n  ]" if self.started else '{\n  "files": []')
        self.out.write(f',\n  "summary": {self._value(summary, 1)}\n}}\n')
        self.stream.flush()


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


def _column(rows: list[Row], key: str, colour: bool) -> tuple[list[str], list[str | None] | None]:
    """One column's cells as plain text (data escaped, times ISO-8601) and, for a ``colour`` terminal, their styles
    (``None``: unstyled).

    Built a column at a time from the raw rows, without rich: on small-batch segments this runs for millions
    of rows, so it costs about as much as writing the same rows as JSON lines."""
    values = list(map(dict.get, rows, repeat(key)))
    styles: list[str | None] | None = None
    if key == "flags":  # map() all the way: a row's flags cost a dictionary look-up in C
        flags = zip(map(bool, map(dict.get, rows, repeat("is_transactional"))),
                    map(bool, map(dict.get, rows, repeat("is_control"))),
                    map(is_not, map(dict.get, rows, repeat("delete_horizon_ms")), repeat(None)), strict=True)
        return list(map(FLAG_TEXT.__getitem__, flags)), None
    if key == "crc":
        texts = list(map(format, values, repeat("08x"))) if None not in values else \
            ["" if v is None else f"{v:08x}" for v in values]
        valid = list(map(dict.get, rows, repeat("crc_valid")))
        if False in valid:
            styles = ["red bold" if v is False else None for v in valid]
        return texts, styles
    if key == "header_keys":
        return [printable(",".join(v)) if v else "" for v in values], None
    if key == "control":
        texts = [_control(v) if isinstance(v, dict) else _text(v) for v in values]
        return texts, ["magenta" if isinstance(v, dict) else "dim" if v is None else None for v in values]
    return _plain_column(values, key, colour)


def _plain_column(values: list[Any], key: str, colour: bool) -> tuple[list[Any], list[str | None] | None]:
    """A column's cells from its values (ints, strings, ``None``...): :func:`_column` for the keys with no rule of
    their own, and the native batch columns' (:meth:`TableOutput.batch_columns`)."""
    styles: list[str | None] | None = None
    if is_time_key(key):
        values = _times(values)
    types = set(map(type, values))
    if types == {int}:  # the usual columns take the shortest ways; numbers stay numbers (%d lays them out)
        return values, None
    if types == {str} and "".join(values).isprintable():
        texts = values
    elif types <= {int, NoneType}:
        texts = ["–" if v is None else str(v) for v in values]
    else:
        texts = [str(v) if type(v) is int else v if type(v) is str and v.isprintable() else _text(v)
                 for v in values]
    if NoneType in types and colour:
        styles = ["dim" if v is None else None for v in values]
    return texts, styles


def _or_none(values: Any) -> list[Any]:
    """An int column with Kafka's -1 sentinel as ``None`` (what ``engine.rows.entry_row`` puts in a row)."""
    unset = values == -1
    if not unset.any():
        return values.tolist()  # type: ignore[no-any-return]
    if unset.all():
        return [None] * len(values)
    return [None if v == -1 else v for v in values.tolist()]


def _batch_values(positions: Any, heads: Any) -> dict[str, Any]:
    """The batch table's columns from header columns: for each key the values ``entry_row`` would give (through
    :func:`_plain_column`), and for ``flags`` and ``crc`` their cells as :func:`_column` makes them."""
    import numpy as np

    from kafkatool.engine.rows import TIMESTAMP_LABELS
    from kafkatool.storage.codecs import CODEC_BITS, CODEC_LABEL_BY_BITS

    attrs = heads["attributes"].astype(np.int64)
    flag_labels = np.array([FLAG_TEXT[(bool(i & 1), bool(i & 2), bool(i & 4))] for i in range(8)], dtype=object)
    codec_labels = np.array(CODEC_LABEL_BY_BITS, dtype=object)
    return {
        "position": positions.tolist(),
        "base_offset": heads["base_offset"].tolist(),
        "last_offset": (heads["base_offset"].astype(np.int64) + heads["last_offset_delta"]).tolist(),
        "count": heads["records_count"].tolist(),
        "size": (heads["batch_length"].astype(np.int64) + 12).tolist(),
        "magic": heads["magic"].tolist(),
        "compression": codec_labels[attrs & CODEC_BITS].tolist(),
        "partition_leader_epoch": _or_none(heads["partition_leader_epoch"]),
        "producer_id": _or_none(heads["producer_id"]),
        "producer_epoch": _or_none(heads["producer_epoch"]),
        "base_sequence": _or_none(heads["base_sequence"]),
        "flags": (flag_labels[(attrs >> 4) & 7].tolist(), None),
        "timestamp_type": np.array(TIMESTAMP_LABELS, dtype=object)[(attrs >> 3) & 1].tolist(),
        "max_timestamp": _or_none(heads["max_timestamp"]),
        "crc": (list(map(format, heads["crc"].tolist(), repeat("08x"))), None),
    }


#: The batch columns whose -1 is shown as an absent value.
NULLABLE = ("partition_leader_epoch", "producer_id", "producer_epoch", "base_sequence")


def _batch_texts(heads: Any) -> dict[str, list[str]]:
    """Cells of the nullable columns and of ``max_timestamp`` as :func:`_plain_column` makes them without colour
    (``–`` for -1, ISO-8601 times), computed a column at a time in numpy; a column with another value it would
    show differently (a time past year 9999 or below 0) is left to it."""
    import numpy as np

    out: dict[str, list[str]] = {}
    for key in NULLABLE:
        column = heads[key]
        unset = column == -1
        if unset.any():  # all-int columns already take _plain_column's shortest way
            out[key] = np.where(unset, "–", column.astype(str)).tolist()
    times = heads["max_timestamp"].astype(np.int64)
    unset = times == -1
    if bool(((times >= 0) & (times < TIME_LIMIT_MS) | unset).all()):
        text = np.char.add(np.datetime_as_string(times.astype("datetime64[ms]"), unit="ms"), "Z")
        out["max_timestamp"] = np.where(unset, "–", text).tolist()
    return out


def _native_spec(positions: Any, heads: Any) -> tuple[list[Any], list[int], list[int], list[int], list[list[str]]]:
    """The batch table's columns for the native table writer (``table_widths``/``table_lines``), in
    ``COLUMNS["batch"]`` order: int64 arrays, cell kinds (0 number, 1 number or ``–`` for -1, 2 label, 3 time,
    4 CRC), label shifts and masks, labels."""
    import numpy as np

    from kafkatool.engine.rows import TIMESTAMP_LABELS
    from kafkatool.storage.codecs import CODEC_BITS, CODEC_LABEL_BY_BITS

    def col(name: str) -> Any:
        return np.ascontiguousarray(heads[name], dtype=np.int64)

    base = col("base_offset")
    attrs = col("attributes")
    flags = [FLAG_TEXT[(bool(i & 1), bool(i & 2), bool(i & 4))] for i in range(8)]
    spec: dict[str, tuple[Any, int, int, int, list[str]]] = {
        "position": (np.ascontiguousarray(positions, dtype=np.int64), 0, 0, 0, []),
        "base_offset": (base, 0, 0, 0, []),
        "last_offset": (base + col("last_offset_delta"), 0, 0, 0, []),
        "count": (col("records_count"), 0, 0, 0, []),
        "size": (col("batch_length") + 12, 0, 0, 0, []),
        "magic": (col("magic"), 0, 0, 0, []),
        "compression": (attrs, 2, 0, CODEC_BITS, list(CODEC_LABEL_BY_BITS)),
        "partition_leader_epoch": (col("partition_leader_epoch"), 1, 0, 0, []),
        "producer_id": (col("producer_id"), 1, 0, 0, []),
        "producer_epoch": (col("producer_epoch"), 1, 0, 0, []),
        "base_sequence": (col("base_sequence"), 1, 0, 0, []),
        "flags": (attrs, 2, 4, 7, flags),
        "timestamp_type": (attrs, 2, 3, 1, list(TIMESTAMP_LABELS)),
        "max_timestamp": (col("max_timestamp"), 3, 0, 0, []),
        "crc": (col("crc"), 4, 0, 0, []),
    }
    return ([spec[k][0] for k, _ in COLUMNS["batch"]], [spec[k][1] for k, _ in COLUMNS["batch"]],
            [spec[k][2] for k, _ in COLUMNS["batch"]], [spec[k][3] for k, _ in COLUMNS["batch"]],
            [spec[k][4] for k, _ in COLUMNS["batch"]])


def _batch_rows(positions: Any, heads: Any) -> list[Row]:
    """Header columns as the rows ``engine.rows.entry_row`` makes (the keys the table reads), for the rare chunk
    shared with rows the Python walk made."""
    values = _batch_values(positions, heads)
    keys = [k for k in values if k not in ("flags", "crc")]
    attrs = heads["attributes"].tolist()
    rows: list[Row] = []
    for i, (a, crc, base_ts) in enumerate(zip(attrs, heads["crc"].tolist(), heads["base_timestamp"].tolist(),
                                              strict=True)):
        row: Row = {"type": "batch", **{k: values[k][i] for k in keys}}
        row.update(is_transactional=bool(a & 0x10), is_control=bool(a & 0x20),
                   delete_horizon_ms=base_ts if a & 0x40 else None, crc=crc, crc_valid=True)
        rows.append(row)
    return rows


#: ``.mmmZ``, the end of an ISO-8601 time, by milliseconds.
MILLIS = [f".{ms:03d}Z" for ms in range(1000)]


def _times(values: list[Any]) -> list[Any]:
    """Epoch milliseconds as ISO-8601 (:func:`iso_time`), other values as they are; the second's text is
    reused while the times stay in it (a table shows millions of times, and mostly of few seconds)."""
    out: list[Any] = []
    last = prefix = None
    for v in values:
        if type(v) is not int or not 0 <= v < TIME_LIMIT_MS:
            out.append(iso_time(v) if type(v) is int else v)
            continue
        second, ms = divmod(v, 1000)
        if second != last:
            last, prefix = second, iso_second(second)
        out.append(f"{prefix}{MILLIS[ms]}")
    return out


def _text(value: Any) -> str:
    """A cell's text: ``–`` for an absent value, JSON for a document, every string :func:`printable`."""
    if value is None:
        return "–"
    if isinstance(value, (dict, list, tuple)):
        return printable(dumps(for_people(value)))
    return printable(str(value))


def _control(value: Row) -> str:
    parts = [str(value.get("type_name") or f"type {value.get('type')}")]
    if value.get("coordinator_epoch") is not None:
        parts.append(f"coord epoch {value['coordinator_epoch']}")
    return printable(" ".join(parts))


def _decoded_cell(part: Any) -> Any:
    """A decoded key or value as ``Type vN {data}`` (its times ISO-8601); raw hex (undecodable) as is."""
    if isinstance(part, dict) and "data" in part:
        return f"{part.get('type')} v{part.get('version')} {dumps(for_people(part['data']))}"
    return part


#: A batch's flags column by (transactional, control, delete horizon set).
FLAG_TEXT = {(txn, ctrl, horizon): " ".join(name for name, on in (("txn", txn), ("ctrl", ctrl), ("horizon", horizon))
                                            if on)
             for txn in (False, True) for ctrl in (False, True) for horizon in (False, True)}


def _width(text: str) -> int:
    return len(text) if text.isascii() else cell_len(text)


def _narrow(texts: list[Any]) -> bool:
    """Whether each character of ``texts`` takes one terminal cell (ASCII, or the dash of an absent value)."""
    return (texts and type(texts[0]) is int) or "".join(texts).replace("–", "").isascii()


def _widest(texts: list[Any]) -> int:
    """The terminal cells of the widest of ``texts`` (strings, or all numbers)."""
    if texts and type(texts[0]) is int:
        return max(len(str(max(texts))), len(str(min(texts))))
    return max(map(len if _narrow(texts) else cell_len, texts), default=0)


def _strs(texts: list[Any]) -> list[str]:
    """A column's cells as strings (a column of numbers is kept as numbers until it must be text)."""
    return list(map(str, texts)) if texts and type(texts[0]) is int else texts


def _pad(texts: list[str], width: int, right: bool) -> list[str]:
    """``texts`` padded to ``width`` terminal cells (right- or left-justified)."""
    if _narrow(texts):
        return [t.rjust(width) for t in texts] if right else [t.ljust(width) for t in texts]
    return [" " * (width - cell_len(t)) + t if right else t + " " * (width - cell_len(t)) for t in texts]


SEVERITY_STYLE = {"error": "red bold", "warning": "yellow", "info": "cyan"}


#: Columns that are left-justified (the rest are numbers, right-justified) and the one that wraps.
LEFT = frozenset({"key", "value", "reason", "topic", "flags", "control"})
WRAP = "value"


class TableOutput:
    """Tables, one block per input file, defects listed after the file's rows.

    Row tables are laid out here and written as plain lines (with the console's colour codes on a terminal):
    a rich Table costs about a millisecond a row, a hundred times the cost of the rows themselves."""

    def __init__(self, out: TextIO, err: TextIO, *, color: bool | None = None, wide: bool = False) -> None:
        self.console = human_console(out, piped_width=200, color=color)
        self.out = out
        self.wide = wide
        self.hidden: set[str] = set()  # columns left out of this file's tables to fit the width
        self.chosen: dict[str, list[tuple[str, str]]] = {}  # per row type: the columns this file's tables show
        self.pending: list[Row] = []
        self.pending_type = ""
        self.mixed = False  # whether pending holds records as well as the batches holding them
        self.defects: list[Row] = []
        self.shown_header: set[str] = set()
        self.sgr: dict[str, tuple[str, str]] = {}  # style -> (start, end) codes; empty without colour
        self.held: list[tuple[Any, Any]] = []  # batches as columns (batch_columns), fewer than a chunk
        self.width = self.console.width

    def _codes(self, style: str) -> tuple[str, str]:
        """The escape codes the console writes around text of ``style`` (none without colour)."""
        if style not in self.sgr:
            if not self.console.is_terminal or self.console.no_color or self.console.color_system is None:
                self.sgr[style] = ("", "")
            else:
                with self.console.capture() as captured:
                    self.console.print(Text("\0", style=style), end="")
                start, _, stop = captured.get().partition("\0")
                self.sgr[style] = (start, stop)
        return self.sgr[style]

    def begin_file(self, path: str, kind: str, info: Row) -> None:
        details = printable("  ".join(f"{k}: {v}" for k, v in info.items() if v is not None))
        self.console.print(Text.assemble((printable(path), "bold"), "  ", (kind, "cyan"), "  ", (details, "dim")))
        self.shown_header = set()
        self.chosen = {}
        self.width = self.console.width  # asked once a file: the console asks the terminal every time

    def row(self, row: Row) -> None:
        rtype = row.get("type", "")
        if rtype == "defect":
            self.defects.append(for_people(row))
            return
        if self.held:  # batches held as columns: a batch row joins their chunk, as it would join their rows
            self._release_held(as_rows=rtype == "batch" and not row.get("records"))
        if rtype != self.pending_type or len(self.pending) >= TABLE_CHUNK:
            self._flush()
            self.pending_type = rtype
        self.pending.append(row)
        for rec in row.get("records") or ():
            if len(self.pending) >= TABLE_CHUNK:
                self._flush()
                self.pending_type = rtype
            shown = {**rec, "type": "record"}
            self.mixed = True
            if "decoded" in rec:  # an internal topic's record: its decoded key and value instead of raw bytes
                dec = rec["decoded"]
                shown["key"] = _decoded_cell(dec["key"])
                shown["value"] = "<tombstone>" if dec["tombstone"] else _decoded_cell(dec["value"])
            self.pending.append(shown)

    def _flush(self) -> None:
        if self.held:
            self._release_held(as_rows=False)
        if not self.pending:
            return
        if not self.mixed:  # rows of one type (no records among batches): one table
            self._table(self.pending_type, self.pending)
            self.pending = []
            return
        self.mixed = False
        groups: list[tuple[str, list[Row]]] = []
        for r in self.pending:
            t = r.get("type", "")
            if groups and groups[-1][0] == t:
                groups[-1][1].append(r)
            else:
                groups.append((t, [r]))
        for rtype, rows in groups:
            self._table(rtype, rows)
        self.pending = []

    def _table(self, rtype: str, rows: list[Row]) -> None:
        """Print one table of rows of one type: columns chosen to fit the width, lines written directly."""
        cols = COLUMNS.get(rtype) or [(k, printable(k)) for k in rows[0] if k != "type"]
        self._lay_out(rtype, cols, len(rows), lambda key, colour: _column(rows, key, colour))

    def batch_columns(self, positions: Any, heads: Any) -> None:
        """Take clean magic 2 batches given as columns (the native walk's: ``positions`` and the structured
        header array of ``schema.batch_columns.native_header_dtype``) and print them exactly as their rows would
        print, in the same chunks of :data:`TABLE_CHUNK`, without a row object per batch (on small-batch segments
        that is most of the run)."""
        if self.pending and (self.pending_type != "batch" or self.mixed):
            self._flush()
        if self.pending:  # batch rows pending: their chunk is filled up as rows would fill it
            take = TABLE_CHUNK - len(self.pending)
            self.pending += _batch_rows(positions[:take], heads[:take])
            positions, heads = positions[take:], heads[take:]
            if len(self.pending) < TABLE_CHUNK:
                return
            self._flush()
        self.pending_type = "batch"
        self.held.append((positions, heads))
        held = sum(len(p) for p, _ in self.held)
        if held < TABLE_CHUNK:
            return
        import numpy as np

        positions = np.concatenate([p for p, _ in self.held])
        heads = np.concatenate([h for _, h in self.held])
        full = len(positions) - len(positions) % TABLE_CHUNK
        bounds = [(start, start + TABLE_CHUNK) for start in range(0, full, TABLE_CHUNK)]
        spec = self._spec(positions, heads)  # the native writer's columns, made once for every chunk
        if spec is not None:
            self._native_tables(spec, bounds, positions, heads)
        else:
            for start, stop in bounds:
                self._column_table(positions[start:stop], heads[start:stop])
        self.held = [(positions[full:], heads[full:])] if full < len(positions) else []

    def _spec(self, positions: Any, heads: Any) -> tuple[Any, ...] | None:
        """The columns for the native table writer, or ``None`` without the core or on a colour terminal."""
        from kafkatool.schema.native import core

        if core() is None or self._codes("dim")[0]:
            return None
        return _native_spec(positions, heads)

    def _column_table(self, positions: Any, heads: Any, native: bool = True) -> None:
        spec = self._spec(positions, heads) if native else None
        if spec is not None:
            self._native_tables(spec, [(0, len(positions))], positions, heads)
            return
        values = _batch_values(positions, heads)
        plain = _batch_texts(heads)  # cells without styles, made in numpy: what _plain_column gives without colour

        def column(key: str, colour: bool) -> tuple[list[Any], list[str | None] | None]:
            if key in ("flags", "crc"):
                return values[key]  # type: ignore[no-any-return]
            if not colour and key in plain:
                return plain[key], None
            return _plain_column(values[key], key, colour)

        self._lay_out("batch", COLUMNS["batch"], len(positions), column)

    def _native_tables(self, spec: tuple[Any, ...], bounds: list[tuple[int, int]], positions: Any,
                       heads: Any) -> None:
        """The tables of rows ``start:stop`` of ``spec`` (:func:`_native_spec`) for each of ``bounds``, their cells
        and lines written by the native core (``_core/src/table.rs``) in one block, laid out as :meth:`_lay_out`
        lays them out (the columns chosen per table); a table no plain layout fits (the rich table's case) is
        printed by :meth:`_column_table` from ``positions`` and ``heads`` instead."""
        from kafkatool.schema.native import core

        native = core()
        assert native is not None
        index = {key: i for i, (key, _) in enumerate(COLUMNS["batch"])}
        tables: list[tuple[int, int, bytes, list[int], list[int], list[bool]]] = []
        for (start, stop), found in zip(bounds, native.table_widths(*spec, bounds), strict=True):
            cols = COLUMNS["batch"]
            widths = {key: max(len(header), width) for (key, header), width in zip(cols, found, strict=True)}
            if not self.wide:
                allowed = self.chosen.get("batch", cols)
                shown = self.chosen["batch"] = fit_columns("batch", allowed, widths, self.width)
                self.hidden |= {header for key, header in cols if (key, header) not in shown}
                cols = shown
            if sum(widths[key] for key, _ in cols) + GAP * (len(cols) - 1) > self.width:
                self._write_tables(native.table_lines(*spec, tables))
                tables = []
                self._column_table(positions[start:stop], heads[start:stop], native=False)
                continue
            header = "  ".join(h.ljust(widths[k]) if k in LEFT else h.rjust(widths[k]) for k, h in cols)
            tables.append((start, stop, (header.rstrip() + "\n").encode(), [index[k] for k, _ in cols],
                           [widths[k] for k, _ in cols], [k not in LEFT for k, _ in cols]))
        self._write_tables(native.table_lines(*spec, tables))

    def _write_tables(self, block: bytes) -> None:
        """Tables the native core wrote, to the output (to the bytes under a text stream, after flushing it)."""
        if not block:
            return
        buffer = getattr(self.out, "buffer", None)
        if buffer is None:
            self.out.write(block.decode())
            return
        self.out.flush()
        buffer.write(block)

    def _release_held(self, as_rows: bool) -> None:
        """The batches held as columns: printed (``as_rows`` false) or made rows pending (a batch row follows)."""
        import numpy as np

        held, self.held = self.held, []
        if not held:
            return
        # fewer than a chunk in all, held from one or more runs (damage between them): one table, as rows make it
        positions = np.concatenate([p for p, _ in held])
        heads = np.concatenate([h for _, h in held])
        if as_rows:
            self.pending += _batch_rows(positions, heads)
        elif len(positions):
            self._column_table(positions, heads)

    def _lay_out(self, rtype: str, cols: list[tuple[str, str]], count: int,
                 column: Callable[[str, bool], tuple[list[Any], list[str | None] | None]]) -> None:
        """Lay out and write one table of ``count`` rows whose cells ``column(key, colour)`` gives."""
        colour = bool(self._codes("dim")[0])
        if not self.wide and rtype in KEEP_FIRST:
            # Chosen on a file's first table of each row type and kept; a later table with wider cells can only
            # leave more columns out (never bring one back), so the columns stay steady within a file.
            allowed = self.chosen.get(rtype, cols)
            cells = {key: column(key, colour) for key, _ in allowed}
            widths = {key: max(len(header), _widest(cells[key][0])) for key, header in allowed}
            shown = self.chosen[rtype] = fit_columns(rtype, allowed, widths, self.width)
            self.hidden |= {header for key, header in cols if (key, header) not in shown}
            cols = shown
        else:
            cells = {key: column(key, colour) for key, _ in cols}
            widths = {key: max(len(header), _widest(cells[key][0])) for key, header in cols}
        room = self.width
        total = sum(widths[key] for key, _ in cols) + GAP * (len(cols) - 1)
        last = cols[-1][0]
        if total > room and last == WRAP and total - widths[last] + min(widths[last], FLEX_MIN) <= room:
            widths[last] = room - (total - widths[last])  # the wrapping column takes what is left
        elif total > room:  # no plain layout fits: rich shares the width out
            self.console.print(self._rich_table(rtype, cols, cells, count))
            return
        header = "  ".join(self._styled(h.ljust(widths[k]) if k in LEFT else h.rjust(widths[k]), "bold dim")
                           for k, h in cols)
        specs: list[str] = []  # one %-field per column: the row's line is one formatting in C
        columns: list[list[str]] = []
        for key, _ in cols:
            texts, styles = cells[key]
            right = key not in LEFT
            numbers = texts and type(texts[0]) is int
            style = "dim" if rtype == "record" and key == "offset" else None
            if key == last and key == WRAP:
                specs.append("%s")
                columns.append(_strs(texts))  # wrapped below when too wide, unpadded
            elif _narrow(texts) and not (colour and (styles is not None or style is not None)):
                specs.append(f"%{'' if right else '-'}{widths[key]}{'d' if numbers else 's'}")
                columns.append(texts)
            else:
                padded = _pad(_strs(texts), widths[key], right)
                if colour and (styles is not None or style is not None):
                    marks = styles or [None] * len(padded)
                    padded = [self._styled(t, style or s) for t, s in zip(padded, marks, strict=True)]
                specs.append("%s")
                columns.append(padded)
        line = "  ".join(specs).__mod__
        lines = [header.rstrip()]
        if last == WRAP:
            width = widths[last]
            blank = "  ".join(" " * widths[k] for k, _ in cols[:-1])
            for parts in zip(*columns, strict=True):
                value = parts[-1]
                if _width(value) <= width:
                    lines.append(line(parts).rstrip())
                    continue
                pieces = [text.plain for text in Text(value).wrap(self.console, width)] or [""]
                lines.append(line((*parts[:-1], pieces[0])).rstrip())
                lines += [f"{blank}  {piece}".rstrip() for piece in pieces[1:]]
        elif last in LEFT:
            lines += [text.rstrip() for text in map(line, zip(*columns, strict=True))]
        else:
            lines += map(line, zip(*columns, strict=True))
        lines.append("")
        self.out.write("\n".join(lines))

    def _styled(self, text: str, style: str | None) -> str:
        if style is None:
            return text
        start, stop = self._codes(style)
        if not start:
            return text
        core = text.strip(" ")
        if not core:
            return text
        i = text.index(core)
        return f"{text[:i]}{start}{core}{stop}{text[i + len(core):]}"

    def _rich_table(self, rtype: str, cols: list[tuple[str, str]],
                    cells: dict[str, tuple[list[str], list[str | None] | None]], count: int) -> Table:
        """The same table as a rich Table, for the rare one whose cells fit no plain layout."""
        table = Table(box=None, pad_edge=False, show_header=True, header_style="bold dim",
                      title=None, show_edge=False)
        for key, header in cols:
            table.add_column(header, justify="left" if key in LEFT else "right", no_wrap=key not in ("reason", "value"),
                             style="dim" if rtype == "record" and key == "offset" else None)
        texts = [_strs(cells[k][0]) for k, _ in cols]
        styles = [cells[k][1] or [None] * count for k, _ in cols]
        for i in range(count):
            table.add_row(*(Text(t[i], style=s[i] or "") for t, s in zip(texts, styles, strict=True)))
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
