"""End to end: the world imported from the OTel demo's compose file, a
Backstage catalog (owners, members) and an on-call file, then an alert posted to the webhook:
the owner Backstage names is paged, in its channel, mentioning its on-call."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx

from adapters.falkordb import EmbeddedFalkorDB, GraphStore
from gateway.ops.runtime import Runtime
from gateway.world import apply_world
from gateway.world.sources import load_sources
from tests.conftest import FIXTURES, alert_body, make_settings

V2 = FIXTURES / "otel-demo-v2"
E2E = FIXTURES / "e2e"


def test_compose_and_backstage_then_an_alert_pages_the_owner(
    falkordb: EmbeddedFalkorDB, store: GraphStore, tenant: str, tmp_path: Path
) -> None:
    loaded = load_sources(
        [V2 / "docker-compose.yml", E2E / "catalog-info.yaml", E2E / "oncall.yaml"],
        "auto", V2 / "dotenv.env",
    )  # fmt: skip
    graph = store.graph(f"org_{tenant}")
    graph.ensure_schema()
    report = apply_world(graph, loaded.world, loaded.sources, explicit=loaded.explicit)
    assert report.counts["components"] == 28 and report.counts["teams"] == 2
    owners = {(r["component"], r["team"]) for r in graph.rows("component_owners")}
    assert owners == {("payment", "payments"), ("checkout", "storefront")}
    with Runtime(make_settings(falkordb, tmp_path, tenant)) as runtime:
        port = runtime.serve_http("127.0.0.1", 0)
        answer = httpx.post(
            f"http://127.0.0.1:{port}/api/v1/alerts", content=alert_body("payment"),
            headers={"Content-Type": "application/json"}, timeout=30,
        )  # fmt: skip
        assert answer.status_code == 200, answer.text
        runtime.make_worker().run(threading.Event(), burst=True)
        pages = [e for e in runtime.outbox.entries() if e["kind"] == "notification"]
    assert len(pages) == 1
    page = pages[0]
    assert page["channel"] == "#payments-oncall"
    assert page["person"] == page["notice"]["person"]["name"] == "Pia Payments"
    # the compose file knows no business dependency of payment (flagd is configuration): one
    # alert on it cannot name it with confidence, so the page says check payment first
    assert page["notice"]["root_cause"] is None
    assert (
        "Inconclusive (alerts only): payment alerts, but the world knows no dependency"
        in (page["text"])
    )
    assert "Pia Payments" in page["text"]
