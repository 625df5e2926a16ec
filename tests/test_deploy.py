"""The VPS deployment: `deploy/install.sh` in a throwaway root (twice), `systemd-analyze verify`
on the installed units, and the stack started exactly the way the units start it (their
ExecStart lines and the installed env file), up to READY=1, `/health/ready` and `/metrics`
summed over the gateway and a separate worker process."""

from __future__ import annotations

import configparser
import json
import os
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
import redis
import yaml
from dotenv import dotenv_values

from adapters.falkordb import EmbeddedFalkorDB, free_port
from gateway.cli.demo import demo_faults_path, scenario_bodies
from gateway.settings import Settings
from gateway.world import demo_world_path
from tests.test_metrics import samples, value

ROOT = Path(__file__).resolve().parents[1]
UNIT_DIR = ROOT / "deploy" / "systemd"
UNITS = ("blast-radius-falkordb.service", "blast-radius.service", "blast-radius-worker@.service")
BINARY = "/opt/blast-radius/venv/bin/blast-radius"
TOKEN = "5e0c9a7b3d1f4e2a8c6b0d9f7e5a3c1b"


def unit(name: str) -> configparser.ConfigParser:
    """A unit file as sections of keys (systemd's syntax is INI-like; no key repeats here)."""
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string((UNIT_DIR / name).read_text())
    return parser


def install(destdir: Path) -> subprocess.CompletedProcess[str]:
    """deploy/install.sh into `destdir`; the venv borrows this interpreter's site-packages and
    pip installs only our package (its dependencies are the ones under test already)."""
    env = {
        "PATH": os.environ["PATH"], "HOME": str(destdir.parent), "DESTDIR": str(destdir),
        "PYTHON": sys.executable, "BLAST_VENV_ARGS": "--system-site-packages",
        "BLAST_PIP_ARGS": "--no-deps",
    }  # fmt: skip
    return subprocess.run(
        ["bash", str(ROOT / "deploy" / "install.sh")],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list]]:
    """A throwaway root after two runs of install.sh, with an edit to the env file in between."""
    destdir = tmp_path_factory.mktemp("vps") / "root"
    destdir.mkdir()
    runs = [install(destdir)]
    env_file = destdir / "etc/blast-radius/env"
    if env_file.exists():
        env_file.write_text(env_file.read_text().replace("BLAST_PORT=8080", "BLAST_PORT=9090"))
    runs.append(install(destdir))
    yield destdir, runs


def test_install_runs_twice_in_a_throwaway_root(installed) -> None:
    destdir, runs = installed
    for run in runs:
        assert run.returncode == 0, run.stdout + run.stderr
    first, second = (run.stdout for run in runs)
    assert "env file /etc/blast-radius/env written from .env.example" in first
    assert "env file /etc/blast-radius/env kept" in second
    assert "Next steps:" in second and "systemctl enable --now" in second
    users = [line for line in (destdir / "etc/passwd").read_text().splitlines()]
    (user,) = [u for u in users if u.startswith("blast-radius:")]
    uid = int(user.split(":")[2])
    env_file = destdir / "etc/blast-radius/env"
    mode = env_file.stat()
    assert stat.S_IMODE(mode.st_mode) == 0o600
    if os.getuid() == 0:
        assert mode.st_uid == uid
    env = dotenv_values(env_file)
    assert env["BLAST_PORT"] == "9090", "the second run overwrote the operator's edit"
    assert env["FALKORDB_URL"] == "redis://127.0.0.1:6380"
    assert env["BLAST_DATA_DIR"] == "/var/lib/blast-radius"
    assert env["BLAST_LOG_FORMAT"] == "json" and env["BLAST_WORKERS"] == "0"
    assert env["PROMETHEUS_MULTIPROC_DIR"] == "/var/lib/blast-radius/metrics"
    assert set(env) == {f.alias for f in Settings.model_fields.values()}
    data = destdir / "var/lib/blast-radius"
    assert stat.S_IMODE(data.stat().st_mode) == 0o750
    assert os.readlink(data / ".env") == "/etc/blast-radius/env"
    for name in UNITS:
        assert (destdir / "etc/systemd/system" / name).read_text() == (UNIT_DIR / name).read_text()
    binary = destdir / BINARY.lstrip("/")
    assert os.access(binary, os.X_OK)


def test_units_pass_systemd_analyze_verify(installed, tmp_path) -> None:
    destdir, runs = installed
    assert all(run.returncode == 0 for run in runs)
    tool = shutil.which("systemd-analyze")
    if tool is None:
        pytest.skip("systemd-analyze missing: apt-get install systemd (.ci/run does)")
    # verify resolves targets (sysinit.target, …) inside --root: give the root the system's.
    shutil.copytree("/usr/lib/systemd/system", destdir / "usr/lib/systemd/system",
                    dirs_exist_ok=True, symlinks=True)  # fmt: skip
    names = [
        "blast-radius-falkordb.service", "blast-radius.service",
        "blast-radius-worker@investigator.service", "blast-radius-worker@responder.service",
    ]  # fmt: skip
    done = subprocess.run(
        [tool, "verify", f"--root={destdir}", *names],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert (done.returncode, done.stdout + done.stderr) == (0, "")
    # the same check fails when a unit's command does not exist in the root: it is not vacuous
    broken = destdir / "etc/systemd/system/blast-radius-broken.service"
    broken.write_text(
        (UNIT_DIR / "blast-radius.service").read_text().replace(BINARY, BINARY + "-missing")
    )
    done = subprocess.run(
        [tool, "verify", f"--root={destdir}", broken.name],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    broken.unlink()
    assert done.returncode != 0 and "is not executable" in done.stderr


def test_units_are_ordered_hardened_and_outlast_the_grace_period() -> None:
    lease_s = Settings.model_fields["lease_ms"].default / 1000
    for name in UNITS:
        service = unit(name)["Service"]
        assert service["User"] == "blast-radius"
        assert service["EnvironmentFile"] == "/etc/blast-radius/env"
        # the settings read that file, never a .env in WorkingDirectory (a trial's finding)
        assert service["Environment"] == "BLAST_ENV_FILE=/etc/blast-radius/env"
        assert service["ExecStart"].startswith(BINARY + " ")
        assert service["Restart"] == "on-failure"
        assert service["ReadWritePaths"] == "/var/lib/blast-radius"
        assert service["CapabilityBoundingSet"] == ""
        assert service["RestrictAddressFamilies"] == "AF_UNIX AF_INET AF_INET6"
        for key in ("NoNewPrivileges", "PrivateTmp", "ProtectHome"):
            assert service[key] == "yes", (name, key)
        assert service["ProtectSystem"] == "strict"
        assert int(service["TimeoutStopSec"]) > lease_s
    falkordb = unit("blast-radius-falkordb.service")["Service"]
    assert falkordb["ExecStartPost"] == f"{BINARY} falkordb --wait"
    for name in ("blast-radius.service", "blast-radius-worker@.service"):
        parsed = unit(name)
        assert parsed["Service"]["Type"] == "notify"
        assert "blast-radius-falkordb.service" in parsed["Unit"]["Requires"].split()
        assert "blast-radius-falkordb.service" in parsed["Unit"]["After"].split()
    worker = unit("blast-radius-worker@.service")
    assert worker["Service"]["ExecStart"] == f"{BINARY} worker --role %i"
    assert "blast-radius.service" in worker["Unit"]["After"].split()
    assert worker["Unit"]["PartOf"] == "blast-radius.service"


def command(name: str, instance: str = "", key: str = "ExecStart") -> list[str]:
    """The unit's command line, run from this checkout instead of the installed venv."""
    argv = shlex.split(unit(name)["Service"][key].replace("%i", instance))
    assert argv[0] == BINARY
    return [sys.executable, "-m", "gateway.cli", *argv[1:]]


class Notifications:
    """A socket standing in for systemd's $NOTIFY_SOCKET."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))

    def next(self, timeout_s: float = 60.0) -> str:
        self.sock.settimeout(timeout_s)
        return self.sock.recv(4096).decode()


def test_stack_starts_the_way_the_units_do(installed, tmp_path) -> None:
    destdir, _ = installed
    tenant = f"t{uuid.uuid4().hex[:10]}"
    data, db_port, port = tmp_path / "data", free_port(), free_port()
    env = dotenv_values(destdir / "etc/blast-radius/env") | {
        "BLAST_DATA_DIR": str(data),
        "FALKORDB_URL": f"redis://127.0.0.1:{db_port}",
        "BLAST_PORT": str(port),
        "BLAST_WEBHOOK_TOKENS": f"{tenant}={TOKEN}",
        "PROMETHEUS_MULTIPROC_DIR": str(data / "metrics"),
        # the alerts go in before the worker starts: on a slow machine its start-up outlasts
        # the 1 s page deadline and the page goes out early, its cause edited in after (an
        # `update`), which is the deadline's behaviour, not what this test is about
        "BLAST_PAGE_WITHIN_MS": "60000",
    }
    base = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    base |= {k: v for k, v in env.items() if v is not None}
    # the units' Environment= (the installed env file, in the throwaway root), and their
    # WorkingDirectory holding a stray .env: read, its BLAST_NOTIFY=slack would fill the env
    # file's empty one and serve would refuse to start (no SLACK_BOT_TOKEN)
    var, path = unit("blast-radius.service")["Service"]["Environment"].split("=", 1)
    base[var] = str(destdir) + path
    workdir = tmp_path / "workdir"
    workdir.mkdir()
    (workdir / ".env").write_text("BLAST_NOTIFY=slack\n")
    procs: dict[str, subprocess.Popen[bytes]] = {}
    logs = {name: tmp_path / f"{name}.log" for name in ("falkordb", "gateway", "worker")}

    def start(name: str, argv: list[str], notify: Notifications | None) -> None:
        extra = {"NOTIFY_SOCKET": str(notify.path)} if notify else {}
        with logs[name].open("wb") as out:
            procs[name] = subprocess.Popen(
                argv, cwd=workdir, env=base | extra, stdout=out, stderr=subprocess.STDOUT
            )

    gateway_notify = Notifications(tmp_path / "gateway.notify")
    worker_notify = Notifications(tmp_path / "worker.notify")
    try:
        # blast-radius-falkordb.service: ExecStart, then ExecStartPost as its readiness
        start("falkordb", command("blast-radius-falkordb.service"), None)
        ready = subprocess.run(
            command("blast-radius-falkordb.service", key="ExecStartPost"),
            cwd=workdir, env=base, capture_output=True, text=True, timeout=90,
        )  # fmt: skip
        assert ready.returncode == 0, ready.stderr + logs["falkordb"].read_text()
        db = redis.Redis(port=db_port, decode_responses=True)
        assert db.config_get("appendfsync") == {"appendfsync": "everysec"}
        assert db.config_get("aof-use-rdb-preamble") == {"aof-use-rdb-preamble": "yes"}
        assert db.config_get("bind") == {"bind": "127.0.0.1"}
        assert db.execute_command("GRAPH.CONFIG", "GET", "TIMEOUT_MAX") == ["TIMEOUT_MAX", 5000]
        assert (data / "falkordb" / "falkordb.conf").exists()
        db.close()
        world = subprocess.run(
            [sys.executable, "-m", "gateway.cli", "topology", "import", str(demo_world_path()),
             "--tenant", tenant],
            cwd=ROOT, env=base, capture_output=True, text=True, timeout=90,
        )  # fmt: skip
        assert world.returncode == 0, world.stderr

        # blast-radius.service: Type=notify, so READY=1 before anything may depend on it
        start("gateway", command("blast-radius.service"), gateway_notify)
        assert gateway_notify.next().startswith("READY=1\n"), logs["gateway"].read_text()
        http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
        assert http.get("/health/ready").status_code == 200
        auth = {"Authorization": f"Bearer {TOKEN}"}
        faults = yaml.safe_load(demo_faults_path().read_text())["faults"]
        ad = next(f for f in faults if f["flag"] == "adFailure")
        bodies = scenario_bodies(ad, datetime.now(UTC) - timedelta(minutes=5), "firing")
        for body in bodies:
            assert http.post("/api/v1/alerts", json=body, headers=auth).status_code == 200

        # blast-radius-worker@any.service: a separate process
        start("worker", command("blast-radius-worker@.service", "any"), worker_notify)
        assert worker_notify.next().startswith("READY=1\n"), logs["worker"].read_text()
        outbox = data / "outbox.jsonl"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            kinds = [json.loads(x)["kind"] for x in outbox.read_text().splitlines()] if (
                outbox.exists()
            ) else []  # fmt: skip
            if kinds.count("notification") and kinds.count("ticket"):
                break
            time.sleep(0.1)
        assert sorted(kinds) == ["notification", "ticket"]

        got = samples(http.get("/metrics").text)
        http.close()
        fired = sum(len(b["alerts"]) for b in bodies)
        assert value(got, "blast_alerts_received_total", tenant=tenant, status="firing") == fired
        assert value(got, "blast_incidents_opened_total", tenant=tenant) == 1
        # counted in the worker process, shown by the gateway's /metrics
        for kind in ("notification", "ticket"):
            assert value(got, "blast_actions_sent_total", kind=kind, adapter="outbox") == 1
        investigations = value(got, "blast_tasks_claimed_total", kind="investigate") + value(
            got, "blast_tasks_claimed_total", kind="reinvestigate"
        )
        assert value(got, "blast_tasks_claimed_total", kind="investigate") == 1
        assert value(got, "blast_planner_calls_total", planner="rules") == investigations
        assert value(got, "blast_tasks_claimed_total", kind="respond") == 1
        assert value(got, "blast_step_duration_seconds_count", tool="coverage_walk") >= 1

        for name in ("worker", "gateway", "falkordb"):
            procs[name].send_signal(signal.SIGTERM)
            assert procs[name].wait(timeout=60) == 0, logs[name].read_text()
        assert gateway_notify.next(5) == "STOPPING=1"
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        gateway_notify.sock.close()
        worker_notify.sock.close()

    # JSON lines for journald, with ids; never the token
    worker_lines = [
        json.loads(line) for line in logs["worker"].read_text().splitlines() if line.startswith("{")
    ]
    found = [w for w in worker_lines if w["logger"] == "agents.investigate.investigator"]
    assert found and found[0]["incident_id"].startswith("inc-") and found[0]["task_id"]
    assert found[0]["tenant"] == tenant
    for name, path in logs.items():
        assert TOKEN not in path.read_text(), name


def test_config_file_has_the_embedded_servers_flags(tmp_path) -> None:
    server = EmbeddedFalkorDB(tmp_path / "with space", port=6390, timeout_max_ms=7000)
    text = server.config_text(logfile="")
    flags = server.command()[1:]
    assert f'dir "{tmp_path / "with space" / "falkordb"}"\n' in text
    assert 'logfile ""\n' in text and 'save "3600 1 300 100 60 10000"\n' in text
    for line in ("port 6390", "bind 127.0.0.1", "appendonly yes", "appendfsync everysec",
                 "aof-use-rdb-preamble yes"):  # fmt: skip
        key, val = line.split(" ")
        assert flags[flags.index(f"--{key}") + 1] == val
        assert f"{line}\n" in text
    assert text.splitlines()[-1].endswith(
        "falkordb.so TIMEOUT_DEFAULT 1000 TIMEOUT_MAX 7000 DELTA_MAX_PENDING_CHANGES 1000"
    )


def test_fsync_setting_reaches_the_servers_flags(tmp_path, monkeypatch) -> None:
    """BLAST_FALKORDB_FSYNC picks the AOF policy of the embedded server and of its config file
    (`blast-radius falkordb --print-config`); anything but always/everysec is refused."""
    from gateway.settings import Settings

    monkeypatch.setenv("BLAST_FALKORDB_FSYNC", "always")
    settings = Settings()
    server = EmbeddedFalkorDB(tmp_path, port=6391, fsync=settings.falkordb_fsync)
    flags = server.command()
    assert flags[flags.index("--appendfsync") + 1] == "always"
    assert "appendfsync always\n" in server.config_text()
    monkeypatch.setenv("BLAST_FALKORDB_FSYNC", "no")
    with pytest.raises(ValueError, match="BLAST_FALKORDB_FSYNC"):
        Settings()


def test_alertmanager_example_reads_the_token_file_the_readme_and_doctor_name() -> None:
    """deploy/alertmanager.yml, deploy/README §3 and `doctor`'s receiver snippet name one token
    file per tenant, the same one: an operator who writes the README's file and uses the
    shipped config gets no 401."""
    from gateway.cli.doctor import TOKEN_FILE

    config = yaml.safe_load((ROOT / "deploy" / "alertmanager.yml").read_text())
    (receiver,) = config["receivers"]
    (hook,) = receiver["webhook_configs"]
    named = hook["http_config"]["authorization"]["credentials_file"]
    assert named == TOKEN_FILE.format(tenant="acme")
    readme = (ROOT / "deploy" / "README.md").read_text()
    assert f"> {named}\n" in readme  # the file §3 writes
    assert "blast-radius.token" not in (ROOT / "deploy" / "alertmanager.yml").read_text()
    for doc in (readme, (ROOT / "docs" / "configuration.md").read_text()):
        assert 'README, "' not in doc and 'README "' not in doc  # sections README lacks
