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

from adapters.notify import OutboundMessage
from adapters.slack import escape_mrkdwn as escape_mrkdwn  # Slack's rule, for every mrkdwn text
from adapters.slack import mention

#: GitHub's issue body limit is 65,536 characters; keep a margin for the marker and the cut note.
TICKET_BODY_LIMIT = 60_000


def fmt_ms(ms: int | None) -> str:
    """An ms-since-epoch time as `YYYY-MM-DD HH:MM:SS UTC`, or `-`."""
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def paged_line(who: dict[str, Any] | None) -> str:
    """Who is paged and why, e.g. `Ada (on call for storefront, owner of ad)`."""
    if not who:
        return "nobody: no team owns these components"
    if not who.get("person"):
        return f"{who['team']} (owner of {who['component']}): nobody is on call now"
    return f"{who['person']} (on call for {who['team']}, owner of {who['component']})"


def verbatim(raw: dict[str, Any]) -> str:
    """An alert's raw fields as indented `name: value` lines, values exactly as received."""
    lines = []
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


def alert_line(alert: dict[str, Any]) -> str:
    """One alert in short, raw: `title on component (status, since time): summary`."""
    summary = json.loads(alert["annotations_json"]).get("summary", "")
    line = (
        f"{alert['title']} on {alert['component'] or 'unknown'}"
        f" ({alert['status']}, since {fmt_ms(alert['starts_at_ms'])})"
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
        candidates = ", ".join(incident.get("candidates") or []) or "none"
        lines.append(f"Root cause: inconclusive (candidates: {escape_mrkdwn(candidates)})")
    lines.append(escape_mrkdwn(incident.get("summary") or ""))
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
        opened_at=since(incident),
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
) -> OutboundMessage:
    """The ticket: cause, path, ruled-out candidates, who was paged, and each alert verbatim."""
    cause = incident.get("root_cause")
    symptom = alerts[0]["title"] if alerts else incident["title"]
    title = f"[{incident['severity']}] {cause or 'inconclusive'}: {symptom}"
    parts = [
        f"## Incident {incident['id']} ({incident['status']})",
        f"**Root cause:** {cause or 'inconclusive'}"
        + (f" (confidence {incident['confidence']:.2f})" if cause else ""),
        "",
        incident.get("summary") or "",
        "",
        "### Graph path",
        *[f"- {' → '.join(p)}" for p in json.loads(incident.get("paths_json") or "[]")],
        "",
        "### Candidates ruled out",
        *[f"- {k}: {v}" for k, v in json.loads(incident.get("ruled_out_json") or "{}").items()],
        "",
        f"### Paged\n{paged_line(who)}",
        "",
        "### Raw evidence",
    ]
    evidence = []
    body = "\n".join(parts)
    for index, alert in enumerate(alerts):
        raw = {
            "labels": json.loads(alert["labels_json"]),
            "annotations": json.loads(alert["annotations_json"]),
            "values": json.loads(alert.get("values_json") or "null"),
            "startsAt": alert["starts_at"],
            "status": alert["status"],
            "generatorURL": alert["generator_url"],
        }
        evidence.append(raw)
        block = "\n" + code_block(verbatim(raw))
        if len(body) + len(block) > TICKET_BODY_LIMIT:
            body += f"\n\n_(evidence cut: {len(alerts) - index} more alerts left out)_"
            break
        body += block
    return OutboundMessage(
        intent_id=intent_id,
        incident_id=incident["id"],
        kind="ticket",
        title=title,
        text=body,
        severity=incident["severity"],
        root_cause=cause,
        evidence=evidence,
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
    return OutboundMessage(
        intent_id=intent_id,
        incident_id=incident["id"],
        kind="followup",
        title=incident["title"],
        text=text,
        severity=incident["severity"],
        reply_to=reply_to,
        opened_at=since(incident),
    )


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
    return OutboundMessage(
        intent_id=intent_id,
        incident_id=incident["id"],
        kind="followup",
        title=incident["title"],
        text=text,
        severity=incident["severity"],
        root_cause=incident["root_cause"],
        reply_to=reply_to,
        opened_at=since(incident),
    )


def ticket_resolved(
    intent_id: str, incident: dict[str, Any], alerts: list[dict[str, Any]], reply_to: str | None
) -> OutboundMessage:
    """The closing comment of a ticket: resolution time and the alerts that cleared."""
    lines = [f"Resolved at {fmt_ms(incident['resolved_at'])}. Alerts that cleared:"]
    lines += [f"- {a['title']} on {a['component'] or 'unknown'} at {fmt_ms(a['ends_at_ms'])}"
              for a in alerts]  # fmt: skip
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
