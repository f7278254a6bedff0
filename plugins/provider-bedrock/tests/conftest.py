"""The AWS credential chain sees only what a test gives it: no files of the machine's, no
instance metadata service to wait for."""

from __future__ import annotations

from pathlib import Path

import pytest

_AWS = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_BEARER_TOKEN_BEDROCK",
)


@pytest.fixture(autouse=True)
def _no_machine_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in _AWS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
