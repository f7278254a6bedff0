"""The pytest plugin behind ``hermes_testkit`` (entry point ``pytest11: hermes_testkit``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pluggy
import pytest

from hermes_sdk._markers import new_plugin_manager
from hermes_sdk.registration import SpecIndex
from hermes_testkit.anthropic_server import ScriptedAnthropicServer
from hermes_testkit.openai_server import ScriptedOpenAIServer
from hermes_testkit.registered import RegisteredPlugin, register_checked
from hermes_testkit.services import (
    ServiceUnavailable,
    SSHServer,
    busybox_image,
    docker_daemon,
    python_image,
    sshd_server,
    unavailable,
)

_unavailable = unavailable


@pytest.fixture(scope="session")
def speech_tools() -> None:
    """espeak-ng and ffmpeg (Debian packages), for tests that speak or encode voice notes."""
    from hermes_testkit.media_files import speech_available

    missing = speech_available()
    if missing is not None:
        _unavailable("espeak-ng and ffmpeg", ServiceUnavailable(missing))


@pytest.fixture(scope="session")
def docker_url() -> Iterator[str]:
    """The URL of a real Docker daemon (started for the test session if need be)."""
    try:
        with docker_daemon() as url:
            yield url
    except ServiceUnavailable as exc:
        _unavailable("a Docker daemon", exc)


@pytest.fixture(scope="session")
def docker_test_image(docker_url: str) -> str:
    """A small busybox image built offline in that daemon; its name."""
    try:
        return busybox_image(docker_url)
    except ServiceUnavailable as exc:
        _unavailable("the busybox test image", exc)
        raise


@pytest.fixture(scope="session")
def docker_python_image(docker_url: str) -> str:
    """The busybox image plus this machine's Python 3, built offline; its name."""
    try:
        return python_image(docker_url)
    except ServiceUnavailable as exc:
        _unavailable("the Python test image", exc)
        raise


@pytest.fixture(scope="session")
def ssh_server() -> Iterator[SSHServer]:
    """A real sshd on 127.0.0.1 with a test user, its key and a known_hosts file."""
    try:
        with sshd_server() as server:
            yield server
    except ServiceUnavailable as exc:
        _unavailable("an SSH server", exc)


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
