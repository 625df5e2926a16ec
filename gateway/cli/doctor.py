"""`blast-radius doctor`: check a deployment from the outside in, one line per finding.

Checks, in order: the settings (no placeholder secrets outside dev mode), that the data folder
exists (never created here), the FalkorDB connection (in a cluster: every hash slot served,
every shard's replicas) and every tenant graph (one line when it does not exist yet), its unique
constraints (OPERATIONAL) and on-call coverage (someone on call for every team now and for the
next 14 days), the default route (in Slack mode the default team's `slack_channel`, else
`SLACK_DEFAULT_CHANNEL`, exists), every team's Slack channel and every person's Slack identity
(in Slack mode), how complete each tenant's world is (components with no business call out,
edges with no stated propagation: warning lines), whether each tenant's heartbeat arrives (a
warning when it never did or is silent past its timeout: `check_heartbeat`), every outbound
notifier (`Notifier.check()`: the outbox is writable or can be created; Slack and GitHub
adapters check their token and access), the planner's models (`ChatModel.check()`: key and model
name, no tokens spent), that some worker process is connected to the database (`check_workers`)
and that no task has waited over a minute for one (`check_queue`: a wedged worker keeps its
connection), with actions on that every playbook's remediation has its credential
(`check_actions`), that the webhook answers `GET /health/ready` at the URL Alertmanager will
post to (its `detail` lines as warnings), and, with `PROMETHEUS_URL`, that Prometheus answers
and holds service-graph metrics. Nothing is written to a graph and nothing is sent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import redis

from adapters.falkordb import (
    SLOTS,
    GraphStore,
    GraphUnavailable,
    TenantGraph,
    answers_ping,
    graph_name,
)
from adapters.models import ModelError
from adapters.notices import fmt_ms
from adapters.notify import AdapterError
from adapters.slack.notifier import SlackNotifier
from agents.act.run import missing_credential
from agents.respond import messages
from agents.tasks.coordination import oldest_ready
from agents.tasks.kinds import ROLE_KINDS
from agents.tasks.worker import WORKER_CLIENT
from agents.triage import heartbeat
from gateway.ops.runtime import (
    Runtime,
    listen_refusal,
    missing_data_dir,
    prometheus_client,
    remediation_credentials,
    running_embedded_url,
)
from gateway.ops.upkeep import short_heartbeat_timeout
from gateway.settings import Settings, query_timeouts_problem, unknown_settings
from gateway.world.completeness import from_rows
from gateway.world.oncall import coverage, coverage_problems

#: Where `deploy/README.md` tells Alertmanager to keep each tenant's token.
TOKEN_FILE = "/etc/alertmanager/blast-radius-{tenant}.token"  # noqa: S105 (a path)


@dataclass(frozen=True)
class Finding:
    """One checked thing: `ok` False means a problem the operator must fix; `what` says which.
    `transient`: the problem is an outside system not answering now (a retry may pass), which
    must not keep `serve` from accepting alerts."""

    ok: bool
    area: str
    what: str
    transient: bool = False
    #: Worth a look but not wrong by itself (exit code 0): `warning  area: what`.
    warn: bool = False

    def line(self) -> str:
        """`ok       area: what`, `warning  area: what` or `PROBLEM  area: what`."""
        label = "PROBLEM" if not self.ok else "warning" if self.warn else "ok"
        return f"{label:<8} {self.area}: {self.what}"


def webhook_base(settings: Settings, url: str | None) -> str:
    """The base URL Alertmanager posts to: `url` if given (e.g. the TLS proxy's), else the
    gateway's own `http://BLAST_HOST:BLAST_PORT` (a wildcard address becomes 127.0.0.1)."""
    if url:
        return url.rstrip("/")
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host  # noqa: S104
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{settings.port}"


def settings_source(env_file: Path | None = None) -> str:
    """Where these settings were read, for doctor's settings line: this shell's environment
    and `env_file`, else `./.env` when there is one (pydantic-settings reads it from the working
    directory). `serve` reads its own environment and working directory, so a setting given on
    its command line (`BLAST_HOST=… blast-radius serve`) is not seen here."""
    if env_file is not None:
        return f"read from this shell's environment and {env_file}"
    dotenv = Path(".env").resolve()
    if dotenv.is_file():
        return f"read from this shell's environment and {dotenv}"
    return f"read from this shell's environment only (no {dotenv})"


def check_settings(settings: Settings, env_file: Path | None = None) -> list[Finding]:
    """Every combination `serve` refuses is a problem, through serve's own rules: placeholder or
    weak secrets (unless `BLAST_DEV`) and a non-loopback `BLAST_HOST` with no webhook tokens
    (`listen_refusal`); so is a `BLAST_*` name in the environment or `env_file` that is no
    setting (a typo: `unknown_settings`), and a query timeout over its maximum, which FalkorDB
    refuses (`query_timeouts_problem`). Each line says where the settings were read
    (`settings_source`): doctor checks its own environment, not the running serve's."""
    source = settings_source(env_file)
    found = [Finding(False, "settings", line) for line in settings.placeholder_secrets()]
    if (refusal := listen_refusal(settings)) is not None:
        found.append(Finding(False, "settings", f"BLAST_HOST={settings.host!r} needs "
                             f"BLAST_WEBHOOK_TOKENS: serve says {refusal!r} and exits 2 "
                             f"({source})"))  # fmt: skip
    found += [Finding(False, "settings", line) for line in unknown_settings(env_file)]
    if (timeouts := query_timeouts_problem(settings)) is not None:
        found.append(Finding(False, "settings", timeouts))
    short = short_heartbeat_timeout(settings)
    if not found:
        mode = "dev mode: placeholder secrets allowed" if settings.dev else "no placeholder secret"
        found.append(Finding(True, "settings", f"tenants {', '.join(settings.tenants)}; {mode}; "
                             f"{source} (serve reads its own: run doctor with the same "
                             "environment, e.g. --env-file for a unit's file)"))  # fmt: skip
    if short is not None:  # allowed, so a warning (exit 0)
        found.append(Finding(True, "settings", short, warn=True))
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
        found += check_replication(store, settings)
        for tenant in settings.tenants:
            name = graph_name(tenant)
            try:
                if not store.has_graph(name):  # one line, not one per missing constraint
                    found.append(Finding(False, "falkordb", no_graph(tenant)))
                    continue
                problems = store.graph(name).schema_problems()
            except GraphUnavailable as exc:
                problems = [f"{name}: {exc}"]
            found += [Finding(False, "falkordb", p) for p in problems]
            if not problems:
                found.append(Finding(True, "falkordb", f"{name}: constraints OPERATIONAL"))
                found += check_oncall(store.graph(name))
        found += unconfigured_graphs(store, settings)
        return found
    finally:
        store.close()


def unconfigured_graphs(store: GraphStore, settings: Settings) -> list[Finding]:
    """A graph here that holds data for a tenant this shell does not configure, one line each:
    the usual cause of "no teams" above is a shell without serve's `BLAST_WEBHOOK_TOKENS`
    (the read commands then read that graph; doctor checks the configured tenants only).
    Not a problem by itself: another serve may use the same database."""
    try:
        others = [t for t in store.tenants() if t not in settings.tenants]
        held = [t for t in others if store.graph(graph_name(t)).node_count()]
    except GraphUnavailable as exc:
        return [Finding(False, "falkordb", f"graphs here: {exc}")]
    return [
        Finding(
            True, "falkordb",
            f"note: {graph_name(t)} holds tenant {t}, which this shell's BLAST_WEBHOOK_TOKENS "
            f"does not name (serve's may): run doctor with serve's environment (--env-file) "
            "to check it",
        )
        for t in held
    ]  # fmt: skip


def check_data_dir(settings: Settings) -> list[Finding]:
    """The data folder exists (doctor reads; it never creates one, so a misspelt `--data-dir`
    is said, not made)."""
    if settings.data_dir.is_dir():
        return [Finding(True, "data folder", f"{settings.data_dir} exists")]
    return [Finding(False, "data folder", missing_data_dir(settings.data_dir))]


def no_graph(tenant: str) -> str:
    """What a configured tenant without a graph means: no serve on this database serves it yet
    (serve makes each of its tenants' graphs at start) and no world was imported for it."""
    return (
        f"{graph_name(tenant)}: tenant {tenant} has no graph here yet: no world imported for it "
        f"and the serve using this database does not serve it (start serve with "
        f"BLAST_WEBHOOK_TOKENS naming {tenant}; load its world with `blast-radius topology "
        f"import --tenant {tenant} FILE`)"
    )


def check_replication(store: GraphStore, settings: Settings) -> list[Finding]:
    """A cluster: every slot served, and every shard has at least the replicas the webhook
    waits for (`BLAST_WRITE_REPLICAS`; 1 in a cluster by default), else the webhook answers 503
    to that shard's tenants. A single server: its replicas, when the setting asks for some."""
    needed = settings.write_replicas
    if needed is None:
        needed = 1 if store.cluster else 0
    try:
        shards = store.topology()
    except GraphUnavailable as exc:
        return [Finding(False, "falkordb", f"cannot read the cluster layout: {exc}")]
    found = []
    if store.cluster:
        slots = sum(s["slots"] for s in shards)
        found.append(
            Finding(
                slots == SLOTS, "falkordb",
                f"cluster: {len(shards)} primaries serve {slots} of {SLOTS} hash slots",
            )
        )  # fmt: skip
    for shard in shards:
        have = len(shard["replicas"])
        found.append(
            Finding(
                have >= needed, "falkordb",
                f"{shard['primary']}: {have} replicas online, the webhook waits for {needed}",
            )
        )  # fmt: skip
    return found


def check_oncall(graph: TenantGraph) -> list[Finding]:
    """Every team has someone on call now and no gap within 14 days."""
    now = datetime.now(UTC)
    try:
        teams = coverage(graph, now)
    except GraphUnavailable as exc:
        return [Finding(False, "on-call", f"{graph.name}: {exc}")]
    lines = coverage_problems(teams, now)
    if not teams:
        return [Finding(False, "on-call", f"{graph.name}: no teams (run `topology import`)")]
    if not lines:
        return [Finding(True, "on-call", f"{graph.name}: {len(teams)} teams covered for 14 days")]
    return [Finding(False, "on-call", f"{graph.name}: {line}") for line in lines]


def check_default_route(
    settings: Settings, store: GraphStore, slack: SlackNotifier | None
) -> list[Finding]:
    """In Slack mode, every tenant's root route can post: the world's default team has a
    `slack_channel` (else `SLACK_DEFAULT_CHANNEL` is set) and Slack knows that channel. Pages
    for components no team owns, or whose owner has nobody on call, go there; without it they
    could not be posted. In outbox mode there is nothing to check."""
    if slack is None:
        return []
    found = []
    for tenant in settings.tenants:
        try:
            row = store.graph(graph_name(tenant)).one("default_route")
        except GraphUnavailable as exc:
            found.append(Finding(False, "routing", f"{tenant}: {exc}"))
            continue
        team = row["team"] if row else None
        channel = (row["channel"] if row else None) or settings.slack_default_channel
        named = f"the default team {team}" if team else "no default team (world not imported)"
        if not channel:
            found.append(Finding(False, "routing", (
                f"{tenant}: {named} has no slack_channel and SLACK_DEFAULT_CHANNEL is unset: "
                "a page for components no team owns could not be posted"
            )))  # fmt: skip
            continue
        try:
            slack.channel_id(channel)
        except AdapterError as exc:
            what = f"{tenant}: {named}, channel {channel}: {exc}"
            if exc.retryable:  # Slack unreachable: pages queue, intake goes on
                what += " (Slack unreachable: serve still accepts alerts; pages wait for it)"
            found.append(Finding(False, "routing", what, transient=exc.retryable))
            continue
        found.append(Finding(True, "routing", f"{tenant}: {named} pages in {channel}"))
    return found


def check_slack_world(settings: Settings, store: GraphStore, slack: SlackNotifier) -> list[Finding]:
    """In Slack mode, every team's `slack_channel` takes a page (exists, not archived, the bot
    in it) and every member can be mentioned (their `slack_user_id`, else email, is a Slack
    user). A refused channel still pages along the root route, but late and elsewhere: each
    one is a problem to fix. So is `SLACK_DEFAULT_CHANNEL` when set: the last channel of every
    page's root route (and of a refused escalation level), tried when the others refuse."""
    found: list[Finding] = []
    last = settings.slack_default_channel
    try:
        why = slack.channel_problem(last) if last else None
    except AdapterError as exc:
        why = f"Slack could not be asked: {exc}"
    if why:
        found.append(Finding(False, "slack", (
            f"SLACK_DEFAULT_CHANNEL {last}: {why} (the last channel a refused page tries "
            "before the outbox)"
        )))  # fmt: skip
    for tenant in settings.tenants:
        try:
            rows = store.graph(graph_name(tenant)).rows("slack_identities")
        except GraphUnavailable as exc:
            found.append(Finding(False, "slack", f"{tenant}: {exc}"))
            continue
        bad_channels, bad_people, people = [], [], 0
        try:
            for row in rows:
                if row["channel"] and (why := slack.channel_problem(row["channel"])):
                    bad_channels.append(f"team {row['team']}: channel {row['channel']}: {why}")
                for person in row["people"]:
                    people += 1
                    why = slack.person_problem(person["slack_user_id"], person["email"])
                    if why:
                        bad_people.append(f"team {row['team']}: {person['name']}: {why}")
        except AdapterError as exc:
            found.append(Finding(False, "slack", f"{tenant}: Slack could not be asked: {exc}"))
            continue
        found += [Finding(False, "slack", f"{tenant}: {line}") for line in bad_channels]
        found += [Finding(False, "slack", f"{tenant}: {line}") for line in bad_people]
        if not bad_channels and not bad_people:
            found.append(Finding(True, "slack", (
                f"{tenant}: {sum(1 for r in rows if r['channel'])} team channels take pages; "
                f"{people} people have a Slack identity"
            )))  # fmt: skip
    return found


def check_world(settings: Settings) -> list[Finding]:
    """Per tenant, how complete its world is for the investigator
    (`gateway.world.completeness`): components with no known business call out stay
    inconclusive with alerts only. Each gap is a warning (worth a look, exit code 0), not a
    problem: a world grows by discovery (nothing when the database is down: `check_falkordb`
    says so)."""

    def judge(tenant: str, graph: TenantGraph) -> list[Finding]:
        rows = graph.rows("world_dependencies")
        if not rows:
            return []  # no world yet: `check_oncall` and the routing checks say so
        lines = from_rows(rows).lines()
        if not lines:
            return [Finding(True, "world", f"{tenant}: every component has a known dependency")]
        return [Finding(True, "world", f"{tenant}: {line}", warn=True) for line in lines]

    return per_tenant(settings, "world", judge)


def per_tenant(
    settings: Settings, area: str, judge: Callable[[str, TenantGraph], list[Finding]]
) -> list[Finding]:
    """`judge(tenant, graph)`'s findings for each tenant, on a connection of its own; a tenant
    whose graph cannot answer (`GraphUnavailable`) is a problem in `area`. Nothing when the
    database is down (`check_falkordb` says so)."""
    url = database_url(settings)
    if url is None or not answers_ping(url):
        return []
    store = GraphStore(url, timeout_ms=settings.query_timeout_max_ms)
    found: list[Finding] = []
    try:
        for tenant in settings.tenants:
            try:
                found += judge(tenant, store.graph(graph_name(tenant)))
            except GraphUnavailable as exc:
                found.append(Finding(False, area, f"{tenant}: {exc}"))
    finally:
        store.close()
    return found


def heartbeat_finding(settings: Settings, tenant: str, beats: list[dict[str, Any]]) -> Finding:
    """What `doctor` says of `tenant`'s heartbeat (`BLAST_HEARTBEAT_ALERTNAME`), from its
    `heartbeat.heartbeats` rows: ok when it arrived within `BLAST_HEARTBEAT_TIMEOUT`; a warning
    (exit code 0: a pipeline without one works, unwatched) when none ever arrived (the silence
    check is not armed) or it has been silent longer than the timeout, with when it was last
    seen, the incident of that silence and what to check."""
    name, timeout = settings.heartbeat_alertname, settings.heartbeat_timeout
    beat = next((b for b in beats if b["alertname"] == name and b["last_at"] is not None), None)
    route = (f"that Alertmanager routes it to this receiver with a repeat_interval well under "
             f"BLAST_HEARTBEAT_TIMEOUT ({timeout})")  # fmt: skip
    if beat is None:
        return Finding(True, "heartbeat", (
            f"{tenant}: no {name} heartbeat has ever arrived, so nobody is paged if alerting "
            f"stops: check that Prometheus has the always-firing {name} rule (kube-prometheus "
            f"ships it) and {route} (deploy/alertmanager.yml); BLAST_HEARTBEAT_ALERTNAME=off "
            "turns the check off"
        ), warn=True)  # fmt: skip
    silent = messages.held_for(max(0, beat["silent_ms"]))
    if beat["silent_ms"] <= settings.heartbeat_timeout_ms:
        return Finding(True, "heartbeat", f"{tenant}: {name} last arrived {silent} ago "
                       f"(timeout {timeout})")  # fmt: skip
    paged = f"; incident {beat['incident_id']} paged the default team" if beat["paged_at"] else ""
    return Finding(True, "heartbeat", (
        f"{tenant}: {name} silent since {fmt_ms(beat['last_at'])} ({silent}, over the "
        f"{timeout} timeout){paged}: check that Prometheus still evaluates the {name} rule, "
        f"that Alertmanager is up, {route}, and that it reaches this gateway's webhook"
    ), warn=True)  # fmt: skip


def check_heartbeat(settings: Settings) -> list[Finding]:
    """Per tenant, whether its heartbeat arrives (`heartbeat_finding`); nothing when the
    check is off (`BLAST_HEARTBEAT_ALERTNAME` empty) or the database is down
    (`check_falkordb` says so)."""
    if not settings.heartbeat_alertname:
        return []
    return per_tenant(
        settings, "heartbeat",
        lambda tenant, graph: [heartbeat_finding(settings, tenant, heartbeat.heartbeats(graph))],
    )  # fmt: skip


def database_url(settings: Settings) -> str | None:
    """FALKORDB_URL, else the embedded server running for the data folder, else None."""
    if settings.falkordb_url is not None:
        return settings.falkordb_url.get_secret_value()
    return running_embedded_url(settings)


def check_routing(settings: Settings, runtime: Runtime) -> list[Finding]:
    """`check_default_route` and `check_slack_world` on a connection of its own (nothing when
    the database is down: `check_falkordb` says so)."""
    url = database_url(settings)
    if runtime.slack is None or url is None or not answers_ping(url):
        return []
    store = GraphStore(url, timeout_ms=settings.query_timeout_max_ms)
    try:
        return check_default_route(settings, store, runtime.slack) + check_slack_world(
            settings, store, runtime.slack
        )
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


def check_workers(settings: Settings) -> list[Finding]:
    """Some `blast-radius worker` process is connected to the database now, and together they
    take every role's tasks: without one, alerts are accepted and nobody is investigated or
    paged (the systemd layout's likely slip: `BLAST_WORKERS=0` and no worker unit enabled).
    Workers are seen by their connections' names (`WORKER_CLIENT`, `CLIENT LIST`), on any
    host. A database that refuses `CLIENT LIST` (an ACL) makes this a warning: unknown.
    Nothing when the database is down (`check_falkordb` says so)."""
    url = database_url(settings)
    if url is None or not answers_ping(url):
        return []
    store = GraphStore(url, timeout_ms=settings.query_timeout_max_ms)
    try:
        names = store.client_names(WORKER_CLIENT)
    except (GraphUnavailable, redis.ResponseError) as exc:
        return [Finding(True, "workers", f"cannot list the database's clients ({exc}): whether "
                        "a worker runs is unknown", warn=True)]  # fmt: skip
    finally:
        store.close()
    if not names:
        return [Finding(False, "workers", NO_WORKER)]
    roles = {name.removeprefix(WORKER_CLIENT).split("@")[0] for name in names}
    shown = ", ".join(n.removeprefix(WORKER_CLIENT) for n in names[:5])
    more = f" and {len(names) - 5} more" if len(names) > 5 else ""
    found = [Finding(True, "workers", f"{len(names)} worker process"
                     f"{'' if len(names) == 1 else 'es'} connected: {shown}{more}")]  # fmt: skip
    if "any" not in roles:
        untaken = [r for r in ROLE_KINDS if r != "any" and r not in roles]
        found += [
            Finding(False, "workers", f"no worker takes role {role} (its tasks: "
                    f"{', '.join(ROLE_KINDS[role])}): start `blast-radius worker --role {role}` "
                    "or one with --role any")
            for role in untaken
        ]  # fmt: skip
    return found


#: A task ready to claim for longer than this (s) is a PROBLEM: no worker takes it, whatever
#: connections are open (a worker stopped with SIGSTOP, swapped out or deadlocked keeps its
#: connection). An idle worker asks the graph every BLAST_IDLE_POLL_MS (at most 60 s) even with
#: no wake-up, and a busy one claims again after each task (an investigation takes seconds), so
#: a minute is well past any healthy wait; a re-investigation waits on purpose (`not_before`),
#: and a lease still held is not counted (the ready time of a claimed task is its lease's end).
STALLED_S = 60.0
#: A ready task older than this (s) plus BLAST_IDLE_POLL_MS is a warning: slow, not yet stalled
#: (a burst of incidents can queue work this long).
SLOW_S = 10.0


def check_queue(
    settings: Settings, stalled_s: float = STALLED_S, slow_s: float = SLOW_S
) -> list[Finding]:
    """The oldest task ready to claim, per tenant (`oldest_ready`): waiting longer than
    `stalled_s` is a PROBLEM naming its kind and incident (workers connected or not: the
    connection check cannot see a wedged worker), longer than `slow_s` plus the idle poll a
    warning, else one ok line. Nothing when the database is down (`check_falkordb` says so)."""
    url = database_url(settings)
    if url is None or not answers_ping(url):
        return []
    store = GraphStore(url, timeout_ms=settings.query_timeout_max_ms)
    found, idle = [], 0
    try:
        for tenant in settings.tenants:
            try:
                oldest = oldest_ready(store.graph(graph_name(tenant)), settings.max_attempts)
            except GraphUnavailable as exc:
                found.append(Finding(True, "queue", f"{tenant}: cannot read the tasks ({exc})",
                                     warn=True))  # fmt: skip
                continue
            if oldest is None:
                idle += 1
                continue
            waited_s = max(0, oldest["waited_ms"]) / 1000
            of = f" of incident {oldest['incident_id']}" if oldest["incident_id"] else ""
            n = oldest["ready"]
            what = (f"{tenant}: the {oldest['kind']} task{of} has waited {waited_s:.0f} s for a "
                    f"worker ({n} task{'' if n == 1 else 's'} ready)")  # fmt: skip
            if waited_s > stalled_s:
                found.append(Finding(False, "queue", f"{what}: no worker claims tasks (a "
                                     f"worker connected but stopped, swapped out or stuck "
                                     f"keeps its connection); restart the workers"))  # fmt: skip
            elif waited_s > slow_s + settings.idle_poll_ms / 1000:
                found.append(Finding(True, "queue", f"{what}: slow; a PROBLEM past "
                                     f"{stalled_s:.0f} s", warn=True))  # fmt: skip
            else:
                found.append(Finding(True, "queue", what))
    finally:
        store.close()
    if idle == len(settings.tenants):
        found.append(Finding(True, "queue", "no task is waiting for a worker"))
    return found


def remediation_problems(settings: Settings, graph: TenantGraph) -> list[str]:
    """With `BLAST_ACTIONS_ENABLED`, one line per remediation type `graph`'s active playbooks
    carry that cannot run with these settings (`run.missing_credential`: a webhook without
    `BLAST_RUNBOOK_WEBHOOK_SECRET`, a GitHub type without `GITHUB_TOKEN`): each proposal of
    theirs says it cannot run, where a person would expect to approve it. Also one line when
    actions are on and no remediation credential is set at all. Raises `GraphUnavailable`."""
    if not settings.actions_enabled:
        return []
    creds = remediation_credentials(settings)
    lines = []
    for row in graph.rows("remediation_playbooks"):
        missing = missing_credential(row["type"], creds)
        if missing:
            n, ids = row["playbooks"], ", ".join(row["ids"])
            more = f" and {n - len(row['ids'])} more" if n > len(row["ids"]) else ""
            lines.append(
                f"{graph.name}: BLAST_ACTIONS_ENABLED=true, but {missing}: {n} playbook"
                f"{' carries' if n == 1 else 's carry'} one ({ids}{more}), whose proposals "
                "cannot be approved"
            )
    return lines


def check_actions(settings: Settings) -> list[Finding]:
    """`remediation_problems` of every tenant (PROBLEM lines); with actions on and no
    remediation credential at all, a warning (no remediation could run); else one ok line.
    Nothing when the database is down (`check_falkordb` says so)."""
    if not settings.actions_enabled:
        return [Finding(True, "actions", "off (BLAST_ACTIONS_ENABLED=false): remediations are "
                        "only shown")]  # fmt: skip
    url = database_url(settings)
    found = []
    if settings.runbook_webhook_secret is None and settings.github_token is None:
        found.append(Finding(True, "actions", NO_CREDENTIAL, warn=True))
    if url is None or not answers_ping(url):
        return found
    store = GraphStore(url, timeout_ms=settings.query_timeout_max_ms)
    try:
        for tenant in settings.tenants:
            try:
                lines = remediation_problems(settings, store.graph(graph_name(tenant)))
            except GraphUnavailable as exc:
                lines = [f"{tenant}: {exc}"]
            found += [Finding(False, "actions", line) for line in lines]
    finally:
        store.close()
    if not found:
        found.append(Finding(True, "actions", "on; every playbook's remediation has the "
                             "credential it needs"))  # fmt: skip
    return found


#: Actions on, and neither remediation credential set.
NO_CREDENTIAL = (
    "BLAST_ACTIONS_ENABLED=true, but neither BLAST_RUNBOOK_WEBHOOK_SECRET nor GITHUB_TOKEN is "
    "set: no remediation can run (a proposal says so instead of asking for an approval)"
)


#: What doctor says when no worker process is connected to the database.
NO_WORKER = (
    "no `blast-radius worker` process is connected to the database: alerts are accepted but "
    "nobody is investigated or paged (serve starts BLAST_WORKERS of them; with BLAST_WORKERS=0, "
    "run `blast-radius worker` against the same database, e.g. the blast-radius-worker@ units)"
)


def check_webhook(base: str) -> list[Finding]:
    """`GET <base>/health/ready` answers 200 (what Alertmanager's posts need); each line of
    its `detail` (what serve noticed at start, e.g. `BLAST_WORKERS=0`) is a warning line."""
    target = f"{base}/health/ready"
    try:
        answer = httpx.get(target, timeout=5.0)
    except httpx.HTTPError as exc:
        why = f"{target} cannot be reached: {type(exc).__name__}"
        if isinstance(exc, httpx.ConnectError):
            why += (
                " (is `serve` running there? If it listens elsewhere, pass --url or set BLAST_PORT)"
            )
        return [Finding(False, "webhook", why)]
    if answer.status_code != 200:
        return [Finding(False, "webhook", f"{target} answered {answer.status_code}, not 200")]
    try:
        detail = answer.json().get("detail") or []
    except (ValueError, AttributeError):  # not serve's JSON (a proxy's page): the code is all
        detail = []
    said = [Finding(True, "webhook", f"serve says: {line}", warn=True)
            for line in detail if isinstance(line, str)]  # fmt: skip
    return [Finding(True, "webhook", f"{target} answered 200"), *said]


def check_prometheus(settings: Settings) -> list[Finding]:
    """With `PROMETHEUS_URL`: it answers a query (with its auth), and whether it holds the
    service-graph metrics the investigator reads first (a warning line, not a problem, when
    not: span metrics, `up` and PromQL checks still work). Unset: said, not a problem."""
    client = prometheus_client(settings)
    if client is None:
        return [Finding(True, "prometheus", "PROMETHEUS_URL unset: findings from alerts only")]
    query = 'count({__name__=~"(.+_)?traces_service_graph_request_total"})'
    try:
        rows = client.instant(query)
    except AdapterError as exc:
        return [Finding(False, "prometheus", str(exc))]
    finally:
        client.close()
    if not rows:
        return [Finding(True, "prometheus", "answers, but holds no service-graph metrics "
                        "(traces_service_graph_request_total): evidence is span metrics, up "
                        "and PromQL checks only")]  # fmt: skip
    return [Finding(True, "prometheus", f"answers; {rows[0]['value']:.0f} service-graph series")]


def run_checks(
    settings: Settings, url: str | None = None, env_file: Path | None = None
) -> list[Finding]:
    """Every check of the module docstring, in order (`env_file`: the one the settings were
    read from, else `./.env`)."""
    runtime = Runtime(settings)
    return (
        check_settings(settings, env_file)
        + check_data_dir(settings)
        + check_falkordb(settings)
        + check_routing(settings, runtime)
        + check_world(settings)
        + check_heartbeat(settings)
        + check_notifiers(runtime)
        + check_planner(runtime)
        + check_workers(settings)
        + check_queue(settings)
        + check_actions(settings)
        + check_webhook(webhook_base(settings, url))
        + check_prometheus(settings)
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
