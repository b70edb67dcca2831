"""The transaction version in use, and which producer-state rules follow from it, pure.

Models ``org.apache.kafka.server.common.TransactionVersion`` (the ``transaction.version`` feature, KIP-890):
TV_0 and TV_1 end a transaction with markers at the producer's own epoch; TV_2 (``supportsEpochBump``, the
default of a cluster formatted by Kafka 4.0 or later) makes the coordinator bump the epoch at every transaction end
(``TransactionMetadata.prepareAbortOrCommit``): the PrepareCommit/PrepareAbort record and the COMMIT/ABORT markers
carry epoch + 1, and the producer's next transaction continues at that epoch from sequence 0. The version is per
transaction (``clientTransactionVersion``: an old client on a TV_2 cluster still ends its transactions at its own
epoch), the cluster's feature level only bounds it.

How kafkatool decides the version a log was written under (:func:`decide`), first that answers:

1. the ``FeatureLevelRecord`` of ``transaction.version`` in the cluster's metadata log (absent: level 0);
2. the batches themselves (:class:`EpochBumpEvidence`): a producer's COMMIT marker at its transaction's data
   epoch + 1 is TV_2 (below TV_2 the coordinator writes a commit at the producer's own epoch); a marker at the
   data epoch is TV_0/1. An ABORT at epoch + 1 followed by data at that epoch proves nothing: TV_0/1 write it
   too (KIP-360's epoch bump after an abortable error, as in the ``txn-clean`` corpus case, and the
   coordinator's fencing abort of a timed-out transaction);
3. ``--kafka-version``: a 3.x broker has no ``transaction.version`` (TV_0), a 4.x cluster defaults to TV_2;
4. otherwise TV_0, the rules kafkatool always applied.

The rule that differs, Kafka 4.1+'s ``ProducerAppendInfo.checkProducerEpoch`` for markers, lives with the other
append checks in :mod:`kafkatool.storage.producer_state` (:func:`~kafkatool.storage.producer_state.check_marker_epoch`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

FEATURE_NAME = "transaction.version"
"""``TransactionVersion.FEATURE_NAME``."""


class TransactionVersion(IntEnum):
    """Kafka's ``TransactionVersion`` feature levels."""

    TV_0 = 0
    TV_1 = 1
    TV_2 = 2

    @property
    def supports_epoch_bump(self) -> bool:
        """``supportsEpochBump()``: the coordinator bumps the producer epoch at each transaction end."""
        return self >= TransactionVersion.TV_2

    @property
    def label(self) -> str:
        """``TV_0`` .. ``TV_2``."""
        return self.name


def from_feature_level(level: int | None) -> TransactionVersion:
    """``TransactionVersion.fromFeatureLevel``: an absent feature is level 0; a newer level than kafkatool knows
    keeps TV_2's rules (the newest it models)."""
    if level is None or level <= 0:
        return TransactionVersion.TV_0
    return TransactionVersion(min(level, TransactionVersion.TV_2))


def from_kafka_version(version: str) -> TransactionVersion:
    """The transaction version a cluster of this Kafka release runs by default: none before 4.0 (TV_0), TV_2
    (``TransactionVersion.LATEST_PRODUCTION``) on a cluster formatted by 4.0 or later. ``ValueError`` when the
    text is not a release number."""
    parts = version.strip().split(".")
    if not 2 <= len(parts) <= 3 or not all(p.isdigit() for p in parts[:2]) \
            or (len(parts) == 3 and not parts[2].split("-")[0].isdigit()):
        raise ValueError(f"not a Kafka release number: {version!r} (e.g. 3.9.2, 4.0, 4.4.0)")
    major = int(parts[0])
    return TransactionVersion.TV_2 if major >= 4 else TransactionVersion.TV_0


@dataclass(slots=True)
class EpochBumpEvidence:
    """What the batches say about the transaction version, gathered in one pass (fed before each batch is
    applied): ``bumps`` counts COMMIT markers at the data epoch + 1 (TV_2), ``plain`` markers at the data epoch
    (TV_0/1), ``abort_bumps`` ABORT markers at the data epoch + 1 (either); ``bumped`` holds the producers seen
    committing with a bump."""

    bumps: int = 0
    plain: int = 0
    abort_bumps: int = 0
    bumped: set[int] = field(default_factory=set)
    _data_epoch: dict[int, int] = field(default_factory=dict)  # pid -> epoch of its open transaction's data

    def data(self, producer_id: int, epoch: int, transactional: bool) -> None:
        """A data batch of ``producer_id``."""
        if transactional:
            self._data_epoch.setdefault(producer_id, epoch)

    def marker(self, producer_id: int, epoch: int, commit: bool) -> None:
        """A COMMIT/ABORT marker of ``producer_id``."""
        data = self._data_epoch.pop(producer_id, None)
        if data is None:
            return  # no open transaction seen: a retry or a marker of a transaction begun before the replay
        if epoch == data + 1:
            if commit:
                self.bumps += 1
                self.bumped.add(producer_id)
            else:
                self.abort_bumps += 1
        elif epoch == data:
            self.plain += 1

    def bumps_at_marker(self, producer_id: int, epoch: int, commit: bool) -> bool:
        """Whether this marker (not yet fed) is a COMMIT ending the producer's open transaction with a bump."""
        data = self._data_epoch.get(producer_id)
        return commit and data is not None and epoch == data + 1

    def inferred(self) -> TransactionVersion | None:
        """TV_2 on any confirmed bump, TV_0 on markers without one, ``None`` when no transaction ended."""
        if self.bumps:
            return TransactionVersion.TV_2
        if self.plain:
            return TransactionVersion.TV_0
        return None


@dataclass(frozen=True, slots=True)
class Decision:
    """The transaction version applied, where it came from (``metadata-log``, ``batches``,
    ``--kafka-version``, ``default``) and a sentence."""

    version: TransactionVersion
    source: str
    detail: str

    def to_json(self) -> dict[str, object]:
        """The decision as a report field."""
        return {"version": int(self.version), "label": self.version.label, "source": self.source,
                "epoch_bump_at_transaction_end": self.version.supports_epoch_bump, "detail": self.detail}


def decide(*, feature_level: int | None = None, metadata_log: bool = False,
           evidence: EpochBumpEvidence | None = None, kafka_version: str | None = None) -> Decision:
    """The transaction version to apply: the metadata log's feature level when there is a metadata log, else
    the batches' evidence, else ``kafka_version``, else TV_0."""
    if metadata_log:
        v = from_feature_level(feature_level)
        return Decision(v, "metadata-log", f"{FEATURE_NAME} feature level {feature_level or 0} in __cluster_metadata")
    seen = evidence.inferred() if evidence is not None else None
    if seen is not None and evidence is not None:
        if seen.supports_epoch_bump:
            return Decision(seen, "batches", f"{evidence.bumps} commit(s) bumped the producer epoch")
        return Decision(seen, "batches", f"{evidence.plain} transaction end(s) kept the producer epoch")
    if kafka_version is not None:
        v = from_kafka_version(kafka_version)
        return Decision(v, "--kafka-version", f"Kafka {kafka_version}: "
                        + ("a 4.x cluster defaults to TV_2" if v.supports_epoch_bump else "no transaction.version"))
    return Decision(TransactionVersion.TV_0, "default", "no metadata log, no transaction end in the batches, no "
                    "--kafka-version: the rules of TV_0/1")


__all__ = ["FEATURE_NAME", "Decision", "EpochBumpEvidence", "TransactionVersion", "decide", "from_feature_level",
           "from_kafka_version"]
