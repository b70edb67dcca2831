"""Loading a replication scenario (``kafkatool.replication-scenario/1``) and validating its fields.

The schema is documented in ``../shared/replication/README.md``. Every error names the JSON path of
the field at fault, e.g. ``$.events[3].acks``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kafkatool.errors import ExitCode, KafkatoolError, UnreadableInputError

SCHEMA = "kafkatool.replication-scenario/1"
TRUNCATION_MODES = ("fetch_diverging_epoch", "offsets_for_leader_epoch", "offsets_for_leader_epoch_v0",
                    "high_watermark")
EVENT_FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "produce": {"records": (int,), "acks": (int,)},
    "fetch": {"replica": (int,)},
    "tick": {},
    "crash": {"replica": (int,)},
    "restart": {"replica": (int,)},
    "elect": {"leader": (int,), "clean": (bool,)},
    "alter_partition_response": {"accept": (bool,)},
}
FETCH_OUTCOMES = ("complete", "response_lost", "request_lost")


class ScenarioFormatError(KafkatoolError):
    """A scenario file parses as JSON but a field is missing or wrong (exit 3)."""

    exit_code = ExitCode.UNREADABLE

    def __init__(self, file: str, path: str, reason: str) -> None:
        super().__init__(f"{file}: {path}: {reason}")
        self.file = file
        self.path = path
        self.reason = reason


class _Checker:
    """Field checks that raise with the JSON path."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, path: str, reason: str) -> None:
        """Raise for the field at ``path``."""
        raise ScenarioFormatError(self.file, path, reason)

    def get(self, obj: dict[str, Any], key: str, path: str, kinds: tuple[type, ...], *,
            required: bool = True, nullable: bool = False) -> Any:
        """``obj[key]`` checked against ``kinds`` (bool never counts as int)."""
        where = f"{path}.{key}"
        if key not in obj:
            if required:
                self.fail(where, "missing")
            return None
        value = obj[key]
        if value is None and (nullable or not required):
            return None
        ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
        if not ok:
            names = " or ".join(k.__name__ for k in kinds)
            self.fail(where, f"expected {names}, found {json.dumps(value)[:60]}")
        return value


def _check_log(c: _Checker, log: Any, path: str) -> None:
    if not isinstance(log, list):
        c.fail(path, "expected a list of runs or records")
    offset = 0
    for n, item in enumerate(log):
        where = f"{path}[{n}]"
        if not isinstance(item, dict):
            c.fail(where, "expected an object")
        epoch = c.get(item, "epoch", where, (int,))
        if epoch < 0:
            c.fail(f"{where}.epoch", "must be >= 0")
        if "count" in item:
            count = c.get(item, "count", where, (int,))
            if count < 0:
                c.fail(f"{where}.count", "must be >= 0")
            ids = c.get(item, "ids", where, (list,), required=False)
            if ids is not None and len(ids) != count:
                c.fail(f"{where}.ids", f"has {len(ids)} ids for count {count}")
            offset += count
        else:
            got = c.get(item, "offset", where, (int,))
            if got != offset:
                c.fail(f"{where}.offset", f"expected {offset} (records must be contiguous from 0)")
            c.get(item, "id", where, (str,), required=False)
            offset += 1


def validate(doc: Any, file: str) -> dict[str, Any]:
    """Check a parsed scenario document; return it unchanged."""
    c = _Checker(file)
    if not isinstance(doc, dict):
        c.fail("$", "expected an object")
    schema = doc.get("schema")
    if schema is not None and schema != SCHEMA:
        c.fail("$.schema", f"expected {SCHEMA!r}, found {schema!r}")
    settings = c.get(doc, "settings", "$", (dict,))
    replicas = c.get(settings, "replicas", "$.settings", (list,))
    if not replicas or not all(isinstance(r, int) and not isinstance(r, bool) for r in replicas):
        c.fail("$.settings.replicas", "expected a non-empty list of broker ids")
    if len(set(replicas)) != len(replicas):
        c.fail("$.settings.replicas", "duplicate broker id")
    min_isr = c.get(settings, "min_insync_replicas", "$.settings", (int,), required=False)
    if min_isr is not None and min_isr < 1:
        c.fail("$.settings.min_insync_replicas", "must be >= 1")
    c.get(settings, "replica_lag_time_max_ms", "$.settings", (int,), required=False)
    c.get(settings, "unclean_leader_election", "$.settings", (bool,), required=False)
    c.get(settings, "alter_partition_auto_commit", "$.settings", (bool,), required=False)
    mode = c.get(settings, "truncation", "$.settings", (str,), required=False)
    if mode is not None and mode not in TRUNCATION_MODES:
        c.fail("$.settings.truncation", f"expected one of {', '.join(TRUNCATION_MODES)}, found {mode!r}")
    initial = c.get(doc, "initial", "$", (dict,))
    c.get(initial, "t_ms", "$.initial", (int,), required=False)
    leader = c.get(initial, "leader", "$.initial", (int,), required=False, nullable=True)
    if leader is not None and leader not in replicas:
        c.fail("$.initial.leader", f"{leader} is not one of the replicas {replicas}")
    c.get(initial, "leader_epoch", "$.initial", (int,), required=False)
    c.get(initial, "partition_epoch", "$.initial", (int,), required=False)
    isr = c.get(initial, "isr", "$.initial", (list,), required=False)
    for n, r in enumerate(isr or []):
        if r not in replicas:
            c.fail(f"$.initial.isr[{n}]", f"{r!r} is not one of the replicas")
    reps = c.get(initial, "replicas", "$.initial", (dict,))
    for key, spec in reps.items():
        where = f"$.initial.replicas.{key}"
        if not key.lstrip("-").isdigit() or int(key) not in replicas:
            c.fail(where, "not one of the replicas in $.settings.replicas")
        if not isinstance(spec, dict):
            c.fail(where, "expected an object")
        _check_log(c, spec.get("log", []), f"{where}.log")
        c.get(spec, "hw", where, (int,), required=False)
        cache = c.get(spec, "epoch_cache", where, (list,), required=False)
        for n, entry in enumerate(cache or []):
            if not (isinstance(entry, list) and len(entry) == 2 and all(isinstance(x, int) for x in entry)):
                c.fail(f"{where}.epoch_cache[{n}]", "expected [epoch, start_offset]")
    events = c.get(doc, "events", "$", (list,))
    last_t = initial.get("t_ms", 0)
    for n, event in enumerate(events):
        where = f"$.events[{n}]"
        if not isinstance(event, dict):
            c.fail(where, "expected an object")
        kind = c.get(event, "type", where, (str,))
        if kind not in EVENT_FIELDS:
            c.fail(f"{where}.type", f"unknown event type {kind!r} (expected one of {', '.join(EVENT_FIELDS)})")
        t = c.get(event, "t_ms", where, (int,))
        if t < last_t:
            c.fail(f"{where}.t_ms", f"{t} goes back in time (previous {last_t})")
        last_t = t
        for name, kinds in EVENT_FIELDS[kind].items():
            required = not (kind == "elect" and name == "clean") and kind != "alter_partition_response"
            value = c.get(event, name, where, kinds, required=required)
            if name in ("replica", "leader") and value not in replicas:
                c.fail(f"{where}.{name}", f"{value} is not one of the replicas {replicas}")
        if kind == "produce":
            if event["acks"] not in (-1, 0, 1):
                c.fail(f"{where}.acks", "expected -1, 0 or 1")
            if event["records"] < 1:
                c.fail(f"{where}.records", "must be >= 1")
            ids = c.get(event, "ids", where, (list,), required=False)
            if ids is not None and (len(ids) != event["records"] or not all(isinstance(i, str) for i in ids)):
                c.fail(f"{where}.ids", "expected one string id per record")
        if kind == "fetch":
            outcome = c.get(event, "outcome", where, (str,), required=False)
            if outcome is not None and outcome not in FETCH_OUTCOMES:
                c.fail(f"{where}.outcome", f"expected one of {', '.join(FETCH_OUTCOMES)}")
            mr = c.get(event, "max_records", where, (int,), required=False)
            if mr is not None and mr < 0:
                c.fail(f"{where}.max_records", "must be >= 0 (0: a fetch that returns no records)")
        if kind == "crash":
            c.get(event, "flushed_offset", where, (int,), required=False)
            c.get(event, "hw_checkpoint", where, (int,), required=False)
    expected = c.get(doc, "expected", "$", (dict,), required=False)
    if expected is not None:
        steps = c.get(expected, "steps", "$.expected", (list,), required=False)
        if steps is not None and len(steps) != len(events) + 1:
            c.fail("$.expected.steps", f"has {len(steps)} steps, expected {len(events) + 1} (initial + one per event)")
        c.get(expected, "final", "$.expected", (dict,), required=False)
    return doc


def load_scenario(path: Path) -> dict[str, Any]:
    """Read, parse and validate a scenario file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UnreadableInputError(str(path), "no such file") from None
    except IsADirectoryError:
        raise UnreadableInputError(str(path), "is a directory, not a scenario file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise UnreadableInputError(str(path), f"cannot read: {err}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise UnreadableInputError(str(path), f"not JSON: {err.msg} at line {err.lineno} column {err.colno}") from None
    return validate(doc, str(path))
