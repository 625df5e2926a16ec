"""`blast-radius serve` keeps N worker processes alive next to the gateway.

Each worker is `python -m gateway.cli worker --role <role>` with the serve process's
environment plus `FALKORDB_URL` (the database serve uses, so a worker never starts a database of
its own while the embedded one restarts) and `BLAST_DATA_DIR` (the shared outbox). A worker that
exits for any reason while the pool runs is started again at once, or after a delay that
doubles (1 s up to 30 s) while it keeps dying within 3 s of its start (a crash loop). `stop()`
sends SIGTERM to every worker, waits for them (each has `BLAST_SHUTDOWN_GRACE_S` to finish its
task and release its lease) and SIGKILLs those still running after the grace period plus 5 s.

Each worker says when it starts claiming: the pool hands it a `NOTIFY_SOCKET` of its own (an
abstract Unix datagram socket, sd_notify(3)'s protocol, which the worker already speaks to
systemd), and `ready_note()` names workers that have not said `READY=1` yet. Why: a worker
process takes about a second to import and connect, so an alert posted just after `serve`
started (or after a worker died) waited for it: 669 ms for the first page against 14-20 ms for
the next ones (`python -m bench.latency`); `/health/ready` now says so while it lasts.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import struct
import subprocess
import sys
import time
import uuid
from pathlib import Path

from adapters.processes import tie_to_parent
from gateway.settings import Settings

log = logging.getLogger(__name__)

#: A worker that dies sooner than this after its start doubles the restart delay.
QUICK_DEATH_S = 3.0
MAX_RESTART_DELAY_S = 30.0
#: How `/health/ready`'s note on workers not claiming yet begins (`WorkerPool.ready_note`);
#: serve replaces an older note of this kind by it.
WORKERS_STARTING = "workers starting"


def worker_env(settings: Settings, database_url: str) -> dict[str, str]:
    """The environment of a worker process: ours, plus the database URL and data folder."""
    return dict(os.environ) | {
        "FALKORDB_URL": database_url,
        "BLAST_DATA_DIR": str(settings.data_dir),
    }


class WorkerPool:
    """`count` worker processes of `role`, kept running until `stop()`.

    `cwd`: the working directory of the workers (the checkout whose code they run when it is
    not installed). Process ids are in `pids` (slot order); `restarts` counts replacements.
    """

    def __init__(
        self,
        count: int,
        env: dict[str, str],
        grace_s: float,
        role: str = "any",
        cwd: Path | None = None,
    ) -> None:
        self.count = count
        self.env = env
        self.grace_s = grace_s
        self.role = role
        self.cwd = cwd
        self.restarts = 0
        self._procs: list[subprocess.Popen[bytes] | None] = [None] * count
        self._started = [0.0] * count
        self._delay = [0.5] * count
        self._due = [0.0] * count
        #: Where the workers say `READY=1` (see the module docstring); the kernel adds each
        #: sender's pid (`SO_PASSCRED`), so a worker needs to say nothing but that.
        self._address = f"blast-radius-workers-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._readiness = socket.socket(
            socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK
        )
        self._readiness.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self._readiness.bind("\0" + self._address)
        #: Pids of workers that said `READY=1`.
        self._ready: set[int] = set()

    def command(self) -> list[str]:
        """The command line of one worker."""
        return [sys.executable, "-m", "gateway.cli", "worker", "--role", self.role]

    @property
    def pids(self) -> list[int]:
        """Process ids of the running workers."""
        return [p.pid for p in self._procs if p is not None and p.poll() is None]

    def start(self) -> None:
        """Start every worker."""
        for slot in range(self.count):
            self._spawn(slot)

    def _spawn(self, slot: int) -> None:
        proc = subprocess.Popen(
            self.command(), env=self.env | {"NOTIFY_SOCKET": "@" + self._address}, cwd=self.cwd,
            preexec_fn=tie_to_parent,
        )  # fmt: skip
        self._ready.discard(proc.pid)  # a pid a ready worker had, reused
        self._procs[slot] = proc
        self._started[slot] = time.monotonic()

    def check(self) -> int:
        """Start again every worker that has exited (once its restart delay is over).

        Returns how many were started.
        """
        started = 0
        now = time.monotonic()
        for slot, proc in enumerate(self._procs):
            if proc is None or proc.poll() is None:
                continue
            if self._due[slot] == 0.0:
                quick = now - self._started[slot] < QUICK_DEATH_S
                delay = min(self._delay[slot] * 2, MAX_RESTART_DELAY_S)
                self._delay[slot] = delay if quick else 0.5
                self._due[slot] = now + (self._delay[slot] if quick else 0.0)
                log.warning("worker %d (pid %d) exited with code %s; starting a new one%s",
                            slot, proc.pid, proc.returncode,
                            f" in {self._delay[slot]:.0f} s" if quick else "")  # fmt: skip
            if now >= self._due[slot]:
                self._due[slot] = 0.0
                self._spawn(slot)
                self.restarts += 1
                started += 1
        return started

    @property
    def ready(self) -> int:
        """How many running workers have said `READY=1` (claiming tasks)."""
        self._heard()
        return len(self._ready.intersection(self.pids))

    def ready_note(self) -> str | None:
        """A line for `/health/ready`'s `detail` while some worker is not claiming yet (alerts
        are accepted, pages wait for it), else None."""
        ready = self.ready
        if ready >= self.count:
            return None
        return f"{WORKERS_STARTING}: {ready} of {self.count} ready; pages wait for them"

    def _heard(self) -> None:
        """Take every `READY=1` the workers sent since the last call (never blocks)."""
        size = socket.CMSG_SPACE(struct.calcsize("3i"))
        while True:
            try:
                data, ancillary, _, _ = self._readiness.recvmsg(4096, size)
            except BlockingIOError:
                return
            for level, kind, value in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    pid = struct.unpack("3i", value[: struct.calcsize("3i")])[0]
                    if "READY=1" in data.decode(errors="replace").splitlines():
                        self._ready.add(pid)

    def stop(self) -> None:
        """SIGTERM every worker, wait up to the grace period plus 5 s, then SIGKILL the rest."""
        running = [p for p in self._procs if p is not None and p.poll() is None]
        for proc in running:
            proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + self.grace_s + 5.0
        for proc in running:
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.warning("worker pid %d did not stop in time; SIGKILL", proc.pid)
                proc.kill()
                proc.wait()
        self._procs = [None] * self.count
        self._ready.clear()
