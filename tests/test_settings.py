"""Settings: `.env.example` documents exactly the settings there are; tokens parse; secrets hide."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from gateway.settings import Settings, graph_name

ROOT = Path(__file__).resolve().parents[1]


def test_env_example_lists_every_setting_and_nothing_else():
    documented = set(re.findall(r"^([A-Z][A-Z0-9_]+)=", (ROOT / ".env.example").read_text(), re.M))
    declared = {field.alias for field in Settings.model_fields.values()}
    assert documented == declared


def test_every_setting_is_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    missing = [f.alias for f in Settings.model_fields.values() if f.alias not in readme]
    assert missing == []


def test_tokens_parse_per_tenant_and_never_print(monkeypatch):
    monkeypatch.setenv("BLAST_WEBHOOK_TOKENS", "acme=s3cret-1, beta=s3cret-2")
    settings = Settings()
    assert settings.tenants == ["acme", "beta"]
    assert settings.webhook_tokens["beta"].get_secret_value() == "s3cret-2"
    assert "s3cret" not in repr(settings) and "s3cret" not in str(settings.model_dump())


@pytest.mark.parametrize("value", ["acme", "acme=", "Bad Name=x", "../x=y"])
def test_malformed_tokens_are_refused(monkeypatch, value):
    monkeypatch.setenv("BLAST_WEBHOOK_TOKENS", value)
    with pytest.raises(ValidationError):
        Settings()


def test_graph_name_comes_only_from_valid_tenants():
    assert graph_name("acme") == "org_acme"
    with pytest.raises(ValueError):
        graph_name("acme}) MATCH (n")
