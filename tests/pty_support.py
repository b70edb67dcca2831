"""Reading what a child process wrote to a pseudo-terminal, for the tests that drive kafkatool through one."""

from __future__ import annotations

import os


def drain(leader: int) -> bytes:
    """Everything written to the terminal whose leader side is ``leader`` until the child closes it (the read
    then fails or returns nothing); the leader is closed after."""
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return b"".join(chunks)
