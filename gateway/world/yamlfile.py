"""Reading the YAML files people hand in (world files, compose, Backstage, Kubernetes): PyYAML's
safe loader, with a key given twice in one mapping refused (YAML 1.2 says keys are unique;
PyYAML keeps the last one without a word, so `owns: [billing]` ... `owns: [api]` lost billing),
and every problem said as `file:line:column: what`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from gateway.world.model import TopologyError

MERGE_TAG = "tag:yaml.org,2002:merge"


class UniqueKeyLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` that refuses a mapping key written twice. A key a merge (`<<: *base`)
    brings in may still be overridden: compose files do that on purpose."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """As SafeLoader's, after checking the mapping's own scalar keys are unique."""
        seen: dict[str, int] = {}
        for key, _ in node.value:
            if not isinstance(key, yaml.ScalarNode) or key.tag == MERGE_TAG:
                continue
            if key.value in seen:
                raise yaml.constructor.ConstructorError(
                    None, None,
                    f"key {key.value!r} is given twice in one mapping (first on line "
                    f"{seen[key.value]}); YAML keeps only one of them",
                    key.start_mark,
                )  # fmt: skip
            seen[key.value] = key.start_mark.line + 1
        return super().construct_mapping(node, deep)


def problem(path: Path, exc: Exception) -> str:
    """One line for a file that cannot be read as YAML: `file:line:column: what` for a
    syntax error (PyYAML's marks are 0-based), `file:line: not UTF-8 …` for a bad byte."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        context = f" ({exc.context})" if exc.context else ""
        return f"{path}:{mark.line + 1}:{mark.column + 1}: {exc.problem}{context}"
    if isinstance(exc, UnicodeDecodeError):
        line = exc.object[: exc.start].count(b"\n") + 1
        return f"{path}:{line}: not UTF-8 (byte 0x{exc.object[exc.start]:02x}): save it as UTF-8"
    if isinstance(exc, OSError):
        return f"{path}: {exc.strerror or exc}"
    return f"{path}: {exc}"


def read_text(path: Path) -> str:
    """The file's text (UTF-8). Raises `TopologyError` (`problem`) when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TopologyError(problem(path, exc)) from exc


def load_documents(path: Path) -> list[Any]:
    """Every YAML document of the file, `None` for an empty one. Raises `TopologyError` with
    one `problem` line for a file that cannot be read, parsed, or has a key twice."""
    text = read_text(path)
    try:
        return list(yaml.load_all(text, Loader=UniqueKeyLoader))
    except yaml.YAMLError as exc:
        raise TopologyError(problem(path, exc)) from exc


def load_document(path: Path, text: str | None = None) -> Any:
    """The file's one YAML document (`None` if empty); as `load_documents`. `text`: the
    file's text when the caller has read it already."""
    text = read_text(path) if text is None else text
    try:
        return yaml.load(text, Loader=UniqueKeyLoader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        raise TopologyError(problem(path, exc)) from exc
