"""Java's hash codes and hash-table iteration orders, where Kafka's output order depends on them.

``ProducerStateManager.writeSnapshot`` lists producers in the order of a ``java.util.HashMap<Long, ?>``;
``DumpLogSegments`` prints its end-of-run summaries in the order of a ``HashMap<String, ?>``; a transaction's
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
