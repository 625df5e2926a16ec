"""Webhook authentication: the tenant comes from the credential, never from the body.

Alertmanager and Grafana send `Authorization: Bearer <token>` or `Basic base64(user:pass)`
(Alertmanager's webhook_config and Grafana's webhook contact point docs). Bearer: the token names
the tenant. Basic: user = tenant, password = token.
Tokens are compared in constant time (`hmac.compare_digest`).
"""

from __future__ import annotations

import base64
import hmac

from fastapi import HTTPException, Request

from gateway.settings import Settings


def tenant_for(request: Request, settings: Settings) -> str:
    """The tenant of this request. With no tokens configured: the default tenant.

    Raises HTTPException 401 (with `WWW-Authenticate`) for a missing or wrong credential.
    """
    if not settings.auth_required:
        return settings.default_tenant
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    scheme = scheme.lower()
    found: str | None = None
    if scheme == "bearer" and value:
        for tenant, token in settings.webhook_tokens.items():
            if hmac.compare_digest(value.strip().encode(), token.get_secret_value().encode()):
                found = tenant
    elif scheme == "basic" and value:
        try:
            user, _, password = (
                base64.b64decode(value.strip(), validate=True).decode().partition(":")
            )
        except ValueError:  # binascii.Error, UnicodeDecodeError, non-ASCII text: all ValueError
            user, password = "", ""
        known = settings.webhook_tokens.get(user)
        expected = known.get_secret_value() if known else "\0no-such-tenant"
        if hmac.compare_digest(password.encode(), expected.encode()) and known:
            found = user
    if found is None:
        raise HTTPException(
            401,
            "missing or invalid credential: send 'Authorization: Bearer <token>' or basic auth "
            "(user = tenant, password = token) as configured in BLAST_WEBHOOK_TOKENS",
            headers={"WWW-Authenticate": 'Bearer realm="blast-radius"'},
        )
    return found
