"""The `blast-radius` command line (typer): demo, serve, worker, topology import.

One `Settings` is built here, from the environment and `.env`, and passed down.
"""

from __future__ import annotations

import contextlib
import json
import logging
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from adapters.falkordb import GraphUnavailable, SchemaFailed
from gateway.demo import elapsed, run_demo, table
from gateway.runtime import ConfigError, Runtime
from gateway.settings import Settings, graph_name
from gateway.supervisor import WorkerPool, worker_env
from gateway.topology import TopologyError, import_world, load_world

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
topology_app = typer.Typer(
    no_args_is_help=True, help="Load the world: components, edges, teams, on-call."
)
app.add_typer(topology_app, name="topology")

DataDir = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Data folder (BLAST_DATA_DIR).", show_default=False),
]


def load_settings(**overrides: object) -> Settings:
    """Settings from the environment with CLI overrides; exits 2 with the reason if invalid."""
    try:
        settings = Settings()
        changed = {k: v for k, v in overrides.items() if v is not None}
        return settings.model_copy(update=changed) if changed else settings
    except ValidationError as exc:
        for err in exc.errors():
            typer.echo(
                f"configuration error: {'.'.join(map(str, err['loc']))}: {err['msg']}", err=True
            )
        raise typer.Exit(2) from exc


def setup_logging(verbose: bool) -> None:
    """Log lines to stderr: `time level logger: message`."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


@app.command()
def demo(
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    data_dir: DataDir = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False,
) -> None:
    """Run the fault scenarios of the OpenTelemetry Demo end to end on the embedded default."""
    setup_logging(verbose)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="blast-radius-demo-") as scratch:
        settings = load_settings(
            data_dir=data_dir or Path(scratch), falkordb_url=None, webhook_tokens={},
            default_tenant="demo", port=0,
        )  # fmt: skip
        typer.echo(f"demo: embedded FalkorDB in {settings.data_dir}", err=True)
        try:
            result = run_demo(settings, progress=lambda line: typer.echo(line, err=True))
        except (GraphUnavailable, SchemaFailed, ConfigError, RuntimeError) as exc:
            typer.echo(f"demo failed: {exc}", err=True)
            raise typer.Exit(1) from exc
    typer.echo(f"demo finished in {elapsed(start)}", err=True)
    typer.echo(json.dumps(result, indent=2) if as_json else table(result))


@app.command()
def serve(
    port: Annotated[int | None, typer.Option(help="Port (BLAST_PORT, default 8080).")] = None,
    host: Annotated[
        str | None, typer.Option(help="Address (BLAST_HOST, default 127.0.0.1).")
    ] = None,
    data_dir: DataDir = None,
    workers: Annotated[int | None, typer.Option(help="Worker processes (BLAST_WORKERS).")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v")] = True,
) -> None:
    """Run the gateway, N worker processes (restarted when one dies) and, unless FALKORDB_URL
    is set, the embedded FalkorDB (restarted on its port when it dies), until SIGTERM or Ctrl-C.
    """
    setup_logging(verbose)
    settings = load_settings(port=port, host=host, data_dir=data_dir, workers=workers)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        with Runtime(settings) as runtime:
            bound = runtime.serve_http()
            assert runtime.url is not None
            pool = WorkerPool(
                settings.workers, worker_env(settings, runtime.url), settings.shutdown_grace_s
            )
            pool.start()
            typer.echo(
                f"blast-radius: listening on http://{settings.host}:{bound} "
                f"(webhook /api/v1/alerts, tenants: {', '.join(settings.tenants)}, "
                f"{settings.workers} workers, outbox: {runtime.outbox.path})",
                err=True,
            )
            try:
                while not stop.wait(0.2):
                    with contextlib.suppress(GraphUnavailable):  # tried again next round
                        runtime.revive_database()
                    pool.check()
            finally:
                pool.stop()
    except (GraphUnavailable, SchemaFailed, ConfigError) as exc:
        typer.echo(f"blast-radius: {exc}", err=True)
        raise typer.Exit(1) from exc


@app.command()
def worker(
    role: Annotated[str, typer.Option(help="investigator | responder | any")] = "any",
    burst: Annotated[bool, typer.Option(help="Exit when no task is claimable.")] = False,
    data_dir: DataDir = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v")] = True,
) -> None:
    """Run one worker (claim loop) against the graph until SIGTERM, or until idle with --burst."""
    setup_logging(verbose)
    settings = load_settings(data_dir=data_dir)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        with Runtime(settings) as runtime:
            try:
                agent = runtime.make_worker(role)
            except ValueError as exc:
                typer.echo(f"blast-radius worker: {exc}", err=True)
                raise typer.Exit(2) from exc
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, lambda *_: agent.terminate(stop))
            agent.run(stop, burst=burst)
    except (GraphUnavailable, SchemaFailed) as exc:
        typer.echo(f"blast-radius worker: {exc}", err=True)
        raise typer.Exit(1) from exc


@topology_app.command("import")
def topology_import(
    file: Annotated[Path, typer.Argument(help="World YAML (see docs/topology.md).")],
    tenant: Annotated[
        str | None, typer.Option(help="Tenant (default BLAST_DEFAULT_TENANT).")
    ] = None,
    data_dir: DataDir = None,
) -> None:
    """Load components, dependency edges, teams, people and on-call shifts into a tenant graph."""
    setup_logging(False)
    settings = load_settings(data_dir=data_dir)
    try:
        world = load_world(file)
        name = graph_name(tenant or settings.default_tenant)
        with Runtime(settings) as runtime:
            assert runtime.store is not None
            counts = import_world(runtime.store.graph(name), world)
    except (TopologyError, ValueError) as exc:
        typer.echo(f"topology import: {exc}", err=True)
        raise typer.Exit(2) from exc
    except (GraphUnavailable, SchemaFailed) as exc:
        typer.echo(f"topology import: {exc}", err=True)
        raise typer.Exit(1) from exc
    typer.echo(f"imported into {name}: " + ", ".join(f"{v} {k}" for k, v in counts.items()))


if __name__ == "__main__":  # `python -m gateway.cli …`: how `serve` starts its workers
    app()
