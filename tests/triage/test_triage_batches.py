"""Batched triage (agents/triage/triage.py `Triage`): a storm is written in a few queries and
grouped
exactly as alert-by-alert triage groups it; a resend and a resolve go in batches too."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

import pytest
import redis
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.falkordb import EmbeddedFalkorDB, GraphStore, TenantGraph
from agents.triage.alerts import NormalizedAlert
from agents.triage.triage import Links, dependency_order, triage
from gateway.cli.demo import rfc3339
from gateway.http.payloads import normalize, parse_body
from tests.conftest import demo_graph

START = datetime(2026, 11, 3, tzinfo=UTC)
WINDOW_MS = 600_000
#: Linked components of the demo world (checkout calls payment and cart; cart uses valkey-cart),
#: one far from them (ad), and a name no component has.
SERVICES = ["checkout", "payment", "cart", "valkey-cart", "ad", "no-such-service"]


def storm(
    count: int, seed: int, spread_s: int = 0, status: str = "firing"
) -> list[NormalizedAlert]:
    """`count` alerts over SERVICES, start times spread over `spread_s` seconds (0: all within
    a second), as one Alertmanager notification."""
    rng = random.Random(seed)
    alerts = []
    for n in range(count):
        service = SERVICES[rng.randrange(len(SERVICES))]
        starts = START + timedelta(seconds=rng.randrange(spread_s + 1), milliseconds=n % 1000)
        alerts.append({
            "status": status, "labels": {"alertname": "Storm", "service": service,
                                         "severity": rng.choice(["warning", "critical"]),
                                         "instance": str(n)},
            "annotations": {"summary": f"storm {n}"}, "startsAt": rfc3339(starts),
            "endsAt": rfc3339(starts + timedelta(minutes=1)) if status == "resolved"
                      else "0001-01-01T00:00:00Z",
            "generatorURL": "http://prometheus:9090/graph", "fingerprint": f"{n:016x}",
        })  # fmt: skip
    body = {
        "version": "4", "groupKey": "{}:{storm=\"1\"}", "truncatedAlerts": 0, "status": status,
        "receiver": "blast-radius", "groupLabels": {}, "commonLabels": {},
        "commonAnnotations": {}, "externalURL": "http://alertmanager:9093", "alerts": alerts,
    }  # fmt: skip
    return normalize(parse_body(json.dumps(body).encode()), "warning")


def grouping(graph: TenantGraph) -> list[tuple[str, str, int, str, tuple[str, ...]]]:
    """Each open or resolved incident as (status, severity, firing, its alerts' fingerprints
    joined, components sorted): comparable across graphs (incident ids are random)."""
    return sorted(
        (r["status"], r["severity"], int(r["firing"]), ",".join(sorted(r["fingerprints"])),
         tuple(sorted(r["components"])))
        for r in graph.rows("bench_incident_groups")
    )  # fmt: skip


def graph_queries(falkordb: EmbeddedFalkorDB) -> int:
    """GRAPH.QUERY calls the session's server has answered so far."""
    with redis.Redis.from_url(falkordb.url, decode_responses=True) as client:
        stats = client.info("commandstats")
    return int(stats.get("cmdstat_graph.QUERY", {}).get("calls", 0))


def test_a_storm_is_written_in_a_few_queries_and_every_alert_is_in_the_graph(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph
) -> None:
    alerts = storm(1200, seed=1)
    before = graph_queries(falkordb)
    report = triage(graph, alerts, WINDOW_MS)
    used = graph_queries(falkordb) - before
    assert report.accepted == 1200
    assert used < 40, used  # alert by alert it was more than 1,200
    groups = grouping(graph)
    assert sum(len(g[3].split(",")) for g in groups) == 1200
    assert sum(g[2] for g in groups) == 1200  # every alert counted firing once


@pytest.mark.parametrize(("seed", "spread_s"), [(2, 1800), (5, 3600), (9, 300)])
def test_a_batched_storm_groups_alerts_as_alert_by_alert_triage_does(
    store: GraphStore, seed: int, spread_s: int
) -> None:
    # start times over up to an hour with a 10-minute window: some alerts cannot join the
    # incident the first alert of their component opened, and go through triage_alert alone;
    # a resend of part of the storm, some of it resolved, comes in the same delivery
    alerts = storm(400, seed=seed, spread_s=spread_s)
    resent = storm(400, seed=seed, spread_s=spread_s, status="resolved")[::7]
    alerts = alerts[:200] + resent[:10] + alerts[200:] + resent[10:]
    batched = demo_graph(store, f"stormbatch{seed}")
    single = demo_graph(store, f"stormsingle{seed}")
    triage(batched, alerts, WINDOW_MS)
    triage(single, alerts, WINDOW_MS, batch=False)
    assert len(grouping(batched)) >= 2
    assert grouping(batched) == grouping(single)


def test_a_resend_and_a_resolve_go_in_batches(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph
) -> None:
    firing = storm(600, seed=3)
    triage(graph, firing, WINDOW_MS)
    before = graph_queries(falkordb)
    again = triage(graph, firing, WINDOW_MS)
    assert again.accepted == 600 and again.opened == []
    assert graph_queries(falkordb) - before < 10
    assert sum(g[2] for g in grouping(graph)) == 600
    resolved = storm(600, seed=3, status="resolved")
    report = triage(graph, resolved, WINDOW_MS)
    assert report.accepted == 600
    groups = grouping(graph)
    assert {g[0] for g in groups} == {"resolved"}
    assert sorted(report.resolved) == sorted(set(report.resolved)) and len(report.resolved) == len(
        groups
    )
    cleared = graph.one("bench_cleared_tasks")
    assert cleared is not None and cleared["n"] == 600


@settings(max_examples=300, deadline=None)
@given(
    named=st.lists(st.sampled_from(["a", "b", "c", None, ""]), max_size=12),
    links=st.dictionaries(st.sampled_from(["a", "b", "c"]),
                          st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=3)),
)  # fmt: skip
def test_the_dependency_order_is_a_stable_sort_by_rank(named, links):
    """Alerts in order of their component's rank (breadth first along the links), each on no
    component taking the rank of the alert before it, the delivery's order otherwise."""
    alerts = [NormalizedAlert(f"k{n}", "f", "firing", "", "", "", 0, None, {}, {}, "", "", "", "",
                              "alertmanager", "null") for n in range(len(named))]  # fmt: skip
    components = {a.key: c for a, c in zip(alerts, named, strict=True)}
    linked = {name: Links(names=near) for name, near in links.items()}
    for name in filter(None, named):
        linked.setdefault(name, Links())
    rank: dict[str, int] = {}
    for name in linked:  # the ranks, as `dependency_order` works them out
        queue = [name]
        while queue:
            current = queue.pop(0)
            if current not in rank:
                rank[current] = len(rank)
                queue += [n for n in linked[current].names if n in linked and n not in rank]
    keys: list[int] = []
    for alert in alerts:
        component = components[alert.key]
        keys.append(rank[component] if component else (keys[-1] if keys else -1))
    expected = [a for _, _, a in sorted(zip(keys, range(len(alerts)), alerts, strict=True))]
    assert dependency_order(alerts, components, linked) == expected
