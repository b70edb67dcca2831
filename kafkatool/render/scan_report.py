"""``kafkatool scan``'s closing report: where the tables went, fleet totals and the worst findings."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

import orjson
from rich.console import Console
from rich.table import Table
from rich.text import Text

from kafkatool.render.safe import for_people, human_console, json_bytes

SEVERITY_STYLE = {"error": "red bold", "warning": "yellow", "info": "dim"}


def render_scan(summary: dict[str, Any], fmt: str, out: TextIO | None = None) -> None:
    """The summary as JSON (one object, or one line for jsonl) or as a short human report."""
    out = out or sys.stdout
    if fmt in ("json", "jsonl"):
        option = orjson.OPT_INDENT_2 if fmt == "json" else 0
        out.write(json_bytes({"type": "scan", **summary} if fmt == "jsonl" else summary, option=option).decode())
        out.write("\n")
        return
    summary = for_people(summary)
    console = human_console(out)
    counts = summary["counts"]
    console.print(Text.assemble(
        ("scanned ", "bold"), f"{summary['log_dirs']} log dir(s), {summary['partitions']} partition(s), "
        f"{summary['segments']} segment(s), {summary['bytes']:,} bytes: {summary['batches']:,} batches, "
        f"{summary['records']:,} records, {summary['producers']:,} producer(s), "
        f"{summary['open_transactions']} open transaction(s)  [{summary['engine']}, {summary['seconds']:.1f} s]"))
    console.print(Text.assemble(("tables ", "bold"), f"{summary['out']}/{{batches,partitions,producers,findings}}"))
    if summary["invalid_crc_batches"]:
        console.print(Text(f"{summary['invalid_crc_batches']} batch(es) fail their CRC", style="red bold"))
    worst = summary["worst_findings"]
    if worst:
        table = Table(box=None, show_edge=False, header_style="bold", pad_edge=False, title="worst findings",
                      title_justify="left")
        for name in ("severity", "code", "log dir", "file", "byte"):
            table.add_column(name, overflow="fold", justify="right" if name == "byte" else "left")
        table.add_column("what it means", overflow="fold", ratio=1)
        for f in worst:
            table.add_row(Text(f["severity"], style=SEVERITY_STYLE.get(f["severity"], "")), f["code"],
                          f["log_dir"] or "", f["file"] or "", "" if f["position"] is None else str(f["position"]),
                          f["reason"])
        console.print(table)
    style = "red bold" if counts["error"] else ("yellow bold" if counts["warning"] else "green bold")
    mark = "✗" if counts["error"] else ("!" if counts["warning"] else "✓")
    console.print(Text(f"{mark} {counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} note(s)",
                       style=style))


@contextmanager
def byte_progress(total: int, description: str, *, enabled: bool,
                  err: TextIO | None = None) -> Iterator[Callable[[int], None]]:
    """A progress bar over ``total`` bytes on stderr (a no-op when not ``enabled``); yields ``advance(n)``."""
    if not enabled:
        yield lambda n: None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                  TimeRemainingColumn(), console=Console(file=err or sys.stderr), transient=True) as bar:
        task = bar.add_task(description, total=max(total, 1))
        yield lambda n: bar.advance(task, n)


@contextmanager
def phase_progress(description: str, *, enabled: bool, err: TextIO | None = None) -> Iterator[Callable[[str], None]]:
    """A spinner on stderr naming the step under way, with the time taken, for work that is not counted in bytes
    (a no-op when not ``enabled``); yields ``phase(text)`` to name the next step."""
    if not enabled:
        yield lambda text: None
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=Console(file=err or sys.stderr), transient=True) as bar:
        task = bar.add_task(description, total=None)
        yield lambda text: bar.update(task, description=text)


#: Below this many segment bytes a read takes well under a second: no progress bar.
PROGRESS_MIN_BYTES = 64 << 20


def wants_progress(total: int, *, quiet: bool, err: TextIO | None = None) -> bool:
    """Whether a reading progress bar is worth showing: stderr is a terminal, ``--quiet`` was not given, and
    there are enough bytes to take more than about a second."""
    stream = err or sys.stderr
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty and not quiet and total >= PROGRESS_MIN_BYTES


@contextmanager
def stage_progress(poll: Callable[[], list[tuple[int, str, int, int]]], *, enabled: bool,
                   err: TextIO | None = None, every_s: float = 0.25) -> Iterator[None]:
    """One bar per running Spark stage on stderr (``poll()`` gives ``(stage id, name, done, tasks)``), refreshed
    from a background thread while the block runs; a no-op when not ``enabled``."""
    if not enabled:
        yield
        return
    import threading

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    stop = threading.Event()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(file=err or sys.stderr), transient=True) as bar:
        tasks: dict[int, Any] = {}

        def refresh() -> None:
            while not stop.wait(every_s):
                try:
                    stages = poll()
                except Exception:  # the session is stopping: nothing more to show
                    return
                for stage_id, name, done, total in stages:
                    if stage_id not in tasks:
                        tasks[stage_id] = bar.add_task(f"stage {stage_id} {name}", total=max(total, 1))
                    bar.update(tasks[stage_id], completed=done, total=max(total, 1))
                running = {s[0] for s in stages}
                for stage_id in [t for t in tasks if t not in running]:
                    bar.remove_task(tasks.pop(stage_id))

        thread = threading.Thread(target=refresh, name="spark-progress", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
