"""Kafka's storage rules, each written once: pure (no I/O), above ``schema`` and below ``engine``.

Cut like Kafka's own storage module. Rule -> where:

- leader-epoch cache (``LeaderEpochFileCache``: assign, truncateFromStart, truncateFromEnd, endOffsetFor,
  latest epoch) -> ``storage.epoch.LeaderEpochCache``; used by the restart engine, the replication engine,
  divergence and the fixture writer.

Still to move here (issue 21): the producer-state entry and its append checks (``ProducerStateEntry``,
batch metadata, ``ProducerAppendInfo``), sequence arithmetic, Java hash order, the batch-boundary test,
swap/cleaned/deleted rules, sentinels, codec labels and severity ranks.

May import only ``kafkatool.errors``, ``kafkatool.model`` and ``kafkatool.schema``.
"""

from kafkatool.storage.epoch import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, LeaderEpochCache

__all__ = ["UNDEFINED_EPOCH", "UNDEFINED_EPOCH_OFFSET", "LeaderEpochCache"]
