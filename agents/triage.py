"""Triage (no model): accepted alerts become Alert nodes, incidents and `investigate` tasks.

Runs inside the webhook request, before it answers, so every accepted alert is in the graph
first. Each alert is one atomic query (`cypher/triage_alert.cypher`): a repeated or concurrent
delivery changes nothing, a refire (same fingerprint, new startsAt) is a new episode, and an
incident resolves when all its alerts have resolved.

Correlation rule: an alert joins an open incident opened within the window when its component
shares a business dependency (within `correlation_hops`) with a component already in it; an
alert that matches no component joins an open incident of the same Alertmanager groupKey.
"""

from __future__ import annotations

import json
import re
import uuid
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
class TriageReport:
    """What one delivery did: alerts accepted, which matched no component, incidents touched."""

    accepted: int = 0
    unmatched: list[str] = field(default_factory=list)
    incidents: list[str] = field(default_factory=list)
    opened: list[str] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)


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


def triage(
    graph: TenantGraph,
    alerts: list[NormalizedAlert],
    window_ms: int,
    hops: int = 3,
) -> TriageReport:
    """Write every alert of one delivery to the graph and attach it to an incident.

    `window_ms`: how far apart (by alert start time) an alert and an incident's opening may be to
    join; `hops`: correlation reach along dependency edges (0-6).
    Raises `GraphUnavailable` if the database cannot answer; alerts written before that stay
    written, and the sender's retry is harmless.
    """
    report = TriageReport()
    components = resolve_components(graph, alerts)
    reach: dict[str, list[str]] = {}
    for alert in alerts:
        component = components[alert.key]
        if component is None:
            report.unmatched.append(alert.key)
        elif component not in reach:
            row = graph.one("component_reach", {"component": component, "hops": hops})
            reach[component] = sorted(row["near"]) if row else [component]
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
                "near": reach.get(component, []) if component else [],
                "window_ms": window_ms,
                "new_incident_id": f"inc-{uuid.uuid4().hex[:12]}",
                "new_task_id": f"task-{uuid.uuid4().hex}",
            },
        )
        if row is None:  # the MATCH of the incident found nothing: cannot happen after the MERGE
            raise RuntimeError(f"triage of alert {alert.key} returned no incident")
        report.accepted += 1
        if row["incident_id"] not in report.incidents:
            report.incidents.append(row["incident_id"])
        if row["opened"]:
            report.opened.append(row["incident_id"])
        if row["closing"]:
            report.resolved.append(row["incident_id"])
    return report
