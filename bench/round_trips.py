"""Round trips per incident, by query name: `python -m bench.round_trips [--incidents 20]`.

In one process: an embedded FalkorDB in a scratch folder, the gateway with the demo world and
no workers of its own, `--incidents` one-alert incidents (the chaos harness's deliveries,
`bench/chaos.py`) posted to the webhook, then one burst worker runs every task (investigate,
respond) to the page. Every `TenantGraph.rows` call is counted by query name (each one
GRAPH.QUERY round trip), and the total is checked against the server's own count
(`INFO commandstats`). Prints a table of calls per incident by name and the total.

`--page-within-ms 1` forces every incident down the page-deadline path: the burst worker's
first claim finds every investigation overdue, so each incident is paged early (task `page`,
"Root cause: under investigation") and its `respond` then edits the cause into that page
(`Responder._cause_found`), as when a stream outruns the deadline (`bench.floor`). Without it,
the setting's default (1 s): 20 incidents are drained well within it, each paged once with its
cause.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import redis

from adapters.falkordb import TenantGraph, graph_name
from bench.chaos import WINDOW_S, deliveries
from gateway.ops.runtime import Runtime
from gateway.settings import Settings
from gateway.world import demo_world_path, import_world, load_world

TENANT = "chaos0"  # `deliveries()` names tenants chaos0..; one tenant here


@contextmanager
def counting() -> Iterator[Counter[str]]:
    """Count every `TenantGraph.rows` call (so `one` too) by query name while inside."""
    counts: Counter[str] = Counter()
    lock = threading.Lock()
    original = TenantGraph.rows

    def rows(self: TenantGraph, query: str, params: dict[str, Any] | None = None) -> Any:
        with lock:
            counts[query] += 1
        return original(self, query, params)

    TenantGraph.rows = rows  # type: ignore[method-assign]
    try:
        yield counts
    finally:
        TenantGraph.rows = original  # type: ignore[method-assign]


def server_calls(url: str) -> int:
    """GRAPH.QUERY calls the server has answered."""
    with redis.Redis.from_url(url, socket_timeout=5, decode_responses=True) as client:
        stats = client.info("commandstats").get("cmdstat_graph.QUERY", {})
    return int(stats.get("calls", 0))


def measure(runtime: Runtime, bodies: list[dict[str, Any]]) -> tuple[Counter[str], int]:
    """Post `bodies` to the running gateway of `runtime`, drain the tasks with a burst worker;
    returns (calls by query name, GRAPH.QUERY calls the server counted meanwhile)."""
    assert runtime.url is not None
    port = runtime.serve_http("127.0.0.1", 0)
    runtime.topology_remembered.wait(10)  # its reads are not the benchmark's
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
        before = server_calls(runtime.url)
        with counting() as counts:
            for body in bodies:
                answer = http.post("/api/v1/alerts", json=body)
                answer.raise_for_status()
            runtime.make_worker().run(threading.Event(), burst=True)
        return counts, server_calls(runtime.url) - before


def in_process(data_dir: Path, page_within_ms: int | None) -> Settings:
    """Settings for a bench that runs the product in this process: one tenant (`TENANT`), the
    embedded FalkorDB in `data_dir`, no worker processes (the bench drains with its own), the
    chaos bench's correlation window, and `page_within_ms` (None: the setting's default)."""
    settings = Settings.model_validate(
        {"data_dir": data_dir, "default_tenant": TENANT, "port": 0, "workers": 0,
         "incident_window_s": WINDOW_S, "webhook_tokens": {}}
    )  # fmt: skip
    if page_within_ms is None:
        return settings
    return settings.model_copy(update={"page_within_ms": page_within_ms})


def main() -> int:
    """Print the table (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--incidents", type=int, default=20)
    p.add_argument(
        "--page-within-ms", type=int, default=None,
        help="BLAST_PAGE_WITHIN_MS of the burst worker (1: every incident paged early)",
    )  # fmt: skip
    args = p.parse_args()
    plan = deliveries(
        argparse.Namespace(incidents=args.incidents, tenants=1, duplicates=0.0), random.Random(7)
    )
    with (
        tempfile.TemporaryDirectory(prefix="blast-radius-round-trips-") as scratch,
        Runtime(in_process(Path(scratch), args.page_within_ms)) as runtime,
    ):
        assert runtime.store is not None
        import_world(runtime.store.graph(graph_name(TENANT)), load_world(demo_world_path()))
        counts, server = measure(runtime, [body for _, body in plan])
    total = sum(counts.values())
    n = args.incidents
    print("| query | calls per incident |")
    print("|---|---|")
    for name, count in counts.most_common():
        print(f"| {name} | {count / n:.2f} |")
    print(f"| **total** | **{total / n:.2f}** (server counted {server / n:.2f}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
