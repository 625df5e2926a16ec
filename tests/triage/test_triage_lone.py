"""A delivery of one firing alert (`triage_lone.cypher`): read and, when the alert opens a new
incident, written in one query, with the incidents, alerts, tasks and properties
alert-by-alert triage (`triage_alert`) gives; everything else (a join, a group, a stored key, a
flap, an ambiguous alias) writes nothing there and goes on as before from what it read."""

from __future__ import annotations

import json
import random
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from adapters.falkordb import EmbeddedFalkorDB, GraphStore, TenantGraph, graph_name
from agents.triage.alerts import NormalizedAlert
from agents.triage.triage import TriageReport, triage
from gateway.cli.demo import rfc3339
from gateway.http.payloads import normalize, parse_body
from gateway.world import demo_world_path, import_world, load_world
from tests.triage.test_triage_batches import graph_queries

START = datetime(2026, 11, 5, tzinfo=UTC)
WINDOW_MS = 600_000
HOLD_MS = 5_000
REOPEN_MS = 600_000
#: Label sets naming the demo world's components: linked ones (checkout calls payment and cart;
#: cart uses valkey-cart), a far one (ad), postgres by an alias (postgresql), users of one
#: dependency (accounting and fraud-detection consume orders; accounting and product-catalog
#: use postgres: linked when one Alertmanager group holds them), cart by a pod name only, an
#: alias two components share (`shared-host`: Python's row order would pick), and none.
LABELS = [
    {"service": "checkout"}, {"service": "payment"}, {"service": "cart"},
    {"service": "valkey-cart"}, {"service": "ad"}, {"service": "postgresql"},
    {"service": "accounting"}, {"service": "fraud-detection"}, {"service": "product-catalog"},
    {"pod": "cart-5d9f7c8b4-abcde"}, {"app": "no-such-app", "job": "frontend"},
    {"service": "shared-host"}, {"service": "no-such-service"},
]  # fmt: skip
GROUPS = ['{}:{team="a"}', '{}:{team="b"}', ""]


def world_graph(store: GraphStore, tenant: str) -> TenantGraph:
    """The demo world, with `shared-host` an alias of both ad and email."""
    world = load_world(demo_world_path())
    for component in world.components:
        if component.id in ("ad", "email"):
            component.hostnames = "shared-host"
    graph = store.graph(graph_name(tenant))
    graph.ensure_schema()
    import_world(graph, world)
    return graph


def delivery(labels: dict[str, str], group: str, fingerprint: str, starts: datetime,
             ends: datetime | None = None) -> list[NormalizedAlert]:  # fmt: skip
    """One Alertmanager notification of one alert (resolved when `ends` is given)."""
    status = "resolved" if ends else "firing"
    alert = {
        "status": status, "labels": {"alertname": "Lone", "severity": "critical", **labels},
        "annotations": {"summary": f"lone {fingerprint}"}, "startsAt": rfc3339(starts),
        "endsAt": rfc3339(ends) if ends else "0001-01-01T00:00:00Z",
        "generatorURL": "http://prometheus:9090/graph", "fingerprint": fingerprint,
    }  # fmt: skip
    body = {
        "version": "4", "groupKey": group, "truncatedAlerts": 0, "status": status,
        "receiver": "blast-radius", "groupLabels": {}, "commonLabels": {},
        "commonAnnotations": {}, "externalURL": "http://alertmanager:9093", "alerts": [alert],
    }  # fmt: skip
    return normalize(parse_body(json.dumps(body).encode()), "warning")


def stream(count: int, seed: int) -> list[list[NormalizedAlert]]:
    """`count` one-alert deliveries over eight hours: mostly new alerts (joining, opening or
    held), some resent, resolved, or firing again after their resolve (flapping, or later)."""
    rng = random.Random(seed)
    out: list[list[NormalizedAlert]] = []
    fired: list[tuple[dict[str, str], str, str, datetime]] = []
    resolved: list[tuple[dict[str, str], str, str, datetime]] = []
    for n in range(count):
        roll = rng.random()
        if fired and roll < 0.1:
            out.append(out[rng.randrange(len(out))])  # a resend
            continue
        if fired and roll < 0.3:
            labels, group, fingerprint, starts = fired[rng.randrange(len(fired))]
            ends = starts + timedelta(minutes=3)
            resolved.append((labels, group, fingerprint, ends))
            out.append(delivery(labels, group, fingerprint, starts, ends))
            continue
        if resolved and roll < 0.45:  # the same alert again, a new episode
            labels, group, fingerprint, ended = resolved[rng.randrange(len(resolved))]
            starts = ended + timedelta(minutes=rng.choice([2, 5, 20]))
        else:
            labels, group = rng.choice(LABELS), rng.choice(GROUPS)
            fingerprint = f"{seed:04x}{n:012x}"
            starts = START + timedelta(seconds=rng.randrange(8 * 3600))
        fired.append((labels, group, fingerprint, starts))
        out.append(delivery(labels, group, fingerprint, starts))
    return out


def summary(report: TriageReport) -> tuple[Any, ...]:
    """A report comparable across graphs (incident ids are random)."""
    return (report.accepted, report.unmatched, report.unfired, len(report.incidents),
            len(report.opened), len(report.reopened), len(report.resolved),
            len(report.merged))  # fmt: skip


#: Properties set from the database clock (`timestamp()`): compared as set or not.
CLOCK = {"received_at", "created_at", "reopened_at", "hold_until", "not_before"}


def nodes(graph: TenantGraph) -> list[Any]:
    """Every alert with its properties, how it joined, its component, its incident's
    properties and its incident's tasks' (`triage_nodes_seen`), with ids as the lowest alert
    key of their incident and the clock's values as set or not."""
    rows = graph.rows("triage_nodes_seen")
    names: dict[str, str] = {}
    for row in sorted(rows, key=lambda r: r["alert"]["key"]):
        if row["incident"] is not None:
            names.setdefault(row["incident"]["id"], f"inc<{row['alert']['key']}>")

    def plain(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: bool(v) if k in CLOCK else plain(v) for k, v in sorted(value.items())}
        if isinstance(value, list):
            return [plain(v) for v in value]
        if isinstance(value, str):
            value = re.sub(r"inc-[0-9a-f]{12}", lambda m: names.get(m.group(0), "inc?"), value)
            return re.sub(r"task-[0-9a-f]{32}", "task", value)
        return value

    return sorted((plain(row) for row in rows), key=lambda r: r["alert"]["key"])


def recorded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the queries run from now on (every one goes through `TenantGraph.rows`)."""
    seen: list[str] = []
    original = TenantGraph.rows

    def recording(self: TenantGraph, query: str, params: Any = None) -> list[dict[str, Any]]:
        seen.append(query)
        return original(self, query, params)

    monkeypatch.setattr(TenantGraph, "rows", recording)
    return seen


@pytest.mark.parametrize(("seed", "hops"), [(1, 1), (2, 2), (3, 1)])
def test_lone_deliveries_give_what_alert_by_alert_triage_gives(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch, seed: int, hops: int
) -> None:
    lone = world_graph(store, f"lone{seed}")
    single = world_graph(store, f"lonesingle{seed}")
    seen = recorded(monkeypatch)
    paths: list[list[str]] = []
    for alerts in stream(160, seed):
        done = len(seen)
        ours = triage(lone, alerts, WINDOW_MS, hops, hold_ms=HOLD_MS, reopen_ms=REOPEN_MS)
        paths.append(seen[done:])
        theirs = triage(single, alerts, WINDOW_MS, hops, batch=False, hold_ms=HOLD_MS,
                        reopen_ms=REOPEN_MS)  # fmt: skip
        assert summary(ours) == summary(theirs), alerts[0].key
    assert nodes(lone) == nodes(single)
    firing = [p for p in paths if p and p[0] == "triage_lone"]
    # both ways were taken: opened in one query, and every other case on as before from the
    # same read (`triage_alert`, or `triage_known` for a stored key)
    found = nodes(lone)
    held = [r for r in found if r["incident"] and r["incident"]["hold_until"]]
    reopened = [r for r in found if r["incident"] and r["incident"].get("reopens")]
    assert len(found) >= 100 and (held or hops == 2) and reopened  # the rules were at work
    assert sum(p == ["triage_lone"] for p in firing) >= 15
    assert sum("triage_alert" in p for p in firing) >= 15
    assert all(p == ["triage_lone"] or p[1] in ("triage_alert", "triage_known") for p in firing)
    assert all("triage_lone" not in p for p in paths if p[0] != "triage_lone")


def test_a_new_incident_is_one_query_and_anything_else_reads_once(
    store: GraphStore, falkordb: EmbeddedFalkorDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = world_graph(store, "lonecount")
    other = world_graph(store, "lonecount2")
    starts = START + timedelta(hours=1)
    checkout = delivery({"service": "checkout"}, GROUPS[0], "c0", starts)
    before = graph_queries(falkordb)
    opened = triage(graph, checkout, WINDOW_MS, hold_ms=HOLD_MS, reopen_ms=REOPEN_MS)
    assert graph_queries(falkordb) - before == 1
    assert opened.accepted == 1 and opened.opened == opened.incidents and opened.unmatched == []
    seen = recorded(monkeypatch)
    # another tenant's graph holds nothing of it: the same alert opens an incident there too
    assert triage(other, checkout, WINDOW_MS).opened and seen == ["triage_lone"]
    # payment, which checkout calls, joins checkout's incident: read once, then triage_alert
    # and the merge check of a join
    seen.clear()
    payment = delivery({"service": "payment"}, GROUPS[1], "p0", starts + timedelta(minutes=1))
    joined = triage(graph, payment, WINDOW_MS, hold_ms=HOLD_MS, reopen_ms=REOPEN_MS)
    assert joined.incidents == opened.incidents and joined.opened == []
    assert seen[:2] == ["triage_lone", "triage_alert"] and "triage_context" not in seen
    seen.clear()  # a resend: the key is stored
    again = triage(graph, checkout, WINDOW_MS, hold_ms=HOLD_MS, reopen_ms=REOPEN_MS)
    assert again.incidents == opened.incidents and seen[:2] == ["triage_lone", "triage_known"]
    seen.clear()  # an alert on no component, of checkout's group: it joins by the group key
    grouped = delivery({"service": "no-such-service"}, GROUPS[0], "n0", starts)
    assert triage(graph, grouped, WINDOW_MS).incidents == opened.incidents
    assert seen[:2] == ["triage_lone", "triage_alert"]
    seen.clear()  # a resolve is no lone firing alert: triage_context as before
    ended = delivery({"service": "ad"}, "", "a0", starts, starts + timedelta(minutes=2))
    assert triage(graph, ended, WINDOW_MS).unfired == [ended[0].key]
    assert seen[0] == "triage_context"


def test_a_written_lone_alert_gets_no_links_back_and_one_left_to_triage_gets_them(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = world_graph(store, "lonelinks")
    replies: list[dict[str, Any]] = []
    original = TenantGraph.rows

    def kept(self: TenantGraph, query: str, params: Any = None) -> list[dict[str, Any]]:
        found = original(self, query, params)
        replies.extend(found if query == "triage_lone" else [])
        return found

    monkeypatch.setattr(TenantGraph, "rows", kept)
    starts = START + timedelta(hours=3)
    opened = triage(graph, delivery({"service": "checkout"}, GROUPS[0], "k0", starts), WINDOW_MS)
    # payment, which checkout calls, joins: triage_alert goes on from the links read
    payment = delivery({"service": "payment"}, GROUPS[1], "k1", starts + timedelta(minutes=1))
    joined = triage(graph, payment, WINDOW_MS)
    assert joined.incidents == opened.incidents and len(opened.opened) == 1
    assert [r["written"] for r in replies] == [True, False]
    assert replies[0]["links"] == []
    links = {(link["origin"], link["name"], link["way"]) for link in replies[1]["links"]}
    assert ("payment", "checkout", "up") in links and ("payment", "payment", "down") in links


def test_a_lone_alert_on_an_alias_two_components_share_is_left_to_triage_alert(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = world_graph(store, "loneshared")
    seen = recorded(monkeypatch)
    report = triage(graph, delivery({"service": "shared-host"}, "", "s0", START), WINDOW_MS)
    assert seen[:2] == ["triage_lone", "triage_alert"] and len(report.opened) == 1
    seen.clear()  # an alias of one component (postgres) is resolved in the query
    postgres = delivery({"service": "postgresql"}, "", "s1", START)
    report = triage(graph, postgres, WINDOW_MS)
    assert seen == ["triage_lone"] and report.unmatched == []
    stored = {r["alert"]["key"]: r["component"] for r in graph.rows("triage_nodes_seen")}
    assert stored[postgres[0].key] == "postgres"
