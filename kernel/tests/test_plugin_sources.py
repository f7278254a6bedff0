"""Plugin sources: foreign plugins found by a plugin, opt-in, and loaded like Hermes plugins
through the source's factory (under the load deadline, with nothing shared on failure)."""

from __future__ import annotations

import logging

from hermes_kernel.config.controls import PluginSettings
from hermes_kernel.plugins.host import PluginHost
from hermes_kernel.plugins.policy import PluginPolicy
from hermes_sdk import Kind

SOURCE = """
from hermes_sdk import Kind, PluginSourceSpec, hookimpl
from hermes_sdk.plugin_sources import ForeignPlugin

FOUND = {found!r}

class Source:
    def find(self, query):
        {body}
        return [
            ForeignPlugin(name=name, factory="{factory}:build", argument=name,
                          origin="the test's source",
                          declares=frozenset({{(Kind.MEMORY, name)}}) if name.startswith("mem") else frozenset())
            for name in FOUND if query.wants(name)
        ]

@hookimpl
def hermes_plugin_sources():
    yield PluginSourceSpec(name="test-source", factory=Source)
"""

FACTORY = """
import time
from types import SimpleNamespace
from hermes_sdk import MemoryProviderSpec, ToolSpec, hookimpl
from hermes_sdk.memory import MemoryProvider

def build(name):
    if name == "hangs":
        time.sleep(600)

    @hookimpl
    def hermes_tools():
        yield ToolSpec(name=f"{name}_tool".replace("-", "_"), handler=len)

    @hookimpl
    def hermes_memory_providers():
        yield MemoryProviderSpec(name=name, factory=lambda context: MemoryProvider())

    return SimpleNamespace(hermes_tools=hermes_tools, hermes_memory_providers=hermes_memory_providers)
"""

NATIVE = """
from hermes_sdk import ToolSpec, hookimpl

@hookimpl
def hermes_tools():
    yield ToolSpec(name="native_tool", handler=len)
"""


def make_host(
    make_plugin, tmp_path, found, enabled=None, disabled=(), body="", timeout=5.0, foreign=()
):
    factory = make_plugin("factory-module", FACTORY)
    source = make_plugin(
        "source",
        SOURCE.format(found=found, body=body or "pass", factory=factory.target),
        declares=["plugin_source.test-source"],
    )
    native = make_plugin("native", NATIVE, declares=["tool.native_tool"])
    settings = PluginSettings(enabled=enabled, disabled=tuple(disabled), foreign=tuple(foreign))
    policy = PluginPolicy.from_sources(settings, {}, False)
    records = [source, native]
    return PluginHost(records, policy, home=tmp_path, timeout=timeout)


def test_sources_are_not_asked_when_no_setting_names_a_foreign_plugin(make_plugin, tmp_path):
    host = make_host(make_plugin, tmp_path, ["guest"], body="raise AssertionError('asked')")
    assert {r.name for r in host.enabled()} == {"source", "native"}
    assert host.outcomes == {}  # not even the source was imported


def test_a_foreign_plugin_named_in_plugins_enabled_loads_and_restricts_nothing(
    make_plugin, tmp_path
):
    host = make_host(make_plugin, tmp_path, ["guest", "other"], enabled=("guest",))
    names = {record.name for record in host.enabled()}
    assert names == {"source", "native", "guest"}  # "other" is found only when listed
    tools = {spec.name for spec in host.tools()}
    assert {"native_tool", "guest_tool"} <= tools
    guest = host.record("guest")
    assert guest is not None and guest.foreign and guest.origin == "the test's source"
    host.find_foreign(None)
    other = host.decision("other")
    assert not other.enabled and other.opt_in


def test_a_setting_that_names_what_a_foreign_plugin_declares_loads_it(make_plugin, tmp_path):
    host = make_host(make_plugin, tmp_path, ["memento"])
    provided = host.require(Kind.MEMORY, "memento")
    assert provided is not None and provided.plugin == "memento"

    blocked = make_host(make_plugin, tmp_path, ["memento"], disabled=("memento",))
    assert blocked.require(Kind.MEMORY, "memento") is None


def test_a_foreign_name_a_hermes_plugin_has_is_refused(make_plugin, tmp_path, caplog):
    host = make_host(make_plugin, tmp_path, ["native"])
    with caplog.at_level(logging.WARNING, logger="hermes.plugins"):
        host.find_foreign(None)
    assert not host.record("native").foreign
    assert "a plugin named 'native' is already installed" in caplog.text


def test_a_source_that_raises_adds_nothing_and_says_so(make_plugin, tmp_path, caplog):
    host = make_host(
        make_plugin, tmp_path, ["guest"], enabled=("guest",), body="raise OSError('disk gone')"
    )
    with caplog.at_level(logging.WARNING, logger="hermes.plugins"):
        names = {record.name for record in host.enabled()}
    # Nothing found it, so "guest" is a name nothing has: the allow-list stays one, as a
    # mistyped one does, and one line says why.
    assert names == set()
    assert "plugin source 'test-source'" in caplog.text and "OSError: disk gone" in caplog.text
    assert "plugins.enabled names 'guest', which no installed plugin" in caplog.text


def test_a_foreign_plugin_that_hangs_while_built_is_cut_at_the_load_deadline(make_plugin, tmp_path):
    host = make_host(make_plugin, tmp_path, ["hangs"], enabled=("hangs",), timeout=0.5)
    host.enabled()
    outcome = host.load("hangs")
    assert not outcome.ok and "did not finish loading within 0.5 s" in (outcome.error or "")
    assert "while its plugin source builds it (its import or its register)" in outcome.error
    assert "native_tool" in {spec.name for spec in host.tools()}


def test_enabling_and_disabling_a_foreign_plugin_never_touches_the_allow_list(tmp_path):
    from hermes_kernel.config.edit import set_plugin_enabled

    config = tmp_path / "config.yaml"
    config.write_text("# mine\nmodel:\n  default: m\n")
    set_plugin_enabled(config, "noisegate", True, foreign=True)
    text = config.read_text()
    assert text.startswith("# mine\n") and "foreign:" in text and "enabled" not in text
    set_plugin_enabled(config, "chat", True, allow_list=False)  # no allow-list: none is made
    assert "chat" not in config.read_text()
    set_plugin_enabled(config, "noisegate", False, foreign=True)
    assert "noisegate" not in config.read_text().split("disabled:")[0]

    # Written by hand into plugins.enabled, as hermes-agent's docs say: disabling it must
    # not leave an empty allow-list behind (that would load nothing).
    config.write_text("plugins:\n  enabled: [noisegate]\n")
    set_plugin_enabled(config, "noisegate", False, foreign=True)
    assert "enabled" not in config.read_text()


def test_a_hand_written_foreign_name_in_plugins_enabled_restricts_nothing_but_a_typo_does(
    make_plugin, tmp_path, caplog
):
    host = make_host(make_plugin, tmp_path, ["guest"], enabled=("guest",))
    with caplog.at_level(logging.WARNING, logger="hermes.plugins"):
        names = {record.name for record in host.enabled()}
    assert names == {"source", "native", "guest"}
    assert "belongs in plugins.foreign" in caplog.text
    typo = make_host(make_plugin, tmp_path, ["guest"], enabled=("nativ",))
    assert {record.name for record in typo.enabled()} == set()  # an allow-list stays one
    opted = make_host(make_plugin, tmp_path, ["guest"], foreign=("guest",))
    assert {record.name for record in opted.enabled()} == {"source", "native", "guest"}
