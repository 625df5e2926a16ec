"""Graph tools: where the alerting components lead (coverage walk) and what is next to a
component (neighbours with edge types). Both read the world of `cypher/`, never write.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from agents.investigate.tools import prefetch
from agents.investigate.tools.base import (
    Tool,
    ToolContext,
    ToolInput,
    ToolResult,
    component_names,
    rows_result,
)

#: Longest dependency walk (hops); docs/architecture.md, FalkorDB facts: `*0..6` stays fast up to
#: 100k
#: components.
MAX_HOPS = 6


class WalkInput(ToolInput):
    """Walk from these components (default: the incident's alerting ones), at most `hops`."""

    components: list[str] | None = Field(
        None, description="start components; omit for the incident's alerting components"
    )
    hops: int = Field(MAX_HOPS, ge=1, le=MAX_HOPS, description="longest path, in edges")


def coverage_walk(ctx: ToolContext, args: WalkInput) -> ToolResult:
    """Every component reachable from the start components along business dependency edges.

    `data`: rows `{name, kind, client, covers: [start components reaching it], distance (sum
    of the shortest hops from each), via_topic}`, most covering and nearest first. Data flows
    through topics: a consumer also depends on the producers of the topics it consumes
    (CONSUMES -> topic <- PUBLISHES, one hop more), so producers and their own dependencies
    are reached too (`via_topic` names the topic when that is how a start component reaches it);
    a producer does not depend on the other producers of a topic it publishes to.
    """
    start = args.components if args.components is not None else ctx.alerting
    if not start:
        return ToolResult(status="no_data", data=[], detail="no start component")
    nodes, depth = _walk(ctx, start, args.hops)
    via: dict[str, str] = {}
    topics = sorted(name for name, node in nodes.items() if node["kind"] == "topic")
    links = prefetch.topic_links(ctx.prefetched, topics) if topics else []
    if links is None:
        links = ctx.graph.rows("topic_producers", {"topics": topics})
    # producer -> {start component: hops to it through the topic}, from the start components
    # that reach the topic as (or through) one of its consumers: a producer that reaches it by
    # publishing does not depend on the topic's other producers (two services publishing to
    # one event bus would each reach the other, a cycle that leaves every measured cause
    # "about equally" blamed)
    through: dict[str, dict[str, int]] = {}
    reading: dict[str, dict[str, int]] = {}  # topic -> its readers' hops, once per topic
    for link in links:
        topic = link["topic"]
        if topic not in reading:
            reading[topic] = _read_hops(depth, topic, link["consumers"])
        for origin, hops in reading[topic].items():
            best = through.setdefault(link["producer"], {})
            if hops + 1 < best.get(origin, args.hops + 1) and hops + 1 <= args.hops:
                best[origin] = hops + 1
                via[link["producer"]] = link["topic"]
    if through:
        beyond_nodes, beyond = _walk(ctx, sorted(through), args.hops)
        for name, from_producer in beyond.items():
            nodes.setdefault(name, beyond_nodes[name])
            mine = depth.setdefault(name, {})
            for producer, extra in from_producer.items():
                for origin, hops in through[producer].items():
                    if hops + extra < mine.get(origin, args.hops + 1) and hops + extra <= args.hops:
                        mine[origin] = hops + extra
                        via[name] = via[producer]
    rows = [
        nodes[name] | {
            "covers": sorted(per), "distance": sum(per.values()), "via_topic": via.get(name),
        }
        for name, per in depth.items() if per
    ]  # fmt: skip
    rows.sort(key=lambda r: (-len(r["covers"]), r["distance"], r["name"]))
    return rows_result(rows, "components reached", raw={"start": start, "hops": args.hops})


def _read_hops(
    depth: dict[str, dict[str, int]], topic: str, consumers: list[str]
) -> dict[str, int]:
    """Start component -> the fewest hops to `topic` as its reader: the topic itself (a walk
    that starts at it: a lag named on the topic, 0) or through one of its `consumers` (the
    consumer's own depth + 1), for the start components that reach one of them (`depth`:
    `_walk`'s)."""
    read = {topic: 0} if topic in depth.get(topic, {}) else {}
    for consumer in consumers:
        for origin, hops in depth.get(consumer, {}).items():
            read[origin] = min(read.get(origin, hops + 1), hops + 1)
    return read


def _walk(
    ctx: ToolContext, start: list[str], hops: int
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, int]]]:
    """`coverage_walk.cypher` as (component -> {name, kind, client}, component -> {start
    component: shortest hops})."""
    nodes: dict[str, dict[str, Any]] = {}
    depth: dict[str, dict[str, int]] = {}
    rows = prefetch.walk_rows(ctx.prefetched, start, hops)
    if rows is None:
        rows = ctx.graph.rows("coverage_walk", {"alerting": start, "hops": hops})
    for r in rows:
        nodes[r["name"]] = {"name": r["name"], "kind": r["kind"], "client": bool(r["client"])}
        depth[r["name"]] = {a: int(d) for a, d in zip(r["covers"], r["depths"], strict=True)}
    return nodes, depth


class ComponentInput(ToolInput):
    """One component, by its name in the world."""

    component: str = Field(min_length=1, description="component name")


def neighbours(ctx: ToolContext, args: ComponentInput) -> ToolResult:
    """Direct neighbours of a component with the edge between them.

    `data`: rows `{name, kind, client, edge (CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON),
    direction ('out': the component depends on it; 'in': it depends on the component), purpose
    (business|config|telemetry), protocol, propagation (hard|soft|partial)}`.
    """
    rows = prefetch.neighbours(ctx.prefetched, args.component)
    if rows is None:
        rows = ctx.graph.rows("neighbours", {"component": args.component})
    rows.sort(key=lambda r: (r["direction"], r["edge"], r["name"]))
    return rows_result(rows, f"neighbours of {args.component}")


class PathInput(ToolInput):
    """A dependent and one of its (possibly indirect) dependencies."""

    source: str = Field(min_length=1, description="the dependent (e.g. an alerting component)")
    target: str = Field(min_length=1, description="the dependency (e.g. a suspected cause)")


def dependency_path(ctx: ToolContext, args: PathInput) -> ToolResult:
    """One shortest business dependency path from `source` to `target` (at most 6 hops).

    `data`: `{path: [names], edges: [types], hops}`; `no_data` when none exists.
    """
    row = ctx.graph.one("walk_path", {"from": args.source, "to": args.target})
    if row is None:
        return ToolResult(status="no_data", detail=f"no path {args.source} -> {args.target}")
    path = [str(name) for name in row["path"]]
    data = {"path": path, "edges": list(row["edges"]), "hops": int(row["hops"])}
    return ToolResult(status="ok", data=data, detail=" → ".join(path))


def call_reach(ctx: ToolContext, args: ComponentInput) -> ToolResult:
    """Which alerting components reach `component` along business edges of which none is only
    a compose `depends_on` (start order, not calls: `gateway.world.compose`), within 6 hops.

    `data`: rows `{name}`, sorted by name; an alerting component reaches itself.
    """
    rows = ctx.graph.rows(
        "call_reach", {"alerting": ctx.alerting, "cause": args.component, "hops": MAX_HOPS}
    )
    return rows_result(sorted(rows, key=lambda r: str(r["name"])), f"callers of {args.component}")


#: Alert labels that name the other end of a call (the usual peer labels, plus `topic`, which a
#: consumer-lag alert uses for the topic it reads).
PEER_LABELS = (
    "upstream", "peer_service", "peer.service", "destination_service", "server", "target", "topic",
)  # fmt: skip


class NoInput(ToolInput):
    """No arguments: the tool reads the incident itself."""


def alert_peers(ctx: ToolContext, args: NoInput) -> ToolResult:
    """Edges that the incident's alerts name: an alert on A with a peer label (`upstream`,
    `peer_service`, `peer.service`, `destination_service`, `server`, `target`, `topic`) whose
    value is a component B says A's calls into B fail or lag (edge evidence from alerts).

    `data`: rows `{component, peer, label, alertname}`; values naming no component are left out
    (kept in `raw`), never guessed.
    """
    named = [
        (a, key, str(a["labels"][key]))
        for a in ctx.alerts if a.get("component")
        for key in PEER_LABELS if (a.get("labels") or {}).get(key)
    ]  # fmt: skip
    names = component_names(ctx, sorted({value for _, _, value in named}))
    rows = [
        {"component": a["component"], "peer": names[value], "label": key,
         "alertname": a["alertname"]}
        for a, key, value in named
        if names.get(value) and names[value] != a["component"]
    ]  # fmt: skip
    unknown = sorted({value for _, _, value in named if not names.get(value)})
    return rows_result(rows, "peer edges named by alerts", raw={"unknown": unknown})


def traffic_sources(ctx: ToolContext, args: ComponentInput) -> ToolResult:
    """Clients (traffic sources the world marks `client`) whose business calls reach the
    component (a datastore through the reads and writes of the services that use it), with the
    path. `data`: rows `{source, path: [names], hops}`, nearest first."""
    rows = [
        {"source": r["source"], "path": list(r["path"]), "hops": int(r["hops"])}
        for r in ctx.graph.rows("traffic_sources", {"component": args.component})
    ]
    return rows_result(rows, f"traffic sources upstream of {args.component}")


TOOLS = (
    Tool(
        "traffic_sources",
        "Which clients (load generators, browsers, other traffic sources) send requests that "
        "reach this component, and through which components.",
        ComponentInput,
        traffic_sources,
        lambda ctx, a: [a.component],
    ),
    Tool(
        "alert_peers",
        "Which calls the alerts themselves blame: alerts whose labels (upstream, peer_service, "
        "destination_service, server, target, topic) name the component on the other end.",
        NoInput,
        alert_peers,
    ),
    Tool(
        "coverage_walk",
        "Which components the alerting ones depend on (directly or within `hops`), and for each "
        "how many alerting components reach it (`covers`). A root cause should explain all "
        "alerting components: start here. Includes silent components (that raise no alert) and "
        "producers of topics that alerting consumers read.",
        WalkInput,
        coverage_walk,
        lambda ctx, a: list(a.components if a.components is not None else ctx.alerting),
    ),
    Tool(
        "neighbours",
        "The direct neighbours of one component with the edge type, direction (what it depends "
        "on / what depends on it), purpose and propagation. Use it to see who else would suffer "
        "if this component failed, or what it depends on.",
        ComponentInput,
        neighbours,
        lambda ctx, a: [a.component],
    ),
    Tool(
        "call_reach",
        "Which alerting components the world knows call into this component (directly or "
        "through others), leaving out edges known only as start order (compose depends_on).",
        ComponentInput,
        call_reach,
        lambda ctx, a: [a.component],
    ),
    Tool(
        "dependency_path",
        "The shortest dependency path from a dependent to one of its dependencies, to show how "
        "an alerting component reaches a suspected cause.",
        PathInput,
        dependency_path,
        lambda ctx, a: [a.source, a.target],
    ),
)
