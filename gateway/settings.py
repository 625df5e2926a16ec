"""Settings for every part of Blast Radius, read once from the environment (and `.env`).

One `Settings` object is built in `main()` (the CLI) and passed down; nothing reads the
environment elsewhere. Every field is listed, with a comment, in `.env.example`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

TENANT_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


def default_data_dir() -> Path:
    """The per-user data folder: `$XDG_DATA_HOME/blast-radius` or `~/.local/share/blast-radius`."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "blast-radius"


def graph_name(tenant: str) -> str:
    """The FalkorDB graph of one organisation: `org_<tenant>` (tenant from trusted config only)."""
    if not TENANT_RE.match(tenant):
        raise ValueError(f"invalid tenant name {tenant!r}: use a-z, 0-9, '_' or '-'")
    return f"org_{tenant}"


class Settings(BaseSettings):
    """Every setting of the gateway and the workers.

    Environment names are given per field (`alias`); `.env` in the working directory is read too.
    Durations carry their unit in the name (`_ms`, `_s`).
    """

    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True
    )

    data_dir: Path = Field(default_factory=default_data_dir, alias="BLAST_DATA_DIR")
    host: str = Field("127.0.0.1", alias="BLAST_HOST")
    port: int = Field(8080, alias="BLAST_PORT", ge=0, le=65535)
    falkordb_url: SecretStr | None = Field(None, alias="FALKORDB_URL")
    webhook_tokens: Annotated[dict[str, SecretStr], NoDecode] = Field(
        default_factory=dict, alias="BLAST_WEBHOOK_TOKENS"
    )
    default_tenant: str = Field("demo", alias="BLAST_DEFAULT_TENANT")
    max_body_bytes: int = Field(16 * 1024 * 1024, alias="BLAST_MAX_BODY_BYTES", gt=0)
    default_severity: str = Field("unknown", alias="BLAST_DEFAULT_SEVERITY")
    incident_window_s: int = Field(900, alias="BLAST_INCIDENT_WINDOW_S", gt=0)
    correlation_hops: int = Field(3, alias="BLAST_CORRELATION_HOPS", ge=0, le=6)
    walk_hops: int = Field(6, alias="BLAST_WALK_HOPS", ge=1, le=6)
    workers: int = Field(2, alias="BLAST_WORKERS", ge=0, le=64)
    lease_ms: int = Field(30_000, alias="BLAST_LEASE_MS", gt=0)
    max_attempts: int = Field(5, alias="BLAST_MAX_ATTEMPTS", gt=0)
    query_timeout_ms: int = Field(1_000, alias="BLAST_QUERY_TIMEOUT_MS", gt=0)
    query_timeout_max_ms: int = Field(5_000, alias="BLAST_QUERY_TIMEOUT_MAX_MS", gt=0)
    shutdown_grace_s: float = Field(10.0, alias="BLAST_SHUTDOWN_GRACE_S", ge=0)
    chaos_step_delay_ms: int = Field(0, alias="BLAST_CHAOS_STEP_DELAY_MS", ge=0)
    chaos_slow_steps: float = Field(0.0, alias="BLAST_CHAOS_SLOW_STEPS", ge=0, le=1)
    chaos_halt_after_step: int = Field(0, alias="BLAST_CHAOS_HALT_AFTER_STEP", ge=0)

    @field_validator("webhook_tokens", mode="before")
    @classmethod
    def _parse_tokens(cls, value: object) -> object:
        """Parse `tenant=token,tenant2=token2` into a mapping; reject malformed pairs."""
        if not isinstance(value, str):
            return value
        tokens: dict[str, str] = {}
        for pair in filter(None, (p.strip() for p in value.split(","))):
            tenant, sep, token = pair.partition("=")
            tenant, token = tenant.strip(), token.strip()
            if not sep or not token:
                raise ValueError(f"BLAST_WEBHOOK_TOKENS entry for {tenant!r} has no token")
            if not TENANT_RE.match(tenant):
                raise ValueError(f"BLAST_WEBHOOK_TOKENS: invalid tenant name {tenant!r}")
            tokens[tenant] = token
        return tokens

    @field_validator("default_tenant")
    @classmethod
    def _check_tenant(cls, value: str) -> str:
        graph_name(value)
        return value

    @property
    def tenants(self) -> list[str]:
        """Tenants whose graphs the workers serve: those with a token, else the default tenant."""
        return sorted(self.webhook_tokens) or [self.default_tenant]

    @property
    def auth_required(self) -> bool:
        """True when webhook tokens are configured (then every request must carry one)."""
        return bool(self.webhook_tokens)
