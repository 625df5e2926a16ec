"""Coordination through the graph: claim with a lease and a fencing epoch, checkpointed steps,
and external actions done once per intent id (docs/architecture.md, protocols).

Every write a worker makes for a task matches `owner`, `epoch` and an unexpired lease in the
same query; zero rows means the lease was lost, and `LeaseLost` stops the worker at once.
"""

from __future__ import annotations

import json
import logging
import random
import time
import uuid
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any

from adapters.falkordb import TenantGraph
from adapters.notify import AdapterError, Notifier, OutboundMessage
from agents.metrics import Metrics
from agents.tasks.kinds import AFTER_PAGE, PAGE_DUE, PAGE_KIND, PRIORITY

log = logging.getLogger(__name__)

#: Fenced writes that also write the run's deferred steps (`cypher/_steps_call.cypher`, as
#: `record_steps` does) and extend the lease: one round trip fewer each time a
#: finding or a reservation follows graph-only steps.
STEPS_RIDE = frozenset({"write_finding", "reserve_action"})
#: Fenced writes that take their tasks as rows (`$tasks`, each row fenced on its own task, as
#: `cypher/floor_complete_batch.cypher` does), so a batch's completions go in one query
#: (`Held`): query -> whether the outcomes of outside calls ride on it (`_records_call`).
ROW_WRITES = {"write_finding": False, "complete_task": True}


class LeaseLost(RuntimeError):
    """A fenced write matched zero rows: another worker owns the task now. Stop; write nothing."""


class ShuttingDown(BaseException):
    """Raised in a worker's main thread when SIGTERM's grace period ends mid-task: give the
    current step up, release the lease, exit. A BaseException so no `except Exception` eats it."""


@dataclass(frozen=True)
class StepHooks:
    """Testing and chaos hooks, all off by default (settings `BLAST_CHAOS_*`).

    `delay_ms` with `slow_rate` (0-1): that fraction of steps sleeps `delay_ms` before its
    checkpoint, so a short lease expires mid-step. `halt_after` (> 0): after checkpointing step
    n = `halt_after`, the worker sleeps until it is killed or told to stop (SIGTERM), so a test
    can SIGKILL it at a known point.
    """

    delay_ms: int = 0
    slow_rate: float = 0.0
    halt_after: int = 0


@dataclass(frozen=True)
class Claim:
    """A task this worker holds: `epoch` fences its writes; `attempt_id` names this attempt;
    `claimed_at` (monotonic s) is taken just before the query that gave the lease, so the lease
    is known to run at least until `claimed_at` + the lease."""

    task_id: str
    kind: str
    epoch: int
    attempts: int
    incident_id: str
    alert_key: str | None
    taken_over: bool
    owner: str
    attempt_id: str
    claimed_at: float = 0.0


def claim(
    graph: TenantGraph, kinds: list[str], owner: str, lease_ms: int, max_attempts: int
) -> Claim | None:
    """Claim the most urgent claimable task of `kinds` (open, or with an expired lease, and
    fewer than `max_attempts` attempts): lowest `TaskKind.priority` first, then the oldest;
    or None. The attempt is counted now, at claim time."""
    claimed = claim_batch(graph, kinds, owner, lease_ms, max_attempts, 1)
    return claimed[0] if claimed else None


def claim_batch(
    graph: TenantGraph,
    kinds: list[str],
    owner: str,
    lease_ms: int,
    max_attempts: int,
    most: int,
    page_within_ms: int = 0,
) -> list[Claim]:
    """Claim the most urgent claimable task of `kinds` as `claim` does, and with it up to
    `most` - 1 more of its kind, next in the same order, but at most half of those claimable
    (rounded up: one of one, one of two, two of three), so another idle worker finds the rest
    (`cypher/claim_task.cypher`). Most urgent first; [] when none is claimable. One query.

    `page_within_ms` > 0 (`BLAST_PAGE_WITHIN_MS`) and `page` among `kinds`: an incident whose
    investigation is not done that long after it was created is a `page` task to claim,
    created by this claim (`TaskKind.page_due`); 0: pages wait for their diagnosis."""
    attempt_ids = [uuid.uuid4().hex for _ in range(max(1, most))]
    deadline = page_within_ms > 0 and PAGE_KIND in kinds
    claimed_at = time.monotonic()
    rows = graph.rows(
        "claim_task",
        {
            "kinds": kinds,
            "after_page": AFTER_PAGE,
            "priority": PRIORITY,
            "owner": owner,
            "attempt_ids": attempt_ids,
            "limit": 2 * len(attempt_ids),
            "lease_ms": lease_ms,
            "max_attempts": max_attempts,
            "page_due": PAGE_DUE if deadline else [],
            "page_within_ms": page_within_ms,
        },
    )
    return [
        Claim(
            task_id=row["id"],
            kind=row["kind"],
            epoch=int(row["epoch"]),
            attempts=int(row["attempts"]),
            incident_id=row["incident_id"],
            alert_key=row["alert_key"],
            taken_over=bool(row["taken_over"]),
            owner=owner,
            attempt_id=row["attempt_id"],
            claimed_at=claimed_at,
        )
        for row in rows
    ]


def reap(graph: TenantGraph, max_attempts: int) -> list[dict[str, Any]]:
    """Mark failed, with a reason, every task whose lease expired on its last allowed attempt
    (its workers kept dying or stalling). Returns rows `{id, kind, reason}` of those tasks."""
    return graph.rows("reap_tasks", {"max_attempts": max_attempts})


def oldest_ready(graph: TenantGraph, max_attempts: int) -> dict[str, Any] | None:
    """The task of `graph` ready to claim the longest (`oldest_ready_task.cypher`): a row
    `{kind, incident_id ('' if none), waited_ms (database clock), ready (how many are ready)}`,
    or None when nothing waits. Ready as `claim_batch` sees it: open or with an expired lease,
    attempts left, past `not_before`, a follow-up only once its incident was paged. A long wait
    means no worker claims (none runs, or the ones connected are wedged: `blast-radius doctor`)."""
    rows = graph.rows("oldest_ready_task", {"max_attempts": max_attempts, "after_page": AFTER_PAGE})
    return rows[0] if rows else None


class TaskRun:
    """One attempt at a claimed task: checkpointed steps, fenced writes, once-only actions.

    Steps are numbered from 1. A step that already has a stored result (from an earlier owner)
    is not run again: its stored result is returned, and the new owner resumes at step n + 1.
    """

    def __init__(
        self,
        graph: TenantGraph,
        claimed: Claim,
        lease_ms: int,
        metrics: Metrics | None = None,
        hooks: StepHooks | None = None,
    ) -> None:
        self.graph = graph
        self.claim = claimed
        self.lease_ms = lease_ms
        #: Where steps, actions and planner calls are counted (the worker's `Metrics`).
        self.metrics = metrics if metrics is not None else Metrics()
        self.hooks = hooks or StepHooks()
        #: The tenant every message of this run names first (set by the worker when the
        #: server serves several: `OutboundMessage.named`), or None: nothing is added.
        self.organisation: str | None = None
        #: True on the task's last allowed attempt (set by the worker): an agent that cannot
        #: finish now should save what it can (the responder copies the page to its fallback).
        self.last_attempt = False
        #: Follow-up task kinds this worker would take next (set by the worker, empty once it
        #: is stopping): a completion that enqueues one claims it at once (`chained`).
        self.chain: Callable[[], Collection[str]] = tuple
        #: The follow-up task this run's completion claimed for this worker, or None.
        self.next_claim: Claim | None = None
        #: The task's context read with its batch's (`Worker.run_batch`, the agent's
        #: `read_ahead`), or None: the agent reads it itself.
        self.ahead: Any = None
        #: Where its completion waits to be written with its batch's (set by the worker), or
        #: None: written at once (`complete_with`).
        self.held: Held | None = None
        self._next_attempt_id = uuid.uuid4().hex
        self._n = 0
        #: Steps run but not written yet (`step(deferred=True)`), written by `flush`.
        self._pending: list[dict[str, Any]] = []
        #: Outcomes of outside calls not written yet (`_record`): they go with the next
        #: reservation or completion (`reserve_action`, `complete_task`), or `flush_records`.
        self._records: list[dict[str, Any]] = []
        #: Delivery attempts not written yet (`deliveries`), written with the outcomes.
        self._deliveries: list[dict[str, Any]] = []
        #: Actions to reserve with the next reservation (`reserve_ahead`), and the
        #: `reserve_action` `ahead` rows of those reserved so, by intent id (`act` uses them).
        self._ahead: list[dict[str, Any]] = []
        self._reserved: dict[str, dict[str, Any]] = {}
        #: Intent id -> ref of the actions this attempt's batch sent for it (`send_ahead`):
        #: `act` returns the ref without a call.
        self._sent: dict[str, str] = {}
        #: When this worker last extended the lease (monotonic s): the claim, a step write, a
        #: heartbeat or a reservation.
        self._renewed = claimed.claimed_at or time.monotonic()
        first_claim = claimed.epoch == 1  # never claimed before: no stored steps to read
        self._stored = {} if first_claim else {
            int(row["n"]): row for row in graph.rows("task_steps", {"task_id": claimed.task_id})
        }  # fmt: skip
        self.resumed_steps = len(self._stored)

    @property
    def lease_half_gone(self) -> bool:
        """Over half the lease has passed since this worker last extended it (a task whose
        turn in a batch came late): `heartbeat` before going on."""
        return time.monotonic() - self._renewed > self.lease_ms / 2000

    def next_stored(self) -> str | None:
        """The tool of the stored step the next `step` call would return (an earlier attempt
        got that far), or None: the next step runs now. A caller may take a branch that is not
        a step only where no earlier attempt went on (see `agents.investigate.investigator`)."""
        stored = self._stored.get(self._n + 1)
        return None if stored is None else str(stored["tool"])

    @property
    def fence(self) -> dict[str, Any]:
        """The parameters every fenced query takes."""
        return {"task_id": self.claim.task_id, "owner": self.claim.owner, "epoch": self.claim.epoch}

    def step(
        self,
        tool: str,
        args: dict[str, Any],
        run: Callable[[], Any],
        touched: Iterable[str] = (),
        deferred: bool = False,
    ) -> Any:
        """Run one step, or return its stored result; checkpoint it before returning.

        `run` returns a JSON-serialisable result. `touched`: component names the step looked at
        (TOUCHED edges). `deferred`: the step only reads the graph (its result is a function of
        the graph, no outside system is asked), so its checkpoint may wait and go out with the
        next checkpoint or fenced write of this run (`flush`), one round trip for the lot. A worker
        that dies before then makes the next owner read the graph again;
        an outside call is never repeated, because its step is written at once with every
        deferred step before it. Raises `LeaseLost` if the checkpoint write matched no task.
        """
        self._n += 1
        stored = self._stored.get(self._n)
        if stored is not None and stored["tool"] == tool:
            return json.loads(stored["result"])
        started = int(time.time() * 1000)
        clock = time.perf_counter()
        result = run()
        hooks = self.hooks
        if hooks.delay_ms and random.random() < hooks.slow_rate:  # noqa: S311 - not crypto
            time.sleep(hooks.delay_ms / 1000)
        self._pending.append(
            {
                "n": self._n,
                "tool": tool,
                "args": json.dumps(args, sort_keys=True, ensure_ascii=False),
                "result": json.dumps(result, sort_keys=True, ensure_ascii=False),
                "started_at": started,
                "touched": sorted(set(touched)),
            }
        )
        # Half the lease gone since it was last extended: write now, which extends it again (and
        # finds out at once if it was lost, rather than at the end of the run).
        if not deferred or self.lease_half_gone or self._n == hooks.halt_after:
            self.flush()
        self.metrics.step_seconds.labels(tool=tool).observe(time.perf_counter() - clock)
        if self._n == hooks.halt_after:
            log.warning("task %s: halting after step %d (BLAST_CHAOS_HALT_AFTER_STEP)",
                        self.claim.task_id, self._n)  # fmt: skip
            while True:
                time.sleep(1)
        return result

    def flush(self) -> None:
        """Write the deferred steps (`step(deferred=True)`) in one fenced query
        (`cypher/record_steps.cypher`), which also extends the lease. Nothing to write: no
        query. Raises `LeaseLost` if the write matched no task."""
        if not self._pending:
            return
        last = self._pending[-1]
        renewed = time.monotonic()
        row = self.graph.one(
            "record_steps", self.fence | {"row": self._take_steps(), "lease_ms": self.lease_ms}
        )
        if row is None:
            raise LeaseLost(
                f"task {self.claim.task_id}: lease lost at step {last['n']} ({last['tool']})"
            )
        self._renewed = renewed

    def heartbeat(self) -> None:
        """Extend the lease if this worker still holds it; raise `LeaseLost` if not."""
        renewed = time.monotonic()
        self.fenced("heartbeat_task", {"lease_ms": self.lease_ms})
        self._renewed = renewed

    def fenced(self, query: str, params: dict[str, Any]) -> dict[str, Any]:
        """Run a fenced write (the query matches the task by owner, epoch and lease).

        Deferred steps are written first (`flush`), or in the same query when it takes them
        (`STEPS_RIDE`: its `$row`), so what the write rests on is on record; so are the
        outcomes of outside calls, in the same query when it takes `records`
        (`reserve_action`), else first (`flush_records`). The writes of `ROW_WRITES` go
        through `fenced_row`. Raises `LeaseLost` on zero rows.
        """
        renewed = time.monotonic()
        if query in STEPS_RIDE:
            params = params | {"row": self._take_steps()}
        else:
            self.flush()
        if query == "reserve_action":
            params = params | self._take_records()
        else:
            self.flush_records()
        row = self.graph.one(query, self.fence | params)
        if row is None:
            raise LeaseLost(f"task {self.claim.task_id}: lease lost in {query}")
        if query in STEPS_RIDE:  # these extend the lease too
            self._renewed = renewed
        return row

    def _take_steps(self) -> dict[str, Any]:
        """The deferred steps as the row `cypher/_steps_call.cypher` takes (`task_id`, `epoch`,
        `steps`, `first_step`, `touched`); they are no longer pending."""
        steps, self._pending = self._pending, []
        return {
            "task_id": self.claim.task_id,
            "epoch": self.claim.epoch,
            "steps": steps,
            "first_step": steps[0]["n"] if steps else 0,
            "touched": sorted({name for s in steps for name in s["touched"]}),
        }

    def complete(
        self,
        outcome: str,
        next_kind: str | None = None,
        next_id: str | None = None,
        mark_notified: bool = False,
        root_cause: str | None = None,
        shows: str | None = None,
        reached: bool | None = None,
    ) -> None:
        """Mark the task done and enqueue the follow-up task, in one fenced write
        (`complete_task`); the follow-up is claimed for this worker when it takes that kind
        (`chained`, `next_claim`). Within a batch the write waits for the batch's (`held`).

        `mark_notified`: the incident's people were told, `root_cause` is what they were told
        and `shows` what else their page showed (`agents.respond.messages.page_shows`).
        `reached`: whether a page this task sent reached someone (a person on call or a
        channel); None when it sent none.
        """
        fields = {
            "outcome": outcome,
            "next_kind": next_kind,
            "next_id": next_id,
            "mark_notified": mark_notified,
            "root_cause": root_cause,
            "shows": shows,
            "reached": reached,
        }
        self.complete_with("complete_task", fields)

    def complete_with(self, query: str, fields: dict[str, Any]) -> None:
        """Complete the task with `query`, a completing write of `ROW_WRITES` (`complete_task`,
        or `write_finding` with an `outcome`), whose `fields` name `next_kind` and `next_id`.
        With `held` set (a worker's batch), the write waits for the batch's: one query for all
        the batch's completions, each row fenced on its own task (`Held.write`); else now.
        Raises `LeaseLost` (now, or for steps written first)."""
        row, shared = self.row(query, fields | self.chained(fields["next_kind"]))
        if self.held is not None:
            self.held.add(self, query, row, shared)
            return
        sent = time.monotonic()
        self.took(self._write_rows(query, [row], shared)[0], fields["next_id"], sent)

    def fenced_row(self, query: str, fields: dict[str, Any]) -> dict[str, Any]:
        """Run a write of `ROW_WRITES` for this task alone, now; its row. Raises `LeaseLost`."""
        renewed = time.monotonic()
        row, shared = self.row(query, fields)
        written = self._write_rows(query, [row], shared)[0]
        if query in STEPS_RIDE:
            self._renewed = renewed
        return written

    def row(self, query: str, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """This task's row of a `ROW_WRITES` query (its fence, `fields`, and its deferred steps
        when they ride on `query`) and the parameters it adds to the whole query (the
        outcomes of outside calls, when they ride), as `fenced` takes them: what does not ride
        is written first (`flush`, `flush_records`). Raises `LeaseLost` from `flush`."""
        row = fields | {"task_id": self.claim.task_id, "epoch": self.claim.epoch}
        if query in STEPS_RIDE:
            row |= self._take_steps()
        else:
            self.flush()
        if ROW_WRITES[query]:
            return row, self._take_records()
        self.flush_records()
        return row, {}

    def _write_rows(
        self, query: str, rows: list[dict[str, Any]], shared: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """Run `query` for `rows` of this task; its rows back, or `LeaseLost`."""
        written = self.graph.rows(
            query, {"tasks": rows, "owner": self.claim.owner, "lease_ms": self.lease_ms} | shared
        )
        if not written:
            raise LeaseLost(f"task {self.claim.task_id}: lease lost in {query}")
        return written

    def chained(self, next_kind: str | None) -> dict[str, Any]:
        """Fields of a completing row (`complete_task`, `write_finding`) that claim the
        follow-up task of `next_kind` for this worker as it is created, when this worker takes
        that kind now (`chain`): one claim query fewer per task handed on."""
        return {
            "claim_next": next_kind is not None and next_kind in self.chain(),
            "next_attempt_id": self._next_attempt_id,
        }

    def took(self, row: dict[str, Any], next_id: str | None, sent: float) -> None:
        """After a completing query with `chained` fields, sent at `sent` (monotonic s):
        note the follow-up task it claimed for this worker (`next_claim`), if it did."""
        if next_id is not None and row.get("next_claimed"):
            self.next_claim = Claim(
                task_id=next_id, kind=str(row["next_kind"]), epoch=1, attempts=1,
                incident_id=str(row["incident_id"]), alert_key=None, taken_over=False,
                owner=self.claim.owner, attempt_id=self._next_attempt_id, claimed_at=sent,
            )  # fmt: skip

    def release(
        self, reason: str, max_attempts: int, delay_ms: int = 0, charge: bool = True
    ) -> str | None:
        """Give the task back (or fail it after `max_attempts`). Returns the new status, or None
        when the lease was already lost.

        `delay_ms` > 0: no worker may claim it again for that long (an outside system's
        "retry after"), so a rate limit does not burn every attempt at once. `charge=False`
        (a graceful shutdown) gives the attempt back, so it does not count towards
        `max_attempts`.
        """
        self.flush_records()
        row = self.graph.one(
            "release_task",
            self.fence
            | {
                "reason": reason[:500],
                "max_attempts": max_attempts,
                "delay_ms": delay_ms,
                "charge": charge,
            },
        )
        return None if row is None else str(row["status"])

    def pause(self, resume_at_ms: int, reason: str) -> int:
        """Give the task back as `paused` until `resume_at_ms` (ms UTC), uncharged: no worker
        claims it before then, and the next owner resumes from the stored steps. Returns how
        many times the task has been paused. Raises `LeaseLost`."""
        row = self.fenced("pause_task", {"resume_at": resume_at_ms, "reason": reason[:500]})
        return int(row["pauses"])

    @property
    def pauses(self) -> int:
        """How many times this task was paused before this attempt (`pause`)."""
        row = self.graph.one("task_pauses", {"task_id": self.claim.task_id})
        return int(row["pauses"]) if row else 0

    def act(self, notifier: Notifier, message: OutboundMessage) -> str:
        """Deliver `message` at most once per `message.intent_id`; return its external ref.

        Reserve the Action (unique intent id) in the graph, or find it reserved by this
        attempt's previous reservation (`reserve_ahead`, or its batch's: `reserve_batch`),
        call the adapter, record the ref; or find it sent with the batch's (`send_ahead`).
        An Action found reserved by an earlier attempt has an unknown outcome: ask
        `notifier.find()` first and send only if it is not there.
        Raises `LeaseLost`, or `AdapterError` (the Action stays reserved when the outcome is
        unknown, and is marked failed when the adapter says a retry cannot help).
        The message names this run's tenant first (`organisation`), whichever agent made it.
        """
        message = message.named(self.organisation)
        if message.intent_id in self._sent:  # sent with its batch's (`send_ahead`)
            return self._sent.pop(message.intent_id)
        row = self._reserved.pop(message.intent_id, None)
        # Reserved by this attempt (`reserve_ahead`), no deferred step left to write before the
        # call, and over half the lease left: as held as a reservation now would make it.
        if row is None or not (
            row["mine"] and row["status"] == "reserved" and not self._pending
            and not self.lease_half_gone
        ):  # fmt: skip
            ahead, self._ahead = self._ahead, []
            row = self.fenced(
                "reserve_action",
                {
                    "intent_id": message.intent_id,
                    "kind": message.kind,
                    "attempt_id": self.claim.attempt_id,
                    "adapter": notifier.name,
                    "lease_ms": self.lease_ms,  # the reservation renews the lease for the call
                    "ahead": ahead,
                },
            )
            self._renewed = time.monotonic()
            self._reserved |= {r["intent_id"]: r for r in row["ahead"]}
        sent = {"kind": message.kind, "adapter": notifier.name}
        if row["status"] == "sent":
            self.metrics.actions_suppressed.labels(**sent).inc()
            return str(row["external_ref"])
        if not row["mine"]:
            found = notifier.find(message.intent_id, message)
            if found is not None:
                log.info(
                    "intent %s was already delivered (%s); not resending", message.intent_id, found
                )
                self._record(message.intent_id, "sent", found, "reconciled")
                self.metrics.actions_suppressed.labels(**sent).inc()
                return found
            self.heartbeat()  # the lookup took lease time; the send gets a whole lease again
        try:
            ref = notifier.send(message)
        except AdapterError as exc:
            if not exc.retryable:
                self._record(message.intent_id, "failed", None, str(exc)[:500])
            raise
        self._record(message.intent_id, "sent", ref, None)
        self.metrics.actions_sent.labels(**sent).inc()
        return ref

    def reserve_ahead(self, notifier: Notifier, intent_id: str, kind: str) -> None:
        """Reserve the action of `intent_id` (of `kind`, through `notifier`) with this run's
        next reservation, as `act` would: its own `act` then sends without a reservation query
        of its own while this attempt's lease is fresh (one round trip fewer), else reserves as
        usual. Only for an action this run takes next, whatever happens before it: the next
        attempt after a crash finds it reserved and asks `notifier.find()` before sending."""
        self._ahead.append({"intent_id": intent_id, "kind": kind, "adapter": notifier.name})

    def _record(self, intent_id: str, status: str, ref: str | None, detail: str | None) -> None:
        """Note an outside call's outcome; it is written with this run's next reservation or
        completion (one round trip fewer per action), or by `flush_records`. A worker that dies
        first leaves the Action `reserved`: its outcome unknown, the next owner reconciles it
        (`act`), as after a crash during the call itself."""
        self._records.append(
            {"intent_id": intent_id, "status": status, "external_ref": ref, "detail": detail}
        )

    def deliveries(self, incident_id: str, attempts: list[dict[str, Any]]) -> None:
        """Note delivery attempts of the incident's notices (`cypher/_records_call.cypher`'s
        `$deliveries` rows without `incident_id`); they are written with the outcomes `_record`
        notes, so a worker that dies first loses them as it leaves its Action `reserved`."""
        self._deliveries += [d | {"incident_id": incident_id} for d in attempts]

    def _take_records(self) -> dict[str, Any]:
        """The noted outcomes and delivery attempts as `_records_call` parameters; no longer
        pending."""
        taken = {"records": self._records, "deliveries": self._deliveries}
        self._records, self._deliveries = [], []
        return taken

    def flush_records(self) -> None:
        """Write the outcomes `_record` noted and the attempts `deliveries` noted
        (`cypher/record_actions.cypher`, not fenced: the calls happened). Call before reading
        the incident's actions or deliveries."""
        if self._records or self._deliveries:
            self.graph.rows("record_actions", self._take_records())


class Held:
    """The completions of a worker's batch (`TaskRun.complete_with` with `held` set), written
    together: one query per completing query (`ROW_WRITES`), each row fenced on its own task,
    so a lease lost by one task drops that task's row only (its steps, finding and completion),
    and the others are written. The outcomes of outside calls riding on them are written
    whatever the leases (the calls happened).

    Holding a completion until the batch's turns are done costs a task nothing it waits for:
    its follow-up (`respond` after `investigate`, claimed for the same worker) runs after the
    batch anyway. A worker that dies first leaves them to the next owner, as a death just
    before a completion does: steps not written are run again, a page reserved and sent is
    found by `act` before anything is sent again.
    """

    def __init__(self) -> None:
        self._held: list[tuple[TaskRun, str, dict[str, Any], dict[str, Any]]] = []

    def add(self, run: TaskRun, query: str, row: dict[str, Any], shared: dict[str, Any]) -> None:
        """Hold `run`'s completion: `row` of `query`, with `shared` parameters to add."""
        self._held.append((run, query, row, shared))

    def holds(self, incident_id: str) -> bool:
        """A completion of the incident's is held: a task on it must not run before it is
        written (a second task on one incident reads what the first wrote)."""
        return any(run.claim.incident_id == incident_id for run, *_ in self._held)

    @property
    def due(self) -> bool:
        """Over half the lease is gone for a held task since it was last extended: write now,
        while it surely holds."""
        return any(run.lease_half_gone for run, *_ in self._held)

    def write(self) -> list[TaskRun]:
        """Write the held completions, one query per completing query, and forget them; note
        each written task's follow-up claim (`TaskRun.next_claim`). Returns the runs whose
        row was rejected (their lease was lost: another worker owns the task now), logged.
        Raises `GraphUnavailable` (or the database's error): nothing is held any more, the
        tasks' leases run out and they are claimed again."""
        held, self._held = self._held, []
        lost: list[TaskRun] = []
        for query in dict.fromkeys(q for _, q, _, _ in held):
            mine = [(run, row, shared) for run, q, row, shared in held if q == query]
            first = mine[0][0]
            params: dict[str, Any] = {
                "tasks": [row for _, row, _ in mine],
                "owner": first.claim.owner,
                "lease_ms": first.lease_ms,
            }
            for key in mine[0][2]:  # lists of the outcomes riding on it, each run's in turn
                params[key] = [x for _, _, shared in mine for x in shared[key]]
            sent = time.monotonic()
            written = {r["task_id"]: r for r in first.graph.rows(query, params)}
            for run, row, _ in mine:
                if row["task_id"] in written:
                    run.took(written[row["task_id"]], row["next_id"], sent)
                else:
                    log.warning("task %s: lease lost in %s; its writes were not made",
                                run.claim.task_id, query)  # fmt: skip
                    lost.append(run)
        return lost


@dataclass(frozen=True)
class Intended:
    """The outside action a task of a planned batch takes next (an agent's `plan`): `message`
    through `notifier`, then `then()` does the rest of the task (the send itself through
    `TaskRun.act`, its outcome, the completion). The worker reserves a batch's actions in one
    query (`reserve_batch`) and sends those an adapter takes together in one call
    (`send_ahead`) before any task's `then` runs."""

    notifier: Notifier
    message: OutboundMessage
    then: Callable[[], None]


def reserve_batch(planned: list[tuple[TaskRun, Intended]]) -> list[TaskRun]:
    """Reserve each run's intended action in one query (`cypher/reserve_actions.cypher`), each
    row fenced on its own task and carrying its deferred steps (the route the page rests on is
    written with its reservation, as `reserve_action` writes it for one) and the actions the
    run reserves ahead (`reserve_ahead`), and the outcomes of the runs' earlier calls (written
    whatever the leases). Each fenced run finds its row in
    `act` (`reserve_ahead`'s way: no reservation query of its own while its lease is fresh);
    a run whose lease was lost gets no row, its steps and reservation are not written, and it
    must not send. Returns those runs (logged). Raises `GraphUnavailable`: nothing is
    reserved by this call's rows, the leases run out and the tasks are claimed again."""
    if not planned:
        return []
    first = planned[0][0]
    rows: list[dict[str, Any]] = []
    records: list[dict[str, Any]] = []
    deliveries: list[dict[str, Any]] = []
    for run, intended in planned:
        ahead, run._ahead = run._ahead, []
        rows.append(
            run._take_steps()
            | {
                "intent_id": intended.message.intent_id,
                "kind": intended.message.kind,
                "adapter": intended.notifier.name,
                "attempt_id": run.claim.attempt_id,
                "ahead": ahead,
            }
        )
        taken = run._take_records()
        records += taken["records"]
        deliveries += taken["deliveries"]
    renewed = time.monotonic()
    back = {
        str(r["task_id"]): r
        for r in first.graph.rows(
            "reserve_actions",
            {
                "tasks": rows,
                "owner": first.claim.owner,
                "lease_ms": first.lease_ms,
                "records": records,
                "deliveries": deliveries,
            },
        )
    }
    lost: list[TaskRun] = []
    for run, _ in planned:
        row = back.get(run.claim.task_id)
        if row is None:
            log.warning("task %s: lease lost in reserve_actions; it does not send",
                        run.claim.task_id)  # fmt: skip
            lost.append(run)
            continue
        run._renewed = renewed
        run._reserved[str(row["intent_id"])] = row
        run._reserved |= {str(r["intent_id"]): r for r in row["ahead"]}
    return lost


def send_ahead(planned: list[tuple[TaskRun, Intended]]) -> None:
    """Send together, in one call per adapter that has `send_many` (the outbox: one append and
    one fsync), the intended actions that `reserve_batch` reserved for these very attempts
    (`mine`, still `reserved`) while their leases are fresh; each is recorded as `act` records
    it, and its `act` returns the ref. An action reserved by an earlier attempt is left to its
    `act`, which looks for it first (`Notifier.find`); so is every action of an adapter
    without `send_many` (Slack: one API call per page) and every one of a call that failed
    (its `act` sends it, and decides what the failure means)."""
    Sender = Callable[[list[OutboundMessage]], list[str]]
    groups: dict[int, tuple[Sender, list[tuple[TaskRun, Intended]]]] = {}
    for run, intended in planned:
        row = run._reserved.get(intended.message.intent_id)
        fresh = row is not None and row["mine"] and row["status"] == "reserved"
        send_many: Sender | None = getattr(intended.notifier, "send_many", None)
        if fresh and not run.lease_half_gone and send_many is not None:
            groups.setdefault(id(intended.notifier), (send_many, []))[1].append((run, intended))
    for send_many, group in groups.values():
        notifier = group[0][1].notifier
        try:
            refs = send_many([intended.message.named(run.organisation) for run, intended in group])
        except AdapterError as exc:
            log.warning("%d actions not sent together through %s (%s); each sends its own",
                        len(group), notifier.name, exc)  # fmt: skip
            continue
        for (run, intended), ref in zip(group, refs, strict=True):
            intent_id = intended.message.intent_id
            del run._reserved[intent_id]
            run._sent[intent_id] = ref
            run._record(intent_id, "sent", ref, None)
            run.metrics.actions_sent.labels(kind=intended.message.kind, adapter=notifier.name).inc()
