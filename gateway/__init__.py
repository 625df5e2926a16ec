"""Blast Radius gateway: the FastAPI app, its settings and the `blast-radius` command line."""

from importlib.metadata import PackageNotFoundError, version

try:
    #: The installed distribution's version (pyproject.toml), shown by `--version` and the API.
    __version__ = version("blast-radius")
except PackageNotFoundError:  # run from a checkout that was never installed
    __version__ = "0+unknown"
