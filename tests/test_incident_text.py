"""What a person reads first: `blast-radius incident ID`, a page's alert lines and the demo's
table, for an inconclusive finding and an alert on a component the world does not know."""

from __future__ import annotations

import json
import time
from typing import Any

from adapters.falkordb import TenantGraph
from adapters.github import markdown
from adapters.notices import Ticket
from agents.respond.messages import alert_line, ticket
from gateway.cli.demo import table
from gateway.cli.incident_text import incident_report, incident_table, on_call
from gateway.http.status import incident_detail
from tests.tasks.test_crash import incident as incident_on_payment


def incident(**changes: Any) -> dict[str, Any]:
    found: dict[str, Any] = {
        "id": "inc-1", "title": "ServiceHighErrorRate", "status": "open", "severity": "warning",
        "opened_at": 0, "resolved_at": None, "root_cause": None,
        "finding": {"summary": "Inconclusive (alerts only): …", "confidence": 0.17,
                    "candidates": ["cart", "valkey-cart", "flagd"]},
        "alerts": [{"status": "firing", "alertname": "LatencyHigh", "component": None,
                    "starts_at_ms": 0, "labels": {"alertname": "LatencyHigh", "job": "billing"}}],
        "alerts_total": 1, "alerts_firing": 1,
        "alert_groups": [{"component": None, "alertname": "LatencyHigh", "alerts": 1,
                          "firing": 1}],
        "actions": [], "verdicts": [], "tasks": [],
    }  # fmt: skip
    found.update(changes)
    return found


def test_an_inconclusive_finding_says_so_and_lists_what_to_check_in_order() -> None:
    lines = incident_report(incident()).splitlines()
    assert lines[2] == "root cause: inconclusive (confidence 0.17)"
    assert lines[3] == "check in this order: cart, valkey-cart, flagd"
    assert "root cause: under investigation" in incident_report(incident(finding=None))
    done = incident_report(incident(root_cause="cart", finding={"summary": "s", "confidence": 0.9}))
    assert "root cause: cart (confidence 0.90)" in done and "check in this order" not in done


def test_a_cause_named_under_the_confidence_line_reads_as_a_lead() -> None:
    """A new user's trial: `blast-radius incidents` said `payment (low confidence 0.45)` and the
    page "named, low confidence: a lead to check first", while `blast-radius incident ID` said
    `root cause: payment (confidence 0.45)`, as if it were a conclusion."""
    lead = incident(root_cause="payment", finding={"summary": "s", "confidence": 0.45})
    assert incident_report(lead).splitlines()[2] == (
        "root cause: payment (low confidence 0.45: a lead to check first, not a conclusion)"
    )
    verdict = {"verdict": "rejected", "actual_cause": "cart", "by": "U1", "by_name": "Cy"}
    corrected = incident_report({**lead, "verdicts": [verdict]}).splitlines()[2]
    assert corrected == (
        "root cause: corrected to cart by Cy (the finding: payment, low confidence 0.45)"
    )


def test_an_alert_on_an_unknown_component_shows_the_name_its_labels_gave() -> None:
    assert "LatencyHigh on billing (unknown component)" in incident_report(incident())
    bare = incident(alerts=[{**incident()["alerts"][0], "labels": {}}])
    assert "LatencyHigh on (unknown component)" in incident_report(bare)
    alert = {"title": "LatencyHigh", "component": None, "status": "firing", "starts_at_ms": 0,
             "annotations_json": json.dumps({"summary": "slow"}),
             "labels_json": json.dumps({"service": "billing"})}  # fmt: skip
    assert alert_line(alert).startswith("LatencyHigh on billing (unknown component) (firing")
    assert "on unknown component (" in alert_line({**alert, "labels_json": "{}"})
    assert alert_line({**alert, "component": "api"}).startswith("LatencyHigh on api (firing")


def scenario(name: str, cause: str | None, named: bool = False) -> dict[str, Any]:
    return {
        "name": name, "alerts": 2, "incident": "inc-1", "root_cause": cause,
        "candidates": ["cart", "valkey-cart"], "expected_root_cause": ["cart"],
        "correct": cause == "cart", "named": named, "notifications": 1, "tickets": 1,
    }  # fmt: skip


def test_the_demo_table_labels_its_verdict_column_and_explains_named() -> None:
    evidence = {"scenarios": [scenario("cartFailure", "cart")], "correct": 1, "total": 1,
                "evidence": True}  # fmt: skip
    alone = {"scenarios": [scenario("cartFailure", None, named=True)], "correct": 0, "total": 1,
             "evidence": False}  # fmt: skip
    text = table(evidence, alone).splitlines()
    assert text[0].split()[-3:] == ["verdict", "alerts", "only"]
    assert text[1].split()[-3:] == ["ok", "inconclusive", "(named)"]
    assert text[-2].startswith("alerts only: 0/1 correct, 1 inconclusive naming the cause")
    assert text[-1].startswith("verdict: ok = the right root cause; named = inconclusive")
    text = table(alone).splitlines()  # --alerts-only: the same breakdown, without a label
    assert text[-2] == (
        "0/1 correct, 1 inconclusive naming the cause among the candidates, 0 confidently wrong"
    )
    assert text[-1].startswith("verdict: ")
    assert "verdict: " not in table(evidence)  # all right: nothing to explain


def test_a_ticket_with_no_candidates_says_why_its_list_is_empty() -> None:
    found = {
        "id": "inc-1",
        "title": "LatencyHigh",
        "status": "open",
        "severity": "warning",
        "opened_at": 0,
        "root_cause": None,
        "candidates": [],
        "summary": "No alert matched a known component",
    }
    notice = ticket("incident:inc-1:ticket", found, [], None).notice
    assert isinstance(notice, Ticket)
    body = markdown.body(notice)
    assert "### Candidates considered\n- none: no alert matched a known component\n" in body


def test_the_incident_list_tells_inconclusive_from_not_investigated() -> None:
    row = {"id": "inc-1", "status": "open", "severity": "warning", "opened_at": 0,
           "firing": 1, "alerts": 1, "title": "ServiceHighErrorRate"}  # fmt: skip
    text = incident_table([
        row | {"root_cause": None, "investigated": True},
        row | {"id": "inc-2", "root_cause": None, "investigated": False},
        row | {"id": "inc-3", "root_cause": "cart", "investigated": True},
        row | {"id": "inc-4", "root_cause": "cart", "investigated": True, "confidence": 0.9},
    ])  # fmt: skip
    causes = [line.split()[-3] for line in text.splitlines()[1:]]
    assert causes == ["inconclusive", "-", "cart", "cart"]
    # a lead reads as one in the list too, as on the page and the web list
    lead = incident_table([row | {"root_cause": "cart", "investigated": True,
                                  "confidence": 0.45}])  # fmt: skip
    assert "cart (low confidence 0.45)" in lead


def test_the_incident_list_says_who_acknowledged_and_how_far_it_escalated() -> None:
    row = {
        "id": "inc-1",
        "status": "open",
        "severity": "critical",
        "opened_at": 0,
        "firing": 1,
        "alerts": 1,
        "title": "T",
        "root_cause": "cart",
        "investigated": True,
    }
    text = incident_table([
        row | {"acknowledged_by": "Di Example", "escalation_level": 1},
        row | {"id": "inc-2", "escalation_level": 2},
        row | {"id": "inc-3", "maintenance_until": int(time.time() * 1000) + 3_600_000},
        row | {"id": "inc-4"},
    ])  # fmt: skip
    assert "ROOT CAUSE  ON CALL" in text.splitlines()[0]
    states = [line.split("cart", 1)[1].rsplit("T", 1)[0].strip() for line in text.splitlines()[1:]]
    assert states == ["ack Di Example, esc 1", "esc 2", "quiet", "-"]


def test_the_on_call_column_names_whom_the_page_went_to() -> None:
    """README: `blast-radius incidents` shows who was paged: the person, else the channel
    nobody on call was paged in."""
    row = {"status": "open", "paged": True}
    assert on_call(row, route={"person": "Cy Example", "channel": "#c"}) == "paged Cy Example"
    assert on_call(row, route={"person": None, "channel": "#checkout-oncall"}) == (
        "paged #checkout-oncall"
    )
    assert on_call(row) == "paged"  # no route recorded (an older incident)
    text = incident_table(
        [{"id": "inc-1", "status": "open", "severity": "critical", "opened_at": 0, "firing": 1,
          "alerts": 1, "title": "T", "root_cause": "cart", "investigated": True, "paged": True}],
        {"inc-1": {"person": "Di Example", "team": "checkout"}},
    )  # fmt: skip
    assert "  paged Di Example  T" in text


def test_the_on_call_column_says_quiet_only_while_the_window_lasts() -> None:
    """A maintenance window that ended (its page went out) no longer reads `quiet`."""
    row = {"acknowledged_by": None, "escalation_level": 2, "maintenance_until": 1_000_000}
    assert on_call(row, now_ms=999_999) == "esc 2, quiet"
    assert on_call(row, now_ms=1_000_000) == "esc 2"
    # resolved inside the window: no page is held for it
    assert on_call(row | {"status": "resolved"}, now_ms=999_999) == "esc 2"
    assert on_call({"acknowledged_by": "Ann"}, now_ms=0) == "ack Ann"
    # paged, nobody acknowledged yet: not "-", which reads as nobody on call
    assert on_call({"paged": True, "status": "open"}, now_ms=0) == "paged"
    assert on_call({"paged": True, "status": "open", "acknowledged_by": "Ann"}) == "ack Ann"


def test_the_on_call_column_keeps_who_was_paged_once_resolved() -> None:
    """A new user's trial: resolved incidents read `-` for some and `esc 1` for others; who
    was paged (or acknowledged) stays, open or resolved, before how far it escalated."""
    route = {"person": "Di Example", "team": "checkout", "channel": "#checkout-oncall"}
    resolved = {"paged": True, "status": "resolved"}
    assert on_call(resolved, now_ms=0, route=route) == "paged Di Example"
    assert on_call(resolved | {"escalation_level": 1}, 0, route) == "paged Di Example, esc 1"
    assert on_call(resolved | {"status": "open", "escalation_level": 1}, 0, route) == (
        "paged Di Example, esc 1"
    )
    acked = resolved | {"acknowledged_by": "Cy Example", "escalation_level": 2}
    assert on_call(acked, 0, route) == "ack Cy Example, esc 2"


def test_the_on_call_column_says_a_page_went_to_the_outbox_only() -> None:
    """A new user's trial: with no Slack, `paged Di Example` read as someone woken; the page
    was only written to the local outbox file (the web page: "Delivered ✓ to outbox")."""
    route = {"person": "Di Example", "team": "checkout", "channel": "#checkout-oncall"}
    row = {"paged": True, "status": "open", "delivered_to": "outbox"}
    assert on_call(row, 0, route) == "paged Di Example (outbox only)"
    assert on_call(row | {"delivered_to": "#checkout-oncall"}, 0, route) == "paged Di Example"
    refused = {"outcome": "refused", "channel": "#checkout-oncall", "reason": "not_in_channel",
               "fallback_from": None, "at": 0}  # fmt: skip
    kept = refused | {"outcome": "delivered", "channel": "outbox", "reason": None}
    found = incident(deliveries=[refused, kept | {"fallback_from": "#checkout-oncall"}])
    assert (
        "\npaged: Di Example (checkout, #checkout-oncall), outbox only (the page is in the local "
        "outbox file: no one was messaged)\n"
    ) in incident_report(found, route)
    slack = incident(deliveries=[kept | {"channel": "#checkout-oncall"}])
    assert "\npaged: Di Example (checkout, #checkout-oncall)\n" in incident_report(slack, route)


def test_the_on_call_column_says_nobody_paged_when_the_page_reached_no_one() -> None:
    """No team on call and no channel (a new user's trial: the column said `paged`)."""
    nobody = {"paged": False, "nobody_paged": True, "status": "open"}
    assert on_call(nobody, now_ms=0) == "nobody paged"
    assert on_call(nobody | {"status": "resolved"}, now_ms=0) == "nobody paged"
    assert on_call(nobody | {"acknowledged_by": "Ann"}, now_ms=0) == "ack Ann"
    assert on_call({"paged": False, "nobody_paged": False, "status": "open"}, now_ms=0) == "-"


def test_the_incident_report_shows_what_was_ruled_out_similar_incidents_and_memory() -> None:
    found = incident(
        root_cause="valkey-cart",
        finding={"summary": "valkey-cart: …", "confidence": 0.95, "ruled_out": [
            {"component": "postgres", "reason": "degraded (…), but product-reviews, which calls "
             "it, answers its own callers as usual: …"}]},
        similar=[{"id": "inc-0", "root_cause": "valkey-cart", "confirmed_by": "Priya Raman",
                  "score": 0.64}],
        memory=[{"playbook": "playbook:inc-0:valkey-cart", "candidate": "valkey-cart",
                 "applicable": True, "steered": True, "trust_at_use": 0.5, "verdict": "helped"}],
    )  # fmt: skip
    text = incident_report(found)
    assert (
        "set aside:\n  postgres: degraded (…), but product-reviews, which calls it, answers its "
        "own callers as usual: …\n" in text
    )
    assert (
        "similar earlier incidents (score 0-1: alike words 0.6, shared components 0.25, a cause "
        "people established that these alerts reach 0.15):\n  inc-0  cause valkey-cart, "
        "confirmed by Priya Raman (score 0.64)\n" in text
    )
    assert (
        "playbooks considered:\n  playbook:inc-0:valkey-cart on valkey-cart: applied, steered; "
        "trust 0.50 at use, verdict helped\n" in text
    )
    # nothing of the three: no empty headings
    bare = incident_report(incident())
    assert "set aside" not in bare and "similar" not in bare and "playbooks" not in bare


def test_the_incident_report_says_set_aside_for_a_rival_memory_chose_over() -> None:
    """The heading above a candidate memory named a lead over is the web page's "set aside",
    not "ruled out:" above "not ruled out by the rules" (a new user's trial)."""
    why = ("not ruled out by the rules (they could not tell it apart); memory named "
           "valkey-cart over it: the checks of its playbook held")  # fmt: skip
    found = incident(
        root_cause="valkey-cart",
        finding={"summary": "Memory: …", "confidence": 0.45,
                 "ruled_out": [{"component": "cart", "reason": why}]},
    )  # fmt: skip
    text = incident_report(found)
    assert f"set aside:\n  cart: {why}\n" in text and "ruled out:" not in text


def test_the_incident_report_says_a_similar_incident_s_cause_was_ruled_out_this_time() -> None:
    """The page no longer cites an earlier incident whose cause this finding ruled out; the
    CLI still lists it, saying so (`similar.ruled_out` from the API)."""
    found = incident(
        similar=[{"id": "inc-0", "root_cause": "loans-db", "confirmed_by": "Dara Base",
                  "score": 0.36, "ruled_out": "explains 1 of 2 alerting components"}],
    )  # fmt: skip
    assert (
        "  inc-0  cause loans-db, confirmed by Dara Base (score 0.36), ruled out this time: "
        "explains 1 of 2 alerting components\n" in incident_report(found)
    )


def test_the_incident_report_shows_a_verdict_s_words() -> None:
    """A verdict's `text` is what happened, in the person's words: the verdicts section shows
    it (one line, cut as on the page), where it was shown nowhere (a new user's trial)."""
    told = {"verdict": "rejected", "by": "api", "by_name": "Ida Dent", "actual_cause":
            "members-db", "text": "wrong, it is members-db:\ndisk full on the primary"}  # fmt: skip
    text = incident_report(incident(verdicts=[told]))
    assert (
        "  rejected by Ida Dent, actual cause members-db: “wrong, it is members-db: disk full on "
        "the primary”" in text.splitlines()
    )
    long = incident_report(incident(verdicts=[told | {"text": "x" * 5000}]))
    assert "“" + "x" * 299 + "…”" in long and "x" * 300 not in long


def test_the_cli_says_corrected_and_lists_no_neighbour_that_shares_nothing(
    graph: TenantGraph,
) -> None:
    """A new user's trial: `blast-radius incident` said "cause flagd, confirmed by Cy Example"
    where Cy rejected the finding and named flagd (the page says "corrected by"), and listed
    `cause payment (score 0.00)` and `cause - (score 0.00)` as similar. Those share nothing
    with the incident (no word, no component, no reachable cause): the API, the web page and
    the CLI leave them out, and the CLI says what the score is."""
    incident_id = incident_on_payment(graph)
    found = [
        {"id": "inc-9210f014e582", "at": 1, "root_cause": "flagd", "confirmed_by": "Cy Example",
         "corrected": True, "fixed_by": None, "text": 0.41, "score": 0.45},
        {"id": "inc-c6470316a93a", "at": 2, "root_cause": "payment", "confirmed_by": None,
         "corrected": False, "fixed_by": None, "text": 0.0, "score": 0.0},
        {"id": "inc-nothing", "at": 3, "root_cause": None, "confirmed_by": None,
         "corrected": False, "fixed_by": None, "text": 0.004, "score": 0.002},
    ]  # fmt: skip
    graph._graph.query(
        "MATCH (i:Incident {id: $id}) SET i.similar_json = $similar",
        {"id": incident_id, "similar": json.dumps(found)},
    )
    detail = incident_detail(graph, incident_id)
    assert detail is not None
    assert [s["id"] for s in detail["similar"]] == ["inc-9210f014e582"]
    text = incident_report(detail)
    assert "  inc-9210f014e582  cause flagd, corrected by Cy Example (score 0.45)" in text
    assert "confirmed by" not in text and "score 0.00" not in text


def test_a_page_edited_with_its_diagnosis_is_one_page_not_a_new_cause() -> None:
    """The page went out early ("under investigation") and was edited with its diagnosis: the
    two routes name the same person, so the report says one page, not "then, for the new
    cause"; a new cause owned by someone else still gets its line."""
    first = {"person": "Cy Pay", "team": "checkout", "channel": "#checkout-oncall"}
    edited = first | {"shift_ends_at": 1}  # same person, team and channel
    text = incident_report(incident(), edited, first)
    assert "\npaged: Cy Pay (checkout, #checkout-oncall)\n" in text, text
    assert "new cause" not in text
    other = {"person": "Dee", "team": "data", "channel": "#data-oncall"}
    assert ("paged: Cy Pay (checkout, #checkout-oncall); then, for the new cause: Dee (data, "
            "#data-oncall)") in incident_report(incident(), other, first)  # fmt: skip


def test_a_weak_similar_incident_is_marked_as_one_no_page_cites() -> None:
    """0.07 is context, not a lead: the page cites an earlier incident from 0.30 (or a cause
    people established), and the CLI says the weaker ones are that."""
    found = incident(root_cause="cart", similar=[
        {"id": "inc-0", "root_cause": "payments", "confirmed_by": None, "score": 0.07},
        {"id": "inc-9", "root_cause": "cart", "confirmed_by": None, "score": 0.64},
    ])  # fmt: skip
    text = incident_report(found)
    assert "  inc-0  cause payments (score 0.07, weak: no page cites it)\n" in text, text
    assert "  inc-9  cause cart (score 0.64)\n" in text
    # a new user's trial: one people established the same cause for is what the page cites,
    # however low its score; and one whose finding was marked wrong naming no cause says so
    cause = incident(root_cause="orders-db", similar=[
        {"id": "inc-1", "root_cause": "orders-db", "confirmed_by": "Ida", "corrected": True,
         "score": 0.18},
        {"id": "inc-2", "root_cause": None, "confirmed_by": "Pat", "corrected": True,
         "said": "it was the AZ network", "score": 0.12},
    ])  # fmt: skip
    text = incident_report(cause)
    assert "  inc-1  cause orders-db, corrected by Ida (score 0.18)\n" in text, text
    # a cause outside the graph: their words, not "cause -" (a new user's trial)
    assert (
        "  inc-2  cause none named, its finding marked wrong by Pat: “it was the AZ network” "
        "(score 0.12, weak: no page"
    ) in text
