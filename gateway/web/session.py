"""Web sign-in: a per-tenant viewer token in, a signed session cookie out, CSRF for forms.

- A person posts a viewer token (`Settings.viewers`: `BLAST_VIEWER_TOKENS`, else the webhook
  tokens); the token names the tenant, as a bearer token does on the API. Tokens are compared
  in constant time.
- The cookie `blast_session` is `<tenant>.<expires ms>.<nonce>.<signature>`, HttpOnly,
  SameSite=Strict, Path=/, Secure when the request came over TLS (the proxy's
  `X-Forwarded-Proto: https`, which uvicorn applies for a proxy on 127.0.0.1). The signature is
  HMAC-SHA256 keyed by `HMAC(viewer token, "blast-radius web session")`: no session store, and
  rotating a tenant's token signs out all of its sessions. Logout clears the cookie.
- CSRF: every writing form carries `csrf = HMAC(key, "csrf:" + nonce)`, bound to the session;
  a post without the right value is 403. The sign-in form has no session yet, so it is
  guarded by the `Origin` / `Sec-Fetch-Site` headers instead (a cross-site post is 403).
- Open mode (no token configured at all, which `Runtime.serve_http` only allows on a loopback
  address): every visitor gets a session for the default tenant without signing in, keyed by a
  random per-process key, so the CSRF check still holds. This matches the API, which takes no
  credential then either.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

from fastapi import HTTPException, Request, Response

from gateway.settings import Settings

COOKIE = "blast_session"
#: What the per-tenant signing key is derived for (so the key is never the token itself).
KEY_PURPOSE = b"blast-radius web session"


@dataclass(frozen=True)
class Session:
    """A signed-in viewer: the tenant whose graph they see, when the session ends (ms since
    the epoch, UTC), and its nonce (random, per sign-in) that CSRF tokens are bound to."""

    tenant: str
    expires_ms: int
    nonce: str
    csrf: str


class Sessions:
    """Issues and checks session cookies and CSRF tokens for one app (one `Settings`)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        #: Open mode's key; a restart signs every open-mode visitor in again, silently.
        self._process_key = secrets.token_bytes(32)

    @property
    def open_mode(self) -> bool:
        """True when no viewer or webhook token is configured: no sign-in (loopback only)."""
        return not self.settings.viewers

    def _key(self, tenant: str) -> bytes | None:
        if self.open_mode:
            return self._process_key if tenant == self.settings.default_tenant else None
        token = self.settings.viewers.get(tenant)
        if token is None:
            return None
        return hmac.new(token.get_secret_value().encode(), KEY_PURPOSE, hashlib.sha256).digest()

    def tenant_for_token(self, token: str) -> str | None:
        """The tenant whose viewer token this is, or None. Every tenant is compared (constant
        time each), so the time taken does not say which tenant came close."""
        found = None
        for tenant, known in self.settings.viewers.items():
            if hmac.compare_digest(token.strip().encode(), known.get_secret_value().encode()):
                found = tenant
        return found

    def issue(self, tenant: str) -> tuple[str, Session]:
        """A new session for `tenant`: the cookie value and the session it encodes."""
        key = self._key(tenant)
        assert key is not None, "issue() is only called for a tenant with a key"
        expires = int(time.time() * 1000) + self.settings.session_ttl_s * 1000
        nonce = secrets.token_urlsafe(16)
        body = f"{tenant}.{expires}.{nonce}"
        return f"{body}.{_sign(key, body)}", Session(tenant, expires, nonce, _csrf(key, nonce))

    def read(self, cookie: str | None) -> Session | None:
        """The session a cookie value holds, or None when it is missing, malformed, expired,
        for a tenant without a token now, or signed with another key."""
        if not cookie:
            return None
        parts = cookie.split(".")
        if len(parts) != 4 or not (parts[1].isascii() and parts[1].isdigit()):  # int('²') raises
            return None
        tenant, expires, nonce, signature = parts
        key = self._key(tenant)
        body = f"{tenant}.{expires}.{nonce}"
        # bytes: compare_digest refuses str with non-ASCII characters (a TypeError, so a 500)
        if key is None or not hmac.compare_digest(signature.encode(), _sign(key, body).encode()):
            return None
        if int(expires) < time.time() * 1000:
            return None
        return Session(tenant, int(expires), nonce, _csrf(key, nonce))

    def set_cookie(self, request: Request, response: Response, value: str) -> None:
        """Put the session cookie on `response`: HttpOnly, SameSite=Strict, Secure over TLS."""
        response.set_cookie(
            COOKIE, value, max_age=self.settings.session_ttl_s, path="/", httponly=True,
            samesite="strict", secure=request.url.scheme == "https",
        )  # fmt: skip

    @staticmethod
    def clear_cookie(request: Request, response: Response) -> None:
        """Remove the session cookie (logout)."""
        response.delete_cookie(
            COOKIE, path="/", httponly=True, samesite="strict",
            secure=request.url.scheme == "https",
        )  # fmt: skip


def _sign(key: bytes, body: str) -> str:
    return hmac.new(key, body.encode(), hashlib.sha256).hexdigest()


def _csrf(key: bytes, nonce: str) -> str:
    return hmac.new(key, f"csrf:{nonce}".encode(), hashlib.sha256).hexdigest()[:32]


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
