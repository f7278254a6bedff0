"""hermes-agent's config.yaml (and the settings it keeps in .env) as Hermes settings.

Every key is accounted for: mapped to the setting that means the same here (with the
value converted), or left with the reason it has no meaning here. A literal key written in
the config (``model.api_key``) moves to .env under a variable the config names, so no
secret stays in config.yaml.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_plugin_import_hermes_agent import workplace_map

PROVIDERS = {
    "openai-api": "openai",
    "openai": "openai",
    "openrouter": "openrouter",
    "anthropic": "anthropic",
    "claude": "anthropic",
}
"""hermes-agent provider ids whose endpoint is built in here, under our name."""
BUILTIN_KEYS = {
    "openai": "OPENAI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}
"""The variable each built-in endpoint reads its key from."""
PRESETS = {
    "deepseek": ("deepseek", "deepseek-chat", "deep-seek"),
    "fireworks": ("fireworks", "fireworks-ai", "fw"),
    "deepinfra": ("deepinfra", "deep-infra", "deepinfra-ai"),
    "nvidia": ("nvidia", "nvidia-nim", "nim", "build-nvidia", "nemotron"),
    "huggingface": ("huggingface", "hf", "hugging-face", "huggingface-hub"),
    "zai": ("zai", "glm", "z-ai", "z.ai", "zhipu"),
    "kimi-coding": ("kimi-coding", "kimi", "moonshot", "kimi-for-coding"),
    "minimax": ("minimax", "mini-max"),
    "alibaba": ("alibaba", "dashscope", "aliyun", "alibaba-cloud", "qwen-dashscope", "qwen"),
    "xai": ("xai", "grok", "x-ai", "x.ai"),
    "gemini": ("gemini", "google", "google-gemini", "google-ai-studio"),
}
"""hermes-agent's API-key providers (0.19: ``hermes_cli/providers.py``), by the id it
writes and the aliases it reads: hermes-plugin-provider-presets serves each under that id."""
PRESET_ALIASES = {alias: name for name, aliases in PRESETS.items() for alias in aliases}
PRESET_KEYS = {
    "deepseek": "DEEPSEEK_API_KEY",
    "fireworks": "FIREWORKS_API_KEY",
    "deepinfra": "DEEPINFRA_API_KEY",
    "nvidia": "NVIDIA_API_KEY",
    "huggingface": "HF_TOKEN",
    "zai": "GLM_API_KEY",
    "kimi-coding": "KIMI_API_KEY",
    "minimax": "MINIMAX_API_KEY",
    "alibaba": "DASHSCOPE_API_KEY",
    "xai": "XAI_API_KEY",
    "gemini": "GOOGLE_API_KEY",
}
"""The variable hermes-agent reads each one's key from first (a key written inline in its
config.yaml goes to .env under it)."""
SIGN_INS = {
    "nous": "nous",
    "openai-codex": "codex",
    "xai-oauth": "xai-oauth",
    "copilot": "copilot",
    "qwen-oauth": "qwen-oauth",
    "minimax-oauth": "minimax-oauth",
    "minimax-portal": "minimax-oauth",
    "minimax-global": "minimax-oauth",
    "minimax_oauth": "minimax-oauth",
    "github": "copilot",
    "github-copilot": "copilot",
    "github-models": "copilot",
    "qwen-portal": "qwen-oauth",
    "qwen-cli": "qwen-oauth",
    "x-ai-oauth": "xai-oauth",
    "grok-oauth": "xai-oauth",
    "xai-grok-oauth": "xai-oauth",
}
"""Providers hermes-agent signs in to, and the sign-in here (hermes-plugin-auth) that serves
each: its tokens come over with ``--include-sign-ins``, else ``hermes login NAME``."""
OAUTH_ONLY = frozenset({"copilot-acp"})
"""Providers hermes-agent signs in to that nothing here can use."""
TRANSPORTS = {"chat_completions": "openai", "anthropic_messages": "anthropic"}
BACKENDS = frozenset({"local", "docker", "ssh"})
TOOLSETS = {
    "file": "files",
    "terminal": "terminal",
    "web": "web",
    "search": "web",
    "skills": "skills",
    "memory": "memory",
    "session_search": "session_search",
    "todo": "planning",
    "clarify": "clarify",
    "delegation": "delegation",
    "cronjob": "cron",
}
"""hermes-agent toolsets and ours (the ``hermes-*`` composites mean all of them)."""
RULES = {
    "recursive delete": "recursive-delete",
    "find -delete": "find-delete",
    "world-writable": "world-writable",
    "world/other-writable": "world-writable",
    "recursive chown": "recursive-chown",
    "sql drop": "sql-destroy",
    "sql truncate": "sql-destroy",
    "sql delete without where": "sql-delete-all",
    "kill all processes": "kill-all",
    "force kill": "kill-by-name",
    "fork bomb": "fork-bomb",
    "pipe remote content to shell": "pipe-to-shell",
    "git reset --hard": "git-reset-hard",
    "git force push": "git-force-push",
    "git clean": "git-clean",
    "git branch force delete": "git-branch-delete",
    "stop/restart system service": "system-service",
    "write to block device": "block-device-write",
    "format filesystem": "block-device-write",
}
"""hermes-agent's dangerous-command descriptions (what an "always allow" answer writes to
command_allowlist) and the rule of ours that stands for the same danger."""
WEB_SEARCH = {"searxng": "searxng", "brave_free": "brave", "tavily": "tavily", "ddgs": "duckduckgo"}
PLATFORM_ENV = re.compile(r"^(?P<platform>[A-Z]+)_(?P<what>ALLOWED_USERS|ALLOW_ALL_USERS)$")
PLATFORMS_HERE = frozenset(
    {
        "telegram",
        "matrix",
        "email",
        "discord",
        "slack",
        "sms",
        "signal",
        "bluebubbles",
        "irc",
        "mattermost",
        "google_chat",
        "feishu",
        "dingtalk",
        "wecom",
        "qqbot",
        "teams",
    }
)
_WA_BRIDGE_ENV = (
    "read by the bridge itself (bridge.js): set it where you run the bridge "
    "(docs/user/whatsapp-bridge.md)"
)
_WA_LISTENER = "the platforms share one HTTP listener here: gateway.http_host and http_port"
_CHANNELS = "Hermes limits Discord by server (platforms.discord.allowed_guilds), not by channel"
_THREADS = "Hermes always answers a mention in a server channel in a thread of its own"
_NO_BOTS = "Hermes never answers other bots"
_HISTORY = "Hermes reads the messages sent to it, not a channel's history"
_PINGS = "Hermes's messages on Discord ping no one"
_FILES = "Hermes does not download attachments: the agent is told that a file was sent"
_SLASH = "hermes-agent's slash commands; Hermes registers none on Discord"
_ROLES = "Hermes lets people in by user id (allowed_users), not by role"
_PROMPTS = "Hermes has no per-channel prompts or skills"
_LABEL = "only a label: Hermes names the home chat by its id (cron.home_chats)"
_HOME_THREAD = "Hermes's cron delivers to the home channel itself, not into a thread"
_WEBHOOK = "hermes-agent's webhook receiver: set up platforms.webhook here yourself"
CHAT_LEFT: dict[str, dict[str, str]] = {
    "discord": {
        "allowed_roles": _ROLES,
        "dm_role_auth_guild": _ROLES,
        "allowed_channels": _CHANNELS,
        "ignored_channels": _CHANNELS,
        "free_response_channels": "Hermes answers mentions in every channel of allowed_guilds, "
        "and require_mention holds in all of them",
        "ignore_no_mention": "Hermes answers a message meant for it (a mention, a reply to it, "
        "a message in its thread) and no other",
        "auto_thread": _THREADS,
        "no_thread_channels": _THREADS,
        "thread_require_mention": "Hermes answers without a mention in the threads it started, "
        "and needs one elsewhere",
        "allow_bots": _NO_BOTS,
        "bots_require_inline_mention": _NO_BOTS,
        "reactions": "Hermes marks no message with reactions",
        "history_backfill": _HISTORY,
        "history_backfill_limit": _HISTORY,
        "missed_message_backfill": _HISTORY,
        **{
            f"missed_message_backfill_{k}": _HISTORY
            for k in ("channels", "window_seconds", "limit", "max_dispatches")
        },
        "allow_mentions": _PINGS,
        **{f"allow_mention_{k}": _PINGS for k in ("everyone", "roles", "users", "replied_user")},
        "approval_mentions": _PINGS,
        "reply_to_mode": "Hermes's answer replies to the message with its first part only "
        "(hermes-agent's 'first')",
        "allow_any_attachment": _FILES,
        "max_attachment_bytes": _FILES,
        "command_sync_policy": _SLASH,
        "hide_slash_commands": _SLASH,
        "proxy": "Hermes's Discord platform has no proxy setting",
        "server_actions": "limits hermes-agent's Discord tool; Hermes has no such tool",
        "channel_prompts": _PROMPTS,
        "channel_skill_bindings": _PROMPTS,
        "home_channel_name": _LABEL,
        "home_channel_thread_id": _HOME_THREAD,
    },
    "slack": {
        "allowed_channels": "Hermes does not limit Slack by channel: platforms.slack.allowed_users "
        "says who may talk to it",
        "free_response_channels": "Hermes's require_mention holds in every channel, with no "
        "exception by channel",
        "strict_mention": "Hermes answers without a mention in the threads it answers in; "
        "its one mention rule is require_mention",
        "mention_patterns": "Hermes knows it is addressed by an @mention, not by text patterns",
        "allow_bots": _NO_BOTS,
        "reactions": "Hermes marks no message with reactions",
        "channel_prompts": _PROMPTS,
        "channel_skill_bindings": _PROMPTS,
        "home_channel_name": _LABEL,
        "home_channel_thread_id": _HOME_THREAD,
    },
    "webhook": {name: _WEBHOOK for name in ("enabled", "port", "max_body_bytes", "body_max_bytes")},
}
"""Discord, Slack and webhook settings of hermes-agent's with no meaning here, by their
config.yaml key under ``discord:`` / ``slack:`` and their .env name (``DISCORD_`` + the key
in capitals); the tokens are secrets and keep their names."""
ENV_SETTINGS = frozenset(
    {
        "TERMINAL_ENV",
        "TERMINAL_SSH_HOST",
        "TERMINAL_SSH_USER",
        "TERMINAL_SSH_PORT",
        "TERMINAL_SSH_KEY",
        "TERMINAL_CWD",
        "MESSAGING_CWD",
        "SEARXNG_URL",
        *(f"MATRIX_{name}" for name in ("HOMESERVER", "USER_ID", "REQUIRE_MENTION")),
        *(
            f"EMAIL_{name}"
            for name in ("ADDRESS", "IMAP_HOST", "IMAP_PORT", "SMTP_HOST", "SMTP_PORT")
        ),
        "EMAIL_POLL_INTERVAL",
        *(
            f"{platform}_{name}"
            for platform in ("DISCORD", "SLACK")
            for name in ("REQUIRE_MENTION", "HOME_CHANNEL")
        ),
        *(
            f"{platform.upper()}_{key.upper()}"
            for platform, keys in CHAT_LEFT.items()
            for key in keys
        ),
    }
)
"""Settings hermes-agent keeps in .env; here .env holds secrets only, so they move."""
ENV_RENAMES = {"BRAVE_SEARCH_API_KEY": "BRAVE_API_KEY"}

WHY_LEFT = {
    "_config_version": "hermes-agent's own file version",
    "display": "how hermes-agent's terminal looks; Hermes has its own",
    "dashboard": "hermes-agent's web dashboard; Hermes has none",
    "agent": "hermes-agent's prompt steering and gateway timers; Hermes has no such setting",
    "terminal": "a knob of hermes-agent's backends that Hermes's backends do not have",
    "auxiliary": "Hermes has one side-task model (auxiliary.provider/model), set from "
    "auxiliary.compression",
    "gateway": "hermes-agent's gateway internals; Hermes's gateway works differently",
    "plugins": "hermes-agent's plugin names, which are not Hermes plugins",
    "mcp_servers": "an MCP option Hermes does not have",
    "compression": "an internal of hermes-agent's compressor",
    "approvals": "a prompt of hermes-agent's that Hermes does not show",
    "memory": "Hermes always keeps USER.md",
    "skills": "Hermes does not render or disable skills by setting",
    "delegation": "Hermes's subagents use the parent's endpoint, or delegation.provider",
    "cron": "a setting of hermes-agent's scheduler, not of Hermes's",
    "discord": "a setting of hermes-agent's Discord adapter that Hermes's does not have",
    "slack": "a setting of hermes-agent's Slack adapter that Hermes's does not have",
    "webhook": _WEBHOOK,
}
"""Why a key of that section has no meaning here (the first part of its dotted name)."""
DEFAULT_WHY = "no setting of Hermes means this"


@dataclass
class MappedConfig:
    config: dict[str, Any] = field(default_factory=dict)
    """Hermes settings, ready to write as config.yaml."""
    secrets: dict[str, str] = field(default_factory=dict)
    """Keys found inline in the config, now to be kept in .env under these names."""
    mapped: list[tuple[str, str]] = field(default_factory=list)
    """(hermes-agent key, what it became here)."""
    left: list[tuple[str, str]] = field(default_factory=list)
    """(hermes-agent key, why it has no meaning here)."""
    env_settings: set[str] = field(default_factory=set)
    """.env names that were settings, moved into config.yaml (not to copy to .env)."""


def leaves(data: Any, prefix: str = "") -> list[str]:
    """Dotted paths of every leaf value (an empty mapping counts as a leaf)."""
    if isinstance(data, Mapping) and data:
        found = []
        for key, value in data.items():
            found += leaves(value, f"{prefix}.{key}" if prefix else str(key))
        return found
    return [prefix] if prefix else []


def endpoint_name(name: str) -> str:
    """A name our endpoints accept (lower case, starting with a letter)."""
    cleaned = re.sub(r"[^a-z0-9_-]+", "-", name.lower()).strip("-_") or "custom"
    return cleaned if cleaned[0].isalpha() else f"p-{cleaned}"[:64]


class _Mapper:
    def __init__(
        self,
        source: Mapping[str, Any],
        env: Mapping[str, str],
        plugin_folders: Collection[str] = (),
    ) -> None:
        self.source = source
        self.env = env
        self.plugin_folders = frozenset(plugin_folders)
        self.out = MappedConfig()
        self.taken: set[str] = set()

    # --- bookkeeping ------------------------------------------------------------------

    def get(self, path: str) -> Any:
        node: Any = self.source
        for part in path.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return None
            node = node[part]
        return node

    def take(self, path: str) -> Any:
        """The value at ``path``, marked as handled (with everything under it)."""
        self.taken.add(path)
        return self.get(path)

    def put(self, target: str, value: Any, source: str) -> None:
        node = self.out.config
        *parents, last = target.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
        self.out.mapped.append((source, target))

    def from_env(self, name: str, target: str, convert: Callable[[str], Any] = str) -> None:
        """``.env``'s ``name``, when set, as ``target`` in config (through ``convert``): it
        is read from there no more."""
        value = self.env.get(name, "").strip()
        if value:
            self.out.env_settings.add(name)
            self.put(target, convert(value), f".env {name}")

    def secret(self, name: str, value: str, source: str) -> str:
        self.out.secrets[name] = value
        self.out.mapped.append((source, f".env {name}"))
        return name

    def is_taken(self, path: str) -> bool:
        parts = path.split(".")
        return any(".".join(parts[:end]) in self.taken for end in range(1, len(parts) + 1))

    # --- sections ---------------------------------------------------------------------

    def model(self) -> None:
        model = self.take("model")
        if isinstance(model, str):
            if model.strip():
                self.put("model.default", model.strip(), "model")
            return
        if not isinstance(model, Mapping):
            return
        default = model.get("default") or model.get("model") or model.get("name")
        if default:
            self.put("model.default", str(default), "model.default")
        provider = str(model.get("provider") or "").strip()
        base_url = model.get("base_url") or model.get("api_base")
        key = model.get("api_key")
        if provider in ("", "auto") and not base_url:
            pass
        elif provider in ("custom", "", "auto") or provider in ("ollama", "vllm", "llamacpp"):
            if base_url:
                self.put("model.base_url", str(base_url), "model.base_url")
            if key:
                env = self.secret("CUSTOM_API_KEY", str(key), "model.api_key")
                self.put("model.api_key_env", env, "model.api_key")
        else:
            name = self.provider(provider, base_url, key, model.get("api_mode"), "model")
            if name:
                self.put("model.provider", name, "model.provider")
        if model.get("api_mode") and provider in ("custom", "", "auto"):
            transport = TRANSPORTS.get(str(model["api_mode"]))
            if transport:
                self.put("model.transport", transport, "model.api_mode")
        if isinstance(model.get("context_length"), int) and model["context_length"] >= 256:
            self.put("model.context_length", model["context_length"], "model.context_length")
        for key_name in model:
            if key_name not in {
                "default",
                "model",
                "name",
                "provider",
                "base_url",
                "api_base",
                "api_key",
                "api_mode",
                "context_length",
            }:
                self.out.left.append((f"model.{key_name}", "not a setting of Hermes's models"))

    def provider(
        self, provider: str, base_url: Any, key: Any, api_mode: Any, where: str
    ) -> str | None:
        """Our endpoint name for a hermes-agent provider (creating a providers entry for a
        custom one); None if it cannot be used here."""
        if provider in PROVIDERS and not base_url:
            ours = PROVIDERS[provider]
            if key:
                self.secret(BUILTIN_KEYS[ours], str(key), f"{where}.api_key")
            return ours
        if provider.lower() in PRESET_ALIASES and not base_url:
            ours = PRESET_ALIASES[provider.lower()]
            if key:
                self.secret(PRESET_KEYS[ours], str(key), f"{where}.api_key")
            return ours
        if provider == "bedrock" and not base_url:
            return self.bedrock(where)
        if provider in SIGN_INS and not base_url:
            return SIGN_INS[provider]
        if provider in OAUTH_ONLY:
            self.out.left.append(
                (f"{where}.provider", f"{provider!r} signs in with OAuth, which Hermes cannot use")
            )
            return None
        name = endpoint_name(provider.removeprefix("custom:"))
        entries = self.out.config.setdefault("providers", {})
        if name in entries or not base_url:
            if name not in entries and not base_url:
                self.out.left.append(
                    (f"{where}.provider", f"{provider!r} has no base_url to reach it by")
                )
                return None
            return name
        entry: dict[str, Any] = {"base_url": str(base_url)}
        if key:
            entry["api_key_env"] = self.secret(
                f"{name.upper().replace('-', '_')}_API_KEY", str(key), f"{where}.api_key"
            )
        transport = TRANSPORTS.get(str(api_mode or ""))
        if transport:
            entry["transport"] = transport
        entries[name] = entry
        self.out.mapped.append((f"{where}.provider", f"providers.{name}"))
        return name

    def bedrock(self, where: str) -> str:
        """hermes-agent's Bedrock provider signs with the AWS credential chain, as ours does:
        an endpoint in the region its .env names (else us-east-1)."""
        region = self.env.get("AWS_REGION") or self.env.get("AWS_DEFAULT_REGION") or "us-east-1"
        entries = self.out.config.setdefault("providers", {})
        entries.setdefault(
            "bedrock",
            {
                "base_url": f"https://bedrock-runtime.{region}.amazonaws.com",
                "transport": "bedrock",
            },
        )
        self.out.mapped.append((f"{where}.provider", "providers.bedrock"))
        return "bedrock"

    def providers(self) -> None:
        named = self.take("providers")
        listed = self.take("custom_providers")
        items: list[tuple[str, Any]] = []
        if isinstance(named, Mapping):
            items += [(str(k), v) for k, v in named.items()]
        if isinstance(listed, list):
            items += [
                (str(v.get("name", f"custom-{i}")), v)
                for i, v in enumerate(listed)
                if isinstance(v, Mapping)
            ]
        for key, entry in items:
            if not isinstance(entry, Mapping):
                continue
            name = endpoint_name(str(entry.get("name") or key))
            base_url = entry.get("base_url") or entry.get("url") or entry.get("api")
            if not base_url:
                self.out.left.append(
                    (f"providers.{key}", "no base_url: hermes-agent ignores it too")
                )
                continue
            ours: dict[str, Any] = {"base_url": str(base_url)}
            key_env = entry.get("key_env") or entry.get("api_key_env")
            if key_env:
                ours["api_key_env"] = str(key_env)
            elif entry.get("api_key"):
                ours["api_key_env"] = self.secret(
                    f"{name.upper().replace('-', '_')}_API_KEY",
                    str(entry["api_key"]),
                    f"providers.{key}.api_key",
                )
            transport = TRANSPORTS.get(str(entry.get("api_mode") or entry.get("transport") or ""))
            if transport:
                ours["transport"] = transport
            models = entry.get("models")
            if isinstance(models, Mapping):
                models = list(models)
            if isinstance(models, list) and models:
                ours["models"] = [str(m) for m in models]
            default = entry.get("default_model") or entry.get("model")
            if default:
                ours["default_model"] = str(default)
            if isinstance(entry.get("context_length"), int) and entry["context_length"] >= 256:
                ours["context_length"] = entry["context_length"]
            self.out.config.setdefault("providers", {})[name] = ours
            self.out.mapped.append((f"providers.{key}", f"providers.{name}"))

    def fallbacks(self) -> None:
        entries: list[Any] = []
        for path in ("fallback_providers", "fallback_model"):
            value = self.take(path)
            entries += value if isinstance(value, list) else [value] if value else []
        ours = []
        for position, entry in enumerate(entries):
            if not isinstance(entry, Mapping) or not entry.get("provider"):
                continue
            name = self.provider(
                str(entry["provider"]),
                entry.get("base_url"),
                entry.get("api_key"),
                entry.get("api_mode"),
                f"fallback_providers.{position}",
            )
            if name is None:
                continue
            item = {"provider": name}
            if entry.get("model"):
                item["model"] = str(entry["model"])
            if item not in ours:
                ours.append(item)
        if ours:
            self.put("model.fallback_providers", ours, "fallback_providers")

    def agent(self) -> None:
        turns = self.take("agent.max_turns") or self.take("max_turns")
        if isinstance(turns, int):
            self.put("agent.max_iterations", min(max(turns, 1), 1000), "agent.max_turns")
        retries = self.take("agent.api_max_retries")
        if isinstance(retries, int):
            self.put("agent.retries", min(max(retries, 0), 10), "agent.api_max_retries")
        personas = self.take("agent.personalities")
        if isinstance(personas, Mapping):
            # A name's instructions, as text or as {system_prompt: ...} (both shapes occur).
            kept = {
                str(name): text
                for name, value in personas.items()
                if (text := value if isinstance(value, str) else _prompt_of(value))
            }
            if kept:
                self.put("agent.personalities", kept, "agent.personalities")
        toolsets = self.take("toolsets")
        if isinstance(toolsets, list) and not any(str(t).startswith("hermes-") for t in toolsets):
            ours = sorted({TOOLSETS[str(t)] for t in toolsets if str(t) in TOOLSETS})
            if ours:
                self.put("agent.toolsets", ours, "toolsets")
            for name in toolsets:
                if str(name) not in TOOLSETS:
                    self.out.left.append((f"toolsets: {name}", "Hermes has no such toolset"))

    def terminal(self) -> None:
        backend = self.take("terminal.backend") or self.env.get("TERMINAL_ENV")
        if backend in BACKENDS:
            self.put("agent.backend", str(backend), "terminal.backend")
        elif backend:
            self.out.left.append(
                ("terminal.backend", f"Hermes has no {backend!r} backend (local, docker or ssh)")
            )
        passthrough = self.take("terminal.env_passthrough")
        if isinstance(passthrough, list) and passthrough:
            self.put(
                "terminal.env_passthrough",
                [str(n) for n in passthrough],
                "terminal.env_passthrough",
            )
        image = self.take("terminal.docker_image")
        if image:
            self.put("docker.image", str(image), "terminal.docker_image")
        cpus = self.take("terminal.container_cpu")
        if isinstance(cpus, int | float) and cpus > 0:
            self.put("docker.cpus", float(cpus), "terminal.container_cpu")
        memory = self.take("terminal.container_memory")
        if isinstance(memory, int) and memory > 0:
            self.put("docker.memory", f"{memory}m", "terminal.container_memory")
        network = self.take("terminal.docker_network")
        if isinstance(network, bool):
            self.put("docker.network", "bridge" if network else "none", "terminal.docker_network")
        mount = self.take("terminal.docker_mount_cwd_to_workspace")
        if backend == "docker" or mount is not None:
            self.put(
                "docker.mount_workspace", bool(mount), "terminal.docker_mount_cwd_to_workspace"
            )
        for ours, theirs in (
            ("host", "HOST"),
            ("user", "USER"),
            ("port", "PORT"),
            ("key_file", "KEY"),
        ):
            value = self.take(f"terminal.ssh_{theirs.lower()}") or self.env.get(
                f"TERMINAL_SSH_{theirs}"
            )
            if value:
                if ours == "port":
                    value = int(value)
                self.put(f"ssh.{ours}", value, f"terminal.ssh_{theirs.lower()}")
        cwd = (
            self.take("terminal.cwd")
            or self.env.get("MESSAGING_CWD")
            or self.env.get("TERMINAL_CWD")
        )
        if isinstance(cwd, str) and cwd.strip() not in ("", ".", "auto", "cwd"):
            self.put("gateway.cwd", cwd, "terminal.cwd")
        self.out.env_settings |= {name for name in ENV_SETTINGS if name in self.env}

    def approvals(self) -> None:
        mode = self.take("approvals.mode")
        if mode is False or mode == "off":
            self.put("approvals.mode", "off", "approvals.mode")
        elif mode in ("manual", "smart"):
            self.put("approvals.mode", mode, "approvals.mode")
        else:  # closed by default: its default (smart) lets a model wave commands through
            self.out.left.append(
                (
                    "approvals.mode",
                    "not set, so hermes-agent used smart; Hermes keeps its "
                    "default, manual (set approvals.mode: smart to match)",
                )
            )
        timeout = self.take("approvals.timeout")
        if isinstance(timeout, int | float) and 0 < timeout <= 3600:
            self.put("approvals.timeout_seconds", float(timeout), "approvals.timeout")
        deny = self.take("approvals.deny")
        if isinstance(deny, list) and deny:
            self.put("approvals.deny", [str(p).lower() for p in deny], "approvals.deny")
        allow = self.take("command_allowlist")
        ours: list[str] = []
        for entry in allow if isinstance(allow, list) else []:
            text = str(entry).strip()
            rule = next((r for d, r in RULES.items() if text.lower().startswith(d)), None)
            if rule is not None:
                ours.append(rule)
            elif any(ch in text for ch in "*?["):
                ours.append(text)
            elif text and not any(op in text for op in (";", "&", "|", ">", "<", "`", "$(")):
                ours.append(f"[{text[0]}]{text[1:]}")  # a glob that matches the command exactly
            else:
                self.out.left.append(
                    (f"command_allowlist: {text}", "a description Hermes has no rule for")
                )
        if ours:
            self.put("approvals.allow", list(dict.fromkeys(ours)), "command_allowlist")

    def memory_and_skills(self) -> None:
        for theirs, ours in (
            ("memory.memory_char_limit", "memory.memory_chars"),
            ("memory.user_char_limit", "memory.user_chars"),
        ):
            value = self.take(theirs)
            if isinstance(value, int):
                self.put(ours, min(max(value, 200), 100_000), theirs)
        for key in ("memory.write_approval", "skills.write_approval"):
            value = self.take(key)
            if isinstance(value, bool):
                self.put(key, value, key)
        enabled = self.take("memory.memory_enabled")
        if enabled is False:
            already = self.out.config.get("plugins", {}).get("disabled", [])
            self.put("plugins.disabled", [*already, "memory-builtin"], "memory.memory_enabled")
        provider = self.take("memory.provider")
        if provider and str(provider) in self.plugin_folders:
            # Its folder comes over with the other plugin folders (compat-hermes-agent).
            self.put("memory.provider", str(provider), "memory.provider")
        elif provider:
            self.out.left.append(
                (
                    "memory.provider",
                    f"{provider!r} is a memory provider bundled with hermes-agent, not a "
                    "plugin folder of this home: Hermes cannot load it",
                )
            )
        nudge = self.take("memory.nudge_interval")
        if isinstance(nudge, int) and nudge >= 0:
            self.put("learning.nudge_every_turns", nudge, "memory.nudge_interval")
        dirs = self.take("skills.external_dirs")
        if isinstance(dirs, list) and dirs:
            self.put("skills.external_dirs", [str(d) for d in dirs], "skills.external_dirs")

    def compression(self) -> None:
        enabled = self.take("compression.enabled")
        if isinstance(enabled, bool):
            self.put("compression.enabled", enabled, "compression.enabled")
        threshold = self.take("compression.threshold")
        if isinstance(threshold, int | float) and 0 < threshold <= 1:
            self.put("compression.threshold", float(threshold), "compression.threshold")
        protect = self.take("compression.protect_last_n")
        if isinstance(protect, int) and protect >= 1:
            self.put("compression.protect_last_n", protect, "compression.protect_last_n")
        for task in ("compression", "approval"):
            block = self.get(f"auxiliary.{task}")
            if not isinstance(block, Mapping):
                continue
            self.take(f"auxiliary.{task}.provider")
            self.take(f"auxiliary.{task}.model")
            provider = str(block.get("provider") or "auto")
            if provider != "auto" or block.get("base_url"):
                name = self.provider(
                    provider, block.get("base_url"), block.get("api_key"), None, f"auxiliary.{task}"
                )
                if name and "auxiliary" not in self.out.config:
                    self.put("auxiliary.provider", name, f"auxiliary.{task}.provider")
            if block.get("model") and "model" not in self.out.config.get("auxiliary", {}):
                self.put("auxiliary.model", str(block["model"]), f"auxiliary.{task}.model")
            for key in ("base_url", "api_key"):
                if block.get(key):
                    self.take(f"auxiliary.{task}.{key}")

    def delegation_and_cron(self) -> None:
        for theirs, ours, low, high in (
            ("delegation.max_concurrent_children", "delegation.max_concurrent_children", 1, 32),
            ("delegation.max_spawn_depth", "delegation.max_depth", 1, 5),
            ("delegation.max_iterations", "delegation.max_iterations", 1, 1000),
            ("delegation.max_summary_chars", "delegation.max_summary_chars", 200, 100_000),
            ("cron.max_parallel_jobs", "cron.max_parallel", 1, 64),
        ):
            value = self.take(theirs)
            if isinstance(value, int) and value > 0:
                self.put(ours, min(max(value, low), high), theirs)
        model = self.take("delegation.model")
        if model:
            self.put("delegation.model", str(model), "delegation.model")
        provider = self.take("delegation.provider")
        if provider:
            base_url = self.take("delegation.base_url")
            key = self.take("delegation.api_key")
            name = self.provider(
                str(provider), base_url, key, self.take("delegation.api_mode"), "delegation"
            )
            if name:
                self.put("delegation.provider", name, "delegation.provider")
        zone = self.take("timezone")
        if isinstance(zone, str) and zone.strip():
            self.put("cron.timezone", zone.strip(), "timezone")

    def mcp(self) -> None:
        servers = self.get("mcp_servers")
        if not isinstance(servers, Mapping):
            return
        for name, server in servers.items():
            if not isinstance(server, Mapping):
                continue
            ours: dict[str, Any] = {}
            for key in ("command", "args", "env", "url", "headers", "enabled", "cwd"):
                if key in server:
                    self.taken.add(f"mcp_servers.{name}.{key}")
                    ours[key] = _env_refs(server[key])
            if "timeout" in server:
                self.taken.add(f"mcp_servers.{name}.timeout")
                ours["timeout"] = min(float(server["timeout"]), 3600.0)
            if "connect_timeout" in server:
                self.taken.add(f"mcp_servers.{name}.connect_timeout")
                ours["connect_timeout"] = min(float(server["connect_timeout"]), 600.0)
            if "url" in server:
                self.taken.add(f"mcp_servers.{name}.transport")
                ours["transport"] = "sse" if server.get("transport") == "sse" else "streamable_http"
            tools = server.get("tools")
            if isinstance(tools, Mapping):
                kept = {k: list(tools[k]) for k in ("include", "exclude") if k in tools}
                self.taken |= {f"mcp_servers.{name}.tools.{k}" for k in kept}
                if kept:
                    ours["tools"] = kept
            self.out.config.setdefault("mcp_servers", {})[str(name)] = ours
            self.out.mapped.append((f"mcp_servers.{name}", f"mcp_servers.{name}"))

    def web(self) -> None:
        backend = self.take("web.search_backend") or self.take("web.backend")
        if backend in WEB_SEARCH:
            self.put("web.search.backend", WEB_SEARCH[str(backend)], "web.search_backend")
        if self.env.get("SEARXNG_URL"):
            self.put("web.search.searxng_url", self.env["SEARXNG_URL"], ".env SEARXNG_URL")

    def matrix_and_email(self) -> None:
        """hermes-agent's MATRIX_* and EMAIL_* settings (its secrets keep their names:
        MATRIX_ACCESS_TOKEN, MATRIX_PASSWORD and EMAIL_PASSWORD are read as they are)."""
        env = self.env
        for theirs, ours in (("HOMESERVER", "homeserver"), ("USER_ID", "user_id")):
            if env.get(f"MATRIX_{theirs}"):
                self.put(
                    f"platforms.matrix.{ours}",
                    env[f"MATRIX_{theirs}"].strip(),
                    f".env MATRIX_{theirs}",
                )
        if env.get("MATRIX_REQUIRE_MENTION"):
            value = env["MATRIX_REQUIRE_MENTION"].strip().lower() not in ("0", "false", "no")
            self.put("platforms.matrix.require_mention", value, ".env MATRIX_REQUIRE_MENTION")
        for theirs in ("ADDRESS", "IMAP_HOST", "SMTP_HOST"):
            if env.get(f"EMAIL_{theirs}"):
                self.put(
                    f"platforms.email.{theirs.lower()}",
                    env[f"EMAIL_{theirs}"].strip(),
                    f".env EMAIL_{theirs}",
                )
        if not env.get("EMAIL_ADDRESS"):
            return
        # hermes-agent reads IMAP over TLS always, and sends by SMTP over TLS on 465 and with
        # STARTTLS on any other port (587 unless set).
        imap_port = _port(env.get("EMAIL_IMAP_PORT"), 993)
        smtp_port = _port(env.get("EMAIL_SMTP_PORT"), 587)
        self.put("platforms.email.imap_port", imap_port, ".env EMAIL_IMAP_PORT")
        self.put("platforms.email.smtp_port", smtp_port, ".env EMAIL_SMTP_PORT")
        self.put("platforms.email.tls", "implicit", ".env EMAIL_IMAP_PORT")
        smtp_tls = "implicit" if smtp_port == 465 else "starttls"
        self.put("platforms.email.smtp_tls", smtp_tls, ".env EMAIL_SMTP_PORT")
        if env.get("EMAIL_POLL_INTERVAL", "").strip().isdigit():
            seconds = int(env["EMAIL_POLL_INTERVAL"])
            self.put("platforms.email.poll_seconds", seconds, ".env EMAIL_POLL_INTERVAL")

    def allow(self, platform: str, users: str, source: str) -> None:
        """``platforms.<platform>.allowed_users`` (or ``allow_all``) from hermes-agent's
        comma-separated list."""
        found = [u.strip() for u in users.split(",") if u.strip()]
        if "*" in found:
            self.put(f"platforms.{platform}.allow_all", True, source)
            return
        if platform == "discord":  # hermes-agent also takes names, resolved when it connects
            ids = []
            for entry in found:
                cleaned = _discord_id(entry)
                if cleaned.isdigit():
                    ids.append(cleaned)
                else:
                    self.out.left.append(
                        (
                            f"{source}: {entry}",
                            "a Discord username: Hermes lets people in by numeric user id "
                            "(Developer Mode on, then right-click > Copy User ID)",
                        )
                    )
            found = ids
        if found:
            self.put(f"platforms.{platform}.allowed_users", list(dict.fromkeys(found)), source)

    def first(self, platform: str, key: str) -> tuple[Any, str]:
        """hermes-agent's value of a Discord or Slack setting and where it is, from the place
        hermes-agent reads first (its ``discord:`` / ``slack:`` section, then
        ``platforms.NAME.extra``, then .env); a value it overrules is left, saying so."""
        found = []
        for path in (f"{platform}.{key}", f"platforms.{platform}.extra.{key}"):
            value = self.take(path)
            if value is not None:
                found.append((value, path))
        name = f"{platform.upper()}_{key.upper()}"
        if self.env.get(name, "").strip():
            found.append((self.env[name].strip(), f".env {name}"))
        for _, path in found[1:]:
            self.out.left.append((path, f"hermes-agent used {found[0][1]} instead"))
        return found[0] if found else (None, "")

    def discord_and_slack(self) -> None:
        """hermes-agent's Discord and Slack settings; what has no meaning here is left, by
        CHAT_LEFT. Their tokens are secrets that keep their names: DISCORD_BOT_TOKEN,
        SLACK_BOT_TOKEN, SLACK_APP_TOKEN (hermes-agent always uses Socket Mode, Hermes's
        default ``mode``) and SLACK_SIGNING_SECRET."""
        for platform in ("discord", "slack"):
            value, where = self.first(platform, "require_mention")
            if value is not None:
                self.put(f"platforms.{platform}.require_mention", _flag(value), where)
            home = f"{platform.upper()}_HOME_CHANNEL"
            if self.env.get(home, "").strip():
                self.put(f"cron.home_chats.{platform}", self.env[home].strip(), f".env {home}")
        # An allowlist in config.yaml counts only where .env has none (.env's is read above).
        used = ".env DISCORD_ALLOWED_USERS" if self.env.get("DISCORD_ALLOWED_USERS") else None
        for path in ("discord.allow_from", "platforms.discord.extra.allow_from"):
            users = self.take(path)
            if users is None:
                continue
            if used:
                self.out.left.append((path, f"hermes-agent used {used} instead"))
                continue
            used = path
            if isinstance(users, list):
                users = ",".join(str(user) for user in users)
            self.allow("discord", f"{users},{self.env.get('GATEWAY_ALLOWED_USERS', '')}", path)
        for platform, reasons in CHAT_LEFT.items():
            section = self.get(platform)
            for path in leaves(section, platform) if isinstance(section, Mapping) else []:
                if not self.is_taken(path):
                    self.taken.add(path)
                    key = path.partition(".")[2].split(".")[0]
                    self.out.left.append((path, reasons.get(key, WHY_LEFT[platform])))
            for name in sorted(self.env):
                prefix, _, rest = name.partition("_")
                if prefix == platform.upper() and rest.lower() in reasons:
                    self.out.left.append((f".env {name}", reasons[rest.lower()]))

    def whatsapp(self) -> None:
        """hermes-agent's WhatsApp Cloud API settings (``WHATSAPP_CLOUD_*`` in .env). Its
        secrets keep their names in .env, where the whatsapp platform reads them; who may
        write moves to config (phone numbers, as the Cloud API writes them: digits only)."""
        env = self.env
        everyone = env.get("GATEWAY_ALLOWED_USERS", "")
        for name in ("WHATSAPP_CLOUD_ALLOWED_USERS", "WHATSAPP_CLOUD_ALLOW_FROM"):
            if name in env:
                self.out.env_settings.add(name)
                numbers = ",".join(
                    "".join(ch for ch in entry if ch.isdigit()) or entry.strip()
                    for entry in f"{env[name]},{everyone}".split(",")
                )
                self.allow("whatsapp", numbers, f".env {name}")
                break
        if str(env.get("WHATSAPP_CLOUD_ALLOW_ALL_USERS", "")).strip().lower() in ("1", "true"):
            self.out.env_settings.add("WHATSAPP_CLOUD_ALLOW_ALL_USERS")
            self.put("platforms.whatsapp.allow_all", True, ".env WHATSAPP_CLOUD_ALLOW_ALL_USERS")
        for name, ours in (("WEBHOOK_PATH", "path"), ("API_VERSION", "api_version")):
            value = env.get(f"WHATSAPP_CLOUD_{name}", "").strip()
            if value:
                source = f"WHATSAPP_CLOUD_{name}"
                self.out.env_settings.add(source)
                value = value.removeprefix("v") if ours == "api_version" else value
                self.put(f"platforms.whatsapp.{ours}", value, f".env {source}")
        for name in ("WHATSAPP_CLOUD_WEBHOOK_HOST", "WHATSAPP_CLOUD_WEBHOOK_PORT"):
            if name in env:
                self.out.env_settings.add(name)
                self.out.left.append((f".env {name}", _WA_LISTENER))
        home = env.get("WHATSAPP_CLOUD_HOME_CHANNEL", "").strip()
        if home:
            self.out.env_settings.add("WHATSAPP_CLOUD_HOME_CHANNEL")
            home = "".join(ch for ch in home if ch.isdigit()) or home
            self.put("cron.home_chats.whatsapp", home, ".env WHATSAPP_CLOUD_HOME_CHANNEL")
        for name in sorted(env):
            if name.startswith(("WHATSAPP_CLOUD_DM_", "WHATSAPP_CLOUD_GROUP_")):
                self.out.env_settings.add(name)
                self.out.left.append(
                    (f".env {name}", "the Cloud API reaches one person at a time; who may "
                     "write is platforms.whatsapp.allowed_users (and pairing)")
                )  # fmt: skip
        self.whatsapp_bridge()

    def whatsapp_bridge(self) -> None:
        """hermes-agent's WhatsApp bridge to a personal account (``WHATSAPP_*`` without
        ``CLOUD``, and ``platforms.whatsapp.extra`` in config.yaml): the whatsapp_bridge
        platform talks to the same bridge, which the user now runs on its own."""
        env = self.env
        mode = env.get("WHATSAPP_MODE", "").strip().lower()
        if mode == "cloud":
            self.out.env_settings.add("WHATSAPP_MODE")
        elif mode or _on(env.get("WHATSAPP_ENABLED")):
            for name in ("WHATSAPP_MODE", "WHATSAPP_ENABLED"):
                if name in env:
                    self.out.env_settings.add(name)
            why = f"run the bridge yourself with --mode {mode or 'self-chat'}"
            why += " (docs/user/whatsapp-bridge.md)"
            if mode != "bot":
                why += (
                    "; in self-chat mode it passes only your chat with yourself: put your own "
                    "number in platforms.whatsapp_bridge.allowed_users"
                )
            else:
                why += (
                    "; with WHATSAPP_DM_POLICY=pairing in its environment, or its own "
                    "allowlist lets nobody through (Hermes' allowed_users decides then)"
                )
            self.out.left.append((".env WHATSAPP_MODE", why))
        bridged = bool(mode and mode != "cloud") or _on(env.get("WHATSAPP_ENABLED"))
        policy = env.get("WHATSAPP_DM_POLICY", "").strip().lower()
        if policy:
            self.out.env_settings.add("WHATSAPP_DM_POLICY")
            if policy == "pairing":
                self.put("platforms.whatsapp_bridge.pairing", True, ".env WHATSAPP_DM_POLICY")
            elif policy == "disabled":
                self.out.left.append(
                    (".env WHATSAPP_DM_POLICY", "hermes-agent answered no direct messages; "
                     "Hermes answers the people in platforms.whatsapp_bridge.allowed_users")
                )  # fmt: skip
            elif policy != "allowlist":
                self.out.left.append(
                    (".env WHATSAPP_DM_POLICY", "who may write is platforms.whatsapp_bridge."
                     "allowed_users (and pairing: true)")
                )  # fmt: skip
        groups = env.get("WHATSAPP_GROUP_POLICY", "").strip().lower()
        if bridged and groups in ("", "pairing", "disabled"):  # hermes-agent ignored groups
            self.put("platforms.whatsapp_bridge.groups", False, ".env WHATSAPP_GROUP_POLICY")
        for name in _WA_GROUPS:
            if name in env:
                self.out.env_settings.add(name)
                self.out.left.append(
                    (f".env {name}", "Hermes answers a group when an allowed person mentions "
                     "the bot or replies to it (platforms.whatsapp_bridge.require_mention)")
                )  # fmt: skip
        bridge = "platforms.whatsapp_bridge"
        self.from_env("WHATSAPP_REQUIRE_MENTION", f"{bridge}.require_mention", _flag)
        self.from_env("WHATSAPP_MENTION_PATTERNS", f"{bridge}.mention_patterns", _patterns)
        self.from_env("WHATSAPP_HOME_CHANNEL", "cron.home_chats.whatsapp_bridge", _wa_numbers)
        for name in sorted(env):
            if name in _WA_BRIDGE_OWN:
                self.out.env_settings.add(name)
                self.out.left.append((f".env {name}", _WA_BRIDGE_ENV))
        for ours, theirs in (
            ("allowed_users", "allow_from"),
            ("require_mention", "require_mention"),
            ("mention_patterns", "mention_patterns"),
        ):
            for path in (f"platforms.whatsapp.extra.{theirs}", f"whatsapp.{theirs}"):
                value = self.take(path)
                bridge = self.out.config.get("platforms", {}).get("whatsapp_bridge", {})
                set_in_env = ours in bridge or (ours == "allowed_users" and "allow_all" in bridge)
                if value is None:
                    continue
                if set_in_env:  # .env's, read above, counts first (as in hermes-agent)
                    self.out.left.append((path, f"hermes-agent used its .env {ours} instead"))
                    continue
                if ours == "allowed_users":
                    listed = ",".join(map(str, value)) if isinstance(value, list) else str(value)
                    self.allow("whatsapp_bridge", _wa_numbers(listed), path)
                elif ours == "mention_patterns":
                    wake = (
                        [str(v) for v in value]
                        if isinstance(value, list)
                        else _patterns(str(value))
                    )
                    self.put(f"platforms.whatsapp_bridge.{ours}", wake, path)
                else:
                    self.put(f"platforms.whatsapp_bridge.{ours}", _flag(value), path)
        port = self.take("platforms.whatsapp.extra.bridge_port")
        if port is not None:
            where = "platforms.whatsapp.extra.bridge_port"
            self.put("platforms.whatsapp_bridge.bridge_url", f"http://127.0.0.1:{port}", where)
        session = self.take("platforms.whatsapp.extra.session_path")
        if session is not None:
            where = "platforms.whatsapp.extra.session_path"
            self.put("platforms.whatsapp_bridge.session_path", str(session), where)

    def signal(self) -> None:
        """hermes-agent's Signal settings: the daemon's address and the account
        (``SIGNAL_HTTP_URL``, ``SIGNAL_ACCOUNT``) stay in .env, where the signal platform
        reads them."""
        env = self.env
        self.from_env("SIGNAL_REQUIRE_MENTION", "platforms.signal.require_mention", _on)
        self.from_env("SIGNAL_HOME_CHANNEL", "cron.home_chats.signal")
        if "SIGNAL_GROUP_ALLOWED_USERS" in env:
            self.out.env_settings.add("SIGNAL_GROUP_ALLOWED_USERS")
            self.out.left.append(
                (".env SIGNAL_GROUP_ALLOWED_USERS", "hermes-agent's list of the groups it "
                 "answered; here any group answers an allowed person's mention "
                 "(platforms.signal.require_mention)")
            )  # fmt: skip

    def bluebubbles(self) -> None:
        """hermes-agent's BlueBubbles settings: the server's address and password
        (``BLUEBUBBLES_SERVER_URL``, ``BLUEBUBBLES_PASSWORD``) stay in .env, where the
        bluebubbles platform reads them."""
        env = self.env
        ours = "platforms.bluebubbles"
        self.from_env("BLUEBUBBLES_REQUIRE_MENTION", f"{ours}.require_mention", _on)
        self.from_env("BLUEBUBBLES_SEND_READ_RECEIPTS", f"{ours}.read_receipts", _on)
        self.from_env("BLUEBUBBLES_MENTION_PATTERNS", f"{ours}.mention_patterns", _patterns)
        self.from_env("BLUEBUBBLES_HOME_CHANNEL", "cron.home_chats.bluebubbles")
        for name in (
            "BLUEBUBBLES_WEBHOOK_HOST",
            "BLUEBUBBLES_WEBHOOK_PORT",
            "BLUEBUBBLES_WEBHOOK_PATH",
        ):
            if name in env:
                self.out.env_settings.add(name)
                self.out.left.append(
                    (f".env {name}", "Hermes registers its webhook on the gateway's shared "
                     "listener (gateway.http_port); when the Mac is another machine, set "
                     "platforms.bluebubbles.webhook_url to where it reaches that listener")
                )  # fmt: skip

    def sms(self) -> None:
        """hermes-agent's Twilio settings: the secrets (``TWILIO_*``) and the public webhook
        address (``SMS_WEBHOOK_URL``) stay in .env, where the sms platform reads them."""
        self.from_env("SMS_HOME_CHANNEL", "cron.home_chats.sms")
        if "SMS_INSECURE_NO_SIGNATURE" in self.env:
            self.out.env_settings.add("SMS_INSECURE_NO_SIGNATURE")
            self.out.left.append(
                (".env SMS_INSECURE_NO_SIGNATURE", "Hermes checks every text's Twilio signature")
            )
        for name in ("SMS_WEBHOOK_HOST", "SMS_WEBHOOK_PORT"):
            if name in self.env:
                self.out.env_settings.add(name)
                self.out.left.append((f".env {name}", _WA_LISTENER))
        if "TWILIO_ACCOUNT_SID" in self.env and "SMS_WEBHOOK_PORT" not in self.env:
            self.out.left.append(
                (".env TWILIO_ACCOUNT_SID", "hermes-agent took texts on port 8080; here they "
                 "come to the gateway's shared listener (gateway.http_port): point your proxy "
                 "there")
            )  # fmt: skip

    def platforms(self) -> None:
        """Who may talk to the agent: hermes-agent keeps it in .env, Hermes in config."""
        everyone = self.env.get("GATEWAY_ALLOWED_USERS", "")
        for name, given in sorted(self.env.items()):
            value = given
            match = PLATFORM_ENV.match(name)
            if match is None or match["platform"] == "GATEWAY":
                continue
            platform = match["platform"].lower()
            if platform == "qq":  # hermes-agent's QQ_* settings are its qqbot platform's
                platform = "qqbot"
            self.out.env_settings.add(name)
            users = f"{value},{everyone}"
            if platform == "whatsapp":  # the bridge's; the Cloud API's are WHATSAPP_CLOUD_*
                platform = "whatsapp_bridge"
                users = _wa_numbers(users)
            elif platform not in PLATFORMS_HERE:
                self.out.left.append((f".env {name}", f"Hermes has no {platform} platform"))
                continue
            if match["what"] == "ALLOW_ALL_USERS":
                if value.strip().lower() in ("1", "true", "yes"):
                    self.put(f"platforms.{platform}.allow_all", True, f".env {name}")
                continue
            self.allow(platform, users, f".env {name}")
        self.matrix_and_email()
        self.discord_and_slack()
        self.whatsapp()
        self.sms()
        self.signal()
        self.bluebubbles()
        workplace_map.irc(self)
        workplace_map.mattermost(self)
        workplace_map.google_chat(self)
        workplace_map.teams(self)
        workplace_map.feishu(self)
        workplace_map.dingtalk(self)
        workplace_map.wecom(self)
        workplace_map.qqbot(self)
        for name in ("GATEWAY_ALLOWED_USERS", "GATEWAY_ALLOW_ALL_USERS"):
            if name in self.env:
                self.out.env_settings.add(name)
        behaviour = self.take("unauthorized_dm_behavior")
        if behaviour in ("pair", "ignore"):
            self.put("platforms.telegram.pairing", behaviour == "pair", "unauthorized_dm_behavior")
        per_user = self.take("group_sessions_per_user")
        if isinstance(per_user, bool):
            self.put(
                "gateway.group_sessions",
                "per_user" if per_user else "shared",
                "group_sessions_per_user",
            )
        stream = self.take("streaming.enabled")
        if isinstance(stream, bool):
            self.put("gateway.stream", stream, "streaming.enabled")

    def plugin_names(self) -> None:
        """hermes-agent's ``plugins.enabled`` / ``disabled`` name its plugins, which run here
        through compat-hermes-agent: enabled ones go into ``plugins.foreign`` (Hermes's
        ``plugins.enabled`` is an allow-list of its own plugins). A name that a Hermes plugin
        also has is left, saying so."""
        ours = hermes_plugin_names()
        for key in ("plugins.enabled", "plugins.disabled"):
            value = self.take(key)
            names = [str(n) for n in value if isinstance(n, str)] if isinstance(value, list) else []
            theirs = [name for name in names if name not in ours]
            for name in names:
                if name in ours:
                    self.out.left.append(
                        (
                            f"{key}: {name}",
                            f"{name!r} is also the name of a Hermes plugin; a hermes-agent "
                            "plugin of that name cannot run here",
                        )
                    )
            if theirs:  # their enabled list is the one that opts foreign plugins in here
                self.put("plugins.foreign" if key == "plugins.enabled" else key, theirs, key)

    def run(self) -> MappedConfig:
        for step in (
            self.plugin_names,
            self.providers,  # first: the model may name one of them (custom:NAME)
            self.model,
            self.fallbacks,
            self.agent,
            self.terminal,
            self.approvals,
            self.memory_and_skills,
            self.compression,
            self.delegation_and_cron,
            self.mcp,
            self.web,
            self.platforms,
        ):
            step()
        for path in leaves(self.source):
            if not self.is_taken(path) and not any(path == key for key, _ in self.out.left):
                section = path.split(".")[0]
                self.out.left.append((path, WHY_LEFT.get(section, DEFAULT_WHY)))
        return self.out


def _env_refs(value: Any) -> Any:
    """``${env:NAME}`` (hermes-agent's other spelling) as ``${NAME}``, the one ours reads."""
    if isinstance(value, str):
        return re.sub(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}", r"${\1}", value)
    if isinstance(value, list):
        return [_env_refs(item) for item in value]
    if isinstance(value, Mapping):
        return {str(k): _env_refs(v) for k, v in value.items()}
    return value


def map_config(
    source: Mapping[str, Any], env: Mapping[str, str], plugin_folders: Collection[str] = ()
) -> MappedConfig:
    """Hermes settings for hermes-agent's ``source`` config and ``env`` (its .env);
    ``plugin_folders`` are the names of the home's ``plugins/`` folders."""
    return _Mapper(source, env, plugin_folders).run()


def hermes_plugin_names() -> frozenset[str]:
    """The names of the installed Hermes plugins (their entry points; nothing imported)."""
    from importlib import metadata

    return frozenset(entry.name for entry in metadata.entry_points(group="hermes.plugins"))


def _flag(value: Any) -> bool:
    """A yes/no as hermes-agent's Discord and Slack adapters read it (only a no is false)."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() not in ("false", "0", "no", "off")


def _discord_id(entry: str) -> str:
    """A Discord allowlist entry without the ``<@...>`` or ``user:`` hermes-agent accepts."""
    entry = entry.strip()
    if entry.startswith("<@") and entry.endswith(">"):
        entry = entry[2:-1].lstrip("!")
    if entry.lower().startswith("user:"):
        entry = entry[5:]
    return entry.strip()


def _port(value: str | None, default: int) -> int:
    text = (value or "").strip()
    return int(text) if text.isdigit() and 0 < int(text) < 65536 else default


_WA_GROUPS = (
    "WHATSAPP_GROUP_POLICY",
    "WHATSAPP_GROUP_ALLOWED_USERS",
    "WHATSAPP_FREE_RESPONSE_CHATS",
)
_WA_BRIDGE_OWN = frozenset(
    {
        "WHATSAPP_REPLY_PREFIX",
        "WHATSAPP_FORWARD_OWNER_MESSAGES",
        "WHATSAPP_MAX_MESSAGE_LENGTH",
        "WHATSAPP_CHUNK_DELAY_MS",
        "WHATSAPP_SEND_TIMEOUT_MS",
        "WHATSAPP_DEBUG",
        "WHATSAPP_NPM_INSTALL_TIMEOUT",
    }
)
"""hermes-agent's settings that its bridge (bridge.js) reads from its own environment."""


def _on(value: str | None) -> bool:
    return str(value or "").strip().lower() in ("1", "true", "yes", "on")


def _wa_numbers(value: str) -> str:
    """hermes-agent's WhatsApp ids as numbers (``+1 555-123-4567`` and
    ``15551234567@s.whatsapp.net`` are ``15551234567``); a group's or a privacy id, and
    ``*``, stay as they are."""
    found = []
    for entry in (e.strip() for e in value.split(",")):
        if entry.endswith(("@g.us", "@lid")) or entry == "*":
            found.append(entry)
            continue
        digits = "".join(ch for ch in entry.split("@")[0].split(":")[0] if ch.isdigit())
        found.append(digits or entry)
    return ",".join(found)


def _patterns(value: str) -> list[str]:
    """hermes-agent's mention patterns: a JSON list, or patterns by comma or line."""
    try:
        listed = json.loads(value)
    except ValueError:
        listed = None
    if not isinstance(listed, list):
        listed = [p.strip() for line in value.splitlines() for p in line.split(",")]
    return [str(p) for p in listed if str(p).strip()]


def _prompt_of(value: object) -> str:
    """A personality given as a mapping: its system prompt, else nothing."""
    if not isinstance(value, Mapping):
        return ""
    text = value.get("system_prompt") or value.get("prompt") or ""
    return str(text) if isinstance(text, str) else ""
