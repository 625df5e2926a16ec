"""Limits on every request, before any route sees it (no 5xx, no crash a sender
can cause, and nothing one sender does stalls the others): headers, credentials and the route
first, then a body bounded for that route, then JSON parsed once, off the event loop, within
depth and count limits.

`RequestGuard` is a pure ASGI middleware, so every route gets it, present and future:

0. Headers: more than `BLAST_MAX_HEADERS` header fields, or more than `BLAST_MAX_HEADER_BYTES`
   of them, is 431. The server's protocol (`gateway/http/slow_clients.py`) refuses such a head
   before h11 parses it, whether it trickles in or arrives in one piece; this check holds
   under any other ASGI server too.
1. Credentials before the body: a request under `/api/` (except `/api/v1/slack/`, which
   checks Slack's signature over the body itself) with no valid credential (a webhook token,
   `gateway/http/auth.py`, or a web session's cookie) gets 401 before one byte of its body is read.
2. A size limit per route: `Content-Length` over the limit is refused at once, a body
   that grows over it while it arrives is refused when it does: 413 with the limit. The
   webhook (`/api/v1/alerts`) takes `BLAST_MAX_BODY_BYTES` (a storm's notification is large);
   Slack's routes at most `SLACK_BODY_LIMIT` (1 MiB); every other route (and any path that is
   no route) at most `BLAST_MAX_API_BODY_BYTES`, small: a playbook or a verdict is a few KiB.
3. A body in a `Content-Encoding` other than identity (gzip, …) is 415: it is not decoded.
   The webhook's body must be JSON (`json_media_problem`): Alertmanager and Grafana send
   `Content-Type: application/json`; one sent as another media type (curl's `-d` says
   `application/x-www-form-urlencoded`) is 415 with the reason before it is read, as every
   other route with a JSON body answers it (`validation_failed`). No Content-Type at all is
   taken as JSON, on every route.
4. JSON with limits (`load_json`), in a worker thread (`starlette.concurrency.
   run_in_threadpool`), so a large body never holds the event loop that answers every other
   client: a JSON body (`json_media_problem`: `application/json`, `application/*+json` or no
   content type; Slack's routes call it themselves once
   the signature holds) with more than `MAX_JSON_VALUES` values, nested deeper than
   `MAX_JSON_DEPTH`, with an integer of more than `MAX_INT_DIGITS` digits, with `NaN` or
   `Infinity`, or that is not JSON at all, is 400 with the reason. Count and depth are read off
   the body's skeleton (its bytes without its strings) before `json` builds one object, at the
   speed of `bytes` methods. Python's own limits would otherwise surface as a 500
   (RecursionError at ~1000 levels; ValueError over 4300 digits). A route with a FastAPI body
   model gets the parsed value (`ParsedOnceRoute`), so no body is parsed twice. The webhook
   parses its own body in its one hand-off to a thread (`gateway.http.payloads.
   read_notification_bytes`: a storm's alerts decoded straight into typed fields, nothing
   deeper than the body's four levels; any other body by `load_json`, with these limits).

Error bodies are `{"detail": …}` rendered as ASCII JSON (`SafeJSONResponse`), so a reason that
quotes a lone surrogate from the request still renders (`validation_failed`).
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Callable, Coroutine
from typing import Annotated, Any

import orjson
from fastapi import HTTPException, Request, Response
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import AfterValidator, BaseModel
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from adapters.falkordb import key_problem
from gateway.http.auth import tenant_for
from gateway.settings import Settings
from gateway.web.session import COOKIE, Sessions

log = logging.getLogger(__name__)

#: Deepest JSON nesting accepted (Alertmanager's body is 4 deep, Slack's payloads about 10).
MAX_JSON_DEPTH = 64
#: Most values (objects, arrays and their members) in one JSON body: a 16 MiB notification of
#: real alerts holds about 500,000; parsing a million takes about 0.3 s on this machine.
MAX_JSON_VALUES = 1_000_000
#: The route whose body may be large (`BLAST_MAX_BODY_BYTES`): the webhook.
WEBHOOK_PATH = "/api/v1/alerts"
#: Where `RequestGuard` leaves the parsed body for the route (`scope["state"][PARSED]`).
PARSED = "blast_json"
#: Most digits in a JSON integer (int64 has 19): longer ones are no time, count or id we use.
MAX_INT_DIGITS = 20
#: Slack's requests are small; anything bigger is not from Slack.
SLACK_BODY_LIMIT = 1024 * 1024
#: Routes that check their own credential over the body (Slack's signature).
SIGNED_PREFIX = "/api/v1/slack/"


def json_media_problem(content_type: str) -> str | None:
    """Why a body sent with `content_type` (the header as sent, "" when there is none) is not
    read as JSON, or None: `application/json`, any `application/*+json` (RFC 6839) and no
    Content-Type at all are JSON (a script that names no type means JSON, as FastAPI reads
    it; Alertmanager and Grafana always send `application/json`)."""
    kind = content_type.split(";")[0].strip().lower()
    if not kind or kind == "application/json":
        return None
    if kind.startswith("application/") and kind.endswith("+json"):
        return None
    return (
        "the body must be JSON sent with Content-Type: application/json "
        f"(got {content_type.strip()[:100]})"
    )


def _plain_key(value: str) -> str:
    problem = key_problem(value)
    if problem is not None:
        raise ValueError(f"id {problem} (FalkorDB cannot index it)")
    if "/" in value or value in (".", ".."):  # else /api/v1/playbooks/{id} can never name it
        raise ValueError("id must not contain '/' or be '.' or '..': it is part of a URL path")
    return value


#: A client-chosen id (idempotency key) for a body model: 422 with the reason unless FalkorDB
#: can take it as a unique value (`adapters.falkordb.key_problem`) and a URL path segment can
#: carry it.
Key = Annotated[str, AfterValidator(_plain_key)]
#: Lengths of what people send through the API (characters): a name (a person, a component,
#: an author), a title (a playbook's, a change's ref), a text (a verdict's, as Slack replies
#: are read: `agents/learn/verdicts.py`), and how many checks one playbook may carry.
MAX_NAME_CHARS = 200
MAX_TITLE_CHARS = 500
MAX_TEXT_CHARS = 2000
MAX_CHECKS = 20
#: Milliseconds since the epoch (UTC) from a client: within what FalkorDB's int64 and
#: `datetime` both take (year 1970 to 9999).
EPOCH_MS_MAX = 253_402_300_799_999


class BodyError(ValueError):
    """A body refused before any route sees it. `status`: 400, 413 or 415."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise BodyError(f"JSON integer with more than {MAX_INT_DIGITS} digits")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 is valid JSON, and infinity to Python
        raise BodyError(f"JSON number {text[:40]} is out of range (over a 64-bit float's 1.8e308)")
    return value


def _no_constant(name: str) -> float:
    raise BodyError(f"{name} is not JSON (RFC 8259 has no NaN or Infinity)")


#: A JSON string, quotes and escapes included (the unrolled form: linear, no backtracking).
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
#: Every byte but the four brackets, for `bytes.translate(None, …)`.
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
#: An innermost (empty, once strings and scalars are gone) array or object.
_INNERMOST = re.compile(rb"\[\]|\{\}")
#: Every byte but quotes, brackets and commas, for `bytes.translate(None, …)`.
_NOT_SKELETON = bytes(b for b in range(256) if b not in b'"[]{},')
#: A string once only quotes, brackets and commas are left (no escapes: `_valid_json_bare`).
_QUOTED = re.compile(rb'"[^"]*"')
#: Every digit as `0`, for `bytes.translate`: a run of `_LONG_DIGITS` zeros then shows a number
#: orjson may read otherwise than `json` (over 64 bits it gives a float; `json` an int).
_DIGITS_AS_ZERO = bytes.maketrans(b"0123456789", b"0" * 10)
_LONG_DIGITS = b"0" * 19


def skeleton_problem(raw: bytes) -> str | None:
    """Why `raw` (a JSON body) holds too many values or nests too deeply, or None.

    Read off the skeleton, without building a Python object: strings are cut out, values are
    counted as the arrays, objects and commas left (`MAX_JSON_VALUES`), and the depth is how
    many rounds of removing innermost `[]`/`{}` it takes to empty the brackets
    (`MAX_JSON_DEPTH`). Bytes that are no JSON pass: `json` says what is wrong with them.
    """
    return _bare_problem(_JSON_STRING.sub(b"", raw))


def _bare_problem(bare: bytes) -> str | None:
    """`skeleton_problem` of a body's bytes once its strings are cut out (`bare`)."""
    if _too_many_values(bare):
        return f"JSON with more than {MAX_JSON_VALUES} values"
    left, unbalanced = _peel(bare)
    if unbalanced:
        return None  # not JSON, and json.loads says where
    return f"JSON nested deeper than {MAX_JSON_DEPTH} levels" if left else None


def _too_many_values(bare: bytes) -> bool:
    """Whether `bare` (a body's skeleton) holds more than `MAX_JSON_VALUES` values: its arrays,
    objects and commas."""
    return bare.count(b"[") + bare.count(b"{") + bare.count(b",") > MAX_JSON_VALUES


def may_hold_too_many_values(raw: bytes) -> bool:
    """Whether the JSON body `raw` may hold more than `MAX_JSON_VALUES` values: its brackets and
    commas counted strings and all, an upper bound of `skeleton_problem`'s count (each value
    takes a byte at least, so a body of fewer bytes holds fewer)."""
    return len(raw) > MAX_JSON_VALUES and _too_many_values(raw)


def _peel(bare: bytes) -> tuple[bytes, bool]:
    """The brackets of `bare` left after up to `MAX_JSON_DEPTH` rounds of removing the
    innermost `[]`/`{}` pairs, and whether a round removed none while some were left
    (unbalanced: no JSON)."""
    brackets = bare.translate(None, _NOT_BRACKETS)
    for _ in range(MAX_JSON_DEPTH):
        if not brackets:
            return brackets, False
        brackets, removed = _INNERMOST.subn(b"", brackets)
        if not removed:
            return brackets, True
    return brackets, False


def _valid_json_bare(raw: bytes) -> bytes:
    """The brackets and commas of `raw`, valid JSON, outside its strings: what `_bare_problem`
    reads, at the speed of `bytes` methods (a 5,000-alert notification's strings cost the
    regex of `skeleton_problem` about 14 ms). Valid JSON only: a backslash is always an
    escape, so once the escaped backslashes, then the escaped quotes, are out, every quote opens
    or closes a string; with all but quotes, brackets and commas gone, the empty strings go at
    once (two adjacent quotes at worst join two strings into one), and the few left by a regex."""
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"")
    if b'\\"' in raw:
        raw = raw.replace(b'\\"', b"")
    kept = raw.translate(None, _NOT_SKELETON).replace(b'""', b"")
    return _QUOTED.sub(b"", kept) if b'"' in kept else kept


def load_json(raw: bytes | str) -> Any:
    """Parse a JSON body within the limits of the module docstring (blocking: call it in a
    worker thread for a large body).

    orjson parses it when it can say the same as `json` would (no lone surrogate, NaN,
    Infinity or out-of-range float, which it refuses, and no run of 19 digits, which it may
    read as a float where `json` reads an integer): a 5,000-alert notification in about a
    third of `json`'s time. Any other body takes `json`'s way, which gives the reasons.
    Raises `BodyError` (400) with the reason: not UTF-8, not JSON, too many values, too deep,
    an integer too long, NaN/Infinity.
    """
    data = raw.encode("utf-8", errors="surrogatepass") if isinstance(raw, str) else raw
    # The skeleton is read before orjson sees the body: orjson 3.8 has no depth limit of its
    # own, and 131,072 nested arrays crash the process (a 256 KiB body, any route). A body
    # whose brackets do not all close within the depth limit (too deep, or no JSON), or with
    # too many values, goes `json`'s way, which gives the reason without recursing past
    # Python's limit.
    bare = _valid_json_bare(data)
    if _peel(bare)[0] or _too_many_values(bare):
        return _load_json_slowly(data)
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _load_json_slowly(data)
    if _LONG_DIGITS in data.translate(_DIGITS_AS_ZERO):
        return _load_json_slowly(data)
    return parsed


#: Every digit as `0` and every byte that may end a number (`]`, `}`, white space) as `,`, for
#: `bytes.translate`: `within_limits` reads long numbers off the result with two searches.
_NUMBERS_PLAIN = bytes.maketrans(b"0123456789]} \n\r\t", b"0" * 10 + b"," * 6)


def _long_exponent(plain: bytes) -> bool:
    """Whether `plain` (a body translated by `_NUMBERS_PLAIN`) holds a number with an exponent
    of three digits or more (`[0-9.][eE][+-]?[0-9]{3,}` where a number ends): a float
    `load_json` may find out of range (`1e999`), or one it takes (`1e-300`); `within_limits`
    says no to both. Each `0,` found (a search as text: a regex over a storm's 1.8 MB takes 8
    to 17 ms, this about 2) is read backwards. A hex string (`"…3e123"`, a fingerprint) ends
    at its quote or goes on in hex: none."""
    at = plain.find(b"0,")
    while at >= 0:
        first = at  # the first of the digits that end here
        while first > 0 and plain[first - 1] == 0x30:
            first -= 1
        sign = first - 1 if first > 0 and plain[first - 1] in b"+-" else first
        if at - first >= 2 and sign > 1 and plain[sign - 1] in b"eE" and plain[sign - 2] in b"0.":
            return True
        at = plain.find(b"0,", at + 1)
    return False


def within_limits(raw: bytes) -> bool:
    """Whether `load_json` takes `raw`, bytes a JSON parser has just read as valid JSON (msgspec,
    which skips a field it does not know without checking the limits), with no `BodyError`:
    UTF-8 throughout, no integer over `MAX_INT_DIGITS` digits, no float out of range, nested
    no deeper than `MAX_JSON_DEPTH`. False also for some bodies it would take (a run of 19
    digits anywhere, strings included; an exponent of three digits): the caller then reads
    the body `load_json`'s way, which says the same or gives the reason. The values' count is
    `may_hold_too_many_values`'s. About 8 ms of CPU for 5,000 alerts (1.8 MB)."""
    if not raw.isascii():
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return False
    plain = raw.translate(_NUMBERS_PLAIN)
    if _LONG_DIGITS in plain or _long_exponent(plain):
        return False
    return not _peel(_valid_json_bare(raw))[0]


def _load_json_slowly(data: bytes) -> Any:
    """`load_json` by `json`: every limit checked, and the reason for a body that is no JSON."""
    problem = skeleton_problem(data)
    if problem is not None:
        raise BodyError(problem)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BodyError(f"body is not UTF-8: {exc}") from None
    try:
        return json.loads(
            text, parse_int=_bounded_int, parse_float=_finite_float, parse_constant=_no_constant
        )
    except RecursionError:  # cannot happen within MAX_JSON_DEPTH; kept as a 400, never a 500
        raise BodyError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise BodyError(f"body is not JSON: {exc}") from None


class SafeJSONResponse(JSONResponse):
    """JSON rendered as ASCII (`\\uXXXX` escapes): a lone surrogate echoed from a request (JSON
    allows `"\\ud800"`) cannot be encoded as UTF-8, and would turn any answer into a 500."""

    def render(self, content: Any) -> bytes:
        """`content` as compact ASCII JSON."""
        return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


#: The most characters of an offending input a 422 quotes (`shown_input`).
MAX_INPUT_CHARS = 200


def shown_input(value: Any) -> Any:
    """An offending input as a 422 shows it, readable as what was sent: the value itself (JSON)
    when its JSON is at most `MAX_INPUT_CHARS` characters, else the head of its JSON text cut
    there with `…`; bytes (a body that is no JSON) as text."""
    if isinstance(value, bytes | bytearray):
        value = bytes(value).decode("utf-8", errors="replace")
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= MAX_INPUT_CHARS:
        return json.loads(text)
    return text[: MAX_INPUT_CHARS - 1] + "…"


def body_model(request: Request) -> type[BaseModel] | None:
    """The pydantic model of the body the request's route takes, or None (no such route, or
    its body is no single model)."""
    route = request.scope.get("route")
    field = route.body_field if isinstance(route, APIRoute) else None
    model = field.field_info.annotation if field is not None else None
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def named_missing(errors: list[dict[str, Any]], model: type[BaseModel] | None) -> list[Any]:
    """`errors` (pydantic's) with each required top-level field of the body `model` that is
    missing said by name and, when the field has a description, what it is (`Field required:
    who resolves the incident …`); no body at all (FastAPI's one `["body"]` error) is each
    required field missing, as an empty object would be."""
    if model is None:
        return errors
    fields = model.model_fields
    required = [name for name, field in fields.items() if field.is_required()]
    out: list[Any] = []
    for err in errors:
        if err.get("type") == "missing" and tuple(err.get("loc", ())) == ("body",) and required:
            out += [err | {"loc": ("body", name)} for name in required]
        else:
            out.append(err)
    for err in out:
        loc = tuple(err.get("loc", ()))
        if err.get("type") == "missing" and len(loc) == 2 and loc[0] == "body":
            described = fields[loc[1]].description if loc[1] in fields else None
            err["msg"] = f"Field required: {described}" if described else err["msg"]
    return out


async def validation_failed(request: Request, exc: RequestValidationError) -> SafeJSONResponse:
    """422 for a body or query of the wrong shape, whatever it contains: each error's location,
    message and the offending input as JSON (`shown_input`: cut at 200 characters); a missing
    field of the body's model by name, with what it is (`named_missing`). A JSON body sent
    without a JSON media type (curl's `-d` says `application/x-www-form-urlencoded`) is a 415
    saying so, not a dump of its bytes."""
    unread = [e for e in exc.errors() if tuple(e.get("loc", ()))[:1] == ("body",)
              and isinstance(e.get("input"), bytes | str)]  # fmt: skip
    reason = json_media_problem(request.headers.get("content-type", ""))
    if unread and reason is not None:
        return SafeJSONResponse({"detail": reason}, status_code=415)
    errors = []
    for err in named_missing([dict(e) for e in exc.errors()], body_model(request)):
        shown = {k: err[k] for k in ("loc", "msg", "type") if k in err}
        if "input" in err:
            shown["input"] = shown_input(err["input"])
        errors.append(shown)
    return SafeJSONResponse({"detail": jsonable_encoder(errors)}, status_code=422)


async def http_failed(request: Request, exc: StarletteHTTPException) -> SafeJSONResponse:
    """Any `HTTPException` (FastAPI's is Starlette's, as the router's 404 and 405 are): its
    status, headers and `{"detail": …}` (ASCII JSON)."""
    return SafeJSONResponse({"detail": exc.detail}, exc.status_code, headers=exc.headers)


def header_problem(headers: list[tuple[bytes, bytes]], most: int, most_bytes: int) -> str | None:
    """Why a request's header fields are too many (over `most`) or too large (their names and
    values over `most_bytes` bytes in all), or None."""
    if len(headers) > most:
        return f"{len(headers)} header fields, over the limit of {most} (BLAST_MAX_HEADERS)"
    size = sum(len(name) + len(value) + 4 for name, value in headers)  # ": " and CRLF
    if size > most_bytes:
        return (
            f"{size} bytes of header fields, over the limit of {most_bytes} bytes "
            "(BLAST_MAX_HEADER_BYTES)"
        )
    return None


def body_limit(path: str, settings: Settings) -> int:
    """The most bytes a request to `path` may carry (module docstring, 2)."""
    if path == WEBHOOK_PATH:
        return int(settings.max_body_bytes)
    small = min(int(settings.max_api_body_bytes), int(settings.max_body_bytes))
    return (
        min(SLACK_BODY_LIMIT, settings.max_body_bytes) if path.startswith(SIGNED_PREFIX) else small
    )


class RequestGuard:
    """The ASGI middleware of the module docstring. `app.state.settings` gives the tokens and
    the limits; it is read per request, so tests may swap settings."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check one request (HTTP only; lifespan and websockets pass through)."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        settings = scope["app"].state.settings
        path: str = scope["path"]
        try:
            problem = header_problem(
                scope["headers"], settings.max_headers, settings.max_header_bytes
            )
            if problem is not None:
                raise BodyError(problem, 431)
            request = Request(scope)
            if path.startswith("/api/") and not path.startswith(SIGNED_PREFIX):
                require_credential(request, settings)  # 401 here, before the body
            encoding = request.headers.get("content-encoding", "identity").strip().lower()
            if encoding not in ("", "identity"):  # else "not UTF-8" later
                raise BodyError(
                    f"Content-Encoding {encoding!r} is not supported: send the body uncompressed",
                    415,
                )
            media = json_media_problem(request.headers.get("content-type", ""))
            if media is not None and path == WEBHOOK_PATH and scope["method"] == "POST":
                raise BodyError(media, 415)  # before its body: up to BLAST_MAX_BODY_BYTES
            body = await read_body(request, receive, body_limit(path, settings))
            signed = path.startswith(SIGNED_PREFIX)  # parsed by the route, after the signature
            sent = scope["method"] in ("POST", "PUT", "PATCH", "DELETE")  # a GET's means nothing
            # the webhook parses its own body (`gateway.http.payloads.read_notification_bytes`:
            # a storm's alerts decoded straight into typed fields, within these limits)
            own = signed or path == WEBHOOK_PATH
            if body.strip() and sent and not own and media is None:
                # off the event loop: a large body must not hold every other client's answer
                scope.setdefault("state", {})[PARSED] = await run_in_threadpool(load_json, body)
        except HTTPException as exc:
            await SafeJSONResponse({"detail": exc.detail}, exc.status_code, exc.headers)(
                scope, receive, send
            )
            return
        except BodyError as exc:
            log.info("refused %s %s: %s", scope["method"], path, exc)
            headers = {"Connection": "close"} if exc.status == 431 else None
            await SafeJSONResponse({"detail": str(exc)}, exc.status, headers)(scope, receive, send)
            return
        await self.app(scope, replay(body, receive), send)


class ParsedOnceRoute(APIRoute):
    """An `APIRoute` whose body model is validated from the JSON `RequestGuard` parsed (off the
    event loop, within the depth and count limits), not from a second `json.loads` of the
    bytes: FastAPI reads a JSON body through Starlette's `Request.json()`, which returns
    `Request._json` when it is set. Routers that take bodies use it (`APIRouter(route_class=…)`)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            state = request.scope.get("state", {})
            if PARSED in state:
                request._json = state[PARSED]
            return await handler(request)

        return route


async def read_limited(request: Request, limit: int) -> bytes:
    """The raw body for a route that takes less than `RequestGuard`'s limit (a web form):
    raises HTTPException 413 when it exceeds `limit` bytes."""
    declared = request.headers.get("content-length")
    if declared and declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, f"body of {declared} bytes is over the limit of {limit} bytes")
    raw = await request.body()  # already read and bounded by RequestGuard
    if len(raw) > limit:
        raise HTTPException(413, f"body is over the limit of {limit} bytes")
    return raw


def require_credential(request: Request, settings: Settings) -> None:
    """Pass a request that carries some valid credential: a signed-in web session's cookie
    (without an `Authorization` header; the web page's scripts read the JSON API with it,
    `gateway/http/incident_views.py`), else a webhook credential (`gateway.http.auth.tenant_for`).
    Each route still decides which credential it takes. Raises HTTPException 401."""
    if "authorization" not in request.headers:
        sessions: Sessions | None = getattr(request.app.state, "sessions", None)
        if sessions is not None and sessions.read(request.cookies.get(COOKIE)) is not None:
            return
    tenant_for(request, settings)


async def read_body(request: Request, receive: Receive, limit: int) -> bytes:
    """The whole body, refusing (`BodyError` 413) a declared or actual size over `limit` bytes
    before reading more; 400 for a `Content-Length` that is no number."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not (declared.strip().isascii() and declared.strip().isdigit()):
            raise BodyError(f"Content-Length {declared[:40]!r} is not a number")
        if int(declared) > limit:
            raise BodyError(f"body of {declared} bytes is over the limit of {limit} bytes", 413)
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client went away (or was timed out)
            raise BodyError("the client disconnected before the whole body arrived")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyError(f"body is over the limit of {limit} bytes", 413)
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands the route the body already read, then waits on the client's."""
    sent = False

    async def again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again
