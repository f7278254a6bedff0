import pytest

from hermes_sdk import (
    CommandSpec,
    ConfigSectionSpec,
    Kind,
    ProviderSpec,
    ToolSpec,
    manifest_key,
    parse_manifest_key,
)


def test_spec_names_are_validated():
    assert ProviderSpec(name="openai-compat_2", factory=object).name == "openai-compat_2"
    for bad in ["", "OpenAI", "-x", "a b", "x" * 65, "tool.name"]:
        with pytest.raises(ValueError, match="invalid provider name"):
            ProviderSpec(name=bad, factory=object)


def test_tool_names_follow_model_api_rules_and_schema_must_be_an_object():
    assert ToolSpec(name="Read_File-2", handler=len).toolset == "default"
    with pytest.raises(ValueError, match="invalid tool name"):
        ToolSpec(name="read file", handler=len)
    with pytest.raises(ValueError, match="type 'object'"):
        ToolSpec(name="t", handler=len, parameters={"type": "string"})


def test_config_section_needs_a_pydantic_model():
    from pydantic import BaseModel

    class Section(BaseModel):
        x: int = 1

    assert ConfigSectionSpec(name="mine", model=Section).model is Section
    with pytest.raises(ValueError, match="pydantic model"):
        ConfigSectionSpec(name="mine", model=dict)
    lazy = ConfigSectionSpec(name="mine", model=lambda: Section)  # built when first checked
    assert lazy.model_class() is Section
    with pytest.raises(ValueError, match=r"model\(\) returned 3, not a pydantic model"):
        ConfigSectionSpec(name="mine", model=lambda: 3).model_class()


def test_specs_are_frozen():
    spec = CommandSpec(name="hello", factory=object)
    with pytest.raises(AttributeError):
        spec.name = "other"  # type: ignore[misc]


def test_manifest_keys_round_trip_and_bad_keys_say_what_is_valid():
    assert parse_manifest_key(manifest_key(Kind.SKILL_SOURCE, "bundled")) == (
        Kind.SKILL_SOURCE,
        "bundled",
    )
    assert parse_manifest_key("hook.hermes_pre_tool_call") == (Kind.HOOK, "hermes_pre_tool_call")
    with pytest.raises(ValueError, match=r"KIND\.NAME"):
        parse_manifest_key("echo")
    with pytest.raises(ValueError, match=r"unknown kind 'tools'.*tool"):
        parse_manifest_key("tools.echo")
