"""Error types and exit codes shared by every layer.

Every error that can reach a user carries what a forensic reader needs: the file, the byte position
and the field that could not be decoded, and why. Lower layers raise them without a file name; the
reading layer adds the file and turns buffer-relative positions into file positions.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes, the same for every subcommand."""

    CLEAN = 0
    DEFECTS = 1
    USAGE = 2
    UNREADABLE = 3


class KafkatoolError(Exception):
    """Base of every error kafkatool raises on purpose."""

    exit_code: ExitCode = ExitCode.UNREADABLE


class UsageError(KafkatoolError):
    """The command line asks for something impossible (exit 2)."""

    exit_code = ExitCode.USAGE


class UnreadableInputError(KafkatoolError):
    """An input cannot be read at all: missing, not a file we know, permission denied (exit 3)."""

    exit_code = ExitCode.UNREADABLE

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        """Pickled as its two arguments (raised in a worker process, it reaches the parent whole)."""
        return type(self), (self.path, self.reason)


class DecodeError(KafkatoolError):
    """Bytes that do not decode as the format says.

    ``position`` is a byte offset: relative to the buffer handed to the schema, or absolute in
    ``file`` once :meth:`located` has been applied by the reading layer.
    """

    exit_code = ExitCode.DEFECTS

    def __init__(self, field: str, reason: str, position: int | None = None, file: str | None = None) -> None:
        self.field = field
        self.reason = reason
        self.position = position
        self.file = file
        super().__init__(self.describe())

    def describe(self) -> str:
        """One line: ``file @ byte N: field: reason``."""
        where = []
        if self.file is not None:
            where.append(self.file)
        if self.position is not None:
            where.append(f"byte {self.position}")
        prefix = " @ ".join(where)
        return f"{prefix}: {self.field}: {self.reason}" if prefix else f"{self.field}: {self.reason}"

    def located(self, file: str | None = None, base: int = 0) -> DecodeError:
        """A copy placed in ``file``, with the position shifted by ``base``."""
        pos = None if self.position is None else self.position + base
        err = type(self).__new__(type(self))
        DecodeError.__init__(err, self.field, self.reason, pos, file if file is not None else self.file)
        return err


class CodecError(DecodeError):
    """A compressed payload that does not decompress (or would exceed the size bound)."""


class CapExceeded(CodecError):
    """A compressed payload that would decompress past the read's cap (``--max-decompressed-bytes``)."""


class ChecksumError(DecodeError):
    """A stored checksum that does not match the bytes it covers."""
