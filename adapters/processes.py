"""Child processes the gateway and its tools start (the embedded FalkorDB, workers, a local
Prometheus): tie them to their parent, and stop them."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import threading
import time

#: `prctl` option: the signal a child gets when the thread that started it dies (linux/prctl.h).
PR_SET_PDEATHSIG = 1


def tie_to_parent() -> None:
    """In a child process, before exec: put it in a process group of its own, and have Linux
    send it SIGTERM when the thread that started it dies (`prctl(PR_SET_PDEATHSIG)`; a no-op
    where prctl does not exist). So a `kill -9` of `serve` leaves no server or worker behind,
    and Ctrl-C in a terminal (SIGINT to the whole foreground group) reaches `serve` alone,
    which then stops its workers before their database, instead of all of them at once."""
    os.setpgid(0, 0)
    libc = ctypes.CDLL(None, use_errno=True)
    if hasattr(libc, "prctl"):
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class StopRequest(threading.Event):
    """A stop request that a signal handler may set: `serve`'s and a worker's SIGTERM/SIGINT.

    Why not a plain `threading.Event`: a Python signal handler runs in the main thread between
    two bytecodes, possibly inside `Event.wait` while that holds the Event's lock, and
    `Event.set` in the handler then waits for that lock forever. `serve`, whose main thread
    waits on its stop event all the time, hung on Ctrl-C that way. Here `set()` only assigns a
    flag and `wait()` sleeps in slices of `SLICE_S` seconds (a signal cuts a slice short), so
    nothing takes a lock. Other threads may share it as an Event; `wait()` sees a request
    within one slice.
    """

    #: The longest `wait()` sleeps before it looks at the flag again (s).
    SLICE_S = 0.05

    def __init__(self) -> None:
        super().__init__()
        self._requested = False

    def set(self) -> None:
        self._requested = True

    def clear(self) -> None:
        self._requested = False

    def is_set(self) -> bool:
        return self._requested

    def wait(self, timeout: float | None = None) -> bool:
        """True once stop is requested; False when `timeout` seconds (None: no limit) passed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._requested:
            left = self.SLICE_S if deadline is None else deadline - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(left, self.SLICE_S))
        return self._requested


def running(pid: int) -> bool:
    """True when a process with this pid exists (signal 0: nothing is sent). One that runs as
    another user counts as running."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_process(proc: subprocess.Popen[bytes], timeout_s: float) -> int:
    """SIGTERM `proc` if it still runs, wait up to `timeout_s` seconds, then SIGKILL it; returns
    its exit code (negative: the signal that ended it)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            return proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
    return proc.wait()
