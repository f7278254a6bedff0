"""One hermes-agent plugin, loaded and turned into a Hermes plugin object.

The kernel calls :func:`build` where it would import a Hermes plugin: in its loading thread,
under ``plugins.load_timeout_seconds`` (or in a host process of its own, for
``plugins.isolated``). Importing the plugin and its ``register(ctx)`` both happen inside, so
a plugin that hangs or raises there fails to load with one line, and what it registered
before failing is dropped with it.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import logging
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from hermes_plugin_compat_hermes_agent import served
from hermes_plugin_compat_hermes_agent.context import (
    Manifest,
    PluginContext,
    Registrations,
    ToolRegistration,
)
from hermes_plugin_compat_hermes_agent.hooks import (
    MAPPED_HOOKS,
    VALID_HOOKS,
    hook_functions,
    result_text,
)
from hermes_plugin_compat_hermes_agent.memory import GuestMemory
from hermes_plugin_compat_hermes_agent.served import constants
from hermes_plugin_compat_hermes_agent.where import HERMES_NAME, Where, hermes_name
from hermes_sdk import (
    MemoryProviderSpec,
    SkillSourceSpec,
    SlashCommandSpec,
    SlashContext,
    ToolSpec,
    hookimpl,
)
from hermes_sdk.tooling import ToolContext

__all__ = ["build", "hermes_name"]

log = logging.getLogger("hermes.plugins.hermes-agent")

UNMAPPED_HOOKS = VALID_HOOKS - MAPPED_HOOKS
"""hermes-agent hooks Hermes has no moment for yet: registered, reported, never called."""


def build(argument: str) -> object:
    """The Hermes plugin object for the hermes-agent plugin ``argument`` names."""
    where = Where.decode(argument)
    served.install()
    constants.set_home(where.home)
    manifest, register, module = _load(where)
    registered = Registrations()
    if register is not None:
        register(PluginContext(manifest, registered, Path(where.home)))
    if where.memory and not registered.memory_providers and module is not None:
        registered.memory_providers += _provider_classes(module)
    if where.memory and not registered.memory_providers:
        raise RuntimeError("it registers no memory provider (register_memory_provider)")
    if register is None and not registered.memory_providers:
        raise RuntimeError("it has no register(ctx) function")
    for line in _report(where.name, registered):
        log.warning("hermes-agent plugin %r: %s", where.name, line)
    return _Guest(where, registered)


def _load(where: Where) -> tuple[Manifest, Callable[..., Any] | None, ModuleType | None]:
    if where.entry_point:
        found = _load_entry_point(where.entry_point)
        register = found if not isinstance(found, ModuleType) else getattr(found, "register", None)
        module = found if isinstance(found, ModuleType) else None
        manifest = Manifest(where.name, where.version, where.description, path=where.entry_point)
        return manifest, register if callable(register) else None, module
    folder = Path(where.folder)
    package = "_hermes_user_memory" if where.memory else "hermes_plugins"
    module = _import_folder(package, where.name, folder)
    register = getattr(module, "register", None)
    manifest = Manifest(
        where.name,
        where.version,
        where.description,
        source="user",
        path=str(folder),
        kind="exclusive" if where.memory else "standalone",
    )
    return manifest, register if callable(register) else None, module


def _load_entry_point(value: str) -> Any:
    """What an entry point's ``module`` or ``module:attr.path`` names (importlib.metadata's
    rule, without importing importlib.metadata: ~16 ms at start-up)."""
    module, _, attrs = value.partition(":")
    found: Any = importlib.import_module(module.strip())
    for attr in filter(None, attrs.split("[")[0].strip().split(".")):
        found = getattr(found, attr)
    return found


def _import_folder(package: str, name: str, folder: Path) -> ModuleType:
    """``folder`` imported as ``package.NAME`` (relative imports work), as hermes-agent does;
    a name another folder's plugin already took gets a suffix, and a failed import leaves
    nothing of itself in sys.modules."""
    if package not in sys.modules:
        parent = ModuleType(package)
        parent.__path__ = []
        sys.modules[package] = parent
    base = f"{package}.{name.replace('-', '_')}"
    fullname, number = base, 1
    while fullname in sys.modules and getattr(sys.modules[fullname], "__file__", None) != str(
        folder / "__init__.py"
    ):
        number += 1
        fullname = f"{base}_{number}"
    spec = importlib.util.spec_from_file_location(
        fullname, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"{folder} is not a Python package (no __init__.py)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[fullname] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        for key in [k for k in sys.modules if k == fullname or k.startswith(fullname + ".")]:
            del sys.modules[key]
        raise
    return module


def _provider_classes(module: ModuleType) -> list[Any]:
    """hermes-agent's fallback: the first ``MemoryProvider`` subclass in the module, made."""
    base = sys.modules.get("agent.memory_provider")
    wanted = getattr(base, "MemoryProvider", None)
    if wanted is None:
        return []
    for value in vars(module).values():
        if (
            inspect.isclass(value)
            and value is not wanted
            and issubclass(value, wanted)
            and not inspect.isabstract(value)
        ):
            return [value()]
    return []


def _report(name: str, registered: Registrations) -> Iterator[str]:
    """One line per thing registered that Hermes does not run."""
    yield from registered.unsupported
    for hook in sorted(registered.hooks):
        if hook in UNMAPPED_HOOKS:
            yield f"hook {hook!r} has no equivalent on Hermes yet; it is never called"
        elif hook not in VALID_HOOKS:
            yield f"hook {hook!r} is not a hermes-agent hook; it is never called"
    if len(registered.memory_providers) > 1:
        yield "registers more than one memory provider; only the first is used"


def _toolset(name: str) -> str:
    clean = name.strip().lower().replace(" ", "-")
    return clean if HERMES_NAME.fullmatch(clean) else "hermes-agent"


def _tool_spec(tool: ToolRegistration) -> ToolSpec:
    schema = tool.schema.get("function", tool.schema)
    parameters = dict(schema.get("parameters") or {})
    parameters.setdefault("type", "object")
    parameters.setdefault("properties", {})
    handler = tool.handler

    def handle(context: ToolContext, **arguments: Any) -> Any:
        answer = handler(
            dict(arguments),
            task_id=context.session_id,
            session_id=context.session_id,
            user_task=None,
        )
        if inspect.isawaitable(answer):
            return _await_text(answer)
        return result_text(answer)

    return ToolSpec(
        name=tool.name,
        description=tool.description or str(schema.get("description") or tool.name),
        parameters=parameters,
        toolset=_toolset(tool.toolset),
        takes_context=True,
        handler=handle,
    )


async def _await_text(answer: Any) -> str:
    return result_text(await answer)


def _available(plugin: str, tool: ToolRegistration) -> bool:
    """hermes-agent hides a tool whose ``check_fn`` says no (or raises); so does Hermes, at
    load."""
    if tool.check_fn is None:
        return True
    try:
        return bool(tool.check_fn())
    except Exception as exc:  # noqa: BLE001 - a failing check hides the tool, as there
        log.info(
            "hermes-agent plugin %r: tool %r hidden: its check raised %s", plugin, tool.name, exc
        )
        return False


def _slash(handler: Callable[..., Any]) -> Callable[..., Any]:
    async def run(args: str, context: SlashContext) -> str | None:
        answer = handler(args.strip())
        if inspect.isawaitable(answer):
            answer = await answer
        return str(answer) if answer else None

    return run


class _Guest:
    """The Hermes plugin object: registration hooks for what was registered, and the hook
    implementations :func:`~hooks.hook_functions` made (set on the instance)."""

    def __init__(self, where: Where, registered: Registrations) -> None:
        self.where = where
        self.registered = registered
        for function in hook_functions(where.name, registered.hooks):
            setattr(self, function.__name__, function)

    def _say(self, line: str) -> None:
        log.warning("hermes-agent plugin %r: %s", self.where.name, line)

    @hookimpl
    def hermes_tools(self) -> Iterator[ToolSpec]:
        for tool in self.registered.tools:
            if not _available(self.where.name, tool):
                continue
            try:
                yield _tool_spec(tool)
            except ValueError as exc:  # a name or schema Hermes refuses: that tool alone
                self._say(f"tool {tool.name!r} is left out: {exc}")

    @hookimpl
    def hermes_slash_commands(self) -> Iterator[SlashCommandSpec]:
        for command in self.registered.commands:
            name = hermes_name(command.name)
            if name is None:
                self._say(f"command /{command.name} is left out: not a name Hermes accepts")
                continue
            hint = f" ({command.args_hint})" if command.args_hint else ""
            yield SlashCommandSpec(
                name=name,
                description=(command.description or f"{self.where.name}'s command") + hint,
                handler=_slash(command.handler),
            )

    @hookimpl
    def hermes_skill_sources(self) -> Iterator[SkillSourceSpec]:
        if self.registered.skills:
            name = _toolset(self.where.name)
            yield SkillSourceSpec(
                name=f"hermes-agent-{name}"[:64],
                description=f"skills of the hermes-agent plugin {self.where.name}",
                factory=self._skill_folder,
            )

    def _skill_folder(self) -> Path:
        """A folder of links, one per registered skill (each SKILL.md's own folder)."""
        folder = Path(self.where.home) / "cache" / "hermes-agent-skills" / self.where.name
        folder.mkdir(parents=True, exist_ok=True)
        for name, path, _description in self.registered.skills:
            link = folder / name
            target = path.resolve().parent
            if link.is_symlink() and link.resolve() != target:
                link.unlink()
            if not link.exists():
                link.symlink_to(target, target_is_directory=True)
        return folder

    @hookimpl
    def hermes_memory_providers(self) -> Iterator[MemoryProviderSpec]:
        if self.registered.memory_providers:
            provider = self.registered.memory_providers[0]
            name, home = self.where.name, Path(self.where.home)
            yield MemoryProviderSpec(
                name=name,
                description=f"the hermes-agent memory provider {name}",
                factory=lambda _context: GuestMemory(provider, name, home),
            )
