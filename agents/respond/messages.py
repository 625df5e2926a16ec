"""What the responder says: the page, its follow-ups and the ticket, as notices built from the
graph (`adapters.notices`).

A notice holds raw values and no markup: alert text stays exactly as received, and each
notifier escapes it for its own format when rendering (Slack mrkdwn, GitHub Markdown). This
module decides what is said, never how it looks.
"""

from __future__ import annotations

import hashlib
import json
import urllib.parse
from typing import Any

from adapters.notices import (
    ChangeNote,
    ClearedNote,
    FollowUp,
    FollowUpAbout,
    Page,
    Person,
    PreviousNote,
    Refusal,
    Span,
    StepNote,
    Ticket,
    TicketUpdate,
    VerdictNote,
    fmt_ms,
    in_words,
    ruled_out_by_rules,
    still_firing,
)
from adapters.notify import OutboundMessage
from agents.investigate.checks import CHANGE_LOOKBACK_MS
from agents.investigate.decision import LEAD_BELOW
from agents.investigate.similar import SIMILAR_SHOWN, cited, said_by
from agents.triage import heartbeat
from agents.triage.alerts import contact_point_test
from agents.triage.triage import component_candidates

__all__ = ["fmt_ms"]  # the responder formats times with the renderers' format


def paged_line(who: dict[str, Any] | None) -> str:
    """Who is paged and why (a route of `agents.respond.routing.route`), e.g. `Ada (on call for
    storefront, owner of ad)`, or `Hal (on call for platform, the default team: no team owns
    node-1)`. Never just "nobody": with no one on call anywhere it says loudly which fallback
    (channel, escalation) it used and why, and with no channel either (`unrouted`) that nobody
    was paged and the page is in the outbox only. It names no fallback that does not exist."""
    if not who:  # a page built before routing ran (or by an older worker): say what is missing
        return "NO ONE ON CALL: no route was found"
    if who.get("route", "owner") == "owner" and who.get("person"):
        return f"{who['person']} (on call for {who['team']}, owner of {who['component']})"
    reason = who.get("reason") or "no owner"
    if who.get("person"):
        return f"{who['person']} (on call for {who['team']}, the default team: {reason})"
    escalation = f"escalation {who['escalation']}" if who.get("escalation") else None
    if unrouted(who):
        note = f"; {escalation}" if escalation else ""
        return (
            f"NO ONE ON CALL ({reason}); no channel either (the default team has none and "
            f"SLACK_DEFAULT_CHANNEL is unset): nobody was paged, this page is in the outbox "
            f"only{note}"
        )
    where = [_fallback_channel(who)] + ([escalation] if escalation else [])
    return f"NO ONE ON CALL ({reason}); fallback: {', '.join(where)}"


def unrouted(who: dict[str, Any] | None) -> bool:
    """Whether a route reaches no one and no channel: the default route with nobody on call,
    its team (if any) without a channel, and no `SLACK_DEFAULT_CHANNEL` (the route's
    `default_channel`, recorded by `routing.route_from`). Its page can only land in the outbox
    (`Responder._page`: Slack refuses a page with no channel; the outbox keeps the copy)."""
    return (
        who is not None
        and who.get("route") == "default"
        and not who.get("person")
        and not who.get("channel")
        and "default_channel" in who
        and not who["default_channel"]
    )


def _fallback_channel(who: dict[str, Any]) -> str:
    """The channel a default route with nobody on call falls back to: its team's, else
    `SLACK_DEFAULT_CHANNEL` as routing recorded it; a route stored before routes recorded
    that setting says both, as it cannot know which one there was."""
    channel = who.get("channel") or who.get("default_channel")
    if channel:
        return f"channel {channel}"
    return "SLACK_DEFAULT_CHANNEL if set, else the outbox"


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


#: At most this many runbook links on a page or ticket.
RUNBOOKS_SHOWN = 5


def incident_url(public_url: str | None, incident_id: str) -> str | None:
    """The incident's web page, `<BLAST_PUBLIC_URL>/ui/incidents/<id>`, or None when the public
    URL is not configured."""
    if not public_url:
        return None
    return f"{public_url.rstrip('/')}/ui/incidents/{urllib.parse.quote(incident_id, safe='')}"


#: Silence links a page or a ticket shows at most (one per alert, distinct).
MAX_SILENCE_LINKS = 5


def silence_links(alerts: list[dict[str, Any]]) -> list[str]:
    """The alerts' silence links (Grafana's `silenceURL`, else a new Alertmanager silence for
    the alert's labels, built at intake), distinct, firing alerts first, at most
    `MAX_SILENCE_LINKS`."""
    ordered = sorted(alerts, key=lambda a: a.get("status") != "firing")
    links = dict.fromkeys(a["silence_url"] for a in ordered if a.get("silence_url"))
    return list(links)[:MAX_SILENCE_LINKS]


def runbooks(alerts: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(alert title, runbook URL) of each alert whose `runbook_url` annotation (Prometheus'
    and Grafana's convention) is an http(s) URL, once per URL, at most `RUNBOOKS_SHOWN`."""
    found: dict[str, str] = {}
    for alert in alerts:
        url = json.loads(alert.get("annotations_json") or "{}").get("runbook_url")
        if isinstance(url, str) and url.startswith(("https://", "http://")) and len(url) < 2000:
            found.setdefault(url, alert["title"])
    return [(title, url) for url, title in found.items()][:RUNBOOKS_SHOWN]


def held_for(ms: int) -> str:
    """How long a window held a message, as people say it, rounded: `45 s` under two minutes,
    `90 min` under three hours, else `5 h` or `26 h 30 min`."""
    if ms < 119_500:
        return f"{round(ms / 1000)} s"
    minutes = round(ms / 60_000)
    if minutes < 180:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def held_line(held: list[dict[str, Any]] | None) -> str | None:
    """What a page (or a reopen's notice) released at a quiet window's end says of the hold,
    from the `held` rows of `cypher/_held_windows.cypher` (the ended windows that held it):
    `Held 90 min by maintenance window 'db upgrade' (Ed Example); still firing at its end.`,
    naming who ended a window by hand (`, ended by Ed Example`); from the first hold to the
    last window's end. None when no window held it."""
    if not held:
        return None
    windows = sorted(held, key=lambda w: (int(w["held_at"]), int(w["ends_at"])))
    span = max(int(w["ends_at"]) for w in windows) - min(int(w["held_at"]) for w in windows)
    names = []
    for w in windows:
        name = f"'{w['reason']}'" if w.get("reason") else "(no reason given)"
        name += f" ({w['by'] or 'someone'})"
        if w.get("ended_by"):
            name += f", ended by {w['ended_by']}"
        names.append(name)
    which = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    many = len(names) > 1
    return (
        f"Held {held_for(max(0, span))} by maintenance window{'s' if many else ''} {which}; "
        f"still firing at {'their' if many else 'its'} end."
    )


def silence_line(incident: dict[str, Any]) -> str | None:
    """What the incident of a heartbeat's silence is (`heartbeat.stopped`: "The Watchdog
    heartbeat stopped arriving (last seen …): …"), from its row's `heartbeat` (the alertname)
    and `last_seen` (ms UTC); None for any other incident."""
    if not incident.get("heartbeat"):
        return None
    seen = incident.get("last_seen")
    return heartbeat.stopped(str(incident["heartbeat"]), fmt_ms(seen) if seen else None)


def lead(cause: str | None, confidence: float | None) -> bool:
    """Whether a named cause is a lead, not a conclusion: its confidence is under the
    investigator's line (`LEAD_BELOW`, 0.5), where the web page says "named, low confidence"."""
    return cause is not None and confidence is not None and confidence < LEAD_BELOW


def _person(row: dict[str, Any] | None) -> Person | None:
    """The person a route or a row of `response_context.cypher` names, or None."""
    if not row or not (row.get("person") or row.get("email") or row.get("slack_user_id")):
        return None
    return Person(name=row.get("person"), email=row.get("email"),
                  slack_user_id=row.get("slack_user_id"))  # fmt: skip


#: What a page and ticket say first when every alert of the incident is Grafana's
#: contact-point test: nothing is broken, and nobody must hunt for a cause.
TEST_NOTE = (
    'This is Grafana\'s contact-point test notification (TestAlert, "Notification test"): the '
    "webhook works and nothing is broken. Resolve this incident by hand; Grafana never "
    "resolves a test."
)


def test_note(incident: dict[str, Any], alerts: list[dict[str, Any]]) -> str | None:
    """`TEST_NOTE` followed by the finding's summary when every alert of `alerts` (rows with
    `alertname`, `labels_json`, `annotations_json`) is Grafana's contact-point test, else
    None: the test pages as any alert does, and its page read as an inconclusive incident on
    an unknown component."""
    if not alerts or not all(
        contact_point_test(a.get("alertname"), json.loads(a.get("labels_json") or "{}"),
                           json.loads(a.get("annotations_json") or "{}"))
        for a in alerts
    ):  # fmt: skip
        return None
    summary = incident.get("summary")
    return f"{TEST_NOTE} {summary}" if summary else TEST_NOTE


def page(
    incident: dict[str, Any],
    alerts: list[dict[str, Any]],
    who: dict[str, Any] | None,
    changes: list[dict[str, Any]] | None = None,
    verdicts: list[dict[str, Any]] | None = None,
    ticket_link: str | None = None,
    public_url: str | None = None,
    investigating: bool = False,
) -> Page:
    """The page for an incident: severity, title, cause and confidence, paths, evidence
    (alerts and the recent `changes` the finding cites), who is paged and why, the ticket
    link, the incident's web page (under `public_url`), each alert's runbook, the quiet
    windows that held it (the row's `held`: `held_line`), and what happened since
    (acknowledgement, resolution, `verdicts`). `investigating`: sent before the diagnosis
    (the page deadline passed), which the page says instead of a cause; so is
    any page of an incident with no finding yet (an acknowledgement's edit of an early
    page must not read as an inconclusive finding nobody made). The page of a heartbeat's
    silence (`silence_line`) says what stopped and what to check (the finding's summary)
    instead of a cause, paths and evidence: nothing was diagnosed. The page of Grafana's
    contact-point test (`test_note`) says so first and is marked `contact_point_test`: no
    cause to judge, nothing to snooze."""
    # what every page says, the silence's included: who, where, what happened since
    tested = test_note(incident, alerts)
    said: dict[str, Any] = {
        "incident_id": incident["id"], "severity": incident["severity"],
        "title": incident["title"], "status": incident["status"],
        "summary": tested or incident.get("summary"),
        "paged": paged_line(who), "person": _person(who),
        "ticket_link": ticket_link,
        "resolved_at": incident.get("resolved_at") if incident["status"] == "resolved" else None,
        "resolved_by": incident.get("resolved_by"),
        "acknowledged_at": incident.get("acknowledged_at"),
        "acknowledged_by": incident.get("acknowledged_by"),
        "incident_url": incident_url(public_url, incident["id"]),
        "held": held_line(incident.get("held")), "verdicts": _verdict_notes(verdicts),
    }  # fmt: skip
    silence = silence_line(incident)
    if silence is not None:
        return Page(**said, heartbeat=silence)
    cause = incident.get("root_cause")
    paths = json.loads(incident.get("paths_json") or "[]")
    return Page(
        **said,
        root_cause=cause,
        confidence=incident.get("confidence") if cause else None,
        lead=lead(cause, incident.get("confidence")),
        candidates=incident.get("candidates") or [],
        similar=similar_line(incident) or None,
        paths=paths[:5],
        alerts=[alert_line(a) for a in alerts[:10]],
        more_alerts=max(0, len(alerts) - 10),
        changes=[
            f"{c['kind']} {c['ref']} on {c['component']} at {fmt_ms(c['at'])}"
            for c in changes or []
        ],
        runbooks=runbooks(alerts),
        silences=silence_links(alerts),
        contact_point_test=tested is not None,
        # an incident with no finding yet: an acknowledgement's edit of an early page must
        # not read as an inconclusive finding nobody made
        investigating=investigating or (cause is None and incident.get("summary") is None),
    )


#: A verdict's words shown on a page at most (characters; the API keeps up to 2,000): a
#: sentence or two, under Slack's 2,000-character context element with the other lines.
VERDICT_TEXT_SHOWN = 300


def _verdict_notes(verdicts: list[dict[str, Any]] | None) -> list[VerdictNote]:
    """The verdicts a page lists (rows of `incident_verdicts`, oldest first), each with what
    happened in the person's words (`text`, cut to `VERDICT_TEXT_SHOWN`), except a thread
    reply's: its text is the reply, which the page's thread shows already."""
    return [
        VerdictNote(
            verdict=v["verdict"],
            by=v.get("by"),
            by_name=v.get("by_name"),
            at=v.get("at"),
            actual_cause=v.get("actual_cause"),
            text=None
            if v.get("source") == "reply"
            else in_words(v.get("text"), VERDICT_TEXT_SHOWN, v.get("source")),
        )
        for v in verdicts or []
    ]


def similar_line(incident: dict[str, Any]) -> str:
    """One line naming the earlier incident memory cites (`similar.cited` over the incident
    row's `similar_json`, `root_cause` and the names its rules ruled out, `ruled_out_json`), or
    "": "Similar: inc-1 3 days before, cause ledger-db, confirmed by Priya Raman, resolved by …
    (score 0.81)" (days before this incident opened); "(the same cause; score 0.15)" when only
    the cause makes it alike. An earlier incident whose cause this finding ruled out is never
    cited: the page would point where the measurements say not to look."""
    found = json.loads(incident.get("similar_json") or "[]")
    ruled = ruled_out_by_rules(json.loads(incident.get("ruled_out_json") or "{}"))
    best = cited(found, incident.get("root_cause"), ruled)
    if best is None:
        return ""
    days = max(0, (int(incident.get("opened_at") or 0) - int(best["at"] or 0)) // 86_400_000)
    when = "the same day" if days == 0 else f"{days} day{'s' if days > 1 else ''} before"
    line = f"Similar: {best['id']} {when}"
    if best.get("root_cause"):
        line += f", cause {best['root_cause']}"
    if said := said_by(best):
        line += f", {said}"
    if best.get("fixed_by"):
        line += f", resolved by {best['fixed_by']}"  # who resolved it: not known to be a fix
    alike = "the same cause; " if best["score"] < SIMILAR_SHOWN else ""
    return f"{line} ({alike}score {best['score']:.2f})"


def notification(
    intent_id: str,
    incident: dict[str, Any],
    alerts: list[dict[str, Any]],
    who: dict[str, Any] | None,
    changes: list[dict[str, Any]] | None = None,
    verdicts: list[dict[str, Any]] | None = None,
    ticket_link: str | None = None,
    public_url: str | None = None,
    investigating: bool = False,
) -> OutboundMessage:
    """The page (`page`) to the route's channel (`who`'s; None: the notifier's default)."""
    return OutboundMessage(
        intent_id=intent_id,
        incident_id=incident["id"],
        kind="notification",
        channel=(who or {}).get("channel"),
        opened_at_ms=since(incident),
        notice=page(
            incident, alerts, who, changes, verdicts, ticket_link, public_url, investigating
        ),
    )


def page_shows(incident: dict[str, Any], alerts: list[dict[str, Any]]) -> str:
    """What a page says of the finding and the alerts, beyond its root cause (stored as the
    incident's `notified_shows` when the page goes out or is edited for the finding): a JSON
    object `{candidates, alerts, finding}`, the candidates in order when the finding is
    inconclusive (the page lists them as what to check first; a named cause shows none), a
    digest of the set of alerts on it (their keys; the components follow from them), and a
    digest of the finding's words the page prints (its confidence to two places, summary and
    paths). A re-investigation edits the page when this or the cause changed
    (`Responder._update`): a page sent while a joining alert was being investigated said
    "valkey-cart is the only alerting component" at 0.60 above two alerting components, and
    kept saying it after the re-investigation found 0.90 over both."""
    cause = incident.get("root_cause")
    keys = "\n".join(sorted(str(a["key"]) for a in alerts))
    confidence = incident.get("confidence")
    words = "\n".join([
        "" if confidence is None else f"{float(confidence):.2f}",
        str(incident.get("summary") or ""), str(incident.get("paths_json") or ""),
    ])  # fmt: skip
    return json.dumps({
        "candidates": [] if cause else list(incident.get("candidates") or []),
        "alerts": hashlib.sha256(keys.encode()).hexdigest()[:16],
        "finding": hashlib.sha256(words.encode()).hexdigest()[:16],
    })  # fmt: skip


def page_channels(
    who: dict[str, Any] | None, default_team: dict[str, Any] | None, default_channel: str | None
) -> list[str | None]:
    """Where a page may go, in order, along the root route: the route's channel (the owner's,
    or the default team's when the route fell back to it), the default team's channel, then
    `SLACK_DEFAULT_CHANNEL`. Each channel once; `[None]` (the notifier's own default) when none
    is known."""
    chain = [(who or {}).get("channel"), (default_team or {}).get("channel"), default_channel]
    found = [c for c in dict.fromkeys(chain) if c]
    return list(found) or [None]


def no_channel(who: dict[str, Any] | None) -> str:
    """Why a page whose chain is `[None]` (`page_channels`: no channel known anywhere) has no
    Slack channel, for its delivery records and notes: `no Slack channel for team platform
    (none on it or the default team, and SLACK_DEFAULT_CHANNEL is unset)`, or without an
    owning team `no Slack channel (no team owns it, …)`. The notifier is then left nothing to
    post to (Slack's raises, not retryable) and the page goes to the outbox."""
    team = (who or {}).get("team")
    owner = f"for team {team} (none on it or" if team else "(no team owns it, none on"
    return f"no Slack channel {owner} the default team, and SLACK_DEFAULT_CHANNEL is unset)"


def page_update(
    intent_id: str,
    page_ref: str,
    incident: dict[str, Any],
    alerts: list[dict[str, Any]],
    who: dict[str, Any] | None,
    changes: list[dict[str, Any]],
    verdicts: list[dict[str, Any]],
    ticket_link: str | None,
    public_url: str | None = None,
    first: dict[str, Any] | None = None,
    refused: list[Refusal] | None = None,
) -> OutboundMessage:
    """The page restated with the incident's current state (kind `update`, `reply_to` = the
    page's ref): Slack edits the page in place. `first`: the route the page went to, when the
    on-call of a new cause (`who`) was paged in their own channel since: the page still names
    its own addressee, then whom the new cause paged and where. `refused`: the channels that
    refused the page (oldest first), so the edit keeps saying why it landed where it did. The
    responder's edits and a reopen's (`flapping.Reopener`) go through here."""
    other = (
        first is not None
        and who is not None
        and ((first.get("person"), first.get("team")) != (who.get("person"), who.get("team")))
    )
    addressee = first if other else who
    message = notification(
        intent_id, incident, alerts, addressee, changes, verdicts, ticket_link, public_url
    )
    if other and isinstance(message.notice, Page):
        paged = (
            f"{paged_line(first)}; then, for the new root cause {incident.get('root_cause')}: "
            f"{paged_line(who)}{_where(who)}"
        )
        message = message.model_copy(
            update={"notice": message.notice.model_copy(update={"paged": paged})}
        )
    if refused and isinstance(message.notice, Page):
        message = message.model_copy(
            update={"notice": message.notice.model_copy(update={"refused": refused})}
        )
    return message.model_copy(update={"kind": "update", "reply_to": page_ref})


def page_refusals(deliveries: list[dict[str, Any]], incident_id: str) -> list[Refusal]:
    """The channels that refused the incident's page (its `initial-notification` attempts
    refused, in `incident_deliveries.cypher` rows, oldest first)."""
    page = f"incident:{incident_id}:initial-notification"
    return [
        Refusal(channel=d["channel"], reason=d["reason"] or "refused")
        for d in deliveries
        if d["intent_id"] == page and d["outcome"] == "refused"
    ]


def ruled_out_lines(incident: dict[str, Any]) -> dict[str, str]:
    """Each ruled-out component's reason, with what it rests on when the reason does not say
    it (`measured_by`)."""
    ruled: dict[str, str] = json.loads(incident.get("ruled_out_json") or "{}")
    measured: dict[str, dict[str, Any]] = json.loads(incident.get("measured_json") or "{}")
    return {name: why + measured_by(measured.get(name), why) for name, why in ruled.items()}


def measured_by(m: dict[str, Any] | None, why: str) -> str:
    """` (source: alerts)`: what a ruled-out reason rests on, when its text does not say it
    (`agents.investigate.measure`); nothing for a finding written before measurements."""
    if not m or m["source"] in why:
        return ""
    status = "" if m["status"] == "ok" else f", {m['status'].replace('_', ' ')}"
    return f" (source: {m['source']}{status})"


def ticket(
    intent_id: str,
    incident: dict[str, Any],
    alerts: list[dict[str, Any]],
    who: dict[str, Any] | None,
    note: str | None = None,
    changes: list[dict[str, Any]] | None = None,
    steps: list[dict[str, Any]] | None = None,
    previous: dict[str, Any] | None = None,
    public_url: str | None = None,
) -> OutboundMessage:
    """The ticket: what the investigator saw. `note` first (e.g. why nobody was paged: a
    stated preference), the previous occurrence (`previous`: `respond_context.cypher`'s),
    root cause and confidence, graph paths, recent changes near the cause (`changes`: rows of
    `recent_changes.cypher`; "not checked" when the row's `change_source` is false: no change
    was ever recorded), candidates and why each was set aside, the investigator's steps
    (`steps`: `respond_context.cypher`'s), who was paged, the quiet windows that held the page
    (the row's `held`: `held_line`, as the page says it), and each alert's raw fields. The
    ticket of a heartbeat's silence says what stopped and what to check instead (`silence_line`,
    the finding's summary), as its page does; so does that of Grafana's contact-point test
    (`test_note`: no cause to find)."""
    cause = incident.get("root_cause")
    silence = silence_line(incident)
    tested = test_note(incident, alerts)
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
    notice = Ticket(
        incident_id=incident["id"],
        severity=incident["severity"],
        title=incident["title"],
        status=incident["status"],
        opened_at=incident.get("opened_at"),
        resolved_at=incident.get("resolved_at"),
        note=note,
        previous=PreviousNote(
            id=previous["id"],
            status=previous["status"],
            opened_at=previous.get("opened_at"),
            resolved_at=previous.get("resolved_at"),
            ticket_ref=previous.get("ticket_ref"),
        )
        if previous
        else None,
        root_cause=cause,
        confidence=incident.get("confidence") if cause else None,
        lead=lead(cause, incident.get("confidence")),
        candidates=list(incident.get("candidates") or []),
        ruled_out=ruled_out_lines(incident),
        summary=tested or incident.get("summary"),
        contact_point_test=tested is not None,
        paths=json.loads(incident.get("paths_json") or "[]"),
        changes=[
            ChangeNote(
                at=c["at"],
                kind=c["kind"],
                ref=c.get("ref"),
                component=c.get("component"),
                author=c.get("author"),
            )
            for c in changes or []
        ],
        lookback_h=CHANGE_LOOKBACK_MS // 3_600_000,
        # no change ever recorded: no "none in the 2 h" that nothing measured
        changes_checked=bool(changes) or incident.get("change_source", True) is not False,
        steps=[
            StepNote(
                task_id=s["task_id"],
                kind=s["kind"],
                n=s["n"],
                tool=s["tool"],
                args=s.get("args"),
                result=s.get("result"),
            )
            for s in steps or []
        ],
        paged=paged_line(who),
        held=held_line(incident.get("held")),
        alert_names=list(dict.fromkeys(a["title"] for a in alerts)),
        where=list(dict.fromkeys(a["component"] for a in alerts if a["component"])),
        evidence=evidence,
        incident_url=incident_url(public_url, incident["id"]),
        runbooks=runbooks(alerts),
        silences=silence_links(alerts),
        heartbeat=silence,
    )
    return OutboundMessage(
        intent_id=intent_id,
        incident_id=incident["id"],
        kind="ticket",
        opened_at_ms=incident.get("opened_at"),
        notice=notice,
    )


def followup(
    intent_id: str,
    incident: dict[str, Any],
    about: FollowUpAbout,
    text: list[Span],
    reply_to: str | None,
    channel: str | None = None,
    **extra: Any,
) -> OutboundMessage:
    """A message in the page's thread (`reply_to` = the page's ref) about `about`; `extra`
    sets other fields of the `FollowUp` (e.g. `person`, `root_cause`, `fact_id`)."""
    return OutboundMessage(
        intent_id=intent_id,
        incident_id=incident["id"],
        kind="followup",
        channel=channel,
        reply_to=reply_to,
        opened_at_ms=since(incident),
        notice=FollowUp(
            about=about,
            incident_id=incident["id"],
            title=incident["title"],
            severity=incident["severity"],
            text=text,
            **extra,
        ),
    )


def cleared(
    intent_id: str, incident: dict[str, Any], alert: dict[str, Any], reply_to: str | None
) -> OutboundMessage:
    """The follow-up when one alert clears (and, when it was the last, the incident resolves)."""
    text = (
        f"Cleared: {alert['title']} on {alert['component'] or 'unknown'} at "
        f"{fmt_ms(alert['ends_at_ms'])}."
    )
    if incident["status"] == "resolved":
        text += f" Incident {incident['id']} resolved at {fmt_ms(incident['resolved_at'])}."
    return followup(intent_id, incident, "cleared", [Span(text=text)], reply_to)


def resolved_notice(
    intent_id: str,
    incident: dict[str, Any],
    alerts: list[dict[str, Any]],
    reply_to: str | None,
    public_url: str | None = None,
) -> OutboundMessage:
    """The one follow-up when the incident resolves, however many alerts cleared at once: who
    resolved it (by hand) and when, the alerts that cleared, and how many still fired
    (`still_firing`, as the ticket's closing comment says it)."""
    by = f" by {incident['resolved_by']}" if incident.get("resolved_by") else ""
    done = [a for a in alerts if a["status"] == "resolved"]
    shown = ", ".join(f"{a['title']} on {a['component'] or 'unknown'}" for a in done[:10])
    more = f" and {len(done) - 10} more" if len(done) > 10 else ""
    text = f"Resolved{by}: incident {incident['id']} at {fmt_ms(incident.get('resolved_at'))}."
    if done:
        text += f" Cleared: {shown}{more}."
    if len(done) < len(alerts):
        text += f" {still_firing(len(alerts) - len(done))}"
    return followup(
        intent_id, incident, "resolved", [Span(text=text)], reply_to,
        incident_url=incident_url(public_url, incident["id"]),
    )  # fmt: skip


def diagnosis_update(
    intent_id: str,
    incident: dict[str, Any],
    previous: str | None,
    reply_to: str | None,
    was_candidates: list[str] | None = None,
) -> OutboundMessage:
    """The follow-up when more alerts changed the finding after the first page: its root
    cause (`previous` before), or, inconclusive before and after, the order of what to check
    (`was_candidates` before)."""
    now = (
        incident["root_cause"]
        or "inconclusive (" + ", ".join(incident.get("candidates") or []) + ")"
    )
    was = previous or "inconclusive"
    if not previous and not incident["root_cause"] and was_candidates:
        was += ": " + ", ".join(was_candidates)
    text = [
        Span(text="Diagnosis update: root cause is now "),
        Span(text=now, strong=True),
        Span(text=f" (was {was}). {incident.get('summary') or ''}"),
    ]
    return followup(
        intent_id, incident, "diagnosis", text, reply_to, root_cause=incident["root_cause"]
    )


def team_told(
    intent_id: str,
    incident: dict[str, Any],
    team: dict[str, Any],
    who: dict[str, Any],
    reply_to: str | None,
) -> OutboundMessage:
    """Tell the on-call of another alerting team (a row of `agents.respond.routing.told`) about
    the incident in its thread: their components alert, what the cause is and who was paged."""
    cause = incident.get("root_cause") or "inconclusive"
    person = team.get("person") or f"nobody on call for {team['team']}"
    names = team["components"]
    alert = (
        f"component {names[0]} alerts"
        if len(names) == 1
        else (f"components {', '.join(names)} alert")
    )
    text = [
        Span(text=f"{person} ({team['team']}): your {alert} in this incident. Root cause: "),
        Span(text=cause, strong=True),
        Span(text=f"; paged: {paged_line(who)}."),
    ]  # fmt: skip
    return followup(
        intent_id, incident, "team-told", text, reply_to, channel=team.get("channel"),
        person=_person(team),
    )  # fmt: skip


def lead_told(
    intent_id: str,
    incident: dict[str, Any],
    owner: dict[str, Any],
    paged: dict[str, Any] | None,
    reply_to: str | None,
) -> OutboundMessage:
    """Tell the on-call of the team that owns a cause a re-investigation named only as a lead
    (under 0.5: no page wakes them, docs/oncall.md) in the incident's thread, with a mention:
    their component is named, how sure, and who was paged. `owner`: the route of the cause
    (`agents.respond.routing.route`); `paged`: the first page's route, or None."""
    cause = incident["root_cause"]
    person = owner.get("person") or f"nobody on call for {owner.get('team') or 'its team'}"
    team = f" ({owner['team']})" if owner.get("team") else ""
    sure = float(incident.get("confidence") or 0)
    text = [
        Span(text=f"{person}{team}: your component "),
        Span(text=cause, strong=True),
        Span(text=f" is now named as a lead for this incident ({sure:.2f}: check it first; not a "
                  f"conclusion, so nobody was paged for it); paged: {paged_line(paged or {})}."),
    ]  # fmt: skip
    return followup(
        intent_id, incident, "lead-told", text, reply_to, channel=owner.get("channel"),
        person=_person(owner),
    )  # fmt: skip


def _where(who: dict[str, Any] | None) -> str:
    """` in #channel` of a route, ` in the default channel`, or nothing for a route that reached
    no channel (`unrouted`: its `paged_line` says the page is in the outbox only)."""
    if unrouted(who):
        return ""
    channel = (who or {}).get("channel")
    if not channel and (who or {}).get("route") == "default":  # the root route's last channel
        channel = (who or {}).get("default_channel")
    return f" in {channel}" if channel else " in the default channel"


def new_cause_page(
    intent_id: str,
    incident: dict[str, Any],
    who: dict[str, Any],
    before: dict[str, Any] | None,
) -> OutboundMessage:
    """Page the on-call of the new root cause's route (`who`) in their own channel, a root
    message (no `reply_to`): the cause turned out to be another team's after the first page
    went to `before` (the route it named), in whose thread they may not be. It names the
    incident, the cause and where the first page is, so they can join it there."""
    first = paged_line(before) + _where(before) if before else "the default channel"
    text = [
        Span(text=f"Paged for incident {incident['id']} ({incident['title']}): the root cause is "),
        Span(text=incident["root_cause"], strong=True),
        Span(text=f". Paged: {paged_line(who)}. The first page went to {first} before the "
                  "cause was known; its thread has the rest."),
    ]  # fmt: skip
    return followup(
        intent_id, incident, "new-cause", text, None, channel=who.get("channel"),
        root_cause=incident["root_cause"], person=_person(who),
    )  # fmt: skip


def new_cause_note(
    intent_id: str,
    incident: dict[str, Any],
    who: dict[str, Any],
    reply_to: str | None,
    landed: str | None,
) -> OutboundMessage:
    """The note in the first page's thread saying who was paged for the new root cause and
    where (`landed`: the channel the page went to, else why it did not)."""
    text = [
        Span(text="Paged for the new root cause "),
        Span(text=incident["root_cause"], strong=True),
        Span(text=f": {paged_line(who)}, {landed or 'in the default channel'}."),
    ]
    return followup(
        intent_id, incident, "new-cause", text, reply_to, root_cause=incident["root_cause"]
    )


def readback(
    intent_id: str,
    incident: dict[str, Any],
    fact: dict[str, Any],
    understood: str,
    reply_to: str | None,
) -> OutboundMessage:
    """Read a stated preference back to its author, who may approve or discard it."""
    text = [
        Span(text=fact["person_name"] or "", user_id=fact["person"]),
        Span(text=f" I understood: {understood} Save this preference?"),
    ]
    return followup(intent_id, incident, "readback", text, reply_to, fact_id=fact["id"])


def readback_answer(
    intent_id: str, incident: dict[str, Any], understood: str, saved: bool, reply_to: str | None
) -> OutboundMessage:
    """Confirm in the thread that a preference was saved (approved) or discarded."""
    text = (
        f"Saved: {understood} I will follow it from now on."
        if saved
        else f"Discarded: {understood} Nothing changes."
    )
    return followup(intent_id, incident, "readback-answer", [Span(text=text)], reply_to)


def ticket_resolved(
    intent_id: str, incident: dict[str, Any], alerts: list[dict[str, Any]], reply_to: str | None
) -> OutboundMessage:
    """The closing comment of a ticket: resolution time, who resolved it (by hand), the alerts
    that cleared and how many still fire (as the thread's `resolved_notice` says it)."""
    done = [a for a in alerts if a["status"] == "resolved"]
    return OutboundMessage(
        intent_id=intent_id,
        incident_id=incident["id"],
        kind="ticket-update",
        reply_to=reply_to,
        notice=TicketUpdate(
            incident_id=incident["id"],
            title=incident["title"],
            resolved_at=incident.get("resolved_at"),
            resolved_by=incident.get("resolved_by"),
            cleared=[
                ClearedNote(title=a["title"], component=a["component"], ends_at=a.get("ends_at_ms"))
                for a in done
            ],
            still_firing=len(alerts) - len(done),
        ),
    )
