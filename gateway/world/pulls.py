"""Merged pull requests -> `Change {kind: pr}` nodes that MODIFY the components whose paths
they touched.

A file maps to a component when one of the component's `paths` (CODEOWNERS-style patterns,
from the world file's `paths:` or a compose build context) matches it. Authors are stored as
stable pseudonyms (`author-<first 12 hex of sha256(login)>`) unless `BLAST_PR_AUTHORS=login`:
the same person gets the same pseudonym in every import, without their login in the graph.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pathspec

from adapters.falkordb import TenantGraph


def pseudonym(login: str | None) -> str | None:
    """A stable pseudonym for a GitHub login (None stays None)."""
    if not login:
        return None
    return "author-" + hashlib.sha256(login.encode()).hexdigest()[:12]


def components_touched(files: list[str], paths: dict[str, list[str]]) -> list[str]:
    """Components (sorted) one of whose path patterns matches one of the files."""
    specs = {name: pathspec.PathSpec.from_lines("gitignore", pats) for name, pats in paths.items()}
    return sorted(name for name, spec in specs.items() if any(spec.match_file(f) for f in files))


def record_pull_requests(
    graph: TenantGraph, pulls: list[dict[str, Any]], repo: str, authors: str = "pseudonym"
) -> tuple[dict[str, int], list[str]]:
    """Write a Change per merged pull request and component it touched (idempotent: the id is
    `pr:<repo>#<number>`). Returns counts (pull_requests, changes) and one line per pull
    request that touched no known component path."""
    paths = {row["name"]: row["paths"] for row in graph.rows("component_paths")}
    changes, unmapped = 0, []
    for pull in pulls:
        touched = components_touched(pull["files"], paths)
        if not touched:
            unmapped.append(
                f"{repo}#{pull['number']}: {len(pull['files'])} files match no component path"
            )
        author = pull["author"] if authors == "login" else pseudonym(pull["author"])
        for component in touched:
            graph.rows(
                "record_change",
                {"component": component, "id": f"pr:{repo}#{pull['number']}", "kind": "pr",
                 "ref": f"{repo}#{pull['number']}", "at": pull["merged_at"], "author": author},
            )  # fmt: skip
            changes += 1
    return {"pull_requests": len(pulls), "changes": changes}, unmapped
