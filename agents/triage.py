"""Triage (no model): accepted alerts become Alert nodes, incidents and `investigate` tasks.

Runs inside the webhook request, before it answers, so every accepted alert is in the graph
first. Each alert is one atomic query (`cypher/triage_alert.cypher`): a repeated or concurrent
delivery changes nothing, a refire (same fingerprint, new startsAt) is a new episode, and an
incident resolves when all its alerts have resolved.

Correlation rule: an alert joins an open incident opened within the window only along a
dependency path: its component reaches a component of the incident, or is reached by one,
within `correlation_hops` business edges (a shared neighbour is not enough: two callers of one
database are not linked). The joining path is stored on the alert's `HAS_ALERT` edge (`via`,
e.g. `checkout-api → orders-api`). Among several such incidents the alert joins the one whose
root cause its component reaches, then the nearest, then the oldest. An alert that matches no
component joins an open incident of the same Alertmanager groupKey (`via` says so).
An alert that links two open incidents merges the other into the one it joined while nobody
has been paged for it (`merge_bridged`), so the grouping of a cascade does not depend on the
order its alerts arrive in.
"""

from __future__ import annotations

import json
import re
import uuid
from collections import deque
from dataclasses import dataclass, field

from adapters.falkordb import TenantGraph
from agents.alerts import NormalizedAlert

#: Label names tried in order to find an alert's component (first known component wins).
COMPONENT_LABELS = (
    "service",
    "app",
    "app.kubernetes.io/name",
    "service.name",
    "service_name",
    "job",
    "container",
)
#: Pod name suffixes: Deployment (`-<replicaset hash>-<5>`), DaemonSet (`-<5>`),
#: StatefulSet (`-<n>`).
POD_SUFFIXES = (
    re.compile(r"^(?P<base>.+)-[a-z0-9]{5,10}-[a-z0-9]{5}$"),
    re.compile(r"^(?P<base>.+)-[a-z0-9]{5}$"),
    re.compile(r"^(?P<base>.+)-\d+$"),
)
SEVERITY_RANK = {
    "critical": 4,
    "page": 4,
    "error": 3,
    "high": 3,
    "warning": 2,
    "warn": 2,
    "info": 1,
}


def severity_rank(severity: str) -> int:
    """Order of severities (critical 4 > error/high 3 > warning 2 > info 1 > anything else 0)."""
    return SEVERITY_RANK.get(severity.lower(), 0)


def component_candidates(labels: dict[str, str]) -> list[str]:
    """Names an alert's labels may give its component, most specific label first."""
    names = [labels[key] for key in COMPONENT_LABELS if labels.get(key)]
    pod = labels.get("pod") or labels.get("pod_name")
    if pod:
        names += [m.group("base") for rx in POD_SUFFIXES if (m := rx.match(pod))]
    return list(dict.fromkeys(names))


@dataclass
class Links:
    """Where an alert's component is linked within the correlation reach, shortest path first.

    `names[i]` is reached by the path `paths[i]` (`a → b`, caller to callee) of `hops[i]`
    edges; `down`: the components it depends on (itself included), any of which as a root
    cause would explain an alert on it.
    """

    names: list[str] = field(default_factory=list)
    hops: list[int] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    down: list[str] = field(default_factory=list)


def component_links(graph: TenantGraph, component: str, hops: int) -> Links:
    """The `Links` of one component (`cypher/component_links.cypher`), `hops` 0-6."""
    rows = graph.rows("component_links", {"component": component, "hops": hops})
    links = Links()
    for row in sorted(rows, key=lambda r: (r["hops"], r["name"])):
        if row["way"] == "down" and row["name"] not in links.down:
            links.down.append(row["name"])
        if row["name"] not in links.names:
            links.names.append(row["name"])
            links.hops.append(int(row["hops"]))
            links.paths.append(" → ".join(row["path"]))
    return links


@dataclass
class TriageReport:
    """What one delivery did: alerts accepted, which matched no component, incidents touched,
    and incidents merged into another (`merge_bridged`)."""

    accepted: int = 0
    unmatched: list[str] = field(default_factory=list)
    incidents: list[str] = field(default_factory=list)
    opened: list[str] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)


def resolve_components(graph: TenantGraph, alerts: list[NormalizedAlert]) -> dict[str, str | None]:
    """Map each alert key to its component name, or None when no label names a known component."""
    wanted = {a.key: component_candidates(a.labels) for a in alerts}
    every = sorted({name for names in wanted.values() for name in names})
    canonical: dict[str, str] = {}
    if every:
        for row in graph.rows("match_components", {"candidates": every}):
            canonical[row["name"]] = row["name"]
            for alias in row["aliases"] or []:
                canonical.setdefault(alias, row["name"])
    return {
        key: next((canonical[n] for n in names if n in canonical), None)
        for key, names in wanted.items()
    }


def dependency_order(
    alerts: list[NormalizedAlert], components: dict[str, str | None], linked: dict[str, Links]
) -> list[NormalizedAlert]:
    """The alerts of one delivery in the order triage takes them: components breadth first
    along their links, starting from the first listed, so an alert comes right after one it is
    linked to (e.g. two consumers of a topic after the topic's broker, which links them).
    Grouping then does not depend on the order the sender listed the alerts. An alert on no
    known component keeps the place of the alert before it. Stable otherwise."""
    rank: dict[str, int] = {}
    for name in linked:
        queue = deque([name])
        while queue:
            current = queue.popleft()
            if current in rank:
                continue
            rank[current] = len(rank)
            queue.extend(n for n in linked[current].names if n in linked and n not in rank)
    keys: list[int] = []
    for alert in alerts:
        component = components[alert.key]
        keys.append(rank[component] if component else (keys[-1] if keys else -1))
    return [a for _, _, a in sorted(zip(keys, range(len(alerts)), alerts, strict=True))]


def triage(
    graph: TenantGraph,
    alerts: list[NormalizedAlert],
    window_ms: int,
    hops: int = 2,
) -> TriageReport:
    """Write every alert of one delivery to the graph and attach it to an incident.

    `window_ms`: how far apart (by alert start time) an alert and an incident's opening may be to
    join; `hops`: correlation reach along dependency edges (0-6).
    Raises `GraphUnavailable` if the database cannot answer; alerts written before that stay
    written, and the sender's retry is harmless.
    """
    report = TriageReport()
    components = resolve_components(graph, alerts)
    linked: dict[str, Links] = {}
    for alert in alerts:
        component = components[alert.key]
        if component is not None and component not in linked:
            linked[component] = component_links(graph, component, hops)
    bridged: set[tuple[str | None, str]] = set()
    for alert in dependency_order(alerts, components, linked):
        component = components[alert.key]
        if component is None:
            report.unmatched.append(alert.key)
        links = linked[component] if component else Links()
        row = graph.one(
            "triage_alert",
            {
                "key": alert.key,
                "fingerprint": alert.fingerprint,
                "alertname": alert.alertname,
                "severity": alert.severity,
                "severity_rank": severity_rank(alert.severity),
                "status": alert.status,
                "starts_at": alert.starts_at,
                "starts_at_ms": alert.starts_at_ms,
                "ends_at_ms": alert.ends_at_ms,
                "labels_json": json.dumps(alert.labels, sort_keys=True, ensure_ascii=False),
                "annotations_json": json.dumps(
                    alert.annotations, sort_keys=True, ensure_ascii=False
                ),
                "values_json": alert.values_json,
                "generator_url": alert.generator_url,
                "link": alert.link,
                "group_key": alert.group_key,
                "receiver": alert.receiver,
                "source": alert.source,
                "title": alert.title(),
                "component": component,
                "near": links.names,
                "near_hops": links.hops,
                "near_paths": links.paths,
                "down": links.down,
                "window_ms": window_ms,
                "new_incident_id": f"inc-{uuid.uuid4().hex[:12]}",
                "new_task_id": f"task-{uuid.uuid4().hex}",
            },
        )
        if row is None:  # the MATCH of the incident found nothing: cannot happen after the MERGE
            raise RuntimeError(f"triage of alert {alert.key} returned no incident")
        report.accepted += 1
        bridge = (component, row["incident_id"])
        if (component and row["prev"] is None and not row["opened"]
                and alert.status == "firing" and bridge not in bridged):  # fmt: skip
            bridged.add(bridge)  # once per component and incident per delivery (storms)
            report.merged += merge_bridged(graph, alert, row["incident_id"], component, links,
                                           window_ms)  # fmt: skip
        if row["incident_id"] not in report.incidents:
            report.incidents.append(row["incident_id"])
        if row["opened"]:
            report.opened.append(row["incident_id"])
        if row["closing"]:
            report.resolved.append(row["incident_id"])
    report.incidents = [i for i in report.incidents if i not in report.merged]
    report.opened = [i for i in report.opened if i not in report.merged]
    return report


def merge_bridged(
    graph: TenantGraph,
    alert: NormalizedAlert,
    incident_id: str,
    component: str,
    links: Links,
    window_ms: int,
) -> list[str]:
    """Merge into `incident_id` every other open incident the alert's component links to
    (`cypher/merge_incident.cypher`), as long as nobody has been paged for it: a chain
    proxy → frontend → checkout → payment whose ends alerted first is one failure, whatever
    order the alerts came in. Returns the ids merged (at most a few: each needs a component
    within the reach)."""
    merged: list[str] = []
    params = {
        "incident_id": incident_id, "component": component, "near": links.names,
        "near_paths": links.paths, "starts_at_ms": alert.starts_at_ms, "window_ms": window_ms,
    }  # fmt: skip
    while (row := graph.one("merge_incident", params)) is not None:
        merged.append(str(row["merged"]))
    return merged
