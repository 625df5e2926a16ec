"""Memory of `serve`: `python -m bench.memory [--components 10000] [--incidents 100000]`.

Starts `blast-radius serve` like the chaos harness (`--workers` worker processes, the embedded
FalkorDB, one tenant) and prints, at each stage, the memory of each part — the gateway (serve's
own process), the workers, FalkorDB — as RSS and PSS (from /proc/PID/smaps_rollup), FalkorDB's
`used_memory`, and the totals. Stages: empty; with the OpenTelemetry Demo world; with a
`--components` world (each component calls the next two); with `--incidents` resolved incidents
stored over `--days` days up to now while retention runs from the start; after one more
retention pass.

Why PSS: RSS counts a page shared by several processes (the Python interpreter, shared
libraries, the pages a forked process has not written) once in each of them, so a sum of RSS
over-counts. PSS splits each shared page between the processes that map it, so the sum of PSS
is what the service costs the machine; the "total" column is that sum.

Each seeded incident has the shape of a real one-alert incident after triage, investigation,
page, ticket and resolve (`cypher/bench_seed_incidents.cypher`; counted on one run of the
pipeline): an alert with kube-prometheus-like labels and annotations, a finding, three finished
tasks with nine steps (~4 KiB of stored results) and 27 TOUCHED edges, five sent actions. They
are written oldest first, 250 per query; every `--trim-every` incidents the bench runs the
retention pass `serve` runs every 10 minutes (`agents.learn.retention.trim_old_incidents` with
`--retention-days`, then `GraphStore.release_memory`), with "now" the newest incident's time.
The bench's `serve` has retention off (`BLAST_RETENTION_DAYS=0`) so that only these passes, at
known points, trim.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import redis

from adapters.falkordb import GraphStore, TenantGraph, free_port, graph_name
from adapters.processes import stop_process
from agents.learn.retention import DAY_MS, trim_old_incidents
from bench.chaos import children, database, start_serve, wait_ready
from gateway.ops.archive import archive_old_incidents, archive_path
from gateway.world import demo_world_path, import_world, load_world

TENANT = "memory"
MIB = 1024 * 1024
#: Incidents per seeding query.
SEED_BATCH = 250
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
GENERATOR_URL = (
    "http://prometheus-k8s-0:9090/graph?g0.expr=sum+by+%28service%29+%28rate%28http_requests_"
    "total%7Bcode%3D~%225..%22%7D%5B5m%5D%29%29+%2F+sum+by+%28service%29+%28rate%28http_"
    "requests_total%5B5m%5D%29%29+%3E+0.05&g0.tab=1"
)
#: The steps of a one-alert incident: (task, tool, bytes of args, bytes of result), as stored
#: by one run of the pipeline on the demo world.
STEPS = [
    ("investigate", "incident_alerts", 35, 304), ("investigate", "recall_playbooks", 20, 81),
    ("investigate", "coverage_walk", 31, 1498), ("investigate", "recent_changes", 178, 275),
    ("investigate", "neighbours", 25, 1523), ("investigate", "walk_path", 169, 146),
    ("respond", "response_context", 90, 234), ("respond", "preferences", 52, 4),
    ("respond", "alerting_teams", 48, 2),
]  # fmt: skip
ACTIONS = [
    ("initial-notification", "notification"), ("ticket", "ticket"),
    ("cleared", "followup"), ("ticket-resolved", "ticket-update"), ("resolved", "update"),
]  # fmt: skip


def filler(size: int) -> str:
    """A JSON string of about `size` bytes (the size of a stored step's args or result)."""
    return json.dumps({"data": "x" * max(0, size - 12)})


def seed_params(args: argparse.Namespace) -> dict[str, object]:
    """The parameters of `bench_seed_incidents` but the range and times."""
    paths = [["svc"], *[["svc", f"svc-{n}"] for n in range(5)]]
    return {
        "prefix": "inc-bench-", "component_prefix": "svc-", "spread": args.components,
        "labels_json": json.dumps(LABELS, sort_keys=True),
        "annotations_json": json.dumps(ANNOTATIONS, sort_keys=True),
        "values_json": json.dumps({"B": 0.073, "C": 1}), "generator_url": GENERATOR_URL,
        "summary": "svc explains 1 of 1 alerting components (svc). Alerts only: a silent "
        "service behind it (svc-1, svc-2) could also be the cause, though it raises no "
        "service-level alert of its own.",
        "paths_json": json.dumps(paths),
        "ruled_out_json": json.dumps({
            f"svc-{n}": "does not alert while an equally covering component does" for n in range(6)
        }),
        "steps": [{"kind": t, "tool": tool, "args": filler(a), "result": filler(r)}
                  for t, tool, a, r in STEPS],
        "actions": [{"key": i, "kind": k} for i, k in ACTIONS],
    }  # fmt: skip


def usage_kib(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of process `pid` in KiB, from /proc/PID/smaps_rollup; (0, 0) when it is gone."""
    found = {"Rss:": 0, "Pss:": 0}
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            parts = line.split()
            if parts and parts[0] in found:
                found[parts[0]] = int(parts[1])
    except OSError:
        pass
    return found["Rss:"], found["Pss:"]


@dataclass
class Row:
    """One stage: (RSS, PSS) MiB of the gateway, the workers (summed) and FalkorDB, and
    FalkorDB's `used_memory` (MiB)."""

    stage: str
    gateway: tuple[float, float]
    workers: tuple[float, float]
    database: tuple[float, float]
    used: float

    def line(self) -> str:
        """The Markdown table row: RSS / PSS per part, FalkorDB used, total RSS and PSS."""
        parts = (self.gateway, self.workers, self.database)
        cells = [f"{rss:.0f} / {pss:.0f}" for rss, pss in parts]
        total_rss, total_pss = sum(p[0] for p in parts), sum(p[1] for p in parts)
        return (
            f"| {self.stage} | " + " | ".join(cells)
            + f" | {self.used:.0f} | {total_rss:.0f} | **{total_pss:.0f}** |"
        )  # fmt: skip


def measure(stage: str, serve_pid: int, db_pid: int, db_port: int) -> Row:
    """Memory of each part of `serve` now."""
    workers = [usage_kib(p) for p in children(serve_pid) if p != db_pid]
    with redis.Redis(port=db_port, socket_timeout=30) as client:
        used = int(client.info("memory")["used_memory"])  # type: ignore[index]

    def mib(kib: tuple[int, int]) -> tuple[float, float]:
        return kib[0] / 1024, kib[1] / 1024

    return Row(
        stage, mib(usage_kib(serve_pid)),
        mib((sum(w[0] for w in workers), sum(w[1] for w in workers))),
        mib(usage_kib(db_pid)), used / MIB,
    )  # fmt: skip


def used_mib(port: int) -> float:
    """FalkorDB's `used_memory` now (MiB)."""
    with redis.Redis(port=port, socket_timeout=30) as client:
        return int(client.info("memory")["used_memory"]) / MIB  # type: ignore[index]


def retention_pass(
    store: GraphStore, graph: TenantGraph, args: argparse.Namespace, archive: Path, now_ms: int
) -> tuple[int, int]:
    """What `serve`'s upkeep does every 10 minutes (`Upkeep.trim`): trim, archive, then release
    the freed memory. Returns (trimmed, archived)."""
    trimmed = trim_old_incidents(graph, args.retention_days, now_ms)
    archived = archive_old_incidents(graph, archive, args.archive_days, now_ms)
    if trimmed or archived:
        store.release_memory(graph.name)
    return trimmed, archived


def main() -> int:
    """Build each stage, print the table."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--components", type=int, default=10_000)
    p.add_argument("--incidents", type=int, default=100_000)
    p.add_argument("--days", type=int, default=365, help="Days the incidents are spread over.")
    p.add_argument("--retention-days", type=int, default=7, help="BLAST_RETENTION_DAYS.")
    p.add_argument("--archive-days", type=int, default=30, help="BLAST_ARCHIVE_DAYS.")
    p.add_argument("--trim-every", type=int, default=1_000,
                   help="Incidents seeded between two retention passes.")  # fmt: skip
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    scratch = tempfile.TemporaryDirectory(prefix="blast-radius-memory-")
    data_dir = Path(scratch.name)
    port = free_port()
    # the bench runs the retention passes itself, at known points
    serve, log = start_serve(data_dir, port, args.workers, [TENANT], {"BLAST_RETENTION_DAYS": "0"})
    rows: list[Row] = []
    notes: list[str] = []
    try:
        wait_ready(f"http://127.0.0.1:{port}", serve)
        db_pid, db_port = database(data_dir)
        store = GraphStore(f"redis://127.0.0.1:{db_port}", timeout_ms=5_000)
        graph = store.graph(graph_name(TENANT))
        time.sleep(2)  # workers started and idle
        rows.append(measure("empty", serve.pid, db_pid, db_port))
        import_world(graph, load_world(demo_world_path()))
        rows.append(measure("demo world", serve.pid, db_pid, db_port))
        for query in ("bench_seed_world", "bench_seed_edges"):
            for start in range(0, args.components, 1_000):
                end = min(start + 1_000, args.components) - 1
                graph.rows(query, {"prefix": "svc-", "from": start, "to": end})
        rows.append(measure(f"+ {args.components:,} components", serve.pid, db_pid, db_port))

        now_ms = int(time.time() * 1000)
        every_ms = args.days * DAY_MS // max(1, args.incidents)
        first_ms = now_ms - args.days * DAY_MS
        params = seed_params(args) | {"first_ms": first_ms, "every_ms": every_ms}
        before = used_mib(db_port)
        archive = archive_path(data_dir, TENANT)
        trimmed, archived, untrimmed_kib = 0, 0, 0.0
        began = time.monotonic()
        for start in range(0, args.incidents, SEED_BATCH):
            end = min(start + SEED_BATCH, args.incidents) - 1
            graph.rows("bench_seed_incidents", params | {"from": start, "to": end})
            if end + 1 == args.trim_every:  # none old enough to trim yet (days > retention)
                untrimmed_kib = (used_mib(db_port) - before) * 1024 / (end + 1)
            if (end + 1) % args.trim_every == 0 or end + 1 == args.incidents:
                done = retention_pass(store, graph, args, archive, first_ms + end * every_ms)
                trimmed, archived = trimmed + done[0], archived + done[1]
        seeded_s = time.monotonic() - began
        rows.append(measure(
            f"+ {args.incidents:,} incidents over {args.days} days, retention from the start "
            f"(trim after {args.retention_days} days, archive after {args.archive_days})",
            serve.pid, db_pid, db_port,
        ))  # fmt: skip
        began = time.monotonic()
        more = retention_pass(store, graph, args, archive, int(time.time() * 1000))
        store.release_memory(graph.name)
        took = time.monotonic() - began
        trimmed, archived = trimmed + more[0], archived + more[1]
        rows.append(measure(
            f"after one more retention pass and MEMORY PURGE ({took:.1f} s)",
            serve.pid, db_pid, db_port,
        ))  # fmt: skip
        in_graph = graph.rows("bench_incident_count")[0]["incidents"]
        on_disk = archive.stat().st_size / MIB if archive.exists() else 0.0
        notes.append(
            f"{args.incidents:,} incidents: {in_graph:,} in the graph, {archived:,} archived "
            f"({on_disk:.1f} MiB of gzipped JSON lines on disk); {trimmed:,} trims"
        )
        if untrimmed_kib:
            notes.append(
                f"FalkorDB used_memory per incident: {untrimmed_kib:.1f} KiB untrimmed (the "
                f"first {args.trim_every:,}, before any could be trimmed)"
            )
        notes.append(f"seeding {args.incidents:,} incidents, with the passes: {seeded_s:.0f} s")
        store.close()
    finally:
        stop_process(serve, 60)
        log.close()
        scratch.cleanup()
    print(
        "| stage | gateway RSS / PSS MiB | workers RSS / PSS | FalkorDB RSS / PSS | "
        "FalkorDB used | total RSS | total PSS |"
    )
    print("|---|---|---|---|---|---|---|")
    print("\n".join(row.line() for row in rows))
    for note in notes:
        print(f"- {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
