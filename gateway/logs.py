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
import re
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from agents.log_context import CONTEXT_KEYS, current_context
from gateway.settings import Settings

REDACTED = "[REDACTED]"
#: What could end a text log line early or not be writable: control characters (tab aside),
#: Unicode line and paragraph separators, and lone surrogates (from JSON `"\\ud800"`).
UNSAFE_IN_LINE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def escape_line(text: str, unsafe: re.Pattern[str] = UNSAFE_IN_LINE) -> str:
    """`text` on one line: `\\n`, `\\r` and `\\xNN` / `\\uNNNN` escapes for the characters of
    `unsafe` (default `UNSAFE_IN_LINE`), so a value from a request (a label key with a newline)
    cannot forge a second log line."""

    def escaped(match: re.Match[str]) -> str:
        char = match.group()
        if char in "\n\r":
            return "\\n" if char == "\n" else "\\r"
        return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"

    return unsafe.sub(escaped, text)


#: Left raw by `json.dumps(ensure_ascii=False)` but not safe in a line: Unicode line breaks
#: (Python's `splitlines` and some log shippers split there) and lone surrogates (not UTF-8).
#: JSON lines carry them as `\\uXXXX` escapes, which JSON readers decode back.
JSON_UNSAFE = re.compile("[\x85\u2028\u2029\ud800-\udfff]")


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
        text = json.dumps(line, ensure_ascii=False)
        return JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class TextFormatter(logging.Formatter):
    """`time level logger: message [incident_id=… task_id=…]`, secrets redacted, the message
    and tags escaped onto one line (`escape_line`)."""

    def __init__(self, redact: Redactor) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")
        self._redact = redact

    def formatMessage(self, record: logging.LogRecord) -> str:
        """The first line, with the message escaped (`escape_line`): one record, one line."""
        return super().formatMessage(
            logging.makeLogRecord(record.__dict__ | {"message": escape_line(record.message)})
        )

    def format(self, record: logging.LogRecord) -> str:
        """The record as text: one line, then its traceback (if any) on the next lines."""
        text = super().format(record)
        ids = current_context()
        tags = [
            f"{key}={escape_line(str(value))}"
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
