"""The worker loop: claim a task from any tenant graph, run the agent for its kind, repeat.

Agents never call each other; a finished task enqueues the next one in the graph. `burst`
runs until no task is claimable (for tests and the demo). The database being down is not a
crash: the worker logs one line and waits with backoff until it is back.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import uuid
from typing import Protocol

from adapters.falkordb import GraphStore, GraphUnavailable
from adapters.notify import AdapterError
from agents.coordination import LeaseLost, TaskRun, claim
from gateway.settings import graph_name

log = logging.getLogger(__name__)

ROLE_KINDS: dict[str, tuple[str, ...]] = {
    "investigator": ("investigate", "reinvestigate"),
    "responder": ("respond", "notify_cleared", "notify_update", "notify_verdict", "readback"),
    "learner": ("learn",),
}
ROLE_KINDS["any"] = tuple(kind for kinds in ROLE_KINDS.values() for kind in kinds)
#: The longest an adapter's "retry after" (`AdapterError.retry_after_s`) defers a task (s).
MAX_RETRY_AFTER_S = 15 * 60.0


class Agent(Protocol):
    """An agent runs one claimed task to completion (or raises)."""

    kinds: tuple[str, ...]

    def run(self, task: TaskRun) -> None:
        """Do the task's steps and complete it."""
        ...


class Worker:
    """Claims and runs tasks of `role` for every tenant in `tenants`."""

    def __init__(
        self,
        store: GraphStore,
        tenants: list[str],
        agents: list[Agent],
        role: str = "any",
        lease_ms: int = 30_000,
        max_attempts: int = 5,
        name: str | None = None,
    ) -> None:
        if role not in ROLE_KINDS:
            raise ValueError(f"unknown role {role!r}; use one of {', '.join(ROLE_KINDS)}")
        self.store = store
        self.tenants = tenants
        self.kinds = list(ROLE_KINDS[role])
        self.by_kind = {kind: agent for agent in agents for kind in agent.kinds}
        self.lease_ms = lease_ms
        self.max_attempts = max_attempts
        self.name = name or f"worker-{uuid.uuid4().hex[:8]}"
        self.done = 0

    def run_once(self) -> bool:
        """Claim and run at most one task per tenant. True when some task was claimed."""
        worked = False
        for tenant in self.tenants:
            graph = self.store.graph(graph_name(tenant))
            claimed = claim(graph, self.kinds, self.name, self.lease_ms)
            if claimed is None:
                continue
            worked = True
            task = TaskRun(graph, claimed, self.lease_ms)
            try:
                self.by_kind[claimed.kind].run(task)
                self.done += 1
            except LeaseLost as exc:
                log.warning("%s: %s; stopping this task", self.name, exc)
            except (AdapterError, GraphUnavailable) as exc:
                log.warning("%s: task %s gave up this attempt: %s", self.name, claimed.task_id, exc)
                after = exc.retry_after_s if isinstance(exc, AdapterError) else None
                wait_s = min(after or 0.0, MAX_RETRY_AFTER_S)
                self._give_back(task, str(exc), int(wait_s * 1000))
            except Exception as exc:  # a bug in one task must not kill the worker
                log.exception("%s: task %s failed", self.name, claimed.task_id)
                self._give_back(task, f"{type(exc).__name__}: {exc}")
        return worked

    def _give_back(self, task: TaskRun, reason: str, delay_ms: int = 0) -> None:
        with contextlib.suppress(GraphUnavailable):  # else the lease expires: claimable again
            task.release(reason, self.max_attempts, delay_ms)

    def run(self, stop: threading.Event, burst: bool = False, idle_s: float = 0.05) -> None:
        """Loop until `stop` is set (or, with `burst`, until nothing is claimable)."""
        backoff = idle_s
        while not stop.is_set():
            try:
                worked = self.run_once()
                backoff = idle_s
            except GraphUnavailable as exc:
                log.warning(
                    "%s: graph unavailable (%s); retrying in %.1f s", self.name, exc, backoff
                )
                stop.wait(backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            if not worked:
                if burst:
                    return
                stop.wait(idle_s)
