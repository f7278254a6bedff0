"""The pytest plugin behind ``hermes_sdk.testing`` (entry point ``pytest11: hermes_sdk``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pluggy
import pytest

from hermes_sdk._markers import new_plugin_manager
from hermes_sdk.registration import SpecIndex
from hermes_sdk.testing.anthropic_server import ScriptedAnthropicServer
from hermes_sdk.testing.openai_server import ScriptedOpenAIServer
from hermes_sdk.testing.registered import RegisteredPlugin, register_checked


@pytest.fixture
def hermes_plugin_manager() -> pluggy.PluginManager:
    """A fresh plugin manager with every Hermes hook spec and no plugins."""
    return new_plugin_manager()


@pytest.fixture
def hermes_specs() -> SpecIndex:
    """Everything registered through ``register_plugin`` in this test, by kind and name."""
    return SpecIndex()


@pytest.fixture
def register_plugin(
    hermes_plugin_manager: pluggy.PluginManager, hermes_specs: SpecIndex
) -> Callable[..., RegisteredPlugin]:
    """Register a plugin (a module, class or object of ``@hookimpl`` functions) for one test.

    Usage: ``registered = register_plugin(my_plugin_module)``; then
    ``registered.provided(Kind.TOOL)["echo"]``. Contract violations raise
    ``hermes_sdk.registration.RegistrationError``.
    """

    def register(plugin: object, name: str | None = None) -> RegisteredPlugin:
        return register_checked(hermes_plugin_manager, hermes_specs, plugin, name)

    return register


@pytest.fixture
def openai_server() -> Iterator[ScriptedOpenAIServer]:
    """A scripted OpenAI-compatible server on loopback; queue replies with ``.queue(...)``."""
    with ScriptedOpenAIServer() as server:
        yield server


@pytest.fixture
def anthropic_server() -> Iterator[ScriptedAnthropicServer]:
    """A scripted Anthropic Messages server on loopback; queue replies with ``.queue(...)``."""
    with ScriptedAnthropicServer() as server:
        yield server
