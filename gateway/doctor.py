"""`blast-radius doctor`: check a deployment from the outside in, one line per finding.

Checks, in order: the settings (no placeholder secrets outside dev mode), the FalkorDB
connection and every tenant graph's unique constraints (OPERATIONAL), every outbound notifier
(`Notifier.check()`: the outbox is writable; Slack and GitHub adapters check their token and
access), the planner's models (`ChatModel.check()`: key and model name, no tokens spent), and
that the webhook answers `GET /health/ready` at the URL Alertmanager will post to.
Nothing is written to a graph and nothing is sent.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from adapters.falkordb import GraphStore, GraphUnavailable, answers_ping, graph_name
from adapters.models import ModelError
from adapters.notify import AdapterError
from gateway.runtime import Runtime, running_embedded_url
from gateway.settings import Settings

#: Where `deploy/README.md` tells Alertmanager to keep each tenant's token.
TOKEN_FILE = "/etc/alertmanager/blast-radius-{tenant}.token"  # noqa: S105 (a path)


@dataclass(frozen=True)
class Finding:
    """One checked thing: `ok` False means a problem the operator must fix; `what` says which."""

    ok: bool
    area: str
    what: str

    def line(self) -> str:
        """`ok       area: what` or `PROBLEM  area: what`."""
        return f"{'ok' if self.ok else 'PROBLEM':<8} {self.area}: {self.what}"


def webhook_base(settings: Settings, url: str | None) -> str:
    """The base URL Alertmanager posts to: `url` if given (e.g. the TLS proxy's), else the
    gateway's own `http://BLAST_HOST:BLAST_PORT` (a wildcard address becomes 127.0.0.1)."""
    if url:
        return url.rstrip("/")
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host  # noqa: S104
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{settings.port}"


def check_settings(settings: Settings) -> list[Finding]:
    """Placeholder or weak secrets are problems (unless `BLAST_DEV`)."""
    found = [Finding(False, "settings", line) for line in settings.placeholder_secrets()]
    if not found:
        mode = "dev mode: placeholder secrets allowed" if settings.dev else "no placeholder secret"
        found.append(Finding(True, "settings", f"tenants {', '.join(settings.tenants)}; {mode}"))
    return found


def check_falkordb(settings: Settings) -> list[Finding]:
    """The database answers PING, and each tenant graph's unique constraints are OPERATIONAL."""
    if settings.falkordb_url is not None:
        url = settings.falkordb_url.get_secret_value()
    elif (running := running_embedded_url(settings)) is not None:
        url = running
    else:
        return [
            Finding(
                False, "falkordb",
                f"FALKORDB_URL is unset and no embedded FalkorDB runs for {settings.data_dir} "
                "(set FALKORDB_URL, or start `blast-radius serve`)",
            )
        ]  # fmt: skip
    if not answers_ping(url):
        return [Finding(False, "falkordb", "the server at FALKORDB_URL does not answer PING")]
    store = GraphStore(url, timeout_ms=settings.query_timeout_max_ms)
    try:
        found = [Finding(True, "falkordb", "the server answers PING")]
        for tenant in settings.tenants:
            name = graph_name(tenant)
            try:
                problems = store.graph(name).schema_problems()
            except GraphUnavailable as exc:
                problems = [f"{name}: {exc}"]
            found += [Finding(False, "falkordb", p) for p in problems]
            if not problems:
                found.append(Finding(True, "falkordb", f"{name}: constraints OPERATIONAL"))
        return found
    finally:
        store.close()


def check_notifiers(runtime: Runtime) -> list[Finding]:
    """`check()` of every notifier the workers send through."""
    found = []
    for notifier in runtime.notifiers():
        try:
            found.append(Finding(True, f"notifier {notifier.name}", notifier.check()))
        except AdapterError as exc:
            found.append(Finding(False, f"notifier {notifier.name}", str(exc)))
    return found


def check_planner(runtime: Runtime) -> list[Finding]:
    """`BLAST_PLANNER`, and `check()` of each model of the chain. A model that fails is a
    problem: with none left, unsure incidents keep the rules' finding."""
    planner = runtime.model_planner
    if planner is None:
        return [Finding(True, "planner", "rules (no model configured: no request leaves)")]
    found = [Finding(True, "planner", f"{planner.mode}: models {', '.join(planner.chain.names)}")]
    for model in planner.chain.models:
        try:
            found.append(Finding(True, f"model {model.name}", model.check()))
        except ModelError as exc:
            found.append(Finding(False, f"model {model.name}", str(exc)))
    return found


def check_webhook(base: str) -> list[Finding]:
    """`GET <base>/health/ready` answers 200 (what Alertmanager's posts need)."""
    target = f"{base}/health/ready"
    try:
        answer = httpx.get(target, timeout=5.0)
    except httpx.HTTPError as exc:
        return [Finding(False, "webhook", f"{target} cannot be reached: {type(exc).__name__}")]
    if answer.status_code != 200:
        return [Finding(False, "webhook", f"{target} answered {answer.status_code}, not 200")]
    return [Finding(True, "webhook", f"{target} answered 200")]


def run_checks(settings: Settings, url: str | None = None) -> list[Finding]:
    """Every check of the module docstring, in order."""
    runtime = Runtime(settings)
    return (
        check_settings(settings)
        + check_falkordb(settings)
        + check_notifiers(runtime)
        + check_planner(runtime)
        + check_webhook(webhook_base(settings, url))
    )


def receiver_snippet(settings: Settings, url: str | None = None) -> str:
    """The Alertmanager receiver to paste (YAML), one webhook per tenant, with bearer tokens
    read from files (never the token itself; see `deploy/alertmanager.yml`)."""
    lines = ["receivers:"]
    for tenant in settings.tenants:
        lines += [
            f"  - name: blast-radius-{tenant}",
            "    webhook_configs:",
            f"      - url: {webhook_base(settings, url)}/api/v1/alerts",
            "        send_resolved: true",
            "        max_alerts: 0",
        ]
        if settings.auth_required:
            lines += [
                "        http_config:",
                "          authorization:",
                "            type: Bearer",
                f"            credentials_file: {TOKEN_FILE.format(tenant=tenant)}",
            ]
    return "\n".join(lines) + "\n"
