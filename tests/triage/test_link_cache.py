"""What triage remembers of the topology (agents/triage/link_cache.py): a delivery naming the
components of an earlier one is not walked again, and a topology change, by whatever process,
is walked at once."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import redis

from adapters.falkordb import EmbeddedFalkorDB, GraphStore, TenantGraph, graph_name
from agents.triage import link_cache
from agents.triage import triage as triage_module
from agents.triage.alerts import NormalizedAlert
from agents.triage.link_cache import LINKS
from agents.triage.triage import remember_topology, triage
from gateway.cli.demo import rfc3339
from gateway.http.payloads import normalize, parse_body
from gateway.ops.runtime import Runtime
from gateway.world import import_world, load_world
from tests.conftest import make_settings

WINDOW_MS = 600_000
START = datetime(2026, 11, 4, tzinfo=UTC)
#: web calls api; ledger stands apart until the second version of the world, where api calls it
#: (web -> api -> ledger: two hops, within the correlation reach).
WORLD = """
components:
  - {id: web, kind: service}
  - {id: api, kind: service}
  - {id: ledger, kind: service}
edges:
  - {from: web, to: api, type: CALLS}
EDGES
default_team: core
teams:
  - name: core
    slack_channel: "#core"
    owns: [web, api, ledger]
    members: [{name: Ann Example, email: ann@example.com, slack_user_id: UANN}]
"""


def world(tmp_path: Path, linked: bool) -> Path:
    """The world file, with api -> ledger when `linked`."""
    path = tmp_path / ("linked.yaml" if linked else "apart.yaml")
    edge = "  - {from: api, to: ledger, type: CALLS}" if linked else ""
    path.write_text(WORLD.replace("EDGES", edge), encoding="utf-8")
    return path


def imported(store: GraphStore, name: str, tmp_path: Path, linked: bool) -> TenantGraph:
    """The graph `name` with its schema and `world(tmp_path, linked)` imported."""
    graph = store.graph(name)
    graph.ensure_schema()
    import_world(graph, load_world(world(tmp_path, linked)))
    return graph


def delivery(hours: int, status: str = "firing") -> list[NormalizedAlert]:
    """Six alerts, three on web and three on ledger, starting `hours` after START, as one
    notification; resolved a minute later with `status` "resolved"."""
    starts = START + timedelta(hours=hours)
    ends = rfc3339(starts + timedelta(minutes=1)) if status == "resolved" else ""
    alerts = [
        {"status": status,
         "labels": {"alertname": "HighErrorRate", "service": service, "instance": f"{n}"},
         "annotations": {}, "startsAt": rfc3339(starts + timedelta(milliseconds=n)),
         "endsAt": ends or "0001-01-01T00:00:00Z", "fingerprint": f"{hours:04x}{n:012x}"}
        for n, service in enumerate(["web", "ledger"] * 3)
    ]  # fmt: skip
    body = {"version": "4", "groupKey": f"{{}}:{{h=\"{hours}\"}}", "status": status,
            "receiver": "blast-radius", "alerts": alerts}  # fmt: skip
    return normalize(parse_body(json.dumps(body).encode()), "warning")


def storm_then_resolved(graph: TenantGraph, hours: int) -> list[list[str]]:
    """`delivery(hours)` triaged, then resolved (its incidents closed: the next delivery's
    alerts open incidents of their own); the components of each incident it opened."""
    triage(graph, delivery(hours), WINDOW_MS)
    opened = open_components(graph)
    triage(graph, delivery(hours, "resolved"), WINDOW_MS)
    assert open_components(graph) == []
    return opened


def open_components(graph: TenantGraph) -> list[list[str]]:
    """The components of each open incident, sorted."""
    return sorted(
        sorted(row["components"]) for row in graph.rows("bench_incident_groups")
        if row["status"] == "open"
    )  # fmt: skip


def triage_reads(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """A list that gets what the database answers to each `triage_context` read from now on."""
    read: list[dict[str, Any]] = []
    original = TenantGraph.one

    def one(self: TenantGraph, query: str, params: dict[str, Any] | None = None) -> Any:
        answer = original(self, query, params)
        if query == "triage_context":
            read.append(answer or {})
        return answer

    monkeypatch.setattr(TenantGraph, "one", one)
    return read


def test_a_remembered_walk_is_not_read_again_until_the_topology_changes(
    store: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = imported(store, graph_name("linkcache"), tmp_path, linked=False)
    read = triage_reads(monkeypatch)

    assert storm_then_resolved(graph, 0) == [["ledger"], ["web"]]
    assert {m["name"] for m in read[0]["matched"]} == {"web", "ledger"}
    assert {row["origin"] for row in read[0]["links"]} == {"web", "ledger"}

    # the same topology: nothing matched or walked, the same incidents
    assert storm_then_resolved(graph, 2) == [["ledger"], ["web"]]
    assert len(read) == 4 and all(r["matched"] == [] and r["links"] == [] for r in read[1:])

    # the world changes behind triage's back (an import; any process could have run it)
    import_world(graph, load_world(world(tmp_path, linked=True)))
    triage(graph, delivery(4), WINDOW_MS)
    assert {row["origin"] for row in read[-1]["links"]} == {"web", "ledger"}, "walked again"
    assert open_components(graph) == [["ledger", "web"]]


def test_a_graph_dropped_and_imported_again_is_walked_again(
    falkordb: EmbeddedFalkorDB, store: GraphStore, tmp_path: Path
) -> None:
    # the version is random, never a counter a new graph of the same name would repeat
    name = graph_name("linkcachedropped")
    graph = imported(store, name, tmp_path, linked=False)
    triage(graph, delivery(0), WINDOW_MS)
    with redis.Redis.from_url(falkordb.url) as client:
        client.execute_command("GRAPH.DELETE", name)
    graph = imported(store, name, tmp_path, linked=True)
    triage(graph, delivery(0), WINDOW_MS)
    assert open_components(graph) == [["ledger", "web"]]


def test_a_flood_of_label_values_starts_the_memory_over(
    store: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # label values come from senders: what one graph remembers is bounded
    monkeypatch.setattr(link_cache, "MAX_NAMES", 4)
    graph = imported(store, graph_name("linkcacheflood"), tmp_path, linked=False)
    for hours in range(0, 6, 2):
        alerts = delivery(hours)
        for n, alert in enumerate(alerts):
            alert.labels = alert.labels | {"pod": f"web-{hours}-{n}"}
        triage(graph, alerts, WINDOW_MS)
        remembered = LINKS.ask(graph.name, ["web"], 4).remembered
        assert remembered is not None and len(remembered.matched) <= 4


def test_a_topology_remembered_at_start_leaves_the_first_storm_nothing_to_walk(
    store: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # what the gateway reads when it starts (`remember_topology`, by `Runtime.serve_http`):
    # the first delivery's read then matches and walks nothing, and groups as one that walked
    graph = imported(store, graph_name("linkcachestart"), tmp_path, linked=True)
    monkeypatch.setattr(triage_module, "REMEMBER_CHUNK", 2)  # three names: two reads
    assert remember_topology(graph, hops=2) == (3, len(walk_all(graph)))
    read = triage_reads(monkeypatch)
    triage(graph, delivery(0), WINDOW_MS)
    assert read[0]["matched"] == [] and read[0]["links"] == []
    assert open_components(graph) == [["ledger", "web"]]  # web -> api -> ledger, remembered


def walk_all(graph: TenantGraph) -> list[dict[str, Any]]:
    """Every path `triage_context` walks from the world's three components (reach 2)."""
    params = {"candidates": ["web", "api", "ledger"], "keys": [], "hops": 4, "group_keys": [],
              "lo": 1, "hi": 0, "fingerprints": [], "topology": "", "fresh": ["web", "api",
              "ledger"], "walked": []}  # fmt: skip
    row = graph.one("triage_context", params)
    assert row is not None and row["links"]
    return list(row["links"])


def test_serve_remembers_each_tenants_topology(falkordb: EmbeddedFalkorDB, tmp_path: Path) -> None:
    settings = make_settings(falkordb, tmp_path, "linkcacheserve")
    runtime = Runtime(settings)
    store = runtime.open()
    try:
        graph = store.graph(graph_name("linkcacheserve"))
        import_world(graph, load_world(world(tmp_path, linked=False)))
        runtime.serve_http("127.0.0.1", 0)
        assert runtime.topology_remembered.wait(10)
        asked = LINKS.ask(graph.name, ["web", "ledger", "no-such"], 4)
        assert asked.params["fresh"] == ["no-such"] and asked.params["walked"] == ["ledger", "web"]
    finally:
        runtime.close()
