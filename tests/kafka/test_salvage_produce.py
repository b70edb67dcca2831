"""``kafkatool salvage --produce-to`` against a real broker: damaged log dirs (the committed fixtures: a CRC flip
mid-segment, transactions committed, aborted and left open, several partitions, every codec) salvaged and
re-produced into topics of a live Kafka node (one release line per CI run, rotated with the UTC day as
:func:`tests.kafka.salvage.rotation` says; every line with ``KAFKATOOL_ROTATION=all``); the re-produce process
is frozen and killed (SIGKILL) while records it sent are acknowledged by the broker but not yet in its progress
file, then run again. Consuming the targets finds every salvaged record of a committed or no transaction exactly
once, in origin order, with its key, value, headers and CreateTime timestamp and the provenance header naming its
origin.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.kafka import versions
from tests.kafka.broker import Cluster
from tests.kafka.conftest import require_version
from tests.kafka.salvage import rotation
from tests.kafka.salvage_live import consume

REPO = Path(__file__).resolve().parents[2]
FIXTURES = ["crc-flip-above-recovery-point", "txn-commit-abort-hanging", "multi-partition", "codecs-clean"]
PREFIX = "restored."


def _salvage(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kafkatool", "salvage", *argv], capture_output=True, text=True,
                          timeout=timeout, check=False)


def _b(x: str | None) -> bytes | None:
    return None if x is None else base64.b64decode(x)


def _create_topics(bootstrap: str, partitions: dict[str, int]) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    # old CreateTime timestamps: time retention would delete them at once
    futures = admin.create_topics([NewTopic(t, n, 1, config={"retention.ms": "-1"}) for t, n in partitions.items()])
    for f in futures.values():
        f.result(timeout=60)


def _high_watermarks(bootstrap: str, names: list[str]) -> dict[str, int]:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "kafkatool-test-hw"})
    try:
        out = {}
        for name in names:
            topic, _, num = name.rpartition("-")
            out[name] = c.get_watermark_offsets(TopicPartition(topic, int(num)), timeout=30, cached=False)[1]
        return out
    finally:
        c.close()


def _unrecorded(progress: Path, hw: dict[str, int]) -> int:
    """Records the broker holds beyond the target offsets the progress file recorded."""
    seen = json.loads(progress.read_text())["seen"] if progress.exists() else {}
    return sum(max(0, end - 1 - seen.get(name, end - 1)) for name, end in hw.items()) if seen else 0


def _kill_with_unrecorded_acks(proc: subprocess.Popen[str], progress: Path, bootstrap: str, names: list[str],
                               deadline: float) -> tuple[int, int]:
    """Freeze the re-produce process when its progress file holds some acknowledged records and the broker has
    acknowledged more that the file does not hold yet, and SIGKILL it; how many of each there were."""
    while time.monotonic() < deadline:
        time.sleep(0.3)
        if proc.poll() is not None:
            raise AssertionError(f"re-produce ended before the kill: {proc.stderr.read() if proc.stderr else ''}")
        if not progress.exists() or not json.loads(progress.read_text())["seen"]:
            continue
        os.kill(proc.pid, signal.SIGSTOP)
        unrecorded = _unrecorded(progress, _high_watermarks(bootstrap, names))
        recorded = sum(o["through"] + 1 for o in json.loads(progress.read_text())["origins"].values())
        if unrecorded > 0 and recorded > 0:
            proc.kill()
            proc.wait(timeout=30)
            return recorded, unrecorded
        os.kill(proc.pid, signal.SIGCONT)
    raise AssertionError("no moment with acknowledged records missing from the progress file")


def produce_versions() -> tuple[str, ...]:
    """The release lines this run re-produces into: one, moving with the rotation, or all of them."""
    turn = rotation()
    chosen = versions.selected_versions()
    return chosen if turn is None else (chosen[turn % len(chosen)],)


@pytest.mark.parametrize("version", produce_versions())
def test_kill_and_resume_delivers_every_salvaged_record_exactly_once(version: str, tmp_path: Path) -> None:
    require_version(version)
    inputs = [str(REPO / "fixtures" / f) for f in FIXTURES]
    export = tmp_path / "export.jsonl"
    proc = _salvage("-f", "json", "--export", str(export), *inputs)
    assert proc.returncode == 1, proc.stderr
    rows = [json.loads(line) for line in export.read_text().splitlines()]
    wanted = [r for r in rows if r["transaction_state"] not in ("aborted", "open")]
    origins = sorted({(r["topic"], r["partition"]) for r in rows})
    topics = {t: max(p for tt, p in origins if tt == t) + 1 for t, _ in origins}
    maps = [a for t in topics for a in ("--topic-map", f"{t}={PREFIX}{t}")]
    names = [f"{PREFIX}{t}-{p}" for t, n in topics.items() for p in range(n)]
    progress = tmp_path / "progress.json"
    with Cluster(version, tmp_path / "cluster", seed=33) as cluster:
        cluster.format()
        cluster.start()
        node = cluster.nodes[0]
        _create_topics(node.bootstrap, {PREFIX + t: n for t, n in topics.items()})
        argv = ["-f", "json", "--produce-to", node.bootstrap, *maps, "--progress", str(progress), *inputs]
        dry = _salvage(*argv, "--dry-run")
        assert dry.returncode == 1, dry.stderr
        assert json.loads(dry.stdout)["reproduce"]["would_send"] == len(wanted)
        assert not progress.exists(), "a dry run writes no progress"
        first = subprocess.Popen([sys.executable, "-m", "kafkatool", "salvage", *argv, "--rate", "150"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            recorded, unrecorded = _kill_with_unrecorded_acks(first, progress, node.bootstrap, names,
                                                              time.monotonic() + 60)
        finally:
            if first.poll() is None:
                first.kill()
                first.wait(timeout=30)
        before = sum(_high_watermarks(node.bootstrap, names).values())
        assert 0 < before < len(wanted)
        second = _salvage(*argv)
        assert second.returncode == 1, second.stderr
        summary = json.loads(second.stdout)["reproduce"]
        served = consume(names, node.bootstrap, "read_uncommitted")
        cluster.kill()
    print(json.dumps({"records": len(rows), "wanted": len(wanted), "delivered_before_kill": before,
                      "recorded_at_kill": recorded, "acked_not_recorded_at_kill": unrecorded,
                      **{k: summary[k] for k in ("sent", "skipped", "found_in_target", "left_out", "refused")}}))
    assert summary["found_in_target"] == unrecorded
    assert summary["skipped"] == before and summary["sent"] == len(wanted) - before
    assert summary["refused"] == 0 and summary["stopped"] is None
    assert summary["left_out"] == len(rows) - len(wanted)
    got: dict[tuple[str, int, int], list[dict[str, Any]]] = {}
    for name, recs in served.items():
        for r in recs:
            hdrs = r["headers"]
            assert hdrs and hdrs[-1][0] == "kafkatool.origin", (name, r["offset"])
            topic, part, off = hdrs[-1][1].decode().rsplit("/", 2)
            assert name == f"{PREFIX}{topic}-{part}", "--partition keep: the same partition number"
            got.setdefault((topic, int(part), int(off)), []).append(r)
    assert sum(len(v) for v in got.values()) == len(wanted), "nothing more, nothing twice"
    for r in wanted:
        (mine,) = got[(r["topic"], r["partition"], r["offset"])]
        want = (r["timestamp"], _b(r["key"]), _b(r["value"]), [(h["key"], _b(h["value"])) for h in r["headers"]])
        assert (mine["timestamp"], mine["key"], mine["value"], mine["headers"][:-1]) == want, r["offset"]
    for name, recs in served.items():  # origin order within each partition
        offs = [int(x["headers"][-1][1].decode().rsplit("/", 1)[1]) for x in recs]
        assert offs == sorted(offs), name


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-s", "-q"]))
