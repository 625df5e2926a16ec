"""Read timeouts and a bounded request head at the server, so a slow client cannot hold a
connection (slowloris) and a large head costs no parsing.

uvicorn (0.54) times out only idle keep-alive connections: a client that sends its headers or
its body a byte at a time keeps the connection, and a worker's memory, for as long as it likes.
`with_read_timeouts` makes uvicorn's h11 protocol close, with `408 Request Timeout`, a
connection whose request headers are not complete `header_timeout_s` after their first byte
(or after the connection opened), or whose body is not complete `body_timeout_s` after the
headers. The head (request line and header fields) is bounded before h11 parses it: more than
`max_header_bytes` bytes or `max_headers` fields is answered `431` and the connection closed,
whether the head arrives in one piece (h11's own limit, `h11_max_incomplete_event_size`, holds
only for a head still incomplete) or a byte at a time. The body size is bounded by
`gateway.http.limits.RequestGuard`. deploy/README.md gives a TLS proxy's matching timeouts.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

TIMEOUT_ANSWER = b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"
#: The end of a request head (RFC 9112 §2.1).
HEAD_END = b"\r\n\r\n"


def head_answer(detail: str) -> bytes:
    """A whole `431 Request Header Fields Too Large` answer (RFC 6585 §5) with a JSON reason."""
    body = json.dumps({"detail": detail}).encode()
    return (
        b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\n"
        b"content-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
    )


class ReadTimeoutProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for the request headers and one for its body, and
    a bounded head."""

    header_timeout_s = 10.0
    body_timeout_s = 60.0
    max_headers = 100
    max_header_bytes = 16 * 1024

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._waiting_for: str | None = None
        #: Bytes and line ends of the current request's head so far, and its last 3 bytes
        #: (a head's end may be split across two reads).
        self._head_bytes, self._head_lines, self._tail = 0, 0, b""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the header deadline: a connection that says nothing is closed too."""
        super().connection_made(transport)
        self._arm("headers", self.header_timeout_s)

    def data_received(self, data: bytes) -> None:
        """Refuse a head over the limits before h11 parses it; move the deadline along with the
        request: headers, then body, then none."""
        if self.conn.their_state is h11.IDLE and data and self._head_too_big(data):
            return
        super().data_received(data)
        state = self.conn.their_state
        if state is not h11.IDLE:
            self._head_bytes, self._head_lines, self._tail = 0, 0, b""
        if state is h11.IDLE and data:
            if self._waiting_for != "headers":  # the next request on a kept-alive connection
                self._arm("headers", self.header_timeout_s)
        elif state is h11.SEND_BODY:
            if self._waiting_for != "body":
                self._arm("body", self.body_timeout_s)
        else:
            self._disarm()

    def _head_too_big(self, data: bytes) -> bool:
        """Count `data` into the current head; answer 431 and close when it is over a limit."""
        joined = self._tail + data
        end = joined.find(HEAD_END)
        head = joined[len(self._tail) : end if end >= 0 else None]
        self._head_bytes += len(head)
        self._head_lines += head.count(b"\n")
        self._tail = joined[-3:]
        if self._head_lines > self.max_headers:  # the request line ends one line too
            detail = f"over {self.max_headers} header fields (BLAST_MAX_HEADERS)"
        elif self._head_bytes > self.max_header_bytes:
            detail = f"request head over {self.max_header_bytes} bytes (BLAST_MAX_HEADER_BYTES)"
        else:
            return False
        log.info("refused a request head from %s: %s",
                 self.client[0] if self.client else "?", detail)  # fmt: skip
        self._disarm()
        if not self.transport.is_closing():
            self.transport.write(head_answer(detail))
            self.transport.close()
        return True

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


def with_read_timeouts(
    header_timeout_s: float,
    body_timeout_s: float,
    max_headers: int = ReadTimeoutProtocol.max_headers,
    max_header_bytes: int = ReadTimeoutProtocol.max_header_bytes,
) -> type[H11Protocol]:
    """A `ReadTimeoutProtocol` class with these deadlines (s) and head limits (fields, bytes),
    for `uvicorn.Config(http=…)`."""
    return type(
        "ReadTimeoutProtocol",
        (ReadTimeoutProtocol,),
        {"header_timeout_s": header_timeout_s, "body_timeout_s": body_timeout_s,
         "max_headers": max_headers, "max_header_bytes": max_header_bytes},
    )  # fmt: skip
