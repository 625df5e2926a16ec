"""Importers on real files (the OTel demo's compose files, Backstage's example catalog, the
microservices-demo manifests) and the writer's provenance on the real FalkorDB: re-imports are
idempotent, an edge a source stops reporting is retired and not walked, the world file wins."""

from __future__ import annotations

from pathlib import Path

from adapters.falkordb import TenantGraph
from gateway.world import apply_world, demo_world_path, load_world, world_counts
from gateway.world.backstage import load_backstage, parse_ref
from gateway.world.compose import interpolate, load_compose
from gateway.world.diff import diff_worlds
from gateway.world.kubernetes import load_kubernetes
from gateway.world.sources import detect, load_sources
from tests.conftest import FIXTURES
from tests.test_topology import cli

V2 = FIXTURES / "otel-demo-v2"
V3 = FIXTURES / "otel-demo-v3"
V3_FILES = [V3 / f"compose{x}.yaml" for x in ("", ".full", ".observability", ".agent")]


def edges_of(world) -> set[tuple[str, str, str, str]]:
    return {(e.source, e.type, e.target, e.purpose) for e in world.edges}


def test_interpolation_follows_the_compose_rules() -> None:
    env = {"A": "x", "EMPTY": ""}
    assert interpolate("${A}-$A-${B:-def}-${EMPTY:-d2}-${EMPTY-d3}-$$A", env) == "x-x-def-d2--$A"
    assert interpolate("${B:-${A}}", env) == "x"


def test_the_v2_compose_file_gives_the_demo_services_datastores_and_edges() -> None:
    world, unmapped = load_compose([V2 / "docker-compose.yml"], V2 / "dotenv.env")
    kinds = {c.id: (c.kind, c.tech) for c in world.components}
    assert len(kinds) == 28 and len(world.edges) == 76
    assert kinds["postgresql"] == ("datastore", "PostgreSQL")
    assert kinds["valkey-cart"] == ("datastore", "Valkey")
    assert kinds["kafka"] == ("datastore", "Kafka")
    assert kinds["frontend-proxy"][0] == "proxy"
    found = edges_of(world)
    # environment values: DB_CONNECTION_STRING=Host=${POSTGRES_HOST};... and KAFKA_ADDR
    assert ("accounting", "READS_WRITES", "postgresql", "business") in found
    assert ("checkout", "CALLS", "payment", "business") in found
    assert ("cart", "READS_WRITES", "valkey-cart", "business") in found
    assert ("ad", "CALLS", "flagd", "config") in found
    assert ("ad", "CALLS", "otel-collector", "telemetry") in found
    # the collector's own edges are telemetry plumbing, whatever they point at
    assert ("otel-collector", "READS_WRITES", "postgresql", "telemetry") in found
    paths = {c.id: c.paths for c in world.components}
    assert paths["checkout"] == ["/src/checkout/"]  # from the build's Dockerfile folder
    assert unmapped == []


def test_compose_without_its_env_file_says_which_variables_were_empty() -> None:
    # The demo's .env is named dotenv.env here: without --env-file its variables are unset,
    # which loses edges silently unless the report says so.
    world, unmapped = load_compose([V2 / "docker-compose.yml"])
    assert len(world.edges) < 76
    assert len(unmapped) == 1
    assert "not set and have no default" in unmapped[0] and "--env-file" in unmapped[0]
    assert "POSTGRES_HOST" in unmapped[0]
    missing: set[str] = set()
    assert interpolate("${A}-${B:-d}-${C-d}-$D", {"A": "x"}, missing) == "x-d-d-"
    assert missing == {"D"}


def test_the_v3_layers_add_what_each_file_adds() -> None:
    core, _ = load_compose(V3_FILES[:1], V3 / "dotenv.env")
    full, _ = load_compose(V3_FILES, V3 / "dotenv.env")
    assert "kafka" not in {c.id for c in core.components}
    assert ("checkout", "READS_WRITES", "kafka", "business") in edges_of(full)
    assert ("checkout", "READS_WRITES", "kafka", "business") not in edges_of(core)
    assert len(full.components) == 31 and len(full.edges) == 85
    # v3 renamed the postgres host: the bundled world knows it as an alias of postgres
    diff = diff_worlds(full, load_world(demo_world_path()))
    assert diff.same_components == 31 and diff.only_found == []
    assert "product-reviews" in diff.only_reference  # removed in v3
    assert "product-catalog -READS_WRITES-> postgres" not in diff.only_found_edges


def test_a_world_against_itself_has_no_difference() -> None:
    """hosted_on counts as the HOSTED_ON edge import writes, on both sides (it was added to the
    reference side only: `- edge orders -HOSTED_ON-> kafka` against itself)."""
    world = load_world(demo_world_path())
    diff = diff_worlds(world, world)
    assert (diff.only_found_edges, diff.only_reference_edges, diff.retyped) == ([], [], [])
    assert diff.same_edges == 74


def test_topology_diff_prints_the_difference_with_the_bundled_world() -> None:
    done = cli("topology", "diff", *map(str, V3_FILES), "--env-file", str(V3 / "dotenv.env"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "components: 31 in both, 0 only in the import, 6 only in the world"
    assert "- edge checkout -PUBLISHES-> orders" in lines


def test_the_backstage_example_catalog_gives_components_edges_teams_and_members() -> None:
    assert detect(FIXTURES / "backstage") == "backstage"
    world, unmapped = load_backstage([FIXTURES / "backstage"])
    kinds = {c.id: c.kind for c in world.components}
    assert kinds == {
        "artist-lookup": "service", "artists-db": "datastore", "wayback-archive": "service",
        "wayback-archive-ingestion": "service", "wayback-archive-storage": "service",
        "wayback-search": "service", "www-artist": "service",
    }  # fmt: skip
    assert {(e.source, e.type, e.target) for e in world.edges} == {
        ("artist-lookup", "READS_WRITES", "artists-db"),  # dependsOn resource:artists-db
        ("wayback-search", "CALLS", "wayback-archive"),  # consumesApis -> providesApis
        ("www-artist", "CALLS", "artist-lookup"),  # consumesApis component:artist-lookup
    }
    teams = {t.name: t for t in world.teams}
    assert teams["team-d"].owns == ["wayback-archive-ingestion"]
    assert [m.name for m in teams["team-d"].members] == ["Eva MacDowell", "Lucy Sheehan"]
    assert {m.email for m in teams["team-a"].members} >= {"janelle-dawe@example.com"}
    annotations = {c.id: c.annotations for c in world.components}
    assert annotations["wayback-search"] == {"myorg.org/security": "true"}
    assert unmapped == []
    assert parse_ref("group:default/team-a", "user").name == "team-a"
    assert parse_ref("team-a", "group") == parse_ref("Group:default/team-a", "group")


def test_kubernetes_manifests_give_workloads_and_the_services_they_call() -> None:
    world, unmapped = load_kubernetes([FIXTURES / "kubernetes"])
    kinds = {c.id: (c.kind, c.tech) for c in world.components}
    assert len(kinds) == 12 and kinds["redis-cart"] == ("datastore", "Redis")
    found = {(e.source, e.type, e.target) for e in world.edges}
    assert len(found) == 16
    assert ("cartservice", "READS_WRITES", "redis-cart") in found
    assert ("checkoutservice", "CALLS", "paymentservice") in found
    assert unmapped == [
        "frontend: SHOPPING_ASSISTANT_SERVICE_ADDR names host 'shoppingassistantservice', "
        "no Service"
    ]


def test_reimport_is_idempotent_and_a_dropped_edge_is_retired_not_walked(
    store, tenant: str, tmp_path: Path
) -> None:
    """Import the v2 compose file twice, then a copy where shipping lost `QUOTE_ADDR`: the
    edge shipping -> quote is retired (kept, with the time) and no longer walked."""
    graph = store.graph(f"org_{tenant}")
    graph.ensure_schema()
    compose = tmp_path / "docker-compose.yml"  # a checkout of the repository, edited below
    text = (V2 / "docker-compose.yml").read_text(encoding="utf-8")
    compose.write_text(text, encoding="utf-8")
    env = V2 / "dotenv.env"
    first = load_sources([compose], "auto", env)
    report = apply_world(graph, first.world, first.sources)
    assert len(report.new) == 28 + 76 and report.retired == []
    totals = world_counts(graph)
    assert (totals["components"], totals["edges"]) == (28, 76)
    again = apply_world(graph, first.world, first.sources)
    assert again.new == [] and again.retired == [] and world_counts(graph) == totals

    assert text.count("      - QUOTE_ADDR\n") == 1  # only shipping names quote's address
    compose.write_text(text.replace("      - QUOTE_ADDR\n", ""), encoding="utf-8")
    links = {"candidates": ["shipping"], "keys": [], "group_keys": [], "hops": 1, "lo": 1,
             "hi": 0, "fingerprints": [], "topology": "", "fresh": [], "walked": []}  # fmt: skip
    near = {r["name"] for r in graph.one("triage_context", links)["links"]}
    assert "quote" in near
    later = load_sources([compose], "compose", env)
    report = apply_world(graph, later.world, later.sources)
    assert report.retired == [
        f"edge shipping -CALLS-> quote: no longer reported by compose:{compose}"
    ]
    assert world_counts(graph) == totals, "retired edges are kept"
    links = {"candidates": ["shipping"], "keys": [], "group_keys": [], "hops": 1, "lo": 1,
             "hi": 0, "fingerprints": [], "topology": "", "fresh": [], "walked": []}  # fmt: skip
    near = {r["name"] for r in graph.one("triage_context", links)["links"]}
    assert "quote" not in near, "a retired edge is not walked"
    retired = [r for r in graph.rows("world_edges") if r["retired_at"] is not None]
    assert [(r["from"], r["to"], r["sources"]) for r in retired] == [("shipping", "quote", [])]
    back = apply_world(graph, first.world, first.sources)  # reported again: walked again
    assert back.changed == ["edge shipping -CALLS-> quote: seen again, no longer retired"]


def test_an_edited_copy_of_the_world_is_the_same_app_not_another(
    graph: TenantGraph, tmp_path: Path
) -> None:
    """A new user's trial: importing an edited copy of the world file (another path) warned
    "37 components already existed from another source and were merged … (another app?)"
    only because the path changed. Content says it is the same app: no merge warning, a note
    naming the earlier file. Another app whose names collide is still warned of."""
    world = demo_world_path()
    first = load_sources([world])
    apply_world(graph, first.world, first.sources, explicit=True)
    copy = tmp_path / "topology.yaml"
    copy.write_text(
        world.read_text(encoding="utf-8").replace(
            "default_team: platform", "default_team: checkout"
        ),
        encoding="utf-8",
    )
    edited = load_sources([copy])
    report = apply_world(graph, edited.world, edited.sources, explicit=True)
    n = len(edited.world.components)
    assert report.merged == []
    assert report.notes == [
        f"{n} of the {n} components of world:{world} (imported before) are this import's: the "
        f"same app, merged; what only world:{world} says (owners, members, edges) stays until it "
        "is imported again"
    ]
    other = load_sources([FIXTURES / "robot-shop/docker-compose.yml"])
    merged = apply_world(graph, other.world, other.sources).merged
    assert sorted(merged) == ["cart", "payment", "shipping"]


def test_the_world_file_wins_where_a_source_disagrees(graph: TenantGraph) -> None:
    loaded = load_sources(V3_FILES, "compose", V3 / "dotenv.env")
    report = apply_world(graph, loaded.world, loaded.sources)
    # the bundled world (loaded by the fixture) names kafka's tech in full: it is kept
    wins = [line for line in report.world_wins if line.startswith("component kafka")]
    assert wins == [
        f"component kafka: compose:{V3_FILES[0]} says datastore/Kafka, the world file says "
        "datastore/Apache Kafka broker (KRaft, single node; OTel Java agent)"
    ]
    kafka = next(r for r in graph.rows("world_components") if r["name"] == "kafka")
    assert kafka["tech"].startswith("Apache Kafka") and kafka["declared"] is True
    # v3's `astronomy-db` is a hostname the world file gives postgres: no second component
    assert "astronomy-db is an alias of postgres: imported as postgres" in report.notes
    names = {r["name"] for r in graph.rows("world_components")}
    assert "astronomy-db" not in names
    edge = next(
        r for r in graph.rows("world_edges")
        if (r["from"], r["to"]) == ("product-catalog", "postgres")
    )  # fmt: skip
    assert f"compose:{V3_FILES[0]}" in edge["sources"]


def test_env_files_depends_on_forms_urls_and_an_unknown_host(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("DB_HOST=db\nexport TAG='1.2'\n", encoding="utf-8")
    (tmp_path / "api.env").write_text("QUEUE_URL=amqp://broker:5672/vhost\n", encoding="utf-8")
    (tmp_path / "compose.yaml").write_text(
        """
services:
  api:
    image: example/api:${TAG}
    env_file: [api.env]
    environment:
      DATABASE_URL: postgres://u:p@${DB_HOST:-nowhere}:5432/app
      QUEUE_URL:
      BILLING: http://billing.internal:8080
    depends_on: [cache]
  worker:
    build: {context: ./services/worker}
    depends_on:
      api: {condition: service_healthy}
  db: {image: "postgres:16"}
  cache: {image: "redis:7"}
  broker: {image: "rabbitmq:3"}
""",
        encoding="utf-8",
    )
    world, unmapped = load_compose([tmp_path / "compose.yaml"])
    assert {(e.source, e.type, e.target) for e in world.edges} == {
        ("api", "READS_WRITES", "db"),  # ${DB_HOST:-nowhere} from .env, in a URL
        ("api", "READS_WRITES", "broker"),  # QUEUE_URL: a bare key, valued by env_file
        ("api", "READS_WRITES", "cache"),  # depends_on, list form
        ("worker", "CALLS", "api"),  # depends_on, map form
    }
    assert {c.id: c.paths for c in world.components}["worker"] == ["/services/worker/"]
    assert unmapped == ["api: BILLING names host 'billing.internal', which is no service"]


def test_compose_and_the_world_file_in_one_import_use_the_world_s_aliases(
    store, tenant: str
) -> None:
    """Bug: `topology import docker-compose.yml topology.yaml` made a second component
    `postgresql` beside the world file's `postgres` (whose hostnames list it), with duplicate
    edges; only a second run said so. Aliases of the same import now apply in any order."""
    graph = store.graph(f"org_{tenant}")
    graph.ensure_schema()
    loaded = load_sources([V2 / "docker-compose.yml", demo_world_path()], "auto", V2 / "dotenv.env")
    model = loaded.world.model_copy(deep=True)
    model.components.reverse()  # the writer does not rely on the world file coming first
    model.edges.reverse()
    report = apply_world(graph, model, loaded.sources, explicit=True)
    assert "postgresql is an alias of postgres: imported as postgres" in report.notes
    assert not any("both are kept" in note for note in report.notes)
    assert "postgresql" not in {r["name"] for r in graph.rows("world_components")}
    into = [r for r in graph.rows("world_edges") if r["to"] == "postgres"]
    edges = [r for r in into if r["from"] == "product-catalog"]
    assert len(edges) == 1, "compose's edge and the world file's are one"
    edge = edges[0]
    assert sorted(edge["sources"]) == sorted(
        [f"compose:{V2 / 'docker-compose.yml'}", f"world:{demo_world_path()}"]
    )
    totals = world_counts(graph)
    again = apply_world(graph, loaded.world, loaded.sources, explicit=True)
    assert again.new == [] and again.removed == [] and world_counts(graph) == totals
    assert not any("both are kept" in note for note in again.notes)
