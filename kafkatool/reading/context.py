"""The limits of the reads in progress: one place where a reading function finds them when its caller gave none.

Reading functions take ``limits: ReadLimits | None`` and pass ``resolve(limits).max_decompressed_bytes`` down to
the schema decoders explicitly; below this layer nothing looks limits up. ``None`` means "the limits this run was
started with": the command line sets them once (``kafkatool --max-decompressed-bytes N``, see
:func:`using_limits`) so that commands need not carry them through every call, and the fleet sets them around
each unit of work from its plan (in worker processes and Spark executors, which never saw the command line).
A :class:`~contextvars.ContextVar`, not a module global: a scope ends with its ``with`` block. Kafka has no
counterpart (its reads are bounded by ``message.max.bytes`` and fetch sizes, not by what a batch inflates to).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token

from kafkatool.schema.codecs import DEFAULT_LIMITS, ReadLimits

_LIMITS: ContextVar[ReadLimits] = ContextVar("kafkatool_read_limits", default=DEFAULT_LIMITS)


def current_limits() -> ReadLimits:
    """The limits in force: those of the innermost :func:`using_limits` (or :func:`set_limits`), else the
    defaults."""
    return _LIMITS.get()


def resolve(limits: ReadLimits | None) -> ReadLimits:
    """``limits`` when given, else :func:`current_limits`: what a reading function does with its parameter."""
    return limits if limits is not None else _LIMITS.get()


def set_limits(limits: ReadLimits) -> Token[ReadLimits]:
    """Make ``limits`` current until :func:`reset_limits` with the token returned (the CLI's root callback)."""
    return _LIMITS.set(limits)


def reset_limits(token: Token[ReadLimits]) -> None:
    """Restore the limits that were current before the :func:`set_limits` that returned ``token``."""
    _LIMITS.reset(token)


@contextmanager
def using_limits(limits: ReadLimits) -> Iterator[ReadLimits]:
    """Make ``limits`` current inside the ``with`` block (a unit of fleet work, a test)."""
    token = _LIMITS.set(limits)
    try:
        yield limits
    finally:
        _LIMITS.reset(token)


#: The evidence trees of the run: the paths given on the command line, absolute (not resolved), registered by the
#: first listing of each (``reading.files.survey``); a symbolic link found below one must resolve inside it.
_ROOTS: ContextVar[tuple[str, ...]] = ContextVar("kafkatool_evidence_roots", default=())


def evidence_root(directory: str) -> str:
    """The evidence tree ``directory`` (absolute, not resolved) lies in: the outermost registered root holding it,
    else ``directory`` itself, registered as a new root (listings go top-down, so the first one a tree gets is of
    the path the user gave)."""
    for root in sorted(_ROOTS.get(), key=len):
        if directory == root or directory.startswith(root.rstrip("/") + "/"):
            return root
    _ROOTS.set((*_ROOTS.get(), directory))
    return directory


def current_roots() -> tuple[str, ...]:
    """The evidence trees registered so far (a scan's plan hands them to its workers)."""
    return _ROOTS.get()


@contextmanager
def using_roots(roots: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """Make ``roots`` the registered evidence trees inside the ``with`` block (a command run, a unit of fleet
    work, a test): listings outside any of them register their own."""
    token = _ROOTS.set(roots)
    try:
        yield roots
    finally:
        _ROOTS.reset(token)


def set_follow_links(follow: bool) -> None:
    """``--follow-links``: read symbolic links out of the evidence tree for the rest of the command."""
    if follow != _LIMITS.get().follow_links:
        from dataclasses import replace

        _LIMITS.set(replace(_LIMITS.get(), follow_links=follow))


def set_roots(roots: tuple[str, ...]) -> Token[tuple[str, ...]]:
    """Start a run's evidence trees afresh (the CLI's root callback); undone by :func:`reset_roots`."""
    return _ROOTS.set(roots)


def reset_roots(token: Token[tuple[str, ...]]) -> None:
    """Restore the evidence trees current before the :func:`set_roots` that returned ``token``."""
    _ROOTS.reset(token)
