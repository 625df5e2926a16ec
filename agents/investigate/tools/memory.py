"""Memory tools: past incidents on a component, the playbooks memory recalls, and incidents
whose alerts read alike (`agents.investigate.similar`).

Which a planner is offered depends on `BLAST_MEMORY` (`ToolContext.memory`, `Tool.needs`):
`graph` offers all three, `text` only `similar_incidents`, `none` none."""

from __future__ import annotations

from pydantic import Field

from agents.investigate import similar
from agents.investigate.recall import rank, recall
from agents.investigate.tools import prefetch
from agents.investigate.tools.base import Tool, ToolContext, ToolInput, ToolResult, rows_result
from agents.investigate.tools.graph import ComponentInput, NoInput


def past_incidents(ctx: ToolContext, args: ComponentInput) -> ToolResult:
    """Earlier incidents (before this one started) whose root cause was the component.

    `data`: rows `{id, opened_at (ms UTC), status, summary, confidence, planner, verdicts}`,
    newest first, at most 10.
    """
    rows = ctx.graph.rows("past_incidents", {"component": args.component, "before": ctx.opened_ms})
    return rows_result(rows, f"past incidents caused by {args.component}")


class RecallInput(ToolInput):
    """Recall near these components (default: the incident's alerting components)."""

    components: list[str] | None = Field(
        None, description="omit for the incident's alerting components"
    )


def playbooks_recalled(ctx: ToolContext, args: RecallInput) -> ToolResult:
    """Playbooks pinned within two hops of the components, or learned on a component of the
    same tech (weight 1/2), best first (`agents.investigate.recall`), but those learned from
    the incident under investigation (`ctx.incident_id`).

    `data`: rows `{id, title, failure_kind, trust, checks, candidate, pinned_to, path, hops,
    weight, score}`.
    """
    near = args.components if args.components is not None else ctx.alerting
    if not near:
        return rows_result([], "playbooks recalled")
    rows = prefetch.recalled(ctx.prefetched, near)
    # the walk read ahead from the alerting components counts reach beyond recall's two hops
    reach = prefetch.reach(ctx.prefetched) if args.components is None else {}
    # a playbook learned from this very incident is left out: people's verdict on it stands
    mine = ctx.incident_id
    found = recall(ctx.graph, near, reach, mine) if rows is None else rank(rows, reach, mine)
    return rows_result(found, "playbooks recalled")


def similar_incidents(ctx: ToolContext, args: NoInput) -> ToolResult:
    """Earlier incidents whose alerts read like this one's (a hashed bag of words of alert
    names, labels and summaries, nearest on the vector index), re-ranked with the graph
    (impacted components in common, a confirmed cause this incident's alerting components reach).

    `data`: at most 5 rows `{id, at (ms UTC), root_cause, confirmed_by, fixed_by, text, score}`,
    best first; `root_cause` is the cause an engineer confirmed or named when there is one. An
    earlier incident that shares nothing with this one (no word, no component, no reachable
    cause: `similar.ALIKE`) is none: `no_data` when only such ones are near.
    """
    vector = ctx.text_vector
    rows = prefetch.similar_rows(ctx.prefetched, vector, ctx.alerting, ctx.opened_ms)
    if rows is None:
        found = similar.similar(ctx.graph, "", vector, ctx.alerting, ctx.opened_ms)
    else:
        found = similar.rank(rows, ctx.alerting)
    return rows_result(found, "similar incidents")


TOOLS = (
    Tool(
        "past_incidents",
        "Earlier incidents whose root cause was this component, with their verdicts: has it "
        "failed like this before?",
        ComponentInput,
        past_incidents,
        lambda ctx, a: [a.component],
        needs=frozenset({"graph_memory"}),
    ),
    Tool(
        "recall_playbooks",
        "Playbooks memory holds near the alerting components (pinned within two hops, or "
        "learned on a component of the same tech), best first, each with its checks and trust.",
        RecallInput,
        playbooks_recalled,
        lambda ctx, a: list(a.components if a.components is not None else ctx.alerting),
        needs=frozenset({"graph_memory"}),
    ),
    Tool(
        "similar_incidents",
        "Earlier incidents whose alerts read like this one's, with the cause an engineer "
        "confirmed or named, who confirmed it and who fixed it, best first.",
        NoInput,
        similar_incidents,
        lambda ctx, a: list(ctx.alerting),
        needs=frozenset({"text_memory"}),
    ),
)
