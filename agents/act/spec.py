"""What a playbook may run: a typed remediation, validated like its checks.

A remediation is one of a pydantic union discriminated by `type` (`Remediation`); an unknown
field anywhere is refused with its name (extra="forbid"), so `POST /api/v1/playbooks` answers
422 rather than silently dropping a misspelt key.

- `github_workflow` `{repo, workflow, ref, inputs}` — a GitHub Actions `workflow_dispatch`
  (GitHub REST: "Create a workflow dispatch event") of a rollback or restart workflow.
  `workflow` is the file name (`rollback.yml`) or the numeric id. The run gets one more input,
  `blast_intent` (the intent id), so a retry finds the run instead of dispatching again: the
  workflow must declare that input and name its runs with it
  (`run-name: ${{ inputs.blast_intent }}`), because GitHub's run list does not return inputs.
- `flagd_flag` `{repo, path, flag, variant}` — a pull request that sets the flag's
  `defaultVariant` in a flagd flags file (flagd's flag definition schema: `flags.<key>
  .variants`, `.defaultVariant`); the OpenTelemetry demo's faults are such flags. Its branch is
  named from the intent id, so a retry finds the pull request instead of opening another.
- `webhook` `{url, body}` — a POST of `body` (JSON) to a runbook runner, signed as Slack signs
  its requests (see `adapters.runbook_webhook`).

Each may say `verify_within` (seconds, an ISO 8601 duration such as `PT10M`, or a Prometheus
duration such as `10m`, as escalation levels take; default 10 minutes): how long the verifier
waits for the incident's alerts to resolve or its failure ratio to fall.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, HttpUrl, TypeAdapter, field_validator

from adapters.promql import duration_ms

#: GitHub's `owner/name` spelling of a repository.
REPO_PATTERN = r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$"
#: How long verification waits by default.
VERIFY_WITHIN = timedelta(minutes=10)
#: GitHub accepts at most 10 inputs per workflow_dispatch (one is ours: `blast_intent`).
MAX_INPUTS = 9
#: The input naming the intent in every dispatched run (see the module docstring).
INTENT_INPUT = "blast_intent"


class _Remediation(BaseModel):
    """Base of every remediation: stored as JSON in `Playbook.remediation_json`."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    verify_within: timedelta = Field(VERIFY_WITHIN, gt=timedelta(0), le=timedelta(hours=24))

    @field_validator("verify_within", mode="before")
    @classmethod
    def _prometheus_duration(cls, value: Any) -> Any:
        """`90s`, `10m`, `1h30m` (the world file's other durations, escalation `after`) as a
        timedelta; seconds and ISO 8601 (`PT10M`) are left to pydantic."""
        if isinstance(value, str) and value.strip().isdigit():  # seconds, written as text
            return timedelta(seconds=int(value))
        if isinstance(value, str) and value.strip() and not value.strip().upper().startswith("P"):
            try:
                return timedelta(milliseconds=duration_ms(value))
            except ValueError:
                pass  # not one of those: pydantic says what it expects
        return value


class GitHubWorkflow(_Remediation):
    """A `workflow_dispatch` of `workflow` on `ref` of `repo` with `inputs` (strings)."""

    type: Literal["github_workflow"]
    repo: str = Field(pattern=REPO_PATTERN, max_length=200)
    workflow: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_.-]+$")
    ref: str = Field("main", min_length=1, max_length=250)
    inputs: dict[str, str] = Field(default_factory=dict, max_length=MAX_INPUTS)

    @field_validator("inputs")
    @classmethod
    def _not_ours(cls, value: dict[str, str]) -> dict[str, str]:
        if INTENT_INPUT in value:
            raise ValueError(f"input {INTENT_INPUT!r} is set by blast-radius (the intent id)")
        return value


class FlagdFlag(_Remediation):
    """A pull request setting flag `flag`'s `defaultVariant` to `variant` in `path` of `repo`."""

    type: Literal["flagd_flag"]
    repo: str = Field(pattern=REPO_PATTERN, max_length=200)
    path: str = Field(min_length=1, max_length=500, pattern=r"^[^/].*\.json$")
    flag: str = Field(min_length=1, max_length=200)
    variant: str = Field(min_length=1, max_length=200)


class Webhook(_Remediation):
    """A signed POST of `body` to a runbook runner at `url`."""

    type: Literal["webhook"]
    url: HttpUrl
    body: dict[str, Any] = Field(default_factory=dict)


#: One remediation, by its `type`.
Remediation = Annotated[GitHubWorkflow | FlagdFlag | Webhook, Field(discriminator="type")]
REMEDIATION: TypeAdapter[Any] = TypeAdapter(Remediation)


def load(remediation_json: str) -> GitHubWorkflow | FlagdFlag | Webhook:
    """The stored remediation (`Playbook.remediation_json`). Raises `pydantic.ValidationError`
    for one no longer valid (stored by an older version)."""
    found: GitHubWorkflow | FlagdFlag | Webhook = REMEDIATION.validate_json(remediation_json)
    return found


def dump(remediation: GitHubWorkflow | FlagdFlag | Webhook) -> str:
    """The JSON stored on the playbook and the Remediation node (durations in ISO 8601)."""
    return remediation.model_dump_json(exclude_none=True, round_trip=True)


#: Each remediation type in words, for people (the memory page's fix).
KINDS = {
    "github_workflow": "GitHub Actions workflow (a rollback or restart)",
    "flagd_flag": "flagd flag flip (a pull request)",
    "webhook": "runbook webhook",
}


def _url(url: HttpUrl) -> str:
    """A runbook URL as people may see it: scheme, host, port and path (which runner, which
    environment); user, password and query left out (they may carry a credential)."""
    default = {"http": 80, "https": 443}.get(url.scheme)
    port = f":{url.port}" if url.port and url.port != default else ""
    return f"{url.scheme}://{url.host}{port}{url.path or ''}"


def target(remediation: GitHubWorkflow | FlagdFlag | Webhook) -> str:
    """What a remediation acts on, in short, for people (plain text, not escaped):
    `acme/payment: rollback.yml@main`, `acme/flags: demo.flagd.json, flag paymentFailure`,
    `https://runner.example/run` (no credential: `_url`)."""
    if isinstance(remediation, GitHubWorkflow):
        return f"{remediation.repo}: {remediation.workflow}@{remediation.ref}"
    if isinstance(remediation, FlagdFlag):
        return f"{remediation.repo}: {remediation.path}, flag {remediation.flag}"
    return _url(remediation.url)


def describe(remediation: GitHubWorkflow | FlagdFlag | Webhook) -> str:
    """One line saying what would run, for people (plain text, not escaped)."""
    if isinstance(remediation, GitHubWorkflow):
        inputs = ", ".join(f"{k}={v}" for k, v in sorted(remediation.inputs.items()))
        return (
            f"run GitHub Actions workflow {remediation.workflow} on {remediation.repo}@"
            f"{remediation.ref}" + (f" with {inputs}" if inputs else "")
        )
    if isinstance(remediation, FlagdFlag):
        return (
            f"open a pull request on {remediation.repo} setting flagd flag {remediation.flag} "
            f"to {remediation.variant} in {remediation.path}"
        )
    return f"POST the runbook webhook {_url(remediation.url)}"
