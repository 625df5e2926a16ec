"""`bench.query_costs`: FalkorDB's own time of each query, counted by name on the real server."""

from __future__ import annotations

from falkordb import Graph

from adapters.falkordb import TenantGraph
from bench.query_costs import timing


def test_calls_rows_and_falkordb_time_are_counted_by_query_and_the_patch_undone(
    graph: TenantGraph,
) -> None:
    rows, query = TenantGraph.rows, Graph.query
    with timing() as (calls, rows_out, spent):
        graph.rows("node_count")
        graph.rows("node_count")
        graph.rows("bench_echo", {"value": [1, "a"]})
    assert calls == {"node_count": 2, "bench_echo": 1}
    assert rows_out == {"node_count": 2, "bench_echo": 1}
    assert spent["node_count"] > 0 and spent["bench_echo"] > 0
    assert set(spent) == {"node_count", "bench_echo"}
    assert (TenantGraph.rows, Graph.query) == (rows, query)
    graph.rows("node_count")  # outside: not counted
    assert calls["node_count"] == 2
