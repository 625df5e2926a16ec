"""Findings say only what was measured, on worlds other than the bundled one: the Sock Shop's
real compose file (tests/data/sock-shop/, no traces), a company world file written by hand
without `propagation:` (tests/data/company-world.yaml), a client with packet loss, a window
with no series (tests/test_evidence.py), the two consumers of one topic in one delivery, and
a one-delivery incident investigated once."""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from adapters.falkordb import GraphStore, TenantGraph, graph_name
from agents.failure_kinds import classify
from agents.investigate.checks import Evidence
from agents.investigate.decision import Candidate, Decision
from agents.investigate.investigator import (
    Investigator,
    read_at_start_up,
    serving_only,
    start_order_edge,
    still_to_check,
)
from agents.investigate.split import starved_explained, title_alert
from agents.investigate.weigh import weigh
from agents.tasks.coordination import TaskRun, claim
from agents.triage.triage import Links, shared_dependencies, triage
from gateway.cli.demo import rfc3339
from gateway.http.payloads import normalize, parse_body
from gateway.http.status import incident_detail
from gateway.world import import_world
from gateway.world.completeness import from_rows, of_world
from gateway.world.compose import load_compose
from gateway.world.model import MemberSpec, TeamSpec, WorldSpec
from gateway.world.sources import load_sources
from tests.investigate.test_weigh import edge

DATA = Path(__file__).parent.parent / "data"
SOCK_SHOP = DATA / "sock-shop" / "docker-compose.yml"
COMPANY = DATA / "company-world.yaml"
HOTEL = DATA / "hotel-reservation" / "docker-compose.yml"
ROBOT_SHOP = DATA / "robot-shop" / "docker-compose.yml"
TRAIN_TICKET = DATA / "train-ticket" / "docker-compose.yml"


@pytest.fixture
def bare(store: GraphStore, tenant: str) -> TenantGraph:
    """A fresh tenant graph with the schema and no world: each test imports its own."""
    g = store.graph(graph_name(tenant))
    g.ensure_schema()
    return g


def world_of(path: Path) -> WorldSpec:
    """A source as `topology import` reads it; a compose file names no team, so one is added
    as the root route."""
    world = load_sources([path]).world
    if world.default_team is None:
        world.teams.append(TeamSpec(name="platform", members=[MemberSpec(name="Ada")]))
        world.default_team = "platform"
    return world


def fire(
    graph: TenantGraph,
    alerts: list[tuple[str, str, dict[str, str]]],
    ago_s: int = 300,
    group_key: str = "{}:{}",
) -> list[str]:
    """One Alertmanager delivery of `alerts` (alertname, service, labels) in the group
    `group_key`; the incidents."""
    starts = rfc3339_s(time.time() - ago_s)
    body = {
        "version": "4", "status": "firing", "receiver": "blast-radius", "groupKey": group_key,
        "alerts": [
            {"status": "firing",
             "labels": {"alertname": name, "service": service, "severity": "warning"} | extra,
             "annotations": {"summary": f"{name} on {service}"},
             "startsAt": starts, "endsAt": "0001-01-01T00:00:00Z"}
            for name, service, extra in alerts
        ],
    }  # fmt: skip
    return triage(
        graph, normalize(parse_body(json.dumps(body).encode()), "warning"), 900_000
    ).incidents


def rfc3339_s(epoch_s: float) -> str:
    from datetime import UTC, datetime

    return rfc3339(datetime.fromtimestamp(int(epoch_s), UTC))


def investigate_all(graph: TenantGraph) -> dict[str, int]:
    """Run every investigation there is (no Prometheus); incident -> how many ran."""
    runs: dict[str, int] = {}
    while (task := claim(graph, ["investigate", "reinvestigate"], "test", 60_000, 3)) is not None:
        Investigator(6, None).run(TaskRun(graph, task, 60_000))
        runs[task.incident_id] = runs.get(task.incident_id, 0) + 1
    return runs


def finding(graph: TenantGraph, incident_id: str) -> dict[str, Any]:
    detail = incident_detail(graph, incident_id)
    assert detail is not None and detail["finding"] is not None
    return detail


# --- worlds other than the bundled one ------------------------------------------------------


def test_a_compose_only_world_with_no_traces_is_inconclusive_never_wrong(bare: TenantGraph) -> None:
    import_world(bare, world_of(SOCK_SHOP))
    # carts-db fails: carts, front-end and orders alert; the compose file knows none of it
    incidents = fire(
        bare, [("ServiceHighErrorRate", s, {}) for s in ("carts", "front-end", "orders")]
    )
    investigate_all(bare)
    for incident_id in dict.fromkeys(incidents):
        got = finding(bare, incident_id)
        assert got["root_cause"] is None, got["finding"]["summary"]
        assert got["finding"]["summary"].startswith("Inconclusive (alerts only): ")
        assert "the world knows no dependency of it" in got["finding"]["summary"]


def test_a_service_every_container_starts_after_explains_no_alert(bare: TenantGraph) -> None:
    """Hotel Reservation's compose file starts every service after consul (`depends_on`) and
    names no call: consul is the one silent component all alerting services reach, by start
    order only. It is not named; the finding says why and puts it first to check."""
    import_world(bare, world_of(HOTEL))
    alerts = [("ServiceHighErrorRate", s, {}) for s in ("rate", "search", "frontend")]
    (incident_id,) = set(fire(bare, alerts))
    investigate_all(bare)
    got = finding(bare, incident_id)
    assert got["root_cause"] is None, got["finding"]["summary"]
    assert got["finding"]["candidates"][0] == "consul"
    assert "only by compose `depends_on` (start order, not calls)" in got["finding"]["summary"]
    assert got["finding"]["confidence"] < 0.5


def test_a_queue_alerting_only_about_its_backlog_names_its_silent_readers_first(
    bare: TenantGraph,
) -> None:
    """Robot Shop: only RabbitMQ alerts, about ready messages; dispatch (and payment: a compose
    file does not say who reads and who writes) start after it. A reader that stopped raises
    no alert, so the queue is not named: inconclusive, its users first."""
    import_world(bare, world_of(ROBOT_SHOP))
    alerts = [("RabbitMQQueueMessagesReady", "rabbitmq", {"queue": "orders"})]
    (incident_id,) = set(fire(bare, alerts))
    investigate_all(bare)
    got = finding(bare, incident_id)
    assert got["root_cause"] is None, got["finding"]["summary"]
    assert got["finding"]["candidates"] == ["dispatch", "payment", "rabbitmq"]
    assert got["finding"]["summary"].startswith(
        "Inconclusive: rabbitmq alerts only about a backlog, which its readers dispatch, payment "
        "falling behind cause as well as rabbitmq itself"
    )


def test_a_queue_alerting_about_more_than_a_backlog_keeps_its_finding(bare: TenantGraph) -> None:
    """The same queue also alerting about its own process (memory): not only a backlog, so
    its readers are not put in front of it."""
    import_world(bare, world_of(ROBOT_SHOP))
    alerts = [("RabbitMQQueueMessagesReady", "rabbitmq", {"queue": "orders"}),
              ("RabbitMQMemoryHigh", "rabbitmq", {})]  # fmt: skip
    (incident_id,) = set(fire(bare, alerts))
    investigate_all(bare)
    got = finding(bare, incident_id)
    assert got["root_cause"] == "rabbitmq", got["finding"]["summary"]


def test_start_order_clears_a_dependency_only_where_the_service_graph_traces_the_caller(
    bare: TenantGraph,
) -> None:
    ctx = Evidence(bare, [], ["search"], 0)
    started = {"name": "consul", "direction": "out", "purpose": "business", "basis": "depends_on"}
    named = started | {"basis": "environment"}
    assert not start_order_edge(started, "search", ctx)  # nothing traced: still a suspect
    ctx.calling = {"search"}
    assert start_order_edge(started, "search", ctx)  # its calls are traced, none goes there
    assert not start_order_edge(named, "search", ctx)  # a hostname it is configured with: a call
    assert not start_order_edge(started, "geo", ctx)  # geo's own calls are not traced


def start_up_edges(**changes: dict[str, Any]) -> list[dict[str, Any]]:
    """Hotel Reservation's search path: search calls geo and rate; rate reads its MongoDB
    (traced, a datastore call); geo reads its MongoDB at start-up only, so it calls nothing."""
    rows = {"search>geo": {"fail_ratio": 0.5}, "search>rate": {},
            "rate>mongodb-rate": {"connection_type": "database"}} | changes  # fmt: skip
    return [edge(*k.split(">"), **v) for k, v in rows.items()]


def started_after(*names: str) -> list[dict[str, Any]]:
    """`neighbours` rows: what geo is started after (compose `depends_on`)."""
    return [{"name": n, "direction": "out", "purpose": "business", "basis": "depends_on",
             "propagation": None} for n in names]  # fmt: skip


def test_a_server_that_calls_nothing_while_serving_reads_its_start_order_at_start_up(
    bare: TenantGraph,
) -> None:
    """geo serves search's calls and makes none, where datastore calls are traced (rate's):
    what it is started after is no request-path call, so geo's failing calls are its own,
    named below the top band with the measurement that clears them."""
    edges = start_up_edges()
    calling = {"search", "rate"}
    assert serving_only(edges, calling) == {"geo"}  # rate calls; a datastore is no service
    ctx = Evidence(bare, [], ["search"], 0)
    ctx.calling, ctx.serving_only = calling, serving_only(edges, calling)
    (consul, mongo) = started_after("consul", "mongodb-geo")
    assert start_order_edge(mongo, "geo", ctx)
    blamed = Decision("geo", ["geo"], 0.95, "geo: calls into geo fail 50 %.")
    got = read_at_start_up(blamed, [consul, mongo], edges, ctx, WINDOW)
    assert (got.root_cause, got.confidence) == ("geo", 0.75)
    assert got.ruled_out["mongodb-geo"] == (
        "geo is started after it (compose `depends_on`) but calls it on no request: geo served "
        "600 calls (23:05-23:15 UTC) (2,400 the hour before) and made no traced call, while "
        "datastore calls are traced (rate -> mongodb-rate)"
    )
    assert got.measured["consul"]["source"] == "service graph"
    assert got.measured["consul"]["value"] == 0.0
    # an alert about geo's own process rules them out as before, at the confidence it had
    ctx.alerts = [{"component": "geo", "alertname": "ContainerOOMKilled", "summary": ""}]
    kept = read_at_start_up(blamed, [consul, mongo], edges, ctx, WINDOW)
    assert kept.confidence == 0.95
    assert kept.ruled_out["consul"] == "geo alerts about its own process (ContainerOOMKilled)"


def test_start_order_stays_a_suspect_where_nothing_shows_it_is_not_read(bare: TenantGraph) -> None:
    """No datastore call traced anywhere near (the servers' own calls may just not be
    instrumented), or an alert saying geo restarts (start-up is when it reads what it is
    started after; one failing keeps it from coming up): geo's start order stays in doubt."""
    (mongo,) = started_after("mongodb-geo")
    untraced = start_up_edges(**{"rate>mongodb-rate": {"calls": 0.0, "baseline_calls": 0.0}})
    assert serving_only(untraced, {"search"}) == set()
    ctx = Evidence(bare, [], ["search"], 0)
    ctx.calling, ctx.serving_only = {"search", "rate"}, {"geo"}
    ctx.alerts = [{"component": "geo", "alertname": "ContainerRestarting", "summary": ""}]
    assert not start_order_edge(mongo, "geo", ctx)
    blamed = Decision("geo", ["geo"], 0.95, "geo: calls into geo fail 50 %.")
    assert read_at_start_up(blamed, [mongo], start_up_edges(), ctx, WINDOW) is blamed


def test_compose_depends_on_is_start_order_weaker_than_a_hostname(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text(
        "services:\n"
        "  web: {image: shop/web, depends_on: [api, cache], environment: {API: 'http://api:80'}}\n"
        "  api: {image: shop/api}\n"
        "  cache: {image: redis:7}\n"
    )
    world, _ = load_compose([tmp_path / "compose.yaml"])
    bases = {(e.source, e.target): e.basis for e in world.edges}
    assert bases == {("web", "api"): "environment", ("web", "cache"): "depends_on"}
    report = of_world(world)
    assert report.unknown == ["api"] and report.start_order == []
    assert report.lines()[0].startswith(
        "1 of 2 services (datastores and topics left out: they call nothing) have no known "
        "business call out (edges with `purpose: config` or `telemetry` do not count): api."
    )


def test_a_component_with_only_a_config_edge_is_listed_saying_why() -> None:
    """The trial's `ad -CALLS-> flagd` (purpose config): the file states an edge, and the
    report says config edges do not count rather than "no known dependency"."""
    world = WorldSpec.model_validate({
        "components": [{"id": "ad", "kind": "service"}, {"id": "flagd", "kind": "service"},
                       {"id": "web", "kind": "service"}, {"id": "api", "kind": "service"}],
        "edges": [{"from": "ad", "to": "flagd", "type": "CALLS", "purpose": "config"},
                  {"from": "web", "to": "api", "type": "CALLS", "basis": "depends_on"},
                  {"from": "api", "to": "ad", "type": "CALLS"}],
    })  # fmt: skip
    report = of_world(world)
    assert (report.unknown, report.start_order) == (["ad", "flagd"], ["web"])
    assert report.lines()[0].startswith(
        "3 of 4 services (datastores and topics left out: they call nothing) have no known "
        "business call out (edges with `purpose: config` or `telemetry` do not count; 1 of them "
        "has only compose depends_on, which is start order, not calls): ad, flagd, web."
    )


def test_the_sock_shop_compose_file_reports_what_it_does_not_know() -> None:
    report = of_world(world_of(SOCK_SHOP))
    assert (report.services, len(report.unknown)) == (12, 11)  # only user -> user-db is named
    assert "user" not in report.unknown and "front-end" in report.unknown
    assert report.lines()[1] == (
        "1 of 1 dependency edges (business edges and `hosted_on`) state no propagation; the "
        "investigator counts them as edges that may carry a failure (a world file's "
        "`propagation: soft` on an edge clears it; docs/world.md)."
    )


def test_train_tickets_compose_file_knows_one_start_order_edge_of_its_154_calls(
    bare: TenantGraph,
) -> None:
    """TrainTicket's services find each other by hostnames in their own application.yml, so
    its compose file names no call: a voucher failure with its MySQL silent is inconclusive,
    the service first and then the database it starts after; the dashboard's own alert is
    inconclusive too (nothing known behind it), never a root cause."""
    world = world_of(TRAIN_TICKET)
    report = of_world(world)
    assert (len(world.components), report.services, len(report.unknown)) == (68, 42, 41)
    assert report.start_order == ["ts-voucher-service"]
    import_world(bare, world)
    alerts = [("ServiceHighErrorRate", "ts-voucher-service", {}),
              ("Http5xxRateHigh", "ts-ui-dashboard", {})]  # fmt: skip
    incidents = list(dict.fromkeys(fire(bare, alerts)))
    investigate_all(bare)
    found = [finding(bare, i) for i in incidents]
    assert [f["root_cause"] for f in found] == [None, None]
    assert sorted(f["finding"]["candidates"][:2] for f in found) == [
        ["ts-ui-dashboard"], ["ts-voucher-service", "ts-voucher-mysql"]]  # fmt: skip


def test_completeness_from_the_graph_matches_the_files(bare: TenantGraph) -> None:
    world = world_of(COMPANY)
    import_world(bare, world)
    assert from_rows(bare.rows("world_dependencies")) == of_world(world)


def test_a_hand_written_world_without_propagation_is_never_confidently_wrong(
    bare: TenantGraph,
) -> None:
    import_world(bare, world_of(COMPANY))
    # orders-db fails under orders; orders, api and web alert. Before, the unstated edge
    # orders -> orders-db counted as soft and orders was named at 0.9.
    (incident_id,) = set(
        fire(bare, [("ServiceHighErrorRate", s, {}) for s in ("orders", "api", "web")])
    )
    investigate_all(bare)
    got = finding(bare, incident_id)
    assert got["root_cause"] is None
    # orders first, then what it depends on with no stated propagation (the topic it
    # publishes to could block its requests too)
    assert got["finding"]["candidates"][0] == "orders"
    assert set(got["finding"]["candidates"][1:3]) == {"orders-db", "order-events"}
    # the ruled-out reasons say what they rest on
    ruled = {r["component"]: r for r in got["finding"]["ruled_out"]}
    assert ruled["api"]["reason"] == "explains 2 of 3 alerting components"
    assert ruled["api"]["evidence"]["source"] == "alerts"
    assert ruled["api"]["evidence"]["status"] == "ok"


def test_an_alerting_leaf_the_world_file_states_is_named_with_low_confidence(
    bare: TenantGraph,
) -> None:
    import_world(bare, world_of(COMPANY))
    (incident_id,) = set(fire(bare, [("ServiceHighErrorRate", "psp-gateway", {})]))
    investigate_all(bare)
    got = finding(bare, incident_id)
    assert got["root_cause"] == "psp-gateway"
    assert got["finding"]["confidence"] < 0.5  # one alert on a leaf: not evidence
    # it calls nothing the file knows of (payments calls it): said so, not "no dependency of"
    assert (
        "psp-gateway calls nothing the world file knows of (no business dependency out of it), "
        "and nothing measured its calls: low confidence." in got["finding"]["summary"]
    )


# --- measurements -------------------------------------------------------------------------

WALK = [
    Candidate("front-end", ["front-end"], 0),
    Candidate("orders", ["orders", "front-end"], 1),
    Candidate("carts", ["orders", "front-end"], 3),
    Candidate("user", ["orders", "front-end"], 3),
]
WINDOW = "2026-12-01T23:05:00Z/2026-12-01T23:15:00Z"


def test_a_client_whose_calls_fail_into_servers_that_answer_others_is_the_cause() -> None:
    # packet loss on orders: its calls into carts and user fail; front-end's calls into the
    # same servers are fine. Summed per server, carts and user would look failing.
    edges = [
        edge("orders", "carts", fail_ratio=0.4), edge("orders", "user", fail_ratio=0.4),
        edge("front-end", "carts"), edge("front-end", "user"),
        edge("front-end", "orders", fail_ratio=0.4),
    ]  # fmt: skip
    decision = weigh(["orders", "front-end"], WALK, edges, [], [], [], (), set(), None, WINDOW)
    assert decision is not None and decision.root_cause == "orders"
    assert decision.confidence == 0.85
    assert decision.ruled_out["carts"] == (
        "answers other clients normally: front-end's calls into carts fail 0 % of 600 "
        "(23:05-23:15 UTC)"
    )
    assert decision.measured["carts"] | {"query": ""} == {
        "source": "service graph", "query": "", "value": 0.0, "window": WINDOW,
        "status": "ok", "text": "front-end's calls into carts fail 0 % of 600 (23:05-23:15 UTC)",
    }  # fmt: skip


def test_healthy_only_where_measured_and_not_measured_elsewhere() -> None:
    walk = [
        Candidate("frontend", ["frontend"], 0),
        Candidate("cart", ["cart", "frontend"], 1),
        Candidate("valkey", ["cart", "frontend"], 2, kind="datastore"),
        Candidate("flagd", ["cart", "frontend"], 2),
    ]
    edges = [edge("frontend", "cart", fail_ratio=0.4), edge("cart", "valkey")]
    decision = weigh(["cart", "frontend"], walk, edges, [], [], [], (), set(), None, WINDOW)
    assert decision is not None and decision.root_cause == "cart"
    assert decision.ruled_out["valkey"] == (
        "healthy: 0 % of 600 calls into valkey failed (23:05-23:15 UTC), service graph"
    )
    assert decision.ruled_out["flagd"] == (
        "not measured: no service-graph, span-metric or `up` series for flagd (23:05-23:15 UTC); "
        "set aside because the measured evidence blames cart"
    )
    assert decision.measured["flagd"]["status"] == "no_data"
    assert decision.measured["flagd"]["value"] is None
    assert decision.measured["valkey"]["status"] == "ok"


def test_calls_answered_much_faster_than_usual_are_not_counted_healthy() -> None:
    """A silent ad-exchange client answering in 12 ms against 20 ms the hour before, at its
    usual rate and with no errors, is what a client that parses every bid as empty looks like:
    the measurement keeps its value but is not a healthy one, so it clears nothing. Answers at
    their usual speed stay healthy."""
    walk = [
        Candidate("ad-decision", ["ad-decision"], 0),
        Candidate("exchange-client", ["ad-decision"], 1),
        Candidate("db", ["ad-decision"], 1, kind="datastore"),
    ]
    quick = edge("ad-decision", "exchange-client", latency_ms=12.0)
    peers = [{"component": "ad-decision", "peer": "db", "alertname": "DbErrors",
              "label": "upstream"}]  # fmt: skip
    decision = weigh(["ad-decision"], walk, [quick, edge("ad-decision", "db")], [], [], peers,
                     (), set(), None, WINDOW)  # fmt: skip
    assert decision is not None
    assert decision.measured["exchange-client"]["status"] == "changed"
    assert decision.measured["exchange-client"]["value"] == 0.0
    assert decision.ruled_out["exchange-client"].startswith(
        "0 % of 600 calls into exchange-client failed (23:05-23:15 UTC), but they were answered "
        "in 12 ms against 20 ms the hour before: faster than usual"
    )
    assert "healthy" not in decision.ruled_out["exchange-client"].split(";")[-1]
    usual = weigh(["ad-decision"], walk, [edge("ad-decision", "exchange-client"),
                                          edge("ad-decision", "db")], [], [], peers, (), set(),
                  None, WINDOW)  # fmt: skip
    assert usual is not None and usual.ruled_out["exchange-client"].startswith("healthy: ")


def test_alert_peer_labels_alone_never_read_healthy() -> None:
    peers = [{"component": "cart", "peer": "valkey", "alertname": "DependencyErrors",
              "label": "upstream"}]  # fmt: skip
    walk = [*WALK[:0], Candidate("cart", ["cart"], 0), Candidate("valkey", ["cart"], 1),
            Candidate("flagd", ["cart"], 1)]  # fmt: skip
    decision = weigh(["cart"], walk, [], [], [], peers, (), set(), None, None)
    assert decision is not None and decision.root_cause == "valkey"
    assert "healthy" not in decision.ruled_out["flagd"]
    assert decision.measured["flagd"]["status"] == "not_measured"


# --- grouping -----------------------------------------------------------------------------


def test_two_consumers_of_one_topic_in_one_delivery_share_a_link() -> None:
    linked = {
        "notifier": Links(["notifier", "order-events", "kafka"], [0, 1, 2],
                          ["notifier", "notifier → order-events",
                           "notifier → order-events → kafka"],
                          ["notifier", "order-events", "kafka"]),
        "billing": Links(["billing", "order-events", "kafka"], [0, 1, 2],
                         ["billing", "billing → order-events", "billing → order-events → kafka"],
                         ["billing", "order-events", "kafka"]),
    }  # fmt: skip
    shared_dependencies(linked)
    assert linked["billing"].names[-1] == "notifier" and linked["billing"].hops[-1] == 2
    assert linked["billing"].paths[-1] == "billing → order-events ← notifier"
    assert linked["notifier"].paths[-1] == "notifier → order-events ← billing"
    assert "notifier" not in linked["billing"].down  # a link, not a dependency


def test_the_kafka_group_is_one_incident_and_one_investigation(bare: TenantGraph) -> None:
    import_world(bare, world_of(COMPANY))
    lag = [("KafkaConsumerGroupLag", s, {"topic": "order-events"}) for s in ("notifier", "billing")]
    incidents = set(fire(bare, lag))
    assert len(incidents) == 1
    (incident_id,) = incidents
    assert investigate_all(bare) == {incident_id: 1}
    got = finding(bare, incident_id)
    assert got["finding"]["candidates"][0] == "order-events"  # the topic between them
    (joined,) = [a for a in got["alerts"] if a["joined_via"]]
    assert joined["joined_via"] in (
        "notifier → order-events ← billing",
        "billing → order-events ← notifier",
    )


def test_a_later_delivery_of_the_kafka_group_joins_its_incident(bare: TenantGraph) -> None:
    """Alertmanager sends the second consumer's lag in a later notification of the same
    group (its group_interval): it joins the first one's incident through the topic. The
    topic's publisher alerting in another group shares the topic only as a neighbour: its own
    incident."""
    import_world(bare, world_of(COMPANY))
    group = '{}:{alertname="KafkaConsumerGroupLag"}'
    topic = {"topic": "order-events"}
    (first,) = fire(bare, [("KafkaConsumerGroupLag", "notifier", topic)], group_key=group)
    (other,) = fire(bare, [("ServiceHighErrorRate", "orders", {})], 295, '{}:{alertname="X"}')
    assert other != first
    assert fire(bare, [("KafkaConsumerGroupLag", "billing", topic)], 290, group) == [first]
    detail = incident_detail(bare, first)
    assert detail is not None
    joined = {a["component"]: a["joined_via"] for a in detail["alerts"]}
    assert joined["billing"] == "billing → order-events ← notifier"


@pytest.mark.parametrize(
    ("alertname", "kept"), [("NoRequestsDetected", {"payments"}), ("ServiceHighErrorRate", set())]
)
def test_a_service_its_callers_stopped_calling_stays_with_their_cause(
    bare: TenantGraph, alertname: str, kept: set[str]
) -> None:
    """search is the cause and explains api; payments, which only api calls, has no path to
    search. Receiving no requests, it is api's symptom and stays in the incident (one page);
    failing, it is a failure of its own and splits off."""
    import_world(bare, world_of(COMPANY))
    alerts = [{"component": "search", "alertname": "ContainerOOMKilled", "status": "firing"},
              {"component": "api", "alertname": "ServiceHighErrorRate", "status": "firing"},
              {"component": "payments", "alertname": alertname, "status": "firing"}]  # fmt: skip
    run = SimpleNamespace(graph=bare)
    assert starved_explained(run, alerts, {"search", "api"}, "search", 6) == kept  # type: ignore[arg-type]


def test_fewer_requests_is_its_own_kind_not_a_surge() -> None:
    for name in ("NoRequestsDetected", "RequestRateLow", "TrafficDrop", "LowThroughput"):
        assert classify(name) == "starved", name
    for name in ("RequestRateSpike", "TrafficSurge", "HighRequestRate"):
        assert classify(name) == "traffic", name
    assert classify("RequestErrorRate") == "errors"


def test_one_delivery_is_investigated_once_and_later_alerts_wait(bare: TenantGraph) -> None:
    import_world(bare, world_of(COMPANY))
    (incident_id,) = set(
        fire(bare, [("ServiceHighErrorRate", s, {}) for s in ("orders", "api", "web")])
    )
    tasks = bare.rows("incident_tasks", {"incident_id": incident_id})
    assert sorted(t["kind"] for t in tasks) == ["investigate"]  # not one per component
    assert investigate_all(bare) == {incident_id: 1}
    # later alerts on components new to it: one re-investigation, the next one waits
    fire(bare, [("ServiceHighErrorRate", "auth", {})], ago_s=200)
    assert investigate_all(bare) == {incident_id: 1}
    fire(bare, [("ServiceHighErrorRate", "search", {})], ago_s=190)
    fire(bare, [("ServiceHighErrorRate", "payments", {})], ago_s=180)
    pending = [t for t in bare.rows("incident_tasks", {"incident_id": incident_id})
               if t["kind"] == "reinvestigate" and t["status"] == "open"]  # fmt: skip
    assert len(pending) == 1  # two deliveries, one pending re-investigation
    assert investigate_all(bare) == {}  # within BLAST_REINVESTIGATE_S of the last one


def test_a_dependency_known_only_from_start_order_is_said_to_be_so(
    bare: TenantGraph, tmp_path: Path
) -> None:
    """Alerts only, nothing traced: the front end starts after web (compose `depends_on`, no
    hostname of it in its settings), so web stays a suspect behind its alerting caller, and the
    finding says what that rests on (a new user's trial: the doubt read as a known call)."""
    (tmp_path / "compose.yaml").write_text(
        "services:\n"
        "  frontend: {image: shop/nginx, depends_on: [web]}\n"
        "  web: {image: shop/web, environment: {API: 'http://api:80'}}\n"
        "  api: {image: shop/api}\n"
    )
    import_world(bare, world_of(tmp_path / "compose.yaml"))
    (incident_id,) = set(fire(bare, [("HTTP5xxRatioHigh", "frontend", {})]))
    investigate_all(bare)
    got = finding(bare, incident_id)["finding"]
    assert got["candidates"][:2] == ["frontend", "web"], got["summary"]
    assert got["summary"].startswith("Inconclusive (alerts only): frontend alerts, but it depends")
    assert got["summary"].endswith(
        " web is known only from compose `depends_on` (start order, which may be no call)."
    )


def test_a_no_data_alert_does_not_title_an_incident_split_off_with_a_real_alert() -> None:
    """A Grafana rule that returned no data is about the monitoring: a real alert split off
    with it titles the new incident, however severe or early the no-data alert (a new user's
    trial: "Catalog latency (DatasourceNoData)" led the page)."""
    nodata = {"alertname": "DatasourceNoData", "severity": "critical", "starts_at_ms": 1}
    real = {"alertname": "HighLatency", "severity": "warning", "starts_at_ms": 2}
    assert title_alert([nodata, real]) is real
    assert title_alert([nodata]) is nodata
    worse = real | {"severity": "critical"}
    assert title_alert([real, worse]) is worse


def test_a_component_the_finding_still_asks_to_check_is_not_set_aside() -> None:
    """A new user's trial read "check in this order: order-events, order-publisher" above
    "✕ order-publisher: silent and further from the alerting components than another": a
    rule had set aside a candidate a later one brought back. A reason that says it was not
    ruled out stays, and so do the measurements of what is still set aside."""
    decision = Decision(
        None, ["order-events", "order-publisher"], 0.25, "Inconclusive.",
        {"order-publisher": "silent and further from the alerting components than another",
         "orders-db": "healthy: calls as usual",
         "order-events": "not ruled out by the rules (they could not tell it apart)"},
        measured={"order-publisher": {"source": "alerts"}, "orders-db": {"source": "calls"}},
    )  # fmt: skip
    kept = still_to_check(decision)
    assert kept.ruled_out == {
        "orders-db": "healthy: calls as usual",
        "order-events": "not ruled out by the rules (they could not tell it apart)",
    }
    assert kept.measured == {"orders-db": {"source": "calls"}}
    assert still_to_check(kept) is kept
