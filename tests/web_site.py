"""A gateway serving two tenants for the web tests (tests/test_web.py, test_web_browser.py):
each tenant has a webhook token and a viewer token and the demo world loaded."""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
from pydantic import SecretStr

from adapters.falkordb import EmbeddedFalkorDB, GraphStore, graph_name
from gateway.ops.runtime import Runtime
from gateway.world import demo_world_path, import_world, load_world
from tests.conftest import alert_body, make_settings

VIEWER_A = "viewer-a-0123456789abcdef"
VIEWER_B = "viewer-b-fedcba9876543210"
#: Who each viewer token signs in (one person per token).
PERSON_A = "priya@example.com"
PERSON_B = "sam@example.com"
HOOK_A = "hook-a-0123456789abcdef"
HOOK_B = "hook-b-fedcba9876543210"


@dataclass
class Site:
    """A gateway serving two tenants, each with a webhook token and a viewer token."""

    runtime: Runtime
    url: str
    a: str
    b: str

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30, follow_redirects=False)

    def post_alert(self, tenant: str, service: str, hour: int = 0) -> str:
        """Post a firing alert on `service` starting at `hour` (alerts of one hour on related
        services join one incident); return its incident id."""
        token = HOOK_A if tenant == self.a else HOOK_B
        body = json.loads(alert_body(service, hour))
        body["alerts"][0]["fingerprint"] = hashlib.sha256(f"{service}{hour}".encode()).hexdigest()[
            :16
        ]
        with self.client() as http:
            answer = http.post(
                "/api/v1/alerts", content=json.dumps(body),
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            )  # fmt: skip
        answer.raise_for_status()
        return str(answer.json()["incidents"][0])

    def drain(self) -> None:
        self.runtime.make_worker().run(threading.Event(), burst=True)


@contextlib.contextmanager
def running_site(falkordb: EmbeddedFalkorDB, store: GraphStore, tmp_path: Path) -> Iterator[Site]:
    """Two tenants with the demo world each, on a free loopback port; stopped on exit."""
    a, b = f"a{uuid.uuid4().hex[:8]}", f"b{uuid.uuid4().hex[:8]}"
    settings = make_settings(
        falkordb, tmp_path, a,
        webhook_tokens={a: SecretStr(HOOK_A), b: SecretStr(HOOK_B)},
        viewer_tokens={f"{a}:{PERSON_A}": SecretStr(VIEWER_A),
                       f"{b}:{PERSON_B}": SecretStr(VIEWER_B)},
        live_poll_ms=200,
    )  # fmt: skip
    runtime = Runtime(settings)
    runtime.open()
    try:
        for tenant in (a, b):
            import_world(store.graph(graph_name(tenant)), load_world(demo_world_path()))
        port = runtime.serve_http("127.0.0.1", 0)
        yield Site(runtime, f"http://127.0.0.1:{port}", a, b)
    finally:
        runtime.close()
