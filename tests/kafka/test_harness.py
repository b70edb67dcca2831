"""The live oracle's harness itself: the broker that runs is the pinned release, it listens on loopback only, and
nothing it started outlives the test, also when the test fails."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.kafka.broker import Cluster, oracle


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie is not alive
        return f.read().split(") ", 1)[1][0] != "Z"


def _listening_ports(pid: int) -> set[tuple[str, int]]:
    """(address, port) of every TCP socket ``pid`` listens on, from /proc."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] == "0A" and cols[9] in inodes:  # 0A: LISTEN
                addr, port = cols[1].split(":")
                found.add((addr, int(port, 16)))
    return found


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
        listening = _listening_ports(node.proc.pid)
        ports = {port for _, port in listening}
        assert {node.port, node.controller_port} <= ports
        # 7F000001 little-endian is 0100007F: every listener of the broker is on 127.0.0.1
        assert all(addr == "0100007F" for addr, port in listening if port in (node.port, node.controller_port))
        described = oracle(kafka_version, "describe", cluster.bootstrap)[0]
        assert described["partitions"] == {} or all(p["leader"] == 1 for p in described["partitions"].values())
        raise RuntimeError("the test failed")
    assert pids and not any(_alive(pid) for pid in pids)
