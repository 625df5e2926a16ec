"""A remembered cause nothing measured rules out: memory's lead when the alerts changed shape.

A silent cause's callers change from one time to the next (a pool exhausted behind the
payments API one night, behind the sessions API the next), so the playbook learned from the
first time misses on its signature, and the rules, with nothing measured, cannot separate the
cause from the quiet components in between. Of the causes nothing measured rules out, the
one people established before on this system, with nothing about it contradicted now, is the
one an on-call engineer checks first: memory names it as a lead (`recall.UNTRIED_CONFIDENCE`
at most), never a conclusion, and its trust moves on the verdict like any playbook that
steered.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from agents.investigate.checks import about_incident
from agents.investigate.decision import LEAD_BELOW, Decision
from agents.investigate.recall import UNTRIED_CONFIDENCE, held_at, learned
from agents.investigate.recall import confidence as memory_confidence


def fell_silent(check: dict[str, Any], candidate: str, alerting: list[str]) -> bool:
    """Whether `check` is an alert check on the candidate itself (`alert_any`, `alert_kind`,
    `alert_firing`, scope `candidate`) while the candidate raises no alert at all now: a
    database that alerted about its connections one night and fails silently the next. Its
    silence is no measurement of its health, so the check failing says only that the incident
    looks otherwise (`shape_missed`). One alerting with another kind does look otherwise."""
    return (
        check.get("type") in ("alert_any", "alert_kind", "alert_firing")
        and check.get("scope", "candidate") == "candidate"
        and candidate not in alerting
    )


def shape_missed(
    playbook: dict[str, Any], results: list[dict[str, Any]], alerting: list[str]
) -> bool:
    """Whether a recalled playbook (`recall` entry) failed only on how the incident it was
    learned from looked: pinned to the candidate (not a kind transfer), backed by a verdict,
    and every check that failed either names that incident's components
    (`checks.about_incident`: its signature, alerts on its callers) or asked for an alert on
    the candidate, which is silent now (`fell_silent`; `alerting`: the alerting components).
    `results`: the checks run, in order, each `{check, held, ...}` (the run stops at the first
    that fails, but goes on past one that `fell_silent`).

    A silent cause's callers change from one time to the next (a pool exhausted behind the
    payments API one night, behind the sessions API the next), and a cause that alerted once
    may fail silently the next time: nothing about the cause itself contradicts it, only the
    alerts' shape is new."""
    failed = [r for r in results if not r["held"]]
    return (
        playbook["candidate"] == playbook["pinned_to"]
        and bool(playbook.get("learned_from") or playbook.get("helped"))
        and bool(failed)
        and all(
            about_incident(r["check"]) or fell_silent(r["check"], playbook["candidate"], alerting)
            for r in failed
        )
    )


def measure_missed(playbook: dict[str, Any], results: list[dict[str, Any]], checks: int) -> bool:
    """Whether a recalled playbook (`recall` entry) failed only on its measured check: pinned
    to the candidate, backed by a verdict, every one of its `checks` (how many `gated` runs)
    run, and the one that failed, the last, is `calls_degraded` (calls into the candidate read
    as usual), while the incident's shape held (a check about that incident or the candidate).
    `results`: as `shape_missed` takes them.

    Such a cause is a lead only when the evidence blamed no call near the incident
    (`ToolContext.quiet`), or blamed only calls that explain fewer alerting components than it
    does (`investigator.outexplained`; both checked by `Investigator._remembered_lead`): an
    unseen newsroom's entitlements service, slow the first time, answered the next time at
    its usual speed with the wrong entitlements, and the paywall and the partner feeds
    alerted as before, beside a syndication feed failing under one of them."""
    failed = [r for r in results if not r["held"]]
    return (
        playbook["candidate"] == playbook["pinned_to"]
        and bool(playbook.get("learned_from") or playbook.get("helped"))
        and len(results) == checks
        and len(failed) == 1
        and failed[0] is results[-1]
        and failed[0]["check"].get("type") == "calls_degraded"
        and any(
            r["held"] and (about_incident(r["check"]) or r["check"]["type"] == "explains_alerting")
            for r in results
        )
    )


def alerting_again(playbook: dict[str, Any]) -> int:
    """How many alerts of the incident a recalled playbook (`recall` entry with its
    `results`) was learned from are back: the most hits of a check about that incident that
    held (`checks.about_incident`: an alert on one of its callers, `raw` the alerts found; its
    signature, `raw.matched` the pairs found again), 0 when none held."""
    found = [0]
    for r in playbook["results"]:
        if not (r["held"] and about_incident(r["check"])):
            continue
        raw = r.get("raw")
        hits = raw.get("matched") if isinstance(raw, dict) else raw
        found.append(len(hits) if isinstance(hits, list) else 1)
    return max(found)


def calls_reach(playbook: dict[str, Any], name: str) -> bool:
    """Whether a recalled caller's or producer's lesson (`recall` entry with its `results`)
    reaches `name` by its own calls: its `explains_alerting` check with `via: calls` held, and
    one of the ways it found (`raw`: alerting component -> path from it to the lesson's cause,
    `cypher/reached_by_calls.cypher`) starts at `name` or runs through it. A batch that flooded
    one database is a suspect whenever another component its calls reach is blamed."""
    for r in playbook.get("results", []):
        check = r["check"]
        if r["held"] and check.get("type") == "explains_alerting" and check.get("via") == "calls":
            raw = r.get("raw")
            paths = raw.values() if isinstance(raw, dict) else []
            return any(path and name in path[:-1] for path in paths)
    return False


def reached_by_its_calls(playbook: dict[str, Any]) -> int | None:
    """How many alerting components a recalled playbook's own `explains_alerting` check with
    `via: calls` (a caller's or a producer's lesson, `upstream`) found its cause reaching (its
    `results`' `raw`: component -> path, None when unreached), or None when it has no such
    check or it was not run. No dependency walk reaches such a cause from what alerts, so a
    count of dependency paths (`Investigator._explained`) leaves it at nothing: a new user's
    trial read "the alerts rule it out: order-events explains 2 of 2 alerting components,
    order-publisher 0" beside "✓ held: order-publisher explains 2 of 2"."""
    for r in playbook.get("results", []):
        check = r["check"]
        if check.get("type") == "explains_alerting" and check.get("via") == "calls":
            raw = r.get("raw")
            return sum(1 for path in raw.values() if path) if isinstance(raw, dict) else None
    return None


def unrefuted(
    missed: list[dict[str, Any]],
    measured: dict[str, dict[str, Any]],
    explained: dict[str, int] | None = None,
) -> dict[str, Any] | None:
    """The remembered cause nothing measured rules out: the best playbook (`missed` is in
    recall order, each with the `results` of its checks) of the one cause whose playbooks
    missed only on the shape (`shape_missed`) and that no measurement ruled out (`measured`:
    `Decision.measured`, component -> the measurement a rule-out rests on), or None when none
    or several causes are left.

    More of the alerts it had back (`alerting_again`) says more than fewer, and some more
    than none: of the causes left, those whose earlier incident's alerts are back the most;
    among them, when `explained` (name -> how many alerting components reach it) is given,
    those that explain the most; then those whose best playbook people backed more (its
    trust: confirmed when it steered). One cause left is the one; several alike, none is. A
    database every service reads explains every alert, a red herring's too; a client whose
    two callers alert again as when it failed before is the one an engineer checks first
    (an unseen clinic chain's lab results, the lab client answering at its usual speed with
    the abnormal flags dropped). A rule-out from the alerts and the graph alone ("does not
    alert while an equally covering component does") is what such a cause contradicts: it
    was silent before too."""
    # a cause whose calls were measured as usual is refuted no more than any other when the
    # evidence blamed no call (`measure_missed`: only then is such a playbook in `missed`;
    # `calls_as_usual`: one that missed on the shape, set by `Investigator._remembered_lead`)
    left = [
        p for p in missed
        if p.get("quiet") or p.get("calls_as_usual") or p["candidate"] not in measured
    ]  # fmt: skip
    top = max(map(alerting_again, left), default=0)
    group = [p for p in left if alerting_again(p) == top]
    if explained is not None:
        counts = {p["candidate"]: explained[p["candidate"]] for p in group}
        group = [p for p in group if counts[p["candidate"]] == max(counts.values())]
    # alike in both, the cause whose lesson people backed more (its best playbook's trust)
    trust = {
        p["candidate"]: max(float(q["trust"]) for q in group if q["candidate"] == p["candidate"])
        for p in group
    }
    group = [p for p in group if trust[p["candidate"]] == max(trust.values(), default=0.0)]
    if len({p["candidate"] for p in group}) == 1:
        return group[0]
    return None


def remembered_lead_of(
    decision: Decision, missed: list[dict[str, Any]], explained: dict[str, int] | None = None
) -> Decision | None:
    """When the rules are unsure (inconclusive, or a cause under `LEAD_BELOW`), the one cause
    people established before that missed only on the incident's shape and that nothing
    measured rules out (`unrefuted` over `missed`, `Investigator._recall`'s, with
    `explained`), as a lead:
    confidence at most `UNTRIED_CONFIDENCE`, the rules' candidates kept behind it, its USED
    row marked steered (its trust moves on the verdict). None otherwise."""
    if decision.root_cause is not None and decision.confidence >= LEAD_BELOW:
        return None
    tied = list(dict.fromkeys([*filter(None, [decision.root_cause]), *decision.candidates]))
    playbook = unrefuted(missed, decision.measured, explained)
    if playbook is None:
        return None
    playbook["row"]["steered"] = True
    cause = playbook["candidate"]
    confidence = min(memory_confidence(playbook), UNTRIED_CONFIDENCE)
    others = ", ".join(c for c in tied if c != cause)
    # with no rival left standing the rules had no answer of their own (a new user's trial
    # read "cannot tell quote from nothing else")
    if others:
        unsure = f"the rules cannot tell {cause} from {others}"
    elif decision.root_cause == cause:
        unsure = f"the rules name {cause} too, at {decision.confidence:.2f}, but only as a lead"
    else:
        unsure = "the rules have no candidate of their own"
    trust = f"{playbook['trust']:.2f}{held_at(playbook, confidence, 'a lead')}"
    wrong_content = (
        "a fault in what it answers (the wrong content at status 200) shows in no call metric"
    )
    if playbook.get("outexplained"):
        but = (
            f"the calls into {cause}: they neither failed nor slowed, and what the evidence "
            f"blamed explains fewer of the alerts ({playbook['outexplained']}), while "
            f"{wrong_content}"
        )
    elif playbook.get("quiet"):
        but = (
            f"the calls into {cause}: they neither failed nor slowed, and no measured call near "
            f"the incident did, while {wrong_content}"
        )
    elif playbook.get("calls_as_usual"):
        but = (
            "the shape of the alerts: other components alert than then; the calls into "
            f"{cause} read as usual, as did every measured call near the incident, while "
            f"{wrong_content}"
        )
    else:
        but = "the shape of the alerts: other components alert than then"
    summary = (
        f"A lead from memory: {unsure}, and nothing "
        f"measured rules it out; people established it before (playbook "
        f"'{playbook['title']}', trust {trust}{learned(playbook)}). Its checks held but for "
        f"{but}. Check it first; it is not a conclusion."
    )
    return replace(
        decision, root_cause=cause, candidates=[cause, *(c for c in tied if c != cause)],
        confidence=confidence, summary=summary,
    )  # fmt: skip
