"""A query sent now and read later (`TenantGraph.send`, `SentQuery`): the same answer as
`one`, its connection its own until the answer is read or the query closed."""

from __future__ import annotations

import time

import pytest
import redis

from adapters.falkordb import EmbeddedFalkorDB, GraphStore, TenantGraph, graph_name


def test_a_sent_query_answers_as_one_once_read(graph: TenantGraph) -> None:
    sent = graph.send("component_names")
    assert sent.one() == graph.one("component_names")
    assert sent.one() == graph.one("component_names"), "read once, the same row again"


def test_a_query_error_is_raised_when_the_answer_is_read(graph: TenantGraph) -> None:
    sent = graph.send("free_node_ids", {"count": "many"})  # a type the query cannot take
    with pytest.raises(redis.ResponseError):
        sent.one()
    assert graph.one("node_count"), "the connection it held answers the next query"


def test_queries_closed_unread_give_their_connections_back(
    falkordb: EmbeddedFalkorDB, tenant: str
) -> None:
    # two connections in the pool: a third query sent while both were held would wait 5 s for
    # one and fail (the webhook closes a read sent ahead that triage did not take)
    store = GraphStore(falkordb.url, max_connections=2)
    try:
        graph = store.graph(graph_name(tenant))
        began = time.monotonic()
        for _ in range(5):
            graph.send("node_count").close()
        assert graph.send("node_count").one() is not None
        assert time.monotonic() - began < 2
    finally:
        store.close()


def test_a_sent_query_says_when_its_answer_is_in(graph: TenantGraph) -> None:
    # a query that takes a while (freeing ids): not in at once, in once the server answered
    sent = graph.send("free_node_ids", {"count": 30_000})
    assert not sent.answered()
    deadline = time.monotonic() + 10
    while not sent.answered():
        assert time.monotonic() < deadline
        time.sleep(0.005)
    assert sent.one() == {"freed": 30_000} and sent.answered()
