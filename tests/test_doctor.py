"""`blast-radius doctor`: every check passes on a healthy deployment, and each broken part is
one clear PROBLEM line (and exit 1)."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import httpx
from pydantic import SecretStr

from adapters.falkordb import EmbeddedFalkorDB, TenantGraph, free_port
from adapters.outbox import Outbox
from agents.tasks.worker import WORKER_CLIENT, worker_client_name
from gateway.cli.commands import NO_WORKERS
from gateway.cli.demo_evidence import Edge, PrometheusServer
from gateway.cli.doctor import (
    NO_WORKER,
    check_falkordb,
    check_notifiers,
    check_planner,
    check_prometheus,
    check_queue,
    check_settings,
    check_webhook,
    check_workers,
    check_world,
    receiver_snippet,
    run_checks,
)
from gateway.ops.runtime import Runtime
from gateway.world import demo_world_path, import_world, load_world
from tests.anthropic_api import KEY, AnthropicAPI
from tests.conftest import alert_body, make_settings

ROOT = Path(__file__).resolve().parents[1]
GOOD = "4b9d2c7e1f0a8b3c6d5e4f3a2b1c0d9e"


def test_healthy_deployment(falkordb: EmbeddedFalkorDB, graph: TenantGraph, tmp_path, tenant):
    settings = make_settings(falkordb, tmp_path, tenant, webhook_tokens={tenant: SecretStr(GOOD)})
    worker = Runtime(settings, client_name=worker_client_name("any"))  # as `worker` connects
    with Runtime(settings) as runtime, worker:
        port = runtime.serve_http("127.0.0.1", 0)
        found = run_checks(settings.model_copy(update={"port": port}))
    lines = [f.line() for f in found]
    assert all(f.ok for f in found), lines
    assert f"ok       falkordb: org_{tenant}: constraints OPERATIONAL" in lines
    outbox = tmp_path / "outbox.jsonl"
    assert f"ok       notifier outbox: outbox {outbox} can be created (it does not exist yet)" in (
        lines
    )
    outbox.write_text("")
    assert check_notifiers(Runtime(settings))[0].what == f"outbox {outbox} is writable"
    assert f"ok       webhook: http://127.0.0.1:{port}/health/ready answered 200" in lines


def test_every_problem_is_one_line(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tmp_path, tenant
):
    fresh = f"t{uuid.uuid4().hex[:10]}"  # a tenant whose graph has no schema yet
    tokens = {tenant: SecretStr("changeme-please-now"), fresh: SecretStr(GOOD)}
    closed = free_port()
    settings = make_settings(falkordb, tmp_path, tenant, webhook_tokens=tokens, port=closed)
    found = run_checks(settings)
    problems = [f.line() for f in found if not f.ok]
    assert problems == [
        f"PROBLEM  settings: BLAST_WEBHOOK_TOKENS[{tenant}] looks like a placeholder "
        "(it contains 'changeme')",
        f"PROBLEM  falkordb: org_{fresh}: tenant {fresh} has no graph here yet: no world "
        "imported for it and the serve using this database does not serve it (start serve with "
        f"BLAST_WEBHOOK_TOKENS naming {fresh}; load its world with `blast-radius topology "
        f"import --tenant {fresh} FILE`)",
        f"PROBLEM  workers: {NO_WORKER}",
        f"PROBLEM  webhook: http://127.0.0.1:{closed}/health/ready cannot be reached: ConnectError"
        " (is `serve` running there? If it listens elsewhere, pass --url or set BLAST_PORT)",
    ]
    assert "changeme-please-now" not in "\n".join(f.line() for f in found)  # only the word


def test_a_graph_of_a_tenant_this_shell_does_not_configure_is_named(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tmp_path, tenant
):
    """A shell without serve's tokens configures another tenant: doctor says which graph here
    holds data, so "no teams" is not the last word."""
    import_world(graph, load_world(demo_world_path()))
    fresh = f"t{uuid.uuid4().hex[:10]}"
    settings = make_settings(falkordb, tmp_path, fresh, webhook_tokens={fresh: SecretStr(GOOD)})
    lines = [f.line() for f in check_falkordb(settings)]
    assert (
        f"ok       falkordb: note: org_{tenant} holds tenant {tenant}, which this shell's "
        "BLAST_WEBHOOK_TOKENS does not name (serve's may): run doctor with serve's environment "
        "(--env-file) to check it"
    ) in lines
    assert not any(f"org_{fresh} holds" in line for line in lines)  # configured: checked above


def test_an_incomplete_world_is_a_warning_not_ok_and_not_a_problem(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tmp_path, tenant
):
    """A new user's trial: doctor printed the demo world's gaps as `ok world: … 15 of 30
    services … have no known business call out … stays inconclusive`. They are worth a look
    (a `warning` line), not a fault that makes doctor exit 1."""
    import_world(graph, load_world(demo_world_path()))
    found = check_world(make_settings(falkordb, tmp_path, tenant))
    (line,) = [f.line() for f in found]  # every edge of the demo world states propagation
    assert line.startswith(f"warning  world: {tenant}: 15 of 30 services "), line
    assert "have no known business call out" in line
    assert all(f.ok for f in found)  # no PROBLEM: the exit code stays 0


def test_unwritable_outbox_is_a_problem(falkordb: EmbeddedFalkorDB, tmp_path, tenant):
    runtime = Runtime(make_settings(falkordb, tmp_path, tenant))
    (tmp_path / "a-folder").mkdir()
    runtime.outbox = runtime.messenger = runtime.tickets = Outbox(tmp_path / "a-folder")
    (finding,) = check_notifiers(runtime)
    assert not finding.ok
    assert finding.line() == (
        f"PROBLEM  notifier outbox: outbox {tmp_path / 'a-folder'} is not writable: Is a directory"
    )


def test_receiver_snippet_names_the_url_and_token_files(falkordb, tmp_path, tenant):
    tokens = {"acme": SecretStr(GOOD), "beta": SecretStr(GOOD[::-1])}
    settings = make_settings(falkordb, tmp_path, tenant, webhook_tokens=tokens)
    snippet = receiver_snippet(settings, "https://blast.example.com/")
    assert snippet.count("url: https://blast.example.com/api/v1/alerts") == 2
    assert "credentials_file: /etc/alertmanager/blast-radius-beta.token" in snippet
    assert GOOD not in snippet and GOOD[::-1] not in snippet


def test_cli_exits_1_with_the_problems(falkordb: EmbeddedFalkorDB, tmp_path, tenant):
    env_file = tmp_path / "env"
    env_file.write_text(
        f"BLAST_DATA_DIR={tmp_path}\nFALKORDB_URL={falkordb.url}\n"
        f"BLAST_WEBHOOK_TOKENS={tenant}=test-bearer-token-123\nBLAST_PORT={free_port()}\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "gateway.cli", "doctor", "--env-file", str(env_file)],
        cwd=ROOT, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    problems = [line for line in done.stdout.splitlines() if line.startswith("PROBLEM")]
    assert len(problems) == 4, done.stdout  # placeholder, no graph (one line), workers, webhook
    assert f"org_{tenant}: tenant {tenant} has no graph here yet" in problems[1]
    assert f"BLAST_WEBHOOK_TOKENS[{tenant}] looks like a placeholder" in problems[0]
    assert "test-bearer-token-123" not in done.stdout + done.stderr
    assert f"credentials_file: /etc/alertmanager/blast-radius-{tenant}.token" in done.stdout


def test_a_data_folder_that_does_not_exist_is_said_not_made(falkordb, tmp_path, tenant):
    typo = tmp_path / "dta"
    done = subprocess.run(
        [sys.executable, "-m", "gateway.cli", "doctor", "--data-dir", str(typo)],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path),
             "FALKORDB_URL": falkordb.url, "BLAST_DEFAULT_TENANT": tenant},
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert (
        f"PROBLEM  data folder: {typo} does not exist (BLAST_DATA_DIR or --data-dir: a typo? "
        "serve and topology import create it)"
    ) in done.stdout.splitlines(), done.stdout
    assert f"ok       notifier outbox: outbox {typo / 'outbox.jsonl'} can be created" in done.stdout
    assert not typo.exists(), "doctor made the folder"


def test_database_down_is_one_problem(falkordb: EmbeddedFalkorDB, tmp_path, tenant):
    settings = make_settings(falkordb, tmp_path, tenant)
    down = settings.model_copy(
        update={"falkordb_url": SecretStr(f"redis://127.0.0.1:{free_port()}")}
    )
    assert [f.line() for f in check_falkordb(down)] == [
        "PROBLEM  falkordb: the server at FALKORDB_URL does not answer PING"
    ]


def test_prometheus_is_checked_when_set(falkordb: EmbeddedFalkorDB, tmp_path, tenant):
    unset = check_prometheus(make_settings(falkordb, tmp_path, tenant))
    assert [f.line() for f in unset] == [
        "ok       prometheus: PROMETHEUS_URL unset: findings from alerts only"
    ]
    down = make_settings(
        falkordb, tmp_path, tenant, prometheus_url=f"http://127.0.0.1:{free_port()}"
    )
    (problem,) = check_prometheus(down)
    assert not problem.ok and "prometheus unreachable" in problem.what
    server = PrometheusServer(
        tmp_path / "prometheus", [Edge("cart", "valkey-cart")], int(time.time())
    )
    try:
        found = check_prometheus(
            make_settings(falkordb, tmp_path, tenant, prometheus_url=server.url)
        )
    finally:
        server.stop()
    assert [f.line() for f in found] == ["ok       prometheus: answers; 1 service-graph series"]


def test_the_planner_models_are_checked_without_spending_tokens(
    falkordb: EmbeddedFalkorDB, tmp_path, tenant
):
    claude = AnthropicAPI(models={"claude-haiku-5-5"})
    try:
        extra = {"anthropic_api_key": SecretStr(KEY), "anthropic_base_url": claude.base_url,
                 "models": ["claude-haiku-5-5", "claude-sonnet-9"]}  # fmt: skip
        lines = [f.line() for f in check_planner(Runtime(make_settings(falkordb, tmp_path, tenant,
                                                                       **extra)))]  # fmt: skip
        wrong = extra | {"anthropic_api_key": SecretStr("sk-ant-wrong-0123456789")}
        (_, bad, _) = check_planner(Runtime(make_settings(falkordb, tmp_path, tenant, **wrong)))
    finally:
        claude.close()
    assert lines == [
        "ok       planner: model-when-unsure: models claude-haiku-5-5, claude-sonnet-9",
        "ok       model claude-haiku-5-5: claude-haiku-5-5 is available (Claude-Haiku-5-5)",
        "PROBLEM  model claude-sonnet-9: claude-sonnet-9: unknown_model: claude-sonnet-9",
    ]
    assert bad.line().startswith("PROBLEM  model claude-haiku-5-5: claude-haiku-5-5: bad_key")
    assert "sk-ant-wrong" not in bad.line()
    assert claude.calls == []  # no Messages call: no tokens
    no_key = check_planner(Runtime(make_settings(falkordb, tmp_path, tenant)))
    assert [f.line() for f in no_key] == [
        "ok       planner: rules (no model configured: no request leaves)"
    ]


def test_no_worker_running_is_a_problem_and_serve_s_detail_a_warning(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tmp_path, tenant
):
    """The systemd layout with the worker units forgotten: serve runs with BLAST_WORKERS=0
    and no worker is connected. /health/ready still answers 200, but doctor reads its detail
    (a warning line) and sees that no worker process is connected (a PROBLEM, exit 1); a
    worker of each role, or one of role `any`, anywhere on the database clears it."""
    settings = make_settings(falkordb, tmp_path, tenant, workers=0)
    with Runtime(settings) as runtime:
        runtime.notes.append(NO_WORKERS)  # what `serve` adds with BLAST_WORKERS=0
        base = f"http://127.0.0.1:{runtime.serve_http('127.0.0.1', 0)}"
        said = [f.line() for f in check_webhook(base)]
        assert [f.line() for f in check_workers(settings)] == [f"PROBLEM  workers: {NO_WORKER}"]
        responder = Runtime(settings, client_name=worker_client_name("responder"))
        with responder:
            lines = [f.line() for f in check_workers(settings)]
        assert lines[0].startswith("ok       workers: 1 worker process connected: responder@")
        assert any(line.startswith("PROBLEM  workers: no worker takes role investigator")
                   for line in lines), lines  # fmt: skip
        with Runtime(settings, client_name=worker_client_name("any")):
            (line,) = [f.line() for f in check_workers(settings)]
        assert line.startswith("ok       workers: 1 worker process connected: any@"), line
        assert check_workers(settings)[0].ok is False  # gone with its connections
    assert said == [
        f"ok       webhook: {base}/health/ready answered 200",
        f"warning  webhook: serve says: {NO_WORKERS}",
    ]


def test_a_worker_process_is_seen_by_its_connections(falkordb: EmbeddedFalkorDB, tmp_path, tenant):
    """`blast-radius worker` names its connections, so doctor on any host sees it run."""
    settings = make_settings(falkordb, tmp_path, tenant)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path),
           "FALKORDB_URL": falkordb.url, "BLAST_DEFAULT_TENANT": tenant,
           "BLAST_DATA_DIR": str(tmp_path)}  # fmt: skip
    worker = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "worker", "--role", "learner", "--quiet"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (found := check_workers(settings))[0].ok and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        worker.terminate()
        worker.wait(30)
    assert found[0].what == (
        f"1 worker process connected: learner@{socket.gethostname()}/{worker.pid}"
    ), found
    assert found[0].what.startswith("1 worker") and WORKER_CLIENT not in found[0].what


def test_a_task_no_worker_claims_is_a_problem_even_with_a_worker_connected(
    falkordb: EmbeddedFalkorDB, graph: TenantGraph, tmp_path, tenant
):
    """A worker stopped (SIGSTOP), swapped out or deadlocked keeps its connection, so the
    connection check says ok while a critical incident waits unpaged: the age of the oldest
    ready task is what shows it. Past the bound it is a PROBLEM naming the task's kind and
    incident; a drained queue is ok."""
    settings = make_settings(falkordb, tmp_path, tenant)
    wedged = Runtime(settings, client_name=worker_client_name("any"))  # connected, claims nothing
    with Runtime(settings) as runtime, wedged:
        base = f"http://127.0.0.1:{runtime.serve_http('127.0.0.1', 0)}"
        answer = httpx.post(f"{base}/api/v1/alerts", content=alert_body("cart"),
                            headers={"Content-Type": "application/json"})  # fmt: skip
        (incident,) = answer.json()["opened"]
        assert check_workers(settings)[0].ok  # the connection alone looks fine
        time.sleep(0.05)
        (fresh,) = check_queue(settings)
        assert fresh.ok and not fresh.warn, fresh
        (stalled,) = check_queue(settings, stalled_s=0.0)
        assert stalled.line().startswith(
            f"PROBLEM  queue: {tenant}: the investigate task of incident {incident} has waited "
        ), stalled.line()
        assert "no worker claims tasks" in stalled.what
        (slow,) = check_queue(settings, slow_s=-settings.idle_poll_ms / 1000)
        assert slow.warn and slow.ok, slow
        runtime.make_worker().run(threading.Event(), burst=True)
        assert [f.line() for f in check_queue(settings, stalled_s=0.0)] == [
            "ok       queue: no task is waiting for a worker"
        ]


def test_doctor_refuses_what_serve_refuses_and_says_where_it_read_the_settings(
    falkordb: EmbeddedFalkorDB, tmp_path, tenant
):
    """`BLAST_HOST=0.0.0.0` without webhook tokens: serve exits 2, so doctor must not say the
    settings are ok (it applies serve's own rule, `listen_refusal`). The ok line names the
    environment doctor read, which may not be serve's."""
    exposed = make_settings(falkordb, tmp_path, tenant, host="0.0.0.0")
    (line,) = [f.line() for f in check_settings(exposed)]
    assert line.startswith(
        "PROBLEM  settings: BLAST_HOST='0.0.0.0' needs BLAST_WEBHOOK_TOKENS: serve says "
        "'refusing to listen on 0.0.0.0 with no BLAST_WEBHOOK_TOKENS set"
    ), line
    assert "read from this shell's environment" in line
    guarded = exposed.model_copy(update={"webhook_tokens": {tenant: SecretStr(GOOD)}})
    (ok,) = check_settings(guarded)
    assert ok.ok and "read from this shell's environment" in ok.what, ok
    env_file = tmp_path / "blast.env"
    env_file.write_text("BLAST_PORT=8080\n")
    (ok,) = check_settings(guarded, env_file)
    assert f"read from this shell's environment and {env_file} (serve reads its own" in ok.what
