"""``salvage --produce-to`` without a broker: the resume rules (what the progress file holds, what a rerun skips)
against a scripted cluster that acknowledges, reorders, refuses or fails records as a real one can; the option
checks. The real broker is in tests/kafka/test_salvage_produce.py."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkatool.analysis.reproduce import Options, reproduce
from kafkatool.analysis.salvage import salvage
from kafkatool.cli import app
from kafkatool.engine.reproduce import (
    ORIGIN_HEADER,
    OriginProgress,
    load_progress,
    parse_origin,
    parse_properties,
    parse_rate,
    producer_settings,
)
from kafkatool.errors import UsageError

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "fixtures" / "multi-partition"  # alpha-0, alpha-1, beta-0: 260 records, no transaction
runner = CliRunner()
Delivery = Callable[[str | None, bool, str, int, int], None]


class FakeCluster:
    """A cluster that stores what it acknowledges; ``hold`` delays acknowledgements (records in flight),
    ``refuse`` / ``fail`` answer chosen origin offsets with a refusal or a retriable error."""

    def __init__(self, partitions: dict[str, int], *, refuse: set[int] = frozenset(), fail: int | None = None,
                 reorder: bool = False) -> None:
        self.logs: dict[tuple[str, int], list[list[tuple[str, bytes | None]]]] = {
            (t, p): [] for t, n in partitions.items() for p in range(n)}
        self.errors: list[str] = []
        self.fatal: str | None = None
        self.pending: list[tuple[str, int, list[tuple[str, bytes | None]], Delivery]] = []
        self.refuse, self.fail, self.reorder = refuse, fail, reorder
        self.killed_after: int | None = None
        self.handed = 0

    def partitions(self, topic: str) -> int | None:
        n = sum(1 for t, _ in self.logs if t == topic)
        return n or None

    def high_watermark(self, topic: str, partition: int) -> int:
        return len(self.logs[(topic, partition)])

    def header_values(self, topic: str, partition: int, start: int, end: int,
                      header: str) -> Iterator[bytes | None]:
        for headers in self.logs[(topic, partition)][start:end]:
            yield next((v for k, v in reversed(headers) if k == header), None)

    def produce(self, topic: str, partition: int | None, key: bytes | None, value: bytes | None,
                headers: list[tuple[str, bytes | None]], timestamp: int, on_delivery: Delivery) -> None:
        if self.killed_after is not None and self.handed >= self.killed_after:
            raise KeyboardInterrupt  # the process dies here
        self.handed += 1
        part = partition if partition is not None else (hash(key) % self.partitions(topic) if key else 0)
        self.pending.append((topic, part, headers, on_delivery))

    def _ack(self, item: tuple[str, int, list[tuple[str, bytes | None]], Delivery]) -> None:
        topic, part, headers, cb = item
        origin = parse_origin(dict(headers)[ORIGIN_HEADER])
        assert origin is not None
        if origin[2] in self.refuse:
            cb("MSG_SIZE_TOO_LARGE: too large", True, topic, part, -1)
        elif self.fail is not None and origin[2] >= self.fail:
            cb("_MSG_TIMED_OUT: timed out", False, topic, part, -1)
        else:
            log = self.logs[(topic, part)]
            log.append(headers)
            cb(None, False, topic, part, len(log) - 1)

    def poll(self, timeout: float = 0.0) -> None:
        if len(self.pending) >= 7:  # acknowledge in bursts, the newest first when reordering
            batch, self.pending = self.pending, []
            for item in reversed(batch) if self.reorder else batch:
                self._ack(item)

    def acknowledge_without_telling(self) -> None:
        """The broker acknowledged what was in flight, but the process died before it heard."""
        for topic, part, headers, _cb in self.pending:
            self.logs[(topic, part)].append(headers)
        self.pending = []

    def in_flight(self) -> int:
        return len(self.pending)

    def flush(self, timeout: float) -> int:
        batch, self.pending = self.pending, []
        for item in batch:
            self._ack(item)
        return 0

    def origins(self) -> list[tuple[str, int, int]]:
        out = []
        for log in self.logs.values():
            for headers in log:
                o = parse_origin(dict(headers)[ORIGIN_HEADER])
                assert o is not None
                out.append(o)
        return out


def _opts(partitioning: str = "keep") -> Options:
    return Options("fake:9092", {}, partitioning)


def _run(result: object, cluster: FakeCluster, state: dict, opts: Options) -> object:
    progress = load_progress(state.get("doc"), opts.target_doc())

    def save(doc: dict) -> None:
        state["doc"] = json.loads(json.dumps(doc))  # what the file holds: only what was saved

    ticks = iter(range(10**9))
    # a clock that moves 0.1 s a reading: the progress file is saved every few records
    return reproduce(result, cluster, progress, opts, save=save, advance=lambda n: None,  # type: ignore[arg-type]
                     clock=lambda: next(ticks) / 10)


@pytest.mark.parametrize("partitioning", ["keep", "key"])
def test_a_kill_with_records_in_flight_then_a_rerun_delivers_each_record_once(partitioning: str) -> None:
    result = salvage([FIXTURE], {}, now=1700003600000)
    cluster = FakeCluster({"alpha": 2, "beta": 1}, reorder=partitioning == "key")
    state: dict = {}
    cluster.killed_after = 150
    with pytest.raises(KeyboardInterrupt):
        _run(result, cluster, state, _opts(partitioning))
    cluster.acknowledge_without_telling()
    before = len(cluster.origins())
    assert 0 < before < 260
    cluster.killed_after = None
    summary = _run(result, cluster, state, _opts(partitioning))
    got = cluster.origins()
    assert len(got) == len(set(got)) == 260, "every record once"
    assert summary.skipped == before and summary.sent == 260 - before  # type: ignore[attr-defined]
    assert summary.found_in_target > 0  # type: ignore[attr-defined]
    # a third run sends nothing
    again = _run(result, cluster, state, _opts(partitioning))
    assert again.sent == 0 and again.skipped == 260 and len(cluster.origins()) == 260  # type: ignore[attr-defined]


def test_refused_records_are_counted_and_not_retried_a_failure_stops_and_resumes() -> None:
    result = salvage([FIXTURE], {}, now=1700003600000)
    cluster = FakeCluster({"alpha": 2, "beta": 1}, refuse={3}, fail=50)
    state: dict = {}
    first = _run(result, cluster, state, _opts())
    assert first.stopped and "timed out" in first.stopped  # type: ignore[attr-defined]
    assert first.refused >= 1 and first.refusals[0]["offset"] == 3  # type: ignore[attr-defined]
    assert state["doc"]["origins"]["alpha-0"]["through"] == 49
    cluster.fail = None
    second = _run(result, cluster, state, _opts())
    assert second.stopped is None  # type: ignore[attr-defined]
    got = cluster.origins()
    assert len(got) == len(set(got))
    assert ("alpha", 0, 3) not in got, "a refused record is not sent again"
    assert {o for o in got if o[:2] == ("alpha", 0)} == {("alpha", 0, o) for o in range(100) if o != 3}


def test_origin_progress_advances_only_over_a_finished_prefix() -> None:
    o = OriginProgress()
    for off in (5, 6, 7, 8):
        o.sent(off)
    o.finished(7)
    assert o.through == -1 and o.document() == {"through": -1, "also": [7]}
    o.finished(5)
    assert o.through == 5
    o.finished(6)
    assert o.through == 7 and o.document()["also"] == []
    assert o.skip(7) and not o.skip(8)


def test_progress_of_another_target_is_refused() -> None:
    doc = {"version": 1, "target": _opts().target_doc(), "origins": {}, "seen": {}}
    with pytest.raises(UsageError):
        load_progress(doc, Options("other:9092", {}, "keep").target_doc())
    with pytest.raises(UsageError):
        load_progress({"version": 9}, _opts().target_doc())


def test_parsers() -> None:
    assert parse_rate("500/s") == 500 and parse_rate(None) is None
    for bad in ("0", "-1", "fast", "inf"):
        with pytest.raises(UsageError):
            parse_rate(bad)
    props = parse_properties("# TLS\nsecurity.protocol=SSL\nssl.ca.location: /ca.pem\n\n")
    assert props == {"security.protocol": "SSL", "ssl.ca.location": "/ca.pem"}
    conf = producer_settings("h:1", props)
    assert conf["enable.idempotence"] == "true" and conf["acks"] == "all" and conf["security.protocol"] == "SSL"
    with pytest.raises(UsageError):
        producer_settings("h:1", {"enable.idempotence": "false"})
    assert parse_origin(b"a/x/12") is None and parse_origin(None) is None
    assert parse_origin(b"a.b-c/0/12") == ("a.b-c", 0, 12)


def test_produce_options_need_produce_to_and_a_reachable_target(tmp_path: Path) -> None:
    res = runner.invoke(app, ["salvage", "--rate", "10", str(FIXTURE)])
    assert res.exit_code == 2 and "--produce-to" in res.stderr
    res = runner.invoke(app, ["salvage", "--progress", str(FIXTURE / "p.json"), "--produce-to", "127.0.0.1:9",
                              str(FIXTURE)])
    assert res.exit_code == 2 and "inside the input" in res.stderr
    res = runner.invoke(app, ["salvage", "--partition", "keep", "--partition", "key", "--produce-to", "x:1",
                              str(FIXTURE)])
    assert res.exit_code == 2
