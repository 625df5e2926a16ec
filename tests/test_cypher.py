"""Every query in cypher/ compiles on the real server, and code and files agree on names."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

import cypher
from adapters.falkordb import GraphStore, graph_name

ROOT = Path(__file__).resolve().parents[1]
CODE_DIRS = ("gateway", "agents", "adapters", "bench")
#: A query name is used as the first argument of rows/one/fenced/step("name", …) calls.
#: Parameter values that must not be null even to compile (EXPLAIN checks LIMIT's and SKIP's).
SAMPLE = {"limit": 1, "offset": 0, "listed": 1}
USE = re.compile(
    r"""(?:\.(?:rows|one|fenced|explain)\(|graph\.(?:rows|one),)\s*["']([a-z_]+)["']"""
)


def code() -> str:
    return "\n".join(
        path.read_text(encoding="utf-8")
        for folder in CODE_DIRS
        if (ROOT / folder).exists()
        for path in (ROOT / folder).rglob("*.py")
    )


def used_names() -> set[str]:
    """Names passed to a query call (`graph.rows("name", …)` and the like)."""
    return set(USE.findall(code()))


def mentioned_names() -> set[str]:
    """Every string literal in the code that looks like a query name."""
    return set(re.findall(r"""["']([a-z][a-z_]+)["']""", code()))


@pytest.mark.parametrize("name", cypher.names())
def test_query_compiles(graph, name):
    params = dict.fromkeys(re.findall(r"\$([A-Za-z_]+)", cypher.load(name)))
    params |= {k: v for k, v in SAMPLE.items() if k in params}
    plan = graph.explain(name, params)
    assert plan, f"{name}: empty plan"


def test_every_used_name_has_a_file_and_every_file_is_used():
    files, used = set(cypher.names()), used_names()
    assert used - files == set(), "names used in code with no cypher/<name>.cypher"
    unused = files - mentioned_names()
    # A query only a test runs (it seeds records no worker writes there) says so on its
    # first line, so a dead production query cannot hide behind a test that names it.
    test_only = {name for name in unused if cypher.load(name).startswith("// tests/")}
    assert unused - test_only == set(), "cypher files no code uses"
    tests = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("*.py"))
    assert {n for n in test_only if f'"{n}"' not in tests} == set(), "test-only, unused"


def test_every_fragment_is_included_and_every_include_expanded():
    folder = Path(cypher.__file__).parent
    fragments = {p.stem for p in folder.glob("_*.cypher")}
    raw = "\n".join(p.read_text(encoding="utf-8") for p in folder.glob("[!_]*.cypher"))
    assert fragments == set(cypher.INCLUDE.findall(raw)), "fragments no query includes"
    assert not any(cypher.INCLUDE.search(cypher.load(name)) for name in cypher.names())


#: A write of a component, and a dependency edge bound to a name (what triage's walks read).
COMPONENT_WRITE = re.compile(r"(?:MERGE|CREATE) \(\w*:Component\b")
EDGE = re.compile(r"\[(\w+):(?:CALLS|READS_WRITES|PUBLISHES|CONSUMES|HOSTED_ON)\b")


def changes_topology(text: str) -> bool:
    """Whether a query creates a component or a dependency edge, or sets one's properties."""
    text = re.sub(r"//.*", "", text)
    edges = set(EDGE.findall(text))
    return bool(COMPONENT_WRITE.search(text)) or any(
        re.search(rf"(?:MERGE|CREATE) \(\w+\)-\[{e}:|SET {e}\.", text) for e in edges
    )


def test_every_query_that_changes_the_topology_gives_it_a_new_version():
    # triage remembers walks by the graph's topology version (agents/triage/link_cache.py):
    # a query that changes a component or an edge without a new version would leave every
    # process walking the old topology
    changing = {n for n in cypher.names() if n != "schema_names"  # registers, leaves nothing
                and changes_topology(cypher.load(n))}  # fmt: skip
    assert {"import_components", "import_edges", "retire_edges"} <= changing
    raw = {n: (Path(cypher.__file__).parent / f"{n}.cypher").read_text() for n in changing}
    assert {n for n, text in raw.items() if "// @include _topology_changed" not in text} == set()


def graph_names(text: str) -> set[str]:
    """Labels, relationship types and property names a query uses (roughly; strings skipped)."""
    text = re.sub(r"'[^']*'", "''", re.sub(r"//.*", "", text))
    text = re.sub(r"\bCALL\s+[A-Za-z_.]+", "CALL", text)  # a procedure (db.meta.stats) is no name
    text = re.sub(r"\bCALL\s*\{", "CALL ", text)  # a subquery's braces hold no map
    # `row.<field>` reads a parameter row (`UNWIND $tasks AS row`), a map, not a property
    names = set(re.findall(r"\b(?!row\.)[a-z_][a-z0-9_]*\.([a-z_][a-z0-9_]*)\b", text))
    for inner in re.findall(r"\{([^{}]*)\}", text):
        names |= set(re.findall(r"([a-z_][a-z0-9_]*)\s*:", inner))
    for labels in re.findall(r"\([a-z_]*((?::[A-Z][A-Za-z]*)+)", text):
        names |= set(labels.strip(":").split(":"))
    for types in re.findall(r"\[[a-z_]*:([A-Z_|]+)", text):
        names |= set(types.split("|"))
    return names


def test_schema_names_registers_every_name_the_queries_use():
    registered = graph_names(cypher.load("schema_names"))
    used = set().union(*(graph_names(cypher.load(n)) for n in cypher.names()))
    assert used - registered == set(), "add these names to cypher/schema_names.cypher"


def test_schema_names_leaves_nothing_behind(graph):
    assert graph.rows("schema_names") == [{"registered": 1}]
    assert graph.one("task_summary") is None


def test_unknown_name_is_a_clear_error():
    with pytest.raises(cypher.UnknownQuery):
        cypher.load("no_such_query")


def test_schema_set_up_by_several_clients_at_once(falkordb, tenant):
    """Gateways and workers starting together on a new graph each find the indexes missing and
    create them: the ones that lose the race must not fail (`created_once`)."""
    clients = [GraphStore(falkordb.url) for _ in range(4)]
    start = threading.Barrier(len(clients))
    failures: list[BaseException] = []

    def set_up(client: GraphStore) -> None:
        start.wait()
        try:
            client.graph(graph_name(tenant)).ensure_schema()
        except BaseException as exc:  # reported by the assertion below
            failures.append(exc)

    threads = [threading.Thread(target=set_up, args=(c,)) for c in clients]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert failures == []
        assert clients[0].graph(graph_name(tenant)).schema_problems() == []
    finally:
        for client in clients:
            client.close()
