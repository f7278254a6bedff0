"""The runtime's built-in slash commands: the parts that need no running agent."""

from __future__ import annotations

import pytest

from hermes_kernel.runtime.slash import help_lines, model_choice
from hermes_sdk import SlashCommandSpec
from hermes_sdk.runtime import RESERVED_SLASH_NAMES


def test_model_words_read_the_same_in_every_front_end():
    providers = {"alpha", "beta"}
    assert model_choice("m-4", providers, "alpha") == ("alpha", "m-4")
    assert model_choice("Beta", providers, "alpha") == ("beta", None)
    assert model_choice("beta big-x", providers, None) == ("beta", "big-x")
    assert model_choice("alpha/m-4", providers, None) == ("alpha", "m-4")
    assert model_choice("alpha/", providers, None) == ("alpha", None)
    assert model_choice("meta/llama-3", providers, "alpha") == ("alpha", "meta/llama-3")
    with pytest.raises(ValueError, match="usage: /model"):
        model_choice("alpha m-4 extra", providers, None)
    with pytest.raises(ValueError, match="usage: /model"):
        model_choice("m 4", providers, None)


def _spec(name: str, *, on_platforms: bool, usage: str = "") -> SlashCommandSpec:
    return SlashCommandSpec(
        name=name, description=f"does {name}", handler=print, on_platforms=on_platforms, usage=usage
    )


def test_help_aligns_every_command_and_on_a_platform_lists_only_what_may_run_there():
    commands = {
        "new": _spec("new", on_platforms=True),
        "model": _spec("model", on_platforms=False, usage="/model [PROVIDER] [MODEL]"),
    }
    assert help_lines(commands, on_platforms=False) == [
        "/new                       does new",
        "/model [PROVIDER] [MODEL]  does model",
    ]
    assert help_lines(commands, on_platforms=True) == ["/new  does new"]
    named = help_lines(commands, on_platforms=True, owners={"new": "acme"})
    assert named == ["/new  does new (from acme)"]  # a plugin's command names its plugin


def test_every_built_in_name_is_reserved_from_plugins():
    from hermes_kernel.runtime.slash import builtin_commands

    built = builtin_commands(None, dict, lambda _session: False)  # type: ignore[arg-type]
    assert set(built) <= RESERVED_SLASH_NAMES
    assert all(
        spec.description and spec.usage.startswith(f"/{name}") for name, spec in built.items()
    )
