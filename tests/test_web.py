"""Mission control over HTTP (gateway/web/): sign-in, session cookie, CSRF, tenant isolation,
the incident JSON (`/steps`, `/decision`, `/graph`) and the live event stream, on a real
gateway with real FalkorDB and burst workers. The browser itself: tests/test_web_browser.py."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from adapters.falkordb import EmbeddedFalkorDB, GraphStore, graph_name
from agents.respond import preferences
from agents.tasks.kinds import AFTER_PAGE
from gateway.ops.runtime import Runtime
from gateway.settings import Settings
from gateway.web import live, overview
from gateway.web.session import COOKIE, Sessions
from tests.conftest import alert_body, make_settings
from tests.web_site import HOOK_A, HOOK_B, VIEWER_A, VIEWER_B, Site, running_site


@pytest.fixture
def site(falkordb: EmbeddedFalkorDB, store: GraphStore, tmp_path: Path) -> Iterator[Site]:
    """Two tenants with the demo world each, on a free loopback port."""
    with running_site(falkordb, store, tmp_path) as found:
        yield found


def sign_in(http: httpx.Client, token: str) -> httpx.Response:
    return http.post("/ui/login", data={"token": token, "next": "/"})


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    assert found, "no CSRF field on the page"
    return found.group(1)


def test_pages_need_a_session_and_the_sign_in_sets_a_strict_cookie(site: Site) -> None:
    with site.client() as http:
        assert http.get("/").status_code == 303
        assert http.get("/").headers["location"] == "/ui/login?next=/"
        assert http.get("/ui/world").headers["location"] == "/ui/login?next=/ui/world"
        assert http.get("/ui/events").status_code == 401
        wrong = sign_in(http, "not-a-token")
        assert wrong.status_code == 401 and "signs nobody in" in wrong.text
        assert COOKIE not in http.cookies
        ok = sign_in(http, VIEWER_A)
        assert ok.status_code == 303 and ok.headers["location"] == "/"
        cookie = ok.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
        assert "Secure" not in cookie  # plain HTTP on loopback
        page = http.get("/")
        assert page.status_code == 200 and f'tenant <strong id="tenant">{site.a}' in page.text
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert VIEWER_A not in page.text and VIEWER_A not in cookie


def test_cookie_is_secure_behind_the_tls_proxy(site: Site) -> None:
    # uvicorn trusts X-Forwarded-Proto from 127.0.0.1, as from the proxy of deploy/README.md
    with site.client() as http:
        answer = http.post(
            "/ui/login", data={"token": VIEWER_B}, headers={"X-Forwarded-Proto": "https"}
        )
    assert answer.status_code == 303 and "Secure" in answer.headers["set-cookie"]


def test_webhook_token_signs_in_when_no_viewer_tokens(
    falkordb: EmbeddedFalkorDB, graph, tenant: str, tmp_path: Path
) -> None:
    settings = make_settings(falkordb, tmp_path, tenant, webhook_tokens={tenant: SecretStr(HOOK_A)})
    sessions = Sessions(settings)
    assert not sessions.open_mode and sessions.tenant_for_token(HOOK_A) == tenant
    assert sessions.tenant_for_token(HOOK_B) is None


def test_a_cross_site_sign_in_is_refused(site: Site) -> None:
    with site.client() as http:
        other = http.post(
            "/ui/login", data={"token": VIEWER_A}, headers={"Origin": "https://evil.example"}
        )
        fetch = http.post(
            "/ui/login", data={"token": VIEWER_A}, headers={"Sec-Fetch-Site": "cross-site"}
        )
    assert other.status_code == 403 and "Origin" in other.json()["detail"]
    assert fetch.status_code == 403 and "cross-site" in fetch.json()["detail"]


def test_tampered_expired_and_foreign_cookies_are_refused(site: Site) -> None:
    sessions: Sessions = Sessions(site.runtime.settings)
    value, session = sessions.issue(site.a)
    assert sessions.read(value) == session
    tenant, expires, nonce, signature = value.split(".")
    assert sessions.read(f"{site.b}.{expires}.{nonce}.{signature}") is None  # other tenant
    assert sessions.read(f"{tenant}.{int(expires) + 1}.{nonce}.{signature}") is None
    assert sessions.read(f"{tenant}.{expires}.{nonce}.{'0' * 64}") is None
    assert sessions.read("garbage") is None and sessions.read(None) is None
    past = sessions.issue(site.a)[0].split(".")
    old = f"{past[0]}.{int(time.time() * 1000) - 1}.{past[2]}"
    key = sessions._key(site.a)
    assert key is not None
    from gateway.web.session import _sign

    assert sessions.read(f"{old}.{_sign(key, old)}") is None  # well signed but expired


def test_incident_page_shows_the_agents_work_and_the_verdict_button_records(site: Site) -> None:
    incident = site.post_alert(site.a, "payment")
    site.drain()
    with site.client() as http:
        sign_in(http, VIEWER_A)
        page = http.get(f"/ui/incidents/{incident}")
        assert page.status_code == 200
        text = page.text
        assert 'id="root-cause"><strong>payment</strong>' in text
        assert "HighErrorRate" in text and "opened the incident" in text
        assert '<strong class="tool">coverage_walk</strong>' in text  # a step, rendered generically
        assert "response_context" in text  # the responder's steps too
        assert f"incident:{incident}:initial-notification" in text  # an action's intent id
        assert "No verdict yet" in text
        paged = text.split('<dd id="paged">')[1].split("</dd>")[0]
        assert paged.endswith("(checkout, #checkout-oncall)") and "Example" in paged
        intent = re.search(r'name="intent" value="([0-9a-f]+)"', text)
        assert intent
        form = {"csrf": csrf_of(text), "intent": intent.group(1), "verdict": "confirmed"}
        bad = http.post(f"/ui/incidents/{incident}/verdict", data=form | {"csrf": "0" * 32})
        assert bad.status_code == 403
        done = http.post(f"/ui/incidents/{incident}/verdict", data=form)
        assert done.status_code == 303
        assert done.headers["location"] == f"/ui/incidents/{incident}#verdicts"
        again = http.post(f"/ui/incidents/{incident}/verdict", data=form)  # a double submit
        assert again.status_code == 303
        unknown = http.post(
            f"/ui/incidents/{incident}/verdict",
            data=form | {"intent": "x1", "verdict": "rejected", "actual_cause": "no-such"},
        )
        assert unknown.status_code == 422 and "actual cause &#39;no-such&#39;" in unknown.text
        detail = http.get(
            f"/api/v1/incidents/{incident}", headers={"Authorization": f"Bearer {HOOK_A}"}
        )
    verdicts = detail.json()["verdicts"]
    assert [(v["verdict"], v["actual_cause"], v["source"]) for v in verdicts] == [
        ("confirmed", "payment", "web")
    ]
    tasks = {t["kind"] for t in detail.json()["tasks"]}
    assert {"learn", "notify_verdict"} <= tasks  # what a Slack button also creates


def test_an_inconclusive_finding_lists_its_candidates_in_order(site: Site) -> None:
    """cart alerts; valkey-cart behind it raises no alert: alerts only, nothing separates them, and
    the page says so instead of naming one."""
    incident = site.post_alert(site.a, "cart")
    site.drain()
    with site.client() as http:
        sign_in(http, VIEWER_A)
        text = http.get(f"/ui/incidents/{incident}").text
    outcome = text.split('id="finding-outcome">')[1].split("</p>")[0]
    assert "inconclusive" in outcome and "in this order" in outcome
    names = re.findall(r'<li class="mono">([^<]+)</li>', text.split('id="candidates">')[1])
    assert names[:2] == ["cart", "valkey-cart"]
    assert 'id="separated-by"' not in text
    assert 'id="root-cause">inconclusive (see Finding)</dd>' in text


def test_verdict_form_limits_and_checks_before_reading(site: Site) -> None:
    incident = site.post_alert(site.a, "payment")
    with site.client() as http:
        anonymous = http.post(f"/ui/incidents/{incident}/verdict", data={"verdict": "resolved"})
        assert anonymous.status_code == 303 and "/ui/login" in anonymous.headers["location"]
        sign_in(http, VIEWER_A)
        big = http.post(
            f"/ui/incidents/{incident}/verdict", content=b"a=" + b"x" * 20_000,
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )  # fmt: skip
        assert big.status_code == 413
        json_body = http.post(f"/ui/incidents/{incident}/verdict", json={"verdict": "resolved"})
        assert json_body.status_code == 415
        # a person's mistakes come back as a page with the reason, not as JSON
        page = http.get(f"/ui/incidents/{incident}")
        form = {"csrf": csrf_of(page.text), "intent": "typo1", "verdict": "rejected",
                "actual_cause": "prodcut-catalog"}  # fmt: skip
        typo = http.post(f"/ui/incidents/{incident}/verdict", data=form)
        assert typo.status_code == 422 and typo.headers["content-type"].startswith("text/html")
        assert "actual cause &#39;prodcut-catalog&#39; is not a known component" in typo.text
        assert f'href="/ui/incidents/{incident}"' in typo.text
        stale = http.post(f"/ui/incidents/{incident}/verdict", data=form | {"csrf": "old"})
        assert stale.status_code == 403 and "reload the page" in stale.text
        assert stale.headers["content-type"].startswith("text/html")


def test_a_second_tenant_sees_none_of_it(site: Site) -> None:
    incident = site.post_alert(site.a, "payment")
    site.drain()
    with site.client() as http:
        sign_in(http, VIEWER_B)
        listing = http.get("/")
        assert incident not in listing.text and "No incidents" in listing.text
        assert http.get(f"/ui/incidents/{incident}").status_code == 404
        for part in ("steps", "decision", "graph"):  # the page's scripts use the cookie
            assert http.get(f"/api/v1/incidents/{incident}/{part}").status_code == 404
        page = http.get(f"/ui/incidents/{incident}")
        form = {"csrf": csrf_of(listing.text), "intent": "abc", "verdict": "confirmed"}
        assert http.post(f"/ui/incidents/{incident}/verdict", data=form).status_code == 404
        assert page.status_code == 404 and "payment" not in page.text
        for path in ("/ui/memory", "/ui/world", "/ui/health"):
            assert incident not in http.get(path).text
    bearer_b = {"Authorization": f"Bearer {HOOK_B}"}
    with site.client() as http:
        for part in ("steps", "decision", "graph"):
            assert (
                http.get(f"/api/v1/incidents/{incident}/{part}", headers=bearer_b).status_code
                == 404
            )


def test_incident_json_for_scripts(site: Site) -> None:
    incident = site.post_alert(site.a, "payment")
    site.post_alert(site.a, "checkout")  # same hour: joins, checkout calls payment
    site.drain()
    bearer = {"Authorization": f"Bearer {HOOK_A}"}
    with site.client() as http:
        assert http.get(f"/api/v1/incidents/{incident}/graph").status_code == 401
        steps = http.get(f"/api/v1/incidents/{incident}/steps", headers=bearer).json()["steps"]
        graph = http.get(f"/api/v1/incidents/{incident}/graph", headers=bearer).json()
        decision = http.get(f"/api/v1/incidents/{incident}/decision", headers=bearer).json()
    tools = [s["tool"] for s in steps if s["kind"] == "investigate"]
    assert tools[0] == "incident_alerts" and "coverage_walk" in tools
    assert all(isinstance(s["at"], int) and s["n"] >= 1 for s in steps)
    walk = next(s for s in steps if s["tool"] == "coverage_walk")
    assert walk["result"]["status"] == "ok"  # stored JSON, parsed: a tool's result value
    assert isinstance(walk["result"]["data"], list)
    assert graph["root_cause"] == "payment"
    assert ["checkout", "payment"] in graph["paths"]
    nodes = {n["id"]: n for n in graph["nodes"]}
    assert nodes["payment"]["root_cause"] and nodes["checkout"]["alerts"] == 1
    hop = [e for e in graph["edges"] if (e["source"], e["target"]) == ("checkout", "payment")]
    assert hop and hop[0]["on_path"]
    assert not any(e["on_path"] for e in graph["edges"] if e["target"] != "payment")
    assert decision["root_cause"] == "payment" and decision["finding"]["summary"]
    assert isinstance(decision["decisions"], list)


def test_event_stream_reports_what_lands_in_the_graph(site: Site) -> None:
    seen: list[str] = []
    with site.client() as http:
        sign_in(http, VIEWER_A)
        with http.stream("GET", "/ui/events") as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            lines = stream.iter_lines()
            assert next(lines).startswith("retry:")
            time.sleep(0.5)  # the stream's first reading is the baseline
            site.post_alert(site.b, "cart")  # the other tenant: must not show up
            site.post_alert(site.a, "payment")
            for line in lines:
                if line.startswith("event:"):
                    seen.append(line.split(":", 1)[1].strip())
                if "incident" in seen:
                    break
    assert seen[:2] == ["alert", "incident"]


def test_changes_name_each_moved_counter() -> None:
    base = {"alerts": 1, "firing_alerts": 1, "incidents": 1, "open_incidents": 1,
            "steps": 3, "findings": 1, "finding_at": 5, "actions": 0, "action_at": None,
            "verdicts": 0, "playbooks": 0, "trust_moves": 0, "claims": []}  # fmt: skip
    after = base | {"steps": 5, "claims": ["t1 2 investigate w-1"], "verdicts": 1}
    assert live.changes(base, after) == [
        ("claim", "w-1 claimed investigate task t1 (claim 2)"),
        ("step", "2 step(s) checkpointed"),
        ("verdict", "1 verdict(s) given"),
    ]
    assert live.changes(base, base) == []
    resolving = base | {"alerts": 2, "firing_alerts": 0, "open_incidents": 0}
    assert live.changes(base, resolving) == [
        ("alert", "1 new alert(s) received"),
        ("alert", "2 alert(s) resolved"),
        ("incident", "1 incident(s) resolved"),
    ]
    assert live.sse("step", "a\nb") == "event: step\ndata: a\ndata: b\n\n"


def test_rota_holes() -> None:
    shifts = [{"starts_at": 10, "ends_at": 20}, {"starts_at": 25, "ends_at": 40}]
    assert overview.holes(shifts, 0, 50) == [(0, 10), (20, 25), (40, 50)]
    assert overview.holes(shifts, 12, 30) == [(20, 25)]
    assert overview.holes([], 0, 5) == [(0, 5)]


def test_open_mode_needs_no_sign_in_but_forms_need_csrf(
    falkordb: EmbeddedFalkorDB, graph, tenant: str, tmp_path: Path
) -> None:
    runtime = Runtime(make_settings(falkordb, tmp_path, tenant))  # no token at all
    runtime.open()
    try:
        url = f"http://127.0.0.1:{runtime.serve_http('127.0.0.1', 0)}"
        with httpx.Client(base_url=url, timeout=30) as http:
            posted = http.post("/api/v1/alerts", content=alert_body("payment")).json()
            incident_id = posted["incidents"][0]
            page = http.get("/")
            assert page.status_code == 200 and incident_id in page.text
            assert "open mode" in page.text
            assert COOKIE in http.cookies  # a session for the default tenant, no sign-in
            assert http.get("/ui/login", follow_redirects=False).status_code == 303
            form = {"intent": "abc", "verdict": "resolved"}
            assert http.post(f"/ui/incidents/{incident_id}/verdict", data=form).status_code == 403
            csrf = csrf_of(http.get(f"/ui/incidents/{incident_id}").text)
            ok = http.post(
                f"/ui/incidents/{incident_id}/verdict", data=form | {"csrf": csrf},
                follow_redirects=False,
            )  # fmt: skip
            assert ok.status_code == 303
    finally:
        runtime.close()


def test_memory_world_and_health_pages(site: Site) -> None:
    site.post_alert(site.a, "payment")
    with site.client() as http:
        sign_in(http, VIEWER_A)
        world = http.get("/ui/world").text
        health = http.get("/ui/health").text
        memory = http.get("/ui/memory").text
    assert 'id="teams"' in world and "(default team: the root route)" in world
    assert 'data-key="payment"' in world
    assert "✓ up" in health and "investigate" in health  # the open investigate task
    assert "No playbook yet" in memory


def test_open_event_streams_do_not_hold_up_a_shutdown(site: Site) -> None:
    with site.client() as http:
        sign_in(http, VIEWER_A)
        with http.stream("GET", "/ui/events") as stream:
            assert next(stream.iter_lines()).startswith("retry:")
            started = time.monotonic()
            site.runtime.close()  # the fixture's close afterwards is a no-op
            took = time.monotonic() - started
    assert took < 5, f"shutdown waited {took:.1f} s for an open event stream"


def test_memory_shows_a_learned_playbook_and_its_trust_history(site: Site) -> None:
    bearer = {"Authorization": f"Bearer {HOOK_A}"}
    first = site.post_alert(site.a, "payment", hour=0)
    site.drain()
    with site.client() as http:
        confirm = {"verdict": "confirmed", "by": "U1"}
        http.post(f"/api/v1/incidents/{first}/verdicts", json=confirm, headers=bearer)
        site.drain()  # the learner writes a playbook pinned to payment
        second = site.post_alert(site.a, "payment", hour=2)
        assert second != first
        site.drain()  # recalled and used by the second investigation
        http.post(f"/api/v1/incidents/{second}/verdicts", json=confirm, headers=bearer)
        site.drain()  # trust moves: helped
        decision = http.get(f"/api/v1/incidents/{second}/decision", headers=bearer).json()
        sign_in(http, VIEWER_A)
        memory = http.get("/ui/memory").text
        incident = http.get(f"/ui/incidents/{second}").text
    used = decision["decisions"][0]["playbooks"]
    assert len(used) == 1 and used[0]["candidate"] == "payment" and used[0]["steered"]
    assert used[0]["verdict"] == "helped" and used[0]["trust_at_use"] == 0.5
    assert [(c["check"]["type"], c["held"]) for c in used[0]["checks"]] == [
        ("explains_alerting", True),
        ("no_recent_change", True),
        ("alert_kind", True),
        ("signature", True),
    ]
    playbooks = memory.split('id="playbooks"')[1].split("</table>")[0]
    assert '<td class="mono">payment</td>' in playbooks
    assert "<strong>0.67</strong>" in playbooks and "helped 1, misled 0" in playbooks
    assert f">{second}</a>: trust 0.50, steered, verdict helped" in playbooks
    assert "✓ held: no_recent_change (changes in the last 2 h: none)" in incident
    assert "applied / steered" in incident


def test_memory_lists_preferences_with_their_versions(site: Site, store: GraphStore) -> None:
    incident = site.post_alert(site.a, "payment")
    graph = store.graph(graph_name(site.a))
    said = [
        "for database saturation, don't page me on Slack",
        "for database saturation, don't page me, open a ticket with the slow query log",
    ]
    for n, text in enumerate(said, 1):
        wish = preferences.parse_preference(text)
        assert wish is not None
        preferences.propose(graph, incident, f"f{n}", "U7", "Ana", text, wish)
        preferences.approve(graph, f"f{n}", "U7")
    facts = overview.memory(graph)["facts"]
    versions = {f["id"]: (f["version"], f["status"], f["current"]) for f in facts}
    assert versions == {
        "f1": (1, "proposed", False), "f1:approved": (2, "approved", False),
        "f2": (1, "proposed", False), "f2:approved": (3, "approved", True),
    }  # fmt: skip
    with site.client() as http:
        sign_in(http, VIEWER_A)
        page = http.get("/ui/memory").text
    row = page.split('data-key="f2:approved"')[1].split("</tr>")[0]
    assert "Ana" in row and "v3" in row and "current" in row and "slow query log" in row


def test_world_on_call_now_is_who_the_responder_pages(site: Site, store: GraphStore) -> None:
    graph = store.graph(graph_name(site.a))
    now = int(time.time() * 1000)
    world = overview.world(graph, now)
    teams = {t["name"]: t for t in world["teams"]}
    paged = graph.rows("response_context", {"components": ["payment", "frontend", "postgres"]})
    assert paged
    for row in paged:
        team = teams[row["team"]]
        assert team["now"] == row["person"]
        assert team["now_until"] == row["shift_ends_at"]
        if team["next"] is not None:
            assert team["next"]["starts_at"] > now
    assert world["default_team"] == "platform"
    assert world["gaps"] == []  # the demo world: every component owned, rotas without holes
    orphan = {"name": "orphan-svc", "kind": "service", "tech": None, "client": False,
              "aliases": [], "criticality": None, "paths": [], "annotations_json": None,
              "source": "test", "declared": False}  # fmt: skip
    graph.rows("import_components", {"components": [orphan], "now": now})
    gaps = overview.world(graph, now)["gaps"]
    assert gaps == ["1 component(s) no team owns, routed to the default team platform: orphan-svc"]


def test_health_shows_workers_by_their_leases_and_the_queue(site: Site, store: GraphStore) -> None:
    site.post_alert(site.a, "payment")
    site.post_alert(site.a, "cart", hour=3)
    graph = store.graph(graph_name(site.a))
    for owner, lease_ms in (("worker-live", 60_000), ("worker-dead", -1)):
        claim = {"kinds": ["investigate"], "after_page": AFTER_PAGE, "max_attempts": 5,
                 "owner": owner, "attempt_id": owner, "lease_ms": lease_ms}  # fmt: skip
        assert graph.one("claim_task", claim) is not None
    found = overview.health(store, graph, schema_ready=True)
    workers = {w["owner"]: w for w in found["workers"]}
    assert workers["worker-live"]["alive"] and not workers["worker-dead"]["alive"]
    assert 0 < workers["worker-live"]["tasks"][0]["lease_left_ms"] <= 60_000
    assert found["queue"] == [{"kind": "investigate", "status": "claimed", "tasks": 2}]
    assert found["database"]["up"] and found["database"]["schema_ready"]
    with site.client() as http:
        sign_in(http, VIEWER_A)
        page = http.get("/ui/health").text
    assert "worker-live" in page and "✗ lease expired (died or stalled)" in page


def test_viewer_tokens_must_name_served_tenants(falkordb: EmbeddedFalkorDB, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not serve: other"):
        make_settings(
            falkordb, tmp_path, "acme", webhook_tokens={"acme": SecretStr(HOOK_A)},
            viewer_tokens={"other": SecretStr(VIEWER_A)},
        )  # fmt: skip
    env = Settings(_env_file=None, BLAST_VIEWER_TOKENS=f"demo={VIEWER_A}")  # type: ignore[call-arg]
    assert env.viewers["demo"].get_secret_value() == VIEWER_A
    with pytest.raises(ValueError, match="BLAST_VIEWER_TOKENS entry for 'demo' has no token"):
        Settings(_env_file=None, BLAST_VIEWER_TOKENS="demo=")  # type: ignore[call-arg]
