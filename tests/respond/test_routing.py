"""Done means: routing never ends at nobody, grouping explains itself and splits by
cause, every alerting team is told, Grafana no-data alerts are titled by their rule.

Real embedded FalkorDB, the real gateway over HTTP, burst workers, the outbox or the local
Slack API (tests/slack_api.py) behind the real slack-sdk client.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from adapters.falkordb import EmbeddedFalkorDB, GraphStore, TenantGraph, graph_name
from adapters.slack.notifier import SlackNotifier
from agents.respond import messages
from agents.respond.routing import route_from
from agents.tasks.coordination import TaskRun, claim
from agents.triage.triage import TriageReport, settle_reinvestigations
from gateway.cli.commands import app
from gateway.cli.doctor import check_default_route, run_checks
from gateway.cli.incident_text import incident_report, incident_table, on_call
from gateway.ops.runtime import Runtime
from gateway.world import apply_world, import_world, load_world
from tests.conftest import FIXTURES, Gateway, make_settings
from tests.slack_api import SIGNING_SECRET, TOKEN, Failure, SlackAPI

WORLD = FIXTURES / "routing-world.yaml"
T0 = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=30)


def world_file(tmp_path: Path, **changes: Any) -> Path:
    """The routing world with top-level `changes`, or a team changed (`team_<name>={...}`)."""
    world = yaml.safe_load(WORLD.read_text())
    for key, value in changes.items():
        if key.startswith("team_"):
            team = next(t for t in world["teams"] if t["name"] == key.removeprefix("team_"))
            team.update(value)
        else:
            world[key] = value
    path = tmp_path / "world.yaml"
    path.write_text(yaml.safe_dump(world))
    return path


def delivery(*alerts: tuple[str, str, str, int], group: str = "shop") -> dict[str, Any]:
    """An Alertmanager v4 body of firing alerts `(alertname, service, severity, minute)`;
    `minute` after T0 is the start. A service `-` gives an alert with no service label."""
    items = []
    for name, service, severity, minute in alerts:
        labels = {"alertname": name, "severity": severity, "instance": f"{service}-1"}
        if service != "-":
            labels["service"] = service
        items.append({
            "status": "firing", "labels": labels,
            "annotations": {"summary": f"{name} on {service}"},
            "startsAt": (T0 + timedelta(minutes=minute)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "http://prometheus:9090/graph",
            "fingerprint": f"{abs(hash((name, service))) % 16**16:016x}",
        })  # fmt: skip
    return {
        "version": "4", "groupKey": f'{{}}:{{group="{group}"}}', "truncatedAlerts": 0,
        "status": "firing", "receiver": "blast-radius", "groupLabels": {"group": group},
        "commonLabels": {}, "commonAnnotations": {}, "externalURL": "http://alertmanager:9093",
        "alerts": items,
    }  # fmt: skip


def start(
    falkordb: EmbeddedFalkorDB,
    store: GraphStore,
    tmp_path: Path,
    tenant: str,
    world: Path,
    **extra: object,
) -> Gateway:
    """A gateway on a fresh graph holding `world`."""
    graph = store.graph(graph_name(tenant))
    graph.ensure_schema()
    import_world(graph, load_world(world))
    runtime = Runtime(make_settings(falkordb, tmp_path, tenant, **extra))
    runtime.open()
    return Gateway(runtime, runtime.serve_http("127.0.0.1", 0), None)


@pytest.fixture
def gw(
    falkordb: EmbeddedFalkorDB, store: GraphStore, tmp_path: Path, tenant: str
) -> Iterator[Gateway]:
    """The routing world, outbox mode."""
    gateway = start(falkordb, store, tmp_path, tenant, WORLD)
    yield gateway
    gateway.http.close()
    gateway.runtime.close()


@pytest.fixture
def slack_gw(
    falkordb: EmbeddedFalkorDB, store: GraphStore, tmp_path: Path, tenant: str, api: SlackAPI
) -> Iterator[Gateway]:
    """The routing world, Slack mode (the local Slack API)."""
    gateway = start(
        falkordb, store, tmp_path, tenant, WORLD, slack_bot_token=TOKEN,
        slack_signing_secret=SIGNING_SECRET, slack_api_url=api.base_url,
    )  # fmt: skip
    yield gateway
    gateway.http.close()
    gateway.runtime.close()


def post(gw: Gateway, body: dict[str, Any]) -> dict[str, Any]:
    answer = gw.http.post("/api/v1/alerts", json=body)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def incident(gw: Gateway, incident_id: str) -> dict[str, Any]:
    return dict(gw.http.get(f"/api/v1/incidents/{incident_id}").json())


def incidents(gw: Gateway) -> list[dict[str, Any]]:
    rows = gw.http.get("/api/v1/incidents").json()["incidents"]
    return [incident(gw, row["id"]) for row in rows]


def sent(gw: Gateway, incident_id: str, kind: str) -> list[dict[str, Any]]:
    return [e for e in gw.outbox if e["incident_id"] == incident_id and e["kind"] == kind]


def db_alert(gw: Gateway, minute: int) -> str:
    """Post DBConnectionsSaturated on orders-db (group a); the incident it went to."""
    (incident_id,) = post(gw, delivery(("DBConnectionsSaturated", "orders-db", "critical", minute),
                                       group="a"))["incidents"]  # fmt: skip
    return str(incident_id)


def shop_alert(gw: Gateway, minute: int) -> str:
    """Post HighErrorRate on shop (group b, two hops from orders-db); its incident."""
    (incident_id,) = post(gw, delivery(("HighErrorRate", "shop", "warning", minute),
                                       group="b"))["incidents"]  # fmt: skip
    return str(incident_id)


# --- 1. the default route ------------------------------------------------------------------------


def test_unknown_component_critical_alert_pages_the_default_teams_on_call(gw: Gateway) -> None:
    report = post(gw, delivery(("DiskFull", "-", "critical", 0)))
    assert len(report["unmatched"]) == 1
    gw.drain()
    (page,) = sent(gw, report["incidents"][0], "notification")
    assert page["person"] == "Ada Example" and page["channel"] == "#platform-oncall"
    assert page["notice"]["paged"] == (
        "Ada Example (on call for platform, the default team: no alert names a known component)"
    )
    assert "nobody" not in page["text"].lower()


def test_unknown_component_pages_the_default_team_in_slack(
    slack_gw: Gateway, api: SlackAPI
) -> None:
    post(slack_gw, delivery(("DiskFull", "-", "critical", 0)))
    slack_gw.drain()
    (page,) = api.roots()
    assert page["channel"] == "C0PLATFORM"
    assert page["text"].startswith("<@U0ADA> ")
    assert "the default team: no alert names a known component" in page["text"]


def test_owner_with_nobody_on_call_falls_back_to_the_default_team_saying_why(
    gw: Gateway,
) -> None:
    report = post(gw, delivery(("JobFailed", "batch-job", "critical", 0)))
    gw.drain()
    (page,) = sent(gw, report["incidents"][0], "notification")
    assert page["person"] == "Ada Example"
    assert page["notice"]["paged"] == (
        "Ada Example (on call for platform, the default team: batch, owner of batch-job, "
        "has nobody on call now)"
    )


def test_default_team_with_nobody_on_call_says_loudly_which_fallback(
    falkordb: EmbeddedFalkorDB, store: GraphStore, tmp_path: Path, tenant: str, api: SlackAPI
) -> None:
    world = world_file(tmp_path, team_platform={
        "oncall": {"rotation": ["Ada Example"], "shift_hours": 168, "start": "2099-01-05T09:00:00Z"}
    })  # fmt: skip
    gateway = start(
        falkordb, store, tmp_path, tenant, world, slack_bot_token=TOKEN,
        slack_signing_secret=SIGNING_SECRET, slack_api_url=api.base_url,
    )  # fmt: skip
    try:
        post(gateway, delivery(("DiskFull", "-", "critical", 0)))
        gateway.drain()
    finally:
        gateway.http.close()
        gateway.runtime.close()
    (page,) = api.roots()
    assert page["channel"] == "C0PLATFORM"
    assert (
        "NO ONE ON CALL (no alert names a known component; the default team platform has "
        "nobody on call now either); fallback: channel #platform-oncall, escalation call the "
        "duty manager, +1 555 0100"
    ) in page["text"]


def test_slack_mode_refuses_a_default_route_with_no_channel(
    falkordb: EmbeddedFalkorDB, store: GraphStore, tmp_path: Path, tenant: str, api: SlackAPI
) -> None:
    graph = store.graph(graph_name(tenant))
    graph.ensure_schema()
    import_world(graph, load_world(world_file(tmp_path, team_platform={"slack_channel": None})))
    settings = make_settings(
        falkordb, tmp_path, tenant, slack_bot_token=TOKEN,
        slack_signing_secret=SIGNING_SECRET, slack_api_url=api.base_url,
    )  # fmt: skip
    slack = SlackNotifier(settings.slack_bot_token, api.base_url)  # type: ignore[arg-type]
    (finding,) = check_default_route(settings, store, slack)
    assert not finding.ok
    assert finding.what == (
        f"{tenant}: the default team platform has no slack_channel and SLACK_DEFAULT_CHANNEL "
        "is unset: a page for components no team owns could not be posted"
    )
    # a channel Slack does not know is refused too; a known SLACK_DEFAULT_CHANNEL is fine
    missing = settings.model_copy(update={"slack_default_channel": "#nowhere"})
    (finding,) = check_default_route(missing, store, slack)
    assert not finding.ok and "#nowhere" in finding.what and "not found" in finding.what
    known = settings.model_copy(update={"slack_default_channel": "#incidents"})
    (finding,) = check_default_route(known, store, slack)
    assert finding.ok and "#incidents" in finding.what
    # `doctor` says why
    lines = [f.line() for f in run_checks(settings) if f.area == "routing"]
    assert lines == [
        f"PROBLEM  routing: {tenant}: the default team platform has no slack_channel and "
        "SLACK_DEFAULT_CHANNEL is unset: a page for components no team owns could not be posted"
    ]
    # `serve` refuses to start, saying why
    env = {
        "FALKORDB_URL": falkordb.url, "BLAST_DEFAULT_TENANT": tenant,
        "BLAST_DATA_DIR": str(tmp_path / "serve"), "BLAST_PORT": "0", "BLAST_WORKERS": "0",
        "SLACK_BOT_TOKEN": TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": api.base_url, "BLAST_DEV": "true",
    }  # fmt: skip
    result = CliRunner().invoke(app, ["serve", "--quiet"], env=env)
    assert result.exit_code == 1
    assert "has no slack_channel and SLACK_DEFAULT_CHANNEL is unset" in result.output


def teamless(store: GraphStore, tenant: str) -> TenantGraph:
    """`tenant`'s graph holding a compose file's world: components and edges, no teams (a
    world file must name them), so no team owns anything and there is no default team."""
    graph = store.graph(graph_name(tenant))
    graph.ensure_schema()
    full = load_world(WORLD)
    apply_world(graph, full.model_copy(update={"teams": [], "default_team": None}),
                ["compose:docker-compose.yml"])  # fmt: skip
    return graph


def test_a_page_that_reaches_nobody_says_nobody_paged_everywhere(
    falkordb: EmbeddedFalkorDB, store: GraphStore, tmp_path: Path, tenant: str
) -> None:
    """A world with no teams (a compose import names none) and no `SLACK_DEFAULT_CHANNEL`: the
    page goes to the outbox with no person and no channel. The API says `paged` false and
    `nobody_paged` true, the CLI "nobody paged", the web "nobody paged" with the reason, and
    nothing shows Python's None (a new user's trial: "paged", "nobody on call (None)")."""
    graph = teamless(store, tenant)
    runtime = Runtime(make_settings(falkordb, tmp_path, tenant))
    runtime.open()
    gateway = Gateway(runtime, runtime.serve_http("127.0.0.1", 0), None)
    try:
        (incident_id,) = post(gateway, delivery(("HighErrorRate", "shop", "critical", 0)))[
            "incidents"
        ]
        gateway.drain()
        (page,) = sent(gateway, incident_id, "notification")
        assert (page["person"], page["channel"]) == (None, None)
        (row,) = gateway.http.get("/api/v1/incidents").json()["incidents"]
        assert (row["paged"], row["nobody_paged"]) == (False, True)
        found = incident(gateway, incident_id)
        assert (found["paged"], found["nobody_paged"]) == (False, True)
        assert on_call(row) == "nobody paged"
        assert "nobody paged" in incident_table([row])
        (route,) = graph.rows("web_paged", {"incident_ids": [incident_id]})
        report = incident_report(found, json.loads(route["result"]))  # `blast-radius incident`
        (line,) = [x for x in report.splitlines() if x.startswith("paged: ")]
        why = "no team owns shop, orders-api, payments-api; the world names no default team"
        assert line == f"paged: nobody paged ({why})"
        web = gateway.http.get(f"/ui/incidents/{incident_id}").text
        said = web.split('<dd id="paged">')[1].split("</dd>")[0]
        assert said == f"<strong>nobody paged</strong> ({why})"
        assert f"Nobody paged ({why}): the page went to no one, via outbox" in web
        assert "Paged nobody on call" not in web and "(None)" not in web
        listed = gateway.http.get("/").text
        who = listed.split('<td class="who">')[1].split("</td>")[0]
        assert "nobody paged" in who and "None" not in who
    finally:
        gateway.http.close()
        gateway.runtime.close()


def test_a_page_with_no_channel_anywhere_names_no_fallback(
    falkordb: EmbeddedFalkorDB, store: GraphStore, tmp_path: Path, tenant: str, api: SlackAPI
) -> None:
    """No team, no default team and no `SLACK_DEFAULT_CHANNEL`: the page says nobody was paged
    and that it is in the outbox only, never "fallback: the default channel" (a new user's
    trial: there was none). With `SLACK_DEFAULT_CHANNEL` set (another tenant, in Slack), the
    page names that channel, where it landed."""
    why = "no team owns shop, orders-api, payments-api; the world names no default team"
    slack = {"slack_bot_token": TOKEN, "slack_signing_secret": SIGNING_SECRET,
             "slack_api_url": api.base_url, "slack_default_channel": "#incidents"}  # fmt: skip
    pages = []
    for name, extra in ((tenant, {}), (f"{tenant}s", slack)):
        teamless(store, name)
        runtime = Runtime(make_settings(falkordb, tmp_path / name, name, **extra))
        runtime.open()
        gateway = Gateway(runtime, runtime.serve_http("127.0.0.1", 0), None)
        try:
            (incident_id,) = post(gateway, delivery(("HighErrorRate", "shop", "critical", 0)))[
                "incidents"
            ]
            gateway.drain()
            pages += sent(gateway, incident_id, "notification")
        finally:
            gateway.http.close()
            gateway.runtime.close()
    (page,) = pages  # the outbox's; the Slack tenant's page is in Slack
    assert page["notice"]["paged"] == (
        f"NO ONE ON CALL ({why}); no channel either (the default team has none and "
        "SLACK_DEFAULT_CHANNEL is unset): nobody was paged, this page is in the outbox only"
    )
    assert "fallback" not in page["text"] and "default channel" not in page["text"]
    (landed,) = api.roots()
    assert landed["channel"] == "C0DEFAULT"  # #incidents
    assert f"NO ONE ON CALL ({why}); fallback: channel #incidents" in landed["text"]


def test_a_slack_page_with_no_channel_anywhere_records_what_happened(
    falkordb: EmbeddedFalkorDB, store: GraphStore, tmp_path: Path, tenant: str, api: SlackAPI
) -> None:
    """Slack on, but the owning team (here also the default team) has no channel and
    `SLACK_DEFAULT_CHANNEL` is unset: Slack had nowhere to post it, and the page went to the
    outbox. The delivery records say that, naming the team; none names "the default channel",
    which there was not."""
    world = world_file(tmp_path, team_platform={"slack_channel": None})
    gateway = start(
        falkordb, store, tmp_path, tenant, world, slack_bot_token=TOKEN,
        slack_signing_secret=SIGNING_SECRET, slack_api_url=api.base_url,
    )  # fmt: skip
    try:
        (incident_id,) = post(gateway, delivery(("HighErrorRate", "shop", "critical", 0)))[
            "incidents"
        ]
        gateway.drain()
        found = incident(gateway, incident_id)
        report = incident_report(found)
        page = gateway.http.get(f"/ui/incidents/{incident_id}").text
    finally:
        gateway.http.close()
        gateway.runtime.close()
    why = (
        "no Slack channel for team platform (none on it or the default team, and "
        "SLACK_DEFAULT_CHANNEL is unset)"
    )
    rows = [{k: d[k] for k in ("channel", "outcome", "reason", "fallback_from")}
            for d in found["deliveries"]]  # fmt: skip
    assert rows == [
        {"channel": "slack", "outcome": "error", "reason": why, "fallback_from": None},
        {"channel": "outbox", "outcome": "delivered", "reason": why, "fallback_from": "slack"},
    ]
    assert api.roots() == []  # nothing reached Slack
    for text in (json.dumps(found), report, page):
        assert "default channel" not in text
    assert why in report and why in page


def test_a_page_to_a_channel_with_nobody_on_call_is_paged(
    falkordb: EmbeddedFalkorDB, store: GraphStore, tmp_path: Path, tenant: str
) -> None:
    """The counter-case: the default team has nobody on call, but its channel takes the page:
    paged (`paged` true), and the web names the channel, not "nobody paged"."""
    world = world_file(tmp_path, team_platform={
        "oncall": {"rotation": ["Ada Example"], "shift_hours": 168, "start": "2099-01-05T09:00:00Z"}
    })  # fmt: skip
    gateway = start(falkordb, store, tmp_path, tenant, world)
    try:
        (incident_id,) = post(gateway, delivery(("DiskFull", "-", "critical", 0)))["incidents"]
        gateway.drain()
        (page,) = sent(gateway, incident_id, "notification")
        assert (page["person"], page["channel"]) == (None, "#platform-oncall")
        (row,) = gateway.http.get("/api/v1/incidents").json()["incidents"]
        assert (row["paged"], row["nobody_paged"]) == (True, False)
        assert row["delivered_to"] == "outbox"  # no Slack here: in the outbox file only
        assert on_call(row) == "paged (outbox only)"
        web = gateway.http.get(f"/ui/incidents/{incident_id}").text
        said = web.split('<dd id="paged">')[1].split("</dd>")[0]
        assert said == "<strong>nobody on call</strong> (platform, #platform-oncall)"
        assert "Paged #platform-oncall (platform: nobody on call) via outbox" in web
    finally:
        gateway.http.close()
        gateway.runtime.close()


# --- 2. grouping along dependency paths, split by cause -------------------------------------------


def test_two_independent_failures_sharing_callers_end_as_two_incidents(gw: Gateway) -> None:
    first = post(gw, delivery(
        ("DBConnectionsSaturated", "orders-db", "critical", 0),
        ("HighErrorRate", "orders-api", "critical", 1),
        ("HighErrorRate", "shop", "warning", 2),
    ))  # fmt: skip
    (orders_id,) = first["incidents"]
    gw.drain()
    orders = incident(gw, orders_id)
    assert orders["root_cause"] == "orders-db"
    via = {a["component"]: a["joined_via"] for a in orders["alerts"]}
    assert via == {"orders-db": None, "orders-api": "orders-api → orders-db",
                   "shop": "shop → orders-api"}  # fmt: skip
    # payments-db saturates while the orders incident still fires; they share the caller shop
    second = post(gw, delivery(
        ("DBConnectionsSaturated", "payments-db", "critical", 3),
        ("HighErrorRate", "payments-api", "critical", 4),
        group="payments",
    ))  # fmt: skip
    assert second["incidents"] == [orders_id]  # joined along shop → payments-api → payments-db
    gw.drain()
    both = {i["root_cause"]: i for i in incidents(gw)}
    assert set(both) == {"orders-db", "payments-db"}
    orders, payments = both["orders-db"], both["payments-db"]
    assert orders["id"] == orders_id
    assert {a["component"] for a in orders["alerts"]} == {"orders-db", "orders-api", "shop"}
    assert {a["component"] for a in payments["alerts"]} == {"payments-db", "payments-api"}
    assert all(a["joined_via"].startswith(f"split from {orders_id}") for a in payments["alerts"])
    # each paged to its own owner, once; neither cause lost
    (orders_page,) = sent(gw, orders_id, "notification")
    (payments_page,) = sent(gw, payments["id"], "notification")
    assert orders_page["person"] == "Dee Example"
    assert orders_page["notice"]["root_cause"] == "orders-db"
    assert payments_page["person"] == "Pat Example"
    assert payments_page["notice"]["root_cause"] == "payments-db"
    assert len(sent(gw, payments["id"], "ticket")) == 1
    assert not [f for f in sent(gw, orders_id, "followup") if "Diagnosis update" in f["text"]]
    # the re-investigation split payments off: orders' page shows what it showed, unedited
    assert not [e for e in sent(gw, orders_id, "update") if ":page:update:" in e["intent_id"]]


def test_alerts_sharing_only_a_neighbour_do_not_join(gw: Gateway) -> None:
    """orders-api and payments-api are both called by shop: a shared neighbour, no path."""
    a = post(gw, delivery(("HighErrorRate", "orders-api", "critical", 0)))
    b = post(gw, delivery(("HighErrorRate", "payments-api", "critical", 1), group="p"))
    assert a["incidents"] != b["incidents"]


def test_a_changed_cause_says_so_and_pages_the_new_owner(gw: Gateway) -> None:
    (incident_id,) = post(gw, delivery(("HighErrorRate", "orders-api", "critical", 0)))["incidents"]
    gw.drain()
    assert sent(gw, incident_id, "notification")[0]["person"] == "Cy Example"
    post(gw, delivery(("DBConnectionsSaturated", "orders-db", "critical", 1), group="db"))
    gw.drain()
    assert incident(gw, incident_id)["root_cause"] == "orders-db"
    texts = {f["intent_id"].split(":")[2]: f for f in sent(gw, incident_id, "followup")}
    # orders-api alone was inconclusive (orders-db behind it states no propagation)
    assert "root cause is now *orders-db* (was inconclusive)" in texts["update"]["text"]
    # `update:` once (it read `…:update:update:reinvestigate:…`)
    assert texts["update"]["intent_id"].startswith(f"incident:{incident_id}:update:reinvestigate:")
    # the new cause's on-call is paged in their own channel: a root message, not a reply
    repage = texts["repage"]
    assert repage["person"] == "Dee Example"
    assert (repage["channel"], repage["reply_to"]) == ("#data-platform-oncall", None)
    assert f"Paged for incident {incident_id} " in repage["text"]
    assert "Dee Example (on call for orders-data, owner of orders-db)" in repage["text"]
    assert "The first page went to Cy Example (" in repage["text"]
    # the page, restated, names its own addressee, then whom the new cause paged and where
    (restated,) = [e for e in gw.outbox if e["kind"] == "update" and ":page:" in e["intent_id"]]
    assert restated["person"] == "Cy Example" and restated["notice"]["root_cause"] == "orders-db"
    paged_now = restated["notice"]["paged"]
    assert paged_now.startswith("Cy Example (on call for orders, owner of orders-api)")
    assert (
        "then, for the new root cause orders-db: Dee Example (on call for orders-data, "
        "owner of orders-db) in #data-platform-oncall" in restated["notice"]["paged"]
    )
    # the update, the note and the edit go where the page is, in its thread
    (first,) = sent(gw, incident_id, "notification")
    assert first["channel"] == "#checkout-oncall"
    note = texts["repage-note"]
    assert "Paged for the new root cause *orders-db*: Dee Example" in note["text"]
    assert note["text"].endswith("in #data-platform-oncall.") and note["person"] is None
    for said in (texts["update"], note, restated):
        assert (said["channel"], said["reply_to"]) == ("#checkout-oncall", first["ref"])
    assert len(incidents(gw)) == 1
    # the web pages and the CLI say who was paged first and who after (`web_paged`)
    page = gw.http.get(f"/ui/incidents/{incident_id}").text
    assert (
        '<dd id="paged"><strong>Dee Example</strong> (orders-data, #data-platform-oncall) '
        "for the new cause; first paged <strong>Cy Example</strong> (orders, "
        "#checkout-oncall)" in page
    )
    assert "Paged Cy Example (orders) in #checkout-oncall via outbox" in page
    assert "Paged for the new cause: Dee Example (orders-data) in #data-platform-oncall" in page
    overview = gw.http.get("/").text
    assert "Dee Example" in overview


def test_a_reopen_restates_the_page_naming_its_addressee_then_the_new_causes(gw: Gateway) -> None:
    """After a new cause's on-call was paged, every edit of the page names its own addressee
    first, then whom the new cause paged; the reopen's edit named only the new cause's on-call
    (it passed no first route), as if the page had gone to them."""
    api = delivery(("HighErrorRate", "orders-api", "critical", 0))
    (incident_id,) = post(gw, api)["incidents"]
    gw.drain()
    db = delivery(("DBConnectionsSaturated", "orders-db", "critical", 1), group="db")
    post(gw, db)
    gw.drain()
    assert incident(gw, incident_id)["root_cause"] == "orders-db"
    ended = (T0 + timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for body in (api, db):  # both clear: the incident resolves
        body["status"] = "resolved"
        body["alerts"][0] |= {"status": "resolved", "endsAt": ended}
        post(gw, body)
    gw.drain()
    assert incident(gw, incident_id)["status"] == "resolved"
    again = delivery(("HighErrorRate", "orders-api", "critical", 7))  # within the reopen window
    assert post(gw, again)["reopened"] == [incident_id]
    gw.drain()
    (restated,) = [e for e in gw.outbox if ":page:reopened:" in str(e["intent_id"])]
    assert restated["person"] == "Cy Example", restated
    assert restated["notice"]["paged"].startswith(
        "Cy Example (on call for orders, owner of orders-api)"
    ), restated["notice"]["paged"]
    assert (
        "then, for the new root cause orders-db: Dee Example (on call for orders-data, "
        "owner of orders-db) in #data-platform-oncall" in restated["notice"]["paged"]
    )
    (first,) = sent(gw, incident_id, "notification")
    assert (restated["channel"], restated["reply_to"]) == ("#checkout-oncall", first["ref"])


def test_a_diagnosis_update_sent_under_the_doubled_id_before_an_upgrade_is_not_sent_again(
    gw: Gateway, store: GraphStore, tenant: str
) -> None:
    """A diagnosis update's intent id read `incident:<id>:update:update:reinvestigate:…` (a
    new user's trial), `update:` once now (`responder.update_intent`). An update an earlier
    version sent under the doubled id, its worker gone before it recorded the send (the
    Action left `reserved`), is found under that id by the retry after the upgrade, not sent
    a second time under the new one."""
    graph = store.graph(graph_name(tenant))
    (incident_id,) = post(gw, delivery(("HighErrorRate", "orders-api", "critical", 0)))["incidents"]
    gw.drain()
    post(gw, delivery(("DBConnectionsSaturated", "orders-db", "critical", 1), group="db"))
    gw.runtime.make_worker("investigator").run(threading.Event(), burst=True)
    # the re-investigation named orders-db: its notify_update waits; an earlier version's
    # worker claims it, sends the update under the doubled id and dies before recording it
    held = claim(graph, ["notify_update"], "before-the-upgrade", 300, 5)
    assert held is not None and held.task_id.startswith("update:reinvestigate:")
    doubled = f"incident:{incident_id}:update:{held.task_id}"
    (page,) = sent(gw, incident_id, "notification")
    told = messages.diagnosis_update(doubled, incident(gw, incident_id), None, str(page["ref"]))
    TaskRun(graph, held, 300).act(gw.runtime.outbox, told)
    assert [a["status"] for a in graph.rows("incident_actions", {"incident_id": incident_id})
            if a["intent_id"] == doubled] == ["reserved"]  # fmt: skip
    time.sleep(0.4)  # its lease runs out: the upgraded worker retries the task
    gw.drain()
    updates = [e["intent_id"] for e in sent(gw, incident_id, "followup")
               if str(e["intent_id"]).startswith(f"incident:{incident_id}:update:")]  # fmt: skip
    assert updates == [doubled], updates
    actions = graph.rows("incident_actions", {"incident_id": incident_id})
    assert [a["status"] for a in actions if a["intent_id"] == doubled] == ["sent"]


def lead_on_orders_db(gw: Gateway) -> str:
    """orders-api alerts (inconclusive, paged); a hand-written playbook nobody confirmed (trust
    0.5) then names orders-db when shop joins: a lead at 0.45. The incident's id."""
    (incident_id,) = post(gw, delivery(("HighErrorRate", "orders-api", "critical", 0)))["incidents"]
    gw.drain()
    planted = {
        "id": "untried", "title": "orders-api and shop failing mean orders-db",
        "component": "orders-db", "failure_kind": "errors",
        "checks": [{"type": "signature", "overlap": 0.5, "alerts": [
            {"component": "orders-api", "kind": "errors", "path": ["orders-api", "orders-db"]},
            {"component": "shop", "kind": "errors", "path": ["shop", "orders-api", "orders-db"]},
        ]}],
    }  # fmt: skip
    assert gw.http.post("/api/v1/playbooks", json=planted).status_code == 201
    post(gw, delivery(("HighErrorRate", "shop", "critical", 1), group="b"))
    gw.drain()
    return str(incident_id)


def test_a_changed_cause_named_only_as_a_lead_is_told_in_the_thread_and_pages_nobody(
    gw: Gateway,
) -> None:
    """A playbook nobody confirmed yet (trust 0.5) names orders-db when shop joins: a lead
    (0.45), so the thread hears of it and orders-db's on-call is not woken (the counter-case,
    a conclusive new cause, pages them: the test above)."""
    incident_id = lead_on_orders_db(gw)
    found = incident(gw, incident_id)
    assert (found["root_cause"], found["finding"]["confidence"]) == ("orders-db", 0.45)
    texts = {f["intent_id"].split(":")[2]: f for f in sent(gw, incident_id, "followup")}
    assert "root cause is now *orders-db* (was inconclusive)" in texts["update"]["text"]
    assert "repage" not in texts and "repage-note" not in texts
    assert {e["person"] for e in gw.outbox if e["kind"] == "notification"} == {"Cy Example"}


def page_edits(gw: Gateway, incident_id: str) -> list[dict[str, Any]]:
    """The page's restatements after a re-investigation (`…:page:update:…`), in order."""
    return [e for e in sent(gw, incident_id, "update") if ":page:update:" in e["intent_id"]]


def test_a_changed_inconclusive_finding_updates_the_page_and_says_so(gw: Gateway) -> None:
    """shop alone is inconclusive (check shop, orders-api, payments-api); payments-api joins
    and the re-investigation, still inconclusive, now says payments-api, payments-db: the
    thread hears of it and the page is restated with the new order and both alerts (a new
    user's trial: None == None read as "unchanged", and the page kept the first order). No
    one is paged again: there is no cause to page for."""
    (incident_id,) = post(gw, delivery(("HighErrorRate", "shop", "critical", 0)))["incidents"]
    gw.drain()
    (page,) = sent(gw, incident_id, "notification")
    assert page["notice"]["candidates"] == ["shop", "orders-api", "payments-api"]
    post(gw, delivery(("HighErrorRate", "payments-api", "critical", 1), group="p"))
    gw.drain()
    found = incident(gw, incident_id)
    assert found["root_cause"] is None
    assert found["finding"]["candidates"] == ["payments-api", "payments-db"]
    (edit,) = page_edits(gw, incident_id)
    assert edit["notice"]["candidates"] == ["payments-api", "payments-db"]
    assert len(edit["notice"]["alerts"]) == 2 and edit["reply_to"] == page["ref"]
    (update,) = [f for f in sent(gw, incident_id, "followup") if "Diagnosis update" in f["text"]]
    assert (
        "root cause is now *inconclusive (payments-api, payments-db)* (was inconclusive: shop, "
        "orders-api, payments-api)" in update["text"]
    )
    assert len(sent(gw, incident_id, "notification")) == 1
    assert not [f for f in sent(gw, incident_id, "followup") if ":repage" in f["intent_id"]]


def test_an_alert_joining_under_the_same_cause_is_added_to_the_page_quietly(gw: Gateway) -> None:
    """orders-db saturates and is paged; orders-api's errors join and the re-investigation
    names orders-db again: the page is restated listing both alerts (what it shows changed),
    and the thread is not told of a "new" diagnosis that is the old one."""
    incident_id = db_alert(gw, 0)
    gw.drain()
    (page,) = sent(gw, incident_id, "notification")
    assert page["notice"]["root_cause"] == "orders-db" and len(page["notice"]["alerts"]) == 1
    post(gw, delivery(("HighErrorRate", "orders-api", "critical", 1), group="c"))
    gw.drain()
    assert incident(gw, incident_id)["root_cause"] == "orders-db"
    (edit,) = page_edits(gw, incident_id)
    assert edit["notice"]["root_cause"] == "orders-db" and len(edit["notice"]["alerts"]) == 2
    assert not [f for f in sent(gw, incident_id, "followup") if "Diagnosis update" in f["text"]]
    assert len(sent(gw, incident_id, "notification")) == 1


def test_a_join_on_a_new_component_is_re_investigated_once_when_a_worker_claims_it_at_once(
    gw: Gateway, store: GraphStore, tenant: str
) -> None:
    """orders-api joins the paged orders-db incident: triage enqueues its re-investigation
    (`reinvestigate:<id>:orders-api`), and a worker may claim and even finish it before the
    delivery's `settle_reinvestigations` runs (a new user's trial: claimed 13 ms later, then a
    second `…:joined:…` task ran and the page was edited twice, word for word). Settling late
    adds nothing: that task was created after the alert was in the graph and read it. A later
    alert joining is still re-investigated."""
    incident_id = db_alert(gw, 0)
    gw.drain()
    post(gw, delivery(("HighErrorRate", "orders-api", "critical", 1), group="c"))
    gw.drain()  # the worker that was quicker than the delivery's settle
    key = next(a["key"] for a in incident(gw, incident_id)["alerts"]
               if a["component"] == "orders-api")  # fmt: skip
    graph = store.graph(graph_name(tenant))
    settle_reinvestigations(
        graph, TriageReport(incidents=[incident_id], joined={incident_id: key}), 0
    )
    gw.drain()
    tasks = [(t["id"], t["status"]) for t in incident(gw, incident_id)["tasks"]
             if t["kind"] == "reinvestigate"]  # fmt: skip
    assert tasks == [(f"reinvestigate:{incident_id}:orders-api", "done")]
    assert len(page_edits(gw, incident_id)) == 1
    post(gw, delivery(("DBDown", "orders-db", "critical", 2), group="a"))
    gw.drain()
    tasks = [t["id"] for t in incident(gw, incident_id)["tasks"] if t["kind"] == "reinvestigate"]
    assert len(tasks) == 2 and tasks[1].startswith(f"reinvestigate:{incident_id}:joined:")


@pytest.mark.parametrize("joining", [1, 3])
def test_a_critical_alert_on_a_component_the_incident_has_restates_its_warning_page(
    gw: Gateway, joining: int
) -> None:
    """orders-db is paged at warning; then `joining` alerts on orders-db itself, one
    critical, join the incident (one alert alone, or three in one delivery: the batched
    join). The incident is re-investigated and the page restated as CRITICAL with every
    alert, as a join on a new component does (a new user's trial: nothing ran, and the page
    said WARNING with one alert while the incident was critical with four)."""
    (incident_id,) = post(gw, delivery(("DBSlowQueries", "orders-db", "warning", 0),
                                       group="a"))["incidents"]  # fmt: skip
    gw.drain()
    (page,) = sent(gw, incident_id, "notification")
    assert page["notice"]["severity"] == "warning" and len(page["notice"]["alerts"]) == 1
    names = ["DBDown", "DBReplicaLag", "DBDiskFull"][:joining]
    answer = post(gw, delivery(*[(n, "orders-db", "critical", 1) for n in names], group="b"))
    assert answer["incidents"] == [incident_id] and answer["opened"] == []
    gw.drain()
    found = incident(gw, incident_id)
    assert found["severity"] == "critical" and found["alerts_firing"] == 1 + joining
    assert [t["status"] for t in found["tasks"] if t["kind"] == "reinvestigate"] == ["done"]
    (edit,) = page_edits(gw, incident_id)
    assert edit["notice"]["severity"] == "critical"
    assert len(edit["notice"]["alerts"]) == 1 + joining
    assert edit["text"].startswith("*[CRITICAL]")
    assert len(sent(gw, incident_id, "notification")) == 1
    assert not [f for f in sent(gw, incident_id, "followup") if "Diagnosis update" in f["text"]]


def test_a_page_sent_before_a_joining_alert_was_weighed_gets_the_new_finding(gw: Gateway) -> None:
    """orders-db alerts and is investigated alone; orders-api's errors join before the page
    goes out, so the page lists both alerts under the first finding ("the only alerting
    component"); the re-investigation names orders-db again, surer, over the same alerts.
    The page is restated with the new confidence and summary, quietly (a new user's trial:
    the page kept the first words and confidence, while the web page said otherwise)."""
    incident_id = db_alert(gw, 0)
    gw.runtime.make_worker("investigator").run(threading.Event(), burst=True)
    first = incident(gw, incident_id)["finding"]
    post(gw, delivery(("HighErrorRate", "orders-api", "critical", 1), group="c"))
    gw.runtime.make_worker("responder").run(threading.Event(), burst=True)
    (page,) = sent(gw, incident_id, "notification")
    assert len(page["notice"]["alerts"]) == 2
    assert page["notice"]["summary"] == first["summary"]
    gw.drain()
    found = incident(gw, incident_id)
    assert found["root_cause"] == "orders-db"
    assert found["finding"]["summary"] != first["summary"]
    (edit,) = page_edits(gw, incident_id)
    assert edit["notice"]["summary"] == found["finding"]["summary"]
    assert edit["notice"]["confidence"] == found["finding"]["confidence"]
    assert not [f for f in sent(gw, incident_id, "followup") if "Diagnosis update" in f["text"]]
    assert len(sent(gw, incident_id, "notification")) == 1


def test_an_alert_linking_two_unpaged_incidents_merges_them(
    falkordb: EmbeddedFalkorDB, store: GraphStore, tmp_path: Path, tenant: str
) -> None:
    """With a reach of 1 hop, orders-db and shop (2 hops apart) open two incidents; orders-api
    links both, so the younger merges into the one it joined, whatever the arrival order."""
    gateway = start(falkordb, store, tmp_path, tenant, WORLD, correlation_hops=1)
    try:
        db = db_alert(gateway, 0)
        shop = shop_alert(gateway, 1)
        assert db != shop
        report = post(gateway, delivery(("HighErrorRate", "orders-api", "critical", 2), group="c"))
        assert report["incidents"] == [db]
        gateway.drain()
        merged = incident(gateway, shop)
        assert (merged["status"], merged["alerts"]) == ("merged", [])
        survivor = incident(gateway, db)
        via = {a["component"]: a["joined_via"] for a in survivor["alerts"]}
        assert via["shop"] == f"merged from {shop} through orders-api (shop → orders-api)"
        assert survivor["root_cause"] == "orders-db"
        assert [e["incident_id"] for e in gateway.outbox if e["kind"] == "notification"] == [db]
    finally:
        gateway.http.close()
        gateway.runtime.close()


def test_two_paged_incidents_are_never_merged(
    falkordb: EmbeddedFalkorDB, store: GraphStore, tmp_path: Path, tenant: str
) -> None:
    """With no page hold both are paged at once; a later alert linking them changes neither."""
    gateway = start(falkordb, store, tmp_path, tenant, WORLD, correlation_hops=1, page_hold_ms=0)
    try:
        db = db_alert(gateway, 0)
        shop = shop_alert(gateway, 1)
        gateway.drain()  # both paged
        report = post(gateway, delivery(("HighErrorRate", "orders-api", "critical", 2), group="c"))
        gateway.drain()
        assert report["incidents"] == [db]
        assert incident(gateway, shop)["status"] == "open"
        assert {a["component"] for a in incident(gateway, shop)["alerts"]} == {"shop"}
    finally:
        gateway.http.close()
        gateway.runtime.close()


def test_a_far_symptoms_page_waits_for_the_alert_that_links_it(
    falkordb: EmbeddedFalkorDB, store: GraphStore, tmp_path: Path, tenant: str
) -> None:
    """Reach 1: shop (2 hops from orders-db) opens its own incident while orders-db's is open,
    so its page is held; orders-api, flushed by Alertmanager a moment later, links the two and
    shop's incident merges into the paged one: one fault, one page."""
    gateway = start(falkordb, store, tmp_path, tenant, WORLD, correlation_hops=1,
                    page_hold_ms=60_000)  # fmt: skip
    try:
        db = db_alert(gateway, 0)
        gateway.drain()
        shop = shop_alert(gateway, 1)
        gateway.drain()  # shop investigated, its page held
        assert shop != db and sent(gateway, shop, "notification") == []
        tasks = {t["kind"]: t for t in incident(gateway, shop)["tasks"]}
        assert tasks["respond"]["status"] == "paused"
        post(gateway, delivery(("HighErrorRate", "orders-api", "critical", 2), group="c"))
        gateway.drain()
        merged = incident(gateway, shop)
        assert (merged["status"], merged["merged_into"]) == ("merged", db)
        pages = [e["incident_id"] for e in gateway.outbox if e["kind"] == "notification"]
        assert pages == [db]
        alerting = {a["component"] for a in incident(gateway, db)["alerts"]}
        assert alerting == {"orders-db", "shop", "orders-api"}
    finally:
        gateway.http.close()
        gateway.runtime.close()


def test_a_held_incident_merges_into_the_paged_one_the_link_joins(
    falkordb: EmbeddedFalkorDB, store: GraphStore, tmp_path: Path, tenant: str
) -> None:
    """The other order: shop alerted first and was paged; orders-db's incident is held; the
    linking alert joins orders-db's (its root cause explains it), which then merges into the
    paged one, whose on-call hears of the new cause in the thread rather than from a 2nd page."""
    gateway = start(falkordb, store, tmp_path, tenant, WORLD, correlation_hops=1,
                    page_hold_ms=60_000)  # fmt: skip
    try:
        shop = shop_alert(gateway, 0)
        gateway.drain()
        assert len(sent(gateway, shop, "notification")) == 1
        db = db_alert(gateway, 1)
        gateway.drain()
        assert sent(gateway, db, "notification") == []
        report = post(gateway, delivery(("HighErrorRate", "orders-api", "critical", 2), group="c"))
        assert report["incidents"] == [shop]
        gateway.drain()
        assert incident(gateway, db)["status"] == "merged"
        survivor = incident(gateway, shop)
        assert survivor["root_cause"] == "orders-db"
        pages = [e["incident_id"] for e in gateway.outbox if e["kind"] == "notification"]
        assert pages == [shop]
        texts = [f["text"] for f in sent(gateway, shop, "followup")]
        assert any("root cause is now *orders-db*" in t for t in texts), texts
    finally:
        gateway.http.close()
        gateway.runtime.close()


def test_a_held_page_goes_out_when_no_linking_alert_comes(
    falkordb: EmbeddedFalkorDB, store: GraphStore, tmp_path: Path, tenant: str
) -> None:
    gateway = start(falkordb, store, tmp_path, tenant, WORLD, correlation_hops=1,
                    page_hold_ms=300)  # fmt: skip
    try:
        db_alert(gateway, 0)
        gateway.drain()
        shop = shop_alert(gateway, 1)
        gateway.drain()
        assert sent(gateway, shop, "notification") == []
        time.sleep(0.4)  # the hold is over
        gateway.drain()
        (page,) = sent(gateway, shop, "notification")
        # shop alone alerts; what it calls states no propagation, so it may be behind it
        assert page["notice"]["root_cause"] is None
        assert "Inconclusive (alerts only): shop alerts" in page["text"]
    finally:
        gateway.http.close()
        gateway.runtime.close()


# --- 3. every alerting team told ----------------------------------------------------------------


def test_every_other_alerting_team_is_told_in_the_thread(slack_gw: Gateway, api: SlackAPI) -> None:
    post(slack_gw, delivery(
        ("DBConnectionsSaturated", "orders-db", "critical", 0),
        ("HighErrorRate", "orders-api", "critical", 1),
        ("HighErrorRate", "shop", "warning", 2),
    ))  # fmt: skip
    slack_gw.drain()
    (page,) = api.roots()
    assert page["channel"] == "C0DATA" and page["text"].startswith("<@U0DEE> ")
    told = {m["text"].split(" ")[0]: m["text"] for m in api.replies(page["ts"])
            if "your component" in m["text"]}  # fmt: skip
    assert set(told) == {"<@U0CY>", "<@U0ADA>"}
    assert "your component orders-api alerts in this incident" in told["<@U0CY>"]
    assert "Root cause: *orders-db*" in told["<@U0ADA>"]
    # Slack alone keeps no record: a copy of each in the outbox names the person
    records = [e for e in slack_gw.outbox if ":told:" in e["intent_id"]]
    assert sorted(e["person"] for e in records) == ["Ada Example", "Cy Example"]
    # ...and the channel they went to: the page's (its id, from the thread's ref)
    assert {e["channel"] for e in records} == {"C0DATA"}


def test_a_team_told_that_slack_refuses_goes_along_the_root_route_and_the_task_completes(
    slack_gw: Gateway, api: SlackAPI
) -> None:
    """The page's channel is archived right after the page: each mention of another alerting
    team is refused in its thread, so it goes to the default team's channel, saying why; the
    respond task still opens the ticket and ends done (it failed on the first refusal)."""
    archive = Failure(after_store=lambda: api.refuse("C0DATA", "is_archived"))
    api.fail("chat.postMessage", archive)  # the page is stored, then its channel refuses
    (incident_id,) = post(slack_gw, delivery(
        ("DBConnectionsSaturated", "orders-db", "critical", 0),
        ("HighErrorRate", "orders-api", "critical", 1),
        ("HighErrorRate", "shop", "warning", 2),
    ))["incidents"]  # fmt: skip
    slack_gw.drain()
    (page,) = api.roots("C0DATA")
    assert [m for m in api.replies(page["ts"]) if "your component" in m["text"]] == []
    told = {m["text"].split(" ")[0]: m for m in api.roots("C0PLATFORM")}
    assert set(told) == {"<@U0CY>", "<@U0ADA>"}
    assert told["<@U0CY>"]["text"].endswith(
        "(Posted here: the page's thread in C0DATA (is_archived); #data-platform-oncall "
        "(is_archived) refused it.)"
    )
    shown = incident(slack_gw, str(incident_id))
    assert {t["kind"]: t["status"] for t in shown["tasks"]}["respond"] == "done"
    assert len(sent(slack_gw, str(incident_id), "ticket")) == 1


def test_a_lead_told_that_slack_refuses_goes_along_the_root_route_and_the_task_completes(
    slack_gw: Gateway, api: SlackAPI, store: GraphStore, tenant: str
) -> None:
    """As above for the lead's mention (`…:lead-told:<team>`) after a re-investigation: the
    page's channel (orders, #checkout-oncall) was archived since the page. A lead pages
    nobody, so the incident's route stays the team paged (checkout): the root route tries its
    channel, then the default team's, never the lead's owner's first."""
    (incident_id,) = post(slack_gw, delivery(("HighErrorRate", "orders-api", "critical", 0)))[
        "incidents"
    ]
    slack_gw.drain()
    (page,) = api.roots("C0CHECKOUT")
    api.refuse("C0CHECKOUT", "is_archived")
    planted = {
        "id": "untried", "title": "orders-api and shop failing mean orders-db",
        "component": "orders-db", "failure_kind": "errors",
        "checks": [{"type": "signature", "overlap": 0.5, "alerts": [
            {"component": "orders-api", "kind": "errors", "path": ["orders-api", "orders-db"]},
            {"component": "shop", "kind": "errors", "path": ["shop", "orders-api", "orders-db"]},
        ]}],
    }  # fmt: skip
    assert slack_gw.http.post("/api/v1/playbooks", json=planted).status_code == 201
    post(slack_gw, delivery(("HighErrorRate", "shop", "critical", 1), group="b"))
    slack_gw.drain()
    # the root route starts at the team paged (checkout, archived), then the default team's
    (told,) = [m for m in api.roots() if m["text"].startswith("<@U0DEE> ")]
    assert told["channel"] == "C0PLATFORM"
    assert "your component *orders-db* is now named as a lead" in told["text"]
    assert told["text"].endswith(
        "(Posted here: the page's thread in C0CHECKOUT (is_archived); #checkout-oncall "
        "(is_archived) refused it.)"
    )
    found = store.graph(graph_name(tenant)).one("incident_paged", {"incident_id": incident_id})
    paged = json.loads(found["result"])
    assert (paged["team"], paged["channel"]) == ("orders", "#checkout-oncall")
    assert api.replies(page["ts"]) == []
    failed = [t for t in incident(slack_gw, str(incident_id))["tasks"] if t["status"] != "done"]
    assert failed == []


def test_teams_told_leave_a_followup_naming_the_person(gw: Gateway) -> None:
    (incident_id,) = post(gw, delivery(
        ("DBConnectionsSaturated", "orders-db", "critical", 0),
        ("HighErrorRate", "shop", "warning", 1),
    ))["incidents"]  # fmt: skip
    gw.drain()
    (told,) = [f for f in sent(gw, incident_id, "followup") if ":told:" in f["intent_id"]]
    assert told["intent_id"] == f"incident:{incident_id}:told:platform"
    assert told["person"] == "Ada Example" and told["notice"]["person"]["slack_user_id"] == "U0ADA"
    # in the page's thread, so in the page's channel, not the told team's (#platform-oncall)
    (page,) = sent(gw, incident_id, "notification")
    assert page["channel"] == "#data-platform-oncall"
    assert (told["channel"], told["reply_to"]) == ("#data-platform-oncall", page["ref"])


# --- 4. Grafana no-data / error alerts ------------------------------------------------------------


@pytest.mark.parametrize("state", ["DatasourceNoData", "DatasourceError"])
def test_grafana_state_alerts_are_titled_by_the_rule(gw: Gateway, state: str) -> None:
    case = json.loads((FIXTURES / "alertmanager/cases/09-grafana-unified-payload.json").read_text())
    body = case["requests"][0]["body"]
    (alert,) = body["alerts"]
    alert["labels"] |= {"alertname": state, "rulename": "Checkout p99 latency",
                        "datasource_uid": "prom", "ref_id": "A"}  # fmt: skip
    alert["values"] = None
    (incident_id,) = post(gw, body)["incidents"]
    shown = incident(gw, incident_id)
    assert shown["title"] == f"Checkout p99 latency ({state})"
    gw.drain()
    (page,) = sent(gw, incident_id, "notification")
    assert page["title"] == f"Checkout p99 latency ({state})"


@pytest.mark.parametrize(
    ("state", "how"),
    [
        ("DatasourceNoData", "returned no data"),
        ("DatasourceError", "could not query its data source"),
    ],
)
def test_a_no_data_alert_is_about_the_monitoring_not_the_service(
    gw: Gateway, state: str, how: str
) -> None:
    """Grafana's no-data (or error) alert on orders-api says its rule's query returned nothing:
    the finding says so, and does not reason about orders-db failing orders-api's requests."""
    case = json.loads((FIXTURES / "alertmanager/cases/09-grafana-unified-payload.json").read_text())
    body = case["requests"][0]["body"]
    (alert,) = body["alerts"]
    alert["labels"] = {"alertname": state, "rulename": "Orders error ratio",
                       "service": "orders-api", "ref_id": "A"}  # fmt: skip
    alert["annotations"] = {}
    alert["values"] = None
    (incident_id,) = post(gw, body)["incidents"]
    gw.drain()
    finding = incident(gw, incident_id)["finding"]
    assert finding["summary"] == (
        f"Monitoring, not the service (alerts only): Grafana's rule 'Orders error ratio' {how} "
        f"({state}). The data source, the exporter or the scrape stopped answering: this says "
        "nothing yet about orders-api's requests or what they depend on. Check the data source "
        "in Grafana and whether orders-api still exports its metrics."
    )
    assert finding["candidates"] == ["orders-api"] and "orders-db" not in finding["summary"]
    (page,) = sent(gw, incident_id, "notification")  # its owner still hears of it
    assert "Monitoring, not the service" in json.dumps(page["notice"])


def test_a_no_data_alert_does_not_title_an_incident_a_real_alert_is_in(gw: Gateway) -> None:
    """Grafana sends a rule's NoData alert first and a real alert on the same service in one
    delivery: the incident is titled by the real alert, not "<rule> (DatasourceNoData)"."""
    case = json.loads((FIXTURES / "alertmanager/cases/09-grafana-unified-payload.json").read_text())
    body = case["requests"][0]["body"]
    (alert,) = body["alerts"]
    nodata = copy.deepcopy(alert)
    nodata["labels"] = {"alertname": "DatasourceNoData", "rulename": "Orders latency",
                        "service": "orders-api", "ref_id": "A"}  # fmt: skip
    nodata["annotations"], nodata["values"] = {}, None
    nodata["fingerprint"] = "00000000000000aa"
    real = copy.deepcopy(alert)
    real["labels"] = {"alertname": "HighErrorRate", "service": "orders-api",
                      "severity": "critical"}  # fmt: skip
    real["fingerprint"] = "00000000000000bb"
    body["alerts"] = [nodata, real]
    (incident_id,) = post(gw, body)["incidents"]
    assert incident(gw, incident_id)["title"] == "HighErrorRate"
    alone = copy.deepcopy(body) | {
        "alerts": [nodata | {"fingerprint": "00000000000000cc", "startsAt": "2026-01-01T00:00:00Z"}]
    }
    (only,) = post(gw, alone)["incidents"]  # alone, it still says which rule went silent
    assert incident(gw, only)["title"] == "Orders latency (DatasourceNoData)"


def test_two_owners_of_one_component_always_page_the_same_team() -> None:
    """Two sources that disagree leave two owners of one component; rows come in no order.
    The world file's owner is paged, else the first team by name, whatever the row order."""

    def row(team: str, by_world_file: bool) -> dict[str, object]:
        return {"component": "billing", "team": team, "channel": f"#{team}", "escalation": None,
                "person": f"{team}-oncall", "email": None, "slack_user_id": None,
                "shift_ends_at": 1, "by_world_file": by_world_file}  # fmt: skip

    for rows in (
        [row("zeta", True), row("alpha", False)],
        [row("alpha", False), row("zeta", True)],
    ):
        assert route_from(rows, ["billing"], lambda: None)["team"] == "zeta"
    for rows in (
        [row("zeta", False), row("alpha", False)],
        [row("alpha", False), row("zeta", False)],
    ):
        assert route_from(rows, ["billing"], lambda: None)["team"] == "alpha"


def test_a_lead_on_another_team_s_component_tells_that_team_without_paging(gw: Gateway) -> None:
    """The lead (orders-db, 0.45) of the test above belongs to orders-data, which no page woke:
    its on-call hears of it in the thread, with a mention, once (a new user's trial: the same
    alerts arriving together page that team; arriving one after the other they told it
    nothing)."""
    incident_id = lead_on_orders_db(gw)
    (told,) = [f for f in sent(gw, incident_id, "followup") if ":lead-told:" in f["intent_id"]]
    assert told["intent_id"].endswith(":lead-told:orders-data")
    assert told["text"].startswith(
        "Dee Example (orders-data): your component *orders-db* is now named as a lead for this "
        "incident (0.45: check it first; not a conclusion, so nobody was paged for it); paged: "
        "Cy Example"
    )
    assert {e["person"] for e in gw.outbox if e["kind"] == "notification"} == {"Cy Example"}


def test_a_no_data_alert_beside_real_alerts_is_a_monitoring_gap_not_a_symptom(
    gw: Gateway,
) -> None:
    """orders-db saturates and orders-api errors, while Grafana's rule on shop returns no data
    in the same delivery: the finding counts orders-api and orders-db as what the cause
    explains, and lists shop apart as a monitoring gap, not as a symptom."""
    body = delivery(
        ("DBConnectionsSaturated", "orders-db", "critical", 0),
        ("HighErrorRate", "orders-api", "critical", 1),
        ("DatasourceNoData", "shop", "critical", 1),
    )
    body["alerts"][2]["labels"]["rulename"] = "Shop p99 latency"
    (incident_id,) = post(gw, body)["incidents"]
    gw.drain()
    shown = incident(gw, incident_id)
    finding = shown["finding"]
    assert finding["summary"] == (
        "orders-db explains 2 of 2 alerting components (orders-db, orders-api). No data from "
        "shop: monitoring, not measured (Grafana's rule 'Shop p99 latency' returned no data "
        "(DatasourceNoData)); not counted as a symptom."
    )
    assert shown["root_cause"] == "orders-db"
    assert ["shop", "orders-api", "orders-db"] not in finding["paths"]
    # nothing reached only through shop is weighed: it was no symptom to explain
    assert [r["component"] for r in finding["ruled_out"]] == ["orders-api"]
    assert finding["ruled_out"][0]["reason"] == "explains 1 of 2 alerting components"


def test_another_groups_alerts_join_an_open_incident_only_along_a_dependency_path(
    gw: Gateway,
) -> None:
    """An open incident on orders-db and orders-api (group a). Later notifications of other
    Alertmanager groups: payments' alerts (another owner; reached from orders' components by
    no dependency path within the radius, both only called by shop) and batch-job's (no edge
    at all) each open their own incident, however close in time; shop's, which calls both
    APIs, joins one along its path and merges nothing (it was merging payments' incident into
    orders' through shop, a caller of both)."""
    (orders,) = post(gw, delivery(("DBConnectionsSaturated", "orders-db", "critical", 0),
                                  ("HighErrorRate", "orders-api", "critical", 0),
                                  group="a"))["incidents"]  # fmt: skip
    (payments,) = post(gw, delivery(("HighErrorRate", "payments-api", "critical", 0),
                                    ("DBConnectionsSaturated", "payments-db", "critical", 0),
                                    group="b"))["incidents"]  # fmt: skip
    (batch,) = post(gw, delivery(("JobFailed", "batch-job", "critical", 0),
                                 group="c"))["incidents"]  # fmt: skip
    assert len({orders, payments, batch}) == 3
    (joined,) = post(gw, delivery(("HighErrorRate", "shop", "critical", 1), group="d"))["incidents"]
    assert joined in (orders, payments)  # shop calls both: it reaches each within the radius
    # a caller of both links neither to the other: either fault explains shop's alert, so two
    # unrelated faults are not merged into one incident through it
    assert [incident(gw, x)["status"] for x in (orders, payments, batch)] == ["open"] * 3
    assert {a["component"] for a in incident(gw, orders)["alerts"]} - {"shop"} == {
        "orders-api", "orders-db"
    }  # fmt: skip
    assert {a["component"] for a in incident(gw, payments)["alerts"]} - {"shop"} == {
        "payments-api", "payments-db"
    }  # fmt: skip
    assert {a["component"] for a in incident(gw, batch)["alerts"]} == {"batch-job"}
    via = [a["joined_via"] for a in incident(gw, joined)["alerts"] if a["component"] == "shop"]
    assert via in (["shop → orders-api"], ["shop → payments-api"])
