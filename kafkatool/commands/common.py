"""What every subcommand shares: turning errors into messages and exit codes, never tracebacks."""

from __future__ import annotations

import sys
from collections.abc import Callable
from enum import StrEnum
from typing import TypeVar

import typer

from kafkatool.errors import ExitCode, KafkatoolError, UnreadableInputError, UsageError


class OutputFormat(StrEnum):
    """The output formats of the commands that print rows: a rich table on a terminal, or data for machines."""

    table = "table"
    json = "json"
    jsonl = "jsonl"


class FailOn(StrEnum):
    """The severity from which findings make the exit code 1."""

    error = "error"
    warning = "warning"
    info = "info"
    never = "never"

T = TypeVar("T")


def parse_broker_ids(value: str | None) -> list[int] | None:
    """``--isr``'s comma-separated broker ids (``None`` when not given or empty)."""
    try:
        return [int(x) for x in value.split(",")] if value else None
    except ValueError:
        raise UsageError(f"--isr expects comma-separated broker ids, not {value!r}") from None


def run_guarded(body: Callable[[], int]) -> None:
    """Run a command body and exit with its code; known errors become one line on stderr.

    Anything unexpected is reported as an internal error (exit 3) without a traceback, unless
    ``KAFKATOOL_DEBUG`` is set.
    """
    import os

    def error(message: str) -> None:  # the renderer is imported only when there is something to say
        from kafkatool.render.output import Diagnostics

        Diagnostics().error(message)

    try:
        code = body()
    except KafkatoolError as err:
        from kafkatool.reading.files import explain_missing

        error(str(explain_missing(err) if isinstance(err, UnreadableInputError) else err))
        raise typer.Exit(int(err.exit_code)) from None
    except KeyboardInterrupt:
        error("interrupted")
        raise typer.Exit(130) from None
    except BrokenPipeError:
        sys.stderr.close()
        raise typer.Exit(0) from None
    except Exception as err:  # a bug: still no traceback for the user
        if os.environ.get("KAFKATOOL_DEBUG"):
            raise
        error(f"internal error: {type(err).__name__}: {err} (set KAFKATOOL_DEBUG=1 for a traceback)")
        raise typer.Exit(int(ExitCode.UNREADABLE)) from None
    raise typer.Exit(code)
