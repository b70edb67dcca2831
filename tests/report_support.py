"""Helpers of the report tests: run the CLI and read the report's figures, sections and tables back."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

from typer.testing import CliRunner

from kafkatool.cli import app

runner = CliRunner()
CLOCK = "1700003600000"  # the clock of Kafka's own loads in ../shared (loadTimeMs)


class ReportParser(HTMLParser):
    """Collects every element's attributes (by tag) and every table's rows (cell texts, with the row's class)."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.rows: list[tuple[str, list[str]]] = []
        self._row: list[str] | None = None
        self._row_class = ""
        self._cell: list[str] | None = None
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.elements.append((tag, a))
        if tag == "tr":
            self._row, self._row_class = [], a.get("class", "")
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append((self._row_class, self._row))
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        self.text.append(data)

    def figures(self, kind: str) -> list[dict[str, str]]:
        return [a for t, a in self.elements if t == "figure" and kind in a.get("class", "").split()]

    def by_id(self, ident: str) -> dict[str, str] | None:
        return next((a for _, a in self.elements if a.get("id") == ident), None)

    def rows_of(self, cls: str) -> list[list[str]]:
        return [cells for c, cells in self.rows if cls in c.split()]


def run_cli(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def make_report(out: Path, *paths: Path | str, extra: tuple[str, ...] = ()) -> tuple[int, str, ReportParser]:
    """``kafkatool report`` into ``out``; the exit code, the HTML and its parse."""
    code, _, err = run_cli("report", "--now", CLOCK, *extra, "-o", str(out), *map(str, paths))
    assert code in (0, 1), err
    html = out.read_text()
    parser = ReportParser()
    parser.feed(html)
    return code, html, parser


def json_of(*args: str) -> tuple[int, dict]:
    code, out, err = run_cli(*args)
    assert code in (0, 1), err
    return code, json.loads(out)


def num(value: str) -> int | None:
    return None if value in ("", "–") else int(value)
