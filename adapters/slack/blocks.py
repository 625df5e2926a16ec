"""Notices as Slack Block Kit blocks (slack-sdk's block models).

Every raw value is escaped (`adapters.slack.mrkdwn`) and every mrkdwn text object is `verbatim`
(Slack auto-links no URL, channel or mention in it). Block Kit limits: section text 3,000
characters, a field 2,000, a context element 2,000 (Slack's Block Kit reference).
"""

from __future__ import annotations

from collections.abc import Iterable

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    MarkdownTextObject,
    SectionBlock,
)

from adapters.notices import FollowUp, Page
from adapters.slack import actions
from adapters.slack.mrkdwn import (
    BEFORE_VERDICT,
    TEST_CAUSE,
    UNDER_INVESTIGATION,
    confidence_words,
    escape_mrkdwn,
    established,
    followup_text,
    link,
    organisation,
    refused_line,
    status_lines,
)

SECTION_LIMIT, FIELD_LIMIT = 3000, 2000


def cut(text: str, limit: int) -> str:
    """`text`, or its head and `…` when longer than `limit` characters."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _mrkdwn(text: str) -> MarkdownTextObject:
    """A mrkdwn text object Slack will not auto-link (`verbatim`); `text` is already escaped."""
    return MarkdownTextObject(text=text, verbatim=True)


def _lines(items: Iterable[str], limit: int) -> str:
    return cut("\n".join(escape_mrkdwn(item) for item in items), limit)


def page_blocks(page: Page, who: str | None) -> list[Block]:
    """The Block Kit blocks of a page. `who` is the `<@U…>` mention of the on-call person or
    None. Buttons: Confirm cause (when there is a cause), Wrong cause, Acknowledge (until
    someone has), Resolved (until resolved). A heartbeat's silence says what stopped and what
    to check instead of a cause, paths and evidence (`_silence_blocks`)."""
    severity = escape_mrkdwn(page.severity.upper())
    head = (
        f"*{organisation(page)}[{severity}] {escape_mrkdwn(page.title)}*\n"
        f"Incident {escape_mrkdwn(page.incident_id)}"
    )
    if page.incident_url:
        head += f" · {link(page.incident_url, 'incident page')}"
    blocks: list[Block] = [SectionBlock(block_id="title", text=_mrkdwn(cut(head, SECTION_LIMIT)))]
    if page.heartbeat:
        return blocks + _silence_blocks(page, who)
    if page.investigating:
        cause = UNDER_INVESTIGATION
    elif page.contact_point_test:
        cause = TEST_CAUSE
    elif page.root_cause:
        cause = f"*{escape_mrkdwn(page.root_cause)}*{confidence_words(page)}"
    else:
        order = escape_mrkdwn(", ".join(page.candidates))
        cause = f"inconclusive; check in this order: {order}" if order else "inconclusive"
    people = established(page)
    if people is not None:  # a verdict leads; the finding is history (`mrkdwn.cause_line`)
        cause = f"{people}\n_{BEFORE_VERDICT}:_ {cause}"
    paged = escape_mrkdwn(page.paged or "nobody")
    fields = [
        _mrkdwn(cut(f"*Root cause*\n{cause}", FIELD_LIMIT)),
        _mrkdwn(cut(f"*Paged*\n{who + ' ' if who else ''}{paged}", FIELD_LIMIT)),
    ]
    if page.ticket_link:
        fields.append(_mrkdwn(cut(f"*Ticket*\n{link(page.ticket_link)}", FIELD_LIMIT)))
    blocks.append(SectionBlock(block_id="cause", fields=fields))
    if page.summary:
        said = [page.summary] + ([page.similar] if page.similar else [])
        blocks.append(SectionBlock(block_id="summary", text=_mrkdwn(_lines(said, SECTION_LIMIT))))
    if page.paths:
        paths = _lines((" → ".join(p) for p in page.paths[:5]), SECTION_LIMIT - 20)
        blocks.append(SectionBlock(block_id="paths", text=_mrkdwn(f"*Graph path*\n{paths}")))
    evidence = list(page.alerts)
    if page.more_alerts:
        evidence.append(f"… and {page.more_alerts} more alerts")
    evidence += [f"change: {c}" for c in page.changes]
    if evidence:
        text = _lines(evidence, FIELD_LIMIT - 20)
        blocks.append(ContextBlock(block_id="evidence", elements=[_mrkdwn(f"*Evidence*\n{text}")]))
    if page.runbooks:
        books = "\n".join(f"{escape_mrkdwn(t)}: {link(u)}" for t, u in page.runbooks)
        books = cut(f"*Runbooks*\n{books}", FIELD_LIMIT)
        blocks.append(ContextBlock(block_id="runbooks", elements=[_mrkdwn(books)]))
    if page.silences:  # http(s) links built at intake (or Grafana's): escaped by `link`
        quiet = " ".join(link(u, f"silence {n}") for n, u in enumerate(page.silences, 1))
        blocks.append(ContextBlock(block_id="silence", elements=[_mrkdwn(cut(quiet, FIELD_LIMIT))]))
    return blocks + _status_blocks(page)


def _silence_blocks(page: Page, who: str | None) -> list[Block]:
    """The blocks of a heartbeat's silence below its title: what stopped and what to check,
    who was paged and the ticket; no cause, paths or evidence (nothing was diagnosed)."""
    said = _lines([page.heartbeat or "", page.summary or ""], SECTION_LIMIT)
    paged = escape_mrkdwn(page.paged or "nobody")
    fields = [_mrkdwn(cut(f"*Paged*\n{who + ' ' if who else ''}{paged}", FIELD_LIMIT))]
    if page.ticket_link:
        fields.append(_mrkdwn(cut(f"*Ticket*\n{link(page.ticket_link)}", FIELD_LIMIT)))
    return [
        SectionBlock(block_id="heartbeat", text=_mrkdwn(said)),
        SectionBlock(block_id="cause", fields=fields),
        *_status_blocks(page),
    ]


def _status_blocks(page: Page) -> list[Block]:
    """What happened since the page went out (refusals, quiet windows, acknowledgement,
    resolution, verdicts) and its buttons."""
    held = escape_mrkdwn(page.held) if page.held else None
    status = [line for line in (refused_line(page), held) if line] + status_lines(page)
    if page.undelivered:
        status.append(f"({escape_mrkdwn(page.undelivered)})")
    blocks: list[Block] = []
    if status:
        blocks.append(
            ContextBlock(block_id="status", elements=[_mrkdwn(cut("\n".join(status), FIELD_LIMIT))])
        )
    blocks.append(ActionsBlock(block_id="verdict", elements=page_buttons(page)))
    return blocks


def page_buttons(page: Page) -> list[ButtonElement]:
    """The page's buttons, `value` = the incident id (no verdict on a cause not found yet,
    nor on a heartbeat's silence or Grafana's contact-point test, which have none; no snooze
    of them either: a silence has no component a quiet window could cover, and a test breaks
    nothing to quiet)."""
    value = page.incident_id
    buttons = []
    judged = not page.investigating and not page.heartbeat and not page.contact_point_test
    if page.root_cause and judged:
        buttons.append(ButtonElement(text="Confirm cause", action_id=actions.CONFIRM, value=value,
                                     style="primary"))  # fmt: skip
    if judged:
        buttons.append(
            ButtonElement(text="Wrong cause", action_id=actions.REJECT, value=value, style="danger")
        )
    if page.acknowledged_at is None and page.status != "resolved":
        buttons.append(
            ButtonElement(text="Acknowledge", action_id=actions.ACKNOWLEDGE, value=value)
        )
    if page.status != "resolved":
        buttons.append(ButtonElement(text="Resolved", action_id=actions.RESOLVED, value=value))
        if not page.heartbeat and not page.contact_point_test:
            buttons.append(ButtonElement(text="Snooze 1 h", action_id=actions.SNOOZE, value=value))
    return buttons


def followup_blocks(followup: FollowUp, who: str | None) -> list[Block]:
    """A follow-up's blocks: its text (after `who`, a mention, when given) and, for a
    preference read back, Approve / Discard buttons whose value is the fact id; for a proposed
    remediation, Approve / Reject whose value is the remediation id."""
    text = followup_text(followup)
    text = f"{who} {text}" if who else text
    blocks: list[Block] = [SectionBlock(text=_mrkdwn(cut(text, SECTION_LIMIT)))]
    if followup.about == "readback" and followup.fact_id:
        blocks.append(ActionsBlock(block_id="followup", elements=[
            ButtonElement(text="Approve", action_id=actions.APPROVE_PREFERENCE,
                          value=followup.fact_id, style="primary"),
            ButtonElement(text="Discard", action_id=actions.DISCARD_PREFERENCE,
                          value=followup.fact_id),
        ]))  # fmt: skip
    if followup.about == "remediation" and followup.remediation_id:
        blocks.append(ActionsBlock(block_id="remediation", elements=[
            ButtonElement(text="Approve", action_id=actions.APPROVE_REMEDIATION,
                          value=followup.remediation_id, style="primary"),
            ButtonElement(text="Reject", action_id=actions.REJECT_REMEDIATION,
                          value=followup.remediation_id, style="danger"),
        ]))  # fmt: skip
    return blocks
