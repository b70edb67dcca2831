"""What each supported release line's own message classes lack next to kafkatool's (newest) declarations.

kafkatool declares every message at its newest layout (:mod:`kafkatool.schema.messages`). An older release reads
the records a newer one wrote with its own generated classes (``MessageDataGenerator``'s ``read`` and
``JsonConverterGenerator``'s ``write``), so ``dump-segment -f kafka --kafka-version V`` must read them as V did:

* a tagged field added after V is an unknown tag to V's reader: skipped, never shown by its converter;
* a message version above V's highest: the top-level ``read`` has no version check and reads each field under
  its own version condition (the generator drops a condition every version V knows satisfies, so a field
  present up to V's highest is read at any higher version too), but a nested struct's class throws
  ``Can't read version <v> of <Struct>`` above V's highest (``MetadataRecordSerde`` then reports ``Failed to
  deserialize record with type <id>``);
* a message V does not have at all: its serde does not know the record type or api key.

:data:`RELEASE_LACKS` says so per release line; ``tests/test_message_conformance.py`` recomputes it from each
release's JSON specs and requires it complete and exact. :func:`as_read_by` turns a declaration into the reader
that release had. Coordinator keys are read at their record type (which record types a serde reads is
:data:`kafkatool.schema.messages.SERDE_RECORD_TYPES`), so only their absence is listed here. Formats older than
their JSON spec (``ProducerSnapshot``) and layouts kafkatool does not decode (``EXCLUDED`` in the test) are not
listed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kafkatool.schema.kafka_message import Field, Message, versions


@dataclass(frozen=True, slots=True)
class Lacks:
    """What a release's spec of one message lacks: ``highest``, its highest valid version when below
    kafkatool's (``None``: the same), and ``later``, the fields (``Struct.Field`` paths, kafkatool's names) added
    after it to versions it knows (tagged ones: an older reader skips their tags)."""

    highest: int | None = None
    later: tuple[str, ...] = ()


ABSENT: None = None
"""The release has no such message."""


def _absent(*names: str) -> dict[str, Lacks | None]:
    return dict.fromkeys(names, ABSENT)


def _pairs(*bases: str) -> tuple[str, ...]:
    return tuple(f"{b}{part}" for b in bases for part in ("Key", "Value"))


_STREAMS = _pairs("StreamsGroupCurrentMemberAssignment", "StreamsGroupMemberMetadata", "StreamsGroupMetadata",
                  "StreamsGroupTargetAssignmentMember", "StreamsGroupTargetAssignmentMetadata", "StreamsGroupTopology")
_SHARE_GA = _pairs("ShareGroupCurrentMemberAssignment", "ShareGroupStatePartitionMetadata",
                   "ShareGroupTargetAssignmentMember", "ShareGroupTargetAssignmentMetadata", "ShareSnapshot",
                   "ShareUpdate")
_REGISTRATION = {"RegisterBrokerRecord": Lacks(highest=3), "BrokerRegistrationChangeRecord": Lacks(highest=2)}
_MEMBER_EPOCHS = Lacks(later=("AssignedPartitions.AssignmentEpochs", "PartitionsPendingRevocation.AssignmentEpochs"))
_ASSIGNMENT_TIME = Lacks(later=("AssignmentTimestamp",))
_TOPIC_ID = Lacks(later=("topicId",))
_DESCRIPTION_EPOCHS = Lacks(later=("StoredDescriptionTopologyEpoch", "FailedDescriptionTopologyEpoch"))
_LEGACY_COMMIT = {"LegacyOffsetCommitValue": Lacks(highest=0)}  # 4.1+: type 0's own class, version 0 only
_NO_TYPE_9 = _absent("ShareGroupPartitionMetadataKey", "ShareGroupPartitionMetadataValue")  # KAFKA-17747

RELEASE_LACKS: dict[str, dict[str, Lacks | None]] = {
    "3.9": {
        **_REGISTRATION, **_absent("ClearElrRecord", "UnregisterControllerRecord"),
        **_absent(*_pairs("ConsumerGroupRegularExpression"), *_SHARE_GA, *_STREAMS),
        "ConsumerGroupCurrentMemberAssignmentValue": _MEMBER_EPOCHS,
        "ConsumerGroupMetadataValue": Lacks(later=("MetadataHash",)),
        "ConsumerGroupTargetAssignmentMetadataValue": _ASSIGNMENT_TIME,
        "LegacyOffsetCommitValue": _TOPIC_ID, "OffsetCommitValue": _TOPIC_ID,
        "RemoteLogSegmentMetadataRecord": Lacks(later=("TxnIndexEmpty",)),
        "RemoteLogSegmentMetadataSnapshotRecord": Lacks(later=("TxnIndexEmpty",)),
        "TransactionLogValue": Lacks(later=("PreviousProducerId", "NextProducerId", "NextProducerEpoch",
                                            "ClientTransactionVersion")),
    },
    "4.0": {
        **_REGISTRATION, **_absent("UnregisterControllerRecord", *_STREAMS),
        "ConsumerGroupCurrentMemberAssignmentValue": _MEMBER_EPOCHS,
        "ConsumerGroupMetadataValue": Lacks(later=("MetadataHash",)),
        "ConsumerGroupTargetAssignmentMetadataValue": _ASSIGNMENT_TIME,
        "LegacyOffsetCommitValue": _TOPIC_ID, "OffsetCommitValue": _TOPIC_ID,
        "ShareGroupTargetAssignmentMetadataValue": _ASSIGNMENT_TIME,
        "TransactionLogValue": Lacks(later=("NextProducerEpoch",)),
    },
    "4.1": {
        **_REGISTRATION, **_LEGACY_COMMIT, **_NO_TYPE_9, **_absent("UnregisterControllerRecord"),
        "ConsumerGroupCurrentMemberAssignmentValue": _MEMBER_EPOCHS,
        "ConsumerGroupTargetAssignmentMetadataValue": _ASSIGNMENT_TIME,
        "ShareGroupTargetAssignmentMetadataValue": _ASSIGNMENT_TIME,
        "ShareSnapshotValue": Lacks(later=("DeliveryCompleteCount",)),
        "ShareUpdateValue": Lacks(later=("DeliveryCompleteCount",)),
        "StreamsGroupCurrentMemberAssignmentValue": Lacks(later=tuple(
            f"{tasks}.AssignmentEpochs" for tasks in ("ActiveTasks", "StandbyTasks", "WarmupTasks",
                                                      "ActiveTasksPendingRevocation", "StandbyTasksPendingRevocation",
                                                      "WarmupTasksPendingRevocation"))),
        "StreamsGroupMetadataValue": Lacks(later=("ValidatedTopologyEpoch", "LastAssignmentConfigs",
                                                  *_DESCRIPTION_EPOCHS.later)),
        "StreamsGroupTargetAssignmentMetadataValue": _ASSIGNMENT_TIME,
    },
    "4.2": {
        **_REGISTRATION, **_LEGACY_COMMIT, **_NO_TYPE_9, **_absent("UnregisterControllerRecord"),
        "ConsumerGroupCurrentMemberAssignmentValue": _MEMBER_EPOCHS,
        "ConsumerGroupTargetAssignmentMetadataValue": _ASSIGNMENT_TIME,
        "ShareGroupTargetAssignmentMetadataValue": _ASSIGNMENT_TIME,
        "StreamsGroupMetadataValue": _DESCRIPTION_EPOCHS,
        "StreamsGroupTargetAssignmentMetadataValue": _ASSIGNMENT_TIME,
    },
    "4.3": {
        **_LEGACY_COMMIT, **_NO_TYPE_9, **_absent("UnregisterControllerRecord"),
        "StreamsGroupMetadataValue": _DESCRIPTION_EPOCHS,
    },
    "4.4": {**_LEGACY_COMMIT, **_NO_TYPE_9},
}
"""Release line -> Kafka's message name -> what that release's spec lacks (:class:`Lacks`), or :data:`ABSENT`.
A message not listed is read by that release exactly as kafkatool declares it. (The 4.0 preview and 3.9 early-access
layouts are :data:`kafkatool.schema.messages.RELEASE_LAYOUTS`, compared here as that release's declaration.)"""


def line_of(release: str) -> str:
    """``"4.0.2"`` or ``"4.0"`` -> ``"4.0"``."""
    return ".".join(release.split(".")[:2])


def lacks(name: str, release: str | None) -> tuple[bool, Lacks | None]:
    """Whether ``release`` (``None``: the newest, as kafkatool declares it) has Kafka's message ``name``, and what
    its spec lacks (``None``: nothing)."""
    if release is None:
        return True, None
    table = RELEASE_LACKS.get(line_of(release), {})
    if name in table and table[name] is ABSENT:
        return False, None
    return True, table.get(name)


def _open(spec: str, highest: int) -> str:
    """A version range as that release's generated code tests it: a range reaching its highest version is
    open-ended (the generator drops a condition every version it knows satisfies)."""
    low, high = versions(spec)
    return f"{low}+" if high >= highest and low <= high else spec


def _view_fields(fields: tuple[Field, ...], later: frozenset[str], highest: int | None,
                 prefix: str = "") -> tuple[Field, ...]:
    """``fields`` without the ``later`` ones and, when ``highest`` is set, without those the release cannot have
    (first present above it), ranges opened and nested structs checked as its classes do."""
    out = []
    for f in fields:
        path = prefix + f.name
        if path in later:
            continue
        nested = _view_fields(f.fields, later, highest, path + ".") if f.fields else f.fields
        if highest is None:
            out.append(replace(f, fields=nested) if f.fields else f)
            continue
        if versions(f.versions)[0] > highest:
            continue
        tagged = None if f.tagged is None else _open(f.tagged, highest)
        nullable = None if f.nullable is None else _open(f.nullable, highest)
        out.append(replace(f, versions=_open(f.versions, highest), tagged=tagged, nullable=nullable, fields=nested,
                           highest=highest if f.fields else None))
    return tuple(out)


_VIEWS: dict[tuple[int, Lacks], tuple[Message, Message]] = {}
"""(declaration's identity, entry) -> (declaration, view): a view is built once, so the reader's per-struct
plans (cached by the fields' identity) are too."""


def _view(message: Message, entry: Lacks) -> Message:
    """``message`` as a release whose spec lacks ``entry`` reads it (built once per declaration and entry)."""
    key = (id(message), entry)
    hit = _VIEWS.get(key)
    if hit is not None and hit[0] is message:
        return hit[1]
    view = _make_view(message, entry)
    _VIEWS[key] = (message, view)
    return view


def _make_view(message: Message, entry: Lacks) -> Message:
    fields = _view_fields(message.fields, frozenset(entry.later), entry.highest)
    if entry.highest is None:
        return replace(message, fields=fields)
    low, _ = versions(message.valid)
    flexible_low, flexible_high = versions(message.flexible)
    flexible = f"{flexible_low}+" if flexible_low <= min(flexible_high, entry.highest) else "none"
    return replace(message, valid=f"{low}+", fields=fields, flexible=flexible)


def as_read_by(message: Message, name: str, release: str | None) -> Message | None:
    """``message`` (kafkatool's declaration of Kafka's ``name``) as ``release``'s generated class reads it:
    without the fields added after that release, with its version checks; ``None`` when the release has no such
    message; ``message`` itself when it reads it as declared."""
    present, entry = lacks(name, release)
    if not present:
        return None
    return message if entry is None else _view(message, entry)
