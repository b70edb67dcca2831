"""A live cluster as salvage's output: records re-produced with confluent-kafka's idempotent producer (librdkafka),
and the tail of each target partition read back for the provenance header (a resumed run's check). The client's
own log lines are kept off the terminal: its errors are collected and reported by kafkatool."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from kafkatool.errors import UsageError

#: Settings only a producer takes (left out of the tail reader's configuration).
_PRODUCER_ONLY = {"enable.idempotence", "acks", "partitioner", "linger.ms", "client.id", "compression.type",
                  "compression.codec", "batch.size", "batch.num.messages", "queue.buffering.max.messages",
                  "queue.buffering.max.kbytes", "queue.buffering.max.ms", "message.timeout.ms", "delivery.timeout.ms",
                  "request.required.acks", "retries", "message.send.max.retries", "max.in.flight",
                  "max.in.flight.requests.per.connection", "transactional.id", "request.timeout.ms",
                  "retry.backoff.ms", "sticky.partitioning.linger.ms"}

#: Delivery errors that refuse one record for good (the next records go on); any other ends the run.
REFUSALS = ("MSG_SIZE_TOO_LARGE", "INVALID_RECORD", "INVALID_TIMESTAMP", "CORRUPT_MESSAGE", "RECORD_LIST_TOO_LARGE",
            "POLICY_VIOLATION", "INVALID_REQUIRED_ACKS")


def _quiet_logger() -> logging.Logger:
    log = logging.getLogger("kafkatool.librdkafka")
    log.propagate = False
    if not log.handlers:
        log.addHandler(logging.NullHandler())
    return log


class KafkaTarget:
    """The cluster re-produced into: metadata, watermarks, tail reads and the idempotent producer."""

    def __init__(self, conf: dict[str, str], timeout_s: float = 30.0) -> None:
        import confluent_kafka

        self._ck = confluent_kafka
        self.timeout_s = timeout_s
        self.errors: list[str] = []
        self.fatal: str | None = None
        self._conf = conf
        self._producer: Any = None
        self._consumer: Any = None
        self._refusals = {getattr(confluent_kafka.KafkaError, n) for n in REFUSALS
                          if hasattr(confluent_kafka.KafkaError, n)}

    def _on_error(self, err: Any) -> None:
        if err.fatal():
            self.fatal = f"{err.name()}: {err.str()}"
        if len(self.errors) < 20:
            self.errors.append(f"{err.name()}: {err.str()}")

    def _client_conf(self, producer: bool) -> dict[str, Any]:
        conf: dict[str, Any] = dict(self._conf) if producer else \
            {k: v for k, v in self._conf.items() if k not in _PRODUCER_ONLY}
        conf.update({"error_cb": self._on_error, "logger": _quiet_logger()})
        if not producer:
            conf.update({"group.id": f"kafkatool-salvage-check-{uuid.uuid4().hex[:12]}",
                         "enable.auto.commit": False, "isolation.level": "read_uncommitted",
                         "enable.partition.eof": True, "auto.offset.reset": "earliest"})
        return conf

    def _client_error(self, err: Exception) -> UsageError:
        brokers = self._conf.get("bootstrap.servers", "")
        inner = err.args[0] if isinstance(err, self._ck.KafkaException) and err.args else err
        text = inner.str() if isinstance(inner, self._ck.KafkaError) else str(inner)
        return UsageError(f"--produce-to {brokers}: {text}" + (f" ({self.errors[-1]})" if self.errors else ""))

    @property
    def consumer(self) -> Any:
        """The tail reader (created on first use)."""
        if self._consumer is None:
            try:
                self._consumer = self._ck.Consumer(self._client_conf(False))
            except self._ck.KafkaException as err:
                raise self._client_error(err) from None
        return self._consumer

    @property
    def producer(self) -> Any:
        """The idempotent producer (created on first use)."""
        if self._producer is None:
            try:
                self._producer = self._ck.Producer(self._client_conf(True))
            except self._ck.KafkaException as err:
                raise self._client_error(err) from None
        return self._producer

    def partitions(self, topic: str) -> int | None:
        """How many partitions ``topic`` has on the cluster, ``None`` when it does not exist."""
        try:
            md = self.consumer.list_topics(topic, timeout=self.timeout_s)
        except self._ck.KafkaException as err:
            raise self._client_error(err) from None
        t = md.topics.get(topic)
        if t is None or (t.error is not None and t.error.code() == self._ck.KafkaError.UNKNOWN_TOPIC_OR_PART):
            return None
        if t.error is not None:
            raise self._client_error(RuntimeError(f"topic {topic}: {t.error.str()}"))
        return len(t.partitions)

    def high_watermark(self, topic: str, partition: int) -> int:
        """The partition's high watermark (every acknowledged record lies below it)."""
        tp = self._ck.TopicPartition(topic, partition)
        try:
            _low, high = self.consumer.get_watermark_offsets(tp, timeout=self.timeout_s, cached=False)
        except self._ck.KafkaException as err:
            raise self._client_error(err) from None
        return int(high)

    def header_values(self, topic: str, partition: int, start: int, end: int, header: str) -> Iterator[bytes | None]:
        """The last ``header`` value of every record of the partition from ``start`` up to ``end`` (exclusive)."""
        if start >= end:
            return
        consumer = self.consumer
        consumer.assign([self._ck.TopicPartition(topic, partition, start)])
        idle = 0
        try:
            while True:
                msgs = consumer.consume(500, timeout=1.0)
                if not msgs:
                    idle += 1
                    if idle > self.timeout_s:
                        raise self._client_error(RuntimeError(f"{topic}-{partition}: nothing read from offset "
                                                              f"{start} for {self.timeout_s:.0f} s"))
                    continue
                idle = 0
                for m in msgs:
                    if m.error() is not None:
                        if m.error().code() == self._ck.KafkaError._PARTITION_EOF:
                            return
                        raise self._client_error(RuntimeError(f"{topic}-{partition}: {m.error().str()}"))
                    if m.offset() >= end:
                        return
                    value = None
                    for k, v in m.headers() or []:
                        if k == header:
                            value = v
                    yield value
                    if m.offset() + 1 >= end:
                        return
        finally:
            consumer.unassign()

    def produce(self, topic: str, partition: int | None, key: bytes | None, value: bytes | None,
                headers: list[tuple[str, bytes | None]], timestamp: int,
                on_delivery: Callable[[str | None, bool, str, int, int], None]) -> None:
        """Hand one record to the producer; ``on_delivery(error, refused, topic, partition, offset)`` is called
        from :meth:`poll` once the broker acknowledged (``error`` None) or failed it. A record the client itself
        refuses (too large) is reported through ``on_delivery`` at once."""
        def done(err: Any, msg: Any) -> None:
            if err is None:
                on_delivery(None, False, msg.topic(), msg.partition(), msg.offset())
            else:
                on_delivery(f"{err.name()}: {err.str()}", err.code() in self._refusals and not err.fatal(),
                            msg.topic(), msg.partition() if msg.partition() is not None else -1, -1)

        kwargs: dict[str, Any] = {"key": key, "value": value, "headers": headers, "on_delivery": done}
        if partition is not None:
            kwargs["partition"] = partition
        if timestamp > 0:
            kwargs["timestamp"] = timestamp
        while True:
            try:
                self.producer.produce(topic, **kwargs)
                return
            except BufferError:
                self.producer.poll(0.1)
            except self._ck.KafkaException as err:
                e = err.args[0]
                on_delivery(f"{e.name()}: {e.str()}", e.code() in self._refusals and not e.fatal(), topic,
                            -1 if partition is None else partition, -1)
                return

    def poll(self, timeout: float = 0.0) -> None:
        """Serve delivery callbacks."""
        if self._producer is not None:
            self._producer.poll(timeout)

    def in_flight(self) -> int:
        """Records handed over and not yet acknowledged or failed."""
        return 0 if self._producer is None else len(self._producer)

    def flush(self, timeout: float) -> int:
        """Wait up to ``timeout`` seconds for every record in flight; how many are left."""
        return 0 if self._producer is None else int(self._producer.flush(timeout))

    def close(self) -> None:
        """Close the tail reader (the producer has nothing to close once flushed)."""
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
