"""The services Hermes signs in to, as their own clients do (hermes-agent 0.19, the Codex CLI,
Qwen Code, GitHub's Copilot extensions): where to sign in, the public client id and scope,
and which model API the token then opens.

``--issuer`` moves a service's sign-in to another host with the same paths (GitHub
Enterprise, a self-hosted OpenID provider, a loopback server in tests)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from hermes_sdk.ladder import Endpoint


@dataclass(frozen=True)
class Service:
    name: str
    """The endpoint's name, and ``hermes login NAME``."""
    label: str
    flow: Literal["device", "pkce", "user_code"]
    """RFC 8628's device code, RFC 7636's browser sign-in, or MiniMax's user code (a
    device-like flow of its own: see ``usercode``)."""
    issuer: str
    client_id: str
    scope: str
    token_path: str
    base_url: str
    """The model API the token opens."""
    transport: str
    default_model: str
    models: tuple[str, ...] = ()
    device_path: str = ""
    authorize_path: str = ""
    redirect_port: int = 0
    """The loopback port the service's redirect URI names (0: any free one)."""
    redirect_path: str = "/callback"
    authorize_params: Mapping[str, str] = field(default_factory=dict)
    device_pkce: bool = False
    """The device request carries a PKCE challenge, the token request its verifier (Qwen)."""
    exchange_path: str = ""
    """A second step: the sign-in's token is traded for the model API's (Copilot's)."""
    api_host: str = ""
    """Where the exchange is asked (``{issuer}/api/v3`` for GitHub Enterprise)."""
    refresh_header: str = ""
    """A service that wants the refresh token in a header as well (Nous Portal)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Headers the model API expects from its client."""
    account_header: str = ""
    """A header naming the signed-in account, read from the sign-in (Codex's)."""
    options: Mapping[str, object] = field(default_factory=dict)
    """Passed to the transport (MiniMax's Messages API takes its token as a bearer)."""
    regions: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """``--region NAME``: another (issuer, model API) pair of the same service (MiniMax's
    China site)."""

    def endpoint(self, base_url: str | None = None, account: str | None = None) -> Endpoint:
        headers = dict(self.headers)
        if self.account_header and account:
            headers[self.account_header] = account
        return Endpoint(
            name=self.name,
            provider=self.transport,
            base_url=base_url or self.base_url,
            default_model=self.default_model,
            models=self.models or (self.default_model,),
            headers=headers,
            options=dict(self.options),
            notice=f"Signed in to {self.label} (hermes auth status; hermes logout {self.name})",
        )

    def exchange_url(self, issuer: str) -> str:
        """Where the sign-in's token is traded: the service's API host, or for another issuer
        (GitHub Enterprise) its ``/api/v3``."""
        host = self.api_host if issuer == self.issuer else f"{issuer.rstrip('/')}/api/v3"
        return f"{host}{self.exchange_path}"


SERVICES = (
    Service(
        name="nous",
        label="Nous Portal",
        flow="device",
        issuer="https://portal.nousresearch.com",
        client_id="hermes-cli",
        scope="inference:invoke",
        device_path="/api/oauth/device/code",
        token_path="/api/oauth/token",
        refresh_header="x-nous-refresh-token",
        base_url="https://inference-api.nousresearch.com/v1",
        transport="openai",
        default_model="Hermes-4-405B",
        models=("Hermes-4-405B", "Hermes-4-70B"),
    ),
    Service(
        name="copilot",
        label="GitHub Copilot",
        flow="device",
        issuer="https://github.com",
        client_id="Iv1.b507a08c87ecfe98",
        scope="read:user",
        device_path="/login/device/code",
        token_path="/login/oauth/access_token",
        exchange_path="/copilot_internal/v2/token",
        api_host="https://api.github.com",
        base_url="https://api.githubcopilot.com",
        transport="openai",
        default_model="gpt-4.1",
        models=("gpt-4.1", "gpt-4o", "claude-sonnet-4.5", "gemini-2.5-pro"),
        headers={
            "Editor-Version": "vscode/1.104.1",
            "Copilot-Integration-Id": "vscode-chat",
            "Openai-Intent": "conversation-edits",
        },
    ),
    Service(
        name="codex",
        label="OpenAI Codex (a ChatGPT plan)",
        flow="pkce",
        issuer="https://auth.openai.com",
        client_id="app_EMoamEEZ73f0CkXaXp7hrann",
        scope="openid profile email offline_access",
        authorize_path="/oauth/authorize",
        token_path="/oauth/token",
        redirect_port=1455,
        redirect_path="/auth/callback",
        authorize_params={
            "id_token_add_organizations": "true",
            "codex_cli_simplified_flow": "true",
        },
        base_url="https://chatgpt.com/backend-api/codex",
        transport="responses",
        default_model="gpt-5-codex",
        models=("gpt-5-codex", "gpt-5"),
        headers={"originator": "codex_cli_rs"},
        account_header="ChatGPT-Account-ID",
    ),
    Service(
        name="xai-oauth",
        label="xAI (Grok)",
        flow="device",
        issuer="https://auth.x.ai",
        client_id="b1a00492-073a-47ea-816f-4c329264a828",
        scope="openid profile email offline_access grok-cli:access api:access",
        device_path="/oauth2/device/code",
        token_path="/oauth2/token",
        base_url="https://api.x.ai/v1",
        transport="responses",
        default_model="grok-4.3",
        models=("grok-4.3", "grok-4.5"),
    ),
    Service(
        name="qwen-oauth",
        label="Qwen (Qwen Code sign-in)",
        flow="device",
        issuer="https://chat.qwen.ai",
        client_id="f0304373b74a44d2b584a3fb70ca9e56",
        scope="openid profile email model.completion",
        device_path="/api/v1/oauth2/device/code",
        token_path="/api/v1/oauth2/token",
        device_pkce=True,
        base_url="https://portal.qwen.ai/v1",
        transport="openai",
        default_model="qwen3-coder-plus",
        models=("qwen3-coder-plus",),
    ),
    Service(
        name="minimax-oauth",
        label="MiniMax (Coding Plan sign-in)",
        flow="user_code",
        issuer="https://api.minimax.io",
        client_id="78257093-7e40-4613-99e0-527b14b39113",
        scope="group_id profile model.completion",
        device_path="/oauth/code",
        token_path="/oauth/token",
        base_url="https://api.minimax.io/anthropic",
        transport="anthropic",
        default_model="MiniMax-M3",
        models=("MiniMax-M3", "MiniMax-M2.7", "MiniMax-M2.7-highspeed"),
        options={
            "bearer_auth": True,
            "context_windows": {
                "MiniMax-M3": 1_000_000,
                "MiniMax-M2.7": 204_800,
                "MiniMax-M2.7-highspeed": 204_800,
            },
        },
        regions={
            "global": ("https://api.minimax.io", "https://api.minimax.io/anthropic"),
            "cn": ("https://api.minimaxi.com", "https://api.minimaxi.com/anthropic"),
        },
    ),
)
BY_NAME = {service.name: service for service in SERVICES}
ALIASES = {
    # hermes-agent 0.19's names for its sign-ins (hermes_cli/auth.py, _PROVIDER_ALIASES)
    "openai-codex": "codex",
    "github": "copilot",
    "github-copilot": "copilot",
    "github-models": "copilot",
    "x-ai-oauth": "xai-oauth",
    "grok-oauth": "xai-oauth",
    "xai-grok-oauth": "xai-oauth",
    "qwen-portal": "qwen-oauth",
    "qwen-cli": "qwen-oauth",
    "minimax-portal": "minimax-oauth",
    "minimax-global": "minimax-oauth",
    "minimax_oauth": "minimax-oauth",
    # What a person types after ``hermes login`` (which only signs in): elsewhere these
    # name the API-key presets.
    "minimax": "minimax-oauth",
    "xai": "xai-oauth",
    "qwen": "qwen-oauth",
}
"""Other names for the sign-ins: ``hermes login openai-codex`` signs in to ``codex``."""
_GOOGLE = (
    "Hermes does not sign in with the Gemini CLI's or Antigravity's Google account: Google "
    "bans accounts that use them from other tools (hermes-agent removed them for that). Use "
    "a key (GOOGLE_API_KEY) or Vertex AI with gcloud auth application-default login "
    "(docs/user/models.md)"
)
_CLAUDE = (
    "Hermes does not reuse a Claude Code sign-in: Anthropic accepts a subscription's token "
    "only from Claude Code itself, and using it elsewhere means posing as Claude Code. Use "
    "an API key (ANTHROPIC_API_KEY; hermes auth add anthropic)"
)
DECLINED = {
    "google": _GOOGLE,
    "gemini": _GOOGLE,
    "google-gemini-cli": _GOOGLE,
    "google-antigravity": _GOOGLE,
    "antigravity": _GOOGLE,
    "claude": _CLAUDE,
    "claude-code": _CLAUDE,
    "anthropic": _CLAUDE,
}
"""Sign-ins people ask for that Hermes declines, with why and what to do instead."""
FIRST_POSITION = 450
"""After credential pools (400), before the API keys' rungs (510): a sign-in is asked for."""
