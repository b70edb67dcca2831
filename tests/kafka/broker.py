"""Real Apache Kafka brokers on loopback: combined KRaft broker+controller nodes with free ports and temporary log
dirs, one node or a three-node cluster, started from the jars that ``tests.kafka.versions`` fetched.

Start-up waits on readiness (the broker's own "Kafka Server started" log line, then Kafka's admin client seeing
every broker), never on sleeps. Every process is started in its own process group and killed when its owner
leaves the ``with`` block, also when a test fails; every wait is bounded.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.kafka import versions

#: Broker settings for experiments: small internal topics, no delays, quick retention and cleaner passes.
BASE_PROPS: dict[str, str] = {
    "process.roles": "broker,controller",
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "num.partitions": "1",
    "offsets.topic.num.partitions": "2",
    "transaction.state.log.num.partitions": "2",
    "group.initial.rebalance.delay.ms": "0",
    "log.retention.check.interval.ms": "1000",
    "log.cleaner.backoff.ms": "500",
    "log.cleaner.dedupe.buffer.size": "4194304",
    "log.cleaner.threads": "1",
    "log.segment.delete.delay.ms": "1000",
    "file.delete.delay.ms": "1000",
    "auto.create.topics.enable": "false",
    "num.io.threads": "2",
    "num.network.threads": "2",
    "num.recovery.threads.per.data.dir": "1",
    "background.threads": "2",
    "socket.request.max.bytes": "104857600",
    "controller.quorum.election.timeout.ms": "1000",
    "controller.quorum.fetch.timeout.ms": "2000",
    "broker.heartbeat.interval.ms": "500",
    "broker.session.timeout.ms": "4000",
    "replica.lag.time.max.ms": "4000",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "5000",
}

#: How long a node may take to start (a 2-core machine shared with other JVMs).
START_TIMEOUT_S = 120.0


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cluster_id(seed: int | str) -> str:
    """A KRaft cluster id (22 characters of URL-safe base64) derived from ``seed``; never one that starts with
    ``-``, which ``kafka-storage format -t`` would take for an option (Kafka's ``Uuid.randomUuid`` draws again
    there too)."""
    for attempt in range(100):
        digest = hashlib.sha256(f"kafkatool-oracle-{seed}{'-' * attempt}".encode()).digest()[:16]
        cid = base64.urlsafe_b64encode(digest).decode().rstrip("=")
        if not cid.startswith("-"):
            return cid
    raise AssertionError("no cluster id")


class KafkaError(RuntimeError):
    """A Kafka process did not do what the harness needed (with the tail of its log)."""


@dataclass
class Node:
    """One combined broker+controller process."""

    version: str
    node_id: int
    workdir: Path
    port: int = field(default_factory=free_port)
    controller_port: int = field(default_factory=free_port)
    voters: str = ""
    props: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen | None = None
    starts: int = 0
    roles: str = "broker,controller"

    @property
    def log_dir(self) -> Path:
        """The node's only log dir (the metadata log lives there too)."""
        return self.workdir / "data"

    @property
    def bootstrap(self) -> str:
        """host:port of its PLAINTEXT listener."""
        return f"127.0.0.1:{self.port}"

    @property
    def log_file(self) -> Path:
        """The broker's own log of its latest start."""
        return self.workdir / f"broker-{self.starts}.log"

    def config(self) -> Path:
        """Write ``server.properties`` and return its path."""
        props = dict(BASE_PROPS)
        props.update({
            "process.roles": self.roles,
            "node.id": str(self.node_id),
            "controller.quorum.voters": self.voters or f"{self.node_id}@127.0.0.1:{self.controller_port}",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "log.dirs": str(self.log_dir),
        })
        if self.roles == "broker":
            props["listeners"] = f"PLAINTEXT://127.0.0.1:{self.port}"
        elif self.roles == "controller":
            props["listeners"] = f"CONTROLLER://127.0.0.1:{self.controller_port}"
            for key in ("advertised.listeners", "inter.broker.listener.name"):
                props.pop(key, None)
        props.update(self.props)
        if "controller.quorum.bootstrap.servers" in props:  # a dynamic quorum (KIP-853): no static voters
            props.pop("controller.quorum.voters", None)
        path = self.workdir / "server.properties"
        self.workdir.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"{k}={v}\n" for k, v in sorted(props.items())))
        return path

    def format(self, cid: str, extra: tuple[str, ...] = ()) -> None:
        """``kafka-storage format`` of the node's log dir."""
        cfg = self.config()
        run_java(self.version, "StorageTool", "format", "-t", cid, "-c", str(cfg), *extra,
                 log_file=self.workdir / "format.log", timeout=120)

    def start(self) -> None:
        """Start the broker process (returns at once; see :meth:`wait_started`)."""
        if self.proc is not None and self.proc.poll() is None:
            raise KafkaError(f"node {self.node_id} is already running")
        cfg = self.config()
        self.starts += 1
        cmd = versions.java(self.version, "kafka.Kafka", str(cfg), log_file=self.log_file)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.STDOUT, start_new_session=True, cwd=self.workdir)

    def wait_started(self, timeout: float = START_TIMEOUT_S) -> float:
        """Wait for the broker's "Kafka Server started" line; the seconds it took."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if self.proc is None or self.proc.poll() is not None:
                raise KafkaError(f"Kafka {self.version} node {self.node_id} exited during start-up"
                                 f" (rc={self.proc.returncode if self.proc else None})\n{self.log_tail()}")
            if "Kafka Server started" in self.log_text():
                return time.monotonic() - t0
            time.sleep(0.1)
        raise KafkaError(f"Kafka {self.version} node {self.node_id} not started after {timeout:.0f} s\n"
                         f"{self.log_tail()}")

    def log_text(self) -> str:
        """The broker log of the latest start ('' when none yet)."""
        try:
            return self.log_file.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the broker log, for error messages."""
        return "\n".join(self.log_text().splitlines()[-lines:])

    def kill(self) -> None:
        """SIGKILL the whole process group (a hard crash: nothing flushed, no marker written)."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)

    def stop(self, timeout: float = 60.0) -> None:
        """SIGTERM: Kafka's controlled shutdown (snapshots, checkpoints, the clean-shutdown marker)."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                raise KafkaError(f"node {self.node_id} did not shut down in {timeout:.0f} s") from None

    @property
    def running(self) -> bool:
        """Whether the process is alive."""
        return self.proc is not None and self.proc.poll() is None


def run_java(version: str, simple_main: str, *args: str, log_file: Path | None = None, timeout: float = 120,
             check: bool = True, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """Run one of Kafka's main classes (found by simple name) to completion; output captured."""
    main = simple_main if "." in simple_main else versions.main_class(version, simple_main)
    cmd = versions.java(version, main, *args, log_file=log_file)
    proc = subprocess.run(cmd, input=stdin, capture_output=True, timeout=timeout, start_new_session=True)
    if check and proc.returncode != 0:
        raise KafkaError(f"{simple_main} {' '.join(args)} exited {proc.returncode}:\n"
                         f"{proc.stderr.decode(errors='replace')[-3000:]}")
    return proc


def oracle(version: str, *args: str, timeout: float = 120, log_file: Path | None = None) -> list[dict]:
    """Run the workload driver (``kafkatool.oracle.Oracle``) and parse its JSON lines."""
    proc = run_java(version, "kafkatool.oracle.Oracle", *args, timeout=timeout, log_file=log_file)
    return [json.loads(line) for line in proc.stdout.decode().splitlines() if line.startswith("{")]


class Cluster:
    """One or three combined KRaft nodes of one Kafka version, stopped (SIGKILL) when the block ends. With
    ``dedicated_controller`` the brokers are broker-only and one more process is the only controller (so every
    broker can be down at once, as an unclean leader election needs)."""

    def __init__(self, version: str, workdir: Path, nodes: int = 1, seed: int = 0,
                 props: dict[str, str] | None = None, format_extra: tuple[str, ...] = (),
                 dedicated_controller: bool = False) -> None:
        self.version = version
        self.workdir = workdir
        self.cluster_id = cluster_id(f"{version}-{seed}-{workdir.name}")
        internal = {"offsets.topic.replication.factor": str(min(nodes, 3)),
                    "transaction.state.log.replication.factor": str(min(nodes, 3)),
                    "transaction.state.log.min.isr": str(min(nodes, 2)),
                    "default.replication.factor": str(min(nodes, 3))}
        self.nodes = [Node(version, i + 1, workdir / f"node{i + 1}", props={**internal, **(props or {})},
                           roles="broker" if dedicated_controller else "broker,controller")
                      for i in range(nodes)]
        self.controller = (Node(version, 100, workdir / "controller", props={**internal, **(props or {})},
                                roles="controller") if dedicated_controller else None)
        voters = ",".join(f"{n.node_id}@127.0.0.1:{n.controller_port}" for n in self.processes
                          if "controller" in n.roles)
        for n in self.processes:
            n.voters = voters
        self.format_extra = format_extra

    @property
    def processes(self) -> list[Node]:
        """Every process: the brokers, then the dedicated controller if there is one."""
        return self.nodes + ([self.controller] if self.controller is not None else [])

    @property
    def bootstrap(self) -> str:
        """Every node's listener."""
        return ",".join(n.bootstrap for n in self.nodes)

    def live_bootstrap(self) -> str:
        """The listeners of the nodes that run."""
        return ",".join(n.bootstrap for n in self.nodes if n.running)

    def format(self) -> None:
        """Format every node's log dir (in parallel: each is a JVM)."""
        procs = []
        for n in self.processes:
            cfg = n.config()
            cmd = versions.java(self.version, versions.main_class(self.version, "StorageTool"), "format",
                                "-t", self.cluster_id, "-c", str(cfg), *self.format_extra)
            procs.append((n, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                              start_new_session=True)))
        for n, p in procs:
            out, _ = p.communicate(timeout=120)
            if p.returncode != 0:
                raise KafkaError(f"format of node {n.node_id} failed:\n{out.decode(errors='replace')[-2000:]}")

    def start(self, nodes: list[Node] | None = None, timeout: float = START_TIMEOUT_S) -> float:
        """Start ``nodes`` (default all) and wait until each logs its start and the admin client sees them."""
        chosen = nodes if nodes is not None else self.processes
        t0 = time.monotonic()
        for n in chosen:
            n.start()
        for n in chosen:
            n.wait_started(max(1.0, timeout - (time.monotonic() - t0)))
        return time.monotonic() - t0

    def wait_brokers(self, count: int | None = None, timeout: float = 60) -> None:
        """Kafka's admin client sees ``count`` (default: all running) brokers."""
        want = count if count is not None else sum(n.running for n in self.nodes)
        oracle(self.version, "ready", self.live_bootstrap(), str(want), str(int(timeout * 1000)),
               timeout=timeout + 30)

    def kill(self) -> None:
        """SIGKILL every process."""
        for n in self.processes:
            n.kill()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


class Workload:
    """The workload driver running in the background (so a broker can be killed under load)."""

    def __init__(self, cluster: Cluster, seed: int, max_bytes: int, max_ms: int, mix: str = "all") -> None:
        self.out = cluster.workdir / f"workload-{seed}.jsonl"
        self.out.parent.mkdir(parents=True, exist_ok=True)
        cmd = versions.java(cluster.version, "kafkatool.oracle.Oracle", "workload", cluster.bootstrap, str(seed),
                            str(max_bytes), str(max_ms), mix, log_file=cluster.workdir / f"workload-{seed}.log")
        self._fh = open(self.out, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._fh, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def acked(self) -> int:
        """Records acknowledged so far."""
        try:
            return self.out.read_text(errors="replace").count('"ack"')
        except FileNotFoundError:
            return 0

    def wait_acked(self, records: int, timeout: float = 60) -> None:
        """Wait until ``records`` records were acknowledged (or the workload ended)."""
        t0 = time.monotonic()
        while self.acked() < records and self.proc.poll() is None and time.monotonic() - t0 < timeout:
            time.sleep(0.05)

    def acks(self) -> list[dict]:
        """Every acknowledgement line: {"ack": "topic-p", "offset": n, "producer": name}."""
        lines = self.out.read_text(errors="replace").splitlines()
        return [json.loads(line) for line in lines if line.startswith('{"ack"')]

    def wait(self, timeout: float = 120) -> int:
        """Wait for the workload to end by itself; its exit code."""
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self.stop()

    def stop(self) -> None:
        """Kill the driver if it still runs, and close its output."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
        self._fh.close()

    def __enter__(self) -> Workload:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
