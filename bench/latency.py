"""Alert-to-page latency: `python -m bench.latency [--idle 30] [--burst 1000] [--history 0]`.

Starts `blast-radius serve` like the chaos harness (`bench/chaos.py`: worker processes, the
embedded FalkorDB, one tenant per token, the demo world) but with no chaos at all, then:

- `history` (with `--history N`): first N resolved incidents are stored, shaped like real ones
  (`bench/memory.py`'s seed: alert, finding, three tasks with nine steps, five actions) on a
  world of `--history-components` more components, one every few minutes over the last
  `--days` (the history retention keeps in the graph), so the phases below run against a graph
  the size of a month in production rather than an empty one;
- `idle`: `--idle` incidents posted one at a time, each after the previous one was paged;
- `burst`: `--burst` incidents posted `--concurrency` at a time, as fast as the webhook takes them;
  with `--followups K`, each burst incident also gets K more alerts, each on a component its
  own one has a business edge with (either way), starting 5 s after it, each its own delivery
  posted `FOLLOWUP_LAG` deliveries later: every one joins the open incident and enqueues a
  re-investigation, so new incidents' first pages compete with a backlog of re-investigations
  (and the diagnosis updates they send).

Alert-to-page of an incident is measured in the graph, on the server's clock: from the
incident's `received_at` (written by the webhook) to the `updated_at` of the first notification
Action sent for it (the page in the outbox). Prints p50/p99/max per phase, and the GRAPH.QUERY
calls per incident (`INFO commandstats`: webhook, workers' polls, steps, response, serve's
upkeep; not this script's own queries).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import redis

from adapters.falkordb import GraphStore, TenantGraph, free_port, graph_name
from adapters.processes import stop_process
from agents.learn.retention import DAY_MS
from bench.chaos import (
    WINDOW_S,
    Run,
    database,
    deliveries,
    pending,
    post,
    start_serve,
    wait_ready,
)
from bench.memory import SEED_BATCH, seed_params
from gateway.cli.demo import rfc3339
from gateway.http.payloads import label_fingerprint
from gateway.ops.upkeep import NODE_ID_HEADROOM
from gateway.world import demo_world_path, import_world, load_world

#: A follow-up alert is posted this many deliveries after its incident's first alert.
FOLLOWUP_LAG = 16
HISTORY_PREFIX = "inc-bench-"  # the ids `seed_params` gives the stored history
TENANT = "chaos0"  # `deliveries()` names tenants chaos0..; one tenant here


def options() -> argparse.Namespace:
    """Command-line options (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--idle", type=int, default=30)
    p.add_argument("--burst", type=int, default=1000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--timeout-s", type=float, default=300.0)
    p.add_argument("--history", type=int, default=0, help="resolved incidents stored first")
    p.add_argument("--history-components", type=int, default=1_000)
    p.add_argument("--days", type=int, default=30, help="days the history is spread over")
    p.add_argument("--followups", type=int, default=0, help="more alerts per burst incident")
    return p.parse_args()


def seed_history(graph: TenantGraph, args: argparse.Namespace) -> None:
    """Store `--history` resolved incidents over the last `--days` on `--history-components`
    components named svc-<n> (`bench/memory.py`'s seed queries), printing progress, then free
    node ids as serve's upkeep would (`Upkeep.keep_headroom`)."""
    for query in ("bench_seed_world", "bench_seed_edges"):
        for start in range(0, args.history_components, 1_000):
            end = min(start + 1_000, args.history_components) - 1
            graph.rows(query, {"prefix": "svc-", "from": start, "to": end})
    now_ms = int(time.time() * 1000)
    every_ms = args.days * DAY_MS // max(1, args.history)
    params = seed_params(argparse.Namespace(components=args.history_components)) | {
        "first_ms": now_ms - args.days * DAY_MS, "every_ms": every_ms,
    }  # fmt: skip
    for start in range(0, args.history, SEED_BATCH):
        end = min(start + SEED_BATCH, args.history) - 1
        graph.rows("bench_seed_incidents", params | {"from": start, "to": end})
        print(f"history: {end + 1:,} of {args.history:,} incidents stored", file=sys.stderr)
    # what serve's upkeep does within HEADROOM_EVERY_S of such growth, done now so the
    # measured phases do not depend on where its 10 s tick falls
    graph.free_node_ids(NODE_ID_HEADROOM)


def with_followups(
    plan: list[tuple[str, dict[str, Any]]], per_incident: int
) -> list[tuple[str, dict[str, Any]]]:
    """`plan` with `per_incident` follow-up deliveries per incident (see the module docstring):
    alerts on the demo world's business neighbours of the incident's component, 5 s later,
    each posted `FOLLOWUP_LAG` deliveries after the incident's own."""
    if per_incident <= 0:
        return plan
    world = load_world(demo_world_path())
    near: dict[str, list[str]] = {}
    for edge in world.edges:
        if edge.purpose == "business" and edge.source != edge.target:
            near.setdefault(edge.source, []).append(edge.target)
            near.setdefault(edge.target, []).append(edge.source)
    out: list[tuple[str, dict[str, Any]]] = []
    due: dict[int, list[tuple[str, dict[str, Any]]]] = {}
    for index, (tenant, body) in enumerate(plan):
        out += due.pop(index, [])
        out.append((tenant, body))
        first = body["alerts"][0]
        starts = datetime.fromisoformat(first["startsAt"].replace("Z", "+00:00"))
        for n, component in enumerate(sorted(near.get(first["labels"]["service"], []))):
            if n == per_incident:
                break
            labels = first["labels"] | {"service": component, "followup": str(n)}
            alert = first | {"labels": labels, "fingerprint": label_fingerprint(labels),
                             "startsAt": rfc3339(starts + timedelta(seconds=5))}  # fmt: skip
            later = body | {"alerts": [alert], "commonLabels": labels}
            due.setdefault(index + FOLLOWUP_LAG, []).append((tenant, later))
    return out + [d for k in sorted(due) for d in due[k]]


def latencies(store: GraphStore) -> dict[str, float]:
    """Alert-to-page ms per paged incident id (`cypher/bench_page_latency.cypher`), the stored
    history left out."""
    rows = store.graph(graph_name(TENANT)).rows("bench_page_latency")
    return {
        str(r["incident_id"]): float(r["ms"])
        for r in rows
        if not str(r["incident_id"]).startswith(HISTORY_PREFIX)
    }


def calls(port: int) -> int:
    """GRAPH.QUERY calls the server answered since its statistics were reset."""
    with redis.Redis(port=port, socket_timeout=5, decode_responses=True) as client:
        stats = client.info("commandstats").get("cmdstat_graph.QUERY", {})
    return int(stats.get("calls", 0))


def settle(store: GraphStore, deadline: float) -> int:
    """Wait until no task is open or claimed (or the deadline passes); the graph queries this
    waiting cost (not counted as the service's)."""
    asked = 1
    while time.monotonic() < deadline and pending(store, [TENANT]) != 0:
        asked += 1
        time.sleep(0.01)
    return asked


def row(name: str, values: list[float], queries: int) -> str:
    """One table row: phase, incidents, p50/p99/max ms, GRAPH.QUERY calls per incident."""
    ordered = sorted(values) or [0.0]
    q = lambda f: ordered[min(len(ordered) - 1, int(f * len(ordered)))]  # noqa: E731
    per = queries / max(len(values), 1)
    return (f"| {name} | {len(values)} | {q(0.5):.0f} | {q(0.99):.0f} | {ordered[-1]:.0f} "
            f"| {per:.1f} |")  # fmt: skip


def main() -> int:
    """Run both phases and print the table; exit 1 when an incident was never paged."""
    args = options()
    plan_args = argparse.Namespace(incidents=args.idle + args.burst, tenants=1, duplicates=0.0)
    plan = deliveries(plan_args, random.Random(7))
    plan.sort(key=lambda d: d[1]["alerts"][0]["startsAt"])
    scratch = tempfile.TemporaryDirectory(prefix="blast-radius-latency-")
    data_dir = Path(scratch.name)
    port = free_port()
    serve, log = start_serve(
        data_dir, port, args.workers, [TENANT], {"BLAST_INCIDENT_WINDOW_S": str(WINDOW_S)}
    )
    lines, run, missing = [], Run(), 0
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, serve)
        _, db_port = database(data_dir)
        store = GraphStore(f"redis://127.0.0.1:{db_port}", timeout_ms=5_000)
        import_world(store.graph(graph_name(TENANT)), load_world(demo_world_path()))
        seed_history(store.graph(graph_name(TENANT)), args)
        deadline = time.monotonic() + args.timeout_s
        with httpx.Client(base_url=url, timeout=30) as http:
            start, mine = calls(db_port), 0
            for _, body in plan[: args.idle]:
                post(http, run, TENANT, body, deadline)
                mine += settle(store, deadline)
            idle = latencies(store)
            stored = f", {args.history:,} stored" if args.history else ""
            lines.append(row(f"idle{stored}", list(idle.values()),
                             calls(db_port) - start - mine - 1))  # fmt: skip
            start = calls(db_port)
            burst_plan = with_followups(plan[args.idle :], args.followups)
            with ThreadPoolExecutor(args.concurrency) as senders:
                list(senders.map(lambda d: post(http, run, TENANT, d[1], deadline),
                                 burst_plan))  # fmt: skip
            mine = settle(store, deadline)
            burst = {k: v for k, v in latencies(store).items() if k not in idle}
            more = f" + {args.followups} follow-up alerts each" if args.followups else ""
            lines.append(row(f"burst of {args.burst}{more}{stored}", list(burst.values()),
                             calls(db_port) - start - mine - 1))  # fmt: skip
            missing = max(0, args.idle + args.burst - len(idle) - len(burst))
        store.close()
    finally:
        stop_process(serve, 30)
        log.close()
        scratch.cleanup()
    print("| phase | incidents | p50 ms | p99 ms | max ms | GRAPH.QUERY/incident |")
    print("|---|---|---|---|---|---|")
    print("\n".join(lines))
    if missing:
        print(f"{missing} incidents never paged", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
