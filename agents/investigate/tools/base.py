"""The shape every investigation tool shares: an input model, a context, a result value.

Source: docs/architecture.md, evidence and HolmesGPT's tool results (success / error / no data as
values).
A tool never raises for missing or unreachable evidence: it answers `no_data` or `error`,
and the planner decides what that means. Only coordination errors (`LeaseLost`,
`GraphUnavailable`) propagate, because they stop the task, not the reasoning.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from adapters.falkordb import TenantGraph
from adapters.prometheus import Prometheus
from agents.investigate import similar
from agents.investigate.tools.prefetch import Prefetched

#: At most this many rows of a tool's `data` list reach a planner (a model's context is small).
MAX_ROWS = 50


class ToolResult(BaseModel):
    """What one tool call answered. A value, never an exception.

    `status`: `ok` (data holds an answer), `no_data` (the source answered, nothing matched),
    `error` (the source failed or the input was invalid; `detail` says why).
    `data`: what a planner reads (JSON-serialisable, at most `MAX_ROWS` rows per list).
    `raw`: the raw evidence (query and answer) for the page and the ticket.
    `detail`: one human line ("calls into valkey-cart fail 41 %").
    """

    model_config = ConfigDict(extra="forbid")

    status: Literal["ok", "no_data", "error"]
    data: Any = None
    raw: Any = None
    detail: str = ""


class ToolInput(BaseModel):
    """Base of every tool's input model: unknown fields are refused (a model's typo is an
    `error` result that names the field, not a silently ignored argument)."""

    model_config = ConfigDict(extra="forbid")


@dataclass
class ToolContext:
    """What tools may look at for one incident. No graph name and no URL is exposed to a model:
    tools receive this object, a model only sees tool names, descriptions and input schemas.

    `alerts`: the incident's alerts as dicts (key, alertname, component, starts_at_ms, status,
    summary, labels); `alerting`: the components they are on, in order of first alert;
    `opened_ms`: when the incident started (its first alert, ms since epoch UTC);
    `prometheus`: the evidence source, None when `PROMETHEUS_URL` is not set.
    """

    graph: TenantGraph
    alerts: list[dict[str, Any]]
    alerting: list[str]
    opened_ms: int
    prometheus: Prometheus | None = None
    #: Per-run memo of label value -> component (metric labels map like alert labels).
    names: dict[str, str | None] = field(default_factory=dict)
    #: Components the world marks as clients (traffic sources), among those mapped so far.
    clients: set[str] = field(default_factory=set)
    #: Graph rows read ahead for this investigation (`agents.investigate.tools.prefetch`), or None.
    prefetched: Prefetched | None = None
    #: What memory the planners may use (`BLAST_MEMORY`): `graph` (playbooks, past incidents
    #: and similar incidents), `text` (similar incidents only), `none`.
    memory: Literal["graph", "text", "none"] = "graph"
    #: The incident under investigation, None when the context serves no incident (a
    #: remediation's verification): recall leaves out the playbooks learned from it.
    incident_id: str | None = None
    #: The similar incidents this run already found (`similar_incidents` rows), None when it
    #: did not look (`BLAST_MEMORY=none`): the model planner gets them in its first turn.
    similar: list[dict[str, Any]] | None = None
    #: Components whose own calls the service graph measured in this run (`edge_health`,
    #: window or baseline): what they call is traced, so an edge of theirs known only as
    #: compose start order (`depends_on`) that no measured call follows is no call.
    calling: set[str] = field(default_factory=set)
    #: Components the service graph measured serving calls (window or baseline) that made no
    #: traced call of their own, where it traces datastore calls near the incident: they call
    #: nothing on their request path (`investigator.start_order_edge`).
    serving_only: set[str] = field(default_factory=set)
    #: Whether the live evidence measured calls near the incident and blamed none of them
    #: (`Investigator._evidence`: nothing failing or slowed where a series exists): a fault
    #: in what a component answers (the wrong content at status 200) shows in no call metric,
    #: so a remembered cause whose calls read as usual is no more refuted than any other.
    quiet: bool = False

    @cached_property
    def change_source(self) -> bool:
        """Whether any change (deploy, merged pull request) was ever recorded in the graph
        (`change_source.cypher`, or the read ahead): without a change source, finding no recent
        change measured nothing. Read once per run."""
        if self.prefetched is not None:
            return self.prefetched.change_source
        row = self.graph.one("change_source", {})
        return bool(row and row["change_source"])

    @cached_property
    def text_vector(self) -> list[float]:
        """The incident's hashed bag of words (`similar.text_vector` of its alerts' text), for
        the similar-incident lookup and the finding's write; worked out once per run."""
        return similar.text_vector(similar.incident_text(self.alerts))


def component_names(ctx: ToolContext, values: list[str]) -> dict[str, str | None]:
    """Map label values (of metrics, or of alerts naming a peer) to component names (None when
    nothing matches), memoised in `ctx.names`; traffic-source components land in `ctx.clients`.
    """
    wanted = {v: _variants(v) for v in values if v not in ctx.names}
    every = sorted({n for names in wanted.values() for n in names})
    canonical: dict[str, str] = {}
    if every:
        for row in ctx.graph.rows("metric_components", {"candidates": every}):
            canonical[row["name"]] = row["name"]
            if row["client"]:
                ctx.clients.add(row["name"])
            for alias in row["aliases"] or []:
                canonical.setdefault(alias, row["name"])
    for value, names in wanted.items():
        ctx.names[value] = next((canonical[n] for n in names if n in canonical), None)
    return {v: ctx.names.get(v) for v in values}


def _variants(value: str) -> list[str]:
    """`ns/cart.shop.svc:8080` -> [itself, `cart.shop.svc:8080`, `cart.shop.svc`, `cart`]."""
    out = [value]
    if "/" in value:
        out.append(value.rsplit("/", 1)[1])
    if re.search(r":\d+$", out[-1]):
        out.append(out[-1].rsplit(":", 1)[0])
    if "." in out[-1] and not re.fullmatch(r"[\d.]+", out[-1]):
        out.append(out[-1].split(".", 1)[0])
    return list(dict.fromkeys(v for v in out if v))


def _touch_alerting(ctx: ToolContext, args: BaseModel) -> list[str]:
    """Default TOUCHED set: the incident's alerting components."""
    return list(ctx.alerting)


@dataclass(frozen=True)
class Tool:
    """One investigation tool.

    `name`: stable id (also the Step's `tool`); `description`: for a model, what it answers and
    when to use it; `input_model`: pydantic model of its arguments (its JSON schema is what a
    model sees); `run(ctx, args)`: the function, returning a `ToolResult`; `touches(ctx, args)`:
    the component names the call looks at (the Step's TOUCHED edges); `outside`: the call asks
    an outside system (Prometheus), so its step is checkpointed at once, never repeated; a
    graph-only call's checkpoint may wait for the next write (`TaskRun.step(deferred=True)`).
    `needs`: what the tool cannot answer without (`"prometheus"`: `PROMETHEUS_URL`;
    `"graph_memory"`, `"text_memory"`: the memory `BLAST_MEMORY` allows), so a model is offered
    only the tools that can work here, as HolmesGPT's toolsets declare prerequisites.
    """

    name: str
    description: str
    input_model: type[BaseModel]
    run: Callable[[ToolContext, Any], ToolResult]
    touches: Callable[[ToolContext, Any], list[str]] = _touch_alerting
    outside: bool = False
    needs: frozenset[str] = frozenset()

    def met(self, ctx: ToolContext) -> frozenset[str]:
        """Which of the tool's needs this investigation meets: `prometheus` (a Prometheus is
        set), `graph_memory` (`BLAST_MEMORY=graph`), `text_memory` (any memory but none)."""
        there = {
            "prometheus": ctx.prometheus is not None,
            "graph_memory": ctx.memory == "graph",
            "text_memory": ctx.memory != "none",
        }
        return frozenset(need for need in self.needs if there[need])

    def usable(self, ctx: ToolContext) -> bool:
        """Whether what the tool needs is there for this investigation."""
        return self.met(ctx) == self.needs

    def schema(self) -> dict[str, Any]:
        """The tool as a model sees it: `{name, description, input_schema}` (JSON schema)."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_model.model_json_schema(),
        }


def rows_result(
    rows: list[dict[str, Any]], what: str, raw: Any = None, limit: int = MAX_ROWS
) -> ToolResult:
    """`ok` with the rows (at most `limit`), or `no_data` when there are none."""
    if not rows:
        return ToolResult(status="no_data", data=[], raw=raw, detail=f"no {what}")
    more = f" (first {limit} of {len(rows)})" if len(rows) > limit else ""
    return ToolResult(status="ok", data=rows[:limit], raw=raw, detail=f"{len(rows)} {what}{more}")
