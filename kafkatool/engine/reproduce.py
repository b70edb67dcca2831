"""Re-producing salvaged records into a live cluster, the pure part: where each record goes, its provenance
header, and which records a resumed run must not send again.

Resume is exact, never a guess. A record counts as delivered only once the producer's delivery callback says the
broker acknowledged it; the progress file then holds, per origin partition, ``through`` (every origin offset up to
it is acknowledged or refused) and ``also`` (acknowledged offsets above it, when acknowledgements arrive out of
origin order across target partitions), and per target partition ``seen`` (the highest target offset of an
acknowledgement already recorded). Records the broker acknowledged after the last progress write (in flight at a
kill: an idempotent producer's session ends with its process, so a new one cannot deduplicate them) lie above
``seen`` in their target partition: a rerun reads each target partition from ``seen + 1`` to its end for the
provenance header and skips every origin offset found there.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from kafkatool.errors import UsageError

#: The header each re-produced record carries: ``topic/partition/offset`` of the salvaged record (UTF-8).
ORIGIN_HEADER = "kafkatool.origin"
PROGRESS_VERSION = 1


def origin_value(topic: str, partition: int, offset: int) -> bytes:
    """The provenance header's value (a topic name holds no ``/``)."""
    return f"{topic}/{partition}/{offset}".encode()


def parse_origin(value: bytes | None) -> tuple[str, int, int] | None:
    """``(topic, partition, offset)`` of a provenance header, or ``None`` when it is not one of ours."""
    if value is None:
        return None
    try:
        topic, part, off = value.decode().rsplit("/", 2)
        return topic, int(part), int(off)
    except ValueError:
        return None


def parse_topic_map(specs: list[str]) -> dict[str, str]:
    """``SRC=DST`` options: each salvaged topic's target topic (unmapped topics keep their name)."""
    out: dict[str, str] = {}
    for spec in specs:
        src, sep, dst = spec.partition("=")
        if not sep or not src or not dst:
            raise UsageError(f"--topic-map expects SRC=DST, not {spec!r}")
        if src in out and out[src] != dst:
            raise UsageError(f"--topic-map maps {src!r} twice ({out[src]!r} and {dst!r})")
        out[src] = dst
    return out


def parse_rate(text: str | None) -> float | None:
    """``--rate RECORDS/S`` (``500``, ``500/s``): records per second, ``None`` for no limit."""
    if text is None:
        return None
    number = text.removesuffix("/s").strip()
    try:
        rate = float(number)
    except ValueError:
        raise UsageError(f"--rate expects RECORDS/S (a positive number), not {text!r}") from None
    if not rate > 0 or rate == float("inf"):
        raise UsageError(f"--rate expects a positive number of records per second, not {text!r}")
    return rate


def parse_properties(text: str) -> dict[str, str]:
    """A client properties file (``key=value`` or ``key: value`` lines, ``#``/``!`` comments), as the Kafka
    clients' ``--producer.config`` takes it (no line continuations)."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        cut = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if cut <= 0:
            raise UsageError(f"--producer-config: not a key=value line: {line[:80]!r}")
        out[line[:cut].strip()] = line[cut + 1:].strip()
    return out


#: Producer settings kafkatool owns: exactly-once resume rests on them.
FIXED_PRODUCER = {"enable.idempotence": "true", "acks": "all"}


def producer_settings(bootstrap: str, user: dict[str, str]) -> dict[str, str]:
    """The client configuration: the user's (TLS, SASL, tuning) under kafkatool's own idempotence settings."""
    clash = {k: v for k, v in user.items() if k in FIXED_PRODUCER and v.lower() != FIXED_PRODUCER[k]}
    if clash:
        raise UsageError(f"--producer-config sets {', '.join(sorted(clash))}: re-produce needs "
                         + ", ".join(f"{k}={v}" for k, v in FIXED_PRODUCER.items()))
    conf = {"bootstrap.servers": bootstrap, "partitioner": "murmur2_random", "linger.ms": "20",
            "client.id": "kafkatool-salvage"}
    conf.update(user)
    conf.update(FIXED_PRODUCER)
    if "bootstrap.servers" in user and bootstrap:
        conf["bootstrap.servers"] = bootstrap
    return conf


@dataclass
class OriginProgress:
    """One origin partition's acknowledged offsets: all up to ``through``, and ``also`` above it."""

    through: int = -1
    also: set[int] = field(default_factory=set)
    found: set[int] = field(default_factory=set)
    pending: deque[int] = field(default_factory=deque)
    done: set[int] = field(default_factory=set)

    def skip(self, offset: int) -> bool:
        """Whether the record at ``offset`` was delivered by an earlier run."""
        return offset <= self.through or offset in self.also or offset in self.found

    def sent(self, offset: int) -> None:
        """The record at ``offset`` was handed to the producer."""
        self.pending.append(offset)

    def finished(self, offset: int) -> None:
        """The record at ``offset`` was acknowledged (or refused for good): ``through`` advances over every
        finished record sent before any unfinished one."""
        self.done.add(offset)
        while self.pending and self.pending[0] in self.done:
            self.done.discard(self.pending[0])
            self.through = max(self.through, self.pending.popleft())
        self.also = {o for o in self.also if o > self.through}
        self.found = {o for o in self.found if o > self.through}

    def document(self) -> dict[str, Any]:
        """The progress file's entry."""
        return {"through": self.through, "also": sorted(self.done | self.also | self.found)}


@dataclass
class Progress:
    """Everything a resumed run needs: per origin partition (``topic-N``) its acknowledged offsets, per target
    partition the highest recorded target offset, and the target the run writes to."""

    target: dict[str, Any]
    origins: dict[str, OriginProgress] = field(default_factory=dict)
    seen: dict[str, int] = field(default_factory=dict)

    def origin(self, name: str) -> OriginProgress:
        """The origin partition's entry (created empty)."""
        return self.origins.setdefault(name, OriginProgress())

    def acknowledged(self, target: str, offset: int) -> None:
        """A delivery acknowledged at ``offset`` of target partition ``target``."""
        if offset >= 0 and offset > self.seen.get(target, -1):
            self.seen[target] = offset

    def document(self) -> dict[str, Any]:
        """The progress file's content."""
        return {"version": PROGRESS_VERSION, "target": self.target,
                "origins": {k: v.document() for k, v in sorted(self.origins.items())},
                "seen": dict(sorted(self.seen.items()))}


def load_progress(doc: dict[str, Any] | None, target: dict[str, Any]) -> Progress:
    """The progress of an earlier run (``doc``, the file's JSON), refused when it was written for another
    target; an empty one when there is none."""
    if doc is None:
        return Progress(target)
    if not isinstance(doc, dict) or doc.get("version") != PROGRESS_VERSION:
        raise UsageError("--progress: not a kafkatool salvage progress file (or another version of it)")
    if doc.get("target") != target:
        raise UsageError(f"--progress was written for another target ({doc.get('target')}), not {target}: give "
                         "the same --produce-to, --topic-map and --partition, or another progress file")
    out = Progress(target)
    try:
        for name, entry in doc.get("origins", {}).items():
            out.origins[str(name)] = OriginProgress(int(entry["through"]), {int(o) for o in entry.get("also", [])})
        out.seen = {str(k): int(v) for k, v in doc.get("seen", {}).items()}
    except (KeyError, TypeError, ValueError, AttributeError):
        raise UsageError("--progress: the file does not hold a progress record kafkatool can read") from None
    return out


def target_partition(name: str, topic: str, partition: int) -> str:
    """``topic-N``."""
    return f"{topic}-{partition}"


class Pacer:
    """``--rate``: the delay before each next record so that ``rate`` records a second go out on average."""

    def __init__(self, rate: float | None, start: float) -> None:
        self.interval = 0.0 if rate is None else 1.0 / rate
        self.next = start

    def wait(self, now: float) -> float:
        """Seconds to wait before the next record (and account for it)."""
        if not self.interval:
            return 0.0
        delay = max(0.0, self.next - now)
        self.next = max(self.next, now) + self.interval
        return delay
