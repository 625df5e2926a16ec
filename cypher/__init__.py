"""Every Cypher query of Blast Radius, one `<name>.cypher` file each, loaded by name.

Queries take parameters only (`$name`); nothing is ever formatted into their text. A file
whose name starts with `_` is a fragment, not a query: a query line `// @include _<name>` is
replaced by that file's text, so a clause several queries share is written once.
`tests/test_cypher.py` compiles every file against a real FalkorDB and checks that every
name used in the code has a file and every file is used.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

#: A whole line naming a fragment file (`_<name>.cypher`) to put in its place.
INCLUDE = re.compile(r"^// @include (_[a-z_]+)$", re.MULTILINE)


class UnknownQuery(KeyError):
    """Raised when code asks for a query name that has no `cypher/<name>.cypher` file."""


@cache
def load(name: str) -> str:
    """Return the text of `cypher/<name>.cypher`, its `// @include _<fragment>` lines replaced
    by the fragments' text.

    Raises:
        UnknownQuery: no such file (query or fragment).
    """
    try:
        text = resources.files(__name__).joinpath(f"{name}.cypher").read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise UnknownQuery(name) from exc
    return INCLUDE.sub(lambda m: load(m.group(1)).rstrip("\n"), text)


def names() -> list[str]:
    """All query names shipped in this folder, sorted (fragments, `_<name>`, left out)."""
    return sorted(
        entry.name.removesuffix(".cypher")
        for entry in resources.files(__name__).iterdir()
        if entry.name.endswith(".cypher") and not entry.name.startswith("_")
    )
