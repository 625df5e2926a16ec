"""A small stand-in for the GitHub REST API (the subset `adapters/github/notifier.py` uses), on
127.0.0.1.

Speaks, for one repository `o/r`: `GET /repos/o/r`; `GET /repos/o/r/pulls` (`state`, paging)
and `GET /repos/o/r/pulls/{n}/files`; `POST`/`GET /repos/o/r/issues` (with the
`labels`, `state`, `since`, `per_page`, `page` filters and a `Link` header when paging);
`GET`/`PATCH /repos/o/r/issues/{n}`; `POST`/`GET /repos/o/r/issues/{n}/comments`;
`GET /repos/o/r/labels/{name}` and `POST /repos/o/r/labels`; the Actions subset
(`GET /repos/o/r/actions/workflows/{id}`, `POST …/dispatches` answering 204, `GET …/runs`
newest first, each run's `display_title` being its `blast_intent` input as a workflow with
`run-name: ${{ inputs.blast_intent }}` names it); and what a pull request needs
(`GET /repos/o/r/branches/{b}`, `POST /repos/o/r/git/refs` (422 when the ref exists),
`GET`/`PUT /repos/o/r/contents/{path}` with `ref`/`branch`, `POST /repos/o/r/pulls`, and
`GET /repos/o/r/pulls?head=o:<branch>`). Every answer carries the
`X-RateLimit-*` headers. Shapes follow the reference fixtures' GitHub's REST API reference and
GitHub's
REST reference; limits enforced as GitHub does: body <= 65,536 characters and title <= 256
(422 otherwise), label names <= 50. Unlike GitHub, an issue created with an unknown label gets
it with a grey colour and `auto: True`, so a test can tell an explicit `create_label` from it.

Failures are scripted with `fail(...)`: answer a request with a status (e.g. 502, or 403 with
`retry-after`), either instead of handling it, or after handling it (`after=True`: the issue
is stored, then a 502 is answered: GitHub's "created but answered 5xx").
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPO = "o/r"
TOKEN = "ghp_fake0123456789abcdefSECRET"


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Fault:
    """A scripted answer for requests matching `method` and the `path` regex (full match)."""

    method: str
    path: str
    status: int
    body: dict[str, Any]
    headers: dict[str, str]
    times: int
    after: bool


@dataclass
class FakeGitHub:
    """State of the fake: issues, comments, labels, and a log of every request."""

    token: str = TOKEN
    permissions: dict[str, bool] = field(
        default_factory=lambda: {"admin": False, "maintain": False, "push": True,
                                 "triage": True, "pull": True}
    )  # fmt: skip
    issues: list[dict[str, Any]] = field(default_factory=list)
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    labels: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: (method, path with query) of every request, in order.
    log: list[tuple[str, str]] = field(default_factory=list)
    #: The Authorization header of every request (to prove which token was sent).
    auth_seen: list[str] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    #: Pull requests: {"number", "title", "user", "merged_at" (Unix s or None), "updated"
    #: (Unix s), "files": [paths]}; listed newest update first, like GitHub.
    pulls: list[dict[str, Any]] = field(default_factory=list)
    per_page_max: int = 100
    #: Workflows by file name: {"id", "name", "path", "state"}.
    workflows: dict[str, dict[str, Any]] = field(
        default_factory=lambda: {"rollback.yml": {"id": 42, "name": "Rollback", "state": "active",
                                                  "path": ".github/workflows/rollback.yml"}}
    )  # fmt: skip
    #: Workflow runs, in dispatch order: {"id", "workflow", "ref", "inputs", "created"}.
    runs: list[dict[str, Any]] = field(default_factory=list)
    #: Branch -> head commit sha; (branch, path) -> file text.
    branches: dict[str, str] = field(default_factory=lambda: {"main": "a" * 40})
    files: dict[tuple[str, str], str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    port: int = 0
    _server: ThreadingHTTPServer | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> FakeGitHub:
        """Listen on 127.0.0.1 on a free port, serving in a daemon thread."""
        fake = self

        class Handler(_Handler):
            state = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def url(self) -> str:
        """The base URL to give PyGithub (`GITHUB_API_URL`)."""
        return f"http://127.0.0.1:{self.port}"

    # ------------------------------------------------------------------ scripting
    def fail(
        self,
        method: str,
        path: str,
        status: int,
        body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        times: int = 1,
        after: bool = False,
    ) -> None:
        """Answer the next `times` requests matching `method` and `path` (a regex) with `status`.

        `after=True`: handle the request first (store the issue), then answer with `status`.
        """
        self.faults.append(
            Fault(method, path, status, body or {"message": "Server Error"}, headers or {},
                  times, after)
        )  # fmt: skip

    def calls(self, method: str, path_regex: str) -> int:
        """How many requests matched `method` and the path regex (query string excluded)."""
        rx = re.compile(path_regex)
        return sum(1 for m, p in self.log if m == method and rx.fullmatch(p.split("?")[0]))

    # ------------------------------------------------------------------ JSON shapes
    def issue_json(self, issue: dict[str, Any]) -> dict[str, Any]:
        """An issue as GitHub's REST API returns it (the fields PyGithub reads)."""
        n, api = issue["number"], f"{self.url}/repos/{REPO}"
        return {
            "id": 1000 + n, "node_id": f"I_{n}", "number": n, "title": issue["title"],
            "body": issue["body"], "state": issue["state"],
            "state_reason": issue.get("state_reason"),
            "labels": [self.labels[name] for name in issue["labels"]],
            "url": f"{api}/issues/{n}", "comments_url": f"{api}/issues/{n}/comments",
            "html_url": f"https://github.example/{REPO}/issues/{n}",
            "repository_url": api, "user": {"login": "blast-radius-bot", "id": 7},
            "comments": len(self.comments.get(n, [])), "created_at": _iso(issue["created"]),
            "updated_at": _iso(issue["updated"]),
            "closed_at": _iso(issue["closed"]) if issue.get("closed") else None,
        }  # fmt: skip

    def label_json(self, name: str, color: str, description: str, auto: bool) -> dict[str, Any]:
        """A label as GitHub returns it, plus `auto` (created implicitly by an issue)."""
        quoted = urllib.parse.quote(name, safe="")
        return {"id": len(self.labels) + 1, "name": name, "color": color,
                "description": description, "default": False, "auto": auto,
                "url": f"{self.url}/repos/{REPO}/labels/{quoted}"}  # fmt: skip

    def issue(self, number: int) -> dict[str, Any]:
        """The stored issue `number` (KeyError when missing)."""
        return next(i for i in self.issues if i["number"] == number)


class _Handler(BaseHTTPRequestHandler):
    state: FakeGitHub

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._route("GET")

    def do_POST(self) -> None:
        self._route("POST")

    def do_PATCH(self) -> None:
        self._route("PATCH")

    def do_PUT(self) -> None:
        self._route("PUT")

    # ------------------------------------------------------------------ plumbing
    def _send(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        body = b"" if status == 204 else json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        reset = str(int(time.time()) + 3600)
        rate = {"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "4990",
                "X-RateLimit-Used": "10", "X-RateLimit-Reset": reset,
                "X-RateLimit-Resource": "core"}  # fmt: skip
        for name, value in (rate | (headers or {})).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _route(self, method: str) -> None:
        st = self.state
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        url = urllib.parse.urlparse(self.path)
        query = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
        with st.lock:
            st.log.append((method, self.path))
            st.auth_seen.append(self.headers.get("Authorization") or "")
            fault = next(
                (f for f in st.faults
                 if f.times > 0 and f.method == method and re.fullmatch(f.path, url.path)),
                None,
            )  # fmt: skip
            if fault is not None:
                fault.times -= 1
        auth = self.headers.get("Authorization") or ""
        if auth.split(" ", 1)[-1] != st.token:
            return self._send(401, {"message": "Bad credentials"})
        if fault is not None and not fault.after:
            return self._send(fault.status, fault.body, fault.headers)
        body = json.loads(raw) if raw else {}
        with st.lock:
            status, obj, headers = self._handle(method, url.path, query, body)
        if fault is not None:
            return self._send(fault.status, fault.body, fault.headers)
        self._send(status, obj, headers)

    # ------------------------------------------------------------------ the API
    def _handle(
        self, method: str, path: str, q: dict[str, str], b: dict[str, Any]
    ) -> tuple[int, Any, dict[str, str]]:
        st, base = self.state, f"/repos/{REPO}"
        not_found = (404, {"message": "Not Found"}, {})
        if method == "GET" and path == base:
            return 200, {"id": 1, "name": "r", "full_name": REPO, "private": True,
                         "url": f"{st.url}{base}", "html_url": f"https://github.example/{REPO}",
                         "default_branch": "main",
                         "owner": {"login": "o", "id": 1}, "has_issues": True,
                         "permissions": st.permissions}, {}  # fmt: skip
        if path == f"{base}/issues" and method == "POST":
            return self._create_issue(b)
        if path == f"{base}/issues" and method == "GET":
            return self._list_issues(q)
        if m := re.fullmatch(rf"{base}/issues/(\d+)", path):
            try:
                issue = st.issue(int(m.group(1)))
            except StopIteration:
                return not_found
            if method == "PATCH":
                for key in ("title", "body", "state", "state_reason"):
                    if key in b:
                        issue[key] = b[key]
                issue["updated"] = time.time()
                issue["closed"] = time.time() if issue["state"] == "closed" else None
            return 200, st.issue_json(issue), {}
        if m := re.fullmatch(rf"{base}/issues/(\d+)/comments", path):
            number = int(m.group(1))
            if not any(i["number"] == number for i in st.issues):
                return not_found
            comments = st.comments.setdefault(number, [])
            if method == "POST":
                cid = 5000 + sum(len(c) for c in st.comments.values())
                html = f"https://github.example/{REPO}/issues/{number}#issuecomment-{cid}"
                comment = {
                    "id": cid, "body": b["body"], "user": {"login": "blast-radius-bot"},
                    "url": f"{st.url}{base}/issues/comments/{cid}", "html_url": html,
                    "issue_url": f"{st.url}{base}/issues/{number}",
                    "created_at": _iso(time.time()), "updated_at": _iso(time.time()),
                }  # fmt: skip
                comments.append(comment)
                st.issue(number)["updated"] = time.time()
                return 201, comment, {}
            return self._page(comments, q, f"{base}/issues/{number}/comments")
        if method == "GET" and (m := re.fullmatch(rf"{base}/labels/(.+)", path)):
            name = urllib.parse.unquote(m.group(1))
            return (200, st.labels[name], {}) if name in st.labels else not_found
        if method == "POST" and path == f"{base}/labels":
            name = b["name"]
            if name in st.labels:
                return 422, {"message": "Validation Failed",
                             "errors": [{"resource": "Label", "code": "already_exists",
                                         "field": "name"}]}, {}  # fmt: skip
            st.labels[name] = st.label_json(name, b["color"], b.get("description", ""), False)
            return 201, st.labels[name], {}
        if path.startswith(f"{base}/actions/workflows/"):
            return self._actions(method, path.removeprefix(f"{base}/actions/workflows/"), q, b)
        if path.startswith((f"{base}/branches/", f"{base}/git/refs", f"{base}/contents/")):
            return self._git(method, path.removeprefix(base), q, b)
        if method == "POST" and path == f"{base}/pulls":
            return self._create_pull(b)
        if method == "GET" and path == f"{base}/pulls" and "head" in q:
            branch = q["head"].partition(":")[2]
            found = [self._pull_json(p) for p in st.pulls if p.get("head") == branch]
            return self._page(found, q, f"{base}/pulls")
        if method == "GET" and path == f"{base}/pulls":
            state = q.get("state", "open")
            found = [
                self._pull_json(p) for p in sorted(st.pulls, key=lambda p: -p["updated"])
                if state == "all" or (state == "closed") == (p.get("merged_at") is not None)
            ]  # fmt: skip
            return self._page(found, q, f"{base}/pulls")
        if method == "GET" and (m := re.fullmatch(rf"{base}/pulls/(\d+)/files", path)):
            pull = next((p for p in st.pulls if p["number"] == int(m.group(1))), None)
            if pull is None:
                return not_found
            files = [{"sha": "0" * 40, "filename": f, "status": "modified", "additions": 1,
                      "deletions": 0, "changes": 1} for f in pull["files"]]  # fmt: skip
            return self._page(files, q, f"{base}/pulls/{pull['number']}/files")
        return not_found

    def _actions(
        self, method: str, rest: str, q: dict[str, str], b: dict[str, Any]
    ) -> tuple[int, Any, dict[str, str]]:
        st, base = self.state, f"/repos/{REPO}/actions"
        ident, _, tail = rest.partition("/")
        wf = next((w | {"file": f} for f, w in st.workflows.items()
                   if ident in (f, str(w["id"]))), None)  # fmt: skip
        if wf is None:
            return 404, {"message": "Not Found"}, {}
        if method == "GET" and not tail:
            return 200, {"id": wf["id"], "node_id": f"W_{wf['id']}", "name": wf["name"],
                         "path": wf["path"], "state": wf["state"],
                         "url": f"{st.url}{base}/workflows/{wf['id']}",
                         "html_url": f"https://github.example/{REPO}/actions/{wf['file']}",
                         "created_at": _iso(0), "updated_at": _iso(0)}, {}  # fmt: skip
        if method == "POST" and tail == "dispatches":
            if b.get("ref") not in st.branches:
                return 422, {"message": f"No ref found for: {b.get('ref')}"}, {}
            inputs = b.get("inputs") or {}
            if len(inputs) > 10 or not all(isinstance(v, str) for v in inputs.values()):
                return 422, {"message": "inputs are too many or not strings"}, {}
            st.runs.append({"id": 7000 + len(st.runs), "workflow": wf["id"], "ref": b["ref"],
                            "inputs": inputs, "created": time.time()})  # fmt: skip
            return 204, None, {}
        if method == "GET" and tail == "runs":
            runs = [r for r in reversed(st.runs) if r["workflow"] == wf["id"]
                    and q.get("event", "workflow_dispatch") == "workflow_dispatch"]  # fmt: skip
            shaped = [{"id": r["id"], "name": wf["name"], "event": "workflow_dispatch",
                       "display_title": r["inputs"].get("blast_intent", wf["name"]),
                       "status": "queued", "conclusion": None, "head_branch": r["ref"],
                       "workflow_id": wf["id"], "run_number": r["id"] - 6999,
                       "url": f"{st.url}{base}/runs/{r['id']}",
                       "html_url": f"https://github.example/{REPO}/actions/runs/{r['id']}",
                       "created_at": _iso(r["created"]), "updated_at": _iso(r["created"])}
                      for r in runs]  # fmt: skip
            per_page = min(int(q.get("per_page", 30)), st.per_page_max)
            page = int(q.get("page", 1))
            chunk = shaped[(page - 1) * per_page : page * per_page]
            return 200, {"total_count": len(shaped), "workflow_runs": chunk}, {}
        return 404, {"message": "Not Found"}, {}

    def _git(
        self, method: str, rest: str, q: dict[str, str], b: dict[str, Any]
    ) -> tuple[int, Any, dict[str, str]]:
        st = self.state
        if method == "GET" and rest.startswith("/branches/"):
            name = urllib.parse.unquote(rest.removeprefix("/branches/"))
            if name not in st.branches:
                return 404, {"message": "Branch not found"}, {}
            return 200, {"name": name, "commit": {"sha": st.branches[name]}}, {}
        if method == "POST" and rest == "/git/refs":
            name = b["ref"].removeprefix("refs/heads/")
            if name in st.branches:
                return 422, {"message": "Reference already exists"}, {}
            st.branches[name] = b["sha"]
            for (branch, path), text in list(st.files.items()):
                if branch == "main":  # a new branch starts with main's files
                    st.files[(name, path)] = text
            return 201, {"ref": b["ref"], "object": {"sha": b["sha"], "type": "commit"},
                         "url": f"{st.url}/repos/{REPO}/git/refs/heads/{name}"}, {}  # fmt: skip
        path = urllib.parse.unquote(rest.removeprefix("/contents/"))
        if method == "GET":
            branch = q.get("ref", "main")
            text = st.files.get((branch, path))
            if text is None:
                return 404, {"message": "Not Found"}, {}
            return 200, self._content_json(branch, path, text), {}
        if method == "PUT":
            branch = b.get("branch", "main")
            old = st.files.get((branch, path))
            if old is None or b.get("sha") != self._sha(old):
                return 409, {"message": f"{path} does not match {b.get('sha')}"}, {}
            text = base64.b64decode(b["content"]).decode()
            st.files[(branch, path)] = text
            st.branches[branch] = hashlib.sha1(text.encode()).hexdigest()
            return (
                200,
                {
                    "content": self._content_json(branch, path, text),
                    "commit": {"sha": st.branches[branch], "message": b["message"]},
                },
                {},
            )
        return 404, {"message": "Not Found"}, {}

    @staticmethod
    def _sha(text: str) -> str:
        return hashlib.sha1(text.encode()).hexdigest()

    def _content_json(self, branch: str, path: str, text: str) -> dict[str, Any]:
        url = f"{self.state.url}/repos/{REPO}/contents/{path}?ref={branch}"
        return {"type": "file", "encoding": "base64", "path": path, "name": path.split("/")[-1],
                "sha": self._sha(text), "size": len(text), "url": url,
                "content": base64.b64encode(text.encode()).decode()}  # fmt: skip

    def _create_pull(self, b: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        st = self.state
        if b.get("head") not in st.branches or b.get("base") not in st.branches:
            return (
                422,
                {"message": "Validation Failed", "errors": [{"field": "head", "code": "invalid"}]},
                {},
            )
        if any(p.get("head") == b["head"] for p in st.pulls):
            return 422, {"message": f"A pull request already exists for o:{b['head']}."}, {}
        number = 100 + len(st.pulls)
        pull = {"number": number, "title": b["title"], "user": "blast-radius-bot",
                "merged_at": None, "updated": time.time(), "files": [], "head": b["head"],
                "base": b["base"], "body": b.get("body") or ""}  # fmt: skip
        st.pulls.append(pull)
        return 201, self._pull_json(pull), {}

    def _pull_json(self, pull: dict[str, Any]) -> dict[str, Any]:
        st, number = self.state, pull["number"]
        merged = pull.get("merged_at")
        return {
            "id": 9000 + number, "number": number, "title": pull["title"],
            "state": "closed" if merged else "open", "user": {"login": pull["user"], "id": 7},
            "merged_at": _iso(merged) if merged else None, "updated_at": _iso(pull["updated"]),
            "created_at": _iso(pull["updated"] - 3600),
            "url": f"{st.url}/repos/{REPO}/pulls/{number}",
            "html_url": f"https://github.example/{REPO}/pull/{number}",
        }  # fmt: skip

    def _create_issue(self, b: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        st = self.state
        problems = []
        if len(b.get("body") or "") > 65_536:
            problems.append("body is too long (maximum is 65536 characters)")
        if not b.get("title") or len(b["title"]) > 256:
            problems.append("title is missing or too long (maximum is 256 characters)")
        if any(len(name) > 50 for name in b.get("labels", [])):
            problems.append("name is too long (maximum is 50 characters)")
        if problems:
            return 422, {"message": "Validation Failed",
                         "errors": [{"resource": "Issue", "code": "custom", "message": p}
                                    for p in problems]}, {}  # fmt: skip
        for name in b.get("labels", []):
            if name not in st.labels:
                st.labels[name] = st.label_json(name, "ededed", "", True)
        now = time.time()
        issue = {"number": len(st.issues) + 1, "title": b["title"], "body": b.get("body") or "",
                 "labels": list(dict.fromkeys(b.get("labels", []))), "state": "open",
                 "created": now, "updated": now}  # fmt: skip
        st.issues.append(issue)
        return 201, st.issue_json(issue), {}

    def _list_issues(self, q: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        st = self.state
        want = set(filter(None, q.get("labels", "").split(",")))
        state = q.get("state", "open")
        since = q.get("since")
        since_ts = (
            datetime.strptime(since, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
            if since else 0.0
        )  # fmt: skip
        found = [
            st.issue_json(i) for i in reversed(st.issues)  # newest first, like GitHub
            if want <= set(i["labels"]) and (state == "all" or i["state"] == state)
            and int(i["updated"]) >= int(since_ts)
        ]  # fmt: skip
        return self._page(found, q, f"/repos/{REPO}/issues")

    def _page(
        self, items: list[Any], q: dict[str, str], path: str
    ) -> tuple[int, Any, dict[str, str]]:
        st = self.state
        per_page = min(int(q.get("per_page", 30)), st.per_page_max)
        page = int(q.get("page", 1))
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]
        headers = {}
        if page < last:
            rest = {k: v for k, v in q.items() if k != "page"}

            def link(n: int, rel: str) -> str:
                query = urllib.parse.urlencode(rest | {"page": n})
                return f'<{st.url}{path}?{query}>; rel="{rel}"'

            headers["Link"] = f"{link(page + 1, 'next')}, {link(last, 'last')}"
        return 200, chunk, headers
