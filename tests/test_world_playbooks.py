"""Playbooks in a world file (`playbooks:`) on the real FalkorDB: written with their checks and
remediation, updated in place keeping what memory earned, retired when the file drops them and
active again when it lists them again; every mistake is a problem with its line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from adapters.falkordb import TenantGraph
from gateway.world import TopologyError, apply_world, load_world
from gateway.world.sources import load_sources

WORLD = """\
components:
  - {id: api, kind: service}
  - {id: ledger-db, kind: datastore, tech: PostgreSQL}
edges:
  - {from: api, to: ledger-db, type: READS_WRITES}
teams:
  - name: ledger
    owns: [api, ledger-db]
    members: [{name: Lu Example, email: lu@example.com}]
default_team: ledger
playbooks:
  - id: ledger-rollback
    title: Roll back the api after a bad deploy
    component: api
    failure_kind: errors
    checks:
      - {type: alert_kind, kind: errors}
    remediation:
      type: github_workflow
      repo: ledger/api
      workflow: rollback.yml
      ref: main
      inputs: {service: api}
"""
SECOND = """\
  - id: ledger-db-connections
    title: Ledger DB out of connections
    component: ledger-db
    checks:
      - {type: named_by_alert}
"""


def playbooks(graph: TenantGraph) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in graph.rows("list_playbooks", {})}


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "world.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def imported(graph: TenantGraph, path: Path) -> Any:
    loaded = load_sources([path])
    return apply_world(graph, loaded.world, loaded.sources, explicit=loaded.explicit)


def test_a_world_file_carries_playbooks_with_checks_and_a_remediation(graph, tmp_path) -> None:
    report = imported(graph, write(tmp_path, WORLD + SECOND))
    assert report.counts["playbooks"] == 2
    assert any(line.startswith("playbook ledger-rollback on api (from world:") for line in
               report.new)  # fmt: skip
    found = playbooks(graph)
    rollback = found["ledger-rollback"]
    assert (rollback["component"], rollback["status"], rollback["trust"]) == ("api", "active", 0.5)
    assert json.loads(rollback["checks_json"]) == [
        {"type": "alert_kind", "kind": "errors", "scope": "candidate"}
    ]
    assert json.loads(rollback["remediation_json"])["workflow"] == "rollback.yml"
    assert found["ledger-db-connections"]["remediation_json"] is None
    again = imported(graph, write(tmp_path, WORLD + SECOND))  # idempotent: nothing to say
    assert [x for x in again.new + again.changed + again.retired if "playbook" in x] == []


def test_a_re_import_updates_in_place_keeps_trust_and_retires_what_the_file_dropped(
    graph, tmp_path
) -> None:
    path = write(tmp_path, WORLD + SECOND)
    imported(graph, path)
    # what memory earned since (the learner's counters), kept through the re-import
    graph._graph.query("MATCH (pb:Playbook {id: 'ledger-rollback'}) "
                       "SET pb.helped = 3, pb.trust = 0.8")  # fmt: skip
    moved = WORLD.replace("Roll back the api after a bad deploy", "Roll back api").replace(
        "    component: api\n", "    component: ledger-db\n"
    )
    report = imported(graph, write(tmp_path, moved))
    found = playbooks(graph)
    rollback = found["ledger-rollback"]
    assert (rollback["title"], rollback["component"]) == ("Roll back api", "ledger-db")
    assert (rollback["helped"], rollback["trust"]) == (3, 0.8)
    assert len([r for r in graph.rows("list_playbooks", {}) if r["id"] == "ledger-rollback"]) == 1
    dropped = found["ledger-db-connections"]
    assert dropped["status"] == "retired"
    assert dropped["retired_reason"] == f"no longer in {path.resolve()}"
    assert f"playbook ledger-db-connections: no longer in {path.resolve()}" in report.retired
    assert "playbook ledger-rollback on ledger-db: updated from the file (trust kept)" in (
        report.changed
    )
    back = imported(graph, write(tmp_path, moved + SECOND))
    assert playbooks(graph)["ledger-db-connections"]["status"] == "active"
    assert any("in the file again, active again" in line for line in back.changed)


def test_a_playbook_a_person_retired_stays_retired(graph, tmp_path) -> None:
    path = write(tmp_path, WORLD)
    imported(graph, path)
    graph.one("retire_playbook", {"id": "ledger-rollback", "reason": "wrong fix", "by": "Lu"})
    imported(graph, path)
    assert playbooks(graph)["ledger-rollback"]["status"] == "retired"
    assert playbooks(graph)["ledger-rollback"]["retired_reason"] == "wrong fix"


def test_an_import_of_other_sources_leaves_world_playbooks_alone(graph, tmp_path) -> None:
    imported(graph, write(tmp_path, WORLD))
    compose = tmp_path / "compose.yaml"
    compose.write_text("services:\n  api:\n    image: ledger/api\n", encoding="utf-8")
    imported(graph, compose)
    assert playbooks(graph)["ledger-rollback"]["status"] == "active"


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            ("    failure_kind: errors\n", "    failure_kind: errors\n    remediaton: {}\n"),
            "world.yaml:16: playbooks.0.remediaton: Extra inputs are not permitted",
        ),
        (
            ("    component: api\n", "    component: apii\n"),
            "world.yaml:14: playbooks.0.component: playbook 'ledger-rollback' is pinned to unknown "
            "component 'apii'",
        ),
        (
            ("{type: alert_kind, kind: errors}", "{type: alert_knd}"),
            "world.yaml:17: playbooks.0.checks.0: Input tag 'alert_knd'",
        ),
        (
            ("workflow: rollback.yml", "workflw: rollback.yml"),
            "world.yaml:21: playbooks.0.remediation.workflw: Extra inputs",
        ),
    ],
)
def test_a_playbook_mistake_is_a_problem_with_its_line(
    tmp_path, change: tuple[str, str], problem: str
) -> None:
    path = write(tmp_path, WORLD.replace(*change))
    with pytest.raises(TopologyError) as caught:
        load_world(path)
    assert any(problem in line for line in caught.value.problems), caught.value.problems


def test_two_playbooks_with_one_id_are_a_problem(tmp_path) -> None:
    path = write(tmp_path, WORLD + SECOND.replace("ledger-db-connections", "ledger-rollback"))
    with pytest.raises(TopologyError) as caught:
        load_world(path)
    assert any("playbooks.1.id: duplicate playbook id 'ledger-rollback'" in line
               for line in caught.value.problems), caught.value.problems  # fmt: skip
