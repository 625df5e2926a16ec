"""The `blast-radius` command line (typer): `gateway.cli.commands` holds the commands; doctor,
demo and the terminal views of incidents live beside it."""

from gateway.cli.commands import main

__all__ = ["main"]
