"""What a verdict leaves in memory, said where people look: the learn task's words name the
playbook a verdict credited or pinned (or why none), a playbook that retires after it misled
twice says on which incidents, a world import says a listed playbook stays retired, and
`blast-radius playbook restore` brings it back."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from adapters.falkordb import EmbeddedFalkorDB
from gateway.world import apply_world
from gateway.world.sources import load_sources
from tests.conftest import Gateway
from tests.learn.test_memory import (
    SILENT_DB,
    WEEK1,
    WORLD,
    clear,
    close_shop,
    fire,
    incident,
    open_shop,
    playbooks,
    verdict,
)
from tests.slack_api import SlackAPI
from tests.test_cli import cli

#: The two-postgres world with PLANTED (a runbook that blames payments-api for its own
#: errors) in its `playbooks:`, as a team keeps runbooks in version control.
RUNBOOK = """\
playbooks:
  - id: wrong
    title: errors on payments-api mean payments-api
    component: payments-api
    failure_kind: errors
    checks: [{type: alert_kind, kind: errors, scope: candidate}]
"""


@pytest.fixture
def world_file(tmp_path: Path) -> Path:
    path = tmp_path / "world.yaml"
    path.write_text(WORLD.read_text(encoding="utf-8") + RUNBOOK, encoding="utf-8")
    return path


@pytest.fixture
def runbook_shop(
    falkordb: EmbeddedFalkorDB, tmp_path: Path, api: SlackAPI, world_file: Path
) -> Iterator[Gateway]:
    """A gateway on the two-postgres world whose world file carries the runbook `wrong`."""
    gw = open_shop(falkordb, tmp_path, api, world=world_file)
    yield gw
    close_shop(gw)


def learn_outcome(gw: Gateway, incident_id: str) -> str:
    """The outcome of the incident's latest learn task."""
    done = [t for t in incident(gw, incident_id)["tasks"] if t["kind"] == "learn"]
    return str(done[-1]["outcome"])


def test_a_runbook_that_misled_twice_says_why_stays_retired_on_import_and_comes_back(
    runbook_shop: Gateway, world_file: Path, falkordb: EmbeddedFalkorDB, tmp_path: Path
) -> None:
    """A world-file runbook steers two incidents that are rejected: it retires saying on
    which incidents and by whom; re-importing the file says it stays retired and how to bring
    it back; `blast-radius playbook restore` does, keeping its trust."""
    gw = runbook_shop
    wrong = []
    for week in range(2):
        at = WEEK1 + timedelta(days=7 * week)
        wrong.append(fire(gw, at, SILENT_DB))
        assert incident(gw, wrong[-1])["root_cause"] == "payments-api"
        verdict(gw, wrong[-1], "rejected")
        clear(gw, at, SILENT_DB)
    book = playbooks(gw)["wrong"]
    reason = (
        f"misled twice, trust under 0.5: rejected on {wrong[0]} by Dee Example, "
        f"{wrong[1]} by Dee Example"
    )
    assert (book["status"], book["retired_reason"]) == ("retired", reason)
    assert f"wrong misled (trust 0.25), retired: {reason}" in learn_outcome(gw, wrong[1])
    page = gw.http.get("/ui/memory")
    assert page.status_code == 200 and reason in page.text
    loaded = load_sources([world_file])
    report = apply_world(gw.graph, loaded.world, loaded.sources, explicit=loaded.explicit)
    assert report.notes == [
        f"playbook wrong stays retired ({reason}): the file lists it but a re-import does not "
        "undo that; `blast-radius playbook restore wrong` brings it back"
    ]
    assert playbooks(gw)["wrong"]["status"] == "retired"
    env = {"FALKORDB_URL": falkordb.url, "BLAST_DATA_DIR": str(tmp_path),
           "BLAST_DEFAULT_TENANT": gw.runtime.settings.default_tenant}  # fmt: skip
    done = cli("playbook", "restore", "wrong", **env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        f"playbook wrong is active again (it was retired: {reason}); trust 0.25 kept (trust "
        "moves only on verdicts: under 0.5, it retires again if it misleads once more)"
    )
    book = playbooks(gw)["wrong"]
    assert (book["status"], book["retired_reason"], book["misled"]) == ("active", None, 2)
    again = cli("playbook", "restore", "wrong", **env)
    assert again.returncode == 1
    assert (
        again.stderr.strip() == "playbook restore: wrong is active, not retired: nothing to restore"
    )
    assert apply_world(gw.graph, loaded.world, loaded.sources, explicit=loaded.explicit).notes == []


#: The trial's app, small: api and worker share the database db; only api uses the cache.
APP = """\
components:
  - {id: api, kind: service}
  - {id: worker, kind: service}
  - {id: db, kind: datastore, tech: PostgreSQL}
  - {id: cache, kind: datastore, tech: Redis}
edges:
  - {from: api, to: db, type: READS_WRITES}
  - {from: api, to: cache, type: READS_WRITES}
  - {from: worker, to: db, type: READS_WRITES}
default_team: platform
teams:
  - name: platform
    owns: [api, worker, db, cache]
    members: [{name: Dee Example, email: dee@example.com, slack_user_id: UDEE}]
    oncall: {rotation: [Dee Example], shift_hours: 168, start: "2026-01-05T09:00:00Z"}
"""
#: A hand-written runbook on db with no failure kind, as docs/world.md shows one.
DB_RESTART = """\
playbooks:
  - id: db-restart
    title: Restart the primary database
    component: db
    checks: [{type: alert_any}]
"""
ERRORS = [("HighErrorRate", "api", "api 5xx"), ("JobFailures", "worker", "worker jobs failing")]
DB_DOWN = [*ERRORS, ("PostgresDown", "db", "pg_up == 0")]


def app_shop(falkordb: EmbeddedFalkorDB, tmp_path: Path, api: SlackAPI, text: str) -> Gateway:
    path = tmp_path / "app.yaml"
    path.write_text(text, encoding="utf-8")
    return open_shop(falkordb, tmp_path, api, world=path)


def test_a_confirmation_beside_a_runbook_with_no_kind_is_learned_and_says_so(
    falkordb: EmbeddedFalkorDB, tmp_path: Path, api: SlackAPI
) -> None:
    """db down ("PostgresDown": no failure kind) was investigated before the world file gained
    a runbook on db with no kind. Confirming it pins a learned playbook (the runbook is not
    "the same lesson"), and the learn task says which; a repeat the runbook steers credits it
    by name."""
    gw = app_shop(falkordb, tmp_path, api, APP)
    try:
        first = fire(gw, WEEK1, DB_DOWN)
        assert incident(gw, first)["root_cause"] == "db"
        (tmp_path / "app.yaml").write_text(APP + DB_RESTART, encoding="utf-8")
        loaded = load_sources([tmp_path / "app.yaml"])
        apply_world(gw.graph, loaded.world, loaded.sources, explicit=loaded.explicit)
        verdict(gw, first, "confirmed")
        learned = f"playbook:{first}:db"
        books = playbooks(gw)
        assert (books[learned]["status"], books[learned]["lesson"]) == ("active", "confirmed")
        assert learn_outcome(gw, first) == f"confirmed: learned playbook {learned} on db"
        clear(gw, WEEK1, DB_DOWN)
        repeat = fire(gw, WEEK1 + timedelta(days=1), DB_DOWN)
        found = incident(gw, repeat)
        assert found["root_cause"] == "db"
        steered = sorted(m["playbook"] for m in found["memory"] if m["steered"])
        verdict(gw, repeat, "confirmed")
        outcome = learn_outcome(gw, repeat)
        assert steered and outcome == "confirmed: " + "; ".join(
            f"{p} helped (trust 0.67)" for p in steered
        )
    finally:
        close_shop(gw)


def test_a_correction_of_an_identical_incident_is_cited_first_and_teaches_no_dead_playbook(
    falkordb: EmbeddedFalkorDB, tmp_path: Path, api: SlackAPI
) -> None:
    """db down was confirmed; then api and worker fail with db silent, memory names db, and
    Dee corrects it to cache, which only api reaches. A playbook on cache would fail its own
    explains_alerting on that incident: none is pinned and the learn task says why. The
    identical repeat's page cites the correction first, not the older incident confirmed
    as db."""
    gw = app_shop(falkordb, tmp_path, api, APP)
    try:
        confirmed = fire(gw, WEEK1, DB_DOWN)
        assert incident(gw, confirmed)["root_cause"] == "db"
        verdict(gw, confirmed, "confirmed")
        clear(gw, WEEK1, DB_DOWN)
        at = WEEK1 + timedelta(hours=2)
        corrected = fire(gw, at, ERRORS)
        assert incident(gw, corrected)["root_cause"] == "db"
        verdict(gw, corrected, "rejected", "cache")
        assert f"playbook:{corrected}:cache" not in playbooks(gw)
        assert learn_outcome(gw, corrected).endswith(
            "no playbook learned: cache explains 1 of 2 alerting components (not worker), so a "
            "playbook on cache would fail its explains_alerting check on this very incident"
        )
        clear(gw, at, ERRORS)
        repeat = fire(gw, at + timedelta(hours=2), ERRORS)
        found = incident(gw, repeat)
        first = found["similar"][0]
        assert (first["id"], first["root_cause"], first["corrected"]) == (corrected, "cache", True)
        assert first["confirmed_by"] == "UDEE"  # the verdict's `by`, as the API gave it
        assert confirmed in [s["id"] for s in found["similar"][1:]]
    finally:
        close_shop(gw)


def test_restoring_a_lesson_a_later_verdict_withdrew_warns_naming_that_verdict(
    falkordb: EmbeddedFalkorDB, tmp_path: Path, api: SlackAPI
) -> None:
    """A new user's trial: `playbook restore` brought back a playbook whose lesson a later
    verdict on its incident had withdrawn, silently, and two active playbooks from one
    incident then contradicted each other. It still restores it, and warns naming the
    verdict; a playbook the latest verdict taught restores without a warning."""
    gw = open_shop(falkordb, tmp_path, api)
    try:
        wrong = fire(gw, WEEK1, SILENT_DB)
        verdict(gw, wrong, "rejected", "payments-db")
        verdict(gw, wrong, "confirmed", "payments-api")
        mine = f"playbook:{wrong}:payments-db"
        assert playbooks(gw)[mine]["status"] == "retired"
        (later,) = [
            v for v in incident(gw, wrong)["verdicts"] if v["actual_cause"] == "payments-api"
        ]
        env = {"FALKORDB_URL": falkordb.url, "BLAST_DATA_DIR": str(tmp_path),
               "BLAST_DEFAULT_TENANT": gw.runtime.settings.default_tenant}  # fmt: skip
        done = cli("playbook", "restore", mine, **env)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"playbook {mine} is active again")
        at = datetime.fromtimestamp(later["at"] / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")
        assert done.stderr.strip() == (
            f"playbook restore: warning: the latest verdict on {wrong}, the incident it was "
            f"learned from ({later['id']}: confirmed by UDEE at {at}), names payments-api as "
            "the cause, not payments-db: it withdrew this lesson, and memory now holds it again "
            "beside what that verdict taught; retire it again (`DELETE /api/v1/playbooks/ID`) "
            "if that verdict stands"
        )
        assert playbooks(gw)[mine]["status"] == "active"
        # the lesson the latest verdict teaches, retired by hand and restored: no warning
        theirs = f"playbook:{wrong}:payments-api"
        gone = gw.http.request("DELETE", f"/api/v1/playbooks/{theirs}", json={"reason": "tidy"})
        assert gone.status_code == 200, gone.text
        back = cli("playbook", "restore", theirs, **env)
        assert back.returncode == 0 and back.stderr == ""
    finally:
        close_shop(gw)


def test_a_verdict_id_re_sent_with_another_cause_is_refused_and_repeats_update_the_page_once(
    falkordb: EmbeddedFalkorDB, tmp_path: Path, api: SlackAPI
) -> None:
    """A new user's trial: the same `id` re-sent with another cause answered 201 with the old
    cause, dropping the change without a word; and four identical verdicts posted without an
    id edited the page four times. The changed one is a 422 naming the stored verdict (the
    same content again stays a quiet repeat); identical verdicts update the page once."""
    gw = open_shop(falkordb, tmp_path, api)
    try:
        wrong = fire(gw, WEEK1, SILENT_DB)
        path = f"/api/v1/incidents/{wrong}/verdicts"
        first = {"verdict": "rejected", "by": "Sam SRE", "actual_cause": "payments-db",
                 "id": "my-1"}  # fmt: skip
        sent = [gw.http.post(path, json=first) for _ in range(2)]
        changed = gw.http.post(path, json=first | {"actual_cause": "payments-api"})
        for _ in range(3):
            again = {"verdict": "confirmed", "by": "Sam SRE", "actual_cause": "payments-api"}
            assert gw.http.post(path, json=again).status_code == 201
        gw.drain()
        found = incident(gw, wrong)
    finally:
        close_shop(gw)
    assert [(s.status_code, s.json()["actual_cause"]) for s in sent] == [(201, "payments-db")] * 2
    assert (changed.status_code, changed.json()["detail"]) == (
        422,
        f"id 'my-1' already names another verdict: api:my-1 on {wrong}, rejected by Sam SRE, "
        "actual cause payments-db: use a new id for a new verdict",
    )
    said = [(v["verdict"], v["actual_cause"]) for v in found["verdicts"]]
    assert said == [("rejected", "payments-db")] + [("confirmed", "payments-api")] * 3
    updates = [t for t in found["tasks"] if t["kind"] == "notify_verdict"]
    assert len(updates) == 2 and all(t["status"] == "done" for t in updates)


def test_a_verdict_with_control_characters_or_a_blank_name_is_refused(
    falkordb: EmbeddedFalkorDB, tmp_path: Path, api: SlackAPI
) -> None:
    """A new user's trial posted a verdict whose words set the terminal's title (ESC ] … BEL)
    and whose name carried a right-to-left override: `blast-radius incident` printed them as
    they were. Another named "   ", and every page after said "confirmed by    ". Each is a 422
    with the reason, and nothing is recorded."""
    gw = open_shop(falkordb, tmp_path, api)
    try:
        wrong = fire(gw, WEEK1, SILENT_DB)
        path = f"/api/v1/incidents/{wrong}/verdicts"
        base = {"verdict": "rejected", "by": "Sam SRE", "actual_cause": "payments-db"}
        for bad, shown in (
            ({"text": "\u001b]0;pwned\u0007 hi"}, "U+001B"),
            ({"by": "Ida\u202e"}, "U+202E"),
            ({"by": "   "}, "by names no one"),
        ):
            answer = gw.http.post(path, json=base | bad)
            assert answer.status_code == 422 and shown in answer.text, answer.text
        assert incident(gw, wrong)["verdicts"] == []
        assert gw.http.post(path, json=base | {"text": "pool\tfull\nagain"}).status_code == 201
    finally:
        close_shop(gw)
