"""The one small interface every outbound adapter implements (outbox, Slack, GitHub).

Modelled on Alertmanager's `Notify(ctx, alerts) (retry bool, err)`: an adapter sends one
`OutboundMessage` and returns the external reference, or raises `AdapterError` saying whether a
retry may help. `find(intent_id)` answers "was this intent already delivered?" for
reconciliation after a crash (DESIGN.md §4, "Act once per intent").
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

MessageKind = Literal["notification", "ticket", "followup", "ticket-update"]


class AdapterError(RuntimeError):
    """An outbound call failed. `retryable`: a later retry may succeed (5xx, 429, timeouts).

    The message never contains a secret (tokens are `SecretStr` and never formatted).
    """

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


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


class Notifier(Protocol):
    """What the responder needs from an outbound adapter."""

    name: str

    def send(self, message: OutboundMessage) -> str:
        """Deliver the message; return its external reference. Raises `AdapterError`."""
        ...

    def find(self, intent_id: str) -> str | None:
        """The external reference of an earlier delivery of this intent, or None if none exists."""
        ...

    def check(self) -> str:
        """Verify the adapter can deliver now, without sending anything (`blast-radius doctor`):
        return one line saying what was verified; raise `AdapterError` saying what is wrong."""
        ...
