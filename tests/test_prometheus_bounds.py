"""Prometheus as a shared, fragile dependency, against a real Prometheus (Debian's, series
backfilled with promtool: gateway/cli/demo_evidence.py): costly PromQL refused before it is
sent, answers bounded, a budget per tenant, one client per tenant (`BLAST_PROMETHEUS_URLS`), and
a check's raw samples only from the tenant's own Prometheus."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

import adapters.prometheus as prometheus_module
from adapters.falkordb import TenantGraph, graph_name
from adapters.notify import AdapterError
from adapters.prometheus import Budget, Prometheus
from adapters.promql import cost_problem, duration_s
from agents.investigate.checks import CHECK, evaluate
from agents.investigate.tools.base import ToolContext
from agents.investigate.tools.evidence import PromQLInput, promql
from gateway.cli.demo_evidence import Edge, PrometheusServer, available
from gateway.ops.runtime import prometheus_clients
from gateway.settings import Settings

pytestmark = pytest.mark.skipif(not available(), reason="needs Debian's prometheus")

#: A query over every service-graph series: six series (three edges, two counters each).
EVERY = '{__name__=~"traces_service_graph_request_(failed_)?total"}'


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrometheusServer]:
    edges = [Edge("frontend", "cart"), Edge("frontend", "checkout"), Edge("checkout", "payment")]
    started = PrometheusServer(tmp_path_factory.mktemp("prometheus"), edges, None)
    yield started
    started.stop()


def test_costly_promql_is_refused_by_its_text():
    assert "subquery" in (cost_problem("count_over_time(vector(1)[3h:1ms])") or "")
    assert "subquery" in (cost_problem("max_over_time(rate(x[5m])[1h:])") or "")
    assert "over the limit of 24 h" in (cost_problem("max_over_time(x[2d])") or "")
    assert cost_problem('rate(x{path="/a[1:2]"}[5m])') is None  # brackets in a string
    assert cost_problem("sum by (a) (rate(x[1h30m])) offset 1w") is None
    assert duration_s("1h30m") == 5400 and duration_s("500ms") == 0.5 and duration_s("5") is None
    with pytest.raises(ValidationError, match="subquery"):
        CHECK.validate_python({"type": "prometheus", "query": "x[3h:1ms]", "threshold": 1})
    with pytest.raises(ValidationError, match="subquery"):
        PromQLInput(query="count_over_time(vector(1)[3h:1ms])")


def test_the_client_refuses_a_costly_query_before_sending_it(server: PrometheusServer):
    client = Prometheus(server.url)
    with pytest.raises(AdapterError, match="subquery") as refused:
        client.instant("count_over_time(vector(1)[3h:1ms])")
    assert not refused.value.retryable
    assert client.budget.spent() == 0  # never sent
    assert len(client.instant(EVERY)) == 6
    client.close()


def test_answers_are_bounded_in_series(server: PrometheusServer, monkeypatch: pytest.MonkeyPatch):
    client = Prometheus(server.url)
    monkeypatch.setattr(prometheus_module, "MAX_SERIES", 5)
    with pytest.raises(AdapterError, match="6 series, over the limit of 5"):
        client.instant(EVERY)
    monkeypatch.setattr(prometheus_module, "MAX_ANSWER_BYTES", 100)
    with pytest.raises(AdapterError, match="answer over 100 bytes"):
        client.instant(f"sum({EVERY})")
    client.close()


def test_a_tenants_budget_is_its_own(server: PrometheusServer):
    """Once a tenant's seconds per minute are spent its queries fail at once; another tenant's
    client, on the same server, still answers."""
    spent = Prometheus(server.url, budget=Budget(concurrency=1, seconds=0.000001))
    spent.instant("vector(1)")  # the first query spends the budget
    started = time.monotonic()
    with pytest.raises(AdapterError, match="BLAST_PROMETHEUS_BUDGET_S"):
        spent.instant("vector(1)")
    assert time.monotonic() - started < 0.5
    other = Prometheus(server.url)
    assert other.instant("vector(1)") == [{"metric": {}, "value": 1.0}]
    busy = Budget(concurrency=1, wait_s=0.05)
    busy.take()
    with pytest.raises(AdapterError, match="BLAST_PROMETHEUS_CONCURRENCY"):
        busy.take()
    busy.give(0.0)
    busy.take()  # the slot is back
    for client in (spent, other):
        client.close()


def test_each_tenant_gets_its_own_client_and_only_its_own_shows_samples(
    server: PrometheusServer, graph: TenantGraph
):
    settings = Settings.model_validate({
        "webhook_tokens": {"acme": SecretStr("a" * 32), "beta": SecretStr("b" * 32)},
        "prometheus_url": server.url, "prometheus_urls": f"acme={server.url}",
    })  # fmt: skip
    clients = prometheus_clients(settings)
    acme, beta = clients[graph_name("acme")], clients[graph_name("beta")]
    assert acme.own and not beta.own and acme.budget is not beta.budget
    check = {"type": "prometheus", "query": f"count({EVERY})", "op": ">", "threshold": 1}
    opened = int(time.time() * 1000)
    own = evaluate(check, "cart", ToolContext(graph, [], ["cart"], opened, acme))
    assert own["held"] and own["raw"] == [{"metric": {}, "value": 6.0}]
    shared = evaluate(check, "cart", ToolContext(graph, [], ["cart"], opened, beta))
    assert shared["held"] and shared["raw"] is None
    assert "6" not in shared["detail"] and "BLAST_PROMETHEUS_URLS" in shared["detail"]
    free = promql(ToolContext(graph, [], ["cart"], opened, beta), PromQLInput(query=EVERY))
    assert free.status == "error" and "own Prometheus" in free.detail
    assert promql(ToolContext(graph, [], ["cart"], opened, acme), PromQLInput(query=EVERY)).data
    one = Settings.model_validate({"prometheus_url": server.url})  # one tenant: its own
    assert all(c.own for c in prometheus_clients(one).values())
    for client in clients.values():
        client.close()


def test_prometheus_urls_are_checked_at_start(tmp_path: Path):
    tokens = {"acme": SecretStr("a" * 32)}
    with pytest.raises(ValidationError, match="tenant=url"):
        Settings.model_validate({"webhook_tokens": tokens, "prometheus_urls": "http://x:9090"})
    with pytest.raises(ValidationError, match="no http"):
        Settings.model_validate({"webhook_tokens": tokens, "prometheus_urls": "acme=x:9090"})
    with pytest.raises(ValidationError, match="does not serve: zed"):
        Settings.model_validate({"webhook_tokens": tokens, "prometheus_urls": "zed=http://p"})
    secret = Settings.model_validate({
        "webhook_tokens": tokens, "prometheus_urls": "acme=http://u:hunter2@p:9090",
    })  # fmt: skip
    assert "hunter2" in secret.secrets().values()  # redacted from logs like every secret
