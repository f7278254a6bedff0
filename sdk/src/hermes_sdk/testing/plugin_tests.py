"""Conformance suites every plugin passes, and the ones for tools, memory and skills plugins.

Subclass one in your plugin's tests and point it at your plugin::

    from pathlib import Path
    import hermes_plugin_acme
    from hermes_sdk.testing import ToolsTests

    class TestAcme(ToolsTests):
        plugin = hermes_plugin_acme
        pyproject = Path(__file__).parents[1] / "pyproject.toml"
        examples = {"acme_count": ({"text": "a b"}, "2")}   # tool: (arguments, expected text)

:class:`PluginTests` (the base of the others) registers the plugin exactly as the kernel does
and checks that its ``hermes.provides`` manifest in pyproject.toml lists exactly what it
registers, so Hermes can find it without importing it.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import pytest

from hermes_sdk.hookspecs import LIFECYCLE_HOOKS
from hermes_sdk.memory import MemoryContext, MemoryProvider, TurnRecord
from hermes_sdk.specs import Kind, MemoryProviderSpec, SkillSourceSpec, ToolSpec
from hermes_sdk.testing.contexts import tool_context
from hermes_sdk.testing.registered import RegisteredPlugin

__all__ = ["MemoryProviderTests", "PluginTests", "SkillSourceTests", "ToolsTests"]


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
        return sorted(h for h in LIFECYCLE_HOOKS if callable(getattr(self.plugin, h, None)))

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
        )
        assert declared == actual, (
            '[project.entry-points."hermes.provides"] must list exactly what the plugin '
            f"registers: missing {sorted(set(actual) - set(declared))}, "
            f"extra {sorted(set(declared) - set(actual))}"
        )


class ToolsTests(PluginTests):
    """Every tool is described, documented and works on its example."""

    examples: ClassVar[Mapping[str, tuple[Mapping[str, Any], str]]] = {}
    """Tool name -> (arguments, text the result must contain). Every tool needs one."""

    def tools(self, registered: RegisteredPlugin) -> dict[str, ToolSpec]:
        tools = {n: s for n, s in registered.provided(Kind.TOOL).items() if isinstance(s, ToolSpec)}
        assert tools, "a tools plugin provides at least one tool"
        return tools

    def test_every_tool_is_described_for_the_model(self, registered: RegisteredPlugin) -> None:
        for name, tool in self.tools(registered).items():
            assert len(tool.description) >= 10, f"{name}: say what it does and when to use it"
            properties = tool.parameters.get("properties", {})
            for argument, schema in properties.items():
                assert schema.get("description"), f"{name}: describe argument {argument!r}"
            for required in tool.parameters.get("required", []):
                assert required in properties, f"{name}: required {required!r} is not a property"

    def test_every_tool_works_on_its_example(self, registered: RegisteredPlugin) -> None:
        for name, tool in self.tools(registered).items():
            assert name in self.examples, f"add an example for {name!r} to examples"
            arguments, expected = self.examples[name]
            extra = {"context": tool_context()} if tool.takes_context else {}
            result = tool.handler(**arguments, **extra)
            assert expected in str(result), f"{name}{dict(arguments)} returned {result!r}"


class MemoryProviderTests(PluginTests):
    """The provider builds from its context, answers every call, and closes."""

    def provider(self, registered: RegisteredPlugin, home: Path) -> MemoryProvider:
        specs = list(registered.provided(Kind.MEMORY).values())
        assert len(specs) == 1, "a memory plugin provides exactly one memory provider"
        spec = specs[0]
        assert isinstance(spec, MemoryProviderSpec)
        provider = spec.factory(MemoryContext(home=str(home)))
        assert isinstance(provider, MemoryProvider)
        return provider

    def test_a_turn_is_observed_and_recalled(
        self, registered: RegisteredPlugin, tmp_path: Path
    ) -> None:
        provider = self.provider(registered, tmp_path)
        try:
            provider.observe_turn(
                TurnRecord(
                    session_id="s1", source="cli", user_scope=None, status="done",
                    user_text="My favourite colour is teal.", reply="Noted.",
                )
            )  # fmt: skip
            recalled = provider.prefetch("what colour do I like?", session_id="s2", user_scope=None)
            assert recalled is None or isinstance(recalled, str)
            for tool in provider.tools():
                assert isinstance(tool, ToolSpec)
        finally:
            provider.close()


class SkillSourceTests(PluginTests):
    """Every skill folder holds a SKILL.md whose front matter names it and says when to use it."""

    def test_every_skill_has_a_valid_skill_md(self, registered: RegisteredPlugin) -> None:
        sources = [s for s in registered.provided(Kind.SKILL_SOURCE).values()]
        assert sources, "a skills plugin provides at least one skill source"
        for source in sources:
            assert isinstance(source, SkillSourceSpec)
            folder = Path(source.factory())
            skills = [p for p in folder.iterdir() if p.is_dir()]
            assert skills, f"{folder} holds no skill folders"
            for skill in skills:
                front = _front_matter(skill / "SKILL.md")
                assert front.get("name") == skill.name, f"{skill}: name must be {skill.name!r}"
                assert len(front.get("description", "")) >= 20, f"{skill}: describe when to use it"


def _front_matter(path: Path) -> dict[str, str]:
    """The ``key: value`` lines between the leading ``---`` fences of a SKILL.md."""
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines and lines[0].strip() == "---", f"{path}: must start with '---' front matter"
    fields: dict[str, str] = {}
    for line in lines[1:]:
        if line.strip() == "---":
            return fields
        key, sep, value = line.partition(":")
        if sep and not line.startswith((" ", "\t")):
            fields[key.strip()] = value.strip().strip("\"'")
    raise AssertionError(f"{path}: the front matter has no closing '---'")
