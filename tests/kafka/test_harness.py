"""The live oracle's harness itself: the broker that runs is the pinned release, it listens on loopback only, and
nothing it started outlives the test, also when the test fails."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.conftest import listening_sockets
from tests.kafka.broker import Cluster, oracle


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie is not alive
        return f.read().split(") ", 1)[1][0] != "Z"




def test_the_pinned_release_runs_on_loopback_and_stops_with_the_test(kafka_version: str, tmp_path: Path) -> None:
    pids: list[int] = []
    with pytest.raises(RuntimeError, match="the test failed"), Cluster(kafka_version, tmp_path / "c") as cluster:
        cluster.format()
        cluster.start()
        node = cluster.nodes[0]
        assert node.proc is not None
        pids.append(node.proc.pid)
        logged = re.search(r"Kafka version: (\S+)", node.log_text())
        assert logged and logged.group(1) == kafka_version
        listening = listening_sockets(node.proc.pid)
        ports = {port for _, port in listening}
        assert {node.port, node.controller_port} <= ports
        # 7F000001 little-endian is 0100007F: every listener of the broker is on 127.0.0.1
        assert all(addr == "0100007F" for addr, port in listening if port in (node.port, node.controller_port))
        described = oracle(kafka_version, "describe", cluster.bootstrap)[0]
        assert described["partitions"] == {} or all(p["leader"] == 1 for p in described["partitions"].values())
        raise RuntimeError("the test failed")
    assert pids and not any(_alive(pid) for pid in pids)
