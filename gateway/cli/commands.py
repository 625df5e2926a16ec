"""The `blast-radius` command line (typer): demo, serve, worker, topology import / validate,
oncall, doctor, falkordb, incidents, incident, playbook list / restore.

One `Settings` is built here, from the environment and `.env`, and passed down. `main()` is the
entry point: an expected failure (database unreachable, a file that cannot be read, a port in
use, a data folder that cannot be written) is one line on stderr and exit code 1, never a
traceback.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Annotated, Any, NoReturn
from urllib.parse import urlsplit

import redis
import typer
from pydantic import ValidationError

from adapters.falkordb import (
    TENANT_RE,
    GraphUnavailable,
    SchemaFailed,
    TenantGraph,
    answers_ping,
    graph_name,
)
from adapters.notify import AdapterError
from adapters.processes import StopRequest
from agents.act.run import recorded_cannot_run

# Each command imports inside its body what only it uses, so a worker process (`python -m
# gateway.cli worker`, started by serve) loads no web stack, model SDK or PyGithub (README
# "Memory": 134 MiB RSS per process before, about 55 after).
from agents.metrics import serve_metrics_dir, use_multiprocess_dir
from agents.tasks.kinds import ROLE_KINDS
from gateway import __version__
from gateway.logs import configure_logging
from gateway.ops.archive import archive_path, find_archived
from gateway.ops.runtime import (
    ConfigError,
    Runtime,
    embedded_server,
    listen_refusal,
    missing_data_dir,
    writable_folder,
)
from gateway.ops.sdnotify import notify
from gateway.ops.supervisor import WORKERS_STARTING, WorkerPool, worker_env
from gateway.settings import (
    DURATION_RE,
    Settings,
    chosen_env_file,
    dotenv_quiet,
    unknown_settings,
)
from gateway.world import TopologyError, apply_world, demo_world_path, load_world, world_counts
from gateway.world.completeness import from_rows, of_world
from gateway.world.sources import FORMATS, load_sources

#: What `blast-radius --help` says (the module docstring is for developers).
HELP = (
    "Blast Radius: receives Alertmanager and Grafana alerts, finds the root cause in a graph "
    "of your services and pages the on-call person of its owner. Settings come from the "
    "environment and ./.env (see .env.example)."
)
app = typer.Typer(add_completion=False, no_args_is_help=True, help=HELP)
topology_app = typer.Typer(
    no_args_is_help=True, help="Load the world: components, edges, teams, on-call."
)
app.add_typer(topology_app, name="topology")
playbook_app = typer.Typer(
    no_args_is_help=True, help="Playbooks in memory: list them, bring back a retired one."
)
app.add_typer(playbook_app, name="playbook")


def _print_version(asked: bool) -> None:
    if asked:
        typer.echo(f"blast-radius {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print the version and exit.",
            callback=_print_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    """Options for every command."""


#: `--tenant` of the commands that write (import, discover, changes): see `import_tenant`.
WRITE_TENANT_HELP = "Tenant to write to (default: the only configured one; required with several)."

DataDir = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Data folder (BLAST_DATA_DIR).", show_default=False),
]


def load_settings(
    env_file: Path | None = None, warn: bool = True, as_problems: bool = False,
    **overrides: object,
) -> Settings:  # fmt: skip
    """Settings from the environment with CLI overrides (validated like the environment's);
    exits 2 with the reason if invalid (`as_problems`, doctor's way: one `PROBLEM  settings:`
    line each on stdout and exit 1). With `warn`, prints one `configuration warning` line
    per `BLAST_*` name that is no setting (`unknown_settings`).

    `env_file`: read this file instead of `./.env` (e.g. the systemd unit's env file); None:
    `BLAST_ENV_FILE`'s when set (`chosen_env_file`: the units set it), else `./.env`.
    """
    env_file = chosen_env_file(env_file)
    if env_file is not None:
        try:  # pydantic-settings silently skips an env file it cannot read: say so instead
            env_file.read_bytes()
        except OSError as exc:
            typer.echo(f"configuration error: env file {env_file}: {exc.strerror}", err=True)
            raise typer.Exit(2) from None
    try:
        with dotenv_quiet():  # `unknown_settings` says which lines it skipped, in our words
            settings = Settings(_env_file=env_file) if env_file else Settings()  # type: ignore[call-arg]
        changed = {k: v for k, v in overrides.items() if v is not None}
        if changed:  # validated as the environment's values are (`--port 99999` is refused)
            settings = Settings.model_validate(settings.model_dump() | changed)
        for line in unknown_settings(env_file) if warn else []:
            typer.echo(f"configuration warning: {line}", err=True)
        return settings
    except ValidationError as exc:
        if as_problems:  # doctor: one PROBLEM line each, exit 1, as its other findings
            for line in settings_errors(exc):
                typer.echo(f"PROBLEM  settings: {line}")
            typer.echo("(no other check runs until the settings are valid)")
            raise typer.Exit(1) from exc
        for line in settings_errors(exc):
            typer.echo(f"configuration error: {line}", err=True)
        raise typer.Exit(2) from exc


def settings_errors(exc: ValidationError) -> list[str]:
    """One line per invalid setting: `<where>: <why>`, without pydantic's "Value error, "
    (a validator's own message) so every line reads alike."""
    lines = []
    for err in exc.errors():
        where = ".".join(map(str, err["loc"]))
        why = str(err["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
        lines.append(f"{where + ': ' if where else ''}{why}")
    return lines


def setup_logging(verbose: bool) -> None:
    """Log lines to stderr: `time level logger: message`."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


@app.command(
    help="Try it out: replay the OpenTelemetry Demo's fault scenarios through the gateway, with "
    "its own database, and score each diagnosis. Pages go to a scratch outbox, never to people."
)
def demo(
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    data_dir: DataDir = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log every step.")] = False,
    alerts_only: Annotated[
        bool,
        typer.Option(
            "--alerts-only", help="Skip the run with service-graph evidence (needs prometheus)."
        ),
    ] = False,
) -> None:
    """Run the fault scenarios of the OpenTelemetry Demo end to end on the embedded default:
    once with alerts only, then (when Debian's `prometheus` is installed) with the service-graph
    evidence each fault leaves, replayed by a local Prometheus."""
    from gateway.cli.demo import elapsed, run_demo, table
    from gateway.cli.demo_evidence import available

    setup_logging(verbose)
    start = time.monotonic()
    evidence = not alerts_only and available()
    with tempfile.TemporaryDirectory(prefix="blast-radius-demo-") as scratch:
        settings = load_settings(
            data_dir=data_dir or Path(scratch), falkordb_url=None, webhook_tokens={},
            default_tenant="demo", port=0, notify="outbox",  # the demo never pages anyone
        )  # fmt: skip
        say = partial(typer.echo, err=True)
        if not evidence and not alerts_only:
            say("demo: prometheus/promtool not found: alerts only (apt-get install prometheus)")
        results = {}
        try:
            for mode in ("alerts-only", "evidence") if evidence else ("alerts-only",):
                mine = settings.model_copy(update={"data_dir": settings.data_dir / mode})
                say(f"demo ({mode}): embedded FalkorDB in {mine.data_dir}")
                results[mode] = run_demo(mine, progress=say, evidence=mode == "evidence")
        except (GraphUnavailable, SchemaFailed, ConfigError, RuntimeError) as exc:
            say(f"demo failed: {exc}")
            raise typer.Exit(1) from exc
    say(f"demo finished in {elapsed(start)}")
    if as_json:
        typer.echo(json.dumps(results, indent=2))
    elif evidence:
        typer.echo(table(results["evidence"], results["alerts-only"]))
    else:
        typer.echo(table(results["alerts-only"]))


@app.command(
    help="Run the gateway (webhook on /api/v1/alerts) with its worker processes and, unless "
    "FALKORDB_URL is set, its own FalkorDB, until Ctrl-C or SIGTERM."
)
def serve(
    port: Annotated[int | None, typer.Option(help="Port (BLAST_PORT, default 8080).")] = None,
    host: Annotated[
        str | None, typer.Option(help="Address (BLAST_HOST, default 127.0.0.1).")
    ] = None,
    data_dir: DataDir = None,
    workers: Annotated[int | None, typer.Option(help="Worker processes (BLAST_WORKERS).")] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose/--quiet", "-v/-q", help="Log at INFO (the default), or warnings only."
        ),
    ] = True,
) -> None:
    """Run the gateway, N worker processes (restarted when one dies) and, unless FALKORDB_URL
    is set, the embedded FalkorDB (restarted on its port when it dies), until SIGTERM or Ctrl-C.
    """
    from gateway.cli.doctor import check_default_route
    from gateway.ops.upkeep import short_heartbeat_timeout

    setup_logging(verbose)
    settings = load_settings(port=port, host=host, data_dir=data_dir, workers=workers)
    refuse_placeholder_secrets(settings)
    if (refusal := listen_refusal(settings)) is not None:
        typer.echo(f"configuration error: {refusal}", err=True)
        raise typer.Exit(2)
    configure_logging(settings, verbose)
    writable_folder(settings.data_dir)
    if settings.metrics_dir is None and settings.workers > 0:
        # worker processes keep their series in files /metrics sums (prometheus-client's
        # multiprocess mode); the workers inherit the folder through the environment. One
        # folder per serve: a second serve on the same data folder must not empty the first's.
        mine = serve_metrics_dir(settings.data_dir / "metrics", os.getpid())
        settings = settings.model_copy(update={"metrics_dir": mine})
    if settings.metrics_dir is not None:
        use_multiprocess_dir(settings.metrics_dir, fresh=True)
    stop = StopRequest()  # set by signal handlers: see its docstring
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGHUP, hangup_ignored)
    try:
        with Runtime(settings) as runtime:
            assert runtime.store is not None and runtime.url is not None
            routing = check_default_route(settings, runtime.store, runtime.slack)
            if any(not f.ok and not f.transient for f in routing):
                raise ConfigError("; ".join(f.what for f in routing if not f.ok))
            for finding in (f for f in routing if not f.ok):  # Slack unreachable: start anyway
                note = f"{finding.what}; alerts are accepted and pages wait until Slack answers"
                say(settings, note, warning=True)
                runtime.notes.append(note)
            pool = WorkerPool(
                settings.workers, worker_env(settings, runtime.url), settings.shutdown_grace_s
            )
            workers_note(runtime.notes, pool.ready_note())  # from the first request on
            if settings.workers == 0:
                runtime.notes.append(NO_WORKERS)
            bound = runtime.serve_http()
            runtime.start_upkeep()  # on-call shifts kept ahead; discovery
            pool.start()
            host = f"[{settings.host}]" if ":" in settings.host else settings.host
            n = settings.workers
            say(settings,
                f"listening on http://{host}:{bound} "
                f"(webhook /api/v1/alerts, tenants: {', '.join(settings.tenants)}, "
                f"{n} worker{'' if n == 1 else 's'}, outbox: {runtime.outbox.path})",
            )  # fmt: skip
            if n == 0:
                say(settings, NO_WORKERS, warning=True)
            if (
                settings.chaos_step_delay_ms
                or settings.chaos_slow_steps
                or (settings.chaos_halt_after_step)
            ):  # test knobs: they slow or stop every investigation, and so its pages
                say(
                    settings,
                    "BLAST_CHAOS_* settings are on (a test harness's "
                    "knobs): every investigation step is slowed or halted",
                    warning=True,
                )
            if (short := short_heartbeat_timeout(settings)) is not None:
                say(settings, short, warning=True)
            warn_empty_worlds(settings, runtime)
            warn_unrunnable_remediations(settings, runtime)
            # what start-up built (modules, the app) lives as long as the process: out of the
            # collector's full passes, which a storm's allocations trigger (100+ ms each over it)
            gc.freeze()
            notify("READY=1", f"STATUS=listening on {settings.host}:{bound}")
            try:
                while not stop.wait(0.2):
                    with contextlib.suppress(GraphUnavailable):  # tried again next round
                        runtime.revive_database()
                    pool.check()
                    workers_note(runtime.notes, pool.ready_note())
            finally:
                notify("STOPPING=1")
                pool.stop()
    except (GraphUnavailable, SchemaFailed, ConfigError) as exc:
        typer.echo(f"blast-radius: {exc}", err=True)
        raise typer.Exit(1) from exc
    say(settings, "stopped")


def say(settings: Settings, line: str, warning: bool = False) -> None:
    """What `serve` says while it runs (listening, warnings, stopped): `blast-radius: …` on
    stderr, or, with `BLAST_LOG_FORMAT=json`, a log record (JSON on stdout, with the others),
    so a JSON log pipeline sees the warnings as JSON too."""
    if settings.log_format == "json":
        logging.getLogger("gateway.cli").log(logging.WARNING if warning else logging.INFO, line)
        return
    typer.echo(f"blast-radius: {'warning: ' if warning else ''}{line}", err=True)


#: What `serve` says loudly with `BLAST_WORKERS=0` (allowed: workers may run on other hosts).
NO_WORKERS = (
    "BLAST_WORKERS=0: no worker process runs here, so alerts are accepted but nobody is "
    "investigated or paged unless `blast-radius worker` runs against the same database elsewhere"
)


def workers_note(notes: list[str], note: str | None) -> None:
    """Keep `notes` (`/health/ready`'s `detail`) saying which workers are still starting:
    drop the previous such line, add `note` (`WorkerPool.ready_note`) when there is one."""
    notes[:] = [n for n in notes if not n.startswith(WORKERS_STARTING)]
    if note is not None:
        notes.append(note)


def warn_empty_worlds(settings: Settings, runtime: Runtime) -> None:
    """Say so when a tenant's graph holds no components: every alert would be unmatched (e.g.
    the world was imported into another data folder)."""
    assert runtime.store is not None
    where = "FALKORDB_URL" if settings.falkordb_url else f"data folder {settings.data_dir}"
    for tenant in settings.tenants:
        name = graph_name(tenant)
        if world_counts(runtime.store.graph(name))["components"] == 0:
            say(
                settings,
                f"{name} ({where}) holds no components, so no alert will "
                "match one; load a world with `blast-radius topology import FILE` "
                "against the same data folder or FALKORDB_URL",
                warning=True,
            )


def warn_unrunnable_remediations(settings: Settings, runtime: Runtime) -> None:
    """With actions on, say at start (stderr and `/health/ready`'s detail) which playbooks'
    remediations cannot run for want of a credential, and when no credential is set at all
    (`doctor.remediation_problems`): found now, not after a person approves one."""
    from gateway.cli.doctor import NO_CREDENTIAL, remediation_problems

    assert runtime.store is not None
    if not settings.actions_enabled:
        return
    lines = [] if settings.runbook_webhook_secret or settings.github_token else [NO_CREDENTIAL]
    for tenant in settings.tenants:
        lines += remediation_problems(settings, runtime.store.graph(graph_name(tenant)))
    for line in lines:
        say(settings, line, warning=True)
        runtime.notes.append(line)


@app.command(
    help="Run one worker that investigates incidents, sends pages and tickets, and learns from "
    "verdicts (serve starts these for you)."
)
def worker(
    role: Annotated[
        str, typer.Option(help="What to work on: investigator, responder, learner or any.")
    ] = "any",
    burst: Annotated[bool, typer.Option(help="Exit when no task is claimable.")] = False,
    data_dir: DataDir = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose/--quiet", "-v/-q", help="Log at INFO (the default), or warnings only."
        ),
    ] = True,
) -> None:
    """Run one worker (claim loop) against the graph until SIGTERM, or until idle with --burst."""
    setup_logging(verbose)
    if role not in ROLE_KINDS:
        typer.echo(
            f"blast-radius worker: unknown role {role!r}; use {', '.join(ROLE_KINDS)}", err=True
        )
        raise typer.Exit(2)
    settings = load_settings(data_dir=data_dir)
    refuse_placeholder_secrets(settings)
    # a worker works on serve's database: on the embedded one, a folder that does not exist is
    # a typo, and starting an empty database there would look healthy while claiming nothing
    existing_data_dir(settings, "worker")
    configure_logging(settings, verbose)
    stop = StopRequest()  # set by signal handlers: see its docstring
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGHUP, hangup_ignored)
    from agents.tasks.worker import worker_client_name

    try:
        # its connections carry its name while it runs: how `doctor` sees that workers run
        with Runtime(settings, client_name=worker_client_name(role)) as runtime:
            loop = runtime.make_worker(role)
            gc.freeze()  # as serve does: what start-up built stays out of full collections
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, lambda *_: loop.terminate(stop))
            notify("READY=1", f"STATUS=claiming {role} tasks as {loop.name}")
            loop.run(stop, burst=burst)
    except (GraphUnavailable, SchemaFailed) as exc:
        typer.echo(f"blast-radius worker: {exc}", err=True)
        raise typer.Exit(1) from exc


def hangup_ignored(signum: int, frame: object) -> None:
    """SIGHUP (a closed terminal, `kill -HUP`) is logged and ignored: settings are read once
    at start, so a reload would change nothing, and the default action (exit) would stop alert
    intake silently. Restart the service to apply new settings."""
    logging.getLogger("gateway.cli").warning(
        "SIGHUP received and ignored: settings are read at start; restart to apply changes"
    )


def refuse_placeholder_secrets(settings: Settings) -> None:
    """Exit 2 with one line per placeholder or weak secret, unless `BLAST_DEV` is on."""
    problems = settings.placeholder_secrets()
    for line in problems:
        typer.echo(f"configuration error: {line} (set BLAST_DEV=true to allow)", err=True)
    if problems:
        raise typer.Exit(2)


@app.command(
    help="Check the settings, the database, Slack/GitHub and the webhook; print the "
    "Alertmanager receiver to paste. Exit code 1 when something is wrong."
)
def doctor(
    env_file: Annotated[
        Path | None,
        typer.Option(
            help="Read this env file instead of ./.env (default: BLAST_ENV_FILE), e.g. "
            "/etc/blast-radius/env."
        ),
    ] = None,
    url: Annotated[
        str | None,
        typer.Option(help="Base URL Alertmanager posts to (default http://BLAST_HOST:BLAST_PORT)."),
    ] = None,
    data_dir: DataDir = None,
) -> None:
    """Check settings, FalkorDB, notifiers and the webhook; print the Alertmanager receiver.

    Exits 1 when any check finds a problem (one `PROBLEM` line each), an invalid setting
    included (then no other check runs); 2 for an env file it cannot read.
    """
    from gateway.cli.doctor import receiver_snippet, run_checks

    setup_logging(False)
    env_file = chosen_env_file(env_file)  # --env-file, else BLAST_ENV_FILE's, else ./.env
    # doctor: PROBLEM lines, for an invalid value too
    settings = load_settings(env_file, warn=False, as_problems=True, data_dir=data_dir)
    found = run_checks(settings, url, env_file)
    for finding in found:
        typer.echo(finding.line())
    typer.echo("\n# Alertmanager receiver to paste (deploy/alertmanager.yml has the route):")
    typer.echo(receiver_snippet(settings, url))
    if not all(f.ok for f in found):
        raise typer.Exit(1)


@app.command(
    "falkordb",
    help="Run the FalkorDB server that FALKORDB_URL names (a 127.0.0.1 port) in the "
    "foreground, as the systemd unit does.",
)
def falkordb_server(
    print_config: Annotated[
        bool, typer.Option("--print-config", help="Print the config file and exit.")
    ] = False,
    wait: Annotated[
        bool,
        typer.Option(
            "--wait", help="Only wait until the server answers PING (not LOADING); exit 0/1."
        ),
    ] = False,
    wait_s: Annotated[float, typer.Option(help="How long --wait waits (s).")] = 300.0,
    data_dir: DataDir = None,
) -> None:
    """Run the FalkorDB server that FALKORDB_URL names (a 127.0.0.1 port) in the foreground.

    The systemd unit's command: writes `<data dir>/falkordb/falkordb.conf` from the same flags
    as the embedded server (`EmbeddedFalkorDB.command()`: AOF with `BLAST_FALKORDB_FSYNC` and the
    RDB preamble, TIMEOUT_DEFAULT/TIMEOUT_MAX from the settings, bound to 127.0.0.1), logging to
    stdout, then
    replaces this process with `redis-server <that file>`. `--wait` is the unit's readiness
    check (ExecStartPost): this redis-server cannot send sd_notify's READY=1 itself.
    """
    settings = load_settings(data_dir=data_dir)
    target = urlsplit(settings.falkordb_url.get_secret_value()) if settings.falkordb_url else None
    if target is None or target.hostname not in ("127.0.0.1", "localhost") or not target.port:
        why = "is not set" if target is None else "must name 127.0.0.1 or localhost and a port"
        typer.echo(
            f"blast-radius falkordb: FALKORDB_URL {why} (this command runs the server here): "
            "set FALKORDB_URL=redis://127.0.0.1:PORT",
            err=True,
        )
        raise typer.Exit(2)
    server = embedded_server(settings, port=target.port)
    if wait:
        deadline = time.monotonic() + wait_s
        while not answers_ping(server.url):
            if time.monotonic() > deadline:
                typer.echo(f"blast-radius falkordb: no answer after {wait_s:.0f} s", err=True)
                raise typer.Exit(1)
            time.sleep(0.1)
        return
    text = server.config_text(logfile="")
    if print_config:
        typer.echo(text, nl=False)
        return
    server.dir.mkdir(parents=True, exist_ok=True)
    config = server.dir / "falkordb.conf"
    config.write_text(
        "# Written by `blast-radius falkordb` at each start; edit the settings, not this file.\n"
        + text
    )
    binary = server.command()[0]
    os.execv(binary, [binary, str(config)])  # noqa: S606 (our redis-server, no shell)


def import_tenant(settings: Settings, tenant: str | None, command: str) -> str:
    """The tenant a command writes to: `--tenant`, else the only configured tenant; with
    several configured (BLAST_WEBHOOK_TOKENS), exits 2 asking for `--tenant`."""
    if tenant:
        valid_tenant(command, tenant)
        if tenant not in settings.tenants:  # allowed: a world loaded before its token is set
            typer.echo(
                f"{command}: note: tenant {tenant!r} is not configured "
                f"({', '.join(settings.tenants)}); serve uses its graph once BLAST_WEBHOOK_TOKENS "
                "names it",
                err=True,
            )
        return tenant
    if len(settings.tenants) == 1:
        return settings.tenants[0]
    typer.echo(
        f"{command}: several tenants are configured ({', '.join(settings.tenants)}); "
        "say which with --tenant",
        err=True,
    )
    raise typer.Exit(2)


def valid_tenant(command: str, tenant: str) -> str:
    """`tenant` when it is a valid tenant name (`TENANT_RE`), else exit 2 saying what one is."""
    if not TENANT_RE.match(tenant):
        typer.echo(
            f"{command}: --tenant {tenant!r} is not a tenant name (lower-case letters, digits, "
            "- and _, at most 63)",
            err=True,
        )
        raise typer.Exit(2)
    return tenant


def fail_topology(command: str, exc: TopologyError) -> NoReturn:
    """Print every problem of a rejected world, one line each, and exit 2."""
    n = len(exc.problems)
    writes = command.endswith(("import", "discover"))  # validate and diff never write
    written = ", nothing written" if writes else ""
    typer.echo(f"{command}: {n} problem{'' if n == 1 else 's'}{written}:", err=True)
    for line in exc.problems:
        typer.echo(f"  {line}", err=True)
    raise typer.Exit(2)


EnvFileOption = Annotated[
    Path | None,
    typer.Option(help="Compose interpolation variables (default: the .env beside the first file)."),
]
FormatOption = Annotated[
    str,
    typer.Option(
        "--format", help=f"Source format: {' | '.join(FORMATS)} (auto: by the file's content)."
    ),
]


#: The longest list `topology import` prints item by item without `--verbose`: a re-import's
#: few changes are listed, a first import's hundred new components and edges counted.
IMPORT_DETAIL = 10


@topology_app.command(
    "import",
    help="Load world files (components, dependencies, teams, people, on-call rotations) or "
    "compose files, Backstage catalogs and manifests into a tenant's graph.",
)
def topology_import(
    paths: Annotated[
        list[Path],
        typer.Argument(
            metavar="FILE",
            help="World file(s), compose files, Backstage catalogs or manifests.",
        ),
    ],
    fmt: FormatOption = "auto",
    tenant: Annotated[
        str | None,
        typer.Option(help=WRITE_TENANT_HELP),
    ] = None,
    env_file: EnvFileOption = None,
    codeowners: Annotated[
        Path | None,
        typer.Option(help="CODEOWNERS file: owners of components by their paths."),
    ] = None,
    data_dir: DataDir = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help=f"List every item new, changed, retired or not mapped (else a list longer "
            f"than {IMPORT_DETAIL} items is counted by kind).",
        ),
    ] = False,
) -> None:
    """Validate every source, then load components, edges, teams, people and on-call into a
    tenant graph; print what was new, changed, retired or not mapped (a list longer than
    `IMPORT_DETAIL` items counted by kind, every item with `--verbose`). Nothing is written
    when any problem is found (exit 2, every problem listed)."""
    from gateway.world.codeowners import read_codeowners

    setup_logging(False)
    settings = load_settings(data_dir=data_dir)
    if fmt not in FORMATS:
        typer.echo(f"topology import: --format must be one of {', '.join(FORMATS)}", err=True)
        raise typer.Exit(2)
    name = graph_name(import_tenant(settings, tenant, "topology import"))
    try:
        loaded = load_sources(paths, fmt, env_file)
        rules = (read_codeowners(codeowners), str(codeowners)) if codeowners else None
        with Runtime(settings) as runtime:
            assert runtime.store is not None
            graph = runtime.store.graph(name)
            graph.ensure_schema()
            report = apply_world(
                graph, loaded.world, loaded.sources, explicit=loaded.explicit, codeowners=rules
            )
            totals = holds(graph)
            complete = from_rows(graph.rows("world_dependencies"))
            routed = graph.one("default_route") is not None
    except TopologyError as exc:
        fail_topology("topology import", exc)
    except (GraphUnavailable, SchemaFailed) as exc:
        typer.echo(f"topology import: {exc}", err=True)
        raise typer.Exit(1) from exc
    report.unmapped = loaded.unmapped + report.unmapped
    counts = report.counts
    typer.echo(f"imported into {name}: {counted(counts)}")
    limit = None if verbose else IMPORT_DETAIL
    for line in report.lines(limit, " (--verbose lists each)"):
        typer.echo(line)
    typer.echo(f"{name} now holds: {counted(totals)}")
    for line in complete.lines():
        typer.echo(f"incomplete: {line}")
    if report.merged:
        n, names = len(report.merged), ", ".join(sorted(report.merged))
        typer.echo(
            f"warning: {n} component{'' if n == 1 else 's'} already existed from another source "
            f"and {'was' if n == 1 else 'were'} merged: {names} (another app? give it a "
            "--tenant or --data-dir of its own)"
        )
    if not routed:
        typer.echo(f"warning: {NO_DEFAULT_TEAM}")


#: Said by `topology import` and `validate` when no default team is known.
NO_DEFAULT_TEAM = (
    "no default team: an alert on a component no team owns pages nobody; name one with "
    "`default_team:` in a world file (docs/world.md)"
)


@topology_app.command(
    "validate",
    help="Check sources as `import` would, without a database: every problem, with its "
    "line; exit 2 if any.",
)
def topology_validate(
    paths: Annotated[
        list[Path], typer.Argument(metavar="FILE", help="Files to check, as for `import`.")
    ],
    fmt: FormatOption = "auto",
    env_file: EnvFileOption = None,
) -> None:
    """Check sources as `import` would, without a database: every problem, with its line;
    exit 2 if any."""
    from gateway.world.validate import check_world, dotted

    try:
        loaded = load_sources(paths, fmt, env_file)
        problems = check_world(loaded.world, dotted, require_default_team=loaded.explicit)
        if problems:
            raise TopologyError(problems)
    except TopologyError as exc:
        fail_topology("topology validate", exc)
    world = loaded.world
    hosted = sum(1 for c in world.components if c.hosted_on)  # import writes each as an edge
    typer.echo(
        f"ok: {len(world.components)} components, {len(world.edges) + hosted} edges "
        f"({hosted} of them hosted_on), "
        f"{len(world.teams)} team{'' if len(world.teams) == 1 else 's'}, default team "
        f"{world.default_team or 'none'}"
        + (f", {len(world.playbooks)} playbook{'' if len(world.playbooks) == 1 else 's'}"
           if world.playbooks else "")
    )  # fmt: skip
    for line in loaded.unmapped:
        typer.echo(f"not mapped (never guessed): {line}")
    for line in of_world(world).lines():
        typer.echo(f"incomplete: {line}")
    if not world.default_team:
        typer.echo(
            "warning: these files name no default team (fine when a world file imported into "
            f"the same graph names one), else {NO_DEFAULT_TEAM}"
        )


@topology_app.command(
    "discover",
    help="Add the dependency edges and call rates the service-graph metrics show; retire the edges "
    "discovery reported before that had no calls in the window.",
)
def topology_discover(
    prometheus: Annotated[
        str | None, typer.Option(help="Prometheus base URL (default PROMETHEUS_URL).")
    ] = None,
    window: Annotated[
        str, typer.Option(help="Range of the call rates (a PromQL duration: 30m, 1h, 2d).")
    ] = "1h",
    at: Annotated[
        str | None,
        typer.Option(
            help="End of the window (RFC 3339; default now). A past time adds what it shows and "
            "retires no edge seen after it."
        ),
    ] = None,
    tenant: Annotated[str | None, typer.Option(help=WRITE_TENANT_HELP)] = None,
    data_dir: DataDir = None,
) -> None:
    """Add the dependency edges and call rates the service-graph metrics show; retire the
    edges discovery reported before that had no calls in the window."""
    from adapters.prometheus import Prometheus
    from gateway.world.discover import discover

    setup_logging(False)
    settings = load_settings(data_dir=data_dir)
    url = prometheus or settings.prometheus_url
    if not url:
        typer.echo("topology discover: give --prometheus URL or set PROMETHEUS_URL", err=True)
        raise typer.Exit(2)
    if not DURATION_RE.fullmatch(window):  # as BLAST_DISCOVERY_WINDOW is checked
        typer.echo(f"topology discover: --window {window!r} is no duration: use 30m, 1h, 2d …",
                   err=True)  # fmt: skip
        raise typer.Exit(2)
    when = parse_time("topology discover", at)
    name = graph_name(import_tenant(settings, tenant, "topology discover"))
    client = Prometheus(url)
    try:
        with Runtime(settings) as runtime:
            assert runtime.store is not None
            graph = runtime.store.graph(name)
            graph.ensure_schema()
            report = discover(graph, client, url, window, when)
            totals = holds(graph)
    except TopologyError as exc:
        fail_topology("topology discover", exc)
    except AdapterError as exc:  # only Prometheus answers through an adapter here
        typer.echo(f"topology discover: {exc} (Prometheus at {without_password(url)})", err=True)
        raise typer.Exit(1) from exc
    except (GraphUnavailable, SchemaFailed) as exc:
        typer.echo(f"topology discover: {exc}", err=True)
        raise typer.Exit(1) from exc
    finally:
        client.close()
    typer.echo(f"discovered into {name}: {counted(report.counts)}")
    for line in report.lines():
        typer.echo(line)
    typer.echo(f"{name} now holds: {counted(totals)}")


def without_password(url: str) -> str:
    """`url` to print: its user and password (`http://admin:pw@prom:9090`) left out, its query
    too (a token may ride there); scheme, host, port and path kept."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # a port that is no number: said as the URL has it, still no password
        port = ":" + parts.netloc.rsplit(":", 1)[-1]
    return f"{parts.scheme}://{host}{port}{parts.path}"


def holds(graph: TenantGraph) -> dict[str, int]:
    """What the graph holds now, as `… now holds:` says it: the world's counts
    (`world_counts`) with its active playbooks (world-file, API or learned:
    `cypher/active_playbooks.cypher`) before the shifts, as `imported into …:` lists them."""
    row = graph.one("active_playbooks") or {}
    world = world_counts(graph)
    shifts = world.pop("shifts")  # last, as `imported into …:` lists them
    return world | {"playbooks": int(row.get("playbooks") or 0), "shifts": shifts}


def counted(counts: dict[str, int]) -> str:
    """`{"teams": 1, "people": 3}` -> `1 team, 3 people` (keys are plural nouns)."""
    one = {"people": "person"}
    return ", ".join(
        f"{n} {noun if n != 1 else one.get(noun, noun.removesuffix('s'))}"
        for noun, n in counts.items()
    )


def parse_time(command: str, text: str | None) -> datetime:
    """An RFC 3339 time (a `Z` suffix allowed; no zone means UTC), or now; exits 2 if bad."""
    if not text:
        return datetime.now(UTC)
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        typer.echo(f"{command}: {text!r} is not an RFC 3339 time", err=True)
        raise typer.Exit(2) from exc
    return when if when.tzinfo else when.replace(tzinfo=UTC)


@topology_app.command(
    "changes",
    help="Record merged pull requests (GITHUB_TOKEN, read-only is enough) as changes of the "
    "components whose paths they touched; authors as pseudonyms unless BLAST_PR_AUTHORS=login.",
)
def topology_changes(
    since: Annotated[str, typer.Option(help="Merged at or after (RFC 3339).")],
    repo: Annotated[str | None, typer.Option(help="owner/name (default GITHUB_REPO).")] = None,
    tenant: Annotated[str | None, typer.Option(help=WRITE_TENANT_HELP)] = None,
    data_dir: DataDir = None,
) -> None:
    """Record merged pull requests (GITHUB_TOKEN, read-only is enough) as changes of the
    components whose paths they touched; authors as pseudonyms unless BLAST_PR_AUTHORS=login."""
    from gateway.world.pulls import record_pull_requests

    setup_logging(False)
    settings = load_settings(data_dir=data_dir)
    repo = repo or settings.github_repo
    if settings.github_token is None or not repo:
        typer.echo("topology changes: set GITHUB_TOKEN and GITHUB_REPO (or --repo)", err=True)
        raise typer.Exit(2)
    since_ms = int(parse_time("topology changes", since).timestamp() * 1000)
    name = graph_name(import_tenant(settings, tenant, "topology changes"))
    # imported here: PyGithub costs ~20 MiB, which every serve and worker process would carry
    from adapters.github.changes import merged_pull_requests

    try:
        pulls = merged_pull_requests(
            settings.github_token, repo, since_ms, api_url=settings.github_api_url
        )
        with Runtime(settings) as runtime:
            assert runtime.store is not None
            graph = runtime.store.graph(name)
            graph.ensure_schema()
            counts, unmapped = record_pull_requests(graph, pulls, repo, settings.pr_authors)
    except (AdapterError, GraphUnavailable, SchemaFailed) as exc:
        typer.echo(f"topology changes: {exc}", err=True)
        raise typer.Exit(1) from exc
    typer.echo(f"recorded into {name}: {counted(counts)}")
    for line in unmapped:
        typer.echo(f"not mapped (never guessed): {line}")


@topology_app.command(
    "diff",
    help="Print what the sources have that a world file lacks (+) and the other way round (-), "
    "without a database.",
)
def topology_diff(
    paths: Annotated[
        list[Path], typer.Argument(metavar="FILE", help="Sources to compare, as for `import`.")
    ],
    against: Annotated[
        Path | None,
        typer.Option(help="Reference world file (default: the bundled OpenTelemetry Demo world)."),
    ] = None,
    fmt: FormatOption = "auto",
    env_file: EnvFileOption = None,
) -> None:
    """Print what the sources have that a world file lacks (+) and the other way round (-),
    without a database."""
    from gateway.world.diff import diff_worlds

    try:
        loaded = load_sources(paths, fmt, env_file)
        reference = load_world(against or demo_world_path())
    except TopologyError as exc:
        fail_topology("topology diff", exc)
    for line in diff_worlds(loaded.world, reference).lines(fmt if fmt != "auto" else "import"):
        typer.echo(line)
    for line in loaded.unmapped:
        typer.echo(f"not mapped (never guessed): {line}")


@app.command(
    help="Print who is on call for each team at a time, and any team with nobody on call then or a "
    "gap within the next 14 days (exit 1 if so); a time beyond the shifts kept (7 days back, 90 "
    "ahead) is unknown."
)
def oncall(
    at: Annotated[
        str | None,
        typer.Option(help="When (RFC 3339, e.g. 2026-12-24T03:00:00Z; default now)."),
    ] = None,
    tenant: Annotated[
        str | None,
        typer.Option(
            help="Tenant to read (default: every configured one; when their graphs are empty, "
            "the only other graph here).",
            show_default=False,
        ),
    ] = None,
    data_dir: DataDir = None,
) -> None:
    """Print who is on call for each team at a time, and any team with nobody on call then or
    a gap within the next 14 days (exit 1 if so).

    Shifts are kept from 7 days back to 90 ahead of the clock (`SHIFTS_BACK`, `SHIFTS_AHEAD`;
    serve re-expands them): at a time outside that, each team is "unknown", which is no
    problem (exit 0); the 14 days checked stop where the shifts kept stop, so their end is no gap.
    """
    from gateway.world.oncall import (
        COVERAGE_HORIZON,
        SHIFTS_AHEAD,
        SHIFTS_BACK,
        coverage,
        coverage_problems,
    )

    setup_logging(False)
    settings = load_settings(data_dir=data_dir)
    existing_data_dir(settings, "oncall")
    when = parse_time("oncall", at)
    now = datetime.now(UTC)
    known = now - SHIFTS_BACK <= when < now + SHIFTS_AHEAD  # else "NOBODY" would look true
    unknown = (
        f"unknown: shifts are known until {now + SHIFTS_AHEAD:%Y-%m-%d %H:%M} UTC "
        f"(kept {SHIFTS_AHEAD.days} days ahead)"
        if when >= now
        else f"unknown: shifts are known from {now - SHIFTS_BACK:%Y-%m-%d %H:%M} UTC "
        f"(kept {SHIFTS_BACK.days} days back)"
    )
    horizon = min(COVERAGE_HORIZON, now + SHIFTS_AHEAD - when)
    if tenant:
        valid_tenant("oncall", tenant)
    problems = []
    try:
        with Runtime(settings) as runtime:
            assert runtime.store is not None
            # a misspelt tenant: refused, before a read makes an empty graph of that name (a
            # world may be loaded, and checked here, before its token is configured)
            for name in read_tenants(runtime, tenant, "oncall", every=True):
                graph = runtime.store.graph(graph_name(name))
                found = coverage(graph, when, horizon if known else COVERAGE_HORIZON)
                typer.echo(f"{graph_name(name)} at {when.astimezone(UTC):%Y-%m-%d %H:%M UTC}:")
                for team in found:
                    mark = " (default team)" if team.is_default else ""
                    who = ", ".join(team.on_call) or "NOBODY"
                    typer.echo(f"  {team.team}{mark}: {who if known else unknown}")
                    if team.escalation:  # whom its page reaches while nobody acknowledges it
                        typer.echo(f"    escalation: {'; '.join(team.escalation)}")
                if known:
                    problems += [f"{name}: {p}" for p in coverage_problems(found, when)]
                if not found:  # e.g. a misspelt --tenant, or another data folder
                    problems.append(
                        f"{name}: {graph_name(name)} has no teams (load a world with "
                        "`blast-radius topology import FILE`)"
                    )
    except (GraphUnavailable, SchemaFailed) as exc:
        typer.echo(f"oncall: {exc}", err=True)
        raise typer.Exit(1) from exc
    for line in problems:
        typer.echo(f"PROBLEM  {line}")
    if problems:
        raise typer.Exit(1)


def existing_data_dir(settings: Settings, command: str) -> None:
    """A reading command (`incidents`, `incident`, `oncall`), or a `worker` (it works on the
    database `serve` made), on the embedded database: exit 2
    when the data folder does not exist, as `doctor` says, rather than start an empty database
    there and answer "no incidents" (with FALKORDB_URL the folder holds no database)."""
    if settings.falkordb_url is None and not settings.data_dir.is_dir():
        typer.echo(f"{command}: data folder {missing_data_dir(settings.data_dir)}", err=True)
        raise typer.Exit(2)


def read_tenants(
    runtime: Runtime, tenant: str | None, command: str, every: bool = False
) -> list[str]:
    """The tenants a reading command reads (`oncall`, `incidents`, `incident`).

    `--tenant`: that one, when it is configured or its graph exists here (a world imported, or
    incidents kept, before serve's environment reaches this shell: a note says it is not
    configured); else exit 2 (no graph is made for a misspelt name). Without it: every
    configured tenant (`every`), or the only one, else `BLAST_DEFAULT_TENANT` when it is
    configured (exit 2 naming the configured ones when not). When those graphs hold nothing
    and exactly one other tenant's graph here holds data, that one, with a note; several: exit
    2 naming them."""
    settings = runtime.settings
    store = runtime.store
    assert store is not None
    configured = ", ".join(settings.tenants)
    unset = "this shell's BLAST_WEBHOOK_TOKENS does not name it (serve's may): reading it anyway"
    if tenant:
        valid_tenant(command, tenant)
        if tenant in settings.tenants:
            return [tenant]
        if not store.has_graph(graph_name(tenant)):
            typer.echo(f"{command}: unknown tenant {tenant!r}: no graph {graph_name(tenant)}; "
                       f"configured: {configured}", err=True)  # fmt: skip
            raise typer.Exit(2)
        typer.echo(f"{command}: note: tenant {tenant!r} has a graph here but is not configured "
                   f"(configured: {configured}); {unset}", err=True)  # fmt: skip
        return [tenant]
    if every:
        chosen = settings.tenants
    else:
        one = settings.tenants[0] if len(settings.tenants) == 1 else settings.default_tenant
        if one not in settings.tenants:
            typer.echo(f"{command}: {several_tenants(settings)}", err=True)
            raise typer.Exit(2)
        chosen = [one]
    if any(store.graph(graph_name(t)).node_count() for t in chosen):
        return chosen
    # the configured graphs are empty (Runtime made their schema): any other that holds data?
    here = [t for t in store.tenants() if store.graph(graph_name(t)).node_count()]
    if len(here) == 1:
        typer.echo(f"{command}: note: no graph of {configured} here; reading tenant {here[0]!r}, "
                   f"the only one here, which is not configured: {unset}", err=True)  # fmt: skip
        return here
    if here:
        typer.echo(f"{command}: no graph of {configured} here; tenants with a graph here: "
                   f"{', '.join(here)}: say which with --tenant", err=True)  # fmt: skip
        raise typer.Exit(2)
    return chosen


def several_tenants(settings: Settings) -> str:
    """Why a reading command without `--tenant` cannot choose among the configured tenants
    (`BLAST_DEFAULT_TENANT` is none of them). The built-in default (`demo`) is not named: the
    user never set it, and naming it read as a typo of theirs."""
    said = f"{len(settings.tenants)} tenants configured: {', '.join(settings.tenants)}"
    if settings.default_tenant != Settings.model_fields["default_tenant"].default:
        said = f"BLAST_DEFAULT_TENANT {settings.default_tenant!r} is not configured; {said}"
    return f"{said}: say which with --tenant"


@contextlib.contextmanager
def tenant_graph(
    tenant: str | None, data_dir: Path | None, command: str
) -> Iterator[tuple[Settings, str, TenantGraph]]:
    """The one tenant graph a reading command reads (`existing_data_dir`, `read_tenants`),
    open while the block runs, with the settings it was read with and the tenant's name.
    Exits 2 as those do."""
    setup_logging(False)
    settings = load_settings(data_dir=data_dir)
    existing_data_dir(settings, command)
    with Runtime(settings) as runtime:
        assert runtime.store is not None
        (name,) = read_tenants(runtime, tenant, command)
        yield settings, name, runtime.store.graph(graph_name(name))


def incident_tenant(runtime: Runtime, incident_id: str, tenant: str | None) -> str:
    """The tenant `incident ID` reads: `--tenant` or the only configured one (`read_tenants`);
    with several configured, the one whose graph holds `incident_id`, else whose archive does
    (BLAST_ARCHIVE_DAYS). Exits 1 when none holds it and 2 when several do, saying which."""
    settings = runtime.settings
    if tenant or len(settings.tenants) == 1:
        (name,) = read_tenants(runtime, tenant, "incident")
        return name
    store = runtime.store
    assert store is not None
    found = {"incident_id": incident_id}
    holders = [t for t in settings.tenants if store.graph(graph_name(t)).one("incident_get", found)]
    if not holders:  # it may have left the graph for its tenant's archive
        holders = [
            t for t in settings.tenants
            if find_archived(archive_path(settings.data_dir, t), incident_id) is not None
        ]  # fmt: skip
    if len(holders) == 1:
        return holders[0]
    configured = ", ".join(settings.tenants)
    if not holders:
        typer.echo(f"incident: no incident {incident_id!r} in the graph or archive of any "
                   f"configured tenant ({configured})", err=True)  # fmt: skip
        raise typer.Exit(1)
    typer.echo(f"incident: tenants {', '.join(holders)} each have an incident {incident_id!r}: "
               "say which with --tenant", err=True)  # fmt: skip
    raise typer.Exit(2)


TenantOption = Annotated[
    str | None,
    typer.Option(
        help="Tenant to read (default: the only configured one, else BLAST_DEFAULT_TENANT; "
        "when its graph is empty, the only other graph here).",
        show_default=False,
    ),
]

#: `incident ID`'s `--tenant`: without it the id finds its tenant (`incident_tenant`).
IncidentTenantOption = Annotated[
    str | None,
    typer.Option(
        help="Tenant to read (default: the only configured one, else the one whose graph holds "
        "ID).",
        show_default=False,
    ),
]


@app.command(help="List incidents, newest first.")
def incidents(
    status: Annotated[
        str | None,
        typer.Option(help="Only 'open', 'resolved' or 'merged' incidents.", show_default=False),
    ] = None,
    limit: Annotated[int, typer.Option(help="At most this many.", min=1, max=1000)] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON, as the API does.")] = False,
    tenant: TenantOption = None,
    data_dir: DataDir = None,
) -> None:
    """`GET /api/v1/incidents` read from the graph directly; the table says whom each page
    went to (`web_paged.cypher`, as the web list does), and when only to the outbox."""
    from gateway.cli.incident_text import incident_table
    from gateway.http.incident_views import loads
    from gateway.http.status import mark_contact_point_tests

    if status not in (None, "open", "resolved", "merged"):
        typer.echo(f"--status must be open, resolved or merged, not {status!r}", err=True)
        raise typer.Exit(2)
    with tenant_graph(tenant, data_dir, "incidents") as (settings, name, graph):
        rows = graph.rows("list_incidents", {"status": status, "limit": limit})
        for row in rows:
            row["alerts"], row["firing"] = int(row["alerts"]), int(row["firing"])
        mark_contact_point_tests(graph, rows)  # as the API's rows say it
        found = [] if as_json or not rows else graph.rows(
            "web_paged", {"incident_ids": [r["id"] for r in rows]}
        )  # fmt: skip
    routes = {f["incident_id"]: loads(f["result"]) for f in found}
    routes = {k: v for k, v in routes.items() if isinstance(v, dict)}
    # several tenants configured: each title names its own, as their pages and tickets do
    named = name if len(settings.tenants) > 1 else None
    typer.echo(
        json.dumps({"incidents": rows}, indent=2)
        if as_json
        else incident_table(rows, routes, named)
    )


@app.command(
    help="Show one incident: cause, finding, pages, remediations, alerts, tickets, verdicts."
)
def incident(
    incident_id: Annotated[str, typer.Argument(metavar="ID", help="Incident id (inc-…).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON, as the API does.")] = False,
    alerts: Annotated[
        int | None,
        typer.Option(
            help="List this many alerts, firing first (default 10; with --json 500, oldest "
            "first, as the API does).",
            min=0,
            max=5000,
        ),
    ] = None,
    tenant: IncidentTenantOption = None,
    data_dir: DataDir = None,
) -> None:
    """`GET /api/v1/incidents/{id}` read from the graph directly, or the incident's archived
    record (JSON, gateway/ops/archive.py) once it left the graph; exit 1 when there is none.
    The text lists `--alerts` alerts, firing first, after their counts by component and
    alertname."""
    from gateway.cli.incident_text import LISTED_ALERTS, incident_report
    from gateway.http.incident_views import loads
    from gateway.http.status import API_ALERTS, incident_detail

    setup_logging(False)
    settings = load_settings(data_dir=data_dir)
    existing_data_dir(settings, "incident")
    listed = alerts if alerts is not None else API_ALERTS if as_json else LISTED_ALERTS
    with Runtime(settings) as runtime:
        assert runtime.store is not None
        name = incident_tenant(runtime, incident_id, tenant)
        graph = runtime.store.graph(graph_name(name))
        found = incident_detail(graph, incident_id, listed, firing_first=not as_json)
        row = graph.one("web_paged", {"incident_ids": [incident_id]}) if found else None
        fixes = graph.rows("incident_remediations", {"incident_id": incident_id}) if found else []
    if found is None:
        path = archive_path(settings.data_dir, name)
        archived = find_archived(path, incident_id)
        if archived is not None:
            typer.echo(f"{incident_id} was archived (BLAST_ARCHIVE_DAYS) to {path}", err=True)
            typer.echo(json.dumps(archived, indent=2))
            return
        typer.echo(f"no incident {incident_id!r}", err=True)
        raise typer.Exit(1)
    # Whether a proposal can run depends on the server's settings, which this shell may not
    # have (a VPS keeps them in the units' env file): only what the server recorded when it
    # proposed it is said (`run.recorded_cannot_run`), never this process's settings.
    outcomes = {t["id"]: t["outcome"] for t in found["tasks"]}
    for fix in fixes:
        if fix["remediation"].get("status") == "proposed":
            said = outcomes.get(f"propose:{fix['remediation']['id']}")
            fix["cannot_run_when_proposed"] = recorded_cannot_run(said)
    paged = loads(row["result"]) if row else None
    first = loads(row["first"]) if row and row["first"] else None
    if as_json:
        typer.echo(json.dumps(found, indent=2))
    else:
        typer.echo(incident_report(
            found, paged if isinstance(paged, dict) else None,
            first if isinstance(first, dict) and first != paged else None, fixes,
        ))  # fmt: skip


@playbook_app.command(
    "list",
    help="List the playbooks in memory: id, status, component, trust with helped and misled, "
    "title, who wrote or taught it, why it retired.",
)
def playbook_list(
    status: Annotated[
        str,
        typer.Option(help="Only 'active', 'superseded' or 'retired' playbooks, or 'all'."),
    ] = "active",
    component: Annotated[
        str | None,
        typer.Option(help="Only playbooks pinned to this component.", show_default=False),
    ] = None,
    tenant: TenantOption = None,
    data_dir: DataDir = None,
) -> None:
    """`GET /api/v1/playbooks` read from the graph directly (`list_playbooks.cypher`), as a
    table (`playbook_text.playbook_table`): the ids `playbook restore` takes, and why each
    retired one retired. Exit 2 for another `--status`."""
    from gateway.cli.playbook_text import STATUSES, playbook_table

    if status not in (*STATUSES, "all"):
        typer.echo(f"--status must be {', '.join(STATUSES)} or all, not {status!r}", err=True)
        raise typer.Exit(2)
    with tenant_graph(tenant, data_dir, "playbook list") as (_, _, graph):
        rows = graph.rows("list_playbooks", {})
    typer.echo(playbook_table(rows, status, component))


@playbook_app.command(
    "restore",
    help="Bring back a retired playbook (retired after it misled twice, by a person, or as no "
    "longer in its world file): active and recalled again, its trust kept.",
)
def playbook_restore(
    playbook_id: Annotated[str, typer.Argument(metavar="ID", help="Playbook id.")],
    tenant: Annotated[str | None, typer.Option(help=WRITE_TENANT_HELP)] = None,
    data_dir: DataDir = None,
) -> None:
    """Set a retired playbook active again (`restore_playbook.cypher`) and say what it was
    retired for and the trust it keeps; exit 1 for an unknown id or one not retired (a
    superseded one: its next version is the one recalled)."""
    setup_logging(False)
    settings = load_settings(data_dir=data_dir)
    existing_data_dir(settings, "playbook restore")
    name = graph_name(import_tenant(settings, tenant, "playbook restore"))
    with Runtime(settings) as runtime:
        assert runtime.store is not None
        row = runtime.store.graph(name).one("restore_playbook", {"id": playbook_id})
    if row is None:
        typer.echo(f"playbook restore: no playbook {playbook_id!r} in {name}: "
                   "`blast-radius playbook list --status retired` lists the retired ones",
                   err=True)  # fmt: skip
        raise typer.Exit(1)
    if row["was"] != "retired":
        typer.echo(
            f"playbook restore: {playbook_id} is {row['was']}, not retired: nothing to restore",
            err=True,
        )
        raise typer.Exit(1)
    why = f" (it was retired: {row['reason']})" if row["reason"] else ""
    typer.echo(
        f"playbook {playbook_id} is active again{why}; trust {row['trust']:.2f} kept "
        "(trust moves only on verdicts: under 0.5, it retires again if it misleads once more)"
        if row["misled"] >= 2 and row["trust"] < 0.5
        else f"playbook {playbook_id} is active again{why}; trust {row['trust']:.2f} kept"
    )
    warning = withdrawn_by(row)
    if warning:
        typer.echo(f"playbook restore: warning: {warning}", err=True)


def withdrawn_by(row: dict[str, Any]) -> str | None:
    """The warning for restoring a learned playbook (a `restore_playbook` row) whose lesson the
    latest verdict on the incident it was learned from does not teach: that verdict names
    another cause (or none), so memory holds a lesson the people of that incident withdrew,
    maybe beside the one they taught instead. None when it is the verdict's own cause, or no
    verdict on its incident is known (a runbook people wrote, an archived incident)."""
    later, pinned = row.get("later"), row.get("component")
    if not later or not row.get("learned_from") or later["actual_cause"] == pinned:
        return None
    at = datetime.fromtimestamp(later["at"] / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")
    named = (
        f"names {later['actual_cause']} as the cause"
        if later["actual_cause"]
        else "names no cause in the graph"
    )
    return (
        f"the latest verdict on {row['learned_from']}, the incident it was learned from "
        f"({later['id']}: {later['verdict']} by {later['by']} at {at}), {named}, not {pinned}: "
        "it withdrew this lesson, and memory now holds it again beside what that verdict "
        "taught; retire it again (`DELETE /api/v1/playbooks/ID`) if that verdict stands"
    )


def failure_line(exc: BaseException) -> str | None:
    """One line saying what went wrong, for the failures a user can fix (a database that does
    not answer, a file or folder that cannot be read or written, a port in use); None for
    anything else, which is a bug and keeps its traceback."""
    if isinstance(exc, GraphUnavailable | SchemaFailed | ConfigError | TopologyError):
        return str(exc)
    if isinstance(exc, redis.RedisError):
        return f"FalkorDB (FALKORDB_URL): {exc}"
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror or exc}{where}"
    return None


def main() -> None:
    """The `blast-radius` entry point: the commands, with `failure_line` failures as one line
    on stderr and exit code 1."""
    try:
        app()
    except Exception as exc:
        line = failure_line(exc)
        if line is None:
            raise
        typer.echo(f"blast-radius: {line}", err=True)
        sys.exit(1)
