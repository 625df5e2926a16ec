"""Alerts from a compose deployment's Prometheus and cAdvisor name their component by
`instance` (`orders:8080`) or by cAdvisor's `container_label_com_docker_compose_service`.
Bug: both were `unmatched` on a compose-imported world, whose only names are the services'."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from adapters.falkordb import TenantGraph
from agents.triage.alerts import NormalizedAlert
from agents.triage.triage import component_candidates, triage
from gateway.cli.demo import rfc3339
from gateway.http.payloads import normalize, parse_body

START = datetime(2026, 11, 5, tzinfo=UTC)
#: Labels -> the demo world's component the alert is on (None: unmatched).
CASES: list[tuple[dict[str, str], str | None]] = [
    ({"instance": "checkout:8080"}, "checkout"),  # a compose scrape target, no job
    ({"job": "services", "instance": "payment:9464"}, "payment"),  # a generic scrape job
    ({"job": "blackbox", "instance": "http://cart:8080/health"}, "cart"),  # the probed URL
    (  # cAdvisor: its own job and instance, the service in a container label
        {
            "job": "cadvisor",
            "instance": "cadvisor:8080",
            "name": "demo-email-1",
            "container_label_com_docker_compose_service": "email",
        },
        "email",
    ),
    # a label naming the component wins: the instance is not read at all
    ({"service": "ad", "instance": "payment:8080"}, "ad"),
    ({"pod": "quote-5d9f7c8b4-abcde", "instance": "payment:8080"}, "quote"),
    ({"job": "shipping", "instance": "payment:8080"}, "shipping"),  # job first, as before
    ({"instance": "10.0.0.5:9100"}, None),
]


def delivery(
    labels: list[dict[str, str]], starts: datetime, first: int = 0
) -> list[NormalizedAlert]:
    """One Alertmanager notification of one firing alert per label set, `Down<first + n>`."""
    alerts = [
        {"status": "firing", "labels": {"alertname": f"Down{n}", "severity": "critical", **each},
         "annotations": {"summary": "down"}, "startsAt": rfc3339(starts),
         "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "http://prometheus:9090/graph",
         "fingerprint": f"{hash(json.dumps(each, sort_keys=True)) & 0xFFFFFFFF:08x}{n:08x}"}
        for n, each in enumerate(labels, first)
    ]  # fmt: skip
    body = {
        "version": "4", "groupKey": "{}:{}", "truncatedAlerts": 0, "status": "firing",
        "receiver": "blast-radius", "groupLabels": {}, "commonLabels": {},
        "commonAnnotations": {}, "externalURL": "http://alertmanager:9093", "alerts": alerts,
    }  # fmt: skip
    return normalize(parse_body(json.dumps(body).encode()), "warning")


def components(graph: TenantGraph) -> dict[str, str | None]:
    return {row["alert"]["alertname"]: row["component"] for row in graph.rows("triage_nodes_seen")}


@pytest.mark.parametrize("together", [False, True], ids=["one by one", "one delivery"])
def test_instance_host_and_the_compose_service_label_name_the_component(
    graph: TenantGraph, together: bool
) -> None:
    labels = [each for each, _ in CASES]
    if together:
        report = triage(graph, delivery(labels, START), 600_000)
        unmatched = report.unmatched
    else:
        unmatched = []
        for n, each in enumerate(labels):
            alerts = delivery([each], START + timedelta(minutes=30 * n), first=n)
            unmatched += triage(graph, alerts, 600_000).unmatched
    found = components(graph)
    assert found == {f"Down{n}": want for n, (_, want) in enumerate(CASES)}
    assert len(unmatched) == 1


def test_the_instance_is_read_only_without_a_naming_label() -> None:
    assert component_candidates({"instance": "orders:8080"}) == ["orders"]
    assert component_candidates({"job": "node", "instance": "orders:9100"}) == ["node", "orders"]
    assert component_candidates({"service": "web", "instance": "orders:8080"}) == ["web"]
    assert component_candidates({"instance": "user@orders:8080/x"}) == ["orders"]
    assert component_candidates({"instance": "not a host"}) == []
