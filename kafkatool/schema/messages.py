"""Every Kafka message kafkatool declares, by Kafka's name: the one registry of ``schema``'s message declarations.

Each entry says where the message lives on disk (a topic, a control record, a file) and under which number
(coordinator record type, metadata or remote-log-metadata api key, control record type), and which part of the
record it is. ``tests/test_message_conformance.py`` walks the JSON definitions in each supported Kafka release's
jars against this registry, so a message Kafka has and kafkatool lacks is reported, never skipped.

Kafka's names change with releases while the bytes do not: 4.1+ calls coordinator record type 0
``LegacyOffsetCommitKey``/``LegacyOffsetCommitValue`` and type 1 ``OffsetCommitKey``/``OffsetCommitValue`` (3.x and
4.0 shared one pair for both); both names are registered, for the same declarations.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkatool.schema import group_coordinator as gc
from kafkatool.schema import metadata_records, producer_snapshot, quorum_state, remote_log_metadata
from kafkatool.schema import share_group_state as sgs
from kafkatool.schema import transaction_log as tl
from kafkatool.schema.control import RAFT_CONTROL_MESSAGES
from kafkatool.schema.kafka_message import Message
from kafkatool.schema.releases import as_read_by

KEY = "key"
VALUE = "value"
RECORD = "record"
"""A whole record value (``__cluster_metadata``, ``__remote_log_metadata``, a raft control record)."""
FILE = "file"
"""A whole file (``quorum-state``, a producer ``.snapshot``)."""
EMBEDDED = "embedded"
"""Bytes inside another message (a classic group member's subscription and assignment)."""

CLUSTER_METADATA = metadata_records.METADATA_TOPIC
RAFT_CONTROL = "raft control records"
QUORUM_STATE = "quorum-state"
PRODUCER_SNAPSHOT = "producer .snapshot"


@dataclass(frozen=True, slots=True)
class Declared:
    """One Kafka message as kafkatool declares it.

    ``number`` is the coordinator record type (``key``/``value`` parts), the api key (``record`` parts of
    ``__cluster_metadata`` and ``__remote_log_metadata``) or the control record type (raft control records);
    ``None`` for files and embedded messages. A coordinator key is read at its record type (its 2-byte prefix).
    """

    name: str
    message: Message
    where: str
    part: str
    number: int | None = None

    @property
    def key_version(self) -> int | None:
        """The version kafkatool reads a coordinator key at (its record type); ``None`` for other parts."""
        return self.number if self.part == KEY else None


def _coordinator(topic: str, record_types: dict[int, tuple[str, Message, Message]]) -> list[Declared]:
    out = []
    for rtype, (_, key, value) in sorted(record_types.items()):
        out.append(Declared(key.name, key, topic, KEY, rtype))
        out.append(Declared(value.name, value, topic, VALUE, rtype))
    return out


def _build() -> dict[str, Declared]:
    entries: list[Declared] = []
    offsets = [d for d in _coordinator(gc.OFFSETS_TOPIC, gc.RECORD_TYPES) if d.number != 0]
    entries += offsets
    entries += [Declared("LegacyOffsetCommitKey", gc.OFFSET_COMMIT_KEY, gc.OFFSETS_TOPIC, KEY, 0),
                Declared("LegacyOffsetCommitValue", gc.OFFSET_COMMIT_VALUE, gc.OFFSETS_TOPIC, VALUE, 0)]
    entries += [Declared(m.name, m, gc.OFFSETS_TOPIC, EMBEDDED)
                for m in (gc.CONSUMER_PROTOCOL_SUBSCRIPTION, gc.CONSUMER_PROTOCOL_ASSIGNMENT)]
    entries += [Declared(tl.TRANSACTION_LOG_KEY.name, tl.TRANSACTION_LOG_KEY, tl.TRANSACTION_TOPIC, KEY, 0),
                Declared(tl.TRANSACTION_LOG_VALUE.name, tl.TRANSACTION_LOG_VALUE, tl.TRANSACTION_TOPIC, VALUE, 0)]
    entries += _coordinator(sgs.SHARE_GROUP_STATE_TOPIC, sgs.RECORD_TYPES)
    entries += [Declared(m.name, m, CLUSTER_METADATA, RECORD, m.api_key) for m in metadata_records.RECORDS]
    entries += [Declared(m.name, m, remote_log_metadata.REMOTE_LOG_METADATA_TOPIC, RECORD, m.api_key)
                for m in remote_log_metadata.BY_API_KEY.values()]
    entries += [Declared(m.name, m, RAFT_CONTROL, RECORD, ctype) for ctype, m in RAFT_CONTROL_MESSAGES.items()]
    entries += [Declared(quorum_state.QUORUM_STATE_DATA.name, quorum_state.QUORUM_STATE_DATA, QUORUM_STATE, FILE),
                Declared(producer_snapshot.PRODUCER_SNAPSHOT.name, producer_snapshot.PRODUCER_SNAPSHOT,
                         PRODUCER_SNAPSHOT, FILE)]
    registry: dict[str, Declared] = {}
    for entry in entries:
        assert entry.name not in registry, f"{entry.name} declared twice"
        registry[entry.name] = entry
    return registry


MESSAGES: dict[str, Declared] = _build()
"""Every declared message by Kafka's name."""

RELEASE_LAYOUTS: dict[tuple[str, str], Message] = {
    ("4.0", "ShareGroupMetadataValue"): gc.SHARE_GROUP_METADATA_VALUE_PREVIEW,
    ("4.0", "ShareGroupStatePartitionMetadataValue"): gc.SHARE_GROUP_STATE_PARTITION_METADATA_VALUE_PREVIEW,
    ("4.0", "ShareSnapshotValue"): sgs.SHARE_SNAPSHOT_VALUE_PREVIEW,
    ("4.0", "ShareUpdateValue"): sgs.SHARE_UPDATE_VALUE_PREVIEW,
    ("3.9", "ShareGroupMetadataValue"): gc.SHARE_GROUP_METADATA_VALUE_PREVIEW,
}
"""(release line, Kafka's name) -> the layout kafkatool also reads for a message whose layout that release wrote
differently at the same version (KIP-932's early access and preview); :data:`MESSAGES` holds the final layout."""


def declared(name: str, release: str | None = None) -> Declared | None:
    """The declaration of Kafka's message ``name`` (as ``release``, e.g. ``"4.0.2"``, wrote it when that differs),
    ``None`` when kafkatool has none."""
    decl = MESSAGES.get(name)
    if decl is None or release is None:
        return decl
    line = ".".join(release.split(".")[:2])
    earlier = RELEASE_LAYOUTS.get((line, name))
    return decl if earlier is None else Declared(name, earlier, decl.where, decl.part, decl.number)


_OFFSETS_TYPES = frozenset(d.number for d in MESSAGES.values()
                           if d.where == gc.OFFSETS_TOPIC and d.part == KEY and d.number is not None)
SERDE_RECORD_TYPES: dict[tuple[str, str], frozenset[int]] = {
    ("3.9", gc.OFFSETS_TOPIC): frozenset(range(0, 9)),
    ("4.0", gc.OFFSETS_TOPIC): frozenset(range(0, 17)),
    ("4.4", gc.OFFSETS_TOPIC): _OFFSETS_TYPES - {9},
}
"""(release line, topic) -> the coordinator record types that release's serde reads, where it reads fewer than
kafkatool declares: 3.9's ``CoordinatorRecordSerde`` switches over types 0-8 (its early-access share group
records are never read), 4.0's ``GroupCoordinatorRecordSerde`` over 0-16 (no streams group records); 4.1+ reads
the types of its generated ``CoordinatorRecordType``, which no longer has 4.0's ShareGroupPartitionMetadata (type
9, removed by KAFKA-17747 before 4.1). Any other type is that release's ``UnknownRecordTypeException``
(DumpLogSegments: ``Unknown record type N at offset O, skipping.``)."""


def _line(release: str | None) -> str | None:
    return None if release is None else ".".join(release.split(".")[:2])


def coordinator_record_types(topic: str, release: str | None = None) -> frozenset[int]:
    """The record types of ``topic`` (``__consumer_offsets``, ``__share_group_state``) that ``release`` (e.g.
    ``"4.0.2"``; ``None``: the newest) reads."""
    known = frozenset(d.number for d in MESSAGES.values()
                      if d.where == topic and d.part == KEY and d.number is not None)
    if release is None:
        return known
    line = _line(release) or ""
    if line.startswith("4.") and line != "4.0":
        line = "4.4"  # 4.1 onwards: the generated CoordinatorRecordType of the newest line kafkatool checks
    return SERDE_RECORD_TYPES.get((line, topic), known) & known


def coordinator_message(topic: str, part: str, record_type: int, release: str | None = None) -> Message | None:
    """The key or value (``part``) declaration of ``topic``'s ``record_type`` as ``release`` reads it (its own
    layout where it differs, :data:`RELEASE_LAYOUTS`, without the fields added after it,
    :data:`kafkatool.schema.releases.RELEASE_LACKS`); ``None`` when that release does not read the type."""
    if record_type not in coordinator_record_types(topic, release):
        return None
    for decl in MESSAGES.values():
        if decl.where == topic and decl.part == KEY and decl.number == record_type:
            name = decl.name.removesuffix("Key") + ("Key" if part == KEY else "Value")
            found = declared(name, release)
            return as_read_by(found.message, name, release) if found else None
    return None
