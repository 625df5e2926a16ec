"""The investigator against a real Prometheus (tests/prometheus_server.py): service-graph and
span metrics written at "now" with promtool, read back through the evidence tools, weighed
against the coverage walk on the demo world."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.falkordb import EmbeddedFalkorDB, TenantGraph, free_port, graph_name
from agents.triage.triage import triage
from gateway.cli.demo import rfc3339
from gateway.cli.demo_evidence import Edge, PrometheusServer
from gateway.http.payloads import normalize, parse_body
from gateway.ops.runtime import Runtime
from gateway.world import demo_world_path, import_world, load_world
from tests.conftest import Gateway, make_settings
from tests.test_metrics import samples, value

#: The fault starts this long before now; alerts fire two minutes later.
FAULT_AGO_S = 15 * 60


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[Callable[..., PrometheusServer]]:
    """Start a Prometheus holding the given edges' series (one per call, all stopped after)."""
    started: list[PrometheusServer] = []

    def start(
        edges: list[Edge], spans: bool = False, service_graph: bool = True
    ) -> PrometheusServer:
        folder = tmp_path / f"prometheus-{len(started)}"
        server = PrometheusServer(
            folder, edges, int(time.time()) - FAULT_AGO_S, spans, service_graph=service_graph
        )
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def investigate(
    falkordb: EmbeddedFalkorDB,
    graph: TenantGraph,
    tmp_path: Path,
    tenant: str,
    url: str | None,
    alerts: list[tuple[str, str, dict[str, str]]],
) -> dict[str, Any]:
    """Fire `alerts` (alertname, service, extra labels) two minutes after the fault, run the
    investigator with `PROMETHEUS_URL=url`, and return the incident with its finding."""
    starts = time.time() - FAULT_AGO_S + 120
    body = {
        "version": "4", "status": "firing", "receiver": "blast-radius", "groupKey": "{}:{}",
        "alerts": [
            {"status": "firing",
             "labels": {"alertname": name, "service": service, "severity": "warning"} | extra,
             "annotations": {"summary": f"{name} on {service}"},
             "startsAt": rfc3339_s(starts + 10 * i), "endsAt": "0001-01-01T00:00:00Z"}
            for i, (name, service, extra) in enumerate(alerts)
        ],
    }  # fmt: skip
    report = triage(graph, normalize(parse_body(json.dumps(body).encode()), "warning"), 900_000)
    # the incident of the first alert (alerts that share only a neighbour, such as two
    # consumers of one topic, open incidents of their own)
    incident_id = report.incidents[0]
    extra = {"prometheus_url": url} if url else {}
    runtime = Runtime(make_settings(falkordb, tmp_path / "gw", tenant, **extra))
    runtime.open()
    try:
        runtime.make_worker("investigator").run(threading.Event(), burst=True)
    finally:
        runtime.close()
    row = graph.one("incident_get", {"incident_id": incident_id})
    assert row is not None and row["summary"], "no finding"
    task = next(
        t for t in graph.rows("incident_tasks", {"incident_id": incident_id})
        if t["kind"] == "investigate"
    )  # fmt: skip
    steps = graph.rows("task_steps", {"task_id": task["id"]})
    return row | {"steps": [s["tool"] for s in steps]}


def rfc3339_s(seconds: float) -> str:
    from datetime import UTC, datetime

    return rfc3339(datetime.fromtimestamp(seconds, UTC))


@pytest.fixture
def run(falkordb, store, tmp_path) -> Callable[..., dict[str, Any]]:
    """Investigate the alerts on a fresh tenant graph with the demo world (one per call, so
    one test can compare alerts only with evidence)."""

    def go(url: str | None, alerts: list[tuple[str, str, dict[str, str]]]) -> dict[str, Any]:
        tenant = f"t{uuid.uuid4().hex[:10]}"
        graph = store.graph(graph_name(tenant))
        graph.ensure_schema()
        import_world(graph, load_world(demo_world_path()))
        return investigate(falkordb, graph, tmp_path / tenant, tenant, url, alerts)

    return go


#: The shop's normal calls (2/s, no failures, 20 ms), the background every case shares.
HEALTHY = [
    Edge("load-generator", "frontend-proxy", rate=5),
    Edge("frontend-web", "frontend-proxy", rate=3),
    Edge("frontend-proxy", "frontend", rate=8),
    Edge("frontend", "cart"), Edge("frontend", "product-catalog"), Edge("frontend", "checkout"),
    Edge("frontend", "currency"), Edge("checkout", "payment"), Edge("checkout", "cart"),
    Edge("product-catalog", "postgres", connection_type="database"),
    Edge("cart", "valkey-cart", connection_type="database"),
    Edge("frontend", "flagd", rate=1), Edge("cart", "flagd", rate=1),
    Edge("checkout", "flagd", rate=1), Edge("checkout", "shipping"),
    Edge("checkout", "kafka", rate=1, connection_type="messaging_system"),
]  # fmt: skip


def scenario(**changes: dict[str, float]) -> list[Edge]:
    """`HEALTHY` with some edges changed after the fault: `scenario(cart__valkey_cart=...)`
    is awkward, so the key is `client>server`."""
    out = []
    for edge in HEALTHY:
        change = changes.get(f"{edge.client}>{edge.server}", {})
        out.append(Edge(**(edge.__dict__ | change)))
    return out


CART_ALERTS = [
    ("ServiceHighErrorRate", "cart", {"operation": "oteldemo.CartService/GetCart"}),
    ("ServiceHighErrorRate", "frontend", {"operation": "GET /api/cart"}),
]


def test_a_silent_cache_behind_an_alerting_service_is_the_cause(prometheus, run) -> None:
    server = prometheus(
        scenario(
            **{
                "cart>valkey-cart": {"fail_after": 0.45},
                "frontend>cart": {"fail_after": 0.4},
                "checkout>cart": {"fail_after": 0.4},
            }
        ),
    )
    got = run(server.url, CART_ALERTS)
    assert got["root_cause"] == "valkey-cart"
    assert got["confidence"] >= 0.8
    assert "calls into valkey-cart fail" in got["summary"]
    assert "raises no alert of its own" in got["summary"]
    assert "cart" in got["summary"] and "victim" in got["summary"]
    assert got["separated_by"].startswith("the only degraded component")
    assert {"edge_health", "service_errors", "targets_down"} <= set(got["steps"])
    evidence = json.loads(got["evidence_json"])
    assert evidence[0]["component"] == "valkey-cart" and evidence[0]["source"] == "calls"


def test_evidence_that_cannot_see_behind_the_cause_is_inconclusive(prometheus, run) -> None:
    """Span metrics only: cart's spans fail, and valkey-cart, which has no spans, could be
    failing behind it unseen; evidence that does not discriminate is no answer."""
    changes = {"cart>valkey-cart": {"fail_after": 0.5}, "frontend>cart": {"fail_after": 0.4},
               "checkout>cart": {"fail_after": 0.4}}  # fmt: skip
    server = prometheus(scenario(**changes), spans=True, service_graph=False)
    got = run(server.url, CART_ALERTS)
    assert got["root_cause"] is None, got["summary"]
    assert got["candidates"] == ["cart", "valkey-cart"]
    assert "nothing measures valkey-cart behind it" in got["summary"]


def test_alerts_only_the_same_case_is_inconclusive_naming_both(run) -> None:
    got = run(None, CART_ALERTS)
    assert got["root_cause"] is None
    # cart's calls into valkey-cart fail either way; flagd, a configuration it reads, last
    assert got["candidates"] == ["cart", "valkey-cart", "flagd"]
    assert "alerts only" in got["summary"]


def test_no_evidence_at_all_falls_back_to_the_walk_and_says_so(prometheus, run) -> None:
    server = prometheus([])
    got = run(server.url, CART_ALERTS)
    assert got["root_cause"] is None and got["candidates"] == ["cart", "valkey-cart", "flagd"]
    # A window with no series is no data, never "no failing calls" (healthy).
    assert got["summary"].startswith("No live evidence near the incident (")
    assert "(no data, not healthy)" in got["summary"]
    assert "shows no failing" not in got["summary"]


def test_prometheus_down_tools_say_error_and_the_walk_decides(run) -> None:
    got = run(f"http://127.0.0.1:{free_port()}", CART_ALERTS)
    assert got["summary"].startswith(
        "Live evidence unavailable (edge_health: prometheus unreachable"
    )
    assert got["root_cause"] is None and got["candidates"] == ["cart", "valkey-cart", "flagd"]
    assert "edge_health" in got["steps"] and "service_errors" not in got["steps"]  # no 2nd wait


def test_evidence_that_contradicts_the_walk_wins(prometheus, run) -> None:
    # Alerts on product-catalog and frontend: the walk picks product-catalog. The calls say
    # postgres fails under it.
    server = prometheus(
        scenario(
            **{
                "product-catalog>postgres": {"fail_after": 0.5},
                "frontend>product-catalog": {"fail_after": 0.45},
            }
        ),
    )
    alerts = [("ServiceHighErrorRate", "product-catalog", {}),
              ("ServiceHighErrorRate", "frontend", {})]  # fmt: skip
    alerts_only = run(None, alerts)  # the walk: product-catalog, or postgres behind it
    assert alerts_only["root_cause"] is None
    assert alerts_only["candidates"][:2] == ["product-catalog", "postgres"]
    got = run(server.url, alerts)
    assert got["root_cause"] == "postgres", got["summary"]
    ruled = json.loads(got["ruled_out_json"])
    assert ruled["product-catalog"].startswith(
        "a victim of postgres, which it depends on: calls into postgres fail"
    )


def test_a_client_surge_names_the_traffic_source(prometheus, run) -> None:
    server = prometheus(
        scenario(
            **{
                "load-generator>frontend-proxy": {"rate_after": 30},
                "frontend-proxy>frontend": {"rate_after": 33, "latency_after_ms": 90},
            }
        ),
    )
    alerts = [("RequestRateSpike", "frontend", {"operation": "GET /"}),
              ("ServiceLatencySLOBreach", "frontend-proxy", {"operation": "GET /"})]  # fmt: skip
    assert run(None, alerts)["root_cause"] is None  # two clients call the proxy
    got = run(server.url, alerts)
    assert got["root_cause"] == "load-generator", got["summary"]
    assert "load-generator's requests to frontend-proxy rose" in got["summary"]


def test_a_surge_is_followed_up_through_the_callers_to_its_source(prometheus, run) -> None:
    """Only frontend's dependencies alert, slowed by a surge from the load generator through
    frontend-proxy and frontend. The calls into the alerting components stop at frontend,
    which nothing measured calls: the calls into it, then into frontend-proxy, are read until
    the world's traffic source."""
    server = prometheus(
        scenario(
            **{
                "load-generator>frontend-proxy": {"rate_after": 30},
                "frontend-proxy>frontend": {"rate_after": 30},
                "frontend>cart": {"rate_after": 25, "latency_after_ms": 400},
                "frontend>product-catalog": {"rate_after": 25, "latency_after_ms": 500},
            }
        ),
    )
    alerts = [("ServiceLatencySLOBreach", "cart", {}),
              ("ServiceLatencySLOBreach", "product-catalog", {})]  # fmt: skip
    got = run(server.url, alerts)
    assert got["root_cause"] == "load-generator", got["summary"]
    assert "frontend-proxy passes it on" in got["summary"]
    ruled = json.loads(got["ruled_out_json"])
    assert ruled["frontend"] == "passes on the load from frontend-proxy"
    assert ruled["frontend-proxy"] == "passes on the load from load-generator"


def test_a_configuration_service_failing_its_readers(prometheus, run) -> None:
    server = prometheus(
        scenario(
            **{
                "frontend>flagd": {"fail_after": 0.6},
                "cart>flagd": {"fail_after": 0.6},
                "checkout>flagd": {"fail_after": 0.6},
                "frontend>cart": {"fail_after": 0.2},
                "frontend>checkout": {"fail_after": 0.2},
            }
        ),
    )
    alerts = [("ServiceHighErrorRate", "cart", {}), ("ServiceHighErrorRate", "checkout", {}),
              ("ServiceHighErrorRate", "frontend", {})]  # fmt: skip
    got = run(server.url, alerts)
    assert got["root_cause"] == "flagd"
    assert "3 of 3 alerting components reach it" in got["summary"]


def test_a_producer_failing_explains_its_consumers_behind_a_silent_topic(prometheus, run) -> None:
    server = prometheus(scenario(**{"frontend>checkout": {"fail_after": 0.5}}), spans=True)
    alerts = [
        ("KafkaConsumerGroupLag", "accounting", {"topic": "orders", "consumer_group": "acc"}),
        ("KafkaConsumerGroupLag", "fraud-detection", {"topic": "orders", "consumer_group": "fd"}),
    ]
    alerts_only = run(None, alerts)
    # the two consumers share only the topic, so each lag opens an incident of its own (they
    # arrive in separate deliveries here); alerts only, the lag alert's `topic` label names
    # the topic as the peer that fails, and nothing separates the topic from its producer
    # that stopped writing
    assert alerts_only["root_cause"] is None, alerts_only["summary"]
    assert alerts_only["candidates"] == ["orders", "checkout"]
    got = run(server.url, alerts)
    assert got["root_cause"] == "checkout", got["summary"]
    assert "separated from orders" in got["summary"].lower()


def test_messages_that_stopped_reaching_every_consumer_blame_the_broker(prometheus, run) -> None:
    """Nothing fails or slowed, but checkout's messages over `orders` stopped reaching both of
    its consumers while checkout itself serves frontend as usual: the broker that hosts the
    topic (`weigh.stalled_topic`), named under 0.5 with checkout kept as a candidate (one
    producer may have stopped publishing itself). Counter-case: when checkout's own calls
    fail too, the failing producer explains it and the broker is not named."""
    flow = [Edge("checkout", c, rate=1, connection_type="messaging_system")
            for c in ("accounting", "fraud-detection")]  # fmt: skip
    fell = {f"checkout>{c}": {"rate_after": 0.05} for c in ("accounting", "fraud-detection")}
    lag = [("KafkaConsumerGroupLag", "accounting", {"consumer_group": "acc"})]
    stalled = [Edge(**(e.__dict__ | fell.get(f"{e.client}>{e.server}", {})))
               for e in scenario() + flow]  # fmt: skip
    got = run(prometheus(stalled).url, lag)
    assert (got["root_cause"], got["confidence"]) == ("kafka", 0.45), got["summary"]
    assert got["candidates"] == ["kafka", "checkout"]
    assert "the messages over orders on kafka stopped or fell" in got["summary"]
    assert "neighbours" in got["steps"]
    failing = [e if e.client != "frontend" or e.server != "checkout"
               else Edge(**(e.__dict__ | {"fail_after": 0.5})) for e in stalled]  # fmt: skip
    producer = run(prometheus(failing).url, lag)
    assert producer["root_cause"] == "checkout", producer["summary"]


def test_memory_learns_the_evidence_and_settles_a_repeat_with_a_silent_root(
    prometheus, falkordb, store, tmp_path
) -> None:
    server = prometheus(
        scenario(**{"cart>valkey-cart": {"fail_after": 0.45}, "frontend>cart": {"fail_after": 0.4}})
    )
    tenant = f"t{uuid.uuid4().hex[:10]}"
    runtime = Runtime(make_settings(falkordb, tmp_path / tenant, tenant, prometheus_url=server.url))
    runtime.open()
    import_world(store.graph(graph_name(tenant)), load_world(demo_world_path()))
    gw = Gateway(runtime, runtime.serve_http("127.0.0.1", 0), None)
    fault_at = time.time() - FAULT_AGO_S
    try:

        def fire(status: str, offset_s: int, wording: str) -> str:
            starts = int(fault_at) + offset_s
            alerts = [
                {"status": status, "labels": {"alertname": name, "service": svc},
                 "annotations": {"summary": "errors"}, "startsAt": rfc3339_s(starts),
                 "endsAt": rfc3339_s(starts + 60) if status == "resolved"
                 else "0001-01-01T00:00:00Z"}
                for name, svc in ((wording, "cart"), (wording, "frontend"))
            ]  # fmt: skip
            answer = gw.http.post("/api/v1/alerts", json={"alerts": alerts})
            assert answer.status_code == 200, answer.text
            gw.drain()
            return str(answer.json()["incidents"][0])

        first = fire("firing", 60, "ServiceHighErrorRate")
        found = gw.http.get(f"/api/v1/incidents/{first}").json()
        assert (found["root_cause"], found["finding"]["planner"]) == ("valkey-cart", "rules")
        answer = gw.http.post(
            f"/api/v1/incidents/{first}/verdicts", json={"verdict": "confirmed", "by": "UDEE"}
        )
        assert answer.status_code == 201, answer.text
        gw.drain()
        (learned,) = gw.http.get("/api/v1/playbooks").json()["playbooks"]
        assert learned["component"] == "valkey-cart"
        types = [c["type"] for c in learned["checks"]]
        assert types == ["no_recent_change", "alert_any", "calls_degraded"]
        # a silent root's symptoms: its callers alert, whatever the kind
        assert learned["checks"][1]["components"] == ["cart", "frontend"]
        # as the rules define it; either way: the next time may be slow calls
        assert learned["checks"][2]["how"] == ["failing", "slowed"]
        fire("resolved", 60, "ServiceHighErrorRate")
        # The repeat, worded differently: memory settles it, no planner.
        second = fire("firing", 240, "Http5xxRatioHigh")
        assert second != first
        again = gw.http.get(f"/api/v1/incidents/{second}").json()
        assert again["root_cause"] == "valkey-cart"
        assert again["finding"]["planner"] == "memory"
        found = samples(gw.http.get("/metrics").text)
        findings = "blast_findings_total"
        assert value(found, findings, planner="rules", outcome="conclusive") >= 1
        assert value(found, findings, planner="memory", outcome="conclusive") >= 1
        verdicts = "blast_verdicts_total"
        assert value(found, verdicts, planner="rules", verdict="confirmed") == 1
    finally:
        gw.http.close()
        runtime.close()


def with_errors_playbook(store, component: str, title: str) -> tuple[str, TenantGraph]:
    """A new tenant's graph of the demo world with a hand-written playbook on `component`
    whose one check is that it alerts with errors: (tenant, graph)."""
    tenant = f"t{uuid.uuid4().hex[:10]}"
    graph = store.graph(graph_name(tenant))
    graph.ensure_schema()
    import_world(graph, load_world(demo_world_path()))
    graph.one("plant_playbook", {
        "id": f"bad-{component}", "component": component, "title": title,
        "failure_kind": "errors", "author": "Dee",
        "checks_json": json.dumps([{"type": "alert_kind", "kind": "errors"}]),
        "remediation_json": None, "remediation_type": None, "max_playbooks": 200,
    })  # fmt: skip
    return tenant, graph


def test_a_measured_cause_outranks_a_playbook_whose_checks_held(
    prometheus, falkordb, store, tmp_path
) -> None:
    """A hand-written playbook says errors on cart mean a bad cart release; its check (cart
    alerts with errors) holds. Alerts only, it names cart, at no more than 0.45: nobody has
    confirmed it in use. With evidence that calls into valkey-cart fail, the measured cause
    stands, the summary says what memory suggested, and the playbook did not steer (no trust
    moves for it)."""
    server = prometheus(
        scenario(**{"cart>valkey-cart": {"fail_after": 0.45}, "frontend>cart": {"fail_after": 0.4}})
    )
    found = {}
    for url in (None, server.url):
        tenant, graph = with_errors_playbook(store, "cart", "errors on cart: bad release")
        got = investigate(falkordb, graph, tmp_path / tenant, tenant, url, CART_ALERTS)
        (used,) = graph.rows("incident_decision", {"incident_id": got["id"]})
        found[url is not None] = (got, used)
    remembered, used = found[False]
    assert (remembered["root_cause"], remembered["planner"]) == ("cart", "memory")
    assert remembered["confidence"] == 0.45  # untried: a lead, not a conclusion
    assert (used["applicable"], used["steered"]) == (True, True)
    measured, used = found[True]
    assert (measured["root_cause"], measured["planner"]) == ("valkey-cart", "rules")
    assert measured["confidence"] >= 0.8
    assert (
        "Memory suggested cart (playbook 'errors on cart: bad release', 0.45)"
        in (measured["summary"])
    )
    assert (used["applicable"], used["steered"]) == (True, False)


def test_memory_never_names_a_component_the_evidence_measured_as_a_victim(
    prometheus, falkordb, store, tmp_path
) -> None:
    """A hand-written playbook blames checkout for its errors; its checks hold (checkout alerts
    with errors and explains frontend's alert too). Span metrics only: cart's spans fail and
    checkout's trouble is cart's (a victim), while nothing measures valkey-cart behind cart,
    so the rules stay inconclusive. Memory's cause was checked against the live evidence and
    lost: it does not steer, and the summary says why (an unseen month's planted runbook
    named a measured victim at 0.45)."""
    changes = {
        "cart>valkey-cart": {"fail_after": 0.5},
        "frontend>cart": {"fail_after": 0.4},
        "checkout>cart": {"fail_after": 0.4},
        "frontend>checkout": {"fail_after": 0.3},
    }
    server = prometheus(scenario(**changes), spans=True, service_graph=False)
    tenant, graph = with_errors_playbook(store, "checkout", "errors on checkout: bad build")
    alerts = [*CART_ALERTS, ("ServiceHighErrorRate", "checkout", {"operation": "PlaceOrder"})]
    got = investigate(falkordb, graph, tmp_path / tenant, tenant, server.url, alerts)
    assert (got["root_cause"], got["planner"]) == (None, "rules"), got["summary"]
    assert got["candidates"][:2] == ["cart", "valkey-cart"]
    assert (
        "Memory suggested checkout (playbook 'errors on checkout: bad build', 0.45); the live "
        "evidence rules it out: a victim of cart" in got["summary"]
    )
    (used,) = graph.rows("incident_decision", {"incident_id": got["id"]})
    assert (used["applicable"], used["steered"]) == (True, False)


#: A broker hosting two topics, each with its own producer and consumers; `notify` reads both.
#: The producers serve their callers.
TWO_TOPICS = """\
components:
  - {id: web, kind: service, client: true}
  - {id: orders, kind: service}
  - {id: labs, kind: service}
  - {id: billing, kind: service}
  - {id: notify, kind: service}
  - {id: archive, kind: service}
  - {id: broker, kind: datastore, tech: ActiveMQ}
  - {id: jobs, kind: topic, hosted_on: broker}
  - {id: results, kind: topic, hosted_on: broker}
edges:
  - {from: web, to: orders, type: CALLS}
  - {from: web, to: labs, type: CALLS}
  - {from: orders, to: jobs, type: PUBLISHES}
  - {from: billing, to: jobs, type: CONSUMES}
  - {from: notify, to: jobs, type: CONSUMES}
  - {from: labs, to: results, type: PUBLISHES}
  - {from: notify, to: results, type: CONSUMES}
  - {from: archive, to: results, type: CONSUMES}
teams:
  - {name: core, owns: [web], members: [{name: Al Smith}]}
default_team: core
"""


def test_messages_stalled_over_two_topics_of_one_broker_blame_the_broker(
    prometheus, falkordb, store, tmp_path
) -> None:
    """The readers of two topics on one broker alert together: the broker explains more of
    them than either topic. Messages over both stopped from two producers that serve their
    callers as usual: the broker, at the two-producer confidence. Counter-case: only `jobs`
    stopped, while `results` flows as usual: the broker is not what stalled them."""
    world = tmp_path / "two-topics.yaml"
    world.write_text(TWO_TOPICS, encoding="utf-8")
    base = [Edge("web", "orders"), Edge("web", "labs")] + [
        Edge(p, c, rate=1, connection_type="messaging_system")
        for p, c in (("orders", "billing"), ("orders", "notify"), ("labs", "notify"),
                     ("labs", "archive"))
    ]  # fmt: skip
    alerts = [("BillingFeedStalled", "billing", {}), ("ArchiveBehind", "archive", {}),
              ("NotifyBacklog", "notify", {})]  # fmt: skip

    def investigated(stopped: set[str]) -> dict[str, Any]:
        edges = [Edge(**(e.__dict__ | ({"rate_after": 0.05}
                                       if f"{e.client}>{e.server}" in stopped else {})))
                 for e in base]  # fmt: skip
        tenant = f"t{uuid.uuid4().hex[:10]}"
        graph = store.graph(graph_name(tenant))
        graph.ensure_schema()
        import_world(graph, load_world(world))
        url = prometheus(edges).url
        return investigate(falkordb, graph, tmp_path / tenant, tenant, url, alerts)

    both = investigated({"orders>billing", "orders>notify", "labs>notify", "labs>archive"})
    assert (both["root_cause"], both["confidence"]) == ("broker", 0.8), both["summary"]
    assert "the messages over jobs and results on broker stopped or fell" in both["summary"]
    one = investigated({"orders>billing", "orders>notify"})
    assert "stopped or fell" not in one["summary"] and one["confidence"] < 0.8, one["summary"]


def test_a_cause_measured_serving_as_usual_is_a_lead_not_a_conclusion(prometheus, run) -> None:
    # Alerts on product-catalog and its database, every call in the shop measured as usual:
    # the walk names postgres (both alerting components reach it, nothing behind it), but the
    # calls into postgres were served as usual. Alerts only it stays the walk's conclusion.
    alerts = [
        ("PostgresSlowQueries", "postgres", {}),
        ("ServiceHighLatency", "product-catalog", {}),
    ]
    blind = run(None, alerts)
    assert blind["root_cause"] == "postgres" and blind["confidence"] >= 0.5
    got = run(prometheus(HEALTHY).url, alerts)
    assert got["root_cause"] == "postgres"
    assert got["confidence"] == pytest.approx(0.45)
    assert "shows no failing or slow calls" in got["summary"]
    assert "the live evidence measured postgres serving its calls as usual (" in got["summary"]
    assert "a lead, not a conclusion" in got["summary"]
