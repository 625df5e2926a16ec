"""Ownership from CODEOWNERS + component paths, and merged pull requests as changes (PyGithub
against the local GitHub stand-in)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import SecretStr

from adapters.falkordb import GraphStore, TenantGraph
from adapters.github.changes import merged_pull_requests
from gateway.world import apply_world, world_counts
from gateway.world.codeowners import owner_rule, parse_codeowners
from gateway.world.pulls import pseudonym, record_pull_requests
from gateway.world.sources import load_sources
from tests.conftest import FIXTURES
from tests.github_api import REPO, TOKEN, FakeGitHub
from tests.test_world_check import run_env

V2 = FIXTURES / "otel-demo-v2"

CODEOWNERS = """\
# Everything else: the platform team
*                 @acme/platform
/src/checkout/    @acme/checkout
/src/cart/        @acme/checkout @octocat
/src/ad/          ads@example.com
/src/payment/     @acme/payments
"""

TEAMS = {
    "components": [],
    "teams": [
        {"name": "platform", "members": [{"name": "Pat Example"}]},
        {"name": "checkout", "members": [{"name": "Cy Example"}]},
    ],
    "default_team": "platform",
}


def ts(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def test_the_last_matching_rule_wins() -> None:
    rules = parse_codeowners(CODEOWNERS)
    assert [r.line for r in rules] == [2, 3, 4, 5, 6]
    assert owner_rule("/src/checkout/", rules).owners == ("@acme/checkout",)  # type: ignore[union-attr]
    assert owner_rule("/src/quote/", rules).owners == ("@acme/platform",)  # type: ignore[union-attr]
    assert owner_rule("/src/quote/", rules[1:]) is None


def test_codeowners_and_build_contexts_give_each_component_its_team(
    store: GraphStore, tenant: str, tmp_path: Path
) -> None:
    teams = tmp_path / "teams.yaml"
    teams.write_text(yaml.safe_dump(TEAMS), encoding="utf-8")
    loaded = load_sources([V2 / "docker-compose.yml", teams], "auto", V2 / "dotenv.env")
    graph = store.graph(f"org_{tenant}")
    graph.ensure_schema()
    rules = parse_codeowners(CODEOWNERS)
    report = apply_world(
        graph, loaded.world, loaded.sources, explicit=True, codeowners=(rules, "CODEOWNERS")
    )
    owners = {(r["component"], r["team"]) for r in graph.rows("component_owners")}
    assert ("checkout", "checkout") in owners and ("cart", "checkout") in owners
    assert ("quote", "platform") in owners  # `*`: the first rule, no later one matches
    assert not any(c == "ad" for c, _ in owners), "an email owner names no team"
    assert not any(c == "valkey-cart" for c, _ in owners), "no build context, no path"
    assert sorted(report.unmapped) == [
        "CODEOWNERS:4: @octocat (owner of /src/cart/src/, component cart) is no team of the world",
        "CODEOWNERS:5: ads@example.com (owner of /src/ad/, component ad) is no team of the world",
        "CODEOWNERS:6: @acme/payments (owner of /src/payment/, component payment) is no team "
        "of the world",
    ]
    # A second import keeps the owners; a team already owning a component is kept, reported.
    TEAMS["teams"][0]["owns"] = ["checkout"]
    teams.write_text(yaml.safe_dump(TEAMS), encoding="utf-8")
    again = load_sources([V2 / "docker-compose.yml", teams], "auto", V2 / "dotenv.env")
    report = apply_world(
        graph, again.world, again.sources, explicit=True, codeowners=(rules, "CODEOWNERS")
    )
    assert report.new == []
    assert any(
        line.startswith("component checkout: CODEOWNERS names checkout, already owned by platform")
        for line in report.world_wins
    )
    TEAMS["teams"][0].pop("owns")


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub().start()
    fake.pulls = [
        {"number": 41, "title": "checkout: retry payment", "user": "octocat",
         "merged_at": ts("2026-11-02T10:00"), "updated": ts("2026-11-02T10:00"),
         "files": ["src/checkout/main.go", "src/cart/src/cart.cs"]},
        {"number": 42, "title": "docs", "user": "hubot", "merged_at": ts("2026-11-03T10:00"),
         "updated": ts("2026-11-03T10:00"), "files": ["README.md"]},
        {"number": 43, "title": "never merged", "user": "hubot", "merged_at": None,
         "updated": ts("2026-11-04T10:00"), "files": ["src/checkout/x.go"]},
        {"number": 40, "title": "too old", "user": "hubot", "merged_at": ts("2026-10-01T10:00"),
         "updated": ts("2026-10-01T10:00"), "files": ["src/checkout/old.go"]},
    ]  # fmt: skip
    yield fake
    fake.stop()


def test_merged_pull_requests_become_changes_of_the_components_they_touched(
    store: GraphStore, tenant: str, github: FakeGitHub
) -> None:
    pulls = merged_pull_requests(
        SecretStr(TOKEN), REPO, int(ts("2026-11-01T00:00") * 1000), api_url=github.url
    )
    assert [p["number"] for p in pulls] == [41, 42]
    graph = store.graph(f"org_{tenant}")
    graph.ensure_schema()
    loaded = load_sources([V2 / "docker-compose.yml"], "compose", V2 / "dotenv.env")
    apply_world(graph, loaded.world, loaded.sources)
    counts, unmapped = record_pull_requests(graph, pulls, REPO)
    assert counts == {"pull_requests": 2, "changes": 2}
    assert unmapped == [f"{REPO}#42: 1 files match no component path"]
    rows = graph.rows(
        "recent_changes", {"components": ["checkout", "cart"], "since": 0, "until": 2**62}
    )
    assert {(r["component"], r["ref"], r["author"]) for r in rows} == {
        ("checkout", f"{REPO}#41", pseudonym("octocat")),
        ("cart", f"{REPO}#41", pseudonym("octocat")),
    }
    assert pseudonym("octocat") == pseudonym("octocat") != "octocat"
    record_pull_requests(graph, pulls, REPO)  # the id makes a second run harmless
    assert len(graph.rows("recent_changes", {"components": ["checkout"], "since": 0,
                                             "until": 2**62})) == 1  # fmt: skip


def test_topology_changes_on_the_command_line(github: FakeGitHub, tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    env = {"GITHUB_TOKEN": TOKEN, "GITHUB_REPO": REPO, "GITHUB_API_URL": github.url}
    done = run_env("topology", "changes", "--since", "2026-11-01T00:00:00Z", "--tenant", "acme",
                   "--data-dir", data, **env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "recorded into org_acme: 2 pull_requests, 0 changes" in done.stdout  # no world yet
    assert TOKEN not in done.stdout + done.stderr


NOW = datetime(2026, 3, 1, tzinfo=UTC)


def payments_world(*, platform_owns: list[str], payments_members: list[str]) -> dict[str, Any]:
    """A world where payments and platform split billing, ledger-db and api; growth owns
    reports. Each team has a one-person-at-a-time rotation of its members."""

    def team(name: str, owns: list[str], members: list[str]) -> dict[str, Any]:
        rotation = {"rotation": members, "shift_hours": 168, "start": "2026-01-05T09:00:00Z"}
        return {
            "name": name, "slack_channel": f"#{name}", "owns": owns,
            "members": [{"name": m, "email": f"{m.split()[0].lower()}@acme.test"} for m in members],
            "oncall": rotation,
        }  # fmt: skip

    comps = [("billing", "service"), ("ledger-db", "datastore"), ("api", "service")]
    payments_owns = [c for c in ("billing", "ledger-db") if c not in platform_owns]
    return {
        "components": [{"id": c, "kind": k} for c, k in [*comps, ("reports", "service")]],
        "teams": [
            team("payments", payments_owns, payments_members),
            team("platform", platform_owns, ["Pat Example"]),
            team("growth", ["reports"], ["Gil Example"]),
        ],
        "default_team": "platform",
    }


CATALOG = """\
apiVersion: backstage.io/v1alpha1
kind: Group
metadata: {name: payments}
spec: {type: team, children: []}
---
apiVersion: backstage.io/v1alpha1
kind: Resource
metadata: {name: ledger-db}
spec: {type: database, owner: "group:payments"}
---
apiVersion: backstage.io/v1alpha1
kind: User
metadata: {name: ana}
spec: {profile: {displayName: Ana Lima, email: ana@acme.test}, memberOf: [payments]}
"""


def owners_of(graph: TenantGraph) -> set[tuple[str, str]]:
    return {(r["component"], r["team"]) for r in graph.rows("component_owners")}


def test_a_reimport_removes_the_owners_members_and_teams_the_world_file_dropped(
    store: GraphStore, tenant: str, tmp_path: Path
) -> None:
    """Bug: ownership, membership and teams were only ever added. Now each keeps the sources
    that said it; what a re-imported source no longer says is removed and reported, what
    another source (here a Backstage catalog) says is kept, and routing sees one owner."""
    graph = store.graph(f"org_{tenant}")
    graph.ensure_schema()
    world, extra = tmp_path / "world.yaml", tmp_path / "catalog-info.yaml"
    first = payments_world(platform_owns=["api"], payments_members=["Ana Lima", "Bo Chen"])
    world.write_text(yaml.safe_dump(first), encoding="utf-8")
    extra.write_text(CATALOG, encoding="utf-8")  # says payments owns ledger-db too

    def run() -> Any:
        loaded = load_sources([world, extra])
        return apply_world(graph, loaded.world, loaded.sources, NOW, explicit=True)

    report = run()
    assert report.removed == []
    assert owners_of(graph) == {
        ("billing", "payments"), ("ledger-db", "payments"), ("api", "platform"),
        ("reports", "growth"),
    }  # fmt: skip
    totals = world_counts(graph)
    assert (totals["teams"], totals["people"]) == (3, 4)
    again = run()  # idempotent: the same input removes nothing and changes nothing
    assert again.removed == [] and again.new == [] and world_counts(graph) == totals

    later = payments_world(
        platform_owns=["api", "billing", "ledger-db"], payments_members=["Ana Lima"]
    )
    later["teams"] = later["teams"][:2]  # growth is gone from the file
    world.write_text(yaml.safe_dump(later), encoding="utf-8")
    report = run()
    source = f"world:{world}"
    assert report.removed == [  # owners, then members, then teams, each by name
        f"owner growth of reports: no longer reported by {source}",
        f"owner payments of billing: no longer reported by {source}",
        f"member Bo Chen of payments: no longer reported by {source}",
        f"member Gil Example of growth: no longer reported by {source}",
        f"team growth: no longer reported by {source} (deleted with its 15 on-call shifts)",
    ]
    assert owners_of(graph) == {
        ("billing", "platform"), ("api", "platform"),
        ("ledger-db", "platform"), ("ledger-db", "payments"),  # extra.yaml still says so
    }  # fmt: skip
    ledger = [r for r in graph.rows("component_owners") if r["component"] == "ledger-db"]
    assert {r["team"]: r["sources"] for r in ledger} == {
        "payments": [f"backstage:{extra}"], "platform": [source],
    }  # fmt: skip
    members = {
        r["name"]: sorted(r["members"]) for r in graph.rows("web_teams", {"now": 0, "until": 0})
    }
    assert members == {"payments": ["Ana Lima"], "platform": ["Pat Example"]}
    after = world_counts(graph)
    assert after["teams"] == 2 and after["people"] == 4, "people are kept, memberships are not"
    assert after["shifts"] == totals["shifts"] - 15, "growth's shifts went with it"
    # routing: billing has one owner now, whatever the row order
    rows = graph.rows("response_context", {"components": ["billing"]})
    assert {r["team"] for r in rows} == {"platform"}
    assert run().removed == [], "removed once, not again"


def test_a_codeowners_reimport_moves_ownership_it_gave_before(
    store: GraphStore, tenant: str, tmp_path: Path
) -> None:
    """Bug: a CODEOWNERS re-import that moved /services/billing/ to another team said 'the
    world file wins … already owned by payments (kept)', though the previous CODEOWNERS run had
    given that ownership. Now what the file gave before is said again or removed; an owner the
    world file gives still wins."""
    graph = store.graph(f"org_{tenant}")
    graph.ensure_schema()
    spec = payments_world(platform_owns=["api", "billing"], payments_members=["Ana Lima"])
    spec["components"][0]["paths"] = ["/services/billing/"]
    spec["teams"][1]["owns"] = ["api"]  # billing: nobody in the world file
    world, codeowners = tmp_path / "world.yaml", tmp_path / "CODEOWNERS"
    world.write_text(yaml.safe_dump(spec), encoding="utf-8")

    def run(owner: str) -> Any:
        codeowners.write_text(f"/services/billing/ {owner}\n", encoding="utf-8")
        loaded = load_sources([world])
        rules = (parse_codeowners(codeowners.read_text(encoding="utf-8")), str(codeowners))
        return apply_world(
            graph, loaded.world, loaded.sources, NOW, explicit=True, codeowners=rules
        )

    report = run("@acme/payments")
    assert [n for n in report.new if n.startswith("owner")] == [
        f"owner payments of billing (from {codeowners})"
    ]
    assert ("billing", "payments") in owners_of(graph)
    report = run("@acme/platform")
    assert report.world_wins == []
    assert report.new == [f"owner platform of billing (from {codeowners})"]
    assert report.removed == [
        f"owner payments of billing: no longer reported by codeowners:{codeowners}"
    ]
    assert [t for c, t in owners_of(graph) if c == "billing"] == ["platform"]
    again = run("@acme/platform")
    assert (again.new, again.removed, again.world_wins) == ([], [], [])
    # the world file now gives billing to payments: it wins, the CODEOWNERS owner goes
    spec["teams"][0]["owns"] = ["billing", "ledger-db"]
    world.write_text(yaml.safe_dump(spec), encoding="utf-8")
    report = run("@acme/platform")
    assert report.world_wins == [
        f"component billing: {codeowners} names platform, already owned by payments (kept)"
    ]
    assert report.removed == [
        f"owner platform of billing: no longer reported by codeowners:{codeowners}"
    ]
    assert [t for c, t in owners_of(graph) if c == "billing"] == ["payments"]
