"""The steps of a simulated broker start: what Kafka does, in order, with the file and offset each concerns.

Shared by the restart loader's modules (:mod:`~kafkatool.engine.log_loader`, segment recovery, producer state
with its snapshot files) and the result (:class:`~kafkatool.engine.restart.PartitionRestart`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Step:
    """One thing Kafka does, in order: ``action`` is a stable code, ``detail`` says what and why."""

    action: str
    detail: str
    file: str | None = None
    offset: int | None = None
    position: int | None = None
    bytes: int | None = None


