"""Which proxies are believed: the socket's peer is recorded before any `X-Forwarded-For` is
applied, so the identity headers of an authenticating proxy are taken from that proxy only.

uvicorn's own `ProxyHeadersMiddleware` applies `X-Forwarded-For` / `-Proto` from trusted
hosts (CIDRs allowed) by rewriting the ASGI scope's `client`, after which the real peer is gone.
The gateway therefore runs uvicorn with `proxy_headers=False` and applies the same middleware
here, behind `ForwardedFrom`, which keeps the peer in `scope["state"]["peer"]`.
"""

from __future__ import annotations

from typing import Any

from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from gateway.settings import Settings

#: Whose forwarded headers are applied when `BLAST_TRUSTED_PROXIES` is empty: a proxy on the
#: same host (uvicorn's own default, which deploy/README's TLS proxy relies on).
LOOPBACK = ["127.0.0.1", "::1"]


def forwarding_hosts(settings: Settings) -> list[str]:
    """The addresses or CIDRs whose `X-Forwarded-For` / `-Proto` are applied."""
    return [str(net) for net in settings.trusted_proxies] or LOOPBACK


class ForwardedFrom:
    """ASGI middleware: record the socket peer as `scope["state"]["peer"]`, then apply
    forwarded headers from `trusted` (uvicorn's `ProxyHeadersMiddleware`)."""

    def __init__(self, app: Any, trusted: list[str]) -> None:
        self.app = ProxyHeadersMiddleware(app, trusted_hosts=trusted)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            client = scope.get("client")
            scope.setdefault("state", {})["peer"] = client[0] if client else None
        await self.app(scope, receive, send)
