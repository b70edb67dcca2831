"""What every subcommand shares: turning errors into messages and exit codes, never tracebacks."""

from __future__ import annotations

import sys
from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any, TypeVar

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

#: The ranges of Kafka's numeric types: offsets and epoch-millisecond times are int64 (and never negative on the
#: command line), epochs, broker ids, partitions and byte settings int32. Every numeric option is held to its
#: type's range, so an out-of-range value is a usage error naming the option, not an overflow deeper in.
INT64_MAX = (1 << 63) - 1
INT32_MAX = (1 << 31) - 1

#: ``--follow-links``, on every subcommand that reads inputs (``run_guarded`` applies it).
FollowLinks = Annotated[bool, typer.Option(
    "--follow-links", help="Read symbolic links that lead out of the given tree (by default each is named as a "
                           "finding and not read; FIFOs, sockets and devices are never read).")]


def parse_broker_ids(value: str | None) -> list[int] | None:
    """``--isr``'s comma-separated broker ids (``None`` when not given or empty)."""
    try:
        ids = [int(x) for x in value.split(",")] if value else None
    except ValueError:
        raise UsageError(f"--isr expects comma-separated broker ids, not {value!r}") from None
    if ids is not None and any(not 0 <= i <= INT32_MAX for i in ids):
        raise UsageError(f"--isr: broker ids are 0 to {INT32_MAX}, not {value!r}")
    return ids


def offset_value(option: str, text: str) -> int:
    """An offset given in ``option``'s text: an integer from 0 to int64's maximum, else a usage error naming the
    option."""
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"{option} expects an offset (an integer), not {text!r}") from None
    if not 0 <= value <= INT64_MAX:
        raise UsageError(f"{option}: {value} is out of range (offsets are 0 to {INT64_MAX})")
    return value



#: glibc's ``mallopt`` parameter for the heap's top padding, and the padding asked for.
_M_TOP_PAD = -2
HEAP_TOP_PAD = 16 << 20


def steady_heap() -> None:
    """Ask glibc's allocator to grow the heap 16 MiB at a time (``M_TOP_PAD``). The volume writers allocate and free
    blocks of a few hundred KB per chunk (the chunk read, the text made from it); with the default padding each
    block is new memory the kernel hands over page by page: about 750,000 page faults and 1.8 s of system time for
    a deep dump of 1 GiB, against 21,000 and 0.15 s with it. Peak memory is unchanged (padding is address space
    until touched). A no-op where the C library has no ``mallopt``."""
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_TOP_PAD, HEAP_TOP_PAD)


def report_not_read(rows: list[dict[str, Any]]) -> bool:
    """Say on stderr each input entry named and not read (a document's ``not_read`` rows: a link out of the
    evidence tree, a FIFO, a device), for outputs with no place for file defects; whether there was any."""
    from kafkatool.render.output import Diagnostics

    for row in rows:
        Diagnostics().error(f"{row['file']}: {row['reason']}")
    return bool(rows)


def run_guarded(body: Callable[[], int], *, follow_links: bool = False) -> None:
    """Run a command body and exit with its code; known errors become one line on stderr. ``follow_links``
    (``--follow-links``) lets the reads follow symbolic links out of the evidence tree.

    Anything unexpected is reported as an internal error (exit 3) without a traceback, unless
    ``KAFKATOOL_DEBUG`` is set.
    """
    import os

    def error(message: str) -> None:  # the renderer is imported only when there is something to say
        from kafkatool.render.output import Diagnostics

        Diagnostics().error(message)

    steady_heap()
    if follow_links:
        from kafkatool.reading.context import set_follow_links

        set_follow_links(True)
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
