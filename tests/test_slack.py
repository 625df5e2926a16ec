"""The Slack notifier (adapters/slack/notifier.py) with the real slack-sdk against the local Slack
API."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr, ValidationError
from slack_sdk import WebClient

from adapters.falkordb import free_port
from adapters.github import markdown
from adapters.notices import Page
from adapters.notify import AdapterError, Mirrored, OutboundMessage
from adapters.outbox import Outbox
from adapters.slack import mrkdwn
from adapters.slack.notifier import EVENT_TYPE, SlackNotifier
from adapters.slack.refs import parse_ref
from agents.respond import messages
from gateway.ops.runtime import messengers
from gateway.settings import Settings
from tests.slack_api import TOKEN, Failure, SlackAPI

HOSTILE = "<!channel> <!here> @here @channel <@U0EVIL> <https://evil.example|click> & <#C0X|x>"


@pytest.fixture
def slack(api: SlackAPI) -> SlackNotifier:
    return SlackNotifier(SecretStr(TOKEN), api.base_url, default_channel="C0DEFAULT")


def incident(**extra: Any) -> dict[str, Any]:
    now = int(time.time() * 1000)
    base = {
        "id": "inc-1", "status": "open", "severity": "critical", "title": "PaymentErrors",
        "root_cause": "payment", "confidence": 0.9, "summary": "payment fails; checkout calls it",
        "candidates": ["payment"], "paths_json": json.dumps([["checkout", "payment"]]),
        "opened_at": now - 60_000, "received_at": now - 50_000, "resolved_at": None,
    }  # fmt: skip
    return base | extra


def alert(**extra: Any) -> dict[str, Any]:
    return {
        "title": "ServiceHighErrorRate", "component": "payment", "status": "firing",
        "starts_at_ms": int(time.time() * 1000) - 60_000,
        "annotations_json": json.dumps({"summary": "errors on Charge"}),
    } | extra  # fmt: skip


WHO = {"team": "checkout", "component": "payment", "person": "Cy Example",
       "channel": "#checkout-oncall", "email": "cy@example.com", "slack_user_id": None}  # fmt: skip


def page(**who: Any) -> OutboundMessage:
    return messages.notification(
        "incident:inc-1:initial-notification", incident(), [alert()], WHO | who
    )


def mrkdwn_objects(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every text object in the blocks."""
    found = []
    for block in blocks:
        for key in ("text",):
            if isinstance(block.get(key), dict):
                found.append(block[key])
        found += block.get("fields") or []
        found += [e for e in block.get("elements") or [] if e.get("type") == "mrkdwn"]
    return found


def test_page_is_one_root_message_with_blocks_buttons_metadata_and_mention(api, slack):
    ref = slack.send(page())
    assert ref.startswith("slack:C0CHECKOUT:")
    (root,) = api.roots("C0CHECKOUT")
    assert parse_ref(ref) == ("C0CHECKOUT", root["ts"])
    assert root["metadata"] == {
        "event_type": EVENT_TYPE,
        "event_payload": {"intent_id": "incident:inc-1:initial-notification",
                          "incident_id": "inc-1"},
    }  # fmt: skip
    assert root["text"].startswith("<@U0CY> ")  # the fallback mentions the on-call person
    ids = [b.get("block_id") for b in root["blocks"]]
    assert ids == ["title", "cause", "summary", "paths", "evidence", "verdict"]
    cause = root["blocks"][1]["fields"]
    assert "*payment*" in cause[0]["text"] and "0.90" in cause[0]["text"]
    assert cause[1]["text"].startswith("*Paged*\n<@U0CY> Cy Example (on call for checkout")
    assert "checkout → payment" in root["blocks"][3]["text"]["text"]
    buttons = root["blocks"][-1]["elements"]
    assert [(b["action_id"], b["value"], b["text"]["text"]) for b in buttons] == [
        ("blast_confirm", "inc-1", "Confirm cause"),
        ("blast_reject", "inc-1", "Wrong cause"),
        ("blast_ack", "inc-1", "Acknowledge"),
        ("blast_resolved", "inc-1", "Resolved"),
        ("blast_snooze", "inc-1", "Snooze 1 h"),
    ]
    params = root["params"]
    assert params["link_names"] is False and params["unfurl_links"] is False


def test_hostile_alert_text_cannot_mention_or_link(api, slack):
    bad = messages.notification(
        "incident:inc-1:initial-notification",
        incident(title=HOSTILE, summary=HOSTILE, root_cause=HOSTILE, candidates=[HOSTILE]),
        [
            alert(
                title=HOSTILE, component=HOSTILE, annotations_json=json.dumps({"summary": HOSTILE})
            )
        ],
        WHO | {"person": HOSTILE, "team": HOSTILE},
    )
    slack.send(bad)
    (root,) = api.roots()
    rendered = json.dumps([root["text"], root["blocks"]])
    # the only markup is the mention of the on-call person we looked up
    assert rendered.count("<") == rendered.count("<@U0CY>") == 2
    assert "&lt;!channel&gt;" in rendered and "&lt;@U0EVIL&gt;" in rendered
    assert "&amp;" in rendered and "<http" not in rendered
    texts = mrkdwn_objects(root["blocks"])
    assert texts and all(t["type"] == "mrkdwn" and t["verbatim"] is True for t in texts)


def test_mention_by_id_else_email_cached_else_none(api, slack):
    slack.send(page(slack_user_id="U0GRAPH"))
    assert api.called("users.lookupByEmail") == 0
    assert api.roots()[-1]["text"].startswith("<@U0GRAPH> ")
    slack.send(page())
    slack.send(page())
    assert api.called("users.lookupByEmail") == 1  # cached
    slack.send(page(email="nobody@example.com"))
    assert "<@" not in api.roots()[-1]["text"]
    slack.send(page(slack_user_id="not an id", email=None))  # never becomes a mention
    assert "<@" not in api.roots()[-1]["text"]


def test_followup_goes_into_the_thread_and_update_edits_the_page(api, slack):
    ref = slack.send(page())
    note = messages.cleared("incident:inc-1:cleared:a1", incident(), alert(ends_at_ms=1), ref)
    reply_ref = slack.send(note)
    (reply,) = api.replies(parse_ref(ref)[1])
    assert reply["thread_ts"] == parse_ref(ref)[1] and parse_ref(reply_ref)[1] == reply["ts"]
    assert reply["metadata"]["event_payload"]["intent_id"] == "incident:inc-1:cleared:a1"
    verdicts = [{"verdict": "confirmed", "by": "U0ALICE", "by_name": "alice", "at": 0}]
    update = messages.page_update(
        "incident:inc-1:resolved", ref, incident(status="resolved", resolved_at=1000),
        [alert()], WHO, [], verdicts, "https://github.example/o/r/issues/7",
    )  # fmt: skip
    assert slack.send(update) == ref
    (root,) = api.roots()
    assert root["edited"] == 1 and len(api.messages) == 2
    status = next(b for b in root["blocks"] if b.get("block_id") == "status")
    assert status["elements"][0]["text"] == (
        "Resolved at 1970-01-01 00:00:01 UTC.\n"
        "Cause confirmed by <@U0ALICE> at 1970-01-01 00:00:00 UTC."
    )
    ticket = root["blocks"][1]["fields"][2]["text"]
    assert (
        ticket
        == "*Ticket*\n<https://github.example/o/r/issues/7|https://github.example/o/r/issues/7>"
    )
    # the edit kept the page's metadata, so the page can still be found by its intent id
    assert slack.find("incident:inc-1:initial-notification", page()) == ref


def test_find_by_metadata_in_history_and_thread(api, slack):
    assert slack.find("incident:inc-1:initial-notification", page()) is None
    ref = slack.send(page())
    fresh = SlackNotifier(SecretStr(TOKEN), api.base_url)  # after a restart: no caches
    assert fresh.find("incident:inc-1:initial-notification", page()) == ref
    assert api.called("conversations.list") == 2  # '#checkout-oncall' -> C0CHECKOUT, per process
    _, method, params = api.calls[-1]
    assert method == "conversations.history" and params["include_all_metadata"] in ("1", 1)
    assert float(params["oldest"]) == pytest.approx(page().opened_at_ms / 1000 - 300, abs=1)
    assert fresh.find("incident:inc-1:other", page()) is None
    note = messages.cleared("incident:inc-1:cleared:a1", incident(), alert(ends_at_ms=1), ref)
    assert fresh.find(note.intent_id, note) is None
    note_ref = slack.send(note)
    assert fresh.find(note.intent_id, note) == note_ref
    assert api.calls[-1][1] == "conversations.replies"
    with pytest.raises(AdapterError) as info:
        fresh.find(note.intent_id)
    assert not info.value.retryable


def test_find_pages_through_long_history(api, slack):
    ref = slack.send(page())
    for n in range(250):
        slack.send(page().model_copy(update={"intent_id": f"other:{n}"}))
    assert slack.find("incident:inc-1:initial-notification", page()) == ref
    assert api.called("conversations.history") == 2  # 251 roots, 200 per page


def test_rate_limit_is_retried_after_retry_after(api, slack):
    api.fail("chat.postMessage", Failure(status=429, retry_after=1))
    started = time.monotonic()
    slack.send(page())
    assert time.monotonic() - started >= 1.0
    assert api.called("chat.postMessage") == 2 and len(api.roots()) == 1


def test_long_rate_limit_is_a_retryable_error_at_once(api, slack):
    api.fail("chat.postMessage", Failure(status=429, retry_after=120))
    started = time.monotonic()
    with pytest.raises(AdapterError) as info:
        slack.send(page())
    assert info.value.retryable and time.monotonic() - started < 5
    assert "ratelimited" in str(info.value)


def test_server_error_on_post_is_not_retried_blindly(api, slack):
    api.fail("chat.postMessage", Failure(status=500, error="internal_error"))
    with pytest.raises(AdapterError) as info:
        slack.send(page())
    assert info.value.retryable and api.called("chat.postMessage") == 1


def test_server_error_on_reads_is_retried(api, slack):
    slack.send(page())
    api.fail("conversations.history", Failure(status=503, error="service_unavailable"))
    assert slack.find("incident:inc-1:initial-notification", page()) is not None
    assert api.called("conversations.history") == 2


@pytest.mark.parametrize(
    ("failure", "retryable"),
    [
        (Failure(error="channel_not_found"), False),
        (Failure(error="not_in_channel"), False),
        (Failure(error="invalid_blocks"), False),
        (Failure(error="ratelimited"), True),
        (Failure(error="internal_error"), True),
        (Failure(status=502, error="bad_gateway"), True),
    ],
)
def test_errors_say_whether_retryable(api, slack, failure, retryable):
    api.fail("chat.postMessage", failure)
    with pytest.raises(AdapterError) as info:
        slack.send(page())
    assert info.value.retryable is retryable
    assert failure.error in str(info.value)


def test_no_channel_at_all_is_not_retryable(api):
    slack = SlackNotifier(SecretStr(TOKEN), api.base_url)
    with pytest.raises(AdapterError) as info:
        slack.send(page(channel=None))
    assert not info.value.retryable and "SLACK_DEFAULT_CHANNEL" in str(info.value)
    unknown = SlackNotifier(SecretStr(TOKEN), api.base_url, default_channel="#nope")
    with pytest.raises(AdapterError) as info:
        unknown.find("x", page(channel=None))
    assert not info.value.retryable


def test_default_channel_when_the_team_has_none(api, slack):
    ref = slack.send(page(channel=None))
    assert ref.startswith("slack:C0DEFAULT:")


def test_token_never_in_errors_or_logs(api, caplog):
    caplog.set_level(logging.DEBUG)
    secret = "xoxb-wrong-but-secret-token-987"
    wrong = SlackNotifier(SecretStr(secret), api.base_url, default_channel="C0DEFAULT")
    closed = SlackNotifier(
        SecretStr(secret), f"http://127.0.0.1:{free_port()}/api/", default_channel="C0DEFAULT"
    )
    errors = []
    for notifier in (wrong, closed):
        for call in (lambda n=notifier: n.send(page()), notifier.check,
                     lambda n=notifier: n.find("x", page())):  # fmt: skip
            with pytest.raises(AdapterError) as info:
                call()
            errors.append(info.value)
    assert [e.retryable for e in errors] == [False] * 3 + [True] * 3
    assert "invalid_auth" in str(errors[0])
    assert caplog.text  # slack-sdk logged its requests at DEBUG …
    for text in [caplog.text, *map(str, errors), *(repr(e.__cause__) for e in errors)]:
        assert secret not in text  # … but never the token
    assert all(e.__cause__ is None and e.__suppress_context__ for e in errors)


def test_check_names_bot_and_team(api, slack):
    assert slack.check() == "slack: bot blast-radius (U0BOT) in Test Team (T0TEST)"


def test_mirrored_copies_to_the_outbox_once(api, slack, tmp_path: Path):
    outbox = Outbox(tmp_path / "outbox.jsonl")
    both = Mirrored(slack, outbox)
    ref = both.send(page())
    assert ref.startswith("slack:") and both.name == "slack+outbox"
    assert both.find("incident:inc-1:initial-notification", page()) == ref
    api.fail("chat.postMessage", Failure(status=500, error="internal_error"))
    with pytest.raises(AdapterError):  # Slack failed: no copy of a page that did not go out
        both.send(page().model_copy(update={"intent_id": "i2"}))
    both.send(page())  # a repeat send copies nothing twice
    assert [e["intent_id"] for e in outbox.entries()] == ["incident:inc-1:initial-notification"]


def test_local_api_speaks_get_and_form_like_slack(api):
    """The stand-in answers GET with a query string (what slack-sdk's AsyncWebClient sends for
    read methods; the sync client ignores `http_verb` and POSTs), JSON and form bodies."""
    client = WebClient(token=TOKEN, base_url=api.base_url)
    posted = client.chat_postMessage(channel="#incidents", text="hi", metadata={
        "event_type": EVENT_TYPE, "event_payload": {"intent_id": "g"}})  # fmt: skip
    assert api.body_kinds[-1] == "json"
    got = httpx.get(
        api.base_url + "conversations.history",
        params={"channel": posted["channel"], "include_all_metadata": "true"},
        headers={"Authorization": f"Bearer {TOKEN}"},
    ).json()
    assert api.calls[-1][0] == "GET" and api.body_kinds[-1] == "none"
    assert got["messages"][0]["metadata"]["event_payload"]["intent_id"] == "g"
    plain = client.conversations_history(channel=posted["channel"])  # POST, form-encoded
    assert api.calls[-1][0] == "POST" and api.body_kinds[-1] == "form"
    assert "metadata" not in plain["messages"][0]


@pytest.mark.parametrize(
    ("env", "mode", "messenger"),
    [
        ({}, "outbox", "outbox"),
        ({"SLACK_BOT_TOKEN": "", "SLACK_SIGNING_SECRET": "", "BLAST_NOTIFY": ""}, "outbox",
         "outbox"),
        ({"SLACK_BOT_TOKEN": TOKEN, "SLACK_SIGNING_SECRET": "s"}, "slack", "slack"),
        ({"SLACK_BOT_TOKEN": TOKEN, "SLACK_SIGNING_SECRET": "s", "BLAST_NOTIFY": "slack+outbox"},
         "slack+outbox", "slack+outbox"),
        ({"SLACK_BOT_TOKEN": TOKEN, "SLACK_SIGNING_SECRET": "s", "BLAST_NOTIFY": "outbox"},
         "outbox", "outbox"),
    ],
)  # fmt: skip
def test_settings_choose_where_pages_go(monkeypatch, tmp_path, env, mode, messenger):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    assert settings.notify_mode == mode
    slack, chosen = messengers(settings, Outbox(tmp_path / "outbox.jsonl"))
    assert chosen.name == messenger and (slack is None) == (mode == "outbox")


@pytest.mark.parametrize(
    "env",
    [
        {"BLAST_NOTIFY": "slack"},
        {"SLACK_BOT_TOKEN": TOKEN},
        {"SLACK_BOT_TOKEN": TOKEN, "SLACK_SIGNING_SECRET": "s", "BLAST_NOTIFY": "email"},
    ],
)
def test_incomplete_slack_settings_are_refused_without_printing_the_token(monkeypatch, env):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError) as info:
        Settings()
    assert TOKEN not in str(info.value)


def test_post_that_times_out_after_slack_stored_it_is_found_not_reposted(api):
    slow = SlackNotifier(SecretStr(TOKEN), api.base_url, default_channel="C0DEFAULT", timeout_s=1)
    api.fail("chat.postMessage", Failure(after_store=lambda: time.sleep(1.5)))
    with pytest.raises(AdapterError) as info:
        slow.send(page())
    assert info.value.retryable and api.called("chat.postMessage") == 1  # no blind repost
    (stored,) = api.roots()
    assert slow.find("incident:inc-1:initial-notification", page()) == (
        f"slack:{stored['channel']}:{stored['ts']}"
    )


@pytest.mark.parametrize(("confidence", "lead"), [(0.45, True), (0.33, True), (0.5, False)])
def test_a_cause_under_the_confidence_line_is_paged_as_a_lead(
    api: SlackAPI, slack: SlackNotifier, tmp_path: Path, confidence: float, lead: bool
) -> None:
    """A 0.45 or 0.33 cause reads "named, low confidence" with its figure on the Slack page
    (text and blocks), in the outbox's copy and on the ticket, as the web page badges it; 0.5
    (the investigator's line) is a conclusion and reads as one."""
    found = incident(confidence=confidence)
    message = messages.notification("incident:inc-1:initial-notification", found, [alert()], WHO)
    slack.send(message)
    (root,) = api.roots("C0CHECKOUT")
    figure = f"(confidence {confidence:.2f}"
    cause = root["blocks"][1]["fields"][0]["text"]
    outbox = Outbox(tmp_path / "outbox.jsonl")
    outbox.send(message)
    (line,) = outbox.entries()
    ticket = messages.ticket("incident:inc-1:ticket", found, [], WHO)
    body = markdown.body(ticket.notice)  # type: ignore[arg-type]
    for text in (root["text"], cause, line["text"], body):
        assert figure in text
        assert ("named, low confidence" in text) is lead, text
    assert "Root cause: *payment* " + figure in root["text"]


def test_a_confirmation_of_an_inconclusive_finding_names_the_confirmed_cause() -> None:
    """A "Cause confirmed" under "check in this order: payments, shop-db" cannot say which one
    was confirmed: the edited page names it, as a rejection names the actual cause. A
    confirmation of a named root cause says nothing more (the page names it already)."""
    from adapters.notices import Page, VerdictNote
    from adapters.slack.mrkdwn import page_text, status_lines

    confirmed = VerdictNote(verdict="confirmed", by_name="Dana", at=0, actual_cause="shop-db")
    open_page = Page(incident_id="inc-1", title="orders 5xx", candidates=["payments", "shop-db"],
                     verdicts=[confirmed])  # fmt: skip
    (line,) = status_lines(open_page)
    assert line == (
        "Cause confirmed by Dana at 1970-01-01 00:00:00 UTC; confirmed cause: *shop-db*."
    )
    assert line in page_text(open_page)  # what the outbox writes
    named = open_page.model_copy(update={"root_cause": "shop-db"})
    assert status_lines(named) == ["Cause confirmed by Dana at 1970-01-01 00:00:00 UTC."]


def test_a_page_shows_a_verdict_s_words_but_not_a_thread_reply_s_again() -> None:
    """What happened, in the person's words (the verdict's `text`), follows the verdict on the
    page, escaped and cut; a thread reply's text is the reply itself, already in the thread."""
    said = {"verdict": "rejected", "by": "api", "by_name": "Ida Dent", "at": 0,
            "actual_cause": "members-db", "source": "api",
            "text": "disk full on the primary <!channel>"}  # fmt: skip
    update = messages.page_update("incident:inc-1:page:notify_verdict:v1", "slack:C1:1",
                                  incident(), [alert()], WHO, [], [said], None)  # fmt: skip
    assert isinstance(update.notice, Page)
    assert mrkdwn.status_lines(update.notice) == [
        "Cause rejected by Ida Dent at 1970-01-01 00:00:00 UTC; actual cause: *members-db*: "
        "“disk full on the primary &lt;!channel&gt;”."
    ]
    reply = said | {"source": "reply", "text": "wrong, it's members-db"}
    update = messages.page_update("incident:inc-1:page:notify_verdict:v2", "slack:C1:1",
                                  incident(), [alert()], WHO, [], [reply], None)  # fmt: skip
    assert isinstance(update.notice, Page) and "“" not in mrkdwn.page_text(update.notice)
    long = said | {"text": "y" * 2000}
    update = messages.page_update("incident:inc-1:page:notify_verdict:v3", "slack:C1:1",
                                  incident(), [alert()], WHO, [], [long], None)  # fmt: skip
    assert isinstance(update.notice, Page)
    assert update.notice.verdicts[0].text == "y" * 299 + "…"
    # a Slack button's verdict stores the button's label: no one's words
    click = said | {"source": "button", "text": "Wrong cause"}
    update = messages.page_update("incident:inc-1:page:notify_verdict:v4", "slack:C1:1",
                                  incident(), [alert()], WHO, [], [click], None)  # fmt: skip
    assert isinstance(update.notice, Page) and update.notice.verdicts[0].text is None


def test_a_page_edited_after_a_verdict_leads_with_what_people_established() -> None:
    """A new user's trial: the first page update after a confirmation still led with "Root
    cause: inconclusive; check in this order: …", the confirmation only on its last line. The
    verdict leads (the incidents list's words), the finding follows as history, in the text
    (the outbox's copy) and in the blocks' cause field alike."""
    from adapters.slack.blocks import page_blocks

    inconclusive = incident(root_cause=None, confidence=None, summary="Inconclusive: …",
                            candidates=["cart", "valkey-cart", "flagd"])  # fmt: skip
    confirmed = {"verdict": "confirmed", "by": "web:local", "by_name": "Sam SRE", "at": 0,
                 "actual_cause": "valkey-cart"}  # fmt: skip

    def edited(*verdicts: dict[str, Any], row: dict[str, Any] = inconclusive) -> Any:
        update = messages.page_update("incident:inc-1:page:notify_verdict:v1", "slack:C1:1", row,
                                      [alert()], WHO, [], list(verdicts), None)  # fmt: skip
        return update.notice

    lines = mrkdwn.page_text(edited(confirmed)).splitlines()
    assert lines[1:3] == [
        "Root cause: *valkey-cart* (confirmed by Sam SRE)",
        "The finding, before the verdict: inconclusive; check in this order: cart, valkey-cart, "
        "flagd",
    ]
    blocks = [b.to_dict() for b in page_blocks(edited(confirmed), None)]
    cause = next(b for b in blocks if b.get("block_id") == "cause")["fields"][0]["text"]
    assert cause.startswith("*Root cause*\n*valkey-cart* (confirmed by Sam SRE)\n_The finding")
    # a later correction outranks it, naming who; a Slack user is mentioned
    corrected = {"verdict": "rejected", "by": "U0BOB", "by_name": "bob", "at": 1,
                 "actual_cause": "cart"}  # fmt: skip
    lead = incident(root_cause="valkey-cart", confidence=0.45)
    lines = mrkdwn.page_text(edited(confirmed, corrected, row=lead)).splitlines()
    assert lines[1:3] == [
        "Root cause: corrected to *cart* by <@U0BOB>",
        "The finding, before the verdict: *valkey-cart* (confidence 0.45; named, low "
        "confidence: a lead to check first, not a conclusion)",
    ]
    # a rejection of an inconclusive finding naming no cause said one outside the graph in
    # words: the page says so, as the incidents list does
    outside = {"verdict": "rejected", "by": "U0BOB", "by_name": "bob", "at": 1,
               "actual_cause": None, "text": "the card network's outage"}  # fmt: skip
    assert mrkdwn.page_text(edited(outside)).splitlines()[1] == (
        "Root cause: a cause outside the graph, by <@U0BOB>"
    )
    # `resolved` judges no cause; before any verdict the finding leads, as before
    resolved = {"verdict": "resolved", "by": "U0BOB", "by_name": "bob", "at": 2}
    assert (
        mrkdwn.page_text(edited(resolved, row=lead))
        .splitlines()[1]
        .startswith("Root cause: *valkey-cart* (confidence 0.45")
    )
