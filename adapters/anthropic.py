"""Claude through the official `anthropic` SDK (Messages API, non-streaming, tools).

The SDK's retries are off (`max_retries=0`): a failure is classified once
(`adapters.models.classify_status`) and the `ModelChain` cools the model down instead of
looping. Source for the request and answer shapes: Anthropic Messages API
(`POST /v1/messages`; answer `{content, stop_reason, usage: {input_tokens, output_tokens}}`).
"""

from __future__ import annotations

import time
from typing import Any

import anthropic
from pydantic import SecretStr

from adapters.models import ModelError, ModelReply, classify_status, retry_after_s


class AnthropicModel:
    """One Claude model (`model`, e.g. a Haiku or a Sonnet model id) behind `base_url`
    (`ANTHROPIC_BASE_URL`: a proxy or gateway; None = the SDK's default, api.anthropic.com).

    `timeout_s`: the whole call's limit (s); a timeout is `provider_down`.
    """

    def __init__(
        self,
        api_key: SecretStr,
        model: str,
        base_url: str | None = None,
        timeout_s: float = 60.0,
    ) -> None:
        self.name = model
        self._client = anthropic.Anthropic(
            api_key=api_key.get_secret_value(),
            base_url=base_url,
            timeout=timeout_s,
            max_retries=0,
        )

    def create(
        self,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        tool_choice: dict[str, Any],
        max_tokens: int,
    ) -> ModelReply:
        """One `messages.create` call. Raises `ModelError` (kind by HTTP status; a connection
        failure or timeout is `provider_down`)."""
        started = time.perf_counter()
        try:
            message = self._client.messages.create(  # type: ignore[call-overload]
                model=self.name,
                max_tokens=max_tokens,
                system=system,
                messages=messages,
                tools=tools,
                tool_choice=tool_choice,
            )
        except anthropic.APIError as exc:
            raise self._error(exc) from exc
        return ModelReply(
            model=self.name,
            content=[block.model_dump(exclude_none=True) for block in message.content],
            stop_reason=str(message.stop_reason or "end_turn"),
            input_tokens=message.usage.input_tokens,
            output_tokens=message.usage.output_tokens,
            latency_ms=int((time.perf_counter() - started) * 1000),
        )

    def check(self) -> str:
        """`GET /v1/models/{model}`: the key is accepted and the model exists (no tokens).
        Raises `ModelError`."""
        try:
            info = self._client.models.retrieve(self.name)
        except anthropic.APIError as exc:
            raise self._error(exc) from exc
        return f"{self.name} is available ({info.display_name})"

    def _error(self, exc: anthropic.APIError) -> ModelError:
        """The SDK's error as a `ModelError`: kind by HTTP status; a connection failure or a
        timeout is `provider_down`."""
        if isinstance(exc, anthropic.APIStatusError):
            detail = _error_message(exc.body) or f"HTTP {exc.status_code}"
            kind = classify_status(exc.status_code)
            return ModelError(self.name, kind, detail, retry_after_s(exc.response.headers))
        return ModelError(self.name, "provider_down", type(exc).__name__)


def _error_message(body: object) -> str:
    """`error.message` of an Anthropic error body `{"type": "error", "error": {type, message}}`."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            return str(error.get("message", ""))[:300]
    return ""
