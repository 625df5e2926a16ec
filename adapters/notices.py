"""What the responder says, as data: a page, a follow-up of a kind, a ticket and its update.

Notices carry raw values only (alert text exactly as received, names, ms times) and no markup:
each notifier renders them in its own format and escapes every value for it (Slack mrkdwn and
Block Kit in `adapters.slack`, Markdown in `adapters.github`), as Alertmanager's notifiers build
their message from template data. They live in the adapter layer because the responder
(`agents.respond`) builds them and every notifier reads them; they are frozen pydantic models so
the outbox stores them as JSON and reads them back unchanged.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


def fmt_ms(ms: int | None) -> str:
    """An ms-since-epoch time as `YYYY-MM-DD HH:MM:SS UTC`, or `-`."""
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def still_firing(n: int) -> str:
    """How many alerts still fired when the incident was resolved (by hand), as the thread's
    resolve notice and the ticket's closing comment both say it: `1 alert still firing when it
    was resolved.`, `2 alerts …`."""
    return f"{n} alert{'' if n == 1 else 's'} still firing when it was resolved."


def in_words(text: str | None, limit: int, source: str | None = None) -> str | None:
    """A verdict's `text` (what happened, in the person's words) as one line of at most `limit`
    characters (newlines become spaces; cut with `…`), or None when there is none: a Slack
    button's verdict (`source` "button") stores the button's label, which is no one's words.
    Raw text: each renderer escapes it for its format."""
    if source == "button":
        return None
    flat = " ".join((text or "").split())
    if not flat:
        return None
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def tenant_prefix(organisation: str | None) -> str:
    """`[acme] `: the words that start every message a person sees (page, thread reply,
    escalation level, ticket title, the incident list on the command line) when the server
    serves several tenants (`organisation` set: several organisations may share one Slack
    app or repository); empty for None. Raw text: each renderer escapes it for its format."""
    return f"[{organisation}] " if organisation else ""


#: What every surface (the web page's table and graph, the ticket, `blast-radius incident`)
#: calls a candidate the finding did not name (`ruled_out`: reason by name). The rules may
#: have ruled it out on a measurement, or left it standing while memory named another cause
#: over it ("not ruled out by the rules (…); memory named x over it"): "set aside" is true of
#: both, "ruled out" only of the first (a new user's trial read "ruled out, not ruled out by
#: the rules" on the ticket of a 0.45 lead, and took the one real alternative as excluded).
SET_ASIDE = "set aside"
#: How the reason of a candidate the rules left standing, which memory set aside for its own
#: cause, starts (`investigator.with_rivals`): every other reason in `ruled_out` is the rules'.
NOT_RULED_OUT = "not ruled out by the rules"


def ruled_out_by_rules(ruled_out: dict[str, str]) -> dict[str, str]:
    """The candidates a finding's rules ruled out (`ruled_out`: reason by name, as the finding
    stores it), without those the rules left standing and memory set aside (`NOT_RULED_OUT`)."""
    return {name: why for name, why in ruled_out.items() if not why.startswith(NOT_RULED_OUT)}


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Span(_Value):
    """A run of plain text in a sentence. `strong`: emphasised (the cause a follow-up is about);
    `user_id`: the text names a chat user, whom a renderer may mention by this id (only a
    well-formed id becomes a mention, else the text is shown)."""

    text: str
    strong: bool = False
    user_id: str | None = None
    #: The text calls everyone in the channel (an escalation level's `@channel`): a renderer
    #: may make it its channel-wide mention; else the text is shown.
    channel_wide: bool = False


class Person(_Value):
    """The person a notice is for (the on-call paged, a team's on-call told): by name, with the
    email and chat user id the world gives (either may be missing)."""

    name: str | None = None
    email: str | None = None
    slack_user_id: str | None = None


class VerdictNote(_Value):
    """An engineer's verdict on the page: `verdict` confirmed|rejected|resolved, `by` a chat
    user id (or another source's id), `by_name` their name, `at` ms UTC, the actual cause
    named with a rejection, and `text`: what happened, in the person's words (already cut to
    a page's length, `messages.VERDICT_TEXT_SHOWN`), or None."""

    verdict: str
    by: str | None = None
    by_name: str | None = None
    at: int | None = None
    actual_cause: str | None = None
    text: str | None = None


class Refusal(_Value):
    """A destination that refused a page before it landed elsewhere: `channel` as given, and
    the system's reason (e.g. `channel_not_found`)."""

    channel: str
    reason: str


class Page(_Value):
    """The page for an incident and, restated (envelope kind `update`), its current state.

    `similar`: the most similar earlier incident, one sentence; `alerts`: the first alerts in
    short, one line each (`more_alerts` not shown); `changes`:
    recent changes the finding cites, one line each; `paged`: who is paged and why, a sentence;
    `ticket_link`: the ticket's web address; `resolved_at` ms UTC; `verdicts` since the page;
    `acknowledged_by`/`acknowledged_at` and `resolved_by`: who took it and who resolved it;
    `incident_url`: the incident's web page; `runbooks`: (alert title, runbook URL) pairs;
    `refused`: destinations that refused this page first; `held`: a sentence saying how long
    which quiet (maintenance) windows held the page before it went out; `undelivered`: why
    this copy went through another notifier than the intended one; `investigating`: sent
    before the diagnosis (the page deadline passed): no cause yet, it is edited in when the
    diagnosis is done;
    `lead`: the cause is named under the investigator's confidence line (a lead to check first,
    not a conclusion), which every renderer says beside it;
    `heartbeat`: the page of a heartbeat's silence (no service is at fault, nothing was
    diagnosed), what stopped and since when, in a sentence: said instead of a cause, evidence
    and paths, with `summary` saying what to check;
    `contact_point_test`: every alert of the incident is Grafana's contact-point test
    (`summary` says so first): no cause to judge and no component to quiet, so renderers
    offer no verdict buttons and no snooze;
    `organisation`: the tenant the incident is in, set when the server serves more than one
    (several organisations' pages in one Slack workspace): renderers name it first ("[acme]");
    None with one tenant, and nothing is said.
    """

    type: Literal["page"] = "page"
    incident_id: str
    severity: str = "unknown"
    title: str
    status: str = "open"
    root_cause: str | None = None
    confidence: float | None = None
    candidates: list[str] = Field(default_factory=list)
    summary: str | None = None
    similar: str | None = None
    paths: list[list[str]] = Field(default_factory=list)
    alerts: list[str] = Field(default_factory=list)
    more_alerts: int = 0
    changes: list[str] = Field(default_factory=list)
    paged: str = ""
    person: Person | None = None
    ticket_link: str | None = None
    resolved_at: int | None = None
    resolved_by: str | None = None
    acknowledged_at: int | None = None
    acknowledged_by: str | None = None
    verdicts: list[VerdictNote] = Field(default_factory=list)
    incident_url: str | None = None
    runbooks: list[tuple[str, str]] = Field(default_factory=list)
    #: Links to silence the alerts (a new Alertmanager silence each, or Grafana's silenceURL).
    silences: list[str] = Field(default_factory=list)
    refused: list[Refusal] = Field(default_factory=list)
    held: str | None = None
    undelivered: str | None = None
    investigating: bool = False
    lead: bool = False
    heartbeat: str | None = None
    contact_point_test: bool = False
    organisation: str | None = None


#: What a follow-up is about; renderers may treat kinds differently (buttons for `readback`).
FollowUpAbout = Literal[
    "cleared", "resolved", "acknowledged", "diagnosis", "team-told", "lead-told", "new-cause",
    "readback", "readback-answer", "escalation", "reopened", "remediation",
]  # fmt: skip


class FollowUp(_Value):
    """A message in the page's thread: `text` is a sentence of spans; `person` is mentioned at
    its start (a team's on-call told, the new cause's on-call); `fact_id`, for `readback`, is
    the stated preference its author may approve or discard; `incident_url` links the incident's
    web page."""

    type: Literal["followup"] = "followup"
    about: FollowUpAbout
    incident_id: str
    title: str
    severity: str = "unknown"
    text: list[Span]
    person: Person | None = None
    root_cause: str | None = None
    fact_id: str | None = None
    #: For `remediation`: the proposed remediation a member of the owning team may approve or
    #: reject (renderers with buttons show Approve / Reject); None: nothing to decide.
    remediation_id: str | None = None
    incident_url: str | None = None
    undelivered: str | None = None
    #: The tenant, named first when the server serves several (as `Page.organisation`).
    organisation: str | None = None

    def plain(self) -> str:
        """The sentence as plain text, no markup."""
        return "".join(span.text for span in self.text)


class ChangeNote(_Value):
    """A recent change near the cause: `at` ms UTC, `kind` deploy|pr, `ref`, `component`,
    `author` (all raw)."""

    at: int
    kind: str
    ref: str | None = None
    component: str | None = None
    author: str | None = None


class StepNote(_Value):
    """One checkpointed investigator step: its task, the task's kind, step number, tool, the
    arguments (JSON text) and the stored result (JSON text)."""

    task_id: str
    kind: str
    n: int
    tool: str
    args: str | None = None
    result: str | None = None


class PreviousNote(_Value):
    """The previous occurrence of the incident's symptom: its id, status, times (ms UTC) and
    ticket ref."""

    id: str
    status: str
    opened_at: int | None = None
    resolved_at: int | None = None
    ticket_ref: str | None = None


class Ticket(_Value):
    """The ticket: what the investigator saw. `note` comes first (e.g. why nobody was paged);
    `alert_names` and `where` (the alerting components) make the title; `ruled_out` maps a
    candidate to why it was ruled out; `lookback_h` is how far back changes were looked for;
    `changes_checked` false: no change source ever recorded one, so no change was looked for
    (the ticket says "not checked", not "none");
    `evidence` holds each alert's raw fields verbatim (`fingerprint`, `labels`, `annotations`,
    `values`, `startsAt`, `status`, `generatorURL`); `lead`: the cause is named under the
    investigator's confidence line (as on the page); `held`: how long which quiet (maintenance)
    windows held the page and the ticket (the page's own sentence); `heartbeat`: the ticket of
    a heartbeat's silence, the page's sentence (`Page.heartbeat`), said instead of a cause,
    paths, changes, candidates, steps and evidence; `contact_point_test`: as on the page, every
    alert is Grafana's contact-point test, which has no cause to find."""

    type: Literal["ticket"] = "ticket"
    incident_id: str
    severity: str = "unknown"
    title: str
    status: str = "open"
    opened_at: int | None = None
    resolved_at: int | None = None
    note: str | None = None
    previous: PreviousNote | None = None
    root_cause: str | None = None
    confidence: float | None = None
    lead: bool = False
    candidates: list[str] = Field(default_factory=list)
    ruled_out: dict[str, str] = Field(default_factory=dict)
    summary: str | None = None
    paths: list[list[str]] = Field(default_factory=list)
    changes: list[ChangeNote] = Field(default_factory=list)
    lookback_h: int = 0
    changes_checked: bool = True
    steps: list[StepNote] = Field(default_factory=list)
    paged: str = ""
    held: str | None = None
    alert_names: list[str] = Field(default_factory=list)
    where: list[str] = Field(default_factory=list)
    evidence: list[dict[str, Any]] = Field(default_factory=list)
    incident_url: str | None = None
    runbooks: list[tuple[str, str]] = Field(default_factory=list)
    #: Links to silence the alerts (a new Alertmanager silence each, or Grafana's silenceURL).
    silences: list[str] = Field(default_factory=list)
    undelivered: str | None = None
    heartbeat: str | None = None
    contact_point_test: bool = False
    #: The tenant, named first in the title when the server serves several (as the page's).
    organisation: str | None = None


class ClearedNote(_Value):
    """An alert that cleared: its title, component (None: unknown) and end (ms UTC)."""

    title: str
    component: str | None = None
    ends_at: int | None = None


class TicketUpdate(_Value):
    """A comment on the ticket; with `close`, the incident resolved at `resolved_at` (ms UTC),
    by `resolved_by` (a person's name when resolved by hand), `cleared` lists its alerts that
    cleared and `still_firing` counts those that had not when it was resolved."""

    type: Literal["ticket-update"] = "ticket-update"
    incident_id: str
    title: str
    resolved_at: int | None = None
    resolved_by: str | None = None
    cleared: list[ClearedNote] = Field(default_factory=list)
    still_firing: int = 0
    #: A comment that is not the resolution (a remediation's verification): plain text, said
    #: instead of the resolution lines.
    note: str | None = None
    close: bool = True
    undelivered: str | None = None
    #: The tenant (as `Page.organisation`); a comment sits under the ticket's title, which
    #: names it, so renderers need not repeat it.
    organisation: str | None = None


#: Any notice; `type` tells them apart in JSON.
Notice = Annotated[Page | FollowUp | Ticket | TicketUpdate, Field(discriminator="type")]
