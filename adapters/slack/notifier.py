"""Slack (Web API through slack-sdk's `WebClient`): the page, its thread, and edits to it.

- A page is one root message in the owning team's channel (else `SLACK_DEFAULT_CHANNEL`):
  Block Kit blocks plus a plain-text fallback, with the buttons Confirm cause / Wrong cause /
  Resolved whose `value` is the incident id. Follow-ups (kind `followup`) go into its thread;
  kind `update` edits it in place (`chat.update`, idempotent).
- References are `slack:<channel id>:<ts>`, so a follow-up's `reply_to` names its thread.
- Every posted message carries `metadata = {"event_type": "blast_radius_incident",
  "event_payload": {"intent_id", "incident_id"}}`; `find` looks a message up by it
  (`conversations.history` of the channel since the incident opened, or `conversations.replies`
  of the thread), because `chat.postMessage` has no idempotency key (Slack's API reference).
- The notice (`adapters.notices`) is rendered here: mrkdwn text (`adapters.slack.mrkdwn`) and
  Block Kit blocks (`adapters.slack.blocks`). Nothing from an alert becomes markup: every value
  is escaped (`& < >`, Slack's rule) and every mrkdwn text object is `verbatim` (no auto-linked
  URLs, channels or mentions); messages are posted with `link_names=false` and no unfurling.
  The only mention is the person's the notice names, by Slack user id (from the graph, else
  `users.lookupByEmail`, cached).
- Errors become `AdapterError`: retryable for HTTP 429/5xx, `ratelimited`/`internal_error`-like
  codes, timeouts and connection errors; not for `invalid_auth`, `channel_not_found` and the
  like. The token is never formatted into an error or a log line.
"""

from __future__ import annotations

import http.client
import logging
import re
import threading
from collections.abc import Callable
from typing import Any

from pydantic import SecretStr
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)
from slack_sdk.http_retry.handler import RetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.models.blocks import Block

from adapters.notices import FollowUp, Page, Person
from adapters.notify import AdapterError, OutboundMessage
from adapters.slack.blocks import followup_blocks, page_blocks
from adapters.slack.mrkdwn import followup_text, mention, page_text
from adapters.slack.refs import make_ref, parse_ref

log = logging.getLogger(__name__)

#: `metadata.event_type` of every message we post.
EVENT_TYPE = "blast_radius_incident"
#: Slack error codes that a later retry may get past (https://docs.slack.dev/reference/methods).
RETRYABLE_ERRORS = frozenset(
    {"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"}
)
#: Slack error codes by which a destination refuses a message: another channel may take it.
REFUSALS = frozenset({
    "channel_not_found", "not_in_channel", "is_archived", "user_not_found", "users_not_found",
    "cannot_dm_bot", "user_disabled", "restricted_action", "team_access_not_granted",
})  # fmt: skip
CHANNEL_ID = re.compile(r"^[CGD][A-Z0-9]{2,30}$")
#: `find` starts this long before the incident opened (Slack's clock vs. ours).
FIND_MARGIN_S = 300


class BoundedRateLimitRetryHandler(RateLimitErrorRetryHandler):
    """slack-sdk's 429 handler (honours `Retry-After`), but only for waits up to `max_wait_s`.

    A longer wait would outlast the task lease; the 429 then surfaces as a retryable
    `AdapterError` and the task is retried later instead.
    """

    def __init__(self, max_retry_count: int = 2, max_wait_s: int = 10) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self.max_wait_s = max_wait_s

    def _can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is None or not super()._can_retry(
            state=state, request=request, response=response, error=error
        ):
            return False
        values = {k.lower(): v for k, v in response.headers.items()}.get("retry-after") or ["1"]
        try:
            return int(values[0]) <= self.max_wait_s
        except ValueError:
            return False


def _to_adapter_error(method: str, exc: Exception) -> AdapterError:
    """Map a slack-sdk or network failure to an `AdapterError` (the message names no secret)."""
    if isinstance(exc, SlackApiError):
        status = int(exc.response.status_code)
        code = str(exc.response.get("error") or f"HTTP {status}")
        retryable = status == 429 or status >= 500 or code in RETRYABLE_ERRORS
        return AdapterError(
            f"slack {method} failed: {code}", retryable=retryable, refused=code in REFUSALS,
            reason=code,
        )  # fmt: skip
    if isinstance(exc, OSError | http.client.HTTPException):  # timeouts, refused, reset
        reason = getattr(exc, "reason", None) or type(exc).__name__
        return AdapterError(f"slack {method} failed: {reason}", retryable=True)
    return AdapterError(f"slack {method} failed: {type(exc).__name__}", retryable=False)


class SlackNotifier:
    """A `Notifier` that pages in Slack (see the module docstring).

    `token`: the bot token (`xoxb-…`); `base_url`: `SLACK_API_URL`; `default_channel`: where
    pages go when the owning team has no channel. Two clients share the token: the one for
    `chat.postMessage` retries only 429s (a retried 5xx or timeout could post twice; the
    reconciliation through `find` handles those), the other also retries 5xx and connection
    errors (its calls are reads or idempotent). Safe to share between worker threads.
    """

    name = "slack"

    def __init__(
        self,
        token: SecretStr,
        base_url: str = "https://slack.com/api/",
        default_channel: str | None = None,
        timeout_s: int = 10,
    ) -> None:
        secret = token.get_secret_value()
        self.default_channel = default_channel
        # one retry after at most 5 s: a post (10 s timeout) fits the default 30 s task lease
        self._post = WebClient(
            token=secret, base_url=base_url, timeout=timeout_s,
            retry_handlers=[BoundedRateLimitRetryHandler(max_retry_count=1, max_wait_s=5)],
        )  # fmt: skip
        retry_all: list[RetryHandler] = [
            BoundedRateLimitRetryHandler(),
            ServerErrorRetryHandler(max_retry_count=2),
            ConnectionErrorRetryHandler(max_retry_count=1),
        ]
        self._client = WebClient(
            token=secret, base_url=base_url, timeout=timeout_s, retry_handlers=retry_all
        )
        self._lock = threading.Lock()
        self._channel_ids: dict[str, str] = {}
        self._user_ids: dict[str, str] = {}

    def _call(self, method: str, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except (SlackApiError, SlackClientError, OSError, http.client.HTTPException) as exc:
            raise _to_adapter_error(method, exc) from None

    def check(self) -> str:
        """`auth.test`: one line naming the bot user and the workspace. Raises `AdapterError`."""
        info = self._call("auth.test", self._client.auth_test)
        return (
            f"slack: bot {info.get('user')} ({info.get('user_id')}) "
            f"in {info.get('team')} ({info.get('team_id')})"
        )

    def send(self, message: OutboundMessage) -> str:
        """Post the page, post a follow-up into its thread, or edit it (kind `update`).

        Returns `slack:<channel id>:<ts>` of the message. Raises `AdapterError`.
        """
        if message.kind == "update":
            return self._update(message)
        metadata = {
            "event_type": EVENT_TYPE,
            "event_payload": {"intent_id": message.intent_id, "incident_id": message.incident_id},
        }
        thread = parse_ref(message.reply_to)
        channel, thread_ts = thread if thread else (self._channel_for(message), None)
        text, blocks = self._render(message)
        answer = self._call(
            "chat.postMessage",
            lambda: self._post.chat_postMessage(
                channel=channel, text=text, blocks=[b.to_dict() for b in blocks],
                thread_ts=thread_ts, metadata=metadata, link_names=False,
                unfurl_links=False, unfurl_media=False,
            ),
        )  # fmt: skip
        if not CHANNEL_ID.match(channel):  # a name: remember its id for `find`
            with self._lock:
                self._channel_ids[channel.lstrip("#")] = str(answer["channel"])
        return make_ref(str(answer["channel"]), str(answer["ts"]))

    def _update(self, message: OutboundMessage) -> str:
        target = parse_ref(message.reply_to)
        if target is None:
            raise AdapterError(
                f"{message.intent_id}: no Slack message to update (reply_to {message.reply_to!r})",
                retryable=False,
            )
        channel, ts = target
        text, blocks = self._render(message)
        # No `metadata` argument: chat.update then leaves the page's metadata (its intent id)
        # as it is, so `find` still recognises the page.
        self._call(
            "chat.update",
            lambda: self._client.chat_update(
                channel=channel, ts=ts, text=text, blocks=[b.to_dict() for b in blocks],
                link_names=False,
            ),
        )  # fmt: skip
        return make_ref(channel, ts)

    def tell(self, channel: str, user: str, text: str, thread_ts: str | None = None) -> None:
        """Show `text` to `user` only, in `channel` (in the thread `thread_ts`): Slack's
        `chat.postEphemeral`, for an answer meant for one person (a misspelt cause). Raises
        `AdapterError`; nothing is kept, so a caller that cannot reach Slack loses only this."""
        self._call(
            "chat.postEphemeral",
            lambda: self._post.chat_postEphemeral(
                channel=channel, user=user, text=text, thread_ts=thread_ts, link_names=False
            ),
        )

    def find(self, intent_id: str, message: OutboundMessage | None = None) -> str | None:
        """The ref of the message posted for `intent_id`, found by its metadata, or None.

        A follow-up is looked for in its thread (`conversations.replies`), a page in the
        channel's history since the incident opened (`conversations.history`, from
        `message.opened_at_ms` minus 5 minutes). An `update` is never "found": editing again is
        harmless. Raises `AdapterError` (also when `message` is missing: Slack cannot be
        searched without knowing the channel).
        """
        if message is None:
            raise AdapterError(
                f"{intent_id}: Slack can only be searched with the message (channel, thread)",
                retryable=False,
            )
        if message.kind == "update":
            return None
        thread = parse_ref(message.reply_to)
        if thread is not None:
            channel, thread_ts = thread
            pages = self._call(
                "conversations.replies",
                lambda: list(
                    self._client.conversations_replies(
                        channel=channel, ts=thread_ts, include_all_metadata=True, limit=200
                    )
                ),
            )
        else:
            channel = self._channel_id(self._channel_for(message))
            oldest = max(0, (message.opened_at_ms or 0) // 1000 - FIND_MARGIN_S)
            pages = self._call(
                "conversations.history",
                lambda: list(
                    self._client.conversations_history(
                        channel=channel, oldest=str(oldest), include_all_metadata=True, limit=200
                    )
                ),
            )
        for page in pages:
            for found in page.get("messages") or []:
                meta = found.get("metadata") or {}
                payload = meta.get("event_payload") or {}
                if meta.get("event_type") == EVENT_TYPE and payload.get("intent_id") == intent_id:
                    return make_ref(channel, str(found["ts"]))
        return None

    def _channel_for(self, message: OutboundMessage) -> str:
        channel = message.channel or self.default_channel
        if not channel:
            raise AdapterError(
                f"{message.intent_id}: no Slack channel: the owning team has none and "
                "SLACK_DEFAULT_CHANNEL is unset",
                retryable=False,
            )
        return channel

    def channel_id(self, channel: str) -> str:
        """The id of a channel given by id or `#name` (`conversations.list` for a name).

        Raises `AdapterError` (not retryable) when no such channel is visible to the bot.
        """
        return self._channel_id(channel)

    def _channel_id(self, channel: str) -> str:
        """The id of a channel given by id or by name (`#name`), via `conversations.list`."""
        if CHANNEL_ID.match(channel):
            return channel
        name = channel.lstrip("#")
        with self._lock:
            known = self._channel_ids.get(name)
        if known:
            return known
        pages = self._call(
            "conversations.list",
            lambda: list(
                self._client.conversations_list(
                    types="public_channel,private_channel", exclude_archived=True, limit=200
                )
            ),
        )
        for page in pages:
            for found in page.get("channels") or []:
                if found.get("name") == name:
                    with self._lock:
                        self._channel_ids[name] = str(found["id"])
                    return str(found["id"])
        raise AdapterError(
            f"Slack channel {channel!r} not found", retryable=False, refused=True,
            reason="channel_not_found",
        )  # fmt: skip

    def _render(self, message: OutboundMessage) -> tuple[str, list[Block]]:
        """The fallback text and the blocks of a page (or its restatement) or a follow-up; a
        follow-up naming a person mentions them first. Raises a non-retryable `AdapterError`
        for a notice Slack does not carry (a ticket)."""
        notice = message.notice
        if isinstance(notice, Page):
            who = self._mention_for(notice.person)
            text = page_text(notice)
            return (f"{who} {text}" if who else text), page_blocks(notice, who)
        if isinstance(notice, FollowUp):
            named = notice.person is not None and notice.person.name
            who = self._mention_for(notice.person) if named else None  # e.g. a team told
            text = followup_text(notice)
            return (f"{who} {text}" if who else text), followup_blocks(notice, who)
        raise AdapterError(
            f"{message.intent_id}: Slack carries pages and follow-ups, not a {notice.type}",
            retryable=False,
        )

    def channel_problem(self, channel: str) -> str | None:
        """Why a page to `channel` (an id or `#name`) would be refused, or None when the bot can
        post there: not found, archived, or the bot not a member (`conversations.list`, with
        archived channels, so an archived one is told apart from a missing one). Raises
        `AdapterError` when Slack cannot be asked."""
        name = channel.lstrip("#")
        pages = self._call(
            "conversations.list",
            lambda: list(
                self._client.conversations_list(
                    types="public_channel,private_channel", exclude_archived=False, limit=200
                )
            ),
        )
        for page in pages:
            for found in page.get("channels") or []:
                if found.get("id") == channel or found.get("name") == name:
                    if found.get("is_archived"):
                        return "is_archived"
                    if found.get("is_member") is False:
                        return "not_in_channel: invite the bot (/invite)"
                    return None
        return "channel_not_found"

    def person_problem(self, slack_user_id: str | None, email: str | None) -> str | None:
        """Why a page could not mention this person, or None: a `slack_user_id` Slack does not
        know (`users.info`), or, without one, an email no Slack user has
        (`users.lookupByEmail`). Raises `AdapterError` when Slack cannot be asked."""
        try:
            if slack_user_id:
                if not mention(slack_user_id):
                    return f"slack_user_id {slack_user_id!r} is not a Slack user id (U…)"
                answer = self._client.users_info(user=slack_user_id)
                return "the Slack user is deactivated" if answer["user"].get("deleted") else None
            if email:
                self._client.users_lookupByEmail(email=email)
                return None
        except SlackApiError as exc:
            code = str(exc.response.get("error"))
            if code in ("user_not_found", "users_not_found"):
                return f"{code}: Slack knows no user {'id' if slack_user_id else 'with that email'}"
            raise _to_adapter_error("users.info", exc) from None
        except (SlackClientError, OSError, http.client.HTTPException) as exc:
            raise _to_adapter_error("users.info", exc) from None
        return "no slack_user_id and no email: pages cannot mention them"

    def user_email(self, slack_user_id: str) -> str | None:
        """The email Slack holds for a user (`users.info`, `user.profile.email`; needs the
        `users:read.email` scope), or None when Slack has none for them or does not know the
        user. Raises `AdapterError` when Slack cannot be asked."""
        try:
            answer = self._client.users_info(user=slack_user_id)
        except SlackApiError as exc:
            if exc.response.get("error") == "user_not_found":
                return None
            raise _to_adapter_error("users.info", exc) from None
        except (SlackClientError, OSError, http.client.HTTPException) as exc:
            raise _to_adapter_error("users.info", exc) from None
        user = answer["user"] or {}
        if user.get("deleted"):
            return None
        email = (user.get("profile") or {}).get("email")
        return str(email) if email else None

    def _mention_for(self, person: Person | None) -> str | None:
        """`<@U…>` for the person: the id from the graph, else `users.lookupByEmail`.

        An unknown email (`users_not_found`) means no mention; other errors raise.
        """
        if person is None:
            return None
        direct = mention(person.slack_user_id)
        if direct or not person.email:
            return direct
        email = person.email
        with self._lock:
            cached = self._user_ids.get(email)
        if cached:
            return mention(cached)
        try:
            answer = self._client.users_lookupByEmail(email=email)
        except SlackApiError as exc:
            if exc.response.get("error") == "users_not_found":
                log.info("no Slack user with the on-call person's email; paging without mention")
                return None
            raise _to_adapter_error("users.lookupByEmail", exc) from None
        except (SlackClientError, OSError, http.client.HTTPException) as exc:
            raise _to_adapter_error("users.lookupByEmail", exc) from None
        user_id = str(answer["user"]["id"])
        with self._lock:
            self._user_ids[email] = user_id
        return mention(user_id)
