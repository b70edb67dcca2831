"""Kafka's own JSON message definitions, read from a release's jars at test time (never copied into the repo).

Every Kafka module jar carries the ``*.json`` specs its message generator compiled (``common/message``,
``common/metadata``, ``message``). The jars are the ones the live oracle uses: the paths in
``tests/kafka/target/<version>/classpath.txt`` when ``python -m tests.kafka.versions fetch`` has run, else the
local Maven cache (``~/.m2/repository/org/apache/kafka/<artifact>/<version>/``, or ``KAFKATOOL_M2_REPO``).
The specs are JSON with ``//`` comments, which :func:`strip_comments` removes; ``commonStructs`` are resolved
into the fields that use them, so each :class:`Definition`'s fields are self-contained.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from tests.kafka import versions as kafka_versions

ARTIFACTS: tuple[str, ...] = (
    "kafka-clients", "kafka-group-coordinator", "kafka-share-coordinator", "kafka-transaction-coordinator",
    "kafka-metadata", "kafka-raft", "kafka-storage", "kafka-server-common", "kafka-coordinator-common",
)
"""The jars whose message definitions matter to kafkatool (a version may lack some: share-coordinator is 4.0+)."""
REQUIRED: tuple[str, ...] = ("kafka-clients", "kafka-group-coordinator", "kafka-transaction-coordinator",
                             "kafka-metadata", "kafka-raft", "kafka-storage")
"""The jars every supported version has: without them the version counts as not fetched."""
SPEC_DIRS: tuple[str, ...] = ("common/message/", "common/metadata/", "message/")
PRIMITIVES = frozenset({"bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64", "string",
                        "bytes", "uuid", "records"})


def maven_repo() -> Path:
    """The local Maven repository (``KAFKATOOL_M2_REPO`` or ``~/.m2/repository``)."""
    return Path(os.environ.get("KAFKATOOL_M2_REPO", Path.home() / ".m2" / "repository"))


def jars(version: str) -> dict[str, Path]:
    """The jars of ``version`` by artifact, from the oracle's classpath when fetched, else the Maven cache."""
    found: dict[str, Path] = {}
    cp_file = kafka_versions.target(version) / "classpath.txt"
    if cp_file.is_file():
        for entry in cp_file.read_text().strip().split(os.pathsep):
            path = Path(entry)
            for artifact in ARTIFACTS:
                if path.name == f"{artifact}-{version}.jar" and path.is_file():
                    found[artifact] = path
    for artifact in ARTIFACTS:
        path = maven_repo() / "org" / "apache" / "kafka" / artifact / version / f"{artifact}-{version}.jar"
        if artifact not in found and path.is_file():
            found[artifact] = path
    return found


def missing_jars(version: str) -> list[str]:
    """The required artifacts of ``version`` not found (empty when the version can be checked)."""
    have = jars(version)
    return [a for a in REQUIRED if a not in have]


def strip_comments(text: str) -> str:
    """The JSON text without its ``//`` comments (outside strings), as Kafka's generator reads it."""
    out: list[str] = []
    i, n, in_string = 0, len(text), False
    while i < n:
        ch = text[i]
        if in_string:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
            out.append(ch)
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(ch)
        i += 1
    return "".join(out)


@dataclass(frozen=True)
class Definition:
    """One message spec as Kafka declares it: where it came from and its top-level keys."""

    version: str
    artifact: str
    path: str
    name: str
    kind: str
    valid: str
    flexible: str
    api_key: int | None
    fields: tuple[dict[str, Any], ...]
    common_structs: frozenset[str] = frozenset()
    """The names of the spec's ``commonStructs`` (their generated classes have no version check of their own)."""


def _element_type(type_name: str) -> str:
    return type_name[2:] if type_name.startswith("[]") else type_name


def _resolve(fields: list[dict[str, Any]], common: dict[str, list[dict[str, Any]]]) -> tuple[dict[str, Any], ...]:
    """Fields with every ``commonStructs`` reference replaced by the struct's fields."""
    out = []
    for f in fields:
        f = dict(f)
        element = _element_type(f["type"])
        if "fields" in f:
            f["fields"] = list(_resolve(f["fields"], common))
        elif element not in PRIMITIVES and element in common:
            f["fields"] = list(_resolve(common[element], common))
        out.append(f)
    return tuple(out)


def parse(version: str, artifact: str, path: str, text: str) -> Definition:
    """One spec file's :class:`Definition`."""
    spec = json.loads(strip_comments(text))
    common = {s["name"]: s.get("fields", []) for s in spec.get("commonStructs", [])}
    return Definition(version, artifact, path, spec["name"], spec.get("type", ""), spec.get("validVersions", ""),
                      spec.get("flexibleVersions", "none"), spec.get("apiKey"),
                      _resolve(spec.get("fields", []), common), frozenset(common))


@cache
def definitions(version: str) -> dict[str, Definition]:
    """Every message spec of ``version``'s jars, by message name (request/response/header specs included)."""
    out: dict[str, Definition] = {}
    for artifact, jar in sorted(jars(version).items()):
        with zipfile.ZipFile(jar) as zf:
            for name in zf.namelist():
                if not name.endswith(".json") or not name.startswith(SPEC_DIRS) or name.count("/") > 2:
                    continue
                text = zf.read(name).decode("utf-8")
                if '"validVersions"' not in text:
                    continue  # not a message spec
                definition = parse(version, artifact, name, text)
                out.setdefault(definition.name, definition)
    return out
