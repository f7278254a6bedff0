"""hermes-agent's sign-ins, brought over by ``hermes import hermes-agent --include-sign-ins``.

hermes-agent 0.19 keeps them in its ``auth.json`` under ``providers``: ``nous`` and
``minimax-oauth`` (their tokens, the portal and inference addresses, which name MiniMax's
region, an ISO expiry), ``openai-codex`` and ``xai-oauth``
(``tokens.access_token`` / ``refresh_token``, the expiry in the JWT), and Copilot's GitHub
token in its ``.env`` (``COPILOT_GITHUB_TOKEN``). Each becomes the sign-in of the service
that uses it here; one already signed in here is left as it is."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from hermes_commons.dotenv import read_dotenv
from hermes_plugin_auth.services import BY_NAME
from hermes_plugin_auth.store import AuthStore
from hermes_sdk.importing import HomeImport, ImportSection

THEIRS = {
    "nous": "nous",
    "openai-codex": "codex",
    "xai-oauth": "xai-oauth",
    "minimax-oauth": "minimax-oauth",
}
"""hermes-agent's provider id -> the service here."""
_COPILOT_KEY = "COPILOT_GITHUB_TOKEN"
"""Only the token hermes-agent's Copilot sign-in saved: a general GH_TOKEN is not one."""


def _epoch(value: Any) -> float | None:
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def _entry(name: str, state: Mapping[str, Any]) -> dict[str, Any] | None:
    from hermes_plugin_auth.oauth import Tokens, chatgpt_account, jwt_expiry

    raw = state.get("tokens")
    tokens: Mapping[str, Any] = raw if isinstance(raw, Mapping) else state
    access = tokens.get("access_token")
    if not access:
        return None
    service = BY_NAME[name]
    entry: dict[str, Any] = {
        "service": name,
        "issuer": str(state.get("portal_base_url") or service.issuer).rstrip("/"),
        "access_token": str(access),
        "refresh_token": tokens.get("refresh_token"),
        "expires_at": _epoch(state.get("expires_at")) or jwt_expiry(str(access)),
        "scope": state.get("scope"),
        "signed_in_at": time.time(),
        "imported_from": "hermes-agent",
    }
    if service.account_header:
        found = Tokens(str(access), None, None, id_token=tokens.get("id_token"))
        account = chatgpt_account(found)
        if account:
            entry["account_id"] = account
    inference = state.get("inference_base_url")
    if inference and str(inference).rstrip("/") != service.base_url:
        entry["base_url"] = str(inference)
    return entry


def found_sign_ins(source: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(service here, its sign-in) for each sign-in the hermes-agent home holds."""
    try:
        data = json.loads((source / "auth.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    providers = data.get("providers") if isinstance(data, dict) else None
    for theirs, ours in THEIRS.items():
        state = providers.get(theirs) if isinstance(providers, dict) else None
        entry = _entry(ours, state) if isinstance(state, Mapping) else None
        if entry is not None:
            yield ours, entry
    env = read_dotenv(source / ".env") if (source / ".env").is_file() else {}
    github = env.get(_COPILOT_KEY)
    if github:
        yield (
            "copilot",
            {
                "service": "copilot",
                "issuer": BY_NAME["copilot"].issuer,
                "access_token": github,
                "refresh_token": None,
                "expires_at": None,
                "signed_in_at": time.time(),
                "imported_from": "hermes-agent",
            },
        )


def import_sign_ins(request: HomeImport) -> ImportSection:
    section = ImportSection(kind="sign-ins", reads=["auth.json"])
    store = AuthStore(request.target)
    have = store.sign_ins()
    found = list(found_sign_ins(Path(request.source)))
    for name, _entry_found in found:
        if name in have:
            section.skip(name, "already signed in here")
        elif not request.include_sign_ins:
            section.left(
                name, f"sign in again: hermes login {name} (or import with --include-sign-ins)"
            )
        else:
            section.add(name)
    if request.include_sign_ins and not request.dry_run:
        with store.changing() as sign_ins:
            for name, entry in found:
                sign_ins.setdefault(name, entry)
    return section
