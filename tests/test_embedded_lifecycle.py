"""The embedded FalkorDB's owner and its children: `kill -9` of `serve` leaves no server or
worker behind (they get SIGTERM when their parent dies), and a `serve` that uses a server
another command started takes it over when that command exits."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from adapters.falkordb import free_port
from gateway.ops.runtime import Runtime
from gateway.settings import Settings
from tests.conftest import clean_env
from tests.tasks.test_crash import wait_for

ROOT = Path(__file__).resolve().parents[1]


def alive(pid: int) -> bool:
    """The process exists and is not a zombie (an exited child nobody reaped yet)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def children(pid: int) -> list[int]:
    """Direct children of `pid` (from /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def servers_on(folder: Path) -> list[int]:
    """Live processes (not zombies) working in `folder`: redis-server changes into its `--dir`
    (and rewrites its command line, so that cannot be read)."""
    out = []
    for cwd in Path("/proc").glob("[0-9]*/cwd"):
        try:
            here = Path(os.readlink(cwd))
        except OSError:
            continue
        if here == folder.resolve() and alive(int(cwd.parent.name)):
            out.append(int(cwd.parent.name))
    return out


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[object]:
    """Start `python -m gateway.cli …` on the embedded default in `tmp_path` (no FALKORDB_URL)."""
    started: list[subprocess.Popen[bytes]] = []

    def start(*args: str, **env: str) -> subprocess.Popen[bytes]:
        base = clean_env("BLAST_")
        base.pop("FALKORDB_URL", None)
        proc = subprocess.Popen(
            [sys.executable, "-m", "gateway.cli", *args], cwd=ROOT,
            env=base | {"PYTHONPATH": str(ROOT), "BLAST_DATA_DIR": str(tmp_path)} | env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group, as a shell gives a command
        )  # fmt: skip
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def ready(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/health/ready", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def server_pid(data: Path) -> int:
    return int(json.loads((data / "falkordb" / "server.json").read_text())["pid"])


def recorded_pid_of(data: Path) -> int | None:
    """The pid `server.json` names, or None while there is no record."""
    try:
        return server_pid(data)
    except FileNotFoundError:
        return None


def test_kill_9_of_serve_leaves_nothing_behind(cli, tmp_path: Path):
    port = free_port()
    serve = cli("serve", "--quiet", BLAST_PORT=str(port), BLAST_WORKERS="2")
    wait_for("serve ready", lambda: ready(port), 60)
    kids = wait_for(
        "two workers and the server", lambda: len(children(serve.pid)) >= 3 and children(serve.pid)
    )
    assert server_pid(tmp_path) in kids
    serve.send_signal(signal.SIGKILL)
    serve.wait()
    wait_for("every child gone", lambda: not any(alive(pid) for pid in kids), 20)


def test_ctrl_c_stops_serve_s_workers_before_their_database(cli, tmp_path: Path):
    """Ctrl-C sends SIGINT to the terminal's whole foreground process group. Only serve may get
    it: it then stops the workers (SIGTERM: they release their leases) and the database last.
    The database used to get SIGINT too, and stopped under working workers."""
    port = free_port()
    serve = cli("serve", "--quiet", BLAST_PORT=str(port), BLAST_WORKERS="2")
    wait_for("serve ready", lambda: ready(port), 60)
    wait_for("two workers and the server", lambda: len(children(serve.pid)) >= 3)
    os.killpg(serve.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
    assert serve.wait(60) == 0
    log = (tmp_path / "falkordb" / "falkordb.log").read_text()
    assert "Received SIGINT" not in log
    assert "Received SIGTERM" in log


def test_serve_takes_over_the_server_a_worker_started(cli, tmp_path: Path):
    worker = cli("worker", "--quiet")
    wait_for(
        "the worker's embedded server", lambda: (tmp_path / "falkordb" / "server.json").exists(), 60
    )
    first = server_pid(tmp_path)
    port = free_port()
    cli("serve", "--quiet", BLAST_PORT=str(port), BLAST_WORKERS="0")
    wait_for("serve ready", lambda: ready(port), 60)
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(30) == 0
    wait_for("the worker's server stopped", lambda: not alive(first), 20)
    wait_for("serve ready again on a server of its own", lambda: ready(port), 30)
    # serve records the server once it answers: the record can trail readiness by a moment
    wait_for("serve's server recorded", lambda: recorded_pid_of(tmp_path) is not None, 10)
    assert server_pid(tmp_path) != first
    time.sleep(0.5)
    assert ready(port)


def test_two_processes_starting_at_once_share_one_server(tmp_path: Path):
    """Two runtimes opening an empty data folder at the same moment (serve and a worker started
    together, say): one starts the embedded server and the other uses it (`server.lock`), never
    a second server on the same append-only files. Threads stand for the processes: `flock`
    excludes two opens of the lock file in one process as it does across processes."""
    settings = Settings.model_validate({"data_dir": tmp_path, "port": 0, "workers": 0})
    runtimes = [Runtime(settings), Runtime(settings)]
    start = threading.Barrier(2)

    def open_at_once(runtime: Runtime) -> None:
        start.wait()
        runtime.open()

    threads = [threading.Thread(target=open_at_once, args=(rt,)) for rt in runtimes]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(90)
        started = [rt for rt in runtimes if rt.embedded is not None]
        assert len(started) == 1
        assert runtimes[0].url == runtimes[1].url
        owner = started[0].embedded
        assert owner is not None and owner.process is not None
        assert server_pid(tmp_path) == owner.process.pid
        # only servers on this data folder count: an earlier test's child may still be exiting
        assert servers_on(tmp_path / "falkordb") == [owner.process.pid]
    finally:
        for runtime in sorted(runtimes, key=lambda rt: rt.embedded is not None):
            runtime.close()  # the borrower first, then the owner stops the server
