"""Recall: which remembered playbooks could explain this incident, best first.

One query (`cypher/recall.cypher`), four sources: playbooks pinned within 0-2 dependency hops of
an alerting component (weight 1); playbooks pinned where the business walk does not go but a
failure still explains alerts — a configuration service an alerting component reads, a traffic
source upstream (weight 1); playbooks learned on another component of the same tech as one
within the 0-2 hop reach (weight 1/2, "kind transfer"); and a caller's playbook a person taught
by naming it (`upstream`), within 1-3 calls upstream of an alerting component (weight 1, listed
after the others). Ranked by how many of the alerting components reach the candidate, then
weight × trust, then fewer hops, then the most recently learned. Only active playbooks: a
retired one is never recalled.

Nor is a playbook learned from the incident under investigation (`incident_id`): when alerts
join an incident people already gave a verdict on, its re-investigation would otherwise cite
the incident as its own earlier case, call the cause people confirmed an untried lead, and a
later correction of it would count the playbook misled. People's verdict on the incident
stands on its own (until 2026-12-07 it did not, a new user's trial).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from adapters.falkordb import TenantGraph

PINNED_WEIGHT = 1.0
SAME_TECH_WEIGHT = 0.5
#: `recall.cypher`'s source of a caller's lesson recalled from its callees: checked by score as
#: the others, listed after every playbook the alerting components reach (a caller of
#: everything, an API gateway taught once, would otherwise head every list).
UPSTREAM = 3


def recall(
    graph: TenantGraph,
    alerting: list[str],
    reach: dict[str, int] | None = None,
    incident_id: str | None = None,
) -> list[dict[str, Any]]:
    """Recalled playbooks as `{id, title, failure_kind, trust, checks, candidate, pinned_to,
    path, hops, weight, score, reached_from (how many alerting components reach the candidate:
    within the recall's hops, or the coverage walk's `reach` when it counts more),
    learned_from (incident id or null), learned_at (when that
    incident opened, ms UTC), confirmed_by (who gave its verdict), lesson (`confirmed` or
    `corrected`: what that verdict did; null before it was stored), helped (verdicts that
    confirmed it when it steered), client (the candidate is a traffic source the world
    marks `client`)}`; one entry per
    (playbook, candidate), best first. `incident_id`: the incident under investigation, whose
    own lessons are left out (module docstring)."""
    return rank(graph.rows("recall", {"alerting": alerting}), reach, incident_id)


def rank(
    rows: list[dict[str, Any]],
    reach: dict[str, int] | None = None,
    incident_id: str | None = None,
) -> list[dict[str, Any]]:
    """`recall` over rows of `recall.cypher` already read (or `investigation_context`'s
    `recalled`). `reach`: how many alerting components the coverage walk (deeper than the
    recall's two hops) found reaching each component, when it was read with them;
    `incident_id`: the incident under investigation, whose own lessons are left out. Pure."""
    if incident_id is not None:
        rows = [row for row in rows if row.get("learned_from") != incident_id]
    found: dict[tuple[str, str], dict[str, Any]] = {}
    reached_from: dict[tuple[str, str], set[str]] = {}
    weights = {0: PINNED_WEIGHT, 1: PINNED_WEIGHT, 2: SAME_TECH_WEIGHT, UPSTREAM: PINNED_WEIGHT}
    # among equal scores the earlier source, then the shorter path, wins (as when they were
    # three queries, each ordered by hops)
    for row in sorted(rows, key=lambda r: (int(r["source"]), int(r["hops"]), r["id"])):
        weight = weights[int(row["source"])]
        key = (row["id"], row["candidate"])
        reached_from.setdefault(key, set())
        if int(row["source"]) != UPSTREAM:  # what depends on it, not what its calls reach
            reached_from[key].add(row["path"][0])  # the alerting end
        entry = {
            "id": row["id"], "title": row["title"], "failure_kind": row["failure_kind"],
            "trust": float(row["trust"]), "checks": json.loads(row["checks_json"]),
            "candidate": row["candidate"], "pinned_to": row["pinned_to"],
            "path": list(row["path"]), "hops": int(row["hops"]), "weight": weight,
            "score": round(weight * float(row["trust"]), 4),
            "learned_from": row.get("learned_from"), "learned_at": row.get("learned_at"),
            "confirmed_by": row.get("confirmed_by"), "lesson": row.get("lesson"),
            "helped": int(row.get("helped") or 0), "client": bool(row.get("client")),
            "corrected_from": row.get("corrected_from"),
            "corrected_also": list(row.get("corrected_also") or []),
        }  # fmt: skip
        if key not in found or (entry["score"], -entry["hops"]) > (
            found[key]["score"],
            -found[key]["hops"],
        ):
            found[key] = entry
    for key, entry in found.items():
        entry["reached_from"] = max(len(reached_from[key]), (reach or {}).get(key[1], 0))
    # the causes most of tonight's alerting components reach first: one reached from a single
    # caller cannot explain the rest (`explains_alerting` wants more than half), however
    # trusted; then by score
    ranked = sorted(found.values(), key=lambda e: (-e["reached_from"], *by_score(e)))
    return distinct_first(ranked)


def distinct_first(ranked: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`ranked` (`recall` entries, best first) with each cause's best entry first, in that
    order, then the other entries of causes already listed, in their order. Pure.

    Three playbooks learned on one cause (three of its incidents) would take three of the
    first five places a person or the model reads, where five causes could be offered: the
    list is a list of hypotheses first. The investigator checks in its own order (`by_score`)."""
    seen: set[str] = set()
    first: list[dict[str, Any]] = []
    again: list[dict[str, Any]] = []
    for entry in ranked:
        (again if entry["candidate"] in seen else first).append(entry)
        seen.add(entry["candidate"])
    return first + again


def by_score(entry: dict[str, Any]) -> tuple[Any, ...]:
    """The order the investigator decides in (`Investigator._recall`), for a `recall` entry:
    weight × trust, then fewer hops; equal scores and hops, the most recently learned first (the
    last time it happened is the likelier shape of the next), then the id, so the order does
    not depend on random incident ids."""
    return (
        -entry["score"], entry["hops"], -int(entry["learned_at"] or 0), entry["id"],
        entry["candidate"],
    )  # fmt: skip


#: The confidence of a cause named by a playbook no verdict has backed in use: one written by
#: hand or imported, or learned from an engineer's verdict, never confirmed when it steered
#: (`helped` 0). Its trust of 0.5 says "no record either way": the verdict it was learned from
#: established that incident's cause, not that its checks recognise the cause. So it names a
#: lead under the 0.5 line (as an alerting leaf nothing measured does), not a conclusion; on an
#: unseen month of 32 incidents three learned playbooks at 0.5 named another cause's repeat.
UNTRIED_CONFIDENCE = 0.45


def confidence(playbook: dict[str, Any]) -> float:
    """How sure a finding memory made is: the playbook's trust (seed rule: memory is only as
    confident as the playbook's trust), at most `UNTRIED_CONFIDENCE` until a verdict confirmed
    it when it steered (`recall` entry: `helped` 0) or when its signature held only by the
    alerting components, their kinds other than when it was learned (`kinds_differ`, set by
    the investigator): the same callers alerting is a lead, the same symptoms a conclusion."""
    trust = round(float(playbook["trust"]), 2)
    if playbook.get("helped") and not playbook.get("kinds_differ"):
        return trust
    return min(trust, UNTRIED_CONFIDENCE)


def cited(playbook: dict[str, Any], held: list[str], at: float | None = None) -> str:
    """The summary of a finding memory made: the playbook, its trust, where it was learned and
    who confirmed it, the recall path and the checks that held, each as a sentence (`held`:
    `checks.describe` of each check as run, `checks.gated`). `playbook`: a `recall`
    entry; `at`: the finding's confidence when something surer than the playbook set it (the
    rules naming the same cause), else the playbook's own (`confidence`)."""
    why = (
        "a lead"
        if playbook.get("kinds_differ")
        else "the playbook is untried (no verdict yet on a cause it named)"
    )
    at = confidence(playbook) if at is None else at
    trust = f"{playbook['trust']:.2f}{held_at(playbook, at, why)}"
    # the signature's sentence (`held`) already says the components alert with other kinds
    lead = (
        "; so it held by its components only: a lead, not a conclusion"
        if playbook.get("kinds_differ") else ""
    )  # fmt: skip
    return (
        f"Memory: {playbook['candidate']}, as in playbook '{playbook['title']}' (trust "
        f"{trust}{learned(playbook)}; "
        f"recalled via {' → '.join(playbook['path'])}): its checks held for "
        f"{playbook['candidate']}: {'; '.join(held)}"
        f"{lead}."
    )


def held_at(playbook: dict[str, Any], at: float, why: str) -> str:
    """Why a finding from `playbook` (a `recall` entry) is less sure than its trust, as a
    clause (", this finding held at 0.45: a lead"), or "" when the finding is as sure as the
    trust: a page that quoted trust 0.50 beside a 0.45 finding left the reader to guess which
    one to believe."""
    if at >= round(float(playbook["trust"]), 2):
        return ""
    return f", this finding held at {at:.2f}: {why}"


def learned(playbook: dict[str, Any]) -> str:
    """Where a `recall` entry was learned and who gave the verdict, as a clause: ", learned
    from inc-1 on 2026-11-02 (confirmed by Priya)", or "" for one written by hand."""
    if not playbook.get("learned_from"):
        return ""
    when = ""
    if playbook.get("learned_at"):
        day = datetime.fromtimestamp(int(playbook["learned_at"]) / 1000, UTC)
        when = f" on {day:%Y-%m-%d}"
    who = playbook.get("confirmed_by")
    did = "corrected" if playbook.get("lesson") == "corrected" else "confirmed"
    by = f" ({did} by {who})" if who else ""
    return f", learned from {playbook['learned_from']}{when}{by}"
