"""Every Cypher query of Blast Radius, one `<name>.cypher` file each, loaded by name.

Queries take parameters only (`$name`); nothing is ever formatted into their text.
`tests/test_cypher.py` compiles every file against a real FalkorDB and checks that every
name used in the code has a file and every file is used.
"""

from __future__ import annotations

from functools import cache
from importlib import resources


class UnknownQuery(KeyError):
    """Raised when code asks for a query name that has no `cypher/<name>.cypher` file."""


@cache
def load(name: str) -> str:
    """Return the text of `cypher/<name>.cypher`.

    Raises:
        UnknownQuery: no such file.
    """
    try:
        return resources.files(__name__).joinpath(f"{name}.cypher").read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise UnknownQuery(name) from exc


def names() -> list[str]:
    """All query names shipped in this folder, sorted."""
    return sorted(
        entry.name.removesuffix(".cypher")
        for entry in resources.files(__name__).iterdir()
        if entry.name.endswith(".cypher")
    )
