"""Incidents as text for a terminal (`blast-radius incidents` and `blast-radius incident ID`):
the same data as `GET /api/v1/incidents[/{id}]` (`gateway/http/status.py`), without curl."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from adapters.notices import SET_ASIDE, in_words, tenant_prefix
from adapters.outbox import Outbox
from agents.act import notices, spec
from agents.investigate.similar import (
    CAUSE_WEIGHT,
    IMPACT_WEIGHT,
    SIMILAR_SHOWN,
    TEXT_WEIGHT,
    cited,
    said_by,
)
from agents.respond import messages
from agents.triage import heartbeat
from agents.triage.triage import component_candidates
from gateway.http.status import ALERT_GROUPS, playbook_outcome
from gateway.web.overview import cause as listed_cause
from gateway.web.timeline import paged_words

#: Alerts `blast-radius incident` lists by default (firing first), and the (component,
#: alertname) pairs it counts before them when there are more.
LISTED_ALERTS = 10
LISTED_GROUPS = 10


def when(ms: int | None) -> str:
    """`2026-12-01 03:04 UTC` for ms since the epoch (UTC); `-` for none."""
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")


def incident_table(
    rows: list[dict[str, Any]],
    routes: dict[str, dict[str, Any]] | None = None,
    organisation: str | None = None,
) -> str:
    """One line per incident (rows of `list_incidents`): id, status, severity, opened, firing
    of all alerts, root cause (a verdict's first, as the web list says it: `corrected to x`,
    `x (confirmed)`; else the finding's, `x (low confidence 0.45)` for a lead, `inconclusive`
    when it names none, `-` before there is a finding; a heartbeat's silence, which has no
    cause and no alerts, `the Watchdog heartbeat stopped arriving` and `-` firing; Grafana's
    contact-point test, `contact_point_test`, `none: a test notification, nothing is broken`),
    on call
    (`on_call` below, with the route its page went to from `routes`, by incident id), title
    (naming the tenant first, `[acme] …`, when `organisation` is given: several are served,
    as every page and ticket says it); newest first, as given."""
    routes = routes or {}
    if not rows:
        return "no incidents"
    head = ("ID", "STATUS", "SEVERITY", "OPENED", "FIRING", "ROOT CAUSE", "ON CALL", "TITLE")
    lines = [head] + [
        (
            str(r["id"]), str(r["status"]), str(r["severity"]), when(r["opened_at"]),
            "-" if r.get("heartbeat") else f"{int(r['firing'])}/{int(r['alerts'])}",
            listed_cause(r)["text"] if r.get("heartbeat") or r.get("contact_point_test")
            else judged(r["root_cause"], r.get("verdict"))
            or _listed(r["root_cause"], r.get("confidence"), bool(r.get("investigated"))),
            on_call(r, route=routes.get(str(r["id"]))),
            tenant_prefix(organisation) + str(r["title"]),
        )
        for r in rows
    ]  # fmt: skip
    widths = [max(len(line[i]) for line in lines) for i in range(len(head) - 1)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=False))
        + "  " + line[-1]
        for line in lines
    )  # fmt: skip


def on_call(
    row: dict[str, Any], now_ms: int | None = None, route: dict[str, Any] | None = None
) -> str:
    """The on-call state of a `list_incidents` row in a word or two, open or resolved (who
    was paged stays visible once it is over): `ack <person>` when someone acknowledged; else
    `paged <who>` for one paged (`route`, where its page went, `{person, team, channel}`: the
    person, else the channel nobody on call was paged in; `paged` alone without one), with
    ` (outbox only)` when the page was delivered to the local outbox file alone
    (`delivered_to`: no messenger took it, nobody was messaged), or `nobody paged` for one
    whose page reached no one (no team on call, no channel: `nobody_paged`); then `esc <n>`
    (escalation level reached while nobody acknowledged) and `quiet` (a maintenance window
    holds the page of an open incident until `maintenance_until`, ms since the epoch, later
    than `now_ms`; default: now; a resolved incident has no page to hold); `, `-joined, `-`
    for none of these."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    said = []
    if row.get("acknowledged_by"):
        said.append(f"ack {row['acknowledged_by']}")
    elif row.get("nobody_paged"):
        said.append("nobody paged")
    elif row.get("paged"):
        who = (route or {}).get("person") or (route or {}).get("channel")
        said.append((f"paged {who}" if who else "paged") + _outbox_only(row.get("delivered_to")))
    if row.get("escalation_level"):
        said.append(f"esc {int(row['escalation_level'])}")
    # a window that ended holds nothing, nor one over a resolved incident
    if (row.get("maintenance_until") or 0) > now and row.get("status") != "resolved":
        said.append("quiet")
    return ", ".join(said) or "-"


def _outbox_only(delivered_to: str | None) -> str:
    """` (outbox only)` when a page was last delivered to the local outbox file (no Slack: the
    outbox is the notifier, or every channel refused it), else nothing: "paged" alone reads as
    someone messaged."""
    return " (outbox only)" if delivered_to == Outbox.name else ""


def judged(root_cause: str | None, verdict: dict[str, Any] | None) -> str | None:
    """What an engineer's latest verdict (`{verdict, actual_cause, by}`, confirmed or rejected)
    makes of the cause, in the web list's words (`gateway.web.overview.cause`: a verdict
    outranks the finding): `corrected to x`, `x marked wrong`, `x (confirmed)`; None without
    one."""
    if not verdict or verdict.get("verdict") not in ("confirmed", "rejected"):
        return None
    said = listed_cause({
        "verdict": [verdict["verdict"], verdict.get("actual_cause")], "root_cause": root_cause,
        "investigated": True, "candidates": [], "status": "open",
    })  # fmt: skip
    return said["text"] if said["state"] in ("corrected", "confirmed") else None


def _route(route: dict[str, Any], nobody: bool = False) -> str:
    """`Ed Example (catalog, #catalog-oncall)`: a route's person, team and channel, as the web
    page says it (`paged_words`: `nobody on call (catalog, #catalog-oncall)`, or, when the page
    reached no one (`nobody`), `nobody paged (<why>)`)."""
    words = paged_words(route, nobody) or {"who": "nobody paged", "where": ""}
    return f"{words['who']}{words['where']}"


def _outbox_note(found: dict[str, Any], nobody: bool) -> str:
    """`, outbox only (…)` after whom the page of `found` (`incident_detail`) names, when its
    latest delivery went to the local outbox file alone (as `list_incidents.cypher`'s
    `delivered_to` and the web page's "Delivered ✓ to outbox" say); nothing when it reached no
    one (`nobody`: "nobody paged" says so already)."""
    done = [d for d in found.get("deliveries") or [] if d["outcome"] == "delivered"]
    if nobody or not done or not _outbox_only(done[-1]["channel"]):
        return ""
    return ", outbox only (the page is in the local outbox file: no one was messaged)"


def _listed(root_cause: str | None, confidence: float | None, investigated: bool) -> str:
    """The finding's cause in the incident list, in the web list's words for a named one
    (`gateway.web.overview.cause`: `x`, or `x (low confidence 0.45)` for a lead); else
    `inconclusive`, or `-` before a finding."""
    if root_cause is None:
        return "inconclusive" if investigated else "-"
    return listed_cause({
        "root_cause": root_cause, "confidence": confidence, "investigated": True,
        "candidates": [], "status": "open",
    })["text"]  # fmt: skip


def _cause(root_cause: str | None, finding: dict[str, Any]) -> str:
    """The root cause, `inconclusive` when the finding names none, `under investigation`
    before there is a finding (as the page says)."""
    if root_cause:
        return root_cause
    return "inconclusive" if finding else "under investigation"


def unknown_component(alert: dict[str, Any]) -> str:
    """An alert matched to no component: what its labels call it (`billing (unknown
    component)`), so the name missing from the world shows."""
    names = component_candidates(alert.get("labels") or {})
    return f"{names[0]} (unknown component)" if names else "(unknown component)"


def incident_report(
    found: dict[str, Any],
    paged: dict[str, Any] | None = None,
    first: dict[str, Any] | None = None,
    remediations: list[dict[str, Any]] | None = None,
) -> str:
    """One incident (`gateway.http.status.incident_detail`) as a few readable sections; `paged`
    (`{person, team, channel}`, as the web page shows it) says who its page went to, or, with
    `first` (the page's own route), whom the new cause paged after it; `remediations`
    (`incident_remediations.cypher` rows) what was proposed, decided, run and verified
    (`_remediation_lines`). A heartbeat's silence says what stopped and what to check, with no
    cause or alerts (`_silence_report`); Grafana's contact-point test says that it is one and
    nothing is broken (`contact_point_test`, `messages.TEST_NOTE`) before its cause."""
    if found.get("heartbeat"):
        return _silence_report(found, paged)
    finding = found["finding"] or {}
    figure = f"confidence {finding['confidence']:.2f}" if finding.get("confidence") else ""
    if messages.lead(found["root_cause"], finding.get("confidence")):
        figure = "low " + figure  # as the list, the page and the web page say it
    said = [v for v in found["verdicts"] if v["verdict"] in ("confirmed", "rejected")]
    verdict = said[-1] if said else None
    judgement = judged(found["root_cause"], verdict)
    if verdict is not None and judgement is not None:  # a verdict outranks the finding
        by = (
            f" by {verdict['by_name'] or verdict['by']}"
            if verdict["by_name"] or verdict["by"]
            else ""
        )
        found_by = _cause(found["root_cause"], finding) + (f", {figure}" if figure else "")
        cause = f"root cause: {judgement}{by} (the finding: {found_by})"
    elif messages.lead(found["root_cause"], finding.get("confidence")):
        cause = (
            f"root cause: {found['root_cause']} ({figure}: a lead to check first, not a conclusion)"
        )
    else:
        cause = f"root cause: {_cause(found['root_cause'], finding)}" + (
            f" ({figure})" if figure else ""
        )
    lines = [
        *_heading(found),
        # Grafana's test, as its page and ticket say first: nothing is broken
        *([messages.TEST_NOTE] if found.get("contact_point_test") else []),
        cause,
    ]
    if not found["root_cause"] and judgement is None and finding.get("candidates"):
        lines.append("check in this order: " + ", ".join(map(str, finding["candidates"])))
    if finding:
        lines.append(f"finding: {finding['summary']}")
    lines += _memory_lines(found, finding)
    if paged:
        nobody = bool(found.get("nobody_paged"))
        line = f"paged: {_route(paged, nobody)}"
        # a second route only when the new cause paged someone else: the page's own edit
        # (its diagnosis) names the same person, and is one page, not two
        if first and _route(first, nobody) != _route(paged, nobody):
            then = _route(paged, nobody)
            line = f"paged: {_route(first, nobody)}; then, for the new cause: {then}"
        lines.append(line + _outbox_note(found, nobody))
    lines += _remediation_lines(remediations or [])
    lines += _taken(found)
    lines += _alert_lines(found)
    return "\n".join(lines + _work(found))


def _remediation_lines(rows: list[dict[str, Any]]) -> list[str]:
    """`remediations:` then, per remediation (newest first), what it runs
    (`agents.act.spec.describe`), its playbook and status (with the row's
    `cannot_run_when_proposed`: why the server could not run a proposal when it proposed it,
    as it recorded then; this process does not know the server's settings), and under it who
    decided, each attempt and the verification, as the incident's web page says them."""
    if not rows:
        return []
    lines = ["remediations:"]
    for row in rows:
        rem = row["remediation"]
        try:
            what = spec.describe(spec.load(rem["spec_json"])) if rem.get("spec_json") else None
        except ValidationError:  # stored by another version
            what = None
        what = what or f"remediation {rem.get('type') or 'of unknown type'}"
        status = rem.get("status")
        if row.get("cannot_run_when_proposed"):  # the server's record (`run.recorded_cannot_run`)
            status = (f"{status}, but when it was proposed the server could not run it: "
                      f"{row['cannot_run_when_proposed']} (the incident's web page says whether "
                      "it can now)")  # fmt: skip
        lines.append(f"  {what} (playbook {rem.get('playbook_id')}): {status}")
        for verb, decision in (("approved", row["approval"]), ("rejected", row["rejection"])):
            if decision:
                lines.append(f"    {verb} by {decision['by']} via {decision['source']} at "
                             f"{when(decision['at'])}")  # fmt: skip
        for attempt in row["attempts"] or []:
            ref = f" ({attempt['external_ref']})" if attempt.get("external_ref") else ""
            lines.append(f"    attempt {attempt['n']} at {when(attempt['at'])}: "
                         f"{attempt['outcome']}{ref}")  # fmt: skip
        if row["verification"]:
            check = row["verification"]
            said = notices.OUTCOMES.get(check["outcome"], check["outcome"])
            lines.append(f"    {said} at {when(check['at'])}: {check['detail']}")
    return lines


def _heading(found: dict[str, Any]) -> list[str]:
    """An incident's first two lines: its id and title, then its status, severity and times."""
    return [
        f"{found['id']}  {found['title']}",
        f"status {found['status']}, severity {found['severity']}, opened {when(found['opened_at'])}"
        + (f", resolved {when(found['resolved_at'])}" if found["resolved_at"] else ""),
    ]


def _taken(found: dict[str, Any]) -> list[str]:
    """Who acknowledged the incident and who resolved it, a line each."""
    lines = []
    if found.get("acknowledged_at"):
        lines.append(
            f"acknowledged by {found['acknowledged_by']} at {when(found['acknowledged_at'])}"
        )
    if found.get("resolved_by"):
        lines.append(f"resolved by {found['resolved_by']}")
    return lines


def _silence_report(found: dict[str, Any], paged: dict[str, Any] | None) -> str:
    """`incident_report` of a heartbeat's silence: what stopped and since when, what to
    check (the finding's summary), who was paged, and what was done; no cause or alerts."""
    beat = found["heartbeat"]
    seen = when(beat["last_seen"]) if beat.get("last_seen") else None
    lines = [
        *_heading(found),
        heartbeat.stopped(str(beat["alertname"]), seen),
    ]
    if found["finding"]:
        lines.append(str(found["finding"]["summary"]))
    if paged:
        nobody = bool(found.get("nobody_paged"))
        lines.append(f"paged: {_route(paged, nobody)}{_outbox_note(found, nobody)}")
    return "\n".join(lines + _taken(found) + _work(found))


#: A verdict's words shown at most, as on the page (`--json` and the API have them whole).
SHOWN = messages.VERDICT_TEXT_SHOWN


def _work(found: dict[str, Any]) -> list[str]:
    """The incident's actions, deliveries, verdicts and failed work, a section each."""
    lines: list[str] = []
    if found["actions"]:
        lines.append("\nactions:")
        lines += [
            f"  {a['kind']:<12} {a['status']:<8} {a['external_ref'] or '-'}"
            for a in found["actions"]
        ]
    if found.get("deliveries"):
        lines.append("\ndeliveries:")
        lines += [
            f"  {d['outcome']:<9} {d['channel']}"
            + (f" ({d['reason']})" if d["reason"] else "")
            + (f", after {d['fallback_from']} refused" if d["fallback_from"] else "")
            + f" at {when(d['at'])}"
            for d in found["deliveries"]
        ]
    if found["verdicts"]:
        lines.append("\nverdicts:")
        lines += [
            f"  {v['verdict']} by {v['by_name'] or v['by']}"
            + (f", actual cause {v['actual_cause']}" if v["actual_cause"] else "")
            # what happened, in their words (`--json` has it whole)
            + (f": “{said}”" if (said := in_words(v.get("text"), SHOWN, v.get("source"))) else "")
            for v in found["verdicts"]
        ]
    failed = [t for t in found["tasks"] if t["status"] == "failed"]
    if failed:
        lines.append("\nfailed work:")
        lines += [f"  {t['kind']}: {t['last_error']}" for t in failed]
    return lines


#: What a similar incident's score is (`agents.investigate.similar.rank`), for the CLI.
SCORE_WORDS = (
    f"score 0-1: alike words {TEXT_WEIGHT}, shared components {IMPACT_WEIGHT}, a cause people "
    f"established that these alerts reach {CAUSE_WEIGHT}"
)


def _values(values: dict[str, Any]) -> str:
    """Grafana's `values` of an alert, `A=2.7, C=1` (the query results its rule compared)."""
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in sorted(values.items()))  # fmt: skip


#: After an alert's start when its `startsAt` as sent was far ahead of the gateway's clock
#: (`gateway.http.payloads.sent_ahead`): the start shown is when it arrived.
AHEAD = " (when it arrived: its startsAt was over 5 min ahead of this gateway's clock)"


def _alert_lines(found: dict[str, Any]) -> list[str]:
    """The incident's alerts: each one listed (`found["alerts"]`, firing first) when that is
    all of them; else first their counts by component and alertname (`alert_groups`, at most
    `LISTED_GROUPS` lines), then those listed and how many more there are."""
    alerts, total = found["alerts"], found["alerts_total"]
    listed = [
        f"  {a['status']:<8} {a['alertname'] or '-'} on {a['component'] or unknown_component(a)}"
        f", since {when(a['starts_at_ms'])}{AHEAD if a.get('starts_at_ahead') else ''}"
        + (f", values {_values(a['values'])}" if isinstance(a.get("values"), dict) and a["values"]
           else "")
        for a in alerts
    ]  # fmt: skip
    if len(alerts) >= total:
        return [f"\nalerts ({total}):", *listed]
    firing = found["alerts_firing"]
    lines = [f"\nalerts ({total:,}, {firing:,} firing), by component and alertname:"]
    groups = found["alert_groups"]
    width = len(f"{groups[0]['alerts']:,}") if groups else 1
    lines += [
        f"  {g['alerts']:>{width},}  {g['component'] or '(no component)'}  {g['alertname'] or '-'}"
        + (f" ({g['firing']:,} firing)" if g["firing"] != g["alerts"] else "")
        for g in groups[:LISTED_GROUPS]
    ]
    if len(groups) > LISTED_GROUPS:
        more = " or more" if len(groups) >= ALERT_GROUPS else ""  # the API lists no more
        lines.append(f"  … and {len(groups) - LISTED_GROUPS}{more} other pairs")
    if alerts:
        lines.append(f"the first {len(alerts)}, firing first:")
        lines += listed
    lines.append(f"… and {total - len(alerts):,} more: --alerts N lists more (at most 5,000), "
                 "the web page pages through them all")  # fmt: skip
    return lines


def _memory_lines(found: dict[str, Any], finding: dict[str, Any]) -> list[str]:
    """What the web page shows beside the finding, as text: each candidate set aside and why,
    the similar earlier incidents (at most 3: id, cause, who confirmed it or corrected the
    finding to it, score, with what the score is, and why this finding ruled its cause out
    when it did: the page then does not cite it) and the playbooks the decision considered
    (applied or not, steered or not, trust at use)."""
    lines = []
    ruled = finding.get("ruled_out") or []
    if ruled:
        lines.append(f"{SET_ASIDE}:")  # as the web page and the ticket say it
        lines += [f"  {r['component']}: {r['reason']}" for r in ruled]
    similar = found.get("similar") or []
    if similar:
        # the one the page names (`similar.cited`: 0.30 or more, or the cause people
        # established), never one whose cause this finding ruled out
        named = cited([s for s in similar if not s.get("ruled_out")], found.get("root_cause"))
        lines.append(f"similar earlier incidents ({SCORE_WORDS}):")
        lines += [
            # no cause: none established, or one outside the graph (`said_by` quotes it)
            f"  {s['id']}  cause {s['root_cause'] or 'none named'}"
            + (f", {said_by(s)}" if s.get("confirmed_by") else "")
            + f" (score {s['score']:.2f}"
            # under the page's line and not the cause people established: context only
            + (", weak: no page cites it" if s["score"] < SIMILAR_SHOWN and s is not named
               else "")
            + ")"
            # the page does not point where the rules said not to look (`similar.cited`)
            + (f", ruled out this time: {s['ruled_out']}" if s.get("ruled_out") else "")
            for s in similar[:3]
        ]  # fmt: skip
    memory = found.get("memory") or []
    if memory:
        lines.append("playbooks considered:")
        lines += [
            f"  {m['playbook']} on {m['candidate']}: {playbook_outcome(m)}; "
            f"trust {float(m['trust_at_use'] or 0):.2f} at use"
            + (f", verdict {m['verdict']}" if m.get("verdict") else "")
            for m in memory
        ]
    return lines
