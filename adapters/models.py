"""Language models as an optional planner: one small interface, one error classification, and
a fallback chain with per-model cooldowns.

A `ChatModel` answers one Messages-style request (Anthropic's shape: `system`, `messages` of
`text` / `tool_use` / `tool_result` blocks, `tools` with JSON-schema `input_schema`) with a
`ModelReply`, or raises `ModelError`. The SDK's own retry loop is switched off in every
adapter: a failing model cools down and the next one in the chain is tried (`ModelChain`),
and when every model is cooling down the caller pauses the work (`AllModelsCooling`).

HTTP status to error kind, written once (`classify_status`), source: Anthropic API errors
(https://docs.anthropic.com/en/api/errors): 400 invalid_request_error, 401 authentication_error,
403 permission_error, 404 not_found_error, 429 rate_limit_error, 500 api_error,
529 overloaded_error; the OpenAI-compatible servers use the same codes but 529.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from adapters.notify import AdapterError

ErrorKind = Literal[
    "rate_limited", "overloaded", "bad_request", "bad_key", "unknown_model", "provider_down"
]
#: How long a model cools down after each kind of error when the server gave no `retry-after`
#: (s). A bad key or an unknown model will not heal by itself: an hour, so that a fixed key
#: (a restart) is the way back. A bad request is ours, not the model's: no cooldown.
DEFAULT_COOLDOWN_S: dict[ErrorKind, float] = {
    "rate_limited": 30.0,
    "overloaded": 15.0,
    "provider_down": 30.0,
    "bad_key": 3600.0,
    "unknown_model": 3600.0,
    "bad_request": 0.0,
}
#: The longest cooldown a `retry-after` header may ask for (s); a larger value is clamped.
MAX_COOLDOWN_S = 3600.0


class ModelError(AdapterError):
    """One model call failed. `kind` (see `ErrorKind`) says why; `retryable` is true for
    rate_limited, overloaded and provider_down (a later call may succeed); `retry_after_s` is
    the server's `retry-after` (s), when it sent one. `model` names the model that failed.
    The message never contains the API key."""

    def __init__(
        self, model: str, kind: ErrorKind, message: str, retry_after_s: float | None = None
    ) -> None:
        retryable = kind in ("rate_limited", "overloaded", "provider_down")
        super().__init__(
            f"{model}: {kind}: {message}", retryable=retryable, retry_after_s=retry_after_s
        )
        self.model = model
        self.kind: ErrorKind = kind


def classify_status(status: int) -> ErrorKind:
    """The error kind of an HTTP status from a model API (module docstring for the source)."""
    if status == 429:
        return "rate_limited"
    if status == 529:
        return "overloaded"
    if status in (401, 403):
        return "bad_key"
    if status == 404:
        return "unknown_model"
    if status >= 500 or status == 408:
        return "provider_down"
    return "bad_request"


def retry_after_s(headers: Any) -> float | None:
    """Seconds from `retry-after-ms` or `retry-after` (delta seconds; an HTTP date is not
    honoured, the default cooldown applies), or None. `headers`: any mapping with `.get`."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name) if headers is not None else None
        if value is None:
            continue
        try:
            return max(float(value) / scale, 0.0)
        except ValueError:
            continue
    return None


class ModelReply(BaseModel):
    """One model answer: `content` blocks as Anthropic returns them (`{"type": "text", "text"}`
    and `{"type": "tool_use", "id", "name", "input"}`), `stop_reason` (`end_turn`, `tool_use`,
    `max_tokens`, …), token counts, and the call's latency (ms)."""

    model: str
    content: list[dict[str, Any]]
    stop_reason: str
    input_tokens: int
    output_tokens: int
    latency_ms: int
    failed: list[dict[str, Any]] = []  # models tried first in the chain: {model, kind, detail}


class ChatModel(Protocol):
    """One model behind one API (Anthropic Messages, an OpenAI-compatible server)."""

    name: str

    def create(
        self,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        tool_choice: dict[str, Any],
        max_tokens: int,
    ) -> ModelReply:
        """One call, no retry. Raises `ModelError`."""
        ...

    def check(self) -> str:
        """Verify the key and the model name without spending tokens (`blast-radius doctor`):
        one line saying what was verified. Raises `ModelError`."""
        ...


class AllModelsCooling(RuntimeError):
    """Every model of the chain is cooling down: pause until `resume_at_ms` (ms UTC)."""

    def __init__(self, resume_at_ms: int, failed: list[dict[str, Any]]) -> None:
        super().__init__(f"every model is cooling down until {resume_at_ms} ms")
        self.resume_at_ms = resume_at_ms
        self.failed = failed


@dataclass
class ModelChain:
    """Models in order of preference (`BLAST_MODELS`, then `BLAST_OPENAI_BASE_URL`'s model).

    `create` asks the first model that is not cooling down; a model that fails cools down
    (its `retry-after`, else `DEFAULT_COOLDOWN_S`) and the next is asked. Shared by the
    workers of one process (thread-safe). `observe(model, outcome)` is told every call's
    outcome (`ok` or an error kind), for `/metrics`. `clock` gives ms UTC.
    """

    models: list[ChatModel]
    observe: Callable[[str, str], None] = lambda model, outcome: None
    clock: Callable[[], int] = field(default=lambda: int(time.time() * 1000))
    _cool_until: dict[str, tuple[int, bool]] = field(default_factory=dict)  # (until, heals)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def names(self) -> list[str]:
        """The models' names, in order."""
        return [m.name for m in self.models]

    def create(
        self,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        tool_choice: dict[str, Any],
        max_tokens: int,
    ) -> ModelReply:
        """The first answer of a model not cooling down.

        Raises `AllModelsCooling` when no model could answer and at least one will be back
        (its error was retryable); `ModelError` (the last one) when every model failed for
        good (bad key, unknown model) or the request itself was refused (400: no other model
        is tried, the request would be the same).
        """
        failed: list[dict[str, Any]] = []
        last: ModelError | None = None
        for model in self.models:
            with self._lock:
                if self._cool_until.get(model.name, (0, True))[0] > self.clock():
                    continue
            try:
                reply = model.create(system, messages, tools, tool_choice, max_tokens)
            except ModelError as exc:
                self.observe(model.name, exc.kind)
                failed.append({"model": model.name, "kind": exc.kind, "detail": str(exc)[:300]})
                if exc.kind == "bad_request":
                    raise
                wait_s = exc.retry_after_s
                if wait_s is None:
                    wait_s = DEFAULT_COOLDOWN_S[exc.kind]
                with self._lock:
                    until = self.clock() + int(min(wait_s, MAX_COOLDOWN_S) * 1000)
                    self._cool_until[model.name] = (until, exc.retryable)
                last = exc
                continue
            self.observe(model.name, "ok")
            return reply.model_copy(update={"failed": failed})
        with self._lock:
            now = self.clock()
            # Models that failed for good stay out of the resume time: only those that heal.
            healing = [until for until, heals in self._cool_until.values() if heals and until > now]
        if healing:
            raise AllModelsCooling(min(healing), failed)
        if last is not None:
            raise last
        raise ModelError(",".join(self.names) or "none", "bad_key", "no model is available")
