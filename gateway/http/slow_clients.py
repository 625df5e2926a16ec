"""Read timeouts at the server, so a slow client cannot hold a connection (slowloris).

uvicorn (0.54) times out only idle keep-alive connections: a client that sends its headers or
its body a byte at a time keeps the connection, and a worker's memory, for as long as it likes.
`with_read_timeouts` makes uvicorn's h11 protocol close, with `408 Request Timeout`, a
connection whose request headers are not complete `header_timeout_s` after their first byte
(or after the connection opened), or whose body is not complete `body_timeout_s` after the
headers. The header size is bounded by h11 (16 KiB: 431 beyond) and the body size by
`gateway.http.limits.RequestGuard`. deploy/README.md gives a TLS proxy's matching timeouts.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

TIMEOUT_ANSWER = b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"


class ReadTimeoutProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for the request headers and one for its body."""

    header_timeout_s = 10.0
    body_timeout_s = 60.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._waiting_for: str | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the header deadline: a connection that says nothing is closed too."""
        super().connection_made(transport)
        self._arm("headers", self.header_timeout_s)

    def data_received(self, data: bytes) -> None:
        """Move the deadline along with the request: headers, then body, then none."""
        super().data_received(data)
        state = self.conn.their_state
        if state is h11.IDLE and data:
            if self._waiting_for != "headers":  # the next request on a kept-alive connection
                self._arm("headers", self.header_timeout_s)
        elif state is h11.SEND_BODY:
            if self._waiting_for != "body":
                self._arm("body", self.body_timeout_s)
        else:
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        """Nothing left to time out."""
        self._disarm()
        super().connection_lost(exc)

    def _arm(self, what: str, seconds: float) -> None:
        self._disarm()
        self._waiting_for = what
        self._deadline = self.loop.call_later(seconds, self._too_slow, what, seconds)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline, self._waiting_for = None, None

    def _too_slow(self, what: str, seconds: float) -> None:
        self._deadline, self._waiting_for = None, None
        if self.transport.is_closing():
            return
        log.info("closed a connection from %s: request %s not received within %.0f s",
                 self.client[0] if self.client else "?", what, seconds)  # fmt: skip
        started = self.cycle is not None and self.cycle.response_started
        if what == "headers" or not started:  # no answer begun: say why before closing
            self.transport.write(TIMEOUT_ANSWER)
        self.transport.close()


def with_read_timeouts(header_timeout_s: float, body_timeout_s: float) -> type[H11Protocol]:
    """A `ReadTimeoutProtocol` class with these deadlines (s), for `uvicorn.Config(http=…)`."""
    return type(
        "ReadTimeoutProtocol",
        (ReadTimeoutProtocol,),
        {"header_timeout_s": header_timeout_s, "body_timeout_s": body_timeout_s},
    )
