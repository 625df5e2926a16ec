"""Web sign-in, one person at a time: who is signed in, in which tenant, and CSRF for forms.

A person signs in one of two ways:

- **Their own viewer token** (`BLAST_VIEWER_TOKENS=tenant:person=token,…`): the token names
  both the tenant and the person. Tokens are compared in constant time, every one of them.
- **An authenticating proxy** (oauth2-proxy): a request from an address in
  `BLAST_TRUSTED_PROXIES` names the person in `X-Forwarded-Email` (oauth2-proxy's
  `--pass-user-headers`) or `X-Auth-Request-Email` (`--set-xauthrequest`, for nginx
  `auth_request`); `BLAST_PROXY_VIEWERS` says which tenant that email sees. The header from any
  other address is ignored: a browser could send it.

Either way the gateway opens a session: a random id (256 bits) in the cookie `blast_session`
(`<tenant>.<id>`; HttpOnly, SameSite=Strict, Path=/, Secure over TLS) and a
`(:WebSession {id: sha256(id), person, via, created_at, expires_at})` node in that tenant's
graph (the graph holds only the hash, so a copy of the graph opens no session). Signing out
deletes the node, so the cookie is dead at once on every gateway process, not when it expires.

CSRF: every writing form carries `csrf = HMAC(session id, "csrf")`, bound to the session; a
post without it is 403. The sign-in form has no session yet, so it is guarded by the `Origin` /
`Sec-Fetch-Site` headers instead (a cross-site post is 403).

Open mode (nothing configured: no webhook token, viewer token or proxy viewer, which
`Runtime.serve_http` only allows on a loopback address): every visitor gets a session for the
default tenant as the person `local`, kept in the cookie only (nothing is stored, so a script
without cookies adds nothing to the graph), and forms still carry CSRF bound to it. This
matches the API, which takes no credential then either.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import time
from dataclasses import dataclass
from typing import Literal

from fastapi import HTTPException, Request, Response

from adapters.falkordb import GraphStore, graph_name
from gateway.settings import Settings

COOKIE = "blast_session"
#: The identity headers an authenticating proxy sets, in the order they are read (oauth2-proxy:
#: `--pass-user-headers` sets the first, `--set-xauthrequest` the second).
IDENTITY_HEADERS = ("x-forwarded-email", "x-auth-request-email")
#: Who acts in open mode (no sign-in configured, loopback only).
LOCAL_PERSON = "local"
#: The name an acknowledgement, resolve, snooze, verdict or quiet window given in open mode
#: records (Slack's page, the ticket, the web and the CLI then show it): open mode tells no
#: person apart, so the record says that nobody signed in rather than a bare "local".
OPEN_MODE_NAME = f"{LOCAL_PERSON} (unauthenticated)"
#: Longest person name or email kept from a proxy header.
MAX_PERSON_CHARS = 200

Via = Literal["token", "proxy", "open"]


@dataclass(frozen=True)
class Session:
    """A signed-in person: the tenant whose graph they see, who they are (an email or name, as
    configured or as the proxy said), how they signed in, when the session ends (ms since the
    epoch, UTC), its secret id (the cookie's) and its CSRF token."""

    tenant: str
    person: str
    via: Via
    expires_ms: int
    sid: str
    csrf: str


class NotAViewer(Exception):
    """A trusted proxy named a person whom `BLAST_PROXY_VIEWERS` lets into no tenant."""

    def __init__(self, person: str) -> None:
        super().__init__(person)
        self.person = person


class Sessions:
    """Opens, reads and closes sessions for one app (one `Settings`, one `GraphStore`)."""

    def __init__(self, settings: Settings, store: GraphStore) -> None:
        self.settings = settings
        self.store = store
        self._proxies = [ipaddress.ip_network(n) for n in settings.trusted_proxies]

    @property
    def open_mode(self) -> bool:
        """True when nothing is configured to tell people apart: no sign-in (loopback only)."""
        return self.settings.web_open_mode

    @property
    def token_sign_in(self) -> bool:
        """True when people sign in with viewer tokens (the sign-in form is shown)."""
        return bool(self.settings.viewer_tokens)

    def person_for_token(self, token: str) -> tuple[str, str] | None:
        """`(tenant, person)` whose viewer token this is, or None. Every token is compared
        (constant time each), so the time taken does not say whose came close."""
        found = None
        given = token.strip().encode()
        for tenant, person, known in self.settings.viewers:
            if hmac.compare_digest(given, known.get_secret_value().encode()):
                found = (tenant, person)
        return found

    def proxy_identity(self, request: Request) -> str | None:
        """The person a trusted proxy says this request is from (lower-cased email), or None
        when the request did not come from an address in `BLAST_TRUSTED_PROXIES` (the socket's
        peer, before any `X-Forwarded-For`: `proxies.ForwardedFrom` records it) or carries no
        identity header."""
        if not self._proxies:
            return None
        peer = request.scope.get("state", {}).get("peer")
        try:
            address = ipaddress.ip_address(peer) if peer else None
        except ValueError:
            return None
        if address is None or not any(address in net for net in self._proxies):
            return None
        for header in IDENTITY_HEADERS:
            value = request.headers.get(header, "").strip().lower()
            if value:
                return value[:MAX_PERSON_CHARS]
        return None

    def tenant_for_proxy_person(self, person: str) -> str:
        """The tenant `BLAST_PROXY_VIEWERS` lets `person` see (the first entry matching the
        whole email, or its `@domain`). Raises `NotAViewer` when none does."""
        domain = "@" + person.rpartition("@")[2] if "@" in person else None
        for tenant, who in self.settings.proxy_viewers:
            if who == person or (domain is not None and who == domain):
                return tenant
        raise NotAViewer(person)

    def open(self, tenant: str, person: str, via: Via) -> tuple[str, Session]:
        """A new session for `person` in `tenant`, stored in its graph: the cookie value and
        the session. Raises `GraphUnavailable` as any graph write."""
        sid = secrets.token_urlsafe(32)
        expires = int(time.time() * 1000) + self.settings.session_ttl_s * 1000
        if via != "open":  # open mode stores nothing (a script without cookies adds no node)
            self.store.graph(graph_name(tenant)).rows(
                "web_session_open",
                {"id": _hash(sid), "person": person, "via": via, "expires_at": expires},
            )
        return f"{tenant}.{sid}", Session(tenant, person, via, expires, sid, _csrf(sid))

    def read(self, cookie: str | None) -> Session | None:
        """The session a cookie value holds, or None when it is missing, malformed, for a
        tenant the gateway does not serve, expired or signed out. One indexed graph read."""
        if not cookie:
            return None
        tenant, dot, sid = cookie.partition(".")
        if not dot or tenant not in self.settings.tenants or not 20 <= len(sid) <= 64:
            return None
        if not sid.isascii() or not all(c.isalnum() or c in "-_" for c in sid):
            return None
        if self.open_mode:  # nobody to tell apart: any well-formed id is the local person's
            expires = int(time.time() * 1000) + self.settings.session_ttl_s * 1000
            return Session(tenant, LOCAL_PERSON, "open", expires, sid, _csrf(sid))
        row = self.store.graph(graph_name(tenant)).one("web_session_get", {"id": _hash(sid)})
        if row is None:
            return None
        via: Via = row["via"]
        return Session(tenant, row["person"], via, row["expires_at"], sid, _csrf(sid))

    def close(self, session: Session) -> None:
        """Sign out: delete the session from the graph (every copy of the cookie is dead)."""
        self.store.graph(graph_name(session.tenant)).rows(
            "web_session_close", {"id": _hash(session.sid)}
        )

    def set_cookie(self, request: Request, response: Response, value: str) -> None:
        """Put the session cookie on `response`: HttpOnly, SameSite=Strict, Secure over TLS."""
        response.set_cookie(
            COOKIE, value, max_age=self.settings.session_ttl_s, path="/", httponly=True,
            samesite="strict", secure=request.url.scheme == "https",
        )  # fmt: skip

    @staticmethod
    def clear_cookie(request: Request, response: Response) -> None:
        """Remove the session cookie (sign-out)."""
        response.delete_cookie(
            COOKIE, path="/", httponly=True, samesite="strict",
            secure=request.url.scheme == "https",
        )  # fmt: skip


def _hash(sid: str) -> str:
    return hashlib.sha256(sid.encode()).hexdigest()


def _csrf(sid: str) -> str:
    return hmac.new(sid.encode(), b"csrf", hashlib.sha256).hexdigest()[:32]


def check_csrf(session: Session, given: str | None) -> None:
    """Raise HTTPException 403 unless `given` is this session's CSRF token."""
    if not given or not hmac.compare_digest(given.encode(), session.csrf.encode()):
        raise HTTPException(403, "missing or wrong CSRF token: reload the page and try again")


def check_same_origin(request: Request) -> None:
    """Raise HTTPException 403 for a cross-site form post (login CSRF): `Sec-Fetch-Site` other
    than same-origin / none, or an `Origin` that is not this host."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        raise HTTPException(403, f"cross-site form post refused (Sec-Fetch-Site: {site})")
    origin = request.headers.get("origin")
    if origin is not None:
        host = request.headers.get("host", "")
        if origin.split("://", 1)[-1] != host:
            raise HTTPException(403, "cross-site form post refused (Origin is another site)")
