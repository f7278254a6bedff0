"""The test kit's fixtures, used exactly as a plugin author would use them."""

import pytest

from hermes_sdk import Kind, ToolSpec, hookimpl
from hermes_sdk.registration import RegistrationError

pytest_plugins = ["pytester"]


class EchoPlugin:
    @hookimpl
    def hermes_tools(self):
        yield ToolSpec(name="echo", handler=lambda text: text)


def test_register_plugin_returns_what_it_provides(register_plugin, hermes_plugin_manager):
    registered = register_plugin(EchoPlugin(), name="echo-plugin")
    assert registered.provided(Kind.TOOL)["echo"].handler("hi") == "hi"
    assert hermes_plugin_manager.get_plugin("echo-plugin") is registered.plugin


def test_each_test_gets_a_fresh_manager(hermes_plugin_manager):
    assert hermes_plugin_manager.get_plugins() == set()


def test_duplicate_names_across_plugins_are_refused(register_plugin, hermes_plugin_manager):
    register_plugin(EchoPlugin(), name="first")
    with pytest.raises(RegistrationError, match="already provided by plugin 'first'"):
        register_plugin(EchoPlugin(), name="second")
    assert hermes_plugin_manager.get_plugin("second") is None


def test_misspelt_hook_is_refused_with_a_suggestion(register_plugin):
    class Typo:
        @hookimpl
        def hermes_tool(self):
            yield ToolSpec(name="x", handler=len)

    with pytest.raises(RegistrationError, match="did you mean 'hermes_tools'"):
        register_plugin(Typo())


def test_wrong_spec_type_and_non_iterables_are_refused(register_plugin):
    class WrongType:
        @hookimpl
        def hermes_providers(self):
            yield ToolSpec(name="x", handler=len)

    class NotIterable:
        @hookimpl
        def hermes_tools(self):
            return 42

    with pytest.raises(RegistrationError, match="yielded ToolSpec, expected ProviderSpec"):
        register_plugin(WrongType())
    with pytest.raises(RegistrationError, match="returned int"):
        register_plugin(NotIterable())


def test_wrappers_are_refused(register_plugin):
    class Wrapper:
        @hookimpl(wrapper=True)
        def hermes_pre_tool_call(self, call):
            return (yield)

    with pytest.raises(RegistrationError, match="wrapper"):
        register_plugin(Wrapper())


def test_the_kit_is_a_pytest_plugin_for_any_project(pytester):
    """A plugin author's test file gets the fixtures with no conftest at all."""
    pytester.makepyfile(
        """
        from hermes_sdk import CommandSpec, Kind, hookimpl

        class Plugin:
            @hookimpl
            def hermes_cli_commands(self):
                yield CommandSpec(name="hi", factory=lambda: None)

        def test_it(register_plugin):
            assert "hi" in register_plugin(Plugin()).provided(Kind.COMMAND)
        """
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
