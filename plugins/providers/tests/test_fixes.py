"""Each kind of model failure ends with the step that fixes it, naming the setting or file
at fault, in the words of the missing-key error."""

from __future__ import annotations

import httpx
import pytest
from hermes_plugin_providers.fixes import fix_for

from hermes_commons.http import connect_failure
from hermes_sdk.ladder import Endpoint, LadderChoice
from hermes_sdk.models import ErrorKind, ProviderError, classify_http_error

HOME = "/home/me/.hermes"


def choice(source: str, key_names: tuple[str, ...] = ("OPENAI_API_KEY",)) -> LadderChoice:
    endpoint = Endpoint(
        name="mine",
        provider="openai",
        base_url="http://gpu:8000/v1",
        api_key_env=key_names[0] if key_names else None,
    )
    return LadderChoice(endpoint, "qwen-32b", ("k",) * len(key_names), source, key_names)


@pytest.mark.parametrize(
    ("source", "error", "named"),
    [
        ("OPENAI_API_KEY in .env", classify_http_error(401, "bad key"), "OPENAI_API_KEY"),
        ("OPENAI_API_KEY in .env", classify_http_error(401, "bad key"), f"{HOME}/.env"),
        ("OPENAI_API_KEY in .env", classify_http_error(402, "pay up"), "add credit"),
        (
            "model.base_url in config",
            ProviderError(ErrorKind.CONNECTION, "nothing answers at http://gpu:8000/v1"),
            f"check model.base_url (http://gpu:8000/v1) in {HOME}/config.yaml",
        ),
        (
            "providers.gpu in config",
            ProviderError(ErrorKind.TIMEOUT, "no answer within 60 s"),
            "check providers.gpu.base_url (http://gpu:8000/v1)",
        ),
        (
            "OPENAI_API_KEY in the environment",
            ProviderError(ErrorKind.CONNECTION, "cannot find the host"),
            "check this machine's network",
        ),
        ("model.base_url in config", classify_http_error(404, "no such model"), "'qwen-32b'"),
    ],
)
def test_each_failure_names_its_fix(source: str, error: ProviderError, named: str) -> None:
    fix = fix_for(choice(source), HOME)(error)
    assert fix is not None and named in fix
    told = error.with_fix(fix)
    assert str(told).endswith(fix) and told.fixed and told.kind is error.kind
    assert "check the API key" not in str(told)  # the generic hint gives way to the fix


def test_a_server_without_a_key_is_told_where_the_key_goes() -> None:
    fix = fix_for(choice("model.base_url in config", key_names=()), HOME)
    endpoint_fix = fix(classify_http_error(401, "key required"))
    assert endpoint_fix is not None
    assert f"put it in {HOME}/.env" in endpoint_fix and "model.api_key_env" in endpoint_fix


def test_a_refusal_by_policy_keeps_its_own_words() -> None:
    fix = fix_for(choice("OPENAI_API_KEY in .env"), HOME)
    assert fix(classify_http_error(400, "flagged by the content policy")) is None


@pytest.mark.parametrize(
    ("raised", "said"),
    [
        (httpx.ConnectError("[Errno -2] Name or service not known"), "cannot find the host"),
        (httpx.ConnectError("All connection attempts failed"), "nothing answers at"),
        (httpx.ConnectError("[Errno 111] Connection refused"), "is the server running"),
        (httpx.ConnectError("certificate verify failed"), "cannot connect to"),
    ],
)
def test_connection_failures_say_what_happened_in_words(raised: Exception, said: str) -> None:
    assert said in connect_failure("http://gpu:8000/v1", raised)


class _Tokens:
    async def token(self, *, renew: bool = False) -> str:
        return "t"


def test_a_sign_in_pools_failures_name_each_account() -> None:
    endpoint = Endpoint(name="codex", provider="responses", base_url="https://x.example/v1")

    def account(name: str) -> LadderChoice:
        return LadderChoice(endpoint, "m", key_names=(name,), token_source=_Tokens())

    alone = account("codex")
    pooled = LadderChoice(
        endpoint, "m", key_names=("codex",), token_source=_Tokens(), pool=(account("codex#2"),)
    )
    refused = ProviderError(ErrorKind.AUTH, "refused twice; sign in again: hermes login codex")
    assert fix_for(alone, HOME)(refused) is None  # its own words say it
    assert fix_for(pooled, HOME)(refused) == (
        "sign in again: hermes login codex; hermes login codex#2"
    )
    spent = fix_for(pooled, HOME)(ProviderError(ErrorKind.BILLING, "usage limit"))
    assert spent is not None and "codex, codex#2 has run out" in spent
    assert ".env" not in spent  # no key to replace: a sign-in
