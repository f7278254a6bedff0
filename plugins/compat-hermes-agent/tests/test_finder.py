"""Finding folder plugins (entry points are covered by tests/integration with real PyPI
plugins) and loading one as a Hermes plugin object."""

from __future__ import annotations

from pathlib import Path

import pytest
from hermes_plugin_compat_hermes_agent.finder import HermesAgentPlugins
from hermes_plugin_compat_hermes_agent.guest import build
from hermes_plugin_compat_hermes_agent.where import Where

from hermes_sdk import Kind
from hermes_sdk.plugin_sources import SourceQuery


def folder(home: Path, name: str, source: str, manifest: str | None = None) -> Path:
    path = home / "plugins" / name
    path.mkdir(parents=True)
    (path / "__init__.py").write_text(source)
    if manifest is not None:
        (path / "plugin.yaml").write_text(manifest)
    return path


def test_folders_are_found_memory_providers_declare_themselves(tmp_path):
    folder(tmp_path, "tools_plugin", "def register(ctx): pass\n", "name: tidy\nversion: 2\n")
    folder(tmp_path, "recall", "from agent.memory_provider import MemoryProvider\n")
    folder(tmp_path, "_private", "def register(ctx): pass\n")
    (tmp_path / "plugins" / "no_code").mkdir()
    found = {p.name: p for p in HermesAgentPlugins().find(SourceQuery(tmp_path))}
    assert set(found) >= {"tidy", "recall"} and "_private" not in found and "no_code" not in found
    assert found["tidy"].version == "2" and found["tidy"].declares == frozenset()
    assert found["recall"].declares == {(Kind.MEMORY, "recall")}
    assert "memory provider folder" in found["recall"].origin
    only = HermesAgentPlugins().find(SourceQuery(tmp_path, frozenset({"recall"})))
    assert [p.name for p in only] == ["recall"]


def test_a_folder_plugin_builds_into_hooks_tools_and_commands(tmp_path):
    path = folder(
        tmp_path,
        "kit",
        "from .helpers import shout\n"
        "def register(ctx):\n"
        "    ctx.register_tool('kit_shout', 'kit', {'name': 'kit_shout', 'description': 'shout',\n"
        "        'parameters': {'type': 'object', 'properties': {'text': {'type': 'string'}}}},\n"
        "        lambda args, **kw: shout(args['text']))\n"
        "    ctx.register_tool('kit_hidden', 'kit', {'name': 'kit_hidden'}, lambda a, **k: '',\n"
        "        check_fn=lambda: False)\n"
        "    ctx.register_command('kit', lambda args: f'kit says {args}', description='talk')\n"
        "    ctx.register_hook('transform_llm_output', lambda response_text, **k: response_text.upper())\n",
    )
    (path / "helpers.py").write_text("def shout(text):\n    return text.upper()\n")
    guest = build(Where("kit", str(tmp_path), folder=str(path)).encode())
    tools = list(guest.hermes_tools())
    assert [t.name for t in tools] == ["kit_shout"]  # its check said no to the other
    assert tools[0].toolset == "kit" and tools[0].parameters["properties"] == {
        "text": {"type": "string"}
    }
    from hermes_sdk.tooling import ToolContext

    context = ToolContext(session_id="s", home=str(tmp_path), cwd=str(tmp_path))
    assert tools[0].handler(context=context, text="hi") == "HI"
    [command] = list(guest.hermes_slash_commands())
    assert command.name == "kit" and command.description == "talk"
    assert callable(guest.hermes_transform_reply)


def test_a_plugin_without_register_fails_to_load_with_one_line(tmp_path):
    path = folder(tmp_path, "empty", "VALUE = 1\n")
    with pytest.raises(RuntimeError, match="no register"):
        build(Where("empty", str(tmp_path), folder=str(path)).encode())


def test_a_memory_folder_without_register_uses_its_provider_class(tmp_path):
    path = folder(
        tmp_path,
        "recall",
        "from agent.memory_provider import MemoryProvider\n"
        "class Recall(MemoryProvider):\n"
        "    name = 'recall'\n"
        "    def is_available(self): return True\n"
        "    def initialize(self, session_id, **kw): self.home = kw['hermes_home']\n"
        "    def get_tool_schemas(self): return [{'name': 'recall_find', 'parameters': {}}]\n"
        "    def prefetch(self, query, *, session_id=''): return 'remembered: ' + query\n"
        "    def handle_tool_call(self, name, args, **kw): return '{\"found\": 1}'\n",
    )
    guest = build(Where("recall", str(tmp_path), folder=str(path), memory=True).encode())
    [spec] = list(guest.hermes_memory_providers())
    provider = spec.factory(None)
    assert provider.prefetch("tea", session_id="s", user_scope=None) == "remembered: tea"
    [tool] = provider.tools()
    assert tool.name == "recall_find" and tool.parameters == {"type": "object", "properties": {}}


def test_names_hermes_refuses_are_made_hermes_names_or_left_out_alone(tmp_path, caplog):
    path = folder(
        tmp_path,
        "odd",
        "def register(ctx):\n"
        "    ctx.register_command('memento.init', lambda args: 'ok')\n"
        "    ctx.register_command('!!!', lambda args: 'no')\n"
        "    ctx.register_tool('has space', 'odd', {'name': 'has space'}, lambda a, **k: '')\n"
        "    ctx.register_tool('fine', 'odd', {'name': 'fine'}, lambda a, **k: '')\n",
    )
    guest = build(Where("odd", str(tmp_path), folder=str(path)).encode())
    assert [c.name for c in guest.hermes_slash_commands()] == ["memento-init"]
    assert [t.name for t in guest.hermes_tools()] == ["fine"]
    assert "command /!!! is left out" in caplog.text
    assert "tool 'has space' is left out" in caplog.text


def test_each_session_gets_its_own_memory_provider_so_users_never_mix(tmp_path):
    path = folder(
        tmp_path,
        "notes",
        "from agent.memory_provider import MemoryProvider\n"
        "class Notes(MemoryProvider):\n"
        "    name = 'notes'\n"
        "    def is_available(self): return True\n"
        "    def initialize(self, session_id, **kw): self.user = kw.get('user_id', 'owner')\n"
        "    def get_tool_schemas(self): return []\n"
        "    def prefetch(self, query, *, session_id=''): return 'for ' + self.user\n",
    )
    guest = build(Where("notes", str(tmp_path), folder=str(path), memory=True).encode())
    [spec] = list(guest.hermes_memory_providers())
    memory = spec.factory(None)
    assert memory.prefetch("q", session_id="a", user_scope="telegram:1") == "for 1"
    assert memory.prefetch("q", session_id="b", user_scope="telegram:2") == "for 2"
    assert memory.prefetch("q", session_id="a", user_scope="telegram:1") == "for 1"
