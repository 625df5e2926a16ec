"""Notices as Slack mrkdwn text: the escaping rule, mentions, and the text of each notice.

Nothing from an alert becomes markup: every value is escaped (`&`, `<`, `>`; Slack's rule), so
no alert text can become `<!channel>`, a mention or a link. The only mentions are of Slack user
ids the graph gives (well-formed `U…`/`W…` ids). Pure functions, no Slack SDK: the outbox keeps
the same text a Slack page would show.
"""

from __future__ import annotations

import re

from adapters.notices import FollowUp, Page, Span, VerdictNote, fmt_ms, tenant_prefix

USER_ID = re.compile(r"^[UW][A-Z0-9]{2,30}$")
#: What each verdict reads as on a page.
VERDICT_WORDS = {
    "confirmed": "Cause confirmed", "rejected": "Cause rejected", "resolved": "Marked resolved",
}  # fmt: skip


def escape_mrkdwn(text: str) -> str:
    """Escape text for Slack mrkdwn: `&` -> `&amp;`, `<` -> `&lt;`, `>` -> `&gt;` (Slack's rule,
    https://docs.slack.dev/messaging/formatting-message-text#escaping)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def mention(user_id: str | None) -> str | None:
    """`<@U…>` for a well-formed Slack user id, else None (nothing else becomes a mention)."""
    return f"<@{user_id}>" if user_id and USER_ID.match(user_id) else None


def link(url: str, label: str | None = None) -> str:
    """A mrkdwn link `<url|label>` for an http(s) URL we built or the graph holds (escaped, `|`
    percent-encoded so it cannot end the URL early); any other text is escaped text."""
    if not url.startswith(("https://", "http://")):
        return escape_mrkdwn(url)
    return f"<{escape_mrkdwn(url).replace('|', '%7C')}|{escape_mrkdwn(label or url)}>"


def spans(text: list[Span]) -> str:
    """A sentence of spans as mrkdwn: escaped, `*strong*`, a span naming a Slack user as its
    mention when the id is well-formed."""
    out = []
    for span in text:
        if span.channel_wide:  # only ever set by us (an escalation level), never alert text
            out.append("<!channel>")
            continue
        who = mention(span.user_id)
        if who:
            out.append(who)
            continue
        part = escape_mrkdwn(span.text)
        out.append(f"*{part}*" if span.strong and part else part)
    return "".join(out)


def status_lines(page: Page) -> list[str]:
    """What happened to a page since it went out, as mrkdwn lines: acknowledgement,
    resolution and each verdict (`Cause confirmed by <@U…> at …`), naming the cause a
    rejection gave, and the one a confirmation named where the page names another or none
    (an inconclusive finding's suspects: `…; confirmed cause: *shop-db*`), then what happened
    in the person's words when they gave any (`…; actual cause: *members-db*: “disk full on
    the primary”.`)."""
    lines = []
    if page.acknowledged_at is not None:
        lines.append(
            f"Acknowledged by {escape_mrkdwn(page.acknowledged_by or 'someone')} at "
            f"{fmt_ms(page.acknowledged_at)}."
        )
    if page.status == "resolved":
        by = f" by {escape_mrkdwn(page.resolved_by)}" if page.resolved_by else ""
        lines.append(f"Resolved{by} at {fmt_ms(page.resolved_at)}.")
    for v in page.verdicts:
        who = mention(v.by) or escape_mrkdwn(v.by_name or v.by or "someone")
        what = VERDICT_WORDS.get(v.verdict, escape_mrkdwn(v.verdict))
        line = f"{what} by {who} at {fmt_ms(v.at)}"
        if v.verdict == "rejected" and v.actual_cause:
            line += f"; actual cause: *{escape_mrkdwn(v.actual_cause)}*"
        elif v.verdict == "confirmed" and v.actual_cause and v.actual_cause != page.root_cause:
            # an inconclusive page lists several suspects: say which one was confirmed
            line += f"; confirmed cause: *{escape_mrkdwn(v.actual_cause)}*"
        if v.text:  # what happened, in their words: the lesson a later repeat needs
            line += f": “{escape_mrkdwn(v.text)}”"
        lines.append(line + ".")
    return lines


#: What a page sent before its diagnosis says of the cause.
UNDER_INVESTIGATION = "under investigation; this page is edited when the diagnosis is in"
#: What a page says beside a cause named under the investigator's confidence line (`Page.lead`),
#: as the web page's "named, low confidence" badge.
LEAD_WORDS = "named, low confidence: a lead to check first, not a conclusion"


def confidence_words(page: Page) -> str:
    """` (confidence 0.90)` beside a cause, or ` (confidence 0.45; named, low confidence: a
    lead …)` for a lead (`Page.lead`); nothing when the page has no figure."""
    if page.confidence is None:
        return f" ({LEAD_WORDS})" if page.lead else ""
    return f" (confidence {page.confidence:.2f}" + (f"; {LEAD_WORDS})" if page.lead else ")")


#: The cause of Grafana's contact-point test (`Page.contact_point_test`): there is none to find.
TEST_CAUSE = "none: a test notification, nothing is broken"


def judged(page: Page) -> VerdictNote | None:
    """The verdict that says what people established of the cause: the latest confirmation or
    rejection (a `resolved` one judges nothing), as the incidents list reads it; None before
    one, and on a page with no cause to judge (a heartbeat's silence, Grafana's test)."""
    if page.heartbeat or page.contact_point_test or page.investigating:
        return None
    said = [v for v in page.verdicts if v.verdict in ("confirmed", "rejected")]
    return said[-1] if said else None


def established(page: Page) -> str | None:
    """What people established of the cause (`judged`), in the incidents list's words, as
    mrkdwn: `*valkey-cart* (confirmed by <@U1>)`, `corrected to *cart* by Sam`, `*x* marked
    wrong by Sam` (a rejection naming no cause), `a cause outside the graph, by Sam` (one of an
    inconclusive finding, said in words); None before a verdict."""
    v = judged(page)
    if v is None:
        return None
    who = mention(v.by) or escape_mrkdwn(v.by_name or v.by or "someone")
    if v.verdict == "confirmed":
        cause = v.actual_cause or page.root_cause
        return f"*{escape_mrkdwn(cause)}* (confirmed by {who})" if cause else None
    if v.actual_cause:
        return f"corrected to *{escape_mrkdwn(v.actual_cause)}* by {who}"
    if page.root_cause is None:  # said in words (`verdicts.contradiction`), as the list says it
        return f"a cause outside the graph, by {who}"
    return f"*{escape_mrkdwn(page.root_cause)}* marked wrong by {who}"


def finding_words(page: Page) -> str:
    """What the finding said of the cause, as mrkdwn: `*x* (confidence 0.90)` (a lead says so:
    `confidence_words`), what to check first when inconclusive, that the diagnosis is not done
    yet (`investigating`), or that Grafana's contact-point test has none (`TEST_CAUSE`)."""
    if page.investigating:
        return UNDER_INVESTIGATION
    if page.contact_point_test:
        return TEST_CAUSE
    if page.root_cause:
        return f"*{escape_mrkdwn(page.root_cause)}*{confidence_words(page)}"
    if page.candidates:
        return "inconclusive; check in this order: " + escape_mrkdwn(", ".join(page.candidates))
    return "inconclusive; no known component to check first"


#: What a page edited after a verdict calls the finding's own words, under what people
#: established: history, no longer the headline.
BEFORE_VERDICT = "The finding, before the verdict"


def cause_line(page: Page) -> str:
    """`Root cause: *x* (confidence 0.90)`: what the finding said (`finding_words`). After a
    verdict (`established`) the page leads with what people established, by whom, and the
    finding follows on the next line as history: `Root cause: *valkey-cart* (confirmed by
    Sam)` / `The finding, before the verdict: inconclusive; check in this order: …` (a new
    user's trial read "Root cause: inconclusive" atop a page whose last line confirmed it)."""
    found = finding_words(page)
    people = established(page)
    if people is None:
        return f"Root cause: {found}"
    return f"Root cause: {people}\n{BEFORE_VERDICT}: {found}"


def refused_line(page: Page) -> str | None:
    """Which destinations refused the page and why, or None."""
    if not page.refused:
        return None
    said = "; ".join(f"{escape_mrkdwn(r.channel)} refused it ({escape_mrkdwn(r.reason)})"
                     for r in page.refused)  # fmt: skip
    return f"Delivered here because {said}."


def organisation(notice: Page | FollowUp) -> str:
    """The notice's tenant as its first words, `[acme] ` (`tenant_prefix`, escaped), when it
    names one (`organisation`: the server serves several), else empty."""
    return escape_mrkdwn(tenant_prefix(notice.organisation))


def page_text(page: Page) -> str:
    """The page as one mrkdwn text (Slack's notification fallback, and the outbox's copy). A
    heartbeat's silence (`Page.heartbeat`) says what stopped and what to check, without a
    cause, paths or evidence: nothing was diagnosed."""
    lines = [
        f"*{organisation(page)}[{escape_mrkdwn(page.severity.upper())}] "
        f"{escape_mrkdwn(page.title)}*"
        f" (incident {escape_mrkdwn(page.incident_id)}, {escape_mrkdwn(page.status)})",
    ]
    if page.heartbeat:
        lines += [escape_mrkdwn(page.heartbeat), escape_mrkdwn(page.summary or "")]
    else:
        lines += [cause_line(page), escape_mrkdwn(page.summary or "")]
        if page.similar:
            lines.append(escape_mrkdwn(page.similar))
        lines += ["Path: " + escape_mrkdwn(" → ".join(path)) for path in page.paths[:5]]
        lines.append("Evidence:")
        lines += ["• " + escape_mrkdwn(line) for line in page.alerts]
        if page.more_alerts:
            lines.append(f"• … and {page.more_alerts} more alerts")
        lines += ["• change: " + escape_mrkdwn(c) for c in page.changes]
        lines += [
            f"• runbook for {escape_mrkdwn(title)}: {link(url)}" for title, url in page.runbooks
        ]
        if page.silences:  # as the blocks say it: a new Alertmanager silence, or Grafana's
            lines.append("Silence: " + " ".join(
                link(u, f"silence {n}") for n, u in enumerate(page.silences, 1)))  # fmt: skip
    lines.append("Paged: " + escape_mrkdwn(page.paged))
    if page.ticket_link:
        lines.append("Ticket: " + escape_mrkdwn(page.ticket_link))
    if page.incident_url:
        lines.append("Incident: " + link(page.incident_url))
    refused = refused_line(page)
    if refused:
        lines.append(refused)
    if page.held:
        lines.append(escape_mrkdwn(page.held))
    lines += status_lines(page)
    if page.undelivered:
        lines += ["", f"({escape_mrkdwn(page.undelivered)})"]
    return "\n".join(lines)


def followup_text(followup: FollowUp) -> str:
    """A follow-up as mrkdwn, its tenant first (`organisation`), as a page's title starts
    (without the mention of `followup.person`, which needs a lookup: a renderer puts it
    before, as before a page)."""
    text = organisation(followup) + spans(followup.text)
    if followup.incident_url:
        text += f" {link(followup.incident_url, 'Incident page')}"
    if followup.undelivered:
        text += f"\n\n({escape_mrkdwn(followup.undelivered)})"
    return text
