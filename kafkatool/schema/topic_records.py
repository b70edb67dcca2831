"""Registry of record decoders for Kafka's internal topics, chosen by the partition's topic name.

Records of ``__consumer_offsets``, ``__transaction_state`` and ``__cluster_metadata`` carry keys and values in
Kafka's generated-message formats. Each decoder module registers itself here under a short name (what
``dump-segment --decoder NAME`` accepts) and the topic names it applies to; ``dump-segment`` and the engines look
decoders up by topic or by name and never import the decoder modules directly.

A decoder never raises on bad bytes: an unknown version or a truncated field becomes raw hex plus a defect
message, so one odd record cannot stop a dump.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class DecodedRecord:
    """One record's key and value as JSON-ready values (``None`` for a null key or value).

    ``defects`` holds a short reason for each part that could not be decoded (kept as raw hex in ``key`` or
    ``value``); ``kind`` names the record type when the format has one (e.g. ``offset_commit``, ``PartitionRecord``).
    """

    key: Any
    value: Any
    kind: str | None = None
    defects: tuple[str, ...] = field(default=())


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
)
_loaded = False


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
