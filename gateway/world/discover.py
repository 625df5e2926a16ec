"""The live call graph: dependency edges and call rates from the service-graph metrics
(`traces_service_graph_request_total{client, server, connection_type}`, docs/architecture.md,
evidence).

A pure function turns the calls Prometheus reports into a world model: each `client` and
`server` is mapped to a component by name or alias (a service the graph does not know yet is
added as a service, or a datastore when it is the server of a `database` connection: the
traces name it); each pair with calls in the window is an edge (CALLS, or READS_WRITES to a
datastore) with its rate in calls/s. `messaging_system` pairs are producer -> consumer, not a
dependency: they are reported, not added. Applied with source `prometheus:<url>`, an edge
with no calls in a later window is retired by the writer. Discovery never touches teams or
on-call shifts, and a window ending in the past (a backfill) retires no edge seen after it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from adapters.falkordb import TenantGraph
from adapters.prometheus import Prometheus, service_graph_calls
from gateway.world.model import ComponentSpec, EdgeSpec, WorldSpec, plain_name
from gateway.world.writer import ImportReport, apply_world


def discovered_world(
    calls: list[dict[str, Any]], known: list[dict[str, Any]], source: str
) -> tuple[WorldSpec, list[str]]:
    """Calls (`service_graph_calls`) and the graph's components (`world_components` rows) to
    a world model, and notes on what was not added."""
    names = {row["name"]: row["name"] for row in known}
    for row in known:
        names.update({alias: row["name"] for alias in row["aliases"] or []})
    kinds = {row["name"]: row["kind"] for row in known}
    components: dict[str, ComponentSpec] = {}
    edges: dict[tuple[str, str, str], EdgeSpec] = {}
    notes: list[str] = []
    for call in sorted(calls, key=lambda c: (c["client"], c["server"])):
        client, server = call["client"], call["server"]
        if call["rate"] <= 0 or client == server:
            continue
        if call["connection_type"] == "messaging_system":
            notes.append(f"{client} -> {server}: messaging (producer -> consumer), not added")
            continue
        try:
            plain_name(client)
            plain_name(server)
        except ValueError:
            notes.append(f"{client!r} -> {server!r}: not a usable component name")
            continue
        ends = []
        for name, role in ((client, "client"), (server, "server")):
            canonical = names.get(name, name)
            datastore = role == "server" and call["connection_type"] == "database"
            kind = kinds.get(canonical) or ("datastore" if datastore else "service")
            components.setdefault(canonical, ComponentSpec(id=canonical, kind=kind, source=source))
            ends.append(canonical)
        caller, callee = ends
        edge = EdgeSpec.model_validate(
            {"from": caller, "to": callee, "origin": source, "rate": call["rate"],
             "basis": "traced",
             "type": "READS_WRITES" if components[callee].kind == "datastore" else "CALLS"}
        )  # fmt: skip
        edges[edge.key()] = edge
    return WorldSpec(components=list(components.values()), edges=list(edges.values())), notes


def discover(
    graph: TenantGraph,
    prometheus: Prometheus,
    url: str,
    window: str = "1h",
    at: datetime | None = None,
) -> ImportReport:
    """Read the service graph over `window` ending at `at` (default now) and apply it to
    `graph` as source `prometheus:<url>`. Raises `AdapterError` when Prometheus fails (nothing
    is written then) and `TopologyError` as the writer does."""
    at = at or datetime.now(UTC)
    calls = service_graph_calls(prometheus, window, at.timestamp())
    source = f"prometheus:{url.rstrip('/')}"  # one identity with or without the slash
    world, notes = discovered_world(calls, graph.rows("world_components"), source)
    report = apply_world(graph, world, [source], at, oncall=False)
    report.notes += notes
    return report
