"""The command line for people, run as a user runs it
(`python -m gateway.cli`, a separate process): `--version`, one line and a non-zero exit for
the failures a user can fix, `incidents` / `incident` reading the real graph, and `serve`
summing its worker processes' series in `/metrics`."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest

from adapters.falkordb import EmbeddedFalkorDB, GraphStore, TenantGraph, free_port
from agents.learn import verdicts
from agents.respond import lifecycle
from agents.triage.triage import triage
from gateway import __version__
from gateway.http.payloads import normalize, parse_body
from gateway.world import demo_world_path
from tests.conftest import alert_body, clean_env, demo_graph
from tests.test_webhook import grafana_contact_point_test

ROOT = Path(__file__).resolve().parents[1]
WORLD = ROOT / "gateway/data/otel-demo/topology.yaml"


def cli(*args: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess[str]:
    """Run `blast-radius ARGS` from this checkout with only `env` added to a clean environment."""
    base = clean_env(("BLAST_", "FALKORDB_"))
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", *args], cwd=ROOT, env=base | env,
        capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


def one_line_failure(done: subprocess.CompletedProcess[str], *words: str) -> str:
    """The last stderr line of a failed command, checked to be one plain line."""
    assert done.returncode == 1, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr and "│" not in done.stderr, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert all(w in last for w in words), last
    return last


def test_version() -> None:
    done = cli("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"blast-radius {__version__}"
    assert __version__ == "0.1.0"


def test_help_is_for_users() -> None:
    done = cli("--help")
    assert done.returncode == 0 and "pages the on-call person" in done.stdout
    assert "Settings` is built" not in done.stdout  # the developers' docstring stays out
    # a docstring as help keeps its line breaks in the command list: every command says
    # its help in one string
    from gateway.cli.commands import app, playbook_app, topology_app

    commands = app.registered_commands + topology_app.registered_commands
    for command in commands + playbook_app.registered_commands:
        assert command.help and "\n" not in command.help, command.callback
    # --tenant says whether the command reads or writes, the two defaults that differ
    for args in (["incidents"], ["incident"], ["oncall"], ["playbook", "list"]):
        assert "--tenant" in (said := cli(*args, "--help").stdout) and "Tenant to read" in said
    for name in ("import", "discover", "changes"):
        assert "Tenant to write to" in cli("topology", name, "--help").stdout, name


def test_a_database_that_does_not_answer_is_one_line_for_every_command(tmp_path: Path) -> None:
    dead = f"redis://127.0.0.1:{free_port()}"
    for args in (["topology", "import", str(WORLD)], ["incidents"], ["incident", "inc-1"],
                 ["worker", "--burst"], ["serve", "--workers", "0"]):  # fmt: skip
        done = cli(*args, FALKORDB_URL=dead, BLAST_DATA_DIR=str(tmp_path))
        one_line_failure(done, dead.removeprefix("redis://"), "Connection refused")


def test_a_worker_on_a_data_folder_that_does_not_exist_refuses(tmp_path: Path) -> None:
    """A misspelt --data-dir must not start an empty embedded database that the worker then
    claims nothing from, looking healthy: exit 2, nothing created."""
    typo = tmp_path / "dtcc"
    done = cli("worker", "--burst", "--data-dir", str(typo))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith(f"worker: data folder {typo} does not exist"), done.stderr
    assert not typo.exists()


def test_a_data_folder_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for args in (["serve"], ["topology", "import", str(WORLD)]):
        done = cli(*args, BLAST_DATA_DIR=str(blocker / "data"))
        one_line_failure(done, "data folder", "cannot be written")


def test_read_commands_refuse_a_data_folder_that_does_not_exist(tmp_path: Path) -> None:
    """A misspelt --data-dir: `incidents`, `incident`, `oncall` and `playbook list` say so, as
    doctor does, and exit 2, rather than start an empty database there and answer "no
    incidents"."""
    typo = tmp_path / "dta"
    read = [("incidents", ["incidents"]), ("incident", ["incident", "inc-1"]),
            ("oncall", ["oncall"]), ("playbook list", ["playbook", "list"])]  # fmt: skip
    for name, args in read:
        done = cli(*args, "--data-dir", str(typo))
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert done.stderr == (
            f"{name}: data folder {typo} does not exist (BLAST_DATA_DIR or --data-dir: a "
            "typo? serve and topology import create it)\n"
        )
        assert done.stdout == "" and not typo.exists(), args


def test_a_port_in_use_is_one_line(tmp_path: Path, falkordb: EmbeddedFalkorDB) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = cli("serve", "--port", str(port), "--workers", "0",
                   FALKORDB_URL=falkordb.url, BLAST_DATA_DIR=str(tmp_path))  # fmt: skip
    one_line_failure(done, f"cannot listen on 127.0.0.1:{port}", "in use")


def test_a_file_that_cannot_be_read_is_one_line(tmp_path: Path, falkordb: EmbeddedFalkorDB):
    folder = tmp_path / "world.yaml"
    folder.mkdir()  # a folder where a file is expected: unreadable even for root
    done = cli("topology", "import", str(folder), FALKORDB_URL=falkordb.url,
               BLAST_DATA_DIR=str(tmp_path))  # fmt: skip
    assert done.returncode in (1, 2) and "Traceback" not in done.stderr
    assert str(folder) in done.stderr.strip().splitlines()[-1]


def falkordb_graphs(server: EmbeddedFalkorDB) -> list[str]:
    """The graphs the server holds (`GRAPH.LIST`)."""
    import redis

    with redis.Redis(port=server.port, decode_responses=True) as client:
        return list(client.execute_command("GRAPH.LIST"))


def test_oncall_prints_the_time_asked_in_utc_to_the_minute(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tenant: str, tmp_path: Path
) -> None:
    done = cli("oncall", "--at", "2099-12-24T03:00:07.25+01:00", FALKORDB_URL=falkordb.url,
               BLAST_DEFAULT_TENANT=tenant, BLAST_DATA_DIR=str(tmp_path))  # fmt: skip
    assert done.stdout.splitlines()[0] == f"org_{tenant} at 2099-12-24 02:00 UTC:", done.stdout
    # beyond the shifts kept: unknown, said per team, not NOBODY nor a PROBLEM (exit 0)
    assert done.returncode == 0, done
    assert "NOBODY" not in done.stdout and "PROBLEM" not in done.stdout, done.stdout
    until = (datetime.now(UTC) + timedelta(days=90)).strftime("%Y-%m-%d")
    assert f"  checkout: unknown: shifts are known until {until} " in done.stdout, done.stdout
    assert done.stdout.count(": unknown: shifts are known") == done.stdout.count("\n") - 1
    # 85 days ahead: the 14 days checked stop where the shifts kept stop, so no gap shows there
    soon = (datetime.now(UTC) + timedelta(days=85)).isoformat()
    near = cli("oncall", "--at", soon, FALKORDB_URL=falkordb.url,
               BLAST_DEFAULT_TENANT=tenant, BLAST_DATA_DIR=str(tmp_path))  # fmt: skip
    assert near.returncode == 0 and "PROBLEM" not in near.stdout, near.stdout
    assert "unknown" not in near.stdout and "NOBODY" not in near.stdout, near.stdout
    typo = cli("oncall", "--tenant", "nosuch", FALKORDB_URL=falkordb.url,
               BLAST_DEFAULT_TENANT=tenant, BLAST_DATA_DIR=str(tmp_path))  # fmt: skip
    # a misspelt tenant is refused, and no empty graph is made for it
    assert typo.returncode == 2, typo
    assert typo.stderr == (
        f"oncall: unknown tenant 'nosuch': no graph org_nosuch; configured: {tenant}\n"
    ), typo
    assert "org_nosuch" not in falkordb_graphs(falkordb)


@pytest.mark.parametrize("command", [("oncall",), ("topology", "import", "WORLD")])
def test_a_tenant_name_that_cannot_be_one_is_a_clear_error(
    falkordb: EmbeddedFalkorDB, tmp_path: Path, command: tuple[str, ...]
) -> None:
    args = [str(demo_world_path()) if a == "WORLD" else a for a in command]
    done = cli(*args, "--tenant", "Bad Name", FALKORDB_URL=falkordb.url,
               BLAST_DATA_DIR=str(tmp_path))  # fmt: skip
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr and "│" not in done.stderr, done.stderr
    assert done.stderr.strip() == (
        f"{' '.join(command[:2]) if command[0] == 'topology' else 'oncall'}: --tenant 'Bad Name' "
        "is not a tenant name (lower-case letters, digits, - and _, at most 63)"
    )


def test_incidents_and_incident_read_the_graph(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tenant: str, tmp_path: Path
) -> None:
    report = triage(graph, normalize(parse_body(alert_body("payment")), "unknown"), 900_000)
    (opened,) = report.opened
    env = {"FALKORDB_URL": falkordb.url, "BLAST_DEFAULT_TENANT": tenant,
           "BLAST_DATA_DIR": str(tmp_path)}  # fmt: skip
    listed = cli("incidents", "--status", "open", "--json", **env)
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)["incidents"]
    assert (row["id"], row["status"], row["firing"], row["alerts"]) == (opened, "open", 1, 1)
    table = cli("incidents", **env).stdout.splitlines()
    assert table[0].split()[:3] == ["ID", "STATUS", "SEVERITY"]
    assert table[1].startswith(opened) and "1/1" in table[1]
    assert cli("incidents", "--status", "resolved", **env).stdout.strip() == "no incidents"
    shown = cli("incident", opened, **env)
    assert shown.returncode == 0 and shown.stdout.startswith(f"{opened}  HighErrorRate")
    assert "firing   HighErrorRate on payment" in shown.stdout
    assert "\npaged: " not in shown.stdout  # no worker has sent the page yet
    assert cli("worker", "--burst", "--quiet", **env).returncode == 0
    shown = cli("incident", opened, **env)
    paged = [line for line in shown.stdout.splitlines() if line.startswith("paged: ")]
    assert len(paged) == 1, shown.stdout
    person = paged[0].removeprefix("paged: ").split(" (")[0]
    assert person in ("Cy Example", "Di Example")  # checkout's on-call
    # no Slack here: the page is in the outbox file only, and both say so rather than read as
    # someone woken (a new user's trial: "paged Di Example"), as the web page's "Delivered ✓
    # to outbox" does
    assert paged[0] == (
        f"paged: {person} (checkout, #checkout-oncall), outbox only (the page is in the local "
        "outbox file: no one was messaged)"
    ), shown.stdout
    (row,) = cli("incidents", **env).stdout.splitlines()[1:]
    assert f"  paged {person} (outbox only)  " in row, row  # who, as README says
    # resolved, who was paged stays in the list (a trial's finding: `-` once resolved)
    lifecycle.resolve(graph, opened, "Di Example")
    (row,) = cli("incidents", **env).stdout.splitlines()[1:]
    assert "  resolved  " in row and f"  paged {person} (outbox only)  " in row, row
    assert json.loads(cli("incident", opened, "--json", **env).stdout)["id"] == opened
    counted = cli("incident", opened, "--alerts", "0", **env).stdout  # counts, none listed
    assert "\nalerts (1, 1 firing), by component and alertname:\n" in counted
    assert "  1  payment  HighErrorRate\n… and 1 more: --alerts N lists more" in counted
    missing = cli("incident", "inc-nope", **env)
    assert missing.returncode == 1 and "no incident 'inc-nope'" in missing.stderr


def test_incidents_and_incident_show_a_verdict_as_the_web_page_does(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tenant: str, tmp_path: Path
) -> None:
    """A corrected incident reads "corrected to x" in `incidents` and `incident`, not the
    finding's cause, as the web list does (a verdict outranks the finding); a later
    confirmation outranks the correction: "x (confirmed)"."""
    env = {"FALKORDB_URL": falkordb.url, "BLAST_DEFAULT_TENANT": tenant,
           "BLAST_DATA_DIR": str(tmp_path)}  # fmt: skip
    (opened,) = triage(graph, normalize(parse_body(alert_body("payment")), "u"), 900_000).opened
    assert cli("worker", "--burst", "--quiet", **env).returncode == 0
    assert graph.one("incident_get", {"incident_id": opened})["root_cause"] == "payment"
    now = int(time.time() * 1000)

    def verdict(n: int, said: Literal["confirmed", "rejected"], actual: str | None) -> None:
        verdicts.record(graph, verdicts.Verdict(
            id=f"v{n}", incident_id=opened, verdict=said, actual_cause=actual, by="U0PRIYA",
            by_name="Priya Tester", at=now + n, text="", source="api", event_id=f"e{n}",
        ))  # fmt: skip

    verdict(0, "rejected", "cart")
    (row,) = cli("incidents", **env).stdout.splitlines()[1:]
    assert "  corrected to cart  " in row and "payment" not in row, row
    (listed,) = json.loads(cli("incidents", "--json", **env).stdout)["incidents"]
    assert listed["verdict"] == {"verdict": "rejected", "actual_cause": "cart",
                                 "by": "Priya Tester"}  # fmt: skip
    shown = cli("incident", opened, **env).stdout.splitlines()
    assert shown[2] == ("root cause: corrected to cart by Priya Tester (the finding: "
                        "payment, low confidence 0.45)"), shown  # fmt: skip
    verdict(1, "confirmed", None)
    (row,) = cli("incidents", **env).stdout.splitlines()[1:]
    assert "  payment (confirmed)  " in row, row
    shown = cli("incident", opened, **env).stdout.splitlines()
    assert shown[2].startswith("root cause: payment (confirmed) by Priya Tester"), shown


def test_incidents_lists_grafana_s_contact_point_test_as_a_test_not_inconclusive(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tenant: str, tmp_path: Path
) -> None:
    """A new user's trial: `incidents` listed Grafana's contact-point test as `inconclusive`
    while `incident`, the web page, the page and the ticket said it was a test."""
    env = {"FALKORDB_URL": falkordb.url, "BLAST_DEFAULT_TENANT": tenant,
           "BLAST_DATA_DIR": str(tmp_path)}  # fmt: skip
    body = json.dumps(grafana_contact_point_test()).encode()
    (tested,) = triage(graph, normalize(parse_body(body), "u"), 900_000).opened
    (real,) = triage(graph, normalize(parse_body(alert_body("payment")), "u"), 900_000).opened
    assert cli("worker", "--burst", "--quiet", **env).returncode == 0
    rows = {line.split()[0]: line for line in cli("incidents", **env).stdout.splitlines()[1:]}
    assert "  none: a test notification, nothing is broken  " in rows[tested], rows[tested]
    assert "inconclusive" not in rows[tested]
    assert "  payment (low confidence 0.45)  " in rows[real], rows[real]
    listed = json.loads(cli("incidents", "--json", **env).stdout)["incidents"]
    assert {r["id"]: r["contact_point_test"] for r in listed} == {tested: True, real: False}


def test_playbook_list_shows_memory_its_ids_trust_who_taught_it_and_why_it_retired(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tenant: str, tmp_path: Path
) -> None:
    """A new user's trial: `playbook` had only `restore`, so nobody on the command line could
    see which playbooks exist, their trust, why one retired, or the id `restore` takes. One
    learned from a confirmed verdict and one a person wrote (through the API's query, with an
    ESC sequence and a bidirectional override in its title), then retired: the default lists
    the active one and counts the other; `--status all` both, with the reason; `--component`
    filters; every text is escaped; `restore` of an unknown id points at the list."""
    env = {"FALKORDB_URL": falkordb.url, "BLAST_DEFAULT_TENANT": tenant,
           "BLAST_DATA_DIR": str(tmp_path)}  # fmt: skip
    (opened,) = triage(graph, normalize(parse_body(alert_body("payment")), "u"), 900_000).opened
    assert cli("worker", "--burst", "--quiet", **env).returncode == 0
    verdicts.record(graph, verdicts.Verdict(
        id="v0", incident_id=opened, verdict="confirmed", actual_cause=None, by="U0PRIYA",
        by_name="Priya Tester", at=int(time.time() * 1000), text="", source="api", event_id="e0",
    ))  # fmt: skip
    assert cli("worker", "--burst", "--quiet", **env).returncode == 0  # the learn task
    written = {  # POST /api/v1/playbooks's parameters (gateway/http/playbooks.py)
        "id": "checkout-restart", "component": "checkout", "failure_kind": "errors",
        "title": "restart checkout \x1b[2J\u202eafter a bad deploy of its config map",
        "checks_json": '[{"type": "alert_any"}]', "author": "Dee Example",
        "remediation_json": None, "remediation_type": None, "max_playbooks": 100,
    }  # fmt: skip
    assert graph.one("plant_playbook", written)["status"] == "active"
    graph.one("retire_playbook", {"id": "checkout-restart", "reason": "wrong fix\nsee #12",
                                  "by": "Lu"})  # fmt: skip
    learned = f"playbook:{opened}:payment"
    assert len(learned) == 33  # the id column's width below
    listed = cli("playbook", "list", **env)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        "ID                                 STATUS  COMPONENT  TRUST  HELPED  MISLED  TITLE"
        "              NOTES",
        f"{learned}  active  payment    0.50   0       0       errors on payment  "
        f"learned from {opened}, confirmed by Priya Tester",
        "not shown: 1 retired (--status all lists them)",
    ]
    # the title is cut where the columns before the notes reach 120 characters; the notes
    # and the retire reason are whole, each escaped (no ESC or U+202E reaches the terminal)
    theirs = (
        "checkout-restart                   retired  checkout   0.50   0       0       "
        "restart checkout \\x1b[2J\\u202eafter a bad…  written by Dee Example; retired: "
        "wrong fix\\nsee #12"
    )
    every = cli("playbook", "list", "--status", "all", **env).stdout.splitlines()
    assert every == [
        "ID                                 STATUS   COMPONENT  TRUST  HELPED  MISLED  TITLE"
        "                                       NOTES",
        f"{learned}  active   payment    0.50   0       0       errors on payment"
        f"                           learned from {opened}, confirmed by Priya Tester",
        theirs,
    ]  # active first
    assert len(theirs.split("  written by")[0]) == 120
    retired = cli("playbook", "list", "--status", "retired", "--component", "checkout", **env)
    assert retired.stdout.splitlines() == [
        "ID                STATUS   COMPONENT  TRUST  HELPED  MISLED  TITLE"
        "                                                        NOTES",
        "checkout-restart  retired  checkout   0.50   0       0       restart checkout "
        "\\x1b[2J\\u202eafter a bad deploy of its co…  written by Dee Example; retired: "
        "wrong fix\\nsee #12",
    ]
    assert cli("playbook", "list", "--component", "checkout", **env).stdout == (
        "No active playbooks on checkout.\nnot shown: 1 retired (--status all lists them)\n"
    )
    assert cli("playbook", "list", "--component", "cart", **env).stdout == "No playbooks on cart.\n"
    wrong = cli("playbook", "list", "--status", "gone", **env)
    assert (wrong.returncode, wrong.stderr) == (
        2, "--status must be active, superseded, retired or all, not 'gone'\n"
    )  # fmt: skip
    unknown = cli("playbook", "restore", "checkout-restrat", **env)
    assert (unknown.returncode, unknown.stderr) == (
        1, f"playbook restore: no playbook 'checkout-restrat' in org_{tenant}: `blast-radius "
        "playbook list --status retired` lists the retired ones\n",
    )  # fmt: skip


def test_playbook_list_says_a_correction_as_the_memory_page_does() -> None:
    """A playbook learned from a correction names who corrected the finding and the cause the
    finding had named; a superseded one names its newer version."""
    from gateway.cli.playbook_text import notes

    row = {"status": "superseded", "learned_from": "inc-1", "lesson": "corrected",
           "confirmed_by": "Sam SRE", "corrected_from": "payment"}  # fmt: skip
    assert notes(row, "playbook:inc-2:cart") == (
        "learned from inc-1, corrected by Sam SRE (the finding had named payment); superseded "
        "by playbook:inc-2:cart"
    )


def test_read_commands_find_a_tenant_only_serve_s_environment_names(tmp_path: Path) -> None:
    """A world and incidents of `acme` in a database whose shell configures no tenant (so
    `demo`): the read commands find acme's graph, say it is not configured, and ask which
    when the database holds several."""
    server = EmbeddedFalkorDB(tmp_path / "db")
    server.start()
    store = GraphStore(server.url)
    try:
        graph = demo_graph(store, "acme")
        (opened,) = triage(graph, normalize(parse_body(alert_body("payment")), "u"), 900_000).opened
        env = {"FALKORDB_URL": server.url, "BLAST_DATA_DIR": str(tmp_path)}
        listed = cli("incidents", **env)
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.splitlines()[1].startswith(opened), listed.stdout
        assert "reading tenant 'acme', the only one here, which is not configured" in listed.stderr
        named = cli("incidents", "--tenant", "acme", **env)
        assert named.returncode == 0 and opened in named.stdout, named.stderr
        assert "tenant 'acme' has a graph here but is not configured" in named.stderr
        shown = cli("incident", opened, **env)
        assert shown.returncode == 0 and shown.stdout.startswith(opened), shown.stderr
        oncall = cli("oncall", **env)
        assert oncall.stdout.startswith("org_acme at "), oncall.stdout
        assert "  checkout: " in oncall.stdout and "has no teams" not in oncall.stdout
        demo_graph(store, "other")
        several = cli("incidents", **env)
        assert several.returncode == 2, several
        assert several.stderr == (
            "incidents: no graph of demo here; tenants with a graph here: acme, other: say "
            "which with --tenant\n"
        )
        assert store.tenants() == ["acme", "demo", "other"]  # demo: configured, empty
    finally:
        store.close()
        server.stop()


def test_with_two_tenants_the_read_commands_name_them_and_an_id_finds_its_own(
    tmp_path: Path,
) -> None:
    """A trial: with acme and globex configured and no --tenant, `incidents` said "unknown
    tenant 'demo'" (the built-in default, never set) and `incident ID` failed alike. Now
    `incidents` names the configured tenants, and the id alone finds the graph holding it."""
    server = EmbeddedFalkorDB(tmp_path / "db")
    server.start()
    store = GraphStore(server.url)
    try:
        demo_graph(store, "acme")
        graph = demo_graph(store, "globex")
        (opened,) = triage(graph, normalize(parse_body(alert_body("payment")), "u"), 900_000).opened
        env = {"FALKORDB_URL": server.url, "BLAST_DATA_DIR": str(tmp_path),
               "BLAST_WEBHOOK_TOKENS": "acme=a8f3k2m9x7q1w5e4,globex=z9y8x7w6v5u4t3s2"}  # fmt: skip
        listed = cli("incidents", **env)
        assert (listed.returncode, listed.stderr) == (
            2, "incidents: 2 tenants configured: acme, globex: say which with --tenant\n"
        )  # fmt: skip
        chosen = cli("incidents", **env | {"BLAST_DEFAULT_TENANT": "initech"})
        assert chosen.stderr == (
            "incidents: BLAST_DEFAULT_TENANT 'initech' is not configured; 2 tenants configured: "
            "acme, globex: say which with --tenant\n"
        )
        shown = cli("incident", opened, **env)
        assert shown.returncode == 0 and shown.stdout.startswith(opened), shown.stderr
        missing = cli("incident", "inc-000000000000", **env)
        assert (missing.returncode, missing.stderr) == (
            1, "incident: no incident 'inc-000000000000' in the graph or archive of any "
            "configured tenant (acme, globex)\n",
        )  # fmt: skip
        twice = demo_graph(store, "acme")
        triage(twice, normalize(parse_body(alert_body("payment")), "u"), 900_000)
        twice._graph.query("MATCH (i:Incident) SET i.id = $id", {"id": opened})  # same id
        both = cli("incident", opened, **env)
        assert (both.returncode, both.stderr) == (
            2, f"incident: tenants acme, globex each have an incident {opened!r}: say which "
            "with --tenant\n",
        )  # fmt: skip
        assert cli("incident", opened, "--tenant", "globex", **env).returncode == 0
    finally:
        store.close()
        server.stop()


def test_with_json_logs_serve_s_start_up_lines_and_warnings_are_json(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tenant: str, tmp_path: Path
) -> None:
    """BLAST_LOG_FORMAT=json: "listening", the BLAST_WORKERS=0 warning and "stopped" are JSON
    records on stdout with the other log lines, not plain text on stderr."""
    env = clean_env(("BLAST_", "FALKORDB_", "PROMETHEUS_")) | {
        "FALKORDB_URL": falkordb.url, "BLAST_DEFAULT_TENANT": tenant, "BLAST_LOG_FORMAT": "json",
        "BLAST_DATA_DIR": str(tmp_path), "BLAST_WORKERS": "0", "BLAST_PORT": str(free_port()),
    }  # fmt: skip
    serve = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "serve"], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    records: list[dict[str, Any]] = []
    try:
        assert serve.stdout is not None
        deadline = time.monotonic() + 60
        while not any("BLAST_WORKERS=0" in r.get("message", "") for r in records):
            assert time.monotonic() < deadline and serve.poll() is None, records
            line = serve.stdout.readline()
            if line.startswith("{"):
                records.append(json.loads(line))
    finally:
        serve.send_signal(signal.SIGTERM)
        out, err = serve.communicate(timeout=30)
    records += [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    said = {r["message"].split(" ")[0]: r for r in records if r["logger"] == "gateway.cli"}
    assert said["listening"]["level"] == "INFO"
    assert said["BLAST_WORKERS=0:"]["level"] == "WARNING"
    assert said["stopped"]["level"] == "INFO"
    assert "blast-radius: warning" not in err and "listening on" not in err, err


def test_serve_says_an_ipv6_url_no_workers_and_an_empty_host_plainly(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tenant: str, tmp_path: Path
) -> None:
    port = free_port()
    env = clean_env(("BLAST_", "FALKORDB_", "PROMETHEUS_")) | {
        "FALKORDB_URL": falkordb.url, "BLAST_DEFAULT_TENANT": tenant,
        "BLAST_DATA_DIR": str(tmp_path), "BLAST_WORKERS": "0", "BLAST_CHAOS_STEP_DELAY_MS": "5",
        "BLAST_HEARTBEAT_TIMEOUT": "5s",
    }  # fmt: skip
    serve = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "serve", "--host", "::1", "--port", str(port)],
        cwd=ROOT, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert serve.stderr is not None
        lines = []
        deadline = time.monotonic() + 60
        while not any("warning: BLAST_WORKERS=0" in line for line in lines):
            assert time.monotonic() < deadline and serve.poll() is None, lines
            lines.append(serve.stderr.readline())
        (listening,) = [line for line in lines if "listening on" in line]
        assert f"listening on http://[::1]:{port} (" in listening
        assert ", 0 workers, " in listening
        assert lines[-1].strip() == (
            "blast-radius: warning: BLAST_WORKERS=0: no worker process runs here, so alerts are "
            "accepted but nobody is investigated or paged unless `blast-radius worker` runs "
            "against the same database elsewhere"
        )
        assert serve.stderr.readline().startswith(  # a test harness's knob, on: said
            "blast-radius: warning: BLAST_CHAOS_* settings are on"
        )
        # said right after; a serve that says nothing more is stopped (its readline ends) so
        # the test fails rather than hangs
        stopper = threading.Timer(60, serve.kill)
        stopper.start()
        try:
            said = serve.stderr.readline().strip()
        finally:
            stopper.cancel()
        assert said == f"blast-radius: warning: {SHORT_HEARTBEAT}"
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=30)
    empty = cli("serve", "--host", "", FALKORDB_URL=falkordb.url, BLAST_DATA_DIR=str(tmp_path))
    assert empty.returncode == 2, empty
    assert empty.stderr.startswith(
        "configuration error: refusing to listen on an empty host (BLAST_HOST='': every address) "
        "with no BLAST_WEBHOOK_TOKENS"
    ), empty.stderr


def test_import_counts_say_one_team_not_one_teams(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    world.write_text(
        "components:\n  - {id: api, kind: service}\n  - {id: db, kind: datastore}\n"
        "edges:\n  - {from: api, to: db, type: READS_WRITES}\n"
        "teams:\n  - {name: core, owns: [api, db], members: [{name: Al Smith}]}\n"
        "default_team: core\n"
    )
    done = cli("topology", "import", str(world), "--data-dir", str(tmp_path / "data"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        "imported into org_demo: 2 components, 1 edge, 1 team, 1 person, 0 playbooks, 0 shifts"
    )


def test_serve_sums_its_workers_metrics_and_stops_at_info(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tenant: str, tmp_path: Path
) -> None:
    port = free_port()
    log = tmp_path / "serve.log"
    base = clean_env(("BLAST_", "FALKORDB_", "PROMETHEUS_"))
    env = base | {
        "FALKORDB_URL": falkordb.url,
        "BLAST_DEFAULT_TENANT": tenant,
        "BLAST_DATA_DIR": str(tmp_path),
        "BLAST_PORT": str(port),
        "BLAST_WORKERS": "1",
    }
    # a serve that ended left its folder: cleaned; a running one's (this process stands for a
    # second serve on the same data folder) is kept
    stale = tmp_path / "metrics" / "serve-999999999" / "counter_999999.db"
    live = tmp_path / "metrics" / f"serve-{os.getpid()}" / "counter_1.db"
    for path in (stale, live):
        path.parent.mkdir(parents=True)
        path.write_bytes(b"old")
    with log.open("w") as out:
        serve = subprocess.Popen([sys.executable, "-m", "gateway.cli", "serve"], cwd=ROOT,
                                 env=env, stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/health/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        assert not stale.parent.exists() and live.exists()
        answer = httpx.post(f"{url}/api/v1/alerts", content=alert_body("payment"), timeout=30)
        assert answer.status_code == 200
        text = ""
        while time.monotonic() < deadline + 60:
            text = httpx.get(f"{url}/metrics", timeout=5).text
            if 'blast_tasks_claimed_total{kind="respond"} 1.0' in text:
                break
            time.sleep(0.3)
        assert 'blast_tasks_claimed_total{kind="investigate"} 1.0' in text  # a worker's series
        assert 'blast_planner_calls_total{planner="rules"} 1.0' in text
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(60)
    lines = log.read_text().splitlines()
    assert any(f"webhook: 1 alert for {tenant}, 1 new incident" in line for line in lines)
    assert any("INFO agents.respond.responder: paged" in line for line in lines), lines
    assert not [line for line in lines if " WARNING " in line or " ERROR " in line], lines
    assert not [line for line in lines if "holds no components" in line], lines
    assert lines[-1] == "blast-radius: stopped", lines
    assert serve.returncode == 0


def test_serve_warns_when_the_tenant_has_no_world(
    falkordb: EmbeddedFalkorDB, tmp_path: Path
) -> None:
    # e.g. the world was imported into another data folder: every alert would be unmatched
    port = free_port()
    log = tmp_path / "serve.log"
    base = clean_env(("BLAST_", "FALKORDB_", "PROMETHEUS_"))
    env = base | {
        "FALKORDB_URL": falkordb.url,
        "BLAST_DEFAULT_TENANT": f"empty{port}",
        "BLAST_DATA_DIR": str(tmp_path),
        "BLAST_PORT": str(port),
        "BLAST_WORKERS": "0",
    }
    with log.open("w") as out:
        serve = subprocess.Popen([sys.executable, "-m", "gateway.cli", "serve"], cwd=ROOT,
                                 env=env, stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "listening on" not in log.read_text():
            time.sleep(0.2)
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(60)
    text = log.read_text()
    assert f"org_empty{port} (FALKORDB_URL) holds no components" in text, text
    assert "blast-radius topology import FILE" in text
    assert serve.returncode == 0


def test_a_falkordb_url_that_is_no_url_is_a_configuration_error(tmp_path: Path) -> None:
    done = cli("incidents", FALKORDB_URL="localhost:6379", BLAST_DATA_DIR=str(tmp_path))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == (
        "configuration error: FALKORDB_URL: FALKORDB_URL must start with "
        "redis://, rediss://, unix://, falkor://"
    )  # no "Value error, ": every configuration error reads alike


def test_doctor_reports_an_invalid_setting_as_a_problem_line(tmp_path: Path) -> None:
    """doctor says an invalid value as it says every problem: a `PROBLEM  settings:` line on
    stdout and exit 1 (docs/operations.md), not serve's exit 2."""
    done = cli("doctor", "--data-dir", str(tmp_path), BLAST_PORT="abc")
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stdout.splitlines()[0].startswith(
        "PROBLEM  settings: BLAST_PORT: Input should be a valid integer"
    ), done.stdout
    slack = cli("doctor", "--data-dir", str(tmp_path),
                SLACK_BOT_TOKEN="xoxb-1234567890-abcdefghijkl")  # fmt: skip
    assert slack.returncode == 1, (slack.stdout, slack.stderr)
    (line,) = [line for line in slack.stdout.splitlines() if line.startswith("PROBLEM")]
    assert line.startswith("PROBLEM  settings: SLACK_BOT_TOKEN is set but"), line
    for run in (done, slack):
        assert "Value error" not in run.stdout and "Traceback" not in run.stderr
    assert "xoxb-1234567890-abcdefghijkl" not in slack.stdout + slack.stderr


def test_doctor_refuses_the_host_serve_refuses(falkordb, tmp_path: Path) -> None:
    """serve exits 2 on BLAST_HOST=0.0.0.0 with no webhook tokens; doctor with the same
    settings says so as a PROBLEM (exit 1), not `ok settings`."""
    env = {"FALKORDB_URL": falkordb.url, "BLAST_HOST": "0.0.0.0", "BLAST_PORT": str(free_port())}
    serve = cli("serve", "--data-dir", str(tmp_path), **env)
    assert serve.returncode == 2 and "refusing to listen on 0.0.0.0" in serve.stderr, serve
    done = cli("doctor", "--data-dir", str(tmp_path), **env)
    assert done.returncode == 1, done.stdout
    (line,) = [line for line in done.stdout.splitlines() if "settings:" in line]
    assert line.startswith("PROBLEM  settings: BLAST_HOST='0.0.0.0' needs BLAST_WEBHOOK_TOKENS")


#: What serve and doctor say of `BLAST_HEARTBEAT_TIMEOUT=5s` (docs/oncall.md).
SHORT_HEARTBEAT = (
    "BLAST_HEARTBEAT_TIMEOUT=5s is shorter than serve's 15 s heartbeat check: a silence is paged "
    "up to 15 s after it, and a timeout under Alertmanager's repeat_interval pages between two "
    "heartbeats of a working pipeline; use at least a few times the heartbeat route's "
    "repeat_interval (e.g. 10m)"
)


def test_a_heartbeat_timeout_of_zero_says_how_to_turn_the_check_off(tmp_path: Path) -> None:
    """A trial: `BLAST_HEARTBEAT_TIMEOUT=0` was refused as "'0' is not a duration", while
    `BLAST_REOPEN_WINDOW=0` means off; the refusal names the way off. A timeout shorter than
    serve's 15 s check is allowed (a trial may want a fast page) and said as a warning."""
    for zero in ("0", "0s"):
        done = cli("doctor", "--data-dir", str(tmp_path), BLAST_HEARTBEAT_TIMEOUT=zero)
        assert done.returncode == 1, (done.stdout, done.stderr)
        assert done.stdout.splitlines()[0] == (
            f"PROBLEM  settings: BLAST_HEARTBEAT_TIMEOUT: {zero!r} is no timeout (the check "
            "would page as soon as a heartbeat arrived); to turn the heartbeat check off, set "
            "BLAST_HEARTBEAT_ALERTNAME=off; else give a duration like 10m"
        ), done.stdout
    # the way off it names works (an empty value is the default, Watchdog, as for every setting)
    off = cli("doctor", "--data-dir", str(tmp_path / "missing"), BLAST_HEARTBEAT_ALERTNAME="off",
              BLAST_HEARTBEAT_TIMEOUT="5s")  # fmt: skip
    assert not [line for line in off.stdout.splitlines() if "HEARTBEAT" in line], off.stdout
    short = cli("doctor", "--data-dir", str(tmp_path / "missing"), BLAST_HEARTBEAT_TIMEOUT="5s")
    said = [line for line in short.stdout.splitlines() if line.startswith(("ok", "warning"))]
    assert [line for line in said if " settings: " in line][-1] == (
        f"warning  settings: {SHORT_HEARTBEAT}"
    ), short.stdout


def test_doctor_says_a_query_timeout_over_its_maximum_is_a_problem(tmp_path: Path) -> None:
    """A trial: doctor said ok for BLAST_QUERY_TIMEOUT_MS=9000 over BLAST_QUERY_TIMEOUT_MAX_MS
    (5000), a pair FalkorDB refuses (the embedded server exits at start)."""
    missing = str(tmp_path / "missing")
    done = cli("doctor", "--data-dir", missing, BLAST_QUERY_TIMEOUT_MS="9000")
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert [line for line in done.stdout.splitlines() if "QUERY_TIMEOUT" in line] == [
        "PROBLEM  settings: BLAST_QUERY_TIMEOUT_MS=9000 is over BLAST_QUERY_TIMEOUT_MAX_MS=5000: "
        "FalkorDB refuses a TIMEOUT_DEFAULT over TIMEOUT_MAX, so the embedded server (and "
        "`blast-radius falkordb`) exits at start; set BLAST_QUERY_TIMEOUT_MS at most "
        "BLAST_QUERY_TIMEOUT_MAX_MS"
    ], done.stdout
    equal = cli("doctor", "--data-dir", missing, BLAST_QUERY_TIMEOUT_MS="5000")
    assert "QUERY_TIMEOUT" not in equal.stdout, equal.stdout


def test_serve_and_import_refuse_a_query_timeout_over_its_maximum_in_doctor_s_words(
    tmp_path: Path,
) -> None:
    """A trial: serve and `topology import` started the embedded FalkorDB with the pair it
    refuses and said only "embedded FalkorDB exited with code 1; see …/falkordb.log". Both
    now refuse before starting it, with doctor's line; no server log is written."""
    said = (
        "blast-radius: BLAST_QUERY_TIMEOUT_MS=6000 is over BLAST_QUERY_TIMEOUT_MAX_MS=5000: "
        "FalkorDB refuses a TIMEOUT_DEFAULT over TIMEOUT_MAX, so the embedded server (and "
        "`blast-radius falkordb`) exits at start; set BLAST_QUERY_TIMEOUT_MS at most "
        "BLAST_QUERY_TIMEOUT_MAX_MS"
    )
    data = str(tmp_path / "data")
    serve = cli("serve", "--data-dir", data, "--port", str(free_port()), "--workers", "0",
                BLAST_QUERY_TIMEOUT_MS="6000", timeout=60)  # fmt: skip
    assert serve.returncode == 1, serve.stderr
    assert serve.stderr.strip().splitlines()[-1] == said, serve.stderr
    imported = cli("topology", "import", str(demo_world_path()), "--data-dir", data,
                   BLAST_QUERY_TIMEOUT_MS="6000", timeout=60)  # fmt: skip
    assert (imported.returncode, imported.stderr.strip()) == (1, said)
    assert not (tmp_path / "data" / "falkordb" / "falkordb.log").exists()


def test_blast_env_file_is_read_instead_of_the_working_directorys_env(tmp_path: Path) -> None:
    """The systemd units run in /var/lib/blast-radius: a stray `.env` there was read besides
    their env file. With `BLAST_ENV_FILE` (the units set it) only that file is read."""
    workdir, env_file = tmp_path / "work", tmp_path / "env"
    workdir.mkdir()
    (workdir / ".env").write_text("BLAST_PORT=7777\n")
    env_file.write_text(f"BLAST_PORT=9090\nBLAST_DATA_DIR={tmp_path / 'missing'}\n")
    env = clean_env(("BLAST_", "FALKORDB_")) | {"PYTHONPATH": str(ROOT)}

    def doctor(**more: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "gateway.cli", "doctor"], cwd=workdir, env=env | more,
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        return done.stdout

    said = doctor(BLAST_ENV_FILE=str(env_file))
    assert "127.0.0.1:9090/api/v1/alerts" in said and "7777" not in said, said
    (line,) = [x for x in said.splitlines() if " settings: " in x]
    assert line.startswith("ok       settings: ") and f"environment and {env_file} (" in line
    assert "127.0.0.1:7777/api/v1/alerts" in doctor()  # without it: ./.env, as before


def test_an_env_file_that_cannot_be_read_is_a_configuration_error(tmp_path: Path) -> None:
    for path, why in ((tmp_path / "missing.env", "No such file or directory"),
                      (tmp_path, "Is a directory")):  # fmt: skip
        done = cli("doctor", "--env-file", str(path))
        assert done.returncode == 2
        assert done.stderr.strip() == f"configuration error: env file {path}: {why}"


def test_an_env_file_line_that_sets_nothing_is_a_problem(tmp_path: Path) -> None:
    """A trial's env file: an unclosed quote and a line of words were skipped by python-dotenv
    (BLAST_WORKERS kept its default) while doctor's settings line said ok. Each is a PROBLEM
    naming its line and first word only, never the rest (it may be a secret)."""
    path = tmp_path / "env"
    path.write_text(
        f"BLAST_DATA_DIR={tmp_path / 'missing'}\nSLACK_BOT_TOKEN xoxb-not-shown-123456\n"
        'BLAST_WORKERS="2\n'
    )
    done = cli("doctor", "--env-file", str(path))
    assert done.returncode == 1, done.stderr
    problems = [line for line in done.stdout.splitlines() if line.startswith("PROBLEM  settings")]
    assert problems == [
        f"PROBLEM  settings: {path} line 2: not NAME=value, so it sets nothing (it starts "
        "'SLACK_BOT_TOKEN')",
        f"PROBLEM  settings: {path} line 3: not NAME=value, so it sets nothing (it starts "
        "'BLAST_WORKERS')",
    ], done.stdout
    assert "xoxb-not-shown" not in done.stdout + done.stderr


def test_a_bare_name_or_a_line_starting_with_equals_sets_nothing(tmp_path: Path) -> None:
    """A trial: a bare `BLAST_WORKERS` line (no `=`: python-dotenv reads no value) was skipped
    without a word, `=novalue` was reported as "(it starts '')", and python-dotenv's own
    "could not parse statement" WARNING was printed beside our line. Both are a doctor
    PROBLEM and a warning of the other commands (serve's way), in our words only; the value
    after a leading `=` is not shown (it may be a secret)."""
    path = tmp_path / "env"
    path.write_text(f"BLAST_WORKERS\n=novalue-secret\nBLAST_DATA_DIR={tmp_path / 'missing'}\n")
    said = [
        f"{path} line 1: not NAME=value, so it sets nothing (it starts 'BLAST_WORKERS')",
        f"{path} line 2: not NAME=value, so it sets nothing (it starts '=')",
    ]
    done = cli("doctor", "--env-file", str(path))
    assert done.returncode == 1, done.stderr
    problems = [line for line in done.stdout.splitlines() if line.startswith("PROBLEM  settings")]
    assert problems == [f"PROBLEM  settings: {line}" for line in said], done.stdout
    assert "dotenv" not in done.stdout + done.stderr and "novalue" not in done.stdout
    listed = cli("incidents", BLAST_ENV_FILE=str(path))  # stops at the missing data folder
    warned = [line for line in listed.stderr.splitlines() if line.startswith("configuration")]
    assert warned == [f"configuration warning: {line}" for line in said], listed.stderr
    assert "dotenv" not in listed.stderr and "novalue" not in listed.stderr
