"""Crashes with real processes: workers SIGKILLed or SIGTERMed mid-task, `serve` replacing a
dead worker, FalkorDB killed with -9 and restarted under the gateway, and the short chaos run.

Workers run as `python -m gateway.cli worker` from this checkout against the real FalkorDB;
`BLAST_CHAOS_HALT_AFTER_STEP` stops one at a known step so it can be killed there.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from adapters.falkordb import EmbeddedFalkorDB, GraphStore, TenantGraph, free_port, graph_name
from agents.triage.triage import triage
from gateway.http.payloads import normalize, parse_body
from gateway.ops.runtime import Runtime
from gateway.settings import Settings
from gateway.world import demo_world_path, import_world, load_world
from tests.conftest import alert_body, clean_env

ROOT = Path(__file__).resolve().parents[2]


def wait_for(what: str, check: Callable[[], object], timeout_s: float = 20.0) -> object:
    """Poll `check` until it returns something truthy; fail with `what` after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


Spawn = Callable[..., subprocess.Popen[bytes]]


@pytest.fixture
def spawn(
    falkordb: EmbeddedFalkorDB, tmp_path: Path, tenant: str
) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """Start `python -m gateway.cli <args>` against the session's FalkorDB and the test tenant,
    with extra environment; every process still running at the end is killed."""
    started: list[subprocess.Popen[bytes]] = []

    def start(*args: str, **env: str) -> subprocess.Popen[bytes]:
        base = clean_env("BLAST_")
        proc = subprocess.Popen(
            [sys.executable, "-m", "gateway.cli", *args],
            cwd=ROOT,
            env=base | {"PYTHONPATH": str(ROOT), "FALKORDB_URL": falkordb.url,
                        "BLAST_DATA_DIR": str(tmp_path), "BLAST_DEFAULT_TENANT": tenant} | env,
        )  # fmt: skip
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def incident(graph: TenantGraph, index: int = 0) -> str:
    """One firing alert on payment (not a traffic surge: its investigation has 6 steps)."""
    alerts = normalize(parse_body(alert_body("payment", index)), "unknown")
    return triage(graph, alerts, 900_000).opened[0]


def task(graph: TenantGraph, incident_id: str, kind: str = "investigate") -> dict[str, Any]:
    """The incident's task of `kind` (as the status API shows it)."""
    rows = graph.rows("incident_tasks", {"incident_id": incident_id})
    return next(row for row in rows if row["kind"] == kind)


def stored(graph: TenantGraph, task_id: str) -> list[dict[str, Any]]:
    """The checkpointed steps of a task."""
    return graph.rows("task_steps", {"task_id": task_id})


def test_worker_killed_after_step_3_is_replaced_and_resumes_at_step_4(graph, spawn):
    incident_id = incident(graph)
    task_id = task(graph, incident_id)["id"]
    doomed = spawn("worker", "--role", "investigator",
                   BLAST_LEASE_MS="500", BLAST_CHAOS_HALT_AFTER_STEP="3")  # fmt: skip
    wait_for(
        "3 checkpointed steps", lambda: len(graph.rows("task_steps", {"task_id": task_id})) == 3
    )
    doomed.send_signal(signal.SIGKILL)
    assert doomed.wait() == -signal.SIGKILL
    first = {s["n"]: s["result"] for s in graph.rows("task_steps", {"task_id": task_id})}
    replacement = spawn("worker", "--role", "investigator", BLAST_LEASE_MS="500")
    wait_for("the investigation done", lambda: task(graph, incident_id)["status"] == "done")
    replacement.send_signal(signal.SIGTERM)
    assert replacement.wait(15) == 0
    done = task(graph, incident_id)
    assert (done["epoch"], done["attempts"], done["taken_over"]) == (2, 2, True)
    steps = graph.rows("task_steps", {"task_id": task_id})
    assert [(s["n"], s["tool"], s["epoch"]) for s in steps] == [
        (1, "incident_alerts", 1), (2, "recall_playbooks", 1), (3, "similar_incidents", 1),
        # neighbours: does the world know what payment, the one alerting component, calls?
        (4, "coverage_walk", 2), (5, "recent_changes", 2), (6, "neighbours", 2),
        (7, "walk_path", 2),
    ]  # fmt: skip
    assert {s["n"]: s["result"] for s in steps if s["n"] <= 3} == first  # not re-run
    assert graph.one("incident_get", {"incident_id": incident_id})["root_cause"] == "payment"


def test_a_worker_whose_lease_expired_mid_step_stops_and_writes_nothing(graph, spawn):
    incident_id = incident(graph)
    task_id = task(graph, incident_id)["id"]
    slow = spawn("worker", "--role", "investigator", "--burst", BLAST_LEASE_MS="200",
                 BLAST_CHAOS_STEP_DELAY_MS="400", BLAST_CHAOS_SLOW_STEPS="1",
                 BLAST_MAX_ATTEMPTS="1")  # fmt: skip
    assert slow.wait(20) == 0  # lost the lease at step 1, stopped, found nothing else to claim
    assert graph.rows("task_steps", {"task_id": task_id}) == []
    stuck = task(graph, incident_id)
    assert (stuck["status"], stuck["epoch"]) == ("claimed", 1)
    reaper = spawn("worker", "--role", "investigator", "--burst", BLAST_MAX_ATTEMPTS="1")
    assert reaper.wait(20) == 0
    failed = task(graph, incident_id)
    assert failed["status"] == "failed"
    assert failed["last_error"].startswith("lease expired on attempt 1 of 1")


def test_sigterm_mid_task_releases_the_lease_and_exits_0(graph, spawn):
    incident_id = incident(graph)
    task_id = task(graph, incident_id)["id"]
    worker = spawn("worker", "--role", "investigator", BLAST_CHAOS_HALT_AFTER_STEP="2",
                   BLAST_SHUTDOWN_GRACE_S="0.5")  # fmt: skip
    wait_for(
        "2 checkpointed steps", lambda: len(graph.rows("task_steps", {"task_id": task_id})) == 2
    )
    began = time.monotonic()
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(10) == 0
    assert time.monotonic() - began < 5
    released = task(graph, incident_id)
    assert (released["status"], released["attempts"]) == ("open", 0)  # attempt not charged
    assert released["last_error"] == "worker shut down before finishing"


def test_serve_replaces_a_killed_worker_and_stops_on_sigterm(graph, spawn, tenant):
    port = free_port()
    serve = spawn("serve", "--port", str(port), BLAST_WORKERS="2")
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=5) as http:
        wait_for("serve ready", lambda: ready(http), timeout_s=30)
        workers = wait_for("2 workers", lambda: worker_pids(serve.pid) if len(
            worker_pids(serve.pid)) == 2 else None)  # fmt: skip
        os.kill(workers[0], signal.SIGKILL)
        wait_for("a replacement", lambda: len(set(worker_pids(serve.pid)) - set(workers)) == 1)
        answer = http.post("/api/v1/alerts", content=alert_body("payment", 5))
        assert answer.status_code == 200
        incident_id = answer.json()["opened"][0]
        wait_for(
            "the page",
            lambda: (
                task(graph, incident_id)["status"] == "done"
                and any(
                    t["kind"] == "respond" and t["status"] == "done"
                    for t in graph.rows("incident_tasks", {"incident_id": incident_id})
                )
            ),
        )
    serve.send_signal(signal.SIGTERM)
    assert serve.wait(30) == 0
    assert worker_pids(serve.pid) == []


def ready(http: httpx.Client) -> bool:
    try:
        return http.get("/health/ready").status_code == 200
    except httpx.TransportError:
        return False


def worker_pids(pid: int) -> list[int]:
    """Worker processes among the children of `pid` (Linux /proc)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    found = []
    for child in children:
        try:
            if b"worker" in Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0"):
                found.append(int(child))
        except OSError:
            continue
    return found


def test_falkordb_kill9_mid_run_loses_no_accepted_alert(tmp_path, tenant):
    """A gateway on its own embedded FalkorDB: alerts are posted from 4 threads while the
    server is killed with -9 and restarted; the gateway answers 503 (webhook and readiness)
    while it is down, and every alert it acknowledged is in the graph afterwards."""
    settings = Settings.model_validate(
        {"data_dir": tmp_path, "default_tenant": tenant, "port": 0, "workers": 0}
    )
    accepted: list[bytes] = []
    statuses: list[int] = []
    with Runtime(settings) as runtime:
        assert runtime.store is not None and runtime.embedded is not None
        graph = runtime.store.graph(graph_name(tenant))
        import_world(graph, load_world(demo_world_path()))
        port = runtime.serve_http("127.0.0.1", 0)
        stop = threading.Event()

        def sender(offset: int) -> None:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
                index = offset
                while not stop.is_set():
                    body = alert_body("payment", index)
                    answer = http.post("/api/v1/alerts", content=body)
                    statuses.append(answer.status_code)
                    if answer.status_code == 200:
                        accepted.append(body)
                        index += 4
                    else:
                        assert answer.status_code == 503, answer.text
                        time.sleep(0.02)

        threads = [threading.Thread(target=sender, args=(k,)) for k in range(4)]
        for thread in threads:
            thread.start()
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            wait_for("40 accepted alerts", lambda: len(accepted) >= 40)
            runtime.embedded.kill()
            assert http.get("/health/ready").status_code == 503
            assert http.post("/api/v1/alerts", content=alert_body("ad", 699)).status_code == 503
            assert runtime.revive_database()
            wait_for("ready again", lambda: ready(http))
            before = len(accepted)
            wait_for("more accepted alerts", lambda: len(accepted) >= before + 40)
        stop.set()
        for thread in threads:
            thread.join()
        keys = sorted({a.key for body in accepted for a in normalize(parse_body(body), "x")})
        found = {row["key"] for row in graph.rows("chaos_alerts", {"keys": keys})}
    assert 503 in statuses
    assert len(keys) >= 80
    assert [k for k in keys if k not in found] == []


def state(graph: TenantGraph) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every incident (its stored properties, as listed) and the tasks by status."""
    incidents = graph.rows("list_incidents", {"status": None, "limit": 1000})
    return incidents, graph.rows("task_summary")


@pytest.mark.parametrize("attempt", [1, 2])
def test_property_names_survive_kill9_after_concurrent_first_writes(tmp_path, attempt):
    """8 threads write the first alerts of a fresh graph, then FalkorDB is killed with -9 and
    replays its AOF. Without `schema_names` (in ensure_schema) 1 run in 3 or 4 came back with
    properties under other names (docs/operations.md, "Crash safety"); with it, every incident
    and task must come back exactly as it was."""
    server = EmbeddedFalkorDB(tmp_path)
    store = GraphStore(server.start())
    try:
        graph = store.graph("org_replay")
        graph.ensure_schema()
        import_world(graph, load_world(demo_world_path()))

        def write(offset: int) -> None:
            for index in range(offset, 160, 8):
                alerts = normalize(parse_body(alert_body("checkout", index)), "unknown")
                triage(graph, alerts, 900_000)

        threads = [threading.Thread(target=write, args=(k,)) for k in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        before = state(graph)
        assert len(before[0]) == 160  # alerts 1 h apart: one incident each
        time.sleep(1.2)  # appendfsync everysec: the AOF holds every acknowledged write
        server.kill()
        store.close()
        store = GraphStore(server.start())
        graph = store.graph("org_replay")
        assert state(graph) == before
    finally:
        store.close()
        server.stop()
