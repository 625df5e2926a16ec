"""An OpenAI-compatible chat-completions server (a local vLLM or Ollama) as the last link of the
model chain, spoken with httpx.

The planner speaks Anthropic's Messages shapes; this adapter translates them both ways.
Source: OpenAI Chat Completions API (`POST /v1/chat/completions` with `tools` of
`{"type": "function", "function": {name, description, parameters}}`; the answer's
`choices[0].message.tool_calls[]` with JSON-string `arguments`, `finish_reason` and
`usage.prompt_tokens` / `completion_tokens`), as vLLM and Ollama implement it.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
from pydantic import SecretStr

from adapters.models import ModelError, ModelReply, classify_status, retry_after_s

#: finish_reason -> Anthropic stop_reason
STOP_REASONS = {"tool_calls": "tool_use", "stop": "end_turn", "length": "max_tokens"}


def to_openai_messages(system: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic `system` + `messages` (text, tool_use and tool_result blocks) as chat
    messages: a system message, assistant messages with `tool_calls`, and one `tool` message
    per tool result."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for message in messages:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        text = "\n".join(b["text"] for b in blocks if b["type"] == "text")
        if message["role"] == "assistant":
            calls = [
                {
                    "id": b["id"], "type": "function",
                    "function": {"name": b["name"], "arguments": json.dumps(b["input"])},
                }
                for b in blocks if b["type"] == "tool_use"
            ]  # fmt: skip
            out.append({"role": "assistant", "content": text or None} | (
                {"tool_calls": calls} if calls else {}
            ))  # fmt: skip
            continue
        for b in blocks:
            if b["type"] == "tool_result":
                out.append(
                    {"role": "tool", "tool_call_id": b["tool_use_id"], "content": b["content"]}
                )
        if text:
            out.append({"role": "user", "content": text})
    return out


def to_openai_tool_choice(choice: dict[str, Any]) -> Any:
    """Anthropic `tool_choice` ({type: auto|any|tool, name}) as the chat-completions one."""
    if choice.get("type") == "tool":
        return {"type": "function", "function": {"name": choice["name"]}}
    return "required" if choice.get("type") == "any" else "auto"


class OpenAICompatModel:
    """One model (`model`) of an OpenAI-compatible server at `base_url` (`BLAST_OPENAI_BASE_URL`,
    e.g. `http://127.0.0.1:11434/v1`). `api_key` is sent as a bearer token when set."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: SecretStr | None = None,
        timeout_s: float = 60.0,
    ) -> None:
        self.name = model
        headers = {"Authorization": f"Bearer {api_key.get_secret_value()}"} if api_key else {}
        self._client = httpx.Client(
            base_url=base_url.rstrip("/") + "/", timeout=timeout_s, headers=headers
        )

    def create(
        self,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        tool_choice: dict[str, Any],
        max_tokens: int,
    ) -> ModelReply:
        """One `chat/completions` call. Raises `ModelError`."""
        body = {
            "model": self.name,
            "max_tokens": max_tokens,
            "messages": to_openai_messages(system, messages),
            "tools": [
                {"type": "function", "function": {
                    "name": t["name"], "description": t["description"],
                    "parameters": t["input_schema"],
                }}
                for t in tools
            ],
            "tool_choice": to_openai_tool_choice(tool_choice),
        }  # fmt: skip
        started = time.perf_counter()
        try:
            answer = self._client.post("chat/completions", json=body)
        except httpx.HTTPError as exc:
            raise ModelError(self.name, "provider_down", type(exc).__name__) from exc
        if answer.status_code != 200:
            raise ModelError(
                self.name,
                classify_status(answer.status_code),
                f"HTTP {answer.status_code}",
                retry_after_s(answer.headers),
            )
        try:
            data = answer.json()
            choice = data["choices"][0]
            message = choice["message"]
            content: list[dict[str, Any]] = []
            if message.get("content"):
                content.append({"type": "text", "text": message["content"]})
            for call in message.get("tool_calls") or []:
                content.append({
                    "type": "tool_use", "id": call["id"], "name": call["function"]["name"],
                    "input": json.loads(call["function"]["arguments"] or "{}"),
                })  # fmt: skip
            usage = data.get("usage") or {}
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ModelError(self.name, "provider_down", f"unreadable answer: {exc}") from exc
        return ModelReply(
            model=self.name,
            content=content,
            stop_reason=STOP_REASONS.get(str(choice.get("finish_reason")), "end_turn"),
            input_tokens=int(usage.get("prompt_tokens", 0)),
            output_tokens=int(usage.get("completion_tokens", 0)),
            latency_ms=int((time.perf_counter() - started) * 1000),
        )

    def check(self) -> str:
        """`GET models` lists this model (no tokens). Raises `ModelError`."""
        try:
            answer = self._client.get("models")
        except httpx.HTTPError as exc:
            raise ModelError(self.name, "provider_down", type(exc).__name__) from exc
        if answer.status_code != 200:
            raise ModelError(
                self.name, classify_status(answer.status_code), f"HTTP {answer.status_code}"
            )
        try:
            ids = {str(m["id"]) for m in answer.json()["data"]}
        except (ValueError, KeyError, TypeError) as exc:
            raise ModelError(self.name, "provider_down", f"unreadable answer: {exc}") from exc
        if self.name not in ids:
            raise ModelError(self.name, "unknown_model", f"not among {len(ids)} served models")
        return f"{self.name} is served"
