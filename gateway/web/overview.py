"""The data behind the incidents list, memory, world and health pages (and an incident's
remediations), read from one tenant's graph. Times are ms since the epoch, UTC; `now_ms` is
passed in so a page is one moment."""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic import ValidationError

from adapters.falkordb import GraphStore, TenantGraph
from adapters.slack.mrkdwn import TEST_CAUSE
from agents.act import notices, spec
from agents.act.run import Credentials, cannot_run
from agents.respond import escalation
from agents.respond import maintenance as quiet_windows
from agents.respond.messages import lead
from gateway.http.incident_views import loads
from gateway.http.status import mark_contact_point_tests
from gateway.web.timeline import paged_words

#: Severities in the order the list sorts them (anything else sorts last).
SEVERITY_ORDER = ("critical", "error", "warning", "info")
#: How far ahead the world page looks for on-call shifts and holes between them (ms).
ONCALL_HORIZON_MS = 7 * 24 * 3600 * 1000
#: Most components the world page lists and draws.
WORLD_LIMIT = 2000


#: The list's state filter: value -> what it keeps (each also in words on the page).
STATES = {
    "open": "open",
    "unacknowledged": "open, paged, nobody acknowledged",
    "acknowledged": "open and acknowledged",
    "escalated": "open and escalated",
    "maintenance": "in a maintenance window",
    "resolved": "resolved",
    "all": "all",
}


def cause(row: dict[str, Any]) -> dict[str, str]:
    """What the list says about the cause: `{state, text}`; state is investigating |
    inconclusive | lead (named under the investigator's line: `messages.lead`, as the page says)
    | found | confirmed | corrected (a verdict outranks the finding) | heartbeat (the incident of
    a heartbeat's silence, `row["heartbeat"]` its alertname: no service is the cause) | test
    (every alert is Grafana's contact-point test, `row["contact_point_test"]`: nothing is
    broken)."""
    if row.get("heartbeat"):
        return {"state": "heartbeat", "text": f"the {row['heartbeat']} heartbeat stopped arriving"}
    if row.get("contact_point_test"):  # as its page says: no cause to find
        return {"state": "test", "text": TEST_CAUSE}
    verdict = row.get("verdict") or [None, None]
    if verdict[0] == "rejected":
        if verdict[1]:
            return {"state": "corrected", "text": f"corrected to {verdict[1]}"}
        if row["root_cause"] is None:
            # an inconclusive finding named no cause, so none was marked wrong: such a
            # rejection says, in words, a cause outside the graph (`verdicts.contradiction`)
            return {"state": "corrected", "text": "a cause outside the graph"}
        return {"state": "corrected", "text": f"{row['root_cause']} marked wrong"}
    if verdict[0] == "confirmed" and (verdict[1] or row["root_cause"]):
        return {"state": "confirmed", "text": f"{verdict[1] or row['root_cause']} (confirmed)"}
    if row["root_cause"]:
        confidence = row.get("confidence")
        if confidence is not None and lead(row["root_cause"], confidence):  # the page's rule
            said = f"{row['root_cause']} (low confidence {float(confidence):.2f})"
            return {"state": "lead", "text": said}
        return {"state": "found", "text": row["root_cause"]}
    if row["investigated"]:
        names = list(row["candidates"] or [])[:3]
        shown = " or ".join(names) if names else "no known component"
        return {"state": "inconclusive", "text": f"inconclusive: {shown}"}
    if row["status"] == "open":
        return {"state": "investigating", "text": "investigating"}
    return {"state": "inconclusive", "text": "not investigated"}


def incident_rows(
    graph: TenantGraph,
    now_ms: int,
    state: str = "open",
    team: str | None = None,
    service: str | None = None,
    severity: str | None = None,
    text: str | None = None,
) -> dict[str, Any]:
    """The incidents list: `{rows, teams, services}` (the choices for the filters: every team
    and service of the listed incidents). Open first, then newest.

    Row: a `web_incidents` row plus `cause` (`cause()`), `paged` (`{person, team, channel}`,
    `web_paged.cypher`, or None) and `paged_words` (`timeline.paged_words`: "nobody paged"
    when it reached no one), `acked` (bool), `maintenance` (bool: a window in force or
    the incident's own `maintenance_until` ahead). Filters: `state` (a key of `STATES`), `team`
    (owns an alerting service, or was paged), `service`, `severity`, `text` (a case-insensitive
    part of the id, title, alert names or cause).
    """
    status = "resolved" if state == "resolved" else None
    rows = graph.rows("web_incidents", {"status": status, "limit": 500, "now": now_ms})
    paged: dict[str, Any] = {}
    if rows:
        for found in graph.rows("web_paged", {"incident_ids": [r["id"] for r in rows]}):
            paged[found["incident_id"]] = loads(found["result"])
    for row in rows:
        row["alerts"], row["firing"] = int(row["alerts"]), int(row["firing"])
    mark_contact_point_tests(graph, rows)
    for row in rows:
        who = paged.get(row["id"])
        row["paged"] = who if isinstance(who, dict) else None
        row["paged_words"] = paged_words(row["paged"], bool(row["nobody_paged"]))
        row["services"], row["alertnames"] = sorted(row["services"]), sorted(row["alertnames"])
        row["cause"] = cause(row)
        row["acked"] = row["acknowledged_at"] is not None
        row["maintenance"] = bool(row["maintenance_until"] and row["maintenance_until"] > now_ms)
        if row["paged"] and row["paged"].get("team") and row["paged"]["team"] not in row["teams"]:
            row["teams"] = [*row["teams"], row["paged"]["team"]]
    teams = sorted({t for r in rows for t in r["teams"]})
    services = sorted({s for r in rows for s in r["services"]})

    def keep(row: dict[str, Any]) -> bool:
        is_open = row["status"] == "open"
        wanted = {
            "open": is_open,
            "unacknowledged": is_open and not row["acked"] and row["paged_at"] is not None,
            "acknowledged": is_open and row["acked"],
            "escalated": is_open and row["escalation_level"] > 0,
            "maintenance": row["maintenance"],
            "resolved": row["status"] == "resolved",
        }.get(state, True)
        if not wanted or (team and team not in row["teams"]):
            return False
        if (service and service not in row["services"]) or (
            severity and row["severity"] != severity
        ):
            return False
        if text:
            needle = text.lower()
            hay = [row["id"], row["title"], row["cause"]["text"], *row["alertnames"]]
            return any(needle in str(h or "").lower() for h in hay)
        return True

    kept = [r for r in rows if keep(r)]
    kept.sort(key=lambda r: (r["status"] != "open", -(r["opened_at"] or 0)))
    return {"rows": kept, "teams": teams, "services": services}


def memory(graph: TenantGraph) -> dict[str, Any]:
    """Playbooks (active and retired) with checks and trust history, and preferences with their
    versions.

    Shape: `{active: [playbook], retired: [playbook], facts: [fact]}` (retired: status retired,
    or superseded by a newer version); playbook = a
    `list_playbooks` row with `checks` (parsed), `fix` (`playbook_fix`) and
    `uses: [{incident_id, at, trust_at_use,
    steered, verdict, incident_verdict, investigations, said}]` oldest first, one per incident:
    its latest use (the one a verdict moves: `incident_decision`), `investigations` the number
    of its investigations that used the playbook (2 or more: it was re-investigated), `said`
    what moved trust on that incident and why, in words (`trust_words`, over all its uses: a
    re-investigation after a verdict leaves the count on the use the verdict followed); fact =
    a `web_facts` row with
    `version` (1 for the first statement; a version SUPERSEDES the one before) and `current`
    (nothing supersedes it).
    """
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    every: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for use in graph.rows("web_playbook_uses"):  # oldest first: a later use replaces one
        key = (use.pop("playbook"), use["incident_id"])
        latest.pop(key, None)  # so the incident sits where its latest use does
        latest[key] = use
        every.setdefault(key, []).append(use)
    uses: dict[str, list[dict[str, Any]]] = {}
    for key, use in latest.items():
        use["investigations"] = len(every[key])
        use["said"] = trust_words(every[key], use["incident_verdict"])
        uses.setdefault(key[0], []).append(use)
    playbooks = graph.rows("list_playbooks")
    runs = {r["playbook"]: r for r in graph.rows("web_fix_runs")}
    for pb in playbooks:
        pb["checks"] = loads(pb.pop("checks_json")) or []
        pb["uses"] = uses.get(pb["id"], [])
        pb["fix"] = playbook_fix(pb, runs.get(pb["id"]))
    facts = graph.rows("web_facts")
    older = {f["id"]: list(f["supersedes"]) for f in facts}
    superseded = {old for olds in older.values() for old in olds}
    versions: dict[str, int] = {}

    def version(fact_id: str, seen: frozenset[str] = frozenset()) -> int:
        if fact_id not in versions:
            before = [version(o, seen | {fact_id}) for o in older.get(fact_id, []) if o not in seen]
            versions[fact_id] = 1 + max(before, default=0)
        return versions[fact_id]

    for fact in facts:
        fact["version"] = version(fact["id"])
        fact["current"] = fact["id"] not in superseded
    return {
        "active": [p for p in playbooks if p["status"] == "active"],
        "retired": [p for p in playbooks if p["status"] != "active"],
        "facts": facts,
    }


#: What a verdict did to one use of a playbook (`USED.verdict`), in words, where people read
#: it (the memory page's trust history, the incident page's decisions).
USE_VERDICTS = {
    "helped": "helped: it steered to the cause people confirmed (trust up)",
    "misled": "misled: it steered to a cause people rejected (trust down)",
    "not_applicable": "not counted: it did not steer (trust unchanged)",
}


def trust_words(uses: list[dict[str, Any]], verdict: list[Any] | None) -> str:
    """One row of a playbook's trust history: what moved its trust on one incident, and why,
    in words. `uses`: that incident's `web_playbook_uses` rows of the playbook, oldest first
    (more than one: it was re-investigated); `verdict`: the incident's latest verdict
    `[confirmed|rejected, actual cause, who]`, or None.

    A verdict moves the latest use before it (`apply_verdict.cypher`): a re-investigation
    after it (alerts joined) is a later use no verdict has reached, and the count stays where
    the verdict put it; this row says which use was counted, so the playbook's helped and
    misled add up. E.g. "trust 0.50 at use, steered; confirmed by Sam: helped: it steered to
    the cause people confirmed (trust up)", "…; re-investigated later, that use did not steer
    (not counted)", "no verdict yet (trust unchanged)"."""
    last = uses[-1]
    who = None
    if verdict:
        who = f"{verdict[0]} by {verdict[2] or 'someone'}"
        if verdict[0] == "rejected":
            who += f" (actual cause {verdict[1]})" if verdict[1] else " (no cause named)"
    counted = [use for use in uses if use["verdict"] in ("helped", "misled")]
    if counted:
        use = counted[-1]
        head = f"{_at_use(use)}, steered"
        said = f"{head}; {who or 'a verdict'}: {USE_VERDICTS[use['verdict']]}"
        if use is not last:
            steer = "steered" if last["steered"] else "did not steer"
            said += f"; re-investigated later, that use {steer} (no verdict since: not counted)"
        return said
    head = f"{_at_use(last)}, {'steered' if last['steered'] else 'did not steer'}"
    if last["verdict"] == "not_applicable":
        return f"{head}; {who or 'a verdict'}: {USE_VERDICTS['not_applicable']}"
    if who:
        # the verdict came before this use (a re-investigation): it moved none of them
        return f"{head}; {who} before this use: not counted (trust unchanged)"
    return f"{head}; no verdict yet (trust unchanged)"


def _at_use(use: dict[str, Any]) -> str:
    """`trust 0.50 at use`: the trust a use of a playbook (`web_playbook_uses` row) had."""
    trust = use["trust_at_use"]
    return f"trust {trust:.2f} at use" if trust is not None else "trust unknown at use"


def playbook_fix(
    pb: dict[str, Any], pending: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """The fix a playbook proposes (a `list_playbooks` row's `remediation_json`), in words:
    `{kind, target, what, verify_within, verified, failed, trust, unverified, unrun}`
    (`agents.act.spec`'s `KINDS`, `target` and `describe`; `verify_within` in words, `10 min`;
    the verified and failed runs so far and the trust they earned, None before any; from
    `pending`, its `web_fix_runs` row, the runs not verified yet and the approvals that failed
    to run, 0 without one); None for a playbook without one.
    One stored by another version that no longer validates says so in `what`, its `type` as
    `kind`."""
    stored = pb.get("remediation_json")
    if not stored:
        return None
    runs = {"verified": int(pb.get("remediation_verified") or 0),
            "failed": int(pb.get("remediation_failed") or 0),
            "trust": pb.get("remediation_trust"),
            "unverified": int((pending or {}).get("unverified") or 0),
            "unrun": int((pending or {}).get("unrun") or 0)}  # fmt: skip
    try:
        fix = spec.load(stored)
    except ValidationError:
        raw = loads(stored)
        kind = raw.get("type") if isinstance(raw, dict) else None
        said = "stored by another version; it no longer validates here"
        return runs | {"kind": str(kind or "unknown"), "target": "-", "verify_within": None,
                       "what": said}  # fmt: skip
    return runs | {
        "kind": spec.KINDS[fix.type], "target": spec.target(fix), "what": spec.describe(fix),
        "verify_within": escalation.fmt_after(int(fix.verify_within.total_seconds() * 1000)),
    }  # fmt: skip


def holes(shifts: list[dict[str, Any]], start: int, end: int) -> list[tuple[int, int]]:
    """The stretches of [start, end) that no shift covers (shifts: `starts_at`, `ends_at`)."""
    found, cursor = [], start
    for shift in sorted(shifts, key=lambda s: s["starts_at"]):
        if shift["starts_at"] > cursor:
            found.append((cursor, min(shift["starts_at"], end)))
        cursor = max(cursor, shift["ends_at"])
        if cursor >= end:
            break
    if cursor < end:
        found.append((cursor, end))
    return [(a, b) for a, b in found if b > a]


def world(graph: TenantGraph, now_ms: int) -> dict[str, Any]:
    """Topology, owners, on call now and next, and coverage gaps.

    Shape: `{components: [{name, kind, tech, criticality, owners, edges: [[target, type,
    purpose]]}], teams: [{name, channel, escalation (the world file's note), levels (its
    escalation policy in words, `escalation.policy_lines`; [] for none), is_default, members,
    now (person or None), now_until, next ({person, starts_at, ends_at} or None), holes:
    [(from, to)]}],
    gaps: [str], default_team}`. Gaps: components no team owns (they route to the default
    team), teams with nobody on call now, holes in a team's rota within the next 7 days, teams
    with no Slack channel.
    """
    components = graph.rows("web_world", {"limit": WORLD_LIMIT})
    until = now_ms + ONCALL_HORIZON_MS
    teams = graph.rows("web_teams", {"now": now_ms, "until": until})
    default = next((t["name"] for t in teams if t["is_default"]), None)
    gaps = []
    for team in teams:
        team["levels"] = escalation.policy_lines(team.pop("policy"))
        shifts = [s for s in team["shifts"] if s]
        current = [s for s in shifts if s["starts_at"] <= now_ms < s["ends_at"]]
        later = [s for s in shifts if s["starts_at"] > now_ms]
        team["now"] = current[0]["person"] if current else None
        team["now_until"] = current[0]["ends_at"] if current else None
        team["next"] = later[0] if later else None
        team["holes"] = holes(shifts, now_ms, until)
        if not current:
            gaps.append(f"team {team['name']}: nobody is on call now")
        elif team["holes"]:
            gaps.append(f"team {team['name']}: {len(team['holes'])} hole(s) in the rota "
                        "within 7 days")  # fmt: skip
        if not team["channel"]:
            gaps.append(f"team {team['name']}: no Slack channel (pages go to the default one)")
    unowned = [c["name"] for c in components if not c["owners"]]
    if unowned:
        route = f"the default team {default}" if default else "no team (no default team set)"
        gaps.append(f"{len(unowned)} component(s) no team owns, routed to {route}: "
                    + ", ".join(unowned))  # fmt: skip
    return {"components": components, "teams": teams, "gaps": gaps, "default_team": default}


def maintenance(graph: TenantGraph, everything: bool) -> dict[str, Any]:
    """The maintenance page: `{windows: [{id, components, teams, starts_at, ends_at, reason,
    by, active, held}], components: [name], teams: [name]}`; windows not over yet (or every
    one with `everything`), newest first; names sorted, for the form's suggestions."""
    names = graph.one("web_names", {"limit": WORLD_LIMIT}) or {"components": [], "teams": []}
    return {
        "windows": quiet_windows.windows(graph, everything, limit=200),
        "components": sorted(names["components"]),
        "teams": sorted(names["teams"]),
    }


def health(store: GraphStore, graph: TenantGraph, schema_ready: bool) -> dict[str, Any]:
    """FalkorDB, workers and queue for this tenant.

    Shape: `{database: {up, ping_ms, schema_ready}, workers: [{owner, alive, tasks: [{task_id,
    kind, epoch, attempts, lease_until, lease_left_ms, incident_id}]}], queue: [{kind, status,
    tasks, next_at}], now}` (`queue`: open, claimed, paused and failed tasks; `next_at`, ms,
    the soonest a paused one is due again: an escalation level, a held page). A worker
    appears while it holds a lease (idle workers leave nothing in the graph); `alive` is false
    once all its leases expired (it died or stalled; another worker takes the task over).
    """
    started = time.perf_counter()
    up = store.ping()
    ping_ms = (time.perf_counter() - started) * 1000
    database = {"up": up, "ping_ms": round(ping_ms, 2), "schema_ready": schema_ready}
    if not up:
        return {"database": database, "workers": [], "queue": [], "now": None}
    by_owner: dict[str, dict[str, Any]] = {}
    now = None
    for row in graph.rows("web_workers"):
        now = row.pop("now")
        row["lease_left_ms"] = row["lease_until"] - now
        worker = by_owner.setdefault(row["owner"], {"owner": row["owner"], "tasks": []})
        worker["tasks"].append(row)
    for worker in by_owner.values():
        worker["alive"] = any(t["lease_left_ms"] >= 0 for t in worker["tasks"])
    queue = graph.rows("web_queue")
    return {"database": database, "workers": list(by_owner.values()), "queue": queue, "now": now}


def pretty(value: Any) -> str:
    """A value as indented JSON (for raw tool results and checks on the page)."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


def remediations(
    graph: TenantGraph, incident_id: str, creds: Credentials | None = None, enabled: bool = True
) -> list[dict[str, Any]]:
    """The incident's remediations (`incident_remediations.cypher` rows), each with `what`:
    what it runs, in words (`agents.act.spec.describe`), `record`: for one still proposed,
    the fix's record on earlier incidents as the thread says it (`agents.act.notices.record`),
    else None, and `cannot_run`: why one still proposed could not run with `creds` and
    actions `enabled` (this server's settings: `run.cannot_run`), else None, so the page
    offers no Approve that would fail, nor invites one."""
    rows: list[dict[str, Any]] = graph.rows("incident_remediations", {"incident_id": incident_id})
    for row in rows:
        rem = row["remediation"]
        row["cannot_run"] = cannot_run(rem, creds, enabled) if creds else None
        row["record"] = (
            notices.record(notices.runs(graph, rem), rem["component"])
            if rem.get("status") == "proposed" and rem.get("playbook_id") else None
        )  # fmt: skip
        stored = row["remediation"].get("spec_json")
        try:
            row["what"] = spec.describe(spec.load(stored)) if stored else None
        except ValidationError:
            row["what"] = None
        if row["what"] is None:  # written by another version, or by hand
            row["what"] = f"remediation {row['remediation'].get('type') or 'of unknown type'}"
    return rows
