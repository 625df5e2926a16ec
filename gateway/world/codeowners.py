"""CODEOWNERS + component paths -> the owning team.

Source: GitHub's CODEOWNERS syntax (docs.github.com, "About code owners"): one
`pattern owner...` rule per line, `#` comments, gitignore-style patterns (matched here with
`pathspec`'s gitignore implementation), and the last matching rule wins. An owner
`@org/team-slug` names the team `team-slug` (or `org/team-slug`) of the world; a user or an
email names no team and is reported, never guessed.

A component's paths come from `paths:` in the world file (CODEOWNERS-style, e.g.
`/src/checkout/`) or a compose service's build context. Its owner is the rule that matches the
path's folder (or a file directly in it) last.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pathspec

from gateway.world.model import TopologyError, WorldSpec


@dataclass(frozen=True)
class Rule:
    """One CODEOWNERS line: its pattern, owners (as written) and 1-based line number."""

    pattern: str
    owners: tuple[str, ...]
    line: int

    def matches(self, path: str) -> bool:
        """Whether the pattern matches a repository path (no leading slash)."""
        return pathspec.PathSpec.from_lines("gitignore", [self.pattern]).match_file(path)


def parse_codeowners(text: str) -> list[Rule]:
    """Rules in file order (comments and blank lines skipped; `\\#` and `\\ ` unescaped)."""
    rules = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.replace("\\ ", "\x00").split()
        pattern = parts[0].replace("\x00", " ").replace("\\#", "#")
        owners = tuple(p for p in parts[1:] if not p.startswith("#"))
        rules.append(Rule(pattern, owners, number))
    return rules


def read_codeowners(path: Path) -> list[Rule]:
    """Parse a CODEOWNERS file; `TopologyError` if it cannot be read."""
    try:
        return parse_codeowners(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise TopologyError(f"{path}: {exc}") from exc


def owner_rule(path: str, rules: list[Rule]) -> Rule | None:
    """The last rule matching a component path (`/src/checkout/`), else None."""
    folder = path.strip("/") + "/"
    probes = (folder, folder + "CODEOWNERS")  # the folder, and a file directly in it
    found = None
    for rule in rules:
        if any(rule.matches(p) for p in probes):
            found = rule
    return found


def ownership(
    world: WorldSpec, rules: list[Rule], teams: set[str], source: str
) -> tuple[dict[str, list[str]], list[str]]:
    """Team -> components it owns by CODEOWNERS, and the owners that name no team.

    `teams`: team names known (in the model or the graph). A component with several paths
    gets the owner of each (usually one).
    """
    owned: dict[str, list[str]] = {}
    unmapped: list[str] = []
    for comp in world.components:
        for path in comp.paths:
            rule = owner_rule(path, rules)
            if rule is None:
                continue
            for owner in rule.owners:
                slug = owner.removeprefix("@")
                team = slug if slug in teams else slug.split("/", 1)[-1]
                if owner.startswith("@") and "/" in slug and team in teams:
                    owned.setdefault(team, [])
                    if comp.id not in owned[team]:
                        owned[team].append(comp.id)
                else:
                    unmapped.append(
                        f"{source}:{rule.line}: {owner} (owner of {path}, component {comp.id}) "
                        "is no team of the world"
                    )
    return owned, unmapped
