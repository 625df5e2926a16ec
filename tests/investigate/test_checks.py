"""Playbook checks against real evidence: the graph's changes and alerts, and a local server
speaking the Prometheus HTTP API subset we use (`GET /api/v1/query`)."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest
from pydantic import SecretStr

from adapters.notify import AdapterError
from adapters.prometheus import Prometheus
from agents.investigate.checks import (
    BY_COMPONENTS_ONLY,
    Evidence,
    describe,
    evaluate,
    evidence_checks,
    held_words,
)

OPENED = 1_790_000_000_000
SEEN: list[dict[str, list[str]]] = []


class PromAPI(BaseHTTPRequestHandler):
    """`up` -> 1 sample of 0.97; `broken(` -> 400 bad_data; `flaky` -> 503."""

    def do_GET(self) -> None:
        params = parse_qs(urlparse(self.path).query)
        SEEN.append(params | {"authorization": [self.headers.get("Authorization", "")]})
        query = params["query"][0]
        if query.startswith("broken"):
            self._send(400, {"status": "error", "errorType": "bad_data", "error": "parse error"})
        elif query == "flaky":
            self._send(503, {"status": "error"})
        else:
            result = [{"metric": {"service": "payments-db"}, "value": [OPENED / 1000, "0.97"]}]
            self._send(
                200, {"status": "success", "data": {"resultType": "vector", "result": result}}
            )

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def prometheus() -> Iterator[Prometheus]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), PromAPI)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = Prometheus(f"http://127.0.0.1:{server.server_address[1]}")
    yield client
    client.close()
    server.shutdown()


def evidence(graph, prometheus=None) -> Evidence:
    alerts = [
        {
            "key": "a@1",
            "alertname": "PgConnectionPoolExhausted",
            "component": "postgres",
            "summary": "",
        },
        {
            "key": "b@1",
            "alertname": "ServiceHighErrorRate",
            "component": "product-catalog",
            "summary": "",
        },
    ]
    return Evidence(graph, alerts, ["postgres", "product-catalog"], OPENED, prometheus)


def test_alert_kind_and_alert_firing(graph):
    ev = evidence(graph)
    assert evaluate({"type": "alert_kind", "kind": "saturation"}, "postgres", ev)["held"]
    assert not evaluate({"type": "alert_kind", "kind": "memory"}, "postgres", ev)["held"]
    firing = evaluate(
        {"type": "alert_firing", "alertname": "ServiceHighErrorRate"}, "product-catalog", ev
    )
    assert firing["held"] and firing["raw"] == [{"key": "b@1", "alertname": "ServiceHighErrorRate"}]


def test_change_checks_read_the_graph(graph):
    ev = evidence(graph)
    # no change ever recorded (no change source): nothing was measured, and the check says so;
    # "no recent change" is not contradicted, "a recent change" is not shown
    unmeasured = evaluate({"type": "no_recent_change"}, "postgres", ev)
    assert unmeasured["held"] and unmeasured["status"] == "no_data"
    assert unmeasured["detail"] == (
        "recent changes not checked: no change source has recorded a deploy or merged pull request"
    )
    shown = evaluate({"type": "recent_change"}, "product-catalog", ev)
    assert not shown["held"] and shown["status"] == "no_data"
    assert describe({"type": "no_recent_change"}, "postgres", measured=False) == (
        "recent changes not checked (no change source has recorded a deploy or merged pull request)"
    )
    graph.one("record_change", {"id": "d1", "component": "product-catalog", "kind": "deploy",
                                "ref": "v9", "at": OPENED - 60_000, "author": None})  # fmt: skip
    ev = evidence(graph)  # a run reads whether a change source exists once
    # a source that recorded changes elsewhere: checked, and none on the other alerting one
    checked = evaluate({"type": "no_recent_change"}, "product-catalog", ev)
    assert checked["held"] and checked["status"] == "ok"
    assert checked["detail"] == "changes in the last 2 h: none"
    held = evaluate({"type": "no_recent_change"}, "postgres", ev)
    assert not held["held"] and held["raw"][0]["ref"] == "v9"
    assert evaluate({"type": "recent_change"}, "product-catalog", ev)["held"]
    assert not evaluate({"type": "recent_change"}, "postgres", ev)["held"]


def test_prometheus_threshold_at_incident_time(graph, prometheus):
    ev = evidence(graph, prometheus)
    check = {
        "type": "prometheus",
        "query": "pg_saturation{service=$component}",
        "op": ">",
        "threshold": 0.9,
    }
    result = evaluate(check, "postgres", ev)
    assert result["held"] and result["raw"][0]["value"] == pytest.approx(0.97)
    assert SEEN[-1]["query"] == ['pg_saturation{service="postgres"}']
    assert SEEN[-1]["time"] == [f"{OPENED / 1000:.3f}"]
    assert not evaluate(check | {"threshold": 0.99}, "postgres", ev)["held"]


@pytest.mark.parametrize("query", ["broken(", "flaky"])
def test_prometheus_errors_never_hold(graph, prometheus, query):
    result = evaluate(
        {"type": "prometheus", "query": query, "threshold": 0},
        "postgres",
        evidence(graph, prometheus),
    )
    assert not result["held"] and "prometheus" in result["detail"]


def test_prometheus_not_configured_cannot_hold(graph):
    result = evaluate(
        {"type": "prometheus", "query": "up", "threshold": 0}, "postgres", evidence(graph)
    )
    assert not result["held"] and "PROMETHEUS_URL" in result["detail"]


def test_prometheus_auth_bearer_or_basic_never_in_errors(graph, prometheus):
    url = str(prometheus._client.base_url)
    with_token = Prometheus(url, bearer=SecretStr("tok-12345"))
    with_token.instant("up")
    assert SEEN[-1]["authorization"] == ["Bearer tok-12345"]
    with_token.close()
    basic = Prometheus(url, basic=("alice", SecretStr("s3cret")))
    basic.instant("up")
    assert SEEN[-1]["authorization"] == ["Basic " + base64.b64encode(b"alice:s3cret").decode()]
    with pytest.raises(AdapterError) as failed:
        basic.instant("flaky")
    assert "s3cret" not in str(failed.value) and failed.value.retryable
    basic.close()


def test_a_check_missing_a_field_is_an_error_result_not_an_exception(graph):
    result = evaluate({"type": "alert_firing"}, "postgres", evidence(graph))
    assert result["status"] == "error" and not result["held"]
    assert "alertname" in result["detail"]
    assert evaluate({"type": "named_by_alert"}, "postgres", evidence(graph))["status"] == "ok"


def test_evidence_checks_learn_calls_degraded_either_way():
    """Failing calls or spans or slow calls on the cause become one `calls_degraded` in either
    way (the next time the same fault may time calls out instead of failing them), not
    thresholds at half the first magnitude; a traffic jump keeps its factor; evidence on other
    components teaches nothing."""
    rows = [
        {"component": "ledger-db", "source": "calls", "value": 0.37},
        {"component": "ledger-db", "source": "latency", "value": 60.0},
        {"component": "ledger-db", "source": "spans", "value": 0.3},
        {"component": "billing-api", "source": "calls", "value": 0.3},
    ]
    assert evidence_checks(rows, "ledger-db") == [
        {"type": "calls_degraded", "how": ["failing", "slowed"]}
    ]
    for only in (rows[:1], rows[1:2], rows[2:3]):
        assert evidence_checks(only, "ledger-db") == [
            {"type": "calls_degraded", "how": ["failing", "slowed"]}
        ]
    surge = [{"component": "partner", "source": "traffic", "value": 8.0}]
    assert evidence_checks(surge, "partner") == [{"type": "requests_rising", "factor": 4.0}]
    assert evidence_checks(rows, "storefront") == []


def test_each_check_reads_as_a_sentence() -> None:
    """What the memory page shows for a stored check, one line each; an invalid one says so."""
    said = [
        describe(c, "orders-db")
        for c in (
            {"type": "alert_kind", "kind": "errors"},
            {"type": "alert_kind", "kind": "latency", "scope": "alerting"},
            {"type": "alert_any", "scope": "components", "components": ["orders", "shop"]},
            {"type": "calls_degraded", "how": ["failing", "slowed"]},
            {"type": "prometheus", "query": "up", "op": "<", "threshold": 1},
            {
                "type": "signature",
                "overlap": 0.5,
                "alerts": [
                    {"component": "orders", "kind": "errors"},
                    {"component": "shop", "kind": "latency"},
                ],
            },
            {"type": "alert_kind"},
        )
    ]
    assert said == [
        "an errors alert on orders-db",
        "a latency alert on an alerting component",
        "an alert of any kind on one of orders, shop",
        "calls into orders-db failing or slowed (the service graph)",
        "Prometheus: up < 1",
        "the same shape again (50% of: errors on orders, latency on shop)",
        "an invalid check (never holds): {'type': 'alert_kind'}",
    ]


def test_a_signature_held_by_its_components_only_says_what_held() -> None:
    """A signature that held by its components only, their kinds other than then
    (`kinds_differ`), reads as that in the finding's summary and the web page's check row, not
    "the same shape again" and "✓ held" beside "overlap 0.33 (want 0.50) … kinds differ" (a
    new user's trial could not tell whether it passed)."""
    shape = {
        "type": "signature",
        "overlap": 0.5,
        "alerts": [
            {"component": "cart", "kind": "errors"},
            {"component": "frontend", "kind": "latency"},
        ],
    }
    assert describe(shape, "valkey-cart", by_components=True) == (
        "the same components alert again, with other kinds than then (it was: errors on cart, "
        "latency on frontend)"
    )
    lead = {"held": True, "status": "ok", "raw": {"overlap": 0.33, "kinds_differ": True}}
    assert held_words(lead) == BY_COMPONENTS_ONLY
    assert BY_COMPONENTS_ONLY.startswith("~ held by its components only")
    assert held_words(lead | {"raw": {"overlap": 1.0, "kinds_differ": False}}) == "✓ held"
    assert held_words(lead | {"held": False, "raw": {"kinds_differ": False}}) == "✗ did not hold"
    assert held_words({"held": True, "status": "no_data", "raw": None}) == "– not checked"
