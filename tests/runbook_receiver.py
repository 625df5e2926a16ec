"""A runbook runner's webhook receiver on 127.0.0.1 that checks requests the way a runner
must: the `X-Blast-Signature` (`v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<body>` with the
shared secret, compared in constant time) and a `X-Blast-Request-Timestamp` within 5 minutes
(Slack's scheme, "Verifying requests from Slack"). It does the work once per
`Idempotency-Key`, and answers 401 for a bad or missing signature, 200 `{"id"}` otherwise.
Written independently of `adapters/runbook_webhook.py`, so a wrong signature there fails here.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SECRET = "runbook-shared-secret-0123456789"


@dataclass
class Receiver:
    """`accepted`: bodies of the requests whose signature held, once per idempotency key;
    `refused`: how many requests were refused; `seen`: every request's idempotency key."""

    secret: str = SECRET
    accepted: list[dict[str, Any]] = field(default_factory=list)
    refused: int = 0
    seen: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    def start(self) -> Receiver:
        """Listen on a free loopback port in a daemon thread."""
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, answer = receiver.handle(dict(self.headers.items()), raw)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    @property
    def url(self) -> str:
        """Where the runner listens."""
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/run"

    def stop(self) -> None:
        """Stop listening."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def handle(self, headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, Any]]:
        """Check the signature and the clock; do the work once per idempotency key."""
        lower = {k.lower(): v for k, v in headers.items()}
        stamp = lower.get("x-blast-request-timestamp", "")
        given = lower.get("x-blast-signature", "")
        base = f"v0:{stamp}:".encode() + raw
        wanted = "v0=" + hmac.new(self.secret.encode(), base, hashlib.sha256).hexdigest()
        fresh = stamp.isdigit() and abs(time.time() - int(stamp)) <= 300
        with self.lock:
            if not fresh or not hmac.compare_digest(given.encode(), wanted.encode()):
                self.refused += 1
                return 401, {"error": "bad signature"}
            key = lower.get("idempotency-key", "")
            self.seen.append(key)
            if key not in self.seen[:-1]:
                self.accepted.append(json.loads(raw))
            return 200, {"id": f"run-{self.seen.index(key) + 1}"}
