"""Slow clients against the real uvicorn server: headers or a body that do
not arrive in time end with 408 and a closed connection, even when trickled a byte at a time;
a normal request on the same server is unaffected."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.falkordb import EmbeddedFalkorDB, TenantGraph
from gateway.ops.runtime import Runtime
from tests.conftest import Gateway, make_settings

DEADLINE_S = 0.6


@pytest.fixture
def strict(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tmp_path: Path, tenant: str
) -> Iterator[Gateway]:
    settings = make_settings(
        falkordb, tmp_path, tenant, header_timeout_s=DEADLINE_S, body_timeout_s=DEADLINE_S
    )
    runtime = Runtime(settings)
    runtime.open()
    gw = Gateway(runtime, runtime.serve_http("127.0.0.1", 0), None)
    yield gw
    gw.http.close()
    runtime.close()


def connect(gw: Gateway) -> socket.socket:
    host, port = gw.url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def answer_after(sock: socket.socket, at_once: bytes, trickle: bytes) -> tuple[bytes, float]:
    """Send `at_once`, then `trickle` a byte every 0.1 s (stopping once the server closes);
    return what the server answered and how long after `at_once` (s)."""
    sock.sendall(at_once)
    started = time.monotonic()
    for byte in trickle:
        try:
            sock.sendall(bytes([byte]))
        except OSError:  # closed by the server
            break
        time.sleep(0.1)
    data = b""
    while chunk := sock.recv(4096):
        data += chunk
    return data, time.monotonic() - started


@pytest.mark.parametrize(
    ("at_once", "trickle"),
    [
        (b"", b""),  # connects and says nothing
        (b"", b"GET /health/live HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100),  # slow headers
        (b"POST /api/v1/alerts HTTP/1.1\r\nHost: x\r\nContent-Length: 200\r\n\r\n",
         b"{" * 100),  # slow body
    ],
)  # fmt: skip
def test_slow_headers_or_body_get_408_and_are_closed(
    strict: Gateway, at_once: bytes, trickle: bytes
):
    with connect(strict) as sock:
        data, took = answer_after(sock, at_once, trickle)
    assert data.startswith(b"HTTP/1.1 408"), data[:80]
    # the deadline counts from the connection or the end of the headers, not from the last
    # byte: a byte every 0.1 s does not extend it (all of them would take 10 s and more)
    assert DEADLINE_S - 0.1 < took < DEADLINE_S + 1.5


def test_a_timely_request_is_answered(strict: Gateway):
    assert strict.http.get("/health/live").status_code == 200
    with connect(strict) as sock:
        sock.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(4096):
            data += chunk
    assert data.startswith(b"HTTP/1.1 200")
