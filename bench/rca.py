"""Root-cause quality: `python -m bench.rca [--cases bench/rca_cases.yaml] [--only NAME] [-v]`.

Runs every fault case on the bundled OpenTelemetry Demo world twice: with alerts only, and with
service-graph evidence (a real Prometheus, Debian's 2.42, over series written by `promtool tsdb
create-blocks-from openmetrics` ending at now; see `gateway/cli/demo_evidence.py`). Each run: an
embedded FalkorDB graph with the world, the case's alerts through triage, the shipped
investigator (no model), then the finding is scored against the case's accepted answers:

- top-1: the root cause is right; top-3: a right answer is the cause or among the first three
  named candidates; inconclusive: no root cause named (and how many of those name a right
  answer among their candidates); confidently wrong: a root cause named and wrong (the worst
  outcome).

Cases: the ten bundled faults (`gateway/data/otel-demo/faults.yaml`, alerts as `blast-radius
demo` fires them, evidence from `gateway/data/otel-demo/evidence.yaml`) and our own extra ones
(`bench/rca_cases.yaml`, which also holds the evidence each case leaves). `--cases
bench/rca_itbench.yaml` runs the published ITBench SRE scenarios on the same world instead
(mapped onto its components by the rule in that file's header; no bundled faults). Prints one
row per case, a summary table per mode, and a reliability table over every root cause named
(confidence band -> share right; a finding at 0.8 or above must be right 9 times in 10).
Every incident a case opens is investigated (re-investigations included) and scored: one
wrong root cause among them makes the case wrong. `bench/rca_worlds.py` runs the same scoring
on other worlds (a compose file, a hand-written world file).

`--story`: a story of incidents in time order on one graph with evidence (`story:` in the cases
file: families of repeats worded differently, silent roots), each followed by the engineer's
verdict (confirmed when right, else rejected naming the cause) and the learner; prints which
were right and which repeats memory settled with no planner.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from adapters.falkordb import EmbeddedFalkorDB, GraphStore, TenantGraph, graph_name
from adapters.prometheus import Prometheus
from agents.investigate.investigator import Investigator
from agents.learn.learner import Learner
from agents.learn.verdicts import Verdict, record
from agents.tasks.coordination import TaskRun, claim
from agents.triage.triage import triage
from gateway.cli.demo import demo_faults_path, rfc3339, scenario_bodies
from gateway.cli.demo_evidence import PrometheusServer, demo_evidence, with_evidence
from gateway.http.payloads import normalize, parse_body
from gateway.world import WorldSpec, demo_world_path, import_world, load_world
from gateway.world.discover import discover

CASES = Path(__file__).with_name("rca_cases.yaml")
#: A wrong root cause at this confidence or more is counted apart (the issue's "at 0.9").
SURE = 0.5
#: The fault starts this long before now; its alerts fire two minutes later.
FAULT_AGO_S = 15 * 60


@dataclass
class Case:
    """One fault: its Alertmanager bodies, accepted answers, and the evidence it leaves."""

    name: str
    accept: list[str]
    bodies: list[dict[str, Any]]
    evidence: dict[str, dict[str, float]] = field(default_factory=dict)
    source: str = "extra"
    #: Metric name prefix (a collector namespace), whether span metrics are written too, and
    #: whether service-graph metrics are (a deployment with span metrics only has none).
    prefix: str = ""
    spans: bool = False
    service_graph: bool = True


def body(alerts: list[list[Any]], starts: datetime) -> dict[str, Any]:
    """One Alertmanager v4 body of `[alertname, service, {labels}]` alerts; a null service
    leaves the `service` label out (a pod or node alert names its object in `labels`)."""
    return {
        "version": "4", "status": "firing", "receiver": "blast-radius", "groupKey": "{}:{}",
        "alerts": [
            {"status": "firing",
             "labels": {"alertname": name, "severity": "warning"}
             | ({"service": service} if service else {})
             | {k: str(v) for k, v in (extra or {}).items()},
             "annotations": {"summary": f"{name} on {service}" if service else name},
             "startsAt": rfc3339(starts), "endsAt": "0001-01-01T00:00:00Z"}
            for name, service, extra in alerts
        ],
    }  # fmt: skip


#: Top-level keys of a cases file that are not a list of cases.
NOT_CASES = ("bundled", "story")


def load_cases(path: Path, starts: datetime) -> list[Case]:
    """The bundled faults (with their evidence from `gateway/data/otel-demo/evidence.yaml`;
    left out when the file says `bundled: false`) and the cases of every other list in `path`
    (`extra`, `itbench`, …), each list's name its cases' source in the summary."""
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    cases = []
    if spec.get("bundled", True):
        faults = yaml.safe_load(demo_faults_path().read_text(encoding="utf-8"))["faults"]
        evidence = demo_evidence()
        cases += [
            Case(
                f["flag"],
                f["root_cause"].get("accept") or [f["root_cause"]["component"]],
                scenario_bodies(f, starts, "firing"),
                evidence.get(f["flag"], {}),
                "bundled",
            )
            for f in faults
        ]
    cases += [
        Case(
            c["name"], c["accept"], [body(c["alerts"], starts)], c.get("evidence", {}),
            source, c.get("metric_prefix", ""), bool(c.get("span_metrics")),
            c.get("service_graph", True),
        )
        for source, section in spec.items() if source not in NOT_CASES
        for c in section
    ]  # fmt: skip
    return cases


def investigate(
    store: GraphStore,
    case: Case,
    prometheus: Prometheus | None,
    world: WorldSpec | None = None,
    discover_from: str | None = None,
) -> list[dict[str, Any]]:
    """Run one case on a fresh tenant graph (the bundled world, or `world`; with
    `discover_from`, a Prometheus URL, the service graph is discovered into it first, as
    `topology discover` does) and investigate every incident it opens, re-investigations
    included. Returns each incident row with its finding, `incidents` (how many the case
    opened) and `investigations` (how many investigate/reinvestigate tasks ran on it)."""
    graph: TenantGraph = store.graph(graph_name(f"rca{uuid.uuid4().hex[:10]}"))
    graph.ensure_schema()
    import_world(graph, world or load_world(demo_world_path()))
    if discover_from is not None and prometheus is not None:
        discover(graph, prometheus, discover_from, window="2h")
    incidents: list[str] = []
    for b in case.bodies:
        alerts = normalize(parse_body(json.dumps(b).encode()), "warning")
        incidents += triage(graph, alerts, 900_000).incidents
    runs: dict[str, int] = {}
    while (
        claimed := claim(graph, ["investigate", "reinvestigate"], "bench", 60_000, 3)
    ) is not None:
        Investigator(6, prometheus).run(TaskRun(graph, claimed, 60_000))
        runs[claimed.incident_id] = runs.get(claimed.incident_id, 0) + 1
    rows = []
    for incident_id in runs:
        row = graph.one("incident_get", {"incident_id": incident_id})
        assert row is not None
        if row["status"] != "merged":
            rows.append(row | {"investigations": runs[incident_id]})
    return [r | {"incidents": len(rows)} for r in rows]


def score(case: Case, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """top1 / top3 / inconclusive / wrong over every incident a case opened (its findings):
    right when a finding names an accepted cause and none names a wrong one; wrong when any
    names a wrong cause (a second page blaming the wrong team is wrong too); `claims`: each
    named root cause as (confidence, right) for the reliability table."""
    causes = [r["root_cause"] for r in rows if r["root_cause"]]
    named = [n for r in rows for n in list(r["candidates"] or [])[:3]]
    wrong = [r for r in rows if r["root_cause"] and r["root_cause"] not in case.accept]
    main = max(rows, key=lambda r: len(r["candidates"] or []) + 10 * bool(r["root_cause"]))
    return {
        "case": case.name, "source": case.source,
        "cause": "+".join(causes) or None, "candidates": list(main["candidates"] or []),
        "confidence": max((r["confidence"] for r in rows if r["root_cause"]), default=0.0),
        "summary": " | ".join(r["summary"] for r in rows),
        "top1": bool(causes) and not wrong,
        "top3": not wrong and bool(set(causes + named) & set(case.accept)),
        "inconclusive": not causes,
        "wrong": bool(wrong),
        "named": not causes and bool(set(named) & set(case.accept)),
        "sure_wrong": any(r["confidence"] >= SURE for r in wrong),
        "claims": [(float(r["confidence"]), r["root_cause"] in case.accept)
                   for r in rows if r["root_cause"]],
        "incidents": len(rows),
        "investigations": max(r["investigations"] for r in rows),
    }  # fmt: skip


def verdict(row: dict[str, Any]) -> str:
    """A scored row's verdict: `ok` (the right cause), `WRONG` (a wrong one), else
    `inconclusive`."""
    return "ok" if row["top1"] else "WRONG" if row["wrong"] else "inconclusive"


def named(row: dict[str, Any]) -> str:
    """What a scored row's finding named: its cause, else its candidates joined by `/`."""
    return str(row["cause"] or "/".join(row["candidates"]))


def summary(rows: list[dict[str, Any]]) -> str:
    """The summary table: per source (bundled, extra, all) and mode."""
    lines = ["| mode | cases | top-1 | top-3 | inconclusive | of which naming the cause | "
             f"confidently wrong | of which confidence ≥ {SURE} |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    sources = list(dict.fromkeys(r["source"] for r in rows))
    for mode in list(dict.fromkeys(r["mode"] for r in rows)):
        for source in [*sources, "all"] if len(sources) > 1 else sources:
            mine = [r for r in rows if r["mode"] == mode and source in (r["source"], "all")]
            if not mine:
                continue
            keys = ("top1", "top3", "inconclusive", "named", "wrong", "sure_wrong")
            count = {k: sum(1 for r in mine if r[k]) for k in keys}
            lines.append(
                f"| {mode} ({source}) | {len(mine)} | {count['top1']} | {count['top3']} | "
                f"{count['inconclusive']} | {count['named']} | {count['wrong']} | "
                f"{count['sure_wrong']} |"
            )
    return "\n".join(lines)


#: Confidence bands of the reliability table, [low, high).
BANDS = ((0.0, 0.5), (0.5, 0.8), (0.8, 1.01))
#: A root cause named at 0.8 or more must be right this often.
SURE_RIGHT = 0.9


def reliability(rows: list[dict[str, Any]]) -> str:
    """The reliability table over every named root cause of every case and mode run:
    confidence band -> how many were named and the share right. Confident and wrong is the
    worst outcome, so the top band must be right at least `SURE_RIGHT` of the time."""
    claims = [c for r in rows for c in r["claims"]]
    lines = ["| confidence | root causes named | right | share right |", "|---|---|---|---|"]
    for low, high in BANDS:
        mine = [ok for conf, ok in claims if low <= conf < high]
        share = f"{sum(mine) / len(mine):.0%}" if mine else "n/a (none named)"
        label = f"[{low:.1f}, {min(high, 1.0):.1f}{']' if high > 1 else ')'}"
        lines.append(f"| {label} | {len(mine)} | {sum(mine)} | {share} |")
    inconclusive = sum(1 for r in rows if r["inconclusive"])
    lines.append(f"| inconclusive (no root cause named) | {inconclusive} cases | | |")
    top = [ok for conf, ok in claims if conf >= 0.8]
    held = not top or sum(top) / len(top) >= SURE_RIGHT
    lines.append("")
    lines.append(f"calibration at >= 0.8: {'holds' if held else 'FAILS'} "
                 f"({sum(top)} of {len(top)} right; needs {SURE_RIGHT:.0%})")  # fmt: skip
    return "\n".join(lines)


def story(
    store: GraphStore, scratch: Path, spec: list[dict[str, Any]], now: float, verbose: bool
) -> None:
    """Run the story (module docstring) and print one row per incident and a total line."""
    graph = store.graph(graph_name(f"story{uuid.uuid4().hex[:8]}"))
    graph.ensure_schema()
    import_world(graph, load_world(demo_world_path()))
    starts = datetime.fromtimestamp(int(now) - FAULT_AGO_S + 120, UTC)
    right = settled = repeats = 0
    seen: set[str] = set()
    for index, step in enumerate(spec):
        family, accept = step["family"], step["accept"]
        repeat = family in seen
        seen.add(family)
        prom = PrometheusServer(
            scratch / f"story-{index}", with_evidence(step["evidence"]), int(now) - FAULT_AGO_S
        )
        client = Prometheus(prom.url)
        # a new episode each time (identity is fingerprint@startsAt), seconds apart
        firing = body(step["alerts"], starts + timedelta(seconds=index))
        try:
            triage(graph, normalize(parse_body(json.dumps(firing).encode()), "warning"), 900_000)
            claimed = claim(graph, ["investigate"], "bench", 60_000, 3)
            assert claimed is not None
            Investigator(6, client).run(TaskRun(graph, claimed, 60_000))
        finally:
            client.close()
            prom.stop()
        row = graph.one("incident_get", {"incident_id": claimed.incident_id})
        assert row is not None
        ok = row["root_cause"] in accept
        right += ok
        repeats += repeat
        by_memory = row["planner"] == "memory"
        settled += repeat and by_memory and ok
        verdict = Verdict(
            id=f"v{index}", incident_id=claimed.incident_id,
            verdict="confirmed" if ok else "rejected",
            actual_cause=row["root_cause"] if ok else accept[0], by="UBENCH", by_name=None,
            at=int(time.time() * 1000), text="", source="api", event_id=f"e{index}",
        )  # fmt: skip
        record(graph, verdict)
        while (learn := claim(graph, ["learn"], "bench", 60_000, 3)) is not None:
            Learner().run(TaskRun(graph, learn, 60_000))
        resolved = json.loads(json.dumps(firing).replace('"firing"', '"resolved"'))
        for alert in resolved["alerts"]:
            alert["endsAt"] = rfc3339(starts + timedelta(seconds=index + 1))
        triage(graph, normalize(parse_body(json.dumps(resolved).encode()), "warning"), 900_000)
        outcome = "ok" if ok else "WRONG" if row["root_cause"] else "inconclusive"
        if verbose:
            print(f"    {row['summary']}")
        print(f"{index + 1}. {family:10} {'repeat' if repeat else 'first ':6} "
              f"{row['planner']:7} {outcome:12} "
              f"{row['root_cause'] or '/'.join(row['candidates'] or [])}")  # fmt: skip
    print(f"right: {right}/{len(spec)}; repeats settled by memory (no planner), right: "
          f"{settled}/{repeats}")  # fmt: skip


def main() -> None:
    """Parse arguments, run every case in both modes, print the rows and the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=CASES)
    parser.add_argument("--only", help="run only the case of this name")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each summary")
    parser.add_argument("--story", action="store_true", help="run the story, not the cases")
    args = parser.parse_args()
    now = time.time()
    starts = datetime.fromtimestamp(int(now) - FAULT_AGO_S + 120, UTC)
    cases = [c for c in load_cases(args.cases, starts) if args.only in (None, c.name)]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="blast-radius-rca-") as scratch:
        server = EmbeddedFalkorDB(Path(scratch) / "falkordb")
        store = GraphStore(server.start(), timeout_ms=5_000)
        try:
            if args.story:
                spec = yaml.safe_load(args.cases.read_text(encoding="utf-8"))["story"]
                story(store, Path(scratch), spec, now, args.verbose)
                return
            for index, case in enumerate(cases):
                folder = Path(scratch) / f"prometheus-{index}"
                prom = PrometheusServer(
                    folder, with_evidence(case.evidence), int(now) - FAULT_AGO_S,
                    spans=case.spans, prefix=case.prefix, service_graph=case.service_graph,
                )  # fmt: skip
                client = Prometheus(prom.url)
                try:
                    for mode, source in (("alerts only", None), ("with evidence", client)):
                        row = score(case, investigate(store, case, source)) | {"mode": mode}
                        rows.append(row)
                        print(f"{case.name:48} {mode:13} {verdict(row):12} {named(row)}")
                        if args.verbose:
                            print(f"    {row['confidence']}: {row['summary']}")
                finally:
                    client.close()
                    prom.stop()
        finally:
            store.close()
            server.stop()
    print()
    print(summary(rows))
    print()
    print(reliability(rows))


if __name__ == "__main__":
    main()
