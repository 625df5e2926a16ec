"""The outbox: the default notifier, a JSON Lines file in the data folder.

It implements the same `Notifier` interface as the Slack and GitHub adapters, so with no
configuration every page and ticket lands here, one JSON object per line (written with a JSON
serializer, so any character in an alert stays valid JSON). `find` answers exactly, which makes
the outbox the reference for "act once per intent".
"""

from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from adapters.notify import AdapterError, OutboundMessage


class Outbox:
    """Append-only JSONL file; each line is an `OutboundMessage` plus `adapter`, `ref`, `sent_at`.

    Lines are written with one `write()` on an `O_APPEND` descriptor and fsynced, so several
    worker processes can share one file.
    """

    name = "outbox"

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def send(self, message: OutboundMessage) -> str:
        """Append the message; return `outbox:<intent_id>`.

        Raises a retryable `AdapterError` on I/O errors.
        """
        ref = f"outbox:{message.intent_id}"
        record = message.model_dump(mode="json") | {
            "adapter": self.name,
            "ref": ref,
            "sent_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
        }
        line = (json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n").encode()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._lock:
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
                try:
                    os.write(fd, line)
                    os.fsync(fd)
                finally:
                    os.close(fd)
        except OSError as exc:
            raise AdapterError(
                f"outbox write to {self.path} failed: {exc.strerror}", retryable=True
            ) from exc
        return ref

    def check(self) -> str:
        """The outbox file can be appended to (its folder is created if missing); nothing is
        written. Raises a non-retryable `AdapterError` naming the path and the OS error."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
            os.close(fd)
        except OSError as exc:
            raise AdapterError(
                f"outbox {self.path} is not writable: {exc.strerror}", retryable=False
            ) from exc
        return f"outbox {self.path} is writable"

    def find(self, intent_id: str, message: OutboundMessage | None = None) -> str | None:
        """The ref of the line carrying this intent id, or None (exact: `message` not needed)."""
        for record in self.entries():
            if record.get("intent_id") == intent_id:
                return str(record["ref"])
        return None

    def entries(self) -> list[dict[str, Any]]:
        """Every message in the outbox, oldest first (a torn last line is skipped).

        Lines end at b"\n" only: `str.splitlines` would also split at U+2028 and other
        separators that `json.dumps(ensure_ascii=False)` leaves raw inside strings.
        """
        try:
            lines = self.path.read_bytes().split(b"\n")
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
            if isinstance(record, dict):
                out.append(record)
        return out
