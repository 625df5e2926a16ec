"""The chaos harness: `python -m bench.chaos [--incidents 1000] [--db-restarts 2] …`.

It starts `blast-radius serve` (as `python -m gateway.cli serve`, from this checkout) on an
embedded FalkorDB in a temporary data folder with `--workers` worker processes and one
webhook token per tenant (`BLAST_WEBHOOK_TOKENS`), loads the OpenTelemetry Demo world into every
tenant graph, then fires `--incidents` incidents (one Alertmanager delivery each, tenants in
turn, `--concurrency` posts at a time, `--duplicates` of them delivered twice). A sender retries
a 503 or a refused connection, as Alertmanager does. Meanwhile:

- it SIGKILLs a random worker once a quarter of the deliveries are in (so even a run shorter than
  the interval has a kill), then every `--kill-every-s` seconds (0: never); serve's supervisor
  starts a new one;
- the lease is `--lease-ms` (50 ms) and `--slow-steps` of the steps sleep `--step-delay-ms`
  (60 ms) before their checkpoint, so leases expire mid-step and tasks are taken over;
- it restarts FalkorDB `--db-restarts` times spread over the deliveries: the last one with
  kill -9, the others with SIGTERM; serve restarts it on the same port and data folder.

When every task is finished (or `--timeout-s` passed) it checks the graph and the outbox and
prints one table row. Exit code 0 only when duplicate actions, lost alerts, unfinished tasks and
unpaged incidents (and, with `--escalation N`, incidents missing one of the N escalation
levels: every team gets a policy of N levels 1 s apart, and nobody acknowledges) are all 0.

Columns: `incidents/min` counts from the first post to the last finished task; `write p50/p95`
is FalkorDB's own latency histogram of GRAPH.QUERY (Redis `LATENCY HISTOGRAM`, power-of-two
buckets, so the figure is the bucket's upper bound; every query of the service goes through
GRAPH.QUERY, most of them writes), summed over the server's lives; `webhook p50/p95` is the
sender's round trip of accepted posts; `takeovers` is claims minus tasks (re-claims after a
lost lease, a killed worker or a released attempt); `duplicate actions` is outbox lines minus
distinct intent ids; `lost alerts` is accepted alerts missing from the graph (plus deliveries
never accepted; standard error splits the two when any is lost); `unpaged` is incidents
without exactly one page and one ticket in the outbox.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO

import httpx
import redis

from adapters.falkordb import GraphStore, GraphUnavailable, free_port, graph_name
from adapters.outbox import Outbox
from adapters.processes import stop_process
from gateway.cli.demo import rfc3339
from gateway.http.payloads import label_fingerprint
from gateway.world import demo_world_path, import_world, load_world
from gateway.world.model import EscalationLevelSpec

ROOT = Path(__file__).resolve().parents[1]
#: Alert start times of consecutive incidents are this far apart (> the correlation window).
SPACING = timedelta(seconds=61)
WINDOW_S = 30


@dataclass
class Run:
    """What happened during one run (filled by the sender and chaos threads)."""

    accepted: dict[str, list[str]] = field(default_factory=dict)  # tenant -> alert keys
    webhook_ms: list[float] = field(default_factory=list)
    refused: int = 0  # 503s and refused connections, each retried
    never_accepted: int = 0
    delivered: int = 0
    kills: int = 0
    db_restarts: list[str] = field(default_factory=list)
    histograms: list[dict[int, int]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def options() -> argparse.Namespace:
    """Command-line options (see the module docstring)."""
    p = argparse.ArgumentParser(description="Blast Radius chaos harness (see bench/chaos.py).")
    p.add_argument("--incidents", type=int, default=1000)
    p.add_argument("--tenants", type=int, default=3)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--duplicates", type=float, default=0.1, help="share delivered twice")
    p.add_argument("--lease-ms", type=int, default=50)
    p.add_argument("--slow-steps", type=float, default=0.05)
    p.add_argument("--step-delay-ms", type=int, default=60)
    p.add_argument("--max-attempts", type=int, default=1000)
    p.add_argument("--kill-every-s", type=float, default=3.0, help="0: no worker kills")
    p.add_argument("--db-restarts", type=int, default=2)
    p.add_argument("--timeout-s", type=float, default=600.0)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument(
        "--escalation",
        type=int,
        default=0,
        help="give every team an escalation policy of this many levels, 1 s apart",
    )
    p.add_argument("--keep", type=Path, help="use this data folder and keep it (logs, outbox)")
    p.add_argument(
        "--fsync", choices=["always", "everysec"], help="BLAST_FALKORDB_FSYNC (default: serve's)"
    )
    return p.parse_args()


def deliveries(args: argparse.Namespace, rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    """(tenant, Alertmanager v4 body) per delivery: one per incident plus the duplicates,
    shuffled so that some duplicates arrive concurrently with their original."""
    world = load_world(demo_world_path())
    owned = sorted({name for team in world.teams for name in team.owns})
    tenants = [f"chaos{n}" for n in range(args.tenants)]
    base = datetime.now(UTC).replace(microsecond=0) - SPACING * (args.incidents + 60)
    out = []
    for index in range(args.incidents):
        labels = {
            "alertname": "ChaosHighErrorRate",
            "service": owned[index % len(owned)],
            "severity": "critical",
            "chaos_incident": str(index),
        }
        alert = {
            "status": "firing",
            "labels": labels,
            "annotations": {"summary": f"chaos incident {index}"},
            "startsAt": rfc3339(base + SPACING * index),
            "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "http://prometheus.chaos:9090/graph",
            "fingerprint": label_fingerprint(labels),
        }
        body = {
            "version": "4", "groupKey": f'{{}}:{{chaos_incident="{index}"}}',
            "truncatedAlerts": 0, "status": "firing", "receiver": "blast-radius",
            "groupLabels": {"chaos_incident": str(index)}, "commonLabels": labels,
            "commonAnnotations": {}, "externalURL": "http://alertmanager.chaos:9093",
            "alerts": [alert],
        }  # fmt: skip
        out.append((tenants[index % len(tenants)], body))
    out += rng.sample(out, int(len(out) * args.duplicates))
    rng.shuffle(out)
    return out


def token_for(tenant: str) -> str:
    """The tenant's webhook token in this run: 64 hex characters (placeholder-free, so `serve`
    accepts it outside dev mode)."""
    return hashlib.sha256(f"blast-radius-chaos:{tenant}".encode()).hexdigest()


def post(http: httpx.Client, run: Run, tenant: str, body: dict[str, Any], deadline: float) -> None:
    """Deliver one body until it is accepted (200), retrying 503s and refused connections."""
    while time.monotonic() < deadline:
        started = time.perf_counter()
        try:
            auth = {"Authorization": f"Bearer {token_for(tenant)}"}
            answer = http.post("/api/v1/alerts", json=body, headers=auth)
        except httpx.TransportError:
            answer = None
        if answer is not None and answer.status_code == 200:
            with run.lock:
                run.webhook_ms.append((time.perf_counter() - started) * 1000)
                keys = [f"{a['fingerprint']}@{a['startsAt']}" for a in body["alerts"]]
                run.accepted.setdefault(tenant, []).extend(keys)
                run.delivered += 1
            return
        if answer is not None and answer.status_code < 500:
            raise RuntimeError(f"webhook answered {answer.status_code}: {answer.text}")
        with run.lock:
            run.refused += 1
        time.sleep(0.05)
    with run.lock:
        run.never_accepted += 1


def children(pid: int) -> list[int]:
    """Child process ids of `pid` (Linux /proc)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(c) for c in text.split()]


def worker_pids(serve_pid: int) -> list[int]:
    """The worker processes serve runs (children whose command line says `worker`)."""
    found = []
    for child in children(serve_pid):
        try:
            argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"worker" in argv:
            found.append(child)
    return found


def database(data_dir: Path) -> tuple[int, int]:
    """(pid, port) of the embedded FalkorDB serve runs, from `<data>/falkordb/server.json`."""
    info = json.loads((data_dir / "falkordb" / "server.json").read_text())
    return int(info["pid"]), int(info["port"])


def histogram(port: int) -> dict[int, int]:
    """Calls per latency bucket (upper bound in µs) of GRAPH.QUERY since the server started."""
    with redis.Redis(port=port, socket_timeout=2, decode_responses=True) as client:
        reply = client.execute_command("LATENCY", "HISTOGRAM", "graph.QUERY")
    cumulative = sorted(reply.get("graph.QUERY", {}).get("histogram_usec", {}).items())
    out, before = {}, 0
    for bound, count in cumulative:
        out[int(bound)] = int(count) - before
        before = int(count)
    return out


def quantile_ms(histograms: list[dict[int, int]], q: float) -> float:
    """The q-quantile (0-1) of the summed histograms: the upper bound of its bucket, in ms."""
    total: Counter[int] = Counter()
    for h in histograms:
        total.update(h)
    calls = sum(total.values())
    seen = 0
    for bound in sorted(total):
        seen += total[bound]
        if seen >= q * calls:
            return bound / 1000
    return float("nan")


def chaos(
    args: argparse.Namespace, run: Run, serve: subprocess.Popen[bytes], data_dir: Path,
    total: int, stop: threading.Event, rng: random.Random,
) -> None:  # fmt: skip
    """Kill a random worker at a quarter of the deliveries, then every `kill_every_s`; restart
    the database at even shares of the deliveries (kill -9 for the last restart, SIGTERM for
    the others)."""
    restarts = [(k + 1) / (args.db_restarts + 1) for k in range(args.db_restarts)]
    next_kill = time.monotonic() + args.kill_every_s
    first_kill_at = total / 4
    while not stop.wait(0.05):
        if restarts and run.delivered >= restarts[0] * total:
            restarts.pop(0)
            hard = not restarts
            try:
                pid, port = database(data_dir)
                run.histograms.append(histogram(port))
                os.kill(pid, signal.SIGKILL if hard else signal.SIGTERM)
                run.db_restarts.append("kill -9" if hard else "SIGTERM")
            except (OSError, ValueError, redis.RedisError) as exc:
                print(f"chaos: database restart skipped: {exc}", file=sys.stderr)
        due = time.monotonic() >= next_kill or (run.kills == 0 and run.delivered >= first_kill_at)
        if due and args.kill_every_s > 0:
            pids = worker_pids(serve.pid)
            if pids:
                next_kill = time.monotonic() + args.kill_every_s
                try:
                    os.kill(rng.choice(pids), signal.SIGKILL)
                    run.kills += 1
                except ProcessLookupError:
                    pass


def cpu_seconds(pid: int, children_too: bool = False) -> float:
    """CPU time (user + system, s) of a process; with `children_too`, plus its waited-for
    children (workers killed and replaced). 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    ticks = sum(int(f) for f in fields[11 : 13 + (2 if children_too else 0)])
    return ticks / os.sysconf("SC_CLK_TCK")


def cpu_report(serve: subprocess.Popen[bytes], data_dir: Path) -> str:
    """Where the CPU went: serve (gateway + supervisor, with dead workers), the running
    workers, the database, this harness (senders and checks)."""
    workers = sum(cpu_seconds(pid) for pid in worker_pids(serve.pid))
    db_pid, port = database(data_dir)
    with redis.Redis(port=port, socket_timeout=2, decode_responses=True) as client:
        stats = client.info("commandstats").get("cmdstat_graph.QUERY", {})
    parts = {
        "gateway+supervisor+dead workers": cpu_seconds(serve.pid, children_too=True),
        "live workers": workers,
        "falkordb": cpu_seconds(db_pid),
        "harness": cpu_seconds(os.getpid()),
    }
    return (
        "cpu s: "
        + ", ".join(f"{k} {v:.1f}" for k, v in parts.items())
        + (
            f"; GRAPH.QUERY calls since the last database start: {stats.get('calls', 0)}, "
            f"{stats.get('usec_per_call', 0):.0f} µs each"
        )
    )


def pending(store: GraphStore, tenants: list[str]) -> int | None:
    """Open or claimed tasks over the tenants, or None while the database is unavailable."""
    try:
        return sum(
            int((store.graph(graph_name(t)).one("pending_tasks") or {"pending": 0})["pending"])
            for t in tenants
        )
    except GraphUnavailable:
        return None


def check(
    store: GraphStore, run: Run, outbox: Outbox, tenants: list[str], levels: int = 0
) -> dict[str, int]:
    """Lost alerts, unfinished tasks, takeovers, incidents, duplicate and missing pages, and
    incidents that missed an escalation level (`levels` each: none acknowledges them)."""
    lost = run.never_accepted
    incidents: set[str] = set()
    unfinished = takeovers = 0
    for tenant in tenants:
        graph = store.graph(graph_name(tenant))
        keys = sorted(set(run.accepted.get(tenant, [])))
        found = {r["key"]: r["incident_id"] for r in graph.rows("chaos_alerts", {"keys": keys})}
        lost += sum(1 for k in keys if k not in found)
        incidents |= {i for i in found.values() if i}
        for row in graph.rows("task_summary"):
            takeovers += int(row["claims"]) - int(row["tasks"])
            if row["status"] != "done":
                unfinished += int(row["tasks"])
    lines = outbox.entries()
    intents = Counter(str(e["intent_id"]) for e in lines)
    pages = ("initial-notification", "ticket")
    unpaged = sum(1 for i in incidents if any(intents[f"incident:{i}:{p}"] != 1 for p in pages))
    skipped = sum(
        1 for i in incidents
        if any(intents[f"incident:{i}:escalate:{n}"] != 1 for n in range(1, levels + 1))
    )  # fmt: skip
    return {
        "skipped": skipped,
        "incidents": len(incidents),
        "lost": lost,
        "unfinished": unfinished,
        "takeovers": takeovers,
        "duplicates": len(lines) - len(intents),
        "unpaged": unpaged,
    }


def start_serve(
    data_dir: Path, port: int, workers: int, tenants: list[str], extra: dict[str, str]
) -> tuple[subprocess.Popen[bytes], BinaryIO]:
    """Start `blast-radius serve` from this checkout (`python -m gateway.cli serve`) on `port`
    with `workers` worker processes, its data in `data_dir`, one webhook token per tenant
    (`token_for`) and the settings in `extra`; none of the caller's `BLAST_*` or `FALKORDB_URL`
    (so the embedded FalkorDB). Output goes to `data_dir/serve.log`: returns the process and
    that open file (close it after the process ends)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("BLAST_") and k != "FALKORDB_URL"} | {
        "PYTHONPATH": str(ROOT), "BLAST_DATA_DIR": str(data_dir), "BLAST_PORT": str(port),
        "BLAST_WORKERS": str(workers),
        "BLAST_WEBHOOK_TOKENS": ",".join(f"{t}={token_for(t)}" for t in tenants),
    } | extra  # fmt: skip
    log = (data_dir / "serve.log").open("wb")
    serve = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "serve"], cwd=ROOT, env=env, stdout=log, stderr=log
    )
    return serve, log


def wait_ready(url: str, serve: subprocess.Popen[bytes], timeout_s: float = 60.0) -> None:
    """Wait until serve answers /health/ready with 200 and no `detail` (nothing that delays
    pages: its workers are claiming tasks, so the first incident measured does not wait for a
    worker process to start); raise if it exits or times out."""
    deadline = time.monotonic() + timeout_s
    with httpx.Client(base_url=url, timeout=2) as http:
        while time.monotonic() < deadline:
            if serve.poll() is not None:
                raise RuntimeError(f"serve exited with code {serve.returncode}")
            try:
                answer = http.get("/health/ready")
                if answer.status_code == 200 and not answer.json().get("detail"):
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
    raise RuntimeError("serve not ready in time")


def main() -> int:
    """Run the harness; print the table row; return the exit code."""
    args = options()
    rng = random.Random(args.seed)
    scratch = None if args.keep else tempfile.TemporaryDirectory(prefix="blast-radius-chaos-")
    data_dir = args.keep or Path(scratch.name)  # type: ignore[union-attr]
    data_dir.mkdir(parents=True, exist_ok=True)
    tenants = [f"chaos{n}" for n in range(args.tenants)]
    port = free_port()
    serve, log = start_serve(data_dir, port, args.workers, tenants, {
        "BLAST_LEASE_MS": str(args.lease_ms), "BLAST_MAX_ATTEMPTS": str(args.max_attempts),
        "BLAST_CHAOS_SLOW_STEPS": str(args.slow_steps),
        "BLAST_CHAOS_STEP_DELAY_MS": str(args.step_delay_ms),
        "BLAST_INCIDENT_WINDOW_S": str(WINDOW_S), "BLAST_SHUTDOWN_GRACE_S": "5",
    } | ({"BLAST_FALKORDB_FSYNC": args.fsync} if args.fsync else {}))  # fmt: skip
    run, stop = Run(), threading.Event()
    store: GraphStore | None = None
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, serve)
        _, db_port = database(data_dir)
        store = GraphStore(f"redis://127.0.0.1:{db_port}", timeout_ms=5_000)
        world = load_world(demo_world_path())
        for team in world.teams if args.escalation else []:  # nobody acknowledges: every level
            team.escalation_policy = [
                EscalationLevelSpec(after=f"{n}s", notify=[team.members[0].name])
                for n in range(1, args.escalation + 1)
            ]
        for tenant in tenants:
            import_world(store.graph(graph_name(tenant)), world)
        with redis.Redis(port=db_port) as client:
            client.config_resetstat()
        plan = deliveries(args, rng)
        deadline = time.monotonic() + args.timeout_s
        agitator = threading.Thread(
            target=chaos, args=(args, run, serve, data_dir, len(plan), stop, rng), daemon=True
        )
        began = time.monotonic()
        agitator.start()
        limits = httpx.Limits(max_connections=args.concurrency)
        with (
            httpx.Client(base_url=url, timeout=30, limits=limits) as http,
            ThreadPoolExecutor(args.concurrency) as senders,
        ):
            list(senders.map(lambda d: post(http, run, d[0], d[1], deadline), plan))
        posted = time.monotonic()
        while time.monotonic() < deadline and pending(store, tenants) != 0:
            time.sleep(0.05)
        finished = time.monotonic()
        stop.set()
        agitator.join()
        print(cpu_report(serve, data_dir), file=sys.stderr)
        _, db_port = database(data_dir)
        run.histograms.append(histogram(db_port))
        result = check(store, run, Outbox(data_dir / "outbox.jsonl"), tenants, args.escalation)
    finally:
        stop.set()
        if store is not None:
            store.close()
        code = stop_process(serve, 30)
        log.close()
        if scratch is not None:
            scratch.cleanup()
    web = sorted(run.webhook_ms)
    minutes = (finished - began) / 60
    head = ["incidents", "incidents/min", "write p50/p95 ms", "takeovers", "duplicate actions",
            "lost alerts", "unfinished tasks", "unpaged", "skipped levels", "webhook p50/p95 ms",
            "worker kills",
            "db restarts", "503/retries", "serve exit"]  # fmt: skip
    row = [
        str(result["incidents"]), f"{args.incidents / minutes:,.0f}",
        f"{quantile_ms(run.histograms, 0.5):.2f} / {quantile_ms(run.histograms, 0.95):.2f}",
        str(result["takeovers"]), str(result["duplicates"]), str(result["lost"]),
        str(result["unfinished"]), str(result["unpaged"]), str(result["skipped"]),
        f"{web[len(web) // 2]:.1f} / {web[int(len(web) * 0.95)]:.1f}" if web else "-",
        str(run.kills), "+".join(run.db_restarts) or "0", str(run.refused), str(code),
    ]  # fmt: skip
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    print("| " + " | ".join(row) + " |")
    print(f"posting took {posted - began:.1f} s, all tasks finished after {finished - began:.1f} s",
          file=sys.stderr)  # fmt: skip
    if result["lost"]:  # which of the two it was decides where to look
        print(f"lost alerts: {result['lost'] - run.never_accepted} answered 200 and missing from "
              f"the graph (appendfsync everysec's window, docs/operations.md), "
              f"{run.never_accepted} deliveries never accepted before the deadline",
              file=sys.stderr)  # fmt: skip
    bad = result["duplicates"] + result["lost"] + result["unfinished"] + result["unpaged"]
    bad += result["skipped"]
    return 1 if bad or result["incidents"] != args.incidents else 0


if __name__ == "__main__":
    sys.exit(main())
