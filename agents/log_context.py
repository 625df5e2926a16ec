"""Ids that say what a log line is about (`tenant`, `incident_id`, `task_id`), attached to a
block of code with `log_context` and read by the log formatters (gateway/logs.py)."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

#: Ids that identify what a log line is about, in the order they appear in a JSON line.
CONTEXT_KEYS = ("tenant", "incident_id", "task_id")

_context: contextvars.ContextVar[tuple[tuple[str, str], ...]] = contextvars.ContextVar(
    "blast_radius_log_context", default=()
)


@contextlib.contextmanager
def log_context(**ids: str | None) -> Iterator[None]:
    """Attach ids (`tenant`, `incident_id`, `task_id`) to every line logged inside the block,
    in this thread or task only (a `ContextVar`). None values are left out."""
    merged = dict(_context.get()) | {k: v for k, v in ids.items() if v is not None}
    token = _context.set(tuple(merged.items()))
    try:
        yield
    finally:
        _context.reset(token)


def current_context() -> dict[str, str]:
    """The ids attached by the enclosing `log_context` blocks of this thread or task."""
    return dict(_context.get())
