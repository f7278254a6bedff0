"""The kernel's own config.yaml sections. Plugins bring models for their sections."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from hermes_kernel.config.controls import KERNEL_SECTIONS
from hermes_kernel.config.defaults import (
    AGENT_GOAL_TURNS,
    AGENT_MAX_ITERATIONS,
    AGENT_RETRIES,
    APPROVALS_MODE,
    APPROVALS_TIMEOUT_SECONDS,
    COMPRESSION_ENGINE,
    COMPRESSION_KEEP_RECENT_TOKENS,
    COMPRESSION_PROTECT_LAST_N,
    COMPRESSION_THRESHOLD,
    COMPRESSION_UNATTENDED_THRESHOLD,
    LEARNING_NUDGE_EVERY_TURNS,
    LEARNING_REVIEW,
    LEARNING_REVIEW_MIN_TOOL_CALLS,
    LOGGING_CONTENT,
    LOGGING_LEVEL,
    MODEL_TIMEOUT_SECONDS,
    PLUGINS_HOOK_TIMEOUT_SECONDS,
    PLUGINS_LOAD_TIMEOUT_SECONDS,
    PLUGINS_STRICT,
    STORE_POOL_SIZE,
    TERMINAL_SHARE_BACKEND,
    TOOLS_TIMEOUT_SECONDS,
)

# Names of environment variables: config.yaml names secrets, it never holds them.
_ENV_NAME = r"^[A-Z_][A-Z0-9_]*$"  # upper case: a pasted key (sk-..., gsk_...) never matches
_ENDPOINT_NAME = r"^[a-z][a-z0-9_-]{0,63}$"


class PluginsConfig(BaseModel):
    """The ``plugins:`` section: which plugins load, and how."""

    # Unknown keys are kept and reported as warnings, so an older or newer home still loads.
    model_config = ConfigDict(extra="allow")

    enabled: list[str] | None = Field(
        default=None,
        description="If set, only these plugins load (opt-in). Unset: every installed plugin.",
    )
    disabled: list[str] = Field(default_factory=list, description="Plugins that never load.")
    load_timeout_seconds: float = Field(
        default=PLUGINS_LOAD_TIMEOUT_SECONDS,
        gt=0,
        le=600,
        description="Deadline for importing and registering one plugin.",
    )
    strict: bool = Field(
        default=PLUGINS_STRICT,
        description="Treat a plugin failure as an error (for plugin developers).",
    )
    hook_timeout_seconds: float = Field(
        default=PLUGINS_HOOK_TIMEOUT_SECONDS,
        gt=0,
        le=600,
        description="Deadline for one plugin's hook call while the agent runs; past it the "
        "call is abandoned, and after 3 misses the plugin is disabled for the process.",
    )
    isolated: list[str] = Field(
        default_factory=list,
        description="Plugins run in a host process of their own: a crash there costs one "
        "failed call, never the agent (this contains faults; it is not a sandbox).",
    )
    foreign: list[str] = Field(
        default_factory=list,
        description="Plugins written for another agent (found by a plugin source) that may "
        "load: they are opt-in, and this list restricts nothing else.",
    )


class BudgetConfig(BaseModel):
    """The ``budget:`` section: spending limits, checked before every model call."""

    model_config = ConfigDict(extra="forbid")

    session_max_tokens: int | None = Field(
        default=None, gt=0, description="Input + output tokens one session may use."
    )
    session_max_cost_usd: float | None = Field(
        default=None, gt=0, description="Estimated US dollars one session may spend."
    )
    turn_max_cost_usd: float | None = Field(
        default=None, gt=0, description="Estimated US dollars one turn may spend."
    )


class ToolsConfig(BaseModel):
    """The ``tools:`` section: how long the kernel waits for a tool."""

    model_config = ConfigDict(extra="forbid")

    timeout_seconds: float = Field(
        default=TOOLS_TIMEOUT_SECONDS,
        gt=0,
        le=86400,
        description="Deadline for one tool call, unless the tool sets its own; past it the "
        "model is told the call timed out with its effect unknown.",
    )


class FallbackEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    provider: str = Field(pattern=_ENDPOINT_NAME, description="An endpoint name.")
    model: str | None = Field(default=None, min_length=1, description="Default: its default.")


class ModelConfig(BaseModel):
    """The ``model:`` section: which model a session uses, and what to try when it fails."""

    model_config = ConfigDict(extra="allow")

    provider: str | None = Field(
        default=None,
        pattern=r"^(auto|[a-z][a-z0-9_-]{0,63})$",
        description="Endpoint to use (one a provider plugin declares, or a custom name); auto or "
        "unset: the model router decides.",
    )
    default: str | None = Field(default=None, min_length=1, description="The model to ask.")
    base_url: str | None = Field(
        default=None,
        pattern=r"^https?://",
        description="A model server of your own, a local one typically (see transport).",
    )
    transport: str | None = Field(
        default=None,
        description="The provider plugin speaking base_url's protocol; unset: the one that "
        "speaks for endpoints naming none.",
    )
    api_key_env: str | None = Field(default=None, pattern=_ENV_NAME)
    timeout_seconds: float = Field(default=MODEL_TIMEOUT_SECONDS, gt=0, le=3600)
    fallback_providers: list[FallbackEntry] = Field(
        default_factory=list, description="Tried in order, for one turn, when the model fails."
    )
    context_length: int | None = Field(
        default=None,
        ge=256,
        description="The model's context window in tokens; unset: what the provider says, "
        "else 128000.",
    )
    vision: bool | None = Field(
        default=None,
        description="Whether the model takes images; unset: what the provider's table says, "
        "else not (images then reach it as descriptions).",
    )
    reasoning_effort: Literal["none", "minimal", "low", "medium", "high", "xhigh"] | None = Field(
        default=None,
        description="How hard a model that reasons thinks, sent in each API's own form; "
        "unset: the model's default.",
    )


class CustomProvider(BaseModel):
    """One entry of ``providers:``: a named endpoint. Keys are never written here: name the
    variable that holds one (``api_key_env``) and put the key in .env."""

    model_config = ConfigDict(extra="allow")

    base_url: str | None = Field(
        default=None,
        pattern=r"^https?://",
        description="The model server's address; needed unless the transport is a virtual "
        "one (a mixture of other endpoints).",
    )
    api_key_env: str | None = Field(default=None, pattern=_ENV_NAME)
    transport: str | None = Field(
        default=None,
        description="The provider plugin that speaks it; unset: the one that speaks for "
        "endpoints naming none. Keys of this entry not listed here are its options.",
    )
    models: list[str] = Field(default_factory=list)
    default_model: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    context_length: int | None = Field(
        default=None, ge=256, description="Context window of this endpoint's models, in tokens."
    )
    vision: bool | None = Field(
        default=None,
        description="Whether this endpoint's models take images (unset: ask its provider).",
    )
    stream: bool = Field(
        default=True,
        description="Ask for replies streamed as they are written; false for a proxy that "
        "breaks streamed replies (text then arrives whole).",
    )


class AgentConfig(BaseModel):
    """The ``agent:`` section: how long a turn may run and which tools it has."""

    model_config = ConfigDict(extra="forbid")

    max_iterations: int = Field(
        default=AGENT_MAX_ITERATIONS,
        ge=1,
        le=1000,
        description="Model calls in one turn before it stops.",
    )
    retries: int = Field(
        default=AGENT_RETRIES,
        ge=0,
        le=10,
        description="Attempts per provider before falling back.",
    )
    toolsets: list[str] | None = Field(
        default=None,
        description="Toolsets whose tools the model gets; unset: every installed toolset "
        "but the opt-in ones.",
    )
    add_toolsets: list[str] = Field(
        default_factory=list,
        description="Opt-in toolsets to give as well (voice): with toolsets unset, the "
        "installed ones and these.",
    )
    backend: str | None = Field(
        default=None,
        pattern=r"^[a-z][a-z0-9_-]{0,63}$",
        description="Terminal backend tools run commands in (local, docker, ssh ...).",
    )
    personalities: dict[str, str] = Field(
        default_factory=dict,
        description="Named ways to talk (/personality NAME): each name's instructions, "
        "added to every turn of a conversation that chose it; beside the built-in ones.",
    )
    goal_turns: int = Field(
        default=AGENT_GOAL_TURNS,
        ge=1,
        le=200,
        description="Turns a /goal may take on its own before it pauses.",
    )


class ApprovalsConfig(BaseModel):
    """The ``approvals:`` section: what happens before a dangerous command runs."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["manual", "smart", "off"] = Field(
        default=APPROVALS_MODE,
        description="manual: ask you; smart: an auxiliary model approves or denies and asks "
        "you when unsure; off: never ask (the hardline floor and deny rules still apply).",
    )

    @field_validator("mode", mode="before")
    @classmethod
    def _off_is_off(cls, value: object) -> object:
        """YAML 1.1 reads a bare ``off`` (and ``no``) as false: that is the mode ``off``."""
        return "off" if value is False else value

    deny: list[str] = Field(
        default_factory=list,
        description="Command globs that are always refused, in every mode (git push*).",
    )
    allow: list[str] = Field(
        default_factory=list,
        description="Rule names (git-force-push) or command globs (git reset --hard*) that "
        "run without asking.",
    )
    allow_commands: list[str] = Field(
        default_factory=list,
        description="Exact commands that run without asking: the text as written, compared "
        "as it is (the chat's 'always, exactly this command' answer saves here).",
    )
    timeout_seconds: float = Field(
        default=APPROVALS_TIMEOUT_SECONDS,
        gt=0,
        le=3600,
        description="Unanswered this long: denied.",
    )


class TerminalConfig(BaseModel):
    """The ``terminal:`` section: the environment commands run in."""

    model_config = ConfigDict(extra="forbid")

    env_passthrough: list[str] = Field(
        default_factory=list,
        description="Variables passed to commands besides PATH, HOME, LANG, TERM ... "
        "Keys Hermes itself uses are never passed.",
    )
    share_backend: bool = Field(
        default=TERMINAL_SHARE_BACKEND, description="One backend for every session of a process."
    )

    @field_validator("env_passthrough")
    @classmethod
    def _names(cls, value: list[str]) -> list[str]:
        import re

        for name in value:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise ValueError(f"{name!r} is not an environment variable name")
        return value


class LearningConfig(BaseModel):
    """The ``learning:`` section: when the background reviews plugins offer run after a turn."""

    model_config = ConfigDict(extra="forbid")

    review: bool = Field(
        default=LEARNING_REVIEW,
        description="After a turn with many tool calls, a recovered error or a correction, "
        "run the plugins' lesson reviews of it in the background.",
    )
    review_min_tool_calls: int = Field(
        default=LEARNING_REVIEW_MIN_TOOL_CALLS,
        ge=1,
        description="Tool calls in one turn that make it worth a review.",
    )
    nudge_every_turns: int = Field(
        default=LEARNING_NUDGE_EVERY_TURNS,
        ge=0,
        description="Every this many user turns, run the plugins' periodic reviews in the "
        "background (0: never).",
    )


class CompressionConfig(BaseModel):
    """The ``compression:`` section: how a long session's view is kept within the window."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(
        default=True,
        description="Compact automatically past the threshold and on a context-overflow "
        "error; /compact works either way.",
    )
    engine: str = Field(
        default=COMPRESSION_ENGINE,
        pattern=r"^[a-z][a-z0-9_-]{0,63}$",
        description="The context engine that writes summaries (a plugin).",
    )
    threshold: float = Field(
        default=COMPRESSION_THRESHOLD,
        gt=0,
        le=1,
        description="Share of the model's window past which the view is compacted before a "
        "model call; at least 0.75 for windows under 512K tokens.",
    )
    protect_last_n: int = Field(
        default=COMPRESSION_PROTECT_LAST_N,
        ge=1,
        le=10_000,
        description="Latest messages kept word for word.",
    )
    keep_recent_tokens: int = Field(
        default=COMPRESSION_KEEP_RECENT_TOKENS,
        ge=0,
        description="At least this many tokens of the latest messages kept.",
    )
    unattended_threshold: float = Field(
        default=COMPRESSION_UNATTENDED_THRESHOLD,
        ge=0,
        le=1,
        validation_alias=AliasChoices("unattended_threshold", "gateway_threshold"),
        description="Where nobody can /compact (chats on a platform, a server), compact at "
        "this share of the window even when the threshold is higher or compaction is off "
        "(0: no safety net). Its old name, gateway_threshold, is still read.",
    )


class AuxiliaryConfig(BaseModel):
    """The ``auxiliary:`` section: a model for side tasks (summaries, smart approvals)."""

    model_config = ConfigDict(extra="forbid")

    provider: str | None = Field(
        default=None, pattern=_ENDPOINT_NAME.replace("^", "^(auto|", 1).replace("$", ")$")
    )
    model: str | None = Field(default=None, min_length=1)


class MediaCaps(BaseModel):
    """``media.max_mb``: the largest file of each kind, in megabytes."""

    model_config = ConfigDict(extra="forbid")

    image: float = Field(default=20, gt=0, le=1000)
    audio: float = Field(default=25, gt=0, le=1000)
    video: float = Field(default=50, gt=0, le=5000)
    document: float = Field(default=20, gt=0, le=1000)
    file: float = Field(default=20, gt=0, le=1000)


class MediaConfig(BaseModel):
    """The ``media:`` section: files users send (images, documents, audio)."""

    model_config = ConfigDict(extra="forbid")

    max_mb: MediaCaps = Field(default_factory=MediaCaps)
    cache_mb: float = Field(
        default=1000, gt=0, description="HERMES_HOME/cache/media's size; the oldest go first."
    )
    keep_days: float = Field(
        default=30, gt=0, description="Files unused this long are removed (their text stays)."
    )
    document_chars: int = Field(
        default=30_000, ge=1000, le=1_000_000, description="A document's text is cut here."
    )
    image_max_side: int = Field(
        default=1568, ge=256, le=8000, description="Longest side of an image sent to a model."
    )
    images: Literal["describe", "tool"] = Field(
        default="describe",
        description="For a model that does not see: describe (the auxiliary model describes "
        "each image) or tool (the model gets where it is kept, for a tool that looks at it).",
    )
    transcribers: list[str] = Field(
        default_factory=list, description="Transcribers asked first, in this order."
    )


class LoggingConfig(BaseModel):
    """The ``logging:`` section: what HERMES_HOME/logs records."""

    model_config = ConfigDict(extra="forbid")

    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default=LOGGING_LEVEL,
        description="agent.log (or a front-end's own log) keeps records from this level up "
        "(errors.log: warnings and up, always).",
    )
    content: bool = Field(
        default=LOGGING_CONTENT,
        description="true adds what was said to the activity lines (the user's message, the "
        "reply, tool arguments and results, cut short and with secrets redacted).",
    )


class StoreConfig(BaseModel):
    """The ``store:`` section: where sessions, messages and plugins' tables are kept."""

    model_config = ConfigDict(extra="forbid")

    url: str | None = Field(
        default=None,
        description="SCHEME://USER@HOST:PORT/DATABASE keeps the state store in a database "
        "server, shared by front-end workers on several hosts, through the store engine plugin "
        "for that scheme; the password goes in .env as HERMES_STORE_PASSWORD. Unset: the store "
        "is kept in HERMES_HOME.",
    )
    pool_size: int = Field(
        default=STORE_POOL_SIZE,
        ge=1,
        le=200,
        description="Connections this process keeps to that server.",
    )

    @field_validator("url")
    @classmethod
    def _a_url_without_password(cls, value: str | None) -> str | None:
        return None if value is None else cls.check_url(value)

    @staticmethod
    def check_url(value: str) -> str:
        """A SCHEME:// URL that holds no password (ValueError saying what to fix)."""
        from urllib.parse import parse_qs, urlsplit

        try:
            parts = urlsplit(value)
            password = parts.password
        except ValueError:
            raise ValueError("store.url is not a URL that can be read") from None
        if not parts.scheme or not value.startswith(f"{parts.scheme}://"):
            raise ValueError(
                "store.url must be a URL such as SCHEME://USER@HOST/DATABASE (leave it out to "
                "keep the store in HERMES_HOME)"
            )
        if password is not None or "password" in parse_qs(parts.query):
            raise ValueError(
                "store.url holds a password: put it in .env as HERMES_STORE_PASSWORD and take "
                "it out of the URL"
            )
        return value


class KernelConfig(BaseModel):
    """The whole config.yaml as the kernel sees it; other top-level keys belong to plugins."""

    model_config = ConfigDict(extra="allow")

    plugins: PluginsConfig = Field(default_factory=PluginsConfig)
    model: ModelConfig = Field(default_factory=ModelConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    providers: dict[str, CustomProvider] = Field(default_factory=dict)
    credential_pools: dict[str, list[str]] = Field(
        default_factory=dict, description="Endpoint name -> names of variables holding its keys."
    )
    approvals: ApprovalsConfig = Field(default_factory=ApprovalsConfig)
    terminal: TerminalConfig = Field(default_factory=TerminalConfig)
    learning: LearningConfig = Field(default_factory=LearningConfig)
    compression: CompressionConfig = Field(default_factory=CompressionConfig)
    auxiliary: AuxiliaryConfig = Field(default_factory=AuxiliaryConfig)
    media: MediaConfig = Field(default_factory=MediaConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)
    store: StoreConfig = Field(default_factory=StoreConfig)

    @field_validator("providers", "credential_pools")
    @classmethod
    def _names_are_endpoint_names(cls, value: dict[str, Any]) -> dict[str, Any]:
        import re

        for name in value:
            if not re.fullmatch(_ENDPOINT_NAME, name):
                raise ValueError(f"{name!r} is not a valid name (lowercase letters, digits, - _)")
        return value

    @field_validator("credential_pools")
    @classmethod
    def _pools_name_variables(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        import re

        for name, variables in value.items():
            for variable in variables:
                if not re.fullmatch(_ENV_NAME, variable):
                    raise ValueError(
                        f"credential_pools.{name}: an entry is not a variable name (never "
                        "paste a key here): put keys in .env and list their names"
                    )
        return value

    @field_validator("model", mode="before")
    @classmethod
    def _model_name_alone(cls, value: Any) -> Any:
        # "model: NAME" is short for "model: {default: NAME}".
        return {"default": value} if isinstance(value, str) else value

    @field_validator(*sorted(KERNEL_SECTIONS), mode="before")
    @classmethod
    def _empty_section_means_defaults(cls, value: Any) -> Any:
        # "plugins:" with nothing under it parses as None; treat it as an empty section.
        return {} if value is None else value
