"""Prometheus as live evidence: instant queries over the HTTP API, via httpx.

Source: Prometheus HTTP API, `GET /api/v1/query?query=…&time=…` answering
`{"status": "success", "data": {"resultType": "vector",
"result": [{"metric": {…}, "value": [t, "v"]}]}}`. Auth as Prometheus' own
`http_config`: a bearer token or basic auth. Secrets are SecretStr and never logged or put in
an error message.
"""

from __future__ import annotations

import math
from typing import Any

import httpx
from pydantic import SecretStr

from adapters.notify import AdapterError


class Prometheus:
    """An instant-query client for one Prometheus server (`PROMETHEUS_URL`).

    `timeout_s`: per request (connect and read); `bearer`: a token sent as
    `Authorization: Bearer …`; `basic`: (username, password) for basic auth.
    """

    def __init__(
        self,
        base_url: str,
        timeout_s: float = 5.0,
        bearer: SecretStr | None = None,
        basic: tuple[str, SecretStr | None] | None = None,
    ) -> None:
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
        network errors; not for a bad query or refused credentials).
        """
        params: dict[str, str] = {"query": query}
        if at_s is not None:
            params["time"] = f"{at_s:.3f}"
        try:
            answer = self._client.get("api/v1/query", params=params)
        except httpx.HTTPError as exc:
            raise AdapterError(
                f"prometheus unreachable: {type(exc).__name__}", retryable=True
            ) from exc
        if answer.status_code >= 500 or answer.status_code == 429:
            raise AdapterError(f"prometheus answered {answer.status_code}", retryable=True)
        if answer.status_code in (401, 403):
            raise AdapterError(
                f"prometheus refused the credentials ({answer.status_code})", retryable=False
            )
        try:
            body = answer.json()
        except ValueError:
            body = {}
        if answer.status_code != 200 or body.get("status") != "success":
            raise AdapterError(
                f"prometheus query failed ({answer.status_code}): {body.get('error', 'no detail')}",
                retryable=False,
            )
        data = body["data"]
        if data["resultType"] == "scalar":
            pairs: list[tuple[dict[str, str], float]] = [({}, float(data["result"][1]))]
        else:
            pairs = [(r["metric"], float(r["value"][1])) for r in data["result"]]
        return [{"metric": m, "value": v} for m, v in pairs if math.isfinite(v)]

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
