"""GitHub issues adapter: the real PyGithub against the local GitHub stand-in (tests/github_api.py).

Covers one issue per intent (marker, `find` over paged lists, a 502 answered after the issue
was stored), labels created if missing, rate limits and error classes, the 65,536-character
body limit with a 70,000-character evidence set, resolve (one comment, closed, idempotent),
the token kept out of errors and logs, and the end-to-end path through the gateway.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from pydantic import SecretStr, ValidationError

from adapters.falkordb import EmbeddedFalkorDB, TenantGraph
from adapters.github import markdown
from adapters.github.notifier import GitHubIssues, intent_marker, parse_ref
from adapters.notices import ClearedNote, FollowUp, StepNote, Ticket, TicketUpdate
from adapters.notify import AdapterError, OutboundMessage
from agents.respond import messages
from gateway.cli.demo import demo_faults_path, scenario_bodies
from gateway.ops.runtime import Runtime
from gateway.settings import Settings
from tests.conftest import make_settings
from tests.github_api import REPO, TOKEN, FakeGitHub

SECONDARY = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)
ISSUES = r"/repos/o/r/issues"


@pytest.fixture
def github_api() -> Iterator[FakeGitHub]:
    """The GitHub stand-in on a free loopback port."""
    fake = FakeGitHub().start()
    yield fake
    fake.stop()


def adapter(fake: FakeGitHub, token: str = TOKEN, **extra: Any) -> GitHubIssues:
    """The adapter on the stand-in with no pauses between requests."""
    return GitHubIssues(
        SecretStr(token), REPO, api_url=fake.url, request_interval_s=0, write_interval_s=0, **extra
    )


@pytest.fixture
def issues(github_api: FakeGitHub) -> GitHubIssues:
    return adapter(github_api)


def ticket_message(intent_id: str = "incident:inc-1:ticket", **notice: Any) -> OutboundMessage:
    ticket = Ticket(
        incident_id="inc-1", severity="critical", title="ServiceHighErrorRate",
        root_cause="payment", confidence=0.9, alert_names=["ServiceHighErrorRate"],
        where=["checkout"], summary="payment fails",
    ).model_copy(update=notice)  # fmt: skip
    return OutboundMessage(
        intent_id=intent_id, incident_id="inc-1", kind="ticket", notice=ticket,
        opened_at_ms=int(datetime.now(UTC).timestamp() * 1000),
    )  # fmt: skip


def closing_message(ref: str) -> OutboundMessage:
    update = TicketUpdate(
        incident_id="inc-1", title="t", resolved_at=1_767_225_600_000,
        cleared=[ClearedNote(title="X", component="payment", ends_at=1_767_225_600_000)],
    )  # fmt: skip
    return OutboundMessage(
        intent_id="incident:inc-1:ticket-resolved", incident_id="inc-1", kind="ticket-update",
        reply_to=ref, notice=update,
    )  # fmt: skip


# ---------------------------------------------------------------- opening and finding issues


def test_ticket_opens_one_labelled_issue_with_the_intent_marker(github_api, issues):
    ref = issues.send(ticket_message())
    assert ref == "github:o/r#1" and parse_ref(ref) == ("o/r", 1)
    (issue,) = github_api.issues
    assert issue["body"].startswith(intent_marker("incident:inc-1:ticket"))
    assert issue["title"] == "[critical] ServiceHighErrorRate on checkout — root cause: payment"
    assert issue["labels"] == ["blast-radius", "severity:critical", "component:payment"]
    # every label was missing: each was looked up (404) and created with our colour
    for name, color in [("blast-radius", "5319e7"), ("severity:critical", "b60205"),
                        ("component:payment", "1d76db")]:  # fmt: skip
        assert github_api.labels[name]["color"] == color and not github_api.labels[name]["auto"]
    assert github_api.calls("POST", r"/repos/o/r/labels") == 3
    # a second ticket reuses the labels it already ensured: no label request at all
    issues.send(ticket_message("incident:inc-2:ticket"))
    assert github_api.calls("GET", r"/repos/o/r/labels/.*") == 3
    assert issues.find("incident:inc-1:ticket", ticket_message()) == ref
    assert issues.find("incident:inc-2:ticket") == "github:o/r#2"
    assert issues.find("incident:inc-3:ticket") is None


def test_find_lists_labelled_issues_of_any_state_since_the_incident_opened(github_api, issues):
    github_api.per_page_max = 2  # force Link paging
    ref = issues.send(ticket_message())
    for n in range(5):
        issues.send(ticket_message(f"incident:other-{n}:ticket"))
    github_api.issue(1)["state"] = "closed"
    opened = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    github_api.log.clear()
    assert (
        issues.find(
            "incident:inc-1:ticket",
            ticket_message().model_copy(update={"opened_at_ms": int(opened.timestamp() * 1000)}),
        )
        == ref
    )
    lists = [p for m, p in github_api.log if m == "GET" and p.startswith(ISSUES + "?")]
    assert len(lists) == 3  # newest first, the oldest issue is on the last page
    first = dict(re.findall(r"([a-z_]+)=([^&]+)", lists[0]))
    assert first["labels"] == "blast-radius" and first["state"] == "all"
    assert first["since"] == "2026-01-02T02%3A04%3A05Z"  # opened less one hour of clock skew


def test_a_502_after_the_issue_was_stored_is_retryable_and_find_reconciles(github_api, issues):
    github_api.fail("POST", ISSUES, 502, {"message": "Server Error"}, after=True)
    with pytest.raises(AdapterError) as err:
        issues.send(ticket_message())
    assert err.value.retryable and "502" in str(err.value)
    assert github_api.calls("POST", ISSUES) == 1  # PyGithub did not retry the POST
    assert len(github_api.issues) == 1
    assert (
        issues.find(
            "incident:inc-1:ticket", ticket_message().model_copy(update={"opened_at_ms": 0})
        )
        == "github:o/r#1"
    )


def test_get_5xx_is_retried_by_pygithub(github_api, issues):
    issues.send(ticket_message())
    github_api.fail("GET", ISSUES, 503, times=2)
    assert issues.find("incident:inc-1:ticket") == "github:o/r#1"
    assert github_api.calls("GET", ISSUES) == 3


def test_a_label_created_meanwhile_by_another_worker_is_fine(github_api, issues):
    github_api.labels["blast-radius"] = github_api.label_json("blast-radius", "000000", "", False)
    github_api.fail("GET", r"/repos/o/r/labels/blast-radius", 404, {"message": "Not Found"})
    assert issues.send(ticket_message()) == "github:o/r#1"  # POST label answered 422: tolerated
    assert github_api.labels["blast-radius"]["color"] == "000000"
    assert github_api.issues[0]["labels"][0] == "blast-radius"


def test_long_titles_and_label_names_are_cut_to_githubs_limits(github_api, issues):
    issues.send(ticket_message(alert_names=["x" * 300], root_cause="c" * 60, severity="a,b"))
    (issue,) = github_api.issues
    assert len(issue["title"]) == 256 and issue["title"].endswith("…")
    assert issue["labels"] == ["blast-radius", "severity:a b", "component:" + "c" * 40]


# ---------------------------------------------------------------- errors


def test_secondary_rate_limit_on_create_is_retryable_with_retry_after(github_api, issues):
    github_api.fail("POST", ISSUES, 403, {"message": SECONDARY}, {"Retry-After": "7"})
    with pytest.raises(AdapterError) as err:
        issues.send(ticket_message())
    assert err.value.retryable and err.value.retry_after_s == 7
    assert github_api.issues == [] and github_api.calls("POST", ISSUES) == 1
    assert issues.send(ticket_message()) == "github:o/r#1"


def test_primary_rate_limit_says_when_it_resets(github_api, issues):
    reset = int(time.time()) + 120
    headers = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)}
    github_api.fail("POST", ISSUES, 403, {"message": "API rate limit exceeded for user"}, headers)
    with pytest.raises(AdapterError) as err:
        issues.send(ticket_message())
    assert err.value.retryable and 100 < (err.value.retry_after_s or 0) <= 120


def test_secondary_rate_limit_on_a_read_is_waited_out_by_pygithub(github_api, issues):
    github_api.fail("GET", ISSUES, 403, {"message": SECONDARY}, {"Retry-After": "0"})
    assert issues.find("incident:inc-1:ticket") is None
    assert github_api.calls("GET", ISSUES) == 2


def test_a_long_rate_limit_wait_on_a_read_becomes_a_retryable_error(github_api, issues):
    github_api.fail("GET", ISSUES, 403, {"message": SECONDARY}, times=5)  # no Retry-After: 60 s
    with pytest.raises(AdapterError) as err:
        issues.find("incident:inc-1:ticket")
    assert err.value.retryable and err.value.retry_after_s == 60


@pytest.mark.parametrize(
    ("status", "message", "retryable"),
    [
        (401, "Bad credentials", False),
        (403, "Resource not accessible by personal access token", False),
        (404, "Not Found", False),
        (422, "Validation Failed", False),
        (429, "Too many requests", True),
        (500, "Server Error", True),
        (502, "Bad Gateway", True),
        (503, "Service Unavailable", True),
    ],
)
def test_errors_say_whether_a_retry_may_help(github_api, issues, status, message, retryable):
    github_api.fail("POST", ISSUES, status, {"message": message})
    with pytest.raises(AdapterError) as err:
        issues.send(ticket_message())
    assert err.value.retryable is retryable
    assert f"HTTP {status} {message}" in str(err.value)
    assert github_api.calls("POST", ISSUES) == 1


def test_a_wrong_token_is_not_retryable(github_api):
    with pytest.raises(AdapterError) as err:
        adapter(github_api, token="ghp_wrong").send(ticket_message())
    assert not err.value.retryable and "401 Bad credentials" in str(err.value)


def test_unreachable_github_is_retryable(github_api):
    issues = adapter(github_api)
    github_api.stop()
    with pytest.raises(AdapterError) as err:
        issues.find("incident:inc-1:ticket")
    assert err.value.retryable and "ConnectionError" in str(err.value)


def test_the_token_never_appears_in_an_error_or_a_log_line(github_api, caplog):
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="github")  # PyGithub logs requests at DEBUG
    issues = adapter(github_api)
    errors: list[AdapterError] = []
    scenarios = [
        ("POST", ISSUES, 502, {"message": "Server Error"}),
        ("POST", ISSUES, 403, {"message": SECONDARY}),
        ("POST", ISSUES, 422, {"message": "Validation Failed", "errors": [{"code": "custom"}]}),
        ("POST", ISSUES, 401, {"message": "Bad credentials"}),
    ]
    for method, path, status, body in scenarios:
        github_api.fail(method, path, status, body)
        with pytest.raises(AdapterError) as err:
            issues.send(ticket_message())
        errors.append(err.value)
    issues.send(ticket_message())
    issues.send(closing_message("github:o/r#1"))
    issues.find("incident:inc-1:ticket")
    with pytest.raises(AdapterError) as err:
        adapter(github_api, token=TOKEN + "x").check()
    errors.append(err.value)
    assert github_api.auth_seen[-1] == f"token {TOKEN}x"  # the token really was sent
    for error in errors:
        assert TOKEN not in str(error) and TOKEN not in repr(error)
    assert TOKEN not in repr(issues)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "Authorization" in logged and TOKEN not in logged
    assert any(r.name.startswith("github") for r in caplog.records)  # PyGithub did log


def test_a_token_echoed_by_the_server_is_scrubbed_from_the_error(github_api, issues):
    github_api.fail("POST", ISSUES, 401, {"message": f"Bad credentials: {TOKEN}"})
    with pytest.raises(AdapterError) as err:
        issues.send(ticket_message())
    assert TOKEN not in str(err.value) and "Bad credentials: ***" in str(err.value)


# ---------------------------------------------------------------- resolve


def test_resolve_comments_once_and_closes(github_api, issues):
    ref = issues.send(ticket_message())
    done = issues.send(closing_message(ref))
    assert done == "github:o/r#1/comments/5000" and parse_ref(done) == ("o/r", 1)
    assert github_api.issue(1)["state"] == "closed"
    assert github_api.issue(1)["state_reason"] == "completed"
    (comment,) = github_api.comments[1]
    assert comment["body"].startswith(intent_marker("incident:inc-1:ticket-resolved"))
    assert "Alerts that cleared" in comment["body"]
    assert issues.send(closing_message(ref)) == done  # a re-run: no second comment, no PATCH
    assert len(github_api.comments[1]) == 1 and github_api.calls("PATCH", r".*") == 1


def test_a_close_that_failed_after_the_comment_is_finished_by_the_retry(github_api, issues):
    ref = issues.send(ticket_message())
    github_api.fail("PATCH", r"/repos/o/r/issues/1", 502)
    with pytest.raises(AdapterError) as err:
        issues.send(closing_message(ref))
    assert err.value.retryable and github_api.issue(1)["state"] == "open"
    issues.send(closing_message(ref))
    assert github_api.issue(1)["state"] == "closed" and len(github_api.comments[1]) == 1


@pytest.mark.parametrize("reply_to", [None, "outbox:incident:inc-1:ticket", "github:o/r"])
def test_an_update_needs_a_github_issue_ref(issues, reply_to):
    with pytest.raises(AdapterError) as err:
        issues.send(closing_message("x").model_copy(update={"reply_to": reply_to}))
    assert not err.value.retryable and "not a GitHub issue ref" in str(err.value)


def test_only_tickets_go_to_github(issues):
    page = ticket_message().model_copy(update={"kind": "notification"})
    with pytest.raises(AdapterError) as err:
        issues.send(page)
    assert not err.value.retryable


# ---------------------------------------------------------------- check (doctor)


def test_check_describes_the_repository_and_access(github_api, issues):
    line = issues.check()
    assert "o/r reachable with push access" in line and "4990/5000" in line


def test_check_refuses_a_token_without_push_access(github_api, issues):
    github_api.permissions["push"] = False
    with pytest.raises(AdapterError) as err:
        issues.check()
    assert not err.value.retryable and "push access" in str(err.value)


def test_check_reports_a_missing_repository(github_api, issues):
    github_api.fail("GET", r"/repos/o/r", 404, {"message": "Not Found"}, times=4)
    with pytest.raises(AdapterError) as err:
        issues.check()
    assert not err.value.retryable and "404" in str(err.value)


# ---------------------------------------------------------------- the ticket body


def incident_row(**extra: Any) -> dict[str, Any]:
    """An `incident_get` row as the responder reads it."""
    return {
        "id": "inc-abc", "status": "open", "title": "ServiceHighErrorRate",
        "severity": "critical", "opened_at": 1_767_000_000_000, "resolved_at": None,
        "root_cause": "payment", "confidence": 0.9,
        "summary": "payment explains 3 of 3 alerting components.",
        "candidates": ["payment"],
        "paths_json": json.dumps([["frontend", "checkout", "payment"]]),
        "ruled_out_json": json.dumps(
            {"checkout": "alerts, but its dependency payment alerts too (victim)"}
        ),
    } | extra  # fmt: skip


def alert_row(n: int, annotation: str = "", component: str = "payment") -> dict[str, Any]:
    """An `incident_alerts` row."""
    return {
        "key": f"fp{n}@t", "fingerprint": f"{n:016x}", "alertname": "ServiceHighErrorRate",
        "status": "firing", "severity": "critical", "starts_at": "2026-01-01T00:00:00.000Z",
        "starts_at_ms": 1_767_225_600_000, "ends_at_ms": None,
        "labels_json": json.dumps({"alertname": "ServiceHighErrorRate", "service": component}),
        "annotations_json": json.dumps({"description": annotation}),
        "values_json": json.dumps({"B": 0.42}), "generator_url": f"http://prom/graph?g0.expr={n}",
        "link": "", "title": "ServiceHighErrorRate", "component": component,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("alerts", "partial"),
    [
        ([alert_row(1, "x" * 70_000)], True),  # one alert of 70,000 characters
        ([alert_row(n, "y" * 2_000) for n in range(35)], True),  # 35 alerts, 70,000 together
    ],
    ids=["one-huge-alert", "many-alerts"],
)
def test_70000_characters_of_evidence_are_cut_with_a_note(github_api, issues, alerts, partial):
    message = messages.ticket("incident:inc-abc:ticket", incident_row(), alerts, None)
    assert isinstance(message.notice, Ticket)
    assert len(markdown.body(message.notice)) <= markdown.TICKET_BODY_LIMIT
    issues.send(message)  # the stand-in answers 422 above 65,536 characters, as GitHub does
    body = github_api.issues[0]["body"]
    assert len(body) <= 65_536
    note = re.search(r"evidence cut .*?: ([\d,]+) of ([\d,]+) characters left out", body)
    assert note, "the cut must say how much was left out"
    left, total = (int(g.replace(",", "")) for g in note.groups())
    full = sum(len(markdown.verbatim(raw)) for raw in message.notice.evidence)
    assert total == full and 0 < left < total
    blocks = re.findall(r"```\n(.*?)\n```", body, re.S)
    shown = sum(len(b.removesuffix("\n…")) for b in blocks)
    assert shown == total - left
    assert len(message.notice.evidence) == len(alerts)  # the outbox copy keeps everything


def test_the_ticket_tells_what_the_investigator_saw():
    steps = [
        {"task_id": "task-1", "kind": "investigate", "n": 1, "tool": "incident_alerts",
         "args": '{"incident_id": "inc-abc"}', "result": json.dumps([{}, {}, {}])},
        {"task_id": "task-1", "kind": "investigate", "n": 2, "tool": "coverage_walk",
         "args": json.dumps({"alerting": ["c" * 30] * 8}), "result": json.dumps([{}] * 7)},
        {"task_id": "reinvestigate:inc-abc:cart", "kind": "reinvestigate", "n": 1,
         "tool": "incident_alerts", "args": "{}", "result": "null"},
    ]  # fmt: skip
    changes = [{"id": "c1", "component": "payment", "kind": "deploy", "ref": "v2.0.1 `rc`",
                "at": 1_766_999_000_000, "author": "@mallory"}]  # fmt: skip
    previous = {"id": "inc-old", "status": "resolved", "opened_at": 1_766_000_000_000,
                "resolved_at": 1_766_000_600_000, "root_cause": "payment",
                "ticket_ref": "github:o/r#7"}  # fmt: skip
    who = {"person": "Ada", "team": "payments", "component": "payment"}
    alerts = [alert_row(1, "rate > 5%\n```\n@everyone"), alert_row(2, component="checkout")]
    message = messages.ticket(
        "incident:inc-abc:ticket",
        incident_row(),
        alerts,
        who,
        changes=changes,
        steps=steps,
        previous=previous,
    )
    ticket = message.notice
    assert isinstance(ticket, Ticket)
    text = markdown.body(ticket)
    assert markdown.title(ticket) == (
        "[critical] ServiceHighErrorRate on payment, checkout — root cause: payment"
    )
    # a lead reads as one where a list of issues shows only titles
    assert markdown.title(ticket.model_copy(update={"lead": True})) == (
        "[critical] ServiceHighErrorRate on payment, checkout — likely cause (low confidence): "
        "payment"
    )
    assert "**Root cause:** payment (confidence 0.90)" in text
    assert "- frontend → checkout → payment" in text
    assert "**Previous occurrence:** o/r#7 (incident inc-old" in text
    assert "deploy `` v2.0.1 `rc` `` on payment by `@mallory`" in text
    assert "- payment: the root cause" in text
    assert "- checkout: set aside, alerts, but its dependency payment alerts too (victim)" in text
    assert "**investigate** (task `task-1`):\n1. `incident_alerts`" in text
    assert '2. `coverage_walk` `{"alerting": ["' + "c" * 30 in text and "cc…` → 7 rows" in text
    assert "**reinvestigate** (task `reinvestigate:inc-abc:cart`):\n1. " in text
    assert "### Paged\nAda (on call for payments, owner of payment)" in text
    assert "````\nfingerprint: 0000000000000001\nlabels:" in text  # fence outgrows the ``` inside
    assert "generatorURL: http://prom/graph?g0.expr=2" in text and 'values: {"B": 0.42}' in text
    assert markdown.labels(ticket) == ["severity:critical", "component:payment"]
    assert message.opened_at_ms == 1_767_000_000_000


def test_the_ticket_says_set_aside_for_a_rival_memory_chose_over() -> None:
    """A lead from memory at 0.45 over a candidate the rules left standing: the ticket says
    "set aside", as the web page does, never "ruled out, not ruled out by the rules" (a new
    user's trial: the one real alternative to a low-confidence lead read as excluded)."""
    why = ("not ruled out by the rules (they could not tell it apart); memory named loans-db "
           "over it: the checks of its playbook held")  # fmt: skip
    row = incident_row(
        root_cause="loans-db", confidence=0.45, candidates=["loans-db"],
        ruled_out_json=json.dumps({"members-svc": why}),
    )  # fmt: skip
    ticket = messages.ticket("incident:inc-abc:ticket", row, [alert_row(1)], None).notice
    assert isinstance(ticket, Ticket)
    text = markdown.body(ticket)
    assert "- members-svc: set aside, not ruled out by the rules (they could not tell" in text
    assert "ruled out," not in text


def test_the_ticket_says_what_each_step_found():
    """A new user's trial: `recall_playbooks … → 4 fields` where the step's result said
    `{"status": "no_data", "detail": "no playbooks recalled"}`: a tool's answer reads as its
    detail line (with its status when not ok), else the rows it found."""

    def tool(status: str, data: object, detail: str) -> str:
        return json.dumps({"status": status, "data": data, "raw": None, "detail": detail})

    results = [
        (tool("no_data", None, "no playbooks recalled"), "no data: no playbooks recalled"),
        (tool("ok", [{}, {}], "calls into valkey-cart fail 41 %"),
         "calls into valkey-cart fail 41 %"),
        (tool("ok", [{}, {}, {}], ""), "3 rows"),
        (tool("ok", {"a": 1}, ""), "ok"),
        (tool("error", None, "Prometheus answered 503\n**@team**"),
         "error: Prometheus answered 503 \\*\\*@&#8203;team\\*\\*"),
        (tool("ok", None, "x" * 300), "x" * 159 + "…"),
        (json.dumps({"checkout": 3, "payment": 1}), '`{"checkout": 3, "payment": 1}`'),
        (json.dumps([[1], [2]]), "2 rows"),
        ("null", "no result"),
    ]  # fmt: skip
    steps = [
        StepNote(task_id="t", kind="investigate", n=n, tool="recall_playbooks", args="{}",
                 result=result)
        for n, (result, _) in enumerate(results, 1)
    ]  # fmt: skip
    lines = [line for line in markdown.steps_section(steps) if line.strip() and "**" not in line]
    assert [line.split(" → ", 1)[1] for line in lines] == [said for _, said in results]
    assert "fields" not in "\n".join(lines)


HOSTILE = "<img src=x onerror=alert(1)> **@everyone** [x](https://evil.example) #1 `|`"


def test_every_field_of_a_ticket_is_escaped_for_markdown_and_html(github_api, issues):
    incident = incident_row(
        severity=HOSTILE, summary=HOSTILE, root_cause=HOSTILE, candidates=[HOSTILE],
        paths_json=json.dumps([[HOSTILE, "payment"]]),
        ruled_out_json=json.dumps({HOSTILE: HOSTILE}),
    )  # fmt: skip
    who = {"person": "@mallory", "team": HOSTILE, "component": "payment"}
    message = messages.ticket("incident:inc-abc:ticket", incident, [alert_row(1)], who,
                              note=HOSTILE)  # fmt: skip
    issues.send(message)
    body = github_api.issues[0]["body"]
    outside_code = re.sub(r"(`+)[^`]*?\1|```.*?```", "", body, flags=re.S)
    assert "<img" not in body and "&lt;img src=x onerror=alert(1)&gt;" in body
    assert "@everyone" not in outside_code and "@mallory" not in outside_code
    assert "@&#8203;everyone" in body and "@&#8203;mallory" in body
    assert not re.search(r"(?<!\\)\]\(https://evil", body) and "\\[x\\]" in body
    assert "## Incident inc-abc: open, severity &lt;img" in body  # the heading, escaped
    assert "\\*\\*@&#8203;everyone\\*\\*" in body


def test_an_inconclusive_ticket_names_its_candidates():
    incident = incident_row(root_cause=None, candidates=["load-generator", "frontend-web"])
    ticket = messages.ticket("i", incident, [alert_row(1)], None).notice
    assert isinstance(ticket, Ticket)
    assert markdown.title(ticket) == (
        "[critical] ServiceHighErrorRate on payment — root cause unclear: load-generator or "
        "frontend-web"
    )
    assert (
        "**Root cause:** inconclusive; check in this order: load-generator, frontend-web"
        in markdown.body(ticket)
    )
    assert markdown.labels(ticket) == ["severity:critical", "component:load-generator",
                              "component:frontend-web"]  # fmt: skip


def test_a_manual_resolve_names_who_and_lists_only_the_alerts_that_cleared():
    """Resolved by hand while two of three alerts still fire: the closing comment says who
    resolved it, lists the one alert that cleared (with its time) and counts the others as
    still firing, as the thread's resolve notice does (never "cleared … at -")."""
    cleared = alert_row(1) | {"status": "resolved", "ends_at_ms": 1_767_225_900_000}
    alerts = [cleared, alert_row(2, component="checkout"), alert_row(3, component="frontend")]
    incident = incident_row(status="resolved", resolved_at=1_767_226_000_000,
                            resolved_by="Cy Example")  # fmt: skip
    closing = messages.ticket_resolved("incident:inc-abc:ticket-resolved", incident, alerts,
                                       "github:o/r#1")  # fmt: skip
    assert isinstance(closing.notice, TicketUpdate)
    text = markdown.update_body(closing.notice)
    assert text.startswith("Resolved by Cy Example at 2026-01-01 00:06:40 UTC.")
    assert "cleared:\n- `ServiceHighErrorRate` on payment at 2026-01-01 00:05:00 UTC" in text
    assert "on checkout" not in text and "on frontend" not in text and " at -" not in text
    assert "2 alerts still firing when it was resolved." in text
    # every alert still firing: no "cleared" list at all
    firing = messages.ticket_resolved("i", incident, alerts[1:], "github:o/r#1").notice
    assert isinstance(firing, TicketUpdate)
    said = markdown.update_body(firing)
    assert "cleared" not in said and "2 alerts still firing when it was resolved." in said
    # resolved by its alerts: all cleared, nobody named, nothing still firing
    resolved = [a | {"status": "resolved", "ends_at_ms": 1_767_225_900_000} for a in alerts]
    plain = messages.ticket_resolved("i", incident_row(status="resolved", resolved_at=1),
                                     resolved, "github:o/r#1").notice  # fmt: skip
    assert isinstance(plain, TicketUpdate)
    said = markdown.update_body(plain)
    assert said.startswith("Resolved at ") and said.count("\n- ") == 3
    assert "still firing" not in said


@pytest.mark.parametrize(("firing", "said"), [(1, "1 alert"), (2, "2 alerts")])
def test_the_thread_and_the_ticket_count_alerts_still_firing_in_one_wording(firing, said):
    """A new user's trial: the thread said "1 alert(s) still firing." where the ticket and
    docs/oncall.md say "1 alert still firing when it was resolved."."""
    cleared = alert_row(1) | {"status": "resolved", "ends_at_ms": 1_767_225_900_000}
    alerts = [cleared, *(alert_row(n, component="checkout") for n in range(2, 2 + firing))]
    incident = incident_row(status="resolved", resolved_at=1_767_226_000_000,
                            resolved_by="Cy Example")  # fmt: skip
    notice = messages.resolved_notice("i", incident, alerts, "outbox:p").notice
    assert isinstance(notice, FollowUp)
    assert notice.plain() == (
        "Resolved by Cy Example: incident inc-abc at 2026-01-01 00:06:40 UTC. Cleared: "
        f"ServiceHighErrorRate on payment. {said} still firing when it was resolved."
    )
    closing = messages.ticket_resolved("i", incident, alerts, "github:o/r#1").notice
    assert isinstance(closing, TicketUpdate)
    assert markdown.update_body(closing).endswith(f"\n\n{said} still firing when it was resolved.")


# ---------------------------------------------------------------- settings and wiring


def test_github_needs_token_and_repo_together(monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    with pytest.raises(ValidationError, match="GITHUB_REPO is unset"):
        Settings()
    monkeypatch.setenv("GITHUB_REPO", "not a repo")
    with pytest.raises(ValidationError):
        Settings()
    monkeypatch.setenv("GITHUB_REPO", "acme/ops")
    settings = Settings()
    assert settings.github_enabled and TOKEN not in repr(settings)
    monkeypatch.setenv("GITHUB_TOKEN", "")
    monkeypatch.setenv("GITHUB_REPO", "")
    assert not Settings().github_enabled  # empty, as in .env.example, means unset


# ---------------------------------------------------------------- end to end


def payment_failure() -> dict[str, Any]:
    faults = yaml.safe_load(demo_faults_path().read_text(encoding="utf-8"))["faults"]
    return next(f for f in faults if f["flag"] == "paymentFailure")


def post(http: httpx.Client, fault: dict[str, Any], starts: datetime, status: str) -> list[str]:
    incidents: list[str] = []
    for body in scenario_bodies(fault, starts, status):
        answer = http.post("/api/v1/alerts", json=body)
        assert answer.status_code == 200, answer.text
        incidents += [i for i in answer.json()["incidents"] if i not in incidents]
    return incidents


@pytest.fixture
def github_runtime(
    falkordb: EmbeddedFalkorDB,
    graph: TenantGraph,
    tmp_path: Path,
    tenant: str,
    github_api: FakeGitHub,
) -> Iterator[tuple[Runtime, httpx.Client]]:
    """A running gateway (demo world loaded) whose tickets go to the GitHub stand-in."""
    settings = make_settings(
        falkordb, tmp_path, tenant, github_token=SecretStr(TOKEN), github_repo=REPO,
        github_api_url=github_api.url, github_request_interval_s=0, github_write_interval_s=0,
    )  # fmt: skip
    with Runtime(settings) as runtime:
        port = runtime.serve_http("127.0.0.1", 0)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            yield runtime, http


def drain(runtime: Runtime) -> None:
    """Run a burst worker until nothing is claimable."""
    runtime.make_worker().run(threading.Event(), burst=True)


def test_end_to_end_one_issue_per_incident_closed_on_resolve(github_runtime, github_api):
    runtime, http = github_runtime
    assert isinstance(runtime.tickets, GitHubIssues)
    github_api.fail("POST", ISSUES, 502, after=True)  # the first issue is stored, then 502
    fault = payment_failure()
    first = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=2)
    (incident,) = post(http, fault, first, "firing")
    drain(runtime)
    assert len(github_api.issues) == 1  # the 502 was reconciled by find: no duplicate
    assert github_api.calls("POST", ISSUES) == 1
    issue = github_api.issues[0]
    assert issue["title"] == (  # alerts only, payment is a lead (0.45): the title says so
        "[critical] ServiceHighErrorRate on payment, checkout, frontend +1 more — "
        "likely cause (low confidence): payment"
    )
    assert issue["labels"] == ["blast-radius", "severity:critical", "component:payment"]
    assert "### Steps the investigator took" in issue["body"]
    assert "coverage_walk" in issue["body"]
    detail = http.get(f"/api/v1/incidents/{incident}").json()
    refs = {a["intent_id"]: a["external_ref"] for a in detail["actions"]}
    assert refs[f"incident:{incident}:ticket"] == "github:o/r#1"

    post(http, fault, first, "firing")  # a redelivery changes nothing
    post(http, fault, first, "resolved")
    drain(runtime)
    assert github_api.issue(1)["state"] == "closed"
    (comment,) = github_api.comments[1]
    assert "Resolved at" in comment["body"]
    assert comment["body"].count("\n- ") == len(detail["alerts"]) == 4
    post(http, fault, first, "resolved")  # a repeated resolve: still one comment
    drain(runtime)
    assert len(github_api.comments[1]) == 1

    # a refire past BLAST_REOPEN_WINDOW (10 min after the resolve at +30 min): same
    # fingerprints, new startsAt -> a new incident and a new issue
    (again,) = post(http, fault, first + timedelta(minutes=45), "firing")
    drain(runtime)
    assert again != incident and len(github_api.issues) == 2
    body = github_api.issues[1]["body"]
    assert f"**Previous occurrence:** o/r#1 (incident {incident}" in body
    assert runtime.outbox.entries() and all(
        e["kind"] != "ticket" for e in runtime.outbox.entries()
    )  # pages still in the outbox, tickets on GitHub


def test_end_to_end_the_ticket_says_changes_were_not_checked_without_a_change_source(
    github_runtime, github_api
):
    """No change source (nothing ever posted to /api/v1/changes): the ticket says the recent
    changes were not checked, not "none in the 2 h"; once one exists, "none" is measured."""
    runtime, http = github_runtime
    first = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=2)
    (incident,) = post(http, payment_failure(), first, "firing")
    drain(runtime)
    body = github_api.issues[0]["body"]
    section = body.split("### Recent changes near the cause\n", 1)[1].split("\n\n", 1)[0]
    assert section == (
        "- not checked (no change source configured: no deploy or merged pull request was ever "
        "recorded, by `POST /api/v1/changes` or `blast-radius topology changes`)"
    )
    # a deploy a day earlier: a source exists, and nothing changed in the 2 h
    deploy = {"component": "payment", "kind": "deploy", "ref": "v1",
              "at": int((first - timedelta(days=1)).timestamp() * 1000)}  # fmt: skip
    assert http.post("/api/v1/changes", json=deploy).status_code == 201
    (other,) = post(http, payment_failure(), first + timedelta(days=2), "firing")
    drain(runtime)
    assert other != incident
    body = github_api.issues[1]["body"]
    section = body.split("### Recent changes near the cause\n", 1)[1].split("\n\n", 1)[0]
    assert section == "- none in the 2 h before the incident opened"


def test_end_to_end_a_rate_limited_ticket_waits_for_retry_after(github_runtime, github_api):
    runtime, http = github_runtime
    github_api.fail("POST", ISSUES, 403, {"message": SECONDARY}, {"Retry-After": "1"})
    post(http, payment_failure(), datetime.now(UTC) - timedelta(minutes=5), "firing")
    drain(runtime)
    assert github_api.issues == [] and github_api.calls("POST", ISSUES) == 1
    # the respond task is deferred (not failed: no attempt burned meanwhile); the alerts were
    # all in before the first investigation began, so no re-investigation (or update) waits
    assert runtime.pending_tasks() == 1
    # the page, and the other alerting team (storefront) told in its thread
    assert [e["kind"] for e in runtime.outbox.entries()] == ["notification", "followup"]
    runtime.start_workers(1)
    assert runtime.wait_idle(timeout_s=10)
    assert len(github_api.issues) == 1 and github_api.calls("POST", ISSUES) == 2


def test_end_to_end_a_manual_resolve_tells_the_ticket_who_and_what_still_fires(
    github_runtime, github_api
):
    """`POST /resolve` by Cy Example while every alert fires (a new user's trial): the issue's
    closing comment names Cy and lists no alert as cleared."""
    runtime, http = github_runtime
    (incident,) = post(http, payment_failure(), datetime.now(UTC) - timedelta(minutes=5), "firing")
    drain(runtime)
    firing = len(http.get(f"/api/v1/incidents/{incident}").json()["alerts"])
    done = http.post(f"/api/v1/incidents/{incident}/resolve", json={"by": "Cy Example"})
    assert done.status_code == 200 and done.json()["resolved_by"] == "Cy Example"
    drain(runtime)
    assert github_api.issue(1)["state"] == "closed"
    (comment,) = github_api.comments[1]
    assert "Resolved by Cy Example at " in comment["body"]
    assert "cleared" not in comment["body"] and "\n- " not in comment["body"]
    assert f"{firing} alerts still firing when it was resolved." in comment["body"]
