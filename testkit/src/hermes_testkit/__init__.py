"""hermes-testkit: the Hermes test kit, a pytest plugin for plugin authors (installed with
hermes-testkit; hermes-sdk is the contract it tests against).

Fixtures, available in any test once hermes-testkit is installed:

* ``hermes_plugin_manager``: a fresh pluggy manager with every Hermes hook spec, per test.
* ``register_plugin``: register a plugin object for one test, checked exactly as the kernel
  checks it; returns a :class:`RegisteredPlugin` with what the plugin provides.
* ``hermes_specs``: the :class:`~hermes_sdk.registration.SpecIndex` of everything registered
  in this test, so a duplicate name fails as it would in the kernel.
* ``openai_server``: a :class:`ScriptedOpenAIServer`, a real OpenAI-compatible HTTP server on
  loopback that answers with queued :class:`Reply` objects and records every request.
* ``anthropic_server``: a :class:`ScriptedAnthropicServer`, the same for the Anthropic
  Messages API (the same :class:`Reply` objects, rendered as Anthropic events);
  :class:`ScriptedResponsesServer` for OpenAI's Responses API.

* ``docker_url`` / ``docker_test_image`` / ``docker_python_image``: a real Docker daemon
  (started if need be), a busybox image built offline, and the same with this machine's
  Python 3 in it; ``ssh_server``: a real sshd on loopback with a test user
  (:class:`SSHServer`). Both need root; they skip with the reason elsewhere, and fail when
  ``HERMES_REQUIRE_SERVICES=1``.

* :func:`tool_context`: a ToolContext around a real backend, to test a tool's handler;
  :func:`call_with_tools` calls one that calls other tools (``context.tool_caller()``).

A capability's own fake or peer lives beside its plugin, and changes with it:
``hermes_plugin_platform_telegram.testing`` (``FakeTelegram``, the Bot API on loopback),
``hermes_plugin_platform_discord.testing`` (``FakeDiscord``), ``hermes_plugin_platform_slack
.testing`` (``FakeSlack``), ``hermes_plugin_platform_matrix.testing`` (a real Synapse, the
``synapse`` fixture), ``hermes_plugin_platform_email.testing`` (a mail server, ``mail_server``)
and ``hermes_plugin_store_postgresql.testing`` (a real PostgreSQL, ``postgres``). List a
fixture module in your ``conftest.py``'s ``pytest_plugins`` to use its fixture.

Conformance: subclass :class:`ProviderTests` in a provider plugin's tests,
:class:`TerminalBackendTests` in a terminal backend's, :class:`PlatformTests` in a chat
platform's, :class:`ToolsTests`, :class:`MemoryProviderTests` and :class:`SkillSourceTests` in
tools, memory and skills plugins, :class:`FrontendTests` in front-ends,
:class:`ContextEngineTests` in context engines, :class:`StoreEngineTests` in store engines
(:class:`PluginTests`, their base, checks any plugin's registration against its manifest).
``hermes-sdk new-plugin`` writes a plugin that uses them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Names are imported on first use (PEP 562): `python -m hermes_testkit.openai_server`
# then runs its module once, not after this package imported it (runpy warns of that), and
# importing the kit costs nothing until a suite or server is used.
_EXPORTS = {
    "ContextEngineTests": "context_tests",
    "FrontendClient": "frontend_tests",
    "FrontendTests": "frontend_tests",
    "MemoryProviderTests": "plugin_tests",
    "PlatformTests": "platform_tests",
    "PluginTests": "plugin_tests",
    "ProviderTests": "provider_tests",
    "RecordedRequest": "_scripted",
    "RegisteredPlugin": "registered",
    "Reply": "_scripted",
    "SSHServer": "services",
    "ScriptedAnthropicServer": "anthropic_server",
    "ScriptedOpenAIServer": "openai_server",
    "ScriptedResponsesServer": "responses_server",
    "ScriptedServer": "_scripted",
    "SkillSourceTests": "plugin_tests",
    "StandInModel": "context_tests",
    "StoreEngineTests": "store_engine_tests",
    "TerminalBackendTests": "backend_tests",
    "ToolsTests": "plugin_tests",
    "anthropic_error": "anthropic_server",
    "call_with_tools": "contexts",
    "direct_caller": "contexts",
    "register_checked": "registered",
    "service_in_thread": "frontend_tests",
    "tool_context": "contexts",
}

if TYPE_CHECKING:
    from hermes_testkit._scripted import RecordedRequest, Reply, ScriptedServer
    from hermes_testkit.anthropic_server import ScriptedAnthropicServer, anthropic_error
    from hermes_testkit.backend_tests import TerminalBackendTests
    from hermes_testkit.context_tests import ContextEngineTests, StandInModel
    from hermes_testkit.contexts import call_with_tools, direct_caller, tool_context
    from hermes_testkit.frontend_tests import (
        FrontendClient,
        FrontendTests,
        service_in_thread,
    )
    from hermes_testkit.openai_server import ScriptedOpenAIServer
    from hermes_testkit.platform_tests import PlatformTests
    from hermes_testkit.plugin_tests import (
        MemoryProviderTests,
        PluginTests,
        SkillSourceTests,
        ToolsTests,
    )
    from hermes_testkit.provider_tests import ProviderTests
    from hermes_testkit.registered import RegisteredPlugin, register_checked
    from hermes_testkit.responses_server import ScriptedResponsesServer
    from hermes_testkit.services import SSHServer
    from hermes_testkit.store_engine_tests import StoreEngineTests

__all__ = [
    "ContextEngineTests",
    "FrontendClient",
    "FrontendTests",
    "MemoryProviderTests",
    "PlatformTests",
    "PluginTests",
    "ProviderTests",
    "RecordedRequest",
    "RegisteredPlugin",
    "Reply",
    "SSHServer",
    "ScriptedAnthropicServer",
    "ScriptedOpenAIServer",
    "ScriptedResponsesServer",
    "ScriptedServer",
    "SkillSourceTests",
    "StandInModel",
    "StoreEngineTests",
    "TerminalBackendTests",
    "ToolsTests",
    "anthropic_error",
    "call_with_tools",
    "direct_caller",
    "register_checked",
    "service_in_thread",
    "tool_context",
]
assert set(__all__) == set(_EXPORTS), "export a name in both"


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # once found, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
