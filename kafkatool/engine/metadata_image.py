"""Replaying the KRaft metadata log into the cluster's metadata image, and what a restart keeps of the log.

Models, without files:

* ``KafkaMetadataLog.recoverSnapshots`` (partial ``.checkpoint.part`` and ``.checkpoint.deleted`` files and
  snapshots below the log start offset are deleted, the rest retained; the latest is the greatest
  ``OffsetAndEpoch``) and ``truncateToLatestSnapshot`` (a latest snapshot whose epoch is above the log's
  latest epoch, or equal with an end offset past the log end, truncates the log fully to start at it and
  forgets the older snapshots);
* ``KafkaRaftClient``'s first listener load: the latest snapshot, then every log batch from its end offset
  (the metadata log persists no high watermark, so everything up to the log end counts as committed);
* ``MetadataBatchLoader`` (Begin/End/AbortTransaction handled by the loader, never replayed into the image: an
  aborted transaction is dropped, an unfinished one is not published) and ``MetadataDelta.replay`` with
  ``TopicsDelta``/``TopicDelta`` (``PartitionRegistration.merge``: a null field keeps the old value, leader -2
  means no change, any leader change bumps the leader epoch, every change bumps the partition epoch),
  ``ClusterDelta`` (broker registration, fencing by epoch, controlled shutdown, controllers),
  ``FeaturesDelta``, ``ProducerIdsDelta`` and ``ConfigurationsDelta``. A record Kafka's replay throws on is
  reported (Kafka's fault handler logs it) and skipped.
* ``KRaftControlRecordStateMachine`` (KIP-853): the voter set and kraft.version from the KRaftVoters and
  KRaftVersion control records of the latest snapshot (at its last contained offset), then of the log from its
  end offset, uncommitted ones included; without a VotersRecord the voters are the static
  ``controller.quorum.voters``, which only a ``quorum-state`` of data version 0 records.
* ``LogManager.isStrayKraftReplica`` for the cross-check of a broker's partition directories.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from kafkatool.model import ControlType, Defect
from kafkatool.schema.metadata_records import (
    METADATA_VERSIONS,
    MetaBatch,
    MetadataRecord,
    SnapshotFile,
)

NO_LEADER_CHANGE = -2
NO_LEADER = -1
MIGRATING_DIR = "AAAAAAAAAAAAAAAAAAAAAA"
LEADER_RECOVERY = {0: "RECOVERED", 1: "RECOVERING"}
SECURITY_PROTOCOLS = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}
ZK_MIGRATION_STATES = {0: "NONE", 1: "MIGRATION", 2: "PRE_MIGRATION", 3: "POST_MIGRATION", 4: "ZK"}
CONFIG_RESOURCE_TYPES = {0: "UNKNOWN", 2: "TOPIC", 4: "BROKER", 8: "BROKER_LOGGER", 16: "CLIENT_METRICS",
                         32: "GROUP"}
FENCING_CHANGE = {-1: False, 0: None, 1: True}
CONTROLLED_SHUTDOWN_CHANGE = {0: None, 1: True}
TOPIC_RESOURCE = 2
SNAPSHOT_HEADER = ControlType.SNAPSHOT_HEADER.value
SNAPSHOT_FOOTER = ControlType.SNAPSHOT_FOOTER.value
KRAFT_VERSION = ControlType.KRAFT_VERSION.value
KRAFT_VOTERS = ControlType.KRAFT_VOTERS.value
KRAFT_VERSION_DEFAULT = 0
"""``KRaftControlRecordStateMachine.lastKraftVersion``: ``KRAFT_VERSION_0`` when no KRaftVersionRecord was read."""


@dataclass
class SnapshotRecovery:
    """``recoverSnapshots`` plus ``truncateToLatestSnapshot``: what stays, what goes, and why."""

    retained: list[SnapshotFile]
    deleted: list[tuple[SnapshotFile, str]]
    latest: SnapshotFile | None
    truncated_to_snapshot: bool
    log_start_offset: int
    log_end_offset: int
    reason: str


def recover_snapshots(files: list[SnapshotFile], log_start_offset: int, log_end_offset: int,
                      log_latest_epoch: int | None) -> SnapshotRecovery:
    """Which snapshot files a restart keeps, and whether the log is fully truncated to the latest one."""
    retained: list[SnapshotFile] = []
    deleted: list[tuple[SnapshotFile, str]] = []
    for f in sorted(files, key=lambda s: (s.snapshot_id, s.suffix)):
        if f.suffix == ".checkpoint.part":
            deleted.append((f, "partial snapshot (.checkpoint.part): an interrupted write"))
        elif f.suffix == ".checkpoint.deleted":
            deleted.append((f, "already marked for deletion"))
        elif f.snapshot_id.end_offset < log_start_offset:
            deleted.append((f, f"end offset below the log start offset {log_start_offset}"))
        else:
            retained.append(f)
    latest = retained[-1] if retained else None
    latest_epoch = log_latest_epoch if log_latest_epoch is not None else 0
    start, end = log_start_offset, log_end_offset
    truncated = False
    reason = "no truncation (no snapshot)"
    if latest is not None:
        sid = latest.snapshot_id
        if sid.epoch > latest_epoch or (sid.epoch == latest_epoch and sid.end_offset > log_end_offset):
            truncated = True
            start = end = sid.end_offset
            reason = (f"latest snapshot {latest.name} is beyond the log (log end {log_end_offset}, latest epoch "
                      f"{latest_epoch}): the log is truncated fully and starts at {sid.end_offset}")
            for older in retained[:-1]:
                deleted.append((older, "forgotten after the full truncation to the latest snapshot"))
            retained = [latest]
        else:
            reason = "no truncation (latest snapshot not beyond the log end)"
    return SnapshotRecovery(retained, deleted, latest, truncated, start, end, reason)


@dataclass
class PartitionState:
    """``PartitionRegistration``."""

    replicas: list[int]
    directories: list[str]
    isr: list[int]
    removing_replicas: list[int]
    adding_replicas: list[int]
    leader: int
    leader_recovery_state: int
    leader_epoch: int
    partition_epoch: int
    elr: list[int]
    last_known_elr: list[int]


@dataclass
class TopicState:
    """``TopicImage``: name, id, partitions."""

    name: str
    topic_id: str
    partitions: dict[int, PartitionState] = field(default_factory=dict)


@dataclass
class BrokerState:
    """``BrokerRegistration``."""

    broker_id: int
    broker_epoch: int
    incarnation_id: str
    listeners: list[dict[str, Any]]
    features: list[dict[str, Any]]
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool
    is_migrating_zk_broker: bool
    log_dirs: list[str]


@dataclass
class Image:
    """The metadata image: what ``MetadataImage`` holds for the parts this tool models."""

    metadata_version: int | None = None
    features: dict[str, int] = field(default_factory=dict)
    zk_migration_state: int = 0
    brokers: dict[int, BrokerState] = field(default_factory=dict)
    controllers: dict[int, dict[str, Any]] = field(default_factory=dict)
    topics: dict[str, TopicState] = field(default_factory=dict)  # by topic id
    next_producer_id: int = 0
    configs: dict[tuple[int, str], dict[str, str]] = field(default_factory=dict)
    last_offset: int = -1
    last_epoch: int = 0
    last_time: int = -1
    others: dict[str, int] = field(default_factory=dict)  # records of kinds not modelled, by class

    def topic_by_name(self, name: str) -> TopicState | None:
        """The live topic called ``name``."""
        for t in self.topics.values():
            if t.name == name:
                return t
        return None


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One change of a partition's leader or ISR (or its creation/deletion), where and when it happened."""

    offset: int | None  # None for state read from a snapshot (its records' offsets are the file's own)
    timestamp: int
    epoch: int
    source: str
    record: str
    topic: str
    topic_id: str
    partition: int
    leader: int | None
    isr: tuple[int, ...]
    leader_epoch: int | None
    partition_epoch: int | None
    leader_recovery_state: str | None


class ReplayFault(Exception):
    """What Kafka's replay throws for a record (its fault handler logs it and goes on)."""


class Replayer:
    """Replays batches into an :class:`Image` the way ``MetadataBatchLoader`` + ``MetadataDelta`` do."""

    def __init__(self, source: str = "log") -> None:
        self.image = Image()
        self.defects: list[Defect] = []
        self.history: list[HistoryEntry] = []
        self.source = source
        self._saved: Image | None = None  # the image before an open transaction
        self._saved_history = 0
        self._delta_base_configs: set[tuple[int, str]] = set()
        self.records_replayed = 0

    def published(self) -> Image:
        """The image a listener sees: an unfinished transaction is not published."""
        return self._saved if self._saved is not None else self.image

    def replay_batches(self, batches: list[MetaBatch]) -> None:
        """Every metadata record of ``batches`` in order (control batches only move the provenance)."""
        for batch in batches:
            self.replay_batch(batch)

    def replay_batch(self, batch: MetaBatch) -> None:
        """One batch: its records, then the provenance (last offset, epoch, append time).

        Each batch is one ``MetadataDelta`` over the image before it (the loader applies a delta per batch).
        """
        self._delta_base_configs = set(self.image.configs)
        for rec in batch.records:
            if rec.record is None or rec.record.record_class is None:
                continue
            try:
                self._replay(rec.record, rec.offset, batch)
            except ReplayFault as err:
                self.defects.append(Defect("metadata-replay", batch.file, batch.position, rec.record.record_class,
                                           f"offset {rec.offset}: Kafka's replay fails: {err}"))
        self.image.last_offset = batch.last_offset
        self.image.last_epoch = batch.epoch
        self.image.last_time = batch.append_time

    # -- records -------------------------------------------------------------------------------------------
    def _replay(self, rec: MetadataRecord, offset: int, batch: MetaBatch) -> None:
        name = rec.record_class
        f = rec.fields or {}
        if name == "BeginTransactionRecord":
            if self._saved is not None:
                raise ReplayFault("Encountered BeginTransactionRecord while already in a transaction")
            self._saved = copy.deepcopy(self.image)
            self._saved_history = len(self.history)
            return
        if name in ("EndTransactionRecord", "AbortTransactionRecord"):
            if self._saved is None:
                raise ReplayFault(f"Encountered {name} without having seen a BeginTransactionRecord")
            if name == "AbortTransactionRecord":
                self.image = self._saved
                del self.history[self._saved_history:]
            self._saved = None
            return
        self.records_replayed += 1
        handler = getattr(self, f"_on_{name}", None)
        if handler is None:
            self.image.others[name or "?"] = self.image.others.get(name or "?", 0) + 1
            return
        try:
            handler(f, offset, batch)
        except (KeyError, TypeError, ValueError, IndexError) as err:  # a field Kafka's replay would trip over too
            raise ReplayFault(f"{type(err).__name__}: {err}") from None

    def _on_TopicRecord(self, f: dict[str, Any], offset: int, batch: MetaBatch) -> None:
        self.image.topics[f["topicId"]] = TopicState(f["name"], f["topicId"])

    def _on_RemoveTopicRecord(self, f: dict[str, Any], offset: int, batch: MetaBatch) -> None:
        topic = self.image.topics.pop(f["topicId"], None)
        if topic is None:
            raise ReplayFault(f"Unable to delete topic with id {f['topicId']}: no such topic found.")
        # ConfigurationsDelta.replay(RemoveTopicRecord): only a topic config already in the image before this
        # delta is deleted; one created within the same delta survives the topic.
        if (TOPIC_RESOURCE, topic.name) in self._delta_base_configs:
            self.image.configs.pop((TOPIC_RESOURCE, topic.name), None)
        for p in sorted(topic.partitions):
            self._history(offset, batch, "RemoveTopicRecord", topic, p, None)

    def _on_PartitionRecord(self, f: dict[str, Any], offset: int, batch: MetaBatch) -> None:
        topic = self.image.topics.get(f["topicId"])
        if topic is None:
            raise ReplayFault(f"PartitionRecord for topic id {f['topicId']}, which is not in the image")
        replicas = list(f["replicas"])
        dirs = list(f.get("directories") or [])
        if dirs and len(dirs) != len(replicas):
            raise ReplayFault(f"InvalidReplicaDirectoriesException: {len(dirs)} directories for {len(replicas)} "
                              "replicas")
        part = PartitionState(replicas, _migrating(dirs, len(replicas)), list(f["isr"]),
                              list(f["removingReplicas"]), list(f["addingReplicas"]), f["leader"],
                              f.get("leaderRecoveryState", 0), f["leaderEpoch"], f["partitionEpoch"],
                              list(f.get("eligibleLeaderReplicas") or []), list(f.get("lastKnownElr") or []))
        topic.partitions[f["partitionId"]] = part
        self._history(offset, batch, "PartitionRecord", topic, f["partitionId"], part)

    def _on_PartitionChangeRecord(self, f: dict[str, Any], offset: int, batch: MetaBatch) -> None:
        topic = self.image.topics.get(f["topicId"])
        part = topic.partitions.get(f["partitionId"]) if topic else None
        if topic is None or part is None:
            raise ReplayFault(f"Unable to find partition {f['topicId']}:{f['partitionId']}")
        replicas = part.replicas if f.get("replicas") is None else list(f["replicas"])
        dirs = part.directories
        if f.get("directories") is not None:
            new_dirs = list(f["directories"])
            if f.get("replicas") is not None and new_dirs and len(new_dirs) != len(replicas):
                raise ReplayFault("InvalidReplicaDirectoriesException: directories and replicas differ in length")
            dirs = new_dirs
        changed_leader = f.get("leader", NO_LEADER_CHANGE) != NO_LEADER_CHANGE
        old_isr = list(part.isr)
        old_leader = part.leader
        lrs = f.get("leaderRecoveryState", -1)
        if lrs not in (-1, 0, 1):
            raise ReplayFault(f"Unknown leader recovery state {lrs}")
        new = PartitionState(
            replicas, _migrating(dirs, len(replicas)),
            part.isr if f.get("isr") is None else list(f["isr"]),
            part.removing_replicas if f.get("removingReplicas") is None else list(f["removingReplicas"]),
            part.adding_replicas if f.get("addingReplicas") is None else list(f["addingReplicas"]),
            f["leader"] if changed_leader else part.leader,
            part.leader_recovery_state if lrs == -1 else lrs,
            part.leader_epoch + 1 if changed_leader else part.leader_epoch,
            part.partition_epoch + 1,
            part.elr if f.get("eligibleLeaderReplicas") is None else list(f["eligibleLeaderReplicas"]),
            part.last_known_elr if f.get("lastKnownElr") is None else list(f["lastKnownElr"]))
        topic.partitions[f["partitionId"]] = new
        if new.leader != old_leader or new.isr != old_isr or changed_leader:
            self._history(offset, batch, "PartitionChangeRecord", topic, f["partitionId"], new)

    def _on_RegisterBrokerRecord(self, f: dict[str, Any], offset: int, batch: MetaBatch) -> None:
        listeners = [{"name": e["name"], "host": e["host"], "port": e["port"],
                      "security_protocol": SECURITY_PROTOCOLS.get(e["securityProtocol"], str(e["securityProtocol"]))}
                     for e in f["endPoints"]]
        self.image.brokers[f["brokerId"]] = BrokerState(
            f["brokerId"], f["brokerEpoch"], f["incarnationId"], listeners, list(f["features"]), f["rack"],
            f["fenced"], f.get("inControlledShutdown", False), f.get("isMigratingZkBroker", False),
            list(f.get("logDirs") or []))

    def _on_UnregisterBrokerRecord(self, f: dict[str, Any], offset: int, batch: MetaBatch) -> None:
        self.image.brokers.pop(f["brokerId"], None)

    def _broker(self, broker_id: int, epoch: int, action: str) -> BrokerState:
        broker = self.image.brokers.get(broker_id)
        if broker is None:
            raise ReplayFault(f"Tried to {action} broker {broker_id}, but that broker was not registered.")
        if broker.broker_epoch != epoch:
            raise ReplayFault(f"Tried to {action} broker {broker_id}, but the given epoch, {epoch}, did not match "
                              f"the current broker epoch, {broker.broker_epoch}")
        return broker

    def _on_FenceBrokerRecord(self, f: dict[str, Any], offset: int, batch: MetaBatch) -> None:
        self._broker(f["id"], f["epoch"], "fence").fenced = True

    def _on_UnfenceBrokerRecord(self, f: dict[str, Any], offset: int, batch: MetaBatch) -> None:
        self._broker(f["id"], f["epoch"], "unfence").fenced = False

    def _on_BrokerRegistrationChangeRecord(self, f: dict[str, Any], offset: int,
                                           batch: MetaBatch) -> None:
        broker = self._broker(f["brokerId"], f["brokerEpoch"], "change")
        fenced = f.get("fenced", 0)
        shutdown = f.get("inControlledShutdown", 0)
        if fenced not in FENCING_CHANGE:
            raise ReplayFault(f"Unable to replay record: unknown value for fenced field: {fenced}")
        if shutdown not in CONTROLLED_SHUTDOWN_CHANGE:
            raise ReplayFault(f"Unable to replay record: unknown value for inControlledShutdown field: {shutdown}")
        if FENCING_CHANGE[fenced] is not None:
            broker.fenced = bool(FENCING_CHANGE[fenced])
        if CONTROLLED_SHUTDOWN_CHANGE[shutdown] is not None:
            broker.in_controlled_shutdown = True
        if f.get("logDirs"):
            broker.log_dirs = list(f["logDirs"])

    def _on_RegisterControllerRecord(self, f: dict[str, Any], offset: int, batch: MetaBatch) -> None:
        self.image.controllers[f["controllerId"]] = {
            "controller_id": f["controllerId"], "incarnation_id": f["incarnationId"],
            "zk_migration_ready": f["zkMigrationReady"],
            "listeners": [{"name": e["name"], "host": e["host"], "port": e["port"]} for e in f["endPoints"]]}

    def _on_FeatureLevelRecord(self, f: dict[str, Any], offset: int, batch: MetaBatch) -> None:
        if f["name"] == "metadata.version":
            if f["featureLevel"] not in METADATA_VERSIONS:
                raise ReplayFault(f"No MetadataVersion with feature level {f['featureLevel']}")
            self.image.metadata_version = f["featureLevel"]
        elif f["featureLevel"] == 0:
            self.image.features.pop(f["name"], None)
        else:
            self.image.features[f["name"]] = f["featureLevel"]

    def _on_ZkMigrationStateRecord(self, f: dict[str, Any], offset: int, batch: MetaBatch) -> None:
        self.image.zk_migration_state = f["zkMigrationState"]

    def _on_ProducerIdsRecord(self, f: dict[str, Any], offset: int, batch: MetaBatch) -> None:
        self.image.next_producer_id = f["nextProducerId"]

    def _on_ConfigRecord(self, f: dict[str, Any], offset: int, batch: MetaBatch) -> None:
        key = (f["resourceType"], f["resourceName"])
        values = self.image.configs.setdefault(key, {})
        if f["value"] is None:
            values.pop(f["name"], None)
        else:
            values[f["name"]] = f["value"]
        if not values:
            del self.image.configs[key]

    def _on_NoOpRecord(self, f: dict[str, Any], offset: int, batch: MetaBatch) -> None:
        return

    def _history(self, offset: int, batch: MetaBatch, record: str, topic: TopicState, partition: int,
                 part: PartitionState | None) -> None:
        self.history.append(HistoryEntry(
            None if self.source == "snapshot" else offset, batch.append_time, batch.epoch, self.source, record,
            topic.name, topic.topic_id, partition,
            None if part is None else part.leader, tuple(part.isr) if part else (),
            None if part is None else part.leader_epoch, None if part is None else part.partition_epoch,
            None if part is None else LEADER_RECOVERY.get(part.leader_recovery_state,
                                                          str(part.leader_recovery_state))))


class Loaded(Replayer):
    """A listener's first load: the latest snapshot, then the log batches from its end offset."""

    def __init__(self) -> None:
        super().__init__("snapshot")
        self.start_offset = 0
        self.log_batches: list[MetaBatch] = []


def listener_load(recovery: SnapshotRecovery, snap_batches: list[MetaBatch], log_batches: list[MetaBatch]) -> Loaded:
    """``KafkaRaftClient.updateListenersProgress`` for a new listener: the latest snapshot (``handleLoadSnapshot``,
    provenance from its id and header) when there is one, then every log batch from its end offset, or from the
    log start without a snapshot (``handleCommit``; all of the log counts as committed)."""
    loaded = Loaded()
    loaded.start_offset = recovery.log_start_offset
    if recovery.latest is not None:
        loaded.replay_batches(snap_batches)
        snapshot_provenance(loaded.image, recovery.latest, snap_batches)
        loaded.start_offset = recovery.latest.snapshot_id.end_offset
    loaded.source = "log"
    loaded.log_batches = [b for b in log_batches if b.last_offset >= loaded.start_offset]
    loaded.replay_batches(loaded.log_batches)
    return loaded


def history(recovery: SnapshotRecovery, snap_batches: list[MetaBatch], log_batches: list[MetaBatch], topic: str,
            partition: int) -> list[HistoryEntry]:
    """Every change of one partition's leader and ISR: over the whole log when it starts at offset 0, else from
    the latest snapshot (its state as entries without an offset) and the log after it."""
    if recovery.log_start_offset > 0:
        replayer: Replayer = listener_load(recovery, snap_batches, log_batches)
    else:
        replayer = Replayer("log")
        replayer.replay_batches(log_batches)
    return [h for h in replayer.history if h.topic == topic and h.partition == partition]


def snapshot_provenance(image: Image, snap: SnapshotFile, batches: list[MetaBatch]) -> None:
    """A loaded snapshot's provenance, as ``RecordsSnapshotReader`` gives it: its id's end offset - 1 and epoch,
    and the SnapshotHeader's last contained log timestamp."""
    image.last_offset = snap.snapshot_id.end_offset - 1
    image.last_epoch = snap.snapshot_id.epoch
    for b in batches:
        for ctype, fields in b.controls:
            if ctype == SNAPSHOT_HEADER and fields is not None:
                image.last_time = fields["lastContainedLogTimestamp"]
                return


def snapshot_checks(snap: SnapshotFile, batches: list[MetaBatch], log_batches: list[MetaBatch],
                    file: str) -> list[Defect]:
    """``RecordsSnapshotReader``'s rule (the first batch is a control batch opening with a SnapshotHeader), the
    footer a frozen snapshot ends with, and the name's epoch against the log's epoch of its last record."""
    out: list[Defect] = []
    if not batches or not batches[0].controls or batches[0].controls[0][0] != SNAPSHOT_HEADER:
        out.append(Defect("metadata-snapshot-header", file, 0, "batches[0]",
                          "the first batch is not a control batch opening with a SnapshotHeader: Kafka's snapshot "
                          "reader throws IllegalStateException and the snapshot cannot be loaded"))
    if not batches or not any(t == SNAPSHOT_FOOTER for t, _ in batches[-1].controls):
        out.append(Defect("metadata-snapshot-footer", file, None, "batches[-1]",
                          "no SnapshotFooter in the last batch: the snapshot was not completed", "warning"))
    sid = snap.snapshot_id
    logged = next((b.epoch for b in log_batches if b.base_offset <= sid.end_offset - 1 <= b.last_offset), None)
    if logged is not None and logged != sid.epoch:
        out.append(Defect("metadata-snapshot-epoch", file, None, "epoch",
                          f"snapshot epoch {sid.epoch} differs from the epoch {logged} of the log's record at offset "
                          f"{sid.end_offset - 1} (its last contained record)"))
    return out


def quorum_state_checks(state_epoch: int, last_fetched_epoch: int, file: str) -> list[Defect]:
    """``QuorumState.initialize``: a stored epoch below the log's last fetched epoch is only warned about."""
    if state_epoch >= last_fetched_epoch:
        return []
    return [Defect("quorum-state-epoch", file, None, "leaderEpoch",
                   f"quorum-state epoch {state_epoch} is below the log's last epoch {last_fetched_epoch} (an older "
                   f"file, e.g. restored from a backup): Kafka warns and starts unattached in epoch "
                   f"{last_fetched_epoch}", "warning")]


def _migrating(dirs: list[str], replicas: int) -> list[str]:
    """``PartitionRegistration.defaultToMigrating``: no directories (or all MIGRATING) means all MIGRATING."""
    if not dirs or all(d == MIGRATING_DIR for d in dirs):
        return [MIGRATING_DIR] * replicas
    return dirs


def image_json(image: Image) -> dict[str, Any]:
    """The image as stable JSON: topics and brokers sorted, Kafka's sentinels kept as numbers where Kafka
    shows them (a leader of -1 is ``-1``: no leader)."""
    topics = []
    for t in sorted(image.topics.values(), key=lambda t: t.name):
        parts = []
        for n in sorted(t.partitions):
            p = t.partitions[n]
            parts.append({"partition": n, "replicas": p.replicas, "isr": p.isr, "leader": p.leader,
                          "leader_epoch": p.leader_epoch, "partition_epoch": p.partition_epoch,
                          "leader_recovery_state": LEADER_RECOVERY.get(p.leader_recovery_state,
                                                                       str(p.leader_recovery_state)),
                          "removing_replicas": p.removing_replicas, "adding_replicas": p.adding_replicas,
                          "eligible_leader_replicas": p.elr, "last_known_elr": p.last_known_elr,
                          "directories": p.directories})
        topics.append({"name": t.name, "topic_id": t.topic_id, "partitions": parts})
    brokers = [{"broker_id": b.broker_id, "broker_epoch": b.broker_epoch, "incarnation_id": b.incarnation_id,
                "fenced": b.fenced, "in_controlled_shutdown": b.in_controlled_shutdown, "rack": b.rack,
                "listeners": b.listeners, "log_dirs": b.log_dirs}
               for b in sorted(image.brokers.values(), key=lambda b: b.broker_id)]
    levels = dict(sorted(image.features.items()))
    if image.metadata_version is not None:
        levels["metadata.version"] = image.metadata_version
    configs = [{"resource_type": CONFIG_RESOURCE_TYPES.get(rt, str(rt)), "resource_name": name,
                "configs": dict(sorted(values.items()))}
               for (rt, name), values in sorted(image.configs.items())]
    return {
        "provenance": {"last_contained_offset": image.last_offset, "last_contained_epoch": image.last_epoch,
                       "last_contained_log_time_ms": image.last_time},
        "features": {"metadata_version": METADATA_VERSIONS.get(image.metadata_version or 0),
                     "finalized_levels": dict(sorted(levels.items())),
                     "zk_migration_state": ZK_MIGRATION_STATES.get(image.zk_migration_state,
                                                                   str(image.zk_migration_state))},
        "brokers": brokers,
        "controllers": [image.controllers[c] for c in sorted(image.controllers)],
        "topics": topics,
        "producer_ids": {"next_producer_id": image.next_producer_id},
        "configs": configs,
        "not_modelled": dict(sorted(image.others.items())),
    }


def history_json(entry: HistoryEntry) -> dict[str, Any]:
    """One history entry as JSON."""
    return {"offset": entry.offset, "timestamp": entry.timestamp, "epoch": entry.epoch, "source": entry.source,
            "record": entry.record, "topic": entry.topic, "topic_id": entry.topic_id, "partition": entry.partition,
            "leader": entry.leader, "isr": list(entry.isr), "leader_epoch": entry.leader_epoch,
            "partition_epoch": entry.partition_epoch, "leader_recovery_state": entry.leader_recovery_state}


@dataclass(frozen=True, slots=True)
class LocalPartition:
    """A partition directory of a broker's log dir and the topic id its ``partition.metadata`` holds."""

    directory: str
    topic: str
    partition: int
    topic_id: str | None
    log_dir_id: str | None = None  # ``directory.id`` of the log dir's meta.properties


@dataclass(frozen=True, slots=True)
class TopicIdCheck:
    """One partition directory against the image (``LogManager.isStrayKraftReplica``)."""

    partition_dir: str
    topic_id_on_disk: str | None
    topic_id_in_image: str | None
    match: bool
    broker_is_replica: bool | None
    stray: bool
    verdict: str
    assigned_directory: str | None = None  # the directory the image assigns this broker's replica to


def cross_check(image: Image, broker_id: int | None, partitions: list[LocalPartition]) -> list[TopicIdCheck]:
    """Each local partition directory against the image: by topic id first, as Kafka's broker does."""
    out: list[TopicIdCheck] = []
    for lp in sorted(partitions, key=lambda p: p.directory):
        by_name = image.topic_by_name(lp.topic)
        image_id = by_name.topic_id if by_name else None
        by_id = image.topics.get(lp.topic_id) if lp.topic_id else None
        named_part = by_name.partitions.get(lp.partition) if by_name else None
        is_replica = None if broker_id is None or named_part is None else broker_id in named_part.replicas
        match = lp.topic_id is not None and lp.topic_id == image_id
        if lp.topic_id is None:
            verdict, stray = ("no topic id on disk (partition.metadata missing or unreadable): Kafka treats the "
                              "log as stray"), True
        elif by_id is None:
            stray = True
            if by_name is not None:
                verdict = ("topic id mismatch: stray partition of a deleted topic incarnation (the topic was "
                           f"recreated with id {image_id}); Kafka renames it -stray and deletes it")
            else:
                verdict = "topic id not in the image: stray partition of a deleted topic; Kafka deletes it"
        elif by_id.name != lp.topic:
            stray = False
            verdict = f"topic id belongs to topic {by_id.name!r} in the image, not {lp.topic!r}"
        elif lp.partition not in by_id.partitions:
            stray, verdict = True, f"partition {lp.partition} does not exist in the image: stray"
        elif broker_id is not None and broker_id not in by_id.partitions[lp.partition].replicas:
            stray = True
            verdict = (f"broker {broker_id} is not a replica (replicas {by_id.partitions[lp.partition].replicas}): "
                       "stray replica")
        else:
            stray, verdict = False, "ok"
        assigned = None
        if named_part is not None and broker_id in named_part.replicas:
            assigned = named_part.directories[named_part.replicas.index(broker_id)]
        out.append(TopicIdCheck(lp.directory, lp.topic_id, image_id, match, is_replica, stray, verdict, assigned))
    return out


def log_dir_checks(image: Image, broker_id: int | None, dirs: list[tuple[str, str | None]]) -> list[dict[str, Any]]:
    """Each broker log dir's ``directory.id`` against the broker's registration (``RegisterBrokerRecord.logDirs``)."""
    broker = image.brokers.get(broker_id) if broker_id is not None else None
    return [{"log_dir": path, "directory_id": dir_id,
             "registered": None if broker is None or dir_id is None else dir_id in broker.log_dirs}
            for path, dir_id in dirs]


def check_json(check: TopicIdCheck) -> dict[str, Any]:
    """One cross-check row as JSON."""
    return {"partition_dir": check.partition_dir, "topic_id_on_disk": check.topic_id_on_disk,
            "topic_id_in_image": check.topic_id_in_image, "match": check.match,
            "broker_is_replica": check.broker_is_replica, "stray": check.stray, "verdict": check.verdict,
            "assigned_directory": check.assigned_directory}


@dataclass(frozen=True, slots=True)
class ControlChange:
    """One KRaftVoters or KRaftVersion control record as ``KRaftControlRecordStateMachine.handleBatch`` adds it to
    its history: at ``offset`` (a snapshot's records at its last contained offset), from ``source`` (the snapshot
    file name or ``"log"``), with the record's fields."""

    offset: int
    source: str
    record: str
    fields: dict[str, Any]


def control_changes(latest: SnapshotFile | None, snap_batches: list[MetaBatch],
                    log_batches: list[MetaBatch]) -> list[ControlChange]:
    """``KRaftControlRecordStateMachine.updateState`` at start-up: ``maybeLoadSnapshot`` (the latest snapshot's
    control records, each at its ``lastContainedLogOffset``), then ``maybeLoadLog`` (every batch from the snapshot
    end offset, or the log start, read ``UNCOMMITTED``), in order."""
    out: list[ControlChange] = []
    start = 0
    if latest is not None:
        at = latest.snapshot_id.end_offset - 1
        for b in snap_batches:
            out += _controls(b, latest.name, at)
        start = latest.snapshot_id.end_offset
    for b in log_batches:
        if b.last_offset >= start:
            out += _controls(b, "log", None)
    return out


def _controls(batch: MetaBatch, source: str, at: int | None) -> list[ControlChange]:
    """A batch's KRaftVoters/KRaftVersion records (``offsetDelta`` counts every control record of the batch)."""
    found = []
    for delta, (ctype, fields) in enumerate(batch.controls):
        if ctype in (KRAFT_VOTERS, KRAFT_VERSION) and fields is not None:
            record = "VotersRecord" if ctype == KRAFT_VOTERS else "KRaftVersionRecord"
            found.append(ControlChange(batch.base_offset + delta if at is None else at, source, record, fields))
    return found


def _voter_json(v: dict[str, Any]) -> dict[str, Any]:
    feature = v.get("kRaftVersionFeature") or {}
    return {"voter_id": v["voterId"], "directory_id": v.get("voterDirectoryId"),
            "endpoints": [f"{e['name']}://{e['host']}:{e['port']}" for e in v.get("endpoints") or []],
            "kraft_version_supported": [feature.get("minSupportedVersion"), feature.get("maxSupportedVersion")]}


def _changes_json(changes: list[ControlChange]) -> list[dict[str, Any]]:
    return [{"offset": c.offset, "source": c.source, "record": c.record,
             **({"kraft_version": c.fields["kRaftVersion"]} if c.record == "KRaftVersionRecord" else
                {"voters": sorted(v["voterId"] for v in c.fields["voters"])})} for c in changes]


def quorum_json(changes: list[ControlChange], static_voters: list[int] | None,
                whole_log: list[ControlChange]) -> dict[str, Any]:
    """The voter set and kraft.version the raft client starts with (``lastVoterSet``, ``lastKraftVersion``), where
    each comes from, the changes it reads (``loaded``) and every change in the kept log (``log``, the snapshot
    aside: the history of the quorum's reconfigurations): the ``--format json`` ``quorum`` object.
    ``static_voters``: a ``quorum-state`` v0's ``currentVoters`` (the static ``controller.quorum.voters``), used
    without a VotersRecord."""
    versions = [c for c in changes if c.record == "KRaftVersionRecord"]
    voters = [c for c in changes if c.record == "VotersRecord"]
    last_version = versions[-1] if versions else None
    last_voters = voters[-1] if voters else None
    if last_voters is not None:
        current = [_voter_json(v) for v in sorted(last_voters.fields["voters"], key=lambda v: v["voterId"])]
        source = f"VotersRecord at offset {last_voters.offset} ({last_voters.source})"
    elif static_voters:
        current = [{"voter_id": v, "directory_id": None, "endpoints": [], "kraft_version_supported": [None, None]}
                   for v in sorted(static_voters)]
        source = "quorum-state data version 0 (the static controller.quorum.voters)"
    else:
        current = []
        source = "none on disk: the static controller.quorum.voters of the configuration"
    return {"kraft_version": last_version.fields["kRaftVersion"] if last_version else KRAFT_VERSION_DEFAULT,
            "kraft_version_source": (f"KRaftVersionRecord at offset {last_version.offset} ({last_version.source})"
                                     if last_version else "no KRaftVersionRecord: kraft.version 0"),
            "voters": current, "voters_source": source, "loaded": _changes_json(changes),
            "log": _changes_json(whole_log)}
