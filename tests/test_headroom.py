"""Free node ids: `TenantGraph.free_node_ids` and serve's `Upkeep.keep_headroom`
keep each graph with ids a new node can take below the graph's end, where linking it does not
resize the relationship matrices (docs/benchmarks.md, "Free node ids")."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from falkordb import FalkorDB

import gateway.ops.upkeep as upkeep
from adapters.falkordb import EmbeddedFalkorDB, GraphStore, TenantGraph
from agents.metrics import Metrics
from gateway.ops.upkeep import Upkeep
from tests.conftest import make_settings


def new_node_ids(falkordb: EmbeddedFalkorDB, graph: TenantGraph, count: int) -> list[int]:
    """Create `count` bare nodes, delete them, and return the ids FalkorDB gave them. A probe
    of the server's behaviour, the premise of `free_node_ids`, so it talks to it directly."""
    probe = FalkorDB(host="127.0.0.1", port=falkordb.port).select_graph(graph.name)
    result = probe.query("UNWIND range(1, $n) AS k CREATE (x) WITH x, id(x) AS id DELETE x "
                         "RETURN id", {"n": count})  # fmt: skip
    return sorted(row[0] for row in result.result_set)


def test_free_node_ids_are_taken_by_the_next_new_nodes(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph
) -> None:
    nodes = graph.node_count()
    assert nodes > 30  # the demo world
    end = new_node_ids(falkordb, graph, 1)[0]  # the next id past the end, freed again
    assert graph.free_node_ids(500) == 500
    assert graph.node_count() == nodes  # nothing left behind
    reused = new_node_ids(falkordb, graph, 500)
    assert max(reused) < end + 500  # every one below the end the top-up left
    assert len(set(reused)) == 500


def test_keep_headroom_tops_up_only_after_growth(
    falkordb: EmbeddedFalkorDB,
    store: GraphStore,
    graph: TenantGraph,
    tenant: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(upkeep, "NODE_ID_HEADROOM", 100)
    monkeypatch.setattr(upkeep, "NODE_ID_TOPUP_MAX", 300)
    keeper = Upkeep(store, make_settings(falkordb, tmp_path, tenant), Metrics())
    assert keeper.keep_headroom() == {tenant: 100}  # nothing on record: top up
    assert keeper.keep_headroom() == {tenant: 0}  # no growth
    graph.rows("bench_seed_world", {"prefix": "svc-", "from": 0, "to": 39})
    assert keeper.keep_headroom() == {tenant: 0}  # 40 new nodes: half of 100 not used yet
    graph.rows("bench_seed_world", {"prefix": "svc-", "from": 40, "to": 119})
    assert keeper.keep_headroom() == {tenant: 240}  # 120 since: twice that
    graph.rows("bench_seed_world", {"prefix": "svc-", "from": 120, "to": 499})
    assert keeper.keep_headroom() == {tenant: 300}  # 380 since: capped


@pytest.mark.parametrize("restart", ["SIGTERM", "kill -9"])
def test_free_node_ids_survive_a_restart(tmp_path: Path, restart: str) -> None:
    """The upkeep keeps no record across a database restart it did not see (a kill -9 and
    serve's restart of it): the ids it freed must still be free after the server reloads its
    append-only file (an RDB preamble after a rewrite, plain commands after it)."""
    db = EmbeddedFalkorDB(tmp_path)
    db.start()
    try:
        store = GraphStore(db.url)
        graph = store.graph("g")
        graph.ensure_schema()
        graph.rows("bench_seed_world", {"prefix": "svc-", "from": 0, "to": 99})
        end = new_node_ids(db, graph, 1)[0]
        assert graph.free_node_ids(300) == 300
        store.close()
        if restart == "SIGTERM":
            db.stop()
        else:
            time.sleep(1.5)  # appendfsync everysec: the last second may be lost by a kill -9
            db.kill()
        db.start()
        reused = new_node_ids(db, graph, 300)  # `graph` names the graph; the probe connects
        assert max(reused) < end + 300
    finally:
        db.stop()
