"""Log lines: one JSON object per line with ids, and no configured secret in any line."""

from __future__ import annotations

import io
import json
import logging

import pytest
from pydantic import SecretStr

from agents.log_context import log_context
from gateway.logs import JsonFormatter, Redactor, TextFormatter, configure_logging
from gateway.settings import Settings

TOKEN = "9f2c4e1ab37d58e6c0a1b2d3e4f56789"


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def capture(formatter: logging.Formatter) -> tuple[logging.Logger, io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    logger = logging.getLogger(f"test.logs.{id(stream)}")
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.setLevel(logging.INFO)
    return logger, stream


def test_json_line_has_time_level_logger_message_and_ids():
    logger, stream = capture(JsonFormatter(Redactor([])))
    with log_context(tenant="acme", incident_id="inc-1"):
        with log_context(task_id="task-9"):
            logger.info("claimed %s", "investigate")
        logger.warning("after", extra={"task_id": "task-explicit"})
    logger.info("outside")
    first, second, third = (json.loads(line) for line in stream.getvalue().splitlines())
    assert first["level"] == "INFO" and first["message"] == "claimed investigate"
    assert first["logger"].startswith("test.logs.")
    assert first["time"].endswith("+00:00") and "T" in first["time"]
    assert (first["tenant"], first["incident_id"], first["task_id"]) == ("acme", "inc-1", "task-9")
    assert second["task_id"] == "task-explicit" and second["incident_id"] == "inc-1"
    assert "incident_id" not in third and "task_id" not in third


def test_configured_secrets_never_reach_a_log_line(restore_logging, capsys):
    settings = Settings.model_validate(
        {
            "webhook_tokens": {"acme": SecretStr(TOKEN)},
            "falkordb_url": SecretStr("redis://:hunter2hunter2hunter@127.0.0.1:6380"),
            "log_format": "json",
        }
    )
    configure_logging(settings)
    log = logging.getLogger("some.library")
    log.info("request headers {'authorization': 'Bearer %s'}", TOKEN)
    log.warning("connecting to redis://:hunter2hunter2hunter@127.0.0.1:6380")
    try:
        raise ValueError(f"bad token {TOKEN}")
    except ValueError:
        log.exception("failed with password hunter2hunter2hunter")
    out = capsys.readouterr().out
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 3
    assert TOKEN not in out and "hunter2hunter2hunter" not in out
    assert lines[0]["message"] == "request headers {'authorization': 'Bearer [REDACTED]'}"
    assert "[REDACTED]" in lines[2]["exception"]


def test_text_format_redacts_and_tags_ids():
    logger, stream = capture(TextFormatter(Redactor([TOKEN])))
    with log_context(incident_id="inc-2"):
        logger.info("token was %s", TOKEN)
    line = stream.getvalue().strip()
    assert line.endswith("token was [REDACTED] [incident_id=inc-2]")
    assert TOKEN not in line


FORGED = 'label "a\n2026-12-01 03:00:00,000 ERROR gateway: forged\r\x1b[31m\u2028" and \ud800'


def test_request_values_cannot_forge_a_line_in_either_format():
    """A label key with a newline stays inside its own record, in both formats."""
    text_logger, text = capture(TextFormatter(Redactor([])))
    json_logger, lines = capture(JsonFormatter(Redactor([])))
    for logger in (text_logger, json_logger):
        logger.warning("tenant acme: rejected webhook body: %s", FORGED)
        try:
            raise ValueError("boom")
        except ValueError:
            logger.exception("failed on %s", FORGED)
    first, second, *traceback = text.getvalue().splitlines()
    assert first.endswith(
        'label "a\\n2026-12-01 03:00:00,000 ERROR gateway: forged\\r\\x1b[31m\\u2028" and \\ud800'
    )
    assert "failed on" in second and traceback[0].startswith("Traceback")
    assert traceback[-1] == "ValueError: boom"
    records = [json.loads(line) for line in lines.getvalue().splitlines()]
    assert len(records) == 2
    assert records[0]["message"].endswith('forged\r\x1b[31m\u2028" and \ud800')
    assert "ValueError: boom" in records[1]["exception"]
