"""Prompts as files, loaded by name (as HolmesGPT does): `load("investigate")` reads
`investigate.md` beside this module (package data), with `$name` placeholders filled by
`string.Template` (a missing value raises `KeyError`, so a prompt never goes out half-filled).
"""

from __future__ import annotations

from importlib import resources
from string import Template


def load(name: str, **values: object) -> str:
    """The prompt `name` (file `name.md` in this package) with `values` substituted.

    Raises `FileNotFoundError` for an unknown name, `KeyError` for a placeholder left unfilled.
    """
    text = resources.files(__name__).joinpath(f"{name}.md").read_text(encoding="utf-8")
    return Template(text).substitute({k: str(v) for k, v in values.items()}).strip()
