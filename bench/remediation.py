"""Remediation cost and once-only: `python -m bench.remediation [--incidents 5]`.

Embedded FalkorDB in a temporary folder, the demo world, one playbook on payment with a
GitHub Actions remediation, GitHub = the local stand-in (tests/github_api.py). For each of N
incidents (payment error alerts an hour apart): the agents run (diagnosis, page, proposal),
a member approves twice (a double click) and the workers run. Prints: approvals per
incident, the decision's time (median ms, `agents.act.approval.decide`, two graph queries), the
time from approval to the dispatch's Attempt being recorded (median ms, one burst worker),
workflow runs per incident (must be 1) and GitHub requests per remediation.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pydantic import SecretStr

from adapters.falkordb import graph_name
from agents.act.approval import Approver, decide
from agents.triage.triage import triage
from gateway.http.payloads import normalize, parse_body
from gateway.ops.runtime import Runtime
from gateway.settings import Settings
from gateway.world import demo_world_path, import_world, load_world
from tests.github_api import TOKEN, FakeGitHub

TENANT = "bench"
PLAYBOOK = {"id": "pb-rollback", "component": "payment", "title": "Roll back payment",
            "failure_kind": None, "checks_json": '[{"type": "alert_kind", "kind": "errors"}]',
            "author": "bench", "remediation_type": "github_workflow",
            "remediation_json": json.dumps({"type": "github_workflow", "repo": "o/r",
                                            "workflow": "rollback.yml", "ref": "main",
                                            "inputs": {"service": "payment"}}),
            "max_playbooks": 200}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--incidents", type=int, default=5)
    args = parser.parse_args()
    github = FakeGitHub().start()
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings.model_validate({
            "data_dir": Path(folder), "default_tenant": TENANT, "workers": 0,
            "github_token": SecretStr(TOKEN), "github_repo": "o/r", "github_api_url": github.url,
            "github_request_interval_s": 0, "github_write_interval_s": 0,
            "actions_enabled": True,
        })  # fmt: skip
        runtime = Runtime(settings)
        store = runtime.open()
        graph = store.graph(graph_name(TENANT))
        import_world(graph, load_world(demo_world_path()))
        graph.one("plant_playbook", PLAYBOOK)
        worker = runtime.make_worker()
        decide_ms, dispatch_ms, requests = [], [], []
        start = datetime.now(UTC) - timedelta(hours=args.incidents + 1)
        for n in range(args.incidents):
            at = (start + timedelta(hours=n)).strftime("%Y-%m-%dT%H:%M:%SZ")
            alert = {"status": "firing", "labels": {"alertname": "ServiceHighErrorRate",
                     "service": "payment", "severity": "critical"},
                     "annotations": {"summary": "errors"}, "startsAt": at,
                     "endsAt": "0001-01-01T00:00:00Z"}  # fmt: skip
            (incident,) = triage(
                graph,
                normalize(parse_body(json.dumps({"alerts": [alert]}).encode()), "unknown"),
                900_000,
            ).opened
            worker.run(threading.Event(), burst=True)
            rid = f"remediation:{incident}:pb-rollback"
            before = len(github.log)
            for _ in range(2):  # the double click
                clock = time.perf_counter()
                decide(graph, rid, Approver("cy@example.com", "web"), True, True)
                decide_ms.append((time.perf_counter() - clock) * 1000)
            clock = time.perf_counter()
            worker.run(threading.Event(), burst=True)  # run, say so, verify (pauses)
            dispatch_ms.append((time.perf_counter() - clock) * 1000)
            requests.append(len(github.log) - before)
        runtime.close()
    github.stop()
    runs = len(github.runs)
    print(f"incidents: {args.incidents}, approvals: {2 * args.incidents} (2 per incident)")
    print(f"decide: median {statistics.median(decide_ms):.1f} ms, max {max(decide_ms):.1f} ms")
    print(
        f"approval to dispatched and said (one burst worker): median "
        f"{statistics.median(dispatch_ms):.0f} ms, max {max(dispatch_ms):.0f} ms"
    )
    print(f"workflow runs: {runs} ({runs / args.incidents:.2f} per incident)")
    print(
        f"GitHub requests per remediation: {statistics.median(requests):.0f} "
        "(the dispatch and the run lookup that links it; outbox messages)"
    )


if __name__ == "__main__":
    main()
