"""Escalation policies: the world file's shape and checks, the schedule, and levels sent exactly
once on the database's clock, through a worker SIGKILLed mid-policy, an acknowledgement racing
a level, and an acknowledgement or resolve that stops the policy."""

from __future__ import annotations

import json
import signal
import threading
from typing import Any

import pytest

from adapters.falkordb import TenantGraph
from adapters.outbox import Outbox
from adapters.promql import duration_ms
from agents.respond.escalation import fmt_after, schedule
from agents.triage.triage import triage
from gateway.http.payloads import normalize, parse_body
from gateway.ops.runtime import Runtime
from gateway.web import overview
from gateway.web.timeline import events
from gateway.world import TopologyError, demo_world_path, import_world, load_world
from gateway.world.model import EscalationLevelSpec, TeamTarget, WorldSpec
from gateway.world.oncall import coverage
from gateway.world.writer import apply_world
from tests.conftest import alert_body, make_settings
from tests.tasks.test_crash import incident, spawn, task, wait_for
from tests.test_cli import cli

__all__ = ["spawn"]  # the fixture, used by name


def set_policy(world: WorldSpec, levels: list[tuple[str, list[Any]]], repeat: int) -> None:
    """Give team checkout (owner of payment) of `world` an escalation policy: each level's
    `after` and whom it notifies (`+team` a team, else a person)."""
    team = next(t for t in world.teams if t.name == "checkout")
    team.escalation_policy = [
        EscalationLevelSpec(after=after, notify=[TeamTarget(team=n[1:]) if n.startswith("+")
                                                 else n for n in notify])
        for after, notify in levels
    ]  # fmt: skip
    team.repeat = repeat


def with_policy(graph: TenantGraph, levels: list[tuple[str, list[Any]]], repeat: int = 0) -> None:
    """Give team checkout (owner of payment) an escalation policy and import the world again."""
    world = load_world(demo_world_path())
    set_policy(world, levels, repeat)
    import_world(graph, world)


def acknowledge(graph: TenantGraph, incident_id: str, by: str) -> None:
    """Acknowledge an incident as the ack route does (the shared shape: acknowledged_at on the
    database's clock, acknowledged_by a name)."""
    graph._graph.query(
        "MATCH (i:Incident {id: $id}) SET i.acknowledged_at = timestamp(), i.acknowledged_by = $by",
        {"id": incident_id, "by": by},
    )


def levels_sent(outbox: Outbox, incident_id: str) -> list[str]:
    """The intent ids of the escalation levels in the outbox, in the order they were sent."""
    prefix = f"incident:{incident_id}:escalate:"
    return [str(e["intent_id"]) for e in outbox.entries() if str(e["intent_id"]).startswith(prefix)]


def page(runtime: Runtime, graph: TenantGraph) -> str:
    """An incident on payment, investigated and paged by a burst worker (no hooks)."""
    incident_id = incident(graph)
    runtime.make_worker().run(threading.Event(), burst=True)
    assert task(graph, incident_id, "respond")["status"] == "done"
    return incident_id


@pytest.fixture
def runtime(falkordb, tmp_path, tenant, graph):
    rt = Runtime(make_settings(falkordb, tmp_path, tenant))
    rt.open()
    yield rt
    rt.close()


def test_durations_are_prometheus_durations():
    assert [duration_ms(d) for d in ("30s", "5m", "1h", "1h30m", "1d", "250ms")] == [
        30_000, 300_000, 3_600_000, 5_400_000, 86_400_000, 250,
    ]  # fmt: skip
    for bad in ("", "5", "m5", "5 m", "1m1h", "0s", "-5m", "5min"):
        with pytest.raises(ValueError):
            duration_ms(bad)
    assert [fmt_after(ms) for ms in (30_000, 900_000, 5_400_000, 3_600_000)] == [
        "30 s", "15 min", "1 h 30 min", "1 h",
    ]  # fmt: skip


def test_a_wait_that_is_not_whole_minutes_keeps_its_seconds():
    """A policy of 30 s, 60 s and 90 s: the 90 s level must not read "1 min" as the 60 s one
    does (a new user's trial), nor 5m30s "5 min"."""
    waits = (90_000, 330_000, 3_630_000, 5_430_000, 60_500, 250)
    assert [fmt_after(ms) for ms in waits] == [
        "1 min 30 s", "5 min 30 s", "1 h 30 s", "1 h 30 min 30 s", "1 min 0.5 s", "250 ms",
    ]  # fmt: skip


def test_repeat_runs_the_levels_again_shifted_by_the_last_level():
    policy = {"levels": [{"after_ms": 5, "notify": ["a"]}, {"after_ms": 15, "notify": ["b"]},
                         {"after_ms": 30, "notify": ["c"]}], "repeat": 1}  # fmt: skip
    assert [(n, after) for n, after, _ in schedule(policy)] == [
        (1, 5), (2, 15), (3, 30), (4, 35), (5, 45), (6, 60),
    ]  # fmt: skip


WORLD = """\
components:
  - {id: api, kind: service}
teams:
  - name: web
    owns: [api]
    members: [{name: Ada}]
    escalation: "call Bo"
    escalation_policy:
      - {after: 5m, notify: [Ada]}
      - {after: 15m, notify: [{team: ops}]}
      - {after: 30m, notify: ["@channel"]}
    repeat: 1
  - name: ops
    members: [{name: Bo}]
default_team: ops
"""


def test_a_world_file_policy_is_checked_and_stored(tmp_path, graph):
    path = tmp_path / "world.yaml"
    path.write_text(WORLD)
    world = load_world(path)
    web = world.teams[0]
    assert web.policy_json() == (
        '{"levels": [{"after_ms": 300000, "notify": [{"person": "Ada"}]}, {"after_ms": 900000, '
        '"notify": [{"team": "ops"}]}, {"after_ms": 1800000, "notify": [{"channel": true}]}], '
        '"repeat": 1}'
    )
    assert world.teams[1].policy_json() is None
    import_world(graph, world)
    stored = graph.one("escalation_policy", {"team": "web"})
    assert stored["policy"] == web.policy_json()
    path.write_text(WORLD.replace("    repeat: 1\n", "").split("    escalation_policy:")[0]
                    + WORLD.split("    repeat: 1\n")[1])  # fmt: skip
    import_world(graph, load_world(path))  # the policy is gone from the file: gone from the graph
    assert graph.one("escalation_policy", {"team": "web"})["policy"] == ""


#: The trial's policy on checkout, as `with_policy` takes it, and in words.
TRIAL_POLICY = [("15s", ["Cy Example"]), ("30s", ["+platform"]), ("45s", ["@channel"])]
TRIAL_WORDS = [
    "after 15 s: Cy Example", "after 30 s: the on-call of platform", "after 45 s: @channel",
    "then the same levels 1 more time, each round 45 s after the one before",
]  # fmt: skip


def test_the_policy_is_said_in_the_import_summary_in_oncall_and_in_the_world(
    graph, falkordb, tenant, tmp_path
):
    """A new user's trial: no page showed the escalation policy, nor did the import summary
    mention it. The import says it was added, changed or removed; `blast-radius oncall`
    prints each team's levels under it, and the World page's data has them (test_web.py
    shows the page)."""
    world = load_world(demo_world_path())
    sources = sorted({c.source for c in world.components if c.source})

    def policy_said(levels: list[tuple[str, list[Any]]], repeat: int) -> list[str]:
        set_policy(world, levels, repeat)
        report = apply_world(graph, world, sources, explicit=True)
        said = [f"new {x}" for x in report.new] + [f"changed {x}" for x in report.changed]
        return [line for line in said if "escalation policy" in line]

    assert policy_said(TRIAL_POLICY, 1) == [
        f"new escalation policy of team checkout: {'; '.join(TRIAL_WORDS)}"
    ]
    assert policy_said(TRIAL_POLICY, 1) == []  # the same again: nothing to say
    assert policy_said(TRIAL_POLICY, 0) == [
        f"changed escalation policy of team checkout: {'; '.join(TRIAL_WORDS[:3])}"
    ]
    assert policy_said([], 0) == ["changed escalation policy of team checkout: removed"]
    with_policy(graph, TRIAL_POLICY, repeat=1)
    levels = {team.team: team.escalation for team in coverage(graph)}
    assert levels["checkout"] == TRIAL_WORDS and levels["platform"] == []
    shown = {t["name"]: t["levels"] for t in overview.world(graph, 0)["teams"]}
    assert shown == levels
    done = cli("oncall", FALKORDB_URL=falkordb.url, BLAST_DEFAULT_TENANT=tenant,
               BLAST_DATA_DIR=str(tmp_path))  # fmt: skip
    lines = done.stdout.splitlines()
    at = next(n for n, line in enumerate(lines) if line.startswith("  checkout: "))
    assert lines[at + 1] == f"    escalation: {'; '.join(TRIAL_WORDS)}", done.stdout
    assert not any(line.startswith("    escalation") for line in lines[at + 2 :]), done.stdout


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ("{after: 5m, notify: [Ada]}", "5m, not later than level 1"),  # 5m after 5m
        ("{after: 5 min, notify: [Ada]}", "is not a duration like 30s"),
        ("{after: 20m, notify: [Adda]}", "'Adda' is no member of any team (did you mean 'Ada'?)"),
        ("{after: 20m, notify: [{team: opz}]}", "'opz' is not a team in `teams`"),
        ("{after: 20m, notify: []}", "List should have at least 1 item"),
        ("{after: 20m, notify: [Ada], wait: 1}", "Extra inputs are not permitted"),
    ],
)
def test_topology_validate_names_a_bad_level_with_its_line(tmp_path, change, problem):
    text = WORLD.replace("{after: 15m, notify: [{team: ops}]}", change)
    path = tmp_path / "world.yaml"
    path.write_text(text)
    with pytest.raises(TopologyError) as caught:
        load_world(path)
    assert len(caught.value.problems) == 1, caught.value.problems
    assert caught.value.problems[0].startswith(f"{path}:10: teams.0.escalation_policy.1")
    assert problem in caught.value.problems[0]


def test_topology_validate_lists_every_problem_of_a_policy_in_one_run(tmp_path):
    """A new user's trial: a bad duration hid the policy's three other problems (a person who
    is no member, a team that is not one, levels out of order) until it was fixed; a member
    with a bad field hid the team's other problems. One run lists all, each with its line."""
    text = WORLD.replace(
        """      - {after: 5m, notify: [Ada]}
      - {after: 15m, notify: [{team: ops}]}
      - {after: 30m, notify: ["@channel"]}
""",
        """      - {after: 15 minutes, notify: [Adda]}
      - {after: 30m, notify: [{team: opz}]}
      - {after: 10m, notify: ["@channel"]}
""",
    ).replace("members: [{name: Bo}]", "members: [{name: Bo, email: [bo]}]\n    owns: [apy]")
    path = tmp_path / "world.yaml"
    path.write_text(text)
    with pytest.raises(TopologyError) as caught:
        load_world(path)
    assert caught.value.problems == [
        f"{path}:9: teams.0.escalation_policy.0.after: Value error, '15 minutes' is not a "
        "duration like 30s, 5m, 1h or 1h30m",
        f"{path}:14: teams.1.members.0.email: Input should be a valid string",
        f"{path}:9: teams.0.escalation_policy.0.notify.0: 'Adda' is no member of any team (did "
        "you mean 'Ada'?); give a person's name, {team: NAME} or '@channel'",
        f"{path}:10: teams.0.escalation_policy.1.notify.0: 'opz' is not a team in `teams` (did "
        "you mean 'ops'?)",
        f"{path}:11: teams.0.escalation_policy.2.after: level 3 of 'web' is due after 10m, not "
        "later than level 2 (30m): list levels in the order they run, each `after` larger "
        "than the one before",
        f"{path}:15: teams.1.owns.0: team 'ops' owns unknown component 'apy' (did you mean 'api'?)",
    ]


def test_repeat_without_a_policy_is_a_problem(tmp_path):
    path = tmp_path / "world.yaml"
    path.write_text(WORLD.replace("  - name: ops\n", "  - name: ops\n    repeat: 2\n"))
    with pytest.raises(TopologyError, match=r"team 'ops' has `repeat` but no `escalation_policy`"):
        load_world(path)


def test_an_unacknowledged_page_escalates_once_per_level_in_order(runtime, graph):
    with_policy(graph, [("1s", ["Di Example"]), ("2s", ["+platform"]), ("3s", ["@channel"])])
    incident_id = page(runtime, graph)
    stop = threading.Event()
    worker = runtime.make_worker("responder")
    thread = threading.Thread(target=worker.run, args=(stop,))
    thread.start()
    try:
        wait_for("the policy run", lambda: task(graph, incident_id, "escalate")["status"] == "done")
    finally:
        stop.set()
        thread.join()
    entries = {e["intent_id"]: e for e in runtime.outbox.entries()}
    assert levels_sent(runtime.outbox, incident_id) == [
        f"incident:{incident_id}:escalate:{n}" for n in (1, 2, 3)
    ]
    first = entries[f"incident:{incident_id}:escalate:1"]
    assert first["person"] == "Di Example" and first["reply_to"] == (
        f"outbox:incident:{incident_id}:initial-notification"
    )
    assert "Escalation level 1 of 3" in first["text"] and "within 1 s of the page" in first["text"]
    second = entries[f"incident:{incident_id}:escalate:2"]
    assert "Hal Example (on call for platform)" in second["text"]
    third = entries[f"incident:{incident_id}:escalate:3"]
    assert "<!channel>" in third["text"] and third["reply_to"] is None
    assert third["channel"] == "#checkout-oncall"  # the top of the paged team's channel
    rows = graph.rows("incident_actions", {"incident_id": incident_id})
    actions = {a["intent_id"]: a for a in rows}
    paged_at = actions[f"incident:{incident_id}:initial-notification"]["reserved_at"]
    for n in (1, 2, 3):
        level = actions[f"incident:{incident_id}:escalate:{n}"]
        assert (level["kind"], level["status"]) == ("escalate", "sent")
        assert level["reserved_at"] >= paged_at + n * 1000  # on the database's clock
    done = task(graph, incident_id, "escalate")
    assert done["outcome"] == "escalated through the last level"
    state = graph.one("escalation_state", {"incident_id": incident_id})
    assert state["escalation_level"] == 3


def test_a_worker_killed_mid_policy_neither_repeats_nor_skips_a_level(runtime, graph, spawn):
    # two levels, so the replacement sends the last one in the claim that took over: a third
    # level not yet due would pause the task, and its next claim is not a take-over
    with_policy(graph, [("1s", ["Di Example"]), ("2s", ["Cy Example"])])
    incident_id = page(runtime, graph)
    # steps of the escalate task: 1 the policy, 2 level 1's targets, 3 level 2's: it halts after
    # sending level 1, at level 2, and is killed there
    doomed = spawn("worker", "--role", "responder", BLAST_LEASE_MS="500",
                   BLAST_CHAOS_HALT_AFTER_STEP="3")  # fmt: skip
    escalate_id = task(graph, incident_id, "escalate")["id"]
    wait_for("level 2's step", lambda: len(graph.rows("task_steps", {"task_id": escalate_id})) == 3)
    doomed.send_signal(signal.SIGKILL)
    assert doomed.wait() == -signal.SIGKILL
    assert levels_sent(runtime.outbox, incident_id) == [f"incident:{incident_id}:escalate:1"]
    replacement = spawn("worker", "--role", "responder", BLAST_LEASE_MS="500")
    wait_for("the policy run", lambda: task(graph, incident_id, "escalate")["status"] == "done")
    replacement.send_signal(signal.SIGTERM)
    assert replacement.wait(15) == 0
    assert levels_sent(runtime.outbox, incident_id) == [
        f"incident:{incident_id}:escalate:{n}" for n in (1, 2)
    ]
    done = task(graph, incident_id, "escalate")
    assert done["taken_over"] is True and done["outcome"] == "escalated through the last level"


def test_an_acknowledgement_racing_a_level_stops_it(runtime, graph, spawn):
    with_policy(graph, [("1s", ["Di Example"]), ("2s", ["Cy Example"])])
    incident_id = page(runtime, graph)
    # halts with level 1's targets checkpointed, about to reserve it: the ack lands there
    racer = spawn("worker", "--role", "responder", BLAST_LEASE_MS="500",
                  BLAST_CHAOS_HALT_AFTER_STEP="2")  # fmt: skip
    escalate_id = task(graph, incident_id, "escalate")["id"]
    wait_for("level 1's step", lambda: len(graph.rows("task_steps", {"task_id": escalate_id})) == 2)
    acknowledge(graph, incident_id, "Cy Example")
    racer.send_signal(signal.SIGKILL)
    racer.wait()
    worker = runtime.make_worker("responder")  # takes the task over once the lease expired

    def stopped() -> bool:
        worker.run_once()
        return bool(task(graph, incident_id, "escalate")["status"] == "done")

    wait_for("the policy stopped", stopped)
    assert levels_sent(runtime.outbox, incident_id) == []
    assert task(graph, incident_id, "escalate")["outcome"].startswith("acknowledged by Cy Example")
    actions = [a["intent_id"] for a in graph.rows("incident_actions", {"incident_id": incident_id})]
    assert not [a for a in actions if ":escalate:" in a]  # never reserved after the ack


def test_an_acknowledgement_after_a_level_stops_the_next(runtime, graph):
    with_policy(graph, [("1s", ["Di Example"]), ("3s", ["Cy Example"])])
    incident_id = page(runtime, graph)
    stop = threading.Event()
    thread = threading.Thread(target=runtime.make_worker("responder").run, args=(stop,))
    thread.start()
    try:
        wait_for("level 1", lambda: levels_sent(runtime.outbox, incident_id))
        acknowledge(graph, incident_id, "Di Example")
        wait_for("the policy stopped",
                 lambda: task(graph, incident_id, "escalate")["status"] == "done", 10)  # fmt: skip
    finally:
        stop.set()
        thread.join()
    assert levels_sent(runtime.outbox, incident_id) == [f"incident:{incident_id}:escalate:1"]
    assert task(graph, incident_id, "escalate")["outcome"].startswith("acknowledged by Di Example")


def test_no_policy_no_escalation_task(runtime, graph):
    incident_id = page(runtime, graph)
    kinds = {t["kind"] for t in graph.rows("incident_tasks", {"incident_id": incident_id})}
    assert "escalate" not in kinds


def test_a_resolve_stops_the_policy(runtime, graph):
    with_policy(graph, [("1s", ["Di Example"]), ("2s", ["Cy Example"])])
    incident_id = page(runtime, graph)
    body = json.loads(alert_body("payment"))
    body["alerts"][0] |= {"status": "resolved", "endsAt": "2026-11-01T00:05:00Z"}
    triage(graph, normalize(parse_body(json.dumps(body).encode()), "unknown"), 900_000)
    worker = runtime.make_worker("responder")

    def stopped() -> bool:
        worker.run_once()
        return bool(task(graph, incident_id, "escalate")["status"] == "done")

    wait_for("the policy stopped", stopped)
    assert levels_sent(runtime.outbox, incident_id) == []
    assert task(graph, incident_id, "escalate")["outcome"] == "incident resolved"


def flap(graph: TenantGraph, worker: Any, incident_id: str) -> None:
    """Resolve the payment alert at 00:05, let the policy stop, fire it again at 00:07 (inside
    the 10-minute reopen window) and let the reopen notice go out."""
    for status, starts, ends in (("resolved", "00:00", "2026-11-01T00:05:00Z"),
                                 ("firing", "00:07", "0001-01-01T00:00:00Z")):  # fmt: skip
        body = json.loads(alert_body("payment"))
        body["alerts"][0] |= {"status": status, "startsAt": f"2026-11-01T{starts}:00Z",
                              "endsAt": ends}  # fmt: skip
        alerts = normalize(parse_body(json.dumps(body).encode()), "unknown")
        report = triage(graph, alerts, 900_000, reopen_ms=600_000)
        if status == "firing":
            assert report.reopened == [incident_id]

    def told() -> bool:
        worker.run_once()
        return bool(task(graph, incident_id, "notify_reopened")["status"] == "done")

    wait_for("the reopen notice", told)


def test_a_flap_nobody_acknowledged_runs_the_policy_again_from_the_reopen(runtime, graph):
    with_policy(graph, [("1s", ["Di Example"])])
    incident_id = page(runtime, graph)
    worker = runtime.make_worker("responder")
    flap(graph, worker, incident_id)
    rounds = {t["id"]: t for t in graph.rows("incident_tasks", {"incident_id": incident_id})
              if t["kind"] == "escalate"}  # fmt: skip
    again = f"escalate:{incident_id}:reopen:1"
    assert set(rounds) == {f"escalate:{incident_id}", again}
    assert rounds[f"escalate:{incident_id}"]["outcome"] in ("incident resolved", None)

    def round_done() -> bool:
        worker.run_once()
        rows = graph.rows("incident_tasks", {"incident_id": incident_id})
        return all(t["status"] == "done" for t in rows if t["kind"] == "escalate")

    wait_for("both rounds to finish", round_done)
    entries = {e["intent_id"]: e for e in runtime.outbox.entries()}
    assert levels_sent(runtime.outbox, incident_id) == []  # nothing of the first round
    level = entries[f"incident:{incident_id}:reopen:1:escalate:1"]
    assert level["person"] == "Di Example" and "within 1 s of its reopen" in level["text"]
    reopened = next(e for e in entries.values() if ":reopened:" in str(e["intent_id"]))
    assert "its escalation policy runs again from this reopen" in reopened["text"]
    rows = {t["id"]: t for t in graph.rows("incident_tasks", {"incident_id": incident_id})}
    assert rows[again]["outcome"] == "escalated through the last level"
    actions = {
        a["intent_id"]: a for a in graph.rows("incident_actions", {"incident_id": incident_id})
    }
    state = graph.one("escalation_state", {"incident_id": incident_id})
    sent_at = actions[f"incident:{incident_id}:reopen:1:escalate:1"]["reserved_at"]
    assert sent_at >= state["reopened_at"] + 1000  # counted from the reopen, database clock
    story = [e["text"] for e in events(graph, incident_id, None, "https://api.github.com")]
    assert "Escalated to level 1 (after a reopen): Di Example via outbox" in story


def test_a_flap_someone_acknowledged_stays_with_them(runtime, graph):
    with_policy(graph, [("1s", ["Di Example"])])
    incident_id = page(runtime, graph)
    acknowledge(graph, incident_id, "Bo Example")
    worker = runtime.make_worker("responder")
    flap(graph, worker, incident_id)
    kinds = [t["id"] for t in graph.rows("incident_tasks", {"incident_id": incident_id})
             if t["kind"] == "escalate"]  # fmt: skip
    assert kinds == [f"escalate:{incident_id}"]  # no second round
    reopened = next(e for e in runtime.outbox.entries() if ":reopened:" in str(e["intent_id"]))
    assert "escalation policy" not in reopened["text"]


def test_each_kind_has_one_agent(runtime):
    worker = runtime.make_worker()
    assert type(worker.by_kind["escalate"]).__name__ == "Escalator"
    assert type(worker.by_kind["notify_reopened"]).__name__ == "Reopener"
    assert type(worker.by_kind["respond"]).__name__ == "Responder"
    assert "escalate" in runtime.make_worker("responder").kinds
