"""kafkatool's message declarations against Kafka's own JSON definitions, for every supported release.

For each version in ``tests.kafka.versions.VERSIONS`` the JSON specs in its jars (:mod:`tests.kafka_definitions`)
are walked: every coordinator key and value (``__consumer_offsets``, ``__transaction_state``,
``__share_group_state``), every ``__cluster_metadata`` and ``__remote_log_metadata`` record, the raft control
records, ``QuorumStateData`` and ``ProducerSnapshot`` must be in :data:`kafkatool.schema.messages.MESSAGES` with,
at every version Kafka declares valid, the same flexibility and the same fields in the same order: JSON name,
type, nullability, tag (tagged or not) and default, recursively. kafkatool may know more versions than an older
release (it declares the newest layout). A spec kafkatool deliberately does not decode is in :data:`EXCLUDED`
with the reason; an exclusion that no longer differs is reported too, so the list stays honest.

A version whose jars are absent is skipped with the reason (``python -m tests.kafka.versions fetch``); under CI
(``CI`` set) that is a failure, as for ``../shared``.
"""

from __future__ import annotations

import os
import struct
from typing import Any

import pytest

from kafkatool.schema.kafka_message import FIXED, ZERO_UUID_TEXT, Field, Message, read_message
from kafkatool.schema.messages import KEY, MESSAGES, RELEASE_LAYOUTS, Declared, declared
from kafkatool.schema.releases import RELEASE_LACKS, Lacks
from tests.kafka.versions import VERSIONS
from tests.kafka_definitions import PRIMITIVES, Definition, definitions, missing_jars

CHECKED_ARTIFACTS = frozenset({"kafka-group-coordinator", "kafka-transaction-coordinator", "kafka-share-coordinator",
                               "kafka-metadata", "kafka-raft", "kafka-storage", "kafka-clients"})
"""Jars whose non-RPC specs are all on-disk formats kafkatool must decode (clients: the raft control records and
the consumer protocol embedded in classic group metadata, plus the exclusions below)."""

_NOT_ON_DISK = "not stored in any log or file kafkatool reads"
EXCLUDED: dict[tuple[str | None, str], str] = {
    # Specs kafkatool does not decode through a Message declaration, in every version (None):
    (None, "DefaultPrincipalData"): f"{_NOT_ON_DISK} (a principal serialized inside forwarded requests)",
    # KIP-932 share groups' early access in 3.9 wrote record type 9 with another layout (the 4.0 layout of type
    # 15); kafkatool reads type 9 as 4.0 wrote it. (4.0's preview layouts of types 11 and 15 and of the share
    # coordinator's values are declared, in messages.RELEASE_LAYOUTS, and checked like the rest.)
    ("3.9.2", "ShareGroupPartitionMetadataValue"): "3.9 early-access layout (initialized/deleting topics)",
}
"""(Kafka version or ``None`` for all, message name) -> why kafkatool does not match that spec."""


def fixed_layouts() -> dict[str, Any]:
    """Specs kafkatool declares as fixed construct layouts (an int16 version, then the message's fields), by
    Kafka's name: checked field by field (snake_case name and big-endian format) instead of as messages."""
    from kafkatool.schema import control, txn_index

    return {"AbortedTxn": txn_index.ENTRY, "ControlRecordTypeSchema": control.CONTROL_KEY,
            "EndTxnMarker": control.END_TXN_MARKER_VALUE}


SPEC_ADDED_LATER = frozenset({"AbortedTxn", "ControlRecordTypeSchema", "EndTxnMarker", "ProducerSnapshot"})
"""Formats older than their JSON spec: a release without the spec writes the same bytes."""
FIXED_WHERE = {"AbortedTxn": ".txnindex entry (fixed layout)",
               "ControlRecordTypeSchema": "control record key (fixed layout)",
               "EndTxnMarker": "COMMIT/ABORT marker value (fixed layout)"}
_FORMATS = {"int8": ">b", "int16": ">h", "int32": ">i", "int64": ">q", "uint16": ">H", "uint32": ">I"}


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(name))


def compare_fixed(definition: Definition, layout: Any) -> list[str]:
    """Every way a construct ``layout`` (version first) differs from Kafka's non-flexible ``definition``."""
    low, high = _range(definition.valid)
    subcons = list(layout.subcons)
    problems = []
    if subcons[0].name != "version" or subcons[0].fmtstr != ">h":
        problems.append(f"{definition.name}: the layout does not start with an int16 version")
    for version in range(low, high + 1):
        fields = [f for f in definition.fields if _in(f.get("versions"), version)]
        expected = [(_snake(f["name"]), _FORMATS.get(f["type"], f["type"])) for f in fields]
        got = [(sc.name, getattr(sc, "fmtstr", type(sc).__name__).replace("l", "i").replace("L", "I"))
               for sc in subcons[1:]]
        if expected != got:
            problems.append(f"{definition.name} v{version}: fields {got}, Kafka has {expected}")
    return problems


def _range(spec: str | None) -> tuple[int, int]:
    """Kafka's version range text as an inclusive pair (``none`` and absent are empty)."""
    if spec is None or spec == "none" or spec == "":
        return 1, 0
    if spec.endswith("+"):
        return int(spec[:-1]), 0x7FFF
    low, _, high = spec.partition("-")
    return int(low), int(high or low)


def _in(spec: str | None, version: int) -> bool:
    low, high = _range(spec)
    return low <= version <= high


def _kind(type_name: str) -> str:
    """The on-disk kind of a type: a primitive, ``[]`` + primitive, ``struct`` or ``[]struct``."""
    array = type_name.startswith("[]")
    element = type_name[2:] if array else type_name
    kind = element if element in PRIMITIVES else "struct"
    return f"[]{kind}" if array else kind


def _kafka_default(f: dict[str, Any], kind: str) -> Any:
    """The value a Kafka field takes by default, in the JSON converter's form."""
    raw = f.get("default")
    if kind.startswith("[]"):
        return None if raw == "null" else []
    if kind == "struct":
        return None
    if raw == "null":
        return None
    if kind in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
        return raw if isinstance(raw, int) else int(raw, 0) if raw not in (None, "") else 0
    if kind == "float64":
        return float(raw) if raw not in (None, "") else 0.0
    if kind == "bool":
        return raw == "true" if isinstance(raw, str) else bool(raw)
    if kind == "uuid":
        return ZERO_UUID_TEXT
    return "" if raw is None else raw


Layout = tuple[Any, ...]


def kafka_layout(fields: tuple[dict[str, Any], ...] | list[dict[str, Any]], version: int, flexible: bool) -> Layout:
    """A Kafka spec's fields at ``version``: (JSON name, kind, nullable, tag, default, nested) in order."""
    out = []
    for f in fields:
        if not _in(f.get("versions") or f.get("taggedVersions"), version):  # a tagged field may omit "versions"
            continue
        kind = _kind(f["type"])
        tagged = flexible and "tag" in f and _in(f.get("taggedVersions", f.get("versions")), version)
        nested = kafka_layout(f.get("fields", ()), version, flexible) if kind.endswith("struct") else ()
        name = f["name"][:1].lower() + f["name"][1:]
        out.append((name, kind, _in(f.get("nullableVersions"), version), int(f["tag"]) if tagged else None,
                    _kafka_default(f, kind), nested))
    return tuple(out)


def kafkatool_layout(fields: tuple[Field, ...], version: int, flexible: bool) -> Layout:
    """kafkatool's declaration at ``version``, in the same form as :func:`kafka_layout`."""
    out = []
    for f in fields:
        if not f.present(version):
            continue
        kind = _kind(f.type)
        tagged = flexible and f.is_tagged(version)
        nested = kafkatool_layout(f.fields, version, flexible) if kind.endswith("struct") else ()
        default = f.default_value()
        if kind == "float64" and default is not None:
            default = float(default)
        out.append((f.json_name, kind, f.is_nullable(version), f.tag if tagged else None, default, nested))
    return tuple(out)


def _without_later_tags(expected: Layout, got: Layout) -> Layout:
    """``got`` without the tagged fields ``expected`` lacks, at every level: tagged fields a later release added
    to a version an older release already had (the older reader skips them, its converter never shows them)."""
    known = {e[0]: e for e in expected}
    out = []
    for g in got:
        if g[3] is not None and g[0] not in known:
            continue
        nested = _without_later_tags(known[g[0]][5], g[5]) if g[0] in known else g[5]
        out.append((*g[:5], nested))
    return tuple(out)


def _same(expected: Any, got: Any) -> bool:
    """Equal, and of the same type (``True`` is not ``1``), except that an int equals the same float."""
    if expected != got:
        return False
    numbers = (int, float)
    if type(expected) is type(got):
        return True
    return not isinstance(expected, bool) and not isinstance(got, bool) and isinstance(expected, numbers) \
        and isinstance(got, numbers)


def _diff(expected: Layout, got: Layout, where: str) -> list[str]:
    """The first differences between two layouts, field by field."""
    names_e = [e[0] for e in expected]
    names_g = [g[0] for g in got]
    if names_e != names_g:
        return [f"{where}: fields {names_g}, Kafka has {names_e}"]
    out = []
    labels = ("name", "type", "nullable", "tag", "default")
    for e, g in zip(expected, got, strict=True):
        for label, ev, gv in zip(labels, e[:5], g[:5], strict=True):
            if not _same(ev, gv):
                out.append(f"{where}.{e[0]}: {label} {gv!r}, Kafka has {ev!r}")
        out += _diff(e[5], g[5], f"{where}.{e[0]}")
    return out


def in_scope(definition: Definition) -> bool:
    """Whether ``definition`` is an on-disk message kafkatool must declare (or exclude)."""
    return definition.artifact in CHECKED_ARTIFACTS and definition.kind not in ("request", "response", "header")


def compare(definition: Definition, decl: Declared, newest: bool = True) -> list[str]:
    """Every way ``decl`` differs from Kafka's ``definition`` (of the newest supported release, or of an older one,
    against which kafkatool may declare the tagged fields later releases added)."""
    problems: list[str] = []
    name = definition.name
    message: Message = decl.message
    if definition.api_key is not None and decl.number is not None and definition.api_key != decl.number:
        problems.append(f"{name}: kafkatool files it under {decl.number}, Kafka's apiKey is {definition.api_key}")
    low, high = _range(definition.valid)
    for version in range(low, high + 1):
        # A 4.1+ coordinator key is version 0 with the record type as apiKey; 3.x/4.0 declared the record type
        # as the key's version. kafkatool reads every key at its record type: the bytes are the same.
        ours = decl.number if decl.part == KEY and definition.api_key is not None else version
        assert ours is not None
        where = f"{name} v{version}"
        if not message.supports(ours):
            problems.append(f"{where}: kafkatool's {message.name} (valid {message.valid}) cannot read it")
            continue
        flexible = _in(definition.flexible, version)
        if message.is_flexible(ours) != flexible:
            problems.append(f"{where}: flexible {message.is_flexible(ours)}, Kafka says {flexible}")
            continue
        expected = kafka_layout(definition.fields, version, flexible)
        got = kafkatool_layout(message.fields, ours, flexible)
        problems += _diff(expected, got if newest else _without_later_tags(expected, got), where)
    return problems


def _require(version: str) -> None:
    missing = missing_jars(version)
    if missing:
        message = (f"Kafka {version}'s jars not found ({', '.join(missing)}): run "
                   "`python -m tests.kafka.versions fetch`")
        if os.environ.get("CI"):
            pytest.fail(f"{message} (CI is set: the release jars must be present)")
        pytest.skip(message)


def conformance_problems(version: str) -> list[str]:
    """Every missing or differing declaration for ``version``'s jars, and every stale exclusion."""
    problems = []
    for name, definition in sorted(definitions(version).items()):
        if not in_scope(definition):
            continue
        if name in fixed_layouts():
            problems += compare_fixed(definition, fixed_layouts()[name])
            continue
        excluded = EXCLUDED.get((version, name)) or EXCLUDED.get((None, name))
        decl = declared(name, version)
        if decl is None:
            if not excluded:
                problems.append(f"{name} ({definition.artifact} {definition.path}): not declared by kafkatool "
                                "(kafkatool.schema.messages.MESSAGES) nor excluded")
            continue
        found = compare(definition, decl, newest=version == VERSIONS[-1])
        if found and not excluded:
            problems += found
        elif not found and (version, name) in EXCLUDED:
            problems.append(f"{name}: excluded for {version} ({excluded}) but matches now: drop the exclusion")
    return problems


@pytest.mark.parametrize("version", VERSIONS)
def test_declarations_match_the_release_jars(version: str) -> None:
    _require(version)
    problems = conformance_problems(version)
    assert not problems, f"{len(problems)} difference(s) with Kafka {version}:\n" + "\n".join(problems)


@pytest.mark.parametrize("version", VERSIONS)
def test_every_in_scope_spec_is_seen(version: str) -> None:
    """The walk sees the specs it is meant to check (a jar layout change must not make it vacuous)."""
    _require(version)
    seen = {name for name, d in definitions(version).items() if in_scope(d)}
    for name in ("TransactionLogValue", "GroupMetadataValue", "PartitionRecord", "LeaderChangeMessage",
                 "VotersRecord", "QuorumStateData", "RemoteLogSegmentMetadataRecord"):
        assert name in seen, f"{name} not found in Kafka {version}'s jars"


# --- what each release's own classes lack (kafkatool.schema.releases) ------------------------------------------

PRE_41_NAMES = {"LegacyOffsetCommitKey": "OffsetCommitKey", "LegacyOffsetCommitValue": "OffsetCommitValue"}
"""4.1+ names whose message 3.x and 4.0 declared under another name (one pair for coordinator types 0 and 1)."""


def _later_fields(ours: tuple[Field, ...], theirs: tuple[dict[str, Any], ...] | list[dict[str, Any]], low: int,
                  high: int, prefix: str = "") -> list[str]:
    """The paths of kafkatool's fields present at some version in ``low..high`` that the release's spec lacks
    (matched by JSON name, at every level of the fields both have)."""
    known = {f["name"][:1].lower() + f["name"][1:]: f for f in theirs}
    out: list[str] = []
    for f in ours:
        first, last = _range(f.versions)
        if last < low or first > high:
            continue
        spec = known.get(f.json_name)
        if spec is None:
            out.append(prefix + f.name)
        else:
            out += _later_fields(f.fields, spec.get("fields", ()), low, high, f"{prefix}{f.name}.")
    return out


def release_lacks(version: str) -> dict[str, Lacks | None]:
    """What ``version``'s specs lack next to each message kafkatool declares, recomputed from its jars: ``None``
    for a message it does not have; else its highest valid version when below kafkatool's (not for coordinator
    keys, read at their record type) and kafkatool's fields it lacks at the versions it knows. The declaration
    compared is the one kafkatool reads that release with (its own layout where :data:`RELEASE_LAYOUTS` has one);
    formats older than their spec and the exclusions are left out."""
    specs = definitions(version)
    out: dict[str, Lacks | None] = {}
    for name in sorted(MESSAGES):
        if name in SPEC_ADDED_LATER or (version, name) in EXCLUDED or (None, name) in EXCLUDED:
            continue
        decl = declared(name, version)
        assert decl is not None
        spec = specs.get(name) or specs.get(PRE_41_NAMES.get(name, ""))
        if spec is None:
            out[name] = None
            continue
        low, high = _range(spec.valid)
        highest = None if decl.part == KEY or high >= _range(decl.message.valid)[1] else high
        later = tuple(_later_fields(decl.message.fields, spec.fields, low, high))
        if highest is not None or later:
            out[name] = Lacks(highest, later)
    return out


def release_lacks_problems(version: str) -> list[str]:
    """Every entry of :data:`RELEASE_LACKS` for ``version``'s line that is missing, wrong or superfluous, and
    every listed message whose version check kafkatool would model wrongly (a common struct's class has none)."""
    line = ".".join(version.split(".")[:2])
    expected = release_lacks(version)
    table = RELEASE_LACKS.get(line, {})
    problems = []
    for name in sorted(set(expected) | set(table)):
        want = expected.get(name, "not listed")
        got = table.get(name, "not listed")
        if want != got:
            problems.append(f"{line} {name}: kafkatool's table has {got!r}, Kafka {version}'s specs say {want!r}")
    specs = definitions(version)
    for name, entry in table.items():
        spec = specs.get(name) or specs.get(PRE_41_NAMES.get(name, ""))
        if entry is not None and entry.highest is not None and spec is not None:
            used = {_element_type(f["type"]) for f in _all_fields(spec.fields)} & spec.common_structs
            if used:
                problems.append(f"{line} {name}: common structs {sorted(used)} have no version check of their own")
    return problems


def _element_type(type_name: str) -> str:
    return type_name.removeprefix("[]")


def _all_fields(fields: tuple[dict[str, Any], ...] | list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [x for f in fields for x in (f, *_all_fields(f.get("fields", ())))]


@pytest.mark.parametrize("version", VERSIONS)
def test_release_lacks_are_exact(version: str) -> None:
    """kafkatool's table of what each release lacks is complete and exact for every message it declares."""
    _require(version)
    problems = release_lacks_problems(version)
    assert not problems, "\n".join(problems)


def test_release_lacks_check_fails_on_a_wrong_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """A missing, a wrong and a superfluous entry are each reported."""
    import kafkatool.schema.releases as releases

    version = "3.9.2"
    _require(version)
    table = dict(releases.RELEASE_LACKS["3.9"])
    del table["OffsetCommitValue"]
    table["RegisterBrokerRecord"] = Lacks(highest=4)
    table["PartitionRecord"] = Lacks(later=("Directories",))
    monkeypatch.setitem(releases.RELEASE_LACKS, "3.9", table)
    problems = release_lacks_problems(version)
    for name in ("OffsetCommitValue", "RegisterBrokerRecord", "PartitionRecord"):
        assert any(f" {name}:" in p for p in problems), (name, problems)


def test_a_release_reads_as_its_own_classes() -> None:
    """The readers :func:`as_read_by` makes: later tags skipped, a nested struct's version check, an absent
    message, the newest declaration untouched."""
    from kafkatool.errors import DecodeError
    from kafkatool.schema import metadata_records as mr
    from kafkatool.schema.releases import as_read_by

    offset_commit = MESSAGES["OffsetCommitValue"].message
    assert as_read_by(offset_commit, "OffsetCommitValue", None) is offset_commit
    assert as_read_by(offset_commit, "OffsetCommitValue", "4.4.0") is offset_commit
    older = as_read_by(offset_commit, "OffsetCommitValue", "4.0")
    assert older is not None and "topicId" not in [f.name for f in older.fields]
    assert as_read_by(offset_commit, "OffsetCommitValue", "4.0.2") is older  # built once
    # v4 (flexible) with a topicId tag: the newest shows it, 4.0 skips the tag
    value = (b"\x00\x04" + struct.pack(">qi", 7, -1) + b"\x01" + struct.pack(">q", 9)
             + b"\x01\x00\x10" + bytes(range(16)))
    assert "topicId" in read_message(offset_commit, value, 4, 2)[0]
    assert read_message(older, value, 4, 2)[0] == {"offset": 7, "leaderEpoch": -1, "metadata": "",
                                                  "commitTimestamp": 9}
    legacy = as_read_by(offset_commit, "LegacyOffsetCommitValue", "4.1")  # type 0's class: version 0 only
    assert legacy is not None and legacy.flexible == "none"
    assert [f.name for f in legacy.fields] == ["offset", "metadata", "commitTimestamp"]
    # RegisterBrokerRecord v4 with one endpoint: 3.9's BrokerEndpoint class throws, an empty array does not
    register = as_read_by(mr.BY_API_KEY[0], "RegisterBrokerRecord", "3.9")
    assert register is not None and {f.name: f.highest for f in register.fields}["EndPoints"] == 3
    endpoint = b"\x02" + b"\x02a" + b"\x02h" + struct.pack(">Hh", 9092, 0) + b"\x00"
    body = struct.pack(">i", 1) + b"\x00" + bytes(16) + struct.pack(">q", 5)
    record = b"\x01\x00\x04" + body + endpoint + b"\x01" + b"\x00" + b"\x00\x00" + b"\x00"
    assert mr.parse_metadata_record(record).fields["endPoints"][0]["port"] == 9092
    with pytest.raises(DecodeError, match="Failed to deserialize record with type 0: Can't read version 4 of "
                                          "BrokerEndpoint"):
        mr.parse_metadata_record(record, "3.9")
    empty = b"\x01\x00\x04" + body + b"\x01" + b"\x01" + b"\x00" + b"\x00\x00" + b"\x00"
    assert mr.parse_metadata_record(empty, "3.9").fields["endPoints"] == []
    clear_elr = mr.BY_API_KEY[28]
    assert clear_elr.name == "ClearElrRecord" and as_read_by(clear_elr, "ClearElrRecord", "3.9") is None
    assert mr.parse_metadata_record(b"\x01\x1c\x00\x02t\x00").record_class == "ClearElrRecord"
    assert mr.parse_metadata_record(b"\x01\x1c\x00\x02t\x00", "3.9").record_class is None


def _zero_value(fields: tuple[Field, ...], version: int, flexible: bool) -> bytes:
    """The bytes of a struct whose every non-tagged field holds its zero/empty value (no tagged fields)."""
    out = bytearray()
    for f in fields:
        if not f.present(version) or (flexible and f.is_tagged(version)):
            continue
        kind = f.type
        if kind in FIXED:
            out += bytes(FIXED[kind].sizeof())
        elif kind == "uuid":
            out += bytes(16)
        elif kind in ("string", "bytes") or kind.startswith("[]"):
            out += b"\x01" if flexible else bytes(2 if kind == "string" else 4)
        else:
            if f.is_nullable(version):
                out += b"\x01"
            out += _zero_value(f.fields, version, flexible)
    if flexible:
        out += b"\x00"
    return bytes(out)


READABLE = {**{name: d.message for name, d in MESSAGES.items()},
            **{f"{name} ({line})": m for (line, name), m in RELEASE_LAYOUTS.items()}}


@pytest.mark.parametrize("name", sorted(READABLE))
def test_every_declaration_is_readable(name: str) -> None:
    """Each declared message (and earlier release layout) reads, at every version it declares, with
    ``read_message``: the zero value of every field type it uses is consumed exactly."""
    message = READABLE[name]
    low, high = _range(message.valid)
    for version in range(low, min(high, low + 16) + 1):
        data = _zero_value(message.fields, version, message.is_flexible(version))
        values, end = read_message(message, data, version)
        assert end == len(data), f"{name} v{version}: read {end} of {len(data)} bytes"
        assert isinstance(values, dict)


def test_producer_snapshot_layout_matches_its_declaration() -> None:
    """The construct layout of ``.snapshot`` entries is ``ProducerSnapshot``'s entry, field for field."""
    from kafkatool.schema.producer_snapshot import ENTRY, PRODUCER_SNAPSHOT, build_producer_snapshot

    entry = PRODUCER_SNAPSHOT.fields[1]
    sizes = [FIXED[f.type].sizeof() for f in entry.fields]
    assert [sc.sizeof() for sc in ENTRY.subcons] == sizes
    raw = build_producer_snapshot([])
    values, end = read_message(PRODUCER_SNAPSHOT, raw, 1, 2)
    assert end == len(raw) and values["producerEntries"] == []
    assert values["crc"] == struct.unpack_from(">I", raw, 2)[0]


def record_type_table() -> str:
    """The markdown table "record types per Kafka version": every in-scope spec of every fetched release, where
    kafkatool files it, and per version whether that release has it (``yes``; ``4.0-preview`` for the preview
    layout kafkatool also reads; ``early (not decoded)``; ``same layout, no spec`` for a format older than its
    JSON spec; ``-`` absent)."""
    present = [v for v in VERSIONS if not missing_jars(v)]
    rows: dict[tuple[str, int, str, str], dict[str, str]] = {}
    for version in present:
        for name, definition in definitions(version).items():
            if not in_scope(definition):
                continue
            decl = declared(name, version)
            where = decl.where if decl else FIXED_WHERE.get(name, "(not decoded)")
            numbers = [decl.number if decl and decl.number is not None else -1]
            if decl and decl.part == KEY and definition.api_key is None:
                low, high = _range(definition.valid)  # 3.x/4.0: the key's versions are its record types
                numbers = list(range(low, high + 1))
            base = name.removesuffix("Key").removesuffix("Value") if decl and decl.part in (KEY, "value") else name
            cell = "yes"
            if (version, name) in EXCLUDED:
                cell = "early (not decoded)"
            elif decl and decl.message.extra.get("layout"):
                cell = str(decl.message.extra["layout"])
            for number in numbers:
                label = "LegacyOffsetCommit" if base == "OffsetCommit" and number == 0 else base
                row = rows.setdefault((where, number, label, decl.part if decl else ""), {})
                if row.get(version, "yes") == "yes":
                    row[version] = cell
    lines = ["| where | type / api key | record | " + " | ".join(present) + " |",
             "|---|---|---|" + "---|" * len(present)]
    merged: dict[tuple[str, int, str], dict[str, str]] = {}
    for (where, number, base, _), cells in sorted(rows.items()):
        target = merged.setdefault((where, number, base), {})
        for version, cell in cells.items():
            if target.get(version, "yes") == "yes":
                target[version] = cell
    for (where, number, base), cells in sorted(merged.items()):
        shown = "" if number < 0 else str(number)
        absent = "same layout, no spec" if base in SPEC_ADDED_LATER else "-"
        lines.append(f"| {where} | {shown} | {base} | " + " | ".join(cells.get(v, absent) for v in present) + " |")
    return "\n".join(lines)



def test_absent_jars_skip_or_fail_under_ci(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """Without a version's jars the check skips with the reason, and fails when ``CI`` is set."""
    import tests.kafka_definitions as loader

    monkeypatch.setattr(loader.kafka_versions, "target", lambda version: tmp_path / version)
    monkeypatch.setenv("KAFKATOOL_M2_REPO", str(tmp_path))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="jars not found"):
        _require(VERSIONS[-1])
    monkeypatch.setenv("CI", "1")
    with pytest.raises(pytest.fail.Exception, match="CI is set"):
        _require(VERSIONS[-1])


def test_record_type_table() -> None:
    """The record-type table (``tests/kafka/README.md``) builds from the jars present and names the newest types."""
    if missing_jars(VERSIONS[-1]):
        pytest.skip("the newest release's jars are not fetched")
    table = record_type_table()
    assert "| __consumer_offsets | 23 | StreamsGroupTopology |" in table
    assert table.count("\n") > 60


def metadata_versions_in_jar(version: str) -> dict[int, str]:
    """``MetadataVersion``'s constants (feature level -> ``4.1-IV0``) in ``version``'s server-common jar, read
    from the enum's static initializer with ``javap`` (each ``IBP_x_y_IVn`` constant is constructed with its
    ordinal, then its feature level)."""
    import re
    import shutil
    import subprocess
    import tempfile
    import zipfile

    from tests.kafka_definitions import jars

    javap = shutil.which("javap")
    jar = jars(version).get("kafka-server-common")
    if javap is None or jar is None:
        reason = f"no javap or no kafka-server-common {version} jar"
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set)")
        pytest.skip(reason)
    member = "org/apache/kafka/server/common/MetadataVersion.class"
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(jar) as zf:
        path = zf.extract(member, tmp)
        text = subprocess.run([javap, "-c", "-p", path], capture_output=True, text=True, check=True).stdout
    lines = text[text.index("static {};"):].splitlines()
    push = re.compile(r"\b(?:iconst_(m1|\d)|bipush\s+(-?\d+)|sipush\s+(-?\d+))")
    found: dict[int, str] = {}
    for i, line in enumerate(lines):
        constant = re.search(r"// String IBP_(\d+)_(\d+)_IV(\d+)$", line)
        if not constant:
            continue
        ints = []
        for following in lines[i + 1:i + 8]:
            m = push.search(following)
            if m:
                ints.append(-1 if m.group(1) == "m1" else int(next(g for g in m.groups() if g is not None)))
            if len(ints) == 2:
                break
        major, minor, iv = constant.groups()
        if ints[1] > 0:  # 3.x's IBP_3_0_IV0 has level -1: no KRaft metadata version
            found[ints[1]] = f"{major}.{minor}-IV{iv}"
    return found


@pytest.mark.parametrize("version", VERSIONS)
def test_metadata_versions_match_the_release(version: str) -> None:
    """Every ``metadata.version`` feature level a release defines has the same name in kafkatool's table (a level
    missing there makes the image replay refuse the log: "No MetadataVersion with feature level")."""
    from kafkatool.schema.metadata_records import METADATA_VERSIONS

    _require(version)
    levels = metadata_versions_in_jar(version)
    assert len(levels) > 10
    differing = {level: (name, METADATA_VERSIONS.get(level)) for level, name in levels.items()
                 if METADATA_VERSIONS.get(level) != name}
    assert not differing, f"level: (Kafka {version}, kafkatool): {differing}"


if __name__ == "__main__":
    print(record_type_table())
