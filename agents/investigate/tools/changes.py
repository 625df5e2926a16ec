"""Change tools: deploys and merged PRs near the components, shortly before the incident."""

from __future__ import annotations

from pydantic import Field

from agents.investigate.tools import prefetch
from agents.investigate.tools.base import Tool, ToolContext, ToolInput, ToolResult, rows_result

#: How long before the incident opened a change still counts as recent (ms): 2 h.
CHANGE_LOOKBACK_MS = 2 * 60 * 60 * 1000
#: What finding no change says while no change was ever recorded (no deploy source, no GitHub
#: webhook): as the ticket says it (`adapters/github/markdown.py`).
NO_CHANGE_SOURCE = "no change source has recorded a deploy or merged pull request"
NOT_CHECKED = f"recent changes not checked: {NO_CHANGE_SOURCE}"


class ChangesInput(ToolInput):
    """Components to look at, and how far back from the incident's start."""

    components: list[str] = Field(description="component names")
    lookback_ms: int = Field(
        CHANGE_LOOKBACK_MS, ge=0, le=7 * 24 * 3600 * 1000,
        description="how long before the incident's start (ms)",
    )  # fmt: skip


def recent_changes(ctx: ToolContext, args: ChangesInput) -> ToolResult:
    """Changes (deploy, pr) that MODIFIES one of the components in
    [opened - lookback, opened] (alert time, so a replay answers the same).

    `data`: rows `{id, component, kind, ref, at (ms UTC), author}`, newest first. None found
    while no change was ever recorded (`ToolContext.change_source`) is `no_data` saying so:
    nothing was measured, which is not "nothing changed".
    """
    since, until = ctx.opened_ms - args.lookback_ms, ctx.opened_ms
    window = {"components": args.components, "since": since, "until": until}
    rows = prefetch.recent_changes(ctx.prefetched, args.components, since, until)
    if rows is None:
        rows = ctx.graph.rows("recent_changes", window) if args.components else []
    if not rows and not ctx.change_source:
        return ToolResult(status="no_data", data=[], raw=window, detail=NOT_CHECKED)
    return rows_result(rows, "recent changes", raw=window)


TOOLS = (
    Tool(
        "recent_changes",
        "Deploys and merged PRs on the given components shortly before the incident started "
        "(default: 2 hours). A fresh change on a suspect is strong evidence.",
        ChangesInput,
        recent_changes,
        lambda ctx, a: list(a.components),
    ),
)
