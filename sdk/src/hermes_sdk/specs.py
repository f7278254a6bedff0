"""Typed spec objects that registration hooks yield.

Each spec names one thing a plugin provides and says how to build it *lazily*: registration
hooks run at load time and must be cheap, so a spec carries a factory (or handler) that the
kernel calls only when the thing is first used. Heavy imports belong inside that factory.

Every spec belongs to one :class:`Kind`. Names are unique per kind across all loaded plugins;
the kernel refuses a second plugin that provides a name already taken.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

if TYPE_CHECKING:
    from hermes_sdk.ladder import Endpoint, LadderContext, RungResult
    from hermes_sdk.store_engine import StoreTarget

__all__ = [
    "BackendSpec",
    "CommandRulesSpec",
    "CommandSpec",
    "ConfigSectionSpec",
    "ContextEngineSpec",
    "DashboardPanelSpec",
    "DeliverySpec",
    "FactorySpec",
    "ImporterSpec",
    "Kind",
    "MemoryProviderSpec",
    "ModelPrice",
    "ModelRouterSpec",
    "PendingWritesSpec",
    "PlatformSpec",
    "PriceTableSpec",
    "ProviderSpec",
    "Reference",
    "ReviewSpec",
    "ReviewTrigger",
    "RungSpec",
    "ServiceSpec",
    "SkillSourceSpec",
    "SlashCommandSpec",
    "Spec",
    "StoreEngineSpec",
    "ToolSourceSpec",
    "ToolSpec",
    "ToolsetSpec",
    "TranscriberSpec",
    "manifest_key",
    "parse_manifest_key",
]


class Kind(enum.StrEnum):
    """The kinds of things a plugin can provide; also the prefixes of manifest keys."""

    PROVIDER = "provider"
    BACKEND = "backend"
    PLATFORM = "platform"
    MEMORY = "memory"
    TOOL = "tool"
    TOOLSET = "toolset"
    SKILL_SOURCE = "skill_source"
    COMMAND = "command"
    SLASH = "slash"
    CONFIG = "config"
    RUNG = "rung"
    SERVICE = "service"
    CONTEXT_ENGINE = "context_engine"
    TOOL_SOURCE = "tool_source"
    PRICES = "prices"
    REVIEW = "review"
    IMPORTER = "importer"
    DELIVERY = "delivery"
    TRANSCRIBER = "transcriber"
    MODEL_ROUTER = "model_router"
    """What picks a session's models (:class:`ModelRouterSpec`)."""
    STORE_ENGINE = "store_engine"
    """A database engine the state store can be kept in (:class:`StoreEngineSpec`)."""
    COMMAND_RULES = "command_rules"
    """Rules that judge the commands tools run (:class:`CommandRulesSpec`)."""
    PENDING = "pending"
    """A queue of writes waiting for the user's approval (:class:`PendingWritesSpec`)."""
    PANEL = "panel"
    """A page of the dashboard (:class:`DashboardPanelSpec`)."""
    PLUGIN_SOURCE = "plugin_source"
    """Where plugins written for another agent are found (:class:`PluginSourceSpec`)."""
    DEFAULT_COMMAND = "default_command"
    """Manifest only: ``default_command.NAME`` says that command ``NAME`` (whose spec has
    ``default=True``) is what ``hermes`` runs with no command, known without an import."""
    HOOK = "hook"
    """Manifest only: ``hook.hermes_pre_tool_call`` declares a lifecycle hook implemented,
    so the kernel loads observers without importing every plugin. No spec has this kind."""


# Lower-case identifiers: safe in config keys, CLI names and manifest keys alike.
_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
# Tool names follow the function-name rule model APIs enforce (OpenAI, Anthropic).
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _check_name(kind: Kind, name: str, pattern: re.Pattern[str] = _NAME) -> None:
    if not isinstance(name, str) or not pattern.fullmatch(name):
        raise ValueError(
            f"invalid {kind.value} name {name!r}: use 1-64 characters matching {pattern.pattern}"
        )


def manifest_key(kind: Kind, name: str) -> str:
    """The entry-point name that declares ``name`` of ``kind`` in ``hermes.provides``."""
    return f"{kind.value}.{name}"


def parse_manifest_key(key: str) -> tuple[Kind, str]:
    """Split a ``hermes.provides`` entry name like ``tool.read_file`` into kind and name.

    Raises ValueError with a message that says what a valid key looks like.
    """
    kind_text, dot, name = key.partition(".")
    valid_kinds = ", ".join(k.value for k in Kind)
    if not dot or not name:
        raise ValueError(f"manifest key {key!r} must be KIND.NAME, KIND one of: {valid_kinds}")
    try:
        kind = Kind(kind_text)
    except ValueError:
        raise ValueError(
            f"manifest key {key!r} has unknown kind {kind_text!r}; use one of: {valid_kinds}"
        ) from None
    return kind, name


@dataclass(frozen=True, slots=True, kw_only=True)
class Spec:
    """Base of every spec: a name, unique within its kind, and a one-line description."""

    kind: ClassVar[Kind]
    name: str
    description: str = ""

    def __post_init__(self) -> None:
        _check_name(self.kind, self.name)


_REFERENCE = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")


class Reference:
    """``"package.module:attr"``, imported on the first call: what a spec's ``factory``
    names when given as text, so a plugin's ``__init__`` needs no function that only
    imports and returns. Calling it calls ``attr`` with the arguments given (``call=False``:
    returns ``attr`` itself, for a spec whose factory returns an object, not builds one).
    """

    __slots__ = ("_call", "_target", "text")

    def __init__(self, text: str, *, call: bool = True) -> None:
        if not _REFERENCE.fullmatch(text):
            raise ValueError(
                f"factory {text!r} must be 'package.module:attribute' "
                "(e.g. 'hermes_plugin_acme.adapter:AcmeAdapter')"
            )
        self.text = text
        self._call = call
        self._target: Any = None

    def resolve(self) -> Any:
        """The object named (imported the first time). Raises ImportError, or
        AttributeError naming the reference, if it is not there."""
        if self._target is None:
            import sys

            module_name, _, path = self.text.partition(":")
            # The import statement's own path (not importlib's), as the shim function this
            # replaces imported it: -X importtime and import hooks see it the same way.
            __import__(module_name)
            target: Any = sys.modules[module_name]
            for part in path.split("."):
                try:
                    target = getattr(target, part)
                except AttributeError:
                    raise AttributeError(
                        f"factory {self.text!r}: {module_name} has no {path!r}"
                    ) from None
            self._target = target
        return self._target

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        target = self.resolve()
        return target(*args, **kwargs) if self._call else target

    def __repr__(self) -> str:
        return f"Reference({self.text!r})"


@dataclass(frozen=True, slots=True, kw_only=True)
class FactorySpec(Spec):
    """A spec whose object ``factory`` builds lazily, when it is first used.

    The arguments ``factory`` receives are defined by the interface of its kind. It is a
    callable, or the text ``"package.module:attr"`` naming one (a class, a function),
    imported only when the object is first built: a plugin needs no import-and-return
    function for it.
    """

    factory: Callable[..., Any] | str

    def __post_init__(self) -> None:
        _check_name(self.kind, self.name)
        self._reference(call=True)

    def _reference(self, *, call: bool) -> None:
        if isinstance(self.factory, str):
            object.__setattr__(self, "factory", Reference(self.factory, call=call))

    def build(self, *args: Any, **kwargs: Any) -> Any:
        """``factory(*args, **kwargs)``: the object this spec describes."""
        factory = self.factory
        assert callable(factory)  # text became a Reference when the spec was made
        return factory(*args, **kwargs)


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderSpec(FactorySpec):
    """A model provider (a transport such as chat-completions or anthropic-messages),
    built when a turn first needs it.

    ``default_transport`` says that this provider speaks to endpoints whose config names no
    ``transport`` (``model.base_url``, a ``providers:`` entry): the protocol most model
    servers offer. When several installed providers say so, the first by name is used.

    ``virtual`` says that it speaks to no server of its own (a mixture of other models): an
    endpoint using it needs no ``base_url``, and its factory's settings carry ``resolve``.
    """

    kind: ClassVar[Kind] = Kind.PROVIDER
    default_transport: bool = False
    virtual: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class RungSpec(Spec):
    """A rung of the provider ladder (see :mod:`hermes_sdk.ladder`).

    ``resolve`` takes a :class:`~hermes_sdk.ladder.LadderContext` and returns a
    :class:`~hermes_sdk.ladder.RungResult`; it must be quick and must not do network I/O.
    ``position`` orders the rungs (lowest first; two rungs may not share one). ``endpoint``
    is the :class:`~hermes_sdk.ladder.Endpoint` this rung introduces, if any: declaring it
    lets users name it in ``model.provider``, ``fallback_providers`` and credential pools.
    """

    kind: ClassVar[Kind] = Kind.RUNG
    position: int
    resolve: Callable[[LadderContext], RungResult]
    endpoint: Endpoint | None = None

    def __post_init__(self) -> None:
        _check_name(self.kind, self.name)
        if not isinstance(self.position, int) or isinstance(self.position, bool):
            raise ValueError(f"rung {self.name!r}: position must be an integer")


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """US dollars per million tokens. A cache price left as None costs as plain input."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PriceTableSpec(Spec):
    """Prices of models, by model name, for estimated costs. Later tables do not override
    earlier ones: a name priced twice keeps the first price loaded."""

    kind: ClassVar[Kind] = Kind.PRICES
    prices: Mapping[str, ModelPrice]


@dataclass(frozen=True, slots=True, kw_only=True)
class BackendSpec(FactorySpec):
    """A terminal backend (local, docker, ssh, ...), created on the first tool call needing it.

    ``factory(context)`` gets a :class:`~hermes_sdk.terminal.BackendContext` and returns a
    :class:`~hermes_sdk.terminal.TerminalBackend`.
    """

    kind: ClassVar[Kind] = Kind.BACKEND


@dataclass(frozen=True, slots=True, kw_only=True)
class PlatformSpec(FactorySpec):
    """A chat platform adapter hosted by the gateway (telegram, ...).

    ``factory(context)`` gets a :class:`~hermes_sdk.platform.PlatformContext` and returns a
    :class:`~hermes_sdk.platform.PlatformAdapter`.
    """

    kind: ClassVar[Kind] = Kind.PLATFORM


@dataclass(frozen=True, slots=True, kw_only=True)
class ServiceSpec(FactorySpec):
    """A long-running front-end the gateway hosts beside its platforms (an HTTP API, a
    scheduler). See :mod:`hermes_sdk.service`.

    ``factory(context)`` gets a :class:`~hermes_sdk.service.ServiceContext` and returns a
    :class:`~hermes_sdk.service.Service`. It runs when ``<config_section>.enabled`` is true
    in config.yaml (``config_section`` defaults to the name), or, with that key unset, when
    ``enabled_by_default`` is.
    """

    kind: ClassVar[Kind] = Kind.SERVICE
    config_section: str | None = None
    enabled_by_default: bool = False

    @property
    def section(self) -> str:
        return self.config_section or self.name


@dataclass(frozen=True, slots=True, kw_only=True)
class DeliverySpec(FactorySpec):
    """How messages reach chats for the rest of Hermes (``Runtime.deliver``): the gateway's
    delivery ledger. See :mod:`hermes_sdk.delivery`.

    ``factory(context)`` gets a :class:`~hermes_sdk.delivery.DeliveryContext` and returns a
    :class:`~hermes_sdk.delivery.Deliverer`.
    """

    kind: ClassVar[Kind] = Kind.DELIVERY


@dataclass(frozen=True, slots=True, kw_only=True)
class TranscriberSpec(FactorySpec):
    """A speech-to-text engine for audio that users send (see :mod:`hermes_sdk.transcription`).

    ``factory(context)`` gets a :class:`~hermes_sdk.transcription.TranscriberContext` and
    returns a :class:`~hermes_sdk.transcription.Transcriber`.
    """

    kind: ClassVar[Kind] = Kind.TRANSCRIBER


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryProviderSpec(FactorySpec):
    """An external memory provider; at most one is active (``memory.provider`` in config).

    ``factory(context)`` gets a :class:`~hermes_sdk.memory.MemoryContext` and returns a
    :class:`~hermes_sdk.memory.MemoryProvider`.
    """

    kind: ClassVar[Kind] = Kind.MEMORY


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextEngineSpec(FactorySpec):
    """How a long session is compacted; the one in use is ``compression.engine``.

    ``factory(context)`` gets a :class:`~hermes_sdk.context.ContextEngineContext` and
    returns a :class:`~hermes_sdk.context.ContextEngine`.
    """

    kind: ClassVar[Kind] = Kind.CONTEXT_ENGINE


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRouterSpec(FactorySpec):
    """What picks the models a session uses (the primary and its fallbacks).

    ``factory()`` takes no argument and returns a
    :class:`~hermes_sdk.routing.ModelRouter`, built when a command first needs a model. The
    first router by plugin name is used. With none installed, no model can be used.
    """

    kind: ClassVar[Kind] = Kind.MODEL_ROUTER


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreEngineSpec(FactorySpec):
    """A database engine that holds the state store (sessions, messages, plugins' tables).

    ``factory(target)`` gets a :class:`~hermes_sdk.store_engine.StoreTarget` and returns a
    :class:`~hermes_sdk.store_engine.Database`, open and with the kernel's tables at the
    version this engine knows, or raises :class:`~hermes_sdk.storage.StoreError` in one
    line. ``schemes`` are the URL schemes of ``store.url`` it opens; ``in_home`` says it
    keeps the store in HERMES_HOME, used when ``store.url`` is unset. The name is what
    ``hermes store migrate --to NAME`` takes for an engine in the home.
    """

    kind: ClassVar[Kind] = Kind.STORE_ENGINE
    schemes: tuple[str, ...] = ()
    in_home: bool = False
    locate: Callable[[StoreTarget], Path] | None = None
    """For an engine that keeps the store in a file: that file, whether it exists yet or not
    (``hermes store where`` says it, and ``hermes status`` and ``hermes doctor`` do not
    make one); None: the store is where ``store.url`` says."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandRulesSpec(FactorySpec):
    """Rules the approval gate asks about every command a tool runs.

    ``factory()`` takes no argument and returns a
    :class:`~hermes_sdk.approvals.CommandRules`; it is called once, at the first command
    checked, so a session that runs none never imports the rules. Every installed rule set
    judges each command and the strictest verdict wins. With none installed, the gate
    refuses every command: closed, never open.
    """

    kind: ClassVar[Kind] = Kind.COMMAND_RULES


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSourceSpec(FactorySpec):
    """Tools known only once something is reached, such as an MCP server's.

    ``factory(context)`` gets a :class:`~hermes_sdk.tool_sources.ToolSourceContext` and
    returns a :class:`~hermes_sdk.tool_sources.ToolSource`.
    """

    kind: ClassVar[Kind] = Kind.TOOL_SOURCE


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolsetSpec(Spec):
    """A named group of tools that can be enabled or disabled together.

    ``opt_in``: its tools are given only where the user asks for the toolset by name
    (``agent.add_toolsets``, ``agent.toolsets``, ``--toolsets``): for tools most sessions
    do not need (speaking replies aloud), whose schemas would cost every request tokens.
    """

    kind: ClassVar[Kind] = Kind.TOOLSET
    opt_in: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec(Spec):
    """A tool the model can call.

    ``parameters`` is the JSON schema of the arguments object. ``handler`` receives the
    parsed arguments; errors it raises become tool results, never exceptions to the loop.
    ``parallel_safe`` marks read-only tools that may run concurrently with others.
    ``takes_context`` passes a :class:`~hermes_sdk.tooling.ToolContext` as the keyword
    argument ``context``: the way to the session's terminal backend and to the user.
    ``timeout_seconds`` is the longest the kernel waits for one call before the model is
    told it timed out with its effect unknown; None uses ``tools.timeout_seconds`` (300). A
    tool with limits of its own (a command's timeout) sets it above them.
    ``describe``, when set, writes the description the model sees from the other tools the
    session offers and config.yaml as loaded (a tool that calls other tools lists them);
    the kernel calls it once per engine, and uses ``description`` when it raises.
    """

    kind: ClassVar[Kind] = Kind.TOOL
    handler: Callable[..., Any]
    parameters: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    toolset: str = "default"
    parallel_safe: bool = False
    takes_context: bool = False
    timeout_seconds: float | None = None
    describe: Callable[[Mapping[str, ToolSpec], Mapping[str, Any]], str] | None = None

    def __post_init__(self) -> None:
        _check_name(self.kind, self.name, _TOOL_NAME)
        _check_name(Kind.TOOLSET, self.toolset)
        if self.timeout_seconds is not None and not self.timeout_seconds > 0:
            raise ValueError(f"tool {self.name!r}: timeout_seconds must be over 0 (or None)")
        if not isinstance(self.parameters, Mapping) or self.parameters.get("type") != "object":
            raise ValueError(
                f"tool {self.name!r}: parameters must be a JSON schema with type 'object'"
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillSourceSpec(FactorySpec):
    """A source of SKILL.md skills (bundled with a plugin, a shared folder, a hub mirror).

    ``factory()`` takes no arguments and returns the folder (str or Path) whose
    subfolders are skills, each with its SKILL.md. The skills plugin reads these folders
    read-only; skills the agent writes go to ``HERMES_HOME/skills``.

    ``per_home``: ``factory(home)`` takes the agent's HERMES_HOME (a profile's, when one is
    chosen) and returns a folder of that home, for skills a plugin installs per home (the
    skills hub's). It is called for every session, so it must only compute the path.
    """

    kind: ClassVar[Kind] = Kind.SKILL_SOURCE
    per_home: bool = False


ReviewTrigger = Literal["lesson", "periodic"]
"""When a background review runs (see :class:`ReviewSpec`)."""

_TRIGGERS: tuple[str, ...] = ("lesson", "periodic")


@dataclass(frozen=True, slots=True, kw_only=True)
class ReviewSpec(Spec):
    """A background review: after a reply is out, a side session of its own looks back at
    the conversation with ``instructions`` and may keep something with its tools.

    ``trigger`` says when it runs: ``"lesson"`` after a turn that taught something (at
    least ``learning.review_min_tool_calls`` tool calls, a tool that failed and then
    worked, or the user correcting the agent), and it sees that turn; ``"periodic"`` every
    ``learning.nudge_every_turns`` user turns, and it sees those turns. A turn that
    triggers a lesson review gets no periodic one (the lesson review already looks at it).

    ``tools`` names the tools the review may call, whichever plugin provides them (those
    not installed are left out); ``read_only_tools`` adds every ``parallel_safe`` tool, to
    look around. ``keeps_with`` names the ones of ``tools`` that keep something: with none
    of them installed the review does not run. Its session has source ``"review"`` and a
    short iteration budget; its last line of text (``NOTHING`` when it kept nothing) is
    logged and shown to the user.
    """

    kind: ClassVar[Kind] = Kind.REVIEW
    trigger: ReviewTrigger
    instructions: str
    tools: frozenset[str]
    keeps_with: frozenset[str]
    read_only_tools: bool = False

    def __post_init__(self) -> None:
        _check_name(self.kind, self.name)
        if self.trigger not in _TRIGGERS:
            raise ValueError(
                f"review {self.name!r}: trigger must be one of {', '.join(_TRIGGERS)}, "
                f"not {self.trigger!r}"
            )
        if not isinstance(self.instructions, str) or not self.instructions.strip():
            raise ValueError(f"review {self.name!r}: instructions must be a non-empty string")
        for label in ("tools", "keeps_with"):
            names = getattr(self, label)
            if isinstance(names, str) or not all(isinstance(n, str) for n in names):
                raise ValueError(f"review {self.name!r}: {label} must be a set of tool names")
            object.__setattr__(self, label, frozenset(names))  # a list or tuple is fine too
        if not self.keeps_with or not self.keeps_with <= self.tools:
            raise ValueError(
                f"review {self.name!r}: keeps_with must name at least one of its tools"
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingWritesSpec(FactorySpec):
    """A queue of writes that wait for the user's approval (memory writes, skill edits when
    ``write_approval`` is on), offered to front-ends through ``Runtime.pending_writes``. See
    :mod:`hermes_sdk.pending_writes`.

    ``factory(context)`` gets a :class:`~hermes_sdk.pending_writes.PendingContext` and
    returns a :class:`~hermes_sdk.pending_writes.PendingWrites`; it is called in a worker
    thread whenever a front-end looks at or decides the queue, so it should be cheap.
    """

    kind: ClassVar[Kind] = Kind.PENDING


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandSpec(FactorySpec):
    """A ``hermes NAME`` subcommand, or, named ``GROUP.NAME``, a subcommand of one of the
    kernel's command groups (``plugins.install`` is ``hermes plugins install``) or of another
    plugin's (``gateway.install``).

    ``factory`` takes no arguments and returns a ``click.Command``; it is called only when the
    user runs (or asks help for) that command, so click stays out of the plugin's import.
    As text, ``"package.module:attr"`` names the ``click.Command`` itself.

    ``default``: ``hermes`` with no command runs this one (a front-end's interactive session);
    declare it in the manifest as ``default_command.NAME`` too. ``ask_parameter`` names its
    parameter that takes one question, so ``hermes -z TEXT`` asks once through it;
    ``continue_parameter`` its flag that goes on with the last session (``hermes -c``), and
    ``resume_parameter`` its option that takes a session's id or title (``hermes -r ID``,
    ``hermes -c NAME``); ``model_parameter``, ``toolsets_parameter`` and ``preload_parameter``
    the options ``hermes -m MODEL``, ``-t A,B`` and ``-s A,B`` go to (what ``-s`` loads
    from a session's start is the command's to say: the terminal chat's skills).
    """

    kind: ClassVar[Kind] = Kind.COMMAND
    default: bool = False
    ask_parameter: str = ""
    continue_parameter: str = ""
    resume_parameter: str = ""
    model_parameter: str = ""
    toolsets_parameter: str = ""
    preload_parameter: str = ""

    def __post_init__(self) -> None:
        for part in self.name.split(".") if isinstance(self.name, str) else [self.name]:
            _check_name(self.kind, part)
        self._reference(call=False)  # the text names the command, not a function making it


@dataclass(frozen=True, slots=True, kw_only=True)
class ImporterSpec(FactorySpec):
    """An importer for ``hermes import NAME [PATH]``: brings the home of another tool
    (``hermes-agent``) into this one. ``default_path`` is where that tool keeps its home
    when PATH is not given (``~/.hermes``; ~ is expanded).

    ``factory()`` takes no arguments and returns an :class:`~hermes_sdk.importing.Importer`;
    it is called only when ``hermes import`` runs, so its modules stay out of start-up.
    """

    kind: ClassVar[Kind] = Kind.IMPORTER
    default_path: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class DashboardPanelSpec(FactorySpec):
    """A page of the dashboard (the web UI): what this plugin owns, shown and controlled
    from a browser. See :mod:`hermes_sdk.dashboard`.

    ``factory(context)`` gets a :class:`~hermes_sdk.dashboard.PanelContext` and returns a
    :class:`~hermes_sdk.dashboard.Panel`; it is called when a front-end first opens the
    panel. ``title`` is the menu's word for it; ``order`` places it (lower first).
    """

    kind: ClassVar[Kind] = Kind.PANEL
    title: str
    order: int = 100


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginSourceSpec(FactorySpec):
    """Plugins that are not Hermes plugins but can run as ones: another agent's, found in
    its own entry-point group or folders, each adapted into a plugin object.

    ``factory()`` takes no arguments and returns a
    :class:`~hermes_sdk.plugin_sources.PluginSource`. The kernel asks it only when it needs
    a name no Hermes plugin has (``plugins.enabled``, ``memory.provider``) or lists every
    plugin, so an agent that enables none of them pays nothing at start-up.
    """

    kind: ClassVar[Kind] = Kind.PLUGIN_SOURCE


@dataclass(frozen=True, slots=True, kw_only=True)
class SlashCommandSpec(Spec):
    """A ``/NAME`` command, served by the runtime to every front-end (the terminal chat, the
    web UI, chat platforms ...) through ``Runtime.run_slash``; each lists it in ``/help``.

    ``handler(args, context)`` gets the text after the name and a
    :class:`~hermes_sdk.events.SlashContext`; it returns the text to show (or None, or a
    :class:`~hermes_sdk.slash.SlashReply` that also asks the front-end to act), and may be a
    coroutine function. Errors it raises are shown as one line; the chat carries on. A name
    that a built-in command already uses (``help``, ``model``, ...) is refused.
    ``on_platforms=True`` lets people on chat platforms (Telegram ...) run it too, each with
    their own ``user_scope`` in the context: say so only for a command that touches nothing
    but that person's own data. Otherwise the gateway answers that it is for the terminal.
    ``usage`` is how ``/help`` shows it (``/NAME`` if empty); ``during_turn=False`` makes a
    front-end refuse it while the session runs a turn.
    """

    kind: ClassVar[Kind] = Kind.SLASH
    handler: Callable[..., Any]
    on_platforms: bool = False
    usage: str = ""
    during_turn: bool = True

    @property
    def shown(self) -> str:
        """How ``/help`` shows the command: its usage, else ``/NAME``."""
        return self.usage or f"/{self.name}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigSectionSpec(Spec):
    """A top-level ``config.yaml`` section owned by a plugin.

    ``model`` is a pydantic model class validating that section; its field defaults are the
    section's defaults. It may also be a function of no arguments that returns that class,
    called only when the section is validated: a plugin that is loaded on every start (a
    provider, for its prices) then does not import pydantic on every start. Or the text
    ``"package.module:Model"``, imported then. The name must not be one the kernel owns
    (``plugins``).
    """

    kind: ClassVar[Kind] = Kind.CONFIG
    model: type[Any] | Callable[[], type[Any]] | str

    def __post_init__(self) -> None:
        _check_name(self.kind, self.name)
        if isinstance(self.model, str):
            object.__setattr__(self, "model", Reference(self.model, call=False))
        model = self.model
        is_model = isinstance(model, type) and callable(getattr(model, "model_validate", None))
        if not is_model and (isinstance(model, type) or not callable(model)):
            raise ValueError(
                f"config section {self.name!r}: model must be a pydantic model class "
                "(or a function that returns one)"
            )

    def model_class(self) -> type[Any]:
        """The pydantic model class (calling the function given for it, if one was)."""
        model = self.model
        if isinstance(model, type) and callable(getattr(model, "model_validate", None)):
            return model
        assert callable(model)  # text became a Reference when the spec was made
        built = model()
        if not (isinstance(built, type) and callable(getattr(built, "model_validate", None))):
            raise ValueError(
                f"config section {self.name!r}: model() returned {built!r}, not a pydantic model"
            )
        return built
