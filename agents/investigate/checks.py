"""Checks: a playbook's conditions, as typed data, each answered by a real evidence call.

A check is one of a pydantic union discriminated by `type` (`Check`; a check missing a field
is refused with the reason, so `POST /api/v1/playbooks` answers 422):

- `no_recent_change` — no Change on the other alerting components (not the candidate) in the
  lookback window before the incident opened. A fresh deploy upstream explains the symptoms
  better than the remembered failure.
- `recent_change` — a Change on the candidate in that window.
- `alert_kind` `{kind, scope}` — an alert of this failure kind (`agents.failure_kinds`),
  whatever its wording, on the candidate (`scope: candidate`, the default) or on any alerting
  component of the incident (`scope: alerting`: a silent root's symptoms show on its callers).
- `alert_firing` `{alertname, scope}` — an alert of exactly this name, same scopes.
- `alert_any` `{scope, components}` — an alert of any kind or wording on the candidate
  (`scope: candidate`, the default), or on one of `components` (`scope: components`: the
  components a silent root's fault showed on when it was learned). What a learned playbook
  asks when the alert it came from had no failure kind, or its cause raised none: the same
  fault is worded and classified differently next time (lock waits, then deadlocks), but it
  still alerts in the same places.
- `named_by_alert` — an alert's peer label (`upstream`, `peer_service`, …) names the candidate.
- `calls_failing` `{threshold}` — calls into the candidate fail at least this often (0-1) in
  the incident window (service-graph metrics, `agents.investigate.tools.evidence.edge_health`).
- `calls_slow` `{factor}` — calls into the candidate take at least `factor` x their mean of
  the hour before.
- `calls_degraded` `{how: [failing, slowed]}` — calls into the candidate are degraded in one
  of the listed ways by the rules' own definitions (`agents.investigate.weigh`: `failing`,
  `slowed`; all callers together or one caller's edge), whatever the magnitude. What a learned
  playbook asks of measured evidence: the same fault fails 40 % of calls one time and 15 % the
  next. Only the ways it was seen: a dependency slowed by a traffic surge upstream does not
  fail its calls, so slow calls do not recognise a fault that made them fail.
- `requests_rising` `{factor}` — the candidate's requests rose at least `factor` x (a traffic
  source).
- `explains_alerting` `{via}` — most alerting components (more than half) reach the candidate
  by a dependency path (business or configuration edges, 0-6 hops), or the candidate is a
  traffic source calling them: a remembered cause that cannot explain this incident's alerts is
  not its cause (the few it does not explain are split off after the finding). The investigator
  asks it of every recalled playbook, so a wrong one planted by hand is caught. `via: calls`
  (what the learner writes when a person named a caller of what alerted: a batch holding row
  locks on a database its other callers wait on, a service hammering the cache it calls) also
  counts an alerting component the candidate's own calls reach, directly or through a
  component both depend on (`cypher/reached_by_calls.cypher`).
- `signature` `{alerts: [{component, kind, path}], overlap}` — the incident a playbook was
  learned from, as it can be observed again when nothing was measured: which components
  alerted with which failure kinds (`agents.failure_kinds`; the alert name when none
  classifies) and their dependency paths to the cause. Holds when what alerts now overlaps
  what alerted then by at least `overlap` (Jaccard, 0-1) and every remembered component that
  had a path to the cause alerting now still has one, comparing (component, kind) pairs; or,
  the kinds aside, comparing components (`by_component`; a kind about a component's own
  process on another component than the candidate stays a kind): then it holds with
  `kinds_differ`, a lead the investigator follows only when no remembered cause of another
  component holds too (`Investigator._recall`) and the rules are unsure.
  `unclassified`: whether an alert no keyword classifies `differs` from every other kind (the
  default, as stored before the field existed) or `matches` any kind on the same component
  (what the learner writes): a name that classifies as nothing says nothing about the kind.
  Kinds that both classify must still agree: two silent causes behind the same callers (a
  cache, a configuration service) are told apart by the callers' kinds alone; an unclassified
  name does not match a kind about the component's own process (memory, cpu, disk). The
  producers and consumers of one topic the cause hosts (path component -> topic -> broker)
  count as one group: a stalled broker lags
  whichever consumers read at the time. A group's kind matches when at least
  `GROUP_QUORUM` (2) of its components alert with it again, or as many as did then if fewer:
  one consumer behind alone is as likely its own fault.
- `prometheus` `{query, op, threshold}` — an instant query (at the incident's opening time)
  whose first sample compares true against the threshold; `$component` in the query is replaced
  by the candidate's name, quoted as a PromQL string.

Every check answers `{held, status: ok|no_data|error, raw, detail}`. `error` (an invalid stored
check, a bad query, Prometheus down or not configured) never holds: the playbook is not
applicable for this incident, and the investigation goes on. `no_data` measured nothing: a
service-graph check with no series does not hold; `no_recent_change` while no change was ever
recorded (no change source) holds, not contradicted, and says "not checked" (it never singles
out the candidate on its own), and `recent_change` does not.
"""

from __future__ import annotations

import json
import operator
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from adapters.falkordb import TenantGraph
from adapters.notify import AdapterError
from adapters.promql import BoundedPromQL
from agents.failure_kinds import KINDS, SELF_KINDS, classify
from agents.investigate.tools.base import ToolContext
from agents.investigate.tools.changes import CHANGE_LOOKBACK_MS, NO_CHANGE_SOURCE, NOT_CHECKED
from agents.investigate.tools.evidence import EdgeInput, edge_health
from agents.investigate.tools.graph import NoInput, alert_peers
from agents.investigate.weigh import EDGE_MIN_CALLS, signals

__all__ = [
    "CHANGE_LOOKBACK_MS", "CHECK", "EXPLAINS", "EXPLAINS_BY_CALLS", "Check", "Evidence",
    "about_candidate", "about_incident", "alert_signature", "evaluate", "evidence_checks",
    "kinds_differ", "looked_at", "paths_to", "reached_by_calls",
]  # fmt: skip

#: What checks may look at: the incident's alerts, its alerting components, when it opened
#: (ms, UTC) and the evidence sources — the same context the investigation tools get.
Evidence = ToolContext
OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le, "==": operator.eq,
}  # fmt: skip


class _Check(BaseModel, ABC):
    """Base of every check: stored as JSON in `Playbook.checks_json`. Each check type answers
    for itself (`answer`) and says what it is about (`about_candidate`), so a new type is one
    class and one entry in `Check`."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # "NaN", "inf" are no threshold

    @abstractmethod
    def answer(self, candidate: str, ev: Evidence) -> dict[str, Any]:
        """`{held, status, raw, detail}` for `candidate` (see `evaluate`)."""

    def about_candidate(self) -> bool:
        """Whether the check looks at the candidate itself, not only at the incident's context
        (a playbook whose checks are all context cannot single out its candidate)."""
        return True

    def about_incident(self) -> bool:
        """Whether the check names components of the incident it was learned from (they
        mean nothing for another component recalled by kind transfer, `gated`)."""
        return False


class NoRecentChange(_Check):
    """No change on the other alerting components in the 2 h before the incident."""

    type: Literal["no_recent_change"]
    scope: Literal["alerting"] = "alerting"

    def answer(self, candidate: str, ev: Evidence) -> dict[str, Any]:
        return _changes(self, candidate, ev)

    def about_candidate(self) -> bool:
        return False  # a change anywhere upstream explains the symptoms as well


class RecentChange(_Check):
    """A change on the candidate in the 2 h before the incident."""

    type: Literal["recent_change"]
    scope: Literal["candidate"] = "candidate"

    def answer(self, candidate: str, ev: Evidence) -> dict[str, Any]:
        return _changes(self, candidate, ev)


class AlertKind(_Check):
    """An alert of failure kind `kind` on the candidate, or on any alerting component."""

    type: Literal["alert_kind"]
    kind: str
    scope: Literal["candidate", "alerting"] = "candidate"

    @field_validator("kind")
    @classmethod
    def _known(cls, value: str) -> str:
        known = [k for k, _ in KINDS]
        if value not in known:
            raise ValueError(f"unknown failure kind {value!r}; use one of {', '.join(known)}")
        return value

    def answer(self, candidate: str, ev: Evidence) -> dict[str, Any]:
        return _alerts(self, candidate, ev)

    def about_candidate(self) -> bool:
        return self.scope == "candidate"


class AlertFiring(_Check):
    """An alert named `alertname` on the candidate, or on any alerting component."""

    type: Literal["alert_firing"]
    alertname: str = Field(min_length=1)
    scope: Literal["candidate", "alerting"] = "candidate"

    def answer(self, candidate: str, ev: Evidence) -> dict[str, Any]:
        return _alerts(self, candidate, ev)

    def about_candidate(self) -> bool:
        return self.scope == "candidate"


class AlertAny(_Check):
    """An alert of any kind on the candidate, or on one of the listed `components`."""

    type: Literal["alert_any"]
    scope: Literal["candidate", "components"] = "candidate"
    components: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        default_factory=list, max_length=50
    )

    @model_validator(mode="after")
    def _listed(self) -> AlertAny:
        if (self.scope == "components") != bool(self.components):
            raise ValueError("components are listed exactly when scope is components")
        return self

    def answer(self, candidate: str, ev: Evidence) -> dict[str, Any]:
        return _alerts(self, candidate, ev)

    def about_candidate(self) -> bool:
        return self.scope == "candidate"

    def about_incident(self) -> bool:
        return self.scope == "components"


class NamedByAlert(_Check):
    """An alert's peer label names the candidate (a caller blames it)."""

    type: Literal["named_by_alert"]

    def answer(self, candidate: str, ev: Evidence) -> dict[str, Any]:
        peers = alert_peers(ev, NoInput()).data or []
        hits = [p for p in peers if p["peer"] == candidate]
        return _result(bool(hits), hits, f"alerts naming {candidate} as a peer: {len(hits)}")


class CallsFailing(_Check):
    """Calls into the candidate fail at least `threshold` (a ratio, 0-1) of the time."""

    type: Literal["calls_failing"]
    threshold: float = Field(gt=0, le=1)

    def answer(self, candidate: str, ev: Evidence) -> dict[str, Any]:
        return _calls(self, candidate, ev)


class CallsSlow(_Check):
    """Calls into the candidate take at least `factor` x their mean of the hour before."""

    type: Literal["calls_slow"]
    factor: float = Field(gt=1)

    def answer(self, candidate: str, ev: Evidence) -> dict[str, Any]:
        return _calls(self, candidate, ev)


class CallsDegraded(_Check):
    """Calls into the candidate fail or got slow (`how`), as the rules define it."""

    type: Literal["calls_degraded"]
    how: list[Literal["failing", "slowed"]] = Field(min_length=1, max_length=2)

    def answer(self, candidate: str, ev: Evidence) -> dict[str, Any]:
        return _degraded(self, candidate, ev)


class RequestsRising(_Check):
    """The candidate's requests rose at least `factor` x against the hour before."""

    type: Literal["requests_rising"]
    factor: float = Field(gt=1)

    def answer(self, candidate: str, ev: Evidence) -> dict[str, Any]:
        return _calls(self, candidate, ev)


class ExplainsAlerting(_Check):
    """Most alerting components reach the candidate (or are reached by it, a traffic source);
    with `via: calls`, or are reached by the candidate's calls (module docstring)."""

    type: Literal["explains_alerting"]
    via: Literal["dependencies", "calls"] = "dependencies"

    def answer(self, candidate: str, ev: Evidence) -> dict[str, Any]:
        return _explains(candidate, ev, self.via)

    def about_candidate(self) -> bool:
        return False  # any cause upstream of the alerting components explains them


class SignatureAlert(BaseModel):
    """One alerting component of a remembered incident: its failure kind (or alert name) and
    its dependency path to the cause (empty when it had none)."""

    model_config = ConfigDict(extra="forbid")

    component: str = Field(min_length=1, max_length=200)
    kind: str = Field(min_length=1, max_length=200)
    path: list[str] = Field(default_factory=list, max_length=8)


class Signature(_Check):
    """The remembered incident's alerting components, kinds and paths (module docstring)."""

    type: Literal["signature"]
    alerts: list[SignatureAlert] = Field(min_length=1, max_length=50)
    overlap: float = Field(0.6, gt=0, le=1)
    unclassified: Literal["differs", "matches"] = "differs"

    def answer(self, candidate: str, ev: Evidence) -> dict[str, Any]:
        return _signature(self, candidate, ev)

    def about_incident(self) -> bool:
        return True


class PromQLCheck(_Check):
    """An instant PromQL query whose first sample compares true against `threshold`."""

    type: Literal["prometheus"]
    query: BoundedPromQL = Field(min_length=1, max_length=4000)
    op: Literal[">", ">=", "<", "<=", "=="] = ">"
    threshold: float

    def answer(self, candidate: str, ev: Evidence) -> dict[str, Any]:
        return _promql(self, candidate, ev)


#: The gate every recalled playbook passes (`gated`), and the one a lesson naming a caller of
#: what alerted carries instead (`agents.learn.learner`).
EXPLAINS: dict[str, Any] = {"type": "explains_alerting"}
EXPLAINS_BY_CALLS: dict[str, Any] = {"type": "explains_alerting", "via": "calls"}

#: One check of a playbook, by its `type`.
Check = Annotated[
    NoRecentChange | RecentChange | AlertKind | AlertFiring | AlertAny | NamedByAlert
    | CallsFailing | CallsSlow | CallsDegraded | RequestsRising | ExplainsAlerting | Signature
    | PromQLCheck,
    Field(discriminator="type"),
]  # fmt: skip
CHECK: TypeAdapter[Any] = TypeAdapter(Check)


def promql_string(value: str) -> str:
    """A PromQL double-quoted string literal (JSON escaping is valid PromQL escaping)."""
    return json.dumps(value)


def _result(held: bool, raw: Any, detail: str, status: str = "ok") -> dict[str, Any]:
    return {"held": held, "status": status, "raw": raw, "detail": detail}


def _error(detail: str, raw: Any = None) -> dict[str, Any]:
    return _result(False, raw, detail, "error")


def evaluate(check: dict[str, Any], candidate: str, ev: Evidence) -> dict[str, Any]:
    """Answer one check for `candidate`: `{"held", "status", "raw", "detail"}`.

    Never raises for a bad check or missing evidence: an invalid check, a failed query or an
    unreachable source gives `status: error` and `held: False` with the reason. Graph
    outages (`GraphUnavailable`) propagate: the task is retried.
    """
    try:
        parsed = CHECK.validate_python(check)
    except ValidationError as exc:
        why = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        return _error(f"invalid check {check!r}: {why}")
    try:
        answered: dict[str, Any] = parsed.answer(candidate, ev)
        return answered
    except AdapterError as exc:
        return _error(f"{parsed.type}: {exc}")


def alert_signature(alerts: list[dict[str, Any]]) -> set[tuple[str, str]]:
    """The (component, failure kind) pairs of an incident's alerts; an alert no keyword
    classifies keeps its name as its kind. Alerts on no known component are left out."""
    return {
        (a["component"], classify(a["alertname"], a.get("summary", "")) or a["alertname"])
        for a in alerts if a["component"]
    }  # fmt: skip


def paths_to(ev: Evidence, sources: list[str], candidate: str) -> dict[str, list[str] | None]:
    """Each source's shortest dependency path to `candidate` (`cypher/paths_to.cypher`), or
    None when it has none."""
    return {source: path for source, (path, _) in _walks(ev, sources, candidate).items()}


def _walks(
    ev: Evidence, sources: list[str], candidate: str
) -> dict[str, tuple[list[str] | None, str | None]]:
    """Each source's shortest dependency path to `candidate` (None when it has none) and, when
    that path's last hop is HOSTED_ON, the hosted component it comes through (a topic on the
    candidate broker), else None."""
    if not sources:
        return {}
    rows = ev.graph.rows("paths_to", {"sources": sources, "candidate": candidate})
    out: dict[str, tuple[list[str] | None, str | None]] = {}
    for r in rows:
        path = list(r["path"]) if r["path"] else None
        out[r["source"]] = (path, path[-2] if path and r["hosted"] and len(path) > 1 else None)
    return out


def reached_by_calls(
    graph: TenantGraph, sources: list[str], candidate: str
) -> dict[str, list[str]]:
    """The sources `candidate`'s calls reach, each with one path from it to the candidate
    (`cypher/reached_by_calls.cypher`: directly, or through a component both depend on);
    sources it does not reach are left out."""
    if not sources:
        return {}
    rows = graph.rows("reached_by_calls", {"sources": sources, "candidate": candidate})
    return {r["source"]: list(r["path"]) for r in rows if r["path"]}


def _explains(candidate: str, ev: Evidence, via: str = "dependencies") -> dict[str, Any]:
    found = paths_to(ev, ev.alerting, candidate)
    if via == "calls":
        unreached = [c for c in ev.alerting if not found.get(c)]
        found |= reached_by_calls(ev.graph, unreached, candidate)
    missing = sorted(c for c in ev.alerting if not found.get(c))
    explained = len(ev.alerting) - len(missing)
    detail = f"{candidate} explains {explained} of {len(ev.alerting)} alerting components"
    if missing:
        detail += f" (not {', '.join(missing)})"
    return _result(2 * explained > len(ev.alerting), found, detail)


#: The failure kinds; a signature's kind outside them is an alert name no keyword classified.
KNOWN_KINDS = frozenset(k for k, _ in KINDS)


def _same(a: tuple[str, str], b: tuple[str, str], unclassified: bool) -> bool:
    """Two (component, kind) pairs alike: same component and kind, or, with `unclassified`,
    same component and either kind an alert name no keyword classified, unless the other is
    about the component's own process (`SELF_KINDS`: an out-of-memory kill says more than a
    name no keyword read, and points at the component itself)."""
    if a[0] != b[0]:
        return False
    kinds = {a[1], b[1]}
    return a[1] == b[1] or (unclassified and not kinds <= KNOWN_KINDS and not kinds & SELF_KINDS)


#: A remembered group of components reaching the cause through one hosted component matches
#: when at least this many of its members alert again (fewer when fewer alerted then).
GROUP_QUORUM = 2


def _signature(check: Signature, candidate: str, ev: Evidence) -> dict[str, Any]:
    then_pairs = {(a.component, a.kind) for a in check.alerts}
    now_pairs = alert_signature(ev.alerts)
    walks = _walks(ev, sorted({c for c, _ in then_pairs | now_pairs}), candidate)
    # Components that reach the cause through one component it hosts (the consumers and
    # producers of a topic on a broker) count as one: a stalled broker lags whichever of
    # them read or write at the time, so which ones alert changes from one time to the next.
    # Only the topic's own producers and consumers (path component -> topic -> broker): a
    # caller of a producer fails for reasons of its own path.
    group = {
        c: hosted if hosted and path and len(path) == 3 else c
        for c, (path, hosted) in walks.items()
    }
    overlap, matched, again, then, now = _overlap(
        then_pairs, now_pairs, group, check.unclassified == "matches"
    )
    # The same fault shows on the same components as errors one time and latency the next:
    # compared by component alone, a repeat matches whatever its kinds. A kind about a
    # component's own process (memory, cpu, disk) on another component than the candidate
    # stays a kind: it points at that component. Held so, the finding is `kinds_differ`, and
    # the investigator lets it name the cause only when no other remembered cause holds
    # (`Investigator._recall`): two silent causes behind the same callers differ by kind.
    plain = _overlap(_plain(then_pairs, candidate), _plain(now_pairs, candidate), group, False)[0]
    had_path = sorted({a.component for a in check.alerts if a.path} & {c for c, _ in now_pairs})
    found = {c: walks.get(c, (None, None))[0] for c in had_path}
    lost = [c for c in had_path if not found.get(c)]
    by_kind = overlap >= check.overlap
    held = (by_kind or plain >= check.overlap) and not lost
    shown = ", ".join(f"{k} on {', '.join(sorted(now[(g, k)]))}" for g, k in sorted(again))
    detail = (f"signature overlap {overlap:.2f} (want {check.overlap:.2f}): {shown or 'nothing'}"
              " alert again"
              + (f"; by component {plain:.2f}, kinds differ" if held and not by_kind else "")
              + (f"; no path to {candidate} from {', '.join(lost)}" if lost else ""))  # fmt: skip
    raw = {"overlap": round(overlap, 3), "by_component": round(plain, 3),
           "kinds_differ": held and not by_kind, "matched": sorted(map(list, matched)),
           "new": sorted(map(list, set(now) - again)),
           "missing": sorted(map(list, set(then) - matched)), "paths": found}  # fmt: skip
    return _result(held, raw, detail)


def kinds_differ(result: dict[str, Any]) -> bool:
    """Whether a check's answer (`evaluate`) is a signature that held by component only, its
    kinds differing (`_signature`)."""
    raw = result.get("raw")
    return isinstance(raw, dict) and bool(raw.get("kinds_differ"))


#: How a signature that held by its components only (`kinds_differ`) reads beside it: the
#: investigator follows it as a lead, not a match (`recall.confidence`).
BY_COMPONENTS_ONLY = (
    "~ held by its components only (the same components alert, with other kinds than then: "
    "a lead, not a match)"
)


def held_words(result: dict[str, Any]) -> str:
    """A check's answer (`evaluate`, as a USED row stores it) in words for the web page's
    Decisions table: "✓ held", "✗ did not hold", "– not checked" (held, having measured
    nothing: status `no_data`), or `BY_COMPONENTS_ONLY` for a signature that held by its
    components only. A new user's trial read "✓ held" beside "overlap 0.33 (want 0.50) …
    kinds differ" and could not tell whether it passed."""
    if result.get("held") and result.get("status") == "no_data":
        return "– not checked"
    if result.get("held") and kinds_differ(result):
        return BY_COMPONENTS_ONLY
    return "✓ held" if result.get("held") else "✗ did not hold"


def _plain(pairs: set[tuple[str, str]], candidate: str) -> set[tuple[str, str]]:
    """`pairs` with their kinds dropped (`""`), but a self kind (`SELF_KINDS`) on another
    component than `candidate`."""
    return {(c, k if k in SELF_KINDS and c != candidate else "") for c, k in pairs}


def _overlap(
    then_pairs: set[tuple[str, str]],
    now_pairs: set[tuple[str, str]],
    group: dict[str, str],
    loose: bool,
) -> tuple[
    float,
    set[tuple[str, str]],
    set[tuple[str, str]],
    dict[tuple[str, str], set[str]],
    dict[tuple[str, str], set[str]],
]:
    """The Jaccard overlap of two signatures' (group, kind) pairs (`_grouped`), pairs alike by
    `_same` (`loose`: an unclassified kind matches) and, for a group, when at least
    `GROUP_QUORUM` of its components alert again (or as many as then, if fewer). Returns the
    overlap, the remembered pairs matched, the pairs now matched, and both grouped."""
    then = _grouped(then_pairs, group)
    now = _grouped(now_pairs, group)

    def alike(t: tuple[str, str], n: tuple[str, str]) -> bool:
        quorum = min(GROUP_QUORUM, len(then[t]))
        grouped = then[t] != {t[0]} or now[n] != {n[0]}
        return _same(t, n, loose) and (not grouped or len(now[n]) >= quorum)

    matched = {t for t in then if any(alike(t, n) for n in now)}
    # the pairs alerting now that some remembered one matches; the Jaccard of pairs counts
    # each match once (with exact kinds both sets are `then & now`)
    again = {n for n in now if any(alike(t, n) for t in then)}
    common = min(len(matched), len(again))
    total = len(then) + len(now) - common
    return (common / total if total else 0.0), matched, again, then, now


def _grouped(pairs: set[tuple[str, str]], group: dict[str, str]) -> dict[tuple[str, str], set[str]]:
    """(group, kind) -> the components of `pairs` in it; a component in no group is its own."""
    out: dict[tuple[str, str], set[str]] = {}
    for component, kind in pairs:
        out.setdefault((group.get(component, component), kind), set()).add(component)
    return out


def _changes(check: NoRecentChange | RecentChange, candidate: str, ev: Evidence) -> dict[str, Any]:
    since, until = ev.opened_ms - CHANGE_LOOKBACK_MS, ev.opened_ms
    scope = (
        [c for c in ev.alerting if c != candidate]
        if isinstance(check, NoRecentChange)
        else [candidate]
    )
    rows = ev.graph.rows("recent_changes", {"components": scope, "since": since, "until": until})
    if not rows and not ev.change_source:
        # nothing measured: `no_recent_change` is not contradicted (it cannot single out the
        # candidate anyway, `about_candidate`), `recent_change` is not shown; neither says so
        return _result(isinstance(check, NoRecentChange), [], NOT_CHECKED, "no_data")
    raw = [{k: r[k] for k in ("component", "kind", "ref", "at")} for r in rows]
    held = not rows if isinstance(check, NoRecentChange) else bool(rows)
    what = ", ".join(f"{r['kind']} {r['ref']} on {r['component']}" for r in raw) or "none"
    return _result(held, raw, f"changes in the last 2 h: {what}")


def _alerts(
    check: AlertKind | AlertFiring | AlertAny, candidate: str, ev: Evidence
) -> dict[str, Any]:
    if check.scope == "candidate":
        where, mine = candidate, [a for a in ev.alerts if a["component"] == candidate]
    elif check.scope == "components":
        listed = set(check.components)
        where = "one of " + ", ".join(sorted(listed))
        mine = [a for a in ev.alerts if a["component"] in listed]
    else:
        where, mine = "an alerting component", [a for a in ev.alerts if a["component"]]
    if isinstance(check, AlertAny):
        hits, want = mine, "an alert of any kind"
    elif isinstance(check, AlertKind):
        hits = [a for a in mine if classify(a["alertname"], a.get("summary", "")) == check.kind]
        want = f"{'an' if check.kind[:1] in 'aeiou' else 'a'} {check.kind} alert"  # an errors
    else:
        hits = [a for a in mine if a["alertname"] == check.alertname]
        want = f"alert {check.alertname}"
    raw = [{"key": a["key"], "alertname": a["alertname"]} for a in hits]
    return _result(bool(hits), raw, f"{want} on {where}: {len(hits)}")


def _calls(
    check: CallsFailing | CallsSlow | RequestsRising, candidate: str, ev: Evidence
) -> dict[str, Any]:
    """Service-graph evidence for the candidate (`edge_health`), summed over its edges."""
    answer = edge_health(ev, EdgeInput(components=[candidate]))
    if answer.status == "error":
        return _error(answer.detail)
    if isinstance(check, RequestsRising):
        mine = [e for e in answer.data or [] if e["client"] == candidate]
        rises = [e["rate_change"] for e in mine if e["rate_change"] is not None]
        top = max(rises, default=None)
        held = top is not None and top >= check.factor
        return _result(held, mine[:5], f"{candidate}'s requests rose {top}x (want {check.factor}x)",
                       "ok" if rises else "no_data")  # fmt: skip
    into = [e for e in answer.data or [] if e["server"] == candidate]
    calls = sum(e["calls"] for e in into)
    if isinstance(check, CallsFailing):
        # All callers together, or the worst single caller (as `weigh` reads them:
        # a fault may hit only some callers).
        ratios = [sum(e["failed"] for e in into) / calls] if calls else []
        ratios += [e["fail_ratio"] for e in into
                   if e["calls"] >= EDGE_MIN_CALLS and e["fail_ratio"] is not None]  # fmt: skip
        ratio = max(ratios, default=None)
        held = ratio is not None and ratio >= check.threshold
        detail = f"calls into {candidate} fail {_pct(ratio)} (want {_pct(check.threshold)})"
        return _result(held, into[:5], detail, "ok" if calls else "no_data")
    now = [(e["latency_ms"], e["calls"]) for e in into if e["latency_ms"] is not None]
    base = [(e["baseline_latency_ms"], e["baseline_calls"]) for e in into
            if e["baseline_latency_ms"] is not None]  # fmt: skip
    if not now or not base:
        return _result(False, into[:5], f"no latency of calls into {candidate}", "no_data")
    mean = sum(v * n for v, n in now) / max(1.0, sum(n for _, n in now))
    before = sum(v * n for v, n in base) / max(1.0, sum(n for _, n in base))
    factors = [mean / before] if before else []
    factors += [e["latency_ms"] / e["baseline_latency_ms"] for e in into
                if e["calls"] >= EDGE_MIN_CALLS and e["latency_ms"] is not None
                and e["baseline_latency_ms"]]  # fmt: skip
    factor = max(factors, default=0.0)
    detail = f"calls into {candidate} take {mean:.0f} ms, {factor:.1f}x the hour before"
    return _result(factor >= check.factor, into[:5], detail)


#: The `weigh.signals` source of each way calls can be degraded.
DEGRADED_SOURCE = {"failing": "calls", "slowed": "latency"}


def _degraded(check: CallsDegraded, candidate: str, ev: Evidence) -> dict[str, Any]:
    """`calls_degraded`: the rules' own signals (`weigh.signals`) over the edges into the
    candidate, so a learned playbook asks what a finding would count as a degraded
    dependency, not a magnitude seen once."""
    answer = edge_health(ev, EdgeInput(components=[candidate]))
    if answer.status == "error":
        return _error(answer.detail)
    into = [e for e in answer.data or [] if e["server"] == candidate]
    if not into:
        return _result(False, [], f"no calls into {candidate}", "no_data")
    seen = signals(into, [], [], []).get(candidate, [])
    wanted = {DEGRADED_SOURCE[h] for h in check.how}
    found = [g for g in seen if g.source in wanted]
    if not found:
        calls, failed = sum(e["calls"] for e in into), sum(e["failed"] for e in into)
        ratio = failed / calls if calls else None
        other = "; ".join(g.text for g in seen if g.source in DEGRADED_SOURCE.values())
        detail = (f"calls into {candidate} are not {' or '.join(check.how)} "
                  f"(fail {_pct(ratio)}){': ' + other if other else ''}")  # fmt: skip
        return _result(False, into[:5], detail)
    return _result(True, into[:5], "; ".join(g.text for g in found))


def _pct(ratio: float | None) -> str:
    return "n/a" if ratio is None else f"{100 * ratio:.1f} %"


def _promql(check: PromQLCheck, candidate: str, ev: Evidence) -> dict[str, Any]:
    if ev.prometheus is None:
        return _error("PROMETHEUS_URL is not set: cannot verify")
    query = check.query.replace("$component", promql_string(candidate))
    samples = ev.prometheus.instant(query, ev.opened_ms / 1000)
    held = bool(samples) and OPERATORS[check.op](samples[0]["value"], check.threshold)
    status = "ok" if samples else "no_data"
    if not ev.prometheus.own:  # a shared Prometheus holds other tenants' series: no samples
        return _result(held, None, f"{query}: {len(samples)} samples (shown only from this "
                       "tenant's own Prometheus, BLAST_PROMETHEUS_URLS)", status)  # fmt: skip
    return _result(held, samples[:5], f"{query} -> {samples[:1]}", status)


def _parsed(check: dict[str, Any]) -> _Check | None:
    """A stored check as its type, or None when it is invalid (it never holds)."""
    try:
        parsed: _Check = CHECK.validate_python(check)
    except ValidationError:
        return None
    return parsed


def describe(
    check: dict[str, Any], candidate: str, measured: bool = True, by_components: bool = False
) -> str:
    """A stored check as a sentence people read (the memory page, docs/web.md): what must hold
    for the playbook pinned to `candidate`. An invalid one says so. `measured` false: the check
    ran and measured nothing (status `no_data`); a change check then says it was not checked.
    `by_components`: a signature that held by its components only (`kinds_differ`), which then
    says what held, not what it wants ("the same shape again" read as a result beside "kinds
    differ" in a new user's trial)."""
    c = _parsed(check)
    where = (
        candidate if getattr(c, "scope", "candidate") == "candidate" else "an alerting component"
    )
    match c:
        case None:
            return f"an invalid check (never holds): {str(check)[:120]}"
        case NoRecentChange() | RecentChange() if not measured:
            return f"recent changes not checked ({NO_CHANGE_SOURCE})"
        case NoRecentChange():
            return "no recent change on the other alerting components (2 h before)"
        case RecentChange():
            return f"a recent change on {candidate} (2 h before)"
        case AlertKind():
            return f"{_an(c.kind)} alert on {where}"
        case AlertFiring():
            return f"alert {c.alertname} firing on {where}"
        case AlertAny() if c.scope == "components":
            return f"an alert of any kind on one of {', '.join(c.components)}"
        case AlertAny():
            return f"an alert of any kind on {candidate}"
        case NamedByAlert():
            return f"an alert's peer label names {candidate}"
        case CallsFailing():
            return f"calls into {candidate} fail, {c.threshold:.0%} or more"
        case CallsSlow():
            return f"calls into {candidate} {c.factor:g}x slower than the hour before"
        case CallsDegraded():
            return f"calls into {candidate} {' or '.join(c.how)} (the service graph)"
        case RequestsRising():
            return f"requests from {candidate} {c.factor:g}x the hour before"
        case ExplainsAlerting() if c.via == "calls":
            return (
                f"{candidate} explains most alerting components (a dependency path from each, "
                f"or {candidate}'s own calls reach it)"
            )
        case ExplainsAlerting():
            return f"{candidate} explains most alerting components (a dependency path from each)"
        case Signature():
            pairs = ", ".join(f"{a.kind} on {a.component}" for a in c.alerts[:6])
            more = f" and {len(c.alerts) - 6} more" if len(c.alerts) > 6 else ""
            if by_components:
                said = "the same components alert again, with other kinds than then"
                return f"{said} (it was: {pairs}{more})"
            return f"the same shape again ({c.overlap:.0%} of: {pairs}{more})"
        case PromQLCheck():
            return f"Prometheus: {c.query} {c.op} {c.threshold:g}"
    return str(check.get("type"))


def _an(kind: str) -> str:
    return f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind}"


def about_candidate(check: dict[str, Any]) -> bool:
    """Whether a stored check looks at the candidate itself (`_Check.about_candidate`); an
    invalid one counts as about the candidate (it never holds, so it cannot steer)."""
    parsed = _parsed(check)
    return parsed is None or parsed.about_candidate()


def about_incident(check: dict[str, Any]) -> bool:
    """Whether a stored check names components of the incident it was learned from
    (`_Check.about_incident`); an invalid one does not (it never holds either way)."""
    parsed = _parsed(check)
    return parsed is not None and parsed.about_incident()


def looked_at(check: dict[str, Any]) -> set[str]:
    """The components whose alerts a stored check names (`alert_any` on listed components, a
    `signature`'s components): the components the incident it was learned from alerted on
    besides its candidate. Empty for any other check, and for an invalid one."""
    match _parsed(check):
        case AlertAny(scope="components") as c:
            return set(c.components)
        case Signature() as c:
            return {a.component for a in c.alerts}
    return set()


def gated(playbook: dict[str, Any]) -> list[dict[str, Any]]:
    """A recalled playbook's checks as the investigator runs them: `explains_alerting` first (a
    remembered cause that cannot explain most of this incident's alerting components is not
    its cause, however its own checks read), then the playbook's own. Recalled for another
    component of the same tech (kind transfer), its checks that name the components of the
    incident it came from (`signature`, `alert_any` on listed components: `about_incident`)
    are left out; only the failure kind carries over: a silent cause's symptom on listed
    components becomes an alert of the playbook's kind on an alerting component (as it was
    written before `alert_any`). `playbook`: a `recall` entry."""
    checks: list[dict[str, Any]] = playbook["checks"]
    if playbook["candidate"] != playbook["pinned_to"]:
        kind = playbook.get("failure_kind")
        carried = []
        for c in checks:  # each check parsed once
            if not about_incident(c):
                carried.append(c)
            elif c.get("type") == "alert_any" and kind:
                carried.append({"type": "alert_kind", "kind": kind, "scope": "alerting"})
        checks = carried
    if any(c.get("type") == "explains_alerting" for c in checks):
        return checks
    return [dict(EXPLAINS), *checks]


def evidence_checks(evidence: list[dict[str, Any]], cause: str) -> list[dict[str, Any]]:
    """Checks that carry the evidence that held when a playbook is learned, from the finding's
    evidence rows on `cause` (`weigh`), so a repeat with a silent root is recognised:

    - failing calls or spans, slow calls: `calls_degraded` in either way (`failing` or
      `slowed`), by the rules' own definitions, not at a share of the ratio or slowdown seen
      once (the same fault fails 40 % of calls one time and 15 % the next), nor only in the
      way seen: whether callers see a sick dependency's errors or its slowness depends on
      their timeouts and on how far the fault has gone, so a pool exhausted one night times
      calls out and the next night fails them fast;
    - a traffic jump: `requests_rising` at half the jump seen (at least 1.5 x).

    Returns check dicts, strongest first.
    """
    out: list[dict[str, Any]] = []
    for row in evidence:
        if row.get("component") != cause or row.get("value") is None:
            continue
        value = float(row["value"])
        if row["source"] in ("calls", "spans", "latency"):
            if not any(c["type"] == "calls_degraded" for c in out):
                out.append({"type": "calls_degraded", "how": sorted(DEGRADED_SOURCE)})
        elif row["source"] == "traffic" and not any(c["type"] == "requests_rising" for c in out):
            out.append({"type": "requests_rising", "factor": round(max(1.5, value / 2), 1)})
    return out
