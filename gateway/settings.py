"""Settings for every part of Blast Radius, read once from the environment (and `.env`).

One `Settings` object is built in `main()` (the CLI) and passed down; nothing reads the
environment elsewhere. Every field is listed, with a comment, in `.env.example`.
"""

from __future__ import annotations

import difflib
import io
import logging
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from dotenv import dotenv_values
from dotenv.parser import parse_stream
from pydantic import (
    Field,
    IPvAnyNetwork,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from adapters.falkordb import TENANT_RE, graph_name
from adapters.promql import PROM_DURATION, duration_ms

#: `BLAST_MODELS` by default: a fast model first, a stronger one when it is unavailable.
DEFAULT_MODELS = ("claude-haiku-5-5", "claude-sonnet-5-5")
#: Shortest secret accepted outside dev mode (`openssl rand -hex 32` gives 64 characters).
MIN_SECRET_CHARS = 16
#: Words that mark a secret as a placeholder from an example file or a test (lower case).
PLACEHOLDER_WORDS = (
    "changeme", "change-me", "change_me", "replace", "placeholder", "example", "your-",
    "your_", "test", "dummy", "sample", "secret", "password", "xxxx", "todo", "<", ">",
)  # fmt: skip


def default_data_dir() -> Path:
    """The per-user data folder: `$XDG_DATA_HOME/blast-radius` or `~/.local/share/blast-radius`."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "blast-radius"


#: A PromQL range as this gateway takes one (a count and s, m, h or d): `BLAST_DISCOVERY_WINDOW`
#: and `topology discover --window`.
DURATION_RE = re.compile(r"^[0-9]+[smhd]$")


class Settings(BaseSettings):
    """Every setting of the gateway and the workers.

    Environment names are given per field (`alias`); `.env` in the working directory is read too
    (the commands read `BLAST_ENV_FILE`'s file instead when it is set: `chosen_env_file`).
    Durations carry their unit in the name (`_ms`, `_s`).
    """

    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
        hide_input_in_errors=True,  # a validation error must not print a token
        env_ignore_empty=True,  # `KEY=` as copied from .env.example means "the default"
    )

    data_dir: Path = Field(default_factory=default_data_dir, alias="BLAST_DATA_DIR")
    host: str = Field("127.0.0.1", alias="BLAST_HOST")
    port: int = Field(8080, alias="BLAST_PORT", ge=0, le=65535)
    falkordb_url: SecretStr | None = Field(None, alias="FALKORDB_URL")
    webhook_tokens: Annotated[dict[str, SecretStr], NoDecode] = Field(
        default_factory=dict, alias="BLAST_WEBHOOK_TOKENS"
    )
    default_tenant: str = Field("demo", alias="BLAST_DEFAULT_TENANT")
    #: The webhook's body limit (bytes): a storm's notification is large.
    max_body_bytes: int = Field(16 * 1024 * 1024, alias="BLAST_MAX_BODY_BYTES", gt=0)
    #: The body limit of every other route (bytes; Slack's is 1 MiB): a playbook, a change or a
    #: verdict is a few KiB, and a large body to any route would cost every client time.
    max_api_body_bytes: int = Field(256 * 1024, alias="BLAST_MAX_API_BODY_BYTES", gt=0)
    #: Playbooks one tenant may keep, not counting retired ones (422 beyond: retire one first);
    #: each is recalled and checked on incidents near it, so their number is work per incident.
    max_playbooks: int = Field(200, alias="BLAST_MAX_PLAYBOOKS", ge=1, le=100_000)
    #: Checks one playbook may carry (422 beyond); at most 20.
    max_playbook_checks: int = Field(20, alias="BLAST_MAX_PLAYBOOK_CHECKS", ge=1, le=20)
    #: Most bytes of one playbook's checks as stored (JSON; 422 beyond): pages list them.
    max_playbook_bytes: int = Field(16 * 1024, alias="BLAST_MAX_PLAYBOOK_BYTES", ge=1024)
    #: Recalled playbooks whose checks one investigation runs, best first (the rest are not
    #: checked): bounds the check steps of one incident.
    max_recalled_playbooks: int = Field(10, alias="BLAST_MAX_RECALLED_PLAYBOOKS", ge=1, le=50)
    #: Most header fields in one request (431 beyond); browsers and Alertmanager send under 30.
    max_headers: int = Field(100, alias="BLAST_MAX_HEADERS", ge=10, le=10_000)
    #: Most bytes of one request's head (request line and header fields; 431 beyond), however
    #: the bytes arrive: in one piece or a byte at a time.
    max_header_bytes: int = Field(16 * 1024, alias="BLAST_MAX_HEADER_BYTES", ge=1024, le=1 << 20)
    default_severity: str = Field("unknown", alias="BLAST_DEFAULT_SEVERITY")
    incident_window_s: int = Field(900, alias="BLAST_INCIDENT_WINDOW_S", gt=0)
    correlation_hops: int = Field(2, alias="BLAST_CORRELATION_HOPS", ge=0, le=6)
    page_hold_ms: int = Field(5_000, alias="BLAST_PAGE_HOLD_MS", ge=0, le=600_000)
    #: At most one re-investigation per incident this often (s): alerts joining an incident
    #: meanwhile wait for it, and one delivery gets one investigation whatever its size.
    reinvestigate_s: int = Field(10, alias="BLAST_REINVESTIGATE_S", ge=0, le=3600)
    walk_hops: int = Field(6, alias="BLAST_WALK_HOPS", ge=1, le=6)
    #: What memory the investigator uses: graph (recalled playbooks checked against the
    #: incident, past and similar incidents), text (similar incidents only, for the model
    #: planner and the page), none (each incident from scratch; for comparisons).
    memory: Literal["graph", "text", "none"] = Field("graph", alias="BLAST_MEMORY")
    workers: int = Field(2, alias="BLAST_WORKERS", ge=0, le=64)
    lease_ms: int = Field(30_000, alias="BLAST_LEASE_MS", gt=0)
    max_attempts: int = Field(5, alias="BLAST_MAX_ATTEMPTS", gt=0)
    query_timeout_ms: int = Field(1_000, alias="BLAST_QUERY_TIMEOUT_MS", gt=0)
    falkordb_threads: int = Field(
        default_factory=lambda: max(1, (os.cpu_count() or 2) - 1),
        alias="BLAST_FALKORDB_THREADS", ge=1, le=64,
    )  # fmt: skip
    #: The embedded FalkorDB's AOF `appendfsync`: everysec = fsync once a second (a kill -9
    #: while the disk is slow, or a power loss, can lose up to about 2 s of answered writes);
    #: always = an answered write is on disk, at 40-45 % of the throughput (docs/operations.md
    #: "Persistence").
    falkordb_fsync: Literal["always", "everysec"] = Field("everysec", alias="BLAST_FALKORDB_FSYNC")
    prometheus_url: str | None = Field(None, alias="PROMETHEUS_URL")
    query_timeout_max_ms: int = Field(5_000, alias="BLAST_QUERY_TIMEOUT_MAX_MS", gt=0)
    #: Replicas that must hold a webhook's writes before it answers 200 (Redis WAIT); None =
    #: 1 when FALKORDB_URL is a cluster, else 0 (the embedded server has no replica).
    write_replicas: int | None = Field(None, alias="BLAST_WRITE_REPLICAS", ge=0, le=8)
    write_replicas_timeout_ms: int = Field(1_000, alias="BLAST_WRITE_REPLICAS_TIMEOUT_MS", gt=0)
    github_token: SecretStr | None = Field(None, alias="GITHUB_TOKEN")
    github_repo: str | None = Field(
        None, alias="GITHUB_REPO", pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$"
    )
    github_api_url: str = Field(
        "https://api.github.com", alias="GITHUB_API_URL", pattern=r"^https?://\S+$"
    )
    github_label: str = Field(
        "blast-radius", alias="GITHUB_LABEL", min_length=1, max_length=50, pattern=r"^[^,]+$"
    )
    github_request_interval_s: float = Field(0.25, alias="GITHUB_REQUEST_INTERVAL_S", ge=0)
    github_write_interval_s: float = Field(1.0, alias="GITHUB_WRITE_INTERVAL_S", ge=0)
    slack_bot_token: SecretStr | None = Field(None, alias="SLACK_BOT_TOKEN")
    slack_signing_secret: SecretStr | None = Field(None, alias="SLACK_SIGNING_SECRET")
    slack_api_url: str = Field("https://slack.com/api/", alias="SLACK_API_URL")
    slack_default_channel: str | None = Field(None, alias="SLACK_DEFAULT_CHANNEL")
    #: The Slack workspace (team id `T…`) and app (`A…`) whose requests are accepted; a signed
    #: request from another workspace or app is refused (403). Unset: not checked.
    slack_team_id: str | None = Field(None, alias="SLACK_TEAM_ID", pattern=r"^T[A-Z0-9]{2,30}$")
    slack_app_id: str | None = Field(None, alias="SLACK_APP_ID", pattern=r"^A[A-Z0-9]{2,30}$")
    #: The gateway's address as people reach it (e.g. `https://blast.example.com`): pages,
    #: their thread replies and tickets link to the incident's web page under it. Unset: no link.
    public_url: str | None = Field(None, alias="BLAST_PUBLIC_URL")
    notify: Literal["slack", "slack+outbox", "outbox"] | None = Field(None, alias="BLAST_NOTIFY")
    dev: bool = Field(False, alias="BLAST_DEV")
    log_format: Literal["text", "json"] = Field("text", alias="BLAST_LOG_FORMAT")
    metrics_dir: Path | None = Field(None, alias="PROMETHEUS_MULTIPROC_DIR")
    shutdown_grace_s: float = Field(10.0, alias="BLAST_SHUTDOWN_GRACE_S", ge=0)
    chaos_step_delay_ms: int = Field(0, alias="BLAST_CHAOS_STEP_DELAY_MS", ge=0)
    chaos_slow_steps: float = Field(0.0, alias="BLAST_CHAOS_SLOW_STEPS", ge=0, le=1)
    chaos_halt_after_step: int = Field(0, alias="BLAST_CHAOS_HALT_AFTER_STEP", ge=0)
    #: Who may sign in to the web page with a token of their own, as `tenant:person=token,…`
    #: (e.g. `acme:priya@example.com=<token>`); keys are `tenant:person`. The person is who an
    #: acknowledgement, verdict or approval from the page is recorded as.
    viewer_tokens: Annotated[dict[str, SecretStr], NoDecode] = Field(
        default_factory=dict, alias="BLAST_VIEWER_TOKENS"
    )
    #: Client addresses or CIDRs of authenticating proxies (oauth2-proxy): only requests from
    #: them may name the signed-in person in `X-Forwarded-Email` / `X-Auth-Request-Email`, and
    #: their `X-Forwarded-For` / `X-Forwarded-Proto` are applied. Empty: no identity header is
    #: believed, and forwarded headers are applied from 127.0.0.1 and ::1 only.
    trusted_proxies: Annotated[list[IPvAnyNetwork], NoDecode] = Field(
        default_factory=list, alias="BLAST_TRUSTED_PROXIES"
    )
    #: Which tenant a proxy's signed-in person sees, as `tenant:person` or `tenant:@domain`
    #: entries (`acme:@acme.example,globex:sam@example.com`); the first entry that matches
    #: the email decides. A person no entry names is refused.
    proxy_viewers: Annotated[list[tuple[str, str]], NoDecode] = Field(
        default_factory=list, alias="BLAST_PROXY_VIEWERS"
    )
    #: Where the web page links for a new silence: the Alertmanager UI's base URL (its
    #: `--web.external-url`); None = no silence link.
    alertmanager_url: str | None = Field(
        None, alias="BLAST_ALERTMANAGER_URL", pattern=r"^https?://\S+$"
    )
    session_ttl_s: int = Field(12 * 3600, alias="BLAST_SESSION_TTL_S", gt=0)
    live_poll_ms: int = Field(1_000, alias="BLAST_LIVE_POLL_MS", ge=100)
    oncall_refresh_s: float = Field(3600.0, alias="BLAST_ONCALL_REFRESH_S", gt=0)
    discovery_interval_s: float = Field(300.0, alias="BLAST_DISCOVERY_INTERVAL_S", gt=0)
    discovery_window: str = Field("1h", alias="BLAST_DISCOVERY_WINDOW", pattern=DURATION_RE.pattern)
    #: The always-firing alert that proves the alerting pipeline works (kube-prometheus'
    #: `Watchdog`): it opens no incident, and its silence pages the default team once; "" off
    #: (`BLAST_HEARTBEAT_ALERTNAME=off`: an empty value in the environment means the default).
    heartbeat_alertname: str = Field("Watchdog", alias="BLAST_HEARTBEAT_ALERTNAME", max_length=256)
    #: How long the heartbeat may be silent before that page (a Prometheus duration: 30s, 10m,
    #: 1h); the check is armed by the first heartbeat, so a tenant without one is never paged.
    heartbeat_timeout: str = Field("10m", alias="BLAST_HEARTBEAT_TIMEOUT")
    #: Alerts of a resolved incident that fire again within this long of its resolve (a
    #: Prometheus duration; "0" off) reopen it, in the same thread, without a new page.
    reopen_window: str = Field("10m", alias="BLAST_REOPEN_WINDOW")
    pr_authors: Literal["pseudonym", "login"] = Field("pseudonym", alias="BLAST_PR_AUTHORS")
    anthropic_api_key: SecretStr | None = Field(None, alias="ANTHROPIC_API_KEY")
    anthropic_base_url: str | None = Field(
        None, alias="ANTHROPIC_BASE_URL", pattern=r"^https?://\S+$"
    )
    models: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: list(DEFAULT_MODELS), alias="BLAST_MODELS"
    )
    openai_base_url: str | None = Field(
        None, alias="BLAST_OPENAI_BASE_URL", pattern=r"^https?://\S+$"
    )
    openai_model: str | None = Field(None, alias="BLAST_OPENAI_MODEL")
    openai_api_key: SecretStr | None = Field(None, alias="BLAST_OPENAI_API_KEY")
    planner: Literal["rules", "model-when-unsure", "model"] | None = Field(
        None, alias="BLAST_PLANNER"
    )
    model_max_steps: int = Field(8, alias="BLAST_MODEL_MAX_STEPS", ge=1, le=50)
    model_confidence: float = Field(0.6, alias="BLAST_MODEL_CONFIDENCE", ge=0, le=1)
    model_max_tokens: int = Field(1024, alias="BLAST_MODEL_MAX_TOKENS", ge=64, le=32_000)
    model_timeout_s: float = Field(60.0, alias="BLAST_MODEL_TIMEOUT_S", gt=0)
    model_max_pauses: int = Field(3, alias="BLAST_MODEL_MAX_PAUSES", ge=0)
    prometheus_bearer_token: SecretStr | None = Field(None, alias="PROMETHEUS_BEARER_TOKEN")
    prometheus_username: str | None = Field(None, alias="PROMETHEUS_USERNAME")
    prometheus_password: SecretStr | None = Field(None, alias="PROMETHEUS_PASSWORD")
    prometheus_timeout_s: float = Field(5.0, alias="PROMETHEUS_TIMEOUT_S", gt=0, le=60)
    #: Each tenant's own Prometheus, `tenant=url,…` (a URL may carry `user:password@`); a
    #: tenant not named uses PROMETHEUS_URL with its auth. Raw samples of PromQL checks are
    #: shown only from a tenant's own Prometheus (PROMETHEUS_URL counts as its own when one
    #: tenant is configured): a shared one holds other tenants' series too.
    prometheus_urls: Annotated[dict[str, SecretStr], NoDecode] = Field(
        default_factory=dict, alias="BLAST_PROMETHEUS_URLS"
    )
    #: PromQL queries one tenant may run at once, per process (more wait, then fail the check).
    prometheus_concurrency: int = Field(2, alias="BLAST_PROMETHEUS_CONCURRENCY", ge=1, le=64)
    #: Seconds of PromQL query time one tenant may spend per minute, per process; past it its
    #: checks answer `error` (not held) until the minute moves on.
    prometheus_budget_s: float = Field(30.0, alias="BLAST_PROMETHEUS_BUDGET_S", gt=0)
    #: A request's headers must arrive within this many seconds (a slow client is closed, 408).
    header_timeout_s: float = Field(10.0, alias="BLAST_HEADER_TIMEOUT_S", gt=0)
    #: A request's body must arrive within this many seconds after its headers (408 after).
    body_timeout_s: float = Field(60.0, alias="BLAST_BODY_TIMEOUT_S", gt=0)
    #: An idle worker waits for a wake-up (the webhook's) this long before it asks the graph.
    idle_poll_ms: int = Field(1_000, alias="BLAST_IDLE_POLL_MS", ge=10, le=60_000)
    #: A worker claims up to this many ready tasks of one kind at once and reads their
    #: contexts in one query (agents/tasks/worker.py), at most one per 100 ms of the lease;
    #: 1 claims one at a time.
    claim_batch: int = Field(8, alias="BLAST_CLAIM_BATCH", ge=1, le=64)
    #: An incident whose diagnosis is not done this many ms after it opened is paged without it
    #: (its alerts, their owners' on-call, "cause: under investigation"), ahead of every
    #: investigation, and the cause is edited into that page when the diagnosis is in
    #: (docs/hot-path.md, "Pages first"); 0: a page always waits for its diagnosis.
    page_within_ms: int = Field(1_000, alias="BLAST_PAGE_WITHIN_MS", ge=0, le=3_600_000)
    #: Days after which `serve` trims a resolved incident's bulky fields (0 = never). On by
    #: default so the database stays small from the start (docs/benchmarks.md "Memory").
    retention_days: int = Field(7, alias="BLAST_RETENTION_DAYS", ge=0)
    #: Days after which `serve` moves a resolved incident from the graph to
    #: `<data>/archive/<tenant>.jsonl.gz` (gateway/ops/archive.py; 0 = never).
    archive_days: int = Field(30, alias="BLAST_ARCHIVE_DAYS", ge=0)
    #: Run approved remediations (GitHub Actions workflow dispatch, flagd pull request, runbook
    #: webhook; docs/remediation.md). Off: a proposal only says what would run, with no button,
    #: and approvals are refused (409). Off by default: acting on the world is opt-in.
    actions_enabled: bool = Field(False, alias="BLAST_ACTIONS_ENABLED")
    #: The shared secret that signs runbook webhook requests (HMAC-SHA256 over
    #: `v0:<timestamp>:<body>`, headers `X-Blast-Signature` / `X-Blast-Request-Timestamp`).
    runbook_webhook_secret: SecretStr | None = Field(None, alias="BLAST_RUNBOOK_WEBHOOK_SECRET")

    @field_validator("falkordb_url")
    @classmethod
    def _redis_url(cls, value: SecretStr | None) -> SecretStr | None:
        """A URL the redis client takes (its value is never echoed: it may hold a password)."""
        schemes = ("redis://", "rediss://", "unix://", "falkor://")
        if value is not None and not value.get_secret_value().startswith(schemes):
            raise ValueError(f"FALKORDB_URL must start with {', '.join(schemes)}")
        if value is not None and not value.get_secret_value().startswith("unix://"):
            try:  # the redis client raises for these only when it first connects
                urlsplit(value.get_secret_value()).port  # noqa: B018 - raises for a bad port
            except ValueError:
                raise ValueError("FALKORDB_URL has a port that is no number 0-65535") from None
        return value

    @field_validator("prometheus_url", "github_api_url", "slack_api_url", "anthropic_base_url",
                     "openai_base_url", "public_url")  # fmt: skip
    @classmethod
    def _http_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        """An http(s) URL with a host, and a port if any from 0 to 65535: else the setting
        fails at start with its name, not at the first request (`localhost:9090` has no
        scheme). The value is not echoed (a URL may hold credentials)."""
        if value is None:
            return None
        name = cls.model_fields[info.field_name].alias if info.field_name else "the URL"
        try:
            parts = urlsplit(value)
            ok = parts.scheme in ("http", "https") and bool(parts.hostname)
            parts.port  # noqa: B018 - raises ValueError for a bad port
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"{name} must be an http:// or https:// URL with a host (and port)")
        return value

    @field_validator("webhook_tokens", mode="before")
    @classmethod
    def _parse_tokens(cls, value: object) -> object:
        """Parse `tenant=token,tenant2=token2` into a mapping; reject malformed pairs."""
        return token_pairs(value, "BLAST_WEBHOOK_TOKENS")

    @field_validator("prometheus_urls", mode="before")
    @classmethod
    def _parse_prometheus_urls(cls, value: object) -> object:
        """Parse `tenant=url,…`; each URL http(s) with a host (never echoed: it may hold a
        password)."""
        if not isinstance(value, str):
            return value
        urls: dict[str, str] = {}
        for n, pair in enumerate(filter(None, (p.strip() for p in value.split(","))), start=1):
            tenant, sep, url = (part.strip() for part in pair.partition("="))
            if not sep or not TENANT_RE.match(tenant):
                raise ValueError(f"BLAST_PROMETHEUS_URLS entry {n}: write tenant=url, …")
            if tenant in urls:
                raise ValueError(f"BLAST_PROMETHEUS_URLS names tenant {tenant!r} twice")
            try:
                parts = urlsplit(url)
                ok = parts.scheme in ("http", "https") and bool(parts.hostname)
                parts.port  # noqa: B018 - raises ValueError for a bad port
            except ValueError:
                ok = False
            if not ok:
                raise ValueError(
                    f"BLAST_PROMETHEUS_URLS entry for {tenant!r} is no http(s) URL with a host"
                )
            urls[tenant] = url
        return urls

    @field_validator("viewer_tokens", mode="before")
    @classmethod
    def _parse_viewer_tokens(cls, value: object) -> object:
        """Parse `tenant:person=token,…`; reject malformed entries (see `viewer_pairs`)."""
        return viewer_pairs(value)

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _parse_proxies(cls, value: object) -> object:
        """`BLAST_TRUSTED_PROXIES`: addresses or CIDRs separated by commas."""
        if isinstance(value, str):
            return [p.strip() for p in value.split(",") if p.strip()]
        return value

    @field_validator("proxy_viewers", mode="before")
    @classmethod
    def _parse_proxy_viewers(cls, value: object) -> object:
        """`BLAST_PROXY_VIEWERS`: `tenant:person` or `tenant:@domain`, separated by commas."""
        if not isinstance(value, str):
            return value
        found = []
        for n, entry in enumerate(filter(None, (p.strip() for p in value.split(","))), 1):
            tenant, sep, who = (part.strip() for part in entry.partition(":"))
            if not sep or not who or not TENANT_RE.match(tenant):
                raise ValueError(
                    f"BLAST_PROXY_VIEWERS entry {n} is not tenant:person or tenant:@domain"
                )
            found.append((tenant, who.lower()))
        return found

    @field_validator("models", mode="before")
    @classmethod
    def _parse_models(cls, value: object) -> object:
        """`BLAST_MODELS`: model ids separated by commas, in the order they are tried."""
        if isinstance(value, str):
            return [m.strip() for m in value.split(",") if m.strip()]
        return value

    @field_validator("heartbeat_alertname", mode="before")
    @classmethod
    def _heartbeat_off(cls, value: object) -> object:
        """`off` turns the heartbeat check off (""): `BLAST_HEARTBEAT_ALERTNAME=` in the
        environment is the default, `Watchdog`, as every empty setting is (`env_ignore_empty`)."""
        if isinstance(value, str) and value.strip().lower() == "off":
            return ""
        return value

    @field_validator("heartbeat_timeout", "reopen_window")
    @classmethod
    def _check_duration(cls, value: str, info: ValidationInfo) -> str:
        """A Prometheus duration (`10m`); the reopen window may be "0" (off). A zero heartbeat
        timeout is refused with the way to turn the check off instead (the reopen window's
        "0" suggests it would be), unless the check is off already (`off` and `0` together
        mean off)."""
        text = value.strip()
        # "0", "0s", "0m", …: a zero that is no Prometheus duration
        zero = text == "0" or (
            bool(text) and bool(PROM_DURATION.match(text)) and not set(text) & set("123456789")
        )
        if info.field_name == "reopen_window" and zero:
            return "0"
        if info.field_name == "heartbeat_timeout" and zero:
            if info.data.get("heartbeat_alertname") == "":  # the check is off: nothing to time
                return "0"
            raise ValueError(
                f"{value.strip()!r} is no timeout (the check would page as soon as a "
                "heartbeat arrived); to turn the heartbeat check off, set "
                "BLAST_HEARTBEAT_ALERTNAME=off; else give a duration like 10m"
            )
        duration_ms(value)  # raises ValueError with the reason
        return value.strip()

    @property
    def heartbeat_timeout_ms(self) -> int:
        """`BLAST_HEARTBEAT_TIMEOUT` in ms (0 with the check off and a timeout of "0")."""
        return 0 if self.heartbeat_timeout == "0" else duration_ms(self.heartbeat_timeout)

    @property
    def reopen_window_ms(self) -> int:
        """`BLAST_REOPEN_WINDOW` in ms (0: a resolved incident never reopens)."""
        return 0 if self.reopen_window == "0" else duration_ms(self.reopen_window)

    @field_validator("default_tenant")
    @classmethod
    def _check_tenant(cls, value: str) -> str:
        graph_name(value)
        return value

    @field_validator(
        "falkordb_url", "prometheus_url", "github_token", "github_repo", "slack_bot_token",
        "slack_signing_secret", "slack_default_channel", "notify", "anthropic_api_key",
        "slack_team_id", "slack_app_id", "public_url",
        "anthropic_base_url", "openai_base_url", "openai_model", "openai_api_key", "planner",
        "runbook_webhook_secret", mode="before",
    )  # fmt: skip
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        """An empty value (`GITHUB_TOKEN=` as in `.env.example`) means unset."""
        return None if value == "" else value

    @model_validator(mode="after")
    def _github_complete(self) -> Settings:
        """GitHub tickets need both `GITHUB_TOKEN` and `GITHUB_REPO`; one alone is a mistake."""
        if (self.github_token is None) != (self.github_repo is None):
            missing = "GITHUB_REPO" if self.github_repo is None else "GITHUB_TOKEN"
            raise ValueError(
                f"GitHub tickets need GITHUB_TOKEN and GITHUB_REPO; {missing} is unset"
            )
        return self

    @field_validator(
        "prometheus_bearer_token", "prometheus_username", "prometheus_password", mode="before"
    )
    @classmethod
    def _empty_prometheus_auth_is_unset(cls, value: object) -> object:
        """An empty value (as in `.env.example`) means unset."""
        return None if value == "" else value

    @model_validator(mode="after")
    def _check_prometheus_auth(self) -> Settings:
        """Prometheus auth is a bearer token or basic auth (username and password), not both."""
        basic = (self.prometheus_username, self.prometheus_password)
        if (basic[0] is None) != (basic[1] is None):
            raise ValueError(
                "Prometheus basic auth needs PROMETHEUS_USERNAME and PROMETHEUS_PASSWORD"
            )
        if self.prometheus_bearer_token is not None and basic[0] is not None:
            raise ValueError("set PROMETHEUS_BEARER_TOKEN or PROMETHEUS_USERNAME, not both")
        return self

    @model_validator(mode="after")
    def _check_slack(self) -> Settings:
        """Slack needs its bot token, and its signing secret to verify buttons and replies."""
        if self.notify_mode != "outbox" and self.slack_bot_token is None:
            raise ValueError(f"BLAST_NOTIFY={self.notify} needs SLACK_BOT_TOKEN")
        if self.slack_bot_token is not None and self.slack_signing_secret is None:
            raise ValueError(
                "SLACK_BOT_TOKEN is set but SLACK_SIGNING_SECRET is not: Slack buttons and "
                "replies could not be verified"
            )
        return self

    @model_validator(mode="after")
    def _viewers_known(self) -> Settings:
        """A viewer token must name a tenant the gateway serves (`tenants`), or its page would
        show a graph nobody writes to."""
        named = {key.partition(":")[0] for key in self.viewer_tokens}
        named |= {tenant for tenant, _ in self.proxy_viewers}
        unknown = sorted(named - set(self.tenants))
        if unknown:
            raise ValueError(
                "BLAST_VIEWER_TOKENS or BLAST_PROXY_VIEWERS names tenants the gateway does not "
                "serve: "
                f"{', '.join(unknown)} (list each in BLAST_WEBHOOK_TOKENS; with none there, only "
                "BLAST_DEFAULT_TENANT)"
            )
        return self

    @model_validator(mode="after")
    def _prometheus_tenants_known(self) -> Settings:
        """A tenant's own Prometheus must belong to a tenant the gateway serves."""
        unknown = sorted(set(self.prometheus_urls) - set(self.tenants))
        if unknown:
            raise ValueError(
                "BLAST_PROMETHEUS_URLS names tenants the gateway does not serve: "
                f"{', '.join(unknown)} (list each in BLAST_WEBHOOK_TOKENS)"
            )
        return self

    @model_validator(mode="after")
    def _check_planner(self) -> Settings:
        """A model planner needs a model: an Anthropic key or an OpenAI-compatible endpoint."""
        if self.planner not in (None, "rules") and not self.model_chain_configured:
            raise ValueError(
                f"BLAST_PLANNER={self.planner} needs ANTHROPIC_API_KEY or BLAST_OPENAI_BASE_URL"
            )
        if (self.openai_base_url is None) != (self.openai_model is None):
            raise ValueError("BLAST_OPENAI_BASE_URL and BLAST_OPENAI_MODEL go together")
        return self

    @property
    def model_chain_configured(self) -> bool:
        """True when some model can be asked: an Anthropic key with `BLAST_MODELS`, or an
        OpenAI-compatible endpoint."""
        return (self.anthropic_api_key is not None and bool(self.models)) or (
            self.openai_base_url is not None
        )

    @property
    def planner_mode(self) -> str:
        """`BLAST_PLANNER`, else `model-when-unsure` when a model is configured, else `rules`."""
        if self.planner is not None:
            return self.planner
        return "model-when-unsure" if self.model_chain_configured else "rules"

    @property
    def github_enabled(self) -> bool:
        """True when tickets go to GitHub issues (token and repository set), else the outbox."""
        return self.github_token is not None and self.github_repo is not None

    @property
    def notify_mode(self) -> str:
        """Where pages go: `BLAST_NOTIFY`, else `slack` when `SLACK_BOT_TOKEN` is set, else
        `outbox`."""
        if self.notify is not None:
            return self.notify
        return "slack" if self.slack_bot_token is not None else "outbox"

    @property
    def tenants(self) -> list[str]:
        """Tenants whose graphs the workers serve: those with a token, else the default tenant."""
        return sorted(self.webhook_tokens) or [self.default_tenant]

    @property
    def auth_required(self) -> bool:
        """True when webhook tokens are configured (then every request must carry one)."""
        return bool(self.webhook_tokens)

    def secrets(self) -> dict[str, str]:
        """Every configured secret value by its setting name (`BLAST_WEBHOOK_TOKENS[acme]`), for
        redaction and the placeholder check. A URL's password is listed on its own too."""
        found: dict[str, str] = {}
        for name, field in type(self).model_fields.items():
            value = getattr(self, name)
            if isinstance(value, SecretStr):
                found[str(field.alias)] = value.get_secret_value()
            elif isinstance(value, dict):
                for key, item in value.items():
                    if isinstance(item, SecretStr):
                        found[f"{field.alias}[{key}]"] = item.get_secret_value()
        for name, value in list(found.items()):
            if "://" in value and (password := urlsplit(value).password):
                found[f"{name} password"] = password
        return {name: value for name, value in found.items() if value}

    def placeholder_secrets(self) -> list[str]:
        """One line per secret that looks like a placeholder or is too short (empty when
        `BLAST_DEV` is on). Lines name the setting, never the value.

        Rule: a token must have at least `MIN_SECRET_CHARS` characters, 8 distinct ones, and no
        word of `PLACEHOLDER_WORDS` (the values in `.env.example`, docs and tests). URLs are only
        checked for a placeholder password.
        """
        if self.dev:
            return []
        problems = []
        for name, value in self.secrets().items():
            lowered = value.lower()
            if "://" in value:
                continue  # a URL is not a token; its password is checked as "<name> password"
            sample = next((word for word in PLACEHOLDER_WORDS if word in lowered), None)
            if sample is not None:  # the word, so the reader knows what to change; never more
                problems.append(f"{name} looks like a placeholder (it contains {sample!r})")
            elif len(value) < MIN_SECRET_CHARS or len(set(value)) < 8:
                problems.append(
                    f"{name} is too weak: use at least {MIN_SECRET_CHARS} random characters "
                    "(e.g. `openssl rand -hex 32`)"
                )
        return problems

    @property
    def viewers(self) -> list[tuple[str, str, SecretStr]]:
        """The people who sign in to the web page with a token: `(tenant, person, token)`
        from `BLAST_VIEWER_TOKENS`, in the order given."""
        found = []
        for key, token in self.viewer_tokens.items():
            tenant, _, person = key.partition(":")
            found.append((tenant, person, token))
        return found

    @property
    def web_open_mode(self) -> bool:
        """True when nothing at all is configured to tell people apart or keep tenants apart (no
        webhook token, viewer token or proxy viewer): the web page needs no sign-in and shows
        the default tenant (`Runtime.serve_http` allows that on a loopback address only)."""
        return not (self.webhook_tokens or self.viewer_tokens or self.proxy_viewers)


def query_timeouts_problem(settings: Settings) -> str | None:
    """Why `BLAST_QUERY_TIMEOUT_MS` over `BLAST_QUERY_TIMEOUT_MAX_MS` is a problem, or None:
    they are FalkorDB's `TIMEOUT_DEFAULT` and `TIMEOUT_MAX`, and FalkorDB refuses to load with
    the default over the maximum ("The TIMEOUT_DEFAULT(9000) configuration parameter value is
    higher than TIMEOUT_MAX(5000)" in its log), so the embedded server and `blast-radius
    falkordb` would exit at start: doctor says it, and `gateway.ops.runtime.embedded_server`
    refuses to start the server with it (in these words, not FalkorDB's log's)."""
    default, most = settings.query_timeout_ms, settings.query_timeout_max_ms
    if default <= most:
        return None
    return (
        f"BLAST_QUERY_TIMEOUT_MS={default} is over BLAST_QUERY_TIMEOUT_MAX_MS={most}: FalkorDB "
        "refuses a TIMEOUT_DEFAULT over TIMEOUT_MAX, so the embedded server (and `blast-radius "
        "falkordb`) exits at start; set BLAST_QUERY_TIMEOUT_MS at most BLAST_QUERY_TIMEOUT_MAX_MS"
    )


#: The environment variable naming the env file every command reads instead of `./.env` (an
#: `--env-file` option still wins): the systemd units set it to their `EnvironmentFile=`, so a
#: stray `.env` in their working directory is never read.
ENV_FILE_VAR = "BLAST_ENV_FILE"

#: `BLAST_*` names that are no setting of `Settings`: deploy/install.sh's own, the browser
#: test's (README "The two commands") and `ENV_FILE_VAR`, which chooses where settings are read.
NOT_SETTINGS = frozenset(
    {"BLAST_VENV_ARGS", "BLAST_PIP_ARGS", "BLAST_TEST_ARTIFACTS", ENV_FILE_VAR}
)


def chosen_env_file(option: Path | None = None) -> Path | None:
    """The env file the settings are read from besides the environment: `option` (a command's
    `--env-file`), else `BLAST_ENV_FILE` when set and not empty, else None (`./.env` of the
    working directory, when there is one)."""
    if option is not None:
        return option
    named = os.environ.get(ENV_FILE_VAR, "").strip()
    return Path(named) if named else None


def unknown_settings(env_file: Path | None = None) -> list[str]:
    """One line per line of the env file (`env_file`, else `./.env`) that is no `NAME=value`
    (`unreadable_lines`), then one per `BLAST_*` name set in the environment or that file
    that is no setting, naming the closest setting when one is close: a typo such as
    `BLAST_WEBHOOK_TOKEN` would otherwise be ignored without a word (pydantic-settings ignores
    unknown names, as other tools' variables share the environment)."""
    known = {field.alias for field in Settings.model_fields.values() if field.alias}
    path = env_file if env_file is not None else Path(".env")
    with dotenv_quiet():
        names = set(os.environ) | (set(dotenv_values(path)) if path.is_file() else set())
    lines = unreadable_lines(path) if path.is_file() else []
    for name in sorted(n for n in names if n.startswith("BLAST_")):
        if name in known or name in NOT_SETTINGS:
            continue
        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.8)
        hint = f" (did you mean {close[0]}?)" if close else ""
        lines.append(f"{name} is no setting{hint}; it is ignored (docs/configuration.md)")
    return lines


@contextmanager
def dotenv_quiet() -> Iterator[None]:
    """While the env file is read: python-dotenv's own logger off. It logs a WARNING ("could
    not parse statement starting at line N") each time the file is read (twice for doctor,
    once per worker process), beside our line for it (`unreadable_lines`), which says what the
    line starts with and that it sets nothing."""
    logger = logging.getLogger("dotenv.main")
    was = logger.disabled
    logger.disabled = True
    try:
        yield
    finally:
        logger.disabled = was


def unreadable_lines(path: Path) -> list[str]:
    """One line per statement of the env file at `path` that sets nothing: one python-dotenv
    cannot read (no `NAME=value`, an unclosed quote) and a bare `NAME` with no `=` (python-dotenv
    reads it as no value, so the setting keeps its default). Either is skipped, so whatever it
    meant to set keeps its default (a trial's `BLAST_WORKERS="2` was dropped while doctor said
    the settings were ok). The line number and its first word (up to a `=` or a space; a line
    that starts with `=` shows that `=` alone) only: the rest may hold a secret."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []  # an unreadable file is the caller's error (`load_settings`)
    bad = [
        b.original
        for b in parse_stream(io.StringIO(text))
        if b.error or (b.key is not None and b.value is None)
    ]
    return [
        f"{path} line {line.line}: not NAME=value, so it sets nothing (it starts "
        f"{first_word(line.string)!r})"
        for line in bad
    ]


def first_word(line: str) -> str:
    """What `unreadable_lines` shows of a line: up to its first `=` or space, at most 40
    characters; `=` for a line that starts with one (its name is missing, and what follows
    is a value, perhaps a secret)."""
    text = line.strip()
    return FIRST_WORD.split(text)[0][:40] or text[:1]


#: What `unreadable_lines` shows of a line: up to its first `=` or space.
FIRST_WORD = re.compile(r"[=\s]")


def viewer_pairs(value: object) -> object:
    """`BLAST_VIEWER_TOKENS`: `tenant:person=token,…` as a mapping `{"tenant:person": token}`
    (anything else is returned as is, for pydantic to check). One token per person, so an
    acknowledgement is one person's. Raises ValueError for an entry without a person (a token
    shared by a team cannot say who acted), a bad tenant name, a person named twice in one
    tenant, or one token given twice. A message never holds a token.
    """
    if not isinstance(value, str):
        return value
    found: dict[str, str] = {}
    seen: set[str] = set()
    setting = "BLAST_VIEWER_TOKENS"
    for n, entry in enumerate(filter(None, (p.strip() for p in value.split(","))), start=1):
        who, sep, token = (part.strip() for part in entry.partition("="))
        tenant, colon, person = (part.strip() for part in who.partition(":"))
        if not sep or not colon or not person:
            raise ValueError(
                f"{setting} entry {n} names no person: write tenant:person=token (one token per "
                "person, e.g. acme:priya@example.com=…)"
            )
        if not TENANT_RE.match(tenant):
            raise ValueError(f"{setting} entry {n}: {tenant!r} is not a tenant name")
        if not token:
            raise ValueError(f"{setting} entry for {tenant}:{person} has no token")
        key = f"{tenant}:{person}"
        if key in found:
            raise ValueError(f"{setting} names {key} twice: one token per person")
        if token in seen:
            raise ValueError(f"{setting} gives one token to two people: each needs their own")
        found[key] = token
        seen.add(token)
    return found


def token_pairs(value: object, setting: str) -> object:
    """`tenant=token,tenant2=token2` as a mapping (anything else is returned as is, for pydantic
    to check). Raises ValueError naming `setting` for an entry without `tenant=` or a token, a bad
    tenant name, a tenant named twice, or one token given to two tenants (the credential alone
    chooses the tenant: docs/api.md). A message never holds a token, nor an entry's text
    before a `=` unless it is a valid tenant name (it may be a token typed without its tenant).
    """
    if not isinstance(value, str):
        return value
    tokens: dict[str, str] = {}
    owner: dict[str, str] = {}
    for n, pair in enumerate(filter(None, (p.strip() for p in value.split(","))), start=1):
        tenant, sep, token = (part.strip() for part in pair.partition("="))
        if not sep:
            raise ValueError(f"{setting} entry {n} has no 'tenant=': write tenant=token, …")
        if not TENANT_RE.match(tenant):
            raise ValueError(
                f"{setting} entry {n}: the text before '=' is not a tenant name (lower-case "
                "letters, digits, - and _, at most 63)"
            )
        if not token:
            raise ValueError(f"{setting} entry for {tenant!r} has no token")
        if tenant in tokens:
            raise ValueError(
                f"{setting} names tenant {tenant!r} twice: one token per tenant (to rotate one, "
                "replace it and restart)"
            )
        if token in owner:
            raise ValueError(
                f"{setting} gives tenants {owner[token]!r} and {tenant!r} the same token: each "
                "tenant needs its own, since the token alone chooses the tenant"
            )
        tokens[tenant], owner[token] = token, tenant
    return tokens
