"""Claim latency with a long history: `python -m bench.claim [--finished 100000] [--open 2000]`.

Starts an embedded FalkorDB in a temporary folder, creates `--finished` done tasks and `--open`
open ones in one graph, each for an incident of its own not paged yet (schema and indexes as in
production), then claims `--claims` tasks one after another with
`agents.tasks.coordination.claim` (the shipped `claim_task` query) and prints the plan and
p50/p95/p99 latency in ms (client round trip) and claims/s.

Measured here (2 cores, shared), 100k finished and 2,000 open tasks: the selection of the first
version (`t.kind IN $kinds AND (t.status = 'open' OR …)`) took 11.5 ms p50 and the same selection
starting with `t.status IN ['open', 'claimed']` 0.7 ms (ad-hoc runs of the bare selection); the
shipped query, which also checks each open task's incident, takes 1.2-2.2 ms p50 with or
without the history (README, "Crash safety").
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from adapters.falkordb import EmbeddedFalkorDB, GraphStore
from agents.tasks.coordination import claim
from agents.tasks.kinds import AFTER_PAGE, PRIORITY, ROLE_KINDS

BATCH = 5_000
KINDS = ["investigate", "respond", "notify_cleared"]


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0-1) of `values` by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    """Parse arguments, seed the graph, claim, print one result line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--finished", type=int, default=100_000)
    parser.add_argument("--open", type=int, default=2_000)
    parser.add_argument("--claims", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="blast-radius-bench-") as scratch:
        server = EmbeddedFalkorDB(Path(scratch))
        store = GraphStore(server.start(), timeout_ms=5_000)
        try:
            graph = store.graph("org_bench")
            graph.ensure_schema()
            for status, total in (("done", args.finished), ("open", args.open)):
                for start in range(0, total, BATCH):
                    graph.one(
                        "bench_seed_tasks",
                        {"n": min(BATCH, total - start), "prefix": f"{status}-{start}-",
                         "kinds": KINDS, "status": status},
                    )  # fmt: skip
            graph.ensure_schema()  # waits until the indexes are OPERATIONAL again
            params = {
                "kinds": [],
                "after_page": AFTER_PAGE,
                "priority": PRIORITY,
                "max_attempts": 5,
                "attempt_ids": ["bench"],
                "limit": 2,
                "page_due": [],
                "page_within_ms": 0,
            }
            print(graph.explain("claim_task", params))
            kinds = list(ROLE_KINDS["investigator"])
            latencies = []
            began = time.perf_counter()
            for _ in range(args.claims):
                t0 = time.perf_counter()
                if claim(graph, kinds, "bench", 60_000, 5) is None:
                    break
                latencies.append((time.perf_counter() - t0) * 1000)
            spent = time.perf_counter() - began
        finally:
            store.close()
            server.stop()
    if not latencies:  # every seeded open task is of a kind the investigator does not take
        raise SystemExit(
            f"no task was claimable among {args.open} open tasks: the investigator takes only "
            f"the seeded investigations (about one in {len(KINDS)}); seed more with --open"
        )
    print(
        f"finished={args.finished} open={args.open} claims={len(latencies)} "
        f"p50={percentile(latencies, 0.5):.2f}ms p95={percentile(latencies, 0.95):.2f}ms "
        f"p99={percentile(latencies, 0.99):.2f}ms mean={statistics.mean(latencies):.2f}ms "
        f"rate={len(latencies) / spent:.0f}/s"
    )


if __name__ == "__main__":
    main()
