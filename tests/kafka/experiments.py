"""What every live-oracle experiment returns, and how a disagreement becomes a case under ``fixtures/oracle``.

An experiment compares named fields ("log_end_offset", "files", "dump:deep", ...) between what kafkatool said and
what a real broker of one version did. A disagreement is saved as a small case in the shape of
``../shared/corpus`` cases (``input/`` a log dir, ``expected.json`` what Kafka did, optional ``dump/``), so it is
tested without a broker ever after (``tests/test_oracle_cases.py``).

Preallocated index files (10 MiB of zeros behind the last entry of an active segment) are stored trimmed to their
entries; ``expected.json``'s ``preallocated`` map gives the size each had, and :func:`materialize` restores it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "fixtures" / "oracle"

#: The experiment kinds, in the order the campaign takes them.
KINDS: tuple[str, ...] = ("decoding", "crash", "producers", "replication", "salvage")


@dataclass
class Outcome:
    """One experiment: which fields agreed, and each disagreement in one line."""

    version: str
    kind: str
    seed: int
    fields: dict[str, bool] = field(default_factory=dict)
    disagreements: list[str] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)
    case: str | None = None

    @property
    def agree(self) -> bool:
        """True when every compared field agreed."""
        return not self.disagreements and all(self.fields.values())

    def check(self, name: str, kafka: Any, kafkatool: Any, where: str = "") -> bool:
        """Compare one field; record it (and a disagreement line when they differ)."""
        same = kafka == kafkatool
        self.fields[name] = self.fields.get(name, True) and same
        if not same:
            self.disagreements.append(f"{where + ': ' if where else ''}{name}: Kafka {_short(kafka)} "
                                      f"!= kafkatool {_short(kafkatool)}")
        return same

    def to_json(self) -> dict[str, Any]:
        """The campaign's JSON shape for one experiment."""
        out = {"version": self.version, "kind": self.kind, "seed": self.seed, "agree": self.agree,
               "fields": self.fields, "disagreements": self.disagreements}
        if self.case:
            out["case"] = self.case
        if self.detail:
            out["detail"] = self.detail
        return out


def _short(value: Any, limit: int = 300) -> str:
    text = json.dumps(value, sort_keys=True, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


@dataclass
class Experiment:
    """What one run set up: version, kind, seed and a description of what was done to the data."""

    version: str
    kind: str
    seed: int
    description: str = ""
    mutations: list[str] = field(default_factory=list)


def _trim_preallocated(path: Path, entry_size: int) -> int | None:
    """Cut an index file to its last non-zero entry; the original size when it was cut."""
    data = path.read_bytes()
    end = len(data.rstrip(b"\0"))
    end = -(-end // entry_size) * entry_size
    if end >= len(data):
        return None
    path.write_bytes(data[:end])
    return len(data)


def save_case(name: str, log_dir: Path, expected: dict[str, Any], partitions: Iterable[str] | None = None,
              dump: dict[str, str] | None = None, root: Path = CASES) -> Path:
    """Save a log dir (only ``partitions`` when given, plus its log-dir files) and what Kafka did as a case."""
    case = root / name
    if case.exists():
        shutil.rmtree(case)
    inp = case / "input"
    inp.mkdir(parents=True)
    wanted = set(partitions) if partitions is not None else None
    preallocated: dict[str, int] = {}
    for entry in sorted(log_dir.iterdir()):
        if entry.is_dir():
            if wanted is not None and entry.name not in wanted:
                continue
            shutil.copytree(entry, inp / entry.name)
            for f in sorted((inp / entry.name).iterdir()):
                size = None
                if f.suffix == ".index":
                    size = _trim_preallocated(f, 8)
                elif f.suffix == ".timeindex":
                    size = _trim_preallocated(f, 12)
                if size is not None:
                    preallocated[f"{entry.name}/{f.name}"] = size
        else:
            shutil.copy2(entry, inp / entry.name)
    doc = {"case": name, **expected}
    if preallocated:
        doc["preallocated"] = preallocated
    (case / "expected.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    if dump:
        for rel, text in dump.items():
            target = case / "dump" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    return case


def load_case(case: Path) -> dict[str, Any]:
    """A saved case's ``expected.json``."""
    return json.loads((case / "expected.json").read_text())


def materialize(case: Path, into: Path) -> Path:
    """Copy a saved case's ``input/`` to ``into`` with its index files at their preallocated sizes again."""
    shutil.copytree(case / "input", into)
    for rel, size in load_case(case).get("preallocated", {}).items():
        with open(into / rel, "r+b") as f:
            f.truncate(size)
    return into


def saved_cases(kind: str | None = None, root: Path = CASES) -> list[Path]:
    """Every saved case (of ``kind``), sorted by name."""
    if not root.is_dir():
        return []
    cases = [p for p in sorted(root.iterdir()) if (p / "expected.json").is_file()]
    return [p for p in cases if kind is None or load_case(p).get("kind") == kind]


def experiment_record(outcome: Outcome) -> dict[str, Any]:
    """An Outcome as a plain dict (for logs)."""
    return asdict(outcome)
