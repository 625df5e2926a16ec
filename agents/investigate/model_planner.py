"""The model planner: a language model investigates over the same typed tools as the rules, when
memory and the rules leave an incident unsure (docs/architecture.md: the loop; evidence and tools).

- **When**: `BLAST_PLANNER=model-when-unsure` (the default with a model configured) runs it
  only when the rules' finding is inconclusive or under `BLAST_MODEL_CONFIDENCE`; `model` runs
  it after every rules finding. A finding memory settled (a playbook whose checks all held)
  never calls a model.
- **Typed tools only**: the model gets `agents.investigate.tools.TOOLS` as JSON-schema tools plus
  `submit_finding`. It cannot run Cypher, choose a graph, fetch a URL or act. Results are
  bounded and show times relative to the incident (`agents.investigate.model_results`).
- **Step budget**: after `max_steps - 1` calls only `submit_finding` is offered (and forced),
  so a long or resumed run always ends with an answer.
- **Graph second opinion**: a submitted cause is checked against the coverage walk again; when
  another candidate explains more alerting components, the answer goes back once with the
  numbers. The next answer is accepted; keeping the cause is recorded as "model overrode the
  graph", with both sides on the finding. A cause no alerting component reaches is never
  accepted (no path, no finding).
- **Checkpoints**: every model answer and every tool result is a Step. A resumed task (after a
  pause or a lost lease) rebuilds the conversation from the stored Steps: no model call and no
  tool call is made twice.
- **Fallback and pause**: `adapters.models.ModelChain` tries the models in order; when every
  one is cooling down, the task is paused (`TaskRun.pause`) until the first is back, at most
  `max_pauses` times. A model that cannot answer (bad key, bad request) leaves the rules'
  finding standing: paging never waits on a model that is not coming.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from adapters.models import AllModelsCooling, ModelChain, ModelError, ModelReply
from agents.investigate import prompts, tools, weigh
from agents.investigate.model_results import for_model, relative, with_relative_times
from agents.investigate.tools import ToolContext
from agents.tasks.coordination import TaskRun

log = logging.getLogger(__name__)

#: The evidence tool the second opinion asks about calls into the candidates.
EDGE_TOOL = "edge_health"
#: How much larger (0-1) another candidate's incoming failure ratio must be to be stronger.
EDGE_MARGIN = 0.1
#: The most confidence a model's cause keeps when no measurement separates it from another
#: candidate that explains as many alerting components: under 0.5, so a guess is never a
#: confident finding (issue "say only what was measured"; docs/architecture.md, evidence).
UNSEPARATED_CONFIDENCE = 0.4
#: The final-answer tool's name (not one of `agents.investigate.tools.TOOLS`: it ends the loop).
SUBMIT = "submit_finding"
PlannerMode = Literal["rules", "model-when-unsure", "model"]


class SubmitFinding(BaseModel):
    """The model's answer: a root cause (a component name, or null when the evidence cannot
    separate the candidates), the candidates it weighed, its confidence (0-1) and why."""

    model_config = ConfigDict(extra="forbid")

    root_cause: str | None = Field(
        description="the component that caused the incident, exactly as the tools name it; "
        "null when the evidence cannot decide"
    )
    candidates: list[str] = Field(
        default_factory=list, max_length=10, description="the components still in question"
    )
    confidence: float = Field(ge=0, le=1, description="0 to 1")
    summary: str = Field(
        min_length=1, max_length=1000, description="the evidence for the answer, in two or "
        "three sentences, and what separated the cause from the runner-up"
    )  # fmt: skip


SUBMIT_TOOL = {
    "name": SUBMIT,
    "description": "Submit the finding (root cause or inconclusive) and end the investigation.",
    "input_schema": SubmitFinding.model_json_schema(),
}


class Paused(Exception):
    """The task was paused (every model cooling down) and its lease released: stop, write
    nothing; a worker resumes it at `resume_at_ms` (ms UTC)."""

    def __init__(self, resume_at_ms: int) -> None:
        super().__init__(f"paused until {resume_at_ms} ms")
        self.resume_at_ms = resume_at_ms


@dataclass
class ModelFinding:
    """What the model concluded, for the Finding. `second_opinion`: both sides' numbers and the
    `outcome` (`agreed`, `model took the graph's answer`, `model overrode the graph`,
    `model changed its answer`); None when the model submitted no cause."""

    root_cause: str | None
    candidates: list[str]
    confidence: float
    summary: str
    model: str
    second_opinion: dict[str, Any] | None
    calls: int
    input_tokens: int
    output_tokens: int
    reasoning: str = ""  # the model's own words: what separated its cause from the runner-up


@dataclass
class _Run:
    """One conversation's state."""

    messages: list[dict[str, Any]]
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    model: str = ""
    pushed_back: dict[str, Any] | None = None


class ModelPlanner:
    """Runs a model over the investigation tools for one task (module docstring).

    `chain`: the models; `mode`: `BLAST_PLANNER`; `max_steps`: model calls before only the
    final-answer tool is offered; `confidence`: under it a rules finding is unsure;
    `max_tokens`: output tokens per call; `max_pauses`: pauses per task before the rules'
    finding stands.
    """

    def __init__(
        self,
        chain: ModelChain,
        mode: PlannerMode = "model-when-unsure",
        max_steps: int = 8,
        confidence: float = 0.6,
        max_tokens: int = 1024,
        max_pauses: int = 3,
    ) -> None:
        self.chain = chain
        self.mode = mode
        self.max_steps = max_steps
        self.confidence = confidence
        self.max_tokens = max_tokens
        self.max_pauses = max_pauses

    def wanted(self, planner: str, root_cause: str | None, confidence: float) -> bool:
        """Whether the model runs after `planner` (`memory` or `rules`) found `root_cause`
        (None: inconclusive) with `confidence`. Memory's findings never need one."""
        if self.mode == "rules" or planner == "memory":
            return False
        return self.mode == "model" or root_cause is None or confidence < self.confidence

    def run(self, task: TaskRun, ctx: ToolContext, rules: dict[str, Any]) -> ModelFinding | None:
        """Investigate with the model; None when no model could answer for good (the rules'
        finding stands; the reason is logged).

        `rules`: the finding so far `{planner, root_cause, candidates, confidence, summary,
        ruled_out}`. Raises `Paused` after pausing the task, `LeaseLost`.
        """
        state = _Run([{"role": "user", "content": self._brief(ctx, rules)}])
        system = prompts.load("investigate")
        usable = [t.schema() for t in tools.TOOLS.values() if t.usable(ctx)]
        offered = [*usable, SUBMIT_TOOL]
        limit = self.max_steps + 1  # one more call for the answer sent back by the graph
        while state.calls < limit:
            final_only = state.calls >= self.max_steps - 1
            tool_list = [SUBMIT_TOOL] if final_only else offered
            choice = {"type": "tool", "name": SUBMIT} if final_only else {"type": "auto"}
            reply = self._call(task, state, system, tool_list, choice)
            if reply is None:
                return None
            state.messages.append({"role": "assistant", "content": reply.content})
            uses = [b for b in reply.content if b.get("type") == "tool_use"]
            if not uses:
                state.messages.append({"role": "user", "content": prompts.load("need_answer")})
                continue
            results: list[dict[str, Any]] = []
            for use in uses:
                if use["name"] == SUBMIT:
                    verdict, answer, text = self._submitted(task, ctx, state, use["input"])
                    if verdict == "accepted":
                        return answer
                    if verdict == "rejected":
                        return None
                    is_error = verdict == "invalid"
                else:
                    result = tools.call(task, ctx, use["name"], use.get("input") or {})
                    text, is_error = for_model(result.model_dump(mode="json"), ctx.opened_ms)
                results.append({"type": "tool_result", "tool_use_id": use["id"],
                                 "content": text, "is_error": is_error})  # fmt: skip
            turn: list[dict[str, Any]] = results
            if state.calls >= self.max_steps - 1:
                turn = [*results, {"type": "text", "text": prompts.load("final_only")}]
            state.messages.append({"role": "user", "content": turn})
        log.warning("task %s: the model gave no acceptable answer in %d calls; the rules' "
                    "finding stands", task.claim.task_id, state.calls)  # fmt: skip
        return None

    def _brief(self, ctx: ToolContext, rules: dict[str, Any]) -> str:
        """The first user turn: the alerts (times relative to the opening), the similar
        incidents memory already found (so the model need not spend a call asking) and the
        rules' view."""
        lines = [
            f"- {a.get('component') or '(no known component)'}: {a['alertname']}, "
            f"{a.get('status', 'firing')}, {relative(int(a['starts_at_ms']), ctx.opened_ms)}"
            f"{': ' + a['summary'] if a.get('summary') else ''}"
            for a in ctx.alerts
        ]
        ruled = rules.get("ruled_out") or {}
        return prompts.load(
            "incident",
            similar=_similar_section(ctx),
            alert_count=len(ctx.alerts),
            component_count=len(ctx.alerting),
            alert_lines="\n".join(lines) or "(none)",
            alerting=", ".join(ctx.alerting) or "(none)",
            planner=rules.get("planner", "rules"),
            confidence=rules.get("confidence", 0.0),
            rules_summary=rules.get("summary", ""),
            candidates=", ".join(rules.get("candidates") or []) or "(none)",
            ruled_out="; ".join(f"{k}: {v}" for k, v in sorted(ruled.items())) or "(none)",
        )

    def _call(
        self,
        task: TaskRun,
        state: _Run,
        system: str,
        tool_list: list[dict[str, Any]],
        choice: dict[str, Any],
    ) -> ModelReply | None:
        """One model call as a Step `model` (stored: the reply with model, tokens, latency and
        stop reason), or its stored reply on a resumed task. None: no model will answer."""

        def ask() -> dict[str, Any]:
            reply = self.chain.create(system, state.messages, tool_list, choice, self.max_tokens)
            tokens = task.metrics.model_tokens
            tokens.labels(model=reply.model, direction="input").inc(reply.input_tokens)
            tokens.labels(model=reply.model, direction="output").inc(reply.output_tokens)
            return reply.model_dump(mode="json")

        args = {"call": state.calls + 1, "tools": [t["name"] for t in tool_list],
                "tool_choice": choice["type"]}  # fmt: skip
        try:
            stored = task.step("model", args, ask)
        except AllModelsCooling as cooling:
            if task.pauses >= self.max_pauses:
                log.warning(
                    "task %s: every model is still cooling down after %d pauses; the rules' "
                    "finding stands", task.claim.task_id, self.max_pauses,
                )  # fmt: skip
                return None
            task.pause(cooling.resume_at_ms, str(cooling))
            task.metrics.tasks_paused.labels(kind=task.claim.kind).inc()
            log.warning("task %s: every model is cooling down; paused until %d",
                        task.claim.task_id, cooling.resume_at_ms)  # fmt: skip
            raise Paused(cooling.resume_at_ms) from cooling
        except ModelError as exc:
            log.error("task %s: the model planner cannot run (%s); the rules' finding stands",
                      task.claim.task_id, exc)  # fmt: skip
            return None
        reply = ModelReply.model_validate(stored)
        state.calls += 1
        state.input_tokens += reply.input_tokens
        state.output_tokens += reply.output_tokens
        state.model = reply.model
        return reply

    def _submitted(
        self, task: TaskRun, ctx: ToolContext, state: _Run, arguments: Any
    ) -> tuple[Literal["accepted", "rejected", "invalid", "sent back"], ModelFinding | None, str]:
        """Handle a `submit_finding` call: `(verdict, the accepted finding or None, the tool
        result text to send back)`. `rejected`: the model insists on a cause no alerting
        component reaches (the rules' finding stands)."""
        try:
            answer = SubmitFinding.model_validate(arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}" for e in exc.errors()
            )
            return "invalid", None, json.dumps({"status": "error", "detail": problems})
        if answer.root_cause is None:
            return "accepted", self._finding(state, answer, None), ""
        opinion = self._second_opinion(task, ctx, answer.root_cause)
        first = state.pushed_back
        if opinion["agrees"] and first is None:
            return "accepted", self._finding(state, answer, opinion | {"outcome": "agreed"}), ""
        if first is None:
            state.pushed_back = opinion
            return "sent back", None, self._pushback(ctx, opinion)
        if not opinion["model"]["covers"]:
            log.warning(
                "task %s: the model insists on %s, which no alerting component reaches; the "
                "rules' finding stands", task.claim.task_id, answer.root_cause,
            )  # fmt: skip
            return "rejected", None, ""
        if answer.root_cause == first["model"]["cause"]:
            outcome = "model overrode the graph"
        elif answer.root_cause == first["graph"]["cause"]:
            outcome = "model took the graph's answer"
        else:
            outcome = "model changed its answer"
        sides = first | {"final": opinion["model"], "outcome": outcome, "rivals": opinion["rivals"]}
        return "accepted", self._finding(state, answer, sides), ""

    def _second_opinion(self, task: TaskRun, ctx: ToolContext, cause: str) -> dict[str, Any]:
        """The coverage and evidence check again, as tool Steps: `{agrees, alerting, model:
        {cause, covers, fail_ratio}, graph: {cause, covers, fail_ratio}}`.

        Coverage: the `coverage_walk` tool. The graph's side is the candidate that explains
        the most alerting components (nearest first, as the walk orders them). Edge evidence,
        with Prometheus and an `edge_health` tool: the worst failure ratio of calls into each
        candidate of top coverage; among equally covering candidates, one whose incoming calls
        fail `EDGE_MARGIN` more than the model's cause's is stronger evidence.
        """
        walk = tools.call(task, ctx, "coverage_walk", {})
        rows: list[dict[str, Any]] = walk.data if isinstance(walk.data, list) else []
        by_name = {r["name"]: sorted(r["covers"]) for r in rows}
        mine = by_name.get(cause, [])
        top = [r for r in rows if len(r["covers"]) == len(rows[0]["covers"])] if rows else []
        failing, calls = self._incoming_failures(task, ctx, [cause, *(r["name"] for r in top)])
        best: dict[str, Any] = max(
            top, key=lambda r: failing.get(r["name"], 0.0), default={"name": cause, "covers": mine}
        )  # the walk's order breaks ties: max keeps the first of equals
        stronger = failing.get(best["name"], 0.0) > failing.get(cause, 0.0) + EDGE_MARGIN
        agrees = bool(mine) and len(mine) >= len(best["covers"]) and not stronger
        other: str = cause if agrees else best["name"]
        return {
            "agrees": agrees, "alerting": list(ctx.alerting),
            "rivals": self._unseparated(task, ctx, cause, [r["name"] for r in top], failing, calls),
            "model": {"cause": cause, "covers": mine, "fail_ratio": failing.get(cause)},
            "graph": {"cause": other, "covers": sorted(by_name.get(other, mine)),
                      "fail_ratio": failing.get(other)},
        }  # fmt: skip

    @staticmethod
    def _unseparated(
        task: TaskRun,
        ctx: ToolContext,
        cause: str,
        top: list[str],
        failing: dict[str, float],
        calls: set[tuple[str, str]],
    ) -> list[str]:
        """The candidates of top coverage that no measurement separates from `cause`, in the
        walk's order. Separated, as the rules separate (agents.investigate.weigh): calls into
        `cause` fail `EDGE_MARGIN` more than into the other; the other's own calls into
        `cause` fail (its trouble is `cause`'s doing); or `cause` changed shortly before the
        incident and the other did not (the `recent_changes` tool, a Step, asked only when a
        rival is left). `failing` and `calls`: `_incoming_failures`."""
        mine = failing.get(cause, 0.0)
        rivals = [
            n for n in top
            if n != cause and mine <= failing.get(n, 0.0) + EDGE_MARGIN and (n, cause) not in calls
        ]  # fmt: skip
        if not rivals:
            return []
        found = tools.call(task, ctx, "recent_changes", {"components": [cause, *rivals]})
        changed = (
            {r.get("component") for r in found.data if isinstance(r, dict)}
            if isinstance(found.data, list)
            else set()
        )
        return [n for n in rivals if n in changed or cause not in changed]

    @staticmethod
    def _incoming_failures(
        task: TaskRun, ctx: ToolContext, names: list[str]
    ) -> tuple[dict[str, float], set[tuple[str, str]]]:
        """`(component -> the worst failure ratio (0-1) of calls into it in the incident
        window, the (client, server) calls failing against their baseline (weigh.failing))`,
        from the `edge_health` tool (a Step); both empty without Prometheus or that tool."""
        if ctx.prometheus is None or EDGE_TOOL not in tools.TOOLS:
            return {}, set()
        wanted = list(dict.fromkeys(names))
        health = tools.call(task, ctx, EDGE_TOOL, {"components": wanted})
        worst: dict[str, float] = {}
        calls: set[tuple[str, str]] = set()
        for edge in health.data if isinstance(health.data, list) else []:
            server, ratio = edge.get("server"), edge.get("fail_ratio")
            if server in wanted and isinstance(ratio, int | float):
                worst[server] = max(worst.get(server, 0.0), float(ratio))
                if weigh.failing(float(ratio), edge.get("baseline_fail_ratio")):
                    calls.add((str(edge.get("client")), str(server)))
        return worst, calls

    @staticmethod
    def _pushback(ctx: ToolContext, opinion: dict[str, Any]) -> str:
        """The second opinion in words, with the numbers of both sides."""
        total = len(ctx.alerting)

        def side(who: dict[str, Any]) -> str:
            if not who["covers"]:
                said = (f"No alerting component reaches {who['cause']} along dependency edges: "
                        f"it explains 0 of {total}")  # fmt: skip
            else:
                said = (f"{who['cause']} explains {len(who['covers'])} of {total} alerting "
                        f"components ({', '.join(who['covers'])})")  # fmt: skip
            if who.get("fail_ratio") is not None:
                said += f"; calls into it fail {who['fail_ratio']:.0%}"
            return said + "."

        return prompts.load(
            "second_opinion",
            model_side=side(opinion["model"]),
            graph_side=side(opinion["graph"]),
            cause=opinion["model"]["cause"],
        )

    def _finding(
        self, state: _Run, answer: SubmitFinding, opinion: dict[str, Any] | None
    ) -> ModelFinding:
        """The accepted answer. An answer that overrode the graph keeps at most 0.5 confidence:
        confident and wrong is the worst outcome (docs/architecture.md, evidence)."""
        outcome = (opinion or {}).get("outcome", "no cause submitted")
        confidence = answer.confidence
        if outcome == "model overrode the graph":
            confidence = min(confidence, 0.5)
        rivals = (opinion or {}).get("rivals") or []
        if answer.root_cause and rivals:
            confidence = min(confidence, UNSEPARATED_CONFIDENCE)
            outcome += f"; no measurement separates it from {', '.join(rivals[:3])}"
        candidates = list(dict.fromkeys(
            ([answer.root_cause] if answer.root_cause else []) + answer.candidates
        ))  # fmt: skip
        summary = f"{answer.summary} [model {state.model}; second opinion: {outcome}]"
        return ModelFinding(
            root_cause=answer.root_cause, candidates=candidates,
            confidence=round(confidence, 2), summary=summary, model=state.model,
            second_opinion=opinion, calls=state.calls, input_tokens=state.input_tokens,
            output_tokens=state.output_tokens, reasoning=answer.summary,
        )  # fmt: skip


def _similar_section(ctx: ToolContext) -> str:
    """The brief's similar-incident lines: the rows `similar_incidents` answered this run (at
    most 5), as JSON one row a line with times relative to this incident's opening, or an
    empty string when memory did not look (`BLAST_MEMORY=none`)."""
    if ctx.similar is None:
        return ""
    rows = [
        json.dumps(with_relative_times(row, ctx.opened_ms), ensure_ascii=False, sort_keys=True)
        for row in ctx.similar
    ]
    listed = "\n".join(rows) if rows else "(none)"
    return (
        "Similar earlier incidents (alert text and graph, best first; root_cause is the cause "
        f"an engineer confirmed or named, if any):\n{listed}\n\n"
    )
