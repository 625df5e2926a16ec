"""Investigator (rule-based planner): claims `investigate` tasks and finds the root cause.

The coverage walk (from the seed design):
1. The alerting components are the components the incident's alerts are ON.
2. Walk business dependency edges (caller -> callee; telemetry and config edges skipped;
   at most `walk_hops` hops) from each; a candidate's coverage is how many alerting components
   reach it. The cause should explain all of them: keep the candidates of highest coverage.
3. Among those, an alerting candidate beats a silent one; an alerting candidate whose own
   dependency also alerts is probably a victim, so the deepest alerting candidates remain.
   With no alerting candidate, the silent candidate closest to the alerting ones remains.
4. A recent change (deploy, merged PR) on one of several remaining candidates singles it out;
   a recent change on an alerting component that depends on the single remaining candidate
   makes that change the cause (the candidate's symptoms follow it).
5. A traffic surge on the cause (e.g. `RequestRateSpike`) points upstream: the traffic sources
   (client components) whose calls reach it through alerting components become the candidates.
6. One candidate left: that is the root cause. More: the finding is inconclusive and names
   them all. No alert on a known component: no path, no finding, inconclusive.

Every query is a checkpointed step, so a new owner resumes where the last one stopped.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from adapters.prometheus import Prometheus
from agents.checks import CHANGE_LOOKBACK_MS, Evidence, evaluate
from agents.coordination import TaskRun
from agents.recall import recall
from agents.split import split_unexplained

log = logging.getLogger(__name__)

#: Alert names whose meaning is "more traffic than usual arrives here" (rule 5).
TRAFFIC_SURGE_ALERTS = frozenset({"RequestRateSpike", "TrafficSurge", "HighRequestRate"})


@dataclass
class Candidate:
    """A component the walk reached: which alerting components reach it, at what total distance."""

    name: str
    covers: list[str]
    distance: int
    client: bool = False


@dataclass
class Decision:
    """The outcome of the rules: a root cause (None when inconclusive) and why."""

    root_cause: str | None
    candidates: list[str]
    confidence: float
    summary: str
    ruled_out: dict[str, str] = field(default_factory=dict)
    surge_paths: list[list[str]] = field(default_factory=list)


def decide(
    alerting: list[str],
    alertnames: dict[str, list[str]],
    candidates: list[Candidate],
    changed: set[str],
    traffic_sources: list[dict[str, Any]],
) -> Decision:
    """Apply the coverage-walk rules (module docstring) to the walk's results. Pure function.

    `alerting`: alerting component names; `alertnames`: component -> its alert names;
    `changed`: components with a recent change; `traffic_sources`: rows of
    `traffic_sources.cypher` for the chosen cause (only read when it shows a traffic surge).
    """
    if not alerting:
        return Decision(None, [], 0.0, "No alert matched a known component: no path, no finding.")
    if not candidates:
        return Decision(None, [], 0.0, "The walk reached no component from the alerting ones.")
    ruled: dict[str, str] = {}
    best = max(len(c.covers) for c in candidates)
    top = [c for c in candidates if len(c.covers) == best]
    for c in candidates:
        if len(c.covers) < best:
            ruled[c.name] = f"explains {len(c.covers)} of {len(alerting)} alerting components"
    loud = [c for c in top if c.name in alerting]
    if loud:
        remaining = [c for c in loud if not any(o is not c and c.name in o.covers for o in loud)]
        # In a dependency cycle every alerting candidate is another's victim: keep them all.
        remaining = remaining or loud
        for c in loud:
            if c not in remaining:
                victim_of = next(o.name for o in loud if o is not c and c.name in o.covers)
                ruled[c.name] = f"alerts, but its dependency {victim_of} alerts too (victim)"
        for c in top:
            if c.name not in alerting:
                ruled[c.name] = "does not alert while an equally covering component does"
    else:
        nearest = min(c.distance for c in top)
        remaining = [c for c in top if c.distance == nearest]
        for c in top:
            if c.distance > nearest:
                ruled[c.name] = "silent and further from the alerting components than another"
    names = [c.name for c in remaining]
    if len(names) > 1 and len(changed & set(names)) == 1:
        (only,) = changed & set(names)
        for n in names:
            if n != only:
                ruled[n] = f"no recent change, while {only} changed"
        names = [only]
    if len(names) == 1:
        cause = next(c for c in candidates if c.name == names[0])
        upstream = sorted(changed & (set(cause.covers) - {cause.name}))
        if len(upstream) == 1:
            ruled[cause.name] = (
                f"its symptoms follow a recent change on {upstream[0]}, which depends on it"
            )
            return Decision(
                upstream[0], upstream, round(0.7 * len(cause.covers) / len(alerting), 2),
                f"{upstream[0]} changed shortly before the incident and depends on {cause.name}, "
                f"which alerts: the change is the likely cause.", ruled,
            )  # fmt: skip
    coverage = best / len(alerting)
    if len(names) == 1 and TRAFFIC_SURGE_ALERTS & set(alertnames.get(names[0], [])):
        sources = [
            row for row in traffic_sources
            if all(n in alerting for n in row["path"][1:])
        ]  # fmt: skip
        found = list(dict.fromkeys(row["source"] for row in sources))
        if found:
            ruled[names[0]] = "receives a traffic surge: the cause is upstream"
            paths = [row["path"] for row in sources]
            if len(found) == 1:
                return Decision(
                    found[0], found, round(0.6 * coverage, 2),
                    f"Traffic surge on {names[0]}; the only traffic source upstream through "
                    f"alerting components is {found[0]}.", ruled, paths,
                )  # fmt: skip
            return Decision(
                None, found, round(0.5 / len(found), 2),
                f"Traffic surge on {names[0]}; the graph cannot tell which traffic source "
                f"sends it: {', '.join(found)}.", ruled, paths,
            )  # fmt: skip
    if len(names) == 1:
        silent = names[0] not in alerting
        confidence = round(coverage * (0.6 if silent else 0.9), 2)
        how = "does not alert itself but " if silent else ""
        return Decision(
            names[0], names, confidence,
            f"{names[0]} {how}explains {best} of {len(alerting)} alerting components "
            f"({', '.join(alerting)}).", ruled,
        )  # fmt: skip
    return Decision(
        None, names, round(coverage * 0.5 / len(names), 2),
        f"Inconclusive: {', '.join(names)} each explain {best} of {len(alerting)} alerting "
        "components and the graph cannot separate them.", ruled,
    )  # fmt: skip


class Investigator:
    """Runs one claimed `investigate` task (see module docstring), or a `reinvestigate` task,
    which triage enqueues when an alert on a new component joins an open incident."""

    kinds = ("investigate", "reinvestigate")

    def __init__(self, walk_hops: int = 6, prometheus: Prometheus | None = None) -> None:
        self.walk_hops = walk_hops
        self.prometheus = prometheus

    def run(self, task: TaskRun) -> None:
        """Investigate, write the Finding, complete the task and enqueue `respond` (or, after a
        re-investigation, `notify_update`).

        Memory first: recalled playbooks whose checks all hold give the diagnosis with no
        planner; otherwise the rule-based planner decides. Raises `LeaseLost` (stop) or
        `GraphUnavailable` (retry later).
        """
        graph, incident_id = task.graph, task.claim.incident_id
        alerts = task.step(
            "incident_alerts", {"incident_id": incident_id},
            lambda: [
                {k: row[k] for k in ("key", "alertname", "component", "starts_at_ms", "status")}
                | {"summary": json.loads(row["annotations_json"]).get("summary", "")}
                for row in graph.rows("incident_alerts", {"incident_id": incident_id})
            ],
        )  # fmt: skip
        alerting = list(dict.fromkeys(a["component"] for a in alerts if a["component"]))
        evidence = Evidence(
            graph, alerts, alerting, min((a["starts_at_ms"] for a in alerts), default=0),
            self.prometheus,
        )  # fmt: skip
        used, steered = self._recall(task, evidence)
        candidates: list[Candidate] = []
        changes: list[dict[str, Any]] = []
        if steered is not None:
            decision = Decision(
                steered["candidate"], [steered["candidate"]], round(steered["trust"], 2),
                f"Playbook '{steered['title']}' (trust {steered['trust']:.2f}, recalled via "
                f"{' → '.join(steered['path'])}): all {len(steered['checks'])} checks held "
                f"for {steered['candidate']}.",
                surge_paths=[steered["path"]],
            )  # fmt: skip
            planner = "memory"
        else:
            decision, candidates, changes = self._rules(task, evidence)
            planner = "rules"
        task.metrics.planner_calls.labels(planner=planner).inc()
        if used:
            task.fenced(
                "record_decision",
                {"decision_id": f"decision:{task.claim.task_id}", "planner": planner, "used": used},
            )
        paths = self._paths(task, decision, candidates)
        written = task.fenced(
            "write_finding",
            {
                "finding_id": f"finding:{incident_id}",
                "root_cause": decision.root_cause,
                "candidates": decision.candidates,
                "confidence": decision.confidence,
                "summary": decision.summary,
                "conclusive": decision.root_cause is not None,
                "paths_json": json.dumps(paths, ensure_ascii=False),
                "ruled_out_json": json.dumps(
                    decision.ruled_out, sort_keys=True, ensure_ascii=False
                ),
                "planner": planner,
                "impacted": alerting,
                "change_ids": [c["id"] for c in changes if c["component"] in decision.candidates],
                "alerts_seen": len(alerts),
            },
        )
        log.info("incident %s: %s", incident_id, decision.summary)
        if written["fresh"]:
            split_unexplained(task, decision.root_cause, self.walk_hops)
        initial = task.claim.kind == "investigate"
        task.complete(
            "conclusive" if decision.root_cause else "inconclusive",
            next_kind="respond" if initial else "notify_update",
            next_id=f"respond:{incident_id}" if initial else f"update:{task.claim.task_id}",
        )

    def _recall(
        self, task: TaskRun, ev: Evidence
    ) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        """Recall playbooks near the alerting components, best first (weight × trust), and run
        each one's checks (each a step) until one holds entirely.

        Returns (the USED rows for the Decision, the steering playbook or None).
        """
        if not ev.alerting:
            return [], None
        recalled = task.step(
            "recall_playbooks", {"alerting": ev.alerting},
            lambda: recall(task.graph, ev.alerting), touched=ev.alerting,
        )  # fmt: skip
        used: list[dict[str, Any]] = []
        for playbook in recalled:
            results: list[dict[str, Any]] = []
            candidate: str = playbook["candidate"]
            for check in playbook["checks"]:
                args = {"playbook": playbook["id"], "candidate": candidate, "check": check}
                result = task.step(
                    "check", args, partial(evaluate, check, candidate, ev), touched=[candidate]
                )
                results.append({"check": check} | result)
                if not result["held"]:
                    break
            applicable = all(r["held"] for r in results) and bool(results)
            used.append(
                {
                    "playbook": playbook["id"], "path": playbook["path"],
                    "candidate": playbook["candidate"], "trust": playbook["trust"],
                    "weight": playbook["weight"], "checks_json": json.dumps(results),
                    "applicable": applicable, "steered": applicable,
                }
            )  # fmt: skip
            if applicable:
                return used, playbook
        return used, None

    def _rules(
        self, task: TaskRun, ev: Evidence
    ) -> tuple[Decision, list[Candidate], list[dict[str, Any]]]:
        """The rule-based planner (module docstring): coverage walk, changes, traffic sources.

        Returns the decision, the walk's candidates and the recent changes it looked at.
        """
        graph, alerting = task.graph, ev.alerting
        alertnames: dict[str, list[str]] = {}
        for a in ev.alerts:
            if a["component"]:
                alertnames.setdefault(a["component"], []).append(a["alertname"])
        walk = task.step(
            "coverage_walk", {"alerting": alerting, "hops": self.walk_hops},
            lambda: [
                {"name": r["name"], "covers": sorted(r["covers"]), "distance": int(r["distance"]),
                 "client": bool(r["client"])}
                for r in graph.rows("coverage_walk", {"alerting": alerting, "hops": self.walk_hops})
            ] if alerting else [],
            touched=alerting,
        )  # fmt: skip
        candidates = [Candidate(**row) for row in walk]
        names = [c.name for c in candidates]
        window = {
            "components": names,
            "since": ev.opened_ms - CHANGE_LOOKBACK_MS,
            "until": ev.opened_ms,
        }
        changes: list[dict[str, Any]] = task.step(
            "recent_changes", window,
            lambda: graph.rows("recent_changes", window) if names else [],
            touched=names,
        )  # fmt: skip
        changed = {c["component"] for c in changes}
        first = decide(alerting, alertnames, candidates, changed, [])
        sources: list[dict[str, Any]] = []
        if first.root_cause and TRAFFIC_SURGE_ALERTS & set(alertnames.get(first.root_cause, [])):
            cause = first.root_cause
            sources = task.step(
                "traffic_sources", {"component": cause},
                lambda: graph.rows("traffic_sources", {"component": cause}),
                touched=[cause],
            )  # fmt: skip
        return decide(alerting, alertnames, candidates, changed, sources), candidates, changes

    def _paths(
        self, task: TaskRun, decision: Decision, candidates: list[Candidate]
    ) -> list[list[str]]:
        """The graph paths the finding rests on: alerting component -> each remaining candidate."""
        if decision.surge_paths:
            return decision.surge_paths
        by_name = {c.name: c for c in candidates}
        pairs = [
            (src, cand) for cand in decision.candidates if cand in by_name
            for src in by_name[cand].covers
        ]  # fmt: skip

        def walk() -> list[list[str]]:
            out = []
            for src, dst in pairs:
                row = task.graph.one("walk_path", {"from": src, "to": dst})
                if row:
                    out.append(list(row["path"]))
            return out

        paths: list[list[str]] = task.step(
            "walk_path", {"pairs": pairs}, walk, touched=decision.candidates
        )
        return paths
