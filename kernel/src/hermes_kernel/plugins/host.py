"""The plugin host: the kernel's one typed door to plugins.

It knows every installed plugin from metadata (:mod:`discovery`), decides which may load
(:mod:`policy`), imports them lazily and safely (:mod:`loader`), keeps what they provide in a
:class:`~hermes_sdk.registration.SpecIndex`, and calls lifecycle hooks guarded
(:mod:`dispatch`). The rest of the kernel never calls ``manager.hook.x(...)`` itself.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

import pluggy

from hermes_kernel.config.controls import KERNEL_SECTIONS
from hermes_kernel.config.defaults import (
    PLUGINS_HOOK_TIMEOUT_SECONDS,
    PLUGINS_LOAD_TIMEOUT_SECONDS,
    PLUGINS_STRICT,
)
from hermes_kernel.plugins.dispatch import HookFailure, Hooks
from hermes_kernel.plugins.gates import GATE_HOOK, GateVerdict, judge_tool_call
from hermes_kernel.plugins.loader import load_plugin
from hermes_kernel.plugins.policy import Decision, PluginPolicy
from hermes_kernel.plugins.records import LoadOutcome, PluginRecord
from hermes_kernel.plugins.trace import Tracer
from hermes_sdk import (
    BackendSpec,
    CommandSpec,
    ConfigSectionSpec,
    Finding,
    HealthContext,
    ImporterSpec,
    Kind,
    LLMCall,
    LLMResult,
    MemoryProviderSpec,
    PlatformSpec,
    PromptContext,
    PromptSection,
    ProviderSpec,
    ReviewSpec,
    ServiceSpec,
    SessionInfo,
    SlashCommandSpec,
    Spec,
    StatusLine,
    ToolCall,
    ToolResult,
    ToolsetSpec,
    ToolSpec,
    TurnInfo,
    new_plugin_manager,
)
from hermes_sdk.hookspecs import (
    COMMAND_HOOKS,
    CONTRIBUTION_HOOKS,
    GATE_HOOKS,
    LIFECYCLE_HOOKS,
    TURN_HOOKS,
)
from hermes_sdk.importing import HomeImport, ImportSection
from hermes_sdk.provided import SHARED_KINDS, ProvidedSpecs
from hermes_sdk.registration import Provided, RegistrationError, SpecIndex

if TYPE_CHECKING:
    from hermes_kernel.plugins.isolation import IsolatedPlugin
    from hermes_sdk.archive import PairedUser
    from hermes_sdk.storage import StoreSchema

log = logging.getLogger("hermes.plugins")

SpecT = TypeVar("SpecT", bound=Spec)
ItemT = TypeVar("ItemT")

RESERVED_COMMANDS = frozenset(
    {"config", "doctor", "help", "import", "plugins", "version"}
    | {"plugins.list", "plugins.info", "plugins.enable", "plugins.disable"}
)
"""Built-in subcommands a plugin's command may not replace (``plugins.list`` is ``hermes
plugins list``: the repair path works whatever is installed)."""

SELECTED_BY_SETTING = frozenset({Kind.MEMORY, Kind.CONTEXT_ENGINE})
"""Kinds a setting selects by name (``memory.provider``): a foreign plugin declaring the
name is found and loaded when no Hermes plugin provides it."""

IMPORT_SECONDS = 300.0
"""The least time one plugin's ``hermes_import_home`` gets (it copies files)."""


class PluginLoadError(Exception):
    """Raised in strict mode when a plugin fails to load."""


class PluginHost:
    """Installed plugins, loaded on demand."""

    def __init__(
        self,
        records: Sequence[PluginRecord],
        policy: PluginPolicy,
        *,
        timeout: float = PLUGINS_LOAD_TIMEOUT_SECONDS,
        hook_timeout: float = PLUGINS_HOOK_TIMEOUT_SECONDS,
        isolated: Sequence[str] = (),
        strict: bool = PLUGINS_STRICT,
        tracer: Tracer | None = None,
        manager: pluggy.PluginManager | None = None,
        on_outcome: Callable[[PluginRecord, LoadOutcome], None] | None = None,
        home: Path | None = None,
    ) -> None:
        self.records = list(records)
        self._by_name: dict[str, PluginRecord] = {}
        for record in self.records:
            self._by_name.setdefault(record.name, record)
        self.policy = policy
        self.home = home
        """HERMES_HOME, where plugin sources look for foreign plugins (None: they are not
        asked)."""
        self._asked: set[str] = set()  # names plugin sources were asked for
        self._asked_all = False
        self._finding = threading.RLock()  # one search at a time; its own thread may re-enter
        self._finder: int | None = None  # the thread searching now
        self.timeout = timeout
        self.strict = strict
        self.tracer = tracer
        self.manager = manager if manager is not None else new_plugin_manager()
        self.index = SpecIndex()
        self.hooks = Hooks(self.manager, hook_timeout, tracer=tracer)
        """Every run-time hook call, each plugin's under a deadline."""
        self._gates_loaded = False
        self.isolated_names = frozenset(isolated)
        self.isolated: dict[str, IsolatedPlugin] = {}
        """The plugins loaded in a host process of their own (``plugins.isolated``)."""
        self.outcomes: dict[str, LoadOutcome] = {}
        self._loading = threading.RLock()
        self._on_outcome = on_outcome
        self.report_failures = True
        """Log each failure as a warning; commands that list failures themselves turn it off."""

    # --- what is installed ----------------------------------------------------------------

    def record(self, name: str) -> PluginRecord | None:
        return self._by_name.get(name)

    def decision(self, name: str) -> Decision:
        record = self._by_name.get(name)
        return self.policy.decide(name, foreign=record is not None and record.foreign)

    def enabled(self) -> list[PluginRecord]:
        """Plugins the controls allow, in name order (the foreign plugins that config.yaml
        names are looked up first)."""
        if self.home is not None and self._finder != threading.get_ident():
            self.find_configured()
        return [r for r in list(self._by_name.values()) if self.decision(r.name).enabled]

    def find_configured(self) -> None:
        """Ask the sources, once, for the names ``plugins.foreign`` and ``plugins.enabled``
        give that no Hermes plugin has (what decides which plugins are enabled); a name
        nothing has is said once."""
        policy = self.policy
        wanted = policy.config_foreign | (policy.config_enabled or frozenset())
        if not wanted - self._by_name.keys() - self._asked:
            return
        with self._finding:  # another thread waits here, then sees what was found
            unknown = wanted - self._by_name.keys() - self._asked
            if not unknown:
                return
            self.find_foreign(unknown)
            self._asked |= unknown
            for name in sorted(unknown - self._by_name.keys()):
                key = "foreign" if name in policy.config_foreign else "enabled"
                log.warning(
                    "plugins.%s names %r, which no installed plugin or plugin source has; "
                    "see: hermes plugins list",
                    key,
                    name,
                )
            for name in sorted((policy.config_enabled or frozenset()) & self.policy.found_foreign):
                log.warning(
                    "plugins.enabled names %r, a foreign plugin: it is enabled, but belongs in "
                    "plugins.foreign (hermes plugins enable %s puts it there)",
                    name,
                    name,
                )

    # --- plugins from elsewhere -------------------------------------------------------------

    def find_foreign(self, names: frozenset[str] | None) -> list[PluginRecord]:
        """Ask the plugin sources for ``names`` (None: every plugin they can find) once, and
        add what they find as foreign plugins: opt-in, listed with their origin. A name a
        Hermes plugin already has is refused with one line."""
        if self.home is None:
            return []
        with self._finding:
            if self._asked_all:
                return []
            if names is not None:
                names = frozenset(names - self._asked)
                if not names:
                    return []
            outer, self._finder = self._finder, threading.get_ident()
            # While the sources are asked, a name they are asked about may be foreign: it
            # must not make plugins.enabled an allow-list that leaves the source itself out.
            pending = (
                (self.policy.config_enabled or frozenset()) - self._by_name.keys() - self._asked
            )
            known = self.policy.found_foreign
            self.policy = replace(self.policy, found_foreign=known | pending)
            try:  # the sources' own loading asks for the enabled plugins: not again here
                from hermes_kernel.plugins.foreign import ask_sources

                records = ask_sources(self._sources(), self.timeout, self.home, names)
            finally:
                self._finder = outer
                self.policy = replace(self.policy, found_foreign=known)
            added = self._add_foreign(records)  # before they count as asked: see enabled()
            if names is None:
                self._asked_all = True
            else:
                self._asked |= names
            return added

    def _sources(self) -> list[Provided]:
        """The plugin sources, from the enabled plugins that declare one (a source must: a
        listing imports nothing else)."""
        for record in self.enabled():
            if any(kind is Kind.PLUGIN_SOURCE for kind, _name in record.declares):
                self.load(record.name)
        return self.index.of_kind(Kind.PLUGIN_SOURCE)

    def _add_foreign(self, records: list[PluginRecord]) -> list[PluginRecord]:
        added = []
        for record in records:
            if record.name in self._by_name:
                if self._by_name[record.name].origin != record.origin:
                    log.warning(
                        "%s is not loaded: a plugin named %r is already installed",
                        record.origin,
                        record.name,
                    )
                continue
            self._by_name[record.name] = record
            self.records.append(record)
            added.append(record)
        found = frozenset(r.name for r in self._by_name.values() if r.foreign)
        self.policy = replace(self.policy, found_foreign=found)
        return added

    def declared(self, kind: Kind) -> dict[str, list[PluginRecord]]:
        """Each declared name of ``kind`` and the enabled plugins declaring it (metadata only)."""
        found: dict[str, list[PluginRecord]] = {}
        for record in self.enabled():
            for name in record.declared_names(kind):
                found.setdefault(name, []).append(record)
        return found

    # --- loading ------------------------------------------------------------------------

    def load(self, name: str) -> LoadOutcome:
        """Load one enabled plugin (once per process); never raises unless strict."""
        if name in self.outcomes:
            return self.outcomes[name]
        with self._loading:  # two threads asking at once (parallel tool calls) load it once
            if name in self.outcomes:
                return self.outcomes[name]
            return self._load(name)

    def _load(self, name: str) -> LoadOutcome:
        record = self._by_name[name]
        if name in self.isolated_names:
            outcome = self._load_isolated(record)
        else:
            outcome = load_plugin(record, self.manager, self.timeout, self.tracer)
        if outcome.ok:
            outcome = self._admit(record, outcome)
        self.outcomes[name] = outcome
        if self._on_outcome is not None:
            self._on_outcome(record, outcome)
        if not outcome.ok:
            self._report(record, outcome)
        return outcome

    def _load_isolated(self, record: PluginRecord) -> LoadOutcome:
        """Start ``record``'s host process and register the stand-in for its hooks."""
        from hermes_kernel.plugins.isolation import IsolatedPlugin  # subprocess, pipes: lazily

        def disabled(reason: str) -> None:
            self.hooks.disabled[record.name] = reason  # its hooks are skipped from now on
            log.warning(
                "plugin %r is disabled for the rest of this process: %s (see hermes plugins list)",
                record.name,
                reason,
            )

        isolated = IsolatedPlugin(record, self.timeout, disabled)
        outcome = isolated.load()
        if self.tracer is not None:
            self.tracer("<load isolated>", record.name, outcome.seconds)
        if not outcome.ok:
            return outcome
        self.isolated[record.name] = isolated
        self.manager.register(outcome.plugin, name=record.name)
        return outcome

    def run_time_states(self) -> dict[str, str]:
        """What happened to plugins after they loaded, one phrase each: isolated hosts
        (running, restarted, crashed) and plugins disabled for missing hook deadlines."""
        states = {name: isolated.summary for name, isolated in self.isolated.items()}
        for name, reason in self.hooks.disabled.items():
            states.setdefault(name, f"disabled at run time: {reason}")
        return states

    def stop_isolated(self) -> None:
        """End the plugin host processes (they would end with this process anyway)."""
        for isolated in self.isolated.values():
            isolated.stop()

    def _reject(self, record: PluginRecord, outcome: LoadOutcome, error: str) -> LoadOutcome:
        """Undo a load: forget its specs, unregister it, and mark the outcome failed."""
        self.index.remove_plugin(record.name)
        plugin = self.manager.get_plugin(record.name)
        if plugin is not None:
            self.manager.unregister(plugin)
        outcome.ok, outcome.error, outcome.specs, outcome.hooks = False, error, [], []
        return outcome

    def _admit(self, record: PluginRecord, outcome: LoadOutcome) -> LoadOutcome:
        """Add a loaded plugin's specs to the index and compare them with its manifest;
        reject it if a name is reserved or taken (or, in strict mode, on any mismatch)."""
        try:
            for spec in outcome.specs:
                if spec.kind is Kind.CONFIG and spec.name in KERNEL_SECTIONS:
                    raise RegistrationError(f"config section {spec.name!r} belongs to the kernel")
                if spec.kind is Kind.COMMAND and spec.name in RESERVED_COMMANDS:
                    raise RegistrationError(f"command {spec.name!r} is a built-in hermes command")
            self.index.add_all(record.name, outcome.specs)
        except RegistrationError as exc:
            return self._reject(record, outcome, str(exc))
        outcome.hooks = sorted(
            caller.name
            for caller in self.manager.get_hookcallers(outcome.plugin) or []
            if caller.name in (*LIFECYCLE_HOOKS, *CONTRIBUTION_HOOKS, *GATE_HOOKS, *TURN_HOOKS)
        )
        provided = outcome.provided()
        if record.has_manifest:
            for kind, name in sorted(provided - record.declares):
                outcome.warnings.append(
                    f"provides {kind.value} {name!r} but does not declare it; add "
                    f"'{kind.value}.{name}' to its hermes.provides entry points"
                )
            for kind, name in sorted(record.declares - provided):
                outcome.warnings.append(f"declares {kind.value} {name!r} but does not provide it")
        if record.help and _help_disagrees(record, outcome.specs):
            # A help file is optional; one that is shipped must be right. Its reader is
            # imported only to say what is wrong, so loading a plugin costs nothing more.
            from hermes_commons.help_file import help_problems
            from hermes_sdk import parse_manifest_key

            lines = {parse_manifest_key(key): text for key, text in record.help}
            outcome.warnings += help_problems(lines, outcome.specs)
        if outcome.warnings and self.strict:
            return self._reject(record, outcome, outcome.warnings[0])
        return outcome

    def _report(self, record: PluginRecord, outcome: LoadOutcome) -> None:
        line = f"{record.label} failed to load: {outcome.error}"
        if self.strict:
            raise PluginLoadError(line)
        if not self.report_failures:
            return
        log.warning("%s; disable it with: hermes plugins disable %s", line, record.name)
        if outcome.traceback:
            log.debug("traceback of %s:\n%s", record.label, outcome.traceback)

    def load_all(self) -> list[LoadOutcome]:
        """Load every enabled plugin: those with a manifest first, each group in name order.

        ``require`` tries plugins in the same order, so which of two plugins providing the
        same name wins (the first) never depends on the command that loaded them.
        """
        ordered = sorted(self.enabled(), key=lambda record: not record.has_manifest)  # stable
        return [self.load(record.name) for record in ordered]

    def _candidates(self, kind: Kind, name: str | None) -> list[PluginRecord]:
        """Enabled plugins that may provide ``kind`` (``name``): declarers first, then plugins
        without a manifest (they could provide anything)."""
        enabled = self.enabled()
        declaring = [
            r
            for r in enabled
            if any(k is kind and (name is None or n == name) for k, n in r.declares)
        ]
        undeclared = [r for r in enabled if not r.has_manifest]
        return declaring + undeclared

    def require(self, kind: Kind, name: str) -> Provided | None:
        """The spec of ``kind`` named ``name``, importing only plugins that may provide it;
        when none does, a foreign plugin declaring it (a setting named it: that opts in)."""
        found = self.index.get(kind, name)
        for record in self._candidates(kind, name):
            if found is not None:
                break
            self.load(record.name)
            found = self.index.get(kind, name)
        if found is None and kind in SELECTED_BY_SETTING:
            self.find_foreign(frozenset({name}))
            for record in self._selected_foreign(kind, name):
                self.load(record.name)
                found = self.index.get(kind, name)
                if found is not None:
                    break
        return found

    def _selected_foreign(self, kind: Kind, name: str) -> list[PluginRecord]:
        """Foreign plugins that declare ``kind`` ``name`` and nothing but opting in keeps
        from loading (``plugins.disabled`` and the environment still do)."""
        return [
            record
            for record in list(self.records)
            if record.foreign
            and (kind, name) in record.declares
            and ((decision := self.decision(record.name)).enabled or decision.opt_in)
        ]

    def provided(self, kind: Kind) -> list[Provided]:
        """Every spec of ``kind``, importing only plugins that may provide that kind."""
        for record in self._candidates(kind, None):
            self.load(record.name)
        return self.index.of_kind(kind)

    def _typed(self, kind: Kind, spec_type: type[SpecT]) -> list[SpecT]:
        return [cast(SpecT, p.spec) for p in self.provided(kind)]

    def shared(self, *, lazily: bool = False) -> ProvidedSpecs:
        """What plugins provide for other plugins, for the contexts plugins get: the
        :data:`~hermes_sdk.provided.SHARED_KINDS` loaded now (a tool's or a prompt hook's
        deadline never waits for an import), or, ``lazily`` (a command, on this thread),
        any kind, loaded when first asked for."""
        if lazily:
            return ProvidedSpecs(
                lambda kind: [p.spec for p in self.provided(kind)],
                find=self._find_spec,
                owner=self._owner_of,
            )
        return ProvidedSpecs({kind: [p.spec for p in self.provided(kind)] for kind in SHARED_KINDS})

    def _find_spec(self, kind: Kind, name: str) -> Spec | None:
        found = self.require(kind, name)
        return found.spec if found is not None else None

    def _owner_of(self, spec: Spec) -> str:
        found = self.index.get(spec.kind, spec.name)
        return found.plugin if found is not None and found.spec is spec else ""

    # --- registration hooks, typed --------------------------------------------------------

    def providers(self) -> list[ProviderSpec]:
        return self._typed(Kind.PROVIDER, ProviderSpec)

    def terminal_backends(self) -> list[BackendSpec]:
        return self._typed(Kind.BACKEND, BackendSpec)

    def platforms(self) -> list[PlatformSpec]:
        return self._typed(Kind.PLATFORM, PlatformSpec)

    def services(self) -> list[ServiceSpec]:
        return self._typed(Kind.SERVICE, ServiceSpec)

    def memory_providers(self) -> list[MemoryProviderSpec]:
        return self._typed(Kind.MEMORY, MemoryProviderSpec)

    def toolsets(self) -> list[ToolsetSpec]:
        return self._typed(Kind.TOOLSET, ToolsetSpec)

    def tools(self) -> list[ToolSpec]:
        return self._typed(Kind.TOOL, ToolSpec)

    def reviews(self) -> list[ReviewSpec]:
        return self._typed(Kind.REVIEW, ReviewSpec)

    def cli_commands(self) -> list[CommandSpec]:
        return self._typed(Kind.COMMAND, CommandSpec)

    def slash_commands(self) -> list[SlashCommandSpec]:
        return self._typed(Kind.SLASH, SlashCommandSpec)

    def config_sections(self) -> list[ConfigSectionSpec]:
        return self._typed(Kind.CONFIG, ConfigSectionSpec)

    def importers(self) -> list[ImporterSpec]:
        return self._typed(Kind.IMPORTER, ImporterSpec)

    # --- lifecycle hooks, guarded ---------------------------------------------------------

    def load_observers(self) -> None:
        """Load the plugins that implement hooks a session calls, before one starts (not
        those implementing only a command's hooks, such as ``hermes_status_lines``)."""
        for record in self._candidates(Kind.HOOK, None):
            hooks = {name for kind, name in record.declares if kind is Kind.HOOK}
            if not record.has_manifest or hooks - set(COMMAND_HOOKS):
                self.load(record.name)

    def load_implementing(self, hook: str) -> None:
        """Load the plugins that declare ``hook`` (and those without a manifest), only."""
        for record in self._candidates(Kind.HOOK, hook):
            self.load(record.name)

    def admit_chat_users(self, home: str, users: Sequence[PairedUser]) -> int | None:
        """``hermes_admit_chat_users``: how many of ``users`` the plugins that keep chat
        access let in anew; None if no plugin keeps it. OSError if each one that does
        failed (logged)."""
        hook = "hermes_admit_chat_users"
        for record in self._candidates(Kind.HOOK, hook):
            self.load(record.name)
        if not self.implements(hook):
            return None
        answers = self.hooks.call(hook, {"home": home, "users": list(users)})
        if not answers:
            raise OSError("the plugin that keeps chat access failed to let the users in")
        return len({(u.platform, u.user_id) for _plugin, new in answers for u in new})

    def store_schemas(self) -> list[StoreSchema]:
        """``hermes_store_schemas``: the tables each loaded plugin keeps in the state store
        (a plugin whose hook failed is logged and left out)."""
        hook = "hermes_store_schemas"
        for record in self._candidates(Kind.HOOK, hook):
            self.load(record.name)
        found: dict[str, StoreSchema] = {}
        for _plugin, schemas in self.hooks.call(hook, {}):
            for schema in schemas:
                found.setdefault(schema.name, schema)
        return [found[name] for name in sorted(found)]

    def implements(self, hook: str) -> bool:
        """Whether a loaded plugin (not disabled) implements ``hook``
        (``"hermes_on_session_start"``)."""
        return bool(self.hooks.implementations(hook))

    def _notify(self, hook: str, **kwargs: object) -> None:
        self.hooks.call(hook, dict(kwargs))

    async def _anotify(self, hook: str, **kwargs: object) -> None:
        await self.hooks.acall(hook, dict(kwargs))

    def prompt_sections(self, context: PromptContext) -> list[PromptSection]:
        """Every plugin's system-prompt blocks; a plugin yielding anything else is skipped."""
        sections: list[PromptSection] = []
        for plugin, result in self.hooks.call("hermes_prompt_sections", {"context": context}):
            items = list(result or [])
            if all(isinstance(item, PromptSection) for item in items):
                sections.extend(items)
            else:
                log.warning("plugin %r: hermes_prompt_sections must yield PromptSection", plugin)
        return sections

    def _contributions(
        self, hook: str, kwargs: dict[str, object], item: type[ItemT], at_least: float = 0.0
    ) -> list[tuple[str, list[ItemT] | str]]:
        """Each implementing plugin's items for a command's contribution hook, or one line
        saying why it has none (it raised, hung, or yielded something else)."""
        self.load_implementing(hook)
        answers: list[tuple[str, list[ItemT] | str]] = []
        for plugin, result in self.hooks.answers(hook, kwargs, at_least=at_least):
            if isinstance(result, HookFailure):
                answers.append((plugin, result.reason))
                continue
            items = list(result or [])
            if all(isinstance(one, item) for one in items):
                answers.append((plugin, cast("list[ItemT]", items)))
            else:
                answers.append((plugin, f"{hook} must yield {item.__name__} objects"))
        return answers

    def status_lines(self, context: HealthContext) -> list[tuple[str, list[StatusLine] | str]]:
        """Each plugin's ``hermes status`` lines, or one line saying why it has none."""
        return self._contributions("hermes_status_lines", {"context": context}, StatusLine)

    def doctor_checks(self, context: HealthContext) -> list[tuple[str, list[Finding] | str]]:
        """Each plugin's ``hermes doctor`` findings, or one line saying why it has none;
        ``--online`` checks get ``ONLINE_SECONDS`` each at least."""
        from hermes_sdk.health import ONLINE_SECONDS

        at_least = ONLINE_SECONDS if context.online else 0.0
        return self._contributions("hermes_doctor_checks", {"context": context}, Finding, at_least)

    def import_home(self, request: HomeImport) -> list[tuple[str, list[ImportSection] | str]]:
        """Each plugin's sections of one home's import, or one line saying why it has none;
        copying takes a while, so each gets ``IMPORT_SECONDS`` at least."""
        return self._contributions(
            "hermes_import_home", {"request": request}, ImportSection, IMPORT_SECONDS
        )

    def check_command(self, command: str, normalized: str, backend: str) -> list[str]:
        """The plugins' verdicts on a command ("ask: ..." / "deny: ..."); None answers and
        answers that are not strings are dropped."""
        answers = self.hooks.call(
            "hermes_check_command",
            {"command": command, "normalized": normalized, "backend": backend},
        )
        return [answer for _, answer in answers if isinstance(answer, str)]

    # Session hooks block the calling thread (never the event loop's) up to the deadline;
    # the per-call hooks are awaited, so the loop serves on while they run.

    def on_session_start(self, session: SessionInfo) -> None:
        self._notify("hermes_on_session_start", session=session)

    def on_session_end(self, session: SessionInfo, reason: str) -> None:
        self._notify("hermes_on_session_end", session=session, reason=reason)

    async def pre_llm_call(self, call: LLMCall) -> None:
        await self._anotify("hermes_pre_llm_call", call=call)

    async def post_llm_call(self, call: LLMCall, result: LLMResult) -> None:
        await self._anotify("hermes_post_llm_call", call=call, result=result)

    async def pre_tool_call(self, call: ToolCall) -> None:
        await self._anotify("hermes_pre_tool_call", call=call)

    async def post_tool_call(self, call: ToolCall, result: ToolResult) -> None:
        await self._anotify("hermes_post_tool_call", call=call, result=result)

    async def turn_context(self, session: SessionInfo, text: str) -> list[str]:
        """The plugins' context blocks for this turn's user message (``hermes_turn_context``);
        one that fails, or answers anything but text, adds nothing."""
        answers = await self.hooks.acall("hermes_turn_context", {"session": session, "text": text})
        return [answer for _plugin, answer in answers if isinstance(answer, str) and answer]

    async def transform_tool_result(self, call: ToolCall, result: str) -> str:
        """``result`` through each ``hermes_transform_tool_result``, in plugin order."""
        return await self._chain("hermes_transform_tool_result", "result", result, call=call)

    async def transform_reply(self, session: SessionInfo, text: str) -> str:
        """``text`` through each ``hermes_transform_reply``, in plugin order."""
        return await self._chain("hermes_transform_reply", "text", text, session=session)

    def transform_terminal_output(self, command: str, output: str) -> str:
        """``output`` through each ``hermes_transform_terminal_output``, in plugin order,
        from the tool's worker thread; one that fails or answers anything but text is
        skipped."""
        hook = "hermes_transform_terminal_output"
        for impl in self.hooks.implementations(hook):
            answer = self.hooks.answer(impl, hook, {"command": command, "output": output})
            output = _next_text(hook, impl.plugin_name, output, answer)
        return output

    async def on_turn_end(self, turn: TurnInfo) -> None:
        await self._anotify("hermes_on_turn_end", turn=turn)

    async def _chain(self, hook: str, name: str, text: str, **kwargs: object) -> str:
        """``text`` through each implementation, each seeing the last one's answer; one
        that raises, hangs or answers anything but text (or None) is skipped."""
        for impl in self.hooks.implementations(hook):
            answer = await self.hooks.aanswer(impl, hook, {**kwargs, name: text})
            text = _next_text(hook, impl.plugin_name, text, answer)
        return text

    async def tool_gate(self, call: ToolCall) -> GateVerdict:
        """The gates' verdict on a tool call (``hermes_tool_gate``); the plugins that
        declare a gate are loaded on the first call (off the event loop)."""
        if not self._gates_loaded:
            await asyncio.to_thread(self.load_implementing, GATE_HOOK)
            self._gates_loaded = True
        unloaded = self._unloaded_gates()
        gated = unloaded or self.implements(GATE_HOOK) or self.hooks.switched_off(GATE_HOOK)
        if not gated:
            return GateVerdict(call.arguments)
        return await judge_tool_call(self.hooks, call, unloaded)

    def _unloaded_gates(self) -> tuple[str, ...]:
        """Enabled plugins that declare a gate but failed to load (or to start isolated)."""
        return tuple(
            record.name
            for record in self.enabled()
            if (Kind.HOOK, GATE_HOOK) in record.declares
            and (outcome := self.outcomes.get(record.name)) is not None
            and not outcome.ok
        )


def _next_text(hook: str, plugin: str, text: str, answer: object) -> str:
    """A chained transform's step: its answer when it is text; else (None, a failure
    already logged, anything else) the text as it was."""
    if isinstance(answer, str):
        return answer
    if answer is not None and not isinstance(answer, HookFailure):
        log.warning(
            "plugin %r: %s answered %s, not text (skipped)", plugin, hook, type(answer).__name__
        )
    return text


def _help_disagrees(record: PluginRecord, specs: Sequence[Spec]) -> bool:
    """Whether a line of the plugin's help file is not the description of what it names, or
    a command it registers has no line there."""
    from hermes_sdk import manifest_key

    described = {manifest_key(spec.kind, spec.name): spec.description for spec in specs}
    lines = dict(record.help)
    commands = [manifest_key(s.kind, s.name) for s in specs if s.kind is Kind.COMMAND]
    return any(described.get(key) != text for key, text in lines.items()) or any(
        key not in lines for key in commands
    )
