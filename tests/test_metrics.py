"""`GET /metrics`: every series has the value the graph, the API and the outbox say it should,
after a real incident through the real gateway and workers (single process: worker threads of
the runtime; the multiprocess mode is covered by tests/test_deploy.py)."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from adapters.falkordb import EmbeddedFalkorDB, TenantGraph
from adapters.notices import Page
from adapters.notify import OutboundMessage
from adapters.outbox import Outbox
from agents.metrics import Metrics
from agents.respond.responder import intent
from agents.tasks.coordination import claim
from gateway.cli.demo import demo_faults_path, scenario_bodies
from gateway.ops.runtime import Runtime
from tests.conftest import make_settings


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of an exposition by (name, labels)."""
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(found: dict, name: str, **labels: str) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


def fault(flag: str) -> dict:
    faults = yaml.safe_load(demo_faults_path().read_text())["faults"]
    return next(f for f in faults if f["flag"] == flag)


@pytest.fixture
def runtime(falkordb: EmbeddedFalkorDB, graph: TenantGraph, tmp_path: Path, tenant: str):
    rt = Runtime(make_settings(falkordb, tmp_path, tenant))
    rt.open()
    yield rt
    rt.close()


def test_metrics_after_an_incident(runtime: Runtime, tenant: str) -> None:
    port = runtime.serve_http("127.0.0.1", 0)
    starts = datetime.now(UTC) - timedelta(minutes=5)
    ad = fault("adFailure")
    stray = {
        "version": "4", "groupKey": "{}:{service=\"nowhere\"}", "status": "firing",
        "receiver": "blast-radius", "groupLabels": {}, "commonLabels": {},
        "commonAnnotations": {}, "externalURL": "http://am:9093",
        "alerts": [{
            "status": "firing", "labels": {"alertname": "Stray", "service": "nowhere"},
            "annotations": {}, "startsAt": starts.isoformat().replace("+00:00", "Z"),
            "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "", "fingerprint": "0123abcd",
        }],
    }  # fmt: skip
    answers = []
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
        for body in [*scenario_bodies(ad, starts, "firing"), stray]:
            answers.append(http.post("/api/v1/alerts", json=body).raise_for_status().json())
        runtime.make_worker().run(threading.Event(), burst=True)
        for body in scenario_bodies(ad, starts, "resolved"):
            answers.append(http.post("/api/v1/alerts", json=body).raise_for_status().json())
        runtime.make_worker().run(threading.Event(), burst=True)
        page = http.get("/metrics")
    assert page.headers["content-type"].startswith("text/plain")
    got = samples(page.text)

    fired = sum(len(b["alerts"]) for b in scenario_bodies(ad, starts, "firing"))
    assert fired == 3
    assert value(got, "blast_alerts_received_total", tenant=tenant, status="firing") == fired + 1
    assert value(got, "blast_alerts_received_total", tenant=tenant, status="resolved") == fired
    assert value(got, "blast_alerts_unmatched_total", tenant=tenant) == 1
    opened = {i for a in answers for i in a["opened"]}
    resolved = {i for a in answers for i in a["resolved"]}
    assert len(opened) == 2  # the ad failure, and the stray alert's own incident
    assert value(got, "blast_incidents_opened_total", tenant=tenant) == 2
    assert value(got, "blast_incidents_resolved_total", tenant=tenant) == len(resolved) == 1
    assert value(got, "blast_webhook_duration_seconds_count") == len(answers)

    sent = runtime.outbox.entries()
    kinds = [e["kind"] for e in sent]
    assert kinds.count("notification") == 2 and kinds.count("ticket") == 2
    for kind in ("notification", "ticket", "followup", "ticket-update"):
        assert value(got, "blast_actions_sent_total", kind=kind, adapter="outbox") == kinds.count(
            kind
        ), kind
    assert value(got, "blast_tasks_claimed_total", kind="investigate") == 2
    assert value(got, "blast_tasks_claimed_total", kind="respond") == 2
    assert value(got, "blast_tasks_claimed_total", kind="notify_cleared") == fired
    assert value(got, "blast_tasks_taken_over_total", kind="investigate") == 0
    assert value(got, "blast_tasks_failed_total", kind="respond") == 0
    # frontend's alerts joined the ad incident before its investigation began: that one read
    # them, so no re-investigation (one investigation per incident here)
    assert value(got, "blast_tasks_claimed_total", kind="reinvestigate") == 0
    assert value(got, "blast_planner_calls_total", planner="rules") == 2
    assert value(got, "blast_step_duration_seconds_count", tool="coverage_walk") == 2
    assert value(got, "blast_step_duration_seconds_sum", tool="coverage_walk") > 0


def test_takeover_and_suppressed_duplicate_are_counted(
    runtime: Runtime, graph: TenantGraph, tenant: str
) -> None:
    """A worker reserved the page, sent it, and died before recording it: the next owner takes
    the task over, finds the page in the outbox, and does not send it again."""
    port = runtime.serve_http("127.0.0.1", 0)
    starts = datetime.now(UTC) - timedelta(minutes=5)
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
        for body in scenario_bodies(fault("adFailure"), starts, "firing"):
            http.post("/api/v1/alerts", json=body).raise_for_status()
        runtime.make_worker(role="investigator").run(threading.Event(), burst=True)
        ghost = claim(graph, ["respond"], "ghost", lease_ms=300, max_attempts=5)
        assert ghost is not None
        page = intent(ghost.incident_id, "initial-notification")
        reserved = graph.one(
            "reserve_action",
            {"task_id": ghost.task_id, "owner": "ghost", "epoch": ghost.epoch,
             "intent_id": page, "kind": "notification", "attempt_id": ghost.attempt_id,
             "adapter": "outbox", "lease_ms": 300, "records": [], "deliveries": [], "ahead": [],
             "row": {"task_id": ghost.task_id, "epoch": ghost.epoch, "steps": [],
                     "first_step": 0, "touched": []}},
        )  # fmt: skip
        assert reserved is not None and reserved["mine"]
        runtime.outbox.send(
            OutboundMessage(
                intent_id=page, incident_id=ghost.incident_id, kind="notification",
                notice=Page(incident_id=ghost.incident_id, title="sent before the crash"),
            )
        )  # fmt: skip
        time.sleep(0.35)  # the ghost's lease is over
        runtime.make_worker().run(threading.Event(), burst=True)
        got = samples(http.get("/metrics").text)
    kinds = [e["kind"] for e in runtime.outbox.entries()]
    assert kinds.count("notification") == 1 and kinds.count("ticket") == 1
    # the ghost's claim went around the metrics (it used `claim` directly): only the takeover
    assert value(got, "blast_tasks_claimed_total", kind="respond") == 1
    assert value(got, "blast_tasks_taken_over_total", kind="respond") == 1
    labels = {"kind": "notification", "adapter": "outbox"}
    assert value(got, "blast_actions_duplicates_suppressed_total", **labels) == 1
    assert value(got, "blast_actions_sent_total", **labels) == 0
    assert value(got, "blast_actions_sent_total", kind="ticket", adapter="outbox") == 1


def test_failed_task_is_counted(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tmp_path: Path, tenant: str
) -> None:
    """With one attempt allowed and an outbox that cannot be written, the respond task fails."""
    rt = Runtime(make_settings(falkordb, tmp_path, tenant, max_attempts=1))
    rt.open()
    try:
        (tmp_path / "not-a-file").mkdir()
        rt.outbox = rt.messenger = rt.tickets = Outbox(tmp_path / "not-a-file")
        port = rt.serve_http("127.0.0.1", 0)
        starts = datetime.now(UTC) - timedelta(minutes=5)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            for body in scenario_bodies(fault("adFailure"), starts, "firing"):
                http.post("/api/v1/alerts", json=body).raise_for_status()
            rt.make_worker().run(threading.Event(), burst=True)
            got = samples(http.get("/metrics").text)
    finally:
        rt.close()
    assert value(got, "blast_tasks_failed_total", kind="respond") == 1
    assert value(got, "blast_tasks_failed_total", kind="investigate") == 0
    assert value(got, "blast_actions_sent_total", kind="notification", adapter="outbox") == 0


def test_each_app_has_its_own_registry() -> None:
    one, two = Metrics(), Metrics()
    one.planner_calls.labels(planner="rules").inc()
    assert value(samples(one.exposition().decode()), "blast_planner_calls_total", planner="rules")
    assert not value(
        samples(two.exposition().decode()), "blast_planner_calls_total", planner="rules"
    )
