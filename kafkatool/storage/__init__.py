"""Kafka's storage rules, each written once: pure (no I/O), above ``schema`` and below ``engine``.

Cut like Kafka's own storage module (``org.apache.kafka.storage.internals``). Rule -> where it is defined, and
who uses it:

- leader-epoch cache (``LeaderEpochFileCache``: assign, truncateFromStart/End, endOffsetFor, latest epoch)
  -> ``storage.epoch.LeaderEpochCache``; restart, replication, divergence, the fixture writer.
- producer state (``ProducerStateEntry`` and its five ``BatchMetadata``, ``ProducerAppendInfo``'s checks as
  ``AppendCheck`` verdicts, ``ProducerStateManager`` with ``TxnMetadata``/``CompletedTxn``, LSO and first
  unstable offset, ``takeSnapshot``, ``isProducerExpired``, ``readSnapshot``'s entry) -> ``storage.producer_state``;
  replay (through ``engine.producer_state.CheckedProducerState``, which only adds anomaly reporting), restart,
  the fleet scan, the fixture writer.
- sequence arithmetic (``incrementSequence``/``decrementSequence``, ``inSequence``, a vectorised twin for
  header columns) -> ``storage.sequence``; the scalar forms are defined in ``model`` (``RecordBatch.last_sequence``
  and the schema's record decoder need them) and named here.
- the batch-boundary test (a plausible ``DefaultRecordBatch`` header, the next headers chaining, then the CRC)
  -> ``storage.boundary``, defined beside the resilient walker in ``schema.log_segment`` (which resynchronises
  with it); the scan's split points (``reading.batch_scan``) call it.
- Java hash codes and iteration orders (``HashMap<Long|String, ?>``, Scala's ``HashSet[TopicPartition]``)
  -> ``storage.java_hash``; snapshot order, DumpLogSegments' summaries and transaction partitions.
- swap/cleaned/deleted files (``LogLoader.removeTempFilesAndCollectSwapFiles``, the swapped range)
  -> ``storage.swaps``; the restart loader, ``check``, ``replay-producers`` and the scan.
- the follower's truncation offset from an ``OffsetsForLeaderEpoch`` answer
  (``AbstractFetcherThread.getOffsetTruncationState``) -> ``storage.truncation``; the replication fetcher and
  divergence.
- the transaction version in use (KIP-890: ``TransactionVersion`` from the feature level, the batches or the
  release) and its marker-epoch rule -> ``storage.transaction_version`` and ``storage.producer_state``; replay,
  transactions, report.
- tiered storage (``RemoteLogMetadataCache``'s segment states, ``LogLoader``'s log start with remote storage,
  what is remote below the local log start) -> ``storage.tiered``; restart, check, the scan.
- codec labels by attribute bits, ``unknown(N)`` included -> ``storage.codecs``, from ``model.Compression``.
- severity ranks -> ``storage.severity``; check, report, scan and ``--fail-on``.
- sentinels (``-1`` for no producer id/epoch/sequence/leader epoch/timestamp) -> ``model``, below the schema
  that decodes them; ``storage.epoch`` adds ``UNDEFINED_EPOCH``/``UNDEFINED_EPOCH_OFFSET``,
  ``storage.producer_state`` ``NO_COORDINATOR_EPOCH``.

Not rules, so not here: read limits (``schema.codecs.ReadLimits``, resolved in ``reading.context``).
``tests/unit/test_architecture.py`` fails on a copy of any of these rules outside storage and the homes named.

May import only ``kafkatool.errors``, ``kafkatool.model`` and ``kafkatool.schema``.
"""

from kafkatool.storage.epoch import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, LeaderEpochCache

__all__ = ["UNDEFINED_EPOCH", "UNDEFINED_EPOCH_OFFSET", "LeaderEpochCache"]
