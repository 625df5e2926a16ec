"""Task kinds, declared once: which role claims each kind, what its completion enqueues next,
whether it waits for the incident's first page, whether its failure must still page, whether
its incident is paged without it once the page deadline passes, and how urgent it is.

Everything else is derived from this table: the worker roles (`ROLE_KINDS`), the kinds a
completion may claim on the spot (`CHAINED`), the kinds a failure pages for
(`DIAGNOSIS_KINDS`), the claim query's `$after_page`, `$priority` and `$page_due` parameters
(`AFTER_PAGE`, `PRIORITY`, `PAGE_DUE`) and each agent's `kinds`. The idea is arq's: a job
kind is declared once, with its options beside it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TaskKind:
    """One kind of `Task` node.

    `role`: the worker role that claims it (`investigator`, `responder`, `learner`).
    `then`: the kind its completion enqueues for the same incident, if any.
    `after_page`: claimable only once the incident's first page is out (or the incident was
    merged): a follow-up must not overtake the page it follows up.
    `chained`: a completion that enqueues it may claim it for the same worker in the same
    query (one claim round trip fewer), which is safe only for kinds claimable at once.
    `pages_on_failure`: when it fails for good, the incident still gets an inconclusive
    finding and its page (a failed diagnosis must not leave the on-call unpaged).
    `priority`: the claim order across kinds, lowest first (oldest first within one value).
    A page, and the diagnosis a page waits for, come before what follows up on a page, and
    that before re-investigation and learning, so a burst of new incidents is paged before
    any backlog of other work is worked off (Celery's and Sidekiq's priority queues do the
    same for the same reason). Lower kinds wait under a sustained overload; none is dropped.
    `agent`: the agent package that handles it (`act`), when not its role's own agent
    (`AGENT_OF_ROLE`): a role may run kinds of several agents.
    `page_due`: the first page waits for it, but not past the page deadline
    (`BLAST_PAGE_WITHIN_MS` after the task was created): while it is not done by then, the
    claim query creates the incident's `page` task (`PAGE_KIND`, id `page:<incident id>`) for
    the claiming worker, once, and the incident is paged with what triage knows; the `respond`
    that the task's completion enqueues later edits the cause into that page
    (docs/hot-path.md, "Pages first").
    """

    name: str
    role: str
    then: str | None = None
    after_page: bool = False
    chained: bool = False
    pages_on_failure: bool = False
    priority: int = 2
    agent: str | None = None
    page_due: bool = False


#: `priority` values: the first page, the diagnosis it waits for, follow-ups to people,
#: background work.
PAGE, DIAGNOSIS, FOLLOW_UP, BACKGROUND = 0, 1, 2, 3

TASK_KINDS: tuple[TaskKind, ...] = (
    TaskKind(
        "investigate",
        "investigator",
        then="respond",
        pages_on_failure=True,
        priority=DIAGNOSIS,
        page_due=True,
    ),
    TaskKind("reinvestigate", "investigator", then="notify_update", priority=BACKGROUND),
    TaskKind("respond", "responder", chained=True, priority=PAGE),
    # the page sent before a late diagnosis, created by the claim query itself (`page_due`)
    TaskKind("page", "responder", priority=PAGE),
    TaskKind("notify_cleared", "responder", after_page=True, priority=FOLLOW_UP),
    TaskKind("notify_update", "responder", after_page=True, priority=FOLLOW_UP),
    TaskKind("notify_verdict", "responder", after_page=True, priority=FOLLOW_UP),
    TaskKind("notify_state", "responder", after_page=True, priority=FOLLOW_UP),
    TaskKind("readback", "responder", priority=FOLLOW_UP),
    # an escalation policy's levels, paused between them (agents/respond/escalation.py): pages
    TaskKind("escalate", "responder", priority=PAGE),
    # an alert that fired again reopened its incident: told in the page's thread
    # (agents/respond/flapping.py); no page of its own to wait for
    TaskKind("notify_reopened", "responder", priority=FOLLOW_UP),
    TaskKind("learn", "learner", priority=BACKGROUND),
    # acting on the world (agents/act): the proposal and the verification speak in the
    # page's thread; `remediate` is enqueued by an approval and enqueues the verification;
    # `edit_proposal` by an approval or a rejection.
    # A person waits on a remediation they approved: follow-up priority.
    TaskKind("propose_remediation", "responder", after_page=True, agent="act", priority=FOLLOW_UP),
    TaskKind("remediate", "responder", then="verify_remediation", agent="act", priority=FOLLOW_UP),
    TaskKind("verify_remediation", "responder", after_page=True, agent="act", priority=FOLLOW_UP),
    # enqueued by an approval or a rejection: the proposal edited once, without its buttons
    TaskKind("edit_proposal", "responder", after_page=True, agent="act", priority=FOLLOW_UP),
)

#: Kind name -> its declaration.
BY_NAME: dict[str, TaskKind] = {kind.name: kind for kind in TASK_KINDS}


#: Role -> the kinds its workers claim; `any` claims every kind.
ROLE_KINDS: dict[str, tuple[str, ...]] = {
    role: tuple(kind.name for kind in TASK_KINDS if kind.role == role)
    for role in dict.fromkeys(kind.role for kind in TASK_KINDS)
} | {"any": tuple(kind.name for kind in TASK_KINDS)}
#: Kinds a completion may claim on the spot for the worker that enqueued them.
CHAINED: tuple[str, ...] = tuple(kind.name for kind in TASK_KINDS if kind.chained)
#: Kinds whose failure for good still pages, with an inconclusive finding.
DIAGNOSIS_KINDS: tuple[str, ...] = tuple(k.name for k in TASK_KINDS if k.pages_on_failure)
#: Kinds that wait for the incident's first page (the claim query's `$after_page`).
AFTER_PAGE: list[str] = [kind.name for kind in TASK_KINDS if kind.after_page]
#: Kinds whose incident is paged without them past the page deadline (`$page_due`).
PAGE_DUE: list[str] = [kind.name for kind in TASK_KINDS if kind.page_due]
#: The kind of the page the claim query creates for a `page_due` task past the deadline.
PAGE_KIND = "page"
#: Kind name -> its claim priority, lowest claimed first (the claim query's `$priority`).
PRIORITY: dict[str, int] = {kind.name: kind.priority for kind in TASK_KINDS}
#: Role -> the agent package that handles its kinds unless a kind names another (`agent`).
AGENT_OF_ROLE: dict[str, str] = {
    "investigator": "investigate", "responder": "respond", "learner": "learn",
}  # fmt: skip


def handled_by(agent: str) -> tuple[str, ...]:
    """The kinds the agent of package `agent` (`respond`, `act`, …) handles: an `Agent.kinds`."""
    return tuple(k.name for k in TASK_KINDS if (k.agent or AGENT_OF_ROLE.get(k.role)) == agent)
