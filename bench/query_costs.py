"""Where a calm incident's FalkorDB time goes, by query: `python -m bench.query_costs
[--incidents 200] [--group 8] [--page-within-ms N]`.

In one process, as `bench.round_trips` runs: an embedded FalkorDB in a scratch folder, the
gateway with the demo world and no workers of its own, and one-alert incidents (the chaos
harness's deliveries, `bench/chaos.py`) posted `--group` at a time, each group drained by a burst
worker (investigate, respond), so a worker's batches hold up to half a group, as a stream
posted 8 at a time gives them (`bench.floor`). A first round of `--incidents` warms the graph;
the second is measured. Per query name: calls and rows per incident, and FalkorDB's own
execution time of each call (the `Query internal execution time` it reports, wall time in its
query thread, so a loaded machine reads higher) per incident and per call. FalkorDB's time of a
query grows more with its operators than with its rows (each operator that runs costs a few
microseconds a call), so a batch's query costs less per incident than a lone one.
`--page-within-ms 1` sends every incident down the early-page path (as `bench.round_trips`).
Below the table, the measured round's CPU per incident (user + system): FalkorDB's process and
this one (the gateway's requests, the worker and the posting), which, unlike `bench.floor`'s,
does not depend on how a loaded machine happens to batch the work.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from falkordb import Graph

from adapters.falkordb import TenantGraph, graph_name
from bench.chaos import cpu_seconds, deliveries
from bench.round_trips import TENANT, in_process
from gateway.ops.runtime import Runtime
from gateway.world import demo_world_path, import_world, load_world


@contextmanager
def timing() -> Iterator[tuple[Counter[str], Counter[str], Counter[str]]]:
    """While inside: every `TenantGraph.rows` call counted by query name, with its rows and
    FalkorDB's execution time (ms): (calls, rows, ms)."""
    calls: Counter[str] = Counter()
    rows_out: Counter[str] = Counter()
    spent: Counter[str] = Counter()
    current = threading.local()
    lock = threading.Lock()
    original_rows, original_query = TenantGraph.rows, Graph.query

    def counted_rows(
        self: TenantGraph, query: str, params: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        current.name = query
        found = original_rows(self, query, params)
        with lock:
            calls[query] += 1
            rows_out[query] += len(found)
        return found

    def timed_query(self: Graph, q: str, *args: Any, **kwargs: Any) -> Any:
        result = original_query(self, q, *args, **kwargs)
        with lock:
            spent[getattr(current, "name", "?")] += result.run_time_ms
        return result

    TenantGraph.rows = counted_rows  # type: ignore[method-assign]
    Graph.query = timed_query  # type: ignore[method-assign]
    try:
        yield calls, rows_out, spent
    finally:
        TenantGraph.rows = original_rows  # type: ignore[method-assign]
        Graph.query = original_query  # type: ignore[method-assign]


def main() -> int:
    """Print the table (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--incidents", type=int, default=200, help="per round (two rounds)")
    p.add_argument("--group", type=int, default=8, help="incidents posted before each drain")
    p.add_argument("--page-within-ms", type=int, default=None)
    args = p.parse_args()
    n = args.incidents
    plan = deliveries(
        argparse.Namespace(incidents=2 * n, tenants=1, duplicates=0.0), random.Random(7)
    )
    plan.sort(key=lambda d: d[1]["alerts"][0]["startsAt"])
    bodies = [body for _, body in plan]
    with (
        tempfile.TemporaryDirectory(prefix="blast-radius-query-costs-") as scratch,
        Runtime(in_process(Path(scratch), args.page_within_ms)) as runtime,
    ):
        assert runtime.store is not None and runtime.embedded is not None
        assert runtime.embedded.process is not None
        db_pid = runtime.embedded.process.pid
        import_world(runtime.store.graph(graph_name(TENANT)), load_world(demo_world_path()))
        port = runtime.serve_http("127.0.0.1", 0)
        worker = runtime.make_worker()
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:

            def stream(part: list[dict[str, Any]]) -> None:
                for first in range(0, len(part), args.group):
                    for body in part[first : first + args.group]:
                        http.post("/api/v1/alerts", json=body).raise_for_status()
                    worker.run(threading.Event(), burst=True)

            stream(bodies[:n])  # warm-up round
            before = (cpu_seconds(db_pid), time.process_time())
            with timing() as (calls, rows_out, spent):
                stream(bodies[n:])
            db_cpu, own_cpu = cpu_seconds(db_pid) - before[0], time.process_time() - before[1]
    print("| query | calls per incident | rows per call | FalkorDB ms per incident | ms per call |")
    print("|---|---|---|---|---|")
    for name, ms in spent.most_common():
        print(f"| {name} | {calls[name] / n:.2f} | {rows_out[name] / calls[name]:.1f} "
              f"| {ms / n:.3f} | {ms / calls[name]:.3f} |")  # fmt: skip
    print(f"| **total** | **{calls.total() / n:.2f}** | | **{spent.total() / n:.3f}** | |")
    print(
        f"\nCPU per incident: FalkorDB {db_cpu * 1000 / n:.2f} ms, this process "
        f"{own_cpu * 1000 / n:.2f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
