"""Settings: `.env.example` documents exactly the settings there are; tokens parse; secrets hide."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from adapters.falkordb import graph_name
from gateway.ops.upkeep import short_heartbeat_timeout
from gateway.settings import Settings

ROOT = Path(__file__).resolve().parents[1]

GOOD = "4b9d2c7e1f0a8b3c6d5e4f3a2b1c0d9e"
GOOD_A, GOOD_B = "9f2e4d6c8b0a1357", "7a5c3e1b9d8f6420"


def test_env_example_lists_every_setting_and_nothing_else():
    documented = set(re.findall(r"^([A-Z][A-Z0-9_]+)=", (ROOT / ".env.example").read_text(), re.M))
    declared = {field.alias for field in Settings.model_fields.values()}
    assert documented == declared


def test_every_setting_is_in_the_configuration_table():
    table = (ROOT / "docs" / "configuration.md").read_text()
    missing = [f.alias for f in Settings.model_fields.values() if f"`{f.alias}`" not in table]
    assert missing == []


def test_tokens_parse_per_tenant_and_never_print(monkeypatch):
    monkeypatch.setenv("BLAST_WEBHOOK_TOKENS", "acme=s3cret-1, beta=s3cret-2")
    settings = Settings()
    assert settings.tenants == ["acme", "beta"]
    assert settings.webhook_tokens["beta"].get_secret_value() == "s3cret-2"
    assert "s3cret" not in repr(settings) and "s3cret" not in str(settings.model_dump())


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("acme", "entry 1 has no 'tenant='"),
        ("acme=", "entry for 'acme' has no token"),
        ("Bad Name=x", "entry 1: the text before '=' is not a tenant name"),
        ("../x=y", "entry 1: the text before '=' is not a tenant name"),
        # a token pasted without its tenant: named by position, never shown
        (f"acme={GOOD_A},Zq9f8e7d6c5b4a3210", "entry 2 has no 'tenant='"),
        (f"acme={GOOD_A},Zq9f8e7d6c5b4a32==", "entry 2: the text before '=' is not a tenant"),
        # a rotation written as a second entry: the first token would be dropped silently
        (f"acme={GOOD_A},acme={GOOD_B}", "names tenant 'acme' twice"),
        # the token alone chooses the tenant
        (f"acme={GOOD_A},beta={GOOD_A}", "gives tenants 'acme' and 'beta' the same token"),
    ],
)
def test_malformed_tokens_are_refused_with_the_reason_and_no_secret(monkeypatch, value, reason):
    monkeypatch.setenv("BLAST_WEBHOOK_TOKENS", value)
    with pytest.raises(ValidationError) as raised:
        Settings()
    message = str(raised.value)
    assert reason in message
    for secret in (GOOD_A, GOOD_B, "Zq9f8e7d6c5b4a32"):
        assert secret not in message


def test_graph_name_comes_only_from_valid_tenants():
    assert graph_name("acme") == "org_acme"
    with pytest.raises(ValueError):
        graph_name("acme}) MATCH (n")


@pytest.mark.parametrize(
    "token",
    ["changeme-changeme-1", "test-bearer-token-123", "short1", "aaaaaaaaaaaaaaaaaaaa",
     "<your token here>12345", "my-example-token-value"],
)  # fmt: skip
def test_placeholder_and_weak_tokens_are_named_never_shown(monkeypatch, token):
    monkeypatch.setenv("BLAST_WEBHOOK_TOKENS", f"acme={token},beta={GOOD}")
    problems = Settings().placeholder_secrets()
    assert len(problems) == 1
    assert problems[0].startswith("BLAST_WEBHOOK_TOKENS[acme] ")
    assert token not in problems[0]


def test_dev_mode_accepts_placeholders(monkeypatch):
    monkeypatch.setenv("BLAST_WEBHOOK_TOKENS", "acme=changeme")
    monkeypatch.setenv("BLAST_DEV", "true")
    assert Settings().placeholder_secrets() == []


def test_a_placeholder_password_in_a_url_is_refused(monkeypatch):
    monkeypatch.setenv("FALKORDB_URL", "redis://:changeme@127.0.0.1:6380")
    assert Settings().placeholder_secrets() == [
        "FALKORDB_URL password looks like a placeholder (it contains 'changeme')"
    ]
    monkeypatch.setenv("FALKORDB_URL", "redis://127.0.0.1:6380")
    assert Settings().placeholder_secrets() == []


def test_env_example_copied_as_is_gives_the_defaults(tmp_path, monkeypatch):
    """`cp .env.example .env` must work: `KEY=` (empty) means the default, not ''."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text((ROOT / ".env.example").read_text())
    settings, defaults = Settings(), Settings(_env_file=None)
    assert settings.model_dump() == defaults.model_dump()
    assert settings.falkordb_url is None and settings.metrics_dir is None
    assert settings.placeholder_secrets() == []


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_services_refuse_to_start_with_a_placeholder(tmp_path, command):
    env = {
        "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path),
        "BLAST_DATA_DIR": str(tmp_path), "BLAST_WEBHOOK_TOKENS": "acme=test-bearer-token-123",
    }  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "gateway.cli", command],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "configuration error: BLAST_WEBHOOK_TOKENS[acme] looks like a placeholder (it contains "
        "'test') (set BLAST_DEV=true to allow)"
    )


def test_a_zero_heartbeat_timeout_is_off_with_the_check_off_and_refused_with_it_on(monkeypatch):
    # a trial wrote both lines to mean "off": serve refused to start, telling them to set the
    # line they had set
    monkeypatch.setenv("BLAST_HEARTBEAT_ALERTNAME", "off")
    monkeypatch.setenv("BLAST_HEARTBEAT_TIMEOUT", "0")
    off = Settings()
    assert off.heartbeat_alertname == "" and off.heartbeat_timeout_ms == 0
    assert short_heartbeat_timeout(off) is None
    monkeypatch.setenv("BLAST_HEARTBEAT_ALERTNAME", "Watchdog")
    with pytest.raises(ValidationError, match="BLAST_HEARTBEAT_ALERTNAME=off"):
        Settings()
