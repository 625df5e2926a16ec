"""Learner: turns an engineer's verdict into trust and memory (claims `learn` tasks).

A `learn` task (`learn:<verdict id>`) is enqueued with every Verdict recorded from Slack
(`(:Incident)-[:HAS_VERDICT]->(:Verdict {verdict: confirmed|rejected|resolved, actual_cause})`).
1. Trust moves only on verdicts (docs/architecture.md, protocols): each playbook the latest
Decision used
gets the
   verdict — helped (it steered, confirmed), misled (it steered, rejected) or not applicable
   (a check failed; nothing changes) — see `cypher/apply_verdict.cypher` for the formula.
2. A confirmed diagnosis that no playbook steered becomes a Playbook pinned to the root cause:
   its failure kind (`agents.failure_kinds`), the checks that held on this incident, a title.
   A correction does the same for the cause the engineer named: a rejection naming the actual
   cause, or a confirmation of an inconclusive finding naming it (`lesson_of`).
   If an active playbook of that kind on that component was recalled but not applicable, the
   new one is its next version and SUPERSEDES it. An active one a verdict taught (not a
   runbook people wrote) that was not contradicted already holds the lesson: nothing is
   learned. A cause that does not explain the incident's alerting components (by dependency
   paths or by its calls) teaches nothing either: its playbook would fail `explains_alerting`,
   asked first of every recalled playbook, on the very incident it came from.
   The task's outcome says what the verdict did: the playbooks it credited (helped or misled,
   trust, why one retired), the playbook it pinned, or why none. A verdict a later one on the
   same incident replaced (`verdict_get`'s `later`: learn tasks may run out of order) does
   nothing: the latest one's task decides.
3. Its checks are what can be observed on that cause next time, however the repeat is worded
   or presents: the symptom checks that held (`proposed_checks`), plus the live evidence that
   held on it when there was any (calls into it degraded, its requests rising:
   `checks.evidence_checks`), otherwise the incident's `signature` (which components alerted,
   and their dependency paths to the cause), so a repeat of a silent cause is recognised from
   alerts alone. A cause that is a caller of what alerted (a batch holding locks on the
   database that alerts) explains the alerts by its calls (`explains_alerting` `via: calls`,
   first) and is marked `upstream` (recalled from its callees); a correction stores the cause
   the finding had named (`corrected_from`).
4. Learned playbooks count against the tenant's playbook quota (`BLAST_MAX_PLAYBOOKS`, with
   the ones people write; retired ones not counted), checked in the same write that would
   create one: when it is full, trust still moves and the verdict stays recorded, but no
   playbook is learned; the task's outcome and a warning say so.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from adapters.notices import in_words
from agents.failure_kinds import dominant
from agents.investigate.checks import (
    EXPLAINS,
    EXPLAINS_BY_CALLS,
    Evidence,
    alert_signature,
    evaluate,
    evidence_checks,
    paths_to,
)
from agents.tasks.coordination import TaskRun
from agents.tasks.kinds import ROLE_KINDS

log = logging.getLogger(__name__)
#: How much of a remembered signature must alert again (Jaccard of (component, kind) pairs): a
#: repeat with one caller more or fewer out of two or three still matches.
SIGNATURE_OVERLAP = 0.5
#: Why a learned playbook retired when a later verdict on its incident taught otherwise.
WITHDRAWN = "a later verdict on the incident it was learned from withdrew its lesson"


def proposed_checks(
    kind: str | None, alerting: list[str], silent: bool = False, signature: bool = False
) -> list[dict[str, Any]]:
    """The checks a new playbook starts from, in order: nothing changed upstream, then the
    symptom, kept only if it held. The rule, one line each:

    - a cause that alerted with a failure kind: an alert of that kind on it (`alert_kind`), so
      differently worded alerts still match; with a `signature` learned beside it, any alert
      on it (`alert_any`): the same component fails by running out of memory one time and by
      a bad release's errors the next, and the signature keeps the kinds, so a repeat with
      other kinds is a lead (`checks.kinds_differ`), not a match (a playbook learned from
      measured evidence has no signature: its kind stays in this check);
    - a cause that alerted with no kind (lock waits, deadlocks): any alert on it
      (`alert_any`), since the next wording may classify differently or not at all;
    - a `silent` cause, which raised no alert of its own: any alert on one of the components
      that alerted (`alert_any` on `alerting`), since the same callers raise latency alerts
      one time and error alerts the next; and an alert naming it as a peer.
    """
    symptom: dict[str, Any]
    if silent:
        symptom = {"type": "alert_any", "scope": "components", "components": sorted(alerting)[:50]}
    elif kind and not signature:
        symptom = {"type": "alert_kind", "kind": kind, "scope": "candidate"}
    else:
        symptom = {"type": "alert_any", "scope": "candidate"}
    named: list[dict[str, Any]] = [{"type": "named_by_alert"}] if silent else []
    return [{"type": "no_recent_change", "scope": "alerting"}, symptom, *named]


def signature_check(ev: Evidence, cause: str) -> dict[str, Any]:
    """The `signature` check of an incident for `cause`: each alerting component with its
    failure kind (`alert_signature`) and its dependency path to the cause (empty when it has
    none). An alert no keyword classified matches any kind on its component next time
    (`unclassified: matches`): its name says nothing about the kind. What a repeat can be
    recognised by when nothing was measured."""
    pairs = sorted(alert_signature(ev.alerts))
    found = paths_to(ev, sorted({c for c, _ in pairs}), cause)
    alerts = [{"component": c, "kind": k, "path": found.get(c) or []} for c, k in pairs]
    return {
        "type": "signature", "alerts": alerts[:50], "overlap": SIGNATURE_OVERLAP,
        "unclassified": "matches",
    }  # fmt: skip


def merged_signature(learned: dict[str, Any], before: dict[str, Any] | None) -> dict[str, Any]:
    """`learned` (a `signature_check`) with the alerts of the signature of `before`, the
    playbook it supersedes (a `playbooks_on` row), that it lacks: a repeat memory missed
    came in another shape, and the next may come in either (its callers change, as do their
    kinds). At most 50 alerts, this incident's first."""
    if before is None:
        return learned
    old = [c for c in json.loads(before["checks_json"] or "[]") if c.get("type") == "signature"]
    seen = {(a["component"], a["kind"]) for a in learned["alerts"]}
    kept = [a for c in old for a in c.get("alerts", []) if (a["component"], a["kind"]) not in seen]
    return learned | {"alerts": [*learned["alerts"], *kept][:50]}


def merged_components(check: dict[str, Any], before: dict[str, Any] | None) -> dict[str, Any]:
    """`check` with, when it is an `alert_any` on listed components (a silent cause's
    callers), the components of the same check of `before`, the playbook it supersedes (a
    `playbooks_on` row), that it lacks: as for `merged_signature`, a silent cause's callers
    change from one time to the next, and the next may alert where either did. Other checks
    are returned as they are. At most 50 components, this incident's first."""
    if before is None or check.get("type") != "alert_any" or check.get("scope") != "components":
        return check
    old = [
        name
        for c in json.loads(before["checks_json"] or "[]")
        if c.get("type") == "alert_any" and c.get("scope") == "components"
        for name in c.get("components", [])
    ]
    return check | {"components": list(dict.fromkeys([*check["components"], *old]))[:50]}


def playbook_title(
    cause: str,
    kind: str | None,
    alerts: list[dict[str, Any]],
    traffic_source: bool = False,
    upstream: bool = False,
) -> str:
    """A learned playbook's title: "errors on payments-db" when the cause alerted (`kind`, its
    dominant failure kind, else its first alert's name); "orders-db behind latency on orders,
    payments" when it was silent, naming the components that alerted (at most three, "…"
    for more), since its callers' kind is not the cause's (a new user's trial read "latency on
    loans-db" for a database that raised nothing); "nightly-export upstream of saturation on
    orders-db, orders-api" for a silent caller or producer (`upstream`: what it calls or
    publishes to alerted, not what it depends on); "traffic on web" for a silent traffic
    source (`traffic_source`), whose fault is its traffic. `alerts`: the incident's alerts,
    each with `component` and `alertname`."""
    on_cause = [a for a in alerts if a["component"] == cause]
    what = kind or (on_cause or alerts)[0]["alertname"]
    if on_cause or traffic_source:
        return f"{what} on {cause}"
    callers = list(dict.fromkeys(a["component"] for a in alerts if a["component"]))
    shown = ", ".join(callers[:3]) + (", …" if len(callers) > 3 else "")
    return f"{cause} {'upstream of' if upstream else 'behind'} {what} on {shown}"


def playbook_id(incident_id: str, cause: str) -> str:
    """The id of the playbook a verdict on `incident_id` teaches for `cause`: one per incident
    and cause, so a retried or repeated verdict learns it once (`create_playbook` is
    idempotent by id) and a changed one can withdraw it (`withdraw_lessons`)."""
    return f"playbook:{incident_id}:{cause}"


def lesson_of(verdict: dict[str, Any], steered: bool) -> str | None:
    """The component a verdict teaches a playbook for (a row of `verdict_get.cypher`), or None.

    - confirmed, with a root cause no playbook steered to: that root cause;
    - confirmed, on an inconclusive finding, naming the cause: the cause named;
    - rejected, naming the actual cause (button plus reply, thread reply, or API): the actual
      cause, so the correction teaches; the misleading playbook is counted misled
      by `apply_verdict` either way.
    """
    cause, actual = verdict["root_cause"], verdict["actual_cause"]
    if verdict["verdict"] == "confirmed":
        if cause:
            return None if steered else str(cause)
        return str(actual) if actual else None
    if verdict["verdict"] == "rejected" and actual and actual != cause:
        return str(actual)
    return None


class Learner:
    """Runs one claimed `learn` task (see module docstring)."""

    kinds = ROLE_KINDS["learner"]

    def __init__(self, max_playbooks: int = 200) -> None:
        #: Playbooks a tenant keeps, learned or written, retired ones not counted
        #: (`BLAST_MAX_PLAYBOOKS`): past it nothing new is learned.
        self.max_playbooks = max_playbooks

    def run(self, task: TaskRun) -> None:
        """Apply the verdict to trust, learn a playbook if one is due, complete the task.

        Raises `LeaseLost` (stop) or `GraphUnavailable` (retry later).
        """
        graph = task.graph
        verdict_id = task.claim.task_id.removeprefix("learn:")
        verdict = task.step(
            "verdict", {"verdict_id": verdict_id},
            lambda: graph.one("verdict_get", {"verdict_id": verdict_id}),
        )  # fmt: skip
        if verdict is None or verdict["verdict"] not in ("confirmed", "rejected"):
            task.complete("nothing to learn")
            return
        if verdict.get("later"):
            # learn tasks may run out of order: the latest verdict's own task moved trust and
            # taught (or withdrew) the lesson; this one would undo it (two people answering
            # one page within a second, a new user's trial)
            task.complete(
                f"{verdict['verdict']}: replaced by a later verdict on this incident "
                f"({verdict['later']}): nothing learned, no trust moved"
            )
            return
        incident_id = verdict["incident_id"]
        task.metrics.verdicts.labels(
            planner=verdict.get("planner") or "none", verdict=verdict["verdict"]
        ).inc()
        used = task.step(
            "decision", {"incident_id": incident_id},
            lambda: graph.rows("incident_decision", {"incident_id": incident_id}),
        )  # fmt: skip
        said: list[str] = []  # what the verdict did, in the task's outcome
        for row in used:
            outcome = task.fenced(
                "apply_verdict",
                {"decision_id": row["decision_id"], "playbook": row["playbook"],
                 "verdict_id": verdict_id, "verdict": verdict["verdict"]},
            )  # fmt: skip
            log.info("playbook %s: %s, trust %.2f (%s)", outcome["playbook"], outcome["verdict"],
                     outcome["trust"], outcome["status"])  # fmt: skip
            if row["steered"]:
                said.append(credited(outcome))
        steered = any(row["steered"] for row in used)
        lesson = lesson_of(verdict, steered)
        # a changed verdict withdraws what an earlier one on this incident taught
        keep = [playbook_id(incident_id, lesson)] if lesson else []
        withdrawn = task.fenced(
            "withdraw_lessons", {"incident_id": incident_id, "keep": keep, "reason": WITHDRAWN}
        )
        for gone in withdrawn["retired"]:
            log.info("playbook %s retired: %s", gone, WITHDRAWN)
        if lesson:
            said.append(self._learn(task, verdict, lesson, used))
        elif not said:
            said.append(nothing_learned(verdict))
        task.complete(f"{verdict['verdict']}: " + "; ".join(said))

    def _learn(
        self, task: TaskRun, verdict: dict[str, Any], cause: str, used: list[dict[str, Any]]
    ) -> str:
        """Create the playbook for a confirmed cause (or its next version). Returns what
        happened, for the learn task's outcome: the playbook pinned, or why none was (a lesson
        memory already holds, a cause whose playbook could not apply to this very incident,
        the tenant's playbook quota full)."""
        graph, incident_id = task.graph, verdict["incident_id"]
        alerts = [
            {k: row[k] for k in ("key", "alertname", "component", "starts_at_ms")}
            | {"summary": json.loads(row["annotations_json"]).get("summary", "")}
            for row in graph.rows("incident_alerts", {"incident_id": incident_id})
        ]
        source = graph.one("component_is_client", {"component": cause}) or {}
        kind = dominant(alerts, cause, traffic_source=bool(source.get("client")))
        existing = graph.rows("playbooks_on", {"component": cause})
        same = [p for p in existing if p["failure_kind"] == kind]
        not_applicable = {
            r["playbook"] for r in used if not r["applicable"] and r["candidate"] == cause
        }
        supersedes = next((p["id"] for p in same if p["id"] in not_applicable), None)
        # Memory already has this lesson, and it was not contradicted, only when a verdict
        # taught it: a runbook people wrote (the world file, the API) with the same kind, or
        # with none (`alert_any` on its component), is not what this verdict teaches.
        lessons = [p for p in same if p["learned_from"]]
        if lessons and supersedes is None:
            held_by = lessons[0]
            return (
                f"nothing new learned: playbook {held_by['id']} (learned from "
                f"{held_by['learned_from']}) already holds this lesson for {cause}"
            )
        alerting = list(dict.fromkeys(a["component"] for a in alerts if a["component"]))
        evidence = Evidence(graph, alerts, alerting, min(a["starts_at_ms"] for a in alerts))
        # The live evidence that held when the finding was made (it cannot be re-read here:
        # the learner has no Prometheus), as checks with thresholds a repeat must meet.
        measured = evidence_checks(json.loads(verdict.get("evidence_json") or "[]"), cause)
        held = task.step(
            "playbook_checks", {"cause": cause, "kind": kind, "signature": not measured},
            lambda: [
                check for check in proposed_checks(
                    kind, alerting, silent=not any(a["component"] == cause for a in alerts),
                    signature=not measured,
                )
                if evaluate(check, cause, evidence)["held"]
            ],
            touched=[cause],
        )  # fmt: skip
        before = next((p for p in same if p["id"] == supersedes), None)
        held = [merged_components(check, before) for check in held] + measured
        if not measured:  # nothing measured held on the cause: remember how the incident looked
            held.append(task.step(
                "signature", {"cause": cause},
                lambda: merged_signature(signature_check(evidence, cause), before),
                touched=[cause], deferred=True,
            ))  # fmt: skip
        # A person named a caller of what alerted (a batch holding locks on the database
        # that alerts, a service hammering its cache): the dependency walk never reaches it
        # from the alerting components, so its playbook explains them by its calls instead,
        # and is recalled from its callees (`recall.cypher`).
        upstream: bool = task.step(
            "caller_lesson", {"cause": cause},
            lambda: not evaluate(EXPLAINS, cause, evidence)["held"]
            and evaluate(EXPLAINS_BY_CALLS, cause, evidence)["held"],
            touched=[cause], deferred=True,
        )  # fmt: skip
        if upstream:
            held.insert(0, EXPLAINS_BY_CALLS)
        else:
            # Every recalled playbook is first asked `explains_alerting`: one that fails it on
            # the incident it is learned from could never apply to a repeat of it, so none is
            # pinned and the task says why (the verdict stays on the incident, and similar
            # incidents cite the correction).
            explains = task.step(
                "explains_lesson", {"cause": cause},
                lambda: evaluate(EXPLAINS, cause, evidence),
                touched=[cause], deferred=True,
            )  # fmt: skip
            if not explains["held"]:
                return (
                    f"no playbook learned: {explains['detail']}, so a playbook on {cause} "
                    "would fail its explains_alerting check on this very incident"
                )
        title = playbook_title(
            cause, kind, alerts, traffic_source=bool(source.get("client")), upstream=upstream
        )
        row = task.fenced(
            "create_playbook",
            {
                "id": playbook_id(incident_id, cause),
                "component": cause,
                "incident_id": incident_id,
                "verdict_id": verdict["id"],
                "title": title,
                "failure_kind": kind,
                "checks_json": json.dumps(held),
                "supersedes": supersedes,
                "upstream": upstream,
                # the rules' (or memory's) answer this verdict corrected, if it corrected one
                "corrected_from": verdict["root_cause"]
                if verdict["verdict"] == "rejected"
                else None,
                "max_playbooks": self.max_playbooks,
                "withdrawn": WITHDRAWN,
            },
        )
        if row["refused"]:
            refused = (
                f"no playbook learned: this tenant keeps {row['kept']} playbooks, the limit "
                f"(BLAST_MAX_PLAYBOOKS={self.max_playbooks})"
            )
            log.warning("%r from incident %s: %s", title, incident_id, refused)
            return refused
        log.info("learned playbook %r from incident %s", title, incident_id)
        instead = f", superseding {supersedes}" if supersedes else ""
        return f"learned playbook {row['id']} on {cause}{instead}"


#: How much of a person's words the learn task's outcome quotes.
QUOTED_CHARS = 120


def nothing_learned(verdict: dict[str, Any]) -> str:
    """Why a verdict no playbook steered taught nothing (a `verdict_get` row), for the learn
    task's outcome. A rejection of an inconclusive finding naming no cause is one whose cause
    is outside the graph (`verdicts.contradiction` accepts it only with the person's words):
    there is no component to pin a playbook to, and the outcome quotes what they said."""
    if verdict["verdict"] != "rejected":
        return "nothing learned: no playbook steered and the finding names no cause"
    if verdict["root_cause"] is None:
        words = in_words(verdict.get("text"), QUOTED_CHARS)
        said = f" ({words!r})" if words else ""
        return (
            f"nothing learned: the cause is outside the graph{said}, so no playbook can be "
            "pinned to it"
        )
    return "nothing learned: the rejection names no cause and no playbook steered"


def credited(outcome: dict[str, Any]) -> str:
    """What a verdict did to a playbook that steered (an `apply_verdict` row), in words:
    "db-restart helped (trust 0.67)", "wrong misled (trust 0.25), retired: misled twice, …"."""
    said = f"{outcome['playbook']} {outcome['verdict']} (trust {outcome['trust']:.2f})"
    if outcome["status"] == "retired" and outcome["retired_reason"]:
        said += f", retired: {outcome['retired_reason']}"
    return said
