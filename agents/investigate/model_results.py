"""What a model sees of a tool result: bounded, with times relative to the incident.

A model's context is small and costs per token, and it reasons better about "12 min before it
opened" than about epoch milliseconds. A result over the row or byte limit is not cut silently
(a cut list reads as the whole truth): it becomes an error telling the model to narrow the
question. `raw` (queries, the evidence source's answer) is never shown: it may hold PromQL or
addresses, and the model must not see Cypher, graph names or URLs (docs/architecture.md, evidence).
"""

from __future__ import annotations

import json
from typing import Any

#: Most rows of any list a model gets in one tool result.
MAX_ROWS = 30
#: Most bytes of one tool result's JSON a model gets.
MAX_BYTES = 6_000
#: Integers in this range are epoch milliseconds (years 2001 to 2286), shown relative.
EPOCH_MS_RANGE = (1_000_000_000_000, 10_000_000_000_000)


def relative(at_ms: int, opened_ms: int) -> str:
    """`at_ms` (ms UTC) said relative to the incident's opening `opened_ms` (ms UTC):
    "12 min before it opened", "at its opening", "2 h 5 min after it opened", "40 s before"."""
    delta_s = round((at_ms - opened_ms) / 1000)
    if delta_s == 0:
        return "at its opening"
    seconds = abs(delta_s)
    if seconds < 60:
        size = f"{seconds} s"
    elif seconds < 3600:
        size = f"{seconds // 60} min"
    elif seconds < 86_400:
        size = f"{seconds // 3600} h {seconds % 3600 // 60} min"
    else:
        size = f"{seconds // 86_400} d {seconds % 86_400 // 3600} h"
    return f"{size} {'before' if delta_s < 0 else 'after'} it opened"


def with_relative_times(value: Any, opened_ms: int) -> Any:
    """`value` (JSON-like) with every epoch-ms integer replaced by `relative(...)`."""
    if isinstance(value, dict):
        return {k: with_relative_times(v, opened_ms) for k, v in value.items()}
    if isinstance(value, list):
        return [with_relative_times(v, opened_ms) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        low, high = EPOCH_MS_RANGE
        if low <= value < high:
            return relative(value, opened_ms)
    return value


def _longest_list(value: Any) -> int:
    if isinstance(value, list):
        return max([len(value), *(_longest_list(v) for v in value)])
    if isinstance(value, dict):
        return max([0, *(_longest_list(v) for v in value.values())])
    return 0


def for_model(result: dict[str, Any], opened_ms: int) -> tuple[str, bool]:
    """A tool result (`ToolResult` as a dict: status, data, raw, detail) as the model sees it:
    `(JSON text of {status, detail, data}, is_error)`. Over `MAX_ROWS` rows in a list or
    `MAX_BYTES` bytes, it is an error asking for a narrower question."""
    shown = {
        "status": result.get("status"),
        "detail": result.get("detail", ""),
        "data": with_relative_times(result.get("data"), opened_ms),
    }
    text = json.dumps(shown, ensure_ascii=False, sort_keys=True)
    rows = _longest_list(shown["data"])
    if rows > MAX_ROWS or len(text.encode()) > MAX_BYTES:
        refusal = {
            "status": "error",
            "detail": (
                f"result too large ({rows} rows, {len(text.encode())} bytes; the limits are "
                f"{MAX_ROWS} rows and {MAX_BYTES} bytes): ask a narrower question (fewer "
                "components, fewer hops, a shorter lookback)"
            ),
        }
        return json.dumps(refusal, sort_keys=True), True
    return text, shown["status"] == "error"
