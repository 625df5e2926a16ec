"""A remembered cause whose calls read as usual, when no measured call near the incident
fails or slows: memory's lead (agents/investigate/remembered.py `measure_missed`), through
`bench/memory_eval.py --evidence` on a story of its own (tests/data/quiet-memory-*.yaml).

The grants service is silent both times: first its calls time out (the rules name it from the
service graph, the engineer confirms, a playbook is learned with `calls_degraded`); then it
answers at its usual speed with the wrong grants, the same services alert, and nothing measured
is degraded anywhere. Before, the playbook's failed calls check ruled it out and the model was
asked; now memory names it as a lead, with no model call. The same holds when the evidence
does blame a call near the incident, but one that explains fewer of the alerting services
than the grants service does (tests/data/quiet-memory-stream-2.yaml): before, the rules named
that call's server at 0.47."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import clean_env

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"


def replayed(stream: str) -> dict[tuple[int, str], tuple[str, ...]]:
    """`bench.memory_eval --evidence -v` on the test world and `stream`: (incident number,
    setup) -> (number, setup, planner, ok/WRONG, cause named, confidence, model calls)."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.memory_eval", "--evidence", "-v",
         "--world", str(DATA / "quiet-memory-world.yaml"), "--stream", str(DATA / stream)],
        cwd=ROOT, env=clean_env("BLAST_") | {"PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return {
        (int(m[1]), m[2]): m.groups()
        for m in re.finditer(
            r"^\s*(\d+)\. (\w+)\s+\S+\s+\S+\s+(\w+)\s+(ok|WRONG)\s+(\S+)\s+([\d.]+) model (\d+)",
            done.stdout, re.M,
        )
    }  # fmt: skip


def test_a_cause_that_answers_wrong_at_its_usual_speed_is_memory_s_lead() -> None:
    rows = replayed("quiet-memory-stream.yaml")
    first = rows[(1, "graph")]
    assert first[2:5] == ("rules", "ok", "grants-svc")
    repeat = rows[(2, "graph")]
    # named by memory, a lead (under 0.5), and no model call
    assert repeat[2:5] == ("memory", "ok", "grants-svc")
    assert float(repeat[5]) < 0.5 and repeat[6] == "0"
    # without memory the same incident needs the model
    assert rows[(2, "none")][2] == "model" and int(rows[(2, "none")][6]) > 0


def test_a_failing_call_that_explains_fewer_alerts_does_not_refute_memory_s_lead() -> None:
    rows = replayed("quiet-memory-stream-2.yaml")
    assert rows[(1, "graph")][2:5] == ("rules", "ok", "grants-svc")
    # the feed API's failing calls into the catalog explain one of the two alerting services
    assert rows[(2, "none")][2:5] == ("rules", "WRONG", "catalog-svc")
    repeat = rows[(2, "graph")]
    assert repeat[2:5] == ("memory", "ok", "grants-svc")
    assert float(repeat[5]) < 0.5 and repeat[6] == "0"
