"""Conformance suites every plugin passes, and the ones for tools, memory and skills plugins.

Subclass one in your plugin's tests and point it at your plugin::

    from pathlib import Path
    import hermes_plugin_acme
    from hermes_testkit import ToolsTests

    class TestAcme(ToolsTests):
        plugin = hermes_plugin_acme
        pyproject = Path(__file__).parents[1] / "pyproject.toml"
        examples = {"count_words": ({"text": "a b"}, "2 words")}   # tool: (arguments, result)

:class:`PluginTests` (the base of the others) registers the plugin exactly as the kernel does
and checks that its ``hermes.provides`` manifest in pyproject.toml lists exactly what it
registers, so Hermes can find it without importing it, and that its ``hermes-help.toml``
gives each command its description (:mod:`hermes_commons.help_file`), so ``hermes --help`` can
say what the command does without importing it either.
"""

from __future__ import annotations

import asyncio
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import pytest

from hermes_commons.help_file import help_file_of, help_problems, parse_help
from hermes_sdk.events import PromptContext
from hermes_sdk.hookspecs import CONTRIBUTION_HOOKS, GATE_HOOKS, LIFECYCLE_HOOKS, TURN_HOOKS
from hermes_sdk.memory import MemoryContext, MemoryProvider, TurnRecord
from hermes_sdk.specs import CommandSpec, Kind, MemoryProviderSpec, SkillSourceSpec, ToolSpec
from hermes_sdk.tool_calls import (
    ArgumentsRejected,
    check_arguments,
    result_problem,
    schema_problem,
    signature_problems,
)
from hermes_sdk.tooling import ToolContext
from hermes_testkit.contexts import call_with_tools, tool_context
from hermes_testkit.registered import RegisteredPlugin

__all__ = ["Expected", "MemoryProviderTests", "PluginTests", "SkillSourceTests", "ToolsTests"]


class PluginTests:
    """Registration and manifest checks for any plugin."""

    plugin: ClassVar[ModuleType | object]
    pyproject: ClassVar[Path | None] = None
    """The plugin's pyproject.toml; its manifest is compared with what the plugin registers."""

    @pytest.fixture
    def registered(self, register_plugin: Any) -> RegisteredPlugin:
        result: RegisteredPlugin = register_plugin(self.plugin)
        return result

    def _project(self) -> dict[str, Any]:
        if self.pyproject is None:
            pytest.skip("set pyproject = Path(__file__).parents[1] / 'pyproject.toml' to check it")
        project: dict[str, Any] = tomllib.loads(self.pyproject.read_text())["project"]
        return project

    def test_it_registers_without_errors(self, registered: RegisteredPlugin) -> None:
        assert registered.specs or self._lifecycle_hooks(), "the plugin registers nothing"

    def _lifecycle_hooks(self) -> list[str]:
        hooks = (*LIFECYCLE_HOOKS, *CONTRIBUTION_HOOKS, *GATE_HOOKS, *TURN_HOOKS)
        return sorted(h for h in hooks if callable(getattr(self.plugin, h, None)))

    def test_the_manifest_lists_exactly_what_it_registers(
        self, registered: RegisteredPlugin
    ) -> None:
        project = self._project()
        entry_points = project.get("entry-points", {})
        assert len(entry_points.get("hermes.plugins", {})) == 1, (
            'declare the plugin under [project.entry-points."hermes.plugins"]'
        )
        declared = sorted(entry_points.get("hermes.provides", {}))
        actual = sorted(
            [f"{spec.kind.value}.{spec.name}" for spec in registered.specs]
            + [f"{Kind.HOOK.value}.{hook}" for hook in self._lifecycle_hooks()]
            + [
                f"{Kind.DEFAULT_COMMAND.value}.{spec.name}"
                for spec in registered.specs
                if isinstance(spec, CommandSpec) and spec.default
            ]
        )
        assert declared == actual, (
            '[project.entry-points."hermes.provides"] must list exactly what the plugin '
            f"registers: missing {sorted(set(actual) - set(declared))}, "
            f"extra {sorted(set(declared) - set(actual))}"
        )

    def test_the_help_file_describes_every_command(self, registered: RegisteredPlugin) -> None:
        plugin = self.plugin
        module = plugin.__name__ if isinstance(plugin, ModuleType) else type(plugin).__module__
        path = help_file_of(module)
        if path is None:
            return  # a single-module plugin: no folder of its own for the file
        lines = parse_help(path.read_text(encoding="utf-8")) if path.is_file() else {}
        problems = help_problems(lines, registered.specs)
        assert not problems, f"{path}: " + "; ".join(problems)


Expected = str | Callable[[str], bool]
"""What an example's result must be: exactly this text, or text this predicate accepts."""


class ToolsTests(PluginTests):
    """Every tool is described, its schema and handler agree, and it works on its example,
    called exactly as the turn engine calls it (:mod:`hermes_sdk.tool_calls`)."""

    examples: ClassVar[Mapping[str, tuple[Mapping[str, Any], Expected]]] = {}
    """Tool name -> (arguments, the exact text it returns, or a predicate on that text).
    Every tool needs one; a predicate suits a result that varies (a time, a random roll)."""

    def context(self, tmp_path: Path) -> ToolContext:
        """The context tools with ``takes_context`` get; override to give them a backend
        (``tool_context(backend)``) or config."""
        return tool_context(home=str(tmp_path), cwd=str(tmp_path))

    def callable_tools(self, tmp_path: Path) -> Sequence[ToolSpec]:
        """The tools a tool under test may call through ``context.tool_caller()`` (run
        directly, see :func:`~hermes_testkit.direct_caller`); override for such a tool."""
        return ()

    def tools(self, registered: RegisteredPlugin) -> dict[str, ToolSpec]:
        tools = {n: s for n, s in registered.provided(Kind.TOOL).items() if isinstance(s, ToolSpec)}
        assert tools, "a tools plugin provides at least one tool"
        return tools

    def test_every_tool_is_described_for_the_model(self, registered: RegisteredPlugin) -> None:
        for name, tool in self.tools(registered).items():
            assert len(tool.description) >= 10, f"{name}: say what it does and when to use it"
            problem = schema_problem(tool)
            assert problem is None, problem
            properties = tool.parameters.get("properties", {})
            for argument, schema in properties.items():
                assert schema.get("description"), f"{name}: describe argument {argument!r}"
            for required in tool.parameters.get("required", []):
                assert required in properties, f"{name}: required {required!r} is not a property"

    def test_the_schema_and_the_handler_agree(self, registered: RegisteredPlugin) -> None:
        problems = [p for tool in self.tools(registered).values() for p in signature_problems(tool)]
        assert not problems, "; ".join(problems)

    def test_every_example_fits_the_schema(self, registered: RegisteredPlugin) -> None:
        for name, tool in self.tools(registered).items():
            assert name in self.examples, f"add an example for {name!r} to examples"
            arguments, _ = self.examples[name]
            try:
                check_arguments(tool, arguments)
            except ArgumentsRejected as exc:
                raise AssertionError(
                    f"{name}: the example's arguments do not fit its schema, so the engine "
                    f"would not run it: {exc}"
                ) from None

    def test_every_tool_works_on_its_example(
        self, registered: RegisteredPlugin, tmp_path: Path
    ) -> None:
        context = self.context(tmp_path)
        for name, tool in self.tools(registered).items():
            assert name in self.examples, f"add an example for {name!r} to examples"
            arguments, expected = self.examples[name]
            callable_tools = self.callable_tools(tmp_path)
            result = asyncio.run(call_with_tools(tool, arguments, context, callable_tools))
            problem = result_problem(result)
            assert problem is None, f"{name}{dict(arguments)} {problem}"
            if callable(expected):
                assert expected(result), f"{name}{dict(arguments)} returned {result!r}"
            else:
                assert result == expected, (
                    f"{name}{dict(arguments)} returned {result!r}, expected exactly {expected!r}"
                )


CANARY_FACT = "My locker code is 7319-quokka."
CANARY = "7319-quokka"
OWNER, STRANGER = "telegram:1001", "telegram:2002"


def _turn(session_id: str, user_scope: str | None, text: str, status: str = "done") -> TurnRecord:
    return TurnRecord(
        session_id=session_id, source="telegram", user_scope=user_scope, status=status,
        user_text=text, reply="Noted.",
    )  # fmt: skip


class MemoryProviderTests(PluginTests):
    """The provider builds from its context, keeps each person's memory to that person, keeps
    what it recalls across a restart, answers every call with the types the kernel reads,
    and closes. A provider that never recalls anything passes the recall checks trivially;
    one that recalls must recall for the right person only."""

    def provider(self, registered: RegisteredPlugin, home: Path) -> MemoryProvider:
        specs = list(registered.provided(Kind.MEMORY).values())
        assert len(specs) == 1, "a memory plugin provides exactly one memory provider"
        spec = specs[0]
        assert isinstance(spec, MemoryProviderSpec)
        provider = spec.build(MemoryContext(home=str(home)))
        assert isinstance(provider, MemoryProvider)
        return provider

    def _recall(
        self, provider: MemoryProvider, scope: str | None, query: str = "what is my locker code?"
    ) -> str | None:
        recalled = provider.prefetch(query, session_id="s-new", user_scope=scope)
        assert recalled is None or isinstance(recalled, str), (
            f"prefetch returned {type(recalled).__name__}; return text or None"
        )
        return recalled

    def test_a_turn_is_observed_and_recalled(
        self, registered: RegisteredPlugin, tmp_path: Path
    ) -> None:
        provider = self.provider(registered, tmp_path)
        try:
            provider.observe_turn(_turn("s1", None, "My favourite colour is teal."))
            provider.observe_turn(_turn("s1", None, "", status="interrupted"))
            provider.observe_turn(_turn("s1", None, "日本語のテキスト ✓ 🚀 \x00 binary-ish"))
            self._recall(provider, None, "what colour do I like?")
            for tool in provider.tools():
                assert isinstance(tool, ToolSpec), f"tools() yielded {type(tool).__name__}"
                problems = signature_problems(tool)
                assert not problems, "; ".join(problems)
        finally:
            provider.close()

    def test_one_persons_memory_never_reaches_another(
        self, registered: RegisteredPlugin, tmp_path: Path
    ) -> None:
        provider = self.provider(registered, tmp_path)
        try:
            provider.observe_turn(_turn("s1", OWNER, CANARY_FACT))
            self._recall(provider, OWNER)
            leaked = self._recall(provider, STRANGER) or ""
            assert CANARY not in leaked, f"{STRANGER} was shown {OWNER}'s memory: {leaked!r}"
            blocks = provider.prompt_blocks(
                PromptContext(
                    session_id="s-other", source="telegram", home=str(tmp_path),
                    user_scope=STRANGER,
                )
            )  # fmt: skip
            shown = " ".join(getattr(block, "text", str(block)) for block in blocks)
            assert CANARY not in shown, f"{STRANGER}'s system prompt holds {OWNER}'s memory"
        finally:
            provider.close()

    def test_what_it_recalls_survives_a_restart(
        self, registered: RegisteredPlugin, tmp_path: Path
    ) -> None:
        provider = self.provider(registered, tmp_path)
        try:
            provider.observe_turn(_turn("s1", OWNER, CANARY_FACT))
            before = self._recall(provider, OWNER) or ""
        finally:
            provider.close()
        if CANARY not in before:
            return  # it does not recall this (a provider that only writes, or only tools)
        again = self.provider(registered, tmp_path)
        try:
            after = self._recall(again, OWNER) or ""
        finally:
            again.close()
        assert CANARY in after, (
            "what the provider recalled before a restart is gone after it (Hermes restarts; "
            f"keep memory under the context's home): {after!r}"
        )


class SkillSourceTests(PluginTests):
    """Every skill folder holds a SKILL.md whose YAML front matter follows the Agent Skills
    specification: a ``name`` equal to the folder (lower-case letters, digits and single
    hyphens, at most 64) and a ``description`` of when to use it (20 to 1024 characters)."""

    def test_every_skill_has_a_valid_skill_md(self, registered: RegisteredPlugin) -> None:
        sources = [s for s in registered.provided(Kind.SKILL_SOURCE).values()]
        assert sources, "a skills plugin provides at least one skill source"
        for source in sources:
            assert isinstance(source, SkillSourceSpec)
            folder = Path(source.build())
            assert folder.is_dir(), f"skill source {source.name!r}: {folder} is not a folder"
            skills = [p for p in folder.iterdir() if p.is_dir()]
            assert skills, f"{folder} holds no skill folders"
            for skill in skills:
                front = _front_matter(skill / "SKILL.md")
                name = front.get("name")
                assert name == skill.name, f"{skill}: name must be {skill.name!r}, not {name!r}"
                assert _SKILL_NAME.match(skill.name), (
                    f"{skill}: a skill name is 1-64 lower-case letters, digits and single "
                    "hyphens, not starting or ending with one"
                )
                description = front.get("description")
                assert isinstance(description, str) and 20 <= len(description) <= 1024, (
                    f"{skill}: describe when to use it in 20 to 1024 characters"
                )


_SKILL_NAME = re.compile(r"^(?!-)(?!.*--)[a-z0-9-]{1,64}(?<!-)$")


def _front_matter(path: Path) -> dict[str, Any]:
    """The YAML mapping between the leading ``---`` fences of a SKILL.md."""
    import yaml

    assert path.is_file(), f"{path.parent}: a skill folder holds a SKILL.md"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines and lines[0].strip() == "---", f"{path}: must start with '---' front matter"
    closing = next((n for n, line in enumerate(lines[1:], start=1) if line.strip() == "---"), 0)
    if not closing:
        raise AssertionError(f"{path}: the front matter has no closing '---'")
    try:
        fields = yaml.safe_load("\n".join(lines[1:closing]))
    except yaml.YAMLError as exc:
        problem = " ".join(str(exc).split())
        raise AssertionError(f"{path}: the front matter is not valid YAML: {problem}") from None
    assert isinstance(fields, dict), f"{path}: the front matter is a mapping of fields"
    return fields
