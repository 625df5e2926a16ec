"""GitHub issues as tickets (PyGithub): one issue per incident, closed with a comment on resolve.

The ticket notice is rendered by `adapters.github.markdown` (every field escaped).

Rules, from GitHub's REST reference and PyGithub's behaviour:
- PyGithub retries GET only (`GithubRetry(total=3, allowed_methods={"GET"})`): its default also
  retries POST on 5xx, and a 502 answered after GitHub stored the issue would open a duplicate.
- One issue per intent id: the body starts with a hidden marker, `<!-- blast-radius-intent <hex
  of the intent id> -->`. `find` lists the issues carrying the product's label (state=all,
  updated since the incident opened, less `CLOCK_SKEW_MS`) and matches the marker; the list
  endpoint is strongly consistent, the search index lags by seconds to minutes.
- A resolution comment carries the marker of its own intent; `send` reads the issue's comments
  before posting, so a re-run never comments twice, and closing an issue twice is harmless.
- Labels (the product's own, `severity:*`, `component:*`) are created if missing
  (`GET /labels/{name}` -> 404 -> `POST /labels`); GitHub silently drops labels when the token's
  user lacks push access, which `check()` reports.
- Limits: body and comment <= 65,536 characters, title <= 256, label name <= 50.
- Errors: rate limits (403/429 with GitHub's message), 429, 5xx, 408, 409, timeouts and
  connection errors are retryable (`retry_after_s` from `Retry-After` or the rate-limit reset);
  401, 403, 404, 422 and other 4xx are not. The token never appears in an error or a log line.

External refs: `github:<owner>/<repo>#<number>` for an issue, with `/comments/<id>` appended
for a comment.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import requests
from github import Auth, Github, GithubException, RateLimitExceededException
from github.GithubException import RateLimitExceededExceedsMaxWait
from github.GithubRetry import GithubRetry
from github.Issue import Issue
from github.Repository import Repository
from pydantic import SecretStr

from adapters.github import markdown
from adapters.notices import Ticket, TicketUpdate
from adapters.notify import AdapterError, OutboundMessage

log = logging.getLogger(__name__)

#: GitHub's limits on an issue or comment body, a title and a label name (characters).
BODY_LIMIT = 65_536
TITLE_LIMIT = 256
LABEL_LIMIT = 50
#: `find` looks this far before the incident's opening: alert times come from Prometheus'
#: clock, `updated_at` from GitHub's (ms).
CLOCK_SKEW_MS = 60 * 60 * 1000
#: The longest PyGithub may wait inside one GET for a rate limit to reset (s); a longer wait
#: becomes a retryable `AdapterError` so the worker's task lease does not run out.
MAX_RATE_LIMIT_WAIT_S = 10
#: GitHub asks to wait at least a minute after a secondary rate limit that names no time (s).
SECONDARY_RATE_WAIT_S = 60.0
#: HTTP statuses after which a retry may succeed (besides rate limits).
RETRYABLE_STATUS = frozenset({408, 409, 429})

REF_RE = re.compile(
    r"^github:(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)#(?P<number>\d+)"
    r"(?:/comments/(?P<comment>\d+))?$"
)
SEVERITY_COLORS = {
    "critical": "b60205", "page": "b60205", "error": "d93f0b", "high": "d93f0b",
    "warning": "fbca04", "warn": "fbca04", "info": "0e8a16",
}  # fmt: skip
PRODUCT_COLOR, COMPONENT_COLOR, OTHER_COLOR = "5319e7", "1d76db", "ededed"


def intent_marker(intent_id: str) -> str:
    """The hidden HTML comment naming an intent in an issue or comment body.

    The id is hex-encoded (UTF-8), so the marker is one plain alphanumeric token whatever the
    intent id contains, e.g. `<!-- blast-radius-intent 696e63... -->`.
    """
    return f"<!-- blast-radius-intent {intent_id.encode().hex()} -->"


def issue_ref(repo: str, number: int) -> str:
    """The external ref of an issue: `github:<owner>/<repo>#<number>`."""
    return f"github:{repo}#{number}"


def parse_ref(ref: str | None) -> tuple[str, int] | None:
    """`(owner/repo, issue number)` of a ref made by `issue_ref` (a comment ref gives its
    issue); None for anything else (e.g. an `outbox:` ref)."""
    match = REF_RE.match(ref or "")
    return (match["repo"], int(match["number"])) if match else None


def cut(text: str, limit: int, what: str = "characters") -> str:
    """`text` if it fits in `limit` characters, else its head plus a note of how much was cut."""
    if len(text) <= limit:
        return text
    note = f"\n\n_(cut: {{}} {what} left out)_"
    keep = limit - len(note.format(len(text)))
    return text[:keep] + note.format(len(text) - keep)


def _header(headers: dict[str, Any] | None, name: str) -> str | None:
    for key, value in (headers or {}).items():
        if key.lower() == name.lower():
            return str(value)
    return None


def retry_after_s(headers: dict[str, Any] | None) -> float | None:
    """Seconds to wait from a response's headers: `Retry-After`, else the primary rate limit's
    reset (`X-RateLimit-Remaining: 0` and `X-RateLimit-Reset`, epoch s); None if neither."""
    value = _header(headers, "retry-after")
    if value is not None and value.strip().isascii() and value.strip().isdigit():
        return float(value)
    reset = _header(headers, "x-ratelimit-reset")
    if (
        _header(headers, "x-ratelimit-remaining") == "0"
        and reset
        and reset.isascii()
        and reset.isdigit()
    ):
        return max(0.0, int(reset) - time.time())
    return None


def adapter_error(what: str, exc: Exception, secret: str) -> AdapterError:
    """Map a PyGithub/requests failure of `what` (e.g. `create issue in o/r`) to an
    `AdapterError` that says whether a retry may help; `secret` is scrubbed from the message.

    Rate limits (`RateLimitExceededException`, 429, 403 with GitHub's rate-limit message), 5xx,
    408, 409, timeouts and connection errors are retryable; every other status is not.
    """
    retry_after: float | None = None
    if isinstance(exc, RateLimitExceededExceedsMaxWait):
        retryable, detail, retry_after = True, "rate limited", exc.wait
    elif isinstance(exc, GithubException):
        data = exc.data if isinstance(exc.data, dict) else {}
        message = str(data.get("message") or exc.message or "")
        errors = data.get("errors") or []
        if errors and isinstance(errors, list):
            message += " (" + "; ".join(
                str(e.get("message") or e.get("code")) if isinstance(e, dict) else str(e)
                for e in errors[:3]
            ) + ")"  # fmt: skip
        limited = isinstance(exc, RateLimitExceededException) or exc.status == 429
        retryable = limited or exc.status >= 500 or exc.status in RETRYABLE_STATUS
        retry_after = retry_after_s(exc.headers)
        if limited and retry_after is None:
            retry_after = SECONDARY_RATE_WAIT_S
        detail = f"HTTP {exc.status} {message[:300]}".rstrip()
    elif isinstance(exc, requests.RequestException):
        retryable, detail = True, f"{type(exc).__name__} (no answer, or retries used up)"
    else:
        raise TypeError(f"not a GitHub failure: {type(exc).__name__}") from exc
    text = f"GitHub {what} failed: {detail}"
    if secret:
        text = text.replace(secret, "***")
    return AdapterError(text, retryable=retryable, retry_after_s=retry_after)


def client(
    token: SecretStr, api_url: str, request_interval_s: float = 0.25,
    write_interval_s: float = 1.0, timeout_s: int = 15,
) -> Github:  # fmt: skip
    """A PyGithub client that retries GETs only (a repeated POST could act twice)."""
    return Github(
        auth=Auth.Token(token.get_secret_value()),
        base_url=api_url.rstrip("/"),
        timeout=timeout_s,
        per_page=100,
        retry=GithubRetry(
            total=3,
            allowed_methods=frozenset({"GET"}),
            backoff_factor=0.25,
            secondary_rate_wait=SECONDARY_RATE_WAIT_S,
            max_rate_limit_wait=MAX_RATE_LIMIT_WAIT_S,
            retry_after_max=MAX_RATE_LIMIT_WAIT_S,
        ),
        seconds_between_requests=request_interval_s,
        seconds_between_writes=write_interval_s,
        lazy=True,  # objects fetch on first attribute read: no GET before each write
    )


class GitHubIssues:
    """The ticket `Notifier` on GitHub issues of one repository (see the module docstring).

    `send` opens an issue for a `ticket` message and comments on (and, with `close`, closes)
    the issue named by `reply_to` for a `ticket-update`; `find` reconciles after a crash;
    `check` verifies the token and the repository. Calls are serialised (GitHub asks for
    requests one at a time), and PyGithub pauses `request_interval_s` before each request and
    `write_interval_s` before each write (GitHub's secondary rate limits).
    """

    name = "github"

    def __init__(
        self,
        token: SecretStr,
        repo: str,
        api_url: str = "https://api.github.com",
        label: str = "blast-radius",
        request_interval_s: float = 0.25,
        write_interval_s: float = 1.0,
        timeout_s: int = 15,
    ) -> None:
        self.repo_name = repo
        self.api_url = api_url.rstrip("/")
        self.label = label
        self._token = token
        self._gh = client(token, self.api_url, request_interval_s, write_interval_s, timeout_s)
        self._lock = threading.Lock()
        self._labels_ready: set[str] = set()

    def __repr__(self) -> str:
        return f"GitHubIssues(repo={self.repo_name!r}, api_url={self.api_url!r})"

    @contextlib.contextmanager
    def _calling(self, what: str) -> Iterator[None]:
        """Serialise one logical call and turn its failures into `AdapterError`s."""
        with self._lock:
            try:
                yield
            except (GithubException, requests.RequestException) as exc:
                raise adapter_error(what, exc, self._token.get_secret_value()) from exc

    def _repo(self, name: str | None = None) -> Repository:
        return self._gh.get_repo(name or self.repo_name)

    # ------------------------------------------------------------------ Notifier
    def send(self, message: OutboundMessage) -> str:
        """Open the issue (`ticket`) or comment on and close it (`ticket-update`); return the
        ref (`github:o/r#12`, or `github:o/r#12/comments/345` for a comment).

        Raises `AdapterError` (retryable or not, see `adapter_error`); a non-retryable one for a
        message kind this adapter does not send, or a `ticket-update` whose `reply_to` is not
        a GitHub issue ref.
        """
        notice = message.notice
        if message.kind == "ticket" and isinstance(notice, Ticket):
            with self._calling(f"create issue in {self.repo_name}"):
                return self._open(message, notice)
        if message.kind == "ticket-update" and isinstance(notice, TicketUpdate):
            target = parse_ref(message.reply_to)
            if target is None:
                raise AdapterError(
                    f"GitHub ticket update {message.intent_id}: reply_to {message.reply_to!r} "
                    "is not a GitHub issue ref (github:owner/repo#number)",
                    retryable=False,
                )
            with self._calling(f"update issue {target[0]}#{target[1]}"):
                return self._update(message, notice, *target)
        raise AdapterError(
            f"GitHub adapter sends tickets and ticket updates, not {message.kind!r}",
            retryable=False,
        )

    def find(self, intent_id: str, message: OutboundMessage | None = None) -> str | None:
        """The ref of the issue whose body carries the intent's marker, or None.

        Lists the issues labelled with the product's label (open and closed), updated since
        `message.opened_at_ms` (the incident's opening, ms UTC) less `CLOCK_SKEW_MS`; all of
        them without it. Raises `AdapterError`.
        """
        marker = intent_marker(intent_id)
        filters: dict[str, Any] = {"state": "all", "labels": [self.label]}
        since_ms = message.opened_at_ms if message is not None else None
        if since_ms is not None:
            filters["since"] = datetime.fromtimestamp((since_ms - CLOCK_SKEW_MS) / 1000, UTC)
        with self._calling(f"list issues of {self.repo_name}"):
            for issue in self._repo().get_issues(**filters):
                if marker in (issue.body or ""):
                    return issue_ref(self.repo_name, issue.number)
        return None

    def check(self) -> str:
        """Verify the token and the repository: one line describing them, for `doctor`.

        Raises a non-retryable `AdapterError` when the token is refused (401), the repository
        is not visible to it (404), issues are off, or its user lacks push access (GitHub would
        silently drop the labels `find` relies on); a retryable one when GitHub is unreachable.
        """
        with self._calling(f"read repository {self.repo_name}"):
            repo = self._gh.get_repo(self.repo_name)
            full_name, has_issues, perms = repo.full_name, repo.has_issues, repo.permissions
            remaining, limit = self._gh.rate_limiting
        if not has_issues:
            raise AdapterError(f"GitHub: issues are turned off in {full_name}", retryable=False)
        if perms is None or not perms.push:
            raise AdapterError(
                f"GitHub: the token's user lacks push access to {full_name}; GitHub would "
                "silently drop the labels that find its issues again",
                retryable=False,
            )
        return (
            f"GitHub {self.api_url}: {full_name} reachable with push access; issues labelled "
            f"{self.label!r}; rate limit {remaining}/{limit} left"
        )

    # ------------------------------------------------------------------ details
    def _open(self, message: OutboundMessage, ticket: Ticket) -> str:
        repo = self._repo()
        labels = [self.label] + [
            name for name in (self._label_name(raw) for raw in markdown.labels(ticket))
            if name and name != self.label
        ]  # fmt: skip
        labels = list(dict.fromkeys(labels))
        for name in labels:
            self._ensure_label(repo, name)
        body = intent_marker(message.intent_id) + "\n"
        body += cut(markdown.body(ticket), BODY_LIMIT - len(body))
        title = " ".join(markdown.title(ticket).split()) or message.intent_id
        if len(title) > TITLE_LIMIT:
            title = title[: TITLE_LIMIT - 1] + "…"
        issue = repo.create_issue(title=title, body=body, labels=labels)
        if self.label not in {label.name for label in issue.labels}:
            log.warning(
                "GitHub dropped the labels of %s#%d: the token's user lacks push access, so "
                "find() cannot see this issue after a crash",
                self.repo_name, issue.number,
            )  # fmt: skip
        log.info("opened GitHub issue %s#%d for %s", self.repo_name, issue.number,
                 message.intent_id)  # fmt: skip
        return issue_ref(self.repo_name, issue.number)

    def _update(
        self, message: OutboundMessage, update: TicketUpdate, repo_name: str, number: int
    ) -> str:
        issue: Issue = self._repo(repo_name).get_issue(number)
        marker = intent_marker(message.intent_id)
        comment = next((c for c in issue.get_comments() if marker in (c.body or "")), None)
        if comment is None:
            body = marker + "\n"
            text = markdown.update_body(update)
            comment = issue.create_comment(body + cut(text, BODY_LIMIT - len(body)))
        if update.close and issue.state != "closed":
            issue.edit(state="closed", state_reason="completed")
            log.info("closed GitHub issue %s#%d (%s)", repo_name, number, message.intent_id)
        return f"{issue_ref(repo_name, number)}/comments/{comment.id}"

    def _label_name(self, raw: str) -> str:
        """A label name GitHub and the `labels=` filter accept: no comma, <= 50 characters."""
        return " ".join(raw.replace(",", " ").split())[:LABEL_LIMIT]

    def _ensure_label(self, repo: Repository, name: str) -> None:
        """Create the label if the repository lacks it (once per process per name)."""
        if name in self._labels_ready:
            return
        try:
            repo.get_label(name).update()  # GET /labels/{name}
        except GithubException as exc:
            if exc.status != 404:
                raise
            kind, _, value = name.partition(":")
            color = (
                PRODUCT_COLOR if name == self.label
                else SEVERITY_COLORS.get(value.lower(), OTHER_COLOR) if kind == "severity"
                else COMPONENT_COLOR if kind == "component" else OTHER_COLOR
            )  # fmt: skip
            try:
                repo.create_label(name, color, "Blast Radius incidents"[:100])
            except GithubException as again:  # another worker created it meanwhile
                if again.status != 422:
                    raise
        self._labels_ready.add(name)
