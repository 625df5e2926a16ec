"""Memory against no memory: `python -m bench.memory_eval [--evidence] [--short] [-v]
[--world PATH --stream PATH]`.

Replays a stream of incidents in time order (`bench/memory_stream.yaml` on
`bench/memory_world.yaml`, a parcel-delivery company no test or demo uses: families of repeats
worded differently, silent roots, new kinds seen once, one planted misleading playbook)
through three setups, each in its own graph of one embedded FalkorDB:

- `none`: no memory (`BLAST_MEMORY=none`);
- `text`: similar incidents only (`BLAST_MEMORY=text`: a hashed bag of words on the vector
  index, offered to the model planner as `similar_incidents`);
- `graph`: graph memory (`BLAST_MEMORY=graph`: recall along the walk, checks, trust; similar
  incidents too).

Every setup runs the same planner chain (memory where the setup has it, then the rules, then the
model planner, `BLAST_PLANNER=model-when-unsure` (`--planner model`: after the rules
unless memory settled it), against the local Messages API stand-in
`tests/anthropic_api.py`), the same step budget (`BLAST_MODEL_MAX_STEPS=8`) and the same learning:
after each incident the engineer's verdict (confirmed when right, else rejected naming the
true cause, given by the cause's on-call) goes through the learner. The planted playbook is in
every graph (only `graph` recalls it).

The scripted model works like a careful investigator with what it is offered: it reads the
similar incidents its brief lists (or asks `similar_incidents` first when offered and the
brief lists none) and, if the best earlier incident scores at least
`TRUSTED_SIMILAR` with a cause an engineer confirmed, names that cause; otherwise it walks
the coverage from the alerting components, looks for recent changes on the best candidates,
and names the one that explains the most alerting components and lies nearest (inconclusive
when two tie).

A delivery triage opens more than one incident for, or whose investigation splits alerts off
into a new incident, is investigated whole, as serve would (every incident's investigation,
model and tool calls count); the incident of its first alert is scored and gets the verdict.

Prints one row per incident and setup with `-v`, then per setup: right, confidently wrong (a
wrong root cause at confidence >= 0.5), model calls, tool calls (checkpointed steps of the
investigations), tokens in/out (the stand-in counts 4 characters a token), repeats right,
repeats memory named with no model, repeats recognised (right, and named by memory or with the
earlier incident of this cause, confirmed, cited on the page: the issue's "an applicable
playbook on the true cause, or the earlier incident cited"), and whether the right memory was
in the top 5 when one existed (an earlier incident with this cause, confirmed or named: among
the 5 similar incidents for `text`; among the 5 first recalled playbooks or the 5 similar
incidents for `graph`). Last, graph memory's saving in model calls against no memory, and how
many of each setup's calls were spent on repeats: those are what memory can spare; the calls on
the first incident of a cause no memory can, so they bound the saving a stream allows.
`--evidence` runs each incident with a real Prometheus (Debian's, series written by
promtool) holding its service-graph evidence; `--short` runs the first 8 incidents only (three
families, five repeats). `--world` and `--stream` replay another story in the same formats
(the stream's optional `namespace` is the alerts' namespace label, `parcel` when absent).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import uuid
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml
from pydantic import SecretStr

from adapters.falkordb import EmbeddedFalkorDB, GraphStore, TenantGraph, graph_name
from adapters.prometheus import Prometheus
from agents.investigate import similar
from agents.investigate.investigator import Investigator
from agents.investigate.model_planner import ModelPlanner
from agents.learn.learner import Learner
from agents.learn.verdicts import Verdict, record
from agents.metrics import Metrics
from agents.tasks.coordination import TaskRun, claim
from agents.triage.triage import triage
from gateway.cli.demo import rfc3339
from gateway.cli.demo_evidence import Edge, PrometheusServer
from gateway.http.payloads import normalize, parse_body
from gateway.ops.runtime import model_planner
from gateway.settings import Settings
from gateway.world import import_world, load_world
from tests.anthropic_api import KEY, AnthropicAPI, Error, Reply, model_turns, tool_use

HERE = Path(__file__).parent
WORLD = HERE / "memory_world.yaml"
STREAM = HERE / "memory_stream.yaml"
SETUPS = ("none", "text", "graph")
#: A wrong root cause at this confidence or more is "confidently wrong" (as in bench/rca.py).
SURE = 0.5
#: The scripted model names an earlier incident's confirmed cause at this similarity or more.
TRUSTED_SIMILAR = 0.5
#: Alerts only: one incident a day from here. With evidence the stream runs over the last
#: minutes (the evidence is written up to now), `EVIDENCE_GAP_S` apart.
FIRST_DAY = datetime(2026, 11, 2, 3, 12, tzinfo=UTC)
EVIDENCE_GAP_S = 10
FAULT_AGO_S = 15 * 60


def _results(body: dict[str, Any]) -> dict[str, list[Any]]:
    """Each tool's last result (its `data`) in the conversation, by tool name."""
    names = {
        b["id"]: b["name"] for m in body["messages"] if m["role"] == "assistant"
        for b in m["content"] if b.get("type") == "tool_use"
    }  # fmt: skip
    found: dict[str, list[Any]] = {}
    for m in body["messages"]:
        if m["role"] == "user" and isinstance(m["content"], list):
            for b in m["content"]:
                if b.get("type") == "tool_result" and b["tool_use_id"] in names:
                    try:
                        data = json.loads(b["content"]).get("data")
                    except ValueError:  # the graph's answer to a submitted finding: text
                        data = None
                    found[names[b["tool_use_id"]]] = data if isinstance(data, list) else []
    return found


def _briefed_similar(body: dict[str, Any]) -> list[Any] | None:
    """The similar incidents the first user turn lists (one JSON row a line after its
    "Similar earlier incidents" line), or None when the brief has no such section."""
    first = body["messages"][0]["content"]
    lines = first.splitlines() if isinstance(first, str) else []
    start = next((i for i, line in enumerate(lines) if line.startswith("Similar earlier")), None)
    if start is None:
        return None
    rows = []
    for line in lines[start + 1 :]:
        if not line.startswith("{"):
            break
        rows.append(json.loads(line))
    return rows


def brain(body: dict[str, Any]) -> Reply | Error:
    """The scripted model (module docstring)."""
    turns = model_turns(body)
    offered = {t["name"] for t in body.get("tools", [])}
    forced = body.get("tool_choice", {}).get("type") == "tool"
    seen = _results(body)
    briefed = _briefed_similar(body)
    if briefed is not None and "similar_incidents" not in seen:
        seen["similar_incidents"] = briefed
    if "similar_incidents" in offered and "similar_incidents" not in seen and not forced:
        return tool_use("similar_incidents", {}, turns)
    best_past = next(iter(seen.get("similar_incidents") or []), None)
    if best_past and best_past["score"] >= TRUSTED_SIMILAR and best_past["confirmed_by"]:
        answer = {
            "root_cause": best_past["root_cause"], "candidates": [best_past["root_cause"]],
            "confidence": 0.7,
            "summary": f"Like {best_past['id']}, whose cause {best_past['confirmed_by']} "
                       f"confirmed: {best_past['root_cause']}.",
        }  # fmt: skip
        return tool_use("submit_finding", answer, turns)
    if "coverage_walk" not in seen and not forced:
        return tool_use("coverage_walk", {}, turns)
    rows = seen.get("coverage_walk") or []
    best = [r for r in rows if len(r["covers"]) == len(rows[0]["covers"])] if rows else []
    if "recent_changes" not in seen and best and not forced:
        return tool_use("recent_changes", {"components": [r["name"] for r in best[:5]]}, turns)
    near = [r for r in best if r["distance"] == best[0]["distance"]] if best else []
    cause = near[0]["name"] if len(near) == 1 else None
    answer = {"root_cause": cause, "candidates": [r["name"] for r in near[:5]],
              "confidence": 0.7 if cause else 0.3,
              "summary": "The candidate that explains the most alerting components."}  # fmt: skip
    return tool_use("submit_finding", answer, turns)


def world_edges(world: dict[str, Any], changes: dict[str, dict[str, Any]]) -> list[Edge]:
    """The healthy service graph of the world (every business and config call at 2 calls/s,
    clients 5/s; a producer -> consumer messaging edge per topic at 1/s; no failures, 20 ms),
    with one incident's changes applied after the fault (`client>server` -> Edge fields)."""
    clients = {c["id"] for c in world["components"] if c.get("client")}
    edges: dict[str, Edge] = {}
    for e in world["edges"]:
        if e["type"] in ("CALLS", "READS_WRITES"):
            kind = "database" if e["type"] == "READS_WRITES" else ""
            rate = 5.0 if e["from"] in clients else 2.0
            edges[f"{e['from']}>{e['to']}"] = Edge(e["from"], e["to"], rate=rate,
                                                   connection_type=kind)  # fmt: skip
    for p in (e for e in world["edges"] if e["type"] == "PUBLISHES"):
        for c in (e for e in world["edges"] if e["type"] == "CONSUMES" and e["to"] == p["to"]):
            key = f"{p['from']}>{c['from']}"
            edges[key] = Edge(p["from"], c["from"], rate=1.0, connection_type="messaging_system")
    for key, change in changes.items():
        client, server = key.split(">")
        edges[key] = replace(edges.get(key, Edge(client, server)), **change)
    return list(edges.values())


def body(
    alerts: list[list[str]],
    starts: datetime,
    n: int,
    status: str = "firing",
    namespace: str = "parcel",
) -> dict[str, Any]:
    """One Alertmanager v4 body of `[alertname, service, summary]` alerts of incident `n`."""
    return {
        "version": "4", "status": status, "receiver": "blast-radius", "groupKey": "{}:{}",
        "alerts": [
            {"status": status,
             "labels": {"alertname": name, "service": service, "severity": "critical",
                        "namespace": namespace, "pod": f"{service}-{n}"},
             "annotations": {"summary": summary}, "startsAt": rfc3339(starts),
             "endsAt": rfc3339(starts + timedelta(seconds=1)) if status == "resolved"
             else "0001-01-01T00:00:00Z"}
            for name, service, summary in alerts
        ],
    }  # fmt: skip


@dataclass
class Setup:
    """One setup's graph and its counts."""

    name: str
    graph: TenantGraph
    investigator: Investigator
    #: True cause of every incident so far, by incident id.
    causes: dict[str, str] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)


def cited(setup: Setup, incident_id: str, cause: str) -> bool:
    """Whether the page cites an earlier incident with this cause that someone confirmed: the
    one `similar.cited` names (as `messages.similar_line` does) has it as its cause."""
    row = setup.graph.one("incident_memory", {"incident_id": incident_id}) or {}
    found = setup.graph.one("incident_get", {"incident_id": incident_id}) or {}
    named = similar.cited(json.loads(row.get("similar_json") or "[]"), found.get("root_cause"))
    return named is not None and named["root_cause"] == cause and bool(named["confirmed_by"])


def top5(setup: Setup, incident_id: str, task_id: str, cause: str) -> bool | None:
    """Whether the right memory was in the top 5 (module docstring); None when no earlier
    incident had this cause, or the setup has no memory."""
    earlier = {i for i, c in setup.causes.items() if c == cause and i != incident_id}
    if not earlier or setup.name == "none":
        return None
    row = setup.graph.one("incident_memory", {"incident_id": incident_id}) or {}
    similar = json.loads(row.get("similar_json") or "[]")[:5]
    if any(s["id"] in earlier for s in similar):
        return True
    if setup.name != "graph":
        return False
    for step in setup.graph.rows("task_steps", {"task_id": task_id}):
        if step["tool"] == "recall_playbooks":
            recalled = json.loads(step["result"]).get("data") or []
            return any(p["candidate"] == cause for p in recalled[:5])
    return False


def run_one(
    setup: Setup,
    api: AnthropicAPI,
    spec: dict[str, Any],
    index: int,
    starts: datetime,
    prometheus: Prometheus | None,
    repeat: bool,
    oncall: dict[str, str],
    namespace: str = "parcel",
) -> dict[str, Any]:
    """One incident through one setup: triage, investigate, verdict, learn, resolve.
    `oncall`: component -> the Slack id of who answers for it (its owning team's member)."""
    graph, cause = setup.graph, spec["cause"]
    fired = body(spec["alerts"], starts, index, namespace=namespace)
    firing = normalize(parse_body(json.dumps(fired).encode()), "warning")
    report = triage(graph, firing, 5_000)
    opened = list(dict.fromkeys(report.incidents))
    assert opened, f"incident {index + 1}: no incident opened"
    incident_id = opened[0]  # the first alert's incident is the one scored
    asked = len(api.answered())
    setup.investigator.prometheus = prometheus
    # Every incident this delivery opened, and any an investigation splits off, is
    # investigated, as serve would; their model and tool calls count.
    tasks: dict[str, str] = {}
    while (claimed := claim(graph, ["investigate"], "bench", 60_000, 3)) is not None:
        tasks[claimed.incident_id] = claimed.task_id
        setup.investigator.run(TaskRun(graph, claimed, 60_000))
    assert incident_id in tasks, f"incident {index + 1}: {incident_id} was not investigated"
    calls = api.answered()[asked:]
    setup.causes[incident_id] = cause
    found = graph.one("incident_get", {"incident_id": incident_id})
    assert found is not None
    right = found["root_cause"] == cause
    steps = [s for t in tasks.values() for s in graph.rows("task_steps", {"task_id": t})]
    row = {
        "n": index + 1, "family": spec["family"], "repeat": repeat, "cause": cause,
        "found": found["root_cause"] or "/".join(found["candidates"] or []),
        "planner": found["planner"], "right": right, "confidence": found["confidence"],
        "sure_wrong": found["root_cause"] is not None and not right
        and float(found["confidence"]) >= SURE,
        "model_calls": len(calls), "tool_calls": len(steps),
        "tokens_in": sum(c.input_tokens for c in calls),
        "tokens_out": sum(c.output_tokens for c in calls),
        "top5": top5(setup, incident_id, tasks[incident_id], cause),
        "summary": found["summary"], "more_incidents": len(tasks) - 1,
        "cited": cited(setup, incident_id, cause),
    }  # fmt: skip
    by = oncall[cause]
    verdict = Verdict(
        id=f"v{index}", incident_id=incident_id, verdict="confirmed" if right else "rejected",
        actual_cause=cause, by=by, by_name=None, at=int(starts.timestamp() * 1000) + 60_000,
        text="", source="api", event_id=f"e{index}",
    )  # fmt: skip
    record(graph, verdict)
    while (learn := claim(graph, ["learn"], "bench", 60_000, 3)) is not None:
        Learner().run(TaskRun(graph, learn, 60_000))
    resolved = body(spec["alerts"], starts, index, "resolved", namespace)
    triage(graph, normalize(parse_body(json.dumps(resolved).encode()), "warning"), 5_000)
    # the investigation's follow-ups (page, ticket) are not what this bench measures
    while (rest := claim(graph, ["respond", "notify_verdict", "notify_update"], "bench",
                         60_000, 3)) is not None:  # fmt: skip
        TaskRun(graph, rest, 60_000).complete("skipped by the bench")
    return row


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary figures of one setup's rows."""
    repeats = [r for r in rows if r["repeat"]]
    hits = [r["top5"] for r in rows if r["top5"] is not None]
    return {
        "incidents": len(rows), "right": sum(r["right"] for r in rows),
        "sure_wrong": sum(r["sure_wrong"] for r in rows),
        "model_calls": sum(r["model_calls"] for r in rows),
        "repeat_calls": sum(r["model_calls"] for r in rows if r["repeat"]),
        "tool_calls": sum(r["tool_calls"] for r in rows),
        "tokens": f"{sum(r['tokens_in'] for r in rows)}/{sum(r['tokens_out'] for r in rows)}",
        "repeats": len(repeats), "repeats_right": sum(r["right"] for r in repeats),
        "by_memory": sum(r["right"] and r["planner"] == "memory" for r in repeats),
        "recognised": sum(r["right"] and (r["planner"] == "memory" or r["cited"])
                          for r in repeats),
        "top5": f"{sum(hits)}/{len(hits)}" if hits else "n/a",
    }  # fmt: skip


def main() -> None:
    """Parse arguments, replay the stream through the three setups, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evidence", action="store_true", help="with a real Prometheus")
    parser.add_argument("--short", action="store_true", help="the first 8 incidents only")
    parser.add_argument(
        "--planner",
        default="model-when-unsure",
        choices=["model-when-unsure", "model"],
        help="BLAST_PLANNER",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="one row per incident")
    parser.add_argument("--world", type=Path, default=WORLD, help="the world file")
    parser.add_argument("--stream", type=Path, default=STREAM, help="the incident stream")
    args = parser.parse_args()
    stream = yaml.safe_load(args.stream.read_text(encoding="utf-8"))
    namespace = str(stream.get("namespace", "parcel"))
    incidents = stream["incidents"][:8] if args.short else stream["incidents"]
    world_spec = yaml.safe_load(args.world.read_text(encoding="utf-8"))
    oncall = {
        c: team["members"][0]["slack_user_id"] for team in world_spec["teams"] for c in team["owns"]
    }
    now = time.time()
    api = AnthropicAPI(brain=brain)
    with tempfile.TemporaryDirectory(prefix="blast-radius-memory-eval-") as scratch:
        settings = Settings.model_validate({
            "data_dir": Path(scratch) / "data", "planner": args.planner,
            "anthropic_api_key": SecretStr(KEY), "anthropic_base_url": api.base_url,
            "models": ["claude-haiku-5-5"], "model_max_steps": 8,
        })  # fmt: skip
        server = EmbeddedFalkorDB(Path(scratch) / "falkordb")
        store = GraphStore(server.start(), timeout_ms=5_000)
        try:
            setups = []
            for name in SETUPS:
                graph = store.graph(graph_name(f"memeval-{name}-{uuid.uuid4().hex[:6]}"))
                graph.ensure_schema()
                import_world(graph, load_world(args.world))
                planted = stream["planted"]
                graph.one("plant_playbook", {
                    "id": planted["id"], "component": planted["component"],
                    "title": planted["title"], "failure_kind": planted["failure_kind"],
                    "checks_json": json.dumps(planted["checks"]), "author": "bench",
                    "remediation_json": None, "remediation_type": None, "max_playbooks": 200,
                })  # fmt: skip
                planner: ModelPlanner | None = model_planner(settings, Metrics())
                setups.append(Setup(name, graph, Investigator(6, None, planner, name)))  # type: ignore[arg-type]
            seen: set[str] = set()
            for index, spec in enumerate(incidents):
                repeat = spec["cause"] in seen
                seen.add(spec["cause"])
                prom = client = None
                if args.evidence:
                    starts = datetime.fromtimestamp(
                        int(now) - FAULT_AGO_S + 120 + index * EVIDENCE_GAP_S, UTC
                    )
                    prom = PrometheusServer(
                        Path(scratch) / f"prometheus-{index}",
                        world_edges(world_spec, spec["evidence"]), int(now) - FAULT_AGO_S,
                    )  # fmt: skip
                    client = Prometheus(prom.url)
                else:
                    starts = FIRST_DAY + timedelta(days=index)
                try:
                    for setup in setups:
                        row = run_one(
                            setup, api, spec, index, starts, client, repeat, oncall, namespace
                        )
                        setup.rows.append(row)
                        if args.verbose:
                            outcome = "ok" if row["right"] else "WRONG"
                            print(f"{row['n']:>2}. {setup.name:5} {spec['family']:13} "
                                  f"{'repeat' if repeat else 'first ':6} {row['planner']:6} "
                                  f"{outcome:5} {row['found']:28} {row['confidence']:.2f} "
                                  f"model {row['model_calls']} "
                                  f"top5 {row['top5']}"
                                  + (f" +{row['more_incidents']} incidents"
                                     if row["more_incidents"] else ""))  # fmt: skip
                finally:
                    if client is not None:
                        client.close()
                    if prom is not None:
                        prom.stop()
            report(setups, stream, len(incidents), args.evidence)
        finally:
            store.close()
            server.stop()
            api.close()


def report(setups: list[Setup], stream: dict[str, Any], count: int, evidence: bool) -> None:
    """Print the table and what happened to the planted playbook."""
    mode = "with evidence" if evidence else "alerts only"
    print(f"\n{count} incidents, {mode}")
    print(
        "| setup | right | confidently wrong | model calls | tool calls | tokens in/out | "
        "repeats right | repeats named by memory | repeats recognised | right memory in top 5 |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    figures = {s.name: totals(s.rows) for s in setups}
    for name, t in figures.items():
        print(f"| {name} | {t['right']}/{t['incidents']} | {t['sure_wrong']} | "
              f"{t['model_calls']} | {t['tool_calls']} | {t['tokens']} | "
              f"{t['repeats_right']}/{t['repeats']} | {t['by_memory']}/{t['repeats']} | "
              f"{t['recognised']}/{t['repeats']} | {t['top5']} |")  # fmt: skip
    for setup in setups:
        more = [r["n"] for r in setup.rows if r["more_incidents"]]
        if more:
            print(
                f"{setup.name}: {len(more)} deliveries opened or split into more than one "
                f"incident (incidents {', '.join(map(str, more))}); the first alert's is scored"
            )
        uses = [u for u in setup.graph.rows("web_playbook_uses")
                if u["playbook"] == stream["planted"]["id"]]  # fmt: skip
        if uses:
            steered = sum(bool(u["steered"]) for u in uses)
            # recalled by kind transfer it names another component of its tech, which may be
            # the right cause: those uses were confirmed ("helped")
            helped = sum(bool(u["steered"]) and u["verdict"] == "helped" for u in uses)
            print(f"{setup.name}: the planted playbook was recalled {len(uses)} times, caught "
                  f"by its checks {len(uses) - steered}, steered {steered}"
                  + (f" ({helped} to the confirmed cause)" if steered else ""))  # fmt: skip
    base = figures["none"]["model_calls"]
    if base:
        graph, none = figures["graph"], figures["none"]
        fewer = 100 * (1 - graph["model_calls"] / base)
        # the calls on an incident whose cause came before are the ones memory can spare;
        # those on a first incident of its cause no memory can
        print(f"\ngraph memory: {fewer:.0f} % fewer model calls than no memory "
              f"({graph['model_calls']} against {base}).\nModel calls on repeats, the only ones "
              f"memory can spare: graph memory {graph['repeat_calls']} of its "
              f"{graph['model_calls']}, no memory {none['repeat_calls']} of its {base}; the "
              "rest went to the first incident of a cause.")  # fmt: skip


if __name__ == "__main__":
    main()
