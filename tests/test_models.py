"""The model adapters and the fallback chain: the real `anthropic` SDK against the local stand-in
(tests/anthropic_api.py), the OpenAI-compatible adapter against a small chat-completions server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest
from pydantic import SecretStr

from adapters.anthropic import AnthropicModel
from adapters.models import AllModelsCooling, ModelChain, ModelError, classify_status
from adapters.openai_compat import OpenAICompatModel
from tests.anthropic_api import KEY, AnthropicAPI, Error, Reply, tool_use

TOOLS = [{"name": "alerts", "description": "the incident's alerts",
          "input_schema": {"type": "object", "properties": {}}}]  # fmt: skip
ASK = [{"role": "user", "content": "why?"}]


@pytest.fixture
def api() -> Iterator[AnthropicAPI]:
    server = AnthropicAPI()
    yield server
    server.close()


def chain(api: AnthropicAPI, *names: str, key: str = KEY, **kw: Any) -> ModelChain:
    models = [AnthropicModel(SecretStr(key), n, api.base_url, timeout_s=5) for n in names]
    return ModelChain(models, **kw)  # type: ignore[arg-type]


def ask(c: ModelChain) -> Any:
    return c.create("system", ASK, TOOLS, {"type": "auto"}, 256)


@pytest.mark.parametrize(
    ("status", "kind", "retryable"),
    [(429, "rate_limited", True), (529, "overloaded", True), (400, "bad_request", False),
     (401, "bad_key", False), (403, "bad_key", False), (404, "unknown_model", False),
     (500, "provider_down", True), (503, "provider_down", True)],
)  # fmt: skip
def test_each_status_is_classified_once_with_its_retry_flag(
    api: AnthropicAPI, status: int, kind: str, retryable: bool
) -> None:
    api.fail("m1", Error(status, retry_after=7))
    model = AnthropicModel(SecretStr(KEY), "m1", api.base_url, timeout_s=5)
    with pytest.raises(ModelError) as caught:
        model.create("s", ASK, TOOLS, {"type": "auto"}, 64)
    assert caught.value.kind == kind == classify_status(status)
    assert caught.value.retryable is retryable
    assert caught.value.retry_after_s == 7.0
    assert len(api.calls) == 1  # max_retries=0: the SDK did not retry


def test_a_tool_use_answer_keeps_blocks_tokens_and_stop_reason(api: AnthropicAPI) -> None:
    api.brain = lambda body: tool_use("alerts", {})
    reply = ask(chain(api, "m1"))
    assert reply.stop_reason == "tool_use"
    assert reply.content == [
        {"type": "tool_use", "id": "toolu_0000_alerts", "name": "alerts", "input": {}}
    ]
    assert reply.input_tokens == api.calls[0].input_tokens > 10
    assert reply.output_tokens > 0 and reply.model == "m1"
    assert api.calls[0].tools == ["alerts"]


def test_529_cools_the_first_model_and_the_next_answers(api: AnthropicAPI) -> None:
    seen: list[tuple[str, str]] = []
    api.fail("haiku", Error(529, "overloaded_error"))
    api.brain = lambda body: Reply([{"type": "text", "text": "ok"}])
    c = chain(api, "haiku", "sonnet", observe=lambda m, o: seen.append((m, o)))
    reply = ask(c)
    assert reply.model == "sonnet"
    assert reply.failed[0]["model"] == "haiku" and reply.failed[0]["kind"] == "overloaded"
    assert seen == [("haiku", "overloaded"), ("sonnet", "ok")]
    ask(c)  # haiku still cools down (15 s default): not asked
    assert [call.model for call in api.calls] == ["haiku", "sonnet", "sonnet"]


def test_every_model_rate_limited_gives_the_earliest_resume_time(api: AnthropicAPI) -> None:
    now = [1_000_000]
    api.fail("haiku", Error(429, "rate_limit_error", retry_after=20))
    api.fail("sonnet", Error(429, "rate_limit_error", retry_after=5))
    c = chain(api, "haiku", "sonnet", clock=lambda: now[0])
    with pytest.raises(AllModelsCooling) as caught:
        ask(c)
    assert caught.value.resume_at_ms == 1_005_000
    assert [f["model"] for f in caught.value.failed] == ["haiku", "sonnet"]
    with pytest.raises(AllModelsCooling):
        ask(c)  # nobody asked while both cool down
    assert len(api.calls) == 2
    now[0] = 1_005_000
    api.brain = lambda body: Reply([{"type": "text", "text": "back"}])
    assert ask(c).model == "sonnet"


def test_a_bad_key_fails_for_good_without_a_pause_and_never_shows_the_key(
    api: AnthropicAPI,
) -> None:
    wrong = "sk-ant-wrong-key-987654321"
    c = chain(api, "haiku", "sonnet", key=wrong)
    with pytest.raises(ModelError) as caught:
        ask(c)
    assert caught.value.kind == "bad_key" and not caught.value.retryable
    assert wrong not in str(caught.value)
    with pytest.raises(ModelError):
        ask(c)  # both cool down for an hour: not asked again, still a clear error
    assert len(api.calls) == 2


def test_a_bad_request_is_not_tried_on_the_next_model(api: AnthropicAPI) -> None:
    api.fail("haiku", Error(400, "invalid_request_error"))
    with pytest.raises(ModelError) as caught:
        ask(chain(api, "haiku", "sonnet"))
    assert caught.value.kind == "bad_request"
    assert [call.model for call in api.calls] == ["haiku"]


class _Chat(BaseHTTPRequestHandler):
    """A chat-completions server: asks for the `alerts` tool, then answers in text."""

    bodies: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        data = json.dumps({"object": "list", "data": [{"id": "llama", "object": "model"}]})
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data.encode())

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append(body)
        if any(m["role"] == "tool" for m in body["messages"]):
            message: dict[str, Any] = {"role": "assistant", "content": "done"}
            finish = "stop"
        else:
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "alerts", "arguments": "{\"limit\": 3}"}}]}  # fmt: skip
            finish = "tool_calls"
        data = json.dumps({
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 5},
        }).encode()  # fmt: skip
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_openai_compatible_endpoint_speaks_tools_both_ways() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Chat)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/v1"
        model = OpenAICompatModel(base, "llama")
        assert model.check() == "llama is served"
        with pytest.raises(ModelError) as caught:
            OpenAICompatModel(base, "mistral").check()
        assert caught.value.kind == "unknown_model"
        first = model.create("sys", ASK, TOOLS, {"type": "tool", "name": "alerts"}, 64)
        assert first.stop_reason == "tool_use"
        assert first.content == [
            {"type": "tool_use", "id": "call_1", "name": "alerts", "input": {"limit": 3}}
        ]
        assert (first.input_tokens, first.output_tokens) == (11, 5)
        sent = _Chat.bodies[0]
        assert sent["tool_choice"] == {"type": "function", "function": {"name": "alerts"}}
        assert sent["tools"][0]["function"]["parameters"] == TOOLS[0]["input_schema"]
        turn = [{"role": "assistant", "content": first.content},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1",
                                              "content": "[]"}]}]  # fmt: skip
        second = model.create("sys", ASK + turn, TOOLS, {"type": "auto"}, 64)
        assert second.stop_reason == "end_turn"
        assert second.content == [{"type": "text", "text": "done"}]
        assert _Chat.bodies[1]["messages"][-1] == {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": "[]",
        }
    finally:
        server.shutdown()
        server.server_close()
