"""A runbook runner's webhook: one signed POST per remediation (httpx).

Signed as Slack signs its requests ("Verifying requests from Slack"): the signature is
`v0=` + hex HMAC-SHA256, keyed by the shared secret (`BLAST_RUNBOOK_WEBHOOK_SECRET`), over
`v0:<timestamp>:<body>`, where the timestamp is Unix seconds; headers
`X-Blast-Request-Timestamp` and `X-Blast-Signature`. A runner checks the signature in constant
time and refuses a timestamp more than 5 minutes from its clock (a replay).

The request also carries `Idempotency-Key: <intent id>` (IETF httpapi Idempotency-Key draft):
a runner has no way to be asked "did you get this already?", so `find` cannot reconcile, and a
retry after an unknown outcome (a timeout, a worker killed during the call) posts again with
the same key; the runner must do the work once per key. The body is the remediation's `body`
with `intent_id` and `incident_id` added.

Errors: 5xx, 408, 429, timeouts and connection errors are retryable (`Retry-After` honoured);
other 4xx are not. The secret never appears in an error or a log line.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any

import httpx
from pydantic import SecretStr

from adapters.notify import AdapterError, OutboundMessage

#: Statuses after which a retry may succeed.
RETRYABLE_STATUS = frozenset({408, 425, 429})


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """`v0=<hex HMAC-SHA256(secret, "v0:<timestamp>:<body>")>`, as Slack's signing scheme."""
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


class RunbookWebhook:
    """POST `body` to `url`, signed with `secret` (see the module docstring)."""

    name = "runbook-webhook"

    def __init__(
        self, url: str, body: dict[str, Any], secret: SecretStr, timeout_s: float = 10.0
    ) -> None:
        self.url = url
        self.body = body
        self._secret = secret
        self.timeout_s = timeout_s

    def send(self, message: OutboundMessage) -> str:
        """Post once; return `webhook:<url>#<intent id>` (plus the runner's `id` or
        `url` from a JSON answer, when it gives one). Raises `AdapterError`."""
        payload = self.body | {"intent_id": message.intent_id, "incident_id": message.incident_id}
        raw = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()
        timestamp = str(int(time.time()))
        headers = {
            "Content-Type": "application/json",
            "X-Blast-Request-Timestamp": timestamp,
            "X-Blast-Signature": signature(self._secret.get_secret_value(), timestamp, raw),
            "Idempotency-Key": message.intent_id,
        }
        try:
            answer = httpx.post(self.url, content=raw, headers=headers, timeout=self.timeout_s)
        except httpx.HTTPError as exc:
            raise AdapterError(
                f"runbook webhook {self.url} failed: {type(exc).__name__}", retryable=True
            ) from None
        if answer.status_code >= 300:
            after = answer.headers.get("retry-after", "")
            raise AdapterError(
                f"runbook webhook {self.url} answered HTTP {answer.status_code}",
                retryable=answer.status_code >= 500 or answer.status_code in RETRYABLE_STATUS,
                retry_after_s=float(after) if after.isdigit() else None,
            )
        ref = f"webhook:{self.url}#{message.intent_id}"
        try:
            data = answer.json()
        except ValueError:
            return ref
        found = data.get("url") or data.get("id") if isinstance(data, dict) else None
        return f"{ref} ({str(found)[:200]})" if found else ref

    def find(self, intent_id: str, message: OutboundMessage | None = None) -> str | None:
        """Always None: a runner cannot be asked; it dedupes by `Idempotency-Key` instead."""
        return None

    def check(self) -> str:
        """A signing secret is set (the runner is only called when a remediation runs)."""
        if not self._secret.get_secret_value():
            raise AdapterError("BLAST_RUNBOOK_WEBHOOK_SECRET is empty", retryable=False)
        return f"runbook webhook {self.url}: requests are signed"
