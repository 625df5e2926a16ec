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

Both are measured the same way: CPU (user + system, from `/proc/<pid>/stat`) over a phase of
`--incidents` incidents, divided by `--incidents`, after a first phase of as many on each side
that is not counted (so start-up, imports and warm-up cancel), as `--rounds` rounds (default
3). Each round starts both sides on new servers and graphs, side by side (each its own
FalkorDB), so every round measures incidents N+1 to 2N of a new graph (both sides' cost per
incident grows with the graph, the floor's faster: rounds on one growing graph gave ratios
falling from 3.8-4.0 to 3.5 by the third), and measures the floor's phase in two halves, one
before and one after the product's: the machine's speed moves over seconds on this shared
2-core VM (a fixed Python loop took up to 1.8x its usual CPU time at moments, unseen in the
load or steal time), and the floor's phase is short, so it is measured around the product's
rather than before it. The product's phase stays in one piece (its workers' batches grow with
the backlog, so cutting its phase in parts would change its work: 3.5 queries per incident in
parts of 50, against 2.3), while the floor takes one incident at a time however its phase is
cut. Before the measured phases the harness's objects (the product's deliveries, both sides'
clients) are frozen out of the garbage collector (`gc.freeze`), as serve does with its own:
else the floor's client, in this process, paid for them in full collections (its CPU 0.8-1.1
ms per incident against 0.7-0.8 run alone). The product's CPU is the gateway (serve's process:
the HTTP app and the worker supervisor), its worker processes and FalkorDB; this harness's
posting and polling are not counted (its polls of `pending_tasks`, one every 0.2 s, are a few
ms of FalkorDB's time per phase). The floor's CPU is this process and its own FalkorDB. Prints
a row per round: ms of CPU per incident, part by part, product / floor, and the product's
GRAPH.QUERY calls per incident (FalkorDB's own count over the phase, less this harness's polls);
then the median of the rounds' ratios (the figure to quote: one round's ratio moves with the
machine and with how the product's batches fall) and the ratio of all rounds pooled.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import random
import statistics
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
    p.add_argument(
        "--incidents",
        type=int,
        default=300,
        help="calm incidents per measured phase of each side (default 300)",
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="measured rounds, each on new servers; the median ratio is the figure "
        "(default 3; target: product / floor at most 4)",
    )
    p.add_argument("--workers", type=int, default=2, help="the product's worker processes")
    p.add_argument(
        "--concurrency",
        type=int,
        default=8,
        help="incidents the harness posts at a time to the product (default 8)",
    )
    p.add_argument(
        "--timeout-s",
        type=float,
        default=600.0,
        help="give up on a phase after this many seconds (default 600)",
    )
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


class FloorSide:
    """The floor (see the module docstring) on its own embedded FalkorDB, started on entry."""

    def __init__(self, args: argparse.Namespace, scratch: Path) -> None:
        self.args = args
        self.settings = Settings()
        self.server = embedded_server(self.settings, scratch / "floor")
        self.outbox = Outbox(scratch / "floor" / "outbox.jsonl")
        self.done = 0

    def __enter__(self) -> FloorSide:
        self.store = GraphStore(self.server.start(), timeout_ms=self.settings.query_timeout_max_ms)
        graph = self.store.graph(graph_name("floor"))
        graph.ensure_schema()
        world = load_world(demo_world_path())
        import_world(graph, world)
        owned = sorted({name for team in world.teams for name in team.owns})
        self.floor = Floor(graph, self.outbox, owned, self.settings.walk_hops)
        return self

    def __exit__(self, *exc: object) -> None:
        self.store.close()
        self.server.stop()

    def phase(self, n: int) -> dict[str, float]:
        """Take the next `n` incidents to their page and finding; returns the CPU seconds that
        took: {"client": this process, "falkordb": its server}."""
        assert self.server.process is not None
        db_pid, k = self.server.process.pid, self.args.batch
        before = (time.process_time(), cpu_seconds(db_pid))
        for start in range(self.done, self.done + n, k):
            for i in range(start, min(start + k, self.done + n)):
                self.floor.accept(i)
            if k > 1:
                while self.floor.work_batch(k):
                    pass
            else:
                self.floor.work()
        self.done += n
        lines = len(self.outbox.entries())
        if lines != self.done:
            raise RuntimeError(f"floor: {lines} outbox lines for {self.done} incidents")
        return {"client": time.process_time() - before[0],
                "falkordb": cpu_seconds(db_pid) - before[1]}  # fmt: skip


class ProductSide:
    """The product (see the module docstring): `blast-radius serve`, started on entry, and
    this harness's senders."""

    def __init__(self, args: argparse.Namespace, scratch: Path) -> None:
        self.args = args
        self.data_dir = scratch / "product"
        self.data_dir.mkdir()
        plan_args = argparse.Namespace(incidents=2 * args.incidents, tenants=1, duplicates=0.0)
        self.plan = deliveries(plan_args, random.Random(7))
        self.plan.sort(key=lambda d: d[1]["alerts"][0]["startsAt"])
        self.run, self.done = Run(), 0

    def __enter__(self) -> ProductSide:
        self.port = free_port()
        self.serve, self.log = start_serve(self.data_dir, self.port, self.args.workers, [TENANT], {
            "BLAST_LEASE_MS": str(LEASE_MS), "BLAST_INCIDENT_WINDOW_S": str(WINDOW_S),
            "BLAST_PAGE_WITHIN_MS": str(self.args.page_within_ms),
        })  # fmt: skip
        try:
            url = f"http://127.0.0.1:{self.port}"
            wait_ready(url, self.serve)
            self.db_pid, db_port = database(self.data_dir)
            self.db_url = f"redis://127.0.0.1:{db_port}"
            self.store = GraphStore(self.db_url, timeout_ms=5_000)
            import_world(self.store.graph(graph_name(TENANT)), load_world(demo_world_path()))
            limits = httpx.Limits(max_connections=self.args.concurrency)
            self.http = httpx.Client(base_url=url, timeout=30, limits=limits)
            self.senders = ThreadPoolExecutor(self.args.concurrency)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if hasattr(self, "senders"):
            self.senders.shutdown()
        for opened in ("http", "store"):
            if hasattr(self, opened):
                getattr(self, opened).close()
        stop_process(self.serve, 30)
        self.log.close()

    def phase(self, n: int) -> tuple[dict[str, float], int]:
        """Post the next `n` incidents and wait until every task is done; returns the CPU
        seconds that took ({"gateway": .., "workers": .., "falkordb": ..}) and the product's
        GRAPH.QUERY calls meanwhile (FalkorDB's count less this harness's polls)."""
        deadline = time.monotonic() + self.args.timeout_s
        with counting() as own:  # the harness's own queries (`pending`), not the product's
            before = self.marks(own.total())
            part = self.plan[self.done : self.done + n]
            list(self.senders.map(
                lambda d: post(self.http, self.run, TENANT, d[1], deadline), part))  # fmt: skip
            while time.monotonic() < deadline and pending(self.store, [TENANT]) != 0:
                time.sleep(0.2)
            after = self.marks(own.total())
        self.done += n
        pages = sum(1 for e in Outbox(self.data_dir / "outbox.jsonl").entries()
                    if str(e["intent_id"]).endswith(":initial-notification"))  # fmt: skip
        if pages != self.done or self.run.never_accepted:
            raise RuntimeError(f"product: {pages} pages for {self.done} incidents")
        calls = int(after.pop("queries") - before.pop("queries"))
        return {k: after[k] - before[k] for k in after}, calls

    def marks(self, own_queries: int) -> dict[str, float]:
        """CPU seconds so far by part, and the product's GRAPH.QUERY calls so far."""
        return {
            "gateway": cpu_seconds(self.serve.pid, children_too=True),
            "workers": sum(cpu_seconds(pid) for pid in worker_pids(self.serve.pid)),
            "falkordb": cpu_seconds(self.db_pid),
            "queries": server_calls(self.db_url) - own_queries,
        }


def parts(ms: dict[str, float]) -> str:
    """CPU by part as the table shows it, e.g. `client 0.9 / falkordb 1.7`."""
    return " / ".join(f"{k} {v:.1f}" for k, v in ms.items())


def per_incident(cpu: dict[str, float], n: int) -> dict[str, float]:
    """CPU seconds by part over `n` incidents, as ms per incident."""
    return {k: v * 1000 / n for k, v in cpu.items()}


def added(total: dict[str, float], more: dict[str, float]) -> dict[str, float]:
    """`total` with `more` added part by part."""
    return {k: total.get(k, 0.0) + v for k, v in more.items()}


def main() -> int:
    """Measure `--rounds` rounds, each on new servers: a warm-up phase per side, then one phase
    of `--incidents` per side (half the floor's, the product's, the floor's other half); print
    a row per round and the median of the rounds' ratios."""
    args = options()
    n, rows = args.incidents, []
    for _ in range(args.rounds):
        with contextlib.ExitStack() as stack:  # each round on new servers and graphs
            scratch = Path(
                stack.enter_context(tempfile.TemporaryDirectory(prefix="blast-radius-floor-"))
            )
            floor = stack.enter_context(FloorSide(args, scratch))
            product = None
            if not args.skip_product:
                product = stack.enter_context(ProductSide(args, scratch))
            floor.phase(n)  # warm-up: each side's first `--incidents`, not counted
            if product is not None:
                product.phase(n)
            # what the harness holds (the product's deliveries, both sides' clients) out of the
            # collector's full passes, which the floor's client in this process would pay for
            gc.collect()
            gc.freeze()
            # the floor's half phases bracket the product's phase, so both are measured over the
            # same stretch of the machine's time; the product's is one piece (its batches grow
            # with the backlog, so a phase cut in parts does other work), the floor takes one
            # incident at a time, whatever the cut
            floor_cpu = floor.phase(n // 2)
            product_cpu, calls = ({}, 0) if product is None else product.phase(n)
            floor_cpu = added(floor_cpu, floor.phase(n - n // 2))
        rows.append((per_incident(floor_cpu, n), per_incident(product_cpu, n), calls / n))
    print("| round | incidents per phase | floor batch | floor ms/incident | product ms/incident "
          "| product / floor | product GRAPH.QUERY/incident |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    ratios = []
    for r, (floor_ms, product_ms, calls) in enumerate(rows, start=1):
        f, p = sum(floor_ms.values()), sum(product_ms.values())
        ratios += [p / f] if product_ms else []
        ratio = f"{p / f:.1f}" if product_ms else "-"
        shown = f"{p:.1f} ({parts(product_ms)})" if product_ms else "-"
        queries = f"{calls:.2f}" if product_ms else "-"
        print(f"| {r} | {n} | {args.batch} | {f:.1f} ({parts(floor_ms)}) | {shown} "
              f"| {ratio} | {queries} |")  # fmt: skip
    if product is not None:
        pooled = sum(sum(p.values()) for _, p, _ in rows) / sum(sum(f.values()) for f, _, _ in rows)
        print(
            f"\nproduct / floor: {statistics.median(ratios):.1f} (median of {len(ratios)} "
            f"rounds: {', '.join(f'{x:.1f}' for x in ratios)}; all rounds pooled {pooled:.1f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
