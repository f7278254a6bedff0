"""Tests for hermes-plugin-hello, using the fixtures the test kit (hermes-testkit) provides."""

import hermes_plugin_hello

from hermes_sdk import Kind


def test_it_registers_a_tool_a_command_and_a_config_section(register_plugin):
    registered = register_plugin(hermes_plugin_hello, name="hello")
    tool = registered.provided(Kind.TOOL)["greet"]
    assert tool.handler(name="Ada") == "Hello, Ada!"
    assert "greet" in registered.provided(Kind.COMMAND)
    assert registered.provided(Kind.CONFIG)["hello"].model().greeting == "Hello"
