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
5. A traffic surge on the cause (an alert of kind `traffic`, e.g. `RequestRateSpike`), or on
   the one alerting caller of a cause that only slowed (`surge_point`), points upstream: the
   traffic sources (client components) whose calls reach where it arrives through alerting
   components become the candidates.
6. One candidate left: that is the root cause. More: the finding is inconclusive and names
   them all. No alert on a known component: no path, no finding, inconclusive.

Then the evidence (`agents/investigate/weigh.py`): with `PROMETHEUS_URL`, the health of the
calls near the incident (`edge_health`, `service_errors`, `targets_down`) decides — a silent
dependency whose incoming calls fail is the cause, a client whose requests jumped is the traffic
source, a broker whose topic's messages stopped from live producers is the cause
(`weigh.stalled_topic`) — and the finding says what separated the winner from the runner-up.
Without evidence (or when it blames nothing, or Prometheus fails: the summary says which),
alerts that name a peer count as edge evidence, and `weigh.doubt` keeps the walk honest about
silent components behind an alerting cause. The rules use only the typed tools of
`agents/investigate/tools/` (each call a checkpointed step, so a new owner resumes where the
last one stopped), like a model planner.

Memory (`BLAST_MEMORY`) comes before all of it: with `graph`, recalled playbooks are checked
(first whether their cause explains the alerting components, `checks.gated`) and one whose checks
all hold names the cause at its trust, citing where it was learned (`recall.cited`); with
`graph` or `text`, the incidents whose alerts read alike are looked up and kept with the finding
(`agents/investigate/similar.py`).

Last, the model planner (`agents/investigate/model_planner.py`), when `BLAST_PLANNER` asks for
it: a finding the rules leave inconclusive or unsure goes to a model over the same tools, its
answer checked by the graph's second opinion; every model cooling down pauses the task.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection
from dataclasses import replace
from functools import partial
from typing import Any, Literal

from adapters.falkordb import TenantGraph
from adapters.notices import NOT_RULED_OUT
from adapters.prometheus import Prometheus
from agents.failure_kinds import classify, gap_note, monitoring_gap, monitoring_gaps, surge
from agents.investigate import similar
from agents.investigate.checks import (
    EXPLAINS_BY_CALLS,
    Evidence,
    about_candidate,
    describe,
    evaluate,
    gated,
    kinds_differ,
    looked_at,
    paths_to,
)
from agents.investigate.decision import LEAD_BELOW, Candidate, Decision
from agents.investigate.measure import (
    calls_into,
    from_alerts,
    from_changes,
    healthy,
    measurement,
    span,
    window,
)
from agents.investigate.model_planner import (
    UNSEPARATED_CONFIDENCE,
    ModelFinding,
    ModelPlanner,
    Paused,
)
from agents.investigate.recall import by_score, cited, learned
from agents.investigate.recall import confidence as memory_confidence
from agents.investigate.remembered import (
    calls_reach,
    fell_silent,
    measure_missed,
    reached_by_its_calls,
    remembered_lead_of,
    shape_missed,
)
from agents.investigate.split import split_unexplained
from agents.investigate.tools import call, prefetch
from agents.investigate.tools.changes import CHANGE_LOOKBACK_MS
from agents.investigate.tools.graph import MAX_HOPS, PEER_LABELS
from agents.investigate.tools.prefetch import Prefetched
from agents.investigate.weigh import (
    FALLBACK_CONFIDENCE,
    backlog_only,
    cpu_only,
    doubt,
    near_of,
    self_inflicted,
    slow_only,
    stalled_topic,
    stopped_callers,
    stopped_reader,
    surge_origins,
    surge_upstream,
    suspects,
    suspects_behind,
    unmeasured,
    victim_of,
    weigh,
)
from agents.tasks.coordination import Claim, TaskRun
from agents.tasks.kinds import BY_NAME, ROLE_KINDS

log = logging.getLogger(__name__)

#: Confidence of a cause named only because it is the one alerting component (alerts only):
#: below the 0.8 band, where findings must be right 9 times in 10.
ONLY_ALERTING = 0.6
#: Confidence of an alerting leaf a world file states (no dependency listed, none measured).
LEAF_CONFIDENCE = 0.45
#: Confidence (times coverage) of the one silent component that explains the alerting ones,
#: alerts only: the graph's shape alone, a lead. A client's traffic surge, a configuration
#: push or a broker stall draw the same shape, and on ten memory stories the silent one named
#: this way at 0.6 was right 4 times in 13 (docs/benchmarks.md).
SILENT_SHAPE = 0.45
#: Failure kinds of a component slowed by load arriving from its callers (`surge_point`).
SLOW_KINDS = frozenset({"latency", "saturation"})
#: Topics among the walk's best candidates whose message flow is looked at (`_stalled_topic`).
MAX_TOPICS = 3
#: Callers a traffic surge is followed up through to its source (`Investigator._surge_source`).
SURGE_HOPS = 3


def alert_dicts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The incident's alerts as the investigation's first step keeps them (`ToolContext.alerts`)
    from `incident_alerts` rows (or those `investigation_context` read ahead)."""
    return [
        {k: row[k] for k in ("key", "alertname", "component", "starts_at_ms", "status")}
        | {"summary": json.loads(row["annotations_json"]).get("summary", ""),
           "labels": json.loads(row["labels_json"] or "{}")}
        for row in rows
    ]  # fmt: skip


def similar_ask(rows: list[dict[str, Any]]) -> tuple[tuple[float, ...], tuple[str, ...], int]:
    """What the `similar_incidents` tool asks of the incident whose alerts `rows` are (as
    `alert_dicts` takes them): its text vector, its alerting components and its start (ms)."""
    every = alert_dicts(rows)
    alerts, _ = symptoms_of(every)
    alerting = tuple(dict.fromkeys(a["component"] for a in alerts if a["component"]))
    opened = min((a["starts_at_ms"] for a in every), default=0)
    return tuple(similar.text_vector(similar.incident_text(alerts))), alerting, opened


def symptoms_of(
    alerts: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """The alerts the rules, memory and the model reason about, and the monitoring gaps left
    out of them (`failure_kinds.monitoring_gaps`: a component whose alerts all say its
    monitoring returned no data, beside real alerts elsewhere): its component is not a symptom
    a cause explains, nor one that lifts a cause's coverage or confidence. `alerts`: as
    `alert_dicts` keeps them, in their order."""
    gaps = monitoring_gaps(alerts)
    return [a for a in alerts if a["component"] not in gaps], gaps


def described(playbook: dict[str, Any]) -> list[str]:
    """The checks of a recalled playbook as run (`checks.gated`), each as a sentence people
    read (`checks.describe`), for the summary of a finding memory made (`recall.cited`). One
    that measured nothing (`results`, as `_recall` ran them: status `no_data`) says so: "no
    recent change" with no change source was not checked, and a page must not say it held. A
    signature that held by its components only (`kinds_differ`) says that, not "the same shape
    again"."""
    results = playbook.get("results") or []
    said = []
    for n, check in enumerate(gated(playbook)):
        measured = n >= len(results) or results[n].get("status") != "no_data"
        by_components = n < len(results) and kinds_differ(results[n])
        said.append(describe(check, playbook["candidate"], measured, by_components))
    return said


def one_per_playbook(used: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The USED rows a Decision keeps: one per playbook (its USED edge is one per playbook),
    the one that steered, else one that applied, else the first checked. A playbook recalled
    both for its own cause and, by kind transfer, for another component is checked for each."""
    kept: dict[str, dict[str, Any]] = {}
    for row in used:
        best = kept.get(row["playbook"])
        if best is None or (row["steered"], row["applicable"]) > (
            best["steered"],
            best["applicable"],
        ):
            kept[row["playbook"]] = row
    return list(kept.values())


def surge_point(
    cause: str | None,
    alerting: list[str],
    alertnames: dict[str, list[str]],
    candidates: list[Candidate],
) -> str | None:
    """Where rule 5 (alerts only) sees a traffic surge arrive for the chosen `cause`: the cause
    itself when one of its alerts is a traffic alert (`surge`); else the one alerting component
    with a traffic alert whose calls reach the cause, when the cause's own alerts (if it has
    any) are all about slowness (`SLOW_KINDS`): load arriving there slows what it calls, as a
    tracking API flooded by a partner slows the database behind it. An error or a kind of its
    own on the cause says it fails by itself (a retry storm raises request rates too). None
    otherwise."""
    if cause is None:
        return None
    if surge(alertnames.get(cause, [])):
        return cause
    found = next((c for c in candidates if c.name == cause), None)
    if found is None:
        return None
    surged = [
        a for a in alerting
        if a != cause and a in found.covers and surge(alertnames.get(a, []))
    ]  # fmt: skip
    own = {classify(n) for n in alertnames.get(cause, [])}
    return surged[0] if len(surged) == 1 and own <= SLOW_KINDS else None


def surge_of(
    names: list[str],
    alerting: list[str],
    alertnames: dict[str, list[str]],
    candidates: list[Candidate],
) -> str | None:
    """`surge_point` of the rules' remaining causes `names` (one, or several the graph cannot
    separate): the component where the surge arrives when every one of them agrees on it (a
    flooded storefront slowing both the cart and the slots services behind it), else None."""
    points = {surge_point(n, alerting, alertnames, candidates) for n in names}
    return points.pop() if len(points) == 1 else None


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
    measured: dict[str, dict[str, Any]] = {}
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
                measured[n] = from_changes(ruled[n], CHANGE_LOOKBACK_MS, 0)
        names = [only]
    if len(names) == 1:
        cause = next(c for c in candidates if c.name == names[0])
        upstream = sorted(changed & (set(cause.covers) - {cause.name}))
        if len(upstream) == 1:
            ruled[cause.name] = (
                f"its symptoms follow a recent change on {upstream[0]}, which depends on it"
            )
            measured[cause.name] = from_changes(
                f"{upstream[0]} changed, {cause.name} did not", CHANGE_LOOKBACK_MS, 1
            )
            return Decision(
                upstream[0], upstream, round(0.7 * len(cause.covers) / len(alerting), 2),
                f"{upstream[0]} changed shortly before the incident and depends on {cause.name}, "
                f"which alerts: the change is the likely cause.", ruled, measured=measured,
            )  # fmt: skip
    coverage = best / len(alerting)
    point = surge_of(names, alerting, alertnames, candidates)
    if point is not None:
        reaching = [row for row in traffic_sources if row["path"][-1] == point]
        sources = [row for row in reaching if all(n in alerting for n in row["path"][1:])]
        found = list(dict.fromkeys(row["source"] for row in sources))
        if any(c.name == point and c.client for c in candidates):
            # the surge starts where the world says traffic comes from
            ruled.pop(point, None)
            for n in names:
                if n != point:
                    ruled[n] = f"slowed by the traffic surge from {point}, a traffic source"
            return Decision(
                point, [point], round(0.6 * coverage, 2),
                f"Traffic surge from {point}, a traffic source: its own alert says more requests "
                "than usual leave it; the components that alert are its victims.", ruled,
                [[point]],
            )  # fmt: skip
        if reaching:
            for n in names:
                ruled[n] = (
                    "receives a traffic surge: the cause is upstream" if point == n
                    else f"slowed by the traffic surge arriving at {point}: the cause is upstream"
                )  # fmt: skip
        if found:
            paths = [row["path"] for row in sources]
            if len(found) == 1:
                return Decision(
                    found[0], found, round(0.6 * coverage, 2),
                    f"Traffic surge on {point}; the only traffic source upstream through "
                    f"alerting components is {found[0]}.", ruled, paths,
                )  # fmt: skip
            return Decision(
                None, found, round(0.5 / len(found), 2),
                f"Traffic surge on {point}; the graph cannot tell which traffic source "
                f"sends it: {', '.join(found)}.", ruled, paths,
            )  # fmt: skip
        if reaching:
            # The load still comes from upstream, through components that raise no alert: the
            # traffic sources are the candidates, a lead at most (nothing measured the path).
            far = list(dict.fromkeys(row["source"] for row in reaching))
            quiet = sorted({n for row in reaching for n in row["path"][1:-1]} - set(alerting))
            through = f" through {', '.join(quiet)}, which raise no alert" if quiet else ""
            return Decision(
                far[0] if len(far) == 1 else None, far,
                round(SILENT_SHAPE * coverage / len(far), 2),
                f"Traffic surge on {point}; the load comes from upstream ({', '.join(far)}"
                f"{through}): a lead, not a conclusion (live evidence would measure the rates).",
                ruled,
                [row["path"] for row in reaching],
            )  # fmt: skip
    if len(names) == 1:
        silent = names[0] not in alerting
        if len(alerting) == 1 and not silent:
            # Explaining itself is not evidence: the alerts say where it hurts, not why.
            return Decision(
                names[0], names, ONLY_ALERTING,
                f"{names[0]} is the only alerting component; nothing the world knows behind it "
                "alerts. One alert says where it hurts, not why (live evidence would).", ruled,
                measured=measured,
            )  # fmt: skip
        confidence = round(coverage * (SILENT_SHAPE if silent else 0.9), 2)
        how = "does not alert itself but " if silent else ""
        return Decision(
            names[0], names, confidence,
            f"{names[0]} {how}explains {best} of {len(alerting)} alerting components "
            f"({', '.join(alerting)}).", ruled, measured=measured,
        )  # fmt: skip
    return Decision(
        None, names, round(coverage * 0.5 / len(names), 2),
        f"Inconclusive: {', '.join(names)} each explain {best} of {len(alerting)} alerting "
        "components and the graph cannot separate them.", ruled,
    )  # fmt: skip


class Investigator:
    """Runs one claimed `investigate` task (see module docstring), or a `reinvestigate` task,
    which triage enqueues when an alert on a new component joins an open incident."""

    kinds = ROLE_KINDS["investigator"]

    def __init__(
        self,
        walk_hops: int = 6,
        prometheus: Prometheus | dict[str, Prometheus] | None = None,
        model: ModelPlanner | None = None,
        memory: Literal["graph", "text", "none"] = "graph",
        max_recalled: int = 10,
    ) -> None:
        self.walk_hops = walk_hops
        #: What memory it uses (`BLAST_MEMORY`): `graph` recalls playbooks and keeps similar
        #: incidents; `text` only keeps similar incidents (a model may read them); `none`.
        self.memory = memory
        self.prometheus = prometheus
        #: Recalled playbooks checked per run, best first (`BLAST_MAX_RECALLED_PLAYBOOKS`).
        self.max_recalled = max_recalled
        #: The optional model planner (`BLAST_PLANNER`), asked when the rules are unsure.
        self.model = model

    def source(self, graph: str) -> Prometheus | None:
        """The evidence source of the tenant whose graph is `graph`: one client for all, or
        each tenant's own (`gateway.ops.runtime.prometheus_clients`), or None."""
        if isinstance(self.prometheus, dict):
            return self.prometheus.get(graph)
        return self.prometheus

    def read_ahead(self, graph: TenantGraph, claims: list[Claim]) -> dict[str, Prefetched]:
        """The investigation contexts of a batch of claimed tasks (`prefetch.read_many`, one
        query), by task id, for the first task of each incident only: a second task on the
        same incident runs after the first wrote its finding (or split it), so it reads its own
        then. A task with stored steps does not use it (`run`)."""
        first: dict[str, str] = {}
        for claimed in claims:
            first.setdefault(claimed.incident_id, claimed.task_id)
        read = prefetch.read_many(graph, list(first), self.walk_hops, CHANGE_LOOKBACK_MS)
        if self.memory != "none" and read:  # and their similar incidents, in one more query
            asks = {incident: similar_ask(known.alerts) for incident, known in read.items()}
            rows = similar.nearest(graph, [("", *ask) for ask in asks.values()])
            read = {
                incident: replace(known, similar=(asks[incident], found))
                for (incident, known), found in zip(read.items(), rows, strict=True)
            }
        return {first[incident]: known for incident, known in read.items()}

    def run(self, task: TaskRun) -> None:
        """Investigate, write the Finding, complete the task and enqueue `respond` (or, after a
        re-investigation, `notify_update`).

        Memory first: recalled playbooks whose checks all hold give the diagnosis with no
        planner; otherwise the rule-based planner decides, and the model planner (when
        configured) takes over an unsure finding; a pause (every model cooling down) returns
        with nothing written. Raises `LeaseLost` (stop) or
        `GraphUnavailable` (retry later).
        """
        graph, incident_id = task.graph, task.claim.incident_id
        known = None
        if task.next_stored() is None:  # a fresh start: what the tools read, in one round trip
            known = task.ahead
            if known is None:  # not read with its batch's (`read_ahead`)
                known = prefetch.read(graph, incident_id, self.walk_hops, CHANGE_LOOKBACK_MS)
        alerts = task.step(
            "incident_alerts", {"incident_id": incident_id},
            lambda: alert_dicts(known.alerts if known is not None
                                else graph.rows("incident_alerts", {"incident_id": incident_id})),
            deferred=True,
        )  # fmt: skip
        # a component whose alerts only say its monitoring went silent, beside real alerts,
        # is listed apart (`gap_note`), not weighed as a symptom
        symptoms, gaps = symptoms_of(alerts)
        alerting = list(dict.fromkeys(a["component"] for a in symptoms if a["component"]))
        evidence = Evidence(
            graph, symptoms, alerting, min((a["starts_at_ms"] for a in alerts), default=0),
            self.source(graph.name),
        )  # fmt: skip
        if known is not None and known.opened_ms == evidence.opened_ms:
            evidence.prefetched = known
        evidence.memory = self.memory
        evidence.incident_id = incident_id  # its own lessons are not recalled (`recall.rank`)
        used, steered, missed = (
            self._recall(task, evidence) if self.memory == "graph" else ([], None, [])
        )
        remembered = self._remember(task, evidence)
        candidates: list[Candidate] = []
        changes: list[dict[str, Any]] = []
        rivals: Decision | None = None  # the rules' finding beside memory's, if they ran
        if steered is not None:
            decision = Decision(
                steered["candidate"], [steered["candidate"]], memory_confidence(steered),
                cited(steered, described(steered)), surge_paths=[steered["path"]],
            )  # fmt: skip
            planner = "memory"
            # a lead: held only by its components, or trusted under the line (untried, or it
            # misled before); the rules may be surer
            lead = bool(steered.get("kinds_differ")) or decision.confidence < LEAD_BELOW
            # what is measured now may outrank memory; a lead (`_recall`), sure rules too;
            # rules surer of memory's own cause lend it their confidence. Sure memory with
            # alerts only yields only to an alerting component that alone explains every alert
            # whose alerts its checks never looked at (`alone_explains`, `claimed`)
            weighed = evidence.prometheus is not None or lead
            measured, found, looked = self._rules(task, evidence)
            rivals = measured
            sure = measured.root_cause is not None and measured.confidence >= LEAD_BELOW
            # the live evidence measured memory's cause as another's victim: memory was
            # checked against it and lost, however unsure the rules are otherwise
            refuted = (
                victim_of(measured, steered["candidate"])
                if evidence.prometheus is not None
                else None
            )
            # an alerting component that alone explains every alert, memory's cause not
            # explaining it: one fault explains the incident, memory's needs a second
            longer = alone_explains(found, alerting, steered, used, claimed=not lead)
            if longer is not None and not lead:
                # one behind memory's cause may alert from its fault (retries, a flood) or
                # beside it (a red herring below): the engineers' word stands there
                cause = steered["candidate"]
                behind = self._reach(task, evidence, [cause, *alerting]).get(cause, set())
                longer = alone_explains(found, alerting, steered, used, True, behind)
            if lead and longer is None:  # a cause the rules left standing explains more
                longer = self._explains_more(task, evidence, steered, measured)
            if (
                refuted is not None
                or longer is not None
                or outranks(measured, decision)
                or (
                    lead
                    and sure
                    and measured.root_cause != decision.root_cause
                    and not left_open(measured, decision.root_cause)
                )
            ):
                rivals = None  # the rules decide: their own rivals stand as they are
                for row in used:  # it did not decide: no trust moves for it
                    row["steered"] = False
                decision = overruled(measured, steered, decision.confidence, refuted, longer)
                candidates, changes, planner = found, looked, "rules"
                # as with no playbook held (below), less the overruled cause's playbooks
                others = [p for p in missed if p["candidate"] != steered["candidate"]]
                remembered_lead = self._remembered_lead(task, evidence, decision, others, found)
                if remembered_lead is not None:
                    decision, planner = remembered_lead, "memory"
                elif (again := corrected_before(steered, decision, evidence)) is not None:
                    decision = again
            elif (
                weighed
                and sure
                and measured.root_cause == decision.root_cause
                and measured.confidence > decision.confidence
            ):  # the rules name memory's cause on their own: as sure as they are
                decision = replace(
                    decision, confidence=measured.confidence,
                    summary=f"{cited(steered, described(steered), measured.confidence)} "
                    f"The rules name it too, at {measured.confidence:.2f}: "
                    f"{measured.summary}",
                    # what they ruled out, and on which measurements, stands with them
                    ruled_out=measured.ruled_out, measured=measured.measured,
                    evidence=measured.evidence, separated_by=measured.separated_by,
                )  # fmt: skip
            if rivals is not None:
                decision = with_rivals(decision, rivals)
        else:
            decision, candidates, changes = self._rules(task, evidence)
            planner = "rules"
            remembered_lead = self._remembered_lead(task, evidence, decision, missed, candidates)
            if remembered_lead is not None:
                decision, planner = remembered_lead, "memory"
        # a caller people named before reaches what is blamed now: nothing measured tells
        # its flood from the blamed component's own fault (`caller_before`). That doubt is
        # memory's word, not a tie the walk left: the model would read the same alerts, with
        # nothing measured either, so it is not asked (as for memory's own findings)
        lessons = [*missed, *([steered] if steered and planner != "memory" else [])]
        doubted = self._caller_before(task, evidence, decision, lessons)
        asked = (
            (doubted, planner, None)
            if doubted is not None
            else self._ask_model(task, evidence, decision, planner, len(alerts))
        )
        if asked is None:
            return  # paused until a model is back; a worker resumes from the stored steps
        decision, planner, model_used = asked
        gap = monitoring_gap(alerts)  # only no-data alerts: the monitoring, not the service
        if gap is not None:
            names = alerting or decision.candidates[:1]
            decision = decision.in_doubt(names, gap) if names else Decision(None, [], 0.0, gap)
        if gaps:
            decision = replace(decision, summary=f"{decision.summary} {gap_note(gaps)}")
        task.metrics.planner_calls.labels(planner=planner).inc()
        if used:
            # the steering playbook's remediation (if it has one) is proposed only while memory
            # still decides: a model that overruled it named another cause
            kept = steered is not None and planner == "memory"
            task.fenced(
                "record_decision",
                {"decision_id": f"decision:{task.claim.task_id}", "planner": planner,
                 "used": one_per_playbook(used),
                 "propose": steered["id"] if kept and steered else None,
                 "candidate": decision.root_cause if kept else None},
            )  # fmt: skip
        if remembered["similar_json"] is not None and decision.root_cause is not None:
            alike = self._with_established(task, evidence, decision.root_cause)
            cited_first = similar.first_of_cause(alike, decision.root_cause)
            remembered["similar_json"] = json.dumps(cited_first, ensure_ascii=False)
        decision = still_to_check(decision)
        paths = self._paths(task, evidence, decision, candidates)
        outcome = "conclusive" if decision.root_cause else "inconclusive"
        initial = task.claim.kind == "investigate"
        follow_up = {
            "outcome": outcome,
            "next_kind": BY_NAME[task.claim.kind].then,
            "next_id": f"respond:{incident_id}" if initial else f"update:{task.claim.task_id}",
        }
        # A split needs alerts on two components at least. Alerts on another component that
        # joined since this task read them enqueued a `reinvestigate`, which splits if need be:
        # with fewer, nothing can be split, and the finding's write completes the task too
        # (with its batch's findings when the worker holds them, `TaskRun.held`).
        may_split = len(alerting) + len(gaps) > 1
        finding = {
            "finding_id": f"finding:{incident_id}",
            "root_cause": decision.root_cause,
            "candidates": decision.candidates,
            "confidence": decision.confidence,
            "summary": decision.summary,
            "conclusive": decision.root_cause is not None,
            "paths_json": json.dumps(paths, ensure_ascii=False),
            "ruled_out_json": json.dumps(decision.ruled_out, sort_keys=True, ensure_ascii=False),
            "planner": planner,
            "model": model_used.model if model_used else None,
            "second_opinion_json": json.dumps(
                model_used.second_opinion if model_used else None, ensure_ascii=False
            ),
            "separated_by": decision.separated_by,
            "evidence_json": json.dumps(decision.evidence, ensure_ascii=False),
            "measured_json": json.dumps(measurements(decision), sort_keys=True, ensure_ascii=False),
            "impacted": alerting,
            "change_ids": [c["id"] for c in changes if c["component"] in decision.candidates],
            "alerts_seen": len(alerts),
        } | remembered
        if may_split:  # the task stays claimed until the split is done
            written = task.fenced_row(
                "write_finding", finding | dict.fromkeys(follow_up) | task.chained(None)
            )
        else:
            task.complete_with("write_finding", finding | follow_up)
        task.metrics.findings.labels(planner=planner, outcome=outcome).inc()
        log.info("incident %s: %s", incident_id, decision.summary)
        if may_split:
            if written["fresh"]:
                by_calls = (
                    planner == "memory"
                    and steered is not None
                    and steered["candidate"] == decision.root_cause
                    and EXPLAINS_BY_CALLS in steered["checks"]
                )
                split_unexplained(task, decision.root_cause, self.walk_hops, by_calls)
            task.complete(outcome, follow_up["next_kind"], follow_up["next_id"])

    def _ask_model(
        self, task: TaskRun, ev: Evidence, decision: Decision, planner: str, seen: int
    ) -> tuple[Decision, str, ModelFinding | None] | None:
        """The model planner's turn (agents/investigate/model_planner.py) when it is configured and
        the
        finding so far is unsure: `(decision, planner, the model's finding or None)`; the
        decision so far when no model runs or none could answer. None: the task was paused.
        `seen`: how many alerts the incident held when this task read them (gaps included).

        A model's finding that already saw these alerts stands before the rules' confidence is
        weighed: after a split the rules are sure only because the model's answer
        sent the alerts it did not explain away, and a rules finding would hide that a model
        broke the tie (confident and wrong is the worst outcome, docs/architecture.md, evidence)."""
        if self.model is None:
            return decision, planner, None
        if planner != "memory":
            reused = self._model_finding_seen(task, seen)
            if reused is not None:
                return reused
        if not self.model.wanted(planner, decision.root_cause, decision.confidence):
            return decision, planner, None
        rules = {"planner": planner, "root_cause": decision.root_cause,
                 "candidates": decision.candidates, "confidence": decision.confidence,
                 "summary": decision.summary, "ruled_out": decision.ruled_out}  # fmt: skip
        try:
            found = self.model.run(task, ev, rules)
        except Paused:
            return None
        if found is None:
            return decision, planner, None
        ruled = {k: v for k, v in decision.ruled_out.items() if k not in found.candidates}
        chosen = Decision(
            found.root_cause, found.candidates, found.confidence, found.summary, ruled,
            separated_by=found.reasoning if found.root_cause else "",
            evidence=decision.evidence,  # what the rules gathered still stands
        )  # fmt: skip
        if (
            chosen.root_cause == decision.root_cause
            and decision.confidence < LEAD_BELOW
            and not measured_cause(decision)
        ):
            # agreeing adds no measurement: a cause the rules name only as a lead, nothing
            # measured about it, stays a lead however sure the model says it is
            chosen = replace(chosen, confidence=min(chosen.confidence, decision.confidence))
        behind: set[str] = set()
        if guessed_over(decision, chosen) and decision.root_cause and chosen.root_cause:
            # one walk from both, asked only then: is the model's cause behind the measured one?
            both = [decision.root_cause, chosen.root_cause]
            behind = self._reach(task, ev, both).get(decision.root_cause, set())
        guessed = guessed_over(decision, chosen, behind)
        if guessed or outranks(decision, chosen):
            named = found.root_cause or "no single cause"
            backs = ", which nothing measured backs" if guessed else ""
            note = (f" A model named {named} at {found.confidence:.2f}{backs}; the measured "
                    "cause stands.")  # fmt: skip
            return replace(decision, summary=decision.summary + note), planner, None
        others = unseparated_by_rules(decision, chosen)
        if others and chosen.confidence > UNSEPARATED_CONFIDENCE:
            # the rules left these apart from the model's cause with nothing measured: its
            # choice among them is a judgement, not a measurement
            chosen = replace(
                chosen, confidence=UNSEPARATED_CONFIDENCE,
                summary=f"{chosen.summary} The rules could not tell it from "
                f"{', '.join(others[:3])}, and nothing measured does.",
            )  # fmt: skip
        return chosen, "model", found

    def _model_finding_seen(
        self, task: TaskRun, alerts: int
    ) -> tuple[Decision, str, ModelFinding] | None:
        """On a re-investigation, the model's finding of an earlier investigation that already
        saw all `alerts` (they arrived in one batch), or all the incident still holds (some
        left in a split): reused, so no model is asked twice about the same alerts. None
        otherwise.

        A reuse is a Step; a miss is not, so a task paused before any model answered looks
        again when it resumes (the investigation paused with it may have answered meanwhile),
        while one whose earlier attempt began a conversation resumes that conversation."""
        if task.claim.kind != "reinvestigate":
            return None
        incident_id = task.claim.incident_id
        args = {"incident_id": incident_id}
        earlier = task.next_stored()
        if earlier is None:
            row = task.graph.one("model_finding", args)
            # `alerts` is what this task read first (a resumed task replays it): after a split
            # since, the incident holds fewer, and those are what the finding must have seen.
            if row is None or int(row["alerts_seen"]) < min(alerts, int(row["alerts_now"])):
                return None
            task.step("model_finding", args, lambda: row, deferred=True)
        elif earlier == "model_finding":
            row = task.step("model_finding", args, lambda: None)  # the stored row, reused
            if row is None:
                return None
        else:
            return None  # an earlier attempt began its own conversation: that one resumes
        opinion = json.loads(row["second_opinion_json"] or "null")
        found = ModelFinding(
            row["root_cause"], list(row["candidates"]), float(row["confidence"]),
            row["summary"], row["model"], opinion, 0, 0, 0, row["separated_by"] or "",
        )  # fmt: skip
        ruled = json.loads(row["ruled_out_json"] or "{}")
        chosen = Decision(
            found.root_cause, found.candidates, found.confidence, found.summary, ruled,
            separated_by=found.reasoning, evidence=json.loads(row["evidence_json"] or "[]"),
        )  # fmt: skip
        return chosen, "model", found

    def _recall(
        self, task: TaskRun, ev: Evidence
    ) -> tuple[list[dict[str, Any]], dict[str, Any] | None, list[dict[str, Any]]]:
        """Recall playbooks near the alerting components, best first (weight × trust), and run
        each one's checks (each a step) until one holds entirely with its signature's kinds
        and no playbook of another cause with the same score does too (then none steers); one
        held only by its components (`checks.kinds_differ`) steers if no playbook of another
        cause holds, or if of the causes held so its own explains the most alerting components
        by a dependency path, alone (`_explained`), marked `kinds_differ` (`recall.confidence`:
        a lead).

        Returns (the USED rows for the Decision, the steering playbook or None, the playbooks
        that missed only on the incident's shape, `recall.shape_missed`, each with its USED
        `row`; none when playbooks of more than one cause held and none steers: memory is
        unsure among those, and one that missed is no better a lead).
        """
        if not ev.alerting:
            return [], None, []
        # listed by reach (for people and the model planner), checked by trust: the most
        # trusted first, as the ties below assume
        listed = call(task, ev, "recall_playbooks", {}).data or []
        recalled = sorted(listed, key=by_score)[: self.max_recalled]
        used: list[dict[str, Any]] = []
        missed: list[dict[str, Any]] = []
        # Two remembered causes that hold alike leave memory unsure: one held with its kinds
        # names its cause unless another cause's playbook of the same score (weight × trust)
        # holds with its kinds too; one held only by its components (`checks.kinds_differ`)
        # is a lead, followed only if no playbook of another cause holds with its kinds (two
        # silent causes behind the same callers are told apart by the callers' kinds), and of
        # several held by their components only, the one that explains the most.
        found: dict[str, Any] | None = None  # held with its kinds
        leads: list[dict[str, Any]] = []  # held by components only
        unsure = False
        for playbook in recalled:
            if found is not None and playbook["score"] < found["score"]:
                break  # ranked by score: no tie left
            if found is not None and playbook["candidate"] == found["candidate"]:
                continue
            results: list[dict[str, Any]] = []
            candidate: str = playbook["candidate"]
            for check in gated(playbook):
                args = {"playbook": playbook["id"], "candidate": candidate, "check": check}
                result = task.step(
                    "check", args, partial(evaluate, check, candidate, ev), touched=[candidate]
                )
                results.append({"check": check} | result)
                if not result["held"] and not (
                    candidate == playbook["pinned_to"]
                    and fell_silent(check, candidate, ev.alerting)
                ):
                    break  # past a silent cause's own alert check: its callers may say more
            # Context checks (nothing changed elsewhere, symptoms somewhere) cannot single out
            # the candidate: a playbook steers only if a check that held looks at it.
            applicable = (
                bool(results)
                and all(r["held"] for r in results)
                and any(about_candidate(r["check"]) for r in results)
            )
            row = {
                "playbook": playbook["id"], "path": playbook["path"],
                "candidate": playbook["candidate"], "trust": playbook["trust"],
                "weight": playbook["weight"], "checks_json": json.dumps(results),
                "applicable": applicable, "steered": False,
            }  # fmt: skip
            used.append(row)
            checked = playbook | {"row": row, "results": results}  # as run, with its USED row
            if not applicable:
                if shape_missed(playbook, results, ev.alerting):
                    missed.append(checked)
                elif measure_missed(playbook, results, len(gated(playbook))):
                    missed.append(checked | {"quiet": True})
                continue
            if any(kinds_differ(r) for r in results):
                leads.append(checked)
            elif found is None:
                found = checked
            elif backed(found) and not backed(playbook):
                continue  # an untried playbook does not unsettle a lesson people gave
            elif backed(playbook) and not backed(found):
                found = checked  # nor does one that came first in the order
            else:
                unsure = True  # another cause holds as well, as trusted
                break
        # Causes whose checks held, several of them alike, are what memory is unsure among: a
        # cause whose playbooks missed on the incident's shape says less than any of them, so
        # it is no lead then (`remembered.unrefuted` would otherwise single it out, the only
        # cause left in `missed`, and name it over the ones that held).
        if found is not None:
            if unsure:
                return used, None, []
            found.pop("row")["steered"] = True
            return used, found, missed
        if len({lead["candidate"] for lead in leads}) > 1:
            # held by their components alike: the one that explains the most alerting
            # components, if one does, as the rules' ties are broken (`explains_fewer`)
            counts = self._explained(task, ev, [lead["candidate"] for lead in leads])
            leads = [lead for lead in leads if not explains_fewer(counts, lead["candidate"])]
            if len({lead["candidate"] for lead in leads}) > 1:
                return used, None, []
        if not leads:
            return used, None, missed
        lead = leads[0]
        lead.pop("row")["steered"] = True
        lead["kinds_differ"] = True
        return used, lead, missed

    def _remembered_lead(
        self,
        task: TaskRun,
        ev: Evidence,
        decision: Decision,
        missed: list[dict[str, Any]],
        walked: list[Candidate],
    ) -> Decision | None:
        """`remembered.remembered_lead_of` over those of `missed` (`_recall`'s) that the rules
        could not tell apart from their own candidates, and whose cause leaves no alert
        unexplained that a candidate the rules left standing explains (`explains_fewer`):
        memory breaks the rules' ties among the causes that explain the most. Among the
        remembered causes, the one whose earlier alerts are back the most, then the one that
        explains the most, then the more trusted (`remembered.unrefuted`). When the evidence
        blamed no call near the incident, a cause's calls measured as usual refute it no more
        than any other (`calls_as_usual`). Nothing is counted when the rules are sure or
        nothing missed (no lead is taken then).

        A traffic source in front of the alerting components (`client` in the world) is one
        only when the rules weighed it (the walk's candidates, `walked`, or the decision's: a
        surge): a flood the alerts do not show is no tie the rules left. An unseen month's
        staff-login failures after a deploy of the auth service, inconclusive between it and
        its database, had been led to the partner integrations remembered from a flood."""
        weighed = {c.name for c in walked} | set(rival_names(decision))
        missed = [p for p in missed if not p.get("client") or p["candidate"] in weighed]
        if not missed or (decision.root_cause is not None and decision.confidence >= LEAD_BELOW):
            return None
        rivals = rival_names(decision)
        counts = self._explained(task, ev, [*(p["candidate"] for p in missed), *rivals])
        kept = []
        for p in missed:
            if ev.quiet:  # every measured call near the incident read as usual: so did its cause's
                p = p | {"calls_as_usual": p["candidate"] in decision.measured}
            elif p.get("quiet"):
                # one that missed on its calls only, while the evidence blamed calls: a lead
                # only when those explain fewer alerting components than its cause (an unseen
                # newsroom's syndication feed failing 14 % beside one of two alerts)
                if (words := outexplained(counts, p["candidate"], rivals)) is None:
                    continue
                p = p | {"outexplained": words}
            # explaining fewer than a candidate the rules left standing rules a cause out; among
            # the remembered causes, whose earlier alerts are back counts first (`unrefuted`)
            if not explains_fewer(
                {n: counts[n] for n in [p["candidate"], *rivals]}, p["candidate"]
            ):
                kept.append(p)
        return remembered_lead_of(decision, kept, counts)

    def _explains_more(
        self, task: TaskRun, ev: Evidence, lead: dict[str, Any], rules: Decision
    ) -> str | None:
        """Why a remembered lead's cause (`lead`: the `recall` entry that held, with its
        check `results`) is the longer explanation, or None: a cause the rules left standing
        (`rival_names`) explains more alerting components by a dependency path
        (`_explained`) than it does (by its own calls, for a caller's or a producer's lesson:
        `remembered.reached_by_its_calls`). Memory breaks the rules' ties; an untried playbook
        whose one check held on an alerting service does not outweigh a database that
        explains every alerting service (a new user's trial: a hand-written "payments errors:
        restart payments" paged the checkout team for a postgres outage and split the fourth
        alert off)."""
        cause: str = lead["candidate"]
        rivals = [n for n in rival_names(rules) if n != cause]
        if not rivals:
            return None
        counts = dict(self._explained(task, ev, [cause, *rivals]))
        counts[cause] = max(counts[cause], reached_by_its_calls(lead) or 0)
        best = max(rivals, key=lambda n: counts[n])
        if counts[best] <= counts[cause]:
            return None
        return (
            f"{best} explains {counts[best]} of {len(ev.alerting)} alerting components, "
            f"{cause} {counts[cause]}"
        )

    def _caller_before(
        self, task: TaskRun, ev: Evidence, decision: Decision, lessons: list[dict[str, Any]]
    ) -> Decision | None:
        """`caller_before` with the first of `lessons` (`recall` entries with the `results`
        of their checks: those that missed only on the incident's shape, or held and were
        overruled) that names a caller whose own calls reach the decision's cause
        (`remembered.calls_reach`) and as many alerting components as that cause explains
        (`_explained`); None when none does, with live evidence (a flood's call rate is
        measured then), or when the decision is already a lead."""
        cause = decision.root_cause
        if ev.prometheus is not None or cause is None or decision.confidence < LEAD_BELOW:
            return None
        callers = [p for p in lessons if p["candidate"] != cause and calls_reach(p, cause)]
        if not callers:
            return None
        explained = self._explained(task, ev, [cause])[cause]
        callers = [p for p in callers if (reached_by_its_calls(p) or 0) >= explained]
        return caller_before(decision, callers[0]) if callers else None

    def _readers_on_paths(self, task: TaskRun, ev: Evidence, store: str) -> list[str]:
        """The components just before `store` on the other alerting components' dependency
        paths to it (`checks.paths_to`): the services that read it for them, nearest path
        first. A checkpointed step (`store_readers`), read from the graph."""
        others = [a for a in ev.alerting if a != store]

        def read() -> list[str]:
            paths = sorted(
                (p for p in paths_to(ev, others, store).values() if p and len(p) > 1), key=len
            )
            return list(dict.fromkeys(p[-2] for p in paths))

        found: list[str] = task.step("store_readers", {"component": store}, read, deferred=True)
        return found

    def _explained(self, task: TaskRun, ev: Evidence, names: list[str]) -> dict[str, int]:
        """How many alerting components reach each of `names` by a dependency path
        (`checks.paths_to`, as `explains_alerting` reads it): a checkpointed step
        (`explains`), read from the graph."""
        names = list(dict.fromkeys(names))
        counts: dict[str, int] = task.step(
            "explains",
            {"candidates": names},
            lambda: {
                name: sum(1 for path in paths_to(ev, ev.alerting, name).values() if path)
                for name in names
            },
            deferred=True,
        )
        return counts

    def _with_established(self, task: TaskRun, ev: Evidence, cause: str) -> list[dict[str, Any]]:
        """The similar incidents found (`ev.similar`), with the latest earlier incident people
        established `cause` for (`similar.established`, a checkpointed step) last among them
        when none of them is one (`similar.first_of_cause` then cites it first): the page
        says "this happened on the 3rd, Priya confirmed it was the orders database" though
        the alerts were worded otherwise (issue: memory that carries the repeats). At most
        `similar.TOP` rows. Only with graph memory (`BLAST_MEMORY=graph`), and only when one of
        the similar incidents got a verdict (else `ev.similar` as it is)."""
        found = list(ev.similar or [])
        # text memory is the words alone (the verdicts are graph memory's); a tenant whose
        # nearest incidents got no verdict (a new one, or one that gives none) pays no lookup
        if (
            self.memory != "graph"
            or not any(r["confirmed_by"] for r in found)
            or any(r["root_cause"] == cause and r["confirmed_by"] for r in found)
        ):
            return found
        row = task.step(
            "established_incident",
            {"cause": cause},
            lambda: similar.established(
                task.graph, task.claim.incident_id, cause, ev.text_vector, ev.alerting,
                ev.opened_ms,
            ),
            touched=[cause],
            deferred=True,
        )  # fmt: skip
        if row is None or not row["confirmed_by"]:
            return found
        return [*[r for r in found if r["id"] != row["id"]][: similar.TOP - 1], row]

    def _remember(self, task: TaskRun, ev: Evidence) -> dict[str, Any]:
        """What similarity keeps on the incident, written with the finding: its text vector and
        the similar incidents found now (`agents.investigate.similar`; the lookup is a
        checkpointed tool step). Nothing without memory (`BLAST_MEMORY=none`)."""
        if self.memory == "none" or not ev.alerts:
            return {"text_vec": None, "similar_json": None}
        found = call(task, ev, "similar_incidents", {})
        ev.similar = found.data or []
        return {
            "text_vec": ev.text_vector,
            "similar_json": json.dumps(found.data or [], ensure_ascii=False),
        }

    def _rules(
        self, task: TaskRun, ev: Evidence
    ) -> tuple[Decision, list[Candidate], list[dict[str, Any]]]:
        """The rule-based planner (module docstring): coverage walk, changes, traffic sources.

        Returns the decision, the walk's candidates and the recent changes it looked at.
        """
        alerting = ev.alerting
        alertnames: dict[str, list[str]] = {}
        for a in ev.alerts:
            if a["component"]:
                alertnames.setdefault(a["component"], []).append(a["alertname"])
        walk = call(task, ev, "coverage_walk", {"hops": self.walk_hops})
        candidates = [
            Candidate(r["name"], r["covers"], r["distance"], r["client"], r["kind"], r["via_topic"])
            for r in walk.data or []
        ]
        names = [c.name for c in candidates]
        found = call(task, ev, "recent_changes", {"components": names})
        changes: list[dict[str, Any]] = found.data or []
        changed = {c["component"] for c in changes}
        first = decide(alerting, alertnames, candidates, changed, [])
        sources: list[dict[str, Any]] = []
        point = surge_of(first.candidates, alerting, alertnames, candidates)
        if point is not None:
            upstream = call(task, ev, "traffic_sources", {"component": point})
            sources = upstream.data or []
        first = decide(alerting, alertnames, candidates, changed, sources)
        peers: list[dict[str, Any]] = []
        if any(set(a.get("labels") or {}) & set(PEER_LABELS) for a in ev.alerts):
            peers = call(task, ev, "alert_peers", {}).data or []
        note = ""
        fine: dict[str, dict[str, Any]] = {}
        if ev.prometheus is not None:
            weighed, note, fine = self._evidence(task, ev, candidates, peers, changed)
            if weighed is not None:
                return weighed, candidates, changes
        named = self._named_by_peers(task, ev, candidates, peers, changed, first)
        if named is not None:
            named = doubt(named, alerting, ev.alerts, candidates, [], peers, {})
            named.summary = f"{note} {named.summary}".strip()
            return named, candidates, changes
        hard, dependents, config, order_only = self._behind(task, ev, first, candidates)
        cleared = sorted(set(hard) & set(fine))
        if cleared:  # measured healthy in the window: not what fails the alerting cause
            hard = [h for h in hard if h not in cleared]
            first.ruled_out |= {n: f"healthy: {fine[n]['text']}" for n in cleared}
            first.measured |= {n: fine[n] for n in cleared}
        x = first.root_cause
        readers: list[str] = []
        if x in alerting and not first.surge_paths and cpu_only(ev.alerts, x):
            # A CPU alert may be load arriving: `doubt` keeps the sources in front in doubt,
            # and a datastore's readers on the alerting components' paths to it.
            sources = call(task, ev, "traffic_sources", {"component": x}).data or []
            if any(c.name == x and c.kind == "datastore" for c in candidates):
                readers = self._readers_on_paths(task, ev, x)
        decision = doubt(
            first, alerting, ev.alerts, candidates, hard, peers, dependents, sources, config,
            readers,
        )  # fmt: skip
        decision = served_as_usual(decision, fine, ev.alerts)
        started = [n for n in order_only if n in decision.candidates and n in hard]
        if decision.root_cause is None and started:
            # alerts only, nothing is traced: start order stays a suspect, and the page says
            # what it rests on
            verb = "is" if len(started) == 1 else "are"
            decision.summary += (
                f" {', '.join(started)} {verb} known only from compose `depends_on` (start "
                "order, which may be no call)."
            )
        decision = self._unknown_behind(task, ev, decision, candidates, changed)
        decision = self._start_order_only(task, ev, decision, candidates)
        decision = self._silent_readers(task, ev, decision)
        if note:
            decision.summary = f"{note} {decision.summary}"
        return decision, candidates, changes

    def _evidence(
        self,
        task: TaskRun,
        ev: Evidence,
        candidates: list[Candidate],
        peers: list[dict[str, Any]],
        changed: set[str],
    ) -> tuple[Decision | None, str, dict[str, dict[str, Any]]]:
        """Read the call graph's health near the incident (`edge_health`, `service_errors`,
        `targets_down`) and weigh it (`weigh`). Returns the decision, or None with a
        note saying why the walk decides instead (evidence unavailable, or it blames nothing)
        and the components near the incident measured healthy then (name -> measurement),
        which the walk need not doubt.
        """
        near = sorted({c.name for c in candidates} | set(ev.alerting))
        edges = call(task, ev, "edge_health", {"components": near})
        if edges.status == "error":
            # Prometheus is down or refuses us: do not wait on it twice more.
            return None, f"Live evidence unavailable ({edges.detail}); alerts only.", {}
        ev.calling = {
            e["client"] for e in edges.data or [] if e["calls"] or e.get("baseline_calls")
        }
        ev.serving_only = serving_only(edges.data or [], ev.calling)
        services = call(task, ev, "service_errors", {"components": near})
        down = call(task, ev, "targets_down", {"components": near})
        clients = traffic_clients(edges.data or [])
        blamed = suspects(edges.data or [], services.data or [], peers)
        slow = [a for a in ev.alerting if slow_only(ev.alerts, a)]
        ways: dict[str, set[str]] | None = None
        if blamed and slow:
            # one walk from the suspects and the servers of the measured calls: which
            # suspects each depends on (`reach`), and which of those calls lead to a suspect
            # (`ways`, `weigh.carried`, asked only of alerts that say slow)
            served = {e["server"] for e in edges.data or [] if e["known"]}
            ways = self._reach(task, ev, sorted(set(blamed) | served))
            reach = {o: deps & set(blamed) - {o} for o, deps in ways.items() if o in blamed}
            reach = {o: deps for o, deps in reach.items() if deps}
        else:
            reach = self._reach(task, ev, blamed)
        win = window(edges.raw) or window(services.raw)
        backlog = [a for a in ev.alerting if backlog_only(ev.alerts, a)]
        decision = weigh(
            ev.alerting, candidates, edges.data or [], services.data or [], down.data or [],
            peers, clients, changed, reach, win, backlog, ways, slow,
        )  # fmt: skip
        if decision is not None:
            decision = self._surge_source(task, ev, decision, edges.data or [])
        if decision is None and backlog:
            decision = self._stopped_reader(task, ev, candidates, edges.data or [], win, backlog)
        if decision is None:
            decision = self._stalled_topic(task, ev, candidates, edges.data or [], win)
        if decision is None:
            measured = {
                name: m for name in near
                if healthy(m := calls_into(name, edges.data or [], services.data or [],
                                           down.data or [], win))
            }  # fmt: skip
            ev.quiet = bool(measured)
            return None, no_blame_note(edges.data or [], services.data or [], near, win), measured
        x = decision.root_cause
        if (
            x is not None
            and not decision.surge_paths
            and suspects_behind(x, candidates, ev.alerting)
        ):
            mine = call(task, ev, "neighbours", {"component": x}).data or []
            hard = [r["name"] for r in mine if _hard(r, "out") and not start_order_edge(r, x, ev)]
            decision = unmeasured(
                decision, ev.alerting, ev.alerts, candidates, hard, edges.data or [],
                services.data or [], down.data or [],
            )  # fmt: skip
            decision = read_at_start_up(decision, mine, edges.data or [], ev, win)
        return decision, "", {}

    def _stopped_reader(
        self,
        task: TaskRun,
        ev: Evidence,
        candidates: list[Candidate],
        edges: list[dict[str, Any]],
        win: str | None,
        backlog: list[str],
    ) -> Decision | None:
        """A backlog piles and nothing near the incident is to blame: the clients whose calls
        into it stopped may be a consumer that stopped reading (`weigh.stopped_reader`). Their
        own calls were read only where they touch the incident's components, so the rest of
        them are read now, then the calls into the servers they use from other clients (two
        `edge_health` steps, asked only when there is such a client outside them): a reader
        that stopped stops all its calls, while those servers still serve others."""
        near = near_of(candidates, ev.alerting, edges)
        readers = sorted(stopped_callers(edges, near) - near)
        if not readers:
            return None
        merged = list(edges)

        def read(components: list[str]) -> None:
            known = {(e["client"], e["server"], e.get("connection_type")) for e in merged}
            for e in call(task, ev, "edge_health", {"components": components}).data or []:
                if (e["client"], e["server"], e.get("connection_type")) not in known:
                    merged.append(e)

        read(readers)
        # the other clients of the servers they call: whether those servers still serve
        servers = sorted({e["server"] for e in merged if e["client"] in readers} - near)
        if servers:
            read(servers)
        return stopped_reader(merged, near, win or "", backlog)

    def _surge_source(
        self, task: TaskRun, ev: Evidence, decision: Decision, edges: list[dict[str, Any]]
    ) -> Decision:
        """A traffic surge followed to its source (`weigh.surge_upstream`): while the source
        named is not one the world marks as a traffic source, the calls into it are read
        (`edge_health`, a step each, at most `SURGE_HOPS`) and a caller whose rate jumped
        takes its place."""
        for _ in range(SURGE_HOPS):
            top = decision.root_cause
            if top is None or not decision.evidence or decision.evidence[0]["source"] != "traffic":
                return decision
            if any(e["client"] == top and e.get("client_is_source") for e in edges):
                return decision  # the world says the load starts there
            edges = call(task, ev, "edge_health", {"components": [top]}).data or []
            upstream = surge_upstream(decision, edges)
            if upstream is None:
                return decision
            decision = upstream
        return decision

    def _stalled_topic(
        self,
        task: TaskRun,
        ev: Evidence,
        candidates: list[Candidate],
        edges: list[dict[str, Any]],
        win: str,
    ) -> Decision | None:
        """When the evidence blames nothing: the topics among the walk's best candidates (at
        most `MAX_TOPICS`, each's producers, consumers and host from `neighbours`), asked
        whether their messages stalled (`weigh.stalled_topic`). Only one stalled topic names
        a cause; none, or several, leave it to the walk. Asked only when messaging edges were
        measured."""
        if not any(e.get("connection_type") == "messaging_system" for e in edges):
            return None
        best = max((len(c.covers) for c in candidates), default=0)
        topics = [c for c in candidates if c.kind == "topic" and len(c.covers) == best]
        if not topics:
            return self._stalled_host(task, ev, candidates, edges, win, best)
        found: list[Decision] = []
        for topic in topics[:MAX_TOPICS]:
            host, writers, readers = self._topic_ends(task, ev, topic.name)
            covers = next((len(c.covers) for c in candidates if c.name == host), len(topic.covers))
            stalled = stalled_topic(
                edges, topic.name, writers, readers, host, covers, len(ev.alerting), win
            )
            if stalled is not None:
                found.append(stalled)
        return found[0] if len(found) == 1 else None

    def _stalled_host(
        self,
        task: TaskRun,
        ev: Evidence,
        candidates: list[Candidate],
        edges: list[dict[str, Any]],
        win: str,
        best: int,
    ) -> Decision | None:
        """The readers of several topics on one broker alert together, so the broker explains
        more alerting components than any one of its topics: the topics the walk reached (at
        most `MAX_TOPICS`, most alerting components first) whose host is among the walk's
        best, asked together whether their messages stalled (`weigh.stalled_topic` over all
        their producer -> consumer edges). A producer that also reads a topic of that host is
        left out: it may have stopped writing because its input stopped."""
        reached = sorted((c for c in candidates if c.kind == "topic"), key=lambda c: -len(c.covers))
        leading = {c.name for c in candidates if len(c.covers) == best}
        hosts: dict[str, tuple[list[str], set[str], set[str]]] = {}
        for topic in reached[:MAX_TOPICS]:
            host, its_writers, its_readers = self._topic_ends(task, ev, topic.name)
            if host not in leading:
                continue
            names, writers, readers = hosts.setdefault(str(host), ([], set(), set()))
            names.append(topic.name)
            writers |= its_writers
            readers |= its_readers
        if len(hosts) != 1:
            return None
        ((host, (names, writers, readers)),) = hosts.items()
        return stalled_topic(
            edges, " and ".join(names), writers - readers, readers, host, best,
            len(ev.alerting), win,
        )  # fmt: skip

    def _topic_ends(
        self, task: TaskRun, ev: Evidence, topic: str
    ) -> tuple[str | None, set[str], set[str]]:
        """A topic's host, producers and consumers (`neighbours`, a checkpointed step)."""
        rows = call(task, ev, "neighbours", {"component": topic}).data or []
        into = [r for r in rows if r["direction"] == "in"]
        host = next((r["name"] for r in rows if r["edge"] == "HOSTED_ON"), None)
        return (
            host,
            {r["name"] for r in into if r["edge"] == "PUBLISHES"},
            {r["name"] for r in into if r["edge"] == "CONSUMES"},
        )

    def _named_by_peers(
        self,
        task: TaskRun,
        ev: Evidence,
        candidates: list[Candidate],
        peers: list[dict[str, Any]],
        changed: set[str],
        first: Decision,
    ) -> Decision | None:
        """Alerts only, when alerts name peers: weigh those edges like measured ones
        (`weigh`), and keep the answer if it explains as many alerting components as the
        walk's best and differs from it. None otherwise."""
        if not peers:
            return None
        reach = self._reach(task, ev, suspects([], [], peers))
        decision = weigh(ev.alerting, candidates, [], [], [], peers, (), changed, reach)
        best = max((len(c.covers) for c in candidates), default=0)
        covers = {c.name: len(c.covers) for c in candidates}
        if (
            decision is None
            or decision.root_cause is None
            or decision.root_cause == first.root_cause
            or covers.get(decision.root_cause, 0) < best
        ):
            return None
        decision.summary = f"{decision.summary} (Alerts only: the edge evidence is their labels.)"
        return decision

    def _reach(self, task: TaskRun, ev: Evidence, names: list[str]) -> dict[str, set[str]]:
        """Which of `names` each of them depends on (a `coverage_walk` from them); only asked
        when at least two could be blamed."""
        if len(names) < 2:
            return {}
        walk = call(task, ev, "coverage_walk", {"components": names, "hops": self.walk_hops})
        reach: dict[str, set[str]] = {}
        for row in walk.data or []:
            for origin in row["covers"]:
                if origin != row["name"] and row["name"] in names:
                    reach.setdefault(origin, set()).add(row["name"])
        return reach

    def _unknown_behind(
        self,
        task: TaskRun,
        ev: Evidence,
        decision: Decision,
        candidates: list[Candidate],
        changed: set[str],
    ) -> Decision:
        """Alerts only: an alerting cause X whose dependencies the world does not know (none at
        all, or only compose `depends_on` ones, which say start order, not calls) is not named
        from the alerts alone: whatever X calls that nobody recorded fails it the same way.

        - Kept as it is: X is a datastore (it calls nothing on the request path, so its own
          alerts are about itself), an alert on X is about its own process (memory, GC,
          disk; not CPU, which load from unrecorded callers raises too), or X changed
          recently (the change separates it).
        - Kept with confidence `LEAF_CONFIDENCE` when a person declared X's edges (a world
          file lists edges into X and none out of it: a leaf it states).
        - Otherwise inconclusive, naming X first, then what it is started after.
        """
        x = decision.root_cause
        mine = next((c for c in candidates if c.name == x), None)
        if x is None or x not in ev.alerting or decision.surge_paths or mine is None:
            return decision
        # CPU is its own process or load arriving from callers nobody recorded: not enough.
        own = self_inflicted([a for a in ev.alerts if classify(a["alertname"]) != "cpu"], x)
        if mine.kind == "datastore" or x in changed or own:
            return decision
        rows = call(task, ev, "neighbours", {"component": x}).data or []
        out = [r for r in rows if r["direction"] == "out" and r["purpose"] == "business"]
        if any(r.get("basis") != "depends_on" for r in out):
            return decision
        started = sorted(r["name"] for r in out)
        if not started and any(r.get("basis") == "declared" for r in rows):
            return Decision(
                x, decision.candidates, min(decision.confidence, LEAF_CONFIDENCE),
                f"{decision.summary} {x} calls nothing the world file knows of (no business "
                "dependency out of it), and nothing measured its calls: low confidence.",
                decision.ruled_out,
                separated_by=decision.separated_by, measured=decision.measured,
            )  # fmt: skip
        known = (
            f"only `depends_on` (start order) edges to {', '.join(started)}" if started
            else "no dependency of it"
        )  # fmt: skip
        return decision.in_doubt(
            [x, *started],
            f"Inconclusive (alerts only): {x} alerts, but the world knows {known}, so the alerts "
            f"cannot tell a fault in {x} itself from a dependency nobody recorded. Check {x} "
            "first; `topology discover` (service-graph metrics) or a world file adds its edges.",
        )

    def _start_order_only(
        self, task: TaskRun, ev: Evidence, decision: Decision, candidates: list[Candidate]
    ) -> Decision:
        """The walk's cause X "explains" alerting components that reach it only through compose
        `depends_on` edges: that is start order, not calls (`gateway.world.compose`), so it
        does not say X's failure fails their requests. A service every container starts after
        (service discovery, a config server) would otherwise explain every alert of such a
        world. Then the finding is inconclusive, naming X first and then the walk's other
        candidates; a world file, Kubernetes environment or `topology discover` adds the calls.
        Unchanged when every alerting component X covers calls into it (`call_reach`), or X
        is reached through a topic (the walk's producer hop, which this reach does not follow).
        """
        x = decision.root_cause
        mine = next((c for c in candidates if c.name == x), None)
        if x is None or mine is None or mine.via_topic or decision.surge_paths:
            return decision
        if not set(mine.covers) - {x}:
            return decision  # it explains only itself: no link to doubt (and no query)
        calling = {r["name"] for r in call(task, ev, "call_reach", {"component": x}).data or []}
        started = [a for a in mine.covers if a not in calling]
        if not started:
            return decision
        rest = [c.name for c in candidates if c.name != x and not c.client][:4]
        return decision.in_doubt(
            [x, *rest],
            f"Inconclusive (alerts only): {x} is linked to {', '.join(started)} only by compose "
            f"`depends_on` (start order, not calls), so the world does not say its failure "
            f"fails their requests. Check {x} first, then {', '.join(rest) or 'nothing else'}"
            "; `topology discover` (service-graph metrics) or a world file adds the calls.",
        )

    def _silent_readers(self, task: TaskRun, ev: Evidence, decision: Decision) -> Decision:
        """The cause X alerts only about a backlog (`backlog_only`) and none of its readers
        alerts (alerting readers: `weigh.doubt`): a backlog says X's readers fall behind, and a
        reader that stopped or hung raises no alert of its own, so the components that read X
        (`neighbours` in: they consume it or call into it; a producer's `PUBLISHES` does not
        drain it) are named first, then X. Unchanged when X has no such reader."""
        x = decision.root_cause
        if x is None or x not in ev.alerting or not backlog_only(ev.alerts, x):
            return decision
        rows = call(task, ev, "neighbours", {"component": x}).data or []
        readers = sorted({
            r["name"] for r in rows
            if r["direction"] == "in" and r["purpose"] == "business"
            and r["edge"] not in ("PUBLISHES", "HOSTED_ON")
        })  # fmt: skip
        if not readers:
            return decision
        return decision.in_doubt(
            [*readers, x],
            f"Inconclusive: {x} alerts only about a backlog, which its readers "
            f"{', '.join(readers)} falling behind cause as well as {x} itself; a reader that "
            "stopped raises no alert of its own (its call rate into "
            f"{x} in service-graph metrics would show it). Check "
            f"{'it' if len(readers) == 1 else 'them'} first.",
        )

    def _behind(
        self, task: TaskRun, ev: Evidence, first: Decision, candidates: list[Candidate]
    ) -> tuple[list[str], dict[str, list[str]], list[str], list[str]]:
        """For an alerting cause with silent components behind it (`suspects_behind`): its
        direct dependencies whose failure fails its requests (hard or partial propagation), for
        each silent datastore among them its other hard dependents, which would suffer too if
        it failed, the configuration services it reads (`neighbours`;
        `agents.investigate.weigh.doubt`), and those of its dependencies the world knows only
        from compose `depends_on` (start order, which may be no call)."""
        x = first.root_cause
        if x is None or x not in ev.alerting or first.surge_paths:
            return [], {}, [], []
        behind = suspects_behind(x, candidates, ev.alerting)
        if not behind:
            return [], {}, [], []

        def hard_edges(rows: list[dict[str, Any]], direction: str) -> list[str]:
            return sorted(r["name"] for r in rows if _hard(r, direction))

        mine = call(task, ev, "neighbours", {"component": x}).data or []
        started = {r["name"] for r in mine if start_order_edge(r, x, ev)}
        hard = [h for h in hard_edges(mine, "out") if h not in started]
        config = sorted(
            r["name"] for r in mine if r["direction"] == "out" and r["purpose"] == "config"
        )  # fmt: skip
        out: dict[str, list[str]] = {}
        for c in behind:
            if c.kind == "datastore" and c.name in hard:
                rows = call(task, ev, "neighbours", {"component": c.name}).data or []
                out[c.name] = hard_edges(rows, "in")
        order_only = sorted(r["name"] for r in mine if r.get("basis") == "depends_on")
        return hard, out, config, order_only

    def _paths(
        self, task: TaskRun, ev: Evidence, decision: Decision, candidates: list[Candidate]
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
            if not pairs:
                return []
            known = prefetch.shortest_paths(ev.prefetched, pairs, MAX_HOPS)
            if known is not None:  # the walk read ahead holds them
                return known
            rows = task.graph.rows("walk_paths", {"pairs": [list(p) for p in pairs]})
            found = {(r["source"], r["target"]): list(r["path"]) for r in rows}
            return [found[p] for p in pairs if p in found]  # in the order of `pairs`

        paths: list[list[str]] = task.step(
            "walk_path", {"pairs": pairs}, walk, touched=decision.candidates, deferred=True
        )
        return paths


#: The most a finding is sure of when a person corrected the same answer before on an incident
#: memory finds alike, and nothing was measured (`corrected_before`): under the 0.5 line.
CORRECTED_BEFORE = 0.45


def outranks(measured: Decision, other: Decision) -> bool:
    """Whether the rules' finding outranks another planner's (memory's, or a model's): it
    names a cause, another one, rests on live evidence about that cause (service-graph or
    Prometheus signals, `Decision.evidence`) and is surer (a model's answer: no surer).
    A playbook whose checks held says this incident looks like one before, and a model reads
    the same evidence the rules did; a measurement of this incident that names its cause says
    more (say only what was measured, docs/architecture.md)."""
    return (
        measured_cause(measured)
        and measured.root_cause != other.root_cause
        and not left_open(measured, other.root_cause)
        and measured.confidence >= other.confidence
    )


def corrected_before(playbook: dict[str, Any], rules: Decision, ev: Evidence) -> Decision | None:
    """The rules' finding (`rules`, which overruled memory's lead `playbook`, a `recall` entry
    whose checks held) as a lead, or None: when the playbook was learned from a person
    correcting a finding that named the very cause the rules name again (`corrected_from`,
    or `corrected_also`: a version it supersedes was), and nothing was measured (no
    Prometheus). The rules read the same kind of alerts and graph a person already judged
    wrong for an incident these checks find alike; nothing measured
    separates the two causes, so the rules keep their answer but not their certainty (at most
    `CORRECTED_BEFORE`), the summary says who named what, and memory's cause is their second
    candidate, not one they ruled out. Memory's cause does not replace theirs: on an unseen
    game month the database a person had corrected to kafka was the cause the next time. With
    live evidence the measurements decide, as before."""
    wrong = rules.root_cause
    latest = playbook.get("corrected_from")
    if ev.prometheus is not None or wrong is None:
        return None
    if wrong != latest and wrong not in (playbook.get("corrected_also") or []):
        return None
    who = playbook.get("confirmed_by") or "a person"
    where = playbook.get("learned_from") or "an earlier incident"
    if wrong != latest:  # an earlier version's correction (`corrected_also`)
        who, where = "people", "an earlier incident this lesson was learned from"
    note = (
        f" {who} corrected this same answer to {playbook['candidate']} on {where}, an incident "
        "memory's checks find alike, and nothing measured here tells the two apart: a lead, "
        "not a conclusion."
    )
    return remembered_second(rules, playbook["candidate"], note)


def remembered_second(decision: Decision, second: str, note: str) -> Decision:
    """`decision` (a cause named, alerts only) as a lead beside a cause memory holds: at most
    `CORRECTED_BEFORE`, `note` added to its summary, `second` its next candidate and not
    ruled out (a new user's trial read "ruled out: cart: explains 1 of 2" beside the
    correction that named cart). What `corrected_before` and `caller_before` both do."""
    named = decision.candidates or [n for n in [decision.root_cause] if n]
    return replace(
        decision, confidence=min(decision.confidence, CORRECTED_BEFORE),
        summary=decision.summary + note, candidates=list(dict.fromkeys([*named, second])),
        ruled_out={name: why for name, why in decision.ruled_out.items() if name != second},
    )  # fmt: skip


def caller_before(decision: Decision, playbook: dict[str, Any]) -> Decision:
    """`decision` (its cause named at `LEAD_BELOW` or more, alerts only) as a lead when memory
    holds a lesson people taught by naming a caller (`playbook`: a `recall` entry whose
    `explains_alerting` `via: calls` held) whose own calls reach that cause: the rules keep their
    answer, at most `CORRECTED_BEFORE`, with the caller second (not ruled out) and a sentence
    saying who named it where; `Investigator.run` does not ask the model then (it would read
    the same alerts, with nothing measured either). A batch job flooding a database, or a
    service leaking connections into a cache, raises the alerts the database or the cache
    failing on its own does; with alerts only nothing tells the two apart. Unseen months
    named the saturated database at 0.90 with the night audit that flooded it named by a
    person before (a hotel group, on another of its databases; a brokerage's end-of-day
    reconcile), and a new user's trial found "nightly-export, corrected as the flooder of
    orders-db a minute before" unsaid on billing-db's page."""
    cause, caller = decision.root_cause, playbook["candidate"]
    note = (
        f" Memory holds a lesson on {caller}, whose calls reach {cause} (playbook "
        f"'{playbook['title']}'{learned(playbook)}): a caller flooding or locking {cause} "
        f"raises the alerts {cause} failing on its own does, and nothing measured here tells "
        "the two apart: a lead, not a conclusion."
    )
    return remembered_second(decision, caller, note)


#: The most the walk's cause keeps when the live evidence measured its calls served as usual
#: (`served_as_usual`): a lead (under `LEAD_BELOW`), not a conclusion.
SERVED_AS_USUAL = 0.45


def served_as_usual(
    decision: Decision, fine: dict[str, dict[str, Any]], alerts: list[dict[str, Any]]
) -> Decision:
    """The walk's finding (`decision`, alerts and the dependency graph) as a lead when the live
    evidence blamed nothing and measured the very cause it names serving its calls as usual
    (`fine`: component -> its `calls_into` measurement, healthy in the window): what the graph
    says it explains, the measurement does not show. Confidence at most `SERVED_AS_USUAL`, and
    the summary says what was measured. Unchanged otherwise: no evidence, the cause not
    measured, already a lead, or one of the incident's `alerts` is about the cause's own
    process (`weigh.self_inflicted`: memory, CPU, disk, which its calls need not show).
    Issue: say only what was measured; an unseen food-delivery story named payment-svc at
    0.90 over stale menus while every call into it was served."""
    x = decision.root_cause
    if x is None or x not in fine or decision.confidence < LEAD_BELOW:
        return decision
    if self_inflicted(alerts, x):
        return decision
    note = (
        f" But the live evidence measured {x} serving its calls as usual ({fine[x]['text']}): "
        "the dependency graph alone names it, a lead, not a conclusion."
    )
    return replace(
        decision, confidence=min(decision.confidence, SERVED_AS_USUAL),
        summary=decision.summary + note,
    )  # fmt: skip


def left_open(measured: Decision, cause: str | None) -> bool:
    """Whether the rules' measured finding keeps `cause` among its candidates beside the one it
    names: the measurement did not separate them (`weigh.asked_by_one`: one client's calls
    failing into a server that serves the others), so another planner's held answer breaks
    the tie rather than yields to it."""
    return (
        cause is not None
        and measured_cause(measured)
        and cause != measured.root_cause
        and cause in measured.candidates
    )


def unseparated_by_rules(rules: Decision, model: Decision) -> list[str]:
    """The candidates the rules left inconclusive beside the model's cause (`rules` named no
    cause, and listed it among others), when nothing measured backs the model's cause (no
    signal on it in `rules.evidence`): the model reads the same alerts, so its pick among them
    keeps at most `UNSEPARATED_CONFIDENCE`, as one among the walk's equals does
    (`model_planner`'s second opinion). A partner's flood that saturated a database's CPU,
    with the rules inconclusive between the database and the partner, had been named as the
    database at 0.70. Empty otherwise."""
    cause = model.root_cause
    if rules.root_cause is not None or cause is None or cause not in rules.candidates:
        return []
    if measured_about(rules, cause):
        return []
    return [c for c in rules.candidates if c != cause]


def guessed_over(measured: Decision, model: Decision, behind: Collection[str] = ()) -> bool:
    """Whether a model's finding names another cause than the rules' measured one
    (`measured_cause`) with no live evidence about its own cause (no signal on it in
    `measured.evidence`), and not one the measured cause depends on (`behind`: the components
    it reaches). A model reads the same evidence the rules did, so such an answer weighs the
    alerts and the graph against a measurement (say only what was measured,
    docs/architecture.md): the measured cause stands, however the confidences compare. A
    measured cause that reaches few of the alerting components is held low by the rules, and
    a model's unseparated guess at 0.4 would otherwise replace it (a device registry measured
    100x slower for every caller, replaced by the broker whose queue its slow consumer let
    fill). An unmeasured dependency of the measured cause may be its trouble's origin (a
    broker with no series behind the service whose publishing to it slowed): the model may
    name it."""
    return (
        measured_cause(measured)
        and model.root_cause is not None
        and model.root_cause != measured.root_cause
        and not measured_about(measured, model.root_cause)
        and model.root_cause not in behind
    )


def measured_cause(decision: Decision) -> bool:
    """Whether the decision names a cause and live evidence about that cause backs it (a signal
    on it in `Decision.evidence`), not the alerts and the graph alone."""
    return decision.root_cause is not None and measured_about(decision, decision.root_cause)


def measured_about(decision: Decision, name: str) -> bool:
    """Whether live evidence the decision rests on is about `name` (a signal on it in
    `Decision.evidence`), not the alerts and the graph alone."""
    return any(e.get("component") == name for e in decision.evidence)


def rival_names(rules: Decision) -> list[str]:
    """The candidates a rules finding left standing: its cause, then its candidates."""
    return [*filter(None, [rules.root_cause]), *rules.candidates]


def with_rivals(memory: Decision, rules: Decision) -> Decision:
    """Memory's `decision` with the rivals the `rules` weighed beside its cause, as a rules
    finding lists them (`ruled_out`, with their measurements): each the rules set aside keeps
    their reason; each they left standing (their cause, or a candidate of an inconclusive
    finding) is set aside by memory, and its reason says so. Memory's cause is never listed,
    and a reason memory's decision already gives stands."""
    cause = memory.root_cause
    ruled = {name: why for name, why in rules.ruled_out.items() if name != cause}
    measured = {name: rules.measured[name] for name in ruled if name in rules.measured}
    for name in dict.fromkeys(rival_names(rules)):
        if name == cause or name in ruled:
            continue
        if name == rules.root_cause:
            how = f"they named it, at {rules.confidence:.2f}"
        else:
            how = "they could not tell it apart"
        # not a rule-out: the rules kept it; memory chose over it (a new user's trial read
        # "ruled out, left standing" as a contradiction)
        ruled[name] = (f"{NOT_RULED_OUT} ({how}); memory named {cause} over it: "
                       f"the checks of its playbook held")  # fmt: skip
    return replace(memory, ruled_out=ruled | memory.ruled_out, measured=measured | memory.measured)


def explains_fewer(explained: dict[str, int], cause: str) -> bool:
    """Whether a remembered cause explains fewer alerting components (`explained`: name -> how
    many reach it, `Investigator._explained`) than another name there (a candidate the rules
    left standing, another remembered cause). Memory breaks the rules' ties; it does not name
    a cause that leaves alerts unexplained which another explains."""
    return explained[cause] < max(explained.values())


def outexplained(explained: dict[str, int], cause: str, rivals: list[str]) -> str | None:
    """In words, how a remembered `cause` explains more alerting components than every one of
    `rivals`, the candidates the rules left standing (`explained`: name -> how many reach it,
    `Investigator._explained`): "entitlements-svc explains 2 alerting components,
    syndication-api 1"; None when a rival explains as many. Calls measured as usual into such
    a cause, while what the evidence blamed explains less, do not refute a fault in what it
    answers (wrong content at status 200 shows in no call metric)."""
    others = [r for r in dict.fromkeys(rivals) if r != cause]
    if any(explained[r] >= explained[cause] for r in others):
        return None
    return ", ".join([f"{cause} explains {explained[cause]} alerting components",
                      *(f"{r} {explained[r]}" for r in others)])  # fmt: skip


def alone_explains(
    found: list[Candidate],
    alerting: list[str],
    steered: dict[str, Any],
    used: list[dict[str, Any]],
    claimed: bool = False,
    behind: Collection[str] = (),
) -> str | None:
    """Why a remembered cause (`steered`, a recalled playbook) is the longer explanation, or
    None: an alerting component the walk (`found`) finds covering every alerting component,
    itself included, that the remembered cause does not explain (its `explains_alerting`
    check, among the USED rows `used`, found no dependency path from it). The remembered cause
    would need a second fault for that component's own alerts; the component alone needs
    none (parsimony, the coverage walk's own rule). `claimed` (a trusted playbook that held
    entirely, `Investigator.run`): only a component none of its checks looked at (its
    `signature`, `alert_any` on listed components, an alert check on its candidate: the
    components it was learned alerting) counts. A playbook learned with that component's alerts
    is the engineers' word against the graph's; one learned without them never claimed them
    (an unseen airline's seat cache alerted itself beside the check-in and boarding services a
    trusted loyalty-service playbook remembered, and memory named the loyalty service at 0.67
    where the rules named the cache). Nor does one in `behind` (the components the remembered
    cause depends on): a search cluster turning yellow below a trusted directory service's
    fault is no second fault memory must explain (an unseen telehealth month)."""
    if len(alerting) < 2:
        return None
    remembered = steered["candidate"]
    ran = [
        r
        for row in used
        if row["playbook"] == steered["id"]
        for r in json.loads(row["checks_json"])
    ]
    checks = [r for r in ran if r["check"].get("type") == "explains_alerting"]
    mine = {c for r in checks for c, path in (r.get("raw") or {}).items() if path}
    if claimed:
        mine |= {remembered} | {c for r in ran for c in looked_at(r["check"])}
    covers = {c.name: set(c.covers) for c in found}
    for name in alerting:
        if name not in mine and name not in behind and covers.get(name, set()) >= set(alerting):
            return (
                f"{name} alerts itself and alone explains every alerting component; "
                f"{remembered} does not explain {name}"
            )
    return None


def backed(playbook: dict[str, Any]) -> bool:
    """Whether a recalled playbook (`recall` entry) rests on an engineer's verdict: learned from
    one, or confirmed when it steered (`helped`). One written by hand or imported that no verdict
    ever backed is untried: at the same trust it does not make memory unsure of a backed one's
    cause (a new user's trial: a one-check "payments has an alert: restart payments" cancelled
    the shop database a person had confirmed, and the page sent the on-call to payments first)."""
    return bool(playbook.get("learned_from") or playbook.get("helped"))


def overruled(
    measured: Decision,
    playbook: dict[str, Any],
    at: float,
    refuted: str | None = None,
    longer: str | None = None,
) -> Decision:
    """The rules' finding, its summary saying which remembered cause it overruled and why: the
    live evidence measured that cause as another's victim (`refuted`, `weigh.victim_of`), an
    alerting component alone explains the incident where that cause does not (`longer`,
    `alone_explains`),
    the measured evidence names another, or, over a lead (held only by its components, or
    trusted under the 0.5 line), the rules' surer finding from the alerts and the graph."""
    sure = measured.root_cause is not None and measured.confidence >= LEAD_BELOW
    if refuted is not None:
        why = f"the live evidence rules it out: {refuted}"
    elif measured_cause(measured):
        why = f"the measured evidence names {measured.root_cause}"
    elif longer is not None and not sure:
        why = f"the alerts rule it out: {longer}"
    else:
        why = f"the rules name {measured.root_cause} at {measured.confidence:.2f}"
    note = (
        f" Memory suggested {playbook['candidate']} (playbook '{playbook['title']}', "
        f"{at:.2f}); {why}."
    )
    return replace(measured, summary=measured.summary + note)


def still_to_check(decision: Decision) -> Decision:
    """`decision` without a rule-out of a component it still names, its cause or one of the
    candidates the page asks to check in order: a rule (the walk's "silent and further from
    the alerting components than another") may set a component aside that a later one (a
    producer behind its topic, memory, the model) brought back. A reason that says it was
    not ruled out (`NOT_RULED_OUT`) stays. A new user's trial read "check in this order:
    order-events, order-publisher" above "✕ order-publisher: silent and further …". Pure."""
    named = {*decision.candidates, decision.root_cause}
    kept = {
        name: why for name, why in decision.ruled_out.items()
        if name not in named or why.startswith(NOT_RULED_OUT)
    }  # fmt: skip
    if len(kept) == len(decision.ruled_out):
        return decision
    dropped = decision.ruled_out.keys() - kept.keys()
    measured = {name: m for name, m in decision.measured.items() if name not in dropped}
    return replace(decision, ruled_out=kept, measured=measured)


def measurements(decision: Decision) -> dict[str, dict[str, Any]]:
    """Every ruled-out component's measurement: the decision's own, else the alerts and the
    dependency graph its reason rests on (`measure.from_alerts`)."""
    return {
        name: decision.measured.get(name) or from_alerts(why)
        for name, why in decision.ruled_out.items()
    }


def _hard(row: dict[str, Any], direction: str) -> bool:
    """A `neighbours` row: a business dependency in `direction` (`out`: X depends on it; `in`:
    it depends on X) whose failure may fail the requests: hard or partial propagation, or
    propagation nobody stated (no importer knows it; assuming `soft` would clear what may be
    the cause). Only an explicit `soft` (or `none`) edge is known not to carry the failure."""
    return (
        row["direction"] == direction and row["purpose"] == "business"
        and row["propagation"] in ("hard", "partial", None)
    )  # fmt: skip


def start_order_edge(row: dict[str, Any], x: str, ev: Evidence) -> bool:
    """A `neighbours` row of X's known only as compose `depends_on` (start order, not calls)
    while the service graph traces X's own calls (`ev.calling`): none of them follows it
    (else it would be measured), so it is not a call dependency that could fail X's requests
    unseen. The same when X serves measured calls but makes none (`ev.serving_only`: it
    reads what it started after at start-up only), unless an alert says X restarts: start-up
    is when it reads them, so one failing keeps it from coming up. Without evidence nothing is
    traced, and start order stays a suspect."""
    if row.get("basis") != "depends_on":
        return False
    if x in ev.calling:
        return True
    restarts = any(
        a["component"] == x and classify(a["alertname"], a.get("summary", "")) == "restarts"
        for a in ev.alerts
    )  # fmt: skip
    return x in ev.serving_only and not restarts


def read_at_start_up(
    decision: Decision,
    mine: list[dict[str, Any]],
    edges: list[dict[str, Any]],
    ev: Evidence,
    win: str,
) -> Decision:
    """The cause X the evidence blames serves calls but makes none (`ev.serving_only`): what
    it is started after (`mine`, its `neighbours` rows; compose `depends_on`) is ruled out,
    the reason naming X's measured calls and a traced datastore call near the incident, and X
    is held at `FALLBACK_CONFIDENCE` at most (an inference from what tracing covers, not a
    measured call); an alert about X's own process (`self_inflicted`) rules them out
    instead, confidence kept, as in `unmeasured`. Unchanged when X makes traced calls (the
    edges are measured clear) or nothing of X's is only started after."""
    x = decision.root_cause
    if x is None or x in ev.calling or x not in ev.serving_only:
        return decision
    started = sorted(r["name"] for r in mine if _hard(r, "out") and start_order_edge(r, x, ev))
    if not started:
        return decision
    own = self_inflicted(ev.alerts, x)
    if own is not None:  # an alert about its own process rules them out, as `unmeasured`
        ruled = dict.fromkeys(started, f"{x} alerts about its own process ({own})")
        return Decision(
            x, decision.candidates, decision.confidence, decision.summary,
            decision.ruled_out | ruled, decision.surge_paths, decision.separated_by,
            decision.evidence, decision.measured,
        )  # fmt: skip
    served = sum(e["calls"] for e in edges if e["server"] == x)
    base = sum(e.get("baseline_calls") or 0.0 for e in edges if e["server"] == x)
    db = next(
        e for e in edges
        if e.get("connection_type") == "database" and (e["calls"] or e.get("baseline_calls"))
    )  # fmt: skip
    when = f" ({span(win)})" if span(win) else ""
    text = (
        f"{x} served {served:,.0f} calls{when} ({base:,.0f} the hour before) and made no traced "
        f"call, while datastore calls are traced ({db['client']} -> {db['server']})"
    )
    why = f"{x} is started after it (compose `depends_on`) but calls it on no request: {text}"
    query = f'traces_service_graph_request_total{{client="{x}"}}'
    return Decision(
        x, decision.candidates, min(decision.confidence, FALLBACK_CONFIDENCE),
        f"{decision.summary} {x} makes no traced call while serving, so what it is started "
        f"after ({', '.join(started)}) is read at start-up only: confidence held below the top "
        "band.", decision.ruled_out | dict.fromkeys(started, why), decision.surge_paths,
        decision.separated_by, decision.evidence,
        decision.measured | {n: measurement("service graph", query, 0.0, text, win)
                             for n in started},
    )  # fmt: skip


def serving_only(edges: list[dict[str, Any]], calling: set[str]) -> set[str]:
    """Servers of `edges` (`edge_health` rows) measured serving calls, window or baseline, that
    made no traced call of their own (not in `calling`), when the service graph traces
    datastore calls near the incident (an edge of connection type `database` with calls):
    where a client library's datastore calls are traced, a server that makes none calls
    nothing on its request path (it loads its data at start-up). Empty when no datastore call
    is traced: the servers' own calls may simply not be instrumented."""
    if not any(
        e.get("connection_type") == "database" and (e["calls"] or e.get("baseline_calls"))
        for e in edges
    ):
        return set()
    return {
        e["server"] for e in edges
        if e["known"] and (e["calls"] or e.get("baseline_calls")) and e["server"] not in calling
        and e.get("connection_type") != "database"
    }  # fmt: skip


def traffic_clients(edges: list[dict[str, Any]]) -> set[str]:
    """Clients whose request-rate jump may be the cause (`weigh.traffic_sources`): those the
    world marks as traffic sources, callers that nothing calls in the measured edges (a
    load generator or an edge client a compose file or discovery cannot mark), and callers
    that start a surge themselves (`weigh.surge_origins`: a batch or a planner flooding a
    shared service)."""
    servers = {e["server"] for e in edges}
    return {
        e["client"] for e in edges
        if e.get("client_is_source") or (e["known"] and e["client"] not in servers)
    } | surge_origins(edges)  # fmt: skip


def no_blame_note(
    edges: list[dict[str, Any]], services: list[dict[str, Any]], near: list[str], win: str
) -> str:
    """Why the evidence decides nothing, saying what was measured: no series at all for the
    window is `no data`, never "no failing calls"."""
    when = f" ({span(win)})" if win else ""
    seen = sorted(
        {e["server"] for e in edges if e["calls"] > 0 and e["server"] in near}
        | {r["component"] for r in services if r["calls"] and r["component"] in near}
    )  # fmt: skip
    if not seen:
        return (
            f"No live evidence near the incident{when}: Prometheus has no service-graph or "
            "span-metric series for these components (no data, not healthy); alerts only."
        )
    unseen = len(set(near) - set(seen))
    rest = (
        f"; {unseen} of {len(near)} nearby components have no series (not measured)"
        if unseen
        else ""
    )
    return (
        f"The live evidence{when} shows no failing or slow calls into {len(seen)} measured "
        f"component{'' if len(seen) == 1 else 's'} near the incident{rest}."
    )
