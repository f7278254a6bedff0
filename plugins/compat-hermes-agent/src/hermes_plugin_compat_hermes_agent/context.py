"""The ``ctx`` a hermes-agent plugin's ``register(ctx)`` receives, on Hermes.

It records what the plugin registers; :mod:`guest` then turns the record into a Hermes plugin
object. Nothing is shared until ``register`` has returned within its deadline, so a plugin
that raises or hangs halfway leaves no partial registration behind. What Hermes has no
equivalent for yet (image or video generation, browser providers, secret sources, dashboard
sign-in, argparse commands, middleware ...) is kept as one line each, shown at load, never a
crash.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Manifest", "PluginContext", "Registrations", "ToolRegistration"]

_SKILL_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass(frozen=True)
class Manifest:
    """What hermes-agent knows of a plugin: its plugin.yaml, or its entry point."""

    name: str
    version: str = ""
    description: str = ""
    author: str = ""
    source: str = "entrypoint"  # entrypoint | user
    path: str = ""
    kind: str = "standalone"
    requires_env: tuple[str, ...] = ()
    provides_tools: tuple[str, ...] = ()
    provides_hooks: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return self.name


@dataclass(frozen=True)
class ToolRegistration:
    name: str
    toolset: str
    schema: dict[str, Any]
    handler: Callable[..., Any]
    check_fn: Callable[[], Any] | None = None
    is_async: bool = False
    description: str = ""


@dataclass(frozen=True)
class CommandRegistration:
    name: str
    handler: Callable[..., Any]
    description: str = ""
    args_hint: str = ""


@dataclass
class Registrations:
    """Everything one plugin registered."""

    tools: list[ToolRegistration] = field(default_factory=list)
    hooks: dict[str, list[Callable[..., Any]]] = field(default_factory=dict)
    commands: list[CommandRegistration] = field(default_factory=list)
    skills: list[tuple[str, Path, str]] = field(default_factory=list)
    memory_providers: list[Any] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    """One line per registration Hermes has no equivalent for."""


_NOT_YET = {
    "register_context_engine": "a context engine",
    "register_image_gen_provider": "an image generation provider",
    "register_video_gen_provider": "a video generation provider",
    "register_web_search_provider": "a web search provider",
    "register_browser_provider": "a browser provider",
    "register_tts_provider": "a text-to-speech provider",
    "register_transcription_provider": "a transcription provider",
    "register_dashboard_auth_provider": "a dashboard sign-in provider",
    "register_secret_source": "a secret source",
    "register_platform": "a gateway platform adapter",
    "register_slack_action_handler": "a Slack action handler",
    "register_auxiliary_task": "an auxiliary model task",
    "register_middleware": "middleware",
}
"""Registrations hermes-agent offers that Hermes does not run yet, and what each adds."""


class PluginContext:
    """hermes-agent's ``PluginContext``, recording into :class:`Registrations`."""

    def __init__(self, manifest: Manifest, registrations: Registrations, home: Path) -> None:
        self.manifest = manifest
        self._registered = registrations
        self._home = home

    # --- what Hermes runs ------------------------------------------------------------------

    def register_tool(
        self,
        name: str,
        toolset: str,
        schema: dict[str, Any],
        handler: Callable[..., Any],
        check_fn: Callable[[], Any] | None = None,
        requires_env: list[str] | None = None,
        is_async: bool = False,
        description: str = "",
        emoji: str = "",
        override: bool = False,
        **_extra: Any,
    ) -> None:
        if not callable(handler):
            raise TypeError(f"register_tool({name!r}): handler is not callable")
        self._registered.tools.append(
            ToolRegistration(
                name, toolset, dict(schema or {}), handler, check_fn, is_async, description
            )
        )

    def register_hook(self, hook_name: str, callback: Callable[..., Any]) -> None:
        self._registered.hooks.setdefault(hook_name, []).append(callback)

    def register_command(
        self, name: str, handler: Callable[..., Any], description: str = "", args_hint: str = ""
    ) -> None:
        clean = name.strip().lower().lstrip("/").replace(" ", "-")
        self._registered.commands.append(
            CommandRegistration(clean, handler, description, args_hint)
        )

    def register_skill(self, name: str, path: Path | str, description: str = "") -> None:
        if ":" in name or not _SKILL_NAME.fullmatch(name):
            raise ValueError(f"invalid skill name {name!r}: letters, digits, _ and - only")
        skill = Path(path)
        if not skill.is_file():
            raise FileNotFoundError(f"skill {name!r}: {skill} does not exist")
        self._registered.skills.append((name, skill, description))

    def register_memory_provider(self, provider: Any) -> None:
        self._registered.memory_providers.append(provider)

    # --- what Hermes does not run (yet): one line each ---------------------------------------

    def register_cli_command(
        self, name: str, help: str = "", setup_fn: Any = None, handler_fn: Any = None, **_: Any
    ) -> None:
        self._registered.unsupported.append(
            f"command 'hermes {name}' (an argparse command) is not offered on Hermes"
        )

    def __getattr__(self, name: str) -> Any:
        if name in _NOT_YET:
            what = _NOT_YET[name]

            def not_yet(*_args: Any, **_kwargs: Any) -> None:
                self._registered.unsupported.append(
                    f"{name}: {what} has no equivalent on Hermes yet; ignored"
                )

            return not_yet
        raise AttributeError(f"the hermes-agent plugin context on Hermes has no {name!r}")

    # --- what plugins read -------------------------------------------------------------------

    @property
    def profile_name(self) -> str:
        """``default``, or the profile whose home this is (``ROOT/profiles/NAME``)."""
        return self._home.name if self._home.parent.name == "profiles" else "default"

    def dispatch_tool(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run one of this plugin's own tools (other tools are the agent's to call)."""
        for tool in self._registered.tools:
            if tool.name == tool_name:
                result = tool.handler(dict(args), **kwargs)
                return result if isinstance(result, str) else json.dumps(result)
        return json.dumps(
            {"error": f"dispatch_tool: {tool_name!r} is not one of this plugin's tools on Hermes"}
        )

    def inject_message(self, content: str, role: str = "user") -> bool:
        """Not offered: Hermes does not let a plugin speak as the user."""
        return False
