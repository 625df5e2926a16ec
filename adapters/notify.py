"""The one small interface every outbound adapter implements (outbox, Slack, GitHub).

Modelled on Alertmanager's `Notify(ctx, alerts) (retry bool, err)`: an adapter sends one
`OutboundMessage` and returns the external reference, or raises `AdapterError` saying whether a
retry may help. `find(intent_id)` answers "was this intent already delivered?" for
reconciliation after a crash (docs/architecture.md, protocols, "Act once per intent").
"""

from __future__ import annotations

import logging
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from adapters.notices import Notice

log = logging.getLogger(__name__)

#: `remediation`: an approved remediation's one run (adapters of `agents.act`), not a message.
MessageKind = Literal[
    "notification", "ticket", "followup", "ticket-update", "update", "remediation"
]


class AdapterError(RuntimeError):
    """An outbound call failed. `retryable`: a later retry may succeed (5xx, 429, timeouts).

    `retry_after_s`: when the outside system said how long to wait (HTTP `Retry-After`, a rate
    limit's reset), in seconds; None when it did not say.
    `refused`: the destination itself refused the message (a channel that does not exist, is
    archived or does not have the bot, an unknown user): another destination may take it.
    `reason`: the outside system's short error code (e.g. `channel_not_found`), or None.
    The message never contains a secret (tokens are `SecretStr` and never formatted).
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        retry_after_s: float | None = None,
        refused: bool = False,
        reason: str | None = None,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after_s = retry_after_s
        self.refused = refused
        self.reason = reason


class OutboundMessage(BaseModel):
    """One delivery of a notice: the envelope (what intent, which incident, what kind of
    message, where it goes and what it answers) around what the responder says (`notice`).

    `kind`: `notification` (the page), `update` (the page restated: `reply_to` is the page's
    ref, and Slack edits it in place), `followup` (in the page's thread, `reply_to`), `ticket`,
    `ticket-update` (a comment on the ticket named by `reply_to`). `channel`: the chat channel
    the responder chose (None: the notifier's default). `opened_at_ms`: the earliest a delivery
    of this intent can have happened (ms UTC), where `find` starts looking.
    """

    model_config = ConfigDict(frozen=True)

    intent_id: str
    incident_id: str
    kind: MessageKind
    channel: str | None = None
    reply_to: str | None = None
    opened_at_ms: int | None = None
    notice: Notice

    def named(self, organisation: str | None) -> OutboundMessage:
        """This message with its notice naming `organisation` (the tenant, when the server
        serves several: renderers put `tenant_prefix` first); itself when None or already
        named so."""
        if organisation is None or self.notice.organisation == organisation:
            return self
        notice = self.notice.model_copy(update={"organisation": organisation})
        return self.model_copy(update={"notice": notice})


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
