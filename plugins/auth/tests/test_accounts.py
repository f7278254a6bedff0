"""MiniMax's two ways of saying when a token expires, and the order a service's accounts
are tried in."""

from __future__ import annotations

import time

import pytest
from hermes_plugin_auth.services import BY_NAME
from hermes_plugin_auth.store import accounts_of
from hermes_plugin_auth.testing import OAuthServer
from hermes_plugin_auth.usercode import expiry, refresh, user_code_flow

MINIMAX = BY_NAME["minimax-oauth"]


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        (900, 1_800_000_900.0),  # a lifetime in seconds
        (1_800_000_900_000, 1_800_000_900.0),  # an instant in epoch milliseconds
        (0, 1_800_000_001.0),  # never in the past: at least a second
    ],
)
def test_minimax_expiry_reads_seconds_and_epoch_milliseconds(said: int, expected: float) -> None:
    assert expiry(said, 1_800_000_000.0) == expected


def test_accounts_are_tried_by_number_and_other_services_are_not_theirs() -> None:
    sign_ins = {
        "codex#10": {},
        "codex#2": {},
        "codex": {},
        "codex#x": {},  # not an account: a name nobody gave
        "codexy": {},
        "nous#2": {},
        "codex#9": {},
    }
    assert [key for key, _ in accounts_of(sign_ins, "codex")] == [
        "codex",
        "codex#2",
        "codex#9",
        "codex#10",
    ]
    assert [key for key, _ in accounts_of(sign_ins, "nous")] == ["nous#2"]


def test_a_revoked_minimax_refresh_token_is_a_refusal_not_a_failure_for_now() -> None:
    from hermes_plugin_auth.oauth import SignInError

    with OAuthServer() as issuer:
        tokens = user_code_flow(MINIMAX, issuer.url, lambda _line: None, sleep=lambda _s: None)
        assert tokens.refresh_token and tokens.expires_at and tokens.expires_at > time.time()
        renewed = refresh(MINIMAX, issuer.url, tokens.refresh_token)
        assert renewed.access_token == issuer.issued[-1] != tokens.access_token
        issuer.revoke_refresh_tokens()
        with pytest.raises(SignInError) as raised:
            refresh(MINIMAX, issuer.url, str(renewed.refresh_token))
    assert not raised.value.temporary and "refused to renew" in str(raised.value)
