"""The floor and the product, CPU per calm incident: `python -m bench.floor [--incidents 300]`.

**The floor** is the least work that keeps the product's guarantees for one incident, run
in this process on the same embedded FalkorDB (`adapters.falkordb.EmbeddedFalkorDB`, started
with the settings `gateway.ops.runtime` gives it), the same client (`GraphStore`, falkordb-py)
and the same world (the bundled OpenTelemetry Demo world, `import_world`):

1. `floor_task`: the alert (MERGE on its key), an open incident and its task, in one write;
2. `floor_claim`: a claim with a lease and a fencing epoch (database clock);
3. `floor_walk`: one dependency walk from the alerting component (business edges, 6 hops);
4. `floor_step`: one checkpointed step (the walk's result) and the page's Action reserved
   under its intent id, in one fenced write that extends the lease;
5. one outbox line (`adapters.outbox.Outbox.send`: flock, append, fsync); an Action found
   reserved by an earlier attempt is looked up in the outbox first (`find`);
6. `floor_complete`: a fenced completion writing the finding and the Action's outcome.

There is no HTTP, no ticket, no routing, no memory: what the product does beyond this is
what the ratio measures. With `--batch K` (> 1) the floor's worker takes up to K tasks per
query instead (`floor_*_batch`: one claim, one walk, one step write and one completion for the
lot, the writes fenced per task, so a lost lease drops only that task's rows): what batching
across tasks would buy at the floor. The incidents are then accepted K at a time too (one
`floor_task` each), as a burst would bring them.

**The product** is `blast-radius serve` (as `bench/chaos.py` starts it: `--workers` worker
processes, the embedded FalkorDB, one tenant, the demo world) with no chaos: calm incidents of
one alert each are posted to the webhook (`--concurrency` at a time, `bench.chaos.deliveries`)
until every task is finished. Calm means each is investigated, then paged once: the page
deadline (`BLAST_PAGE_WITHIN_MS`) is set past the run (`--page-within-ms`, 600 s), since
posting as fast as the machine accepts queues incidents behind each other, and past serve's
default of 1 s 30-65 % of them went down the burst path instead (paged early, the cause edited
in after: two messages, more queries), a share that moved with the machine's load. Pass
`--page-within-ms 1000` to measure that mix.

Both are measured the same way: CPU (user + system, from `/proc/<pid>/stat`) after `--incidents`
incidents and after twice as many; the difference, divided by `--incidents`, is the marginal
CPU per incident, so start-up, imports and warm-up cancel. The product's CPU is the gateway
(serve's process: the HTTP app and the worker supervisor), its worker processes and FalkorDB;
this harness's posting and polling are not counted (its polls of `pending_tasks`, one every
0.2 s, are a few ms of FalkorDB's time per phase). The floor's CPU is this process and its own
FalkorDB. Prints one table: ms of CPU per incident, part by part, product / floor, and the
product's GRAPH.QUERY calls per incident (FalkorDB's own count between the two marks, less this
harness's polls): fewer and larger queries are where the product's FalkorDB time goes down.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx

from adapters.falkordb import GraphStore, TenantGraph, free_port, graph_name
from adapters.notices import Page
from adapters.notify import OutboundMessage
from adapters.outbox import Outbox
from adapters.processes import stop_process
from bench.chaos import (
    WINDOW_S,
    Run,
    cpu_seconds,
    database,
    deliveries,
    pending,
    post,
    start_serve,
    wait_ready,
    worker_pids,
)
from bench.round_trips import counting, server_calls
from gateway.ops.runtime import embedded_server
from gateway.settings import Settings
from gateway.world import demo_world_path, import_world, load_world

TENANT = "chaos0"  # `deliveries()` names tenants chaos0..; one tenant here
LEASE_MS = 30_000


def options() -> argparse.Namespace:
    """Command-line options (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--incidents", type=int, default=300, help="per phase (two phases)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--timeout-s", type=float, default=600.0)
    p.add_argument("--batch", type=int, default=1, help="the floor's tasks per query")
    p.add_argument("--skip-product", action="store_true", help="measure the floor only")
    p.add_argument(
        "--page-within-ms", type=int, default=600_000,
        help="the product's BLAST_PAGE_WITHIN_MS (default past the run: every incident calm)",
    )  # fmt: skip
    return p.parse_args()


def page(intent_id: str, incident_id: str, component: str, cause: str) -> OutboundMessage:
    """The floor's page: what a person needs first (which incident, where, the cause)."""
    notice = Page(incident_id=incident_id, title=f"ChaosHighErrorRate on {component}",
                  root_cause=cause, summary=f"{cause} explains {component}")  # fmt: skip
    return OutboundMessage(
        intent_id=intent_id, incident_id=incident_id, kind="notification", notice=notice
    )


@dataclass
class Floor:
    """One worker doing the floor's work (see the module docstring) on `graph`."""

    graph: TenantGraph
    outbox: Outbox
    components: list[str]
    hops: int
    owner: str = "floor"

    def accept(self, n: int) -> None:
        """What the webhook must write for incident `n` before it answers (`floor_task`)."""
        component = self.components[n % len(self.components)]
        key = f"floor-{n:08x}@2026-01-01T00:00:00Z"
        self.graph.one(
            "floor_task",
            {"component": component, "key": key, "fingerprint": f"floor-{n:08x}",
             "incident_id": f"inc-floor-{n}", "task_id": f"task-floor-{n}"},
        )  # fmt: skip

    def work(self) -> bool:
        """Claim one task and take it to its page and finding; False when none was open."""
        attempt_id = uuid.uuid4().hex
        claimed = self.graph.one(
            "floor_claim", {"owner": self.owner, "attempt_id": attempt_id, "lease_ms": LEASE_MS}
        )
        if claimed is None:
            return False
        fence = {"task_id": claimed["id"], "owner": self.owner, "epoch": claimed["epoch"]}
        component, incident_id = str(claimed["component"]), str(claimed["incident_id"])
        walked = self.graph.rows("floor_walk", {"component": component, "hops": self.hops})
        # the deepest component reached is the cause: the walk's answer, as simply as it goes
        cause = str(walked[-1]["name"]) if walked else component
        intent_id = f"incident:{incident_id}:initial-notification"
        reserved = self.graph.one(
            "floor_step",
            fence | {"args": component, "result": ",".join(str(r["name"]) for r in walked),
                     "intent_id": intent_id, "attempt_id": attempt_id, "lease_ms": LEASE_MS},
        )  # fmt: skip
        if reserved is None:
            return True  # the lease was lost: another worker has the task now
        message = page(intent_id, incident_id, component, cause)
        ref = reserved["external_ref"]
        if reserved["status"] != "sent":
            found = None if reserved["mine"] else self.outbox.find(intent_id, message)
            ref = found or self.outbox.send(message)
        self.graph.one(
            "floor_complete",
            fence | {"finding_id": f"finding-{incident_id}", "root_cause": cause,
                     "summary": f"{cause} explains {component}", "intent_id": intent_id,
                     "external_ref": ref},
        )  # fmt: skip
        return True

    def work_batch(self, k: int) -> int:
        """`work` for up to `k` tasks, one query per stage for all of them (`floor_*_batch`);
        returns how many were claimed."""
        attempt_id = uuid.uuid4().hex
        claimed = self.graph.rows(
            "floor_claim_batch",
            {"limit": k, "owner": self.owner, "attempt_id": attempt_id, "lease_ms": LEASE_MS},
        )
        if not claimed:
            return 0
        starts = sorted({str(c["component"]) for c in claimed})
        walks: dict[str, list[str]] = {}
        for row in self.graph.rows("floor_walk_batch", {"components": starts, "hops": self.hops}):
            walks.setdefault(str(row["start"]), []).append(str(row["name"]))
        tasks = {}
        for c in claimed:
            component, incident_id = str(c["component"]), str(c["incident_id"])
            walked = walks.get(component, [])
            tasks[str(c["id"])] = {
                "task_id": c["id"], "epoch": c["epoch"], "args": component,
                "result": ",".join(walked), "cause": walked[-1] if walked else component,
                "component": component, "incident_id": incident_id,
                "intent_id": f"incident:{incident_id}:initial-notification",
            }  # fmt: skip
        reserved = self.graph.rows(
            "floor_step_batch",
            {"tasks": [{key: t[key] for key in ("task_id", "epoch", "args", "result",
                                                "intent_id")} for t in tasks.values()],
             "owner": self.owner, "attempt_id": attempt_id, "lease_ms": LEASE_MS},
        )  # fmt: skip
        done = []
        for row in reserved:  # a task missing here lost its lease: another worker has it
            t = tasks[str(row["task_id"])]
            message = page(t["intent_id"], t["incident_id"], t["component"], t["cause"])
            ref = row["external_ref"]
            if row["status"] != "sent":
                found = None if row["mine"] else self.outbox.find(t["intent_id"], message)
                ref = found or self.outbox.send(message)
            done.append({
                "task_id": t["task_id"], "epoch": t["epoch"],
                "id": f"finding-{t['incident_id']}", "root_cause": t["cause"],
                "summary": f"{t['cause']} explains {t['component']}",
                "intent_id": t["intent_id"], "external_ref": ref,
            })  # fmt: skip
        if done:
            self.graph.rows("floor_complete_batch", {"tasks": done, "owner": self.owner})
        return len(claimed)


def floor_cpu(args: argparse.Namespace, scratch: Path) -> dict[str, float]:
    """The floor's marginal CPU per incident, ms: {"client": .., "falkordb": ..}."""
    settings = Settings()
    server = embedded_server(settings, scratch / "floor")
    store = GraphStore(server.start(), timeout_ms=settings.query_timeout_max_ms)
    try:
        assert server.process is not None
        graph = store.graph(graph_name("floor"))
        graph.ensure_schema()
        world = load_world(demo_world_path())
        import_world(graph, world)
        owned = sorted({name for team in world.teams for name in team.owns})
        floor = Floor(graph, Outbox(scratch / "floor" / "outbox.jsonl"), owned, settings.walk_hops)
        marks = []
        for phase in range(3):
            first = (phase - 1) * args.incidents
            for start in range(first, phase * args.incidents, args.batch) if phase else ():
                end = min(start + args.batch, phase * args.incidents)
                for n in range(start, end):
                    floor.accept(n)
                if args.batch > 1:
                    while floor.work_batch(args.batch):
                        pass
                else:
                    floor.work()
            marks.append((time.process_time(), cpu_seconds(server.process.pid)))
        lines = len(floor.outbox.entries())
        if lines != 2 * args.incidents:
            raise RuntimeError(f"floor: {lines} outbox lines for {2 * args.incidents} incidents")
    finally:
        store.close()
        server.stop()
    (c1, d1), (c2, d2) = marks[1], marks[2]
    return {"client": (c2 - c1) * 1000 / args.incidents,
            "falkordb": (d2 - d1) * 1000 / args.incidents}  # fmt: skip


def product_cpu(args: argparse.Namespace, scratch: Path) -> tuple[dict[str, float], float]:
    """The product's marginal CPU per calm incident, ms: gateway, workers, falkordb; and its
    marginal GRAPH.QUERY calls per incident (as FalkorDB counts them)."""
    data_dir = scratch / "product"
    data_dir.mkdir()
    port = free_port()
    serve, log = start_serve(data_dir, port, args.workers, [TENANT], {
        "BLAST_LEASE_MS": str(LEASE_MS), "BLAST_INCIDENT_WINDOW_S": str(WINDOW_S),
        "BLAST_PAGE_WITHIN_MS": str(args.page_within_ms),
    })  # fmt: skip
    plan_args = argparse.Namespace(incidents=2 * args.incidents, tenants=1, duplicates=0.0)
    plan = deliveries(plan_args, random.Random(7))
    plan.sort(key=lambda d: d[1]["alerts"][0]["startsAt"])
    run, marks = Run(), []
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, serve)
        _, db_port = database(data_dir)
        store = GraphStore(f"redis://127.0.0.1:{db_port}", timeout_ms=5_000)
        import_world(store.graph(graph_name(TENANT)), load_world(demo_world_path()))
        deadline = time.monotonic() + args.timeout_s
        limits = httpx.Limits(max_connections=args.concurrency)
        with (
            httpx.Client(base_url=url, timeout=30, limits=limits) as http,
            ThreadPoolExecutor(args.concurrency) as senders,
            counting() as own,  # the harness's own queries (`pending`), not the product's
        ):
            for phase in range(3):
                if phase:
                    part = plan[(phase - 1) * args.incidents : phase * args.incidents]
                    list(senders.map(lambda d: post(http, run, TENANT, d[1], deadline), part))
                    while time.monotonic() < deadline and pending(store, [TENANT]) != 0:
                        time.sleep(0.2)
                db_pid, _ = database(data_dir)
                marks.append({
                    "gateway": cpu_seconds(serve.pid, children_too=True),
                    "workers": sum(cpu_seconds(pid) for pid in worker_pids(serve.pid)),
                    "falkordb": cpu_seconds(db_pid),
                    "queries": server_calls(f"redis://127.0.0.1:{db_port}") - own.total(),
                })  # fmt: skip
        store.close()
        pages = sum(1 for e in Outbox(data_dir / "outbox.jsonl").entries()
                    if str(e["intent_id"]).endswith(":initial-notification"))  # fmt: skip
        if pages != 2 * args.incidents or run.never_accepted:
            raise RuntimeError(f"product: {pages} pages for {2 * args.incidents} incidents")
    finally:
        stop_process(serve, 30)
        log.close()
    queries = (marks[2].pop("queries") - marks[1].pop("queries")) / args.incidents
    return {k: (marks[2][k] - marks[1][k]) * 1000 / args.incidents for k in marks[2]}, queries


def main() -> int:
    """Measure the floor, then the product; print the table."""
    args = options()
    with tempfile.TemporaryDirectory(prefix="blast-radius-floor-") as name:
        scratch = Path(name)
        floor = floor_cpu(args, scratch)
        product, queries = ({}, 0.0) if args.skip_product else product_cpu(args, scratch)
    floor_ms, product_ms = sum(floor.values()), sum(product.values())
    parts = lambda d: " / ".join(f"{k} {v:.1f}" for k, v in d.items())  # noqa: E731
    print("| incidents per phase | floor batch | floor ms/incident | product ms/incident "
          "| product / floor | product GRAPH.QUERY/incident |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    ratio = f"{product_ms / floor_ms:.1f}" if product else "-"
    shown = f"{product_ms:.1f} ({parts(product)})" if product else "-"
    calls = f"{queries:.2f}" if product else "-"
    print(f"| {args.incidents} | {args.batch} | {floor_ms:.1f} ({parts(floor)}) | {shown} "
          f"| {ratio} | {calls} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
