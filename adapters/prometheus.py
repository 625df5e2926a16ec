"""Prometheus as live evidence: instant queries over the HTTP API, via httpx.

Source: Prometheus HTTP API, `GET /api/v1/query?query=…&time=…&timeout=…` answering
`{"status": "success", "data": {"resultType": "vector",
"result": [{"metric": {…}, "value": [t, "v"]}]}}`. Auth as Prometheus' own
`http_config`: a bearer token or basic auth. Secrets are SecretStr and never logged or put in
an error message.

Prometheus is shared and fragile (one costly query can take it down for everyone), so every
query is bounded: its text (`adapters.promql.cost_problem`: no subqueries, ranges of at most a
day), Prometheus's own `timeout` parameter (below the client's, so Prometheus stops evaluating
when the client gives up), the answer's size (`MAX_ANSWER_BYTES`, `MAX_SERIES`), and a budget
per client (`Budget`: queries at once, and seconds of query time per minute). One client is
made per tenant (`gateway.ops.runtime.prometheus_clients`), so one tenant's checks spend only
its own budget.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import deque
from typing import Any

import httpx
from pydantic import SecretStr

from adapters.notify import AdapterError
from adapters.promql import cost_problem

#: Largest answer read from Prometheus (bytes); a larger one is an error, read no further.
MAX_ANSWER_BYTES = 4 * 1024 * 1024
#: Most series (or samples of an instant vector) one answer may hold.
MAX_SERIES = 2000
#: Prometheus's own query timeout is this share of the client's, so it gives up first.
SERVER_TIMEOUT_SHARE = 0.8
#: The window of `Budget.seconds` (s).
BUDGET_WINDOW_S = 60.0


class Budget:
    """How much of a Prometheus one client (one tenant) may use: `concurrency` queries at
    once (a query waits at most `wait_s` for a slot), and `seconds` of query time (wall
    clock, summed) in any `BUDGET_WINDOW_S`. Thread-safe; `take` raises `AdapterError`
    (not retryable: the check or tool answers `error`, and the investigation goes on)."""

    def __init__(self, concurrency: int = 2, seconds: float = 30.0, wait_s: float = 5.0) -> None:
        self.concurrency, self.seconds, self.wait_s = concurrency, seconds, wait_s
        self._slots = threading.BoundedSemaphore(concurrency)
        self._lock = threading.Lock()
        self._spent: deque[tuple[float, float]] = deque()  # (ended at, seconds), monotonic

    def spent(self) -> float:
        """Seconds of query time in the last `BUDGET_WINDOW_S`."""
        with self._lock:
            since = time.monotonic() - BUDGET_WINDOW_S
            while self._spent and self._spent[0][0] < since:
                self._spent.popleft()
            return sum(s for _, s in self._spent)

    def take(self) -> None:
        """Wait for a slot; raise `AdapterError` when none frees up in time or the window's
        seconds are spent."""
        if self.spent() >= self.seconds:
            raise AdapterError(
                f"prometheus budget spent: {self.seconds:.0f} s of queries in the last "
                f"{BUDGET_WINDOW_S:.0f} s (BLAST_PROMETHEUS_BUDGET_S)",
                retryable=False,
            )
        if not self._slots.acquire(timeout=self.wait_s):
            raise AdapterError(
                f"prometheus busy: {self.concurrency} queries of this tenant already running "
                "(BLAST_PROMETHEUS_CONCURRENCY)",
                retryable=False,
            )

    def give(self, seconds: float) -> None:
        """Free the slot `take` held and count `seconds` of query time."""
        with self._lock:
            self._spent.append((time.monotonic(), seconds))
        self._slots.release()


class Prometheus:
    """An instant-query client for one Prometheus server (`PROMETHEUS_URL`, or a tenant's in
    `BLAST_PROMETHEUS_URLS`).

    `timeout_s`: per request (connect and read; Prometheus is asked to stop at
    `SERVER_TIMEOUT_SHARE` of it); `bearer`: a token sent as `Authorization: Bearer …`;
    `basic`: (username, password) for basic auth; `budget`: this client's share of the server
    (a fresh default `Budget` when not given); `own`: whether the server holds only this
    tenant's series, so raw samples of a free query may be shown to it (a shared one's hold
    other tenants' series).
    """

    def __init__(
        self,
        base_url: str,
        timeout_s: float = 5.0,
        bearer: SecretStr | None = None,
        basic: tuple[str, SecretStr | None] | None = None,
        budget: Budget | None = None,
        own: bool = True,
    ) -> None:
        self.timeout_s = timeout_s
        self.budget = budget if budget is not None else Budget()
        self.own = own
        headers = {"Authorization": f"Bearer {bearer.get_secret_value()}"} if bearer else {}
        auth = (
            httpx.BasicAuth(basic[0], basic[1].get_secret_value() if basic[1] else "")
            if basic
            else None
        )
        self._client = httpx.Client(
            base_url=base_url.rstrip("/") + "/", timeout=timeout_s, headers=headers, auth=auth
        )

    def instant(self, query: str, at_s: float | None = None) -> list[dict[str, Any]]:
        """Run an instant query at `at_s` (Unix seconds, UTC; None = now).

        Returns `[{"metric": {...}, "value": float}]` (NaN and infinite samples dropped: they
        compare false with everything). Raises `AdapterError` (retryable for 5xx, 429 and
        network errors; not for a bad or costly query, an answer over `MAX_ANSWER_BYTES` or
        `MAX_SERIES`, a spent budget or refused credentials).
        """
        problem = cost_problem(query)
        if problem is not None:  # a check stored before the bound, or a model's query
            raise AdapterError(f"prometheus query refused: {problem}", retryable=False)
        params: dict[str, str] = {
            "query": query,
            "timeout": f"{int(self.timeout_s * SERVER_TIMEOUT_SHARE * 1000)}ms",
        }
        if at_s is not None:
            params["time"] = f"{at_s:.3f}"
        self.budget.take()
        started = time.monotonic()
        try:
            status, raw = self._get(params)
        finally:
            self.budget.give(time.monotonic() - started)
        if status >= 500 or status == 429:
            raise AdapterError(f"prometheus answered {status}", retryable=True)
        if status in (401, 403):
            raise AdapterError(f"prometheus refused the credentials ({status})", retryable=False)
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        if status != 200 or not isinstance(body, dict) or body.get("status") != "success":
            detail = body.get("error", "no detail") if isinstance(body, dict) else "no detail"
            raise AdapterError(f"prometheus query failed ({status}): {detail}", retryable=False)
        data = body["data"]
        if isinstance(data.get("result"), list) and len(data["result"]) > MAX_SERIES:
            raise AdapterError(
                f"prometheus answered {len(data['result'])} series, over the limit of "
                f"{MAX_SERIES}: aggregate the query (sum by, topk)",
                retryable=False,
            )
        if data["resultType"] == "scalar":
            pairs: list[tuple[dict[str, str], float]] = [({}, float(data["result"][1]))]
        else:
            pairs = [(r["metric"], float(r["value"][1])) for r in data["result"]]
        return [{"metric": m, "value": v} for m, v in pairs if math.isfinite(v)]

    def _get(self, params: dict[str, str]) -> tuple[int, bytes]:
        """GET `api/v1/query`: (status, body), reading at most `MAX_ANSWER_BYTES`."""
        chunks, size = [], 0
        try:
            with self._client.stream("GET", "api/v1/query", params=params) as answer:
                for chunk in answer.iter_bytes():
                    size += len(chunk)
                    if size > MAX_ANSWER_BYTES:
                        raise AdapterError(
                            f"prometheus answer over {MAX_ANSWER_BYTES} bytes: aggregate the "
                            "query (sum by, topk)",
                            retryable=False,
                        )
                    chunks.append(chunk)
                return answer.status_code, b"".join(chunks)
        except httpx.HTTPError as exc:
            raise AdapterError(
                f"prometheus unreachable: {type(exc).__name__}", retryable=True
            ) from exc

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()


#: Service-graph request counters of the OpenTelemetry Collector's servicegraph connector and
#: Tempo's metrics-generator, matched by name suffix (a namespace prefix is allowed).
SERVICE_GRAPH_REQUESTS = '{__name__=~"(.+_)?traces_service_graph_request_total"}'


def service_graph_calls(
    client: Prometheus, window: str = "1h", at_s: float | None = None
) -> list[dict[str, Any]]:
    """Calls per second between services over `window` (a PromQL duration) ending at `at_s`
    (Unix seconds; None = now), from the service-graph metrics.

    Returns `[{"client", "server", "connection_type", "rate"}]` (connection_type "" for a
    direct call; "database", "messaging_system", "virtual_node" as the connector labels them).
    Raises `AdapterError` as `Prometheus.instant` does.
    """
    query = f"sum by (client, server, connection_type) (rate({SERVICE_GRAPH_REQUESTS}[{window}]))"
    return [
        {
            "client": row["metric"].get("client", ""),
            "server": row["metric"].get("server", ""),
            "connection_type": row["metric"].get("connection_type", ""),
            "rate": row["value"],
        }
        for row in client.instant(query, at_s)
    ]
