from pathlib import Path

import pytest

from hermes_sdk import (
    CommandSpec,
    ConfigSectionSpec,
    Kind,
    ProviderSpec,
    ReviewSpec,
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


def test_a_review_names_its_trigger_instructions_and_a_tool_that_keeps():
    review = ReviewSpec(
        name="glossary",
        trigger="periodic",
        instructions="Add new terms.",
        tools=["glossary_add", "glossary_list"],  # any collection of names
        keeps_with=("glossary_add",),
    )
    assert review.kind is Kind.REVIEW
    assert review.tools == frozenset({"glossary_add", "glossary_list"})
    assert review.keeps_with == frozenset({"glossary_add"})
    good = {"name": "g", "trigger": "lesson", "instructions": "x", "tools": {"a"}}
    with pytest.raises(ValueError, match="trigger must be one of lesson, periodic"):
        ReviewSpec(**{**good, "trigger": "hourly"}, keeps_with={"a"})
    with pytest.raises(ValueError, match="instructions must be a non-empty string"):
        ReviewSpec(**{**good, "instructions": " "}, keeps_with={"a"})
    with pytest.raises(ValueError, match="keeps_with must name at least one of its tools"):
        ReviewSpec(**good, keeps_with={"b"})
    with pytest.raises(ValueError, match="tools must be a set of tool names"):
        ReviewSpec(**{**good, "tools": "a"}, keeps_with={"a"})


def test_specs_are_frozen():
    spec = CommandSpec(name="hello", factory=object)
    with pytest.raises(AttributeError):
        spec.name = "other"  # type: ignore[misc]


def test_a_command_may_be_a_subcommand_of_a_group_but_each_part_is_a_name():
    spec = CommandSpec(name="plugins.install", factory=object)
    assert manifest_key(Kind.COMMAND, spec.name) == "command.plugins.install"
    assert parse_manifest_key("command.plugins.install") == (Kind.COMMAND, "plugins.install")
    for bad in ["plugins.", ".install", "plugins..install", "Plugins.install"]:
        with pytest.raises(ValueError, match="invalid command name"):
            CommandSpec(name=bad, factory=object)
    with pytest.raises(ValueError, match="invalid tool name"):
        ToolSpec(name="a.b", handler=len)  # only commands have groups


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


# --- "package.module:attr" factories ---------------------------------------------------------


def test_a_factory_named_as_text_is_imported_only_when_first_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from hermes_sdk import PlatformSpec

    (tmp_path / "acme_adapter.py").write_text(
        "class AcmeAdapter:\n    def __init__(self, context):\n        self.context = context\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "acme_adapter", raising=False)
    spec = PlatformSpec(name="acme", factory="acme_adapter:AcmeAdapter")
    assert "acme_adapter" not in sys.modules  # nothing imported at registration
    built = spec.build("the context")
    assert type(built).__name__ == "AcmeAdapter" and built.context == "the context"
    assert repr(spec.factory) == "Reference('acme_adapter:AcmeAdapter')"


def test_a_command_named_as_text_is_the_command_itself_not_called() -> None:
    from hermes_sdk import CommandSpec

    spec = CommandSpec(name="hello", factory="hermes_sdk.following:trouble")
    from hermes_sdk.following import trouble

    assert spec.build() is trouble  # a click command is callable: it must not be run


def test_a_section_model_named_as_text_is_the_class() -> None:
    from hermes_sdk import ConfigSectionSpec
    from hermes_sdk.budget import Budget

    spec = ConfigSectionSpec(name="acme", model="hermes_sdk.budget:Budget")
    with pytest.raises(ValueError, match="not a pydantic model"):
        spec.model_class()  # Budget is a dataclass: the reference resolves, the check holds
    assert spec.model() is Budget  # type: ignore[operator]


@pytest.mark.parametrize(
    "text", ["hermes_sdk.following", "hermes_sdk.following:", ":trouble", "hermes sdk:x", "a.b:c d"]
)
def test_a_malformed_reference_is_refused_at_registration_with_the_form_to_use(text: str) -> None:
    from hermes_sdk import PlatformSpec

    with pytest.raises(ValueError, match=r"must be 'package.module:attribute'"):
        PlatformSpec(name="acme", factory=text)


def test_a_reference_to_nothing_fails_when_built_naming_what_is_missing() -> None:
    from hermes_sdk import PlatformSpec

    missing = PlatformSpec(name="acme", factory="hermes_sdk.following:NoSuchAdapter")
    with pytest.raises(
        AttributeError, match=r"'hermes_sdk.following:NoSuchAdapter': .* no 'NoSuchAdapter'"
    ):
        missing.build()
    with pytest.raises(ModuleNotFoundError):
        PlatformSpec(name="acme", factory="hermes_plugin_nowhere.adapter:X").build()
