"""What the responder says: notification, ticket and follow-up texts built from the graph.

Alert text is data, never markup: every value that came from an alert is escaped for Slack
mrkdwn (`&`, `<`, `>`; so nothing can become `<!channel>`, a mention or a link) or put in a
Markdown code block for tickets. Bodies are serialised by the adapters (JSON), never templated.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from adapters.notify import Button, OutboundMessage
from adapters.slack.notifier import (
    escape_mrkdwn as escape_mrkdwn,
)  # Slack's rule, for every mrkdwn text
from adapters.slack.notifier import mention
from agents.investigate.checks import CHANGE_LOOKBACK_MS
from agents.triage.triage import component_candidates

#: GitHub's issue body limit is 65,536 characters; keep a margin for the marker and the cut note.
TICKET_BODY_LIMIT = 60_000


def fmt_ms(ms: int | None) -> str:
    """An ms-since-epoch time as `YYYY-MM-DD HH:MM:SS UTC`, or `-`."""
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def paged_line(who: dict[str, Any] | None) -> str:
    """Who is paged and why (a route of `agents.respond.routing.route`), e.g. `Ada (on call for
    storefront, owner of ad)`, or `Hal (on call for platform, the default team: no team owns
    node-1)`. Never just "nobody": with no one on call anywhere it says loudly which fallback
    (channel, escalation) it used and why."""
    if not who:  # a page built before routing ran (or by an older worker): say what is missing
        return "NO ONE ON CALL: no route was found; fallback: the default channel"
    if who.get("route", "owner") == "owner" and who.get("person"):
        return f"{who['person']} (on call for {who['team']}, owner of {who['component']})"
    reason = who.get("reason") or "no owner"
    if who.get("person"):
        return f"{who['person']} (on call for {who['team']}, the default team: {reason})"
    where = [f"channel {who['channel']}" if who.get("channel") else "the default channel"]
    if who.get("escalation"):
        where.append(f"escalation {who['escalation']}")
    return f"NO ONE ON CALL ({reason}); fallback: {', '.join(where)}"


def verbatim(raw: dict[str, Any]) -> str:
    """An alert's raw fields as indented `name: value` lines, values exactly as received."""
    lines = [f"fingerprint: {raw['fingerprint']}"] if raw.get("fingerprint") else []
    for section in ("labels", "annotations"):
        lines.append(f"{section}:")
        for name, value in sorted(raw[section].items()):
            text = str(value).replace("\n", "\n    ")
            lines.append(f"  {name}: {text}")
    if raw.get("values") is not None:
        lines.append(f"values: {json.dumps(raw['values'], sort_keys=True)}")
    lines += [f"startsAt: {raw['startsAt']}", f"status: {raw['status']}",
              f"generatorURL: {raw['generatorURL']}"]  # fmt: skip
    return "\n".join(lines)


def code_block(text: str) -> str:
    """A Markdown fenced code block whose fence is longer than any backtick run in `text`."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def since(incident: dict[str, Any]) -> int:
    """The earliest a message about the incident can have been sent (ms UTC): the earlier of
    its opening (alert time) and its arrival (our clock)."""
    opened = int(incident["opened_at"])
    return min(opened, int(incident.get("received_at") or opened))


def _unknown(alert: dict[str, Any]) -> str:
    """An alert matched to no component: the name its labels give (`billing (unknown
    component)`), so the name missing from the world shows."""
    names = component_candidates(json.loads(alert.get("labels_json") or "{}"))
    return f"{names[0]} (unknown component)" if names else "unknown component"


def alert_line(alert: dict[str, Any]) -> str:
    """One alert in short, raw: `title on component (status, since time; joined via a → b):
    summary`; `joined via` names the dependency path that joined it to the incident."""
    summary = json.loads(alert["annotations_json"]).get("summary", "")
    via = f"; joined via {alert['via']}" if alert.get("via") else ""
    line = (
        f"{alert['title']} on {alert['component'] or _unknown(alert)}"
        f" ({alert['status']}, since {fmt_ms(alert['starts_at_ms'])}{via})"
    )
    return f"{line}: {summary}" if summary else line


def status_lines(incident: dict[str, Any], verdicts: list[dict[str, Any]]) -> list[str]:
    """What happened to a page since it went out, as mrkdwn lines: the incident's resolution and
    each verdict (`Cause confirmed by <@U…> at …`). Only a well-formed Slack user id becomes a
    mention; anything else is escaped text."""
    lines = []
    if incident["status"] == "resolved":
        lines.append(f"Resolved at {fmt_ms(incident['resolved_at'])}.")
    what = {"confirmed": "Cause confirmed", "rejected": "Cause rejected",
            "resolved": "Marked resolved"}  # fmt: skip
    for v in verdicts:
        who = mention(v["by"]) or escape_mrkdwn(v.get("by_name") or v["by"] or "someone")
        line = (
            f"{what.get(v['verdict'], escape_mrkdwn(v['verdict']))} by {who} at {fmt_ms(v['at'])}"
        )
        if v["verdict"] == "rejected" and v.get("actual_cause"):
            line += f"; actual cause: *{escape_mrkdwn(v['actual_cause'])}*"
        lines.append(line + ".")
    return lines


def similar_line(incident: dict[str, Any]) -> str:
    """One line naming the most similar earlier incident (`similar_json` of the incident row),
    or "" when memory found none: "Similar: inc-1 3 days before, cause ledger-db, confirmed by
    Priya Raman, fixed by …" (days before this incident opened)."""
    found = json.loads(incident.get("similar_json") or "[]")
    if not found:
        return ""
    best = found[0]
    days = max(0, (int(incident.get("opened_at") or 0) - int(best["at"] or 0)) // 86_400_000)
    when = "the same day" if days == 0 else f"{days} day{'s' if days > 1 else ''} before"
    line = f"Similar: {best['id']} {when}"
    if best.get("root_cause"):
        line += f", cause {best['root_cause']}"
    if best.get("confirmed_by"):
        line += f", confirmed by {best['confirmed_by']}"
    if best.get("fixed_by"):
        line += f", fixed by {best['fixed_by']}"
    return f"{line} (score {best['score']:.2f})"


def notification(
    intent_id: str,
    incident: dict[str, Any],
    alerts: list[dict[str, Any]],
    who: dict[str, Any] | None,
    changes: list[dict[str, Any]] | None = None,
    verdicts: list[dict[str, Any]] | None = None,
    ticket_link: str | None = None,
) -> OutboundMessage:
    """The page for an incident: severity, title, cause and confidence, path, evidence (alerts
    and the recent `changes` the finding cites), who is paged and why, the ticket link, and
    what happened since (resolution, `verdicts`). The same fields come structured (raw) for
    Slack's blocks; `text` is the mrkdwn fallback."""
    cause = incident.get("root_cause")
    paths = json.loads(incident.get("paths_json") or "[]")
    lines = [
        f"*[{escape_mrkdwn(incident['severity'].upper())}] {escape_mrkdwn(incident['title'])}*"
        f" (incident {incident['id']}, {incident['status']})",
    ]
    if cause:
        lines.append(
            f"Root cause: *{escape_mrkdwn(cause)}* (confidence {incident['confidence']:.2f})"
        )
    else:
        candidates = ", ".join(incident.get("candidates") or [])
        lines.append(
            f"Root cause: inconclusive; check in this order: {escape_mrkdwn(candidates)}"
            if candidates
            else "Root cause: inconclusive; no known component to check first"
        )
    lines.append(escape_mrkdwn(incident.get("summary") or ""))
    if similar := similar_line(incident):
        lines.append(escape_mrkdwn(similar))
    for path in paths[:5]:
        lines.append("Path: " + escape_mrkdwn(" → ".join(path)))
    lines.append("Evidence:")
    for alert in alerts[:10]:
        lines.append("• " + escape_mrkdwn(alert_line(alert)))
    if len(alerts) > 10:
        lines.append(f"• … and {len(alerts) - 10} more alerts")
    change_lines = [
        f"{c['kind']} {c['ref']} on {c['component']} at {fmt_ms(c['at'])}" for c in changes or []
    ]
    lines += ["• change: " + escape_mrkdwn(c) for c in change_lines]
    lines.append("Paged: " + escape_mrkdwn(paged_line(who)))
    if ticket_link:
        lines.append("Ticket: " + escape_mrkdwn(ticket_link))
    status = status_lines(incident, verdicts or [])
    lines += status
    return OutboundMessage(
        intent_id=intent_id,
        incident_id=incident["id"],
        kind="notification",
        title=incident["title"],
        text="\n".join(lines),
        severity=incident["severity"],
        channel=(who or {}).get("channel"),
        mention=(who or {}).get("slack_user_id") or (who or {}).get("person"),
        root_cause=cause,
        opened_at_ms=since(incident),
        confidence=incident.get("confidence") if cause else None,
        candidates=incident.get("candidates") or [],
        summary=incident.get("summary"),
        paths=paths[:5],
        alert_lines=[alert_line(a) for a in alerts[:10]]
        + ([f"… and {len(alerts) - 10} more alerts"] if len(alerts) > 10 else []),
        change_lines=change_lines,
        paged=paged_line(who),
        person=(who or {}).get("person"),
        email=(who or {}).get("email"),
        slack_user_id=(who or {}).get("slack_user_id"),
        ticket_ref=ticket_link,
        status_lines=status,
    )


def inline_code(text: str) -> str:
    """A Markdown code span for untrusted text: no markup, link or @mention can form in it.

    Newlines become spaces; the fence is longer than any backtick run inside (CommonMark).
    """
    flat = " ".join(str(text).split("\n"))
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def ticket_link(ref: str) -> str:
    """How a ticket body names another ticket: `owner/repo#12` for a GitHub issue ref
    (`github:owner/repo#12`; GitHub links it), else the ref as a code span."""
    if ref.startswith("github:") and "#" in ref:
        return ref.removeprefix("github:").split("/comments/")[0]
    return inline_code(ref)


def _names(items: list[str], shown: int) -> str:
    """`a, b, c +2 more` for a list of names."""
    head = ", ".join(items[:shown])
    return head + (f" +{len(items) - shown} more" if len(items) > shown else "")


def ticket_title(incident: dict[str, Any], alerts: list[dict[str, Any]]) -> str:
    """The issue title: severity, the symptom (alert names and where), and the root cause,
    e.g. `[critical] ServiceHighErrorRate on payment, checkout, frontend +1 more — root cause:
    payment`, or `… — root cause unclear: load-generator or frontend-web`."""
    names = list(dict.fromkeys(a["title"] for a in alerts)) or [incident["title"]]
    where = list(dict.fromkeys(a["component"] for a in alerts if a["component"]))
    symptom = _names(names, 2) + (f" on {_names(where, 3)}" if where else "")
    cause = incident.get("root_cause")
    if cause:
        why = f"root cause: {cause}"
    elif incident.get("candidates"):
        why = "root cause unclear: " + " or ".join(incident["candidates"][:3])
    else:
        why = "root cause unknown"
    return f"[{incident['severity']}] {symptom} — {why}"


def steps_section(steps: list[dict[str, Any]], limit: int = 60) -> list[str]:
    """The investigator's checkpointed steps (`respond_context.cypher`'s `steps`) as Markdown
    lines, one numbered list per task: tool, arguments (cut at 200 characters), result size."""
    lines: list[str] = []
    task = None
    for shown, step in enumerate(steps):
        if shown == limit:
            lines.append(f"- … and {len(steps) - limit} more steps")
            break
        if step["task_id"] != task:
            task = step["task_id"]
            lines += ["", f"**{step['kind']}** (task {inline_code(task)}):"]
        args = step["args"] or ""
        args = args if len(args) <= 200 else args[:199] + "…"
        lines.append(
            f"{step['n']}. {inline_code(step['tool'])} {inline_code(args)} → "
            f"{_step_result(step['result'])}"
        )
    return lines or ["- none recorded"]


def _capped(lines: list[str], limit: int, what: str) -> list[str]:
    if len(lines) <= limit:
        return lines
    return [*lines[:limit], f"- … and {len(lines) - limit} more {what}"]


def _step_result(result: str | None) -> str:
    """A short account of a stored step result (JSON): `3 rows`, `2 fields`, or the value."""
    try:
        value = json.loads(result or "null")
    except json.JSONDecodeError:
        return "unreadable result"
    if isinstance(value, list):
        return f"{len(value)} row{'' if len(value) == 1 else 's'}"
    if isinstance(value, dict):
        return f"{len(value)} field{'' if len(value) == 1 else 's'}"
    return "no result" if value is None else inline_code(json.dumps(value)[:80])


def evidence_section(raws: list[dict[str, Any]], budget: int, incident_id: str) -> str:
    """Each alert's raw fields (`verbatim`) in its own code block, within `budget` characters.

    When they do not fit, the last alert that fits in part is cut inside its block, later ones
    are left out, and a closing line says how many alerts and characters were left out.
    """
    texts = [verbatim(raw) for raw in raws]
    total = sum(len(t) for t in texts)
    note_room = 400
    out: list[str] = []
    used = shown = 0
    for index, text in enumerate(texts):
        block = "\n" + code_block(text)
        last = index == len(texts) - 1  # the last block needs no room for the note
        if used + len(block) <= budget - (0 if last else note_room):
            out.append(block)
            used += len(block)
            shown += len(text)
            continue
        room = budget - note_room - used
        head = text[: max(0, room - 40)]
        while head and len(block := "\n" + code_block(head + "\n…")) > room:
            head = head[: len(head) - (len(block) - room)]
        partial = 0
        if len(head) >= 200:
            out.append(block)
            shown += len(head)
            partial = 1
        left_alerts = len(texts) - index - partial
        parts = []
        if partial:
            parts.append(f"alert {index + 1} shown in part")
        if left_alerts:
            parts.append(f"{left_alerts} of {len(texts)} alerts not shown")
        out.append(
            f"\n\n_(evidence cut to stay under GitHub's 65,536-character limit: "
            f"{total - shown:,} of {total:,} characters left out; {', '.join(parts)}. "
            f"Every alert is in full at `GET /api/v1/incidents/{incident_id}`.)_"
        )
        break
    return "".join(out)


def page_update(
    intent_id: str,
    page_ref: str,
    incident: dict[str, Any],
    alerts: list[dict[str, Any]],
    who: dict[str, Any] | None,
    changes: list[dict[str, Any]],
    verdicts: list[dict[str, Any]],
    ticket_link: str | None,
) -> OutboundMessage:
    """The page restated with the incident's current state (kind `update`, `reply_to` = the
    page's ref): Slack edits the page in place."""
    page = notification(intent_id, incident, alerts, who, changes, verdicts, ticket_link)
    return page.model_copy(update={"kind": "update", "reply_to": page_ref})


def ticket(
    intent_id: str,
    incident: dict[str, Any],
    alerts: list[dict[str, Any]],
    who: dict[str, Any] | None,
    note: str | None = None,
    changes: list[dict[str, Any]] | None = None,
    steps: list[dict[str, Any]] | None = None,
    previous: dict[str, Any] | None = None,
) -> OutboundMessage:
    """The ticket: what the investigator saw, in Markdown, under `TICKET_BODY_LIMIT` characters.

    Sections: `note` first (e.g. why nobody was paged: a stated preference), incident and
    previous occurrence (`previous`: `respond_context.cypher`'s), root cause and
    confidence, graph paths, recent changes near the cause (`changes`: rows of
    `recent_changes.cypher`), candidates considered and why each was ruled out, the
    investigator's steps (`steps`: `respond_context.cypher`'s), who was paged, and each
    alert's raw fields verbatim in code blocks (cut with a note when too long).
    Untrusted text (alert fields, change refs) only appears in code blocks or code spans.
    """
    cause = incident.get("root_cause")
    candidates = list(incident.get("candidates") or [])
    ruled_out: dict[str, str] = json.loads(incident.get("ruled_out_json") or "{}")
    parts = [
        *([f"> {note}", ""] if note else []),
        f"## Incident {incident['id']}: {incident['status']}, severity {incident['severity']}",
        f"Opened {fmt_ms(incident.get('opened_at'))}"
        + (f", resolved {fmt_ms(incident['resolved_at'])}" if incident.get("resolved_at") else ""),
    ]
    if previous:
        ref = previous.get("ticket_ref")
        where = ticket_link(ref) if ref else f"incident {previous['id']} (no ticket)"
        ended = (
            f"resolved {fmt_ms(previous['resolved_at'])}" if previous.get("resolved_at")
            else previous["status"]
        )  # fmt: skip
        parts.append(
            f"**Previous occurrence:** {where} (incident {previous['id']}, opened "
            f"{fmt_ms(previous['opened_at'])}, {ended})"
        )
    parts += [
        "",
        f"**Root cause:** {cause} (confidence {incident['confidence']:.2f})" if cause
        else "**Root cause:** inconclusive"
        + (f"; check in this order: {', '.join(candidates)}" if candidates else ""),
        "",
        incident.get("summary") or "",
        "",
        "### Graph path",
        *(_capped([f"- {' → '.join(p)}" for p in json.loads(incident.get("paths_json") or "[]")],
                  10, "paths") or ["- none: no path from an alerting component"]),
        "",
        "### Recent changes near the cause",
        *(_capped([
            f"- {fmt_ms(c['at'])}: {c['kind']} {inline_code(c['ref'] or '')} on {c['component']}"
            + (f" by {inline_code(c['author'])}" if c.get("author") else "")
            for c in changes or []
        ], 20, "changes") or [f"- none in the {CHANGE_LOOKBACK_MS // 3_600_000} h before the "
                              "incident opened"]),
        "",
        "### Candidates considered",
        *(_capped(
            [f"- {name}: {'the root cause' if name == cause else 'not ruled out'}"
             for name in candidates]
            + [f"- {name}: ruled out, {why}" for name, why in ruled_out.items()],
            40, "candidates",
        ) or ["- none" + ("" if cause else ": no alert matched a known component")]),
        "",
        "### Steps the investigator took",
        *steps_section(steps or []),
        "",
        f"### Paged\n{paged_line(who)}",
        "",
        f"### Raw evidence ({len(alerts)} alert{'' if len(alerts) == 1 else 's'})",
    ]  # fmt: skip
    head = "\n".join(parts)
    if len(head) > TICKET_BODY_LIMIT // 3:
        head = head[: TICKET_BODY_LIMIT // 3] + "\n\n_(summary cut)_\n"
    evidence = [
        {
            "fingerprint": alert["fingerprint"],
            "labels": json.loads(alert["labels_json"]),
            "annotations": json.loads(alert["annotations_json"]),
            "values": json.loads(alert.get("values_json") or "null"),
            "startsAt": alert["starts_at"],
            "status": alert["status"],
            "generatorURL": alert["generator_url"],
        }
        for alert in alerts
    ]
    body = head + evidence_section(evidence, TICKET_BODY_LIMIT - len(head), incident["id"])
    labels = [f"severity:{incident['severity']}"]
    labels += [f"component:{name}" for name in ([cause] if cause else candidates[:3])]
    return OutboundMessage(
        intent_id=intent_id,
        incident_id=incident["id"],
        kind="ticket",
        title=ticket_title(incident, alerts),
        text=body,
        severity=incident["severity"],
        root_cause=cause,
        evidence=evidence,
        labels=labels,
        opened_at_ms=incident.get("opened_at"),
    )


def followup(
    intent_id: str, incident: dict[str, Any], text: str, reply_to: str | None, **extra: Any
) -> OutboundMessage:
    """A message in the page's thread (`reply_to` = the page's ref); `extra` sets other fields
    of `OutboundMessage` (e.g. `buttons`, `root_cause`)."""
    return OutboundMessage(
        intent_id=intent_id,
        incident_id=incident["id"],
        kind="followup",
        title=incident["title"],
        text=text,
        severity=incident["severity"],
        reply_to=reply_to,
        opened_at_ms=since(incident),
        **extra,
    )


def cleared(
    intent_id: str, incident: dict[str, Any], alert: dict[str, Any], reply_to: str | None
) -> OutboundMessage:
    """The follow-up when one alert clears (and, when it was the last, the incident resolves)."""
    text = (
        f"Cleared: {escape_mrkdwn(alert['title'])} on "
        f"{escape_mrkdwn(alert['component'] or 'unknown')} at {fmt_ms(alert['ends_at_ms'])}."
    )
    if incident["status"] == "resolved":
        text += f" Incident {incident['id']} resolved at {fmt_ms(incident['resolved_at'])}."
    return followup(intent_id, incident, text, reply_to)


def diagnosis_update(
    intent_id: str, incident: dict[str, Any], previous: str | None, reply_to: str | None
) -> OutboundMessage:
    """The follow-up when more alerts changed the root cause after the first page."""
    now = (
        incident["root_cause"]
        or "inconclusive (" + ", ".join(incident.get("candidates") or []) + ")"
    )
    text = (
        f"Diagnosis update: root cause is now *{escape_mrkdwn(now)}* "
        f"(was {escape_mrkdwn(previous or 'inconclusive')}). "
        f"{escape_mrkdwn(incident.get('summary') or '')}"
    )
    return followup(intent_id, incident, text, reply_to, root_cause=incident["root_cause"])


def _person(row: dict[str, Any]) -> dict[str, Any]:
    """The fields of a follow-up that name a person (so Slack mentions them, and the outbox
    record names them), from a route or a row of `response_context.cypher`."""
    return {"person": row.get("person"), "email": row.get("email"),
            "slack_user_id": row.get("slack_user_id"), "channel": row.get("channel")}  # fmt: skip


def team_told(
    intent_id: str,
    incident: dict[str, Any],
    team: dict[str, Any],
    who: dict[str, Any],
    reply_to: str | None,
) -> OutboundMessage:
    """Tell the on-call of another alerting team (a row of `agents.respond.routing.told`) about the
    incident in its thread: their components alert, what the cause is and who was paged."""
    cause = incident.get("root_cause") or "inconclusive"
    person = team.get("person") or f"nobody on call for {team['team']}"
    text = (
        f"{escape_mrkdwn(person)} ({escape_mrkdwn(team['team'])}): your components "
        f"{escape_mrkdwn(', '.join(team['components']))} alert in this incident. Root cause: "
        f"*{escape_mrkdwn(cause)}*; paged: {escape_mrkdwn(paged_line(who))}."
    )
    return followup(intent_id, incident, text, reply_to, **_person(team))


def new_cause_page(
    intent_id: str, incident: dict[str, Any], who: dict[str, Any], reply_to: str | None
) -> OutboundMessage:
    """Page the on-call of the new root cause's route in the thread, after a re-investigation
    changed the cause (the first page named someone else)."""
    text = (
        f"Paging for the new root cause *{escape_mrkdwn(incident['root_cause'])}*: "
        f"{escape_mrkdwn(paged_line(who))}."
    )
    return followup(
        intent_id, incident, text, reply_to, root_cause=incident["root_cause"], **_person(who)
    )


def readback(
    intent_id: str,
    incident: dict[str, Any],
    fact: dict[str, Any],
    understood: str,
    reply_to: str | None,
) -> OutboundMessage:
    """Read a stated preference back to its author, with Approve / Discard buttons."""
    who = mention(fact["person"]) or escape_mrkdwn(fact["person_name"] or "")
    text = f"{who} I understood: {escape_mrkdwn(understood)} Save this preference?"
    buttons = [
        Button(action_id="approve_preference", text="Approve", value=fact["id"], style="primary"),
        Button(action_id="discard_preference", text="Discard", value=fact["id"]),
    ]
    return followup(intent_id, incident, text, reply_to, buttons=buttons)


def readback_answer(
    intent_id: str, incident: dict[str, Any], understood: str, saved: bool, reply_to: str | None
) -> OutboundMessage:
    """Confirm in the thread that a preference was saved (approved) or discarded."""
    text = (
        f"Saved: {escape_mrkdwn(understood)} I will follow it from now on."
        if saved
        else f"Discarded: {escape_mrkdwn(understood)} Nothing changes."
    )
    return followup(intent_id, incident, text, reply_to)


def ticket_resolved(
    intent_id: str, incident: dict[str, Any], alerts: list[dict[str, Any]], reply_to: str | None
) -> OutboundMessage:
    """The closing comment of a ticket: resolution time and the alerts that cleared."""
    lines = [f"Resolved at {fmt_ms(incident['resolved_at'])}. Alerts that cleared:"]
    lines += [f"- {inline_code(a['title'])} on {a['component'] or 'unknown'} "
              f"at {fmt_ms(a['ends_at_ms'])}" for a in alerts]  # fmt: skip
    return OutboundMessage(
        intent_id=intent_id,
        incident_id=incident["id"],
        kind="ticket-update",
        title=incident["title"],
        text="\n".join(lines),
        severity=incident["severity"],
        reply_to=reply_to,
        close=True,
    )
