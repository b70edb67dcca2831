"""Registry of record decoders for Kafka's internal topics, chosen by the partition's topic name.

Records of ``__consumer_offsets``, ``__transaction_state``, ``__cluster_metadata``, ``__share_group_state``
(KIP-932) and ``__remote_log_metadata`` (KIP-405) carry keys and values in Kafka's generated-message formats.
Each decoder module registers itself here under a short name (what ``dump-segment --decoder NAME`` accepts) and
the topic names it applies to; ``dump-segment`` and the engines look decoders up by topic or by name and never
import the decoder modules directly.

A decoder never raises on bad bytes: an unknown version or a truncated field becomes raw hex plus a
:class:`RecordDefect` (the field and why), so one odd record cannot stop a dump.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafkatool.errors import DecodeError


class RecordDefect(str):
    """Why part of a record did not decode: the format ``field`` (``None`` when the defect names none) and the
    ``reason``, kept apart so they reach :class:`~kafkatool.model.Defect` as they are.

    A ``str`` whose text is ``"field: reason"`` (or the bare reason): what the JSON ``decoded.defects`` list and
    the DumpLogSegments text print, unchanged.
    """

    field: str | None
    reason: str

    def __new__(cls, field: str | None, reason: str) -> RecordDefect:
        self = super().__new__(cls, reason if field is None else f"{field}: {reason}")
        self.field = field
        self.reason = reason
        return self

    def __getnewargs__(self) -> tuple[str | None, str]:  # type: ignore[override]
        return self.field, self.reason

    @classmethod
    def of(cls, err: DecodeError) -> RecordDefect:
        """The defect a :class:`~kafkatool.errors.DecodeError` describes."""
        return cls(err.field, err.reason)


@dataclass(frozen=True, slots=True)
class DecodedRecord:
    """One record's key and value as JSON-ready values (``None`` for a null key or value).

    ``defects`` holds a :class:`RecordDefect` for each part that could not be decoded (kept as raw hex in ``key``
    or ``value``); ``kind`` names the record type when the format has one (e.g. ``offset_commit``, ``PartitionRecord``).
    """

    key: Any
    value: Any
    kind: str | None = None
    defects: tuple[RecordDefect, ...] = field(default=())


DecodeFn = Callable[[bytes | None, bytes | None], DecodedRecord]


@dataclass(frozen=True, slots=True)
class TopicDecoder:
    """A named decoder and the topic names it is chosen for automatically."""

    name: str
    topics: tuple[str, ...]
    decode: DecodeFn
    description: str


_REGISTRY: dict[str, TopicDecoder] = {}

# Decoder modules, imported lazily on first lookup so this module stays free of their weight. Each module calls
# ``register`` at import. A module that does not exist yet (work in progress) is skipped.
_MODULES = (
    "kafkatool.schema.group_coordinator",
    "kafkatool.schema.transaction_log",
    "kafkatool.schema.metadata_records",
    "kafkatool.schema.share_group_state",
    "kafkatool.schema.remote_log_metadata",
)
_loaded = False
#: The decoders' names, known without importing their modules (the command line declares its choices with them;
#: ``tests/unit/test_topic_decoder_names.py`` keeps this equal to the registry once the modules are loaded).
DECODER_NAMES = ("cluster-metadata", "group-coordinator", "remote-log-metadata", "share-group-state",
                 "transaction-log")


def register(decoder: TopicDecoder) -> TopicDecoder:
    """Add ``decoder`` to the registry (called by decoder modules at import)."""
    _REGISTRY[decoder.name] = decoder
    return decoder


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in _MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise


def decoders() -> dict[str, TopicDecoder]:
    """Every registered decoder by name."""
    _load()
    return dict(_REGISTRY)


def decoder_named(name: str) -> TopicDecoder | None:
    """The decoder called ``name``, or ``None``."""
    _load()
    return _REGISTRY.get(name)


def decoder_for_topic(topic: str) -> TopicDecoder | None:
    """The decoder chosen automatically for records of ``topic``, or ``None`` for ordinary topics."""
    _load()
    for decoder in _REGISTRY.values():
        if topic in decoder.topics:
            return decoder
    return None
