"""Slack message references, `slack:<channel id>:<ts>`: what the notifier returns for a message
and a follow-up's `reply_to` names its thread by. Apart from the notifier so that the outbox
(a copy beside Slack) reads them without loading slack-sdk."""

from __future__ import annotations


def make_ref(channel_id: str, ts: str) -> str:
    """The external reference of a Slack message: `slack:<channel id>:<ts>`."""
    return f"slack:{channel_id}:{ts}"


def parse_ref(ref: str | None) -> tuple[str, str] | None:
    """`(channel id, ts)` of a `slack:<channel>:<ts>` reference, or None for any other ref."""
    if not ref or not ref.startswith("slack:"):
        return None
    _, channel, ts = [*ref.split(":", 2), "", ""][:3]
    return (channel, ts) if channel and ts else None
