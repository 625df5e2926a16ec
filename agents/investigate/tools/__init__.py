"""Investigation tools: typed, one module per family, each call a checkpointed Step.

The rules planner and a model planner use exactly these tools (docs/architecture.md, "Evidence
and tools"). A model sees `TOOLS[name].schema()` of the tools usable here (`Tool.needs`) (name,
description, JSON schema of the input) and never Cypher, graph
names or URLs; `call` validates its arguments, so a bad call is an `error` result, not a crash.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from adapters.notify import AdapterError
from agents.investigate.tools import changes, evidence, graph, memory, people
from agents.investigate.tools.base import Tool, ToolContext, ToolResult
from agents.tasks.coordination import TaskRun

__all__ = ["TOOLS", "Tool", "ToolContext", "ToolResult", "call"]

#: What a tool's need (`Tool.needs`) lacks when it is not met, in the words of its setting.
MISSING = {
    "prometheus": "a Prometheus: PROMETHEUS_URL is not set",
    "graph_memory": "graph memory: BLAST_MEMORY is not graph",
    "text_memory": "memory: BLAST_MEMORY is none",
}

#: Every tool by name.
TOOLS: dict[str, Tool] = {
    tool.name: tool
    for family in (graph, changes, people, memory, evidence)
    for tool in family.TOOLS
}


def call(task: TaskRun, ctx: ToolContext, name: str, args: dict[str, Any]) -> ToolResult:
    """Run tool `name` with `args` as a checkpointed Step (`task.step`) with TOUCHED edges to the
    components it looks at, and return its result.

    An unknown tool or arguments that fail the tool's input model give an `error` result naming
    the problem (also checkpointed, so the record shows what was asked). An evidence source that
    fails (`AdapterError`) is an `error` result too. Raises only what stops the task
    (`LeaseLost`, `GraphUnavailable`). A resumed task gets the stored result without a re-run.
    """
    tool = TOOLS.get(name)
    if tool is None:
        known = ", ".join(sorted(TOOLS))
        failed = ToolResult(status="error", detail=f"unknown tool {name!r}; tools: {known}")
        return _stored(task.step(name, args, failed.model_dump, deferred=True))
    if not tool.usable(ctx):
        missing = "; ".join(MISSING[need] for need in sorted(tool.needs - tool.met(ctx)))
        failed = ToolResult(status="error", detail=f"{name} needs {missing}")
        return _stored(task.step(name, args, failed.model_dump, deferred=True))
    try:
        parsed = tool.input_model.model_validate(args)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}" for e in exc.errors()
        )
        failed = ToolResult(status="error", detail=f"invalid arguments for {name}: {problems}")
        return _stored(task.step(name, args, failed.model_dump, deferred=True))

    def run() -> dict[str, Any]:
        try:
            result = tool.run(ctx, parsed)
        except AdapterError as exc:
            result = ToolResult(status="error", detail=f"{name}: {exc}")
        return result.model_dump(mode="json")

    touched = [c for c in tool.touches(ctx, parsed) if c]
    deferred = not tool.outside  # a graph read may be checkpointed with the next write
    return _stored(
        task.step(name, parsed.model_dump(mode="json"), run, touched=touched, deferred=deferred)
    )


def _stored(value: Any) -> ToolResult:
    """A step's stored result back as a `ToolResult`."""
    return ToolResult.model_validate(value)
