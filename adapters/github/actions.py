"""Remediations on GitHub (PyGithub): a GitHub Actions `workflow_dispatch`, and a pull request
that sets a flagd flag's `defaultVariant`. Each is a `Notifier` for one remediation, so the
worker's once-per-intent protocol (`TaskRun.act`: reserve, call, record; reconcile with `find`
before any retry) runs it.

Rules, from GitHub's REST reference:
- `POST /repos/{o}/{r}/actions/workflows/{id}/dispatches` answers 204 with no run id, and the
  run list (`GET …/workflows/{id}/runs`) does not return a run's inputs. So every dispatch
  carries the input `blast_intent` = the intent id, the workflow names its runs with it
  (`run-name: ${{ inputs.blast_intent }}`), and `find` matches the run's `display_title`
  among the newest 100 `workflow_dispatch` runs. A workflow without `run-name` cannot be
  reconciled: then a retry after an unknown outcome would dispatch again (the docs say so).
- The pull request's branch is named from the intent id (`blast-radius/<intent, slugged>-<hash>`),
  and `find` lists pull requests by `head=<owner>:<branch>` (state all), so a retry finds it.
  A retry after a crash between creating the branch and the pull request reuses the branch
  (422 "Reference already exists" is expected) and the commit already on it.
- The flags file is flagd's flag definition JSON (`{"flags": {<key>: {"state", "variants",
  "defaultVariant"}}}`): a flag or variant the file does not define is refused (not retryable),
  never written.
- Only GETs are retried by PyGithub (`GithubRetry`, as for tickets): a POST answered 5xx may
  have been done, and the next attempt reconciles instead.

External refs: the run's or pull request's `html_url`; a dispatch whose run is not listed yet
is `github-dispatch:<repo>/<workflow>@<ref>` (the next `find` gives the run's link).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
import time
from collections.abc import Iterator

import requests
from github import Github, GithubException
from pydantic import SecretStr

from adapters.github.notifier import adapter_error
from adapters.notices import FollowUp
from adapters.notify import AdapterError, OutboundMessage

#: The dispatch input naming the intent (the workflow must declare it).
INTENT_INPUT = "blast_intent"
#: How many times, 1 s apart, `send` looks for the run it just dispatched (GitHub lists it
#: within seconds); not found then, the ref says "dispatched" and the next `find` links it.
RUN_LOOKUPS = 3


def branch_name(intent_id: str) -> str:
    """The pull request's branch for an intent: readable, a valid git ref name, and unique
    (a hash of the whole intent id), e.g. `blast-radius/incident-inc-1-remediate-pb-1-3f2a9c01`."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", intent_id).strip("-.")[:80]
    return f"blast-radius/{slug}-{hashlib.sha256(intent_id.encode()).hexdigest()[:8]}"


def _said(message: OutboundMessage) -> str:
    """The plain text of the message's notice (a follow-up's sentence), for a PR body."""
    notice = message.notice
    return notice.plain() if isinstance(notice, FollowUp) else notice.title


class _GitHubCall:
    """Serialised calls with PyGithub failures mapped to `AdapterError` (token scrubbed)."""

    def __init__(self, gh: Github, token: SecretStr) -> None:
        self._gh = gh
        self._token = token
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def _calling(self, what: str) -> Iterator[None]:
        with self._lock:
            try:
                yield
            except (GithubException, requests.RequestException) as exc:
                raise adapter_error(what, exc, self._token.get_secret_value()) from exc


class WorkflowDispatch(_GitHubCall):
    """Dispatch `workflow` of `repo` on `ref` with `inputs` plus `blast_intent`."""

    name = "github-actions"

    def __init__(
        self, gh: Github, token: SecretStr, repo: str, workflow: str, ref: str,
        inputs: dict[str, str],
    ) -> None:  # fmt: skip
        super().__init__(gh, token)
        self.repo_name, self.workflow, self.ref, self.inputs = repo, workflow, ref, inputs

    def send(self, message: OutboundMessage) -> str:
        """Dispatch once; return the run's link (or the dispatch ref, see the module
        docstring). Raises `AdapterError`: not retryable for 401/403/404/422 (an unknown
        workflow, an input it does not declare, a ref that does not exist)."""
        where = f"{self.repo_name}/{self.workflow}"
        with self._calling(f"dispatch workflow {where}@{self.ref}"):
            workflow = self._gh.get_repo(self.repo_name).get_workflow(self.workflow)
            workflow.create_dispatch(
                self.ref, self.inputs | {INTENT_INPUT: message.intent_id}, throw=True
            )
        for _ in range(RUN_LOOKUPS):
            found = self.find(message.intent_id, message)
            if found is not None:
                return found
            time.sleep(1.0)
        return f"github-dispatch:{where}@{self.ref}"

    def find(self, intent_id: str, message: OutboundMessage | None = None) -> str | None:
        """The link of the newest `workflow_dispatch` run named with the intent id, or None."""
        with self._calling(f"list runs of {self.repo_name}/{self.workflow}"):
            workflow = self._gh.get_repo(self.repo_name).get_workflow(self.workflow)
            runs = workflow.get_runs(event="workflow_dispatch")
            for index, run in enumerate(runs):
                if index >= 100:  # newest first: an older run is not this intent's
                    break
                if intent_id in (run.display_title or "", run.name or ""):
                    return str(run.html_url)
        return None

    def check(self) -> str:
        """The workflow exists and is active. Raises `AdapterError`."""
        with self._calling(f"read workflow {self.repo_name}/{self.workflow}"):
            workflow = self._gh.get_repo(self.repo_name).get_workflow(self.workflow)
            state, path = workflow.state, workflow.path
        if state != "active":
            raise AdapterError(f"workflow {path} is {state}, not active", retryable=False)
        return f"GitHub Actions workflow {path} of {self.repo_name} is active"


class FlagdPullRequest(_GitHubCall):
    """A pull request on `repo` setting `flag`'s `defaultVariant` to `variant` in `path`."""

    name = "github-flagd"

    def __init__(
        self, gh: Github, token: SecretStr, repo: str, path: str, flag: str, variant: str
    ) -> None:
        super().__init__(gh, token)
        self.repo_name, self.path, self.flag, self.variant = repo, path, flag, variant

    def _changed(self, text: str) -> str:
        """The flags file with the flag's `defaultVariant` set. Raises a non-retryable
        `AdapterError` for a file that is not flagd JSON or lacks the flag or variant."""
        try:
            data = json.loads(text)
            flag = data["flags"][self.flag]
            variants = flag["variants"]
        except (ValueError, KeyError, TypeError):
            raise AdapterError(
                f"{self.repo_name}:{self.path} is not a flagd flags file with flag "
                f"{self.flag!r} (flags.{self.flag}.variants)", retryable=False,
            ) from None  # fmt: skip
        if self.variant not in variants:
            raise AdapterError(
                f"flag {self.flag!r} in {self.repo_name}:{self.path} has no variant "
                f"{self.variant!r} (it has {', '.join(sorted(map(str, variants)))})",
                retryable=False,
            )
        flag["defaultVariant"] = self.variant
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    def send(self, message: OutboundMessage) -> str:
        """Branch, commit and open the pull request; return its link. Raises `AdapterError`."""
        branch = branch_name(message.intent_id)
        with self._calling(f"open flagd pull request on {self.repo_name}"):
            repo = self._gh.get_repo(self.repo_name)
            base = repo.default_branch
            current = repo.get_contents(self.path, ref=base)
            if isinstance(current, list):
                raise AdapterError(f"{self.path} is a directory", retryable=False)
            wanted = self._changed(current.decoded_content.decode("utf-8"))
            try:
                repo.create_git_ref(f"refs/heads/{branch}", repo.get_branch(base).commit.sha)
            except GithubException as exc:
                if exc.status != 422:  # 422: the branch exists, from an earlier try
                    raise
            on_branch = repo.get_contents(self.path, ref=branch)
            assert not isinstance(on_branch, list)
            title = f"Set flag {self.flag} to {self.variant} ({message.incident_id})"
            if on_branch.decoded_content.decode("utf-8") != wanted:
                repo.update_file(self.path, title, wanted, on_branch.sha, branch=branch)
            pull = repo.create_pull(
                base=base, head=branch, title=title,
                body=f"{_said(message)}\n\nIntent `{message.intent_id}`.",
            )  # fmt: skip
            return str(pull.html_url)

    def find(self, intent_id: str, message: OutboundMessage | None = None) -> str | None:
        """The link of the pull request from the intent's branch (any state), or None."""
        owner = self.repo_name.split("/", 1)[0]
        with self._calling(f"list pull requests of {self.repo_name}"):
            repo = self._gh.get_repo(self.repo_name)
            for pull in repo.get_pulls(state="all", head=f"{owner}:{branch_name(intent_id)}"):
                return str(pull.html_url)
        return None

    def check(self) -> str:
        """The flags file is readable and defines the flag and variant. Raises `AdapterError`."""
        with self._calling(f"read {self.repo_name}:{self.path}"):
            current = self._gh.get_repo(self.repo_name).get_contents(self.path)
            assert not isinstance(current, list)
            self._changed(current.decoded_content.decode("utf-8"))
        return f"flagd flag {self.flag} ({self.variant}) found in {self.repo_name}:{self.path}"
