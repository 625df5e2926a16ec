"""What Slack posts to us, as pydantic models: the Events API envelope with its `message` event,
and the `block_actions` payload of a button click (Slack's API reference; Slack's "Events API"
and "block_actions payload" references). Only the fields we read are declared; the others are
ignored. A declared field of the wrong type or size (a `user` that is an object, a `ts` that is
no Slack timestamp or overflows) fails validation, which the routes answer with 400.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

#: A Slack id (user `U…`, channel `C…`, event `Ev…`, team `T…`): short, no spaces.
SlackId = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[^\s]+$")]
#: A Slack timestamp, seconds with microseconds: `"1700000000.000100"`.
SlackTs = Annotated[str, StringConstraints(pattern=r"^\d{1,12}(\.\d{1,9})?$")]
#: The longest message text Slack sends (its documented limit is 40,000 characters).
MAX_TEXT = 40_000


class _SlackModel(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Authorization(_SlackModel):
    """One installation the event is delivered for; `user_id` is our bot user there."""

    user_id: str | None = None


class Profile(_SlackModel):
    """The author's names, as the event carries them."""

    display_name: str | None = Field(None, max_length=256)
    real_name: str | None = Field(None, max_length=256)


class MessageEvent(_SlackModel):
    """A `message` event: `thread_ts` set (and not equal to `ts`) makes it a reply."""

    type: str
    subtype: str | None = None
    bot_id: str | None = None
    user: SlackId | None = None
    channel: SlackId | None = None
    ts: SlackTs | None = None
    thread_ts: SlackTs | None = None
    text: str | None = Field(None, max_length=MAX_TEXT)
    user_profile: Profile | None = None


class EventEnvelope(_SlackModel):
    """The body of `POST /api/v1/slack/events`: `url_verification` or `event_callback`.

    `event` stays a plain object here: only a `message` is read further (`message()`).
    """

    type: str
    challenge: str | None = Field(None, max_length=1024)
    team_id: SlackId | None = None
    api_app_id: SlackId | None = None
    event_id: SlackId | None = None
    event: dict[str, Any] | None = None
    authorizations: list[Authorization] = Field(default_factory=list)

    def message(self) -> MessageEvent | None:
        """The event as a `MessageEvent` when it is one, else None. Raises `ValidationError`
        when it says it is a message but a field has the wrong type."""
        if self.event is None or self.event.get("type") != "message":
            return None
        return MessageEvent.model_validate(self.event)


class User(_SlackModel):
    """Who clicked."""

    id: SlackId | None = None
    username: str | None = Field(None, max_length=256)
    name: str | None = Field(None, max_length=256)


class Channel(_SlackModel):
    """The channel of the message the button is on."""

    id: SlackId | None = None


class Container(_SlackModel):
    """Where the button is: a message in a channel."""

    channel_id: SlackId | None = None
    message_ts: SlackTs | None = None


class MessageRef(_SlackModel):
    """The message the button is on."""

    ts: SlackTs | None = None


class ActionText(_SlackModel):
    """A button's label."""

    text: str | None = Field(None, max_length=2000)


class Action(_SlackModel):
    """One button click: its `action_id`, `value` (an incident or fact id) and time."""

    action_id: str = Field(max_length=255)
    value: str | None = Field(None, max_length=2000)
    action_ts: SlackTs | None = None
    text: ActionText | None = None


class Team(_SlackModel):
    """The workspace a click came from."""

    id: SlackId | None = None


class Interaction(_SlackModel):
    """The JSON `payload` of `POST /api/v1/slack/interactions`."""

    type: str
    team: Team | None = None
    api_app_id: SlackId | None = None
    user: User = Field(default_factory=User)
    channel: Channel | None = None
    container: Container | None = None
    message: MessageRef | None = None
    actions: list[Action] = Field(default_factory=list)
    #: Where to answer the clicker (an ephemeral message), valid for 30 minutes.
    response_url: str | None = Field(None, max_length=2000)

    def channel_id(self) -> str | None:
        """The channel of the clicked message."""
        if self.channel is not None and self.channel.id:
            return self.channel.id
        return self.container.channel_id if self.container is not None else None

    def message_ts(self) -> str | None:
        """The ts of the clicked message."""
        if self.container is not None and self.container.message_ts:
            return self.container.message_ts
        return self.message.ts if self.message is not None else None


def reasons(exc: ValidationError) -> str:
    """The first few validation errors, one `where: what` each, for a 400's detail."""
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()[:5]
    )
