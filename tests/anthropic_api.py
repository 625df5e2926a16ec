"""A small Anthropic Messages API on 127.0.0.1 for tests, served to the real `anthropic` SDK.

`POST /v1/messages` (non-streaming) and `GET /v1/models/{id}` (404 for a model not in
`models`, when that is set). Like the real API it checks the key (`x-api-key`, or
`Authorization: Bearer` as anthropic 2.x sends it) and `anthropic-version`, answers errors as
`{"type": "error", "error": {"type", "message"}}` with their HTTP status, and answers a call
with `{id, type: "message", role, model, content, stop_reason, usage}`.

Each test scripts the model: `brain(body) -> Reply | Error` decides every answer from the
request (the conversation so far, the tools offered), and `fail(model, Error, times)` queues
failures for one model before the brain is asked. Token counts are estimates (4 characters a
token) so that tests and the README's figures are repeatable.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

KEY = "sk-ant-test-0123456789abcdef"


@dataclass
class Reply:
    """A 200 answer: content blocks and a stop reason."""

    content: list[dict[str, Any]]
    stop_reason: str = "end_turn"


@dataclass
class Error:
    """An error answer: HTTP status, error type, optional `retry-after` (s)."""

    status: int
    type: str = "api_error"
    retry_after: float | None = None


@dataclass
class Call:
    """One request the server got: model, tool names offered, tool_choice, the whole body, and
    what was answered (`status`)."""

    model: str
    tools: list[str]
    tool_choice: dict[str, Any]
    body: dict[str, Any]
    status: int = 200
    input_tokens: int = 0
    output_tokens: int = 0


def tool_use(name: str, arguments: dict[str, Any], n: int = 0) -> Reply:
    """A reply that calls one tool."""
    return Reply([{"type": "tool_use", "id": f"toolu_{n:04d}_{name}", "name": name,
                   "input": arguments}], "tool_use")  # fmt: skip


def last_tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The `tool_result` blocks of the last user turn (empty when it has none)."""
    last = body["messages"][-1]
    if last["role"] != "user" or isinstance(last["content"], str):
        return []
    return [b for b in last["content"] if b.get("type") == "tool_result"]


def model_turns(body: dict[str, Any]) -> int:
    """How many assistant turns the conversation already holds."""
    return sum(1 for m in body["messages"] if m["role"] == "assistant")


@dataclass
class AnthropicAPI:
    """The server. `base_url` is what `ANTHROPIC_BASE_URL` points at; `calls` logs each request."""

    key: str = KEY
    brain: Callable[[dict[str, Any]], Reply | Error] = lambda body: Reply(
        [{"type": "text", "text": "no script"}]
    )
    calls: list[Call] = field(default_factory=list)
    models: set[str] | None = None  # known model ids; None: every id is known
    _failures: dict[str, list[Error]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                api._serve(self)

            def do_GET(self) -> None:
                api._model_info(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>` (the SDK adds `/v1/messages`)."""
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()

    def fail(self, model: str, error: Error, times: int = 1) -> None:
        """Answer the next `times` calls for `model` with `error`."""
        with self._lock:
            self._failures.setdefault(model, []).extend([error] * times)

    def answered(self) -> list[Call]:
        """The calls answered 200."""
        return [c for c in self.calls if c.status == 200]

    def _model_info(self, request: BaseHTTPRequestHandler) -> None:
        model = request.path.removeprefix("/v1/models/")
        key = request.headers.get("x-api-key") or (
            request.headers.get("Authorization") or ""
        ).removeprefix("Bearer ")
        if key != self.key:
            error = {"type": "error", "error": {"type": "authentication_error", "message": "key"}}
            return self._answer(request, 401, error)
        if not request.path.startswith("/v1/models/") or (
            self.models is not None and model not in self.models
        ):
            error = {"type": "error", "error": {"type": "not_found_error", "message": model}}
            return self._answer(request, 404, error)
        self._answer(request, 200, {"type": "model", "id": model, "display_name": model.title(),
                                    "created_at": "2026-01-01T00:00:00Z"})  # fmt: skip

    def _serve(self, request: BaseHTTPRequestHandler) -> None:
        size = int(request.headers.get("Content-Length") or 0)
        body = json.loads(request.rfile.read(size) or b"{}")
        key = request.headers.get("x-api-key") or (
            request.headers.get("Authorization") or ""
        ).removeprefix("Bearer ")
        call = Call(
            model=str(body.get("model")),
            tools=[t["name"] for t in body.get("tools", [])],
            tool_choice=body.get("tool_choice", {}),
            body=body,
        )
        with self._lock:
            self.calls.append(call)
            queue = self._failures.get(call.model) or []
            failure = queue.pop(0) if queue else None
        if request.path.rstrip("/") != "/v1/messages":
            answer: Reply | Error = Error(404, "not_found_error")
        elif key != self.key or not request.headers.get("anthropic-version"):
            answer = Error(401, "authentication_error")
        elif failure is not None:
            answer = failure
        else:
            answer = self.brain(body)
        if isinstance(answer, Error):
            call.status = answer.status
            headers = {} if answer.retry_after is None else {"retry-after": str(answer.retry_after)}
            error = {"type": "error", "error": {"type": answer.type, "message": answer.type}}
            return self._answer(request, answer.status, error, headers)
        call.input_tokens = size // 4
        call.output_tokens = max(len(json.dumps(answer.content)) // 4, 1)
        self._answer(request, 200, {
            "id": f"msg_{len(self.calls):05d}", "type": "message", "role": "assistant",
            "model": call.model, "content": answer.content, "stop_reason": answer.stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": call.input_tokens, "output_tokens": call.output_tokens},
        })  # fmt: skip

    @staticmethod
    def _answer(
        request: BaseHTTPRequestHandler,
        status: int,
        body: dict[str, Any],
        headers: dict[str, str] | None = None,
    ) -> None:
        data = json.dumps(body).encode()
        try:
            request.send_response(status)
            request.send_header("Content-Type", "application/json")
            request.send_header("Content-Length", str(len(data)))
            request.send_header("request-id", "req_test")
            for name, value in (headers or {}).items():
                request.send_header(name, value)
            request.end_headers()
            request.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
