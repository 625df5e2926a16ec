"""Property-based fuzzing of every HTTP endpoint: `python -m bench.fuzz [--n 200] [--json]`.

Starts the gateway as `serve` does (real uvicorn on a free loopback port, an embedded FalkorDB
in a temporary folder, two tenants with tokens, Slack's signing secret set, the demo world
loaded) and sends `--n` requests to each endpoint, drawn by hypothesis: arbitrary JSON (deep
nesting, huge integers, lone surrogates, control characters, NaN), bodies of the right shape
with hostile values (ids FalkorDB crashes on, wrong types, overlong times), raw bytes, and
headers that are right, missing or wrong (Slack requests mostly signed, so they get past the
signature). Answers are counted by status per endpoint; a connection reset or timeout counts as
`reset`, a request httpx refuses to send (an illegal header value) as `unsendable`. Exit code
1 on any 5xx, any reset, or a database server that restarted (its pid changed): "no 5xx, no
crash any tenant can cause".
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import logging
import re
import sys
import tempfile
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from adapters.falkordb import graph_name
from gateway.ops.runtime import Runtime
from gateway.settings import Settings
from gateway.world import demo_world_path, import_world, load_world

TOKENS = {"acme": "fuzz-token-acme-0123456789", "globex": "fuzz-token-globex-0123456789"}
SIGNING_SECRET = "fuzz-signing-secret-0123456789abcdef"
#: A web viewer's own token (`BLAST_VIEWER_TOKENS`): the person page actions are recorded as.
VIEWER = ("acme:hal@example.com", "fuzz-viewer-hal-0123456789")

#: Text with what breaks parsers and databases: surrogates, NUL, \x01, spaces at the ends.
hostile_text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " x", "x ", "a\x01b", "\ud800", "nl\n", "\x00", "é" * 3, "x" * 5000]),
    st.text(alphabet=st.characters(codec=None), max_size=20),
)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=10**25, max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True), hostile_text,
)  # fmt: skip
any_json = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(hostile_text, inner, max_size=4)
    ),
    max_leaves=12,
)
times = st.one_of(
    st.sampled_from(["2026-11-30T10:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59-01:00",
                     "2026-11-30T10:00:00.123456789+02:00", "yesterday", ""]),
    hostile_text,
)  # fmt: skip
alert = st.fixed_dictionaries(
    {"status": st.sampled_from(["firing", "resolved", "pending"]), "startsAt": times},
    optional={
        "labels": st.one_of(
            st.dictionaries(hostile_text, hostile_text, max_size=4),
            st.fixed_dictionaries(
                {"alertname": hostile_text, "service": st.sampled_from(["checkout", "payment"])}
            ),
        ),
        "annotations": st.dictionaries(hostile_text, hostile_text, max_size=3),
        "endsAt": times, "fingerprint": hostile_text, "generatorURL": hostile_text,
        "values": st.dictionaries(hostile_text, scalars, max_size=2),
    },
)  # fmt: skip
webhook = st.fixed_dictionaries(
    {"alerts": st.lists(alert, max_size=3)},
    optional={"version": st.sampled_from(["4", "1"]), "groupKey": hostile_text,
              "receiver": hostile_text, "truncatedAlerts": scalars, "externalURL": hostile_text,
              "orgId": scalars},
)  # fmt: skip
change = st.fixed_dictionaries(
    {"component": st.one_of(st.just("checkout"), hostile_text),
     "kind": st.sampled_from(["deploy", "pr", "other"]), "ref": hostile_text,
     "at": st.one_of(times, st.integers())},
    optional={"id": hostile_text, "author": hostile_text},
)  # fmt: skip
check = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["alert_firing", "recent_change", "nope"])},
                          optional={"alertname": hostile_text}),
    any_json,
)  # fmt: skip
playbook = st.fixed_dictionaries(
    {"title": hostile_text, "component": st.one_of(st.just("payment"), hostile_text),
     "checks": st.lists(check, max_size=3)},
    optional={"id": hostile_text, "failure_kind": hostile_text, "author": hostile_text},
)  # fmt: skip
verdict = st.fixed_dictionaries(
    {"verdict": st.sampled_from(["confirmed", "rejected", "resolved", "maybe"]),
     "by": hostile_text},
    optional={"id": hostile_text, "actual_cause": hostile_text, "text": hostile_text},
)  # fmt: skip
slack_event = st.fixed_dictionaries(
    {"type": st.sampled_from(["event_callback", "url_verification", "app_rate_limited"])},
    optional={
        "challenge": scalars, "event_id": hostile_text,
        "authorizations": st.lists(st.dictionaries(st.just("user_id"), scalars), max_size=2),
        "event": st.fixed_dictionaries(
            {"type": st.sampled_from(["message", "app_mention"])},
            optional={"user": scalars, "channel": scalars, "ts": st.one_of(scalars, times),
                      "thread_ts": st.one_of(scalars, st.just("1.000001")), "text": hostile_text,
                      "subtype": scalars, "bot_id": scalars},
        ),
    },
)  # fmt: skip
slack_click = st.fixed_dictionaries(
    {"type": st.sampled_from(["block_actions", "view_submission"])},
    optional={
        "user": st.one_of(st.fixed_dictionaries({"id": scalars}), scalars),
        "channel": st.one_of(st.fixed_dictionaries({"id": scalars}), scalars),
        "container": st.dictionaries(st.sampled_from(["channel_id", "message_ts"]), scalars),
        "actions": st.lists(st.fixed_dictionaries(
            {"action_id": st.sampled_from(["blast_confirm", "blast_reject", "approve_preference",
                                           "other"])},
            optional={"value": scalars, "action_ts": st.one_of(scalars, times)}), max_size=2),
    },
)  # fmt: skip


def body_of(shaped: st.SearchStrategy[Any]) -> st.SearchStrategy[bytes]:
    """Bytes of a JSON body: mostly `shaped`, else any JSON, deep nesting or raw bytes."""
    # up to 131,072 levels: as deep as a 256 KiB body nests, where a parser with no depth
    # limit of its own (orjson 3.8) crashed the process
    deep = st.one_of(
        st.integers(min_value=60, max_value=5000), st.integers(min_value=60_000, max_value=131_071)
    ).map(lambda n: b"[" * n + b"]" * n)
    encoded = st.one_of(shaped, any_json).map(
        lambda v: json.dumps(v, allow_nan=True).encode()  # json escapes lone surrogates
    )
    return st.one_of(encoded, encoded, encoded, deep, st.binary(max_size=200))


def auth_of(tenant: str) -> str:
    """The `Authorization` header value of `tenant`."""
    return f"Bearer {TOKENS[tenant]}"


#: Header bytes a client may send: anything but CR, LF and NUL; a server reads them as
#: Latin-1 text, so bytes over 0x7f arrive as text that is not ASCII.
header_bytes = st.binary(max_size=40).map(lambda b: bytes(c for c in b if c not in b"\r\n\0"))


def auth_headers() -> st.SearchStrategy[dict[str, str | bytes]]:
    """Mostly (8 in 10) a right token (either tenant), else none, a wrong one or garbage: any
    header bytes as a bearer token, a basic credential or a web session cookie."""
    right = st.sampled_from([{"Authorization": auth_of(tenant)} for tenant in TOKENS])
    wrong = st.one_of(
        st.just({}), st.just({"Authorization": "Bearer nope"}),
        st.just({"Authorization": "Basic !!!"}),
        header_bytes.map(lambda v: {"Authorization": v}),
        header_bytes.map(lambda v: {"Authorization": b"Basic " + v}),
        header_bytes.map(lambda v: {"Cookie": b"blast_session=acme." + v}),
    )  # fmt: skip
    return st.integers(0, 9).flatmap(lambda pick: right if pick < 8 else wrong)


def quoted(text: str) -> str:
    """`text` as one URL path segment; a lone surrogate goes as its (invalid) UTF-8 bytes."""
    return urllib.parse.quote(text, safe="", errors="surrogatepass")


def with_query(path: str, params: dict[str, str]) -> str:
    """`path?params`; a lone surrogate goes as its (invalid) UTF-8 bytes."""
    return (
        path
        + "?"
        + urllib.parse.urlencode({k: v.encode("utf-8", "surrogatepass") for k, v in params.items()})
    )


def signed(raw: bytes, sign: bool) -> dict[str, str]:
    """Slack's signature headers over `raw` (or none)."""
    if not sign:
        return {}
    stamp = str(int(time.time()))
    base = b"v0:" + stamp.encode() + b":" + raw  # Slack's scheme, over any bytes
    signature = "v0=" + hmac.new(SIGNING_SECRET.encode(), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature}


#: Builds one request from a drawn example: (method, path, body, headers).
Request = Callable[[Any], tuple[str, str, bytes | None, dict[str, str | bytes]]]


class Fuzzer:
    """Sends requests to one gateway and counts answers by endpoint and status."""

    def __init__(self, url: str, n: int) -> None:
        self.http = httpx.Client(base_url=url, timeout=30)
        self.n = n
        self.counts: dict[str, Counter[str]] = {}
        self.bad: list[str] = []

    def send(self, name: str, method: str, path: str, raw: bytes | None,
             headers: dict[str, str | bytes]) -> None:  # fmt: skip
        """One request; its status (or `reset`) is counted under `name`."""
        try:
            answer = self.http.request(method, path, content=raw, headers=headers)
            status = str(answer.status_code)
            self.http.cookies.clear()  # each request carries only the cookies it was drawn with
        except httpx.LocalProtocolError:  # httpx itself refuses to send it (a header with \n)
            status = "unsendable"
        except httpx.TransportError as exc:
            status = "reset"
            self.bad.append(f"{name}: {type(exc).__name__} for {raw[:200] if raw else raw!r}")
        if status.startswith("5"):
            self.bad.append(f"{name}: {status} for {raw[:200] if raw else raw!r}")
        self.counts.setdefault(name, Counter())[status] += 1

    def run(self, name: str, strategy: st.SearchStrategy[Any], request: Request) -> None:
        """Draw `n` examples from `strategy`; send each as `request(example)` builds it."""

        @settings(max_examples=self.n, phases=[Phase.generate], database=None, deadline=None,
                  suppress_health_check=list(HealthCheck))  # fmt: skip
        @given(strategy)
        def one(example: Any) -> None:
            self.send(name, *request(example))

        one()


def web_fuzz(f: Fuzzer, ids: st.SearchStrategy[str]) -> None:
    """The web page's routes: sign-in with hostile forms (same origin or not), pages and every
    form (verdict, acknowledge, snooze, resolve, maintenance, approve, sign-out) with or without
    a signed-in viewer's session and its CSRF token (the event stream is left out: it never
    ends)."""
    origin = {"Origin": str(f.http.base_url).rstrip("/")}
    signed_in = f.http.post("/ui/login", data={"token": VIEWER[1]}, headers=origin)
    session = dict(signed_in.cookies)
    f.http.cookies.clear()
    form_type = {"Content-Type": "application/x-www-form-urlencoded"}

    def form(fields: dict[str, str]) -> bytes:
        return urllib.parse.urlencode(fields, errors="surrogatepass").encode()

    page = f.http.get("/ui/maintenance", headers={"Cookie": cookie(session)}).text
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    real_csrf = [csrf.group(1)] if csrf else []
    fields = st.dictionaries(
        st.sampled_from(["token", "next", "csrf", "verdict", "intent", "actual_cause", "name",
                         "minutes", "length", "unit", "until", "components", "teams",
                         "reason"]),
        st.one_of(hostile_text, st.sampled_from([
            TOKENS["acme"], VIEWER[1], "confirmed", "//evil.example", "checkout", "30", "hours",
            *real_csrf])),
        max_size=7,
    )  # fmt: skip
    f.run("POST /ui/login", st.tuples(st.one_of(fields.map(form), st.binary(max_size=100)),
                                      st.booleans()),
          lambda e: ("POST", "/ui/login", e[0], form_type | (origin if e[1] else {})))  # fmt: skip
    with_session = st.booleans().map(lambda yes: {"Cookie": cookie(session)} if yes else {})

    def post_form(name: str, paths: st.SearchStrategy[str]) -> None:
        """A same-origin form of hostile `fields` to a drawn path, signed in or not."""
        f.run(name, st.tuples(paths, fields.map(form), with_session),
              lambda e: ("POST", e[0], e[1], form_type | origin | e[2]))  # fmt: skip

    for action in ("verdict", "acknowledge", "snooze", "resolve"):
        post_form(f"POST /ui/incidents/{{id}}/{action}",
                  ids.map(lambda i, a=action: f"/ui/incidents/{quoted(i)}/{a}"))  # fmt: skip
    post_form("POST /ui/maintenance", st.just("/ui/maintenance"))
    post_form("POST /ui/maintenance/{id}/end",
              hostile_text.map(lambda w: f"/ui/maintenance/{quoted(w)}/end"))  # fmt: skip
    for verb in ("approve", "reject"):
        post_form(f"POST /api/v1/incidents/{{id}}/remediations/{{id}}/{verb}, as a web form",
                  st.tuples(ids, hostile_text).map(
                      lambda p, v=verb: f"/api/v1/incidents/{quoted(p[0])}/remediations/"
                                        f"{quoted(p[1])}/{v}"))  # fmt: skip
    post_form("POST /ui/logout", st.just("/ui/logout"))
    listed = ["/", "/ui/memory", "/ui/world", "/ui/health", "/ui/login", "/ui/maintenance",
              "/ui/maintenance?all=true"]  # fmt: skip
    pages = st.one_of(
        st.sampled_from(listed),
        ids.map(lambda i: f"/ui/incidents/{quoted(i)}"),
        hostile_text.map(lambda t: f"/ui/login?next={quoted(t)}"),
        st.tuples(ids, hostile_text).map(
            lambda p: with_query(f"/ui/incidents/{quoted(p[0])}", {"alerts_page": p[1]})),
        st.dictionaries(st.sampled_from(["state", "team", "service", "severity", "q"]),
                        hostile_text).map(lambda q: with_query("/", q)),
        hostile_text.map(lambda t: f"/ui/no-{quoted(t)}"),  # no such page (not the stream)
    )  # fmt: skip
    f.run("GET / and /ui/* pages", st.tuples(pages, with_session),
          lambda e: ("GET", e[0], None, e[1]))  # fmt: skip


def cookie(jar: dict[str, str]) -> str:
    """A `Cookie` header value of the cookies in `jar`."""
    return "; ".join(f"{name}={value}" for name, value in jar.items())


def fuzz(n: int) -> tuple[dict[str, Counter[str]], list[str], bool]:
    """Run every endpoint's `n` requests on a fresh gateway. Returns (counts, failures,
    whether the database server kept its pid)."""
    with tempfile.TemporaryDirectory(prefix="blast-radius-fuzz-") as scratch:
        config = Settings.model_validate({
            "data_dir": Path(scratch), "port": 0, "workers": 0,
            "webhook_tokens": {t: SecretStr(v) for t, v in TOKENS.items()},
            "viewer_tokens": {VIEWER[0]: SecretStr(VIEWER[1])},
            "default_tenant": "acme", "slack_signing_secret": SecretStr(SIGNING_SECRET),
            "slack_bot_token": SecretStr("xoxb-fuzz-not-used-0123456789"),
            "slack_api_url": "http://127.0.0.1:9/", "notify": "outbox",
        })  # fmt: skip
        with Runtime(config) as runtime:
            assert runtime.store is not None and runtime.embedded is not None
            assert runtime.embedded.process is not None
            pid = runtime.embedded.process.pid
            for tenant in TOKENS:
                import_world(runtime.store.graph(graph_name(tenant)), load_world(demo_world_path()))
            port = runtime.serve_http("127.0.0.1", 0)
            f = Fuzzer(f"http://127.0.0.1:{port}", n)
            auth = auth_headers()
            json_type = {"Content-Type": "application/json"}
            for name, path, shape in (
                ("POST /api/v1/alerts", "/api/v1/alerts", webhook),
                ("POST /api/v1/changes", "/api/v1/changes", change),
                ("POST /api/v1/playbooks", "/api/v1/playbooks", playbook),
            ):
                f.run(name, st.tuples(body_of(shape), auth),
                      lambda e, p=path: ("POST", p, e[0], json_type | e[1]))  # fmt: skip
            seed = {
                "alerts": [
                    {
                        "status": "firing",
                        "startsAt": "2026-11-30T10:00:00Z",
                        "labels": {"alertname": "HighErrorRate", "service": "checkout"},
                    }
                ]
            }
            f.http.post("/api/v1/alerts", json=seed, headers={"Authorization": auth_of("acme")})
            real = runtime.store.graph(graph_name("acme")).rows(
                "list_incidents", {"status": None, "limit": 5}
            )
            ids = st.one_of(hostile_text, st.sampled_from([row["id"] for row in real]))
            f.run("POST /api/v1/incidents/{id}/verdicts", st.tuples(ids, body_of(verdict), auth),
                  lambda e: ("POST", f"/api/v1/incidents/{quoted(e[0])}"
                             "/verdicts", e[1], json_type | e[2]))  # fmt: skip
            f.run("GET /api/v1/incidents", st.tuples(
                st.dictionaries(st.sampled_from(["status", "limit", "x"]), hostile_text), auth),
                lambda e: ("GET", with_query("/api/v1/incidents", e[0]), None, e[1]))  # fmt: skip
            paging = st.dictionaries(
                st.sampled_from(["alerts_limit", "alerts_offset"]),
                st.one_of(hostile_text, st.integers().map(str)),
            )
            f.run("GET /api/v1/incidents/{id}", st.tuples(ids, auth, paging),
                  lambda e: ("GET", with_query(f"/api/v1/incidents/{quoted(e[0])}", e[2]),
                             None, e[1]))  # fmt: skip
            f.run("GET /api/v1/playbooks", auth, lambda e: ("GET", "/api/v1/playbooks", None, e))
            retire = st.fixed_dictionaries({"reason": hostile_text}, optional={"by": scalars})
            playbook_ids = st.one_of(hostile_text, st.just("playbook:none"))
            f.run("DELETE /api/v1/playbooks/{id}",
                  st.tuples(playbook_ids, body_of(retire), auth),
                  lambda e: ("DELETE", f"/api/v1/playbooks/{quoted(e[0])}", e[1],
                             json_type | e[2]))  # fmt: skip
            f.run("POST /api/v1/slack/events", st.tuples(body_of(slack_event), st.booleans()),
                  lambda e: ("POST", "/api/v1/slack/events", e[0],
                             json_type | signed(e[0], e[1] or len(e[0]) % 5 > 0)))  # fmt: skip
            junk_signature = st.tuples(header_bytes, header_bytes).map(
                lambda e: {"X-Slack-Request-Timestamp": e[0], "X-Slack-Signature": e[1]}
            )
            for path in ("/api/v1/slack/events", "/api/v1/slack/interactions"):
                f.run(f"POST {path}, signature headers of any bytes", junk_signature,
                      lambda e, p=path: ("POST", p, b"{}", json_type | e))  # fmt: skip
            form = {"Content-Type": "application/x-www-form-urlencoded"}
            clicks = st.one_of(
                body_of(slack_click).map(
                    lambda raw: urllib.parse.urlencode(
                        {"payload": raw.decode("utf-8", "surrogateescape")},
                        errors="surrogateescape",
                    ).encode()
                ),
                st.binary(max_size=200),
            )
            f.run("POST /api/v1/slack/interactions", st.tuples(clicks, st.booleans()),
                  lambda e: ("POST", "/api/v1/slack/interactions", e[0],
                             form | signed(e[0], e[1] or len(e[0]) % 5 > 0)))  # fmt: skip
            for path in ("/health/live", "/health/ready", "/metrics"):
                f.run(f"GET {path}", st.one_of(st.none(), st.binary(max_size=64)),
                      lambda e, p=path: ("GET", p, e, {}))  # fmt: skip
            for view in ("steps", "decision", "graph"):
                f.run(f"GET /api/v1/incidents/{{id}}/{view}", st.tuples(ids, auth),
                      lambda e, v=view: ("GET", f"/api/v1/incidents/{quoted(e[0])}/{v}", None,
                                         e[1]))  # fmt: skip
            pages = st.dictionaries(st.sampled_from(["limit", "offset", "max_chars", "x"]),
                                    st.one_of(hostile_text, st.integers().map(str)))  # fmt: skip
            f.run("GET /api/v1/incidents/{id}/steps?limit&offset&max_chars",
                  st.tuples(ids, pages, auth),
                  lambda e: ("GET", with_query(f"/api/v1/incidents/{quoted(e[0])}/steps", e[1]),
                             None, e[2]))  # fmt: skip
            f.run("GET /api/v1/incidents/{id}/steps/{task_id}/{n}",
                  st.tuples(ids, hostile_text, st.one_of(hostile_text, st.integers().map(str)),
                            auth),
                  lambda e: ("GET", f"/api/v1/incidents/{quoted(e[0])}/steps/{quoted(e[1])}/"
                             f"{quoted(e[2])}", None, e[3]))  # fmt: skip
            window = st.fixed_dictionaries(
                {"reason": hostile_text, "by": hostile_text},
                optional={"components": st.lists(st.one_of(st.just("checkout"), hostile_text),
                                                 max_size=3),
                          "teams": st.lists(hostile_text, max_size=2),
                          "minutes": scalars, "until": times},
            )  # fmt: skip
            f.run("POST /api/v1/maintenance", st.tuples(body_of(window), auth),
                  lambda e: ("POST", "/api/v1/maintenance", e[0], json_type | e[1]))  # fmt: skip
            f.run("GET /api/v1/maintenance", st.tuples(
                st.dictionaries(st.sampled_from(["all", "limit", "x"]), hostile_text), auth),
                lambda e: ("GET", with_query("/api/v1/maintenance", e[0]), None, e[1]))  # fmt: skip
            f.run("DELETE /api/v1/maintenance/{id}", st.tuples(hostile_text, hostile_text, auth),
                  lambda e: ("DELETE", f"/api/v1/maintenance/{quoted(e[0])}?by="
                             f"{quoted(e[1])}", None, e[2]))  # fmt: skip
            by = st.one_of(st.fixed_dictionaries({"by": hostile_text}), any_json)
            for action in ("ack", "resolve"):
                f.run(f"POST /api/v1/incidents/{{id}}/{action}",
                      st.tuples(ids, body_of(by), auth),
                      lambda e, a=action: ("POST", f"/api/v1/incidents/{quoted(e[0])}/{a}",
                                           e[1], json_type | e[2]))  # fmt: skip
            f.run("GET /api/v1/incidents/{id}/remediations", st.tuples(ids, auth),
                  lambda e: ("GET", f"/api/v1/incidents/{quoted(e[0])}/remediations", None,
                             e[1]))  # fmt: skip
            for verb in ("approve", "reject"):
                f.run(f"POST /api/v1/incidents/{{id}}/remediations/{{id}}/{verb}",
                      st.tuples(ids, hostile_text, body_of(any_json), auth),
                      lambda e, v=verb: ("POST", f"/api/v1/incidents/{quoted(e[0])}"
                                         f"/remediations/{quoted(e[1])}/{v}", e[2],
                                         json_type | e[3]))  # fmt: skip
            web_fuzz(f, ids)
            f.http.close()
            alive = runtime.embedded.process.poll() is None and runtime.embedded.process.pid == pid
    return f.counts, f.bad, alive


def main() -> None:
    """Parse arguments, fuzz, print the counts; exit 1 on any 5xx, reset or database crash."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="requests per endpoint")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)  # the gateway's lines about each refused body
    started = time.monotonic()
    counts, bad, alive = fuzz(args.n)
    took = time.monotonic() - started
    if args.json:
        print(json.dumps({"counts": counts, "failures": bad, "database_alive": alive,
                          "seconds": round(took, 1)}, indent=2))  # fmt: skip
    else:
        for name, by_status in counts.items():
            shown = ", ".join(f"{status}: {count}" for status, count in sorted(by_status.items()))
            print(f"{name:<40} {shown}")
        total = sum(sum(c.values()) for c in counts.values())
        print(
            f"{total} requests in {took:.0f} s; 5xx or reset: {len(bad)}; "
            f"database {'kept running' if alive else 'RESTARTED'}"
        )
        for line in bad[:20]:
            print(f"  {line}")
    sys.exit(0 if alive and not bad else 1)


if __name__ == "__main__":
    main()
