"""A world that is checked before it is trusted: every problem at once with
its line, nothing written, the right tenant, and on-call coverage that does not expire."""

from __future__ import annotations

import copy
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from adapters.falkordb import EmbeddedFalkorDB, TenantGraph
from agents.metrics import Metrics
from gateway.cli.doctor import check_oncall
from gateway.ops.upkeep import Upkeep
from gateway.world import TopologyError, apply_world, import_world, load_world, world_counts
from gateway.world.model import WorldSpec
from gateway.world.oncall import coverage, coverage_problems
from tests.conftest import clean_env, make_settings
from tests.test_topology import WORLD, cli

ROOT = Path(__file__).resolve().parents[1]

#: Three different mistakes: a typo in `owns`, a rotation naming a non-member, an empty team.
BAD = """\
components:
  - {id: api, kind: service}
  - {id: database, kind: datastore}
teams:
  - name: core
    owns: [api, databse]
    members:
      - {name: Al Smith}
    oncall: {rotation: [Al Smyth], shift_hours: 168, start: "2026-01-05T09:00:00Z"}
  - name: ghosts
    owns: [database]
default_team: core
"""


def write(tmp_path: Path, text: str, name: str = "world.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_three_mistakes_are_named_with_their_lines_and_nothing_is_written(
    tmp_path: Path, graph: TenantGraph
) -> None:
    path = write(tmp_path, BAD)
    before = world_counts(graph)
    with pytest.raises(TopologyError) as caught:
        load_world(path)
    problems = caught.value.problems
    assert problems == [
        f"{path}:6: teams.0.owns.1: team 'core' owns unknown component 'databse' (did you mean "
        "'database'?)",
        f"{path}:9: teams.0.oncall.rotation.0: rotation of 'core' names 'Al Smyth', who is not "
        "a member (did you mean 'Al Smith'?) (members: Al Smith)",
        f"{path}:10: teams.1.members: team 'ghosts' has no members",
    ]
    # The writer checks too (a model built in code is not trusted either): nothing is written.
    unchecked = yaml.safe_load(BAD)
    with pytest.raises(TopologyError) as again:
        apply_world(graph, WorldSpec.model_validate(unchecked), ["world:test"], explicit=True)
    assert len(again.value.problems) == 3
    assert world_counts(graph) == before

    validated = cli("topology", "validate", str(path))
    assert validated.returncode == 2
    assert "topology validate: 3 problems:" in validated.stderr
    for line in problems:
        assert line in validated.stderr
    done = cli("topology", "import", str(path), "--data-dir", str(tmp_path / "data"))
    assert done.returncode == 2 and "'databse'" in done.stderr
    assert "topology import: 3 problems, nothing written:" in done.stderr
    assert not (tmp_path / "data" / "falkordb").exists(), "no database started for a bad world"


#: An invalid item before others: the world leaves it out, the problems still name the file's
#: items and lines (components.2 on line 4, edges.1 on line 7, teams.1 on line 12).
AFTER_A_BAD_ITEM = """\
components:
  - {id: api, kind: service}
  - {id: cache, kind: cache}
  - {id: api, kind: service}
edges:
  - {from: api, to: cache, type: USES}
  - {from: api, to: db, type: CALLS}
teams:
  - {name: 7}
  - name: core
    members: [{name: Al Smith}]
    owns: [api, databse]
default_team: core
"""


def test_problems_after_an_invalid_item_name_the_file_s_item_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, AFTER_A_BAD_ITEM)
    with pytest.raises(TopologyError) as caught:
        load_world(path)
    problems = caught.value.problems
    assert f"{path}:4: components.2.id: duplicate id 'api'" in problems
    assert f"{path}:7: edges.1.to: edge api -> db: unknown component 'db'" in problems
    # no component is called anything like 'databse' here: no guess
    assert f"{path}:12: teams.1.owns.1: team 'core' owns unknown component 'databse'" in problems, (
        problems
    )


#: Two item-level mistakes (a channel that is no string, `repeat` over 10) in a team whose
#: rotation, escalation people, level order and team target are wrong too.
LAYERED = """\
components:
  - {id: api, kind: service}
teams:
  - name: core
    slack_channel: 7
    repeat: 99
    owns: [api]
    members: [{name: Bo Chen}, {name: Al Smith}]
    oncall: {rotation: [Bo Chen, Cy Nobody], start: "2026-01-05T09:00:00Z"}
    escalation_policy:
      - {after: 10m, notify: [Bobby]}
      - {after: 5m, notify: [{team: cor}]}
default_team: core
"""


def test_validate_lists_item_and_reference_problems_in_one_pass(tmp_path: Path) -> None:
    path = write(tmp_path, LAYERED)
    done = cli("topology", "validate", str(path))
    assert done.returncode == 2, done
    lines = [line.strip() for line in done.stderr.splitlines()[1:]]
    assert done.stderr.splitlines()[0] == "topology validate: 6 problems:", done.stderr
    assert lines[:2] == [
        f"{path}:5: teams.0.slack_channel: Input should be a valid string",
        f"{path}:6: teams.0.repeat: Input should be less than or equal to 10",
    ]
    assert sorted(lines[2:]) == sorted([
        f"{path}:9: teams.0.oncall.rotation.1: rotation of 'core' names 'Cy Nobody', who is "
        "not a member (members: Al Smith, Bo Chen)",
        f"{path}:11: teams.0.escalation_policy.0.notify.0: 'Bobby' is no member of any team "
        "(did you mean 'Bo Chen'?); give a person's name, {team: NAME} or '@channel'",
        f"{path}:12: teams.0.escalation_policy.1.after: level 2 of 'core' is due after 5m, not "
        "later than level 1 (10m): list levels in the order they run, each `after` larger than "
        "the one before",
        f"{path}:12: teams.0.escalation_policy.1.notify.0: 'cor' is not a team in `teams` "
        "(did you mean 'core'?)",
    ])  # fmt: skip


def test_duplicates_and_a_missing_or_unknown_default_team_are_problems(tmp_path: Path) -> None:
    world = copy.deepcopy(WORLD)
    world["components"].append({"id": "shop", "kind": "service"})
    world["components"].append({"id": "typo", "kind": "servce"})
    world["teams"].append(copy.deepcopy(world["teams"][1]))
    world["default_team"] = "nobody"
    done = cli("topology", "validate", str(write(tmp_path, yaml.safe_dump(world))))
    assert done.returncode == 2
    assert "duplicate id 'shop'" in done.stderr
    assert "duplicate team 'shop'" in done.stderr
    assert "default_team: 'nobody' is not a team in `teams`" in done.stderr
    assert "(got 'servce')" in done.stderr, "a wrong kind names the value given"
    del world["default_team"]
    done = cli("topology", "validate", str(write(tmp_path, yaml.safe_dump(world))))
    assert "default_team: Field required" in done.stderr
    assert "default_team: default_team:" not in done.stderr, "the field is named once"


def test_validate_accepts_a_sound_world_without_a_database(tmp_path: Path) -> None:
    done = cli("topology", "validate", str(write(tmp_path, yaml.safe_dump(WORLD))))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        "ok: 6 components, 6 edges (1 of them hosted_on), 2 teams, default team shop"
    )  # the count an import writes


def run_env(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = clean_env(("BLAST_", "FALKORDB_"))
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", *args], cwd=ROOT, capture_output=True, text=True,
        env=clean | {"PYTHONPATH": str(ROOT)} | env, timeout=120, check=False,
    )  # fmt: skip


def test_import_uses_the_only_tenant_or_asks_which(tmp_path: Path) -> None:
    path = write(tmp_path, yaml.safe_dump(WORLD))
    data = str(tmp_path / "data")
    two = run_env("topology", "import", str(path), "--data-dir", data,
                  BLAST_WEBHOOK_TOKENS="acme=a8f3k2m9x7q1w5e4,beta=z9y8x7w6v5u4t3s2")  # fmt: skip
    assert two.returncode == 2
    assert "several tenants are configured (acme, beta); say which with --tenant" in two.stderr
    one = run_env("topology", "import", str(path), "--data-dir", data,
                  BLAST_WEBHOOK_TOKENS="acme=a8f3k2m9x7q1w5e4")  # fmt: skip
    assert one.returncode == 0, one.stderr
    assert "imported into org_acme:" in one.stdout
    at = datetime.now(UTC) + timedelta(days=1)
    start = datetime(2026, 1, 5, 9, tzinfo=UTC)  # WORLD's rotation: a week each, Ann first
    expected = ["Ann Example", "Ben Example"][((at - start) // timedelta(days=7)) % 2]
    shown = run_env("oncall", "--tenant", "acme", "--data-dir", data, "--at", at.isoformat())
    assert f"  payments: {expected}" in shown.stdout
    # the shop team has no rotation at all: reported, exit 1
    assert "  shop (default team): NOBODY" in shown.stdout
    asked = f"{at:%Y-%m-%d %H:%M} UTC"  # the time asked about, not "now"
    assert shown.returncode == 1 and f"PROBLEM  acme: team shop has nobody on call at {asked}" in (
        shown.stdout
    )


def test_a_rotation_started_a_year_ago_still_has_someone_on_call_after_the_refresh(
    falkordb: EmbeddedFalkorDB, store, tenant: str, tmp_path: Path
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    year_ago = now - timedelta(days=365)
    world = copy.deepcopy(WORLD)
    world["teams"][0]["oncall"]["start"] = year_ago.isoformat()
    world["teams"][1]["oncall"] = {"rotation": ["Ann Example"], "start": year_ago.isoformat()}
    graph = store.graph(f"org_{tenant}")
    graph.ensure_schema()
    # Imported a year ago, never again: the expansion then reached 90 days, no further.
    import_world(graph, load_world(write(tmp_path, yaml.safe_dump(world))), now=year_ago)
    stale = coverage(graph, now)
    assert [t.on_call for t in stale] == [[], []]
    assert coverage_problems(stale, now) == [
        "team payments has nobody on call now",
        "team shop has nobody on call now",
    ]
    assert not check_oncall(graph)[0].ok

    settings = make_settings(falkordb, tmp_path, tenant, oncall_refresh_s=3600)
    metrics = Metrics()
    upkeep = Upkeep(store, settings, metrics)
    stop = threading.Event()
    thread = upkeep.start(stop)  # the first round runs at once, then every hour
    try:
        deadline = time.monotonic() + 20
        while not all(t.on_call for t in coverage(graph, now)):
            assert time.monotonic() < deadline, "the scheduled refresh did not run"
            time.sleep(0.1)
    finally:
        stop.set()
        thread.join(timeout=10)
    fresh = coverage(graph, now)
    # 52 weeks + 1 day after the start, week 52 (even) is Ann's; the shop has only Ann
    assert [(t.team, t.on_call, t.gap_at) for t in fresh] == [
        ("payments", ["Ann Example"], None),
        ("shop", ["Ann Example"], None),
    ]
    assert check_oncall(graph)[0].ok
    text = metrics.exposition().decode()
    assert f'blast_oncall_uncovered{{team="payments",tenant="{tenant}",window="now"}} 0.0' in text
    assert f'blast_oncall_uncovered{{team="shop",tenant="{tenant}",window="14d"}} 0.0' in text


def test_a_gap_within_14_days_is_reported(store, tenant: str, tmp_path: Path) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    world = copy.deepcopy(WORLD)
    world["teams"][1]["oncall"] = {"rotation": ["Ann Example"], "start": now.isoformat()}
    # payments' weekly shifts from 5 days ago, not from a fixed Monday: the last one the
    # expansion makes then ends 93 days from now whatever the weekday and hour of the run
    # (from the fixed Monday it ended 90 to 97 days out, inside the 14 days only part of the week)
    world["teams"][0]["oncall"]["start"] = (now - timedelta(days=5)).isoformat()
    graph = store.graph(f"org_{tenant}")
    graph.ensure_schema()
    import_world(graph, load_world(write(tmp_path, yaml.safe_dump(world))), now=now)
    # 80 days later the 90-day expansion made at import ends within 14 days
    later = now + timedelta(days=80)
    found = coverage(graph, later)
    assert all(t.on_call for t in found)
    lines = coverage_problems(found, later)
    assert len(lines) == 2 and "team payments has nobody on call from" in lines[0]
    # weekly shifts from `now`: the last one starting before now + 90 d ends at now + 91 d
    assert "(in 11.0 days)" in lines[1]


TWO_BOS = """\
components:
  - {id: billing, kind: service}
teams:
  - name: payments
    owns: [billing]
    members:
      - {name: Bo Chen}
      - {name: Bo Chen, email: bo@acme.test, slack_user_id: U999}
  - name: platform
    members:
      - {name: Bo Chen, email: bo@other.test, slack_user_id: U999}
default_team: payments
"""


def test_a_person_listed_twice_or_with_two_emails_is_refused_before_writing(
    tmp_path: Path, graph: TenantGraph
) -> None:
    """Bug: a duplicate member validated ok and one listing's email and Slack id were lost;
    one person on two teams with two emails kept either. Both are problems with their lines."""
    path = write(tmp_path, TWO_BOS)
    with pytest.raises(TopologyError) as caught:
        load_world(path)
    assert caught.value.problems == [
        f"{path}:8: teams.0.members.1: 'Bo Chen' is listed twice (first at {path}:7: "
        "teams.0.members.0)",
        f"{path}:11: teams.1.members.0.email: 'Bo Chen' has email 'bo@other.test' here and "
        f"'bo@acme.test' at {path}:8: teams.0.members.1.email (one person, one email: use one "
        "spelling or two names)",
    ]
    before = world_counts(graph)
    done = cli("topology", "import", str(path), "--data-dir", str(tmp_path / "data"))
    assert done.returncode == 2 and "'Bo Chen' is listed twice" in done.stderr
    with pytest.raises(TopologyError):  # the writer checks a model built in code too
        apply_world(graph, WorldSpec.model_validate(yaml.safe_load(TWO_BOS)), ["world:t"])
    assert world_counts(graph) == before


def test_a_listing_without_details_does_not_erase_them(store, tenant: str) -> None:
    """A person named on a team without an email or Slack id keeps the ones another team's
    listing gives, whatever the order of the teams (the Person node holds one of each)."""
    graph = store.graph(f"org_{tenant}")
    graph.ensure_schema()
    rotation = {"rotation": ["Bo Chen"], "shift_hours": 24, "start": "2020-01-01T00:00:00Z"}
    world = {
        "components": [{"id": "billing", "kind": "service"}],
        "teams": [
            {"name": "platform", "members": [{"name": "Bo Chen"}]},
            {"name": "payments", "owns": ["billing"], "oncall": rotation,
             "members": [{"name": "Bo Chen", "email": "bo@acme.test", "slack_user_id": "U999"}]},
        ],
        "default_team": "platform",
    }  # fmt: skip
    apply_world(graph, WorldSpec.model_validate(world), ["world:t"], explicit=True)
    paged = graph.rows("response_context", {"components": ["billing"]})
    assert [(r["person"], r["email"], r["slack_user_id"]) for r in paged] == [
        ("Bo Chen", "bo@acme.test", "U999")
    ]


def test_a_misspelt_rotation_member_gets_the_closest_member(tmp_path: Path) -> None:
    path = write(tmp_path, LAYERED.replace("Cy Nobody", "Bo Chn"))
    done = cli("topology", "validate", str(path))
    assert done.returncode == 2, done
    assert (
        "rotation of 'core' names 'Bo Chn', who is not a member (did you mean 'Bo Chen'?) "
        "(members: Al Smith, Bo Chen)" in done.stderr
    ), done.stderr


def test_a_teams_only_file_beside_a_compose_file_needs_no_components(tmp_path: Path) -> None:
    """docs/world.md's `topology import docker-compose.yml oncall.yaml`: the compose file
    gives the components, the world file only teams, owners and on-call; no `components: []`
    needed. A misspelt key is still named."""
    teams = {
        "default_team": "shop",
        "teams": [{"name": "shop", "owns": ["cart", "catalogue"],
                   "members": [{"name": "Ann Example", "email": "ann@example.com"}],
                   "oncall": {"rotation": ["Ann Example"], "shift_hours": 168,
                              "start": "2026-01-05T09:00:00Z"}}],
    }  # fmt: skip
    compose = Path(__file__).parent / "data/robot-shop/docker-compose.yml"
    oncall = write(tmp_path, yaml.safe_dump(teams), "oncall.yaml")
    done = cli("topology", "validate", str(compose), str(oncall))
    assert done.returncode == 0, done.stderr
    assert ", 1 team, default team shop" in done.stdout, done.stdout
    typo = write(tmp_path, yaml.safe_dump(teams | {"componets": []}), "typo.yaml")
    refused = cli("topology", "validate", str(compose), str(typo))
    assert refused.returncode == 2 and "componets" in refused.stderr, refused.stderr
