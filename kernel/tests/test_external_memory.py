"""The external memory provider host: at most one, chosen in config, and every failure of it
degrades to built-in memory with a warning instead of failing the session."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from hermes_kernel.memory import external
from hermes_kernel.memory.external import ExternalMemory
from hermes_kernel.plugins.host import PluginHost
from hermes_kernel.plugins.policy import PluginPolicy
from hermes_kernel.store.sessions import Session
from hermes_sdk import PromptContext
from hermes_sdk.memory import TurnRecord

PROVIDER = """
import threading
from hermes_sdk import MemoryProviderSpec, PromptSection, ToolSpec, hookimpl
from hermes_sdk.memory import MemoryProvider

OBSERVED = []
RELEASE = threading.Event()
FINISHED = []

class Recall(MemoryProvider):
    def __init__(self, context):
        self.mode = context.config.get("mode", "ok")
        if self.mode == "broken-start":
            raise ConnectionError("recall server refused the connection")

    def prompt_blocks(self, context):
        return [PromptSection(title="Recall", text=f"memories of {context.user_scope}")]

    def prefetch(self, query, *, session_id, user_scope):
        if self.mode == "broken-prefetch":
            raise TimeoutError("recall timed out")
        if self.mode == "slow":
            RELEASE.wait(30)
            FINISHED.append(query)
        return f"{user_scope} once asked about {query}"

    def observe_turn(self, turn):
        OBSERVED.append(turn.reply)

    def tools(self):
        return [ToolSpec(name="recall_search", handler=lambda query: query)]

@hookimpl
def hermes_memory_providers():
    yield MemoryProviderSpec(name="recall", factory=Recall)
"""


def app_with(make_plugin, tmp_path: Path, config: dict) -> tuple[PluginHost, SimpleNamespace]:
    """The plugin host and the settings (config.yaml as ``raw``) a memory is built from."""
    record = make_plugin("memory-recall", PROVIDER, declares=["memory.recall"])
    host = PluginHost([record], PluginPolicy())
    return host, SimpleNamespace(raw=config, home=tmp_path)


def session(scope: str | None = "telegram:7") -> Session:
    return Session(
        "s1",
        "telegram",
        None,
        None,
        None,
        None,
        None,
        0.0,
        None,
        None,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0.0,
        None,
        None,
        user_scope=scope,
    )


def test_nothing_is_active_unless_configured(make_plugin, tmp_path):
    memory = ExternalMemory(*app_with(make_plugin, tmp_path, {}))
    assert memory.provider is None and memory.prefetch(session(), "x") is None
    assert memory.tools() == [] and memory.warnings == []


def test_an_active_provider_adds_blocks_recall_tools_and_observes(make_plugin, tmp_path):
    config = {"memory": {"provider": "recall"}, "recall": {"mode": "ok"}}
    host, settings = app_with(make_plugin, tmp_path, config)
    memory = ExternalMemory(host, settings)
    context = PromptContext(session_id="s1", source="telegram", home="", user_scope="telegram:7")
    assert [s.text for s in memory.prompt_sections(context)] == ["memories of telegram:7"]
    assert memory.prefetch(session(), "taxes") == "telegram:7 once asked about taxes"
    assert [spec.name for spec in memory.tools()] == ["recall_search"]
    memory.observe(
        TurnRecord(
            session_id="s1", source="cli", user_scope=None, user_text="q", reply="a", status="done"
        )
    )
    module = host.outcomes["memory-recall"].plugin
    assert module.OBSERVED == ["a"]


@pytest.mark.parametrize(
    ("config", "warning"),
    [
        (
            {"memory": {"provider": "mem0"}},
            "memory provider 'mem0' is not installed (installed: recall); set memory.provider "
            "to one of them or remove it",
        ),
        (
            {"memory": {"provider": "recall"}, "recall": {"mode": "broken-start"}},
            "memory provider 'recall' failed to start: recall server refused the connection",
        ),
    ],
)
def test_a_provider_that_cannot_start_leaves_built_in_memory(
    make_plugin, tmp_path, config, warning
):
    memory = ExternalMemory(*app_with(make_plugin, tmp_path, config))
    assert memory.provider is None
    assert memory.warnings == [f"{warning}; using built-in memory only"]


def test_a_provider_failing_mid_session_is_dropped(make_plugin, tmp_path):
    config = {"memory": {"provider": "recall"}, "recall": {"mode": "broken-prefetch"}}
    memory = ExternalMemory(*app_with(make_plugin, tmp_path, config))
    assert memory.prefetch(session(), "x") is None
    assert memory.provider is None
    assert memory.warnings == [
        "memory provider 'recall' failed in prefetch: recall timed out; using built-in memory only"
    ]


def test_a_slow_recall_is_not_waited_for(make_plugin, tmp_path, monkeypatch):
    monkeypatch.setattr(external, "PREFETCH_SECONDS", 0.2)
    config = {"memory": {"provider": "recall"}, "recall": {"mode": "slow"}}
    host, settings = app_with(make_plugin, tmp_path, config)
    memory = ExternalMemory(host, settings)
    module = host.outcomes["memory-recall"].plugin
    assert memory.prefetch(session(), "x") is None
    assert module.FINISHED == []  # the turn went on while the provider was still busy
    module.RELEASE.set()
