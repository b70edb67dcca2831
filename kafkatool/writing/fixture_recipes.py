"""The fixture recipes: named scenarios built with :mod:`kafkatool.writing.fixture_writer`, and their registry.

Each recipe returns a log dir's files (a :data:`~kafkatool.writing.fixture_writer.Tree`); some apply damage to a
copy of a clean build. ``kafkatool fixture`` lists and builds them (:func:`build_scenario` writes through
:func:`~kafkatool.writing.atomic.write_tree`, files in sorted order); ``fixtures/`` holds the committed builds.
"""

from __future__ import annotations

import copy
import itertools
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kafkatool.errors import UsageError
from kafkatool.model import Compression, Header, OffsetIndexEntry, decrement_sequence
from kafkatool.schema import meta_properties
from kafkatool.schema.filenames import (
    CLEAN_SHUTDOWN,
    CLEANED_SUFFIX,
    DELETED_SUFFIX,
    INDEX_SUFFIX,
    LOG_START_OFFSET_CHECKPOINT,
    LOG_SUFFIX,
    META_PROPERTIES,
    PRODUCER_SNAPSHOT_SUFFIX,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    segment_file_name,
)
from kafkatool.writing.atomic import write_tree
from kafkatool.writing.fixture_writer import (
    BASE_TIME,
    CLUSTER_ID,
    DIRECTORY_ID,
    META_DATE_COMMENT,
    Appended,
    LogDir,
    PartitionWriter,
    Producer,
    SegmentBuffer,
    TopicConfig,
    Tree,
    text_value,
    topic_id_for,
)

# --- scenario registry ------------------------------------------------------------------------------------

Recipe = Callable[[], Tree]
"""A scenario's builder: no arguments, the log dir's files out."""


@dataclass(frozen=True, slots=True)
class Scenario:
    """A named fixture: a one-line description and the recipe that builds its files."""

    name: str
    description: str
    recipe: Recipe
    damaged: bool = False


SCENARIOS: dict[str, Scenario] = {}


def _scenario(name: str, description: str, *, damaged: bool = False) -> Callable[[Recipe], Recipe]:
    """Register the decorated recipe under ``name``."""

    def register(recipe: Recipe) -> Recipe:
        SCENARIOS[name] = Scenario(name, description, recipe, damaged)
        return recipe
    return register


def scenario_names() -> list[str]:
    """Every scenario name, in registry order (clean ones first)."""
    return list(SCENARIOS)


def get_scenario(name: str) -> Scenario:
    """The scenario called ``name`` (``UsageError`` listing the valid names otherwise)."""
    try:
        return SCENARIOS[name]
    except KeyError:
        raise UsageError(f"unknown scenario {name!r}; valid scenarios: {', '.join(SCENARIOS)}") from None


def build_tree(name: str) -> Tree:
    """The files of scenario ``name``, in memory."""
    return get_scenario(name).recipe()


_PARTITION_DIR = re.compile(r"^.+-\d+$")
_LOG_DIR_NAMES = frozenset({RECOVERY_POINT_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT,
                            META_PROPERTIES, CLEAN_SHUTDOWN})
KEPT_NAMES = frozenset({"expect.json"})
"""Files a rebuild with ``force`` leaves in place: the ``kafkatool check --expect`` file kept beside a fixture."""


def build_scenario(name: str, out: Path, *, force: bool = False) -> Tree:
    """Build scenario ``name`` into the log dir ``out`` and return its files.

    An existing non-empty ``out`` is refused unless ``force``; even then only a directory holding nothing but
    log-dir files, partition directories and :data:`KEPT_NAMES` (a previous build) is replaced, and the
    :data:`KEPT_NAMES` files are kept.
    """
    tree = build_tree(name)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} exists and is not a directory")
    if out.is_dir():
        entries = [p for p in sorted(out.iterdir()) if p.name not in KEPT_NAMES]
        if entries and not force:
            raise UsageError(f"{out} is not empty: use --force to replace a previous build")
        strange = [p.name for p in entries
                   if not (p.is_dir() and _PARTITION_DIR.match(p.name)) and p.name not in _LOG_DIR_NAMES]
        if strange:
            raise UsageError(f"refusing to replace {out}: it holds {', '.join(strange[:5])}, which a log dir "
                             "does not")
        for p in entries:
            if p.is_dir():
                shutil.rmtree(p)
            else:
                p.unlink()
    write_tree(tree, out)
    return tree


# --- recipes: clean -----------------------------------------------------------------------------------------


CODECS = (Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD)


@_scenario("demo", "the README's example: one partition with every codec, idempotent and transactional "
           "producers (committed and aborted transactions), two leader epochs, several segments; clean shutdown")
def _demo() -> Tree:
    w = PartitionWriter("demo", 0, config=TopicConfig(segment_bytes=6144, index_interval_bytes=1024))
    idem = Producer(1000)
    txn = Producer(2000, epoch=2, transactional=True)
    for i in range(60):
        epoch = 0 if i < 30 else 1
        values: list[bytes | None] = [text_value(i * 7 + j, 4 + (i + j) % 8) for j in range(1 + i % 4)]
        if i % 10 == 7:
            w.append(values, leader_epoch=epoch, producer=txn, codec=CODECS[i % 5])
            w.append([text_value(i, 3)], leader_epoch=epoch, producer=txn)
            w.end_transaction(txn, commit=i % 20 == 7, coordinator_epoch=4, leader_epoch=epoch)
        else:
            w.append(values, leader_epoch=epoch, codec=CODECS[i % 5], producer=idem if i % 3 == 0 else None)
    w.close()
    return LogDir([w]).files()


REPLICA_SET_BROKERS = (1, 2, 3)


def replica_set_story() -> tuple[dict[int, PartitionWriter], dict[str, list[Appended]]]:
    """Three replicas of ``orders-0`` after a KIP-101-style failover (built by :func:`_replica_set`).

    Epoch 0, leader 1: batches ``common`` reach every replica, ``lagging`` only brokers 1 and 2, ``orphan``
    only broker 1. Broker 1 fails; broker 2 is elected (epoch 1, ISR [2, 3]) and writes ``new``. Returns the
    writers by broker and the appended batches by group, so a test knows the answers by construction.
    """
    config = TopicConfig(segment_bytes=4096, index_interval_bytes=512)
    writers = {b: PartitionWriter("orders", 0, config=config) for b in REPLICA_SET_BROKERS}
    groups: dict[str, list[Appended]] = {"common": [], "lagging": [], "orphan": [], "new": []}

    def append(brokers: tuple[int, ...], group: str, seed: int, epoch: int) -> None:
        values = [text_value(seed * 5 + j, 4 + (seed + j) % 5) for j in range(1 + seed % 3)]
        results = [writers[b].append(values, leader_epoch=epoch) for b in brokers]
        first = results[0]
        assert first is not None and all(r is not None and r.base_offset == first.base_offset for r in results)
        groups[group].append(first)

    for seed in range(8):
        append((1, 2, 3), "common", seed, 0)
    for seed in range(8, 12):
        append((1, 2), "lagging", seed, 0)
    for seed in range(12, 14):
        append((1,), "orphan", seed, 0)
    # Broker 2's writer must skip the clock ticks broker 1 spent on the orphan batches: a new leader's
    # batches get their own timestamps, which is what makes them differ.
    for seed in range(14, 17):
        append((2,), "new", seed, 1)
    for b, w in writers.items():
        w.close(high_watermark={1: groups["lagging"][-1].last_offset + 1, 2: w.log_end_offset,
                                3: w.log_end_offset}[b])
    return writers, groups


@_scenario("replica-set", "three brokers' log dirs of one partition after a failover: broker 1 holds two epoch-0 "
           "batches nobody else has, broker 2 (the new leader, epoch 1) wrote over them, broker 3 lags behind "
           "(inputs for simulate-replication --replica)")
def _replica_set() -> Tree:
    writers, _ = replica_set_story()
    tree: Tree = {}
    for broker, w in writers.items():
        for name, data in LogDir([w]).files().items():
            if name == META_PROPERTIES:
                data = meta_properties.build_meta_properties(
                    {"node.id": str(broker), "directory.id": DIRECTORY_ID, "version": "1", "cluster.id": CLUSTER_ID},
                    ("#", META_DATE_COMMENT))
            tree[f"broker-{broker}/{name}"] = data
    return tree


@_scenario("codecs-clean", "every codec (none, gzip, snappy, lz4, zstd), headers, null keys and values, "
           "idempotent and plain batches; clean shutdown")
def _codecs_clean() -> Tree:
    w = PartitionWriter("codecs", 0, config=TopicConfig(segment_bytes=4096, index_interval_bytes=1024))
    p = Producer(1000)
    for i in range(45):
        n = 1 + i % 5
        values: list[bytes | None] = [text_value(i * 10 + j, 6 + (i + j) % 9) for j in range(n)]
        keys: list[bytes | None] = [f"sku-{(i + j) % 13}".encode() for j in range(n)]
        headers: list[tuple[Header, ...]] = [() for _ in range(n)]
        if i % 7 == 3:
            values[-1] = None  # a tombstone
        if i % 11 == 5:
            keys[0] = None
        if i % 4 == 1:
            headers[0] = (Header(b"trace-id", f"t-{i:04d}".encode()), Header(b"empty", None))
        w.append(values, keys=keys, headers=headers, leader_epoch=0, codec=CODECS[i % 5],
                 producer=p if i % 3 == 0 else None)
    w.close()
    return LogDir([w]).files()


def _idempotent_log_dir(*, crash: bool = False) -> LogDir:
    """Producers 1000 (epoch 0, bumped to 1 with its sequence reset) and 1001 (epoch 3), plain and lz4
    batches, a retried duplicate that is rejected, leader epoch 0 then 1; four segments."""
    w = PartitionWriter("payments", 0, config=TopicConfig(segment_bytes=3072, index_interval_bytes=512))
    p1000, p1001 = Producer(1000), Producer(1001, epoch=3)
    for i in range(60):
        epoch = 0 if i < 34 else 1
        values: list[bytes | None] = [text_value(i * 8 + j, 4 + (i * 3 + j) % 7) for j in range(1 + i % 4)]
        codec = Compression.LZ4 if i % 5 == 2 else Compression.NONE
        if i == 40:
            p1000.bump_epoch()
        if i % 3 == 0:
            w.append(values, leader_epoch=epoch, codec=codec, producer=p1000)
            if i == 21:  # the response was lost: the client retries the same batch, Kafka drops it
                w.append(values, leader_epoch=epoch, codec=codec, producer=p1000,
                         base_sequence=decrement_sequence(p1000.next_sequence, len(values)))
        elif i % 3 == 1:
            w.append(values, leader_epoch=epoch, codec=codec, producer=p1001)
        else:
            w.append(values, leader_epoch=epoch, codec=codec)
    if crash:
        w.crash()
    else:
        w.close()
    return LogDir([w], clean_shutdown=not crash)


@_scenario("idempotent-epoch-bump", "idempotent producers, an epoch bump with the sequence reset to 0, a retried "
           "duplicate rejected (not written), leader epochs 0 and 1; clean shutdown")
def _idempotent_epoch_bump() -> Tree:
    return _idempotent_log_dir().files()


@_scenario("txn-commit-abort-hanging", "transactions committed and aborted (interleaved, one spanning a roll, "
           "a timeout abort with a bumped epoch) with .txnindex, and a hanging open transaction at the end")
def _txn_commit_abort_hanging() -> Tree:
    w = PartitionWriter("ledger", 0, config=TopicConfig(segment_bytes=3072, index_interval_bytes=512))
    t1 = Producer(2000, transactional=True)
    t2 = Producer(2001, transactional=True)
    t3 = Producer(2002, epoch=4, transactional=True)
    plain = Producer(1000)
    seeds = itertools.count(1)

    def data(p: Producer | None, n: int = 2) -> None:
        seed = next(seeds)
        w.append([text_value(seed * 4 + j, 5 + (seed + j) % 6) for j in range(n)], leader_epoch=0, producer=p)

    for round_ in range(5):
        data(plain, 3)
        data(t1)
        data(t2)
        data(t1, 3)
        w.end_transaction(t1, commit=True, coordinator_epoch=5, leader_epoch=0)
        data(t2)
        w.end_transaction(t2, commit=round_ % 2 == 0, coordinator_epoch=5, leader_epoch=0)
        data(None, 4)
    # t3's transaction spans a roll and is aborted while t1's is open: its LSO is t1's first offset
    data(t3)
    data(t1)
    target = len(w.segments) + 1
    while len(w.segments) < target:
        data(t3, 3)
    w.end_transaction(t3, commit=False, coordinator_epoch=6, leader_epoch=0)
    w.end_transaction(t1, commit=True, coordinator_epoch=6, leader_epoch=0)
    # a timed-out transaction: the coordinator aborts it with the producer's epoch bumped
    data(t2)
    w.end_transaction(t2, commit=False, coordinator_epoch=6, leader_epoch=0, producer_epoch=t2.epoch + 1)
    data(t2)
    w.end_transaction(t2, commit=True, coordinator_epoch=6, leader_epoch=0)
    data(plain, 3)
    # the hanging transaction: data, and never a marker
    data(t3)
    data(plain, 2)
    data(t3)
    w.close()
    return LogDir([w]).files()


@_scenario("leader-epochs", "leader epochs 0, 1, 3 and 5 (epoch 5 starting exactly at a segment base) with an "
           "idempotent producer carrying on across them; leader-epoch-checkpoint")
def _leader_epochs() -> Tree:
    w = PartitionWriter("epochs", 0, config=TopicConfig(segment_bytes=2560, index_interval_bytes=384))
    p = Producer(3000)
    epoch = 0
    for i in range(56):
        values: list[bytes | None] = [text_value(i * 5 + j, 5 + (i + 2 * j) % 8) for j in range(1 + i % 3)]
        producer = p if i % 2 else None
        codec = Compression.SNAPPY if i % 6 == 4 else Compression.NONE
        if i == 12:
            epoch = 1
        elif i == 27:
            epoch = 3
        elif epoch == 3 and len(w.segments) >= 3:
            trial = copy.deepcopy(w)  # would this batch open a new segment? then the new leader starts there
            trial.append(values, leader_epoch=epoch, producer=copy.deepcopy(producer), codec=codec)
            if len(trial.segments) > len(w.segments):
                epoch = 5
        w.append(values, leader_epoch=epoch, producer=producer, codec=codec)
    w.close()
    return LogDir([w]).files()


@_scenario("follower", "a follower replica appended with the leader's offsets and epochs (2, 4, 7), zstd "
           "idempotent batches; high watermark 4 below the log end in replication-offset-checkpoint")
def _follower() -> Tree:
    w = PartitionWriter("replica", 0, config=TopicConfig(segment_bytes=3072, index_interval_bytes=512))
    p = Producer(3100)
    t = Producer(3101, transactional=True)
    offset = 0
    for i in range(48):
        epoch = 2 if i < 15 else 4 if i < 33 else 7
        values: list[bytes | None] = [text_value(i * 6 + j, 4 + (i + j) % 9) for j in range(1 + (i * 5) % 4)]
        if i % 3 == 0:
            w.append(values, leader_epoch=epoch, producer=p, codec=Compression.ZSTD, base_offset=offset)
        elif i % 8 == 5:
            w.append(values, leader_epoch=epoch, producer=t, base_offset=offset)
            w.end_transaction(t, commit=True, coordinator_epoch=2, leader_epoch=epoch,
                              base_offset=offset + len(values))
        else:
            w.append(values, leader_epoch=epoch, base_offset=offset)
        offset = w.log_end_offset
    w.close(high_watermark=w.log_end_offset - 4)
    return LogDir([w]).files()


@_scenario("multi-partition", "three partitions in one log dir: alpha-0 with its log start offset moved into its "
           "second segment (log-start-offset-checkpoint), alpha-1, and beta-0 with the high watermark below the end")
def _multi_partition() -> Tree:
    alpha = topic_id_for("alpha")
    a0 = PartitionWriter("alpha", 0, topic_id=alpha, config=TopicConfig(segment_bytes=3072))
    a1 = PartitionWriter("alpha", 1, topic_id=alpha, config=TopicConfig(segment_bytes=3072), start_time=BASE_TIME + 5)
    b0 = PartitionWriter("beta", 0, config=TopicConfig(segment_bytes=2048, index_interval_bytes=256),
                         start_time=BASE_TIME + 11)
    for i in range(40):
        for w, shift in ((a0, 0), (a1, 1)):
            values: list[bytes | None] = [text_value(i * 9 + shift * 4 + j, 5 + (i + j) % 7)
                                          for j in range(1 + (i + shift) % 4)]
            w.append(values, leader_epoch=0, codec=Compression.GZIP if (i + shift) % 5 == 0 else Compression.NONE)
        b0.append([text_value(i * 3 + j, 6) for j in range(1 + i % 2)], leader_epoch=0)
    a0.delete_records(a0.segments[1].base + 3)
    a0.close()
    a1.close()
    b0.close(high_watermark=b0.log_end_offset - 3)
    return LogDir([a0, a1, b0]).files()


# --- recipes: damage applied to a copy of a clean build --------------------------------------------------------


def damage_base() -> tuple[LogDir, PartitionWriter]:
    """The clean build the damage scenarios start from (the ``idempotent-epoch-bump`` log dir)."""
    logdir = _idempotent_log_dir()
    return logdir, logdir.partitions[0]


def _path(w: PartitionWriter, offset: int, suffix: str) -> str:
    return f"{w.directory}/{segment_file_name(offset, suffix)}"


def _unclean(logdir: LogDir, w: PartitionWriter, recovery_point: int) -> Tree:
    """No clean-shutdown marker, and the recovery point moved to ``recovery_point``."""
    logdir.clean_shutdown = False
    w.recovery_point = recovery_point
    return logdir.files()


def _body_batch(segment: SegmentBuffer) -> Appended:
    """An uncompressed data batch from the middle of ``segment``."""
    plain = [b for b in segment.batches if b.compression is Compression.NONE and not b.control]
    return plain[len(plain) // 2]


def _flip(tree: Tree, name: str, position: int) -> None:
    data = bytearray(tree[name])
    data[position] ^= 0x20
    tree[name] = bytes(data)


@_scenario("torn-write", "unclean: the active segment is cut in the middle of its second-to-last batch, the "
           "recovery point at the active segment's base", damaged=True)
def _torn_write() -> Tree:
    logdir, w = damage_base()
    active = w.segments[-1]
    tree = _unclean(logdir, w, active.base)
    victim = active.batches[-2]
    name = _path(w, active.base, LOG_SUFFIX)
    tree[name] = tree[name][:victim.position + victim.size // 2]
    return tree


@_scenario("crc-flip-above-recovery-point", "unclean: one byte flipped in a batch body of the active segment, "
           "above the recovery point (recovery finds it)", damaged=True)
def _crc_flip_above() -> Tree:
    logdir, w = damage_base()
    active = w.segments[-1]
    tree = _unclean(logdir, w, active.base)
    batch = _body_batch(active)
    _flip(tree, _path(w, active.base, LOG_SUFFIX), batch.position + batch.size - 5)
    return tree


@_scenario("crc-flip-below-recovery-point", "unclean: one byte flipped in a batch body of the first segment, "
           "below the recovery point (Kafka's recovery does not look there)", damaged=True)
def _crc_flip_below() -> Tree:
    logdir, w = damage_base()
    tree = _unclean(logdir, w, w.segments[-1].base)
    first = w.segments[0]
    batch = _body_batch(first)
    _flip(tree, _path(w, first.base, LOG_SUFFIX), batch.position + batch.size - 5)
    return tree


@_scenario("trailing-zeros", "unclean: 200 zero bytes after the last batch of the active segment",
           damaged=True)
def _trailing_zeros() -> Tree:
    logdir, w = damage_base()
    active = w.segments[-1]
    tree = _unclean(logdir, w, active.base)
    tree[_path(w, active.base, LOG_SUFFIX)] += bytes(200)
    return tree


@_scenario("recovery-point-back", "unclean: no marker, the recovery point moved back one segment (to the base "
           "of the segment before the active one)", damaged=True)
def _recovery_point_back() -> Tree:
    logdir, w = damage_base()
    return _unclean(logdir, w, w.segments[-2].base)


@_scenario("missing-index", "clean marker, but the first segment's .index is missing", damaged=True)
def _missing_index() -> Tree:
    logdir, w = damage_base()
    tree = logdir.files()
    del tree[_path(w, w.segments[0].base, INDEX_SUFFIX)]
    return tree


@_scenario("corrupt-index", "clean marker, but an entry of the first segment's .index points into the middle "
           "of a batch", damaged=True)
def _corrupt_index() -> Tree:
    logdir, w = damage_base()
    first = w.segments[0]
    entry = first.index[1]
    first.index[1] = OffsetIndexEntry(entry.offset, entry.position + 9)
    return logdir.files()


@_scenario("missing-latest-snapshot", "unclean: the producer snapshot at the log end is missing", damaged=True)
def _missing_latest_snapshot() -> Tree:
    logdir, w = damage_base()
    logdir.clean_shutdown = False
    tree = logdir.files()
    del tree[_path(w, w.log_end_offset, PRODUCER_SNAPSHOT_SUFFIX)]
    return tree


@_scenario("all-snapshots-missing", "clean marker, but every producer snapshot is missing", damaged=True)
def _all_snapshots_missing() -> Tree:
    logdir, _ = damage_base()
    return {k: v for k, v in logdir.files().items() if not k.endswith(PRODUCER_SNAPSHOT_SUFFIX)}


@_scenario("stray-files", "clean marker, with leftovers: the first segment's files again as .deleted (a deletion "
           "still pending), the second's as .cleaned (an interrupted cleaner pass), and a producer snapshot 25 "
           "offsets beyond the log end", damaged=True)
def _stray_files() -> Tree:
    logdir, w = damage_base()
    tree = logdir.files()
    first, second = w.segments[0].base, w.segments[1].base
    for suffix in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX):
        tree[_path(w, first, suffix) + DELETED_SUFFIX] = tree[_path(w, first, suffix)]
        tree[_path(w, second, suffix) + CLEANED_SUFFIX] = tree[_path(w, second, suffix)]
    leo = w.log_end_offset
    tree[_path(w, leo + 25, PRODUCER_SNAPSHOT_SUFFIX)] = tree[_path(w, leo, PRODUCER_SNAPSHOT_SUFFIX)]
    return tree


@_scenario("misnamed-segment", "clean marker, but the second segment's files are renamed 3 offsets above its "
           "first batch", damaged=True)
def _misnamed_segment() -> Tree:
    logdir, w = damage_base()
    tree = logdir.files()
    base = w.segments[1].base
    for suffix in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX):
        old = _path(w, base, suffix)
        if old in tree:
            tree[_path(w, base + 3, suffix)] = tree.pop(old)
    return tree


@_scenario("hard-crash", "hard crash: no marker, the active segment's indexes left preallocated and zero-filled, "
           "no snapshot at the log end, recovery point at the active segment's base", damaged=True)
def _hard_crash() -> Tree:
    return _idempotent_log_dir(crash=True).files()

