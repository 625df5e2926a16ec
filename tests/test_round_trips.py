"""Round trips per incident: GRAPH.QUERY calls from the alert to the page, counted
by the server (`INFO commandstats`) around real incidents on the embedded FalkorDB."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import httpx
import redis
from falkordb import FalkorDB

from adapters.falkordb import EmbeddedFalkorDB, TenantGraph
from agents.tasks.coordination import TaskRun, claim
from agents.triage.triage import triage
from bench.round_trips import counting
from gateway.http.payloads import normalize, parse_body
from gateway.ops.runtime import Runtime
from tests.conftest import alert_body, make_settings

#: GRAPH.QUERY calls per incident from the alert to the page, at most: the similar-incident
#: read (`similar_incidents`) costs one; the ticket is reserved with the page, the page's
#: delivery records ride on the completion, a batch's findings and completions are written in
#: one query each, and a delivery that only opens incidents settles no re-investigation.
CEILING = 10
#: One-alert incidents on these demo components, an hour apart (each its own incident).
SERVICES = ("payment", "cart", "frontend", "accounting", "ad")


def server_calls(url: str) -> int:
    """GRAPH.QUERY calls the server has answered so far."""
    with redis.Redis.from_url(url, decode_responses=True) as client:
        return int(client.info("commandstats").get("cmdstat_graph.QUERY", {}).get("calls", 0))


def test_an_incident_costs_at_most_10_graph_queries_from_alert_to_page(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tmp_path: Path, tenant: str
) -> None:
    runtime = Runtime(make_settings(falkordb, tmp_path, tenant))
    runtime.open()
    try:
        port = runtime.serve_http("127.0.0.1", 0)
        assert runtime.topology_remembered.wait(10)  # its reads are not the incidents'
        before = server_calls(falkordb.url)
        with counting() as by_name:
            for index, service in enumerate(SERVICES):
                answer = runtime_post(port, alert_body(service, index))
                assert answer == 200
            runtime.make_worker().run(threading.Event(), burst=True)
        calls = server_calls(falkordb.url) - before
        pages = [e for e in runtime.outbox.entries() if e["kind"] == "notification"]
        steps = {
            page["incident_id"]: graph.rows(
                "web_incident_steps", {"incident_id": page["incident_id"], "max_chars": None}
            )
            for page in pages
        }
    finally:
        runtime.close()
    assert len(pages) == len(SERVICES)  # every incident paged
    # webhook, investigation and page, plus the burst worker's reap and its last empty claim
    assert calls == sum(by_name.values())
    spent = " ".join(f"{k}={v}" for k, v in sorted(by_name.items()))
    assert calls <= CEILING * len(SERVICES), spent
    # `respond` is claimed by the investigation's completion; the five investigations in
    # batches of half those claimable (3, then 1 and 1), then the last, empty claim; each
    # batch reads its investigations' contexts in one query, and its pages' in one
    assert by_name["claim_task"] == 4
    assert by_name["investigation_context"] == by_name["respond_context"] == 3
    # and writes its findings (with their steps and completions) in one query, and its pages'
    # completions in one (`Held`)
    assert by_name["write_finding"] == by_name["complete_task"] == 3
    # the steps ride on the finding and the first reservation: no query of their own
    assert by_name["record_steps"] == 0
    assert by_name["settle_reinvestigations"] == by_name["record_actions"] == 0
    # the pages (each with its ticket's) reserved in one query per batch
    assert (
        by_name["reserve_actions"] == by_name["respond_context"] and not by_name["reserve_action"]
    )
    for incident, stored in steps.items():  # and yet every step is on record, in order
        tools = [s["tool"] for s in stored]
        assert "coverage_walk" in tools and "response_context" in tools, (incident, tools)


def runtime_post(port: int, body: bytes) -> int:
    """POST one Alertmanager delivery to the gateway on `port`; the HTTP status."""
    headers = {"Content-Type": "application/json"}
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
        return http.post("/api/v1/alerts", content=body, headers=headers).status_code


def test_deferred_steps_are_written_in_one_query_linked_in_order(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph
) -> None:
    triage(graph, normalize(parse_body(alert_body("cart")), "unknown"), 900_000)
    claimed = claim(graph, ["investigate"], "tester", 60_000, 3)
    assert claimed is not None
    task = TaskRun(graph, claimed, 60_000)
    task.step("one", {}, lambda: 1, touched=["cart"], deferred=True)
    task.step("two", {}, lambda: 2, touched=["cart", "valkey-cart"], deferred=True)
    assert graph.rows("task_steps", {"task_id": claimed.task_id}) == []  # not yet
    with counting() as by_name:
        task.step("three", {"x": 1}, lambda: {"v": 3}, touched=["no-such-component"])
    assert dict(by_name) == {"record_steps": 1}  # all three in one round trip
    whole = {"incident_id": claimed.incident_id, "max_chars": None}
    steps = graph.rows("web_incident_steps", whole)
    assert [(s["n"], s["tool"], json.loads(s["result"])) for s in steps] == [
        (1, "one", 1), (2, "two", 2), (3, "three", {"v": 3}),
    ]  # fmt: skip
    task.step("four", {}, lambda: 4, touched=["cart"])  # linked after step 3, stored before
    db = FalkorDB.from_url(falkordb.url).select_graph(graph.name)  # read-only inspection
    task_id = claimed.task_id
    chain = db.ro_query(
        "MATCH (a:Step {task_id: $t})-[:NEXT]->(b:Step) RETURN a.n, b.n ORDER BY a.n",
        {"t": task_id},
    ).result_set
    assert chain == [[1, 2], [2, 3], [3, 4]]
    touched = db.ro_query(
        "MATCH (s:Step {task_id: $t})-[:TOUCHED]->(c:Component) RETURN s.n, c.name "
        "ORDER BY s.n, c.name", {"t": task_id},
    ).result_set  # fmt: skip
    assert touched == [[1, "cart"], [2, "cart"], [2, "valkey-cart"], [4, "cart"]]
    # Deferred steps ride on the next reservation (`STEPS_RIDE`): no `record_steps` query,
    # linked after the last stored step, the lease extended.
    task.step("five", {}, lambda: 5, touched=["valkey-cart"], deferred=True)
    lease = db.ro_query("MATCH (t:Task {id: $t}) RETURN t.lease_until", {"t": task_id})
    with counting() as by_name:
        task.fenced(
            "reserve_action",
            {"intent_id": f"incident:{claimed.incident_id}:test", "kind": "notification",
             "attempt_id": claimed.attempt_id, "adapter": "outbox", "lease_ms": 60_000,
             "ahead": []},
        )  # fmt: skip
    assert dict(by_name) == {"reserve_action": 1}
    chain = db.ro_query(
        "MATCH (a:Step {task_id: $t})-[:NEXT]->(b:Step {n: 5})-[:TOUCHED]->(c) RETURN a.n, c.name",
        {"t": task_id},
    ).result_set
    assert chain == [[4, "valkey-cart"]]
    renewed = db.ro_query("MATCH (t:Task {id: $t}) RETURN t.lease_until", {"t": task_id})
    assert renewed.result_set[0][0] > lease.result_set[0][0]


def test_a_kept_alive_connection_is_answered_without_waiting_for_a_delayed_ack(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tmp_path: Path, tenant: str
) -> None:
    """With Nagle on, each answer after the first on a kept-alive connection waited ~40 ms for
    the client's delayed ACK (measured: 44-48 ms for `/health/live`, 1 ms without)."""
    runtime = Runtime(make_settings(falkordb, tmp_path, tenant))
    runtime.open()
    try:
        port = runtime.serve_http("127.0.0.1", 0)
        assert runtime.topology_remembered.wait(10)  # its reads are not the incidents'
        took = []
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            for _ in range(21):
                started = time.perf_counter()
                assert http.get("/health/live").status_code == 200
                took.append((time.perf_counter() - started) * 1000)
    finally:
        runtime.close()
    assert sorted(took)[10] < 20, took  # the median, far under a delayed ACK
