"""Log lines for people (text on stderr) and for journald (one JSON object per line on stdout).

A JSON line has `time` (RFC 3339, UTC, ms), `level`, `logger`, `message`, and, when known,
`tenant`, `incident_id` and `task_id` (set for a block of code with `log_context`, or per call
with `extra=`), plus `exception` (the traceback text). Every configured secret
(`Settings.secrets()`) is replaced by `[REDACTED]` in the message and the traceback, whatever
library wrote the line, in both formats.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from agents.log_context import CONTEXT_KEYS, current_context
from gateway.settings import Settings

REDACTED = "[REDACTED]"


class Redactor:
    """Replaces every secret value in a text by `[REDACTED]` (longest first, so a secret that
    contains another is hidden whole)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self._secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        """`text` with every secret replaced."""
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return text


class JsonFormatter(logging.Formatter):
    """One JSON object per record (see the module docstring), secrets redacted."""

    def __init__(self, redact: Redactor) -> None:
        super().__init__()
        self._redact = redact

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line of JSON."""
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": self._redact(record.getMessage()),
        }
        ids = current_context()
        for key in CONTEXT_KEYS:
            value = getattr(record, key, None) or ids.get(key)
            if value:
                line[key] = str(value)
        if record.exc_info:
            line["exception"] = self._redact(self.formatException(record.exc_info))
        return json.dumps(line, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """`time level logger: message [incident_id=… task_id=…]`, secrets redacted."""

    def __init__(self, redact: Redactor) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")
        self._redact = redact

    def format(self, record: logging.LogRecord) -> str:
        """The record as text (a traceback continues on the next lines)."""
        text = super().format(record)
        ids = current_context()
        tags = [
            f"{key}={value}"
            for key in CONTEXT_KEYS
            if (value := getattr(record, key, None) or ids.get(key))
        ]
        head, sep, rest = text.partition("\n")
        return self._redact(f"{head} [{' '.join(tags)}]{sep}{rest}" if tags else text)


def configure_logging(settings: Settings, verbose: bool = True) -> logging.Handler:
    """Route every logger (ours, uvicorn's, libraries') through one handler on the root logger:
    JSON on stdout when `BLAST_LOG_FORMAT=json`, text on stderr otherwise. Returns the handler."""
    redact = Redactor(settings.secrets().values())
    if settings.log_format == "json":
        handler: logging.Handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(JsonFormatter(redact))
    else:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(TextFormatter(redact))
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, handlers=[handler], force=True
    )
    return handler
