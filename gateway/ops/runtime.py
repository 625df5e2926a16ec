"""Starting and stopping the pieces: the graph database, the gateway and the workers.

`serve`, `demo`, `topology import` and the tests all go through `Runtime`, so they start the
same things the same way. With `FALKORDB_URL` unset, the embedded FalkorDB in the data folder
is used: reused when one already runs for that folder (its pid and port are in
`<data>/falkordb/server.json`), started otherwise (and then stopped on exit).
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import json
import logging
import os
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adapters.falkordb import (
    EmbeddedFalkorDB,
    GraphStore,
    GraphUnavailable,
    TenantGraph,
    graph_name,
)
from adapters.models import ChatModel, ModelChain
from adapters.notify import Mirrored, Notifier
from adapters.openai_compat import OpenAICompatModel
from adapters.outbox import Outbox
from adapters.processes import running
from adapters.prometheus import Budget, Prometheus
from agents.act.actor import Actor
from agents.act.run import Credentials
from agents.investigate.investigator import Investigator
from agents.investigate.model_planner import ModelPlanner
from agents.learn.learner import Learner
from agents.metrics import Metrics, use_multiprocess_dir
from agents.respond.escalation import Escalator
from agents.respond.flapping import Reopener
from agents.respond.responder import Responder
from agents.tasks.coordination import StepHooks
from agents.tasks.worker import Worker
from agents.triage.triage import remember_topology
from gateway.settings import Settings, query_timeouts_problem

if TYPE_CHECKING:  # imported where used: a worker process never loads the web stack
    import uvicorn

    from adapters.slack.notifier import SlackNotifier
    from gateway.ops.upkeep import Upkeep

log = logging.getLogger(__name__)


class ConfigError(RuntimeError):
    """The settings ask for something unsafe or impossible; the message says what to change."""


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and `localhost`."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def listen_refusal(settings: Settings, host: str | None = None) -> str | None:
    """Why `serve` refuses to listen on `host` (default `BLAST_HOST`) with these settings, or
    None: a non-loopback address with no `BLAST_WEBHOOK_TOKENS`, where anyone who reaches it
    could post alerts. The one rule `serve`, `Runtime.serve_http` and `doctor` all apply."""
    host = settings.host if host is None else host
    if settings.auth_required or is_loopback(host):
        return None
    where = host or "an empty host (BLAST_HOST='': every address)"
    return (
        f"refusing to listen on {where} with no BLAST_WEBHOOK_TOKENS set (anyone could post "
        "alerts); set tokens or bind 127.0.0.1"
    )


def writable_folder(path: Path) -> Path:
    """Create `path` if needed and check a file can be written in it; returns it.

    Raises `ConfigError` naming the folder and the reason (read-only, not a folder, …).
    """
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".write-test-"):
            pass  # a unique name: two processes or threads checking at once do not collide
    except OSError as exc:
        raise ConfigError(
            f"data folder {path} (BLAST_DATA_DIR) cannot be written: {exc.strerror or exc}"
        ) from None
    return path


def remediation_credentials(settings: Settings) -> Credentials:
    """What remediations may use (`agents.act.run.Credentials`), from the settings: the actor
    runs with it, and the approval routes, `serve` and `doctor` check it
    (`run.missing_credential`)."""
    s = settings
    return Credentials(s.github_token, s.github_api_url, s.runbook_webhook_secret,
                       s.github_request_interval_s, s.github_write_interval_s)  # fmt: skip


def missing_data_dir(path: Path) -> str:
    """What a data folder that does not exist means to a command that only reads (`doctor`,
    `incidents`, `incident`, `oncall`): most likely a misspelt path, so it is said, never made
    (an empty database there would answer "no incidents")."""
    return (
        f"{path} does not exist (BLAST_DATA_DIR or --data-dir: a typo? serve and topology "
        "import create it)"
    )


def _server_file(settings: Settings) -> Path:
    return settings.data_dir / "falkordb" / "server.json"


@contextlib.contextmanager
def server_lock(settings: Settings) -> Iterator[None]:
    """Hold `<data>/falkordb/server.lock` (an exclusive `flock`) while deciding whether to start
    the embedded server and recording it in `server.json`. Why: without it, two processes
    starting at once on the same data folder (serve and a worker, say) each found no server
    and each started one on the same append-only files. Blocks while another process holds it
    (at most one server start, about a second, or up to 60 s while a large graph loads); the
    kernel releases it when its holder dies, so a crash cannot leave it held."""
    path = settings.data_dir / "falkordb" / "server.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def record_server(settings: Settings, pid: int, port: int) -> None:
    """Write `server.json` whole or not at all (a temporary file renamed over it): a process
    reading it while it is written, outside `server_lock`, saw an empty file."""
    target = _server_file(settings)
    partial = target.with_name(f".{target.name}.{os.getpid()}")
    partial.write_text(json.dumps({"pid": pid, "port": port}))
    os.replace(partial, target)


def recorded_pid(settings: Settings) -> int | None:
    """The pid in `<data>/falkordb/server.json` when that process is alive, else None."""
    try:
        pid = int(json.loads(_server_file(settings).read_text())["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return pid if running(pid) else None


def running_embedded_url(settings: Settings) -> str | None:
    """The URL of an embedded server already running for this data folder, if it answers."""
    if recorded_pid(settings) is None:
        return None
    try:  # read again: the server may have been recorded anew in between
        port = int(json.loads(_server_file(settings).read_text())["port"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    store = GraphStore(f"redis://127.0.0.1:{port}")
    try:
        return f"redis://127.0.0.1:{port}" if store.ping() else None
    finally:
        store.close()


def embedded_server(
    settings: Settings, data_dir: Path | None = None, port: int | None = None
) -> EmbeddedFalkorDB:
    """The embedded FalkorDB the settings describe (query timeouts, threads, AOF fsync), its
    files under `data_dir` (default: `BLAST_DATA_DIR`), on `port` (default: a free one).
    Raises `ConfigError` for a query timeout over its maximum (`query_timeouts_problem`, doctor's
    words): FalkorDB would exit at start and say why only in its log."""
    if (problem := query_timeouts_problem(settings)) is not None:
        raise ConfigError(problem)
    return EmbeddedFalkorDB(
        settings.data_dir if data_dir is None else data_dir, port=port,
        timeout_default_ms=settings.query_timeout_ms, timeout_max_ms=settings.query_timeout_max_ms,
        threads=settings.falkordb_threads, fsync=settings.falkordb_fsync,
    )  # fmt: skip


def messengers(settings: Settings, outbox: Outbox) -> tuple[SlackNotifier | None, Notifier]:
    """The Slack notifier (None when Slack is off) and the notifier pages go through, as
    `BLAST_NOTIFY` says: Slack, Slack with a copy in the outbox, or the outbox."""
    if settings.notify_mode == "outbox" or settings.slack_bot_token is None:
        return None, outbox
    from adapters.slack.notifier import SlackNotifier  # slack-sdk only where Slack is on

    slack = SlackNotifier(
        settings.slack_bot_token, settings.slack_api_url, settings.slack_default_channel
    )
    return slack, (slack if settings.notify_mode == "slack" else Mirrored(slack, outbox))


def model_planner(settings: Settings, metrics: Metrics) -> ModelPlanner | None:
    """The model planner `BLAST_PLANNER` asks for, over the chain of `BLAST_MODELS` (with
    `ANTHROPIC_API_KEY`) then `BLAST_OPENAI_MODEL`; None for `rules` (and with no model set)."""
    s = settings
    if s.planner_mode == "rules":
        return None
    models: list[ChatModel] = []
    if s.anthropic_api_key is not None:
        # imported only when a key is set: the SDK costs ~40 MiB in every process
        # (docs/benchmarks.md "Memory")
        from adapters.anthropic import AnthropicModel

        models += [
            AnthropicModel(s.anthropic_api_key, name, s.anthropic_base_url, s.model_timeout_s)
            for name in s.models
        ]
    if s.openai_base_url is not None and s.openai_model is not None:
        models.append(
            OpenAICompatModel(s.openai_base_url, s.openai_model, s.openai_api_key,
                              s.model_timeout_s)
        )  # fmt: skip

    def observe(model: str, outcome: str) -> None:
        metrics.model_calls.labels(model=model, outcome=outcome).inc()

    return ModelPlanner(
        ModelChain(models, observe), s.planner_mode, s.model_max_steps,  # type: ignore[arg-type]
        s.model_confidence, s.model_max_tokens, s.model_max_pauses,
    )  # fmt: skip


class Runtime:
    """Owns the database connection and, on request, the HTTP server and worker threads.

    Use as a context manager: `with Runtime(settings) as rt: rt.serve_http(); rt.start_workers()`.
    """

    def __init__(self, settings: Settings, client_name: str | None = None) -> None:
        self.settings = settings
        #: The name of this process's database connections (`GraphStore`): a worker's says so.
        self.client_name = client_name
        self.embedded: EmbeddedFalkorDB | None = None
        self.store: GraphStore | None = None
        self.url: str | None = None
        #: Port of an embedded server another process started for this data folder (we use it,
        #: and start our own on that port if it goes away: `revive_database`).
        self.borrowed_port: int | None = None
        self.outbox = Outbox(settings.data_dir / "outbox.jsonl")
        #: Where tickets go: GitHub issues with GITHUB_TOKEN and GITHUB_REPO set, else the outbox.
        self.tickets: Notifier = self.outbox
        if settings.github_token is not None and settings.github_repo is not None:
            # imported only when configured: PyGithub costs ~20 MiB per process
            # (docs/benchmarks.md "Memory")
            from adapters.github.notifier import GitHubIssues

            self.tickets = GitHubIssues(
                settings.github_token, settings.github_repo, api_url=settings.github_api_url,
                label=settings.github_label,
                request_interval_s=settings.github_request_interval_s,
                write_interval_s=settings.github_write_interval_s,
            )  # fmt: skip
        self.slack, self.messenger = messengers(settings, self.outbox)
        #: What `serve` noticed at start that does not stop intake (e.g. Slack unreachable);
        #: `/health/ready` lists it as its `detail`.
        self.notes: list[str] = []
        if settings.metrics_dir is not None:
            use_multiprocess_dir(settings.metrics_dir)
        #: This process's metrics, shared by the app and every worker it runs.
        self.metrics = Metrics(multiprocess_dir=settings.metrics_dir)
        #: The model planner shared by this process's workers (its cooldowns too), or None.
        self.model_planner = model_planner(settings, self.metrics)
        self._server: uvicorn.Server | None = None
        self._threads: list[threading.Thread] = []
        #: set once `remember_topologies` is done (whatever came of it): a benchmark or test
        #: that counts queries waits for it, so the start's reads are not counted as its own
        self.topology_remembered = threading.Event()
        self._stop = threading.Event()
        self.workers: list[Worker] = []

    def __enter__(self) -> Runtime:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> GraphStore:
        """Connect to (or start) the database and create the schema of every tenant graph.

        Raises `ConfigError` when the data folder cannot be written, `GraphUnavailable` when
        the database does not answer within 60 s.
        """
        s = self.settings
        writable_folder(s.data_dir)
        if s.falkordb_url is not None:
            url = s.falkordb_url.get_secret_value()
        else:
            url = self._embedded_url()
        self.url = url
        self.store = GraphStore(
            url, timeout_ms=s.query_timeout_max_ms, client_name=self.client_name
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                for tenant in s.tenants:
                    self.store.graph(graph_name(tenant)).ensure_schema()
                break
            except GraphUnavailable:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        return self.store

    def _embedded_url(self) -> str:
        """The URL of the embedded server for this data folder: the one already running
        (borrowed), else one started here and recorded in `server.json` (under `server_lock`)."""
        s = self.settings
        with server_lock(s):
            if (running := running_embedded_url(s)) is not None:
                self.borrowed_port = int(running.rsplit(":", 1)[1])
                log.info("using the embedded FalkorDB already running for %s", s.data_dir)
                return running
            self.embedded = embedded_server(s)
            url = self.embedded.start()
            assert self.embedded.process is not None
            record_server(s, self.embedded.process.pid, self.embedded.port)
            return url

    def revive_database(self) -> bool:
        """Start the embedded FalkorDB again if it has died (a crash or a kill -9): same port
        and data folder, so every client reconnects by itself; its pid is recorded in
        `<data>/falkordb/server.json` again. A server another process started (and stopped, or
        lost) is taken over the same way, once no live process is recorded for it. True when
        it was (re)started.

        Raises `GraphUnavailable` if it does not come back (see its log file).
        """
        db = self.embedded
        if db is not None and db.process is not None and db.process.poll() is None:
            return False  # ours, and running (serve asks every 0.2 s: no lock for that)
        if db is None and (self.borrowed_port is None or recorded_pid(self.settings) is not None):
            return False  # FALKORDB_URL, or its owner still runs it
        with server_lock(self.settings):
            if self.embedded is None and self.borrowed_port is not None:
                if recorded_pid(self.settings) is not None:
                    return False  # its owner still runs it (or another process took it over)
                log.warning("the embedded FalkorDB another process ran for this folder is gone")
                s = self.settings
                self.embedded = embedded_server(s, port=self.borrowed_port)
                self.borrowed_port = None
            db = self.embedded
            if db is None or (db.process is not None and db.process.poll() is None):
                return False
            code = "never started here" if db.process is None else f"code {db.process.returncode}"
            log.error("embedded FalkorDB exited (%s); starting it on port %d", code, db.port)
            db.start()
            assert db.process is not None
            record_server(self.settings, db.process.pid, db.port)
            return True

    def serve_http(self, host: str | None = None, port: int | None = None) -> int:
        """Start the gateway in a thread; return the bound port once it accepts connections.

        Raises `ConfigError` when asked to bind a non-loopback address with no webhook tokens.
        """
        assert self.store is not None
        host = host or self.settings.host
        port = self.settings.port if port is None else port
        if (refusal := listen_refusal(self.settings, host)) is not None:
            raise ConfigError(refusal)
        try:  # bound here, so a port in use is one clear line, not uvicorn's traceback
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            listener = socket.create_server((host, port), family=family)
            # Accepted connections inherit this (Linux). asyncio sets it only on sockets whose
            # proto is IPPROTO_TCP, and create_server's is 0: without it every answer after
            # the first on a kept-alive connection waited ~40 ms for a delayed ACK (Nagle).
            listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError as exc:
            raise ConfigError(
                f"cannot listen on {host}:{port} (BLAST_HOST, BLAST_PORT): {exc.strerror or exc}"
            ) from None
        # the web stack (FastAPI, uvicorn, Jinja2) is imported by the gateway only, not by worker
        # processes, which share this module (docs/benchmarks.md "Memory")
        import uvicorn

        from gateway.app import create_app
        from gateway.http.slow_clients import with_read_timeouts

        app = create_app(self.settings, self.store, metrics=self.metrics)
        app.state.notes = self.notes  # shared: `/health/ready` shows what serve noticed
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            log_config=None,
            # the app applies X-Forwarded-* after noting the real peer (gateway/web/proxies.py)
            proxy_headers=False,
            http=with_read_timeouts(
                self.settings.header_timeout_s,
                self.settings.body_timeout_s,
                self.settings.max_headers,
                self.settings.max_header_bytes,
            ),
            # h11's own bound on a head still incomplete; the protocol bounds a whole one
            h11_max_incomplete_event_size=self.settings.max_header_bytes,
        )  # log_config=None: uvicorn's lines go through our handler (JSON, redacted)
        self._server = uvicorn.Server(config)
        thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [listener]}, name="gateway", daemon=True
        )
        thread.start()
        self._threads.append(thread)
        while not self._server.started:
            if not thread.is_alive():
                raise ConfigError(f"the gateway could not start on {host}:{port}")
            time.sleep(0.01)
        remembering = threading.Thread(target=self.remember_topologies, name="topology",
                                       daemon=True)  # fmt: skip
        remembering.start()
        self._threads.append(remembering)
        return int(listener.getsockname()[1])

    def remember_topologies(self) -> None:
        """Read each tenant's topology into the webhook's memory (`remember_topology`), in the
        background once the gateway listens: the first storm after a start (a restart in the
        middle of an outage) is then read as fast as the next ones. A graph that cannot be
        read is left to the first delivery, as before (one log line)."""
        assert self.store is not None
        try:
            for tenant in self.settings.tenants:
                began = time.perf_counter()
                try:
                    names, paths = remember_topology(
                        self.store.graph(graph_name(tenant)), self.settings.correlation_hops
                    )
                except GraphUnavailable as exc:
                    log.warning("topology of tenant %s not remembered at start: %s", tenant, exc)
                    continue
                log.info("topology of tenant %s remembered: %d names, %d paths in %.0f ms",
                         tenant, names, paths, (time.perf_counter() - began) * 1000)  # fmt: skip
        finally:
            self.topology_remembered.set()

    def make_worker(self, role: str = "any", name: str | None = None) -> Worker:
        """A worker with every agent: investigator (memory, then rules, then the model planner
        when `BLAST_PLANNER` asks for it), responder, learner, and the actor (remediations)."""
        assert self.store is not None
        s = self.settings
        prometheus = prometheus_clients(s)
        # the root route's last channel (a refused message's before the outbox)
        default_channel = s.slack_default_channel if self.slack is not None else None
        agents: list[Any] = [
            Investigator(
                s.walk_hops, prometheus, self.model_planner, s.memory, s.max_recalled_playbooks
            ),
            # Slack alone keeps no record of who was told: copy those follow-ups to the outbox
            Responder(
                self.messenger,
                self.tickets,
                records=self.outbox if s.notify_mode == "slack" else None,
                fallback=self.outbox,
                default_channel=default_channel,
                public_url=s.public_url,
            ),
            Learner(s.max_playbooks),
            Escalator(self.messenger, fallback=self.outbox, default_channel=default_channel),
            Reopener(
                self.messenger,
                fallback=self.outbox,
                default_channel=default_channel,
                public_url=s.public_url,
            ),
            Actor(
                self.messenger,
                self.tickets,
                s.actions_enabled,
                remediation_credentials(s),
                prometheus,
                fallback=self.outbox,
                default_channel=default_channel,
            ),
        ]
        hooks = StepHooks(s.chaos_step_delay_ms, s.chaos_slow_steps, s.chaos_halt_after_step)
        return Worker(
            self.store, s.tenants, agents, role=role, lease_ms=s.lease_ms,
            max_attempts=s.max_attempts, name=name, metrics=self.metrics, hooks=hooks,
            shutdown_grace_s=s.shutdown_grace_s, idle_poll_s=s.idle_poll_ms / 1000,
            claim_batch=s.claim_batch, page_within_ms=s.page_within_ms,
            # several organisations may share one Slack app or repository: then every message
            # names its tenant first
            name_tenant=len(s.tenants) > 1,
        )  # fmt: skip

    def notifiers(self) -> list[Notifier]:
        """Every outbound adapter the workers send through, once each (`doctor` checks them)."""
        found: list[Notifier] = []
        for notifier in (self.messenger, self.tickets, self.outbox):
            if not any(notifier is seen for seen in found):
                found.append(notifier)
        return found

    def start_workers(self, count: int | None = None, role: str = "any") -> None:
        """Start `count` (default `BLAST_WORKERS`) worker threads in this process (the demo;
        `serve` runs worker processes, see `gateway.ops.supervisor`)."""
        for index in range(self.settings.workers if count is None else count):
            worker = self.make_worker(role, name=f"worker-{os.getpid()}-{index}")
            thread = threading.Thread(
                target=worker.run, args=(self._stop,), name=worker.name, daemon=True
            )
            thread.start()
            self.workers.append(worker)
            self._threads.append(thread)

    def start_upkeep(self) -> Upkeep:
        """Start `serve`'s background rounds (`gateway.ops.upkeep`: on-call refresh, coverage
        gauges, discovery) in a thread stopped by `close()`."""
        from gateway.ops.upkeep import Upkeep  # the gateway's only: on-call calendars, discovery
        from gateway.world.discover import discover

        assert self.store is not None
        s = self.settings
        found: Callable[[TenantGraph], object] | None = None
        if s.prometheus_url:
            url, client = s.prometheus_url, Prometheus(s.prometheus_url)
            found = lambda graph: discover(graph, client, url, s.discovery_window)  # noqa: E731
        upkeep = Upkeep(self.store, s, self.metrics, discover=found)
        self._threads.append(upkeep.start(self._stop))
        return upkeep

    def pending_tasks(self) -> int:
        """Open or claimed tasks over every tenant graph."""
        assert self.store is not None
        total = 0
        for tenant in self.settings.tenants:
            row = self.store.graph(graph_name(tenant)).one("pending_tasks")
            total += int(row["pending"]) if row else 0
        return total

    def wait_idle(self, timeout_s: float = 60.0) -> bool:
        """Wait until no task is open or claimed; True if that happened within `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.pending_tasks() == 0:
                return True
            time.sleep(0.05)
        return False

    def close(self) -> None:
        """Stop workers, the gateway and (if this runtime started it) the embedded database."""
        self._stop.set()
        if self._server is not None:
            self._server.should_exit = True
        for thread in self._threads:
            thread.join(timeout=10)
        if self.store is not None:
            self.store.close()
        if self.embedded is not None:
            ours = self.embedded.process.pid if self.embedded.process is not None else None
            self.embedded.stop()
            # only if it still names our server: once ours has stopped, a process that borrowed
            # it (serve) may already have started the next one and recorded it here
            with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
                path = _server_file(self.settings)
                if int(json.loads(path.read_text())["pid"]) == ours:
                    path.unlink()


def prometheus_client(settings: Settings, own: bool = True) -> Prometheus | None:
    """The evidence source of `PROMETHEUS_URL` with its timeout, auth and a fresh per-tenant
    budget (`BLAST_PROMETHEUS_CONCURRENCY`, `BLAST_PROMETHEUS_BUDGET_S`), or None when unset.
    `own`: whether it holds one tenant's series only (`adapters.prometheus.Prometheus`)."""
    if not settings.prometheus_url:
        return None
    basic = (
        (settings.prometheus_username, settings.prometheus_password)
        if settings.prometheus_username
        else None
    )
    return Prometheus(
        settings.prometheus_url,
        settings.prometheus_timeout_s,
        settings.prometheus_bearer_token,
        basic,
        budget=_budget(settings),
        own=own,
    )


def _budget(settings: Settings) -> Budget:
    return Budget(
        settings.prometheus_concurrency,
        settings.prometheus_budget_s,
        wait_s=settings.prometheus_timeout_s,
    )


def prometheus_clients(settings: Settings) -> dict[str, Prometheus]:
    """One evidence source per tenant, by graph name: the tenant's own Prometheus
    (`BLAST_PROMETHEUS_URLS`, no shared auth sent to it), else `PROMETHEUS_URL` (its own when
    it is the only tenant), each with its own budget; a tenant with neither has none."""
    clients: dict[str, Prometheus] = {}
    for tenant in settings.tenants:
        own_url = settings.prometheus_urls.get(tenant)
        if own_url is not None:
            clients[graph_name(tenant)] = Prometheus(
                own_url.get_secret_value(), settings.prometheus_timeout_s,
                budget=_budget(settings), own=True,
            )  # fmt: skip
            continue
        shared = prometheus_client(settings, own=len(settings.tenants) == 1)
        if shared is not None:
            clients[graph_name(tenant)] = shared
    return clients
