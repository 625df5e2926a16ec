"""`blast-radius demo`: the whole loop on the bundled OpenTelemetry Demo world, no keys needed.

For each fault scenario of `gateway/data/otel-demo/faults.yaml` it builds the Alertmanager
payloads from the scenario's `expected_alerts` (likelihood high and medium), posts them to the
gateway's own webhook over HTTP (one delivery per scenario, like `group_by: [namespace]`: all
its alerts carry `namespace: opentelemetry-demo`),
waits for the agents, then resolves the alerts. Ground truth (`root_cause.accept`) is read only
here, to score the result; agent code never sees it.
"""

from __future__ import annotations

import shutil
import time
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import yaml

from adapters.falkordb import graph_name
from adapters.outbox import Outbox
from gateway.cli.demo_evidence import DEMO_STEP_S, PrometheusServer, demo_timeline
from gateway.http.payloads import label_fingerprint
from gateway.ops.runtime import Runtime
from gateway.settings import Settings
from gateway.world import demo_world_path, import_world, load_world

#: Alerts of a scenario that the demo fires (faults.yaml `likelihood`).
FIRED_LIKELIHOODS = ("high", "medium")
#: Scenarios are spaced this far apart in alert time so they never share an incident.
SCENARIO_SPACING = timedelta(hours=3)


def demo_faults_path() -> Path:
    """The bundled fault scenarios."""
    return Path(str(resources.files("gateway").joinpath("data/otel-demo/faults.yaml")))


def rfc3339(moment: datetime) -> str:
    """Go-style RFC 3339 with milliseconds and `Z`, as Prometheus sends it."""
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


def scenario_bodies(fault: dict[str, Any], starts: datetime, status: str) -> list[dict[str, Any]]:
    """Alertmanager v4 bodies for one scenario: one group per `namespace` label."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for index, expected in enumerate(fault["expected_alerts"]):
        if expected.get("likelihood") not in FIRED_LIKELIHOODS:
            continue
        labels = {"alertname": expected["alertname"], "namespace": "opentelemetry-demo"}
        labels |= {k: str(v) for k, v in expected["labels"].items()}
        begin = starts + timedelta(seconds=20 * index)
        alert = {
            "status": status,
            "labels": labels,
            "annotations": {"summary": f"{labels['alertname']} on {labels.get('service', '?')}",
                            "description": expected.get("note", "")},
            "startsAt": rfc3339(begin),
            "endsAt": rfc3339(begin + timedelta(minutes=30)) if status == "resolved"
            else "0001-01-01T00:00:00Z",
            "generatorURL": "http://prometheus.demo:9090/graph?g0.expr=demo",
            "fingerprint": label_fingerprint(labels),
        }  # fmt: skip
        groups.setdefault(labels["namespace"], []).append(alert)
    return [
        {
            "version": "4",
            "groupKey": f'{{}}:{{namespace="{namespace}"}}',
            "truncatedAlerts": 0,
            "status": status,
            "receiver": "blast-radius",
            "groupLabels": {"namespace": namespace},
            "commonLabels": {},
            "commonAnnotations": {},
            "externalURL": "http://alertmanager.demo:9093",
            "alerts": alerts,
        }
        for namespace, alerts in groups.items()
    ]


def run_demo(settings: Settings, progress: Any = None, evidence: bool = False) -> dict[str, Any]:
    """Run every scenario end to end; return `{"scenarios": [...], "correct": n, "total": n,
    "evidence": bool}`.

    `evidence`: a local Prometheus (`gateway/cli/demo_evidence.py`) replays the service graph each
    fault leaves, and the investigator reads it (`PROMETHEUS_URL`); otherwise alerts only (any
    configured `PROMETHEUS_URL` is ignored). Each scenario row: name, alerts, incidents,
    root_cause, candidates, expected_root_cause (accepted answers), correct (the root cause is
    right), named (inconclusive, a right answer among the candidates), notifications, tickets.
    `progress(line)` is called with a line per step. Raises RuntimeError when the agents stall
    or the evidence server does not start.
    """
    say = progress or (lambda line: None)
    faults = yaml.safe_load(demo_faults_path().read_text(encoding="utf-8"))["faults"]
    base = datetime.now(UTC).replace(microsecond=0) - SCENARIO_SPACING * (len(faults) + 1)
    starts = {f["flag"]: base + SCENARIO_SPACING * i for i, f in enumerate(faults)}
    replay: PrometheusServer | None = None
    if evidence:
        edges, times = demo_timeline({k: int(v.timestamp()) for k, v in starts.items()})
        say(f"service-graph evidence: {len(edges)} call edges, {len(times)} samples each")
        folder = settings.data_dir / "prometheus"
        shutil.rmtree(folder, ignore_errors=True)  # a rerun on the same --data-dir starts afresh
        replay = PrometheusServer(folder, edges, None, times=times, step_s=DEMO_STEP_S)
    settings = settings.model_copy(update={"prometheus_url": replay.url if replay else None})
    rows = []
    try:
        with Runtime(settings) as runtime:
            rows = _scenarios(runtime, settings, faults, starts, say)
    finally:
        if replay is not None:
            replay.stop()
    correct = sum(1 for r in rows if r["correct"])
    return {"scenarios": rows, "correct": correct, "total": len(rows), "evidence": evidence}


def _scenarios(
    runtime: Runtime,
    settings: Settings,
    faults: list[dict[str, Any]],
    starts: dict[str, datetime],
    say: Any,
) -> list[dict[str, Any]]:
    """Fire, wait for and resolve each scenario on a started runtime; its scored rows."""
    assert runtime.store is not None
    graph = runtime.store.graph(graph_name(settings.default_tenant))
    counts = import_world(graph, load_world(demo_world_path()))
    say(f"world loaded: {counts['components']} components, {counts['edges']} edges")
    port = runtime.serve_http("127.0.0.1", 0)
    runtime.start_workers()
    rows = []
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
        for index, fault in enumerate(faults):
            incidents: list[str] = []
            fired = 0
            for body in scenario_bodies(fault, starts[fault["flag"]], "firing"):
                answer = http.post("/api/v1/alerts", json=body)
                answer.raise_for_status()
                fired += len(body["alerts"])
                incidents += [i for i in answer.json()["incidents"] if i not in incidents]
            if not runtime.wait_idle():
                raise RuntimeError(f"agents did not finish scenario {fault['flag']}")
            for body in scenario_bodies(fault, starts[fault["flag"]], "resolved"):
                http.post("/api/v1/alerts", json=body).raise_for_status()
            runtime.wait_idle()
            details = [http.get(f"/api/v1/incidents/{i}").json() for i in incidents]
            row = _score(fault, fired, details, runtime.outbox)
            rows.append(row)
            cause = row["root_cause"] or "inconclusive: " + "/".join(row["candidates"])
            say(f"[{index + 1}/{len(faults)}] {row['name']}: {cause} ({_verdict(row)})")
    return rows


def _verdict(row: dict[str, Any]) -> str:
    """ok (right root cause), named (inconclusive, a right answer among the candidates),
    MISS (inconclusive without one), WRONG (a wrong root cause: the worst outcome)."""
    if row["correct"]:
        return "ok"
    if row["root_cause"] is None:
        return "named" if row["named"] else "MISS"
    return "WRONG"


def _score(
    fault: dict[str, Any], fired: int, details: list[dict[str, Any]], outbox: Outbox
) -> dict[str, Any]:
    ids = {d["id"] for d in details}
    sent = [e for e in outbox.entries() if e["incident_id"] in ids]
    main = details[0] if details else {}
    cause = main.get("root_cause")
    candidates = (main.get("finding") or {}).get("candidates") or []
    accept = fault["root_cause"].get("accept") or [fault["root_cause"]["component"]]
    return {
        "name": fault["flag"],
        "alerts": fired,
        "incidents": len(details),
        "incident": main.get("id"),
        "root_cause": cause,
        "candidates": candidates,
        "expected_root_cause": accept,
        "correct": len(details) == 1 and cause in accept,
        "named": len(details) == 1 and cause is None and bool(set(candidates) & set(accept)),
        "notifications": sum(1 for e in sent if e["kind"] == "notification"),
        "followups": sum(1 for e in sent if e["kind"] == "followup"),
        "tickets": sum(1 for e in sent if e["kind"] == "ticket"),
        "resolved": all(d["status"] == "resolved" for d in details),
    }


def table(result: dict[str, Any], alerts_only: dict[str, Any] | None = None) -> str:
    """The demo result as a fixed-width text table with a score line; with `alerts_only` (the
    same scenarios without evidence), a column and a line for that run too."""
    head: tuple[str, ...] = (
        "fault", "alerts", "incident", "root cause", "expected", "notified", "tickets", "verdict",
    )  # fmt: skip
    if alerts_only:
        head = (*head, "alerts only")
    other = {r["name"]: r for r in (alerts_only or {}).get("scenarios", [])}
    lines: list[tuple[str, ...]] = [head]
    for r in result["scenarios"]:
        cause = r["root_cause"] or ("inconclusive: " + "/".join(r["candidates"]))
        line: tuple[str, ...] = (
            r["name"], str(r["alerts"]), r["incident"] or "-", cause,
            "/".join(r["expected_root_cause"]), str(r["notifications"]), str(r["tickets"]),
            _verdict(r),
        )  # fmt: skip
        if alerts_only:
            o = other.get(r["name"])
            line = (*line, f"{o['root_cause'] or 'inconclusive'} ({_verdict(o)})" if o else "-")
        lines.append(line)
    widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
    text = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in lines
    ]
    how = (
        "with service-graph evidence replayed by a local Prometheus"
        if result.get("evidence")
        else "alerts only"
    )
    text.append(
        f"root causes correct: {result['correct']}/{result['total']} ({how}; rule-based "
        "planner, no model)"
    )
    if alerts_only:
        text.append("alerts only: " + _breakdown(alerts_only))
    elif result["correct"] < result["total"]:
        text.append(_breakdown(result))
    runs = [result, *([alerts_only] if alerts_only else [])]
    if any(_verdict(r) != "ok" for run in runs for r in run["scenarios"]):
        text.append(
            "verdict: ok = the right root cause; named = inconclusive, the right cause among the "
            "candidates the page lists to check; MISS = inconclusive without it; WRONG = a wrong "
            "root cause"
        )
    return "\n".join(text)


def _breakdown(run: dict[str, Any]) -> str:
    """`6/10 correct, 4 inconclusive naming the cause among the candidates, 0 confidently
    wrong` for one run of the demo."""
    named = sum(1 for r in run["scenarios"] if _verdict(r) == "named")
    wrong = sum(1 for r in run["scenarios"] if _verdict(r) == "WRONG")
    return (
        f"{run['correct']}/{run['total']} correct, {named} inconclusive naming the cause among "
        f"the candidates, {wrong} confidently wrong"
    )


def elapsed(start: float) -> str:
    """Seconds since `start` (monotonic) as `12.3 s`."""
    return f"{time.monotonic() - start:.1f} s"
