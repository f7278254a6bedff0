"""Payloads passed to lifecycle (observer) hooks.

They are frozen snapshots: an observer can read them but not change what the turn does.
Fields may be added in minor SDK versions; never removed or renamed outside a major one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from hermes_sdk.provided import ProvidedSpecs

if TYPE_CHECKING:
    from hermes_sdk.archive import SessionArchive
    from hermes_sdk.runtime import PluginState, Runtime, RuntimeOptions, SessionHistory

__all__ = [
    "COMMAND_CONTEXT",
    "CommandContext",
    "LLMCall",
    "LLMResult",
    "OpenRuntime",
    "PromptContext",
    "PromptSection",
    "SessionInfo",
    "ToolCall",
    "ToolResult",
    "TurnInfo",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionInfo:
    """A session as observers see it."""

    session_id: str
    source: str  # "cli", "telegram", "cron", ...
    model: str | None = None
    provider: str | None = None
    cwd: str | None = None
    user_scope: str | None = None
    """Whose session it is ("telegram:42"); None for the owner at the terminal."""
    home: str | None = None
    """HERMES_HOME of the agent the session runs in (a profile's, when one is chosen): where
    a plugin keeps its own files for it."""
    config: Mapping[str, Any] = field(default_factory=dict)
    """config.yaml as the agent loaded it (secrets live in .env, never here): an observer
    reads its own section here, never the file."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnInfo:
    """One turn as observers see it, once it has ended (``hermes_on_turn_end``)."""

    session_id: str
    status: str
    """``done``, ``stopped``, ``interrupted``, ``error``, ``budget`` or ``loop``."""
    user_text: str
    """What the user said (as stored: no per-turn context)."""
    reply: str
    """The reply as the user got it (after ``hermes_transform_reply``)."""
    error: str | None = None
    tool_calls: int = 0
    model_calls: int = 0
    seconds: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class LLMCall:
    """One model request about to be (or just) made."""

    session_id: str
    provider: str
    model: str
    message_count: int
    tool_count: int = 0
    request_id: str = ""
    """Unique to this request (each retry and each fallback is a request of its own): pairs
    a ``hermes_pre_llm_call`` with its ``hermes_post_llm_call``."""
    attempt: int = 1
    """1 for the first try on this route, 2 for its first retry ..."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LLMResult:
    """The outcome of one model request."""

    ok: bool
    finish_reason: str | None = None
    tool_call_count: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    duration_s: float = 0.0
    error: str | None = None
    cache_read_tokens: int = 0
    """Input tokens served from the provider's prompt cache (not in ``input_tokens``, as in
    :class:`~hermes_sdk.models.ModelUsage`)."""
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    """Output tokens spent thinking (counted in ``output_tokens``)."""
    error_kind: str | None = None
    """Why it failed, in the SDK's words (``auth``, ``rate_limit``, ``timeout`` ...)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """One tool call the model asked for, or a running tool made (``parent_call_id``)."""

    session_id: str
    call_id: str
    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    parent_call_id: str | None = None
    """Set for a call a running tool made (:meth:`~hermes_sdk.tooling.ToolContext.tool_caller`):
    the id of the call it ran inside."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """The result recorded for one tool call."""

    call_id: str
    ok: bool
    content: str
    duration_s: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptContext:
    """What a plugin knows when the system prompt of a new session is built."""

    session_id: str
    source: str
    home: str
    cwd: str | None = None
    user_scope: str | None = None
    """Whose session it is ("telegram:42"); None for the owner at the terminal. What is
    kept per person (a memory profile) must be chosen by this, never shared by default."""
    config: Mapping[str, Any] = field(default_factory=dict)
    """config.yaml as loaded (secrets live in .env, never here); read your own section."""
    provided: ProvidedSpecs = field(default_factory=ProvidedSpecs)
    """What the loaded plugins provide for others (see :mod:`hermes_sdk.provided`)."""
    skill_dirs: tuple[str, ...] = ()
    """Deprecated, always empty: read ``provided.of(Kind.SKILL_SOURCE)``. Kept because
    fields are removed only in a major version."""
    toolsets: frozenset[str] | None = None
    """The toolsets whose tools the session has; None when not known (a prompt built
    outside a session): a skill that needs one is then listed, and one that stands in for
    a missing one is not."""
    tools: frozenset[str] | None = None
    """The names of the tools the session has; None when not known."""
    preload: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """What the front-end asked plugins to load into the prompt from the start, by kind,
    as :attr:`hermes_sdk.runtime.SessionOptions.preload` gave it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptSection:
    """A block of the system prompt. ``tier`` orders blocks: identity 0, memory 10, skills
    20, plugins 30 by default, project context 40; ties keep plugin load order."""

    title: str
    text: str
    tier: int = 30


def _nothing_said(_line: str) -> None:
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class SlashContext:
    """What a plugin's slash command knows about the chat it runs in."""

    session_id: str | None  # None until the first message of a new session
    home: str
    cwd: str
    provider: str
    model: str
    user_scope: str | None = None
    """Whose chat it is ("telegram:42"); None for the owner at the terminal."""
    config: Mapping[str, Any] = field(default_factory=dict)
    """config.yaml as loaded (secrets live in .env, never here); read your own section."""
    provided: ProvidedSpecs = field(default_factory=ProvidedSpecs)
    """What the loaded plugins provide for others (see :mod:`hermes_sdk.provided`)."""
    skill_dirs: tuple[str, ...] = ()
    """Deprecated, always empty: read ``provided.of(Kind.SKILL_SOURCE)``. Kept because
    fields are removed only in a major version."""
    notify: Callable[[str], None] = field(default=_nothing_said)
    """Tell the chat one line later, from any thread (work the command left running has
    finished): the front-end that ran the command shows it or sends it to the chat."""


class OpenRuntime(Protocol):
    """``open_runtime()`` or ``open_runtime(RuntimeOptions(...))``."""

    def __call__(
        self, options: RuntimeOptions | None = None, /
    ) -> AbstractAsyncContextManager[Runtime]: ...


def _nothing(*_args: object) -> None:
    return None


COMMAND_CONTEXT = "hermes.command_context"
"""The key of :class:`CommandContext` in ``click.get_current_context().meta``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandContext:
    """What a plugin's ``hermes NAME`` command knows about this Hermes: read it with
    ``click.get_current_context().meta[COMMAND_CONTEXT]``."""

    home: str
    config: Mapping[str, Any] = field(default_factory=dict)
    """config.yaml as loaded (secrets live in .env, never here); read your own section."""
    provided: ProvidedSpecs = field(default_factory=ProvidedSpecs)
    """What the loaded plugins provide for others (see :mod:`hermes_sdk.provided`); asking
    for a kind loads the plugins that provide it, so a command that does not ask stays fast."""
    skill_dirs: Callable[[], tuple[str, ...]] = tuple
    """Deprecated, returns nothing: read ``provided.of(Kind.SKILL_SOURCE)``. Kept because
    fields are removed only in a major version."""
    secrets: Mapping[str, str] = field(default_factory=dict)
    """Environment variables and HERMES_HOME/.env, for keys. Never log these values."""
    open_runtime: OpenRuntime | None = None
    """``async with context.open_runtime() as runtime:`` the agent for a front-end command
    (``hermes serve``): models, tools and the store of this home, closed on exit. It raises
    ``click.ClickException`` (one line) if no model can be used. ``deliver`` sends through
    a gateway that runs for this home, if one does. A
    :class:`~hermes_sdk.runtime.RuntimeOptions` sets its working folder and more."""
    open_archive: Callable[[str], AbstractContextManager[SessionArchive]] | None = None
    """``with context.open_archive(home) as archive:`` write sessions and paired users
    brought in from another tool into the store of ``home`` (this home, or a profile's):
    see :mod:`hermes_sdk.archive`. The store's own errors are one line (OSError)."""
    before_exit: Callable[[], None] = field(default=lambda: None)
    """Call it before a command leaves the process at once (``os._exit``: a tool thread that
    ignores a stop would hold up a normal exit): the kernel saves what it must (the plugins'
    load states) and ends the isolated plugins' processes."""

    # --- for a long-running front-end (a gateway) ----------------------------------------

    log_to: Callable[[str], None] = _nothing
    """``context.log_to("gateway")``: this process writes ``HERMES_HOME/logs/gateway.log``
    from now on, not ``agent.log`` (a long-running front-end keeps a log of its own;
    ``hermes logs gateway`` shows it)."""

    # --- stored sessions, without a model (SDK 0.x: added for `hermes sessions`) ---------

    open_history: Callable[[], AbstractAsyncContextManager[SessionHistory]] | None = None
    """``async with context.open_history() as history:`` the stored sessions of this home
    (:class:`~hermes_sdk.runtime.SessionHistory`), closed on exit, for a command that only
    reads or tidies them (``hermes sessions``). It builds no agent: it works with no model
    set up, and loads no plugin (``open_runtime`` loads the tools and providers and fails
    without a usable model). A damaged or foreign state.db ends the command with one line."""

    # --- the installed plugins (SDK 0.x: added for the plugin manager's commands) ---------

    config_path: str = ""
    """This home's config.yaml: a command that changes the environment keeps its bytes, to
    put back if the change fails."""
    plugins: Callable[[], Sequence[PluginState]] = tuple
    """Every installed plugin, enabled or not, as ``hermes plugins list`` shows it, from
    package metadata (nothing is imported)."""
    set_plugin_enabled: Callable[[str, bool], None] | None = None
    """``context.set_plugin_enabled("web", True)`` enables (False: disables) a plugin in
    config.yaml, as ``hermes plugins enable`` does."""

    # --- changing config.yaml (SDK 0.x: added for `hermes model set`) ---------------------

    edit_config: Callable[[Callable[[MutableMapping[str, Any]], None]], None] | None = None
    """``context.edit_config(change)``: ``change(document)`` edits config.yaml's top-level
    mapping in place (comments and layout are kept; add sections as plain dicts). The new
    file is validated as ``hermes config set`` validates it and written atomically; a problem
    raises ``click.ClickException`` (one line) and leaves the file as it was."""
