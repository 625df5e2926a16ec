"""The published ITBench cases of `bench/rca_itbench.yaml` name only what the bundled world
has: every accepted answer, chain step, alerting service or pod, and evidence edge is one of its
components (an edge between two of them), so the benchmark scores them on that world. No
benchmark runs here."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import yaml

from agents.triage.triage import component_candidates
from bench.rca import load_cases
from gateway.world import demo_world_path, load_world

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "bench" / "rca_itbench.yaml"


def test_every_itbench_case_names_components_of_the_bundled_world() -> None:
    world = load_world(demo_world_path())
    components = {c.id for c in world.components}
    spec = yaml.safe_load(CASES.read_text(encoding="utf-8"))
    cases = spec["itbench"]
    assert spec["bundled"] is False
    assert len({c["itbench"] for c in cases}) == len(cases) == 22
    for case in cases:
        named = set(case["accept"]) | set(case["chain"])
        for alertname, service, labels in case["alerts"]:
            assert re.fullmatch(r"[A-Za-z]+", alertname), (case["name"], alertname)
            if service is not None:
                named.add(service)
            elif "pod" in labels:  # the component triage reads from a kube-state-metrics pod
                named.add(component_candidates(labels)[0])
            else:  # a node alert: the one that names no component, on purpose
                assert set(labels) == {"node"}, case["name"]
        for edge in case["evidence"]:
            named |= set(edge.split(">"))
        assert named <= components, (case["name"], sorted(named - components))
        assert case["accept"][0] == case["chain"][0], case["name"]  # the root heads its chain


def test_the_runner_loads_only_the_itbench_cases() -> None:
    cases = load_cases(CASES, datetime(2026, 1, 1, tzinfo=UTC))
    assert {c.source for c in cases} == {"itbench"}
    assert len(cases) == 22
    pod_alert = next(c for c in cases if c.name == "itbench-23-checkout-image-wrong-architecture")
    labels = pod_alert.bodies[0]["alerts"][0]["labels"]
    assert "service" not in labels and labels["pod"].startswith("checkout-")
