"""The cost of the web page's live feed: one `web_changes` reading on a graph with a long history
(`python3 -m bench.live_poll [--steps N] [--alerts N] [--incidents N] [--runs N]`).

Seeds an embedded FalkorDB in a temporary folder with finished history (steps, mostly resolved
alerts, resolved incidents with their findings, two actions per incident, done tasks, some
playbooks), then times the query the live feed runs once per poll interval per tenant, and
prints p50 and max in ms.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from falkordb import FalkorDB

from adapters.falkordb import EmbeddedFalkorDB, GraphStore

#: Seed writes are big; the server must not abort them at the product's 5 s maximum.
SEED_TIMEOUT_MS = 600_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--alerts", type=int, default=50_000, help="1 in 100 still firing")
    parser.add_argument("--incidents", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="blast-live-"))
    server = EmbeddedFalkorDB(
        folder, timeout_default_ms=SEED_TIMEOUT_MS, timeout_max_ms=SEED_TIMEOUT_MS
    )
    server.start()
    try:
        store = GraphStore(server.url, timeout_ms=SEED_TIMEOUT_MS)
        graph = store.graph("org_bench")
        graph.ensure_schema()
        raw = FalkorDB(host="127.0.0.1", port=server.port).select_graph("org_bench")
        seeds = [
            ("UNWIND range(1, $n) AS k CREATE (:Alert {key: 'a' + toString(k), "
             "status: CASE WHEN k % 100 = 0 THEN 'firing' ELSE 'resolved' END})", args.alerts),
            ("UNWIND range(1, $n) AS k CREATE (:Incident {id: 'i' + toString(k), "
             "status: 'resolved'}), (:Finding {id: 'f' + toString(k), updated_at: k})",
             args.incidents),
            ("UNWIND range(1, $n) AS k CREATE (:Action {intent_id: 'x' + toString(k), "
             "reserved_at: k, updated_at: k})", 2 * args.incidents),
            ("UNWIND range(1, $n) AS k CREATE (:Task {id: 't' + toString(k), status: 'done', "
             "epoch: 1, kind: 'investigate', owner: 'w'})", 4 * args.incidents),
            ("UNWIND range(1, $n) AS k CREATE (:Step {task_id: 't' + toString(k % 1000), n: k, "
             "at: k})", args.steps),
            ("UNWIND range(1, $n) AS k CREATE (:Playbook {id: 'p' + toString(k), helped: 1, "
             "misled: 0})", 300),
        ]  # fmt: skip
        for query, n in seeds:
            raw.query(query, {"n": n}, timeout=SEED_TIMEOUT_MS)
        graph.ensure_schema()  # indexes OPERATIONAL again before timing
        took = []
        for _ in range(args.runs):
            started = time.perf_counter()
            row = graph.one("web_changes")
            took.append((time.perf_counter() - started) * 1000)
        assert row is not None
        print(
            f"web_changes on {row['steps']} steps, {row['alerts']} alerts "
            f"({row['firing_alerts']} firing), {row['incidents']} incidents, "
            f"{row['findings']} findings, {row['actions']} actions: "
            f"p50 {statistics.median(took):.2f} ms, max {max(took):.2f} ms ({args.runs} runs)"
        )
        store.close()
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
