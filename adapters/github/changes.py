"""Merged GitHub pull requests since a time, with the files each touched (PyGithub, read-only:
a fine-grained token with Pull requests: read and Contents: read is enough).

Source: GitHub REST `GET /repos/{repo}/pulls?state=closed&sort=updated&direction=desc` and
`GET /repos/{repo}/pulls/{n}/files`. Listing stops at the first pull request last updated
before `since` (the list is ordered by update time, and merging updates a pull request).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from github import Auth, Github, GithubException
from pydantic import SecretStr

from adapters.notify import AdapterError


def merged_pull_requests(
    token: SecretStr, repo: str, since_ms: int, api_url: str = "https://api.github.com",
    limit: int = 1000,
) -> list[dict[str, Any]]:  # fmt: skip
    """Pull requests of `repo` (owner/name) merged at or after `since_ms` (ms since the epoch),
    oldest merge first: `{number, title, merged_at (ms), author (login), files, url}`.

    At most `limit` pull requests are read. Raises `AdapterError` (retryable for 5xx and rate
    limits) with no token in its message.
    """
    since = datetime.fromtimestamp(since_ms / 1000, UTC)
    client = Github(auth=Auth.Token(token.get_secret_value()), base_url=api_url, retry=None)
    found: list[dict[str, Any]] = []

    def aware(moment: datetime) -> datetime:
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)

    try:
        pulls = client.get_repo(repo).get_pulls(state="closed", sort="updated", direction="desc")
        for count, pull in enumerate(pulls):
            if count >= limit or (pull.updated_at and aware(pull.updated_at) < since):
                break
            merged = pull.merged_at
            if merged is None or aware(merged) < since:
                continue
            found.append(
                {
                    "number": pull.number,
                    "title": pull.title,
                    "merged_at": int(aware(merged).timestamp() * 1000),
                    "author": pull.user.login if pull.user else None,
                    "files": [f.filename for f in pull.get_files()],
                    "url": pull.html_url,
                }
            )
    except GithubException as exc:
        retryable = exc.status >= 500 or exc.status in (403, 429)
        raise AdapterError(
            f"GitHub answered {exc.status} listing pull requests", retryable=retryable
        ) from exc
    finally:
        client.close()
    return sorted(found, key=lambda p: p["merged_at"])
