"""The worker loop: claim a task from any tenant graph, run the agent for its kind, repeat.

Agents never call each other; a finished task enqueues the next one in the graph. `burst`
runs until no task is claimable (for tests and the demo). The database being down is not a
crash: the worker logs one line and waits with backoff until it is back. Every `reap_every_s`
the worker also runs the reaper (tasks whose lease expired on their last attempt fail).

SIGTERM (`terminate()`, as in rq/arq): stop claiming, let the current task finish within
`shutdown_grace_s`, else give its step up (`ShuttingDown`), release the lease without charging
the attempt, and return.

A batch: the worker claims up to `claim_batch` ready tasks of one kind in one query
(`claim_batch`), and the agent reads all their contexts in one (`read_ahead`); then each task
runs as before, one after the other, with its own `TaskRun`: its own steps, fenced writes and
intent-keyed actions, so a lease lost on one task stops that task only (its writes match no
row) and the others go on. A task whose lease is half gone by its turn extends it first
(`heartbeat`); one lost by then is not started. Their completions are held (`Held`) and
written when the batch's turns are done, in one query, each row fenced on its own task; early
when a held task's lease is half gone, or before a task of an incident with a held row runs.
The follow-ups their completions claimed for this worker (`respond` after `investigate`) run
next as a batch of their own, with one read. With 20 incidents waiting, batched claims and
reads took an incident from 9.20 GRAPH.QUERY calls to 6.95, and batched completions and
similar-incident reads to 4.70 (`python -m bench.round_trips`, docs/hot-path.md).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import random
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable
from types import FrameType
from typing import Any, Protocol

from adapters.falkordb import (
    GraphStore,
    GraphUnavailable,
    TenantGraph,
    UnsafeKey,
    graph_name,
    tenant_of,
)
from adapters.notify import AdapterError
from agents.log_context import log_context
from agents.metrics import Metrics
from agents.tasks.coordination import (
    Claim,
    Held,
    Intended,
    LeaseLost,
    ShuttingDown,
    StepHooks,
    TaskRun,
    claim_batch,
    reap,
    reserve_batch,
    send_ahead,
)
from agents.tasks.kinds import CHAINED, DIAGNOSIS_KINDS, ROLE_KINDS

log = logging.getLogger(__name__)

#: The longest an adapter's "retry after" (`AdapterError.retry_after_s`) defers a task (s).
MAX_RETRY_AFTER_S = 15 * 60.0
#: Backoff after a retryable failure that said nothing about when to retry: the first retry
#: at once (a blip), then after `BACKOFF_BASE_MS`, doubling per attempt, at most
#: `BACKOFF_MAX_MS`, with +-20 % jitter so workers that failed together do not retry together.
#: With 5 attempts an outage is tried over about 7 s, not burned through in milliseconds.
BACKOFF_BASE_MS = 1_000
BACKOFF_MAX_MS = 60_000
#: A batch holds at most one task per this much of the lease (ms): a task takes 5-20 ms of
#: a worker on an idle machine and up to about 50 ms on a loaded one, so a batch that size
#: ends within half the lease, where a task's own writes would renew it. With the chaos
#: harness's 50 ms leases, batches of 8 outlived them: each late task was taken over and run
#: again (4,773 takeovers in `python -m bench.chaos`, against 777 claiming one at a time).
LEASE_MS_PER_BATCHED = 100


#: How a worker process's database connections are named (`CLIENT SETNAME`), then its role,
#: host and pid: `blast-radius-worker:any@vps1/4242`. Workers write no record of being alive
#: (an idle one touches no node); their connections are that record, and go when they exit.
WORKER_CLIENT = "blast-radius-worker:"


def worker_client_name(role: str) -> str:
    """The connection name of a worker process of `role` on this host (`WORKER_CLIENT`)."""
    host = "".join(c for c in socket.gethostname() if c.isalnum() or c in ".-_") or "host"
    return f"{WORKER_CLIENT}{role}@{host}/{os.getpid()}"


def backoff_ms(claimed: Claim) -> int:
    """The delay before the next attempt after `claimed.attempts` failed ones (ms): 0 after
    the first, then `BACKOFF_BASE_MS` doubling (see there)."""
    if claimed.attempts <= 1:
        return 0
    base = min(BACKOFF_BASE_MS * 2 ** (claimed.attempts - 2), BACKOFF_MAX_MS)
    return int(base * random.uniform(0.8, 1.2))  # noqa: S311 - jitter, not crypto


def task_failed(graph: TenantGraph, kind: str, incident_id: str | None, reason: str) -> None:
    """After a task failed for good: its `last_error` (shown with the incident's tasks in the
    API and `blast-radius incident`) already says why. A failed investigation must still page: when
    the incident has no finding it gets an inconclusive one,
    "Diagnosis failed: <reason>", and the `respond` task is enqueued
    (`cypher/task_failed.cypher`). Never raises for a database that cannot answer (logged)."""
    if not incident_id or kind not in DIAGNOSIS_KINDS:
        return
    try:
        graph.one(
            "task_failed",
            {"incident_id": incident_id, "summary": f"Diagnosis failed: {reason[:300]}"},
        )
    except GraphUnavailable as exc:
        log.error("incident %s: could not page for the failed %s task: %s", incident_id, kind, exc)


class Agent(Protocol):
    """An agent runs one claimed task to completion (or raises). An agent may also have
    `read_ahead(graph, claims) -> {task_id: context}`: the contexts of a batch of claimed tasks
    of one kind, read in one query, handed to each task's run as `TaskRun.ahead`; and
    `planned` (kinds) with `plan(task) -> Intended | None`: a batch of those kinds runs in
    phases (`Worker.run_planned`): every task's `plan` (its steps up to its one outside
    action; None when it finished or paused without one), one reservation for the batch, the
    sends an adapter takes together, then each task's `Intended.then`."""

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
        metrics: Metrics | None = None,
        hooks: StepHooks | None = None,
        shutdown_grace_s: float = 10.0,
        idle_poll_s: float = 1.0,
        claim_batch: int = 1,
        page_within_ms: int = 0,
        name_tenant: bool = False,
    ) -> None:
        if role not in ROLE_KINDS:
            raise ValueError(f"unknown role {role!r}; use one of {', '.join(ROLE_KINDS)}")
        self.store = store
        self.tenants = tenants
        self.kinds = list(ROLE_KINDS[role])
        self.by_kind = {kind: agent for agent in agents for kind in agent.kinds}
        #: Follow-up kinds a completion may claim for this worker on the spot (`TaskRun.chain`):
        #: `respond`, which is claimable as soon as it exists, when this worker takes it.
        self.chained = tuple(
            kind for kind in CHAINED if kind in self.kinds and kind in self.by_kind
        )
        self.lease_ms = lease_ms
        self.max_attempts = max_attempts
        self.name = name or f"worker-{uuid.uuid4().hex[:8]}"
        self.hooks = hooks or StepHooks()
        self.shutdown_grace_s = shutdown_grace_s
        #: How long an idle worker waits for a wake-up before it asks the graph anyway.
        self.idle_poll_s = idle_poll_s
        #: True after a wake-up token until the next claim: that claim passes one token on, so
        #: a delivery that opened several incidents wakes the idle workers one after another.
        self.woken = False
        #: The most ready tasks of one kind claimed at once (`BLAST_CLAIM_BATCH`), and at most
        #: one per `LEASE_MS_PER_BATCHED` of the lease, so a batch usually ends well within it.
        self.claim_batch = max(1, min(claim_batch, lease_ms // LEASE_MS_PER_BATCHED))
        #: `BLAST_PAGE_WITHIN_MS`: an incident whose investigation is not done that long after
        #: it opened is paged without it (`claim_batch`); 0: pages wait for their diagnosis.
        self.page_within_ms = page_within_ms
        #: Several tenants are served: every message a task sends names its own first
        #: (`TaskRun.organisation`).
        self.name_tenant = name_tenant
        self.reap_every_s = max(lease_ms / 1000, 1.0)
        self.done = 0
        #: Claims, takeovers, failures; passed to each `TaskRun` for steps and actions.
        self.metrics = metrics if metrics is not None else Metrics()
        self.busy = False
        self._next_reap = 0.0

    def run_once(self, stop: threading.Event | None = None) -> bool:
        """Claim and run at most one task per tenant (none once `stop` is set). True when some
        task was claimed. Raises `ShuttingDown` after releasing the task it interrupted."""
        if time.monotonic() >= self._next_reap:
            self._next_reap = time.monotonic() + self.reap_every_s
            for tenant in self.tenants:
                graph = self.store.graph(graph_name(tenant))
                for row in reap(graph, self.max_attempts):
                    log.error("%s: task %s (%s) failed: %s", self.name, row["id"], row["kind"],
                              row["reason"])  # fmt: skip
                    self.metrics.tasks_failed.labels(kind=row["kind"]).inc()
                    task_failed(graph, row["kind"], row["incident_id"], row["reason"])
        worked = False
        for tenant in self.tenants:
            if stop is not None and stop.is_set():
                break
            graph = self.store.graph(graph_name(tenant))
            batch = claim_batch(
                graph, self.kinds, self.name, self.lease_ms, self.max_attempts, self.claim_batch,
                self.page_within_ms,
            )  # fmt: skip
            if not batch:
                continue
            worked = True
            if self.woken:
                self.woken = False
                self.store.wake()
            while batch:  # completions may hand this worker their follow-ups
                batch = self.run_batch(graph, tenant, batch, stop)
        return worked

    def run_batch(
        self, graph: TenantGraph, tenant: str, batch: list[Claim], stop: threading.Event | None
    ) -> list[Claim]:
        """Run claimed tasks one after the other, their contexts read ahead in one query per
        kind (`read_ahead`), each with its own `TaskRun`, their completions written together
        (`Held`; see the module docstring). Returns the follow-up tasks their completions
        claimed for this worker. Once `stop` is set, or
        after `ShuttingDown`, the tasks not started are given back uncharged (and
        `ShuttingDown` is raised again)."""
        ahead: dict[str, Any] = {}
        for kind in dict.fromkeys(c.kind for c in batch):
            read: Callable[..., dict[str, Any]] | None = getattr(
                self.by_kind.get(kind), "read_ahead", None
            )
            of_kind = [c for c in batch if c.kind == kind]
            if read is not None:
                try:
                    ahead |= read(graph, of_kind)
                except Exception:  # each task reads its own, as without a batch
                    # (an incident merged meanwhile makes respond_context fail for the batch;
                    # each task's own read handles that, and any other error, as it always did)
                    log.warning("%s: could not read ahead for %d %s tasks", self.name,
                                len(of_kind), kind, exc_info=True)  # fmt: skip
        held = Held()  # the batch's completions, written together
        agent = self.by_kind.get(batch[0].kind)
        plan = getattr(agent, "plan", None)
        if plan is not None and all(c.kind in getattr(agent, "planned", ()) for c in batch):
            return self.run_planned(graph, tenant, batch, stop, ahead, held, plan)
        runs: list[TaskRun] = []
        for n, claimed in enumerate(batch):
            if not self._turn(graph, batch, n, stop, held):
                break
            try:
                runs.append(
                    self._work(graph, tenant, claimed, stop, ahead.get(claimed.task_id), held)
                )
            except ShuttingDown:
                self._give_back_unstarted(graph, batch[n + 1 :])
                with contextlib.suppress(GraphUnavailable):
                    self._write_held(held)
                raise
        self._write_held(held)
        return [run.next_claim for run in runs if run.next_claim is not None]

    def run_planned(
        self,
        graph: TenantGraph,
        tenant: str,
        batch: list[Claim],
        stop: threading.Event | None,
        ahead: dict[str, Any],
        held: Held,
        plan: Callable[[TaskRun], Intended | None],
    ) -> list[Claim]:
        """Run a batch of a kind whose agent plans (`Agent.planned`: `page` and `respond`) in
        phases: each task's `plan` (the agent's: its deferred steps, or a completion held in
        `held`), one fenced reservation of every planned action (`reserve_batch`: a task
        whose lease was lost is dropped there and sends nothing), the sends its adapter takes
        together (`send_ahead`: the outbox's one append and fsync), then each task's `then`
        (the send through `TaskRun.act`, which finds it reserved or sent; the completion, held).
        Each phase of a task fails as its `_run` would. A page costs its batch's claim, read,
        reservation and completion: 4 round trips per batch, not 2 per page. Returns the
        follow-up tasks claimed for this worker: none (no follow-up of a page is chained)."""

        def collect(run: TaskRun, into: list[Intended | None]) -> None:
            into.append(plan(run))

        planned: list[tuple[TaskRun, Intended]] = []
        started: dict[str, TaskRun] = {}  # task id -> its run, while not finished
        begun: set[str] = set()
        try:
            for n, claimed in enumerate(batch):
                if not self._turn(graph, batch, n, stop, held):
                    break
                run = self._start(graph, claimed, stop, ahead.get(claimed.task_id), held)
                started[claimed.task_id] = run
                begun.add(claimed.task_id)
                got: list[Intended | None] = []
                self._guard(tenant, run, functools.partial(collect, run, got), finish=False)
                if got == [None]:  # finished (or paused) without an outside action
                    self.done += 1
                planned += [(run, i) for i in got if i is not None]
            try:
                lost = reserve_batch(planned)
            except GraphUnavailable as exc:  # each task as its own reservation would fail
                for run, _ in planned:
                    self._give_back(run, str(exc), backoff_ms(run.claim))
                planned, lost = [], []
            planned = [(run, i) for run, i in planned if run not in lost]
            send_ahead(planned)
            for run, intended in planned:
                if held.due:
                    self._write_held(held)
                del started[run.claim.task_id]
                self._guard(tenant, run, intended.then)
        except ShuttingDown:  # the task interrupted was given back; so are the others
            unstarted = [c for c in batch if c.task_id not in begun]
            self._give_back_unstarted(graph, unstarted)
            for run, _ in planned:
                if run.claim.task_id in started:
                    self._give_back(run, "worker shut down before finishing", charge=False)
            with contextlib.suppress(GraphUnavailable):
                self._write_held(held)
            raise
        self._write_held(held)
        return []

    def _write_held(self, held: Held) -> None:
        """Write the batch's held completions (`Held.write`). Raises `GraphUnavailable`; any
        other error is a bug: logged, and the tasks are claimed again when their leases end."""
        try:
            held.write()
        except GraphUnavailable:
            raise
        except Exception:  # a bug must not kill the worker
            log.exception("%s: bug: could not write the batch's completions", self.name)

    def _turn(
        self,
        graph: TenantGraph,
        batch: list[Claim],
        n: int,
        stop: threading.Event | None,
        held: Held,
    ) -> bool:
        """Before the `n`th task of a batch: False when the worker stops (the rest go back
        uncharged); else the held completions are written first when due or when this task's
        incident has one held (it must see them), and True."""
        if stop is not None and stop.is_set():
            self._give_back_unstarted(graph, batch[n:])
            return False
        if held.due or held.holds(batch[n].incident_id):
            self._write_held(held)
        return True

    def _give_back_unstarted(self, graph: TenantGraph, claims: list[Claim]) -> None:
        """Release claimed tasks this worker will not start (it is stopping), uncharged."""
        for claimed in claims:
            with contextlib.suppress(GraphUnavailable):  # else the lease expires: claimable again
                task = TaskRun(graph, claimed, self.lease_ms, self.metrics, self.hooks)
                self._give_back(task, "worker shut down before starting it", charge=False)

    def _work(
        self,
        graph: TenantGraph,
        tenant: str,
        claimed: Claim,
        stop: threading.Event | None,
        ahead: Any = None,
        held: Held | None = None,
    ) -> TaskRun:
        """Run one claimed task (`ahead`: its context, read with its batch's; `held`: where
        its completion waits for its batch's). Returns its run, whose `next_claim` is the
        follow-up task its completion claimed for this worker (`respond` after
        `investigate`) once the completion is written."""
        run = self._start(graph, claimed, stop, ahead, held)
        self._guard(tenant, run, lambda: self.by_kind[claimed.kind].run(run))
        return run

    def _start(
        self,
        graph: TenantGraph,
        claimed: Claim,
        stop: threading.Event | None,
        ahead: Any = None,
        held: Held | None = None,
    ) -> TaskRun:
        """The run of a claimed task, counted as claimed (see `_work`)."""
        self.metrics.tasks_claimed.labels(kind=claimed.kind).inc()
        if claimed.taken_over:
            self.metrics.tasks_taken_over.labels(kind=claimed.kind).inc()
        run = TaskRun(graph, claimed, self.lease_ms, self.metrics, self.hooks)
        run.organisation = tenant_of(graph.name) if self.name_tenant else None
        run.ahead = ahead
        run.held = held
        run.last_attempt = claimed.attempts >= self.max_attempts
        run.chain = lambda: () if stop is not None and stop.is_set() else self.chained
        return run

    def _guard(
        self, tenant: str, run: TaskRun, work: Callable[[], None], finish: bool = True
    ) -> None:
        """`_run` the task's `work` in its log context (`finish`: `work` ends the task)."""
        claimed = run.claim
        with log_context(tenant=tenant, incident_id=claimed.incident_id, task_id=claimed.task_id):
            self._run(run, work, finish)

    def _run(self, task: TaskRun, work: Callable[[], None], finish: bool = True) -> None:
        """Run one claimed task's `work` (its agent's `run`, or a phase of it: `finish` false
        for all but the last, which counts it done); decide once what a failure means ("retry
        decided once"): an error whose `retryable` is true gives the attempt back with a delay (the
        outside system's `Retry-After`, else `backoff_ms`); one whose `retryable` is false
        (a 401, `channel_not_found`, an id FalkorDB cannot take) fails the task at once; any
        other exception is a bug: logged with its traceback, and the task fails at once.
        A failed investigation still pages (`task_failed`). Raises `ShuttingDown`
        after releasing the task (uncharged) when the shutdown grace ran out."""
        claimed = task.claim
        try:
            self.busy = True  # inside the try: a grace alarm from here on releases the task
            if task.lease_half_gone:  # its turn in a batch came late: extend the lease first
                task.heartbeat()
            work()
            self.done += finish
        except ShuttingDown:
            self.busy = False
            log.warning("%s: shutdown grace over; releasing task %s", self.name,
                        claimed.task_id)  # fmt: skip
            self._give_back(task, "worker shut down before finishing", charge=False)
            raise
        except LeaseLost as exc:
            log.warning("%s: %s; stopping this task", self.name, exc)
            with contextlib.suppress(GraphUnavailable):  # the calls made still get on record
                task.flush_records()
        except (AdapterError, GraphUnavailable, UnsafeKey) as exc:
            if exc.retryable:
                after = exc.retry_after_s if isinstance(exc, AdapterError) else None
                wait_s = min(after, MAX_RETRY_AFTER_S) if after else backoff_ms(claimed) / 1000
                log.warning("%s: task %s gave up attempt %d, next in %.1f s: %s", self.name,
                            claimed.task_id, claimed.attempts, wait_s, exc)  # fmt: skip
                self._give_back(task, str(exc), int(wait_s * 1000))
            else:
                log.error("%s: task %s (%s) failed, a retry cannot help: %s", self.name,
                          claimed.task_id, claimed.kind, exc)  # fmt: skip
                self._give_back(task, f"permanent: {exc}", fail=True)
        except Exception as exc:  # a bug in one task must not kill the worker
            log.exception("%s: bug: task %s (%s) raised %s; failing it", self.name,
                          claimed.task_id, claimed.kind, type(exc).__name__)  # fmt: skip
            self._give_back(task, f"bug: {type(exc).__name__}: {exc}", fail=True)
        finally:
            self.busy = False

    def _give_back(
        self,
        task: TaskRun,
        reason: str,
        delay_ms: int = 0,
        charge: bool = True,
        fail: bool = False,
    ) -> None:
        """Release the task (`fail`: as failed now, whatever attempts are left); when it ends
        failed, count it and see to its incident (`task_failed`)."""
        with contextlib.suppress(GraphUnavailable):  # else the lease expires: claimable again
            limit = 0 if fail else self.max_attempts
            if task.release(reason, limit, delay_ms, charge) == "failed":
                self.metrics.tasks_failed.labels(kind=task.claim.kind).inc()
                task_failed(task.graph, task.claim.kind, task.claim.incident_id, reason)

    def terminate(self, stop: threading.Event) -> None:
        """Handle SIGTERM in the main thread: set `stop` (no more claims) and, when a task is
        running, arm SIGALRM so it gets `shutdown_grace_s` seconds before `ShuttingDown`."""
        if stop.is_set():
            return
        stop.set()
        log.info("%s: asked to stop: no more claims; %.1f s to finish the current task",
                 self.name, self.shutdown_grace_s)  # fmt: skip
        if self.busy:
            signal.signal(signal.SIGALRM, self._grace_over)
            signal.setitimer(signal.ITIMER_REAL, self.shutdown_grace_s)

    def _grace_over(self, signum: int, frame: FrameType | None) -> None:
        if self.busy:
            raise ShuttingDown

    def idle(self, stop: threading.Event) -> None:
        """Wait for work without asking the graph: block on the wake-up list (`GraphStore.
        wait_for_work`, in slices of 0.25 s so `stop` is seen) until a token arrives or
        `idle_poll_s` passed (the slow poll: tasks nobody announced, such as a lease that
        expired or a retry whose delay is over, are found then)."""
        deadline = time.monotonic() + self.idle_poll_s
        while not stop.is_set() and (left := deadline - time.monotonic()) > 0:
            if self.store.wait_for_work(min(left, 0.25)):
                self.woken = True
                return

    def run(self, stop: threading.Event, burst: bool = False, idle_s: float = 0.05) -> None:
        """Loop until `stop` is set (or, with `burst`, until nothing is claimable; a task
        backing off is not claimable until its delay is over). Idle: `idle()`; `idle_s`: the
        first wait while the database does not answer (doubling up to 5 s)."""
        backoff = idle_s
        down = False
        while not stop.is_set():
            try:
                worked = self.run_once(stop)
                backoff = idle_s
                if down:
                    log.warning("%s: graph available again", self.name)
                    down = False
            except ShuttingDown:
                return
            except GraphUnavailable as exc:
                if not down:  # one line per outage, not one per retry
                    log.warning("%s: %s; waiting with backoff (up to 5 s)", self.name, exc)
                    down = True
                stop.wait(backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            if not worked:
                if burst:
                    return
                self.idle(stop)
