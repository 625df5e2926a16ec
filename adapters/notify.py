"""The one small interface every outbound adapter implements (outbox, Slack, GitHub).

Modelled on Alertmanager's `Notify(ctx, alerts) (retry bool, err)`: an adapter sends one
`OutboundMessage` and returns the external reference, or raises `AdapterError` saying whether a
retry may help. `find(intent_id)` answers "was this intent already delivered?" for
reconciliation after a crash (docs/architecture.md, protocols, "Act once per intent").
"""

from __future__ import annotations

import logging
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

log = logging.getLogger(__name__)

MessageKind = Literal["notification", "ticket", "followup", "ticket-update", "update"]


class AdapterError(RuntimeError):
    """An outbound call failed. `retryable`: a later retry may succeed (5xx, 429, timeouts).

    `retry_after_s`: when the outside system said how long to wait (HTTP `Retry-After`, a rate
    limit's reset), in seconds; None when it did not say.
    The message never contains a secret (tokens are `SecretStr` and never formatted).
    """

    def __init__(
        self, message: str, *, retryable: bool, retry_after_s: float | None = None
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after_s = retry_after_s


class Button(BaseModel):
    """An interactive button (Slack Block Kit `button`): what it says and what it sends back."""

    action_id: str
    text: str
    value: str
    style: Literal["primary", "danger"] | None = None


class OutboundMessage(BaseModel):
    """One notification, follow-up or ticket, built by the responder from the graph.

    `text` is the human-readable body (Slack mrkdwn for messages, Markdown for tickets) built
    with escaping, never by formatting raw alert text into a template. `evidence` keeps the
    raw alert data verbatim for tickets.
    """

    intent_id: str
    incident_id: str
    kind: MessageKind
    title: str
    text: str
    severity: str = "unknown"
    channel: str | None = None
    mention: str | None = None
    root_cause: str | None = None
    reply_to: str | None = None  # external ref of the message this one follows up
    evidence: list[dict[str, Any]] = Field(default_factory=list)
    close: bool = False
    buttons: list[Button] = Field(default_factory=list)  # extra buttons (e.g. approve a preference)
    labels: list[str] = Field(default_factory=list)  # ticket labels, e.g. "severity:critical"
    # Structured parts of a page, raw (unescaped) values for renderings such as Slack blocks;
    # an adapter escapes them for its own markup. A kind "update" message restates the page
    # (`reply_to` = the page's ref) with its current state: Slack edits it in place.
    opened_at_ms: int | None = (
        None  # ms UTC, the incident's opening: the earliest a delivery can be
    )
    confidence: float | None = None
    candidates: list[str] = Field(default_factory=list)
    summary: str | None = None
    paths: list[list[str]] = Field(default_factory=list)
    alert_lines: list[str] = Field(default_factory=list)  # the evidence in short, one per alert
    change_lines: list[str] = Field(default_factory=list)  # recent changes the finding cites
    paged: str | None = None  # who is paged and why
    person: str | None = None  # the on-call person paged
    email: str | None = None
    slack_user_id: str | None = None
    ticket_ref: str | None = None
    status_lines: list[str] = Field(default_factory=list)  # mrkdwn like `text`: resolved, verdicts


class Notifier(Protocol):
    """What the responder needs from an outbound adapter."""

    name: str

    def send(self, message: OutboundMessage) -> str:
        """Deliver the message; return its external reference. Raises `AdapterError`."""
        ...

    def find(self, intent_id: str, message: OutboundMessage | None = None) -> str | None:
        """The external reference of an earlier delivery of this intent, or None if none exists.

        `message` is the message about to be sent again; its `channel`, `reply_to` and
        `opened_at_ms` tell adapters that must search (Slack: channel history) where to look.
        Raises `AdapterError`.
        """
        ...

    def check(self) -> str:
        """Verify the adapter can deliver now, without sending anything (`blast-radius doctor`):
        return one line saying what was verified; raise `AdapterError` saying what is wrong."""
        ...


class Mirrored:
    """Sends through `primary` and copies each message to `mirror` ("Slack besides the outbox").

    The primary's reference is the Action's reference, and `find` asks the primary only. The
    copy is made once per intent (`mirror.find` first); a failed copy is logged, never raised,
    because the page itself went out.
    """

    def __init__(self, primary: Notifier, mirror: Notifier) -> None:
        self.primary = primary
        self.mirror = mirror
        self.name = f"{primary.name}+{mirror.name}"

    def send(self, message: OutboundMessage) -> str:
        """Send through the primary (raising its `AdapterError`), then copy to the mirror."""
        ref = self.primary.send(message)
        try:
            if self.mirror.find(message.intent_id, message) is None:
                self.mirror.send(message)
        except AdapterError as exc:
            log.warning("copy of %s to %s failed: %s", message.intent_id, self.mirror.name, exc)
        return ref

    def find(self, intent_id: str, message: OutboundMessage | None = None) -> str | None:
        """The primary's answer."""
        return self.primary.find(intent_id, message)

    def check(self) -> str:
        """Both adapters' checks, on one line."""
        return f"{self.primary.check()}; copy: {self.mirror.check()}"
