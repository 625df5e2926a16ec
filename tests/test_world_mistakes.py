"""The mistakes people make in the files they hand in, each said with its file and line, none
silently ignored: a misspelt key, a key given twice, a YAML syntax error, a byte that is not
UTF-8, a compose service that is no mapping, an `--env-file` that is not there, a Backstage
field of the wrong type, a calendar that repeats every minute; and a file's identity that does
not depend on how its path was typed."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from adapters.falkordb import GraphStore
from gateway.world import TopologyError, apply_world
from gateway.world.oncall import MAX_CALENDAR_SHIFTS, calendar_shifts
from gateway.world.sources import load_sources


def problems_of(*paths: Path, env_file: Path | None = None) -> list[str]:
    with pytest.raises(TopologyError) as caught:
        load_sources(list(paths), env_file=env_file)
    return caught.value.problems


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


TYPOS = """\
components:
  - {id: web, kind: proxy, language: go}
  - {id: api, kind: service, hosted-on: web}
teams:
  - name: platform
    own: [web, api]
    members:
      - {name: Cy Park, emial: cy@acme.test}
default_team: platform
"""


def test_a_key_close_to_a_field_is_a_typo_and_a_note_is_not(tmp_path: Path) -> None:
    path = write(tmp_path, "world.yaml", TYPOS)
    assert problems_of(path) == [
        f"{path}:3: components.1.hosted-on: unknown key 'hosted-on': did you mean 'hosted_on'?",
        f"{path}:6: teams.0.own: unknown key 'own': did you mean 'owns'?",
        f"{path}:8: teams.0.members.0.emial: unknown key 'emial': did you mean 'email'?",
    ]  # `language: go` is a note the bundled world carries too: no problem


def test_a_key_given_twice_is_refused_with_both_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "world.yaml", (
        "components:\n  - {id: billing, kind: service}\n  - {id: api, kind: service}\n"
        "teams:\n  - name: t\n    owns: [billing]\n    members: [{name: x}]\n    owns: [api]\n"
        "default_team: t\n"
    ))  # fmt: skip
    assert problems_of(path) == [
        f"{path}:8:5: key 'owns' is given twice in one mapping (first on line 6); YAML keeps "
        "only one of them"
    ]


def test_a_merge_key_may_still_be_overridden(tmp_path: Path) -> None:
    """Compose files override what `<<: *defaults` brings in: that is no duplicate."""
    path = write(tmp_path, "compose.yaml", (
        "x-defaults: &defaults\n  image: base\n  environment: {A: '1'}\n"
        "services:\n  api:\n    <<: *defaults\n    image: acme/api\n"
    ))  # fmt: skip
    loaded = load_sources([path])
    assert [c.id for c in loaded.world.components] == ["api"]


def test_syntax_and_encoding_errors_name_the_line(tmp_path: Path) -> None:
    broken = write(tmp_path, "broken.yaml", "components:\n  - {id: a, kind: service\nteams: []\n")
    assert problems_of(broken) == [
        f"{broken}:3:6: expected ',' or '}}', but got ':' (while parsing a flow mapping)"
    ]
    latin = write(tmp_path, "latin.yaml", b"components:\n  - {id: a, kind: service}\n# J\xfcrgen\n")
    assert problems_of(latin) == [f"{latin}:3: not UTF-8 (byte 0xfc): save it as UTF-8"]


def test_compose_mistakes_are_problems_not_tracebacks(tmp_path: Path) -> None:
    compose = write(tmp_path, "compose.yaml", "services:\n  api: oops\n")
    assert problems_of(compose) == [
        f"{compose}: services.api: must be a mapping (image, …), not str"
    ]
    good = write(tmp_path, "good.yaml", "services:\n  api: {image: acme/api}\n")
    missing = tmp_path / "dotenv.enf"  # a typo of dotenv.env: edges would silently retire
    assert problems_of(good, env_file=missing) == [f"--env-file {missing}: no such file"]


def test_backstage_fields_of_the_wrong_type_are_problems(tmp_path: Path) -> None:
    catalog = write(
        tmp_path,
        "catalog-info.yaml",
        """\
apiVersion: backstage.io/v1alpha1
kind: Component
metadata: {name: svc}
spec: {type: service, owner: group:default/team-a, dependsOn: resource:default/db}
---
apiVersion: backstage.io/v1alpha1
kind: Group
metadata: {name: team-a}
spec: {type: team}
---
apiVersion: backstage.io/v1alpha1
kind: User
metadata: {name: jane}
spec: {profile: {displayName: "Jane\\tDoe"}, memberOf: [team-a]}
""",
    )
    found = problems_of(catalog)
    assert found[0] == f"{catalog}: svc: spec.dependsOn must be a list of entity references"
    assert found[1].startswith(f"{catalog}: user 'jane': name: ")
    assert len(found) == 2


def test_a_calendar_repeating_every_minute_is_refused(tmp_path: Path) -> None:
    ics = (
        b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\nBEGIN:VEVENT\r\nUID:1\r\n"
        b"DTSTART:20261201T000000Z\r\nDTEND:20261201T000100Z\r\nRRULE:FREQ=MINUTELY\r\n"
        b"SUMMARY:Ann\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    with pytest.raises(ValueError, match=f"more than {MAX_CALENDAR_SHIFTS} shifts"):
        calendar_shifts(ics, [{"name": "Ann"}], datetime(2026, 12, 1, tzinfo=UTC))


def test_a_file_is_one_source_however_its_path_is_typed(
    tmp_path: Path, store: GraphStore, tenant: str
) -> None:
    """Edges a file no longer says are retired on the next import of it, by another path too
    (the source id was the path as typed, so `../w/world.yaml` was a second source)."""
    folder = tmp_path / "w"
    folder.mkdir()
    world = (
        "components:\n  - {id: api, kind: service}\n  - {id: db, kind: datastore}\n"
        "  - {id: cache, kind: datastore}\nedges:\n"
        "  - {from: api, to: db, type: READS_WRITES}\n{extra}"
        "teams:\n  - {name: t, owns: [api, db, cache], members: [{name: x}]}\ndefault_team: t\n"
    )
    cache_edge = "  - {from: api, to: cache, type: READS_WRITES}\n"
    path = write(folder, "world.yaml", world.replace("{extra}", cache_edge))
    graph = store.graph(f"org_{tenant}")
    graph.ensure_schema()
    first = load_sources([path])
    apply_world(graph, first.world, first.sources, explicit=True)
    write(folder, "world.yaml", world.replace("{extra}", ""))
    here = Path.cwd()
    try:
        os.chdir(tmp_path)
        relative = Path("../") / tmp_path.name / "w" / "world.yaml"
        loaded = load_sources([relative])
        report = apply_world(graph, loaded.world, loaded.sources, explicit=True)
    finally:
        os.chdir(here)
    assert [line for line in report.retired if "api -READS_WRITES-> cache" in line], report


def test_kubernetes_workloads_without_a_name_or_in_two_namespaces_are_said(
    tmp_path: Path,
) -> None:
    def deployment(meta: str) -> str:
        return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {meta}\nspec:\n  template:\n"
                "    spec: {containers: [{name: c, image: acme/x}]}\n")  # fmt: skip

    unnamed = write(tmp_path, "unnamed.yaml", deployment("{generateName: job-}"))
    assert problems_of(unnamed) == [
        f"{unnamed}: a Deployment has no metadata.name or app.kubernetes.io/name label"
    ]
    two = write(tmp_path, "two.yaml", deployment("{name: cart, namespace: shop}") + "---\n"
                + deployment("{name: cart, namespace: payments}"))  # fmt: skip
    loaded = load_sources([two])
    assert [c.id for c in loaded.world.components] == ["cart"]
    assert any("namespaces shop and payments are one component" in n for n in loaded.unmapped)


def test_provenance_is_not_read_from_a_file(tmp_path: Path) -> None:
    """Which source said a team or an ownership is where the file is, never its text: a
    `sources:` written in a team would otherwise decide what a later import removes."""
    path = write(tmp_path, "world.yaml", (
        "components:\n  - {id: api, kind: service}\nteams:\n  - name: t\n    owns: [api]\n"
        "    members: [{name: x}]\n    sources: ['backstage:/elsewhere.yaml']\ndefault_team: t\n"
    ))  # fmt: skip
    assert problems_of(path) == [
        f"{path}:7: teams.0.sources: 'sources' is set by the import, not a file"
    ]


def test_ids_differing_only_in_case_and_one_bad_team_field_are_said_once(tmp_path: Path) -> None:
    path = write(tmp_path, "world.yaml", (
        "components:\n  - {id: api, kind: service}\n  - {id: API, kind: service}\nteams:\n"
        "  - name: platform\n    owns: [api]\n    members: [{name: x}]\n"
        "    oncall: {rotation: [x], start: '2026-11-02T09:00:00Z', shift_hour: 12}\n"
        "default_team: platform\n"
    ))  # fmt: skip
    assert problems_of(path) == [
        f"{path}:8: teams.0.oncall.shift_hour: Extra inputs are not permitted",
        f"{path}:3: components.1.id: id 'API' differs from 'api' ({path}:2: components.0.id) "
        "only in case: alert labels match exactly, so use one spelling",
    ]  # and not "default_team: 'platform' is not a team": the team is there, with a bad field
