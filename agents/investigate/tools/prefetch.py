"""What an investigation's tools would read from the graph, read ahead in one round trip.

`cypher/investigation_context.cypher` returns, for each incident asked (a worker's batch reads
several in one query), the incident's alerts, the coverage walk from its
alerting components (and from the producers of the topics it reaches), the recent changes of
every component reached, the neighbours of the alerting components, and whether memory holds
any playbook to recall (none: recall is answered without a query). A tool called with
arguments these cover answers from them (the same rows its own query would give, filtered);
any other call asks the graph as before (fewer round trips per incident, the same tool
results).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from adapters.falkordb import TenantGraph


@dataclass(frozen=True)
class Prefetched:
    """The rows of one `investigation_context` read. `walks`: (start components, hops,
    `coverage_walk` rows as `{name, kind, client, covers, depths}`); `topics`: the topics
    whose producers `links` lists (`{topic, producer, consumers}`); `changed`: the components
    `changes` covers (`recent_changes` rows in [`opened_ms` - `lookback_ms`, `opened_ms`], ms
    UTC); `recalled`: `recall.cypher` rows for the start components of the first walk, known
    to be none when memory holds no active playbook, else None (not read ahead); `paths`:
    (alerting component, component it reaches) -> one shortest path within the first walk's hops."""

    alerts: list[dict[str, Any]]
    opened_ms: int
    lookback_ms: int
    walks: list[tuple[frozenset[str], int, list[dict[str, Any]]]]
    topics: frozenset[str]
    links: list[dict[str, Any]]
    changed: frozenset[str]
    changes: list[dict[str, Any]]
    recalled: list[dict[str, Any]] | None
    paths: dict[tuple[str, str], list[str]]
    #: `neighbours.cypher` rows by the component they are next to (every alerting one).
    near: dict[str, list[dict[str, Any]]]
    #: Whether any change was ever recorded in the graph (`change_source.cypher`): without a
    #: change source, no `changes` measured nothing.
    change_source: bool = True
    #: ((text vector, alerting components, opened ms), the `similar_incidents` rows of that
    #: ask (`agents.investigate.similar.nearest`)), read with the batch's contexts when memory
    #: is on, else None.
    similar: tuple[tuple[tuple[float, ...], tuple[str, ...], int], list[dict[str, Any]]] | None = (
        None
    )


def read(graph: TenantGraph, incident_id: str, hops: int, lookback_ms: int) -> Prefetched | None:
    """Read the incident's investigation context (one query); None when the incident is gone.
    `hops`: the walk's reach (1-6); `lookback_ms`: how far back a change counts as recent."""
    return read_many(graph, [incident_id], hops, lookback_ms).get(incident_id)


def read_many(
    graph: TenantGraph, incident_ids: list[str], hops: int, lookback_ms: int
) -> dict[str, Prefetched]:
    """`read` for several incidents in one query (a worker's batch), by incident id; an
    incident that is gone is left out."""
    rows = graph.rows(
        "investigation_context",
        {"incident_ids": incident_ids, "hops": hops, "lookback_ms": lookback_ms},
    )
    return {str(row["incident_id"]): prefetched(row, hops, lookback_ms) for row in rows}


def prefetched(row: dict[str, Any], hops: int, lookback_ms: int) -> Prefetched:
    """One `investigation_context` row as `Prefetched`."""
    alerting = frozenset(row["alerting"])
    walk, beyond = row["walk"], row["beyond"]
    producers = frozenset(link["producer"] for link in row["links"])
    return Prefetched(
        alerts=sorted(row["alerts"], key=lambda a: (a["starts_at_ms"], a["key"])),
        opened_ms=int(row["opened"] or 0),
        lookback_ms=lookback_ms,
        walks=[(alerting, hops, walk), (producers, hops, beyond)],
        topics=frozenset(w["name"] for w in walk if w["kind"] == "topic"),
        links=row["links"],
        changed=alerting | {w["name"] for w in walk} | {w["name"] for w in beyond},
        changes=row["changes"],
        change_source=bool(row["change_source"]),
        recalled=None if row["remembered"] else [],
        near=neighbours_of(alerting, row["near"]),
        paths={
            (origin, w["name"]): list(path)
            for w in walk
            for origin, path in zip(w["covers"], w["paths"], strict=True)
        },
    )


def similar_rows(
    known: Prefetched | None, vector: list[float], impacted: list[str], before_ms: int
) -> list[dict[str, Any]] | None:
    """The `similar_incidents` rows read ahead for this ask, or None when not read ahead (or
    read for another vector, set of alerting components or start)."""
    if known is None or known.similar is None:
        return None
    asked, rows = known.similar
    return rows if asked == (tuple(vector), tuple(impacted), before_ms) else None


def walk_rows(known: Prefetched | None, start: list[str], hops: int) -> list[dict[str, Any]] | None:
    """`coverage_walk.cypher` rows from `start` within `hops`, or None when not read ahead. A
    walk read from more start components holds it: each (component, start) depth is the same,
    so the rows keep only `start`'s (and drop components only the others reach)."""
    if known is None:
        return None
    wanted = set(start)
    for starts, reach, rows in known.walks:
        if reach == hops and wanted <= starts:
            out = []
            for row in rows:
                pairs = [(a, d) for a, d in zip(row["covers"], row["depths"], strict=True)
                         if a in wanted]  # fmt: skip
                if pairs:
                    out.append({k: row[k] for k in ("name", "kind", "client")}
                               | {"covers": [a for a, _ in pairs],
                                  "depths": [d for _, d in pairs]})  # fmt: skip
            return out
    return None


def topic_links(known: Prefetched | None, topics: list[str]) -> list[dict[str, Any]] | None:
    """`topic_producers.cypher` rows for `topics` (ordered as it orders them), or None."""
    if known is None or not set(topics) <= known.topics:
        return None
    rows = [link for link in known.links if link["topic"] in topics]
    return sorted(rows, key=lambda r: (r["topic"], r["producer"]))


def recent_changes(
    known: Prefetched | None, components: list[str], since: int, until: int
) -> list[dict[str, Any]] | None:
    """`recent_changes.cypher` rows for `components` in [`since`, `until`] (ms UTC), newest
    first, or None when that window or a component was not read ahead."""
    if known is None or not set(components) <= known.changed:
        return None
    if (since, until) != (known.opened_ms - known.lookback_ms, known.opened_ms):
        return None
    rows = [c for c in known.changes if c["component"] in components]
    return sorted(rows, key=lambda c: (-c["at"], c["id"], c["component"]))


def recalled(known: Prefetched | None, near: list[str]) -> list[dict[str, Any]] | None:
    """`recall.cypher` rows for the components `near`, or None when not read ahead."""
    if known is None or not known.walks or set(near) != known.walks[0][0]:
        return None
    return known.recalled


def reach(known: Prefetched | None) -> dict[str, int]:
    """How many alerting components reach each component of the first walk (its `covers`),
    from the walk read ahead; empty when none was."""
    if known is None or not known.walks:
        return {}
    return {w["name"]: len(w["covers"]) for w in known.walks[0][2]}


def shortest_paths(
    known: Prefetched | None, pairs: list[tuple[str, str]], longest: int
) -> list[list[str]] | None:
    """One shortest dependency path per (alerting component, component) pair that has one,
    in the order of `pairs` (what `walk_paths.cypher` returns for them), or None when the
    walk read ahead cannot tell: a pair it does not hold may still have a path unless its
    walk went as far as `walk_paths.cypher` does (`longest` hops)."""
    if known is None or not known.walks or not {a for a, _ in pairs} <= known.walks[0][0]:
        return None
    if any(pair not in known.paths for pair in pairs) and known.walks[0][1] < longest:
        return None
    return [known.paths[pair] for pair in pairs if pair in known.paths]


def neighbours_of(
    components: frozenset[str], rows: list[dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """`investigation_context`'s `near` rows as `neighbours.cypher` rows per component."""
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in components}
    for row in rows:
        out[row["of"]].append({k: v for k, v in row.items() if k != "of"})
    return out


def neighbours(known: Prefetched | None, component: str) -> list[dict[str, Any]] | None:
    """`neighbours.cypher` rows of `component`, or None when not read ahead."""
    if known is None or component not in known.near:
        return None
    return [dict(row) for row in known.near[component]]
