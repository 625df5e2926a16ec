"""People tools: who owns a component and who is on call for it now."""

from __future__ import annotations

from pydantic import Field

from agents.investigate.tools.base import Tool, ToolContext, ToolInput, ToolResult, rows_result


class OwnersInput(ToolInput):
    """Components whose owners and on-call to look up."""

    components: list[str] = Field(min_length=1, description="component names")


def owners_oncall(ctx: ToolContext, args: OwnersInput) -> ToolResult:
    """The owning team of each component and the person on call now (database clock).

    `data`: rows `{component, team, person (None when nobody is on call), shift_ends_at}`;
    contact details (email, Slack ids) are left out: a planner needs names, not addresses.
    """
    rows = [
        {k: row[k] for k in ("component", "team", "person", "shift_ends_at")}
        for row in ctx.graph.rows("response_context", {"components": args.components})
    ]
    return rows_result(rows, "owners")


TOOLS = (
    Tool(
        "owners_oncall",
        "Which team owns each component and who of that team is on call right now.",
        OwnersInput,
        owners_oncall,
        lambda ctx, a: list(a.components),
    ),
)
