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

#: GitHub's issue body limit is 65,536 characters; keep a margin for the marker and the cut note.
TICKET_BODY_LIMIT = 60_000


def escape_mrkdwn(text: str) -> str:
    """Escape text for Slack mrkdwn: `&` -> `&amp;`, `<` -> `&lt;`, `>` -> `&gt;` (Slack's rule)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


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


def notification(
    intent_id: str,
    incident: dict[str, Any],
    alerts: list[dict[str, Any]],
    who: dict[str, Any] | None,
) -> OutboundMessage:
    """The first page for an incident: severity, title, cause and confidence, path, evidence."""
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
        summary = json.loads(alert["annotations_json"]).get("summary", "")
        lines.append(
            f"• {escape_mrkdwn(alert['title'])} on {escape_mrkdwn(alert['component'] or 'unknown')}"
            f" ({alert['status']}, since {fmt_ms(alert['starts_at_ms'])})"
            + (f": {escape_mrkdwn(summary)}" if summary else "")
        )
    if len(alerts) > 10:
        lines.append(f"• … and {len(alerts) - 10} more alerts")
    lines.append("Paged: " + escape_mrkdwn(paged_line(who)))
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
    )


def ticket(
    intent_id: str,
    incident: dict[str, Any],
    alerts: list[dict[str, Any]],
    who: dict[str, Any] | None,
    note: str | None = None,
) -> OutboundMessage:
    """The ticket: cause, path, ruled-out candidates, who was paged, and each alert verbatim.

    `note` (e.g. why nobody was paged: a stated preference) comes first.
    """
    cause = incident.get("root_cause")
    symptom = alerts[0]["title"] if alerts else incident["title"]
    title = f"[{incident['severity']}] {cause or 'inconclusive'}: {symptom}"
    parts = [
        *([f"> {note}", ""] if note else []),
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
    )


def readback(
    intent_id: str,
    incident: dict[str, Any],
    fact: dict[str, Any],
    understood: str,
    reply_to: str | None,
) -> OutboundMessage:
    """Read a stated preference back to its author, with Approve / Discard buttons."""
    mention = fact["person"]
    return OutboundMessage(
        intent_id=intent_id,
        incident_id=incident["id"],
        kind="followup",
        title=incident["title"],
        text=f"<@{escape_mrkdwn(mention)}> I understood: {escape_mrkdwn(understood)} "
        "Save this preference?",
        severity=incident["severity"],
        reply_to=reply_to,
        buttons=[
            Button(
                action_id="approve_preference", text="Approve", value=fact["id"], style="primary"
            ),
            Button(action_id="discard_preference", text="Discard", value=fact["id"]),
        ],
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
