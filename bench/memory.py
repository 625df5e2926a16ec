"""Memory of `serve`: `python -m bench.memory [--components 10000] [--incidents 100000]`.

Starts `blast-radius serve` like the chaos harness (`--workers` worker processes, the embedded
FalkorDB, one tenant) and prints the resident memory (RSS, from /proc) of each part — the
gateway (serve's own process), the workers, FalkorDB — and FalkorDB's `used_memory`, at each
stage: empty; with the OpenTelemetry Demo world; with a `--components` world (each component
calls the next two); with `--incidents` resolved incidents stored (each: one alert with labels,
annotations and values like a real Alertmanager alert, and a finished investigation of
`--steps` steps with stored results, built with UNWIND, 500 per query); and after retention trimmed
them (`agents.retention.trim_old_incidents`, what serve's upkeep runs with
`BLAST_RETENTION_DAYS`). FalkorDB keeps freed memory for reuse, so after the trim its RSS stays
and `used_memory` shows what the graph needs.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis

from adapters.falkordb import GraphStore, free_port, graph_name
from agents.retention import DAY_MS, trim_old_incidents
from bench.chaos import ROOT, children, database, token_for, wait_ready
from gateway.world import demo_world_path, import_world, load_world

TENANT = "memory"
MIB = 1024 * 1024
#: What one stored alert carries (sizes like a kube-prometheus alert's).
LABELS = {
    "alertname": "HighErrorRate", "service": "svc", "severity": "critical", "namespace": "prod",
    "pod": "svc-7d9f8b6c5d-x2x9k", "container": "svc", "instance": "10.0.12.34:8080",
    "job": "kubernetes-pods", "endpoint": "http-metrics", "prometheus": "monitoring/k8s",
    "cluster": "prod-eu-west-1", "team": "payments",
}  # fmt: skip
ANNOTATIONS = {
    "summary": "Error rate above 5% on svc for 5 minutes",
    "description": "svc answers 7.3% of its requests with a 5xx status over the last 5 minutes "
    "(threshold 5%). Check recent deploys and the dependencies' health.",
    "runbook_url": "https://runbooks.example.com/alerts/high-error-rate",
}


def rss_kib(pid: int) -> int:
    """Resident set size of process `pid` in KiB (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def measure(name: str, serve_pid: int, db_pid: int, db_port: int) -> str:
    """One table row: RSS of gateway, workers, FalkorDB and all, FalkorDB used_memory (MiB)."""
    workers = [p for p in children(serve_pid) if p != db_pid]
    gateway, work, db = rss_kib(serve_pid), sum(rss_kib(p) for p in workers), rss_kib(db_pid)
    with redis.Redis(port=db_port, socket_timeout=30) as client:
        used = int(client.info("memory")["used_memory"])  # type: ignore[index]
    cells = [gateway / 1024, work / 1024, db / 1024, (gateway + work + db) / 1024, used / MIB]
    return f"| {name} | " + " | ".join(f"{c:.0f}" for c in cells) + " |"


def main() -> int:
    """Build each stage, print the table."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--components", type=int, default=10_000)
    p.add_argument("--incidents", type=int, default=100_000)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    scratch = tempfile.TemporaryDirectory(prefix="blast-radius-memory-")
    data_dir = Path(scratch.name)
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("BLAST_") and k != "FALKORDB_URL"} | {
        "PYTHONPATH": str(ROOT), "BLAST_DATA_DIR": str(data_dir), "BLAST_PORT": str(port),
        "BLAST_WORKERS": str(args.workers), "BLAST_WEBHOOK_TOKENS": f"{TENANT}={token_for(TENANT)}",
    }  # fmt: skip
    log = (data_dir / "serve.log").open("wb")
    serve = subprocess.Popen([sys.executable, "-m", "gateway.cli", "serve"], cwd=ROOT, env=env,
                             stdout=log, stderr=log)  # fmt: skip
    rows = []
    try:
        wait_ready(f"http://127.0.0.1:{port}", serve)
        db_pid, db_port = database(data_dir)
        store = GraphStore(f"redis://127.0.0.1:{db_port}", timeout_ms=5_000)
        graph = store.graph(graph_name(TENANT))
        time.sleep(2)  # workers started and idle
        rows.append(measure("empty", serve.pid, db_pid, db_port))
        import_world(graph, load_world(demo_world_path()))
        rows.append(measure("demo world", serve.pid, db_pid, db_port))
        for start in range(0, args.components, 1_000):
            end = min(start + 1_000, args.components) - 1
            graph.rows("bench_seed_world", {"prefix": "svc-", "from": start, "to": end})
        for start in range(0, args.components, 1_000):
            end = min(start + 1_000, args.components) - 1
            graph.rows("bench_seed_edges", {"prefix": "svc-", "from": start, "to": end})
        rows.append(measure(f"+ {args.components:,} components", serve.pid, db_pid, db_port))
        resolved_at = int(time.time() * 1000) - 90 * DAY_MS
        seed = {
            "prefix": "inc-bench-", "component_prefix": "svc-", "spread": args.components,
            "resolved_at": resolved_at, "steps": args.steps,
            "labels_json": json.dumps(LABELS, sort_keys=True),
            "annotations_json": json.dumps(ANNOTATIONS, sort_keys=True),
            "values_json": json.dumps({"B": 0.073, "C": 1}),
            "result": json.dumps({"status": "success", "data": [
                {"component": f"svc-{n}", "health": "degraded", "evidence": "error rate 7.3%"}
                for n in range(8)]}),  # about 700 bytes, like a walk_path result
        }  # fmt: skip
        for start in range(0, args.incidents, 500):
            end = min(start + 500, args.incidents) - 1
            graph.rows("bench_seed_incidents", seed | {"from": start, "to": end})
        rows.append(measure(f"+ {args.incidents:,} incidents", serve.pid, db_pid, db_port))
        began = time.monotonic()
        trimmed = trim_old_incidents(graph, 30, int(time.time() * 1000))
        took = time.monotonic() - began
        rows.append(measure(f"after retention (30 days: {trimmed:,} trimmed in {took:.0f} s)",
                            serve.pid, db_pid, db_port))  # fmt: skip
        store.close()
    finally:
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(60)
        except subprocess.TimeoutExpired:
            serve.kill()
            serve.wait()
        log.close()
        scratch.cleanup()
    print(
        "| stage | gateway MiB | workers MiB | FalkorDB MiB | total RSS MiB | FalkorDB used MiB |"
    )
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
