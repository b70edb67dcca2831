"""Shared fixtures: where the Kafka-made reference material lives.

``../shared`` sits beside the checkout. On a user's machine it may be absent and the tests that need it
skip; under CI (``CI`` set) its absence is a failure, never a silent skip.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("KAFKATOOL_SHARED", REPO.parent / "shared"))


def shared_dir(sub: str = "") -> Path:
    """The shared reference folder ``sub``, or skip (fail under CI) when it is absent."""
    path = SHARED / sub if sub else SHARED
    if not path.is_dir():
        message = f"reference material not found at {path}"
        if os.environ.get("CI"):
            pytest.fail(f"{message} (CI is set: ../shared must be present)")
        pytest.skip(message)
    return path


def corpus_cases() -> list[str]:
    """Names of the corpus cases present (empty when ../shared is absent)."""
    root = SHARED / "corpus"
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "expected.json").is_file())


def load_expected(case: str) -> dict:
    """The ``expected.json`` of a corpus case."""
    return json.loads((shared_dir("corpus") / case / "expected.json").read_text())


def vector_names(*kinds: str) -> list[str]:
    """``source/NAME`` of every vector of ``kinds`` in ../shared/vectors (empty when absent)."""
    root = SHARED / "vectors"
    if not root.is_dir():
        return []
    return sorted(str(p.relative_to(root).with_suffix("")) for p in root.glob("*/*.json")
                  if json.loads(p.read_text())["kind"] in kinds)


def load_vector(name: str) -> tuple[dict, bytes]:
    """A vector's sidecar and bytes."""
    root = shared_dir("vectors")
    return json.loads((root / f"{name}.json").read_text()), (root / f"{name}.bin").read_bytes()


def hexs(data: bytes | None) -> str | None:
    """Bytes as the sidecars write them: lowercase hex, ``None`` for null."""
    return None if data is None else data.hex()


@pytest.fixture
def corpus_root() -> Path:
    """``../shared/corpus``."""
    return shared_dir("corpus")


@pytest.fixture
def vectors_root() -> Path:
    """``../shared/vectors``."""
    return shared_dir("vectors")


def listening_sockets(pid: int) -> set[tuple[str, int]]:
    """(address, port) of every TCP socket ``pid`` listens on, from /proc (address as /proc prints it:
    ``0100007F`` is 127.0.0.1)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] == "0A" and cols[9] in inodes:  # 0A: LISTEN
                addr, port = cols[1].split(":")
                found.add((addr, int(port, 16)))
    return found


LOOPBACK = {"0100007F", "0000000000000000FFFF00000100007F", "00000000000000000000000001000000"}
"""127.0.0.1, ::ffff:127.0.0.1 and ::1 as /proc/net/tcp{,6} print them."""


@pytest.fixture(scope="session")
def s3_store(tmp_path_factory: pytest.TempPathFactory):
    """One real S3 server (versitygw on 127.0.0.1, ``tests.object_store``) for the session, holding the corpus,
    the fixtures, a small benchmark tree and two cut-segment trees, and the AWS SDK's credential variables set
    for it; stopped, and the variables restored, at the end (also after a failure)."""
    from tests.object_store import uploaded_store

    with uploaded_store(tmp_path_factory.mktemp("s3")) as found:
        yield found
