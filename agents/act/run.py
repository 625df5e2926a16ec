"""Run an approved remediation once (task `remediate`, enqueued by the approval).

The outside call goes through `TaskRun.act` under the remediation's one intent id
(`incident:<id>:remediate:<playbook id>`): the Action is reserved in the graph, then the
adapter is called, then its reference recorded. An Action an earlier attempt left `reserved`
(its worker killed during or after the call) is reconciled first: the workflow run found by
its `blast_intent` input, the pull request by its branch; only when nothing is found does it run.
So double clicks (one task per remediation), retries and a SIGKILL anywhere between approval
and dispatch never run it twice.

Every try is an Attempt node: written `started` before the call, then given its outcome
(`dispatched`, `reconciled`, `recorded`, or `error: …`) and the outside reference.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from pydantic import SecretStr, ValidationError

from adapters.github.actions import FlagdPullRequest, WorkflowDispatch
from adapters.github.notifier import client
from adapters.notices import FollowUp, Span
from adapters.notify import AdapterError, Notifier, OutboundMessage
from adapters.runbook_webhook import RunbookWebhook
from agents.act import spec

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Credentials:
    """What the adapters of remediations need: the GitHub token and API (`GITHUB_TOKEN`,
    `GITHUB_API_URL`) and the runbook webhook's signing secret
    (`BLAST_RUNBOOK_WEBHOOK_SECRET`); None where not configured."""

    github_token: SecretStr | None = None
    github_api_url: str = "https://api.github.com"
    webhook_secret: SecretStr | None = None
    github_request_interval_s: float = 0.25
    github_write_interval_s: float = 1.0


#: The setting each remediation type cannot run without.
NEEDS = {"webhook": "BLAST_RUNBOOK_WEBHOOK_SECRET", "github_workflow": "GITHUB_TOKEN",
         "flagd_flag": "GITHUB_TOKEN"}  # fmt: skip


def missing_credential(remediation_type: str | None, creds: Credentials) -> str | None:
    """Why a remediation of `remediation_type` (`spec`'s `type`) cannot run with `creds`, e.g.
    "a webhook remediation needs BLAST_RUNBOOK_WEBHOOK_SECRET (requests are signed), which is
    not set"; None when it can (or the type is unknown: the run says why then). Said where a
    person would otherwise decide in vain: the proposal, the approval, `serve`, `doctor`."""
    if remediation_type == "webhook" and creds.webhook_secret is None:
        return (
            "a webhook remediation needs BLAST_RUNBOOK_WEBHOOK_SECRET (requests are signed), "
            "which is not set"
        )
    if remediation_type in ("github_workflow", "flagd_flag") and creds.github_token is None:
        return f"a {remediation_type} remediation needs GITHUB_TOKEN, which is not set"
    return None


#: Why a proposal cannot run while actions are off.
ACTIONS_OFF = "actions are off (BLAST_ACTIONS_ENABLED=false): nothing runs, nothing is approvable"


def cannot_run(remediation: dict[str, Any], creds: Credentials, enabled: bool) -> str | None:
    """Why the stored remediation `remediation` (a `Remediation` node's properties: `status`,
    `type`) still `proposed` cannot be approved and run with these settings: actions off
    (`enabled` False: `ACTIONS_OFF`) or a missing credential (`missing_credential`); None
    when it can, or when it is no longer proposed (decided: its record says what happened).
    Said wherever the proposal is shown, so nobody is invited to approve in vain."""
    if remediation.get("status") != "proposed":
        return None
    if not enabled:
        return ACTIONS_OFF
    return missing_credential(remediation.get("type"), creds)


#: How long an approved remediation waits before its next try after a failure a retry may
#: help (its runner down, a 5xx without `Retry-After`), by the try that failed: at once after
#: the first (a blip), then `RETRY_BASE_S` doubling, at most `RETRY_MAX_S`. With
#: BLAST_MAX_ATTEMPTS=5 the last try comes about 3.5 min after the first, so a runner being
#: restarted is waited for; the worker's own backoff (1 s doubling) spent them in ~9 s.
RETRY_BASE_S = 30
RETRY_MAX_S = 300


def retry_wait_s(attempts: int) -> int:
    """Seconds before the next try of a remediation whose try number `attempts` (1-based, the
    task's) failed retryably: 0 after the first, then 30, 60, 120, … at most 300 (see
    `RETRY_BASE_S`). Handed to the worker as the error's `retry_after_s`, its own mechanism
    for an outside system's "retry after"."""
    if attempts <= 1:
        return 0
    return int(min(RETRY_BASE_S * 2 ** (attempts - 2), RETRY_MAX_S))


#: The `propose_remediation` task's outcome when the proposal was shown although it could
#: not run (actions off), and the start of the one naming a missing credential
#: (`proposal_outcome`).
SHOWN_ACTIONS_OFF = "shown (actions off)"
SHOWN_CANNOT_RUN = "shown (cannot run: "


def proposal_outcome(enabled: bool, cannot: str | None) -> str:
    """The outcome the `propose_remediation` task records: `SHOWN_ACTIONS_OFF` with actions
    off, `SHOWN_CANNOT_RUN` + the missing credential + ")" (`missing_credential`), else
    "proposed". What `recorded_cannot_run` reads back."""
    if not enabled:
        return SHOWN_ACTIONS_OFF
    return f"{SHOWN_CANNOT_RUN}{cannot})" if cannot else "proposed"


def recorded_cannot_run(outcome: str | None) -> str | None:
    """Why the server could not run a proposal when it proposed it, from its
    `propose_remediation` task's `outcome` (`proposal_outcome`): `ACTIONS_OFF` or the missing
    credential; None when it could, or nothing was recorded. What a reader without the
    server's settings (`blast-radius incident`, run from any shell) may say: the server's own
    record, at the time of the proposal, not this process's settings."""
    if outcome == SHOWN_ACTIONS_OFF:
        return ACTIONS_OFF
    if outcome and outcome.startswith(SHOWN_CANNOT_RUN) and outcome.endswith(")"):
        return outcome[len(SHOWN_CANNOT_RUN) : -1]
    return None


def adapter_for(remediation: spec.GitHubWorkflow | spec.FlagdFlag | spec.Webhook,
                creds: Credentials) -> Notifier:  # fmt: skip
    """The adapter that runs `remediation`. Raises a non-retryable `AdapterError` when its
    credentials are not configured (`missing_credential`)."""
    if (missing := missing_credential(remediation.type, creds)) is not None:
        raise AdapterError(missing, retryable=False)
    if isinstance(remediation, spec.Webhook):
        assert creds.webhook_secret is not None
        return RunbookWebhook(str(remediation.url), remediation.body, creds.webhook_secret)
    assert creds.github_token is not None
    gh = client(creds.github_token, creds.github_api_url, creds.github_request_interval_s,
                creds.github_write_interval_s)  # fmt: skip
    if isinstance(remediation, spec.GitHubWorkflow):
        return WorkflowDispatch(
            gh, creds.github_token, remediation.repo, remediation.workflow, remediation.ref,
            remediation.inputs,
        )  # fmt: skip
    return FlagdPullRequest(
        gh, creds.github_token, remediation.repo, remediation.path, remediation.flag,
        remediation.variant,
    )  # fmt: skip


class Tracked:
    """A `Notifier` that notes whether the call was made (`sent`) or found done (`found`), so
    the Attempt says which (`TaskRun.act` returns the reference either way)."""

    def __init__(self, inner: Notifier) -> None:
        self.inner = inner
        self.name = inner.name
        self.sent = False
        self.found = False

    def send(self, message: OutboundMessage) -> str:
        """The inner adapter's `send`."""
        ref = self.inner.send(message)
        self.sent = True
        return ref

    def find(self, intent_id: str, message: OutboundMessage | None = None) -> str | None:
        """The inner adapter's `find`."""
        ref = self.inner.find(intent_id, message)
        self.found = ref is not None
        return ref

    def check(self) -> str:
        """The inner adapter's `check`."""
        return self.inner.check()

    @property
    def outcome(self) -> str:
        """`dispatched` (this try called out), `reconciled` (found an earlier try's result) or
        `recorded` (the graph already had the outcome)."""
        return "dispatched" if self.sent else "reconciled" if self.found else "recorded"


def stored_spec(row: dict[str, Any]) -> spec.GitHubWorkflow | spec.FlagdFlag | spec.Webhook:
    """The remediation of a `remediation_get` row. Raises a non-retryable `AdapterError` for
    a stored one that is no longer valid."""
    try:
        return spec.load(row["remediation"]["spec_json"])
    except ValidationError as exc:
        raise AdapterError(f"stored remediation is invalid: {exc}"[:500], retryable=False) from None


def message(row: dict[str, Any], what: str) -> OutboundMessage:
    """The run as an `OutboundMessage` (kind `remediation`) under the remediation's intent."""
    rem = row["remediation"]
    approval = row["approval"] or {}
    text = (
        f"{what}; approved by {approval.get('by')} via {approval.get('source')} for incident "
        f"{row['incident_id']} (root cause {rem['component']})."
    )
    notice = FollowUp(about="remediation", incident_id=row["incident_id"],
                      title=f"Remediation for {row['incident_id']}", text=[Span(text=text)],
                      remediation_id=rem["id"])  # fmt: skip
    return OutboundMessage(
        intent_id=rem["intent_id"],
        incident_id=row["incident_id"],
        kind="remediation",
        opened_at_ms=row["opened_at"],
        notice=notice,
    )
