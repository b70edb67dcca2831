"""A child process's stderr into a log file: the Spark JVM's log4j output and warnings stay off the terminal."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def process_log_path(name: str) -> Path:
    """A per-run log file in the temporary directory: ``kafkatool-<name>-<pid>.log``."""
    return Path(tempfile.gettempdir()) / f"kafkatool-{name}-{os.getpid()}.log"


@contextmanager
def stderr_to(path: Path) -> Iterator[Path]:
    """Point file descriptor 2 at ``path`` (appended, created 0600) while the block runs, so a process started in
    it keeps the file as its stderr for its whole life; this process's own stderr is back when the block ends."""
    sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.dup2(fd, 2)
        yield path
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)
