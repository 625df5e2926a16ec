"""Investigation tools on the real FalkorDB with the demo world: results are values with a
status, invalid arguments are `error` results, and every call is a checkpointed Step."""

from __future__ import annotations

import time
from typing import Any

from adapters.falkordb import TenantGraph, graph_name
from adapters.prometheus import Prometheus
from agents.investigate.recall import by_score, rank
from agents.investigate.tools import TOOLS, ToolContext, call
from agents.tasks.coordination import TaskRun, claim
from agents.triage.triage import triage
from gateway.cli.demo_evidence import Edge, PrometheusServer
from gateway.http.payloads import normalize, parse_body
from gateway.world import import_world, load_world
from tests.conftest import alert_body

OPENED = 1_790_000_000_000


def context(graph: TenantGraph, alerting: list[str]) -> ToolContext:
    alerts = [
        {"key": f"k{i}", "alertname": "ServiceHighErrorRate", "component": c,
         "starts_at_ms": OPENED, "status": "firing", "summary": "", "labels": {}}
        for i, c in enumerate(alerting)
    ]  # fmt: skip
    return ToolContext(graph, alerts, alerting, OPENED)


def run(graph: TenantGraph) -> TaskRun:
    """A claimed investigate task of a fresh incident (steps need a task to hang on)."""
    triage(graph, normalize(parse_body(alert_body("cart")), "unknown"), 900_000)
    claimed = claim(graph, ["investigate"], "tester", 60_000, 3)
    assert claimed is not None
    return TaskRun(graph, claimed, 60_000)


def plant(graph: TenantGraph, *components: str) -> None:
    """A playbook with no checks pinned on each component (id `pb-<component>`)."""
    for comp in components:
        planted = {"id": f"pb-{comp}", "component": comp, "title": comp, "failure_kind": None,
                   "checks_json": "[]", "author": None, "remediation_json": None,
                   "remediation_type": None, "max_playbooks": 200}  # fmt: skip
        graph.one("plant_playbook", planted)


def steps(graph: TenantGraph, task: TaskRun) -> list[dict[str, Any]]:
    return graph.rows("task_steps", {"task_id": task.claim.task_id})


def test_every_tool_has_a_model_facing_schema() -> None:
    assert {"coverage_walk", "neighbours", "recent_changes", "owners_oncall",
            "past_incidents", "recall_playbooks"} <= set(TOOLS)  # fmt: skip
    for tool in TOOLS.values():
        schema = tool.schema()
        assert schema["description"] and schema["input_schema"]["type"] == "object"


def test_coverage_walk_reaches_silent_dependencies_and_topic_producers(graph) -> None:
    task = run(graph)
    walk = call(task, context(graph, ["cart", "accounting"]), "coverage_walk", {})
    assert walk.status == "ok"
    rows = {r["name"]: r for r in walk.data}
    # accounting consumes orders; checkout publishes it; checkout calls cart
    assert rows["checkout"]["via_topic"] == "orders" and rows["checkout"]["distance"] == 2
    assert rows["postgres"]["covers"] == ["accounting"] and rows["postgres"]["via_topic"] is None
    assert rows["valkey-cart"]["covers"] == ["accounting", "cart"]
    assert rows["valkey-cart"]["distance"] == 1 + 4
    assert rows["cart"]["covers"] == ["accounting", "cart"]
    assert rows["cart"]["distance"] == 3  # 0 from cart, 3 from accounting via the topic


BUS_WORLD = """
components:
  - {id: web, kind: service}
  - {id: billing, kind: service}
  - {id: billing-db, kind: datastore}
  - {id: audit, kind: service}
  - {id: kafka, kind: datastore}
  - {id: events, kind: topic, hosted_on: kafka}
edges:
  - {from: web, to: events, type: PUBLISHES}
  - {from: billing, to: events, type: PUBLISHES}
  - {from: billing, to: billing-db, type: READS_WRITES}
  - {from: audit, to: events, type: CONSUMES}
default_team: platform
teams:
  - name: platform
    owns: [web, billing, billing-db, audit, kafka, events]
    members: [{name: Ana, email: ana@example.com, slack_user_id: UANA}]
"""


def test_a_producer_does_not_reach_the_other_producers_of_its_topic(store, tenant, tmp_path):
    """Two services publish to one event bus: each depends on the topic and its broker, not on
    the other (a cycle that left every measured cause of an unseen month "about equally"
    blamed); the consumer depends on both producers and what they depend on."""
    world = tmp_path / "world.yaml"
    world.write_text(BUS_WORLD, encoding="utf-8")
    graph = store.graph(graph_name(f"{tenant}-bus"))
    graph.ensure_schema()
    import_world(graph, load_world(world))
    task = run(graph)
    walk = call(task, context(graph, ["web"]), "coverage_walk", {})
    assert sorted(r["name"] for r in walk.data) == ["events", "kafka", "web"]
    walk = call(task, context(graph, ["audit"]), "coverage_walk", {})
    rows = {r["name"]: r for r in walk.data}
    assert sorted(rows) == ["audit", "billing", "billing-db", "events", "kafka", "web"]
    assert rows["billing-db"]["via_topic"] == "events" and rows["billing-db"]["distance"] == 3


def test_traffic_sources_reach_a_datastore_through_the_service_that_reads_it(graph) -> None:
    """A database's CPU may be load arriving: the clients in front of it are found through the
    service that reads and writes it (the last hop is no call); a learning month's partner
    flood saturating a database's CPU had named the database at 0.90 with nobody in front."""
    task = run(graph)
    got = call(task, context(graph, ["cart"]), "traffic_sources", {"component": "valkey-cart"})
    paths = {tuple(r["path"]) for r in got.data}
    assert ("load-generator", "frontend-proxy", "frontend", "cart", "valkey-cart") in paths
    assert all(r["path"][-2] == "cart" for r in got.data)  # only cart reads valkey-cart


def test_neighbours_give_edge_types_and_direction(graph) -> None:
    task = run(graph)
    got = call(task, context(graph, ["cart"]), "neighbours", {"component": "cart"})
    edges = {(r["name"], r["edge"], r["direction"], r["purpose"]) for r in got.data}
    assert ("valkey-cart", "READS_WRITES", "out", "business") in edges
    assert ("frontend", "CALLS", "in", "business") in edges
    assert ("flagd", "CALLS", "out", "config") in edges


def test_invalid_arguments_and_unknown_tools_are_error_results_and_steps(graph) -> None:
    task = run(graph)
    ctx = context(graph, ["cart"])
    bad = call(task, ctx, "neighbours", {"componnet": "cart"})
    assert bad.status == "error" and "component" in bad.detail and "componnet" in bad.detail
    unknown = call(task, ctx, "drop_database", {})
    assert unknown.status == "error" and "unknown tool" in unknown.detail
    none = call(task, ctx, "past_incidents", {"component": "cart"})
    assert none.status == "no_data" and none.data == []
    assert steps(graph, task) == []  # graph reads: checkpointed with the next write
    task.flush()
    assert [s["tool"] for s in steps(graph, task)] == [
        "neighbours",
        "drop_database",
        "past_incidents",
    ]


def test_recent_changes_says_not_checked_until_a_change_source_recorded_one(graph) -> None:
    task = run(graph)
    unmeasured = call(task, context(graph, ["cart"]), "recent_changes", {"components": ["cart"]})
    # no deploy or merged pull request was ever recorded: "none" would claim a measurement
    assert unmeasured.status == "no_data" and unmeasured.data == []
    assert unmeasured.detail == (
        "recent changes not checked: no change source has recorded a deploy or merged pull request"
    )
    graph.one("record_change", {"id": "d1", "component": "frontend", "kind": "deploy",
                                "ref": "v9", "at": OPENED - 60_000, "author": None})  # fmt: skip
    checked = call(task, context(graph, ["cart"]), "recent_changes", {"components": ["cart"]})
    assert checked.status == "no_data" and checked.detail == "no recent changes"
    found = call(task, context(graph, ["cart"]), "recent_changes", {"components": ["frontend"]})
    assert [r["ref"] for r in found.data] == ["v9"]


def test_a_resumed_task_gets_the_stored_result(graph) -> None:
    task = run(graph)
    ctx = context(graph, ["cart"])
    first = call(task, ctx, "owners_oncall", {"components": ["cart"]})
    assert first.status == "ok" and first.data[0]["team"]
    task.flush()
    again = TaskRun(graph, task.claim, 60_000)
    again._stored = {int(s["n"]): s for s in steps(graph, task)}
    assert call(again, ctx, "owners_oncall", {"components": ["cart"]}) == first


def test_recall_reaches_config_services_and_traffic_sources_too(graph) -> None:
    plant(graph, "load-generator", "flagd", "valkey-cart")
    task = run(graph)
    got = call(task, context(graph, ["frontend"]), "recall_playbooks", {})
    paths = {r["candidate"]: r["path"] for r in got.data}
    assert paths == {
        "flagd": ["frontend", "flagd"],  # a config edge the business walk skips
        "load-generator": ["frontend", "frontend-proxy", "load-generator"],  # upstream client
        "valkey-cart": ["frontend", "cart", "valkey-cart"],
    }


def test_evidence_tools_without_prometheus_say_error_and_promql_answers_values(
    graph, tmp_path
) -> None:
    task = run(graph)
    ctx = context(graph, ["cart"])
    for name in ("edge_health", "service_errors", "targets_down", "promql"):
        args = {"query": "up"} if name == "promql" else {}
        got = call(task, ctx, name, args)
        assert got.status == "error" and "PROMETHEUS_URL is not set" in got.detail
    server = PrometheusServer(
        tmp_path / "prometheus", [Edge("cart", "valkey-cart")], int(time.time())
    )
    try:
        ctx.prometheus = Prometheus(server.url)
        assert call(task, ctx, "promql", {"query": "vector(42)"}).data[0]["value"] == 42
        bad = call(task, ctx, "promql", {"query": "rate(up[5m]"})
        assert bad.status == "error" and "prometheus query failed (400)" in bad.detail
        assert call(task, ctx, "targets_down", {}).status == "no_data"
        ctx.prometheus.close()
    finally:
        server.stop()


def test_recall_lists_first_what_most_alerting_components_reach(graph) -> None:
    plant(graph, "ad", "valkey-cart")
    task = run(graph)
    got = call(task, context(graph, ["frontend", "checkout"]), "recall_playbooks", {})
    # ad is one call from frontend only; valkey-cart two from frontend and from checkout
    assert [(r["candidate"], r["reached_from"], r["hops"]) for r in got.data] == [
        ("valkey-cart", 2, 2), ("ad", 1, 1),
    ]  # fmt: skip
    # the investigator still checks the most trusted first, then the nearest
    assert [r["candidate"] for r in sorted(got.data, key=by_score)] == ["ad", "valkey-cart"]


def test_recall_lists_each_cause_once_before_a_second_playbook_of_any() -> None:
    def row(pb: str, candidate: str, alerting: str, trust: float) -> dict[str, Any]:
        return {"id": pb, "title": pb, "failure_kind": None, "trust": trust,
                "checks_json": "[]", "candidate": candidate, "pinned_to": candidate,
                "path": [alerting, candidate],
                "hops": 1, "source": 0}  # fmt: skip

    rows = [
        row("pb-db-1", "db", "api", 0.5),
        row("pb-db-2", "db", "api", 0.5),
        row("pb-db-1", "db", "web", 0.5),
        row("pb-db-2", "db", "web", 0.5),
        row("pb-cache", "cache", "api", 0.5),
        row("pb-queue", "queue", "api", 0.33),
    ]
    got = rank(rows)
    # db's two playbooks are reached from both alerting components, the others from one: db's
    # best first, then one entry per other cause, then db's second playbook
    assert [(r["id"], r["reached_from"]) for r in got] == [
        ("pb-db-1", 2), ("pb-cache", 1), ("pb-queue", 1), ("pb-db-2", 2),
    ]  # fmt: skip
    # the investigator's own order is the score's, whatever the listing
    assert [r["id"] for r in sorted(got, key=by_score)] == [
        "pb-cache", "pb-db-1", "pb-db-2", "pb-queue",
    ]  # fmt: skip


def test_recall_counts_reach_as_deep_as_the_walk_read_ahead(graph) -> None:
    plant(graph, "frontend", "valkey-cart")
    rows = graph.rows("recall", {"alerting": ["frontend-proxy", "cart"]})
    # within recall's two hops each is reached from one alerting component only
    assert [(r["candidate"], r["reached_from"]) for r in rank(rows)] == [
        ("frontend", 1), ("valkey-cart", 1),
    ]  # fmt: skip
    # the walk goes further: frontend-proxy -> frontend -> cart -> valkey-cart is three calls
    deeper = rank(rows, {"frontend": 1, "cart": 2, "valkey-cart": 2})
    assert [(r["candidate"], r["reached_from"]) for r in deeper] == [
        ("valkey-cart", 2), ("frontend", 1),
    ]  # fmt: skip
