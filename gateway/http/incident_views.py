"""What the agents did on one incident, as data: its steps, its decisions and the dependency
graph around it. The web page draws exactly this, and scripts get it as JSON:

- `GET /api/v1/incidents/{id}/steps`: the checkpointed steps of its tasks, in order, paged
  (`limit`, `offset`), each step's arguments and result cut at `max_chars` characters;
- `GET /api/v1/incidents/{id}/steps/{task_id}/{n}`: one step whole.
- `GET /api/v1/incidents/{id}/decision`: the finding and every decision with each playbook
  considered (recall path, trust at use, checks, applied, steered, verdict).
- `GET /api/v1/incidents/{id}/graph`: components and edges around the incident, with the
  alerting ones, the root cause, the paths the finding rests on and the ruled-out candidates.

Same credentials as the rest of the API (`Authorization`, the tenant comes from it); a signed-in
web session's cookie is accepted too, so the page's scripts can read them. 404 for an incident
that is not in the caller's tenant.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, HTTPException, Query, Request
from starlette.concurrency import run_in_threadpool

from adapters.falkordb import TenantGraph, graph_name
from gateway.http.auth import tenant_for
from gateway.http.limits import ParsedOnceRoute
from gateway.http.status import MAX_OFFSET, alert_counts, incident_detail, playbook_outcome
from gateway.web.session import COOKIE, Sessions

router = APIRouter(route_class=ParsedOnceRoute)

#: The most components drawn around one incident (focus first, then neighbours).
MAX_GRAPH_NODES = 150
#: Steps `GET /api/v1/incidents/{id}/steps` lists when not asked for another number (`limit`),
#: and the most at once: an investigation writes tens, a long-lived incident's re-investigations
#: and escalations some hundreds.
API_STEPS = 200
MAX_API_STEPS = 1_000
#: The characters of a step's stored arguments or result (JSON text) the step list gives when
#: not asked for another number (`max_chars`), and the most: the web page's cut. The first step
#: of an investigation stores every alert, 6 MB of JSON for 20,000; one step whole is
#: `GET /api/v1/incidents/{id}/steps/{task_id}/{n}`.
API_STEP_CHARS = 20_000
MAX_API_STEP_CHARS = 1_000_000


def loads(text: Any) -> Any:
    """A stored JSON string as data; text that is not JSON (or not a string) as it is."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def steps(
    graph: TenantGraph, incident_id: str, max_chars: int | None = None
) -> list[dict[str, Any]]:
    """Every step of every task of the incident, oldest task first, each in order.

    Row: task_id, kind (investigate | reinvestigate | respond | learn | …), task_status, n, tool,
    args and result (parsed from their stored JSON; any tool, so new tools show up as they
    are), started_at and at (ms UTC; `at` is when it was checkpointed), epoch (the claim).
    With `max_chars` (the web page), args or a result stored longer than that is its first
    `max_chars` characters of JSON text, unparsed, and `args_cut` / `result_cut` say how many
    characters were left out (0: none).
    """
    rows = graph.rows("web_incident_steps", {"incident_id": incident_id, "max_chars": max_chars})
    return [step_row(row, max_chars is not None) for row in rows]


def step_row(row: dict[str, Any], cuts: bool = True) -> dict[str, Any]:
    """A step row of `web_incident_steps`'s columns as shown: `args` and `result` parsed from
    their stored JSON when whole; when the query cut one (its `…_chars`, the whole length, is
    longer than the text read), left as that head of the JSON text. With `cuts`, `args_cut`
    and `result_cut` say how many characters were left out (0: none)."""
    for field in ("args", "result"):
        whole = row.pop(f"{field}_chars") or 0
        cut = whole - len(row[field] or "")
        if cuts:
            row[f"{field}_cut"] = cut
        if not cut:
            row[field] = loads(row[field])
    return row


def step_page(
    graph: TenantGraph,
    incident_id: str,
    limit: int = API_STEPS,
    offset: int = 0,
    max_chars: int = API_STEP_CHARS,
) -> dict[str, Any] | None:
    """`limit` of the incident's steps after the first `offset` (the order of `steps`), each
    as `step_row` with its args and result cut at `max_chars` characters of JSON text, for
    `GET /api/v1/incidents/{id}/steps`: `{incident_id, steps, total (how many steps there
    are), offset, limit, max_chars}`. None when there is no such incident. Two queries
    (`incident_step_total`, `incident_step_page`), each bounded by `limit` and `max_chars`."""
    counted = graph.one("incident_step_total", {"incident_id": incident_id})
    if counted is None:
        return None
    rows = graph.rows(
        "incident_step_page",
        {"incident_id": incident_id, "offset": offset, "limit": limit, "max_chars": max_chars},
    )
    return {
        "incident_id": incident_id, "steps": [step_row(r) for r in rows],
        "total": counted["total"], "offset": offset, "limit": limit, "max_chars": max_chars,
    }  # fmt: skip


def decisions(graph: TenantGraph, incident_id: str) -> list[dict[str, Any]]:
    """The incident's decisions, newest first: `{id, at (ms UTC), planner, playbooks: [{id,
    title, failure_kind, status, path, candidate, trust_at_use, checks, applicable, steered,
    verdict, outcome}]}`. `checks` is the list of check results stored at use; `outcome` what
    became of the playbook, in words (`status.playbook_outcome`)."""
    found: dict[str, dict[str, Any]] = {}
    for row in graph.rows("web_decisions", {"incident_id": incident_id}):
        decision = found.setdefault(
            row["decision_id"],
            {"id": row["decision_id"], "at": row["at"], "planner": row["planner"],
             "playbooks": []},
        )  # fmt: skip
        if row["playbook"] is not None:
            decision["playbooks"].append({
                "id": row["playbook"], "title": row["title"],
                "failure_kind": row["failure_kind"], "status": row["status"],
                "path": row["path"], "candidate": row["candidate"],
                "trust_at_use": row["trust_at_use"], "checks": loads(row["checks_json"]) or [],
                "applicable": row["applicable"], "steered": row["steered"],
                "verdict": row["verdict"],
            })  # fmt: skip
            use = decision["playbooks"][-1]
            use["outcome"] = playbook_outcome(use)
    return list(found.values())


def path_pairs(paths: list[list[str]]) -> set[tuple[str, str]]:
    """The (from, to) hops of the finding's paths (each path runs alerting -> cause)."""
    return {(p[i], p[i + 1]) for p in paths for i in range(len(p) - 1)}


def incident_graph(
    graph: TenantGraph, detail: dict[str, Any], alerting: dict[str, list[int]] | None = None
) -> dict[str, Any]:
    """The dependency graph around an incident (`detail` from `status.incident_detail`;
    `alerting`: its alerts and firing alerts by component, `status.alert_counts`'s
    `components`, read here when not given).

    Shape: `{root_cause, paths: [[name, …]], nodes: [{id, kind, tech, alerts, firing (the
    incident's alerts on it, all and firing), root_cause, candidate, on_path, ruled_out (reason
    or null)}], edges: [{source,
    target, type, purpose, on_path}]}`. Nodes: every alerting component, candidate, ruled-out
    candidate and component on a path, then their neighbours one business edge away, at most
    `MAX_GRAPH_NODES`. Edges: the business dependencies between them (those the root-cause walk
    follows; telemetry and config edges are left out), caller -> callee as in the graph.
    """
    finding = detail["finding"] or {}
    paths: list[list[str]] = [list(p) for p in finding.get("paths") or []]
    ruled_out = {r["component"]: r["reason"] for r in finding.get("ruled_out") or []}
    root = detail["root_cause"]
    if alerting is None:
        alerting = alert_counts(graph, detail["id"])["components"]
    candidates = list(finding.get("candidates") or [])
    focus = list(dict.fromkeys([
        *alerting, *([root] if root else []), *candidates, *(n for p in paths for n in p),
        *ruled_out,
    ]))  # fmt: skip
    names = list(focus)
    if focus:
        around = [r["name"] for r in graph.rows("web_neighbours", {"names": focus})]
        names += sorted(set(around) - set(focus))
    names = names[:MAX_GRAPH_NODES]
    hops = path_pairs(paths)
    on_path = {n for p in paths for n in p}
    nodes, edges = [], []
    for row in graph.rows("web_subgraph", {"names": names}) if names else []:
        nodes.append({
            "id": row["name"], "kind": row["kind"], "tech": row["tech"],
            "alerts": alerting.get(row["name"], [0, 0])[0],
            "firing": alerting.get(row["name"], [0, 0])[1],
            "root_cause": row["name"] == root, "candidate": row["name"] in candidates,
            "on_path": row["name"] in on_path, "ruled_out": ruled_out.get(row["name"]),
        })  # fmt: skip
        for target, kind, purpose in row["edges"]:
            if purpose != "business":
                continue
            edges.append({
                "source": row["name"], "target": target, "type": kind, "purpose": purpose,
                "on_path": (row["name"], target) in hops,
            })  # fmt: skip
    return {"root_cause": root, "paths": paths, "nodes": nodes, "edges": edges}


def api_tenant(request: Request) -> str:
    """The caller's tenant: from `Authorization` as on the rest of the API, else from a valid
    web session cookie, else as `tenant_for` decides (the default tenant in open mode, else
    HTTPException 401)."""
    settings = request.app.state.settings
    if "authorization" not in request.headers:
        sessions: Sessions = request.app.state.sessions
        session = sessions.read(request.cookies.get(COOKIE))
        if session is not None:
            return session.tenant
    return tenant_for(request, settings)


def _graph(request: Request) -> TenantGraph:
    found: TenantGraph = request.app.state.store.graph(graph_name(api_tenant(request)))
    return found


def _require(
    graph: TenantGraph, incident_id: str, counts: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The incident without its alerts (`incident_detail`; `counts`: its `alert_counts`, read
    already); HTTPException 404 when there is none here."""
    detail = incident_detail(graph, incident_id, alerts_limit=0, counts=counts)
    if detail is None:
        raise HTTPException(404, f"no incident {incident_id!r}")
    return detail


@router.get("/api/v1/incidents/{incident_id}/steps")
async def get_steps(
    request: Request,
    incident_id: str,
    limit: int = Query(API_STEPS, ge=0, le=MAX_API_STEPS),
    offset: int = Query(0, ge=0, le=MAX_OFFSET),
    max_chars: int = Query(API_STEP_CHARS, ge=0, le=MAX_API_STEP_CHARS),
) -> dict[str, Any]:
    """`{incident_id, steps: [...], total, offset, limit, max_chars}` (see `step_page`): 200
    steps at most by default (`limit` 0 to 1,000, `offset` to page), each step's args and
    result cut at 20,000 characters of JSON text (`max_chars` 0 to 1,000,000; `args_cut` and
    `result_cut` say how many were left out, the step route has them whole). 404 when not in
    this tenant; 422 for a number out of range."""
    graph = _graph(request)
    found = await run_in_threadpool(step_page, graph, incident_id, limit, offset, max_chars)
    if found is None:
        raise HTTPException(404, f"no incident {incident_id!r}")
    return found


@router.get("/api/v1/incidents/{incident_id}/steps/{task_id}/{n}")
async def get_step(request: Request, incident_id: str, task_id: str, n: int) -> dict[str, Any]:
    """`{incident_id, step}`: step `n` of the incident's task `task_id`, its args and result
    whole and parsed (`step_row`, no cut: this is where a cut step is read in full, megabytes
    for a step that read a storm's alerts). 404 when the incident, the task or the step is not
    in this tenant; 422 when `n` is no whole number."""
    graph = _graph(request)
    params = {"incident_id": incident_id, "task_id": task_id, "n": n}
    row = await run_in_threadpool(graph.one, "incident_step", params)
    if row is None:
        raise HTTPException(404, f"no step {n} of task {task_id!r} of incident {incident_id!r}")
    return {"incident_id": incident_id, "step": step_row(row, cuts=False)}


@router.get("/api/v1/incidents/{incident_id}/decision")
async def get_decision(request: Request, incident_id: str) -> dict[str, Any]:
    """`{incident_id, root_cause, finding, decisions: [...]}` (newest decision first; see
    `decisions`); 404 when not in this tenant."""
    graph = _graph(request)

    def read() -> dict[str, Any]:
        detail = _require(graph, incident_id)
        return {
            "incident_id": incident_id, "root_cause": detail["root_cause"],
            "finding": detail["finding"], "decisions": decisions(graph, incident_id),
        }  # fmt: skip

    return await run_in_threadpool(read)


@router.get("/api/v1/incidents/{incident_id}/graph")
async def get_graph(request: Request, incident_id: str) -> dict[str, Any]:
    """`{incident_id, root_cause, paths, nodes, edges}` (see `incident_graph`); 404 when not in
    this tenant."""
    graph = _graph(request)

    def read() -> dict[str, Any]:
        counts = alert_counts(graph, incident_id)
        detail = _require(graph, incident_id, counts)
        return {"incident_id": incident_id} | incident_graph(graph, detail, counts["components"])

    return await run_in_threadpool(read)
