"""A small Slack Web API on 127.0.0.1 for tests, served to the real slack-sdk `WebClient`, and
request signing the way Slack signs what it sends us.

Methods: `auth.test`, `chat.postMessage`, `chat.postEphemeral` (kept in `ephemeral`),
`chat.update`, `conversations.history`,
`conversations.replies`, `conversations.list`, `users.lookupByEmail`, `users.info`. Like Slack,
it takes POST (JSON or form-encoded body) and GET (query string), checks `Authorization: Bearer
<token>` (`invalid_auth` otherwise), answers errors as HTTP 200 `{"ok": false, "error": …}`,
returns message `metadata` from history and replies only when `include_all_metadata` is set,
and knows channels by id (the read methods take ids only, as Slack's do; `chat.postMessage`
also takes `#name`). `fail()` scripts failures per method: an `ok: false` error, an HTTP status
(429 with `Retry-After`, 5xx), or a hook that runs after a message is stored and before the
answer (to kill the caller between Slack's accept and its record). `refuse(channel, error)`
makes a channel refuse every post and edit as Slack does (`channel_not_found`,
`not_in_channel`, `is_archived`), and `conversations.list` shows it archived or without the bot.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from slack_sdk.signature import SignatureVerifier

TOKEN = "xoxb-test-0123456789-secret"
SIGNING_SECRET = "test-signing-secret-0123456789abcdef"
BOT_USER, BOT_ID, TEAM = "U0BOT", "B0BOT", "T0TEST"
CHANNELS = {
    "C0STORE": "storefront-oncall",
    "C0CHECKOUT": "checkout-oncall",
    "C0CATALOG": "catalog-oncall",
    "C0DATA": "data-platform-oncall",
    "C0PLATFORM": "platform-oncall",
    "C0DEFAULT": "incidents",
}
USERS = {"cy@example.com": "U0CY", "di@example.com": "U0DI", "ada@example.com": "U0ADA"}


def signed_headers(
    body: bytes, secret: str = SIGNING_SECRET, timestamp: int | None = None
) -> dict[str, str]:
    """`X-Slack-Request-Timestamp` and `X-Slack-Signature` for `body`, as Slack sends them."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    signature = SignatureVerifier(secret).generate_signature(timestamp=ts, body=body)
    assert signature is not None
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": signature}


@dataclass
class Failure:
    """A scripted answer to the next call of one method."""

    error: str | None = None
    status: int = 200
    retry_after: int | None = None
    after_store: Callable[[], None] | None = None


def _truthy(value: object) -> bool:
    return value in (True, 1, "1", "true", "True")


class SlackAPI:
    """The server. `base_url` is what `SLACK_API_URL` points at; `messages` holds every message
    posted (dicts with channel, ts, thread_ts, text, blocks, metadata, user, bot_id);
    `calls` logs `(http method, api method, params)` and `body_kinds` how params came."""

    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self.messages: list[dict[str, Any]] = []
        #: what `chat.postEphemeral` showed one user: {channel, user, text, thread_ts}
        self.ephemeral: list[dict[str, Any]] = []
        self.calls: list[tuple[str, str, dict[str, Any]]] = []
        self.body_kinds: list[str] = []  # per call: json | form | none
        self._failures: dict[str, list[Failure]] = {}
        #: channel id -> the error every post to it gets (`refuse`)
        self.refusing: dict[str, str] = {}
        self._lock = threading.Lock()
        self._clock = int(time.time() * 1_000_000)
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                api._serve(self, "GET")

            def do_POST(self) -> None:
                api._serve(self, "POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>/api/`."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/api/"

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()

    def fail(self, method: str, failure: Failure, times: int = 1) -> None:
        """Answer the next `times` calls of `method` with `failure`."""
        with self._lock:
            self._failures.setdefault(method, []).extend([failure] * times)

    def refuse(self, channel: str, error: str = "channel_not_found") -> None:
        """Make `channel` (an id) refuse posts and edits with `error`, as Slack does for a
        channel that is gone (`channel_not_found`), archived (`is_archived`) or lacks the bot
        (`not_in_channel`)."""
        with self._lock:
            self.refusing[channel] = error

    def roots(self, channel: str | None = None) -> list[dict[str, Any]]:
        """Messages that are not thread replies, oldest first."""
        return [
            m for m in self.messages
            if m["thread_ts"] in (None, m["ts"]) and channel in (None, m["channel"])
        ]  # fmt: skip

    def replies(self, thread_ts: str) -> list[dict[str, Any]]:
        """Replies in the thread of `thread_ts`, oldest first."""
        return [m for m in self.messages if m["thread_ts"] == thread_ts and m["ts"] != thread_ts]

    def called(self, method: str) -> int:
        """How many requests `method` got."""
        return sum(1 for _, name, _ in self.calls if name == method)

    # -- serving -----------------------------------------------------------------------------

    def _serve(self, request: BaseHTTPRequestHandler, verb: str) -> None:
        url = urllib.parse.urlparse(request.path)
        params: dict[str, Any] = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
        size = int(request.headers.get("Content-Length") or 0)
        raw = request.rfile.read(size) if size else b""
        kind = "none"
        if raw and "json" in (request.headers.get("Content-Type") or ""):
            params |= json.loads(raw)
            kind = "json"
        elif raw:
            params |= {k: v[0] for k, v in urllib.parse.parse_qs(raw.decode()).items()}
            kind = "form"
        method = url.path.rsplit("/", 1)[-1]
        with self._lock:
            self.calls.append((verb, method, params))
            self.body_kinds.append(kind)
            queue = self._failures.get(method) or []
            failure = queue.pop(0) if queue else None
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return self._answer(request, 200, {"ok": False, "error": "invalid_auth"})
        if failure is not None and failure.after_store is None:
            headers = {}
            if failure.retry_after is not None:
                headers["Retry-After"] = str(failure.retry_after)
            body = {"ok": False, "error": failure.error or "ratelimited"}
            return self._answer(request, failure.status, body, headers)
        handler = getattr(self, "_" + method.replace(".", "_"), None)
        if handler is None:
            return self._answer(request, 200, {"ok": False, "error": "unknown_method"})
        with self._lock:
            answer = handler(params)
        if failure is not None and failure.after_store is not None:
            failure.after_store()
        self._answer(request, 200, answer)

    def _answer(
        self,
        request: BaseHTTPRequestHandler,
        status: int,
        body: dict[str, Any],
        headers: dict[str, str] | None = None,
    ) -> None:
        data = json.dumps(body).encode()
        try:
            request.send_response(status)
            request.send_header("Content-Type", "application/json; charset=utf-8")
            request.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                request.send_header(name, value)
            request.end_headers()
            request.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the caller was killed meanwhile
            pass

    def _channel(self, value: object) -> str | None:
        name = str(value or "")
        if name in CHANNELS:
            return name
        by_name = {n: cid for cid, n in CHANNELS.items()}
        return by_name.get(name.removeprefix("#")) if name.startswith("#") else None

    def _next_ts(self) -> str:
        self._clock = max(self._clock + 1, int(time.time() * 1_000_000))
        return f"{self._clock // 1_000_000}.{self._clock % 1_000_000:06d}"

    @staticmethod
    def _json_param(value: object) -> Any:
        return json.loads(value) if isinstance(value, str) else value

    def _auth_test(self, p: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True, "url": "https://test.slack.example/", "team": "Test Team",
            "user": "blast-radius", "team_id": TEAM, "user_id": BOT_USER, "bot_id": BOT_ID,
        }  # fmt: skip

    def _chat_postMessage(self, p: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(p.get("channel"))
        if channel is None:
            return {"ok": False, "error": "channel_not_found"}
        if channel in self.refusing:
            return {"ok": False, "error": self.refusing[channel]}
        if not p.get("text") and not p.get("blocks"):
            return {"ok": False, "error": "no_text"}
        ts = self._next_ts()
        message = {
            "type": "message", "channel": channel, "ts": ts, "thread_ts": p.get("thread_ts"),
            "text": p.get("text"), "blocks": self._json_param(p.get("blocks")),
            "metadata": self._json_param(p.get("metadata")), "user": BOT_USER, "bot_id": BOT_ID,
            "params": dict(p),
        }  # fmt: skip
        self.messages.append(message)
        return {"ok": True, "channel": channel, "ts": ts, "message": self._public(message, True)}

    def _chat_postEphemeral(self, p: dict[str, Any]) -> dict[str, Any]:
        """Shown to one user only: kept in `ephemeral`, never among `messages` (Slack keeps
        no ephemeral message either)."""
        channel = self._channel(p.get("channel"))
        if channel is None:
            return {"ok": False, "error": "channel_not_found"}
        if not p.get("user"):
            return {"ok": False, "error": "user_not_in_channel"}
        self.ephemeral.append({"channel": channel, "user": p["user"], "text": p.get("text"),
                               "thread_ts": p.get("thread_ts")})  # fmt: skip
        return {"ok": True, "message_ts": self._next_ts()}

    def _chat_update(self, p: dict[str, Any]) -> dict[str, Any]:
        channel = self._channel(p.get("channel"))
        if channel in self.refusing:  # an archived channel, or one without the bot
            return {"ok": False, "error": self.refusing[channel]}
        for message in self.messages:
            if message["channel"] == channel and message["ts"] == p.get("ts"):
                message["text"] = p.get("text")
                message["blocks"] = self._json_param(p.get("blocks"))
                if p.get("metadata") is not None:
                    message["metadata"] = self._json_param(p["metadata"])
                message["edited"] = message.get("edited", 0) + 1
                return {"ok": True, "channel": channel, "ts": message["ts"], "text": p.get("text")}
        return {"ok": False, "error": "message_not_found"}

    @staticmethod
    def _public(message: dict[str, Any], metadata: bool) -> dict[str, Any]:
        out = {k: v for k, v in message.items() if k not in ("params", "channel", "edited")}
        if out["thread_ts"] is None:
            del out["thread_ts"]
        if not metadata or out.get("metadata") is None:
            out.pop("metadata", None)
        return out

    @staticmethod
    def _page(items: list[dict[str, Any]], p: dict[str, Any], key: str) -> dict[str, Any]:
        start = int(p.get("cursor") or 0)
        limit = int(p.get("limit") or 100)
        chunk = items[start : start + limit]
        more = start + limit < len(items)
        cursor = str(start + limit) if more else ""
        return {"ok": True, key: chunk, "has_more": more,
                "response_metadata": {"next_cursor": cursor}}  # fmt: skip

    def _conversations_history(self, p: dict[str, Any]) -> dict[str, Any]:
        channel = str(p.get("channel") or "")
        if channel not in CHANNELS or self.refusing.get(channel) == "channel_not_found":
            return {"ok": False, "error": "channel_not_found"}
        if self.refusing.get(channel) == "not_in_channel":
            return {"ok": False, "error": "not_in_channel"}
        oldest = float(p.get("oldest") or 0)
        found = [
            self._public(m, _truthy(p.get("include_all_metadata")))
            for m in reversed(self.roots(channel)) if float(m["ts"]) >= oldest
        ]  # fmt: skip
        return self._page(found, p, "messages")

    def _conversations_replies(self, p: dict[str, Any]) -> dict[str, Any]:
        channel, ts = str(p.get("channel") or ""), p.get("ts")
        if channel not in CHANNELS:
            return {"ok": False, "error": "channel_not_found"}
        root = [m for m in self.roots(channel) if m["ts"] == ts]
        if not root:
            return {"ok": False, "error": "thread_not_found"}
        meta = _truthy(p.get("include_all_metadata"))
        found = [self._public(m, meta) for m in root + self.replies(str(ts))]
        return self._page(found, p, "messages")

    def _conversations_list(self, p: dict[str, Any]) -> dict[str, Any]:
        channels = [
            {"id": cid, "name": name, "is_private": False,
             "is_archived": self.refusing.get(cid) == "is_archived",
             "is_member": self.refusing.get(cid) != "not_in_channel"}
            for cid, name in CHANNELS.items()
            if self.refusing.get(cid) != "channel_not_found"
            and not (_truthy(p.get("exclude_archived")) and self.refusing.get(cid) == "is_archived")
        ]  # fmt: skip
        return self._page(channels, p, "channels")

    def _users_info(self, p: dict[str, Any]) -> dict[str, Any]:
        user = str(p.get("user") or "")
        if user not in USERS.values():
            return {"ok": False, "error": "user_not_found"}
        email = next(e for e, u in USERS.items() if u == user)
        return {"ok": True, "user": {"id": user, "deleted": False, "profile": {"email": email}}}

    def _users_lookupByEmail(self, p: dict[str, Any]) -> dict[str, Any]:
        user = USERS.get(str(p.get("email")))
        if user is None:
            return {"ok": False, "error": "users_not_found"}
        return {"ok": True, "user": {"id": user, "name": str(p["email"]).split("@")[0]}}
