"""Ownership from CODEOWNERS + component paths, and merged pull requests as changes (PyGithub
against the local GitHub stand-in), issue #13 item 4."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from pydantic import SecretStr

from adapters.falkordb import GraphStore
from adapters.github_changes import merged_pull_requests
from gateway.world import apply_world
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
