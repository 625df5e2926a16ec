"""Model calls and tokens per incident on the bundled faults: `python -m bench.model_calls`.

Runs the demo (the 10 OpenTelemetry Demo faults, embedded FalkorDB in a temporary folder) with
the model planner pointed at the local Messages API stand-in (tests/anthropic_api.py), once
per `BLAST_PLANNER` mode, and prints per mode: incidents, incidents that asked a model, model
calls, input and output tokens (the stand-in counts 4 characters a token: the request body as
sent, so the figures follow what leaves the machine), and the demo's score.

The scripted model works like a careful investigator: it walks the coverage from the
alerting components, looks for recent changes on the best candidates, then submits the
candidate that explains the most alerting components (inconclusive when two tie).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from gateway.cli.demo import run_demo
from gateway.settings import Settings
from tests.anthropic_api import KEY, AnthropicAPI, Error, Reply, model_turns, tool_use


def _walk_rows(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of the last `coverage_walk` result in the conversation."""
    ids = {
        b["id"] for m in body["messages"] if m["role"] == "assistant"
        for b in m["content"] if b.get("type") == "tool_use" and b["name"] == "coverage_walk"
    }  # fmt: skip
    rows: list[dict[str, Any]] = []
    for m in body["messages"]:
        if m["role"] == "user" and isinstance(m["content"], list):
            for b in m["content"]:
                if b.get("type") == "tool_result" and b["tool_use_id"] in ids:
                    rows = json.loads(b["content"]).get("data") or []
    return rows


def brain(body: dict[str, Any]) -> Reply | Error:
    """The scripted model (module docstring)."""
    turns = model_turns(body)
    forced = body.get("tool_choice", {}).get("type") == "tool"
    if turns == 0 and not forced:
        return tool_use("coverage_walk", {}, turns)
    rows = _walk_rows(body)
    best = [r for r in rows if rows and len(r["covers"]) == len(rows[0]["covers"])]
    if turns == 1 and best and not forced:
        return tool_use("recent_changes", {"components": [r["name"] for r in best[:5]]}, turns)
    near = [r for r in best if r["distance"] == best[0]["distance"]] if best else []
    cause = near[0]["name"] if len(near) == 1 else None
    answer = {"root_cause": cause, "candidates": [r["name"] for r in near[:5]],
              "confidence": 0.7 if cause else 0.3,
              "summary": "The candidate that explains the most alerting components."}  # fmt: skip
    return tool_use("submit_finding", answer, turns)


def measure(mode: str, api: AnthropicAPI) -> dict[str, Any]:
    """One demo run with `BLAST_PLANNER=mode`; the stand-in's counts for it."""
    api.calls.clear()
    with tempfile.TemporaryDirectory(prefix="blast-model-") as folder:
        settings = Settings.model_validate({
            "data_dir": Path(folder), "port": 0, "workers": 2, "planner": mode,
            "anthropic_api_key": SecretStr(KEY), "anthropic_base_url": api.base_url,
            "models": ["claude-haiku-5-5", "claude-sonnet-5-5"],
        })  # fmt: skip
        result = run_demo(settings)
    answered = api.answered()
    conversations = sum(1 for c in answered if len(c.body["messages"]) == 1)
    return {
        "mode": mode, "incidents": sum(r["incidents"] for r in result["scenarios"]),
        "asked": conversations, "calls": len(answered),
        "input_tokens": sum(c.input_tokens for c in answered),
        "output_tokens": sum(c.output_tokens for c in answered),
        "correct": f"{result['correct']}/{result['total']}",
    }  # fmt: skip


def main() -> None:
    """Run both modes and print one table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default="model-when-unsure,model")
    args = parser.parse_args()
    api = AnthropicAPI(brain=brain)
    try:
        rows = [measure(mode, api) for mode in args.modes.split(",")]
    finally:
        api.close()
    print("mode               incidents  asked a model  model calls  calls/asked  "
          "tokens in/out per asked  score")  # fmt: skip
    for r in rows:
        asked = max(r["asked"], 1)
        print(f"{r['mode']:<18} {r['incidents']:>9}  {r['asked']:>13}  {r['calls']:>11}  "
              f"{r['calls'] / asked:>11.1f}  {r['input_tokens'] // asked:>12} / "
              f"{r['output_tokens'] // asked:<9}  {r['correct']}")  # fmt: skip


if __name__ == "__main__":
    main()
