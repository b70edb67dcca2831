"""Java's hash codes and hash-table iteration orders, where Kafka's output order depends on them.

``ProducerStateManager.writeSnapshot`` lists producers in the order of a ``java.util.HashMap<Long, ?>``;
``DumpLogSegments`` prints its end-of-run summaries in the order of a ``HashMap<String, ?>`` (Java, 4.3 on) or a
Scala ``mutable.HashMap[String, ?]`` (3.9 to 4.2), replayed call by call (:class:`BinnedMapOrder`); a transaction's
partitions come out of a Scala 2.13 ``mutable.HashSet[TopicPartition]``. A byte-identical snapshot or a
line-identical dump needs the same order, so each is modelled here, once.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

INITIAL_CAPACITY = 16
"""``HashMap``'s default table size; it doubles when the size passes :data:`LOAD_FACTOR` of it."""
LOAD_FACTOR = 0.75


def int32(value: int) -> int:
    """``value`` wrapped to a signed 32-bit Java ``int``."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def java_string_hash(text: str) -> int:
    """``String.hashCode()`` over UTF-16 code units, as a signed 32-bit int."""
    raw = text.encode("utf-16-le")
    h = 0
    for i in range(0, len(raw), 2):
        h = (31 * h + (raw[i] | raw[i + 1] << 8)) & 0xFFFFFFFF
    return int32(h)


def java_long_hash(value: int) -> int:
    """``Long.hashCode(value)`` as an unsigned 32-bit int."""
    v = value & 0xFFFFFFFFFFFFFFFF
    return (v ^ (v >> 32)) & 0xFFFFFFFF


def spread(h: int) -> int:
    """``HashMap.hash``: the hash code's high half folded into its low half (unsigned 32-bit)."""
    h &= 0xFFFFFFFF
    return h ^ (h >> 16)


def capacity_for(size: int) -> int:
    """The table size of a ``HashMap`` filled with ``size`` keys from the default capacity, no removals."""
    capacity = INITIAL_CAPACITY
    while size > capacity * LOAD_FACTOR:
        capacity *= 2
    return capacity


def hash_map_order(keys: Sequence[K], hash_code: Callable[[K], int]) -> list[K]:
    """Iteration order of a default ``java.util.HashMap`` into which ``keys`` were put in order (no removals):
    by bucket ``spread(hashCode) & (capacity - 1)``, insertion order within a bucket (tree bins not modelled)."""
    mask = capacity_for(len(keys)) - 1
    return [k for _, _, k in sorted((spread(hash_code(k)) & mask, i, k) for i, k in enumerate(keys))]


def string_hash_map_order(keys: Sequence[str]) -> list[str]:
    """Iteration order of a ``HashMap<String, ?>`` filled with ``keys`` in order."""
    return hash_map_order(keys, java_string_hash)


def long_hash_map_order(keys: Sequence[int]) -> list[int]:
    """Iteration order of a ``HashMap<Long, ?>`` filled with ``keys`` in order."""
    return hash_map_order(keys, java_long_hash)


class LongHashMapOrder:
    """A live ``java.util.HashMap<Long, ?>``'s key order through puts, removes and clears.

    The table starts at 16 buckets and doubles when the size passes 0.75 of it; ``remove`` and ``clear`` keep
    the capacity, as Java's do. ``ProducerStateManager``'s producer map is one.
    """

    def __init__(self) -> None:
        self.capacity = INITIAL_CAPACITY
        self.keys: dict[int, int] = {}  # key -> insertion sequence
        self.seq = 0

    def put(self, key: int) -> None:
        if key in self.keys:
            return
        self.keys[key] = self.seq
        self.seq += 1
        while len(self.keys) > self.capacity * LOAD_FACTOR:
            self.capacity *= 2

    def remove(self, key: int) -> None:
        self.keys.pop(key, None)

    def clear(self) -> None:
        self.keys.clear()

    def order(self) -> list[int]:
        mask = self.capacity - 1
        return sorted(self.keys, key=lambda k: (spread(java_long_hash(k)) & mask, self.keys[k]))


def scala_hash_set_order(partitions: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
    """Iteration order of a Scala 2.13 ``mutable.HashSet[TopicPartition]`` (``TransactionMetadata.topicPartitions``):
    buckets by index of the improved ``TopicPartition.hashCode``, ordered by hash inside a bucket."""
    unique = list(dict.fromkeys(partitions))
    mask = capacity_for(len(unique)) - 1

    def improved(tp: tuple[str, int]) -> int:
        h = int32(31 * (31 + tp[1]) + java_string_hash(tp[0]))
        return int32(h ^ ((h & 0xFFFFFFFF) >> 16))

    return sorted(unique, key=lambda tp: (improved(tp) & mask, improved(tp)))


class BinnedMapOrder:
    """The key order of a live string-keyed hash table, replayed call by call: ``java.util.HashMap`` filled with
    ``computeIfAbsent`` (``scala=False``) or Scala 2.13's ``mutable.HashMap`` filled with ``put`` (``scala=True``).

    Both tables start at 16 buckets, index keys by ``spread(hashCode) & (capacity - 1)`` and split buckets in
    order when they double; they differ where it shows in DumpLogSegments' summaries:

    - Java's ``computeIfAbsent`` grows *before* looking the key up, once ``size > 0.75 * capacity``, and puts a
      new key at the *head* of its bucket.
    - Scala's ``put`` grows before looking up too, once ``size + 1 >= (int) (0.75 * capacity)``, and keeps each
      bucket sorted by the (signed) improved hash, a new key after those of equal hash.

    Either grows on a call for a key already present, so every call is replayed (:meth:`touch`), not only the
    first one per key. Tree bins (8 keys in one bucket of a 64-bucket table) are not modelled.
    """

    def __init__(self, scala: bool = False) -> None:
        self.scala = scala
        self.bins: list[list[str]] = [[] for _ in range(INITIAL_CAPACITY)]
        self.hashes: dict[str, int] = {}

    def _grow_if_needed(self) -> None:
        size, capacity = len(self.hashes), len(self.bins)
        grow = size + 1 >= int(capacity * LOAD_FACTOR) if self.scala else size > capacity * LOAD_FACTOR
        if not grow:
            return
        bins: list[list[str]] = [[] for _ in range(capacity * 2)]
        for j, keys in enumerate(self.bins):
            for k in keys:
                bins[j + capacity if self.hashes[k] & capacity else j].append(k)
        self.bins = bins

    def touch(self, key: str) -> None:
        """One ``computeIfAbsent`` / ``put`` of ``key``."""
        self._grow_if_needed()
        if key in self.hashes:
            return
        h = spread(java_string_hash(key))
        self.hashes[key] = h
        keys = self.bins[h & (len(self.bins) - 1)]
        if not self.scala:
            keys.insert(0, key)
            return
        signed = int32(h)
        at = len(keys)
        for i, other in enumerate(keys):
            if int32(self.hashes[other]) > signed:
                at = i
                break
        keys.insert(at, key)

    def order(self) -> list[str]:
        """The keys in iteration order."""
        return [k for keys in self.bins for k in keys]
